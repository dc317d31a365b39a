"""Start-up of lp's periodic schedules: the largest lag and the share of the bound in 100 periods.

For each workload the ``lp`` planner is run with its defaults and its
schedule replayed in strict mode over 100 periods; printed: the period, the
instances per period, the largest ``lag`` of an event (the pipeline's
fill, in periods), the instances completed and their share of
``throughput_bound × 100 periods`` (issue 14, item 8 asks for 0.9).
Workloads: the allreduce on one ``dgx_a100`` server, the bundled
``allreduce-*.yaml`` examples, and allreduces on three random platforms of
:func:`portsim.scenarios.generators.random_platform` (costs 1..5, compute
times 0..1) under three port models.

Run:  python benchmarks/pipeline_fill.py [--periods 100] [--skip-dgx] [--fabrics]
      [--cases fat_tree:4 ...] [--ops reduce ...] [--only-fabrics]

``--fabrics`` adds allgather, broadcast from P0 and reduce onto P0 on the
small fabrics of :data:`FABRICS`; the last column is then the share of the
schedule's own throughput (a fixed period, when the exact one is over
``max_events``, carries less than the bound by the loss its notes state).
Measured 26 November 2026 (every schedule feasible): 0.972 to 0.9997 of the
bound (0.983 or more of its own) on dgx_a100:1 and :2, mi250:1 and dgx1,
fat_tree:4 allgather 0.99 and broadcast 0.95 (0.942 at worst before the fixed
periods' rounding up and denser periods, mi250:1 allgather).  Larger cases (``--cases``), the
same evening: fat_tree:8 allgather 0.99, broadcast 0.95, reduce 0.908;
ring:8 0.985, 0.94, 0.99; torus:4x4 0.953, 0.979, 0.989; dgx_a100:4, mi250:2
and dgx_a100:8 reduce 0.98; their broadcasts 0.987, 0.976 and 0.963 and
allgathers 0.958, 0.918 and 0.872 (fixed periods at ``max_events``: 2, 143/60,
6/5 and 89/60, 103/60, 19/20; 0.963, 0.921, 0.879, 0.833, 0.803 and 0.56
with Proposition 4's floors alone; the notes name the ``max_events`` that
would carry 0.9).

The ``ceiling`` column (reduces): no instance completes before ``M``
(:func:`portsim.planners.lp.reduce_makespan_bound`: 9 on fat_tree:4, 14 on
fat_tree:8) after its period starts, so the share is at most
:func:`~portsim.planners.lp.periodic_share_ceiling` (at period 1, one
instance a period: ``(101 - M) / 100``, 0.92 and 0.87).  Fat-tree reduces
onto P0: the two chains of the hosts (period 1), then the interleaved
arity-2 pair (period 2), then the aligned arity-2 pair
(:func:`~portsim.planners.lp._reduce_startup.aligned_trees`, period 2),
then (26 November 2026, later) the aligned family of three with the
critical-first placement of :mod:`portsim.planners.lp._periodic`
(period 3), with ``--fabrics --only-fabrics --cases fat_tree:4 fat_tree:8
--ops reduce`` (lost: ``100·T - completed`` instances at throughput 1, the
start-up in time units, whatever the period)::

    workload           period      lag, periods     lost            share
    fat_tree:4 reduce  1, 2, 2, 3  64, 17, 15, 9    64, 33, 28, 26  0.36, 0.835, 0.86, 0.913
    fat_tree:8 reduce  1, 2, 2, 3  462, 26, 24, 16  100, 50, 47, 43 0, 0.75, 0.765, 0.857

Ceilings: fat_tree:4 0.92, 0.96, 0.96, 0.98; fat_tree:8 0.87, 0.94, 0.94, 0.96.

No pair can reach more than 0.9 on fat_tree:4 (every tree in which each
participant receives at most two results needs 22 time units:
``tests/test_reduce_startup.py``).  On fat_tree:8 a family of 3 would have
to lose 30 time units at most (its trees alone: 39, 37 and 39).  Since the evening of
26 November 2026 the aligned family of 5 is also a candidate
(``ALIGNED_ARITIES`` in :mod:`portsim.planners.lp._reduce_columns`); its
trees are shorter (35 to 38), the least weighted makespan picks it on
fat_tree:8: period 5, lag 11, 46 time units lost, 454 of 500 instances,
0.908 of the bound, with the unit-after-unit pass of the placement
(:mod:`portsim.planners.lp._periodic`; 50 and 0.900 without it).
fat_tree:4 keeps the family of 3.  In time units it loses 3 more than the
family of 3; in periods, 9.2 instead of 14.3.

Measured 26 November 2026 (before: main at 1670931, whose layout ran the
links' transfers in depth order inside the matchings, every matching at
the start of the period; after: the list scheduling of this checkout)::

    workload                                   lag before/after   share before/after
    dgx_a100:1 allreduce (period 7, n = 8)             24 -> 3     0.8600 -> 0.9788 (*)
    allreduce-gap (period 100, n = 15)                  4 -> 2     0.9713 -> 0.9867
    allreduce-toy (period 8, n = 6)                     3 -> 1     0.9750 -> 0.9900
    random 5 nodes, bidirectional (period 4)            8 -> 5     0.9200 -> 0.9500
    random 6 nodes, multiport (period 300)              7 -> 3     0.9576 -> 0.9892
    random 6 nodes, multiport:2 (period 120)            6 -> 5     0.9547 -> 0.9713 (*)

(*) With the critical-first placement of reductions: 0.9812 and 0.9730.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

# Measure this checkout, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from portsim.planners.lp import periodic_share_ceiling, reduce_makespan_bound, steady_state
from portsim.scenarios.generators import dgx_a100_platform, random_platform
from portsim.scenarios.loader import load_scenario
from portsim.simulator import Operation, OperationKind, replay
from portsim.simulator.numbers import format_rational

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"

RANDOM = ((5, 2, 1, "bidirectional"), (6, 2, 2, "multiport"), (6, 3, 3, "multiport:2"))
"""(nodes, out-degree, seed, port model) of the random platforms."""


def _workloads(skip_dgx: bool) -> list[tuple[str, Any, Operation]]:
    out = []
    if not skip_dgx:
        p = dgx_a100_platform(1)
        out.append(("dgx_a100:1 allreduce", p, Operation(OperationKind.ALLREDUCE).resolve(p)))
    for path in sorted(EXAMPLES.glob("allreduce-*.yaml")):
        scenario = load_scenario(path)
        out.append((path.stem, scenario.platform, scenario.operation))
    for n, degree, seed, model in RANDOM:
        p = random_platform(n, degree, c=(1, 5), compute=(0, 1), seed=seed, port_model=model)
        out.append((f"random_platform({n}, {degree}, seed={seed}) {model}", p,
                    Operation(OperationKind.ALLREDUCE).resolve(p)))
    return out


FABRICS = ("dgx_a100:1", "dgx_a100:2", "mi250:1", "dgx1:1", "fat_tree:4")
"""``--fabrics``: the fabric generators' small cases (issue 14, item 8)."""


