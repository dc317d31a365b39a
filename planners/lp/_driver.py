"""Shared driver: options, solve, exact recovery, schedule, result.

Every collective module builds its model and its weighted units; this module
does the rest the same way for all of them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from portsim.planners.base import PlanResult, WeightedTree
from portsim.planners.lp._exact import CAP_PROOFS, ExactSolution, Repair, dual_bound, recover
from portsim.planners.lp._periodic import DEFAULT_MAX_EVENTS, Unit, build_periodic
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached, solve_float
from portsim.simulator.collector import paused_collection
from portsim.simulator.errors import PlannerError, PortsimError
from portsim.simulator.numbers import (
    approximate,
    common_denominator,
    counted,
    format_rational,
    parse_rational,
    readable,
    with_article,
)
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule, Send

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "MAX_SCALE_BITS",
    "NAME",
    "OPTIONS",
    "LpOptions",
    "finish",
    "guarded",
    "no_communication",
    "parse_options",
    "percent",
    "solve_exactly",
    "time_limit_error",
]

NAME = "lp"

DEFAULT_TIME_LIMIT = 300.0
"""Seconds an ``lp`` (or ``lp-naive``) call may spend without a ``time_limit``
option: past it the result is an ``error`` naming the phase (a 1,000-node
broadcast ran for more than 300 s before there was a default)."""

MAX_SCALE_BITS = 2048
"""Largest common denominator (in bits, about 617 decimal digits) of the
times of a schedule the planner returns.  The exact replay multiplies every
time by that denominator and computes on integers of its size: on the reduce
toy with a compute time of ``1e-999`` (a 3,320-bit denominator) a replay of
the 5,000-instance fixed period took 3.3 GB, against 1.2 GB at ``1e-18``.
A platform time whose denominator is larger, or a schedule whose times need
a larger one, is an ``error`` naming the value."""

_FLOAT_BITS = 1023
"""A time of ``2**1023`` or more does not fit a double, the solver's arithmetic."""

OPTIONS = frozenset({"method", "time_limit", "split", "period", "max_events", "restrict"})
"""Options of the ``lp`` planner."""

_METHODS = ("auto", "highs", "highs-ds", "highs-ipm")

RESTRICTIONS = ("tree", "dag", "graph")
"""Values of the ``restrict`` option (broadcast report, section 2.3)."""


@dataclass(frozen=True)
class LpOptions:
    """Options of the ``lp`` planner.

    Attributes
    ----------
    method:
        HiGHS method: ``auto`` (interior point for large models), ``highs``,
        ``highs-ds`` or ``highs-ipm``.
    time_limit:
        Seconds the planner may spend (every phase of the call); past it the
        result has status ``error`` with a message naming the phase.
        ``None``: not given, :data:`DEFAULT_TIME_LIMIT` applies
        (:attr:`seconds`).
    split:
        Split messages across matchings (default); ``False`` keeps them whole
        with a longer period.
    period:
        A fixed period (Proposition 4 of RR-4872, section 4.6).
    max_events:
        Cap on the operations per period of the exact period; above it the
        fixed-period approximation is used, with a warning.
    restrict:
        Broadcast only: ``graph`` (default) uses the whole platform;
        ``tree`` the best single spanning arborescence, ``dag`` the best
        acyclic sub-platform (:mod:`portsim.planners.lp._restrict`).
    deadline:
        The one wall-clock deadline of the planner call, set by the facade
        from ``time_limit`` when the call starts and shared by every phase
        (solves, exact recovery, column generation, tree extraction, the
        periodic schedule) and by every sub-call (``restrict`` candidates);
        ``None`` until then (:meth:`clock` makes one from ``time_limit``).
    free_links:
        With ``split`` false, links whose ports never bind still run outside
        the matchings (each transfer whole), so only the others lengthen the
        period; ``False`` (default) keeps every link in matchings, the
        papers' construction (the scatter toy's period 48).  Not a user
        option: the lp on links with latency sets it.
    schedule:
        Build the periodic schedule (default).  ``False``: the bound alone,
        without the schedule, its period or its achieved throughput (what
        :func:`portsim.planners.lp.lp_throughput_bound` asks; on an allgather
        over 8 ``dgx_a100`` servers the schedule took most of the call).  Not
        a user option.
    """

    method: str = "auto"
    time_limit: float | None = None
    split: bool = True
    period: Fraction | None = None
    max_events: int = DEFAULT_MAX_EVENTS
    restrict: str = "graph"
    deadline: Deadline | None = field(default=None, compare=False, repr=False)
    free_links: bool = False
    schedule: bool = True

    @property
    def seconds(self) -> float:
        """The time limit in force, ``time_limit`` or else :data:`DEFAULT_TIME_LIMIT`."""
        return self.time_limit if self.time_limit is not None else DEFAULT_TIME_LIMIT

    @property
    def limit_text(self) -> str:
        """The time limit in force, for messages (``"300.0 s (the default time_limit)"``)."""
        text = f"{self.seconds} s"
        return text if self.time_limit is not None else f"{text} (the default time_limit)"

    def clock(self) -> Deadline:
        """The call's deadline, or a fresh one ``time_limit`` from now without one.

        Examples
        --------
        >>> LpOptions(time_limit=5.0).clock().remaining() is not None
        True
        >>> d = Deadline.after(1.0)
        >>> LpOptions(deadline=d).clock() is d
        True
        """
        return self.deadline if self.deadline is not None else Deadline.after(self.seconds)

    def started(self) -> LpOptions:
        """These options with the call's deadline fixed now (kept if already set)."""
        if self.deadline is not None:
            return self
        return replace(self, deadline=Deadline.after(self.seconds))


