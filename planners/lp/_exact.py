"""Exact rational answers from a floating-point LP solution.

Four steps, cheapest and most often exact first (DESIGN.md, "Steady state",
step 2):

0. **Sparse exact basis solve** (:func:`basis_recover`).  When HiGHS
   returns its optimal basis (highspy; interior point with crossover, or the
   simplex), the basic columns and the tight (nonbasic) rows form a square
   sparse system.  It is solved exactly by iterative refinement with exact
   integer residuals over a float sparse LU (by the blocks of its block
   triangular form, :class:`~portsim.planners.lp._block_lu.BlockLU`), then
   rational reconstruction with a common denominator (Wan's
   numeric-symbolic method); the transposed system gives the dual.  The
   primal is checked against every row, the dual against every column, both
   in integers.  Measured on ``benchmarks/lp.py``: reduce N = 20 (4,205 x
   4,205 basis) in 0.2 s, N = 30 (13,957) in about 2 s, where the dense
   ``fmpq_mat`` solve of step 2 took 10 s at size 2,400.
1. **Rounding.**  Every primal and dual value is rationalised with a small
   denominator (``Fraction.limit_denominator``); the primal is checked
   against every row exactly, the dual against every column exactly.  When
   both hold and the objectives agree, the value is the exact optimum and the
   dual is the certificate that no schedule beats it (weak duality; Lemma 1
   of Legrand, Marchal and Robert, RR-4872, section 3.4, for why the LP bounds
   every schedule).
2. **Dense basis solve.**  Otherwise the support of the primal and the rows it
   makes tight are solved exactly (python-flint ``fmpq_mat``, reduced row
   echelon form), and likewise the dual on the tight rows.
3. **Certified interval.**  Otherwise the answer is an interval: an exactly
   feasible primal (the model's own repair, rounded down) gives the lower
   end; the rationalised dual gives the upper end through weak duality with
   the variables' explicit upper bounds ``u``:
   ``c·x = y·(A x) − r·x <= b·y + Σ_j max(0, −r_j) u_j`` where
   ``r = Aᵀy − c`` (``y >= 0`` on ``<=`` rows).  The upper end is valid even
   when the rounded dual is slightly infeasible.

Steps 0 and 2 are improvements: an arithmetic overflow inside one of them
(integers too large for a float, as when a row's common denominator is the
product of many primes) skips that step, and the answer comes from the
others, at worst the certified interval; :attr:`ExactSolution.notes` says
which step was skipped and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from portsim.planners.lp._block_lu import BlockLU
from portsim.planners.lp._solve import Deadline, FloatSolution, LinearModel, Row
from portsim.simulator.numbers import (
    SHORT_BITS,
    decimal_exponent,
    digits,
    format_rational,
    rounded_up,
)

__all__ = ["CAP_PROOFS", "DENOMINATORS", "GOSSIP_BOUND", "PORTS_CAP", "SINGLE_NODE_BOUND",
           "ExactSolution", "basis_recover", "covering_bound", "recover", "repair_grid"]

DENOMINATORS = (1_000, 100_000, 10_000_000)
"""Denominator limits tried, in order, when rationalising."""

SINGLE_NODE_BOUND = "single-node bound"
""":attr:`ExactSolution.method` of an optimum proven by a bound on single nodes
(the solution reaches it) rather than by the solution's dual."""

GOSSIP_BOUND = "gossip bound"
""":attr:`ExactSolution.method` of an allreduce optimum proven by the gossip bound
(:mod:`portsim.planners.lp._gossip`: messages into groups of nodes)."""

PORTS_CAP = "ports' cap"
""":attr:`ExactSolution.method` of a broadcast or all-gather optimum proven by the
ports' cap (:func:`~portsim.planners.lp._broadcast.port_cap`: what a source, a
destination or an island of nodes can send or receive)."""

CAP_PROOFS = {SINGLE_NODE_BOUND: "the single-node bound", GOSSIP_BOUND: "the gossip bound",
              PORTS_CAP: "the ports' cap"}
"""What certifies an optimum proven by a bound that costs no program, by method."""

BASIS_CELLS = 1_000_000
"""Skip the dense exact basis solve above this many matrix cells."""

_ZERO = 1e-9

