"""Linear models in exact form, solved in floating point by HiGHS.

A :class:`LinearModel` holds a maximisation problem with exact rational
coefficients (``Fraction``): named non-negative variables, each with an
explicit upper bound, and rows ``a·x <= b`` or ``a·x == b``.  The bounds are
implied by the port constraints (a flow over a link of cost ``c`` is at most
``1/c``); they are kept so that an inexact dual still yields a *certified*
upper bound (:mod:`portsim.planners.lp._exact`).

:func:`solve_float` builds sparse CSR matrices (from COO triplets) and calls
``scipy.optimize.linprog`` with HiGHS: the dual simplex for small models, the
interior-point method for large ones (measured: reduce with 20 participants
takes 117 s with the simplex and under 2 s with the interior point).  When
highspy is installed (a dependency) the model goes to HiGHS directly, with
crossover after the interior point, so that the answer is a vertex with its
basis, which :func:`portsim.planners.lp._exact.basis_recover` solves exactly.
Measured with highspy on reduce N = n = 20 (39,138 columns): interior point
with crossover 1.5-1.9 s, dual simplex 36 s; N = 30 (176,608 columns):
15-17 s, of which crossover is well under 1 s (69 IPX iterations); a looser
``ipm_optimality_tolerance`` (1e-5) and presolve off did not help.  The
reduce planner therefore solves SSR(G) by column generation over reduction
trees instead (:func:`portsim.planners.lp._reduce_columns.reduction_trees`).

A :class:`Deadline` carries a planner's ``time_limit`` through its phases;
a phase that passes it raises :class:`TimeLimitReached`, which the driver
turns into an ``error`` result naming the phase.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import sys
import threading
import time
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

try:
    import highspy

    _HAVE_HIGHSPY = True
except ImportError:  # pragma: no cover - highspy is a dependency
    _HAVE_HIGHSPY = False

__all__ = ["IPM_THRESHOLD", "LONGEST_BUSY", "Deadline", "FloatSolution", "LinearModel", "Row",
           "TimeLimitReached",
           "highs_lp", "new_highs", "solve_float", "time_unit_of"]

IPM_THRESHOLD = 2_000
"""With ``method="auto"``, models with more variables than this use HiGHS's
interior-point method (``highs-ipm``, with crossover); smaller ones the dual
simplex.  Measured with highspy: reduce N = n = 10 (3,268 variables) takes
0.06-0.08 s with the interior point against 0.18-0.37 s with the dual simplex."""

Sense = Literal["<=", "=="]

_STDOUT_LOCK = threading.Lock()
"""Serialises the redirection of file descriptor 1 in :func:`new_highs`."""


def _flush_c_stdout() -> None:
    """Flush the C library's ``stdout`` buffer (best effort: POSIX ``fflush(NULL)``)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C runtime handle
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def _stdout_silenced() -> Iterator[None]:
    """File descriptor 1 points to the null device inside the block.

    HiGHS writes its banner with C ``printf``, below Python's ``sys.stdout``,
    so only the descriptor itself can be redirected.  Without a usable
    descriptor 1 (closed), the block runs as is.
    """
    with _STDOUT_LOCK:
        with contextlib.suppress(AttributeError, OSError, ValueError):  # closed stdout
            sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:
            yield
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            _flush_c_stdout()
            os.dup2(null, 1)
            yield
        finally:
            _flush_c_stdout()
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)


def new_highs() -> highspy.Highs:
    """A new ``highspy.Highs`` object that writes nothing, ever.

    highspy 1.16 prints HiGHS's banner ("Running HiGHS ... Copyright ...")
    on standard output when the object is created, before any option can be
    set; older versions print it at the first call other than setting an
    option.  The object is therefore created with file descriptor 1 on the
    null device and ``output_flag`` is switched off before it is returned.
    Every HiGHS object of the ``lp`` planner comes from here.
    """
    with _stdout_silenced():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    # HiGHS drops matrix entries below 1e-9 by default: a busy time of 1e-10 a
    # message (bandwidth 10^10, size 1) left a port's row empty; keep them down
    # to its least allowed value (programs solved whole also scale their rows,
    # :func:`_row_scales`)
    h.setOptionValue("small_matrix_value", SMALLEST_KEPT)
    return h


