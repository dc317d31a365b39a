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
from dataclasses import dataclass, field, replace
from fractions import Fraction

from portsim.planners.lp._bmatching import peel_platform
from portsim.planners.lp._solve import Deadline
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational
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


def peel_matchings(loads: dict[tuple[NodeId, NodeId], Fraction], *,
                   deadline: Deadline | None = None
                   ) -> list[tuple[Fraction, list[tuple[NodeId, NodeId]]]]:
    """Decompose link busy times into matchings (weighted bipartite edge colouring).

    Parameters
    ----------
    loads:
        Busy time of each link ``(src, dst)`` in one period.

    Returns
    -------
    list of (duration, links)
        Each entry is a matching (no two links share a sender or a receiver)
        and how long it lasts; every link's durations sum to its load, and the
        durations sum to at most the largest port load (König).

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> out = peel_matchings({("a", "b"): F(2), ("a", "c"): F(1), ("d", "b"): F(1)})
    >>> sum(d for d, _ in out)
    Fraction(3, 1)
    """
    loads = {e: w for e, w in loads.items() if w > 0}
    if not loads:
        return []
    out_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    in_load: dict[NodeId, Fraction] = defaultdict(Fraction)
    for (u, v), w in loads.items():
        out_load[u] += w
        in_load[v] += w
    delta = max(max(out_load.values()), max(in_load.values()))
    # Regular completion: left = senders + receiver copies, right = receivers +
    # sender copies; mirror edges between the copies, dummies to fill up.
    weight: dict[tuple[tuple[str, str], tuple[str, str]], Fraction] = {}
    for (u, v), w in loads.items():
        weight[("s", u), ("r", v)] = w
        weight[("rc", v), ("sc", u)] = w
    for u, w in out_load.items():
        if w < delta:
            weight[("s", u), ("sc", u)] = delta - w
    for v, w in in_load.items():
        if w < delta:
            weight[("rc", v), ("r", v)] = delta - w
    adjacency: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for a, b in weight:
        adjacency[a].append(b)
    left = list(adjacency)
    match_of_right: dict[tuple[str, str], tuple[str, str]] = {}
    match_of_left: dict[tuple[str, str], tuple[str, str]] = {}

    def augment(root: tuple[str, str]) -> bool:
        # Iterative DFS for an augmenting path from a free left vertex.
        parent: dict[tuple[str, str], tuple[str, str]] = {}
        stack = [(root, iter(adjacency[root]))]
        seen: set[tuple[str, str]] = set()
        while stack:
            a, it = stack[-1]
            advanced = False
            for b in it:
                if b in seen or (a, b) not in weight:
                    continue
                seen.add(b)
                parent[b] = a
                nxt = match_of_right.get(b)
                if nxt is None:
                    # Flip the path.
                    while True:
                        a_ = parent[b]
                        prev = match_of_left.get(a_)
                        match_of_left[a_] = b
                        match_of_right[b] = a_
                        if a_ == root:
                            return True
                        b = prev  # type: ignore[assignment]
                stack.append((nxt, iter(adjacency[nxt])))
                advanced = True
                break
            if not advanced:
                stack.pop()
        return False

    matchings: list[tuple[Fraction, list[tuple[NodeId, NodeId]]]] = []
    remaining_real = len(loads)
    while remaining_real:
        if deadline is not None:
            deadline.check(_PHASE)
        for a in left:
            if a not in match_of_left and not augment(a):
                raise AssertionError("no perfect matching in a regular bipartite graph")
        pairs = list(match_of_left.items())
        step = min(weight[a, b] for a, b in pairs)
        real = [(a[1], b[1]) for a, b in pairs if a[0] == "s" and b[0] == "r"]
        if real:
            matchings.append((step, real))
        for a, b in pairs:
            weight[a, b] -= step
            if weight[a, b] == 0:
                del weight[a, b]
                del match_of_left[a]
                del match_of_right[b]
                adjacency[a].remove(b)
                if a[0] == "s" and b[0] == "r":
                    remaining_real -= 1
    return matchings


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
    """
    clock = deadline if deadline is not None else Deadline()
    size = operation.size
    notes: list[str] = []
    exact = fixed_period is None
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
            fixed_period = Fraction(max(1, math.floor(max_events / per_time)))
            text = (f"the exact period {format_rational(period)} would hold "
                    f"{format_rational(per_time * period)} operations per period "
                    f"(cap {max_events}); using the fixed period "
                    f"{format_rational(fixed_period)} instead (Proposition 4: throughput "
                    f"loss at most {n_units}/{format_rational(fixed_period)}); choose "
                    f"another with the option 'period:'")
            warnings.warn(text, stacklevel=3)
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

    units = [u for group in groups for u in group]
    producers = [_producers(u) for u in units]
    OpKey = tuple[int, int, int]  # (unit index, instance slot, operation index)

    def tasks(scale: int) -> tuple[dict[tuple[NodeId, NodeId], list[tuple[Item, OpKey]]],
                                   dict[NodeId, list[tuple[tuple[Item, ...], Item, OpKey]]]]:
        link_tasks: dict[tuple[NodeId, NodeId], list[tuple[Item, OpKey]]] = defaultdict(list)
        cpu_tasks: dict[NodeId, list[tuple[tuple[Item, ...], Item, OpKey]]] = defaultdict(list)
        uid = 0
        for group, row in zip(groups, counts, strict=True):
            slot = 0
            for unit, count in zip(group, row, strict=True):
                clock.check(_PHASE)
                for j in range(slot, slot + count * scale):
                    for oi, s in enumerate(unit.sends):
                        link_tasks[s.src, s.dst].append((s.item.with_instance(j), (uid, j, oi)))
                    for ci, c in enumerate(unit.computes):
                        cpu_tasks[c.node].append(
                            (tuple(x.with_instance(j) for x in c.inputs),
                             c.output.with_instance(j), (uid, j, len(unit.sends) + ci)))
                slot += count * scale
                uid += 1
        # Shallow operations first on every link and CPU (and, below, the
        # matchings of shallow links first): deeper ones then often find
        # their inputs earlier in the same period, so fewer lags and a
        # shorter start-up.  Measured on eight allreduce schedules of 6-8
        # nodes (fixed periods): largest lag 13 -> 10, completed over carried
        # at 100 periods at least 0.894 -> 0.918.
        def depth(key: OpKey) -> int:
            return _depth(units[key[0]], key[2])

        for jobs in link_tasks.values():
            jobs.sort(key=lambda job: (depth(job[1]), job[1][1]))
        for cpu_jobs in cpu_tasks.values():
            cpu_jobs.sort(key=lambda job: (depth(job[2]), job[2][1]))
        return link_tasks, cpu_tasks

    link_tasks, cpu_tasks = tasks(1)
    duration = {e: size * platform.cost(*e) for e in link_tasks}
    loads = {e: len(ts) * duration[e] for e, ts in link_tasks.items()}
    if matchings is None:
        matchings = peel_platform(platform, loads, deadline=clock)  # b-matchings
    else:
        matchings = [(w * period, [e for e in links if e in duration])
                     for w, links in matchings if w > 0]
    # Matchings whose links carry shallow operations first (their mean depth).
    mean_depth = {e: sum(_depth(units[key[0]], key[2]) for _, key in jobs) / len(jobs)
                  for e, jobs in link_tasks.items() if jobs}
    matchings = sorted(matchings, key=lambda m: (
        sum(mean_depth.get(e, 0) for e in m[1]) / max(1, len(m[1]))))
    scale = 1
    if not split:
        denoms = [(d / duration[e]).denominator for d, links in matchings for e in links]
        scale = _lcm(denoms)
        planned = sum(len(v) for v in link_tasks.values()) + sum(
            len(v) for v in cpu_tasks.values())
        if planned * scale > max_events:
            text = (f"keeping messages whole needs a period {scale} times longer "
                    f"({format_rational(period * scale)}), over the cap of {max_events} "
                    f"operations per period: messages are split instead")
            warnings.warn(text, stacklevel=3)
            notes.append(text)
            scale = 1
        if scale > 1:
            period *= scale
            n *= scale
            link_tasks, cpu_tasks = tasks(scale)
            matchings = [(d * scale, links) for d, links in matchings]

    # Lay out one period; lags are chosen afterwards.
    placed: list[tuple[Event, OpKey]] = []
    span: dict[OpKey, tuple[Fraction, Fraction]] = {}  # first start, last end in the period

    def record(event: Event, key: OpKey, start: Fraction, end: Fraction) -> None:
        placed.append((event, key))
        first, last = span.get(key, (start, end))
        span[key] = (min(first, start), max(last, end))

    for node, jobs in cpu_tasks.items():
        clock.check(_PHASE)
        w = platform.compute_time(node)
        t = Fraction(0)
        for inputs, output, key in jobs:
            # Zero-time computes at 0, first: they may share the instant 0.
            at = Fraction(0) if w == 0 else t
            record(Compute(node, inputs, output, at), key, at, at + w)
            t += w
    intervals: dict[tuple[NodeId, NodeId], list[tuple[Fraction, Fraction]]] = defaultdict(list)
    t = Fraction(0)
    for d, links in matchings:
        for e in links:
            intervals[e].append((t, t + d))
        t += d
    for e, transfers in link_tasks.items():
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
                record(Send(e[0], e[1], item, pos, part=piece / d), key, pos, pos + piece)
                pos += piece
                left -= piece
    # Pipelining: an operation runs in the first period (lag d) in which it
    # starts after all its inputs have fully arrived (RR-4872, section 3.4:
    # buffers fill during start-up).  Operations come in depth order.
    lag: dict[OpKey, int] = {}
    order = sorted(span, key=lambda key: (key[0], key[1], _depth(units[key[0]], key[2])))
    for done, key in enumerate(order):
        if done % 256 == 0:
            clock.check(_PHASE)
        uid, j, oi = key
        ready = Fraction(0)
        for pi in producers[uid][oi]:
            first, last = span[uid, j, pi]
            ready = max(ready, lag[uid, j, pi] * period + last)
        first = span[key][0]
        lag[key] = max(0, math.ceil((ready - first) / period))
    zero_first = sorted(placed, key=lambda x: not (isinstance(x[0], Compute)
                                                  and span[x[1]][0] == span[x[1]][1]))
    events: list[Event] = [replace(event, lag=lag[key]) for event, key in zero_first]
    schedule = Schedule(platform, operation, tuple(events), period=period,
                        instances_per_period=max(n, 1))
    return PeriodicPlan(schedule, period, n, throughput, len(matchings), tuple(notes))
