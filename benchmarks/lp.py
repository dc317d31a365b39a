"""Steady-state LP scale: build, solve and exact-recovery time, peak memory.

Workloads (issue 3):

- scatter on random platforms of n = 20, 50, 100, 200 nodes, 3 out-links per
  node, every other node a target (SSSP(G), section 3.1 of RR-4872);
- reduce with N = n = 10, 15, 20, 30 (every node a participant, SSR(G),
  section 4.2).

Each phase is timed separately; each workload runs in a fresh process (so
``maxrss``, the process's maximum resident set size, is that workload's peak:
HiGHS allocates outside Python) and the best of ``--repeat`` runs is kept.

Targets (printed next to the figures): reduce N = 60 under 10 s, N = 100 under
60 s (``--reduce 60 100``), judged on the workload's own CPU time (the
platform, the generation and the exact certificate: what a quiet machine's
wall time would be).  ``cpu`` is the child process's CPU time, about 1 s of it
the interpreter's start and imports (the machine is shared: wall times move
with its load).  Measured (CPU seconds of ``reduction_trees``, seeds N and
N + 1, before -> after the float32 pricing, the self-adjusting smoothing and
the exact near-tie program): N = 40 1.36 / 1.13 -> 1.35 / 1.04, N = 60
12.0 / 10.9 -> 8.3 / 6.2, N = 100 82.4 / 81.0 -> 48.9 / 46.9; bounds
identical.

Run:  python benchmarks/lp.py [--scatter 20 50 100 200] [--reduce 10 15 20 30]
                              [--repeat 3] [--whole] [--plan]

``--whole`` also times the whole SSR(G) program (the reference formulation,
``build_reduce_model``); ``--plan`` also times the complete ``lp`` planner
(trees, exact bound and the periodic schedule).

How (measured on a shared 2-core machine, so timings are noisy):

- scatter: the per-target commodities of SSSP(G) aggregate into ONE flow out
  of the source (only their sum enters the port rows; any aggregate flow
  decomposes back into source-to-target paths), so n = 200 has 600 variables
  instead of 60,000: 0.3 s in all, exact by rounding (was 33 s per-target).
- reduce: the profile of the whole SSR(G) program (N^3 n / 6 task
  variables: 176,608 columns and 14,010 rows at N = 30) put 85-90 % of the
  time in HiGHS's interior point (15-21 s at N = 30; presolve, tolerances,
  the dual simplex did not help), 8-10 % in the exact basis solve and 5 % in
  building Fractions.  The planner now solves the same program as a packing
  of reduction trees by column generation (planners.lp._reduce_columns.
  reduction_trees): the master has one row per port and per CPU (2n + n
  rows), the pricing step is a dynamic program over intervals and shortest
  paths (the least-price tree, O(N^3 n + N^2 n^2) in numpy; from N = 50 in
  float32 first, N = 100: 132 -> 70 ms a call), with Wentges dual smoothing
  (alpha = 0.8: 150 rounds instead of 350 at N = 30; self-adjusting from
  0.8, Pessoa et al. 2018: 4-14 % fewer rounds at N = 60, 100).  The
  master is then solved exactly over the trees in use (a basis of at most
  3n columns) and priced exactly in integers (each minimum over its float
  near-ties only: N = 100 4.2 -> 0.9 s): the exact least tree price
  turns the master's dual into an exactly feasible dual of the whole SSR(G)
  program (tested against the full model), so the bound is exact and
  certified.  The optimum is identical to the whole program's (tested on
  random platforms, with routers, free CPUs and participant subsets).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np

# Measure this checkout, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from portsim.planners.lp._exact import ExactSolution, recover
from portsim.planners.lp._extract import repair_ssr as reduce_repair
from portsim.planners.lp._flows import Commodity, build_flow_model
from portsim.planners.lp._reduce_columns import reduction_trees
from portsim.planners.lp._solve import LinearModel, solve_float
from portsim.planners.lp._ssr import build_reduce_model
from portsim.scenarios.generators import random_platform
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind

Built = tuple[LinearModel, Callable[[np.ndarray], list[Fraction] | None] | None]


def _answer(exact: ExactSolution | None, status: str) -> str:
    if exact is None:
        return status
    if exact.exact:
        return f"TP={format_rational(exact.upper)} ({exact.method})"
    return (f"TP in [{float(exact.lower):.9g}, {float(exact.upper):.9g}] "
            f"width {float(exact.upper - exact.lower):.2g} ({exact.method})")


def measure_model(build: Callable[[], Built], method: str) -> dict[str, object]:
    """Build, solve (HiGHS) and recover one whole model exactly."""
    t0 = time.perf_counter()
    model, repair = build()
    t1 = time.perf_counter()
    sol = solve_float(model, method=method)
    t2 = time.perf_counter()
    exact = recover(model, sol, repair=repair) if sol.status == "optimal" else None
    t3 = time.perf_counter()
    return {"size": f"vars={model.n_variables} rows={len(model.rows)}",
            "build": t1 - t0, "solve": t2 - t1, "exact": t3 - t2, "total": t3 - t0,
            "method": sol.method, "answer": _answer(exact, sol.status),
            "exact_bound": bool(exact is not None and exact.exact)}


def scatter(n: int) -> Built:
    platform = random_platform(n, 3, c=(1, 10), seed=n)
    targets = [f"P{i}" for i in range(1, n, 2)]
    op = Operation(OperationKind.SCATTER, source="P0", targets=tuple(targets)).resolve(platform)
    commodities = [Commodity("P0", op.targets, tuple(Item.message(k) for k in op.targets))]
    flow_model = build_flow_model(platform, commodities, op.size)
    return flow_model.model, flow_model.repair


def _reduce_case(n: int) -> tuple[object, Operation]:
    platform = random_platform(n, 3, c=(1, 10), compute=(1, 5), seed=n)
    return platform, Operation(OperationKind.REDUCE, target="P0").resolve(platform)


def reduce_whole(n: int) -> Built:
    platform, op = _reduce_case(n)
    model = build_reduce_model(platform, op)  # type: ignore[arg-type]
    return model, lambda x: reduce_repair(platform, op, model, x)  # type: ignore[arg-type]


def measure_reduce(n: int) -> dict[str, object]:
    """The planner's path: reduction trees by column generation, exact master and pricing."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    platform, op = _reduce_case(n)
    stats: dict[str, float] = {}
    found = reduction_trees(platform, op, stats=stats)  # type: ignore[arg-type]
    total = time.perf_counter() - t0
    exact = None if isinstance(found, str) else found[0]
    return {"size": f"rounds={int(stats.get('rounds', 0))} trees={int(stats.get('columns', 0))}",
            "build": total - stats.get("solve", 0) - stats.get("exact", 0),
            "solve": stats.get("solve", 0.0), "exact": stats.get("exact", 0.0), "total": total,
            "work_cpu": time.process_time() - c0, "method": "column generation",
            "answer": _answer(exact, found if isinstance(found, str) else "ok"),
            "exact_bound": bool(exact is not None and exact.exact)}