class TimeLimitReached(Exception):
    """The planner's ``time_limit`` passed during ``phase`` (caught, becomes a status).

    Parameters
    ----------
    phase:
        What was running, for the message (``"exact recovery"``, ...).
    """

    def __init__(self, phase: str) -> None:
        super().__init__(f"time limit reached during {phase}")
        self.phase = phase


@dataclass(frozen=True)
class Deadline:
    """A wall-clock deadline shared by the phases of one planner call.

    Examples
    --------
    >>> Deadline.after(None).remaining() is None
    True
    >>> Deadline.after(60).expired
    False
    """

    at: float | None = None
    """``time.perf_counter()`` value after which the planner stops, or ``None``."""

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        """The deadline ``seconds`` from now (``None``: no deadline)."""
        return cls(None if seconds is None else time.perf_counter() + float(seconds))

    def part(self, share: float) -> Deadline:
        """The deadline ``share`` of the time left from now (``self`` without a deadline).

        >>> Deadline.after(None).part(0.5).at is None
        True
        """
        left = self.remaining()
        return self if left is None else Deadline.after(share * left)

    def remaining(self) -> float | None:
        """Seconds left (at least 0), or ``None`` without a deadline."""
        if self.at is None:
            return None
        return max(0.0, self.at - time.perf_counter())

    @property
    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self.at is not None and time.perf_counter() >= self.at

    def check(self, phase: str) -> None:
        """Raise :class:`TimeLimitReached` naming ``phase`` once the deadline has passed."""
        if self.expired:
            raise TimeLimitReached(phase)


@dataclass(frozen=True, slots=True)
class Row:
    """One constraint ``sum(coeffs[j] * x_j) <sense> rhs``, with a name for messages."""

    coeffs: Mapping[int, Fraction]
    sense: Sense
    rhs: Fraction
    name: str


@dataclass
class LinearModel:
    """Maximise one variable (the throughput) subject to exact rational rows.

    Variables are non-negative and named by hashable keys; every variable has
    an upper bound (used only by the certified fallback of
    :mod:`portsim.planners.lp._exact`, never passed to the solver).

    Examples
    --------
    >>> m = LinearModel()
    >>> x = m.variable("x", upper=Fraction(10))
    >>> tp = m.variable("TP", upper=Fraction(10))
    >>> m.add({x: Fraction(2)}, "<=", Fraction(1), "port")
    >>> m.add({tp: Fraction(1), x: Fraction(-1)}, "==", Fraction(0), "flow")
    >>> m.objective = tp
    >>> float(solve_float(m).x[tp])
    0.5
    """

    keys: list[Hashable] = field(default_factory=list)
    index: dict[Hashable, int] = field(default_factory=dict)
    upper: list[Fraction] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    objective: int = -1

    def variable(self, key: Hashable, *, upper: Fraction) -> int:
        """Declare (or find) the variable ``key``; return its column index."""
        found = self.index.get(key)
        if found is not None:
            if upper < self.upper[found]:
                self.upper[found] = upper
            return found
        j = self.index[key] = len(self.keys)
        self.keys.append(key)
        self.upper.append(upper)
        return j

    def add(self, coeffs: Mapping[int, Fraction], sense: Sense, rhs: Fraction,
            name: str) -> None:
        """Add the row ``coeffs · x <sense> rhs`` (zero coefficients dropped)."""
        kept = {j: a if type(a) is Fraction else Fraction(a)
                for j, a in coeffs.items() if a}
        self.rows.append(Row(kept, sense, Fraction(rhs), name))

    @property
    def n_variables(self) -> int:
        return len(self.keys)

    def matrices(self) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix, np.ndarray]:
        """``(A_ub, b_ub, A_eq, b_eq)`` as float CSR matrices, built from COO triplets."""
        n = self.n_variables
        blocks: dict[str, tuple[list[int], list[int], list[float], list[float]]] = {
            "<=": ([], [], [], []), "==": ([], [], [], [])}
        # Coefficients are few distinct objects (shared Fractions): convert each
        # once, keyed by identity (every one stays alive in ``self.rows``).
        as_float: dict[int, float] = {}
        for row in self.rows:
            r_idx, c_idx, vals, rhs = blocks[row.sense]
            r = len(rhs)
            r_idx.extend([r] * len(row.coeffs))
            c_idx.extend(row.coeffs)
            for a in row.coeffs.values():
                f = as_float.get(id(a))
                if f is None:
                    f = as_float[id(a)] = float(a)
                vals.append(f)
            rhs.append(float(row.rhs))
        out = []
        for sense in ("<=", "=="):
            r_idx, c_idx, vals, rhs = blocks[sense]
            a = sp.coo_matrix((vals, (r_idx, c_idx)), shape=(len(rhs), n)).tocsr()
            out.extend([a, np.asarray(rhs, dtype=float)])
        return out[0], out[1], out[2], out[3]  # type: ignore[return-value]


