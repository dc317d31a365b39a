"""Asymptotic optimality check: completed(K) / (TP · K) for growing horizons K.

Lemma 1 of Legrand, Marchal and Robert (RR-4872, section 3.4): no schedule
completes more than ``TP · K`` operations in time ``K``, ``TP`` the optimal
steady-state throughput (the ``lp`` bound).  Proposition 1: the periodic
schedule built from the linear program completes at least ``TP · K − C`` for
a constant ``C`` (start-up and wind-down), so its ratio tends to 1.

:func:`asymptotic_study` replays every planner of a scenario over horizons of
10, 100 and 1000 periods of the ``lp`` schedule and tabulates the ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from planners.registry import get_planner
from scenarios.loader import PlannerSpec, Scenario
from simulator.engine import replay, replay_series
from simulator.errors import PortsimError

__all__ = ["DEFAULT_PERIODS", "AsymptoticRow", "AsymptoticStudy", "asymptotic_study"]

DEFAULT_PERIODS = (10, 100, 1000)
"""Horizons, in periods of the ``lp`` schedule."""

APPROACH = Fraction(9, 10)
"""The ``lp`` ratio at the longest horizon must reach at least this."""


@dataclass(frozen=True)
class AsymptoticRow:
    """One planner at one horizon.

    ``ratio = completed / (bound · horizon)``; ``constant = bound · horizon −
    completed`` is the ``C`` of ``completed(K) >= TP · K − C``.
    """

    planner: str
    periods: int
    horizon: Fraction
    completed: int | None
    bound_times_horizon: Fraction
    ratio: Fraction | None
    constant: Fraction | None
    note: str = ""


@dataclass(frozen=True)
class AsymptoticStudy:
    """The table, the bound and the verdict."""

    bound: Fraction | None
    period: Fraction | None
    rows: tuple[AsymptoticRow, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """No replay beats the bound and the ``lp`` ratio approaches 1."""
        return not self.problems


def asymptotic_study(scenario: Scenario,
                     periods: Sequence[int] = DEFAULT_PERIODS) -> AsymptoticStudy:
    """Replay every planner of ``scenario`` over growing horizons (see the module notes).

    Returns
    -------
    AsymptoticStudy
        ``problems`` lists every replay that beats the bound and an ``lp``
        ratio that does not approach 1 (below :data:`APPROACH` at the longest
        horizon, or decreasing).
    """
    platform, operation = scenario.platform, scenario.operation
    specs = list(scenario.planners)
    # The bound is the whole platform's: an lp entry restricted to a tree or a
    # DAG (option restrict) gives a smaller figure that others may beat.
    lp_spec = next((s for s in specs if s.name == "lp"
                    and s.options.get("restrict", "graph") == "graph"), None)
    if lp_spec is None:  # the bound and the lp row are shown even when lp is not listed
        lp_spec = PlannerSpec("lp")
        specs.append(lp_spec)
    lp = get_planner("lp").plan(platform, operation, **dict(lp_spec.options))
    if not lp.is_ok or lp.throughput_bound is None or lp.period is None:
        return AsymptoticStudy(None, None, (), (f"no lp bound: {lp.message}",))
    bound, period = lp.throughput_bound, lp.period
    rows: list[AsymptoticRow] = []
    problems: list[str] = []
    for spec in specs:
        result = lp if spec is lp_spec else get_planner(spec.name).plan(
            platform, operation, **dict(spec.options))
        lp_ratios: list[Fraction] = []
        for k in periods:
            horizon = period * k
            scale = bound * horizon
            if not result.is_ok or result.schedule is None:
                rows.append(AsymptoticRow(spec.name, k, horizon, None, scale, None, None,
                                          result.status))
                continue
            try:
                if result.schedule.period is not None:
                    # replay="asap" (lp-naive): its timing is not claimed feasible.
                    report = replay(result.schedule, horizon=horizon, mode=result.replay)
                else:
                    report = replay_series(result.schedule, horizon)
            except PortsimError as err:
                rows.append(AsymptoticRow(spec.name, k, horizon, None, scale, None, None,
                                          f"not replayed: {err}"))
                continue
            ratio = Fraction(report.completed) / scale
            rows.append(AsymptoticRow(spec.name, k, horizon, report.completed, scale, ratio,
                                      scale - report.completed,
                                      "" if report.feasible else "violations"))
            if ratio > 1:
                problems.append(f"{spec.name} completes {report.completed} operations in "
                                f"{horizon}, more than the bound {bound} allows")
            if spec is lp_spec:
                lp_ratios.append(ratio)
        if spec is lp_spec and lp_ratios and (
                lp_ratios[-1] < APPROACH or lp_ratios[-1] < lp_ratios[0]):
            problems.append(f"the lp ratio does not approach 1: "
                                f"{', '.join(f'{float(r):.4f}' for r in lp_ratios)}")
    return AsymptoticStudy(bound, period, tuple(rows), tuple(problems))