def parse_options(options: Mapping[str, object], name: str = NAME) -> LpOptions:
    """Check and read the ``lp`` options (those of planner ``name``: ``lp-naive``
    shares them).

    Raises
    ------
    PlannerError
        On a bad value, naming the option.
    """
    method = options.get("method", "auto")
    if method not in _METHODS:
        raise PlannerError("method must be one of " + ", ".join(_METHODS),
                           path=f"planners.{name}.method", value=method)
    time_limit = options.get("time_limit")
    limit: float | None = None
    if time_limit is not None:
        # A number in any form a file may write it ("1e3", "1/2", 10): never
        # .nan or .inf, which would make a deadline that never expires.
        seconds = None if isinstance(time_limit, bool) else parse_rational(
            time_limit, path=f"planners.{name}.time_limit", error=PlannerError)
        if seconds is None or seconds <= 0:
            raise PlannerError("time_limit must be a positive number of seconds",
                               path=f"planners.{name}.time_limit", value=time_limit)
        limit = float(seconds)
    split = options.get("split", True)
    if not isinstance(split, bool):
        raise PlannerError("split must be true or false", path=f"planners.{name}.split",
                           value=split)
    period = options.get("period")
    fixed = None
    if period is not None:
        fixed = parse_rational(period, path=f"planners.{name}.period", error=PlannerError)
        if fixed <= 0:
            raise PlannerError("period must be > 0", path=f"planners.{name}.period",
                               value=str(period))
    cap = options.get("max_events", DEFAULT_MAX_EVENTS)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise PlannerError("max_events must be a positive integer",
                           path=f"planners.{name}.max_events", value=cap)
    restrict = options.get("restrict", "graph")
    if restrict not in RESTRICTIONS:
        raise PlannerError("restrict must be one of " + ", ".join(RESTRICTIONS),
                           path=f"planners.{name}.restrict", value=restrict)
    return LpOptions(str(method), limit, split, fixed, cap, str(restrict))


