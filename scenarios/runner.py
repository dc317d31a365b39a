"""Run a scenario: plan with every listed planner, replay, measure, collect.

The lifecycle of DESIGN.md: load -> plan -> replay -> collect.  A planner is
trusted for nothing: its schedule is replayed in strict mode (the validator),
and the figures reported are the engine's.

- One-shot schedule: ``makespan`` is the time the engine saw the operation
  complete; the throughput is that of a pipelined series of operations reusing
  the schedule, replayed as soon as possible over the horizon
  (:func:`portsim.simulator.engine.replay_series`), only when the schedule
  itself has no violation (:func:`portsim.simulator.engine.measure_series`,
  the rule ``portsim validate --horizon`` follows too); otherwise
  ``completed``, ``measured_throughput`` and ``measured_throughput_exact``
  are not given (``None``) and a note says why.
- Periodic schedule: replayed strictly over the horizon; ``completed`` and
  ``measured_throughput`` come from that replay.
- A plan with ``replay="asap"`` (``lp-naive``: its planned times are not
  claimed feasible) is replayed as soon as possible under the platform's
  real port model instead, keeping the order of events on every port; its
  figures and violations are that replay's (a strict replay of the planned
  times is only counted, in a note).  ``replay`` in the JSON says which.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, TypeVar

from portsim.planners.base import Planner, PlanResult, reaches_bound
from portsim.planners.registry import BUILTIN_PLANNERS, get_planner
from portsim.scenarios.loader import PlannerSpec, Scenario
from portsim.simulator.engine import (
    measure_series,
    replay,
    replay_asap_periodic,
    replay_periodic,
)
from portsim.simulator.errors import PlannerError, ScenarioError, ScheduleError, record_repr
from portsim.simulator.numbers import format_rational, parse_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform
from portsim.simulator.report import Report, Violation, own_port_models
from portsim.simulator.schedule import Schedule

__all__ = [
    "DEFAULT_HORIZON_LENGTHS",
    "PlannerRun",
    "ScenarioResult",
    "as_label",
    "default_periods",
    "foreign_schedule",
    "guarded_plan",
    "planner_label",
    "replay_periodic",
    "run_planner",
    "run_scenario",
    "series_cut",
]

T = TypeVar("T")

DEFAULT_HORIZON_LENGTHS = 100
"""Without a horizon, replay this many periods (periodic) or makespans (one-shot);
a periodic schedule of a longer start-up, twice its start-up (:func:`default_periods`)."""


def default_periods(schedule: Schedule) -> int:
    """The periods a periodic ``schedule`` is replayed over without a horizon.

    :data:`DEFAULT_HORIZON_LENGTHS`, or twice the start-up (the largest lag
    plus the period of the instance's own events) when that is longer: an
    instance started in period 0 completes by the end of period ``max lag``,
    so over 100 periods an ``lp`` broadcast along a ring of 250 nodes (lags
    up to 248) completed nothing and measured a throughput of 0 beside the
    bound 2; it now measures 498 periods, half of them in the steady state.
    """
    max_lag = max((e.lag for e in schedule.events), default=0)
    return max(DEFAULT_HORIZON_LENGTHS, 2 * (max_lag + 1))


@dataclass(frozen=True)
class PlannerRun:
    """One planner's result on one scenario: the SPEC.md JSON record, typed.

    Exact figures are ``Fraction``; measured figures are floats.
    """

    planner: str
    operation: str
    port_model: str
    status: str
    message: str = ""
    throughput_bound: Fraction | None = None
    period: Fraction | None = None
    makespan: Fraction | None = None
    measured_throughput: float | None = None
    completed: int | None = None
    horizon: Fraction | None = None
    feasible: bool | None = None
    violations: tuple[Violation, ...] = ()
    notes: tuple[str, ...] = ()
    replay: str = "strict"
    options: tuple[tuple[str, Any], ...] = ()
    replay_cut: bool = False
    achieved_throughput: Fraction | None = None
    bound_exact: bool | None = None
    """Whether ``throughput_bound`` is proven optimal (the planner's
    :attr:`~portsim.planners.base.PlanResult.bound_exact`); ``None`` without a
    bound or when the planner does not say."""
    node_port_models: tuple[tuple[str, str], ...] = ()
    """The nodes that follow another port model than ``port_model`` (their own,
    from the platform file), with that model; the JSON gives them as a mapping."""
    plan: PlanResult | None = field(default=None, repr=False, compare=False)
    validation: Report | None = field(default=None, repr=False, compare=False)
    instances_per_operation: Fraction = field(default=Fraction(1), repr=False)
    """How many of the schedule's instances make one operation.

    ``msccl``: its ``c`` chunks of size ``size / c``; ``completed`` counts instances."""

    def __repr__(self) -> str:
        return record_repr(self)

    @property
    def label(self) -> str:
        """The planner's name with its options (tells apart ``lp`` listed twice)."""
        return planner_label(self.planner, self.options)

    @property
    def bound_reached(self) -> bool | None:
        """Whether the planner's schedule reaches ``throughput_bound`` by construction
        (``achieved_throughput >= throughput_bound``; ``None`` when either is unknown)."""
        return reaches_bound(self.throughput_bound, self.achieved_throughput)

    @property
    def measured_throughput_exact(self) -> Fraction | None:
        """``completed / horizon`` exactly, in operations per time unit.

        The throughput the replay measured (``measured_throughput`` is the
        same as a float); ``None`` without a count.  A schedule that moves the message
        in pieces completes :attr:`instances_per_operation` instances per
        operation.

        The JSON field of the same name; every field of :meth:`to_dict` is an
        attribute of the same name."""
        if self.completed is None or not self.horizon:
            return None
        return Fraction(self.completed) / (self.instances_per_operation * self.horizon)

    @property
    def measured_exact(self) -> Fraction | None:
        """The former name of :attr:`measured_throughput_exact` (0.2.0), kept for
        scripts that use it."""
        return self.measured_throughput_exact

    @property
    def failed_validation(self) -> bool:
        """True when the planner produced a schedule the engine rejected."""
        return self.status == "ok" and self.feasible is False

    def to_dict(self) -> dict[str, Any]:
        """The SPEC.md JSON result (exact figures as strings such as ``"2/9"``)."""

        def exact(value: Fraction | None) -> str | None:
            return None if value is None else format_rational(value)

        return {
            "planner": self.planner,
            "operation": self.operation,
            "port_model": self.port_model,
            "status": self.status,
            "message": self.message,
            "throughput_bound": exact(self.throughput_bound),
            "period": exact(self.period),
            "makespan": exact(self.makespan),
            "measured_throughput": self.measured_throughput,
            "completed": self.completed,
            "horizon": exact(self.horizon),
            "feasible": self.feasible,
            "violations": [
                {"kind": v.kind, "time": _time_text(v.time), "node": v.node, "detail": v.detail}
                for v in self.violations
            ],
            "notes": list(self.notes),
            "replay": self.replay,
            "options": dict(self.options),
            "label": self.label,
            "replay_cut": self.replay_cut,
            "achieved_throughput": exact(self.achieved_throughput),
            "bound_reached": self.bound_reached,
            "bound_exact": self.bound_exact,
            "measured_throughput_exact": exact(self.measured_throughput_exact),
            "node_port_models": dict(self.node_port_models),
        }


@dataclass(frozen=True)
class ScenarioResult:
    """Every planner's result on one scenario."""

    scenario: Scenario
    results: tuple[PlannerRun, ...]

    @property
    def any_failed_validation(self) -> bool:
        """True when some planner's schedule failed validation (exit status 1)."""
        return any(r.failed_validation for r in self.results)

    @property
    def any_planner_error(self) -> bool:
        """True when some planner ended in ``status: error`` (exit status 3)."""
        return any(r.status == "error" for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``portsim run --json``."""
        return {"scenario": self.scenario.name, "results": [r.to_dict() for r in self.results]}


def planner_label(name: str, options: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> str:
    """``greedy (reducers: 2)``: a planner's name with its options, the one row label.

    Examples
    --------
    >>> planner_label("greedy", {"reducers": 2})
    'greedy (reducers: 2)'
    >>> planner_label("flat", {})
    'flat'
    """
    pairs = list(options.items() if isinstance(options, Mapping) else options)
    if not pairs:
        return name
    return name + " (" + ", ".join(f"{k}: {v}" for k, v in pairs) + ")"


_YAML_SCALAR = re.compile(r"(?<=: )(true|false|null)(?=[,)])", re.IGNORECASE)
_PYTHON_SCALAR = {"true": "True", "false": "False", "null": "None"}


def as_label(text: str) -> str:
    """A label a user typed, in the form :func:`planner_label` writes it: the
    YAML scalars of the scenario file (``split: false``, any case) as the
    label prints them (``split: False``).

    Examples
    --------
    >>> as_label("lp (split: false, time_limit: 100)")
    'lp (split: False, time_limit: 100)'
    >>> as_label("greedy")
    'greedy'
    """
    return _YAML_SCALAR.sub(lambda m: _PYTHON_SCALAR[m.group(1).lower()], text)


def _time_text(value: Fraction | float) -> str | float:
    return format_rational(value) if isinstance(value, Fraction) else value


def guarded_plan(planner: Planner, platform: Platform, operation: Operation,
                 options: Mapping[str, Any]) -> PlanResult:
    """``planner.plan(...)``, with the planner's own failure turned into its result.

    One planner's failure never sinks the others: an exception raised while
    planning (``SystemExit`` too), or a return value that is not a
    :class:`PlanResult`, becomes a :meth:`PlanResult.error` saying what went
    wrong.  So does a schedule for another platform or operation than the
    ones given (:func:`foreign_schedule`): the engine replays a schedule on
    its own platform, so such a schedule would be measured on the planner's
    word.  Only misuse is raised: a :class:`PlannerError` on an option (its
    key path starts with ``planners.``), which is bad input.  Warnings the
    planner issues become notes of its result (once each), not lines on a
    terminal.

    Raises
    ------
    PlannerError
        On an unknown option or a bad option value.
    """
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = planner.plan(platform, operation, **options)
    except PlannerError as err:
        if err.path is not None and err.path.startswith("planners."):
            raise
        return PlanResult.error(planner.name, _one_line(f"the planner failed: {err}"))
    except (Exception, SystemExit) as err:  # any failure of the planner's own code is its result
        return PlanResult.error(planner.name, _one_line(
            f"the planner failed: {type(err).__name__}: {err}"))
    if not isinstance(result, PlanResult):
        return PlanResult.error(planner.name, _one_line(
            f"the planner failed: it returned {type(result).__name__}, not a PlanResult"))
    if result.schedule is not None:
        foreign = foreign_schedule(result.schedule, platform, operation)
        if foreign is not None:
            return PlanResult.error(planner.name, _one_line(
                f"the planner's schedule is not for this scenario: {foreign}"),
                notes=result.notes)
    said = [_one_line(str(w.message)) for w in caught]
    said = [text for text in dict.fromkeys(said) if text not in result.notes]
    return replace(result, notes=result.notes + tuple(said)) if said else result


def foreign_schedule(schedule: Schedule, platform: Platform,
                     operation: Operation) -> str | None:
    """Why ``schedule`` is not a schedule of ``operation`` on ``platform``, or ``None``.

    The engine replays a schedule on the platform and for the operation the
    schedule carries, so a planner's schedule must carry the scenario's: the
    same nodes (compute time, router, port model), the same links (cost and
    latency), the same kind of operation between the same nodes (the order
    of the participants too, for a non-commutative reduction, which a
    commutative one does not stand for).  The message
    size may be smaller: a planner may move the message in pieces, one
    instance each (``msccl``; the runner counts them as one operation), and
    a one-shot schedule in pieces must then hold enough of them for one
    whole operation.

    Parameters
    ----------
    schedule:
        A planner's schedule.
    platform, operation:
        The scenario's.

    Returns
    -------
    str or None
        The first difference found, in words; ``None`` when there is none.

    Examples
    --------
    >>> from portsim.simulator.operations import OperationKind
    >>> p = Platform.build(["S", "A"], [("S", "A", 1)])
    >>> fast = Platform.build(["S", "A"], [("S", "A", "1/100")])
    >>> op = Operation(OperationKind.SCATTER, source="S").resolve(p)
    >>> events = [{"kind": "send", "src": "S", "dst": "A", "item": "m[A]", "start": 0}]
    >>> foreign_schedule(Schedule.from_dicts(fast, op, events), p, op)
    'link S -> A: c = 1/100 in the schedule, 1 in the scenario'
    >>> foreign_schedule(Schedule.from_dicts(p, op, events), p, op) is None
    True
    """
    theirs, ours = schedule.platform, platform
    their_nodes = {n.id: n for n in theirs.nodes}
    for node in ours.nodes:
        other = their_nodes.pop(node.id, None)
        if other is None:
            return f"node {node.id} is missing from the schedule's platform"
        for what, mine, its in (
            ("compute", node.compute, other.compute),
            ("router", node.router, other.router),
            ("port model", ours.port_model_of(node.id), theirs.port_model_of(node.id)),
        ):
            if mine != its:
                return (f"node {node.id}: {what} {_shown(its)} in the schedule, "
                        f"{_shown(mine)} in the scenario")
    if their_nodes:
        return f"node {min(their_nodes)} is not on the scenario's platform"
    their_links = {(link.src, link.dst): link for link in theirs.links}
    for link in ours.links:
        found = their_links.pop((link.src, link.dst), None)
        if found is None:
            return f"link {link.src} -> {link.dst} is missing from the schedule's platform"
        for what, mine, its in (("c", link.c, found.c),
                                ("latency", link.latency, found.latency)):
            if mine != its:
                return (f"link {link.src} -> {link.dst}: {what} = {_shown(its)} in the "
                        f"schedule, {_shown(mine)} in the scenario")
    if their_links:
        src, dst = min(their_links)
        return f"link {src} -> {dst} is not on the scenario's platform"
    mine_op = operation if operation.resolved else operation.resolve(platform)
    its_op = schedule.operation
    if its_op.kind != mine_op.kind:
        return f"it is a {its_op.kind.value}, the scenario's operation a {mine_op.kind.value}"
    piece, size = its_op.size, mine_op.size
    if piece > size:
        return (f"it moves messages of size {format_rational(piece)}, the scenario's are "
                f"of size {format_rational(size)}")
    if piece < size and schedule.period is None:
        # A one-shot schedule in pieces is one operation only when its
        # instances carry the whole message (msccl: c chunks of size / c).
        count = len(schedule.instances())
        if count * piece < size:
            return (f"it moves {count} instance(s) of size {format_rational(piece)}, less "
                    f"than one operation of size {format_rational(size)}")
    if mine_op.is_reduction and its_op.commutative and not mine_op.commutative:
        # the engine checks a reduction's order by the schedule's operation: a
        # commutative one would let v0 + v2 + v1 pass for the scenario's v0 + v1 + v2
        return "its reduction is commutative, the scenario's operator is not"
    ordered = not mine_op.commutative and not its_op.commutative
    for what in ("source", "target", "targets", "participants", "sources"):
        mine_nodes, its_nodes = getattr(mine_op, what), getattr(its_op, what)
        same = (mine_nodes == its_nodes if isinstance(mine_nodes, str | None)
                or (what == "participants" and ordered)
                else set(mine_nodes) == set(its_nodes))
        if not same:
            return (f"operation {what}: {_shown(its_nodes)} in the schedule, "
                    f"{_shown(mine_nodes)} in the scenario")
    return None


def _shown(value: object) -> str:
    if isinstance(value, Fraction):
        return format_rational(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def run_planner(
    scenario: Scenario,
    spec: PlannerSpec,
    *,
    horizon: Fraction | int | str | None = None,
    exact: bool = True,
    horizon_key: str | None = None,
) -> PlannerRun:
    """Plan ``scenario`` with one planner, replay the schedule and measure it.

    Parameters
    ----------
    horizon:
        The replay's time span (default: the scenario's ``horizon``, else
        :data:`DEFAULT_HORIZON_LENGTHS` makespans, or periods (:func:`default_periods`)).
    horizon_key:
        How the caller names ``horizon`` in an error (``"--horizon"``);
        default ``horizon``, the scenario key.

    Raises
    ------
    PlannerError
        On an unknown planner name or a bad option (misuse); an operation the
        planner does not support is a returned ``unsupported`` record, and a
        planner that fails is a returned ``error`` record.
    ScenarioError
        When a horizon given by the user needs more replayed events than the
        engine allows (checked before replaying), naming the scenario file,
        ``horizon_key`` and the value.
    """
    if horizon is not None and type(horizon) is not Fraction:
        # 100, "2/3" or 2.5 from Python; a NaN or a word is named before planning
        try:
            horizon = parse_rational(horizon, path=horizon_key or "horizon",
                                     error=ScenarioError)
        except ScenarioError as err:
            raise (err if scenario.source is None else err.with_source(scenario.source)) from None
    planner = get_planner(spec.name)
    platform, operation = scenario.platform, scenario.operation
    name, kind, model = spec.name, operation.kind.value, str(platform.port_model)
    own = own_port_models(platform)
    options = tuple(spec.options.items())
    result = guarded_plan(planner, platform, operation, spec.options)
    if not result.is_ok or result.schedule is None:
        return _with_exactness(PlannerRun(
            name, kind, model, status=result.status, message=result.message or "no schedule",
            throughput_bound=result.throughput_bound, notes=result.notes,
            achieved_throughput=result.achieved_throughput, options=options,
            node_port_models=own, plan=result), result)
    given = horizon if horizon is not None else scenario.horizon
    key = (horizon_key or "horizon") if horizon is not None else "horizon"
    try:
        if result.replay == "asap":
            run = _run_asap(name, kind, model, result, given, exact, operation.size)
        else:
            run = _run_strict(name, kind, model, result, given, exact, operation.size)
        return _with_exactness(replace(_in_operations(run, result.schedule, operation),
                                       options=options, node_port_models=own), result)
    except ScheduleError as err:
        if given is not None and err.path == "horizon":
            raise ScenarioError(err.message, source=scenario.source, path=key,
                                value=format_rational(given)) from None
        # Nothing was replayed, so nothing is proven: the announced figure is
        # a note, not achieved_throughput (nor bound_reached) of the row.
        notes = list(result.notes)
        if result.achieved_throughput is not None:
            notes.append(f"the planner announced achieved throughput "
                         f"{format_rational(result.achieved_throughput)}, which no strict "
                         f"replay proves (the schedule cannot be replayed): not shown")
        return _with_exactness(PlannerRun(
            name, kind, model, status="error",
            message=_one_line(f"the schedule cannot be replayed: {err}"),
            throughput_bound=result.throughput_bound, notes=tuple(notes), options=options,
            node_port_models=own, plan=result), result)


def _with_exactness(run: PlannerRun, result: PlanResult) -> PlannerRun:
    """``run`` with the planner's word on its bound's exactness, where the row
    shows the planner's bound (not where the runner dropped or replaced it).

    Only a built-in planner's ``True`` is kept: ``lp`` proves its optimum with an
    exact certificate, while a plug-in's claim is nothing the runner can check
    (``False``, a bound not claimed optimal, is kept from any planner)."""
    if run.throughput_bound is None or run.throughput_bound != result.throughput_bound:
        return run
    claimed = result.bound_exact
    if claimed and run.planner not in BUILTIN_PLANNERS:
        claimed = None
    return replace(run, bound_exact=claimed)


def _in_operations(run: PlannerRun, schedule: Schedule, operation: Operation) -> PlannerRun:
    """The measured throughput in operations of the scenario's size.

    A schedule whose operation moves the message in pieces (the ``msccl``
    planner: chunk index ``j`` is instance ``#j`` of size ``size / c``)
    completes ``c`` instances per operation; every other planner's schedule
    has the scenario's size and is left as it is.
    """
    piece = schedule.operation.size
    if piece == operation.size or run.measured_throughput is None:
        return run
    share = piece / operation.size
    note = (f"the schedule moves the message in instances of size {format_rational(piece)}: "
            f"the measured throughput counts {format_rational(1 / share)} of them as one "
            f"operation (completed counts instances)")
    scaled = replace(run, instances_per_operation=1 / share, notes=(*run.notes, note))
    # the float from the exact figure, so that the table, the JSON and a
    # study's columns give the same throughput (the exact one counted instances)
    exact = scaled.measured_throughput_exact
    return replace(scaled, measured_throughput=None if exact is None else float(exact))


def _run_strict(name: str, kind: str, model: str, result: PlanResult,
                horizon: Fraction | None, exact: bool, size: Fraction) -> PlannerRun:
    """Validate a plan's schedule at its stated times and measure it (see the module);
    ``size``: the scenario's message size (the schedule's may be a piece of it)."""
    schedule = result.schedule
    assert schedule is not None
    notes = list(result.notes)
    cut = False
    if schedule.period is not None:
        if horizon is None:
            horizon = schedule.period * default_periods(schedule)
        check = replay_periodic(schedule, horizon, exact=exact)
        measured = check
        makespan = None
    else:
        check = replay(schedule, exact=exact)
        makespan = check.makespan if isinstance(check.makespan, Fraction) else None
        if (makespan is None and check.makespan is not None and result.makespan is not None
                and math.isclose(check.makespan, result.makespan, rel_tol=1e-9)):
            # --float: the planner's exact makespan, which the float replay
            # confirms up to rounding (the row used to show no makespan at all)
            makespan = result.makespan
        if (result.makespan is not None and makespan is not None
                and result.makespan != makespan):
            notes.append(f"the planner announced makespan {format_rational(result.makespan)}, "
                         f"the engine measured {format_rational(makespan)}")
        length = makespan or result.makespan or Fraction(check.end_time or 1)
        if horizon is None:
            horizon = Fraction(length) * DEFAULT_HORIZON_LENGTHS
        series = measure_series(schedule, check, horizon, exact=exact)
        if not schedule.events:
            # Nothing to communicate or compute (e.g. a single participant):
            # complete at time 0, and no throughput to measure.
            notes.append("the operation needs no communication or computation")
        elif series is None:
            notes.append(_not_measured(check, "strict replay"))
        measured = check if series is None else series
        if series is not None:
            cut = _series_cut(measured, horizon, notes)
    violations = check.violations + tuple(
        v for v in measured.violations if measured is not check
    )
    unmeasured = _unmeasured(schedule, measured, check, "strict replay", notes)
    proven = _in_operations_of(check, schedule, size)
    achieved = _proven_achieved(result.achieved_throughput, proven, check, schedule, notes)
    bound = _checked_bound(result.throughput_bound, proven, notes)
    return PlannerRun(
        name, kind, model,
        status="ok",
        message=result.message,
        throughput_bound=bound,
        achieved_throughput=achieved,
        period=schedule.period,
        makespan=makespan,
        # a one-shot schedule whose series is not measured has no count either
        measured_throughput=None if cut or unmeasured else measured.measured_throughput,
        completed=None if cut or unmeasured else measured.completed,
        horizon=Fraction(horizon),
        feasible=check.feasible,
        violations=violations,
        notes=tuple(notes),
        replay_cut=cut,
        plan=result,
        validation=check,
    )


def _in_operations_of(check: Report, schedule: Schedule, size: Fraction) -> Fraction | None:
    """The throughput ``check`` proves, in operations of ``size`` per time unit.

    A schedule that moves the message in pieces (instances of a smaller
    size) completes ``size / piece`` instances per operation: the proven
    rate of instances counts that many as one operation, as
    :func:`_in_operations` does for the measured one.
    """
    if check.throughput is None:
        return None
    return check.throughput * schedule.operation.size / size


def _proven_achieved(achieved: Fraction | None, proven: Fraction | None, check: Report,
                     schedule: Schedule, notes: list[str]) -> Fraction | None:
    """The planner's announced ``achieved_throughput`` as far as the strict replay proves it.

    ``proven``: the rate ``check`` proves, in operations of the scenario's
    size (:func:`_in_operations_of`).  The planner's word is not taken.  A
    periodic schedule achieves exactly what the strict replay proves
    (``instances_per_period / period``); a one-shot schedule at least its
    proven rate (instances over the end of its last event), so a larger
    claim is lowered to it.  When the replay
    proves nothing (violations, an incomplete instance, or a horizon too
    short to see every instance slot complete) the claim is dropped, and
    ``bound_reached`` is unknown rather than the planner's say-so.  Each
    change is a note naming the announced figure.
    """
    if achieved is None:
        return None
    if proven is None:
        why = ("it has violations" if check.violations
               else "its horizon does not see every instance slot complete"
               if schedule.period is not None
               else "a float replay gives no exact figure" if not check.exact
               else "it takes no time")
        notes.append(f"the planner announced achieved throughput {format_rational(achieved)}, "
                     f"which the strict replay does not prove ({why}): not shown")
        return None
    if proven != achieved and (schedule.period is not None or achieved > proven):
        notes.append(f"the planner announced achieved throughput {format_rational(achieved)}, "
                     f"the strict replay proves {format_rational(proven)}")
        return proven
    return achieved


def _checked_bound(bound: Fraction | None, proven: Fraction | None,
                   notes: list[str]) -> Fraction | None:
    """The planner's ``throughput_bound``, unless its own schedule beats it.

    The strict replay proves the schedule's throughput (exactly for a
    periodic one, at least for a one-shot one): a "bound" below it bounds
    nothing, and ``bound_reached`` would hail the schedule as optimal on it.
    It is then left out, with a note.
    """
    if bound is None or proven is None or proven <= bound:
        return bound
    notes.append(f"the planner announced throughput bound {format_rational(bound)}, below "
                 f"the throughput {format_rational(proven)} its own schedule proves: not "
                 f"an upper bound, not shown")
    return None


def series_cut(measured: Report, horizon: Fraction) -> bool:
    """True when :func:`~portsim.simulator.engine.replay_series` measured a shorter span than
    ``horizon`` (its replay was cut; float mode rounds the span, hence the margin)."""
    return measured.horizon is not None and float(measured.horizon) < float(horizon) * (
        1 - 1e-9)


def _series_cut(measured: Report, horizon: Fraction, notes: list[str]) -> bool:
    """:func:`series_cut`, with a note saying how far the exact count went."""
    if measured.horizon is None or not series_cut(measured, horizon):
        return False
    notes.append(f"replay cut: the pipelined series did not settle into a repeating pattern "
                 f"within the replay cap; {measured.completed} operations completed by "
                 f"{_time_text(measured.horizon)}, and no throughput is given for the "
                 f"horizon {format_rational(horizon)}")
    return True


def _not_measured(check: Report, replayed: str, *, periodic: bool = False) -> str:
    """The note of a schedule whose throughput is not measured: a one-shot one's
    pipelined series, or a periodic one's replay, when that replay has violations
    (what it completed despite them is no throughput)."""
    what = ("the throughput of a periodic schedule" if periodic
            else "the pipelined series of a one-shot schedule")
    return (f"not measured: {len(check.violations)} violation(s) in its {replayed}: "
            f"{what} is measured only when the schedule is feasible (completed and the "
            f"measured throughput are not given)")


def _unmeasured(schedule: Schedule, measured: Report, check: Report, replayed: str,
                notes: list[str]) -> bool:
    """True when the row gives no count and no measured throughput: a one-shot
    schedule whose series is not measured (its note is the caller's), or a
    periodic one whose ``replayed`` replay, ``check``, has violations (noted here)."""
    if schedule.period is None:
        return measured is check
    if check.violations:
        notes.append(_not_measured(check, replayed, periodic=True))
        return True
    return False


def _run_asap(name: str, kind: str, model: str, result: PlanResult,
              horizon: Fraction | None, exact: bool, size: Fraction) -> PlannerRun:
    """Measure a plan that claims only an order of events (``replay="asap"``).

    Periodic: the pattern is expanded over the horizon and replayed as soon as
    possible (per-port order kept); one-shot: one ASAP replay for the makespan,
    then the ASAP series.  ``feasible`` is that replay's: no event blocked, no
    missing link, nothing else the ASAP engine reports.
    """
    schedule = result.schedule
    assert schedule is not None
    notes = list(result.notes)
    makespan = None
    if schedule.period is not None:
        if horizon is None:
            max_lag = max((e.lag for e in schedule.events), default=0)
            horizon = schedule.period * (max_lag + DEFAULT_HORIZON_LENGTHS)
        # every period replayed (1.9 million plays at 100 nodes), or a prefix of
        # them once the replay repeats, with the same count
        measured = check = replay_asap_periodic(schedule, horizon, exact=exact)
        # The planned times repeat every period: their strict replay up to the
        # steady state says what the whole horizon would (replay_periodic), in
        # a time independent of the horizon (it played every period, half of
        # the run's time and memory at 100 nodes).  Its violations are the
        # whole horizon's too, those of no event (an item never held) included:
        # replay_periodic counts them over it, as _run_strict's check does.
        # (lp-naive on 24 unidirectional nodes has 21,061 port conflicts:
        # replaying its 2.1 million plays took 45 s and 2 GiB.)
        strict = replay_periodic(schedule, horizon, exact=exact)
    else:
        check = replay(schedule, mode="asap", exact=exact)
        makespan = check.makespan if isinstance(check.makespan, Fraction) else None
        if horizon is None:
            horizon = Fraction(makespan or check.end_time or 1) * DEFAULT_HORIZON_LENGTHS
        series = measure_series(schedule, check, horizon, exact=exact)
        if series is None and schedule.events:
            notes.append(_not_measured(check, "as-soon-as-possible replay"))
        measured = check if series is None else series
        strict = replay(schedule, exact=exact)
    cut = measured is not check and _series_cut(measured, horizon, notes)
    unmeasured = _unmeasured(schedule, measured, check, "as-soon-as-possible replay", notes)
    notes.append(f"replayed as soon as possible under the real port model; a strict replay "
                 f"of the planned times finds {len(strict.violations)} violation(s)")
    violations = check.violations + tuple(
        v for v in measured.violations if measured is not check)
    # Its planned times are not claimed feasible, but a throughput it announces
    # is a claim about them: the strict replay of those times must prove it.
    achieved = _proven_achieved(result.achieved_throughput,
                                _in_operations_of(strict, schedule, size), strict, schedule,
                                notes)
    return PlannerRun(
        name, kind, model, status="ok", message=result.message,
        throughput_bound=result.throughput_bound, period=schedule.period, makespan=makespan,
        achieved_throughput=achieved,
        measured_throughput=None if cut or unmeasured else measured.measured_throughput,
        completed=None if cut or unmeasured else measured.completed,
        horizon=Fraction(horizon), feasible=not violations, violations=violations,
        notes=tuple(notes), replay="asap", replay_cut=cut, plan=result, validation=check)


def run_scenario(
    scenario: Scenario,
    *,
    horizon: Fraction | int | str | None = None,
    exact: bool = True,
    planners: Iterable[PlannerSpec] | None = None,
    progress: Callable[[PlannerSpec], None] | None = None,
    horizon_key: str | None = None,
) -> ScenarioResult:
    """Run every planner of ``scenario`` (or ``planners``) and collect the results.

    One planner's failure is its own ``error`` record; the others still run.

    Parameters
    ----------
    scenario:
        A loaded scenario (:func:`~portsim.scenarios.loader.load_scenario`).
    horizon:
        The replays' time span (default: the scenario's ``horizon``, else
        :data:`DEFAULT_HORIZON_LENGTHS` makespans, or periods (:func:`default_periods`)).
    exact:
        Replay in exact rationals (default) or in floats (``--float``).
    planners:
        The planners to run instead of the scenario's own: names (``"lp"``)
        or :class:`~portsim.scenarios.loader.PlannerSpec` objects (a name with
        options).
    progress:
        Called with each planner's spec before it runs (a progress display).
    horizon_key:
        How ``horizon`` is named in errors (``"--horizon"`` for the command
        line).

    Returns
    -------
    ScenarioResult
        The scenario and one :class:`PlannerRun` per planner, in order.

    Raises
    ------
    PlannerError
        Before anything runs, on an unknown planner name; on a bad option
        when that planner runs.  The error names the scenario file and the
        key path ``planners[i]``.
    ScenarioError
        When there is no planner to run, or when a given horizon needs more
        replayed events than the engine allows (see :func:`run_planner`).
    """
    if not isinstance(scenario, Scenario):
        raise ScenarioError("expected a Scenario: load the file with load_scenario(path)",
                            path="scenario", value=type(scenario).__name__)
    specs = (list(scenario.planners) if planners is None
             else _planner_specs(planners, scenario.source))
    if not specs:
        raise ScenarioError("no planner to run: list at least one", source=scenario.source,
                            path="planners", value=[])
    for i, spec in enumerate(specs):
        _attributed(scenario, i, lambda spec=spec: get_planner(spec.name))  # type: ignore[misc]
    runs = []
    for i, spec in enumerate(specs):
        if progress is not None:
            progress(spec)
        runs.append(_attributed(
            scenario, i,
            lambda spec=spec: run_planner(  # type: ignore[misc]
                scenario, spec, horizon=horizon, exact=exact, horizon_key=horizon_key),
        ))
    return ScenarioResult(scenario, tuple(runs))


def _planner_specs(planners: object, source: str) -> list[PlannerSpec]:
    """``run_scenario``'s ``planners``: names or :class:`PlannerSpec` objects, or one name."""
    if isinstance(planners, str | PlannerSpec):
        planners = [planners]
    if isinstance(planners, bytes | Mapping) or not isinstance(planners, Iterable):
        raise PlannerError("planners must be a list of planner names or PlannerSpecs",
                           source=source, path="planners", value=type(planners).__name__)
    specs = []
    for i, one in enumerate(planners):
        if isinstance(one, str):
            one = PlannerSpec(one)
        elif not isinstance(one, PlannerSpec):
            raise PlannerError("expected a planner name or a PlannerSpec", source=source,
                               path=f"planners[{i}]", value=type(one).__name__)
        specs.append(one)
    return specs


def _attributed(scenario: Scenario, index: int, action: Callable[[], T]) -> T:
    """Run ``action``; a planner misuse is attributed to the scenario's ``planners[index]``."""
    try:
        return action()
    except PlannerError as err:
        if err.source is None:
            err.source = scenario.source
        if err.path is None:
            err.path = f"planners[{index}]"
        elif not err.path.startswith("planners["):
            err.path = f"planners[{index}].{err.path.removeprefix('planners.')}"
        raise
