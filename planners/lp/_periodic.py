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
   A link whose ports never bind (both ends have at least as many ports as
   links used on that side, e.g. every link of a ``multiport`` fabric) needs
   no matching: it only carries one transfer at a time.
3. **Pipelining.**  Every operation of an instance gets a ``lag: d`` (it
   runs ``d`` periods after its instance started): the smallest such that it
   starts after all its inputs have fully arrived, at most its depth in the
   path or tree.  The resource pattern of a period does not depend on the
   lags, so the schedule is valid; the lags only set the start-up length
   (the constant ``C`` of ``completed(K) >= TP·K − C``).  Which operation
   takes which place of its resource in the period is chosen for short lags
   by list scheduling, as in modulo scheduling (Rau, MICRO 1994): in the
   order the operations become ready, each in the first place free after
   its inputs arrive, a link in matchings in its k-th transfer, a CPU or an
   unbound link wherever it is free.  Computations overlap communication.
"""

from __future__ import annotations

import bisect
import heapq
import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from portsim.planners.lp._bmatching import peel_matchings, peel_platform
from portsim.planners.lp._solve import Deadline
from portsim.simulator.items import Item
from portsim.simulator.numbers import common_denominator, format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform, PortKind
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


def _heights(producers: list[list[int]]) -> list[int]:
    """For each operation of a unit, the most operations on a chain from it to the unit's end."""
    consumers: list[list[int]] = [[] for _ in producers]
    for oi, found in enumerate(producers):
        for pi in found:
            consumers[pi].append(oi)
    height = [0] * len(producers)
    pending = [len(c) for c in consumers]
    stack = [oi for oi, n in enumerate(pending) if n == 0]
    while stack:
        oi = stack.pop()
        height[oi] = 1 + max((height[c] for c in consumers[oi]), default=0)
        for pi in producers[oi]:
            pending[pi] -= 1
            if pending[pi] == 0:
                stack.append(pi)
    return height


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
    for the period chosen.  When no period fits the cap (one instance alone
    is over it), ``T0`` (the caller says so in its notes).
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
        counts, n = _counts(groups, Fraction(period))
        events = sum(c * o for row, o_row in zip(counts, ops, strict=True)
                     for c, o in zip(row, o_row, strict=True))
        if events <= max_events and Fraction(n, period) > best_rate:
            best_rate, best = Fraction(n, period), period
    return Fraction(best)


def _counts(groups: Sequence[Sequence[Unit]], period: Fraction
            ) -> tuple[list[list[int]], int]:
    """Instances per period of each unit, and instances per period overall.

    ``floor(weight × period)``: with the exact period every product is an
    integer, so the floor is the product itself.
    """
    counts = []
    # floor(weight × period) in integers (weights are >= 0; with the exact
    # period every product is an integer): Fraction products cost a fifth of
    # a build that tries hundreds of fixed periods.
    pn, pd = period.numerator, period.denominator
    for group in groups:
        counts.append([(u.weight.numerator * pn) // (u.weight.denominator * pd)
                       for u in group])
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
    steps = _orchestrate(platform, link_jobs, duration, period, depths, matchings, split, clock)
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
                            [(ticks(d), links) for d, links in steps],
                            [_producers(u) for u in units], ticks(period), clock)
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
    given = fixed_period is not None
    exact = not given
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
    counts, n = _counts(groups, period)
    if not exact and n == 0 and groups and all(groups):
        # A fixed period too short for any unit to carry one whole instance
        # would be a schedule of nothing: lengthen it to the shortest period
        # in which every group carries one (the unit of largest weight).
        shortest = max(min(math.ceil(1 / u.weight) for u in group if u.weight > 0)
                       for group in groups)
        notes.append(f"the fixed period {format_rational(period)} holds no whole instance; "
                     f"lengthened to {shortest}, the shortest that holds one")
        period = Fraction(shortest)
        counts, n = _counts(groups, period)
    if not exact:
        events = sum(c * (len(u.sends) + len(u.computes)) for row, group in
                     zip(counts, groups, strict=True) for c, u in zip(row, group, strict=True))
        if events > max_events:
            why = ("the period given" if given else
                   "no integer period within the cap holds an instance")
            text = (f"the fixed period {format_rational(period)} holds {events} operations, "
                    f"over the cap of {max_events} operations per period ({why})")
            warnings.warn(text, stacklevel=4)
            notes.append(text)
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
    # Shallow operations first on every link and CPU: the order the events
    # are listed in (where each runs is _place's, whatever this order).
    for jobs in link_jobs.values():
        jobs.sort(key=lambda job: (depths[job[1][0]][job[1][2]], job[1][1]))
    for cpu_list in cpu_jobs.values():
        cpu_list.sort(key=lambda job: (depths[job[2][0]][job[2][2]], job[2][1]))
    return link_jobs, cpu_jobs


