"""The block LU of the exact basis solve, against dense solves."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from portsim.planners.lp._block_lu import BlockLU


def _random_sparse(seed: int, n: int, density: float, blocks: bool) -> np.ndarray:
    """A random sparse matrix with a well-conditioned diagonal, its rows and
    columns shuffled; ``blocks``: lower block triangular before the shuffle
    (diagonal blocks of random sizes), as bases of flow programs nearly are."""
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, n)) < density, rng.integers(-9, 10, (n, n)), 0).astype(float)
    if blocks:
        cuts = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, rng.integers(0, n)),
                                  replace=False)) if n > 1 else np.array([], dtype=int)
        start = np.concatenate([[0], cuts])
        block_of = np.searchsorted(start, np.arange(n), side="right") - 1
        dense[block_of[:, None] < block_of[None, :]] = 0
    dense += np.diag(rng.integers(20, 40, n) * rng.choice([-1, 1], n))
    rows, cols = rng.permutation(n), rng.permutation(n)
    return dense[rows][:, cols]


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.0, 0.3),
       blocks=st.booleans())
def test_solves_equal_dense_solves(seed: int, n: int, density: float, blocks: bool) -> None:
    dense = _random_sparse(seed, n, density, blocks)
    lu = BlockLU(sp.csc_matrix(dense))
    rhs = np.random.default_rng(seed + 1).standard_normal(n)
    assert np.allclose(lu.solve(rhs), np.linalg.solve(dense, rhs), rtol=1e-9, atol=1e-9)
    assert np.allclose(lu.solve(rhs, trans="T"), np.linalg.solve(dense.T, rhs),
                       rtol=1e-9, atol=1e-9)


def test_a_triangular_matrix_is_all_single_blocks() -> None:
    """A lower triangular matrix, rows and columns shuffled (every block of
    one column): ``dense @ (1, 2, 3) = (2, 3, 13)``, so the shuffled system's
    answer is ``(x1, x2, x0) = (2, 3, 1)``, and the transposed one's by hand
    too: ``dense.T @ (1, 1, 1) = (3, 3, 3)``."""
    dense = np.array([[2.0, 0, 0], [1, 1, 0], [0, 2, 3]])
    lu = BlockLU(sp.csc_matrix(dense[[2, 0, 1]][:, [1, 2, 0]]))
    assert lu.solve(np.array([13.0, 2, 3])).tolist() == [2.0, 3.0, 1.0]
    assert lu.solve(np.array([3.0, 3, 3]), trans="T").tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("dense", [
    np.array([[1.0, 1], [0, 0]]),            # a zero row: no perfect matching
    np.array([[1.0, 2], [2, 4]]),            # structurally full, numerically singular
    np.array([[1.0, 0, 0], [0, 1, 1], [0, 1, 1]]),  # a singular diagonal block
])
def test_singular_matrices_raise_as_splu_does(dense: np.ndarray) -> None:
    with pytest.raises(RuntimeError):
        BlockLU(sp.csc_matrix(dense))