def solve_exactly(model: LinearModel, options: LpOptions, *, what: str,
                  repair: Repair | None = None, deadline: Deadline | None = None,
                  scale: Fraction | None = None) -> ExactSolution | PlanResult:
    """Solve ``model`` and recover exact rationals, or say why not (a result).

    ``deadline`` (default: the call's deadline, :meth:`LpOptions.clock`)
    bounds the solve and the exact recovery together.  ``scale``: the
    objective's order of magnitude when the caller knows it (a flow
    program's cap on its throughput), for the time unit (:func:`time_unit`).
    """
    if deadline is None:
        deadline = options.clock()
    if deadline.expired:
        return time_limit_error(options, f"the build of the {what} model (before HiGHS "
                                         f"started)")
    # Attempts, each solved in a time unit (every rate divided by it) and read
    # back exactly below: first, where some resources are far looser than the
    # tightest, with those capped (:func:`capped_rows`), kept only where it is
    # proven optimal without the caps; the rows' or the caller's unit; where HiGHS fails or
    # nothing positive is recovered, the same with columns balanced too
    # (:func:`~portsim.planners.lp._solve.solve_float`'s ``balance``), and in
    # the time unit of HiGHS's own answer when that is far from 1.
    capped = capped_rows(model)
    tries = [_Attempt(time_unit(model, scale), False, False)]
    if capped is not None:
        tries.insert(0, _Attempt(time_unit(capped, scale), False, True))
    best: tuple[ExactSolution, Fraction | None] | None = None
    failed = ""
    for attempt in _attempts(tries):
        unit, balance = attempt.unit, attempt.balance
        base = capped if attempt.capped and capped is not None else model
        solved = base if unit is None else in_time_unit(base, unit)
        mended = (repair if repair is None or unit is None
                  else _repair_in_unit(repair, unit))
        sol = solve_float(solved, method=options.method, time_limit=deadline.remaining(),
                          balance=balance)
        if sol.status == "time_limit":
            return PlanResult.error(
                NAME, f"HiGHS ({sol.method}) stopped at the time limit of "
                      f"{options.limit_text} on the {what} model ({model.n_variables} "
                      f"variables, {len(model.rows)} rows); raise time_limit or try method: "
                      f"highs-ipm")
        if sol.status == "infeasible" and not attempt.capped and not _zero_holds(model):
            return PlanResult.infeasible(NAME, f"the {what} linear program is infeasible")
        # numerical trouble ("unbounded" under a cap, too; "infeasible" where the zero
        # point holds every row, as it does in every steady-state program)
        if sol.status != "optimal":
            if not attempt.capped:
                failed = failed or sol.message
                if not balance:
                    tries.append(attempt._replace(balance=True))
            continue
        try:
            exact = recover(solved, sol, repair=mended, deadline=deadline)
        except TimeLimitReached as stop:
            return time_limit_error(options, f"{stop.phase} of the {what} model "
                                             f"({model.n_variables} variables, "
                                             f"{len(model.rows)} rows)")
        if attempt.capped:
            # The primal holds the original rows too (their right-hand sides are
            # only larger); the dual's bound is taken on them.  Kept where that
            # proves the primal optimal; else the attempts without caps follow.
            if exact is None or not exact.lower > 0:
                continue
            original = model if unit is None else in_time_unit(model, unit)
            if dual_bound(original, exact.y_ub, exact.y_eq) == exact.lower:
                best = (exact, unit)
                break
            continue
        if exact is not None and (best is None or _narrower(exact, best[0])):
            best = (exact, unit)
        if best is not None and best[0].lower > 0 and best[0].lower == best[0].upper:
            break  # exact: an interval lets the next attempts try for the optimum
        if not balance:
            tries.append(attempt._replace(balance=True))
        assert sol.x is not None
        guess = float(sol.x[solved.objective])
        if 0 < guess < math.inf and abs(math.log2(guess)) > TIME_UNIT_BITS:
            tries.append(attempt._replace(
                unit=(unit or Fraction(1)) * Fraction(2) ** round(math.log2(guess))))
    if best is None:
        if failed:
            return PlanResult.error(NAME, f"HiGHS failed on the {what} model: {failed}")
        return PlanResult.error(NAME, f"no exactly feasible solution recovered from HiGHS's "
                                      f"answer to the {what} model")
    exact, unit = best
    if unit is not None:
        # the same feasible duals certify the original rows (right-hand sides unit
        # times larger): primal values and both ends scale back by the unit
        exact = replace(exact, values=[v * unit for v in exact.values],
                        lower=exact.lower * unit, upper=exact.upper * unit)
    return exact


def _narrower(found: ExactSolution, best: ExactSolution) -> bool:
    """Whether ``found`` replaces ``best``: any later answer where ``best`` has no
    positive value, or a narrower certified interval (``upper / lower``, the same in
    every time unit; an exact answer is 1).

    An attempt that recovers only an interval does not end the attempts: a
    unidirectional broadcast whose link times span 75 to 10^10 recovered the
    optimal primal but an exact dual 10^18 times above it in the first attempt,
    and the exact optimum in the next one.
    """
    if not best.lower > 0:
        return True
    if not found.lower > 0:
        return False
    return found.upper * best.lower < best.upper * found.lower


