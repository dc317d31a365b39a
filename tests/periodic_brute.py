"""Brute force for the closed form of a periodic replay: random small periodic schedules.

``replay_periodic(schedule, H)`` (every period up to the steady state, the rest
counted in closed form) against the replay of every period up to ``H``
(:func:`replay` below its cap): every figure and every violation row must be the
same.  A float replay is also held against the exact one (counts, rows, times
within 10^-9).  Imported as a plain module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from portsim.simulator import engine
from portsim.simulator.engine import replay, replay_periodic
from portsim.simulator.errors import ScheduleError
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Link, Node, Platform, PortModel
from portsim.simulator.report import Report, Violation
from portsim.simulator.schedule import Compute, Schedule, Send

MODELS = ("bidirectional", "unidirectional", "multiport:1", "multiport:2", "multiport:3",
          "multiport")
COSTS = tuple(Fraction(x) for x in ("1", "1/2", "1/3", "2/3", "3/2", "2", "1/5", "3/10", "5/7",
                                    "1/4"))
PERIODS = tuple(Fraction(x) for x in ("1", "1/2", "1/3", "2/3", "3/2", "2", "5/7", "3/10",
                                      "7/3"))
COMPUTE = (Fraction(1), Fraction(1, 2), Fraction(2, 3), Fraction(0))  # 0: zero-time computes


@dataclass(frozen=True)
class Case:
    """A random periodic schedule, how to replay it and over what horizon."""

    schedule: Schedule
    exact: bool
    tolerance: str | None
    horizon: Fraction


def settle(schedule: Schedule) -> Fraction:
    """The latest end of a pattern event counted from its instance's first period."""
    assert schedule.period is not None
    platform, size = schedule.platform, schedule.operation.size
    latest = Fraction(0)
    for e in schedule.events:
        if isinstance(e, Send):
            d = (platform.duration(e.src, e.dst, size, e.part)
                 if platform.has_link(e.src, e.dst) else Fraction(0))
        else:
            assert isinstance(e, Compute)
            d = platform.compute_time(e.node) * e.tasks
        latest = max(latest, e.lag * schedule.period + e.start + d)
    return latest


def _platform(rng: random.Random) -> Platform:
    n = rng.randint(2, 5)
    ids = [f"N{i}" for i in range(n)]
    ring = [(ids[i], ids[(i + 1) % n]) for i in range(n)]  # every operation reachable
    if rng.random() < 0.5:
        ring += [(b, a) for a, b in ring]
    pairs = [(a, b) for a in ids for b in ids if a != b]
    rng.shuffle(pairs)
    links = list(dict.fromkeys(ring + pairs[:rng.randint(0, len(pairs))]))
    mixed = rng.random() < 0.4  # some nodes follow their own port model
    nodes = tuple(Node(i, rng.choice(COMPUTE),
                       PortModel.parse(rng.choice(MODELS)) if mixed and rng.random() < 0.6
                       else None) for i in ids)
    made = []
    for s, d in links:
        c = rng.choice(COSTS)
        latency = rng.choice((Fraction(1, 4), Fraction(1, 3))) if (
            c > Fraction(1, 3) and rng.random() < 0.2) else Fraction(0)
        made.append(Link(s, d, c, latency=latency))
    return Platform(nodes, tuple(made), PortModel.parse(rng.choice(MODELS)))


def _operation(rng: random.Random, platform: Platform) -> Operation:
    kind = rng.choice(list(OperationKind))
    root = rng.choice(platform.node_ids)
    if kind in (OperationKind.SCATTER, OperationKind.BROADCAST):
        return Operation(kind, source=root).resolve(platform)
    if kind in (OperationKind.GATHER, OperationKind.REDUCE):
        return Operation(kind, target=root).resolve(platform)
    return Operation(kind).resolve(platform)


def _event(rng: random.Random, platform: Platform, operation: Operation, period: Fraction,
           slots: int, items: list[str], links: list[tuple[str, str]]) -> dict[str, Any]:
    ids = platform.node_ids
    start = period * Fraction(rng.randrange(6), 6)
    if rng.random() < 0.3:
        start = period * Fraction(rng.randrange(4), 4)
    slot = rng.randrange(slots)
    suffix = f"#{slot}" if slot or rng.random() < 0.3 else ""
    count = len(operation.participants)
    event: dict[str, Any]
    if operation.is_reduction and rng.random() < 0.35:
        a = rng.randrange(count)
        b = rng.randrange(a, count)
        m = rng.randrange(a, b) if b > a else a
        inputs = [f"v[{a},{m}]{suffix}", f"v[{min(m + 1, b)},{b}]{suffix}"]
        if rng.random() < 0.2:
            inputs.reverse()  # a reduction_order violation
        event = {"kind": "compute", "node": rng.choice(ids), "inputs": inputs,
                 "output": f"v[{a},{b}]{suffix}"}
    else:
        if operation.is_reduction:
            a = rng.randrange(count)
            item = f"v[{a},{rng.randrange(a, count)}]"
        else:
            item = rng.choice(items)
        src, dst = rng.choice(links) if rng.random() < 0.8 else rng.sample(ids, 2)
        event = {"kind": "send", "src": src, "dst": dst, "item": item + suffix}
        if rng.random() < 0.15:
            event["part"] = rng.choice(("1/2", "1/3"))
    event.update(start=str(start), lag=rng.choice((0, 0, 1, 2, 3)))
    if rng.random() < 0.1:
        event["duration"] = rng.choice(("1", "1/3"))
    return event


