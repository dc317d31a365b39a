"""From weighted paths or trees to a replayable periodic schedule.

The steps of DESIGN.md, "Steady state", 4 to 6, common to every collective:

1. **Period.**  ``T`` is the least common multiple of the denominators of
   every weight and every per-period busy time (RR-4872, section 3.1: "the
   least common multiple of the denominators of all the variables"); with a
   fixed period ``T_fixed`` each unit instead carries ``floor(w · T_fixed)``
   instances (section 4.6, Proposition 4: loss at most ``#units / T_fixed``).
2. **Orchestration of one period** (section 3.3 and the slides' "Building a
   schedule"): the bipartite graph senders × receivers, each edge weighted by
   its busy time in the period, is decomposed into matchings whose durations
   sum to the largest port load (König's edge-colouring theorem, weighted:
   the graph is completed into a regular one with dummy edges, then perfect
   matchings of its support are peeled, Birkhoff–von Neumann style).
   Matchings run one after the other; a link sends only during the matchings
   that contain it, so a message may be split across matchings (``part``).
   Without splitting, the period is multiplied by the least common multiple of
   the denominators of the numbers of messages per matching (the scatter toy:
   12 becomes 48).
3. **Pipelining.**  The times inside a period are fixed first; then every
   operation of an instance gets the smallest ``lag: d`` (it runs ``d``
   periods after its instance started) such that it starts after all its
   inputs have fully arrived (at most its depth in the path or tree, often
   less).  The resource pattern of a period does not depend on the lags, so
   the schedule is valid; the lags only set the start-up length (the
   constant ``C`` of ``completed(K) >= TP·K − C``).  Computations run back to
   back on the CPU, which overlaps communication.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from portsim.planners.lp._bmatching import peel_matchings, peel_platform
from portsim.planners.lp._solve import Deadline
from portsim.simulator.items import Item
from portsim.simulator.numbers import common_denominator, format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform
from portsim.simulator.schedule import Compute, Event, Schedule, Send

__all__ = ["DEFAULT_MAX_EVENTS", "ComputeTask", "PeriodicPlan", "SendTask", "Unit",
           "build_periodic", "peel_matchings"]

DEFAULT_MAX_EVENTS = 20_000
"""Cap on the operations per period of an exact (lcm) period; above it the
fixed-period approximation is used, with a warning suggesting ``period:``."""



@dataclass(frozen=True, slots=True)
class SendTask:
    """Send ``item`` (instance 0 form) over ``src -> dst`` at depth ``depth``."""

    src: NodeId
    dst: NodeId
    item: Item
    depth: int


@dataclass(frozen=True, slots=True)
class ComputeTask:
    """Reduction task ``inputs -> output`` on ``node`` at depth ``depth``."""

    node: NodeId
    inputs: tuple[Item, ...]
    output: Item
    depth: int


@dataclass(frozen=True)
class Unit:
    """A weighted path or tree: ``weight`` instances per time unit follow it."""

    weight: Fraction
    sends: tuple[SendTask, ...]
    computes: tuple[ComputeTask, ...] = ()


@dataclass(frozen=True)
class PeriodicPlan:
    """The schedule and what was decided on the way."""

    schedule: Schedule
    period: Fraction
    instances_per_period: int
    throughput: Fraction
    matchings: int
    notes: tuple[str, ...] = field(default=())


_PHASE = "periodic schedule"
"""The phase named when the deadline passes during :func:`build_periodic`."""


def _producers(unit: Unit) -> list[list[int]]:
    """For each operation of ``unit`` (sends, then computes), the operations making its inputs."""
    made: dict[tuple[Item, NodeId], int] = {}
    for i, s in enumerate(unit.sends):
        made[s.item, s.dst] = i
    for ci, c in enumerate(unit.computes):
        made[c.output, c.node] = len(unit.sends) + ci
    out: list[list[int]] = []
    for s in unit.sends:
        found = made.get((s.item, s.src))
        out.append([] if found is None else [found])
    for c in unit.computes:
        out.append([made[x, c.node] for x in c.inputs if (x, c.node) in made])
    return out


def _depth(unit: Unit, index: int) -> int:
    if index < len(unit.sends):
        return unit.sends[index].depth
    return unit.computes[index - len(unit.sends)].depth


def _lcm(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


FIXED_PERIOD_CANDIDATES = 2_000
"""Most periods :func:`_best_fixed_period` evaluates (the longest first)."""


def _best_fixed_period(groups: Sequence[Sequence[Unit]], per_time: Fraction,
                       max_events: int) -> Fraction:
    """The fixed period carrying the most instances per time unit within ``max_events``.

    ``T0 = floor(max_events / per_time)`` always fits the cap, but Proposition
    4 rounds every unit's ``weight × T`` down, so light units carry nothing in
    a short period (the reduce on 8 DGX A100 servers carried 2/21 of its
    64/63 at ``T0 = 42``), and the rounded-down counts need fewer operations
    than ``per_time × T``.  The instances per period only change where some
    ``weight × T`` reaches an integer, so the candidates are those periods
    ``ceil(j / weight)`` (and ``T0``) up to ``(max_events + Σ operations of
    the units) / per_time``, beyond which no rounding fits the cap; the
    longest :data:`FIXED_PERIOD_CANDIDATES` are evaluated and the one with the
    most instances per time unit whose operations fit the cap is kept (the
    shortest on ties).  The loss stays within Proposition 4's ``units / T``
    for the period chosen.
    """
    base = max(1, math.floor(max_events / per_time))
    ops = [[len(u.sends) + len(u.computes) for u in group] for group in groups]
    longest = math.floor((max_events + sum(map(sum, ops))) / per_time)
    jumps: set[int] = {base}
    for group in groups:
        for u in group:
            if u.weight <= 0:
                continue
            top = math.floor(u.weight * longest)
            for j in range(max(1, top - FIXED_PERIOD_CANDIDATES), top + 1):
                jumps.add(math.ceil(j / u.weight))
    candidates = sorted((t for t in jumps if 1 <= t <= longest), reverse=True)
    best_rate, best = Fraction(-1), base
    for period in sorted({base, *candidates[:FIXED_PERIOD_CANDIDATES]}):
        counts, n = _counts(groups, Fraction(period), False)
        events = sum(c * o for row, o_row in zip(counts, ops, strict=True)
                     for c, o in zip(row, o_row, strict=True))
        if events <= max_events and Fraction(n, period) > best_rate:
            best_rate, best = Fraction(n, period), period
    return Fraction(best)


def _counts(groups: Sequence[Sequence[Unit]], period: Fraction, exact: bool
            ) -> tuple[list[list[int]], int]:
    """Instances per period of each unit, and instances per period overall."""
    counts = []
    for group in groups:
        if exact:
            row = [int(u.weight * period) for u in group]
        else:
            row = [math.floor(u.weight * period) for u in group]
        counts.append(row)
    n = min(sum(row) for row in counts) if counts else 0
    for row in counts:  # trim every group down to n (fixed period only)
        extra = sum(row) - n
        for i in range(len(row) - 1, -1, -1):
            if extra <= 0:
                break
            cut = min(extra, row[i])
            row[i] -= cut
            extra -= cut
    return counts, n


OpKey = tuple[int, int, int]
"""An operation of one instance: (unit index, instance slot #j, operation index in the unit)."""

LinkJobs = dict[tuple[NodeId, NodeId], list[tuple[Item, OpKey]]]
"""Per link, its transfers in one period: the item (of its slot) and the operation."""

CpuJobs = dict[NodeId, list[tuple[tuple[Item, ...], Item, OpKey]]]
"""Per node, its reductions in one period: inputs, output (of its slot) and the operation."""


@dataclass(frozen=True, slots=True)
class _Period:
    """The period chosen, with the instances each unit carries in it."""

    period: Fraction
    exact: bool  # the lcm period (else a fixed one, Proposition 4)
    counts: tuple[tuple[int, ...], ...]  # per group, per unit: instances per period
    instances: int  # instances per period
    throughput: Fraction  # what the period achieves
    notes: tuple[str, ...]


class _Placed(NamedTuple):
    """One event of the period, in integer ticks, before its lag is known.

    A send when ``link`` is set (``piece`` of its whole duration ``whole``,
    both in ticks), else a compute on ``node``.  A NamedTuple: immutable and
    created five times faster than a frozen dataclass.
    """

    key: OpKey
    start: int
    link: tuple[NodeId, NodeId] | None
    item: Item | None  # send
    piece: int  # send: its duration in ticks
    whole: int  # send: the message's duration in ticks
    node: NodeId | None  # compute
    inputs: tuple[Item, ...]  # compute
    output: Item | None  # compute


def build_periodic(
    platform: Platform,
    operation: Operation,
    groups: Sequence[Sequence[Unit]],
    throughput: Fraction,
    *,
    split: bool = True,
    fixed_period: Fraction | None = None,
    max_events: int = DEFAULT_MAX_EVENTS,
    matchings: Sequence[tuple[Fraction, Sequence[tuple[NodeId, NodeId]]]] | None = None,
    deadline: Deadline | None = None,
) -> PeriodicPlan:
    """Build the periodic schedule of weighted units (see the module notes).

    Parameters
    ----------
    platform, operation:
        The problem (operation resolved).
    groups:
        Units grouped so that, in every group, the weights sum to
        ``throughput``: every instance takes exactly one unit of each group
        (scatter: one group of paths per target; reduce: one group of trees).
    throughput:
        The exact throughput of the units.
    split:
        Allow messages split across matchings (``part``); else scale the period.
    fixed_period:
        Use this period (Proposition 4) instead of the exact one.
    max_events:
        Cap on the operations per period of the exact period.
    matchings:
        The orchestration of one time unit, when the caller has it: weighted
        sets of links active together (a link listed twice runs two
        transfers at once), run one after the other, each for ``weight ×
        period``; every link's busy time must fit in its matchings.  By
        default the period's link loads are peeled (:func:`peel_matchings`).
    deadline:
        The planner call's deadline, checked in every loop of the build.

    Returns
    -------
    PeriodicPlan

    Raises
    ------
    TimeLimitReached
        When ``deadline`` passes, naming the phase ``"periodic schedule"``.

    Notes
    -----
    The steps: choose the period (:func:`_choose_period`), list every
    link's and CPU's operations of one period (:func:`_jobs`), orchestrate
    the links (:func:`_orchestrate`, the one place the loads are peeled),
    lengthen the period for whole messages when asked
    (:func:`_whole_messages`), lay the period out (:func:`_lay_out`) and
    pipeline it (:func:`_lags`).  Times inside the period are integers, in
    ticks of ``1 / D`` with ``D`` the common denominator of the period,
    every duration and every matching: exact, and far cheaper than
    ``Fraction`` arithmetic.  They become ``Fraction`` only in the events
    (:func:`_events`).
    """
    clock = deadline if deadline is not None else Deadline()
    size = operation.size
    chosen = _choose_period(platform, groups, throughput, size, fixed_period, max_events)
    notes = list(chosen.notes)
    period, n = chosen.period, chosen.instances
    units = [u for group in groups for u in group]
    depths = [[_depth(u, i) for i in range(len(u.sends) + len(u.computes))] for u in units]
    link_jobs, cpu_jobs = _jobs(groups, chosen.counts, depths, 1, clock)
    duration = {e: size * platform.cost(*e) for e in link_jobs}
    steps = _orchestrate(platform, link_jobs, duration, period, depths, matchings, clock)
    if not split:
        scale, note = _whole_messages(link_jobs, cpu_jobs, duration, steps, period, max_events)
        if note:
            notes.append(note)
        if scale > 1:
            period *= scale
            n *= scale
            link_jobs, cpu_jobs = _jobs(groups, chosen.counts, depths, scale, clock)
            steps = [(d * scale, links) for d, links in steps]
    compute_time = {node: platform.compute_time(node) for node in cpu_jobs}
    tick = common_denominator([period, *duration.values(), *compute_time.values(),
                               *(d for d, _ in steps)])

    def ticks(v: Fraction) -> int:
        return v.numerator * (tick // v.denominator)

    placed, span = _lay_out(link_jobs, cpu_jobs, {e: ticks(d) for e, d in duration.items()},
                            {node: ticks(w) for node, w in compute_time.items()},
                            [(ticks(d), links) for d, links in steps], clock)
    lags = _lags(span, depths, [_producers(u) for u in units], ticks(period), clock)
    events = _events(placed, span, lags, tick)
    schedule = Schedule(platform, operation, events, period=period,
                        instances_per_period=max(n, 1))
    return PeriodicPlan(schedule, period, n, chosen.throughput, len(steps), tuple(notes))


def _choose_period(platform: Platform, groups: Sequence[Sequence[Unit]], throughput: Fraction,
                   size: Fraction, fixed_period: Fraction | None, max_events: int) -> _Period:
    """The exact (lcm) period, or a fixed one (given, or when the exact one is over the cap).

    Warns when the cap sends the exact period to a fixed one.
    """
    notes: list[str] = []
    exact = fixed_period is None
    period = Fraction(1)
    if exact:
        denominators = []
        for group in groups:
            for u in group:
                denominators.append(u.weight.denominator)
                for s in u.sends:
                    denominators.append((u.weight * size * platform.cost(s.src, s.dst))
                                        .denominator)
                for c in u.computes:
                    denominators.append((u.weight * platform.compute_time(c.node))
                                        .denominator)
        period = Fraction(_lcm(denominators))
        per_time = sum((u.weight * (len(u.sends) + len(u.computes))
                        for group in groups for u in group), Fraction(0))
        if per_time * period > max_events:
            n_units = sum(len(g) for g in groups)
            fixed_period = _best_fixed_period(groups, per_time, max_events)
            text = (f"the exact period {format_rational(period)} would hold "
                    f"{format_rational(per_time * period)} operations per period "
                    f"(cap {max_events}); using the fixed period "
                    f"{format_rational(fixed_period)} instead (Proposition 4: throughput "
                    f"loss at most {n_units}/{format_rational(fixed_period)}); choose "
                    f"another with the option 'period:'")
            warnings.warn(text, stacklevel=4)
            notes.append(text)
            exact = False
    if fixed_period is not None:
        period = Fraction(fixed_period)
    counts, n = _counts(groups, period, exact)
    if not exact and n == 0 and groups and all(groups):
        # A fixed period too short for any unit to carry one whole instance
        # would be a schedule of nothing: lengthen it to the shortest period
        # in which every group carries one (the unit of largest weight).
        shortest = max(min(math.ceil(1 / u.weight) for u in group if u.weight > 0)
                       for group in groups)
        notes.append(f"the fixed period {format_rational(period)} holds no whole instance; "
                     f"lengthened to {shortest}, the shortest that holds one")
        period = Fraction(shortest)
        counts, n = _counts(groups, period, exact)
    if not exact:
        achieved = Fraction(n) / period
        n_units = sum(len(g) for g in groups)
        notes.append(f"fixed period {format_rational(period)}: throughput "
                     f"{format_rational(achieved)} of the optimal "
                     f"{format_rational(throughput)} (loss "
                     f"{format_rational(throughput - achieved)} <= {n_units}/"
                     f"{format_rational(period)}, Proposition 4)")
        throughput = achieved
    return _Period(period, exact, tuple(tuple(row) for row in counts), n, throughput,
                   tuple(notes))


def _jobs(groups: Sequence[Sequence[Unit]], counts: Sequence[Sequence[int]],
          depths: list[list[int]], scale: int, clock: Deadline) -> tuple[LinkJobs, CpuJobs]:
    """Every link's transfers and every CPU's reductions in one period (``scale`` times
    the instances of ``counts``), shallow operations first."""
    link_jobs: LinkJobs = defaultdict(list)
    cpu_jobs: CpuJobs = defaultdict(list)
    uid = 0
    for group, row in zip(groups, counts, strict=True):
        slot = 0
        for unit, count in zip(group, row, strict=True):
            clock.check(_PHASE)
            if count == 0:  # no instance: the unit's links and CPUs get no job
                uid += 1
                continue
            sends = [(link_jobs[s.src, s.dst], s.item, oi) for oi, s in enumerate(unit.sends)]
            computes = [(cpu_jobs[c.node], c.inputs, c.output, len(unit.sends) + ci)
                        for ci, c in enumerate(unit.computes)]
            for j in range(slot, slot + count * scale):
                for jobs, item, oi in sends:
                    jobs.append((item.with_instance(j), (uid, j, oi)))
                for cpu, inputs, output, oi in computes:
                    cpu.append((tuple(x.with_instance(j) for x in inputs),
                                output.with_instance(j), (uid, j, oi)))
            slot += count * scale
            uid += 1
    # Shallow operations first on every link and CPU (and, in _orchestrate,
    # the matchings of shallow links first): deeper ones then often find
    # their inputs earlier in the same period, so fewer lags and a shorter
    # start-up.  Measured on eight allreduce schedules of 6-8 nodes (fixed
    # periods): largest lag 13 -> 10, completed over carried at 100 periods
    # at least 0.894 -> 0.918.
    for jobs in link_jobs.values():
        jobs.sort(key=lambda job: (depths[job[1][0]][job[1][2]], job[1][1]))
    for cpu_list in cpu_jobs.values():
        cpu_list.sort(key=lambda job: (depths[job[2][0]][job[2][2]], job[2][1]))
    return link_jobs, cpu_jobs


def _orchestrate(platform: Platform, link_jobs: LinkJobs,
                 duration: dict[tuple[NodeId, NodeId], Fraction],
                 period: Fraction, depths: list[list[int]],
                 matchings: Sequence[tuple[Fraction, Sequence[tuple[NodeId, NodeId]]]] | None,
                 clock: Deadline) -> list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]:
    """The matchings of one period, in the order they run (shallow links first).

    The caller's matchings (per time unit) scaled to the period, else the
    period's link loads peeled into matchings: the one place of
    :func:`build_periodic` that peels (``platform`` tells the ports of every
    node, for a peel that depends on them).
    """
    steps: list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]
    if matchings is None:
        loads = {e: len(jobs) * duration[e] for e, jobs in link_jobs.items()}
        steps = peel_platform(platform, loads, deadline=clock)  # b-matchings
    else:
        steps = [(w * period, [e for e in links if e in duration])
                 for w, links in matchings if w > 0]
    # Matchings whose links carry shallow operations first (their mean depth).
    mean_depth = {e: sum(depths[key[0]][key[2]] for _, key in jobs) / len(jobs)
                  for e, jobs in link_jobs.items() if jobs}
    return sorted(steps, key=lambda m: (
        sum(mean_depth.get(e, 0) for e in m[1]) / max(1, len(m[1]))))


