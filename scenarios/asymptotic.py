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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.base import PlanResult
from portsim.planners.registry import get_planner
from portsim.scenarios.loader import PlannerSpec, Scenario
from portsim.scenarios.runner import guarded_plan, planner_label, series_cut
from portsim.simulator.engine import replay, replay_periodic, replay_series
from portsim.simulator.errors import PortsimError, ScenarioError
from portsim.simulator.numbers import format_rational, short, with_decimal
from portsim.simulator.report import Report

__all__ = ["DEFAULT_PERIODS", "AsymptoticRow", "AsymptoticStudy", "asymptotic_study",
           "bound_plan", "without_lp_schedule"]

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
    """The row label, the planner's name with its options (``greedy (reducers: 2)``)."""
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


def without_lp_schedule(lp: PlanResult) -> AsymptoticStudy:
    """The study where the ``lp`` result ``lp`` has no periodic schedule: its bound if
    any, no period, no rows, the reason (``no lp bound: ...``, or ``no lp schedule
    (the lp bound is 3/2): ...`` where ``lp`` gives its bound alone, as on links with
    latency whose whole messages need too long a period)."""
    bound = lp.throughput_bound
    what = ("no lp bound" if bound is None
            else f"no lp schedule (the lp bound is {format_rational(bound)})")
    return AsymptoticStudy(bound, None, (), (f"{what}: {lp.message}",))


def bound_plan(scenario: Scenario,
               plans: Sequence[PlanResult | None] | None = None, *,
               time_limit: float | None = None) -> tuple[PlanResult, int | None]:
    """The ``lp`` result that gives the bound of ``scenario``, and its planner index.

    The bound is the whole platform's: the first ``lp`` entry not restricted
    to a tree or a DAG (option ``restrict``, whose smaller figure others may
    beat), or a plain ``lp`` (index ``None``) when the scenario lists none.
    ``plans``, aligned with ``scenario.planners``, are results already
    computed (as a run has them): a given one is not planned again.
    ``time_limit`` is the plain ``lp``'s (``None``: its default); a listed
    entry keeps its own options.
    """
    index = next((i for i, s in enumerate(scenario.planners) if s.name == "lp"
                  and s.options.get("restrict", "graph") == "graph"), None)
    known = None if index is None or plans is None else plans[index]
    if known is not None:
        return known, index
    options: dict[str, object] = (
        dict(scenario.planners[index].options) if index is not None
        else {} if time_limit is None else {"time_limit": time_limit})
    return guarded_plan(get_planner("lp"), scenario.platform, scenario.operation,
                        options), index


