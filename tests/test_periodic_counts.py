"""A periodic schedule's replay over a horizon: the counts every path gives alike.

``portsim run`` replays a periodic schedule up to its steady state and counts
the rest in closed form (``replay_periodic``); ``portsim validate --horizon H``
and ``simulator.validate(horizon=H)`` replay every period; ``--float`` replays
in floats.  The figures below are counted by hand from the schedules' times.
"""

from __future__ import annotations

from fractions import Fraction

from portsim.simulator.engine import replay
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule


def chain(c_ab: str, *, period: str, slots: int = 1) -> Schedule:
    """S -> A (cost 1/3) -> B (cost ``c_ab``), one broadcast every ``period``: S sends
    at 0, A forwards the broadcast of the period before at 0."""
    platform = Platform.build(["S", "A", "B"], [("S", "A", "1/3"), ("A", "B", c_ab)])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    return Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0, "lag": 1},
    ], period=period, instances_per_period=slots)


def test_float_replay_plays_no_event_starting_at_the_horizon() -> None:
    """Horizon 5/3, period 1/3: S sends instances 0..4 (at 0 .. 4/3), A forwards 0..3
    (at 1/3 .. 4/3, ending by 5/3); instance 4 is begun and unfinished, and S's send of
    instance 5 starts at the horizon, so it is not played.  In floats it starts at
    5 * 0.3333333333333333 = 1.6666666666666665, below float(5/3), and was played:
    2 instances unfinished."""
    schedule = chain("1/3", period="1/3")
    for exact in (True, False):
        report = replay(schedule, horizon=Fraction(5, 3), exact=exact)
        assert (report.completed, report.unfinished, report.startup_skipped) == (4, 1, 1)
        assert report.feasible