def _fabric_workloads(cases: tuple[str, ...] = FABRICS, ops: tuple[str, ...] = ()
                      ) -> list[tuple[str, Any, Operation]]:
    """Allgather, broadcast from P0 and reduce onto P0 (or only ``ops``) on ``cases``."""
    from portsim.scenarios import generators

    out = []
    for case in cases:
        fabric, size = case.split(":")
        if fabric == "dgx1":
            p = generators.dgx1_platform()
        elif fabric == "torus":
            rows, cols = (int(x) for x in size.split("x"))
            p = generators.torus_platform(rows, cols)
        else:
            build = {"dgx_a100": generators.dgx_a100_platform,
                     "mi250": generators.mi250_platform,
                     "fat_tree": generators.fat_tree_platform,
                     "ring": generators.ring_platform}[fabric]
            p = build(int(size))
        for kind, extra in ((OperationKind.ALLGATHER, {}),
                            (OperationKind.BROADCAST, {"source": "P0"}),
                            (OperationKind.REDUCE, {"target": "P0"})):
            if ops and kind.value not in ops:
                continue
            out.append((f"{case} {kind.value}", p, Operation(kind, **extra).resolve(p)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--periods", type=int, default=100)
    parser.add_argument("--skip-dgx", action="store_true", help="skip the ~20 s dgx_a100 case")
    parser.add_argument("--fabrics", action="store_true",
                        help="also allgather, broadcast and reduce on the small fabrics")
    parser.add_argument("--cases", nargs="+", default=list(FABRICS),
                        help="fabric cases of --fabrics (e.g. fat_tree:8)")
    parser.add_argument("--ops", nargs="+", default=[],
                        help="only these operations of --fabrics (allgather broadcast reduce)")
    parser.add_argument("--only-fabrics", action="store_true",
                        help="skip the allreduce workloads")
    args = parser.parse_args()
    print(f"{'workload':<46} {'period':>7} {'n':>5} {'lag':>4} {'completed':>10} {'share':>7} "
          f"{'of own':>7} {'ceiling':>7}")
    workloads = [] if args.only_fabrics else _workloads(args.skip_dgx)
    if args.fabrics:
        workloads += _fabric_workloads(tuple(args.cases), tuple(args.ops))
    for label, platform, operation in workloads:
        with warnings.catch_warnings():  # the fixed-period note of a capped exact period
            warnings.simplefilter("ignore")
            result = steady_state(platform, operation)
        if result.status != "ok" or result.schedule is None or result.period is None:
            print(f"{label:<46} {result.status}: {result.message}")
            continue
        schedule = result.schedule
        lag = max((e.lag for e in schedule.events), default=0)
        horizon = result.period * args.periods
        report = replay(schedule, horizon=horizon, mode="strict")
        share = Fraction(report.completed) / (Fraction(result.throughput_bound) * horizon)
        # A fixed period (the exact one over max_events) carries less than the
        # bound by the loss its notes state: the share of its own throughput.
        own = Fraction(report.completed) / (Fraction(result.achieved_throughput) * horizon) \
            if result.achieved_throughput else Fraction(0)
        # A reduce's ceiling: no instance completes before M after its period
        # starts (reduce_makespan_bound), whatever the trees.
        ceiling = "-"
        if operation.kind is OperationKind.REDUCE:
            least = reduce_makespan_bound(platform, operation)
            if least is not None:
                most = periodic_share_ceiling(Fraction(result.throughput_bound), least,
                                              result.period, schedule.instances_per_period,
                                              args.periods)
                ceiling = f"{float(most):.4f}"
        flag = "" if not report.violations else f"  {len(report.violations)} violations"
        if not report.feasible:
            flag += "  INFEASIBLE"
        print(f"{label:<46} {format_rational(result.period):>7} {schedule.instances_per_period:>5} "
              f"{lag:>4} {report.completed:>10} {float(share):>7.4f} {float(own):>7.4f} "
              f"{ceiling:>7}{flag}",
              flush=True)


if __name__ == "__main__":
    main()