def asymptotic_study(scenario: Scenario,
                     periods: Sequence[int] = DEFAULT_PERIODS, *,
                     progress: Callable[[str], None] | None = None,
                     plans: Sequence[PlanResult | None] | None = None) -> AsymptoticStudy:
    """Replay every planner of ``scenario`` over growing horizons (see the module notes).

    Every figure is exact for its whole horizon: a periodic schedule is
    counted by :func:`portsim.simulator.engine.replay_periodic`, a one-shot one by
    the pipelined series of :func:`portsim.simulator.engine.replay_series`.  A row
    whose replay is cut or impossible has no count and no ratio, and says
    why in its note.  Rows are labelled with their options
    (``greedy (reducers: 2)``).  ``progress`` is told each step
    (``"greedy: 1000 periods"``) before it starts.  ``plans``, aligned with
    ``scenario.planners``, are results already computed: those are replayed
    without planning again.

    Returns
    -------
    AsymptoticStudy
        ``problems`` lists every replay that beats the bound, every schedule
        that fails its strict replay (a one-shot one is then not measured,
        as in ``portsim run``, nor a periodic one at a horizon where its replay
        has violations) and an ``lp`` ratio that does not approach 1
        (below :data:`APPROACH` at the longest horizon, decreasing, or not
        measured at the longest horizon).

    Raises
    ------
    ScenarioError
        When ``scenario`` is not a :class:`Scenario` (a ``run_scenario``
        result: pass its ``.scenario``), a period is not an integer >= 1, or
        ``plans`` does not give one entry per planner.
    """
    if not isinstance(scenario, Scenario):
        hint = (" (a run_scenario result: pass its .scenario)"
                if isinstance(getattr(scenario, "scenario", None), Scenario) else "")
        raise ScenarioError(f"expected a Scenario{hint}", path="scenario",
                            value=type(scenario).__name__)
    if isinstance(periods, str) or not isinstance(periods, Sequence):
        raise ScenarioError("periods must be a list of integers >= 1", path="periods",
                            value=periods)
    for i, k in enumerate(periods):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ScenarioError("must be an integer >= 1", path=f"periods[{i}]", value=k)
    platform, operation = scenario.platform, scenario.operation
    specs = list(scenario.planners)
    given: list[PlanResult | None] = list(plans) if plans is not None else [None] * len(specs)
    if len(given) != len(specs):
        raise ScenarioError(f"{len(given)} plans for {len(specs)} planners: one per planner "
                            f"of the scenario, None where it has none", path="plans",
                            value=len(given))
    lp, lp_index = bound_plan(scenario, given)
    if lp_index is None:  # the bound and the lp row are shown even when lp is not listed
        specs.append(PlannerSpec("lp"))
        given.append(lp)
        lp_index = len(specs) - 1
    lp_spec = specs[lp_index]
    if not lp.is_ok or lp.throughput_bound is None or lp.period is None:
        return without_lp_schedule(lp)
    bound, period = lp.throughput_bound, lp.period
    rows: list[AsymptoticRow] = []
    problems: list[str] = []
    for spec, known in zip(specs, given, strict=True):
        label = planner_label(spec.name, spec.options)
        if progress is not None:
            progress(f"{label}: planning")
        result = lp if spec is lp_spec else known if known is not None else guarded_plan(
            get_planner(spec.name), platform, operation, spec.options)
        lp_ratios: list[Fraction | None] = []
        broken = _strict_violations(result)
        if broken:
            # As `portsim run`: a one-shot schedule that fails its strict
            # replay is not measured (the series would replay it as soon as
            # possible, repairing its times, and show it as sound).
            note = f"not measured: {broken} violation(s) in its strict replay"
            rows.extend(AsymptoticRow(label, k, period * k, None, bound * period * k, None,
                                      None, note) for k in periods)
            problems.append(f"{label}: its schedule is infeasible ({broken} violation(s) "
                            f"in its strict replay)")
            continue
        for k in periods:
            horizon = period * k
            scale = bound * horizon
            if progress is not None:
                progress(f"{label}: replaying {k} periods")
            row, report = _row(label, result, k, horizon, scale, operation.size)
            rows.append(row)
            if spec is lp_spec:
                lp_ratios.append(row.ratio)
            if report is not None and not report.feasible and k == periods[0]:
                problems.append(f"{label}: its schedule is infeasible "
                                f"({len(report.violations)} violation(s) over {k} periods)")
            if row.ratio is not None and row.ratio > 1 and report is not None:
                problems.append(f"{label} completes {format_rational(row.ratio * scale)} "
                                f"operations in {horizon}, more than the bound {bound} "
                                f"allows")
        if spec is lp_spec and lp_ratios:
            measured = [r for r in lp_ratios if r is not None]
            if lp_ratios[-1] is None:
                problems.append(f"the lp ratio is not measured at the longest horizon "
                                f"({periods[-1]} periods)")
            elif lp_ratios[-1] < APPROACH or lp_ratios[-1] < measured[0]:
                problems.append(f"the lp ratio does not approach 1: "
                                f"{', '.join(with_decimal(r, short(r)) for r in measured)}")
    return AsymptoticStudy(bound, period, tuple(rows), tuple(problems))


def _strict_violations(result: PlanResult) -> int:
    """The violations of a one-shot schedule claimed feasible, in its strict replay."""
    schedule = result.schedule
    if (not result.is_ok or schedule is None or schedule.period is not None
            or result.replay != "strict"):
        return 0
    try:
        return len(replay(schedule).violations)
    except PortsimError:
        return 0  # _row says why it cannot be replayed


def _row(label: str, result: PlanResult, k: int, horizon: Fraction,
         scale: Fraction, size: Fraction) -> tuple[AsymptoticRow, Report | None]:
    """One planner at one horizon: its exact count and ratio, or why there is none.

    A schedule that moves the message (of ``size``) in pieces, one instance
    each (``msccl``), completes ``size / piece`` instances per operation:
    ``completed`` counts instances, the ratio and ``C`` count operations.
    """
    if not result.is_ok or result.schedule is None:
        return AsymptoticRow(label, k, horizon, None, scale, None, None,
                             f"{result.status}: {result.message}"), None
    schedule = result.schedule
    try:
        if schedule.period is None:
            report = replay_series(schedule, horizon)
        elif result.replay == "strict":
            report = replay_periodic(schedule, horizon)
        else:  # replay="asap" (lp-naive): its timing is not claimed feasible
            report = replay(schedule, horizon=horizon, mode="asap")
    except PortsimError as err:
        return AsymptoticRow(label, k, horizon, None, scale, None, None,
                             f"not replayed: {err}"), None
    if series_cut(report, horizon):
        return AsymptoticRow(label, k, horizon, None, scale, None, None,
                             f"replay cut: exact only up to {report.horizon} "
                             f"({report.completed} completed by then)"), None
    if schedule.period is not None and report.violations:
        # as `portsim run`: what a periodic schedule completes despite its
        # violations is no throughput (the caller names the schedule infeasible)
        replayed = "strict" if result.replay == "strict" else "as-soon-as-possible"
        return AsymptoticRow(label, k, horizon, None, scale, None, None,
                             f"not measured: {len(report.violations)} violation(s) in its "
                             f"{replayed} replay"), report
    piece = schedule.operation.size
    operations = Fraction(report.completed) * piece / size
    notes = [] if report.feasible else ["violations"]
    if piece != size:
        notes.append(f"completed counts instances of size {format_rational(piece)}, "
                     f"{format_rational(size / piece)} per operation")
    return AsymptoticRow(label, k, horizon, report.completed, scale, operations / scale,
                         scale - operations, "; ".join(notes)), report
