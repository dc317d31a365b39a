"""Steady-state LP scale: build, solve and exact-recovery time, peak memory.

Workloads (issue 3):

- scatter on random platforms of n = 20, 50, 100, 200 nodes, 3 out-links per
  node, every other node a target (SSSP(G), section 3.1 of RR-4872);
- reduce with N = n = 10, 15, 20, 30 (every node a participant, SSR(G),
  section 4.2).

Each phase is timed separately; peak memory is Python's (tracemalloc) plus
the process's maximum resident set size (HiGHS allocates outside Python).

Run:  python benchmarks/lp.py [--scatter 20 50 100 200] [--reduce 10 15 20 30]

How (measured on a shared 2-core machine, so timings are noisy):

- scatter: the per-target commodities of SSSP(G) aggregate into ONE flow out
  of the source (only their sum enters the port rows; any aggregate flow
  decomposes back into source-to-target paths), so n = 200 has 600 variables
  instead of 60,000: 0.3 s in all, exact by rounding (was 33 s per-target).
- reduce: SSR(G) as written (N^3 n / 6 task variables); HiGHS through
  highspy (interior point with crossover above 2,000 variables, dual simplex
  below; presolve on), which returns the optimal basis.  Exact recovery is a
  sparse exact solve of that basis (planners.lp._exact.basis_recover:
  iterative refinement with exact integer residuals over scipy's splu, then
  rational reconstruction; primal and dual verified in integers), so every
  size is now exact.  Before / after (same machine, total = build + solve +
  exact, seconds; the answers at N >= 15 were certified intervals before):

      N = 10:  0.7-2   -> 0.12-0.7   exact (basis) 372541/2277090
      N = 15:  13-21   -> 0.9-2.6    exact (was an interval)
      N = 20:  9-12    -> 2.1-2.8    exact (was an interval)
      N = 30:  91      -> 19-21      exact (was an interval)

  (scatter n = 200: 0.05 s, exact.)

  The issue's targets (N = 20 under 2 s, N = 30 under 15 s) are met for the
  exact recovery (0.2 s and 1.7 s) but not for the solve: HiGHS's interior
  point takes 1.5-2.3 s at N = 20 and 15-17 s at N = 30 (69 IPX iterations;
  crossover is negligible; a looser IPM tolerance, presolve off did not help;
  the dual simplex takes 36 s at N = 20).  A smaller formulation is the
  remaining lever.  Timings are taken without tracemalloc (it slowed the
  Fraction-heavy phases two to three times); --trace-memory adds it.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from planners.lp._exact import recover
from planners.lp._flows import Commodity, build_flow_model
from planners.lp._reduce import _repair as reduce_repair
from planners.lp._reduce import build_reduce_model
from planners.lp._solve import LinearModel, solve_float
from scenarios.generators import random_platform
from simulator.items import Item
from simulator.numbers import format_rational
from simulator.operations import Operation, OperationKind

Built = tuple[LinearModel, Callable[[np.ndarray], list[Fraction] | None] | None]


def measure(label: str, build: Callable[[], Built], method: str, *,
            trace_memory: bool = False) -> None:
    """Time the three phases of one model and print one line.

    Python's peak (tracemalloc) only with ``trace_memory``: tracing slows the
    Fraction-heavy phases two to three times, so timings are taken without it.
    """
    if trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    model, repair = build()
    t1 = time.perf_counter()
    sol = solve_float(model, method=method)
    t2 = time.perf_counter()
    exact = recover(model, sol, repair=repair) if sol.status == "optimal" else None
    t3 = time.perf_counter()
    peak = 0
    if trace_memory:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if exact is None:
        answer = sol.status
    elif exact.exact:
        answer = f"TP={format_rational(exact.upper)} ({exact.method})"
    else:
        answer = (f"TP in [{float(exact.lower):.9g}, {float(exact.upper):.9g}] "
                  f"width {float(exact.upper - exact.lower):.2g} ({exact.method})")
    print(f"{label:<18} vars={model.n_variables:>7} rows={len(model.rows):>6} "
          f"build={t1 - t0:6.2f}s solve={t2 - t1:6.2f}s ({sol.method}) "
          f"exact={t3 - t2:6.2f}s total={t3 - t0:6.2f}s "
          f"py-peak={peak / 2**20:7.1f}MiB maxrss={rss:7.1f}MiB  {answer}")


def scatter(n: int) -> Built:
    platform = random_platform(n, 3, c=(1, 10), seed=n)
    targets = [f"P{i}" for i in range(1, n, 2)]
    op = Operation(OperationKind.SCATTER, source="P0", targets=tuple(targets)).resolve(platform)
    commodities = [Commodity("P0", op.targets, tuple(Item.message(k) for k in op.targets))]
    flow_model = build_flow_model(platform, commodities, op.size)
    return flow_model.model, flow_model.repair


def reduce(n: int) -> Built:
    platform = random_platform(n, 3, c=(1, 10), compute=(1, 5), seed=n)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    model = build_reduce_model(platform, op)
    return model, lambda x: reduce_repair(platform, op, model, x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scatter", type=int, nargs="*", default=[20, 50, 100, 200])
    parser.add_argument("--reduce", type=int, nargs="*", default=[10, 15, 20, 30])
    parser.add_argument("--method", default="auto",
                        choices=["auto", "highs", "highs-ds", "highs-ipm"])
    parser.add_argument("--trace-memory", action="store_true",
                        help="also report Python's peak (tracemalloc; slows the run)")
    args = parser.parse_args()
    for n in args.scatter:
        measure(f"scatter n={n}", lambda n=n: scatter(n), args.method,
                trace_memory=args.trace_memory)
    for n in args.reduce:
        measure(f"reduce N=n={n}", lambda n=n: reduce(n), args.method,
                trace_memory=args.trace_memory)


if __name__ == "__main__":
    main()