def make_case(seed: int) -> Case:
    """The random case of ``seed``: 2 to 5 nodes, 1 to 6 events, lags 0 to 3, ..."""
    rng = random.Random(seed)
    platform = _platform(rng)
    operation = _operation(rng, platform)
    period = rng.choice(PERIODS)
    slots = rng.choice((1, 1, 1, 2, 3))
    items = sorted({str(x) for table in (operation.initial_items(0),
                                         operation.required_items(0))
                    for held in table.values() for x in held})
    links = [(link.src, link.dst) for link in platform.links]
    events = [_event(rng, platform, operation, period, slots, items, links)
              for _ in range(rng.randint(1, 6))]
    schedule = Schedule.from_dicts(platform, operation, events, period=period,
                                   instances_per_period=slots)
    exact = rng.random() < 0.7
    tolerance = rng.choice(("1/1000", "1/10")) if exact and rng.random() < 0.2 else None
    steady, k = settle(schedule), rng.randint(0, 12)
    draw = rng.random()
    if draw < 0.3:  # exactly at the steady state plus whole periods
        horizon = steady + k * period
    elif draw < 0.5:  # on the grid of the starts
        horizon = k * period + period * Fraction(rng.randrange(6), 6)
    elif draw < 0.7:
        horizon = steady + k * period + period * Fraction(rng.randrange(1, 12), 12)
    else:
        horizon = steady + k * period + rng.choice(
            (Fraction(1, 100), Fraction(-1, 100), Fraction(1, 7)))
    return Case(schedule, exact, tolerance, horizon if horizon > 0 else period)


FIGURES = ("mode", "exact", "port_model", "node_port_models", "completed", "instances",
           "incomplete", "unfinished", "startup_skipped", "end_time", "horizon",
           "measured_throughput", "throughput", "makespan")
"""What the closed form must give as the replay of every period does
(``completion_times`` are those of its short replay, by its contract)."""


def differences(whole: Report, closed: Report) -> list[tuple[str, Any, Any]]:
    """What ``closed`` gives unlike ``whole``: figures, then the violation rows."""
    found = [(name, getattr(whole, name), getattr(closed, name)) for name in FIGURES
             if getattr(whole, name) != getattr(closed, name)]
    if whole.violations != closed.violations:
        found.append(("violations", [v for v in whole.violations if v not in closed.violations],
                      [v for v in closed.violations if v not in whole.violations]))
    return found


_TIME = re.compile(r"t=[0-9./e+-]+")
_HELD = re.compile(r"holds only \S+ of")


def _row(v: Violation) -> tuple[Any, ...]:
    """A violation without its times (a float prints them otherwise): the rest must match."""
    detail = _HELD.sub("holds only ? of", _TIME.sub("t=?", v.detail))
    return (v.kind, v.node, v.events, v.resource, detail)


def float_differences(exact: Report, floats: Report) -> list[tuple[str, Any, Any]]:
    """What a float replay gives unlike the exact one (times within 10^-9)."""
    names = ("completed", "instances", "incomplete", "unfinished", "startup_skipped",
             "throughput")
    found = [(name, getattr(exact, name), getattr(floats, name)) for name in names
             if getattr(exact, name) != getattr(floats, name)]
    if abs(float(exact.end_time or 0) - float(floats.end_time or 0)) > 1e-9:
        found.append(("end_time", exact.end_time, floats.end_time))
    rows = sorted(map(_row, exact.violations)), sorted(map(_row, floats.violations))
    times = ([float(v.time) for v in exact.violations], [v.time for v in floats.violations])
    if rows[0] != rows[1] or any(abs(a - b) > 1e-9 for a, b in zip(*times, strict=True)):
        found.append(("violations", rows[0], rows[1]))
    return found


def check(seed: int) -> list[tuple[str, Any, Any]]:
    """Every difference the closed form (and a float replay) shows on ``seed``'s case:
    ``replay_periodic``; ``replay`` past its cap (lowered so that the case's horizon
    exceeds it); the float replay against the exact one."""
    case = make_case(seed)
    schedule, h = case.schedule, case.horizon
    try:
        whole = replay(schedule, horizon=h, exact=case.exact, tolerance=case.tolerance)
    except ScheduleError as err:  # float time cannot resolve it: nothing to compare
        if err.path != "float":
            raise
        return []
    closed = replay_periodic(schedule, h, exact=case.exact, tolerance=case.tolerance)
    found = differences(whole, closed)
    assert schedule.period is not None
    events = math.ceil(h / schedule.period) * len(schedule.events)
    if not found and events > (math.ceil(settle(schedule) / schedule.period) + 4) * len(
            schedule.events):
        capped = with_cap(events - 1, lambda: replay(
            schedule, horizon=h, exact=case.exact, tolerance=case.tolerance))
        found = [(f"replay past the cap: {name}", a, b)
                 for name, a, b in differences(whole, capped)]
    if not found and not case.exact:
        found = [(f"float: {name}", a, b) for name, a, b in float_differences(
            replay(schedule, horizon=h), whole)]
    return found


def with_cap(cap: int, call: Callable[[], Report]) -> Report:
    """``call()`` with :data:`engine.MAX_REPLAY_EVENTS` at ``cap``."""
    saved = engine.MAX_REPLAY_EVENTS
    engine.MAX_REPLAY_EVENTS = cap
    try:
        return call()
    finally:
        engine.MAX_REPLAY_EVENTS = saved