Repair = Callable[[np.ndarray], list[Fraction] | None]


def repair_grid(largest: float, digits: int) -> int:
    """The grid a repair rounds float rates down to, as its inverse: multiples of
    ``1/10^digits``, or, where the ``largest`` rate is below 1, of ``digits``
    decimal digits below its leading one.

    A repair (a model's fallback from float values to an exactly feasible
    primal, :data:`Repair`) receives the rates in the platform's time unit:
    with every time 10^6 longer they are 10^6 times smaller, and a grid of
    10^-7 left nothing of a reduce whose throughput is 3·10^-7 (and 3 digits
    of one at 3·10^-4).  Never coarser than ``1/10^digits``, so rates of 1 or
    more are rounded as they always were.

    >>> repair_grid(2.5, 7), repair_grid(0.5, 7), repair_grid(3e-7, 7)
    (10000000, 100000000, 100000000000000)
    """
    if not largest > 0 or largest >= 1 or not math.isfinite(largest):
        return 10**digits
    return 10 ** (digits - decimal_exponent(Fraction(largest)))  # exact, not log10's float

_OVERFLOW = (OverflowError, FloatingPointError)
"""Arithmetic failures that skip an optional exact step instead of failing."""


@dataclass(frozen=True)
class ExactSolution:
    """An exactly feasible primal and a certified upper bound.

    Attributes
    ----------
    values:
        Exact primal values (every row holds exactly).
    lower:
        The objective of ``values``.
    upper:
        A certified upper bound on the optimum (weak duality).
    y_ub, y_eq:
        The dual used as certificate (exact rationals).
    method:
        ``"rounding"``, ``"basis"``, ``"repair"`` (the caller's repair of the float
        answer gave the primal) or ``"interval"``.
    notes:
        Exact steps skipped on an arithmetic overflow, one sentence each
        (the planner adds them to its result's notes).

    An ``upper`` end above ``lower`` that holds more digits than anybody can
    read (an exact dual's bound may hold a hundred thousand) is raised on
    construction to a short rational just above it
    (:func:`~portsim.simulator.numbers.rounded_up`, relatively at most
    ``2**-64`` higher), still a certified upper bound; a note says so.
    """

    values: list[Fraction]
    lower: Fraction
    upper: Fraction
    y_ub: list[Fraction]
    y_eq: list[Fraction]
    method: str
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.upper > self.lower:
            short = rounded_up(self.upper)
            if short != self.upper:
                note = (f"upper end rounded up from a rational of about "
                        f"{digits(self.upper):,} digits to {format_rational(short)} "
                        f"(relatively at most 2^-{SHORT_BITS} higher; still certified)")
                object.__setattr__(self, "upper", short)
                object.__setattr__(self, "notes", (*self.notes, note))

    @property
    def exact(self) -> bool:
        """True when ``lower == upper``: the optimum is known exactly."""
        return self.lower == self.upper


def _rationalise(values: np.ndarray, limit: int, *, nonneg: bool) -> list[Fraction]:
    out = []
    for v in values.tolist():
        if abs(v) < _ZERO or (nonneg and v < 0):
            out.append(Fraction(0))
        else:
            out.append(Fraction(v).limit_denominator(limit))
    return out


def primal_feasible(model: LinearModel, x: Sequence[Fraction]) -> bool:
    """True when ``x >= 0`` satisfies every row of ``model`` exactly."""
    if any(v < 0 for v in x):
        return False
    for row in model.rows:
        total = sum((a * x[j] for j, a in row.coeffs.items() if x[j]), Fraction(0))
        if row.sense == "==" and total != row.rhs:
            return False
        if row.sense == "<=" and total > row.rhs:
            return False
    return True


def _with_duals(model: LinearModel, y_ub: Sequence[Fraction],
                y_eq: Sequence[Fraction]) -> Iterator[tuple[Row, Fraction]]:
    """Each row of ``model`` with its dual: ``y_ub`` lists the ``<=`` rows' in order,
    ``y_eq`` the ``==`` rows'."""
    ub, eq = iter(y_ub), iter(y_eq)
    for row in model.rows:
        yield row, next(ub) if row.sense == "<=" else next(eq)


