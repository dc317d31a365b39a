"""The column-generation core of ``lp``: one incremental float master, one loop.

A column generation solves its master program many times, each time with a
few more columns.  Rebuilding the program (exact ``Fraction`` rows, sparse
matrices, a new HiGHS object) and solving it from scratch every round costs
more than the pricing on fabrics (measured on two DGX-A100 servers,
allgather: 18 s of 29 s in rebuilding the master over 48 rounds).
:class:`IncrementalMaster` keeps the program in one ``highspy.Highs``
object: the rows are declared once, each new column is appended with
``addCol``, and every run starts from the last optimal basis (the new
columns enter it as nonbasic at zero, so the old vertex stays primal
feasible and the primal simplex resumes from there).

Floats drive the generation only: every caller then solves its final
master exactly (:func:`portsim.planners.lp._exact.recover`) and prices it
exactly, so the certified bounds do not depend on this object.

The program is a maximisation ``max c·x`` subject to ``lower <= A x <=
upper``, ``x >= 0``; duals are returned in maximisation form (``c <= A^T y``
at an optimum, ``y = -row_dual`` of HiGHS's minimisation), those of the
``<=`` rows (``lower = -inf``) clipped at 0 (they are ``>= 0`` up to
round-off).

:func:`generate` is the one float loop of every ``lp`` generation (reduction
trees, broadcast trees, matchings, all-reduce structures, flow cuts): solve
the master, hand its point to the caller's pricer, which adds what improves
it; stop when the pricer adds nothing or after :data:`MAX_ROUNDS` rounds.
With a :class:`Smoothing`, the pricer is asked at a
smoothed dual rather than at the master's own (Wentges' dual smoothing,
see :func:`generate`), under the same stopping rule: the loop ends when
nothing improving the master at its own dual enters.
One deadline policy: the call's :class:`~portsim.planners.lp._solve.Deadline`
is checked before every round and bounds every HiGHS run, and either way
:class:`~portsim.planners.lp._solve.TimeLimitReached` names the phase (the
caller turns it into its ``error`` result); a HiGHS failure raises
:class:`MasterFailed`.  The master is an :class:`IncrementalMaster`, or a
:class:`RebuiltMaster` where warm starts would change the columns found.  A
loop cut by the round cap is no error: the exact certification that follows
states the certified interval.

That certification runs in :func:`exact_rounds`: each round solves the
master exactly over the columns found, prices its exact dual exactly (the
dual certificate) and lets an exactly improving column join for another
round, at most :data:`EXACT_ROUNDS` rounds (the all-reduce structures and the
reduce trees keep the caps their results have always had, 1 + 200 and 50),
the deadline checked before each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, overload

import highspy
import numpy as np

from portsim.planners.lp._driver import in_time_unit, time_unit
from portsim.planners.lp._solve import (
    Deadline,
    FloatSolution,
    LinearModel,
    TimeLimitReached,
    new_highs,
    solve_float,
)

__all__ = ["EXACT_ROUNDS", "GENERATION_SHARE", "MAX_ROUNDS", "TOLERANCE", "IncrementalMaster",
           "Master", "MasterFailed",
           "MasterPoint", "Probe", "RebuiltMaster", "Smoothing", "exact_rounds", "generate"]

MAX_ROUNDS = 5_000
"""The cap on the float rounds of every ``lp`` column (or cut) generation."""

EXACT_ROUNDS = 20
"""The cap on the exact rounds that follow a generation (:func:`exact_rounds`)."""

GENERATION_SHARE = 0.85
"""Where a schedule's column generation can stop early and still give a schedule (the
tree packings of broadcast and allgather, step 2 of the allreduce from 9
participants), its float rounds stop after this share of the call's time left
(its ``time_limit``, 300 s by default): the rest is for the exact master over
the columns found, the certified bound and the periodic schedule.  The result
is then the certified interval from that schedule, a note saying where the
generation stopped; without it the call ran into the time limit and ended with
an error and no schedule (32 hosts of ``fat_tree_platform(8)``: the allreduce's
interval [0.987, 1]; broadcast and allgather over 16 ``dgx_a100`` servers).
The price: a call whose generation would have ended between this share and
the whole of its time now gives the interval, not the optimum.  At 0.7,
``dgx_a100_platform(8)``'s allgather with a 60 s ``time_limit`` (issue 14's
target) ended on an interval where it had been exact, 25/7 in 49 s; at 0.85
it is exact again, and the cut cases measured still had time for the rest
(the slowest, 16 servers' allgather: 32 s after the cut, 287 s in all)."""

TOLERANCE = 1e-9
"""A column enters a float master when it improves its objective by more than
this per unit (reduced cost, in the master's float duals; relative where the
price is a ratio to 1); then the loop of :func:`generate` stops when none does."""


@dataclass(frozen=True)
class MasterPoint:
    """The outcome of one :meth:`IncrementalMaster.solve`.

    Attributes
    ----------
    status:
        ``"optimal"``, ``"time_limit"`` or HiGHS's status text otherwise.
    value:
        The optimum (maximisation form; 0 unless optimal).
    duals:
        One dual per row in maximisation form, ``<=`` rows clipped at 0
        (empty unless optimal).
    """

    status: str
    value: float
    duals: np.ndarray


class IncrementalMaster:
    """A maximisation program in one HiGHS object, columns added as they are found.

    Parameters
    ----------
    lower, upper:
        The rows' bounds (``-inf`` below for a ``<=`` row, equal bounds for
        an ``==`` row); the rows start empty.
    settings:
        HiGHS options set once (e.g. ``{"solver": "simplex", "presolve": "off"}``).
    unit:
        The time unit of the program's coefficients (default 1): in every row
        whose bounds are not both 0 (a port's or a link's busy time) the
        coefficients are divided by ``unit``, so that HiGHS solves for
        ``unit`` times the solution; the values, the optimum and those rows'
        duals are given back in the caller's units.  A busy time of ``10^-14``
        per message was under HiGHS's least matrix entry and the program was
        unbounded; one of ``10^8`` made the throughputs fall under its
        feasibility tolerance.  :func:`~portsim.planners.lp._solve.time_unit_of` chooses it.
        A column that is a share of the time unit rather than a rate (a
        matching's weight, ``Σ μ <= 1``; :meth:`add_column`'s ``share``)
        keeps its coefficients and its value.

    Examples
    --------
    ``max x0 + x1`` under ``x0 + 2 x1 <= 4`` and ``3 x0 + x1 <= 6``:

    >>> m = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    >>> m.add_column(1.0, [0, 1], [1.0, 3.0])
    0
    >>> round(m.solve(None).value, 9)
    2.0
    >>> m.add_column(1.0, [0, 1], [2.0, 1.0])
    1
    >>> p = m.solve(None)
    >>> round(p.value, 9), [round(float(y), 9) for y in p.duals]
    (2.8, [0.4, 0.2])
    """

    def __init__(self, lower: Sequence[float] | np.ndarray, upper: Sequence[float] | np.ndarray,
                 settings: Mapping[str, bool | int | float | str], *,
                 unit: float = 1.0) -> None:
        h = new_highs()
        for key, value in settings.items():
            h.setOptionValue(key, value)
        low = np.asarray(lower, dtype=float)
        high = np.asarray(upper, dtype=float)
        low = np.where(np.isneginf(low), -highspy.kHighsInf, low)
        high = np.where(np.isposinf(high), highspy.kHighsInf, high)
        h.addRows(len(low), low, high, 0, np.zeros(0, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        self.h = h
        self._clip = np.asarray(low <= -highspy.kHighsInf, dtype=bool)
        """Rows whose dual is clipped at 0 (the ``<=`` rows)."""
        self.unit = float(unit)
        self._timed = (low != 0) | (high != 0)
        """Rows whose coefficients are divided by :attr:`unit` (bounds not both 0)."""
        self.n_columns = 0
        """Columns added so far."""
        self._shares: list[bool] = []
        """Per column, whether it is a share of the time unit (not divided by :attr:`unit`)."""
        self.refused: str | None = None
        """Why HiGHS refused a column or rows (an entry of 10^15 or more, beyond its
        ``large_matrix_value``): it then leaves them out, and :meth:`solve` returns
        this as the status rather than solve another program."""

    def _check(self, status: highspy.HighsStatus, what: str) -> bool:
        """True when HiGHS took ``what``; else :attr:`refused` says so."""
        if status != highspy.HighsStatus.kError:
            return True
        if self.refused is None:
            self.refused = (f"HiGHS refused {what} (an entry beyond its range of "
                            f"10^-9..10^15 once in the program's time unit)")
        return False

    @classmethod
    def of(cls, model: LinearModel, settings: Mapping[str, bool | int | float | str], *,
           unit: float = 1.0, shares: Collection[int] = ()) -> IncrementalMaster:
        """``model`` (rows, then its columns in order; ``TP`` the objective) in one master
        (``unit``: as the constructor's; ``shares``: the variables that are shares
        of the time unit, :meth:`add_column`'s ``share``).

        The variables' upper bounds are left out: they only make an inexact
        dual certifiable (:mod:`portsim.planners.lp._exact`), which the float
        generation never needs.
        """
        lower = [-np.inf if row.sense == "<=" else float(row.rhs) for row in model.rows]
        master = cls(lower, [float(row.rhs) for row in model.rows], settings, unit=unit)
        cols: list[list[tuple[int, float]]] = [[] for _ in range(model.n_variables)]
        for i, row in enumerate(model.rows):
            for j, a in row.coeffs.items():
                cols[j].append((i, float(a)))
        for j, col in enumerate(cols):
            master.add_column(1.0 if j == model.objective else 0.0,
                              [i for i, _ in col], [a for _, a in col], share=j in shares)
        return master

    def add_column(self, cost: float, rows: Sequence[int] | np.ndarray,
                   values: Sequence[float] | np.ndarray, *, share: bool = False) -> int:
        """Append a column ``x >= 0`` of objective ``cost``; return its index.

        (HiGHS minimises ``-c·x``: the column goes in with cost ``-cost``.)
        ``share``: the column is a share of the time unit, the same in every
        unit (a matching's weight ``μ``, under ``Σ μ <= 1`` and in the rows
        it covers), not a rate: its coefficients are kept as they are, and
        its value.  Divided by :attr:`unit` like a rate's they fell below
        HiGHS's least kept entry (10^-12) or near it: a reduce over eight
        unidirectional nodes with every time 5·10^10 (unit 2^35) ended
        ``Unbounded``, one with times 10^12 on an interval 10^25 wide.
        """
        idx = np.asarray(rows, dtype=np.int32)
        vals = np.asarray(values, dtype=np.float64)
        if self.unit != 1.0 and len(idx) and not share:
            vals = np.where(self._timed[idx], vals / self.unit, vals)
        self._shares.append(share)
        self._check(self.h.addCol(-float(cost), 0.0, highspy.kHighsInf, len(idx), idx, vals),
                    "a column")
        self.n_columns += 1
        return self.n_columns - 1

    def add_rows(self, lower: Sequence[float] | np.ndarray, upper: Sequence[float] | np.ndarray,
                 entries: Sequence[tuple[Sequence[int], Sequence[float]]]) -> int:
        """Append rows over the existing columns; return the index of the first.

        ``entries[r]`` is (columns, values) of row ``r``.  HiGHS keeps the
        last basis (the new rows' slacks enter it), so a row that the last
        solution satisfies lets the primal simplex resume from there.
        """
        low = np.asarray(lower, dtype=float)
        high = np.asarray(upper, dtype=float)
        first = self.h.getNumRow()
        if not len(low):
            return first
        low = np.where(np.isneginf(low), -highspy.kHighsInf, low)
        high = np.where(np.isposinf(high), highspy.kHighsInf, high)
        starts = np.cumsum([0] + [len(cols) for cols, _ in entries[:-1]]).astype(np.int32)
        index = np.asarray([c for cols, _ in entries for c in cols], dtype=np.int32)
        values = np.asarray([v for _, vals in entries for v in vals], dtype=np.float64)
        timed = (low != 0) | (high != 0)
        if self.unit != 1.0:
            per_entry = np.repeat(timed, [len(cols) for cols, _ in entries])
            values = np.where(per_entry, values / self.unit, values)
        if not self._check(self.h.addRows(len(low), low, high, len(index), starts, index,
                                          values), "a row"):
            return first  # left out: the rows' arrays stay HiGHS's
        self._clip = np.concatenate([self._clip, low <= -highspy.kHighsInf])
        self._timed = np.concatenate([self._timed, timed])
        return first

    def add_row(self, columns: Sequence[int] | np.ndarray, values: Sequence[float] | np.ndarray,
                upper: float) -> None:
        """Append the row ``values · x[columns] <= upper`` (a cut): :meth:`add_rows`."""
        self.add_rows([-np.inf], [upper], [(list(columns), list(values))])

    def solve(self, time_limit: float | None) -> MasterPoint:
        """Run HiGHS from the last basis, within ``time_limit`` seconds (``None``: none)."""
        if time_limit is not None:  # HiGHS's clock runs on across the runs of one object
            self.h.setOptionValue("time_limit",
                                  self.h.getRunTime() + max(float(time_limit), 1e-3))
        if self.refused is not None:
            return MasterPoint(self.refused, 0.0, np.zeros(0))
        self.h.run()
        status = self.h.getModelStatus()
        ms = highspy.HighsModelStatus
        if status == ms.kTimeLimit:
            return MasterPoint("time_limit", 0.0, np.zeros(0))
        if status != ms.kOptimal:
            return MasterPoint(self.h.modelStatusToString(status), 0.0, np.zeros(0))
        y = self._duals(self.h.getSolution().row_dual)
        y = np.where(self._clip, np.maximum(y, 0), y)
        return MasterPoint("optimal",
                           -float(self.h.getInfo().objective_function_value) / self.unit, y)

    def _duals(self, row_dual: Sequence[float]) -> np.ndarray:
        """HiGHS's row duals in maximisation form and the caller's units."""
        y = -np.asarray(row_dual, dtype=float)
        return np.where(self._timed, y / self.unit, y) if self.unit != 1.0 else y

    def values(self) -> np.ndarray:
        """The columns' values in the last solution."""
        return self._in_units(self.h.getSolution().col_value)

    def _in_units(self, col_value: Sequence[float]) -> np.ndarray:
        """HiGHS's column values in the caller's units (rates divided by :attr:`unit`)."""
        x = np.asarray(col_value, dtype=float)
        if self.unit == 1.0:
            return x
        return np.where(np.asarray(self._shares, dtype=bool), x, x / self.unit)

    def basis(self) -> tuple[list[int], list[int]]:
        """Basic columns and basic rows of the last solution (for an exact recovery)."""
        basis = self.h.getBasis()
        basic = highspy.HighsBasisStatus.kBasic
        return ([c for c, st in enumerate(basis.col_status) if st == basic],
                [r for r, st in enumerate(basis.row_status) if st == basic])

    def solution(self) -> FloatSolution:
        """The last optimum with its basis, for the exact recovery of the same vertex
        (:func:`portsim.planners.lp._exact.recover`)."""
        sol = self.h.getSolution()
        valid = self.h.getBasis().valid
        return FloatSolution("optimal", self._in_units(sol.col_value),
                             self._duals(sol.row_dual), np.zeros(0), "optimal",
                             "highs-ds", 0.0, self.basis() if valid else None)

    def used(self) -> list[int]:
        """Columns with a positive value, or basic, in the last solution."""
        x = self.h.getSolution().col_value
        basis = self.h.getBasis()
        basic = highspy.HighsBasisStatus.kBasic
        return [c for c, (v, st) in enumerate(zip(x, basis.col_status, strict=True))
                if v > 0 or st == basic]


class RebuiltMaster:
    """A master rebuilt from its columns and solved afresh every round (:func:`solve_float`).

    For the masters that warm starts would change: a degenerate master has
    many optimal duals, and the pricing steered by another one finds other,
    equally optimal, columns (the all-reduce masters keep the columns they
    have always found this way).  :func:`generate` runs it as it runs an
    :class:`IncrementalMaster`.

    Parameters
    ----------
    build:
        Builds the exact master over the current columns (called every round).
    method:
        :func:`solve_float`'s method.

    Attributes
    ----------
    model, solution:
        The last master built and HiGHS's answer (``y_ub``, ``y_eq`` split by
        the rows' senses); :attr:`MasterPoint.duals` lists the same duals in
        the model's row order.

    Notes
    -----
    HiGHS solves the master in the time unit of its rows
    (:func:`~portsim.planners.lp._driver.time_unit`, as every whole program):
    the same rows and duals, the right-hand sides divided by the unit, the
    values given back in the model's.  Solved as it was, an allreduce's
    reduce-then-broadcast master over eight nodes with every time 10^6
    (rates near 10^-7, HiGHS's feasibility tolerance) stopped after 56
    trees at 237186/2062081 where, in units 10^6 times longer, it finds 63
    and the optimum 57760/484071.
    """

    def __init__(self, build: Callable[[], LinearModel], method: str) -> None:
        self.build = build
        self.method = method
        self.model: LinearModel | None = None
        self.solution: FloatSolution | None = None

    def solve(self, time_limit: float | None) -> MasterPoint:
        """Build the master and solve it within ``time_limit`` seconds (``None``: none)."""
        model = self.model = self.build()
        unit = time_unit(model)
        sol = solve_float(model if unit is None else in_time_unit(model, unit),
                          method=self.method, time_limit=time_limit)
        if unit is not None and sol.x is not None:
            sol = replace(sol, x=sol.x * float(unit))  # the model's units (duals unchanged)
        self.solution = sol
        if sol.status == "time_limit":
            return MasterPoint("time_limit", 0.0, np.zeros(0))
        if sol.status != "optimal" or sol.x is None or sol.y_ub is None or sol.y_eq is None:
            return MasterPoint(sol.message, 0.0, np.zeros(0))
        y_ub, y_eq = iter(sol.y_ub), iter(sol.y_eq)
        duals = np.array([float(next(y_ub) if row.sense == "<=" else next(y_eq))
                          for row in model.rows])
        return MasterPoint("optimal", float(sol.x[model.objective]), duals)


class MasterFailed(Exception):
    """HiGHS ended a master run neither optimal nor at the time limit.

    Parameters
    ----------
    status:
        HiGHS's model status text (the caller puts it in its ``error`` result).
    """

    def __init__(self, status: str) -> None:
        super().__init__(f"HiGHS failed on a column-generation master: {status}")
        self.status = status


class Master(Protocol):
    """What :func:`generate` solves: :class:`IncrementalMaster` (or a wrapper of
    it), or :class:`RebuiltMaster`."""

    def solve(self, time_limit: float | None) -> MasterPoint:
        """The master's float optimum and duals (:class:`MasterPoint`)."""
        ...  # pragma: no cover - a protocol


@dataclass(frozen=True)
class Probe:
    """What a pricer reports on one dual it was asked at (with a :class:`Smoothing`).

    Attributes
    ----------
    bound:
        The bound on the master's optimum that pricing at this dual proves
        (for a packing ``max Σ λ`` under ``A λ <= b``: ``b·π`` over the least
        column price at ``π``, when that price is positive), ``math.inf`` when
        none.
    entered:
        Whether columns that improve the master at its own dual
        (``point.duals``) entered.
    subgradient:
        A subgradient of the bound at this dual, when the pricer can state
        it (``b - bound · a`` for the least column ``a``): steers
        ``Smoothing(adaptive=True)``; ``None`` keeps the weight as it is.
    """

    bound: float
    entered: bool
    subgradient: np.ndarray | None = None


@dataclass(frozen=True)
class Smoothing:
    """Wentges' dual smoothing of a column generation (:func:`generate`).

    Every round prices at ``α·center + (1-α)·π`` first, ``π`` the master's
    dual and ``center`` the dual of the best bound found so far; if nothing
    improving the master at ``π`` comes of it (a *mispricing*) it prices at
    ``π`` itself, so the loop's stopping rule is the unsmoothed one.  Pricing
    near the best dual damps the oscillation of the master's duals, which
    takes most of a column generation's rounds (Wentges 1997, "Weighted
    Dantzig-Wolfe decomposition for linear mixed-integer programming").

    Attributes
    ----------
    alpha:
        The weight of the center, in ``[0, 1)`` (0: no smoothing).
    adaptive:
        Adjust ``alpha`` after every round priced at a smoothed dual
        without a mispricing, from the subgradient there (the self-adjusting
        weight of Pessoa, Sadykov, Uchoa and Vanderbeck 2018, "Automation
        and combination of linear-programming based stabilization
        techniques in column generation", INFORMS J. on Computing 30(2)):
        lower it by 0.1 when that subgradient says the bound improves
        towards ``π`` (at 0 the smoothing ends), else raise it by a tenth of
        its distance to 1 (at most 0.99).  On the reduce's random platforms
        it stays within 0.4-0.98.
    """

    alpha: float = 0.8
    adaptive: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha < 1.0:
            raise ValueError(f"Smoothing: alpha must be in [0, 1), got {self.alpha}")


class _Smoothed:
    """The pricing step of one smoothed generation (its center, bound and weight)."""

    def __init__(self, price: Callable[[MasterPoint, np.ndarray], Probe | None],
                 smoothing: Smoothing) -> None:
        self.price = price
        self.alpha = smoothing.alpha
        self.adaptive = smoothing.adaptive
        self.center: np.ndarray | None = None
        self.best = math.inf

    def __call__(self, point: MasterPoint) -> bool:
        y = point.duals
        entered = False
        smoothed = self.center is not None and self.alpha > 0.0
        for alpha in ((self.alpha, 0.0) if smoothed else (0.0,)):
            probe = y if alpha == 0.0 or self.center is None else \
                alpha * self.center + (1 - alpha) * y
            found = self.price(point, probe)
            if found is None:
                return False
            if found.bound < self.best:
                self.best, self.center = found.bound, probe
            if found.entered:
                if self.adaptive and alpha > 0.0 and found.subgradient is not None:
                    self._adapt(found.subgradient, y - probe)
                entered = True
                break
        if self.center is None:
            self.center = y
        return entered and point.value < self.best * (1 - TOLERANCE)

    def _adapt(self, subgradient: np.ndarray, towards_y: np.ndarray) -> None:
        """Pessoa et al.'s rule, for a bound that is minimised."""
        if float(subgradient @ towards_y) < 0.0:   # the bound falls towards y
            self.alpha = max(0.0, self.alpha - 0.1)
        else:
            self.alpha = min(0.99, self.alpha + (1 - self.alpha) * 0.1)


@overload
def generate(master: Master, price: Callable[[MasterPoint], bool], *, deadline: Deadline,
             phase: str, max_rounds: int = MAX_ROUNDS, smoothing: None = None) -> int: ...


@overload
def generate(master: Master, price: Callable[[MasterPoint, np.ndarray], Probe | None], *,
             deadline: Deadline, phase: str, max_rounds: int = MAX_ROUNDS,
             smoothing: Smoothing) -> int: ...


def generate(master: Master,
             price: Callable[[MasterPoint], bool]
             | Callable[[MasterPoint, np.ndarray], Probe | None], *,
             deadline: Deadline, phase: str, max_rounds: int = MAX_ROUNDS,
             smoothing: Smoothing | None = None) -> int:
    """The float column generation: solve ``master``, ``price`` its point, until nothing enters.

    Parameters
    ----------
    master:
        The float master; ``price`` adds its new columns (or rows) to it.
    price:
        Without ``smoothing``: called with every optimal point; adds what
        improves the master and returns whether anything entered (``False``
        ends the loop: no improving column, or the caller's own stopping
        test).  With ``smoothing``: called with the point and the dual to
        price at; adds what improves the master at ``point.duals`` and
        returns a :class:`Probe`, or ``None`` to end the loop (the caller's
        own stopping test).
    deadline:
        Checked before every round; its remaining time bounds every HiGHS run.
    phase:
        Named by :class:`TimeLimitReached` when the deadline passes.
    max_rounds:
        Cap on the rounds (:data:`MAX_ROUNDS`); the exact certification that
        follows every generation states what a cut loop leaves open.
    smoothing:
        Price at smoothed duals (:class:`Smoothing`): a round then ends the
        loop when nothing improving the master at its own dual entered, even
        at that dual, or when the master's value reaches the best bound the
        probes proved.

    Returns
    -------
    int
        The rounds run (master solves).

    Raises
    ------
    TimeLimitReached
        When the deadline passes before a round or during a HiGHS run.
    MasterFailed
        When HiGHS ends a run neither optimal nor at the time limit.

    Examples
    --------
    ``max x0 + x1`` under ``x0 + 2 x1 <= 4`` and ``3 x0 + x1 <= 6``, from the
    column of ``x0``: the column of ``x1`` prices in once, then nothing does.

    >>> m = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    >>> _ = m.add_column(1.0, [0, 1], [1.0, 3.0])
    >>> def price(point: MasterPoint) -> bool:
    ...     if 1.0 - (2 * point.duals[0] + point.duals[1]) <= 1e-9:
    ...         return False  # the column of x1 has no positive reduced cost
    ...     m.add_column(1.0, [0, 1], [2.0, 1.0])
    ...     return True
    >>> generate(m, price, deadline=Deadline.after(None), phase="the example")
    2
    >>> round(m.solve(None).value, 9)
    2.8

    The same with smoothing: the pricer states the bound its dual proves
    (``b·π`` over the least column price, the columns being ``(1, 3)`` and
    ``(2, 1)``).

    >>> m = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    >>> _ = m.add_column(1.0, [0, 1], [1.0, 3.0])
    >>> columns = [np.array([1.0, 3.0]), np.array([2.0, 1.0])]
    >>> def probe(point: MasterPoint, duals: np.ndarray) -> Probe:
    ...     least = min(float(a @ duals) for a in columns)
    ...     bound = float(np.array([4.0, 6.0]) @ duals) / least if least > 0 else math.inf
    ...     entered = m.n_columns == 1 and float(columns[1] @ point.duals) < 1 - 1e-9
    ...     if entered:
    ...         m.add_column(1.0, [0, 1], [2.0, 1.0])
    ...     return Probe(bound, entered)
    >>> generate(m, probe, deadline=Deadline.after(None), phase="the example",
    ...          smoothing=Smoothing(0.5))
    2
    >>> round(m.solve(None).value, 9)
    2.8
    """
    step: Callable[[MasterPoint], bool] = (
        price if smoothing is None  # type: ignore[assignment]
        else _Smoothed(price, smoothing))  # type: ignore[arg-type]
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        deadline.check(phase)
        point = master.solve(deadline.remaining())
        if point.status == "time_limit":
            raise TimeLimitReached(phase)
        if point.status != "optimal":
            raise MasterFailed(point.status)
        if not step(point):
            break
    return rounds


def exact_rounds(*, deadline: Deadline, phase: str,
                 max_rounds: int = EXACT_ROUNDS) -> Iterator[int]:
    """The exact rounds after a generation: round numbers 1, 2, ..., ``max_rounds``.

    The caller's round solves the master exactly over the columns found,
    prices its exact dual exactly and ``break``s once the certificate meets
    the master's value or no column improves exactly; else the exactly
    improving columns join for the next round.  A ``for ... else`` (no break)
    means the cap ended the rounds: the last round's certificate still
    bounds, and the caller states the certified interval.

    Parameters
    ----------
    deadline:
        Checked before every round.
    phase:
        Named by :class:`TimeLimitReached` when the deadline has passed.
    max_rounds:
        Cap on the rounds (:data:`EXACT_ROUNDS`).

    Raises
    ------
    TimeLimitReached
        When the deadline has passed before a round.

    Examples
    --------
    >>> list(exact_rounds(deadline=Deadline.after(None), phase="the example", max_rounds=3))
    [1, 2, 3]
    """
    for number in range(1, max_rounds + 1):
        deadline.check(phase)
        yield number
