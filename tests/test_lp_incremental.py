"""The incremental float master of the lp column generations (issue 15, item 1).

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

from fractions import Fraction as F

import numpy as np
import pytest

from portsim.planners.lp._incremental import IncrementalMaster
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


def test_time_limit_status() -> None:
    master = IncrementalMaster([-np.inf], [1.0], {"solver": "simplex"})
    master.add_column(1.0, [0], [1.0])
    assert master.solve(0.0).status in {"optimal", "time_limit"}
    assert master.solve(10.0).status == "optimal"