def dual_bound(model: LinearModel, y_ub: Sequence[Fraction],
               y_eq: Sequence[Fraction]) -> Fraction:
    """A certified upper bound from any dual (see the module notes).

    ``y_ub`` must be ``>= 0``; no other condition is needed.
    """
    reduced = [Fraction(0)] * model.n_variables
    reduced[model.objective] = Fraction(-1)
    bound = Fraction(0)
    for row, y in _with_duals(model, y_ub, y_eq):
        if not y:
            continue
        bound += y * row.rhs
        for j, a in row.coeffs.items():
            reduced[j] += a * y
    for j, r in enumerate(reduced):
        if r < 0:
            bound += -r * model.upper[j]
    return bound


def covering_bound(model: LinearModel, y_ub: Sequence[Fraction],
                   y_eq: Sequence[Fraction]) -> Fraction:
    """:func:`dual_bound` of ``(y_ub, y_eq)`` or of the same dual scaled to cover the
    objective's column exactly, whichever is lower (both are certified).

    A dual made feasible for the columns outside a master by lowering rows
    (a column generation's certificate: a tree row's dual lowered to the
    cheapest tree's price) may leave the objective's column ``TP`` short of
    its cost 1: :func:`dual_bound` then pays the shortfall times ``TP``'s
    upper bound, and the bound is that upper bound (a unidirectional
    broadcast over seven nodes, optimum 1/4: an upper end of 10^8).  Divided
    by what it gives ``TP``'s column (``σ``, when positive) the dual covers
    it, every other column keeps the sign of its reduced cost (their costs
    are 0), and the bound is ``b·y / σ`` plus what the other columns still
    lack.

    >>> from portsim.planners.lp._solve import LinearModel
    >>> m = LinearModel()
    >>> tp = m.variable("TP", upper=Fraction(10**8)); x = m.variable("x", upper=Fraction(1))
    >>> m.objective = tp
    >>> m.add({tp: Fraction(1), x: Fraction(-1)}, "==", Fraction(0), "TP = x")
    >>> m.add({x: Fraction(4)}, "<=", Fraction(1), "port")
    >>> y_ub, y_eq = [Fraction(1, 5)], [Fraction(4, 5)]
    >>> dual_bound(m, y_ub, y_eq), covering_bound(m, y_ub, y_eq)
    (Fraction(100000001, 5), Fraction(1, 4))
    """
    bound = dual_bound(model, y_ub, y_eq)
    sigma = sum((y * row.coeffs.get(model.objective, 0)
                 for row, y in _with_duals(model, y_ub, y_eq)), Fraction(0))
    if sigma > 0:
        bound = min(bound, dual_bound(model, [y / sigma for y in y_ub],
                                      [y / sigma for y in y_eq]))
    return bound


def _split_rows(model: LinearModel) -> tuple[list[int], list[int]]:
    ub = [i for i, r in enumerate(model.rows) if r.sense == "<="]
    eq = [i for i, r in enumerate(model.rows) if r.sense == "=="]
    return ub, eq


def _solve_exact(rows: list[dict[int, Fraction]], rhs: list[Fraction], columns: list[int],
                 guess: dict[int, Fraction]) -> dict[int, Fraction] | None:
    """Solve ``rows · x = rhs`` over ``columns`` exactly; free columns take ``guess``."""
    if not columns or len(rows) * (len(columns) + 1) > BASIS_CELLS:
        return None
    try:
        import flint
    except ImportError:  # pragma: no cover - python-flint is a dependency
        return None
    pos = {j: k for k, j in enumerate(columns)}
    n = len(columns)
    dense: list[list[Fraction]] = [[Fraction(0)] * (n + 1) for _ in rows]
    for i, row in enumerate(rows):
        for j, a in row.items():
            k = pos.get(j)
            if k is not None:
                dense[i][k] = a
        dense[i][n] = rhs[i]
    mat = flint.fmpq_mat(len(rows), n + 1,
                         [flint.fmpq(v.numerator, v.denominator) for r in dense for v in r])
    reduced, rank = mat.rref()
    pivots: list[int] = []
    for i in range(rank):
        for k in range(n + 1):
            if reduced[i, k] != 0:
                pivots.append(k)
                break
    if n in pivots:  # inconsistent
        return None
    free = [k for k in range(n) if k not in set(pivots)]
    value = {k: guess.get(columns[k], Fraction(0)) for k in free}
    for i, k in enumerate(pivots):
        total = Fraction(_frac(reduced[i, n]))
        for f in free:
            coeff = reduced[i, f]
            if coeff != 0 and value[f]:
                total -= Fraction(_frac(coeff)) * value[f]
        value[k] = total
    return {columns[k]: v for k, v in value.items()}


