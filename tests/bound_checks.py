"""Shared test check: no registered planner's replay beats the ``lp`` bound.

The issue's property, used by the ``lp`` property tests of every port model
(``test_lp.py``, ``test_lp_unidirectional.py``, ``test_lp_allreduce.py``).
``tests/test_lp_adversarial.py`` keeps its own, independent version on
purpose.  Imported as a plain module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from collections.abc import Collection
from fractions import Fraction

from portsim.planners.registry import available_planners
from portsim.simulator import Operation, Platform, replay
from portsim.simulator.engine import replay_series


def assert_no_planner_beats(platform: Platform, op: Operation, bound: Fraction, *,
                            skip: Collection[str] = ("lp",), periodic: bool = False) -> None:
    """Every other planner's schedule, replayed, stays at or below ``bound``.

    One-shot schedules run as a series over 20 makespans (measured
    throughput <= bound); periodic ones, when ``periodic``, over 50 periods
    (completed <= bound times the horizon) if they replay without violation.
    Planners that fail, return no schedule or an infeasible one are skipped
    (their own tests check them).
    """
    for name, planner in available_planners().items():
        if name in skip:
            continue
        other = planner.plan(platform, op)
        if other.status != "ok" or other.schedule is None:
            continue
        if other.schedule.period is not None:
            if periodic:
                horizon = other.schedule.period * 50
                rep = replay(other.schedule, horizon=horizon)
                if rep.violations == ():
                    assert rep.completed <= float(bound * horizon) + 1e-9, name
            continue
        check = replay(other.schedule)
        if not check.feasible or check.makespan is None:
            continue
        series = replay_series(other.schedule, Fraction(check.makespan) * 20)
        assert series.measured_throughput is not None
        assert series.measured_throughput <= bound + 1e-12, name