def _zero_holds(model: LinearModel) -> bool:
    """Whether ``x = 0`` satisfies every row of ``model`` (no row needs a positive
    left-hand side): HiGHS's "infeasible" is then numerical trouble.  Seen on a
    program whose rows' coefficients span 10^-12 to 9000."""
    return all(row.rhs >= 0 if row.sense == "<=" else row.rhs == 0 for row in model.rows)


MAX_ATTEMPTS = 5
""":func:`solve_exactly`'s solves of one model at most (see there): four, and
one more where the model has rows to cap."""


class _Attempt(NamedTuple):
    """One solve of :func:`solve_exactly`: in which time unit, whether balanced
    (:func:`~portsim.planners.lp._solve.solve_float`'s ``balance``), and whether
    of the model with its loosest rows capped (:func:`capped_rows`)."""

    unit: Fraction | None
    balance: bool
    capped: bool


def _attempts(tries: list[_Attempt]) -> Iterator[_Attempt]:
    """The items of ``tries``, those appended meanwhile included, without
    repeats, :data:`MAX_ATTEMPTS` at most."""
    seen: set[_Attempt] = set()
    for attempt in tries:
        if len(seen) == MAX_ATTEMPTS:
            return
        if attempt not in seen:
            seen.add(attempt)
            yield attempt


TIME_UNIT_BITS = 10
""":func:`time_unit` rescales a model only when the rows bounding a resource are all
on one side of their largest coefficient, their geometric middle beyond
``2**TIME_UNIT_BITS`` (or below its inverse) of it."""


def time_unit(model: LinearModel, scale: Fraction | None = None) -> Fraction | None:
    """The power of two by which to divide the right-hand sides of ``model``, or
    ``None`` when the model is solved as it is.

    A steady-state program's rows bound a resource's busy time per time unit:
    ``sum(busy_e * x_e) <= 1``.  On links of bandwidth 25 * 10^9 carrying a
    message of size 1 (bytes per second), every ``busy_e`` is about 10^-11 and
    every rate about 10^10, beyond what HiGHS's absolute tolerances resolve (a
    scatter and a gather over two ``dgx_a100`` servers: ``HiGHS failed ...:
    Unknown``; an all-to-all ran into the time limit); with ``c`` about 10^12
    every rate is about 10^-12 and the exact recovery found no instance.
    Dividing every right-hand side (and upper bound) by a power of two ``u``
    is the change of time unit ``x = u * x'``: the rows of the rescaled model
    are the same, its optimum ``1/u`` of the original's, its vertices and
    feasible duals the same.  ``u`` is the power of two nearest the geometric
    middle of the rows' ratios ``rhs / largest coefficient``, and only when
    every such ratio is on the same side of 1 and that middle beyond
    ``2**TIME_UNIT_BITS`` (an allreduce over GPUs in nanoseconds: links of 4495
    beside computations of 1000, 2^-12 and 2^-10 from 1; solved as it was, the
    exact recovery failed twice, 80 s at 8 GPUs, and the unit of HiGHS's answer
    then took 7 s).
    Else, with ``scale`` (the caller's estimate of the optimum) beyond
    ``2**TIME_UNIT_BITS`` of 1, the power of two nearest it: on links of ``c``
    from 10^-6 to 10^6 an all-to-all's rates are about 10^-8 while most rows
    are near 1, and no exact solution was recovered from HiGHS's answer.
    """
    by_rows = _unit_of_rows(model)
    if by_rows is not None or scale is None or not scale > 0:
        return by_rows
    bits = scale.numerator.bit_length() - scale.denominator.bit_length()
    if -TIME_UNIT_BITS <= bits <= TIME_UNIT_BITS:
        return None
    return Fraction(2) ** bits


def _unit_of_rows(model: LinearModel) -> Fraction | None:
    """:func:`time_unit` from the rows alone (every one on one side of 1, their
    geometric middle far from it: a CPU row near 1 beside links far from it, an
    allreduce over GPUs in nanoseconds, took two failed solves before)."""
    lo = hi = None
    for row in model.rows:
        if not row.rhs or not row.coeffs:
            continue
        big = max(abs(a) for a in row.coeffs.values())
        ratio = abs(row.rhs) / big
        bits = ratio.numerator.bit_length() - ratio.denominator.bit_length()
        lo = bits if lo is None else min(lo, bits)
        hi = bits if hi is None else max(hi, bits)
    if lo is None or hi is None or lo <= 0 <= hi:
        return None
    middle = (lo + hi) // 2
    if -ROWS_UNIT_BITS <= middle <= ROWS_UNIT_BITS:
        return None
    return Fraction(2) ** middle


