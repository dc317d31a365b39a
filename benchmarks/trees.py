"""Reduction-tree planners: speed and scale.

Canon–Antoniu (``planners/trees.py``):

- Algorithm 1 (``greedy_tree``) for n = 10^6 elements, target under 10 s,
  with Algorithms 2 and 3 and the Fibonacci and binomial strategies beside;
- materialising a tree as a timed one-shot schedule (section 4.1 labelling,
  ``PortClock`` timing) for n = 10^4 and replaying it strictly in the engine;
- the ``greedy`` planner end to end on a complete platform;
- Figure 2 of section 7.3: the worst ratio of the binomial (resp. Fibonacci)
  strategy to the optimum when d = c (resp. min(d, c) = 0).

Liu–Kuo–Wang (SNF, DP, branch and bound): see ``benchmarks/snf.py``.

Run:  python benchmarks/trees.py [--n 1000000] [--materialise 10000] [--complete 150]
      [--figure2 2000]
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
from fractions import Fraction
from pathlib import Path

from portsim.planners.trees import (
    canon_antoniu_bounds,
    greedy_reduction,
    greedy_tree,
    interval_labels,
    strategy_tree,
    tree_length,
    tree_schedule,
)
from portsim.scenarios.generators import complete_platform
from portsim.simulator.engine import replay
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform

TARGET_SECONDS = 10.0


def bench_construction(n: int) -> None:
    """Algorithms 1-3 and the strategies on ``n`` elements."""
    print(f"tree construction, n = {n:,}")
    cases = [
        ("Algorithm 1, d = c = 1", lambda: greedy_tree(n, 1, 1)),
        ("Algorithm 1, d = 3, c = 2", lambda: greedy_tree(n, 3, 2)),
        ("Algorithm 1, d = 2/3, c = 5/7", lambda: greedy_tree(n, Fraction(2, 3), Fraction(5, 7))),
        ("Algorithm 2, K = 1000", lambda: greedy_tree(n, 3, 2, concurrent_transfers=1000)),
        ("Algorithm 3, K = 1000", lambda: greedy_tree(n, 3, 2, reducers=1000)),
        ("Fibonacci strategy", lambda: strategy_tree("fibonacci", n)),
        ("binomial strategy", lambda: strategy_tree("binomial", n)),
    ]
    for label, build in cases:
        start = time.perf_counter()
        tree = build()
        seconds = time.perf_counter() - start
        verdict = "ok" if seconds < TARGET_SECONDS else "TOO SLOW"
        print(f"  {label:32s} {seconds:6.2f} s  length {tree.length}  "
              f"(max in-degree {tree.max_in_degree()}, depth {tree.depth()})  {verdict}")
    bounds = canon_antoniu_bounds(n, 3, 2)
    print(f"  bounds for d = 3, c = 2: Lemma 5 >= {bounds.lemma_5_lower}, "
          f"Proposition 6 <= {bounds.proposition_6_upper}")


def bench_materialise(n: int) -> None:
    """A greedy tree of ``n`` machines as a schedule, then a strict replay."""
    d, c = Fraction(3), Fraction(2)
    tree = greedy_tree(n, d, c)
    position, _ = interval_labels(tree, 0)
    ids = [f"P{i}" for i in range(n)]
    links = [(ids[position[i]], ids[position[tree.child[i]]], d) for i in range(1, n)]
    platform = Platform.build(dict.fromkeys(ids, c), links, "unidirectional")
    operation = Operation(OperationKind.REDUCE, target="P0")
    start = time.perf_counter()
    schedule, makespan = tree_schedule(platform, operation, tree)
    built = time.perf_counter() - start
    start = time.perf_counter()
    report = replay(schedule)
    replayed = time.perf_counter() - start
    print(f"materialising a greedy tree, n = {n:,} (d = 3, c = 2; platform = the tree's links)")
    print(f"  schedule: {len(schedule.events):,} events in {built:.2f} s; makespan {makespan} "
          f"(Algorithm 1: {tree.length})")
    print(f"  strict replay: {replayed:.2f} s, feasible {report.feasible}, "
          f"makespan {report.makespan}")


def bench_figure_2(largest: int) -> None:
    """Section 7.3, Figure 2: strategy length over optimal length, 2 <= n <= ``largest``."""
    start = time.perf_counter()
    worst_binomial = worst_fibonacci = (Fraction(1), -1)  # (ratio, -n): the first n wins ties
    for n in range(2, largest + 1):
        # Binomial strategy when d = c; Fibonacci strategy when min(d, c) = 0.
        ratio = tree_length(strategy_tree("binomial", n), 1, 1) / greedy_tree(n, 1, 1).length
        worst_binomial = max(worst_binomial, (ratio, -n))
        ratio = tree_length(strategy_tree("fibonacci", n), 1, 0) / greedy_tree(n, 1, 0).length
        worst_fibonacci = max(worst_fibonacci, (ratio, -n))
    seconds = time.perf_counter() - start
    print(f"Figure 2, 2 <= n <= {largest:,} ({seconds:.1f} s): worst binomial/optimal at d = c: "
          f"{worst_binomial[0]} = {float(worst_binomial[0]):.4f} (n = {-worst_binomial[1]}); "
          f"worst Fibonacci/optimal at c = 0: {worst_fibonacci[0]} = "
          f"{float(worst_fibonacci[0]):.4f} (n = {-worst_fibonacci[1]})")


def bench_planner(n: int) -> None:
    """The ``greedy`` planner end to end on a complete unidirectional platform."""
    platform = complete_platform(n, c=3, compute=2, port_model="unidirectional")
    start = time.perf_counter()
    result = greedy_reduction(platform, Operation(OperationKind.REDUCE, target="P0"))
    seconds = time.perf_counter() - start
    assert result.schedule is not None
    report = replay(result.schedule)
    print(f"greedy planner on a complete platform of {n} nodes ({n * (n - 1):,} links)")
    print(f"  plan: {seconds:.2f} s, makespan {result.makespan}, strict replay feasible "
          f"{report.feasible}, engine makespan {report.makespan}")


# --- Liu–Kuo–Wang: DP T(150, 150), branch and bound on 21-processor clusters ---
def bench_liu_kuo_wang() -> None:
    """Run ``benchmarks/snf.py`` with its defaults (DP T(150, 150), branch and bound)."""
    script = Path(__file__).with_name("snf.py")
    saved = sys.argv
    sys.argv = [str(script)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--materialise", type=int, default=10_000)
    parser.add_argument("--complete", type=int, default=150)
    parser.add_argument("--figure2", type=int, default=2000)
    parser.add_argument("--skip-snf", action="store_true",
                        help="skip the Liu-Kuo-Wang benchmarks (benchmarks/snf.py)")
    args = parser.parse_args()
    bench_construction(args.n)
    bench_materialise(args.materialise)
    bench_planner(args.complete)
    bench_figure_2(args.figure2)
    if not args.skip_snf:
        print()
        bench_liu_kuo_wang()


if __name__ == "__main__":
    main()
