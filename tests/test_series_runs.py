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
