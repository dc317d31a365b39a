"""Linear models in exact form, solved in floating point by HiGHS.

A :class:`LinearModel` holds a maximisation problem with exact rational
coefficients (``Fraction``): named non-negative variables, each with an
explicit upper bound, and rows ``a·x <= b`` or ``a·x == b``.  The bounds are
implied by the port constraints (a flow over a link of cost ``c`` is at most
``1/c``); they are kept so that an inexact dual still yields a *certified*
upper bound (:mod:`planners.lp._exact`).

:func:`solve_float` builds sparse CSR matrices (from COO triplets) and calls
``scipy.optimize.linprog`` with HiGHS: the dual simplex for small models, the
interior-point method for large ones (measured: reduce with 20 participants
takes 117 s with the simplex and under 2 s with the interior point).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

__all__ = ["IPM_THRESHOLD", "FloatSolution", "LinearModel", "Row", "solve_float"]

IPM_THRESHOLD = 5_000
"""With ``method="auto"``, models with more variables than this use HiGHS's
interior-point method (``highs-ipm``); smaller ones the dual simplex."""

Sense = Literal["<=", "=="]


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
    :mod:`planners.lp._exact`, never passed to the solver).

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
        for row in self.rows:
            r_idx, c_idx, vals, rhs = blocks[row.sense]
            r = len(rhs)
            for j, a in row.coeffs.items():
                r_idx.append(r)
                c_idx.append(j)
                vals.append(float(a))
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


def solve_float(model: LinearModel, *, method: str = "auto",
                time_limit: float | None = None) -> FloatSolution:
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

    Returns
    -------
    FloatSolution
    """
    if method == "auto":
        method = "highs-ipm" if model.n_variables > IPM_THRESHOLD else "highs-ds"
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
