"""Pipelined-series replay of a one-shot schedule on a big fabric.

The ring allgather on Al-Fares' k-ary fat tree (``portsim run`` of
``platform: {generator: {type: fat_tree, k: K, host: 1, aggregation: 1,
core: 1}}``, ``operation: {type: allgather}``, ``planners: [ring]``): CPU
seconds of planning, of the one-shot replay and of :func:`replay_series`
over the horizon ``portsim run`` uses (100 makespans), and the count.

Figures (this machine, k = 8: 42,672 events per instance, makespan 132,
horizon 13200, completed 100; planning 8.4-9.4 s, one-shot replay 0.6 s):
replay_series 94.1 s of CPU when it replayed every try twice (the prefix
again for the last cycle's completions) starting from 46 copies; 22.6 s
since it replays each try once, starting from a short prefix.

Run:  python benchmarks/series.py [--k 8]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from portsim.planners.registry import get_planner
from portsim.scenarios.loader import scenario_from_dict
from portsim.simulator.engine import replay, replay_series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8, help="fat-tree arity (even)")
    options = parser.parse_args()
    scenario = scenario_from_dict({
        "name": "fabric",
        "platform": {"generator": {"type": "fat_tree", "k": options.k, "host": 1,
                                   "aggregation": 1, "core": 1}},
        "operation": {"type": "allgather"},
        "planners": ["ring"],
    })
    start = time.process_time()
    result = get_planner("ring").plan(scenario.platform, scenario.operation)
    planned = time.process_time()
    schedule = result.schedule
    assert schedule is not None
    check = replay(schedule, mode="asap")
    checked = time.process_time()
    assert isinstance(check.makespan, Fraction)
    horizon = check.makespan * 100
    series = replay_series(schedule, horizon)
    done = time.process_time()
    print(f"fat tree k={options.k}: {len(schedule.events)} events per instance, "
          f"makespan {check.makespan}, horizon {horizon}")
    print(f"  plan {planned - start:7.2f} s CPU")
    print(f"  one-shot replay {checked - planned:7.2f} s CPU")
    print(f"  replay_series {done - checked:7.2f} s CPU: completed {series.completed}")


if __name__ == "__main__":
    main()
