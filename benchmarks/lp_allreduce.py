"""Steady-state allreduce (``lp``): time of each step, and how often each step decides.

Workload: random bidirectional platforms ``random_platform(N, min(3, N - 1),
c=(1, 5), compute=(0, 3), seed)``, every node a participant, for each N and
seed given.  For each platform:

- ``relaxation``: the per-destination SSR(G) program alone
  (:func:`portsim.planners.lp._allreduce_bound.allreduce_bound`), exact;
- ``planner``: the whole ``lp`` call (relaxation, reduce-then-broadcast,
  and, when that falls short, the structure packing with its exact branch
  and bound; then the periodic schedule, ``max_events`` 3,000);
- ``step``: which step decided the optimum (``rtb``: reduce-then-broadcast
  reached the relaxation; ``packing``: the structure search proved a lower
  optimum; ``interval``: not proven).

Run:  python benchmarks/lp_allreduce.py [--n 4 5 6 7 8] [--seeds 5] [--json]

Each platform runs in this process, one after the other; ``peak RSS`` is the
process's maximum resident set size at the end (HiGHS allocates outside
Python).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from pathlib import Path

# Measure this checkout, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import allreduce_bound
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._exact import ExactSolution
from portsim.scenarios.generators import random_platform
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind


def measure(n: int, seed: int) -> dict[str, object]:
    """One platform: the relaxation alone, then the whole planner."""
    platform = random_platform(n, min(3, n - 1), c=(1, 5), compute=(0, 3), seed=seed)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    t0 = time.perf_counter()
    relaxed = allreduce_bound(platform, op, LpOptions())
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped periods: reported in the notes
        result = steady_state(platform, op, max_events=3_000)
    t2 = time.perf_counter()
    relaxation = relaxed.upper if isinstance(relaxed, ExactSolution) else None
    packing = next((note for note in result.notes if note.startswith("structures")), None)
    if result.status != "ok":
        step = result.status
    elif result.message:
        step = "interval"
    elif packing is not None:
        step = "packing"
    else:
        step = "rtb"
    return {"N": n, "seed": seed, "relaxation": format_rational(relaxation)
            if relaxation is not None else "-",
            "optimum": format_rational(result.throughput_bound)
            if result.throughput_bound is not None else "-",
            "step": step, "relaxation_s": round(t1 - t0, 3), "planner_s": round(t2 - t1, 3),
            "packing": packing or ""}


TARGETS = {12: 10.0, 16: 30.0, 24: 120.0}
"""Seconds for the whole ``lp`` allreduce (bound, certificate and schedule, or a
certified interval) that the issue "One column-generation core ... the next
scale" asks for, on random strongly connected platforms and complete ones."""


def target_text(n: int, seconds: float) -> str:
    """``<10s met`` or ``<10s MISSED`` for a size with a target, else ``-``."""
    limit = TARGETS.get(n)
    if limit is None:
        return "-"
    return f"<{limit:g}s {'met' if seconds < limit else 'MISSED'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[4, 5, 6, 7, 8])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    print(f"{'N':>3} {'seed':>4} {'step':>8} {'relaxation':>16} {'optimum':>18} "
          f"{'relax s':>8} {'planner s':>9} {'target':>12}")
    for n in args.n:
        for seed in range(args.seeds):
            row = measure(n, seed)
            if args.json:
                print(json.dumps(row), flush=True)
                continue
            print(f"{row['N']:>3} {row['seed']:>4} {row['step']:>8} {row['relaxation']:>16} "
                  f"{row['optimum']:>18} {row['relaxation_s']:>8} {row['planner_s']:>9} "
                  f"{target_text(n, float(row['planner_s'])):>12}",  # type: ignore[arg-type]
                  flush=True)
            if row["packing"]:
                print(f"         {row['packing']}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
