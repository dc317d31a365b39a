"""The as-soon-as-possible replay against a brute force written apart from the engine.

The brute force reads the rule of SPEC.md ("ADDED: the as-soon-as-possible
replay") directly: every resource (a send or receive port, a link, a CPU)
takes its events in the order of their stated starts (ties: schedule order);
an event starts once it is next on every resource it needs, each has a free
slot, its inputs are held and the events it ``follows`` have ended.  A
``multiport`` side, and a ``multiport:k`` side of at most k links, is one port
per link: only its links order it.  It steps from one end to the next and,
at each, starts whatever it can until nothing more can (no queues of waiters).

Random platforms of 3 to 5 processors (and sometimes a router) mix every port
model per node; schedules are those of one-shot planners with their starts
shuffled, some sends cut in two parts, random ``follows`` pairs and some
sends made ``transit`` (the receiver keeps no copy; the follower sends it
on): orders the planners never give, blocked ones included (a start
``None`` on both sides).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from fractions import Fraction

import pytest

from portsim.planners.registry import plan
from portsim.simulator import (
    Compute,
    Event,
    Operation,
    OperationKind,
    Platform,
    PortKind,
    Schedule,
    Send,
    replay,
)
from portsim.simulator.errors import PortsimError

MODELS = ["bidirectional", "unidirectional", "multiport", "multiport:1", "multiport:2",
          "multiport:3"]
COSTS = [Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3), Fraction(3, 2)]


def _platform(rng: random.Random) -> Platform:
    processors = [f"P{i}" for i in range(rng.randint(3, 5))]
    routers = ["sw"] if rng.random() < 0.5 else []
    nodes = processors + routers
    order = nodes[:]
    rng.shuffle(order)
    links = set()
    for a, b in itertools.pairwise(order):
        links.update({(a, b), (b, a)})
    for _ in range(rng.randint(0, 5)):
        a, b = rng.sample(nodes, 2)
        links.add((a, b))
    compute: dict[str, object] = {x: rng.choice(COSTS[:3]) for x in processors}
    compute.update(dict.fromkeys(routers, 1))
    return Platform.build(compute, [(a, b, rng.choice(COSTS)) for a, b in sorted(links)],
                          routers=routers,
                          node_port_models={x: rng.choice(MODELS) for x in nodes})


def _resources(platform: Platform, event: Event) -> list[tuple[tuple[str, ...], int]]:
    """(name, slots) of every resource ``event`` takes."""
    if isinstance(event, Compute):
        return [(("cpu", event.node), 1)]
    assert isinstance(event, Send)
    out: list[tuple[tuple[str, ...], int]] = []
    for node, side in ((event.src, "send"), (event.dst, "receive")):
        model = platform.port_model_of(node)
        links = platform.degree(node)[0 if side == "send" else 1]
        if model.kind is PortKind.UNIDIRECTIONAL:
            out.append(((node, "port"), 1))
        elif model.kind is not PortKind.MULTIPORT or (model.k is not None and model.k < links):
            out.append(((node, side), model.ports(links)))
        # else one port per link: the link below
    out.append((("link", event.src, event.dst), 1))
    return out


def _brute_starts(schedule: Schedule) -> list[Fraction | None]:
    platform, op = schedule.platform, schedule.operation
    events = list(schedule.events)
    order = sorted(range(len(events)), key=lambda i: (events[i].start, i))
    held = {(node, op.normalize(item))
            for instance in schedule.instances()
            for node, items in op.initial_items(instance).items() for item in items}
    queues: dict[tuple[str, ...], list[int]] = {}
    slots: dict[tuple[str, ...], int] = {}
    taken = {i: _resources(platform, events[i]) for i in order}
    for i in order:
        for r, n in taken[i]:
            queues.setdefault(r, []).append(i)
            slots[r] = n
    started = dict.fromkeys(queues, 0)
    busy = dict.fromkeys(queues, 0)
    waits: dict[int, list[int]] = {}
    for a, b in schedule.follows:
        waits.setdefault(b, []).append(a)
    # a transit send's receiver keeps no copy; its follower sends that copy on
    passes_on = {b for a, b in schedule.follows
                 if getattr(events[a], "transit", False) and _passes_on(events[a], events[b])}
    start: dict[int, Fraction] = {}
    ended: set[int] = set()
    parts: dict[tuple[str, object], Fraction] = {}
    running: list[tuple[Fraction, int]] = []
    now = Fraction(0)
    while True:
        progress = True
        while progress:
            progress = False
            for i in order:
                e = events[i]
                if i in start or any(queues[r][started[r]] != i or busy[r] >= n
                                     for r, n in taken[i]):
                    continue
                needs = ([] if i in passes_on
                         else [(e.src, op.normalize(e.item))] if isinstance(e, Send)
                         else [(e.node, op.normalize(x)) for x in e.inputs])  # type: ignore[union-attr]
                if any(k not in held for k in needs) or any(
                        a not in ended for a in waits.get(i, [])):
                    continue
                start[i] = now
                for r, _ in taken[i]:
                    busy[r] += 1
                    started[r] += 1
                length = (platform.duration(e.src, e.dst, op.size, e.part)
                          if isinstance(e, Send)
                          else platform.compute_time(e.node) * e.tasks)  # type: ignore[union-attr]
                running.append((now + length, i))
                progress = True
        if not running:
            break
        now = min(t for t, _ in running)
        done = sorted(i for t, i in running if t == now)
        running = [(t, i) for t, i in running if t != now]
        for i in done:
            e = events[i]
            ended.add(i)
            for r, _ in taken[i]:
                busy[r] -= 1
            if isinstance(e, Send) and e.transit:
                pass
            elif isinstance(e, Send):
                key = (e.dst, op.normalize(e.item))
                parts[key] = parts.get(key, Fraction(0)) + e.part
                if parts[key] >= 1:
                    held.add(key)
            else:
                held.add((e.node, op.normalize(e.output)))  # type: ignore[union-attr]
    return [start.get(i) for i in range(len(events))]


def _passes_on(first: Event, then: Event) -> bool:
    """Whether ``then`` sends on the item ``first`` sends (the same part)."""
    return (isinstance(first, Send) and isinstance(then, Send) and then.src == first.dst
            and then.item == first.item and then.part == first.part)


def _operations(platform: Platform, rng: random.Random) -> list[Operation]:
    procs = list(platform.processors)
    return [Operation(OperationKind.BROADCAST, source=rng.choice(procs)),
            Operation(OperationKind.ALLGATHER),
            Operation(OperationKind.REDUCE, target=rng.choice(procs),
                      commutative=rng.random() < 0.5),
            Operation(OperationKind.SCATTER, source=rng.choice(procs))]


def _reordered(schedule: Schedule, rng: random.Random) -> Schedule:
    """``schedule`` with its starts shuffled, some sends in two parts, random follows."""
    events = list(schedule.events)
    starts = [e.start for e in events]
    rng.shuffle(starts)
    out: list[Event] = []
    for e, t in zip(events, starts, strict=True):
        if isinstance(e, Send) and rng.random() < 0.3:
            out.append(replace(e, start=t, part=Fraction(1, 3)))
            out.append(replace(e, start=t + rng.choice([Fraction(0), Fraction(1, 2)]),
                               part=Fraction(2, 3)))
        else:
            out.append(replace(e, start=t))
    follows = {tuple(rng.sample(range(len(out)), 2)) for _ in range(rng.randint(0, 3))}
    # some sends made transit, each with one follower that sends its item on
    followers: set[int] = set()
    for i, e in enumerate(out):
        later = [j for j, x in enumerate(out) if j != i and _passes_on(e, x)]
        if (not later or rng.random() < 0.5
                or any(a == i and _passes_on(e, out[b]) for a, b in follows)):
            continue
        j = rng.choice(later)
        if j not in followers and (i, j) not in follows:
            followers.add(j)
            follows.add((i, j))
            out[i] = replace(e, transit=True)
    return Schedule(schedule.platform, schedule.operation, tuple(out),
                    follows=tuple(sorted(follows)))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(30))
def test_the_asap_replay_is_the_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    platform = _platform(rng)
    compared = 0
    for operation in _operations(platform, rng):
        try:
            op = operation.resolve(platform)
        except PortsimError:  # a target out of reach on this draw
            continue
        for name in ["flat", "ring", "binomial"]:
            result = plan(name, platform, op)
            if result.status != "ok" or result.schedule is None or not result.schedule.events:
                continue
            for schedule in (result.schedule, _reordered(result.schedule, rng)):
                got = replay(schedule, mode="asap", record_starts=True).event_starts
                assert list(got) == _brute_starts(schedule), (seed, name, op.kind)
                compared += 1
    assert compared > 0