@dataclass(frozen=True)
class FloatSolution:
    """What HiGHS returned.

    Attributes
    ----------
    status:
        ``"optimal"``, ``"time_limit"``, ``"infeasible"``, ``"unbounded"`` or ``"error"``.
    x:
        Primal values (maximisation form), when optimal.
    y_ub, y_eq:
        Dual values of the ``<=`` rows (>= 0) and ``==`` rows, in maximisation
        form: ``c <= A_ub^T y_ub + A_eq^T y_eq`` at an optimum.
    message:
        The solver's message.
    method:
        The HiGHS method used.
    seconds:
        Wall time of the solve.
    """

    status: str
    x: np.ndarray | None
    y_ub: np.ndarray | None
    y_eq: np.ndarray | None
    message: str
    method: str
    seconds: float
    basis: tuple[list[int], list[int]] | None = None
    """Basic columns and basic rows of the optimal vertex (HiGHS's basis,
    via highspy), when known: the exact recovery solves this basis."""


def highs_lp(a: sp.csc_matrix, cost: np.ndarray, col_upper: np.ndarray,
             row_lower: np.ndarray, row_upper: np.ndarray) -> highspy.HighsLp:
    """A HiGHS model ``min cost·x``, ``row_lower <= a x <= row_upper``,
    ``0 <= x <= col_upper``, from a column-wise sparse matrix."""
    import highspy

    n = a.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = a.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = col_upper
    lp.row_lower_ = row_lower
    lp.row_upper_ = row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr
    lp.a_matrix_.index_ = a.indices
    lp.a_matrix_.value_ = a.data
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = a.shape[0]
    return lp