def _orchestrate(platform: Platform, link_jobs: LinkJobs,
                 duration: dict[tuple[NodeId, NodeId], Fraction],
                 period: Fraction, depths: list[list[int]],
                 matchings: Sequence[tuple[Fraction, Sequence[tuple[NodeId, NodeId]]]] | None,
                 split: bool, clock: Deadline
                 ) -> list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]:
    """The matchings of one period, in the order they run (shallow links first).

    The caller's matchings (per time unit) scaled to the period, else the
    period's link loads peeled into matchings: the one place of
    :func:`build_periodic` that peels (``platform`` tells the ports of every
    node, for a peel that depends on them).  When messages may be split,
    links whose ports never bind (:func:`_unbound_links`) are left out of
    every matching: they run on their own, each transfer whole when it is
    ready (:func:`_lay_out`).  Whole messages keep every link in matchings,
    for the period of the papers' construction (the scatter toy's 48).
    """
    unbound = _unbound_links(platform, link_jobs, duration, period) if split else set()
    steps: list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]
    if matchings is None:
        loads = {e: len(jobs) * duration[e] for e, jobs in link_jobs.items()
                 if e not in unbound}
        steps = peel_platform(platform, loads, deadline=clock)  # b-matchings
    else:
        steps = [(w * period, kept) for w, links in matchings if w > 0
                 if (kept := [e for e in links if e in duration and e not in unbound])]
    # Matchings whose links carry shallow operations first (their mean depth).
    mean_depth = {e: sum(depths[key[0]][key[2]] for _, key in jobs) / len(jobs)
                  for e, jobs in link_jobs.items() if jobs}
    return sorted(steps, key=lambda m: (
        sum(mean_depth.get(e, 0) for e in m[1]) / max(1, len(m[1]))))


def _unbound_links(platform: Platform, link_jobs: LinkJobs,
                   duration: dict[tuple[NodeId, NodeId], Fraction],
                   period: Fraction) -> set[tuple[NodeId, NodeId]]:
    """Links whose ports never bind: at most one transfer at a time on the link is
    then the only constraint on its transfers, and they need no matching.

    A side of a node (its sends, or its receives) never binds when it has at
    most as many links used in the period as ports (``multiport`` without
    ``k``, ``multiport:k`` with ``k`` at least those links, a one-port node
    with one link used on that side; a unidirectional node with one link used
    in all): every link carries one transfer at a time, so no more transfers
    ever run at once there than the port model allows.  A link both of whose
    ends never bind, and whose transfers fit in the period, is unbound.
    """
    used = [e for e, jobs in link_jobs.items() if jobs]
    sends: dict[NodeId, int] = defaultdict(int)
    receives: dict[NodeId, int] = defaultdict(int)
    for u, v in used:
        sends[u] += 1
        receives[v] += 1

    def free(node: NodeId, mine: int, side: int) -> bool:
        model = platform.port_model_of(node)
        if model.kind is PortKind.UNIDIRECTIONAL:
            return sends[node] + receives[node] <= 1
        return mine <= model.ports(side)

    out: set[tuple[NodeId, NodeId]] = set()
    for u, v in used:
        if len(link_jobs[u, v]) * duration[u, v] > period:
            continue
        if free(u, sends[u], platform.degree(u)[0]) and free(v, receives[v],
                                                             platform.degree(v)[1]):
            out.add((u, v))
    return out


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
             steps: Sequence[tuple[int, Sequence[tuple[NodeId, NodeId]]]],
             producers: list[list[list[int]]], period: int, clock: Deadline
             ) -> tuple[list[_Placed], dict[OpKey, tuple[int, int]]]:
    """One period laid out, in ticks: the events, and per operation its first start
    and last end.

    The matchings run one after the other, and a link in matchings sends its
    transfers one after the other during the matchings that contain it, a
    message split where a matching ends: that fixes the link's *slots* (its
    k-th transfer), whichever transfer takes each.  A CPU, and a link in no
    matching (its ports never bind, :func:`_unbound_links`), runs its
    operations whole wherever it is free in the period (zero-time
    computations all at 0, where they may share the instant).  Each
    resource runs one operation at a time within its matchings whatever
    operation goes where, so the schedule is valid either way; where they
    go sets the lags (:func:`_lags`), hence the start-up: :func:`_place`
    decides it.
    """
    intervals: dict[tuple[NodeId, NodeId], list[tuple[int, int]]] = defaultdict(list)
    t = 0
    for d, links in steps:
        for e in links:
            intervals[e].append((t, t + d))
        t += d
    rows: dict[tuple[NodeId, NodeId], list[_Pieces]] = {}
    for e, transfers in link_jobs.items():
        clock.check(_PHASE)
        if e not in intervals:
            continue
        d = duration[e]
        free = intervals[e]
        k = 0
        pos = free[0][0]
        row: list[_Pieces] = []
        for _ in transfers:
            pieces: _Pieces = []
            left = d
            while left > 0:
                end = free[k][1]
                if pos >= end:
                    k += 1
                    pos = free[k][0]
                    continue
                piece = min(left, end - pos)
                pieces.append((pos, piece))
                pos += piece
                left -= piece
            row.append(pieces)
        rows[e] = row
    jobs_of: dict[_Resource, list[OpKey]] = {}
    for node, cpu_list in cpu_jobs.items():
        jobs_of[node] = [key for _, _, key in cpu_list]
    for e, transfers in link_jobs.items():
        jobs_of[e] = [key for _, key in transfers]

    resources: dict[_Resource, _Slots | _Gaps] = {}
    for node, cpu_list in cpu_jobs.items():
        w = compute_time[node]
        resources[node] = (_Gaps(period, w, len(cpu_list)) if w > 0
                           else _Slots([[(0, 0)]] * len(cpu_list), period))
    for e, transfers in link_jobs.items():
        resources[e] = (_Slots(rows[e], period) if e in rows
                        else _Gaps(period, duration[e], len(transfers)))
    where = _place(resources, jobs_of, producers, [_heights(p) for p in producers], clock)
    return _events_of(link_jobs, cpu_jobs, duration, compute_time, where, clock)


