"""Liu–Kuo–Wang exact reductions: the DP of section 6.3 and the search of section 6.2.

1. DP (Tables 2–4): ``T(f, s)`` for ``f, s <= 150`` with ``t_f = 1``,
   ``t_s = 2``; wall time of the monotone DP (target: under 1 s) and the
   pairs of table entries examined, for the last cell and for the whole
   table, by the naive DP (counted exactly by ``naive_pair_count``; run it
   with ``--naive``), the s-monotone DP and the monotone DP.  The paper's
   figures for the last cell: 11250, 117 and 120.
2. Branch and bound (Table 1): random clusters of 21 processors in 3
   classes (each processor draws one of three distinct times, themselves
   drawn from 1..10; the destination is the first processor); wall time of
   the SNF-guided search (target: median under 2 s; the paper: 15 s on a
   Pentium III), nodes examined, the size N and leaves L of the full search
   tree, and the generic branch and bound (given class order, pruned only by
   the completions so far), capped at ``--generic-limit`` nodes at 21
   processors (the paper's took over two hours there) and run to the end
   on smaller clusters.

Run:  PYTHONPATH=. python benchmarks/snf.py [--clusters 20] [--naive]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from fractions import Fraction

from portsim.planners.snf import (
    branch_and_bound,
    generic_branch_and_bound,
    multi_class_table,
    naive_pair_count,
    search_tree_size,
    two_class_table,
)


def bench_dp(size: int, naive: bool) -> None:
    print(f"== DP T(f, s), f, s <= {size}, t_f = 1, t_s = 2 (section 6.3) ==")
    naive_cell = naive_pair_count(size, size)
    naive_total = sum(naive_pair_count(f, s) for f in range(size + 1) for s in range(size + 1))
    rows = [("naive (counted)", None, naive_cell, naive_total, None)]
    methods = ["s-monotone", "monotone"] + (["naive"] if naive else [])
    for method in methods:
        start = time.perf_counter()
        table = two_class_table(size, size, 1, 2, method=method)  # type: ignore[arg-type]
        elapsed = time.perf_counter() - start
        if method == "monotone":
            assert elapsed < 1.0 or size > 150, f"monotone DP took {elapsed:.3f} s"
        rows.append((method, elapsed, table.references[size][size], table.total_references,
                     table.value(size, size)))
    print(f"{'method':<16} {'seconds':>8} {'pairs, last cell':>17} {'pairs, table':>13}  T")
    for name, elapsed, cell, total, value in rows:
        secs = "-" if elapsed is None else f"{elapsed:.3f}"
        print(f"{name:<16} {secs:>8} {cell:>17} {total:>13}  {value if value else ''}")
    print("paper, last cell: naive 11250, s-monotone 117, monotone 120")


def random_cluster(rng: random.Random, processors: int) -> tuple[list[Fraction], list[int]]:
    """Three distinct class times from 1..10; each sender draws a class (the destination too)."""
    times = sorted(Fraction(x) for x in rng.sample(range(1, 11), 3))
    draws = [rng.randrange(3) for _ in range(processors)]
    senders = draws[1:]  # processor 0 is the destination
    return times, [senders.count(j) for j in range(3)]


def bench_search(clusters: int, processors: int, generic_limit: int, seed: int) -> None:
    print(f"== branch and bound, {clusters} clusters of {processors} processors in 3 classes "
          "(section 6.2, Table 1) ==")
    rng = random.Random(seed)
    times_s, nodes, generic_nodes, ratios = [], [], [], []
    paper_nodes: list[int] = []
    for _ in range(clusters):
        times, counts = random_cluster(rng, processors)
        start = time.perf_counter()
        result = branch_and_bound(times, counts)
        elapsed = time.perf_counter() - start
        assert result.makespan == multi_class_table(times, counts).value()
        paper = branch_and_bound(times, counts, dominance=False, node_limit=generic_limit)
        paper_nodes.append(paper.nodes)
        generic = generic_branch_and_bound(times, counts, node_limit=generic_limit)
        big_n, _ = search_tree_size(counts)
        times_s.append(elapsed)
        nodes.append(result.nodes)
        generic_nodes.append(generic.nodes)
        ratios.append(result.nodes / big_n)
    print(f"SNF-guided: median {statistics.median(times_s):.4f} s, max {max(times_s):.4f} s, "
          f"nodes median {statistics.median(nodes):.0f} max {max(nodes)}, "
          f"n/N median {statistics.median(ratios):.2e}")
    capped_paper = sum(1 for g in paper_nodes if g >= generic_limit)
    print(f"section 6.2 techniques only (no dominance): nodes median "
          f"{statistics.median(paper_nodes):.0f} max {max(paper_nodes)} ({capped_paper} of "
          f"{clusters} stopped at the cap)")
    capped = sum(1 for g in generic_nodes if g >= generic_limit)
    print(f"generic: nodes median {statistics.median(generic_nodes):.0f} "
          f"({capped} of {clusters} stopped at the cap of {generic_limit}); "
          f"node ratio generic / SNF-guided >= "
          f"{statistics.median(g / n for g, n in zip(generic_nodes, nodes, strict=True)):.0f} "
          "(median)")
    print("paper, 21 processors: SNF search 1187418 nodes in 15.28 s; generic 420191444 "
          "nodes in 8173.73 s (search tree N = 600236924)")


def bench_table1(sizes: list[int], repeats: int, seed: int) -> None:
    print(f"== Table 1, smaller clusters ({repeats} each): both searches to the end ==")
    print(f"{'P':>3} {'N':>10} {'L':>9} {'n SNF':>8} {'s SNF':>8} {'n 6.2 only':>10} "
          f"{'n generic':>10} {'s generic':>9} {'n/N generic':>11}")
    rng = random.Random(seed)
    for p in sizes:
        acc: dict[str, list[float]] = {
            k: [] for k in ("N", "L", "n", "t", "p", "g", "gt", "gr")}
        for _ in range(repeats):
            times, counts = random_cluster(rng, p)
            big_n, leaves = search_tree_size(counts)
            start = time.perf_counter()
            guided = branch_and_bound(times, counts)
            mid = time.perf_counter()
            acc["p"].append(branch_and_bound(times, counts, dominance=False).nodes)
            mid = time.perf_counter()
            generic = generic_branch_and_bound(times, counts)
            end = time.perf_counter()
            assert guided.makespan == generic.makespan
            acc["N"].append(big_n)
            acc["L"].append(leaves)
            acc["n"].append(guided.nodes)
            acc["t"].append(mid - start)
            acc["g"].append(generic.nodes)
            acc["gt"].append(end - mid)
            acc["gr"].append(generic.nodes / big_n)
        m = {k: statistics.mean(v) for k, v in acc.items()}
        print(f"{p:>3} {m['N']:>10.0f} {m['L']:>9.0f} {m['n']:>8.0f} {m['t']:>8.4f} "
              f"{m['p']:>10.0f} {m['g']:>10.0f} {m['gt']:>9.3f} {m['gr']:>11.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=150)
    parser.add_argument("--naive", action="store_true", help="also run the naive DP (slow)")
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--processors", type=int, default=21)
    parser.add_argument("--generic-limit", type=int, default=500_000)
    parser.add_argument("--table1-sizes", type=int, nargs="*", default=[10, 11, 12, 13, 14])
    parser.add_argument("--table1-repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2007)
    args = parser.parse_args()
    bench_dp(args.size, args.naive)
    print()
    bench_search(args.clusters, args.processors, args.generic_limit, args.seed)
    print()
    bench_table1(args.table1_sizes, args.table1_repeats, args.seed)


if __name__ == "__main__":
    main()
