"""The exact basis solve's float LU: ``BlockLU`` against SciPy's ``splu``.

Workload: the optimal bases of 500 columns or more that
:func:`portsim.planners.lp._exact.basis_recover` factorises while ``lp`` plans
an allreduce on one ``dgx_a100`` server (the relaxation's basis, 15,946
columns) and on ``random_platform(N, 3, c=(1, 10))`` for each ``--allreduce``
N (its relaxation runs up to N = 8 without a time limit).  Each basis is
captured once, then factorised by both in the same process (best of
``--repeat``), and ``BlockLU``'s solves checked against the matrix (largest
residual of ``mat x = r`` and ``mat^T x = r``, ``r`` standard normal).

Run:  python benchmarks/basis_lu.py [--allreduce 7 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import portsim.planners.lp._exact as exact
from portsim.planners.lp import steady_state
from portsim.planners.lp._block_lu import BlockLU
from portsim.scenarios.generators import dgx_a100_platform, random_platform
from portsim.simulator import Operation, OperationKind, Platform


def captured_bases(platform: Platform, operation: Operation) -> list[sp.csc_matrix]:
    """The bases ``basis_recover`` factorises while ``lp`` plans ``operation``."""
    bases: list[sp.csc_matrix] = []

    def capture(mat: sp.csc_matrix) -> BlockLU:
        bases.append(mat.copy())
        return BlockLU(mat)

    exact.BlockLU = capture  # type: ignore[misc,assignment]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            steady_state(platform, operation.resolve(platform))
    finally:
        exact.BlockLU = BlockLU  # type: ignore[misc]
    return bases


def best_of(repeat: int, factor: object, mat: sp.csc_matrix) -> tuple[float, object]:
    best, lu = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        lu = factor(mat)  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best, lu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allreduce", type=int, nargs="*", default=[7, 8])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [("allreduce dgx_a100(1)", dgx_a100_platform(1), Operation(OperationKind.ALLREDUCE))]
    for n in args.allreduce:
        cases.append((f"allreduce random N={n}", random_platform(n, 3, c=(1, 10), seed=0),
                      Operation(OperationKind.ALLREDUCE)))
    print(f"{'case':24} {'columns':>8} {'entries':>8} {'splu s':>8} {'block s':>8} "
          f"{'ratio':>7} {'residual':>9}")
    rng = np.random.default_rng(0)
    for name, platform, operation in cases:
        for mat in captured_bases(platform, operation):
            if mat.shape[0] < 500:
                continue
            slow, reference = best_of(args.repeat, spla.splu, mat)
            fast, lu = best_of(args.repeat, BlockLU, mat)
            rhs = rng.standard_normal(mat.shape[0])
            residual = max(float(np.abs(mat @ lu.solve(rhs) - rhs).max()),  # type: ignore[attr-defined]
                           float(np.abs(mat.T @ lu.solve(rhs, trans="T") - rhs).max()))  # type: ignore[attr-defined]
            assert reference is not None
            print(f"{name:24} {mat.shape[0]:>8} {mat.nnz:>8} {slow:>8.3f} {fast:>8.3f} "
                  f"{slow / fast:>7.1f} {residual:>9.1e}", flush=True)


if __name__ == "__main__":
    main()