ROWS_UNIT_BITS = 5
""":func:`time_unit` rescales a model by its rows when their geometric middle is
beyond ``2**ROWS_UNIT_BITS`` of 1 (:data:`TIME_UNIT_BITS` before): an allreduce
over eight ``multiport:2`` nodes with link costs 1000 to 5000 (its rows at
2^-11 to 2^-8, middle 2^-10) was solved as it was, in 39 s against 17 s with
every time 1000 times shorter, its answer not recovered exactly, and the
second solve ran into the time limit of 60 s; rescaled, 18 s and exact."""

CAP_BITS = 2 * TIME_UNIT_BITS
""":func:`capped_rows` caps the resources looser than the tightest by more than
``2**CAP_BITS``, down to ``2**TIME_UNIT_BITS`` times it."""


def capped_rows(model: LinearModel) -> LinearModel | None:
    """``model`` with its loosest resource rows capped, or ``None`` where no row
    is loose enough to cap.

    A resource row ``sum(a_j * x_j) <= b`` (every ``a_j`` and ``b`` positive)
    lets each of its variables reach ``b / max(a_j)`` per time unit.  Where these
    reaches span more than ``2**CAP_BITS``, every reach beyond
    ``2**TIME_UNIT_BITS`` times the least is lowered to it (``b`` made smaller).
    On a DGX-1 whose NVLinks are given in bytes per second (busy times of
    4·10^-11 beside computations of 1), an allreduce's relaxation reaches
    2.5·10^10 on every link and 1 at every processor: the right-hand sides span
    10^10 once rows are scaled, and HiGHS's interior point made no progress (the
    simplex then took 66 s); capped, the same 8/7 took 3 s.  The capped model's
    feasible set lies inside the model's, so its exact primal is the model's;
    :func:`solve_exactly` keeps its answer only where its dual's bound on the
    uncapped rows equals that primal's value, a proof of the model's optimum
    (a certified interval of the capped model is not kept: without the caps
    the answer may be exact).
    """
    reach: list[tuple[int, Fraction, Fraction]] = []
    for i, row in enumerate(model.rows):
        if row.sense == "<=" and row.rhs > 0 and row.coeffs:
            big = max(row.coeffs.values())
            if big > 0 and min(row.coeffs.values()) > 0:
                reach.append((i, row.rhs / big, big))
    if not reach:
        return None
    least = min(r for _, r, _ in reach)
    if max(r for _, r, _ in reach) <= least * 2 ** CAP_BITS:
        return None
    ceiling = least * 2 ** TIME_UNIT_BITS
    rows = list(model.rows)
    for i, r, big in reach:
        if r > ceiling:
            rows[i] = replace(rows[i], rhs=ceiling * big)
    return LinearModel(list(model.keys), dict(model.index), list(model.upper), rows,
                       model.objective)


def in_time_unit(model: LinearModel, unit: Fraction) -> LinearModel:
    """``model`` with every right-hand side and upper bound divided by ``unit``."""
    return LinearModel(list(model.keys), dict(model.index), [u / unit for u in model.upper],
                       [replace(row, rhs=row.rhs / unit) for row in model.rows],
                       model.objective)


def _repair_in_unit(repair: Repair, unit: Fraction) -> Repair:
    """``repair`` of the original model, for the model rescaled by ``unit``."""
    def rescaled(x: np.ndarray) -> list[Fraction] | None:
        values = repair(x * float(unit))
        return None if values is None else [v / unit for v in values]
    return rescaled


def no_communication(operation: Operation, planner: str = NAME) -> PlanResult:
    """The row of an operation that moves nothing (one participant, or a source that
    is its only destination): ``unsupported``, its steady-state throughput being
    unbounded; the one-shot planners give it a makespan of 0."""
    return PlanResult.unsupported(planner, f"{with_article(str(operation.kind))} that "
                                           f"moves nothing (no destination but its source, "
                                           f"or one participant) has an unbounded "
                                           f"steady-state throughput")


