"""A sparse LU by blocks: the block triangular form, then one LU per block.

:func:`~portsim.planners.lp._exact.basis_recover` solves an optimal basis of
HiGHS's answer exactly, by iterative refinement over a float factorisation.
SciPy's ``splu`` (SuperLU) factorises the whole basis at once, and on the
bases of the allreduce relaxation its column orderings fill badly: one
``dgx_a100_platform(1)`` basis of 15,946 columns and 53,646 entries took 5 to
7 s and 5.5 to 8 million entries of fill under every ``permc_spec``.  That
basis is nearly triangular, as the bases of flow programs are: a perfect
matching on its diagonal and its strongly connected components give 8,819
diagonal blocks, 8,818 of them small and one of 6,584 columns, which SuperLU
factorises in 0.02 s with 147,000 entries.  SciPy has no such solver (KLU's
block triangular form is in SuiteSparse, which SciPy does not ship), so it is
built here from SciPy's own parts: ``maximum_bipartite_matching`` and
``connected_components`` (:mod:`scipy.sparse.csgraph`), and ``splu`` for the
blocks of more than one column.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

__all__ = ["BlockLU"]


@dataclass(frozen=True)
class _Level:
    """The diagonal blocks of one level (no block of a level needs another of it).

    ``rows``: the level's positions (rows and, the matrix being permuted to a
    nonzero diagonal, columns); ``lower``/``upper``: the permuted matrix's
    rows, and its transpose's, at those positions; ``single``/``pivot``: the
    positions of the blocks of one column and their diagonal entries
    (``single_at``: where they are in ``rows``); ``blocks``: each larger
    block's positions, where they are in ``rows``, and its LU.
    """

    rows: np.ndarray
    lower: sp.csr_matrix
    upper: sp.csr_matrix
    single: np.ndarray
    single_at: np.ndarray
    pivot: np.ndarray
    blocks: tuple[tuple[np.ndarray, np.ndarray, spla.SuperLU], ...]


class BlockLU:
    """An LU of the square sparse matrix ``mat`` by diagonal blocks, with
    ``splu``'s ``solve(rhs, trans)`` (``"N"``: ``mat x = rhs``; ``"T"``:
    ``mat^T x = rhs``).

    Raises :class:`RuntimeError`, as ``splu`` does, when ``mat`` is singular
    (structurally, or a diagonal block is).

    Examples
    --------
    >>> m = sp.csc_matrix(np.array([[2.0, 0, 0], [1, 1, 3], [0, 1, 1]]))
    >>> lu = BlockLU(m)
    >>> lu.solve(np.array([2.0, 5, 1])).round(9).tolist()
    [1.0, -0.5, 1.5]
    >>> lu.solve(np.array([3.0, 2, 4]), trans="T").round(9).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, mat: sp.spmatrix) -> None:
        csr = sp.csr_matrix(mat)
        n = csr.shape[0]
        if csr.shape != (n, n):
            raise ValueError("BlockLU factorises square matrices only")
        match = maximum_bipartite_matching(csr, perm_type="column")
        if n and (match < 0).any():
            raise RuntimeError("Factor is exactly singular (no perfect matching)")
        # column k of ``b`` is column match[k] of ``mat``: b's diagonal is nonzero
        b = csr[:, match].tocsr() if n else csr
        count, label = connected_components(b, directed=True, connection="strong")
        depth = _depths(b, count, label)
        lower = b
        upper = b.T.tocsr()
        levels: list[_Level] = []
        by_depth = np.argsort(depth[label], kind="stable")
        bounds = np.searchsorted(depth[label][by_depth], np.arange(depth.max() + 2 if n else 1))
        for start, stop in itertools.pairwise(bounds):
            rows = by_depth[start:stop]
            if not rows.size:
                continue
            sizes = np.bincount(label[rows], minlength=count)
            alone = sizes[label[rows]] == 1
            at = np.arange(rows.size)
            single = rows[alone]
            pivot = np.asarray(b[single, single]).ravel()
            blocks = []
            rest, rest_at = rows[~alone], at[~alone]
            for block in np.unique(label[rest]):
                mine = label[rest] == block
                where = rest[mine]
                blocks.append((where, rest_at[mine], spla.splu(b[where][:, where].tocsc())))
            levels.append(_Level(rows, lower[rows], upper[rows], single, at[alone], pivot,
                                 tuple(blocks)))
        self._match = match
        self._levels = tuple(levels)
        self._n = n

    def solve(self, rhs: np.ndarray, trans: str = "N") -> np.ndarray:
        """``x`` with ``mat x = rhs`` (``trans="N"``) or ``mat^T x = rhs`` (``"T"``)."""
        rhs = np.asarray(rhs, dtype=float)
        x = np.zeros(self._n)
        if trans == "N":
            # b x' = rhs, level by level; then mat's x[match] = x'
            for level in self._levels:
                _solve_level(level, level.lower, rhs[level.rows], x, "N")
            out = np.empty(self._n)
            out[self._match] = x
            return out
        if trans != "T":
            raise ValueError(f"trans must be 'N' or 'T' (got {trans!r})")
        # mat^T y = rhs is b^T y = rhs[match], the levels in reverse
        permuted = rhs[self._match]
        for level in reversed(self._levels):
            _solve_level(level, level.upper, permuted[level.rows], x, "T")
        return x


def _solve_level(level: _Level, rows: sp.csr_matrix, rhs: np.ndarray, x: np.ndarray,
                 trans: str) -> None:
    """Solve one level's blocks into ``x`` (the levels it needs already solved;
    its own positions still 0, so ``rows @ x`` holds only the solved ones)."""
    rest = rhs - rows @ x
    x[level.single] = rest[level.single_at] / level.pivot
    for where, at, lu in level.blocks:
        x[where] = lu.solve(rest[at], trans=trans)


def _depths(b: sp.csr_matrix, count: int, label: np.ndarray) -> np.ndarray:
    """Per strongly connected component of ``b``'s graph, the length of the
    longest chain of components it needs (row ``i`` needs column ``j`` where
    ``b[i, j]`` is nonzero): components of one depth need none of each other."""
    coo = b.tocoo()
    keep = label[coo.row] != label[coo.col]
    needs = sp.csr_matrix((np.ones(int(keep.sum())), (label[coo.row[keep]], label[coo.col[keep]])),
                          shape=(count, count))
    needs.sum_duplicates()
    needed_by = needs.T.tocsr()
    waiting = np.diff(needs.indptr).astype(int)
    depth = np.zeros(count, dtype=int)
    ready = list(np.flatnonzero(waiting == 0))
    while ready:
        k = ready.pop()
        for i in needed_by.indices[needed_by.indptr[k]:needed_by.indptr[k + 1]]:
            depth[i] = max(depth[i], depth[k] + 1)
            waiting[i] -= 1
            if waiting[i] == 0:
                ready.append(i)
    return depth