def measure_plan(n: int) -> dict[str, object]:
    """The complete ``lp`` planner on the reduce workload (with the periodic schedule)."""
    import warnings

    from portsim.planners.lp import steady_state

    platform, op = _reduce_case(n)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the period cap's fixed-period warning
        result = steady_state(platform, op)  # type: ignore[arg-type]
    total = time.perf_counter() - t0
    return {"size": f"trees={len(result.trees)} period={result.period}", "build": 0.0,
            "solve": 0.0, "exact": 0.0, "total": total, "method": "planner",
            "answer": f"{result.status} TP={format_rational(result.throughput_bound)}"
            if result.throughput_bound is not None else result.status,
            "exact_bound": result.status == "ok" and not result.message}


WORKLOADS: dict[str, Callable[[int, str], dict[str, object]]] = {
    "scatter": lambda n, method: measure_model(lambda: scatter(n), method),
    "reduce": lambda n, method: measure_reduce(n),
    "reduce-whole": lambda n, method: measure_model(lambda: reduce_whole(n), method),
    "reduce-plan": lambda n, method: measure_plan(n),
}


TARGETS: dict[tuple[str, int], float] = {("reduce", 60): 10.0, ("reduce", 100): 60.0}
"""Seconds the issue "One column-generation core ... the next scale" asks for
(whole reduce column generation and exact certificate, same platform family)."""