def _frac(q: object) -> Fraction:
    return Fraction(int(q.p), int(q.q))  # type: ignore[attr-defined]


def _residual(a_ub: object, b_ub: np.ndarray, a_eq: object, b_eq: np.ndarray,
              x: Sequence[Fraction]) -> float:
    """Largest float violation of the rows by ``x`` (a screen, not a proof)."""
    xf = np.array([float(v) for v in x])
    worst = 0.0
    if b_ub.size:
        worst = max(worst, float(np.max(a_ub @ xf - b_ub)))  # type: ignore[operator]
    if b_eq.size:
        worst = max(worst, float(np.max(np.abs(a_eq @ xf - b_eq))))  # type: ignore[operator]
    return worst


def _dual_residual(model: LinearModel, a_ub: object, a_eq: object,
                   y_ub: Sequence[Fraction], y_eq: Sequence[Fraction]) -> float:
    """Smallest float reduced cost of the dual ``y`` (a screen, not a proof)."""
    reduced = np.zeros(model.n_variables)
    if len(y_ub):
        reduced += a_ub.T @ np.array([float(v) for v in y_ub])  # type: ignore[attr-defined]
    if len(y_eq):
        reduced += a_eq.T @ np.array([float(v) for v in y_eq])  # type: ignore[attr-defined]
    reduced[model.objective] -= 1
    return float(np.min(reduced))


def _exact_dual(model: LinearModel, x: Sequence[Fraction], sol: FloatSolution
                ) -> tuple[list[Fraction], list[Fraction], Fraction] | None:
    """A dual for the exact primal ``x``: complementary slackness solved exactly.

    Rows with slack get ``y = 0``; on the support of ``x`` the reduced costs
    are zero.  Free unknowns take zero, then the solver's values; the first
    answer whose bound reaches ``c·x`` wins (else the best one).
    """
    assert sol.y_ub is not None
    assert sol.y_eq is not None
    support = [j for j in range(model.n_variables) if x[j] > 0]
    ub_index = eq_index = 0
    tight: list[int] = []
    float_y: list[float] = []
    kinds: list[tuple[str, int]] = []
    for i, row in enumerate(model.rows):
        if row.sense == "<=":
            k = ub_index
            ub_index += 1
            total = sum((a * x[j] for j, a in row.coeffs.items() if x[j]), Fraction(0))
            if total != row.rhs:
                continue
            float_y.append(float(sol.y_ub[k]))
            kinds.append(("ub", k))
        else:
            k = eq_index
            eq_index += 1
            float_y.append(float(sol.y_eq[k]))
            kinds.append(("eq", k))
        tight.append(i)
    pos = {j: k for k, j in enumerate(support)}
    columns: list[dict[int, Fraction]] = [{} for _ in support]
    for t, i in enumerate(tight):
        for j, a in model.rows[i].coeffs.items():
            col = pos.get(j)
            if col is not None:
                columns[col][t] = a
    rhs = [Fraction(1) if j == model.objective else Fraction(0) for j in support]
    target = x[model.objective]
    best: tuple[list[Fraction], list[Fraction], Fraction] | None = None
    guesses: list[dict[int, Fraction]] = [
        {}, {t: Fraction(v).limit_denominator(10**6) for t, v in enumerate(float_y)}]
    for guess in guesses:
        solved = _solve_exact(columns, rhs, list(range(len(tight))), guess)
        if solved is None:
            continue
        y_ub = [Fraction(0)] * ub_index
        y_eq = [Fraction(0)] * eq_index
        for t, v in solved.items():
            kind, k = kinds[t]
            if kind == "ub":
                y_ub[k] = max(v, Fraction(0))
            else:
                y_eq[k] = v
        bound = dual_bound(model, y_ub, y_eq)
        if best is None or bound < best[2]:
            best = (y_ub, y_eq, bound)
        if bound == target:
            break
    return best