def _whole_messages(link_jobs: LinkJobs, cpu_jobs: CpuJobs,
                    duration: dict[tuple[NodeId, NodeId], Fraction],
                    steps: Sequence[tuple[Fraction, Sequence[tuple[NodeId, NodeId]]]],
                    period: Fraction, max_events: int) -> tuple[int, str]:
    """How many times longer the period must be for every message to be sent whole
    (1, with a note and a warning, when that is over the cap)."""
    denoms = [(d / duration[e]).denominator for d, links in steps for e in links]
    scale = _lcm(denoms)
    planned = sum(len(v) for v in link_jobs.values()) + sum(len(v) for v in cpu_jobs.values())
    if planned * scale > max_events:
        text = (f"keeping messages whole needs a period {scale} times longer "
                f"({format_rational(period * scale)}), over the cap of {max_events} "
                f"operations per period: messages are split instead")
        warnings.warn(text, stacklevel=4)
        return 1, text
    return scale, ""


def _lay_out(link_jobs: LinkJobs, cpu_jobs: CpuJobs, duration: dict[tuple[NodeId, NodeId], int],
             compute_time: dict[NodeId, int],
             steps: Sequence[tuple[int, Sequence[tuple[NodeId, NodeId]]]], clock: Deadline
             ) -> tuple[list[_Placed], dict[OpKey, tuple[int, int]]]:
    """One period laid out, in ticks: the events, and per operation its first start
    and last end.

    Computations run back to back on their CPU (zero-time ones all at 0);
    the matchings run one after the other, and every link sends its
    transfers in order during the matchings that contain it, a message
    split where a matching ends.
    """
    placed: list[_Placed] = []
    span: dict[OpKey, tuple[int, int]] = {}

    def record(event: _Placed, end: int) -> None:
        placed.append(event)
        start, key = event.start, event.key
        found = span.get(key)
        span[key] = (start, end) if found is None else (min(found[0], start),
                                                        max(found[1], end))

    for node, jobs in cpu_jobs.items():
        clock.check(_PHASE)
        w = compute_time[node]
        t = 0
        for inputs, output, key in jobs:
            at = 0 if w == 0 else t  # zero-time computes at 0: they may share it
            record(_Placed(key, at, None, None, 0, 0, node, inputs, output), at + w)
            t += w
    intervals: dict[tuple[NodeId, NodeId], list[tuple[int, int]]] = defaultdict(list)
    t = 0
    for d, links in steps:
        for e in links:
            intervals[e].append((t, t + d))
        t += d
    for e, transfers in link_jobs.items():
        clock.check(_PHASE)
        d = duration[e]
        slots = intervals[e]
        k = 0
        pos = slots[0][0]
        for item, key in transfers:
            left = d
            while left > 0:
                end = slots[k][1]
                if pos >= end:
                    k += 1
                    pos = slots[k][0]
                    continue
                piece = min(left, end - pos)
                record(_Placed(key, pos, e, item, piece, d, None, (), None), pos + piece)
                pos += piece
                left -= piece
    return placed, span


