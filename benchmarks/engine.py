"""Engine speed: transfers replayed per second, against a naive SimPy loop.

The workload is a pipelined series of broadcasts on a complete heterogeneous
platform: each instance follows a random spanning tree, list-scheduled so the
schedule is feasible under the bidirectional one-port model (one send and one
receive per node at a time).  It is replayed

- by portsim's engine, strict and as-soon-as-possible, exact and float time;
- by a naive SimPy loop in the same process: one SimPy process per transfer,
  requesting the sender's and the receiver's ``Resource(capacity=1)`` ports in
  turn (5-6 SimPy events per transfer).

Run:  python benchmarks/engine.py [--transfers 100000] [--nodes 20 200]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Generator
from fractions import Fraction

import simpy

from portsim.simulator.engine import replay
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule, Send


def broadcast_series(nodes: int, transfers: int, seed: int = 0) -> Schedule:
    """A feasible one-shot schedule of ``transfers`` sends: a series of broadcasts."""
    rng = random.Random(seed)
    ids = [f"P{i}" for i in range(nodes)]
    links = [(a, b, Fraction(rng.randint(1, 10), rng.choice([1, 2, 3, 4])))
             for a in ids for b in ids if a != b]
    platform = Platform.build(ids, links)
    operation = Operation(OperationKind.BROADCAST, source="P0").resolve(platform)
    send_free = dict.fromkeys(ids, Fraction(0))
    recv_free = dict.fromkeys(ids, Fraction(0))
    events: list[Send] = []
    instance = 0
    while len(events) < transfers:
        holds = {"P0": Fraction(0)}
        others = ids[1:]
        rng.shuffle(others)
        for dst in others:
            src = rng.choice(list(holds))
            c = platform.cost(src, dst)
            start = max(send_free[src], recv_free[dst], holds[src])
            send_free[src] = recv_free[dst] = start + c
            holds[dst] = start + c
            events.append(Send(src, dst, Item.broadcast(instance), start))
            if len(events) == transfers:
                break
        instance += 1
    # A partial last instance is not a complete broadcast: drop it.
    if len(holds) < nodes:
        events = [e for e in events if e.item.instance < instance - 1]
    return Schedule(platform, operation, tuple(events))


def naive_simpy(schedule: Schedule) -> float:
    """One SimPy process per transfer, requesting its two ports in turn."""
    env = simpy.Environment()
    ports = {}
    for node in schedule.platform.node_ids:
        ports[node, "send"] = simpy.Resource(env, capacity=1)
        ports[node, "recv"] = simpy.Resource(env, capacity=1)
    platform = schedule.platform

    def transfer(start: float, src: str, dst: str, duration: float) -> Generator:
        yield env.timeout(start)
        with ports[src, "send"].request() as send_port:
            yield send_port
            with ports[dst, "recv"].request() as recv_port:
                yield recv_port
                yield env.timeout(duration)

    for e in schedule.events:
        assert isinstance(e, Send)
        env.process(transfer(float(e.start), e.src, e.dst, float(platform.cost(e.src, e.dst))))
    env.run()
    return env.now


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    print(f"{'nodes':>5} {'replay':<22} {'transfers/s':>12} {'x naive':>8}  check")
    for n in args.nodes:
        schedule = broadcast_series(n, args.transfers)
        count = len(schedule.events)
        naive = min(timed(naive_simpy, schedule)[0] for _ in range(args.repeat))
        print(f"{n:>5} {'naive SimPy loop':<22} {count / naive:>12,.0f} {1.0:>8.2f}")
        for mode in ("strict", "asap"):
            for exact in (True, False):
                best = None
                for _ in range(args.repeat):
                    seconds, report = timed(replay, schedule, mode=mode, exact=exact)
                    best = seconds if best is None else min(best, seconds)
                assert best is not None
                label = f"{mode}, {'exact' if exact else 'float'}"
                check = (f"feasible={report.feasible} complete={report.complete} "
                         f"makespan={report.makespan}")
                print(f"{n:>5} {label:<22} {count / best:>12,.0f} {naive / best:>8.2f}  {check}")


if __name__ == "__main__":
    main()