def time_limit_error(options: LpOptions, where: str,
                     bound: Fraction | None = None, *,
                     bound_exact: bool | None = None) -> PlanResult:
    """The ``error`` result of a planner stopped by its ``time_limit`` during ``where``;
    ``bound``: the throughput bound proven before the stop (the row's
    ``throughput_bound``, with no schedule; ``where`` says it too), and
    ``bound_exact`` whether it is proven optimal."""
    result = PlanResult.error(NAME, f"time limit of {options.limit_text} reached during "
                                    f"{where}; raise time_limit")
    return result if bound is None else replace(result, throughput_bound=bound,
                                                bound_exact=bound_exact)


def _proven_before_schedule(exact: ExactSolution) -> str:
    """What the program proved before the periodic schedule was cut by the time limit
    (the bound holds without the schedule, as the allreduce's does)."""
    if exact.exact:
        return f"certified all the same: the optimum is {format_rational(exact.upper)}"
    return (f"certified all the same: no schedule beats {format_rational(exact.upper)}, "
            f"and one carries {format_rational(exact.lower)}")


def _approx(value: Fraction) -> str:
    """``value`` exactly when short, else to 4 significant digits (``~1.000e-999``)."""
    text = format_rational(value)
    return text if len(text) <= 24 else approximate(value, 4, ".3e")


def _out_of_range(platform: Platform, operation: Operation) -> str | None:
    """Why a time of the platform is beyond what the planner can take, or ``None``.

    The times are the transfer times ``size · c`` of the links and, for a
    reduction, the nodes' compute times: above ``2**1023`` a time does not
    fit HiGHS's floating point; with a denominator of more than
    :data:`MAX_SCALE_BITS` bits its schedule could not be replayed exactly.
    """
    times = [(f"the transfer time of link {link.src}->{link.dst} (size x c)",
              operation.size * link.c) for link in platform.links]
    if operation.kind in (OperationKind.REDUCE, OperationKind.ALLREDUCE):
        times += [(f"the compute time of node {node.id}", node.compute)
                  for node in platform.nodes]
    for what, t in times:
        if t and t.numerator.bit_length() - t.denominator.bit_length() >= _FLOAT_BITS:
            return (f"{what}, {_approx(t)}, is beyond the range of floating-point numbers "
                    f"(about 1.8e308), in which HiGHS solves the linear program")
        if t.denominator.bit_length() > MAX_SCALE_BITS:
            return (f"{what}, {_approx(t)}, has a denominator of "
                    f"{t.denominator.bit_length()} bits: an exact replay scales every time "
                    f"to an integer, and the lp planner keeps that scale within "
                    f"{MAX_SCALE_BITS} bits")
    return None


def _time_scale(schedule: Schedule) -> int:
    """The common denominator of every time of ``schedule``, as the exact replay takes it."""
    platform, size = schedule.platform, schedule.operation.size
    # The starts' denominators, then each distinct duration's once: a duration
    # per event, in Fractions, took 15 of the 60 s of the bound of an allgather
    # over 8 dgx_a100 servers (a million events).
    scale = common_denominator([] if schedule.period is None else [schedule.period])
    lasting: dict[tuple[object, ...], Fraction] = {}
    for e in schedule.events:
        d = e.start.denominator
        if d != 1 and scale % d:
            scale = scale * d // math.gcd(scale, d)
        if isinstance(e, Send):
            key: tuple[object, ...] = (e.src, e.dst, e.part.numerator, e.part.denominator)
            if key not in lasting:
                lasting[key] = size * platform.cost(e.src, e.dst) * e.part
        elif (e.node,) not in lasting:
            lasting[e.node,] = platform.compute_time(e.node)
    return math.lcm(scale, common_denominator(lasting.values()))