def _solve_highspy(model: LinearModel, method: str, time_limit: float | None, *,
                   balance: bool = False) -> FloatSolution:
    """Solve with highspy directly, returning HiGHS's optimal basis too.

    Interior point runs with crossover, so every optimum is a vertex with a
    basis; duals follow ``scipy``'s sign convention turned into maximisation
    form (``y = -row_dual``).
    """
    import highspy

    a_ub, b_ub, a_eq, b_eq = model.matrices()
    n = model.n_variables
    a = sp.vstack([a_ub, a_eq]).tocsr()
    b = np.concatenate([b_ub, b_eq])
    n_ub = a_ub.shape[0]
    scales = _row_scales(a)
    unit = 1.0
    columns = None
    if scales is not None:  # rows multiplied by powers of two: duals divided back below
        a = sp.diags(scales) @ a
        b = b * scales
        if balance:
            columns, balanced, unit = _balancing_scales(a, b)
        if columns is not None:  # x = columns * (HiGHS's x) / unit: multiplied back below
            a = sp.diags(balanced) @ a @ sp.diags(columns)
            b = b * balanced * unit
            scales = scales * balanced
    a = a.tocsc()
    h = new_highs()
    h.setOptionValue("presolve", "on")
    if method == "highs-ipm":
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "on")
    elif method == "highs-ds":
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 1)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    cost = np.zeros(n)
    cost[model.objective] = -1.0
    objective_scale = 1.0
    if columns is not None:
        # the objective's column scaled too; the objective brought back to about 1
        # (HiGHS's dual simplex failed on a cost of 2^28), its duals multiplied back
        cost = cost * columns
        objective_scale = float(np.ldexp(1.0, int(np.round(np.log2(np.abs(cost).max())))))
        cost = cost / objective_scale
    lp = highs_lp(a, cost, np.full(n, highspy.kHighsInf),
                  np.concatenate([np.full(n_ub, -highspy.kHighsInf), b[n_ub:]]), b)
    started = time.perf_counter()
    h.passModel(lp)
    h.run()
    seconds = time.perf_counter() - started
    status = h.getModelStatus()
    ms = highspy.HighsModelStatus
    if status == ms.kTimeLimit:
        return FloatSolution("time_limit", None, None, None, "time limit", method, seconds)
    if status == ms.kInfeasible:
        return FloatSolution("infeasible", None, None, None, "infeasible", method, seconds)
    if status in (ms.kUnbounded, ms.kUnboundedOrInfeasible):
        return FloatSolution("unbounded", None, None, None, "unbounded", method, seconds)
    if status != ms.kOptimal:
        return FloatSolution("error", None, None, None, h.modelStatusToString(status),
                             method, seconds)
    sol = h.getSolution()
    x = np.asarray(sol.col_value, dtype=float) / unit
    if columns is not None:
        x = x * columns
    row_dual = -np.asarray(sol.row_dual, dtype=float) * objective_scale
    if scales is not None:
        row_dual = row_dual * scales
    basis = None
    hb = h.getBasis()
    if hb.valid:
        basic = highspy.HighsBasisStatus.kBasic
        cols = [j for j, st in enumerate(hb.col_status) if st == basic]
        rows = [i for i, st in enumerate(hb.row_status) if st == basic]
        # back to the model's row order (<= rows first in the solver's matrix)
        ub_rows = [i for i, r in enumerate(model.rows) if r.sense == "<="]
        eq_rows = [i for i, r in enumerate(model.rows) if r.sense == "=="]
        order = ub_rows + eq_rows
        basis = (cols, sorted(order[i] for i in rows))
    return FloatSolution("optimal", x, row_dual[:n_ub], row_dual[n_ub:], "optimal", method,
                         seconds, basis)


SMALLEST_KEPT = 1e-12
"""HiGHS's ``small_matrix_value`` for every program (its least allowed value; its
default, 1e-9, dropped the busy times of fast links carrying small messages)."""

SMALL_COEFFICIENT = 1e-6
"""A model with a coefficient below this (in absolute value) or above its inverse has
its rows scaled (:func:`_row_scales`): HiGHS drops entries below 1e-9 (its
``small_matrix_value``), so a link of bandwidth 10^10 carrying a message of
size 1, a busy time of 10^-10 per message, vanished from its port's row and the
program was unbounded."""


LONGEST_BUSY = 2.0**10
"""The longest busy time a column-generation master is solved with in its own time
unit (:func:`time_unit_of`'s default upper end).  It was ``1 / SMALL_COEFFICIENT``
(10^6): fabrics in microseconds (busy times up to 6·10^4, an MI250's GCDs at 16
to 200 GB/s with every time 10^6) left the broadcast and matchings masters with
coefficients of 10^4 beside right-hand sides of 1 and HiGHS said ``Unknown``,
where the same platforms in seconds or nanoseconds are exact; the rooted
allreduce's master had met it first (``_allreduce_rooted``)."""


