"""Assertions on schedules, for anyone's test suite (pytest, unittest, plain asserts).

:func:`assert_feasible` and :func:`assert_throughput_at_least` raise a plain
:class:`AssertionError` (a :class:`ScheduleAssertionError`) whose message
lists the violations as a readable table (time, node, port or resource,
kind, events involved, detail), so they need no assertion rewriting and read
well under any test runner.  The pytest plugin
(:mod:`portsim.scenarios.pytest_plugin`, installed with portsim) offers them as a
fixture too.

Examples
--------
>>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
>>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
>>> op = Operation(OperationKind.SCATTER, source="A").resolve(p)
>>> good = Schedule.from_dicts(p, op, [
...     {"kind": "send", "src": "A", "dst": "B", "item": "m[B]", "start": 0},
...     {"kind": "send", "src": "A", "dst": "C", "item": "m[C]", "start": 1}])
>>> assert_feasible(good).makespan
Fraction(2, 1)
>>> clash = Schedule.from_dicts(p, op, [
...     {"kind": "send", "src": "A", "dst": "B", "item": "m[B]", "start": 0},
...     {"kind": "send", "src": "A", "dst": "C", "item": "m[C]", "start": "1/2"}])
>>> try:
...     assert_feasible(clash)
... except AssertionError as err:
...     print(str(err).splitlines()[0])
...     print(err.report.violations[0].resource)
schedule is not feasible (strict replay, bidirectional): 1 violation(s)
send port of A
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from portsim.simulator.errors import PlannerError
from portsim.simulator.numbers import format_rational, parse_rational
from portsim.simulator.platform import NodeId, Platform, PortModel
from portsim.simulator.report import Report, ViolationKind
from portsim.simulator.schedule import Schedule
from portsim.simulator.validation import schedule_throughput, validate, violation_table

if TYPE_CHECKING:
    from portsim.scenarios.msccl import MscclAlgorithm, MscclValidation

__all__ = ["ScheduleAssertionError", "assert_feasible", "assert_msccl_correct",
           "assert_throughput_at_least"]


class ScheduleAssertionError(AssertionError):
    """A schedule failed an assertion; ``report`` is the replay that showed it."""

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


def assert_feasible(
    schedule: Schedule,
    *,
    port_model: PortModel | str | None = None,
    horizon: Fraction | int | str | None = None,
    complete: bool = True,
    limit: int | None = 50,
    tolerance: Fraction | int | float | str | None = None,
) -> Report:
    """Assert that ``schedule`` replays strictly with no violation.

    Parameters
    ----------
    schedule:
        The schedule to check.
    port_model, horizon, tolerance:
        As in :func:`simulator.validate` (``tolerance=1e-9`` for start times
        computed in floats).
    complete:
        Also require every expected operation instance to complete (the
        default).  With ``False``, a schedule that breaks no rule but leaves
        instances incomplete (a part of an algorithm, the prefix of a trace)
        passes: its ``incomplete`` violations are not counted, every other
        violation is.
    limit:
        Show at most this many violations in the message.

    Returns
    -------
    Report
        The replay, for further checks (makespan, completed instances...).

    Raises
    ------
    ScheduleAssertionError
        An :class:`AssertionError` whose message is a table of the violations.
    """
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    violation_table((), limit=limit)  # a bad limit is misuse, also when the schedule passes
    report = validate(schedule, port_model=port_model, horizon=horizon, tolerance=tolerance)
    # The strict replay reports an incomplete instance as a violation: only
    # complete=False tells a partial schedule that breaks no rule from one that does.
    counted = (report.violations if complete else
               [v for v in report.violations if v.kind != ViolationKind.INCOMPLETE])
    if not counted and (report.complete or not complete):
        return report
    where = f"strict replay, {report.port_model}"
    if not counted:
        message = (f"schedule is feasible but incomplete ({where}): "
                   f"{report.completed} of {report.instances} instances completed")
    else:
        message = (f"schedule is not feasible ({where}): {len(counted)} "
                   f"violation(s)\n{violation_table(counted, schedule, limit=limit)}")
    raise ScheduleAssertionError(message, report)


def assert_throughput_at_least(
    schedule: Schedule,
    fraction_of_bound: Fraction | int | float | str,
    *,
    bound: Fraction | int | str | None = None,
    horizon: Fraction | int | str | None = None,
    port_model: PortModel | str | None = None,
    tolerance: Fraction | int | float | str | None = None,
) -> Fraction:
    """Assert that a feasible ``schedule`` reaches a fraction of the optimal throughput.

    The schedule's throughput is exact and proven by the strict replay:
    ``instances_per_period / period`` for a periodic schedule whose every
    instance slot #j completed in every period replayed past the start-up
    (an idle slot fails :func:`assert_feasible` as ``incomplete``),
    ``instances / end_time`` for a one-shot one (run back to back; ``end_time``
    is the makespan unless events end after the operation completed).  It must
    be at least ``fraction_of_bound * bound``.

    Parameters
    ----------
    schedule:
        The schedule; it must first pass :func:`assert_feasible`.
    fraction_of_bound:
        Required fraction of the bound, such as ``"9/10"`` or ``0.9``.
    bound:
        The optimal throughput to compare with.  Default: the bound of the
        registered ``lp`` planner for the schedule's platform and operation
        (looked up at run time through :mod:`portsim.planners.registry`).
    horizon, port_model, tolerance:
        As in :func:`simulator.validate`.

    Returns
    -------
    Fraction
        The ratio ``throughput / bound``.

    Raises
    ------
    ScheduleAssertionError
        When the schedule is infeasible or too slow.
    PlannerError
        When no bound is given and the ``lp`` planner gives none,
        ``fraction_of_bound`` is not a number >= 0, or ``bound`` not a
        number > 0.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B"], [("A", "B", 2)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}],
    ...     period=4)
    >>> assert_throughput_at_least(s, "1/2", bound="1/2")
    Fraction(1, 2)
    >>> try:
    ...     assert_throughput_at_least(s, "9/10", bound="1/2")
    ... except AssertionError as err:
    ...     print(str(err).partition(", below")[0])
    throughput 1/4 (1 instance(s) per period 4) is 1/2 = 0.5 of the bound 1/2
    """
    __tracebackhide__ = True
    required = parse_rational(fraction_of_bound, path="fraction_of_bound", error=PlannerError)
    if required < 0:
        # a negative fraction passes every schedule: an assertion that cannot fail
        raise PlannerError("must be >= 0", path="fraction_of_bound", value=fraction_of_bound)
    report = assert_feasible(schedule, port_model=port_model, horizon=horizon,
                             tolerance=tolerance)
    throughput = schedule_throughput(schedule, report)
    if throughput is None:
        if schedule.period is not None:
            assert isinstance(report.horizon, Fraction)  # a strict, exact periodic replay
            raise ScheduleAssertionError(
                f"the replay proves no throughput: its horizon "
                f"{format_rational(report.horizon)} does not see every one of the "
                f"{schedule.instances_per_period} instance slot(s) complete", report)
        raise ScheduleAssertionError("the replay completed no instance: no throughput", report)
    if bound is None:
        reference = _lp_bound(schedule, port_model)
    else:
        reference = parse_rational(bound, path="bound", error=PlannerError)
        if reference <= 0:
            raise PlannerError("a throughput bound must be > 0", path="bound", value=bound)
    ratio = throughput / reference
    if ratio < required:
        if schedule.period is not None:
            how = (f"{schedule.instances_per_period} instance(s) per period "
                   f"{format_rational(schedule.period)}")
        else:
            # The figure is instances / end of the last event, which is later
            # than the makespan when events run past the completion: say which.
            assert isinstance(report.end_time, Fraction)
            # the schedule's own instances (over a horizon, report.instances
            # counts those of its pipelined series)
            how = (f"{len(schedule.instances())} instance(s) in "
                   f"{format_rational(report.end_time)}, the end of the last event")
            if report.makespan is not None and report.makespan != report.end_time:
                how += f" (makespan {_shown_time(report.makespan)})"
        raise ScheduleAssertionError(
            f"throughput {format_rational(throughput)} ({how}) is {format_rational(ratio)} "
            f"= {float(ratio):.4g} of the bound {format_rational(reference)}, below the "
            f"required {format_rational(required)}",
            report,
        )
    return ratio


def _shown_time(value: Fraction | float) -> str:
    return format_rational(value) if isinstance(value, Fraction) else str(value)


def _lp_bound(schedule: Schedule, port_model: PortModel | str | None) -> Fraction:
    # Imported lazily: the lp planner (scipy, HiGHS) loads only when a bound
    # is asked for, so the pytest plugin stays cheap at start-up.
    from portsim.scenarios.bounds import lp_bound

    platform = schedule.platform
    if port_model is not None:
        platform = platform.with_port_model(port_model)
    found = lp_bound(platform, schedule.operation)
    if found.bound is None:
        raise PlannerError(f"no lp bound available ({found.reason}); pass bound=",
                           path="bound")
    return found.bound


def assert_msccl_correct(
    algorithm: str | os.PathLike[str] | MscclAlgorithm,
    platform: Platform,
    *,
    size: Fraction | int | str = 1,
    ranks: Sequence[NodeId] | None = None,
    port_model: PortModel | str | None = None,
    min_ratio: Fraction | int | float | str | None = None,
    limit: int | None = 50,
) -> MscclValidation:
    """Assert that an MSCCL algorithm is correct and feasible on ``platform``.

    The algorithm is read, list-scheduled and replayed strictly
    (:func:`portsim.scenarios.msccl.validate_msccl`); every rank must end with
    what the collective promises.  With ``min_ratio``, its pipelined
    throughput must also reach ``min_ratio`` times the ``lp`` bound of the
    same operation.

    Parameters
    ----------
    algorithm:
        A file name, the XML text, or an algorithm already read.
    platform, size, ranks, port_model:
        As in :func:`~portsim.scenarios.msccl.validate_msccl`.
    min_ratio:
        Required fraction of the ``lp`` bound (``"99/100"``, ``0.99``);
        ``None``: the bound is not asked.
    limit:
        Show at most this many violations in the message.

    Returns
    -------
    MscclValidation
        The verdict, for further checks (makespan, throughput...).

    Raises
    ------
    ScheduleAssertionError
        Naming the ranks and chunks of an incorrect result, the violations of
        an infeasible replay, or the ratio reached.  A malformed file raises
        :class:`~portsim.simulator.errors.ScheduleError` (one line naming the
        GPU, threadblock and step).
    PlannerError
        When ``min_ratio`` is not a number >= 0.

    Examples
    --------
    >>> from portsim.simulator import Platform
    >>> from portsim.scenarios.msccl import ring_allgather_xml
    >>> p = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P2", 1),
    ...                                          ("P2", "P0", 1)])
    >>> assert_msccl_correct(ring_allgather_xml(3), p, size=3, min_ratio=1).throughput
    Fraction(1, 2)
    """
    __tracebackhide__ = True
    from portsim.scenarios.msccl import validate_msccl

    violation_table((), limit=limit)  # a bad limit is misuse, also when the algorithm passes

    need = None if min_ratio is None else parse_rational(
        min_ratio, path="min_ratio", error=PlannerError)
    if need is not None and need < 0:
        # a negative ratio passes every algorithm: an assertion that cannot fail
        raise PlannerError("must be >= 0", path="min_ratio", value=min_ratio)
    verdict = validate_msccl(algorithm, platform, size=size, ranks=ranks,
                             port_model=port_model, lp=need is not None)
    name = verdict.timing.algorithm.source
    where = f"strict replay, {verdict.report.port_model}"
    if verdict.problems:
        raise ScheduleAssertionError(
            f"MSCCL algorithm {name} is incorrect ({where}):\n"
            + "\n".join(f"  {problem}" for problem in verdict.problems), verdict.report)
    if not verdict.correct:
        report = verdict.report
        raise ScheduleAssertionError(
            f"MSCCL algorithm {name} is not feasible ({where}): {len(report.violations)} "
            f"violation(s), {report.completed} of {report.instances} instances completed\n"
            f"{violation_table(report, verdict.timing.schedule, limit=limit)}", report)
    if need is not None:
        ratio = verdict.ratio_to_lp_bound
        if ratio is None:
            raise ScheduleAssertionError(
                f"MSCCL algorithm {name}: no ratio to the lp bound (throughput: "
                f"{verdict.throughput_note or 'measured'}; lp bound: "
                f"{verdict.lp_note or 'found'})", verdict.report)
        if ratio < need:
            raise ScheduleAssertionError(
                f"MSCCL algorithm {name} reaches {format_rational(ratio)} = {float(ratio):.4g} "
                f"of the lp bound {format_rational(verdict.lp_bound or Fraction(0))}, below "
                f"{format_rational(need)} (throughput {format_rational(verdict.throughput or 0)}"
                f", {verdict.throughput_note})", verdict.report)
    return verdict