def _target(kind: str, n: int, row: dict[str, object]) -> str:
    """``target<10s met (cpu 6.1s)`` (or ``MISSED``) for a workload with a target, else ``""``.

    Judged on the workload's own CPU time (``work_cpu``: the platform, the
    generation and the certificate, not the interpreter's start): on the
    shared machine the wall time moves with the others' load, the CPU time
    is what a quiet machine's wall time would be (one thread).
    """
    limit = TARGETS.get((kind, n))
    if limit is None:
        return ""
    spent = float(row.get("work_cpu", row["total"]))  # type: ignore[arg-type]
    return f" target<{limit:g}s {'met' if spent < limit else 'MISSED'} (cpu {spent:.1f}s)"


def run_one(kind: str, n: int, method: str, trace_memory: bool) -> dict[str, object]:
    """One workload in this process; ``maxrss`` is this process's peak."""
    if trace_memory:
        tracemalloc.start()
    row = WORKLOADS[kind](n, method)
    if trace_memory:
        row["py_peak"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    row["maxrss"] = usage.ru_maxrss / 1024
    row["cpu"] = usage.ru_utime + usage.ru_stime
    return row


def run_isolated(kind: str, n: int, method: str, trace_memory: bool) -> dict[str, object]:
    """One workload in a fresh interpreter (so its peak memory is its own)."""
    cmd = [sys.executable, __file__, "--one", kind, str(n), "--method", method]
    if trace_memory:
        cmd.append("--trace-memory")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scatter", type=int, nargs="*", default=[20, 50, 100, 200])
    parser.add_argument("--reduce", type=int, nargs="*", default=[10, 15, 20, 30])
    parser.add_argument("--whole", action="store_true",
                        help="also time the whole SSR(G) program (reference formulation)")
    parser.add_argument("--plan", action="store_true",
                        help="also time the complete lp planner on the reduce workloads")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--method", default="auto",
                        choices=["auto", "highs", "highs-ds", "highs-ipm"])
    parser.add_argument("--trace-memory", action="store_true",
                        help="also report Python's peak (tracemalloc; slows the run)")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        row = run_one(args.one[0], int(args.one[1]), args.method, args.trace_memory)
        print(json.dumps(row))
        return
    jobs = [("scatter", n) for n in args.scatter] + [("reduce", n) for n in args.reduce]
    if args.whole:
        jobs += [("reduce-whole", n) for n in args.reduce]
    if args.plan:
        jobs += [("reduce-plan", n) for n in args.reduce]
    for kind, n in jobs:
        runs = [run_isolated(kind, n, args.method, args.trace_memory)
                for _ in range(max(1, args.repeat))]
        row = min(runs, key=lambda r: float(r["total"]))  # type: ignore[arg-type]
        load = os.getloadavg()[0]
        peak = f" py-peak={float(row['py_peak']):6.1f}MiB" if "py_peak" in row else ""
        print(f"{kind + ' ' + str(n):<17} {row['size']:<26} "
              f"build={float(row['build']):6.2f}s solve={float(row['solve']):6.2f}s "  # type: ignore[arg-type]
              f"exact={float(row['exact']):6.2f}s total={float(row['total']):6.2f}s "  # type: ignore[arg-type]
              f"cpu={float(row['cpu']):6.2f}s "  # type: ignore[arg-type]
              f"maxrss={float(row['maxrss']):6.1f}MiB{peak} load={load:4.2f} "  # type: ignore[arg-type]
              f"[{row['method']}]{_target(kind, n, row)} "
              f"{row['answer']}", flush=True)


if __name__ == "__main__":
    main()