def _lags(span: dict[OpKey, tuple[int, int]], depths: list[list[int]],
          producers: list[list[list[int]]], period: int, clock: Deadline) -> dict[OpKey, int]:
    """Pipelining: every operation's lag, the first period in which it starts after
    all its inputs have fully arrived (RR-4872, section 3.4: buffers fill during
    start-up).  Operations come in depth order; times in ticks."""
    lag: dict[OpKey, int] = {}
    order = sorted(span, key=lambda key: (key[0], key[1], depths[key[0]][key[2]]))
    for done, key in enumerate(order):
        if done % 256 == 0:
            clock.check(_PHASE)
        uid, j, oi = key
        ready = 0
        for pi in producers[uid][oi]:
            produced = (uid, j, pi)
            ready = max(ready, lag[produced] * period + span[produced][1])
        # The smallest lag >= 0 with lag * period >= ready - first: a ceiling.
        lag[key] = max(0, -((span[key][0] - ready) // period))
    return lag


def _events(placed: list[_Placed], span: dict[OpKey, tuple[int, int]], lags: dict[OpKey, int],
            tick: int) -> tuple[Event, ...]:
    """The schedule's events: times back to ``Fraction`` (ticks of ``1 / tick``), zero-time
    computes first (they may share the instant 0).

    The one loop over every event of the period: each distinct start and part
    becomes one ``Fraction``, shared by its events (a ``Fraction`` is slow to
    make, and the events of a period share a few thousand starts).
    """
    starts: dict[int, Fraction] = {}
    parts: dict[tuple[int, int], Fraction] = {}
    whole = _WHOLE
    events: list[Event] = []
    zero_time: list[Event] = []
    add, add_zero_time = events.append, zero_time.append
    for key, at, link, item, piece, length, node, inputs, output in placed:
        start = starts.get(at)
        if start is None:
            start = starts[at] = Fraction(at, tick)
        if link is not None:
            if piece == length:
                part = whole
            else:
                found = parts.get((piece, length))
                if found is None:
                    found = parts[piece, length] = Fraction(piece, length)
                part = found
            add(Send(link[0], link[1], item, start, part, lags[key]))  # type: ignore[arg-type]
        else:
            first, last = span[key]
            (add_zero_time if first == last else add)(
                Compute(node, inputs, output, start, lags[key]))  # type: ignore[arg-type]
    return (*zero_time, *events)


_WHOLE: Fraction = Send.__dataclass_fields__["part"].default  # type: ignore[assignment]
"""The part of a whole message: the default of :class:`Send` (which the engine
recognises by identity), shared by every whole message."""
