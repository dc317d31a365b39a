"""Steady-state allreduce (``lp``): time of each step, and how often each step decides.

Workload: random bidirectional platforms ``random_platform(N, min(3, N - 1),
c=(1, 5), compute=(0, 3), seed)``, every node a participant, for each N and
seed given.  For each platform:

- ``planner s``: the whole ``lp`` call in CPU seconds (``time.process_time``:
  relaxation, reduce-then-broadcast and, when that falls short, the
  structure packing with its exact branch and bound, up to 8 participants;
  from 9, reduce-then-broadcast first, then the cheapest certified bound;
  then the periodic schedule, ``max_events`` 3,000), against the issue's
  targets (N = 12 < 10 s, N = 16 < 30 s, N = 24 < 120 s);
- ``schedule``: what the reduce-then-broadcast schedule carries; ``upper
  end``: the certified upper bound (``throughput_bound``);
- ``ratio``: the upper end over the schedule (1 when exact);
- ``step``: what decided the result (``rtb``: reduce-then-broadcast reached
  the relaxation; ``dual``: it reached the bound of its own dual split among
  the destinations; ``ydual``: it reached the bound of its own dual priced
  over every fractional structure; ``restr``: it reached the restricted relaxation
  (:mod:`portsim.planners.lp._allreduce_restricted`); ``cap``: a single-node
  bound; ``packing``: the
  structure search proved a lower optimum; ``interval``: not proven, the
  certified interval is ``[schedule, upper end]``);
- ``--relaxation``: also the per-destination SSR(G) program alone
  (:func:`portsim.planners.lp._allreduce_bound.allreduce_bound`), exact, CPU
  seconds (beyond N = 10 it takes minutes).

Run:  python benchmarks/lp_allreduce.py [--n 4 5 6 7 8] [--seeds 5] [--json]
      [--bound-only] [--bound-method whole|columns|both] [--rest-only]
      [--costs 1 10] [--complete] [--relaxation] [--time-limit SECONDS]

- ``--bound-only``: the relaxation alone, by ``--bound-method`` (``both``:
  the whole program and the per-destination column generation, their
  values checked equal), CPU seconds (``time.process_time``);
- ``--rest-only``: the planner with the relaxation replaced by a valid but
  loose upper bound (the least receive capacity, :func:`tp_cap`), so the
  time is that of the later steps alone (reduce-then-broadcast, the
  structure packing up to N = 8, the periodic schedule);
- ``--costs LO HI`` link costs (default 1 5), ``--complete`` a complete
  platform instead of out-degree 3.

Each platform runs in this process, one after the other; ``peak RSS`` is the
process's maximum resident set size at the end (HiGHS allocates outside
Python).

Measured 26 November 2026 with ``--costs 1 10 --time-limit 1500`` (the
relaxation then runs at any size; two jobs side by side under ``nice``):
complete N = 12 seed 0, exact 242023186/724892425 in 318 s of CPU (without
the option: the interval up to 1.60 times it, in 6 s); out-degree 3 N = 12
seed 1, exact 6900896951/87086981320 in 87 s (without: up to 1.20 times
it).  In both the relaxation equals the reduce-then-broadcast schedule.

Measured 27 November 2026, fifteenth session, with step 2's dual checked over
every fractional structure (``_dual_check`` of
:mod:`portsim.planners.lp._allreduce`; step ``ydual``), ``--n 12 --seeds 6
--costs 1 10 --time-limit 240`` on a quiet machine: seeds 1-4 exact in 49.8,
80.0, 63.1 and 54.4 s (seeds 1-3 took 85, 92 and 76 s by the relaxation);
seed 5 the interval at 1.0011 in 148 s (the check gives 1.0035 there, the
relaxation 1.0011).  ``--complete --n 12 --seeds 1 --time-limit 500``: exact
242023186/724892425 in 233 s (254 s by the relaxation), peak RSS 1.7 GiB.

Measured 27 November 2026, thirteenth session, with the restricted relaxation
(:mod:`portsim.planners.lp._allreduce_restricted`), ``--n 12 16 24 --seeds 4
--costs 1 10``, then ``--complete --n 12 16 --seeds 2`` (upper end over the
schedule, CPU seconds of the whole call, a quiet machine): N = 12, 1 (the
split, 13/160), 1.0035, 1.0023, 1.0064 in 0.4-7.9 s; N = 16, 1.0183, 1.0228,
1.0056, 1.0008 in 9.5-14 s; N = 24 (receive cuts), 1 (cap), 1.0073, 1.0154,
1.0112 in 2-46 s; complete N = 12, 1.0236 and 1.0490 in 7 s; complete N = 16
(receive cuts), 1.0160 and 1.0192 in 16-17 s.  Before it, the same rows were N
= 12: 1.20-1.34; N = 16: 1.005-1.30; N = 24: 1.15-1.58; complete N = 12: 1.50
and 1.13; complete N = 16: 1.48 and 1.64. With a ``time_limit`` the other
destinations keep their own node's rows up to 400,000 variables: one program
at N = 24, seed 1 (235,449 variables) gives 1.0005 in 134 s (1.1 GiB); with
``--time-limit 600`` the generation goes on while 80% of the time left
allows.

Measured 27 November 2026 with ``--n 12 16 24 --seeds 4 --costs 1 10`` (two
helpers' jobs beside it), before the restricted relaxation: every run within
its target (N = 12: 2.3-2.4 s, N = 16: 1.7-6.1 s, N = 24: 2.4-16.1 s); exact:
N = 12 seed 0 (the split, 13/160) and N = 24 seed 0 (``cap``: one
participant's in-links all cost 10, 1/10; the port-aware receive rate, where
the sum over its three in-links gave 3/10 and the interval [1/10, 1/7]); the
others are intervals whose upper end is a single-node cap or the split found
in its rounds (since then fixed by the size:
:data:`~portsim.planners.lp._allreduce.SPLIT_WORK`).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path

# Measure this checkout, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import portsim.planners.lp._allreduce as allreduce_planner
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import allreduce_bound, tp_cap
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._exact import ExactSolution
from portsim.scenarios.generators import random_platform
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind


def _platform(n: int, seed: int, costs: tuple[int, int], complete: bool):  # type: ignore[no-untyped-def]
    degree = n - 1 if complete else min(3, n - 1)
    return random_platform(n, degree, c=costs, compute=(0, 3), seed=seed)


def measure_bound(n: int, seed: int, method: str, costs: tuple[int, int],
                  complete: bool) -> dict[str, object]:
    """The relaxation alone by each method (CPU seconds); ``both`` checks that ``whole``
    (with the gossip rows) is at most ``columns`` (without them)."""
    platform = _platform(n, seed, costs, complete)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    row: dict[str, object] = {"N": n, "seed": seed}
    values = []
    for name in (("whole", "columns") if method == "both" else (method,)):
        t0 = time.process_time()
        found = allreduce_bound(platform, op, LpOptions(), method=name)
        row[f"{name}_s"] = round(time.process_time() - t0, 2)
        value = found.upper if isinstance(found, ExactSolution) else None
        row[name] = format_rational(value) if value is not None else found.message
        row[f"{name}_method"] = found.method if isinstance(found, ExactSolution) else "-"
        values.append(value)
    # whole holds the gossip rows, the tree packing does not: at most, equal where none binds
    if len(values) == 2 and None not in values and values[0] > values[1]:
        raise AssertionError(f"N = {n}, seed {seed}: whole is above columns: {row}")
    return row


def _loose_bound(platform, operation, options, *, deadline=None):  # type: ignore[no-untyped-def]
    """A valid upper bound for every schedule (the least receive capacity), at no cost."""
    return ExactSolution([], Fraction(0), tp_cap(platform, operation), [], [], "interval")


def measure_rest(n: int, seed: int, costs: tuple[int, int], complete: bool
                 ) -> dict[str, object]:
    """The planner without the relaxation's cost (see the module notes), CPU seconds."""
    platform = _platform(n, seed, costs, complete)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    saved = allreduce_planner.allreduce_bound
    allreduce_planner.allreduce_bound = _loose_bound
    try:
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # capped periods: reported in the notes
            result = steady_state(platform, op, max_events=3_000)
        seconds = time.process_time() - t0
    finally:
        allreduce_planner.allreduce_bound = saved
    rtb = next((note.rsplit(", ", 1)[-1] for note in result.notes
                if note.startswith("reduce to a root")), "-")
    return {"N": n, "seed": seed, "status": result.status, "rest_s": round(seconds, 2),
            "reduce_then_broadcast": rtb,
            "message": result.message if result.status != "ok" else ""}