def _events_of(link_jobs: LinkJobs, cpu_jobs: CpuJobs,
               duration: dict[tuple[NodeId, NodeId], int], compute_time: dict[NodeId, int],
               where: dict[OpKey, _Place], clock: Deadline
               ) -> tuple[list[_Placed], dict[OpKey, tuple[int, int]]]:
    """The events of a layout (``where`` every operation runs) and every operation's span."""
    placed: list[_Placed] = []
    span: dict[OpKey, tuple[int, int]] = {}
    for node, cpu_list in cpu_jobs.items():
        clock.check(_PHASE)
        w = compute_time[node]
        for inputs, output, key in cpu_list:
            at = where[key] if w else 0
            assert isinstance(at, int)
            placed.append(_Placed(key, at, None, None, 0, 0, node, inputs, output))
            span[key] = (at, at + w)
    for e, transfers in link_jobs.items():
        clock.check(_PHASE)
        d = duration[e]
        for item, key in transfers:
            found = where[key]
            if isinstance(found, int):  # one piece, the whole message
                placed.append(_Placed(key, found, e, item, d, d, None, (), None))
                span[key] = (found, found + d)
                continue
            for at, piece in found:
                placed.append(_Placed(key, at, e, item, piece, d, None, (), None))
            span[key] = (found[0][0], found[-1][0] + found[-1][1])
    return placed, span


_Resource = NodeId | tuple[NodeId, NodeId]
"""A CPU (its node) or a link."""

_Pieces = list[tuple[int, int]]
"""Where a slot runs in the period: (start, length) in ticks, in time order."""

_Place = _Pieces | int
"""Where an operation runs in the period: its slot's pieces, or its start when it runs
whole on a resource without slots (an int: no container for the garbage collector to
track, in a dict of up to ``max_events`` entries)."""


class _Slots:
    """A resource with fixed slots (the k-th transfer of a link in matchings, or
    zero-time computations at 0), each taken by one operation."""

    def __init__(self, pieces: list[_Pieces], period: int) -> None:
        self.pieces = pieces
        self.period = period
        self.starts = [p[0][0] for p in pieces]
        # Next free slot at or after k (union-find, path halving); len(pieces): none.
        self.after = list(range(len(pieces) + 1))

    def _free_from(self, k: int) -> int:
        nxt = self.after
        while nxt[k] != k:
            nxt[k] = nxt[nxt[k]]
            k = nxt[k]
        return k

    def take(self, ready: int) -> tuple[int, _Place]:
        """The free slot starting first at or after ``ready`` (a tick of any period; a
        slot recurs every period), now taken: when it ends (a tick of its period) and its
        pieces.  The slots run one after the other, so it also ends first."""
        lap, offset = divmod(ready, self.period)
        k = self._free_from(bisect.bisect_left(self.starts, offset))
        if k == len(self.starts):  # none left in this period: the first of the next
            lap += 1
            k = self._free_from(0)
        self.after[k] = k + 1
        pieces = self.pieces[k]
        return lap * self.period + pieces[-1][0] + pieces[-1][1], pieces