def guarded(planner: str, platform: Platform, operation: Operation, options: LpOptions,
            plan: Callable[[], PlanResult]) -> PlanResult:
    """Run one planner call so that it never raises on a valid input.

    The platform's times are checked first (:func:`_out_of_range`); then
    ``plan`` runs, and its deadline (:class:`TimeLimitReached`), an
    arithmetic overflow or any other failure inside the planner becomes an
    ``error`` result with the reason.  Input errors (:class:`PortsimError`
    other than :class:`PlannerError`, such as an operation naming an unknown
    node) still propagate: the command reports them as bad input.
    """
    reason = _out_of_range(platform, operation)
    if reason is not None:
        return PlanResult.error(planner, reason)
    try:
        return plan()
    except TimeLimitReached as stop:
        # Phases turn the deadline into an ``error`` result themselves; this
        # is the net under any check that runs outside their handlers.
        return replace(time_limit_error(options, stop.phase), planner=planner)
    except PlannerError as exc:
        return PlanResult.error(planner, f"the {planner} planner failed: {exc}")
    except PortsimError:
        raise
    except (OverflowError, FloatingPointError) as exc:
        return PlanResult.error(planner, f"arithmetic overflow in the {planner} planner "
                                         f"({exc}): the platform's times span too wide a "
                                         f"range for HiGHS's floating point")
    except Exception as exc:  # never a traceback from a planner (SPEC: status error)
        return PlanResult.error(planner, f"internal error in the {planner} planner "
                                         f"({type(exc).__name__}: {exc}); please report it "
                                         f"with the scenario")


def percent(share: Fraction) -> str:
    """``share`` as a percentage, two decimals, or two significant digits below
    0.01 % (an interval narrower than that is not ``0.00%`` wide).

    Examples
    --------
    >>> percent(Fraction(35, 10000)), percent(Fraction(35, 1000000)), percent(Fraction(0))
    ('0.35%', '0.0035%', '0%')
    """
    if share == 0 or share >= Fraction(1, 10000):
        return f"{float(share):.2%}" if share else "0%"
    return f"{float(share) * 100:.2g}%"


def finish(
    platform: Platform,
    operation: Operation,
    exact: ExactSolution,
    groups: Sequence[Sequence[Unit]],
    options: LpOptions,
    *,
    tree_edges: Callable[[Unit], tuple[tuple[str, str], ...]] | None = None,
    notes: Sequence[str] = (),
    matchings: Sequence[tuple[Fraction, Sequence[tuple[str, str]]]] | None = None,
    refine: Callable[[ExactSolution], tuple[ExactSolution, Sequence[str]]] | None = None,
) -> PlanResult:
    """Build the periodic schedule and the :class:`PlanResult`.

    ``matchings`` (weighted link sets per time unit) orchestrate the period
    instead of the bipartite peeling (unidirectional and mixed platforms).
    ``refine``, called once the schedule is built (with the time left), may
    lower ``exact``'s upper end; its notes follow ``notes``.  So a bound that
    may not finish in time (a cut generation's flow program) never takes the
    schedule's time.
    """
    if not options.schedule:
        return _bound_alone(exact, groups, options, tree_edges=tree_edges, notes=notes,
                            refine=refine)
    tp = exact.lower
    if not tp > 0:
        # a schedule of no instance would fail every replay (its instances never complete)
        return PlanResult.error(NAME, f"no schedule: HiGHS's answer, recovered exactly, "
                                      f"carries no instance (certified interval [0, "
                                      f"{format_rational(exact.upper)}]; the platform's times "
                                      f"may span more orders of magnitude than floating "
                                      f"point resolves)")
    deadline = options.clock()
    if deadline.expired:
        return time_limit_error(options, f"the periodic schedule, before it started "
                                         f"({_proven_before_schedule(exact)})", exact.upper,
                                bound_exact=exact.exact)
    try:
        # The build allocates some 100,000 objects and keeps them: the cyclic
        # collector would walk them (and the heap) for nothing (see that module).
        # Paused here, not by a wrapper of build_periodic: its warnings name
        # the caller a fixed number of frames up.
        with paused_collection(), warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            plan = build_periodic(platform, operation, groups, tp, split=options.split,
                                  free_links=options.free_links,
                                  fixed_period=options.period, max_events=options.max_events,
                                  matchings=matchings, deadline=deadline)
    except TimeLimitReached as stop:
        # the build's warnings (a fixed period and its operations) describe a
        # schedule that was never finished: the error row does not carry them
        return time_limit_error(options, f"{stop.phase} ({_proven_before_schedule(exact)})",
                                exact.upper, bound_exact=exact.exact)
    for w in said:  # the build's warnings, for the caller, as they were
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    scale = _time_scale(plan.schedule)
    if scale.bit_length() > MAX_SCALE_BITS:
        return PlanResult.error(NAME, f"the schedule's times need a common denominator of "
                                      f"{scale.bit_length()} bits (~{_approx(Fraction(scale))}) "
                                      f"to be replayed exactly; the lp planner keeps it "
                                      f"within {MAX_SCALE_BITS} bits (try the option "
                                      f"'period:' with a round value)")
    exact, all_notes, message = _certified(exact, notes, refine, plan.throughput)
    all_notes.extend(plan.notes)
    orchestration = (counted(plan.matchings, "matching") if plan.matchings else
                     "no matchings (each link used sends on its own: no port is shared "
                     "by more links than it has ports)")
    all_notes.append(f"period {format_rational(plan.period)}: "
                     f"{counted(plan.instances_per_period, 'instance')} per period, "
                     f"{orchestration}")
    return PlanResult.ok(NAME, plan.schedule, throughput_bound=exact.upper,
                         period=plan.period, trees=_weighted_trees(groups, tree_edges),
                         notes=all_notes, message=message, achieved_throughput=plan.throughput,
                         bound_exact=exact.exact)


