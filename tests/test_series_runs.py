"""Pipelined series of one-shot schedules of several instances (issue 16).

An imported MSCCL algorithm moves ``c`` chunk indexes per run (portsim
instances ``0..c-1``); its series repeats the run as a whole, copy ``t``'s
instance ``j`` becoming instance ``t * c + j``.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from portsim.simulator.engine import replay_series
from portsim.simulator.errors import ScheduleError
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule, Send


def _chain_broadcast(items_starts: list[tuple[str, str, str, int]]) -> Schedule:
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": s, "dst": d, "item": item, "start": t}
        for s, d, item, t in items_starts])


# Two chunk indexes per run on A -(1)-> B -(1)-> C, the second one sent late.
TWO = [("A", "B", "b#0", 0), ("B", "C", "b#0", 1), ("A", "B", "b#1", 3),
       ("B", "C", "b#1", 4)]


def test_repeat_renumbers_the_instances_of_each_copy() -> None:
    s = _chain_broadcast(TWO)
    copies = s.repeat(3, F(5))
    got = [(e.item.instance, e.start) for e in copies.events if isinstance(e, Send)]
    assert got == [(t * 2 + j, t * 5 + start) for t in range(3)
                   for j, start in ((0, 0), (0, 1), (1, 3), (1, 4))]


def test_single_instance_repeat_is_unchanged() -> None:
    s = _chain_broadcast([("A", "B", "b", 0), ("B", "C", "b", 1)])
    copies = s.repeat(4, F(3))
    assert [(e.item.instance, e.start) for e in copies.events if isinstance(e, Send)] == [
        (t, 3 * t + k) for t in range(4) for k in (0, 1)]


@pytest.mark.parametrize("horizon", [F(7), F(40), F(10**9), F(10**9) + F(1, 2)])
def test_series_of_a_two_instance_run_by_hand(horizon: F) -> None:
    """Replayed as soon as possible, with the order instance after instance on
    each link, instance k (copy k // 2, chunk k % 2) crosses A -> B in
    [k, k + 1] and B -> C in [k + 1, k + 2]: floor(H) - 1 instances complete
    by H, i.e. (floor(H) - 1) / 2 runs of two chunks.  The long horizons are
    counted from the repeating pattern (one copy every 2 time units)."""
    series = replay_series(_chain_broadcast(TWO), horizon)
    assert series.completed == int(horizon) - 1
    assert series.horizon == horizon


def test_a_run_whose_instances_are_not_0_to_c_minus_1_is_refused() -> None:
    s = _chain_broadcast([("A", "B", "b#1", 0), ("B", "C", "b#1", 1)])
    with pytest.raises(ScheduleError, match=r"instances 0\.\.c-1 only"):
        replay_series(s, 10)


def test_repeat_copies_every_field_of_sends_and_computes() -> None:
    # a reduce tree's schedule (sends and computes), repeated by hand field by field
    from portsim.planners.registry import get_planner
    from portsim.simulator.schedule import Compute

    costs = {"P1": 1, "P2": 2, "P3": F(1, 3)}  # sender-time costs, both ways to P0
    nodes = ["P0", *costs]
    p = Platform.build(nodes, [(a, b, costs.get(a, 1)) for a in nodes for b in nodes
                               if a != b])
    op = Operation(OperationKind.REDUCE, target="P0")
    one = get_planner("greedy").plan(p, op).schedule
    assert one is not None
    assert any(isinstance(e, Compute) for e in one.events)
    copies = one.repeat(3, F(7, 2))
    expected: list[tuple[object, ...]] = []
    for t in range(3):
        for e in one.events:
            if isinstance(e, Send):
                expected.append(("send", e.src, e.dst, e.item.base_name(), e.item.instance + t,
                                 e.start + F(7, 2) * t, e.part, e.lag, e.duration))
            else:
                expected.append(("compute", e.node, tuple(x.base_name() for x in e.inputs),
                                 tuple(x.instance + t for x in e.inputs), e.output.base_name(),
                                 e.output.instance + t, e.start + F(7, 2) * t, e.lag,
                                 e.duration))
    got = [("send", e.src, e.dst, e.item.base_name(), e.item.instance, e.start, e.part, e.lag,
            e.duration) if isinstance(e, Send) else
           ("compute", e.node, tuple(x.base_name() for x in e.inputs),
            tuple(x.instance for x in e.inputs), e.output.base_name(), e.output.instance,
            e.start, e.lag, e.duration) for e in copies.events]
    assert got == expected


def test_repeat_does_not_set_off_the_cyclic_collector() -> None:
    # A series of a 200-node reduce tree builds 500,000 events: the collector,
    # set off every 700 new objects, took 40% of Schedule.repeat's time.
    # (10,000 events here)
    import gc

    s = _chain_broadcast([("A", "B", "b", 0), ("B", "C", "b", 1)])
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()  # counts from 0: the few objects made before the loop set off nothing
    gc.callbacks.append(seen)
    try:
        copies = s.repeat(5000, F(1))
    finally:
        gc.callbacks.remove(seen)
    # at most the one that follows the re-enabling, where there were 40 or more
    assert len(collections) <= 1
    assert len(copies.events) == 10000
    assert gc.isenabled()
