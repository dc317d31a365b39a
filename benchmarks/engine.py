"""Engine speed: transfers replayed per second, against a bare heapq loop doing the same checks.

The workload is a pipelined series of broadcasts on a complete heterogeneous
platform: each instance follows a random spanning tree, list-scheduled so the
schedule is feasible under the bidirectional one-port model (one send and one
receive per node at a time).  It is replayed, in the same process,

- by portsim's engine (:func:`portsim.simulator.engine.replay`), strict and
  as soon as possible, exact (integer ticks) and float time;
- by the baseline, a bare ``heapq`` loop doing the same checks from the
  same :class:`Schedule` (:func:`bare_strict`, :func:`bare_asap`): times
  converted to integer ticks of the common denominator (or floats, with
  the engine's tolerance), node ids to indexes, items to tuple keys; then
  every send checked for its item's arrival at the sender, the sender's
  send port, the receiver's receive port and the link (two-port:
  one send and one receive per node at a time, a link one transfer at a
  time), strictly at its start or as soon as possible in the per-port
  order.  The baseline skips what the engine does besides (the report,
  completions per instance, multi-port and unidirectional ports, CPUs,
  parts, violation texts);
- with ``--naive``, a naive SimPy loop: one SimPy process per transfer,
  requesting the sender's and the receiver's ``Resource(capacity=1)`` ports
  in turn (5-6 SimPy events per transfer).

Targets (issue 15, item 6): the engine at >= 0.8 of the baseline's speed in
strict mode, >= 0.6 as soon as possible.  Times are CPU seconds (the
machine is shared), best of ``--repeat``, the engine and the baseline
interleaved.  The engine's :func:`replay` pauses Python's cyclic garbage
collector while it runs (:mod:`portsim.simulator.collector`); the baseline
is timed with it paused the same way, so that the ratio compares the two
loops and not the collector's walks over what each allocates (the output
says so in its first line).

Run:  python benchmarks/engine.py [--transfers 100000] [--nodes 20 200] [--naive]

Measured (100,000 transfers, shared 2-core machine under a load of about
3.6; two full runs, alternating with main at 1670931, whose engine and
baseline both ran with the collector on):

    nodes  replay          engine tr/s   bare tr/s   ratio (two runs)   main 1670931   target
       20  strict, exact       460,416     425,923    1.08   1.07       0.81   0.81    >= 0.8
       20  strict, float       447,742     409,954    1.09   1.13       0.96   0.93    >= 0.8
       20  asap, exact         274,759     331,109    0.83   0.83       0.70   0.71    >= 0.6
       20  asap, float         276,063     334,325    0.83   0.85       0.71   0.71    >= 0.6
      200  strict, exact       208,694     252,615    0.83   0.85       0.72   0.73    >= 0.8
      200  strict, float       200,646     234,288    0.86   0.86       0.85   0.92    >= 0.8
      200  asap, exact         142,929     161,057    0.89   0.82       0.78   0.78    >= 0.6
      200  asap, float         139,843     155,767    0.90   0.94       0.79   0.79    >= 0.6

Over eleven runs of this version (loads 3.5 to 6.5), the strict replay on
200 nodes ranged over 0.83-0.93 exact and 0.80-0.93 float (0.80 once, every
other run at 0.82 or more); main's, over six runs, over 0.72-0.81 exact
and 0.71-0.92 float.

How: the compile step turns every event once into a named record
(``_Play``), with the items numbered by (kind, args, ordered) rather than
hashed as ``Item`` objects, and a send's nodes and resources numbered with
its duration (once per link); a one-shot replay plays these records
themselves (no copy per event); the strict replay keeps one SimPy event per
distinct start time, plays a lone event without the retry loop of a batch
and takes the first free slot of every resource directly.  Until 1670931
the strict replay's SimPy callback named itself, a reference cycle that
kept all its records alive after the replay until a full collection found
them; the records now go when the replay returns, and the collector is
paused during it (the engine allocates some 300,000 tracked objects per
100,000 transfers, the baseline fewer, so the collector's walks had cost
the engine more).  What is left at 200 nodes is mostly the compile step:
each of the ~36,000 links used computes its duration through the
platform (``Fraction`` arithmetic, as the baseline does), and each event
becomes a record.
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import time
from collections.abc import Generator
from fractions import Fraction
from typing import Any

import simpy

from portsim.simulator.collector import paused_collection
from portsim.simulator.engine import replay
from portsim.simulator.items import Item
from portsim.simulator.numbers import common_denominator
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


def _ticks(schedule: Schedule, exact: bool) -> tuple[list[tuple[Any, ...]], Any, int, Any]:
    """The sends as plain tuples ``(start, duration, src, dst, needs, gives)``, sorted by
    start (ties: schedule order), in integer ticks of ``1 / scale`` (exact) or floats;
    the zero time; ``scale`` (1 in float time); the tolerance of time comparisons (0,
    or in float time a quarter of the exact schedule's tick, as the engine's).

    Node ids become indexes and an item held by a node the key ``(kind, args,
    instance, node)`` (a tuple, hashed in C).
    """
    platform = schedule.platform
    size = schedule.operation.size
    index = {nid: i for i, nid in enumerate(platform.node_ids)}
    cost: dict[tuple[str, str], Fraction] = {}
    for e in schedule.events:
        assert isinstance(e, Send)
        assert e.part == 1
        if (e.src, e.dst) not in cost:
            cost[e.src, e.dst] = platform.duration(e.src, e.dst, size)
    scale = common_denominator([*cost.values(), *(e.start for e in schedule.events)])
    tol: Any = 0 if exact else 0.25 / scale
    if exact:
        tick: dict[tuple[str, str], Any] = {
            k: v.numerator * (scale // v.denominator) for k, v in cost.items()}

        def when(v: Fraction) -> Any:
            return v.numerator * (scale // v.denominator)
    else:
        tick = {k: float(v) for k, v in cost.items()}

        def when(v: Fraction) -> Any:
            return v.numerator / v.denominator
    out = []
    for e in schedule.events:
        assert isinstance(e, Send)
        item = e.item
        name = (item.kind, item.args, item.instance)
        out.append((when(e.start), tick[e.src, e.dst], index[e.src], index[e.dst],
                    (*name, index[e.src]), (*name, index[e.dst])))
    out.sort(key=lambda x: x[0])
    return out, 0 if exact else 0.0, scale if exact else 1, tol


def _initial(schedule: Schedule, zero: Any) -> dict[tuple[Any, ...], Any]:
    index = {nid: i for i, nid in enumerate(schedule.platform.node_ids)}
    held = {}
    for t in schedule.instances():
        for node, items in schedule.operation.initial_items(t).items():
            for item in items:
                held[item.kind, item.args, item.instance, index[node]] = zero
    return held


def bare_strict(schedule: Schedule, exact: bool) -> tuple[int, Any]:
    """The baseline of the strict replay: a bare heapq loop, same checks.

    Every send at its stated start (popped from a heap in start order): its
    item must be held by the sender (arrived by then), the sender's send port,
    the receiver's receive port and the link must be free (bidirectional
    one-port: one send and one receive per node at a time, a link one
    transfer at a time).  Returns the number of violations and the makespan.
    """
    events, zero, scale, tol = _ticks(schedule, exact)
    nodes = len(schedule.platform.node_ids)
    held = _initial(schedule, zero)
    heap = [(e[0], i, e) for i, e in enumerate(events)]
    heapq.heapify(heap)
    send_free = [zero] * nodes
    recv_free = [zero] * nodes
    link_free: dict[tuple[int, int], Any] = {}
    violations = 0
    makespan = zero
    pop = heapq.heappop
    while heap:
        t, _, (_, duration, src, dst, needs, gives) = pop(heap)
        limit = t + tol
        arrival = held.get(needs)
        if (arrival is None or arrival > limit or send_free[src] > limit
                or recv_free[dst] > limit or link_free.get((src, dst), zero) > limit):
            violations += 1
        end = t + duration
        send_free[src] = recv_free[dst] = link_free[src, dst] = end
        previous = held.get(gives)
        if previous is None or end < previous:
            held[gives] = end
        if end > makespan:
            makespan = end
    return violations, Fraction(makespan, scale) if exact else makespan


def bare_asap(schedule: Schedule, exact: bool) -> tuple[int, Any]:
    """The baseline of the as-soon-as-possible replay: a bare heapq loop, same checks.

    Every send port, receive port and link keeps the schedule's order (a
    queue per resource); a send starts once it heads the queues of its
    sender's send port, its receiver's receive port and its link, all three
    are free and its item has arrived at the sender.  A heap of end times
    drives the time.  Returns the number of sends never started and the
    makespan.
    """
    events, zero, scale, _ = _ticks(schedule, exact)
    nodes = len(schedule.platform.node_ids)
    held = _initial(schedule, zero)
    # Resources as integers: send ports 0..n-1, receive ports n..2n-1, links 2n...
    link_id: dict[tuple[int, int], int] = {}
    resources = []
    for _, _, src, dst, _, _ in events:
        link = link_id.setdefault((src, dst), 2 * nodes + len(link_id))
        resources.append((src, nodes + dst, link))
    queues: list[list[int]] = [[] for _ in range(2 * nodes + len(link_id))]
    for i, mine in enumerate(resources):
        for r in mine:
            queues[r].append(i)
    for queue in queues:
        queue.append(-1)  # sentinel: nothing left
    head = [0] * len(queues)
    busy = [False] * len(queues)
    waiting: dict[tuple[Any, ...], list[int]] = {}
    started = [False] * len(events)
    heap: list[tuple[Any, int]] = []
    now = zero
    push, pop = heapq.heappush, heapq.heappop

    def try_start(i: int) -> None:
        mine = resources[i]
        for r in mine:
            if busy[r] or queues[r][head[r]] != i:
                return
        needs = events[i][4]
        if needs not in held:
            waiting.setdefault(needs, []).append(i)
            return
        started[i] = True
        for r in mine:
            busy[r] = True
            head[r] += 1
        push(heap, (now + events[i][1], i))

    for queue in queues:
        if queue[0] >= 0:
            try_start(queue[0])
    while heap:
        now, i = pop(heap)
        gives = events[i][5]
        if gives not in held:
            held[gives] = now
            for waiter in waiting.pop(gives, ()):
                try_start(waiter)
        mine = resources[i]
        for r in mine:
            busy[r] = False
        for r in mine:
            following = queues[r][head[r]]
            if following >= 0:
                try_start(following)
    return started.count(False), Fraction(now, scale) if exact else now


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


TARGETS = {"strict": 0.8, "asap": 0.6}
"""Issue 15, item 6: the engine's speed as a fraction of the bare heapq loop's."""

def _paused(fn):  # type: ignore[no-untyped-def]
    """``fn`` run with the cyclic garbage collector paused, as the engine's replay runs
    (:func:`portsim.simulator.collector.paused_collection`): the baseline gets the
    same treatment, so the ratio compares the loops, not the collector."""
    return paused_collection()(fn)


BARE = {"strict": _paused(bare_strict), "asap": _paused(bare_asap)}


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """CPU seconds of ``fn(*args, **kwargs)`` (the machine is shared: wall time would
    count the other processes' turns too), and its result."""
    start = time.process_time()
    result = fn(*args, **kwargs)
    return time.process_time() - start, result


def best_of(repeat: int, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """The shortest of ``repeat`` runs, and the last result."""
    runs = [timed(fn, *args, **kwargs) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--naive", action="store_true", help="also time the naive SimPy loop")
    args = parser.parse_args()
    print("(the engine's replay pauses the cyclic garbage collector; the bare loop is "
          "timed with it paused too)")
    print(f"{'nodes':>5} {'replay':<16} {'engine tr/s':>12} {'bare tr/s':>12} "
          f"{'ratio':>6} {'target':>7}  check")
    for n in args.nodes:
        schedule = broadcast_series(n, args.transfers)
        count = len(schedule.events)
        if args.naive:
            naive = best_of(args.repeat, naive_simpy, schedule)[0]
            print(f"{n:>5} {'naive SimPy':<16} {count / naive:>12,.0f}")
        for mode in ("strict", "asap"):
            for exact in (True, False):
                # Interleave the two, so a change of load on the machine hits both.
                engine_s, bare_s = [], []
                for _ in range(args.repeat):
                    seconds, report = timed(replay, schedule, mode=mode, exact=exact)
                    engine_s.append(seconds)
                    seconds, (flaws, makespan) = timed(BARE[mode], schedule, exact)
                    bare_s.append(seconds)
                engine, bare = min(engine_s), min(bare_s)
                assert flaws == len(report.violations) == 0
                assert makespan == report.makespan or (not exact and math.isclose(
                    makespan, report.makespan)), (makespan, report.makespan)
                label = f"{mode}, {'exact' if exact else 'float'}"
                check = (f"feasible={report.feasible} complete={report.complete} "
                         f"makespan={report.makespan}")
                print(f"{n:>5} {label:<16} {count / engine:>12,.0f} {count / bare:>12,.0f} "
                      f"{bare / engine:>6.2f} {'>= ' + str(TARGETS[mode]):>7}  {check}",
                      flush=True)


if __name__ == "__main__":
    main()