def _step(result) -> str:  # type: ignore[no-untyped-def]
    """Which step decided the result (see the module notes)."""
    if result.status != "ok":
        return str(result.status)
    if result.message:
        return "interval"
    if any(note.startswith("structures") for note in result.notes):
        return "packing"
    upper = next((note for note in result.notes if note.startswith("upper bound: ")), None)
    if upper is None or upper.startswith("upper bound: the relaxation"):
        return "rtb"
    if "split among the destinations" in upper:
        return "dual"
    if "over every fractional structure" in upper:
        return "ydual"
    if upper.startswith("upper bound: the restricted relaxation"):
        return "restr"
    return "cap"


def measure(n: int, seed: int, costs: tuple[int, int] = (1, 5),
            complete: bool = False, relaxation: bool = False,
            time_limit: float | None = None) -> dict[str, object]:
    """One platform: the whole planner (CPU seconds; with ``time_limit``, its option:
    the relaxation then runs at any size), and the relaxation alone if asked."""
    platform = _platform(n, seed, costs, complete)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped periods: reported in the notes
        limit = {} if time_limit is None else {"time_limit": time_limit}
        result = steady_state(platform, op, max_events=3_000, **limit)
    t1 = time.process_time()
    lower = next((note.rsplit(", ", 1)[-1] for note in result.notes
                  if note.startswith("reduce to a root")), "-")
    row: dict[str, object] = {
        "N": n, "seed": seed, "step": _step(result), "schedule": lower,
        "upper": format_rational(result.throughput_bound)
        if result.throughput_bound is not None else "-",
        "ratio": (f"{float(Fraction(str(result.throughput_bound)) / Fraction(lower)):.4f}"
                  if lower != "-" and result.throughput_bound is not None else "-"),
        "planner_s": round(t1 - t0, 2),
        "packing": next((note for note in result.notes if note.startswith("structures")), ""),
        "relaxation": "-", "relaxation_s": "-"}
    if relaxation:
        t2 = time.process_time()
        relaxed = allreduce_bound(platform, op, LpOptions())
        row["relaxation_s"] = round(time.process_time() - t2, 2)
        row["relaxation"] = (format_rational(relaxed.upper)
                             if isinstance(relaxed, ExactSolution) else relaxed.message)
    return row


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
    parser.add_argument("--bound-only", action="store_true", help="the relaxation alone")
    parser.add_argument("--bound-method", choices=("whole", "columns", "both"), default="both")
    parser.add_argument("--rest-only", action="store_true",
                        help="the steps after the relaxation alone")
    parser.add_argument("--costs", type=int, nargs=2, default=(1, 5))
    parser.add_argument("--complete", action="store_true", help="complete platforms")
    parser.add_argument("--relaxation", action="store_true",
                        help="also solve the relaxation alone (N copies of SSR(G); slow)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="the planner's time_limit option (the relaxation then runs at "
                             "any size within it)")
    args = parser.parse_args(argv)
    costs = (args.costs[0], args.costs[1])
    if args.bound_only or args.rest_only:
        for n in args.n:
            for seed in range(args.seeds):
                row = (measure_bound(n, seed, args.bound_method, costs, args.complete)
                       if args.bound_only else measure_rest(n, seed, costs, args.complete))
                print(json.dumps(row) if args.json
                      else "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        return 0
    print(f"{'N':>3} {'seed':>4} {'step':>8} {'schedule':>24} {'upper end':>24} {'ratio':>7} "
          f"{'planner s':>9} {'target':>12} {'relaxation':>16} {'relax s':>8}")
    for n in args.n:
        for seed in range(args.seeds):
            row = measure(n, seed, costs, args.complete, args.relaxation, args.time_limit)
            if args.json:
                print(json.dumps(row), flush=True)
                continue
            print(f"{row['N']:>3} {row['seed']:>4} {row['step']:>8} {row['schedule']:>24} "
                  f"{row['upper']:>24} {row['ratio']:>7} {row['planner_s']:>9} "
                  f"{target_text(n, float(row['planner_s'])):>12} "  # type: ignore[arg-type]
                  f"{row['relaxation']:>16} {row['relaxation_s']:>8}", flush=True)
            if row["packing"]:
                print(f"         {row['packing']}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