def time_unit_of(times: Iterable[float],
                 within: tuple[float, float] = (SMALL_COEFFICIENT, LONGEST_BUSY)
                 ) -> float:
    """The time unit, a power of two, of a float program whose longest busy time
    is the largest of ``times``: 1 where that lies within ``within`` (the program
    is solved as it always was; above 2^10 since :data:`LONGEST_BUSY`), else the
    power of two nearest to it.

    The incremental masters divide their busy times by it
    (:class:`~portsim.planners.lp._incremental.IncrementalMaster`'s ``unit``).
    A power of two keeps every scaled value exact.

    >>> time_unit_of([0.5, 3.0]), time_unit_of([4e-14]), time_unit_of([1e8, 1.0])
    (1.0, 2.842170943040401e-14, 134217728.0)
    >>> time_unit_of([1000.0]), time_unit_of([62500.0])
    (1.0, 65536.0)
    >>> time_unit_of([5e-4], within=(2.0**-10, 2.0**10))
    0.00048828125
    """
    largest = max((abs(t) for t in times), default=0.0)
    if largest == 0.0 or not math.isfinite(largest) or within[0] <= largest <= within[1]:
        return 1.0
    return math.ldexp(1.0, round(math.log2(largest)))


def _row_scales(a: sp.csr_matrix) -> np.ndarray | None:
    """Per row, the power of two that brings its largest coefficient into [1/2, 1],
    where some coefficient of ``a`` is outside [:data:`SMALL_COEFFICIENT`, its
    inverse]; ``None`` otherwise (the model is solved as it is).

    Scaling a row by a positive factor changes neither the feasible set nor the
    optimum; its dual is divided by the factor (the caller multiplies back).
    Powers of two keep the scaled coefficients exact in floating point.
    """
    values = np.abs(a.data)
    if not values.size or (values.min() >= SMALL_COEFFICIENT
                           and values.max() <= 1 / SMALL_COEFFICIENT):
        return None
    largest = np.zeros(a.shape[0])
    np.maximum.at(largest, np.repeat(np.arange(a.shape[0]), np.diff(a.indptr)), values)
    exponents = np.where(largest > 0, -np.ceil(np.log2(np.where(largest > 0, largest, 1))), 0)
    return np.ldexp(1.0, exponents.astype(int))


BALANCING_PASSES = 8
"""Passes of :func:`_balancing_scales` at most."""


