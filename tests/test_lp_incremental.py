"""The incremental float master and the one loop of the lp column generations (issue 15, item 1).

:class:`~portsim.planners.lp._incremental.IncrementalMaster` keeps one HiGHS
object and appends columns between warm-started runs.  After every batch of
new columns its optimum and its duals must be those of the same program
rebuilt from scratch as a :class:`~portsim.planners.lp._solve.LinearModel`
and solved by :func:`~portsim.planners.lp._solve.solve_float` (random
masters in the broadcast form: per source a row ``TP - Σ_T y_T = 0``, then
``<=`` port rows; random real data makes the optimum nondegenerate, so the
dual is unique).  The dual is also checked independently: feasible
(``c <= Aᵀy``, ``y >= 0`` on the ``<=`` rows) and of value ``b·y`` equal to
the optimum.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from portsim.planners.lp._incremental import IncrementalMaster, MasterPoint
from portsim.planners.lp._solve import LinearModel, solve_float


def _rebuilt(n_sources: int, rhs: list[float], columns: list[tuple[int, np.ndarray]]
             ) -> LinearModel:
    model = LinearModel()
    tp = model.variable("TP", upper=F(10**9))
    model.objective = tp
    totals: list[dict[int, F]] = [{tp: F(1)} for _ in range(n_sources)]
    rows: list[dict[int, F]] = [{} for _ in rhs]
    for k, (s, loads) in enumerate(columns):
        j = model.variable(("tree", k), upper=F(10**9))
        totals[s][j] = F(-1)
        for r, a in enumerate(loads):
            if a:
                rows[r][j] = F(float(a))
    for total in totals:
        model.add(total, "==", F(0), "source")
    for r, coeffs in enumerate(rows):
        model.add(coeffs, "<=", F(rhs[r]), f"row {r}")
    return model


@pytest.mark.parametrize("seed", range(12))
def test_incremental_master_equals_the_rebuilt_program(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_sources = int(rng.integers(1, 4))
    m = int(rng.integers(3, 9))
    rhs = [float(x) for x in rng.uniform(0.5, 3.0, m)]
    master = IncrementalMaster([0.0] * n_sources + [-np.inf] * m,
                               [0.0] * n_sources + rhs,
                               {"solver": "simplex", "presolve": "off", "simplex_strategy": 4})
    master.add_column(1.0, range(n_sources), [1.0] * n_sources)
    columns: list[tuple[int, np.ndarray]] = []

    def new_column(s: int) -> None:
        loads = rng.uniform(0.1, 2.0, m) * (rng.random(m) < 0.6)
        loads[int(rng.integers(m))] += 0.5  # every column loads some row
        columns.append((s, loads))
        rows = [s] + [n_sources + r for r in range(m) if loads[r]]
        master.add_column(0.0, rows, [-1.0] + [float(a) for a in loads if a])

    for s in range(n_sources):
        new_column(s)
    for _ in range(5):
        point = master.solve(None)
        sol = solve_float(_rebuilt(n_sources, rhs, columns), method="highs-ds")
        assert point.status == sol.status == "optimal"
        assert sol.x is not None
        assert sol.y_ub is not None
        assert sol.y_eq is not None
        assert point.value == pytest.approx(float(sol.x[0]), rel=1e-9, abs=1e-12)
        y = point.duals
        np.testing.assert_allclose(y[:n_sources], sol.y_eq, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(y[n_sources:], sol.y_ub, rtol=1e-7, atol=1e-9)
        # Independent: y is dual feasible and b·y is the optimum.
        assert (y[n_sources:] >= 0).all()
        assert y[:n_sources].sum() >= 1 - 1e-9  # the TP column
        for s, loads in columns:
            assert float(loads @ y[n_sources:]) >= y[s] - 1e-9
        assert float(np.dot(rhs, y[n_sources:])) == pytest.approx(point.value, rel=1e-9)
        for _ in range(int(rng.integers(1, 4))):
            new_column(int(rng.integers(n_sources)))


def test_used_columns_and_values() -> None:
    # max x0 + x1 s.t. x0 + 2 x1 <= 4, 3 x0 + x1 <= 6: optimum (8/5, 6/5), both used.
    master = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    master.add_column(1.0, [0, 1], [1.0, 3.0])
    master.add_column(1.0, [0, 1], [2.0, 1.0])
    master.add_column(0.5, [0, 1], [3.0, 3.0])  # dominated: priced out, unused
    point = master.solve(None)
    assert point.value == pytest.approx(2.8)
    np.testing.assert_allclose(master.values(), [1.6, 1.2, 0.0], atol=1e-9)
    assert master.used() == [0, 1]


def test_a_share_column_keeps_its_coefficients_in_a_slow_time_unit() -> None:
    """A matching's weight ``μ`` is a share of the time unit, not a rate.

    ``max x`` under ``b·x - μ <= 0`` (a link's busy time covered by a
    matching) and ``μ <= 1`` (the time row), ``b = 10^12``: by hand
    ``x = 1/b``, ``μ = 1``, duals ``1/b`` on both rows.  With ``unit =
    2^40`` (the busy time's power of two) ``μ``'s coefficients, divided like
    a rate's, were about 9·10^-13, under HiGHS's least kept entry 10^-12:
    the time row lost ``μ`` and the program had no optimum."""
    b = 1e12
    master = IncrementalMaster([-np.inf, -np.inf], [0.0, 1.0], {"solver": "simplex"},
                               unit=2.0 ** 40)
    master.add_column(1.0, [0], [b])
    master.add_column(0.0, [0, 1], [-1.0, 1.0], share=True)
    point = master.solve(None)
    assert point.status == "optimal"
    assert point.value == pytest.approx(1 / b, rel=1e-9)
    np.testing.assert_allclose(master.values(), [1 / b, 1.0], rtol=1e-9)
    np.testing.assert_allclose(point.duals, [1 / b, 1 / b], rtol=1e-9)


def test_time_limit_status() -> None:
    master = IncrementalMaster([-np.inf], [1.0], {"solver": "simplex"})
    master.add_column(1.0, [0], [1.0])
    assert master.solve(0.0).status in {"optimal", "time_limit"}
    assert master.solve(10.0).status == "optimal"


# -- the one loop: IncrementalMaster.of, rows (cuts), generate, RebuiltMaster, exact_rounds ------

def _small_model() -> LinearModel:
    """max TP: TP = x + y, x + 2y <= 4, 3x + y <= 6 (optimum 14/5 at (8/5, 6/5))."""
    model = LinearModel()
    tp = model.variable("TP", upper=F(100))
    x = model.variable("x", upper=F(100))
    y = model.variable("y", upper=F(100))
    model.objective = tp
    model.add({tp: F(1), x: F(-1), y: F(-1)}, "==", F(0), "TP")
    model.add({x: F(1), y: F(2)}, "<=", F(4), "a")
    model.add({x: F(3), y: F(1)}, "<=", F(6), "b")
    return model


def test_master_of_a_model_has_its_optimum_and_duals() -> None:
    """Duals in row order: θ = 1 on TP's row, (2/5, 1/5) on the two ``<=`` rows (by hand:
    ``x: 1 = y_a + 3 y_b``, ``y: 1 = 2 y_a + y_b``)."""
    point = IncrementalMaster.of(_small_model(), {"solver": "simplex"}).solve(None)
    assert point.status == "optimal"
    assert point.value == pytest.approx(2.8)
    np.testing.assert_allclose(point.duals, [1.0, 0.4, 0.2], atol=1e-9)


def test_rebuilt_master_gives_the_same_point_in_row_order() -> None:
    from portsim.planners.lp._incremental import RebuiltMaster

    master = RebuiltMaster(_small_model, "highs-ds")
    point = master.solve(None)
    assert point.value == pytest.approx(2.8)
    np.testing.assert_allclose(point.duals, [1.0, 0.4, 0.2], atol=1e-9)
    assert master.model is not None
    assert master.solution is not None


def test_a_cut_row_and_the_exact_vertex() -> None:
    """The cut ``x <= 1`` moves the optimum to (1, 3/2), TP = 5/2; the basis gives it exactly."""
    from portsim.planners.lp._exact import recover

    model = _small_model()
    master = IncrementalMaster.of(model, {"solver": "simplex"})
    assert master.solve(None).value == pytest.approx(2.8)
    master.add_row([model.index["x"]], [1.0], 1.0)
    point = master.solve(None)
    assert point.value == pytest.approx(2.5)
    assert point.duals[-1] >= 0  # a ``<=`` row: clipped at 0 like the others
    model.add({model.index["x"]: F(1)}, "<=", F(1), "cut")
    exact = recover(model, master.solution())
    assert exact is not None
    assert exact.lower == exact.upper == F(5, 2)



def test_a_row_highs_refuses_is_the_masters_status() -> None:
    """HiGHS refuses a matrix entry of 10^15 or more (its large_matrix_value) and leaves
    the row out: the master's row count then exceeded HiGHS's, and solve() raised
    `ValueError: operands could not be broadcast together` (an allgather with a link
    of c = 5 * 10^15: `internal error in the lp planner`).  The program here without
    that row would be unbounded; its optimum with it is 1 / (5 * 10^15)."""
    master = IncrementalMaster([], [], {"solver": "simplex"})
    master.add_column(1.0, [], [])
    master.add_row([0], [5e15], 1.0)
    point = master.solve(None)
    assert point.status.startswith("HiGHS refused a row")
    assert master.h.getNumRow() == 0
    small = IncrementalMaster([], [], {"solver": "simplex"})
    small.add_column(1.0, [], [])
    small.add_row([0], [5e14], 1.0)
    assert small.solve(None).value == pytest.approx(1 / 5e14)

def test_generate_counts_rounds_and_stops_at_the_cap() -> None:
    from portsim.planners.lp._incremental import generate
    from portsim.planners.lp._solve import Deadline

    master = IncrementalMaster([-np.inf], [1.0], {"solver": "simplex"})
    master.add_column(1.0, [0], [2.0])
    seen: list[float] = []

    def price(point: MasterPoint) -> bool:
        seen.append(point.value)
        return True  # never converges: only the cap stops it

    assert generate(master, price, deadline=Deadline.after(None), phase="test",
                    max_rounds=4) == 4
    assert seen == pytest.approx([0.5] * 4)


def test_generate_deadline_and_failure() -> None:
    from portsim.planners.lp._incremental import MasterFailed, generate
    from portsim.planners.lp._solve import Deadline, TimeLimitReached

    master = IncrementalMaster([-np.inf], [1.0], {"solver": "simplex"})
    master.add_column(1.0, [0], [1.0])
    with pytest.raises(TimeLimitReached, match="the test phase"):
        generate(master, lambda _: False, deadline=Deadline.after(0.0), phase="the test phase")
    # ``x = 2`` and ``x <= 1``: infeasible, a failure and not a time-out.
    bad = IncrementalMaster([2.0, -np.inf], [2.0, 1.0], {"solver": "simplex"})
    bad.add_column(1.0, [0, 1], [1.0, 1.0])
    with pytest.raises(MasterFailed, match="nfeasible"):
        generate(bad, lambda _: False, deadline=Deadline.after(None), phase="test")


def _packing_generation(seed: int, smoothing: object) -> tuple[float, float, int]:
    """A random packing ``max Σ λ`` under ``A λ <= b`` over a pool of 60 columns,
    generated from one column (3 a round, the cheapest at the priced dual that
    improve the master); returns (generated optimum, whole LP's optimum, rounds)."""
    from scipy.optimize import linprog

    from portsim.planners.lp._incremental import Probe, generate
    from portsim.planners.lp._solve import Deadline

    rng = np.random.default_rng(seed)
    m = 8
    b = rng.uniform(0.5, 3.0, m)
    pool = rng.uniform(0.1, 2.0, (60, m)) * (rng.random((60, m)) < 0.5)
    pool[np.arange(60), rng.integers(m, size=60)] += 0.5   # every column loads some row
    master = IncrementalMaster([-np.inf] * m, b, {"solver": "simplex", "presolve": "off"})
    master.add_column(1.0, range(m), pool[0])
    added = {0}

    def probe(point: MasterPoint, duals: np.ndarray) -> Probe:
        prices = pool @ duals
        least = float(prices.min())
        bound = float(b @ duals) / least if least > 0 else math.inf
        entered = False
        for c in np.argsort(prices, kind="stable")[:3].tolist():
            if c not in added and float(pool[c] @ point.duals) < 1 - 1e-9:
                added.add(c)
                master.add_column(1.0, range(m), pool[c])
                entered = True
        # No subgradient where no price is positive (the bound is infinite there), as the
        # reduce's pricer does.
        subgradient = b - bound * pool[int(prices.argmin())] if least > 0 else None
        return Probe(bound, entered, subgradient)

    def plain(point: MasterPoint) -> bool:
        return probe(point, point.duals).entered

    if smoothing is None:
        rounds = generate(master, plain, deadline=Deadline.after(None), phase="test")
    else:
        rounds = generate(master, probe, deadline=Deadline.after(None), phase="test",
                          smoothing=smoothing)  # type: ignore[arg-type]
    whole = linprog(-np.ones(60), A_ub=pool.T, b_ub=b, method="highs")
    return master.solve(None).value, -float(whole.fun), rounds


@pytest.mark.parametrize("seed", range(8))
def test_smoothed_generation_reaches_the_whole_programs_optimum(seed: int) -> None:
    """Wentges smoothing (fixed and self-adjusting weight) changes the columns
    found, not the optimum: it equals the whole program's (scipy's HiGHS over
    every column) and the unsmoothed generation's."""
    from portsim.planners.lp._incremental import Smoothing

    plain, whole, _ = _packing_generation(seed, None)
    assert plain == pytest.approx(whole, rel=1e-9)
    for smoothing in (Smoothing(0.8), Smoothing(0.5, adaptive=True), Smoothing(0.0)):
        value, _, _ = _packing_generation(seed, smoothing)
        assert value == pytest.approx(whole, rel=1e-9)


def test_smoothing_weight_must_be_below_one() -> None:
    from portsim.planners.lp._incremental import Smoothing

    with pytest.raises(ValueError, match="alpha must be in"):
        Smoothing(1.0)
    with pytest.raises(ValueError, match="alpha must be in"):
        Smoothing(-0.1)


def test_exact_rounds_check_the_deadline() -> None:
    from portsim.planners.lp._incremental import EXACT_ROUNDS, exact_rounds
    from portsim.planners.lp._solve import Deadline, TimeLimitReached

    assert list(exact_rounds(deadline=Deadline.after(None), phase="x")) == list(
        range(1, EXACT_ROUNDS + 1))
    with pytest.raises(TimeLimitReached, match="the exact phase"):
        next(exact_rounds(deadline=Deadline.after(0.0), phase="the exact phase"))