class _Gaps:
    """A resource that runs ``count`` operations of ``length`` ticks each, whole,
    wherever it is free in the period.

    The free time is a sorted list of gaps.  An operation takes the earliest
    start at or after its ready time (next period if need be) that leaves
    room for every operation still to come: the gaps must still hold
    ``floor(gap / length)`` operations in all, and a start aligned on
    ``length`` from the gap's beginning loses only the one place it takes.
    Since ``count × length <= period`` every operation finds a place.
    """

    def __init__(self, period: int, length: int, count: int) -> None:
        self.period = period
        self.length = length
        self.starts = [0]
        self.ends = [period]
        self.room = period // length  # operations the gaps can still hold
        self.left = count  # operations still to place

    def take(self, ready: int) -> tuple[int, _Place]:
        """The earliest start at or after ``ready`` (see the class notes), now taken:
        when it ends (a tick of its period) and its start in the period."""
        lap, offset = divmod(ready, self.period)
        at = self._take_from(offset)
        if at is None:
            lap += 1
            at = self._take_from(0)
            assert at is not None, "count x length > period"
        return lap * self.period + at + self.length, at

    def _take_from(self, offset: int) -> int | None:
        d = self.length
        starts, ends = self.starts, self.ends
        first = bisect.bisect_right(starts, offset) - 1
        if first < 0 or ends[first] < offset + d:  # the gap around offset cannot hold it
            first += 1
        # Every gap holds at least one operation (shorter ones are dropped), so
        # this loop ends at the first or second gap it looks at.
        for i in range(first, len(starts)):
            a, b = starts[i], ends[i]
            at = a if a > offset else offset
            if at + d > b:
                continue
            held = (b - a) // d
            if self.room - held + (at - a) // d + (b - at - d) // d < self.left - 1:
                at = a + -(-(at - a) // d) * d  # aligned: loses one place only
                if at + d > b:
                    continue
            self.room += (at - a) // d + (b - at - d) // d - held
            self.left -= 1
            del starts[i], ends[i]
            if b - at - d >= d:
                starts.insert(i, at + d)
                ends.insert(i, b)
            if at - a >= d:
                starts.insert(i, a)
                ends.insert(i, at)
            return at
        return None


def _place(resources: dict[_Resource, _Slots | _Gaps], jobs_of: dict[_Resource, list[OpKey]],
           producers: list[list[list[int]]], heights: list[list[int]], clock: Deadline
           ) -> dict[OpKey, _Place]:
    """Where every operation of the period runs: list scheduling on the periodic resources.

    The operations of one period are scheduled as if all their instances
    started at time 0, in the order they become ready (all their inputs
    arrived; on ties, the longest chain of operations still to follow it
    first), each taking the place of its resource that starts first at or
    after that time, in this period or a later one (every place recurs each
    period): the greedy of modulo scheduling (Rau, "Iterative modulo
    scheduling", MICRO 1994), with the period as initiation interval.  An
    operation's lag, the periods between its instance's start and its own
    (:func:`_lags`), is then as small as the places already taken allow,
    and the start-up as short.
    """
    # The resource of an operation is its unit's, whatever the instance.
    take: list[list[Callable[[int], tuple[int, _Place]] | None]] = [
        [None] * len(row) for row in producers]
    keys: list[OpKey] = []
    for r, found in jobs_of.items():
        taker = resources[r].take
        for key in found:
            take[key[0]][key[2]] = taker
        keys.extend(found)
    # Per operation of a unit: its consumers, with their number of inputs and -height.
    follow: list[list[list[tuple[int, int, int]]]] = [[[] for _ in row] for row in producers]
    for uid, row in enumerate(producers):
        for oi, made_by in enumerate(row):
            for pi in made_by:
                follow[uid][pi].append((oi, len(made_by), -heights[uid][oi]))
    heap = [(0, -heights[key[0]][key[2]], key) for key in keys if not producers[key[0]][key[2]]]
    heapq.heapify(heap)
    # Operations with two inputs or more: the inputs still to place, the latest arrival.
    waiting: dict[OpKey, int] = {}
    ready: dict[OpKey, int] = {}
    where: dict[OpKey, _Place] = {}
    push, pop = heapq.heappush, heapq.heappop
    done = 0
    while heap:
        done += 1
        if done % 256 == 0:
            clock.check(_PHASE)
        at, _, key = pop(heap)
        uid, j, oi = key
        end, where[key] = take[uid][oi](at)  # type: ignore[misc]
        for ci, inputs, rank in follow[uid][oi]:
            nxt = (uid, j, ci)
            if inputs > 1:
                left = waiting.get(nxt, inputs) - 1
                if ready.get(nxt, -1) < end:
                    ready[nxt] = end
                if left:
                    waiting[nxt] = left
                    continue
                push(heap, (ready[nxt], rank, nxt))
            else:
                push(heap, (end, rank, nxt))
    return where


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