def _balancing_scales(a: sp.csr_matrix, b: np.ndarray
                      ) -> tuple[np.ndarray | None, np.ndarray, float]:
    """Column, row and right-hand side scales, powers of two, that bring the
    coefficients and right-hand sides of a row-scaled program ``a x <= b``
    near 1 together; ``(None, ones, 1.0)`` where they would be no closer.

    Row scaling alone leaves two kinds of program badly scaled, both a matter
    of time unit (a rate is messages per time unit, a time fraction has no
    unit):

    - a row whose own coefficients are far apart: the master of a gather on
      unidirectional nodes with messages of 10^-9 (one byte on links of GB/s)
      holds, in each link's row, the trees' busy times of 10^-10 beside the
      time fractions' 1, and HiGHS answered "Solve error";
    - right-hand sides far apart: a gather over a DGX-1's NVLinks of 25·10^9
      bytes per second has busy times of 4·10^-11 a message, so its port
      rows, scaled to a largest coefficient of 1, bound rates of 7·10^10
      beside rows bounding 1 ("Unknown").

    Each row, each column and the right-hand side (as one more column) is
    divided, alternately, by the geometric mean of its largest and least
    entry (Curtis and Reid's aim, in :data:`BALANCING_PASSES` passes at
    most), rounded to a power of two so that every scaled value stays
    exact.  The program solved is ``(R a C) x' <= R b u``; the feasible set
    is that of ``x = C x' / u``, and the row duals are ``R`` times its own
    (the objective's scale aside).  :func:`solve_float` balances only when
    asked (``balance``): :func:`~portsim.planners.lp._driver.solve_exactly`
    asks where the program as row scaling leaves it fails.
    """
    m, n = a.shape
    coo = a.tocoo()
    rhs_rows = np.flatnonzero(b)
    rows_of = np.concatenate([coo.row, rhs_rows])
    cols_of = np.concatenate([coo.col, np.full(rhs_rows.size, n)])
    logs = np.log2(np.abs(np.concatenate([coo.data, b[rhs_rows]])))
    if not logs.size:
        return None, np.ones(m), 1.0
    row_log = np.zeros(m)
    col_log = np.zeros(n + 1)
    for _ in range(BALANCING_PASSES):
        for log, of, size in ((col_log, cols_of, n + 1), (row_log, rows_of, m)):
            scaled = logs + row_log[rows_of] + col_log[cols_of]
            high = np.full(size, -np.inf)
            low = np.full(size, np.inf)
            np.maximum.at(high, of, scaled)
            np.minimum.at(low, of, scaled)
            log -= np.where(np.isfinite(high), np.round((high + low) / 2), 0)
    scaled = logs + row_log[rows_of] + col_log[cols_of]
    if scaled.max() - scaled.min() >= logs.max() - logs.min():
        return None, np.ones(m), 1.0  # no closer: solved as row scaling left it
    return (np.ldexp(1.0, col_log[:n].astype(int)), np.ldexp(1.0, row_log.astype(int)),
            float(np.ldexp(1.0, int(col_log[n]))))


def solve_float(model: LinearModel, *, method: str = "auto",
                time_limit: float | None = None, balance: bool = False) -> FloatSolution:
    """Solve ``model`` with HiGHS through ``scipy.optimize.linprog``.

    Parameters
    ----------
    model:
        The model; ``model.objective`` is the column maximised.
    method:
        ``"auto"`` (interior point above :data:`IPM_THRESHOLD` variables,
        dual simplex below), ``"highs"``, ``"highs-ds"`` or ``"highs-ipm"``.
    time_limit:
        Seconds after which HiGHS stops (status ``"time_limit"``).
    balance:
        Where some coefficient is far from 1, scale columns and the
        right-hand side too, not only rows (:func:`_balancing_scales`).

    Returns
    -------
    FloatSolution
    """
    if method == "auto":
        method = "highs-ipm" if model.n_variables > IPM_THRESHOLD else "highs-ds"
    if _HAVE_HIGHSPY:
        return _solve_highspy(model, method, time_limit, balance=balance)
    a_ub, b_ub, a_eq, b_eq = model.matrices()
    c = np.zeros(model.n_variables)
    c[model.objective] = -1.0
    options: dict[str, object] = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    started = time.perf_counter()
    res = linprog(
        c,
        A_ub=a_ub if a_ub.shape[0] else None, b_ub=b_ub if a_ub.shape[0] else None,
        A_eq=a_eq if a_eq.shape[0] else None, b_eq=b_eq if a_eq.shape[0] else None,
        bounds=(0, None), method=method, options=options,
    )
    seconds = time.perf_counter() - started
    status = {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded"}.get(
        res.status, "error")
    if status == "time_limit" or (res.status == 4 and "time" in str(res.message).lower()):
        status = "time_limit"
    if status != "optimal":
        return FloatSolution(status, None, None, None, str(res.message), method, seconds)
    y_ub = (-np.asarray(res.ineqlin.marginals) if a_ub.shape[0]
            else np.zeros(0))
    y_eq = (-np.asarray(res.eqlin.marginals) if a_eq.shape[0]
            else np.zeros(0))
    return FloatSolution(status, np.asarray(res.x), y_ub, y_eq, str(res.message), method,
                         seconds)
