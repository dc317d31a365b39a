"""The garbage collector paused around large builds and replays, and the garbage they leave.

:func:`portsim.simulator.collector.paused_collection` must give the collector
back as it found it; a replay must not leave its records behind in reference
cycles (they would wait for a full collection); and the fast validity pass
of :class:`Schedule` must accept and refuse exactly what the full check does.
"""

from __future__ import annotations

import gc
from fractions import Fraction

import pytest

from portsim.planners.lp import steady_state
from portsim.simulator.collector import paused_collection
from portsim.simulator.engine import replay
from portsim.simulator.errors import ScheduleError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Compute, Schedule, Send


def test_paused_collection_restores_the_collector() -> None:
    assert gc.isenabled()
    with paused_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="inside"), paused_collection():
        raise ValueError("inside")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()  # disabled before: stays disabled
    finally:
        gc.enable()


def _series(count: int) -> Schedule:
    """``count`` broadcasts A -> B -> C, one after the other (2 sends each)."""
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    events = []
    for t in range(count):
        events.append(Send("A", "B", Item.broadcast(t), Fraction(t)))
        events.append(Send("B", "C", Item.broadcast(t), Fraction(t + 1)))
    return Schedule(p, op, tuple(events))


@pytest.mark.parametrize("mode", ["strict", "asap"])
def test_a_replay_leaves_no_cycle_per_event(mode: str) -> None:
    schedule = _series(1000)  # 2,000 sends
    gc.collect()
    gc.disable()
    try:
        report = replay(schedule, mode=mode)
        found = gc.collect()
    finally:
        gc.enable()
    assert report.feasible
    assert report.completed == 1000
    # A handful of objects (the SimPy environment), not one or more per event:
    # before the strict replay broke its callback's cycle, it left ~4,000.
    assert found < 100


def test_the_planner_gives_the_collector_back() -> None:
    p = Platform.build({"P0": 1, "P1": 1, "P2": 1},
                       [(a, b, 1) for a in ("P0", "P1", "P2")
                        for b in ("P0", "P1", "P2") if a != b])
    op = Operation(OperationKind.REDUCE, target="P0").resolve(p)
    result = steady_state(p, op)
    assert result.status == "ok"
    assert gc.isenabled()


def _outcome(platform: Platform, operation: Operation, events: tuple,
             period: Fraction | int | None, n: int) -> str:
    try:
        Schedule(platform, operation, events, period=period, instances_per_period=n)
    except ScheduleError as err:
        return str(err)
    return "ok"


def _as_int_times(e: Send | Compute) -> Send | Compute:
    """The same event with integer times: the fast pass leaves it to the full check."""
    if isinstance(e, Send):
        return Send(e.src, e.dst, e.item, int(e.start), e.part, e.lag, e.duration)  # type: ignore[arg-type]
    return Compute(e.node, e.inputs, e.output, int(e.start), e.lag, e.duration)  # type: ignore[arg-type]


V = Item.interval
CASES = [
    Send("P1", "P0", V(1, 1), Fraction(2)),
    Send("P1", "P0", V(1, 1), Fraction(3)),  # start == period
    Send("P1", "P0", V(1, 1), Fraction(-1)),
    Send("P1", "P0", V(1, 1, 2), Fraction(0)),  # instance == instances_per_period
    Send("P1", "P0", V(1, 1, 1), Fraction(0), lag=-1),
    Send("P1", "P0", V(1, 1, 1), Fraction(0), lag=4),
    Send("P1", "P0", V(1, 1), Fraction(0), Fraction(1, 1)),  # whole, not the default object
    Send("P1", "P0", V(1, 1), Fraction(0), Fraction(0)),
    Send("P1", "P0", V(1, 1), Fraction(0), Fraction(3, 2)),
    Send("P1", "P0", V(1, 1), Fraction(0), duration=Fraction(-1)),
    Send("P1", "P9", V(1, 1), Fraction(0)),
    Send("P1", "P0", V(1, 7), Fraction(0)),  # participant 7 of 3
    Send("P1", "P0", Item.message("P9"), Fraction(0)),
    Compute("P0", (V(0, 0), V(1, 2)), V(0, 2), Fraction(1)),
    Compute("P0", (V(0, 0, 1), V(1, 2, 2)), V(0, 2, 1), Fraction(1)),  # an input's instance
    Compute("P0", (V(0, 0),), V(0, 0), Fraction(1)),  # one input
    Compute("P0", (V(0, 0), V(1, 2)), V(0, 2), Fraction(1), lag=2),
    Compute("P0", (V(0, 0), V(1, 2)), V(0, 2, 5), Fraction(1)),  # the output's instance
]


@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_fast_pass_agrees_with_the_full_check(case: int, periodic: bool) -> None:
    """Each event after a valid one that names its items (so the fast pass may take
    it), with Fraction times (fast pass) and integer times (full check only)."""
    ids = ["P0", "P1", "P2"]
    p = Platform.build(dict.fromkeys(ids, 1), [(a, b, 1) for a in ids for b in ids if a != b])
    op = Operation(OperationKind.REDUCE, target="P0").resolve(p)
    warm = (Send("P1", "P0", V(1, 1), Fraction(0)), Send("P2", "P0", V(1, 2), Fraction(0)),
            Compute("P0", (V(0, 0), V(1, 2)), V(0, 2), Fraction(0)))
    period = Fraction(3) if periodic else None
    event = CASES[case]
    fast = _outcome(p, op, (*warm, event), period, 2)
    full = _outcome(p, op, (*(_as_int_times(e) for e in warm), _as_int_times(event)),
                    period, 2)
    assert fast == full