def _integer_rows(model: LinearModel, rows: Sequence[int]
                  ) -> tuple[list[dict[int, int]], list[int], list[int]]:
    """Rows ``rows`` scaled to integers: coefficients, right-hand sides, scales."""
    out: list[dict[int, int]] = []
    rhs: list[int] = []
    scales: list[int] = []
    for i in rows:
        row = model.rows[i]
        s = row.rhs.denominator
        for a in row.coeffs.values():
            d = a.denominator
            if s % d:
                s = s * d // math.gcd(s, d)
        out.append({j: a.numerator * (s // a.denominator) for j, a in row.coeffs.items()})
        rhs.append(row.rhs.numerator * (s // row.rhs.denominator))
        scales.append(s)
    return out, rhs, scales


def _balanced(rows: list[dict[int, int]], rhs: list[int], scales: list[int]
              ) -> tuple[list[dict[int, int]], list[int], list[int]]:
    """The integer rows multiplied by powers of two, so that every row's largest
    coefficient has the bit length of the largest one of all (exact: the same
    solution, the scales multiplied alike).

    :func:`_refine` scales its residual as a whole, to 60 bits: a row whose
    coefficients are far smaller than another's (the structure price row of
    :mod:`portsim.planners.lp._allreduce_packing`, 54 bits, beside rows of
    ones) then loses its residual and the refinement stops gaining bits.
    Measured: random N = 12, seed 2 of ``benchmarks/lp_allreduce.py``, the
    pricing program's basis under step 2's dual refined only once balanced.
    """
    bits = [max((abs(a).bit_length() for a in row.values()), default=0) for row in rows]
    top = max(bits, default=0)
    shifts = [top - b for b in bits]
    return ([{j: a << k for j, a in row.items()} for row, k in zip(rows, shifts, strict=True)],
            [r << k for r, k in zip(rhs, shifts, strict=True)],
            [v << k for v, k in zip(scales, shifts, strict=True)])


def _refine(mat: sp.csc_matrix, lu: object, rows: list[dict[int, int]],
            rhs: list[int], max_bits: int = 6_000, *, trans: str = "N",
            deadline: Deadline | None = None) -> list[Fraction] | None:
    """Solve the square integer system exactly by numeric refinement.

    Iterative refinement with exact integer residuals (``x ≈ N / 2^E``, the
    residual ``2^E b − M N`` kept exactly), a float sparse LU for every
    correction, then rational reconstruction with a common denominator and an
    exact check ``M x = b`` (Wan's numeric-symbolic method).  ``None`` if the
    check still fails after ``max_bits`` bits, or as soon as a step after the
    first would gain fewer than 8 bits (the float factorisation is too inaccurate).  ``lu``
    factorises ``mat``; ``trans="T"`` solves with its transpose (then
    ``rows`` are the transpose's rows).  ``deadline`` is checked at every
    step (:class:`~portsim.planners.lp._solve.TimeLimitReached`).
    """
    n = len(rhs)
    num = [0] * n
    shift = 0
    resid = list(rhs)
    last_q = 1
    first = True
    while shift <= max_bits:
        if deadline is not None:
            deadline.check("exact recovery (basis refinement)")
        top = max((abs(r) for r in resid), default=0)
        if top == 0:  # num / 2^shift is the solution
            return [Fraction(a, 1 << shift) for a in num]
        scale = top.bit_length() - 60
        rf = np.array([float(r >> scale) if scale > 0 else float(r) for r in resid])
        z = lu.solve(rf, trans=trans)  # type: ignore[attr-defined]
        if not np.all(np.isfinite(z)):
            return None
        zmax = float(np.max(np.abs(z)))
        if zmax == 0:
            return None
        # the correction is z * 2^sc; keep ~30 significant bits of it
        sc = max(scale, 0)
        s = 30 - math.frexp(zmax)[1] - sc
        if s < 8 and not first:
            return None  # no contraction: the float solve is not accurate enough
        first = False
        s = max(s, 1)
        factor = 2.0 ** (s + sc)
        delta = [round(v * factor) for v in z.tolist()]
        num = [(a << s) + d for a, d in zip(num, delta, strict=True)]
        shift += s
        resid = [r << s for r in resid]
        for i, row in enumerate(rows):
            acc = 0
            for j, a in row.items():
                dj = delta[j]
                if dj:
                    acc += a * dj
            resid[i] -= acc
        if shift < 60:
            continue
        # rational reconstruction with a common denominator
        denom = 1 << shift
        bound = 1 << (shift // 2 - 8)
        q = last_q
        values: list[Fraction] = []
        ok = True
        for a in num:
            p = (a * q + (denom >> 1)) // denom
            if abs(a * q - p * denom) < q << 10:  # within 2^10 ulps of the approximation
                values.append(Fraction(p, q))
                continue
            f = Fraction(a, denom).limit_denominator(bound)
            q = q * f.denominator // math.gcd(q, f.denominator)
            if q > bound:
                ok = False
                break
            values.append(f)
        if not ok:
            continue
        last_q = q
        ints = [v.numerator * (q // v.denominator) for v in values]
        if all(sum(a * ints[j] for j, a in row.items()) == b * q
               for row, b in zip(rows, rhs, strict=True)):
            return values
    return None


def _basis_dual_value(model: LinearModel, tight: list[int], rows: list[dict[int, int]],
                      rhs: list[int], ys: list[Fraction]) -> Fraction | None:
    """``b·y`` when the basis dual is exactly feasible, else ``None``.

    With the integer rows ``rows`` (row ``t`` scaled by ``s_t``) and
    ``y_t = s_t·ys_t``, the reduced cost of column ``j`` is
    ``Σ_t rows[t][j]·ys_t − c_j``; everything is checked in integers over the
    common denominator of ``ys``: ``ys_t >= 0`` on ``<=`` rows and every
    reduced cost ``>= 0``.  Then weak duality makes ``b·y`` an upper bound.
    """
    q = 1
    for v in ys:
        d = v.denominator
        if q % d:
            q = q * d // math.gcd(q, d)
    big = [v.numerator * (q // v.denominator) for v in ys]
    reduced = [0] * model.n_variables
    for t, i in enumerate(tight):
        y = big[t]
        if not y:
            continue
        if y < 0 and model.rows[i].sense == "<=":
            return None
        for j, a in rows[t].items():
            reduced[j] += a * y
    reduced[model.objective] -= q
    if any(r < 0 for r in reduced):
        return None
    return Fraction(sum(b * y for b, y in zip(rhs, big, strict=True)), q)


def basis_recover(model: LinearModel, sol: FloatSolution, *,
                  deadline: Deadline | None = None) -> ExactSolution | None:
    """The exact vertex of HiGHS's optimal basis, and its exact dual.

    The basic columns ``S`` and the nonbasic (tight) rows ``R`` form a
    square system ``A[R, S] x_S = b_R`` (nonbasic columns are zero); its
    transpose gives the dual on ``R`` (zero elsewhere).  Both are solved
    exactly by sparse numeric refinement (:func:`_refine`), then the primal is
    checked against every row and the dual bound computed exactly
    (:func:`dual_bound`), so a slightly wrong basis only costs exactness,
    never validity.

    Parameters
    ----------
    model, sol:
        The exact model and HiGHS's optimal answer with its basis.
    deadline:
        Checked between steps and at every refinement step.

    Returns
    -------
    ExactSolution or None
        ``None`` when the basis is missing, singular, or yields no exactly
        feasible primal.

    Raises
    ------
    TimeLimitReached
        When ``deadline`` passes.
    """
    if sol.basis is None:
        return None
    cols, basic_rows = sol.basis
    skip = set(basic_rows)
    tight = [i for i in range(len(model.rows)) if i not in skip]
    if len(tight) != len(cols) or not cols:
        return None
    rows, rhs, scales = _balanced(*_integer_rows(model, tight))
    pos = {j: k for k, j in enumerate(cols)}
    local = [{pos[j]: a for j, a in row.items() if j in pos} for row in rows]
    r_idx = [i for i, row in enumerate(local) for _ in row]
    c_idx = [k for row in local for k in row]
    vals = [float(a) for row in local for a in row.values()]
    n = len(cols)
    mat = sp.csc_matrix((vals, (r_idx, c_idx)), shape=(n, n))
    try:
        lu = BlockLU(mat)
    except RuntimeError:  # singular
        return None
    xs = _refine(mat, lu, local, rhs, deadline=deadline)
    if xs is None:
        return None
    x = [Fraction(0)] * model.n_variables
    for k, j in enumerate(cols):
        x[j] = xs[k]
    if not primal_feasible(model, x):
        return None
    # dual: M^T y' = c_S, y = diag(scale) y' on the tight rows
    columns: list[dict[int, int]] = [{} for _ in cols]
    for i, row in enumerate(local):
        for k, a in row.items():
            columns[k][i] = a
    c_s = [1 if j == model.objective else 0 for j in cols]
    if deadline is not None:
        deadline.check("exact recovery (basis dual)")
    ys = _refine(mat, lu, columns, c_s, trans="T", deadline=deadline)
    kinds: dict[int, int] = {}
    i_ub = i_eq = 0
    for i, model_row in enumerate(model.rows):
        if model_row.sense == "<=":
            kinds[i] = i_ub
            i_ub += 1
        else:
            kinds[i] = i_eq
            i_eq += 1
    y_ub = [Fraction(0)] * i_ub
    y_eq = [Fraction(0)] * i_eq
    if ys is not None:
        for t, i in enumerate(tight):
            y = ys[t] * scales[t]
            if model.rows[i].sense == "<=":
                y_ub[kinds[i]] = max(y, Fraction(0))
            else:
                y_eq[kinds[i]] = y
    else:
        assert sol.y_ub is not None
        assert sol.y_eq is not None
        y_ub = _rationalise(sol.y_ub, 10**7, nonneg=True)
        y_eq = _rationalise(sol.y_eq, 10**7, nonneg=False)
    lower = x[model.objective]
    upper = None if ys is None else _basis_dual_value(model, tight, rows, rhs, ys)
    if upper is None:
        upper = dual_bound(model, y_ub, y_eq)
    return ExactSolution(x, lower, max(upper, lower), y_ub, y_eq,
                         "basis" if upper == lower else "interval")


def recover(model: LinearModel, sol: FloatSolution, *,
            repair: Repair | None = None, deadline: Deadline | None = None
            ) -> ExactSolution | None:
    """Turn a float optimum into exact rationals (see the module notes).

    Parameters
    ----------
    model:
        The exact model.
    sol:
        HiGHS's optimal solution of ``model``.
    repair:
        Model-specific fallback: from float primal values, an exactly
        feasible primal (``None`` if it cannot make one).
    deadline:
        The planner's deadline, checked between the steps and inside the
        basis refinement; ``None`` (default) never stops.

    Returns
    -------
    ExactSolution or None
        ``None`` only when no exactly feasible primal could be found at all.

    Raises
    ------
    TimeLimitReached
        When ``deadline`` passes, naming the step.
    """
    clock = deadline if deadline is not None else Deadline()
    assert sol.x is not None
    assert sol.y_ub is not None
    assert sol.y_eq is not None
    notes: list[str] = []
    if sol.basis is not None:
        try:
            from_basis = basis_recover(model, sol, deadline=clock)
        except _OVERFLOW as exc:
            from_basis = None
            notes.append(_skipped("the exact solve of HiGHS's optimal basis", exc))
        if from_basis is not None and from_basis.exact:
            return from_basis
    best_x: list[Fraction] | None = None
    best_dual: tuple[list[Fraction], list[Fraction], Fraction] | None = None
    a_ub, b_ub, a_eq, b_eq = model.matrices()
    for i, limit in enumerate(DENOMINATORS):
        clock.check("exact recovery (rounding)")
        last = i == len(DENOMINATORS) - 1
        if best_x is None:
            x = _rationalise(sol.x, limit, nonneg=True)
            # A float residual screens out hopeless roundings before the exact check;
            # a positive optimum rounded to nothing (rates below 1/limit) is no answer
            if ((last or _residual(a_ub, b_ub, a_eq, b_eq, x) < 1e-12)
                    and (x[model.objective] > 0 or not sol.x[model.objective] > 0)
                    and primal_feasible(model, x)):
                best_x = x
        y_ub = _rationalise(sol.y_ub, limit, nonneg=True)
        y_eq = _rationalise(sol.y_eq, limit, nonneg=False)
        if not last and _dual_residual(
                model, a_ub, a_eq, y_ub, y_eq) < -1e-12:
            continue
        upper = dual_bound(model, y_ub, y_eq)
        if best_dual is None or upper < best_dual[2]:
            best_dual = (y_ub, y_eq, upper)
        if best_x is not None and best_x[model.objective] == best_dual[2]:
            return ExactSolution(best_x, best_x[model.objective], best_dual[2],
                                 best_dual[0], best_dual[1], "rounding", tuple(notes))
    assert best_dual is not None
    # Basis solve: the support of x and the rows it makes tight.
    ub_rows, eq_rows = _split_rows(model)
    x_float = sol.x
    slack = b_ub - a_ub @ x_float if a_ub.shape[0] else np.zeros(0)
    tight = [ub_rows[i] for i in range(len(ub_rows)) if slack[i] < 1e-7] + eq_rows
    support = [j for j in range(model.n_variables) if x_float[j] > 1e-9]
    method = "basis"
    for columns in _supports(model, tight, support):
        if best_x is not None and best_x[model.objective] >= best_dual[2]:
            break
        clock.check("exact recovery (dense basis solve)")
        guess = {j: Fraction(float(x_float[j])).limit_denominator(10**6) for j in columns}
        try:
            solved = _solve_exact([dict(model.rows[i].coeffs) for i in tight],
                                  [model.rows[i].rhs for i in tight], columns, guess)
        except _OVERFLOW as exc:
            notes.append(_skipped("the dense exact basis solve", exc))
            break
        if solved is not None:
            x = [Fraction(0)] * model.n_variables
            for j, v in solved.items():
                x[j] = v
            if primal_feasible(model, x) and (
                    best_x is None or x[model.objective] > best_x[model.objective]):
                best_x = x
    if best_x is None and repair is not None:  # (before the exact dual, which it may meet)
        clock.check("exact recovery (repair)")
        best_x = repair(x_float)
        if best_x is not None and not primal_feasible(model, best_x):
            best_x = None
        if best_x is not None:
            method = "repair"  # the optimum, when the dual meets it, is the repair's
    if best_x is not None and best_x[model.objective] < best_dual[2]:
        clock.check("exact recovery (exact dual)")
        try:
            candidate = _exact_dual(model, best_x, sol)
        except _OVERFLOW as exc:
            candidate = None
            notes.append(_skipped("the exact dual by complementary slackness", exc))
        if candidate is not None and candidate[2] < best_dual[2]:
            best_dual = candidate
    if best_x is None:
        return None
    if best_x[model.objective] != best_dual[2]:
        method = "interval"
    upper = max(best_dual[2], best_x[model.objective])
    return ExactSolution(best_x, best_x[model.objective], upper, best_dual[0], best_dual[1],
                         method, tuple(notes))


def _supports(model: LinearModel, tight: Sequence[int], support: list[int]
              ) -> Iterator[list[int]]:
    """The columns over which :func:`recover`'s dense solve tries the tight rows:
    the float answer's support, then that support with the columns at zero that
    would relieve a tight ``<=`` row (a negative coefficient there).

    A column whose exact value is below the solver's tolerance beside values
    near 1 reads as zero: a gather over a ring whose link N2 -> N0 costs 10^-10
    beside one of 40 (unidirectional nodes) needs its matching's time
    fraction, 5·10^-12, to cover that link's row; HiGHS gave 0 and the tight
    rows had no solution over the support.
    """
    yield support
    held = set(support)
    relieving = sorted({j for i in tight if model.rows[i].sense == "<="
                        for j, a in model.rows[i].coeffs.items() if a < 0 and j not in held})
    if relieving:
        yield sorted(held.union(relieving))


def _skipped(step: str, exc: BaseException) -> str:
    """The note of an exact step skipped on an arithmetic overflow."""
    return (f"exact recovery: {step} was skipped on an arithmetic overflow ({exc}); "
            f"the answer comes from the remaining steps (rounding, else a certified "
            f"interval)")