def _bound_alone(
    exact: ExactSolution,
    groups: Sequence[Sequence[Unit]],
    options: LpOptions,
    *,
    tree_edges: Callable[[Unit], tuple[tuple[str, str], ...]] | None,
    notes: Sequence[str],
    refine: Callable[[ExactSolution], tuple[ExactSolution, Sequence[str]]] | None,
) -> PlanResult:
    """:func:`finish` without the periodic schedule (``options.schedule`` false): the
    same bound, notes and message, but those of the schedule."""
    if options.clock().expired:
        return time_limit_error(options, "the bound (before its certificate)")
    exact, all_notes, message = _certified(exact, notes, refine, None)
    return PlanResult.ok(NAME, None, throughput_bound=exact.upper,
                         trees=_weighted_trees(groups, tree_edges), notes=all_notes,
                         message=message, bound_exact=exact.exact)


def _certified(
    exact: ExactSolution,
    notes: Sequence[str],
    refine: Callable[[ExactSolution], tuple[ExactSolution, Sequence[str]]] | None,
    achieved: Fraction | None,
) -> tuple[ExactSolution, list[str], str]:
    """The solution ``refine`` leaves, the notes on it and the message of an interval
    (``achieved``: the periodic schedule's throughput, ``None`` without one), for
    :func:`finish`."""
    all_notes = list(notes)
    if refine is not None:
        exact, said_by_refine = refine(exact)
        all_notes.extend(said_by_refine)
    all_notes.extend(exact.notes)
    message = ""
    if exact.exact:
        proof = CAP_PROOFS.get(exact.method, "an exactly feasible dual")
        all_notes.append(f"optimal throughput {format_rational(exact.upper)} exact "
                         f"({exact.method}), certified by {proof}")
    else:
        width = exact.upper - exact.lower
        relative = f", {percent(width / exact.lower)} of the lower end" if exact.lower else ""
        # the periodic schedule carries the lower end, or less in a fixed period
        carried = ("the lower end is what the program's schedule carries (no periodic "
                   "schedule built: the bound alone was asked)" if achieved is None else
                   "the schedule achieves the lower end" if achieved >= exact.lower else
                   f"the lower end is what the program's schedule carries, the periodic "
                   f"schedule built achieves {readable(achieved)} (a fixed period, "
                   f"see the notes)")
        message = (f"certified interval [{readable(exact.lower)}, "
                   f"{readable(exact.upper)}] of width {format_rational(width)} "
                   f"(~{float(width):.3g}{relative}); throughput_bound is the upper end, "
                   f"{carried}")
        all_notes.append(message)
    return exact, all_notes, message


def _weighted_trees(groups: Sequence[Sequence[Unit]],
                    tree_edges: Callable[[Unit], tuple[tuple[str, str], ...]] | None
                    ) -> list[WeightedTree]:
    """The weighted trees (or paths) of ``groups``, for the :class:`PlanResult`."""
    trees = []
    for group in groups:
        for unit in group:
            edges = (tree_edges(unit) if tree_edges is not None
                     else tuple((s.src, s.dst) for s in unit.sends))
            trees.append(WeightedTree(unit.weight, edges))
    return trees
