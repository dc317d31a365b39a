"""From weighted paths or trees to a replayable periodic schedule.

The steps of DESIGN.md, "Steady state", 4 to 6, common to every collective:

1. **Period.**  ``T`` is the least common multiple of the denominators of
   every weight and every per-period busy time (RR-4872, section 3.1: "the
   least common multiple of the denominators of all the variables"); with a
   fixed period ``T_fixed`` each unit instead carries ``floor(w · T_fixed)``
   instances (section 4.6, Proposition 4: loss at most ``#units / T_fixed``).
   Where ``T`` is over the cap, the shortest period in which every unit
   carries whole instances (:func:`_least_whole_period`), its busy times
   rational, comes first when it is within the cap: it loses nothing.
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
import operator
import random
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from portsim.planners.lp._bmatching import peel_matchings, peel_platform
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._integer_rounding import NODE_LIMIT, IntegerRounding, shortest_period
from portsim.planners.lp._solve import Deadline
from portsim.simulator.items import Item
from portsim.simulator.numbers import (
    common_denominator,
    counted,
    decimal_exponent,
    format_rational,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Compute, Event, Schedule, Send

__all__ = ["DEFAULT_MAX_EVENTS", "WHOLE_MESSAGES_NOTE", "ComputeTask", "PeriodicPlan",
           "SendTask", "Unit", "build_periodic", "peel_matchings"]

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


def _tails(producers: list[list[int]], length: list[int]) -> list[int]:
    """For each operation of a unit, the longest time (ticks) on a chain from its start to
    the unit's end: its own ``length`` and the longest tail of an operation using its output."""
    consumers: list[list[int]] = [[] for _ in producers]
    for oi, found in enumerate(producers):
        for pi in found:
            consumers[pi].append(oi)
    tail = [0] * len(producers)
    for oi in sorted(range(len(producers)), key=_heights(producers).__getitem__):
        tail[oi] = length[oi] + max((tail[c] for c in consumers[oi]), default=0)
    return tail


def _depth(unit: Unit, index: int) -> int:
    if index < len(unit.sends):
        return unit.sends[index].depth
    return unit.computes[index - len(unit.sends)].depth


def _lcm(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


def _least_whole_period(groups: Sequence[Sequence[Unit]]) -> Fraction | None:
    """The shortest period ``T`` in which every unit carries whole instances
    (``weight × T`` an integer for every weight): the least common multiple of
    the rationals ``1 / weight``, ``lcm(denominators) / gcd(numerators)``.

    Unlike the exact (lcm) period, whose busy times are whole time units, it
    does not depend on the time unit: an allreduce over 8 GPUs has the period
    4720016 in nanoseconds and 4720016/10^9 in seconds, where the lcm period,
    13275045 seconds, held 1.7 * 10^12 instances and the fixed period that
    replaced it lost 0.06% of the throughput.  ``None`` without a weight."""
    weights = [u.weight for group in groups for u in group if u.weight > 0]
    if not weights:
        return None
    return Fraction(_lcm([w.denominator for w in weights]),
                    math.gcd(*(w.numerator for w in weights)))


FIXED_PERIOD_CANDIDATES = 2_000
"""Most periods :func:`_best_fixed_period` evaluates (the longest first)."""


def _unit_operations(groups: Sequence[Sequence[Unit]]) -> list[list[int]]:
    """Operations of one instance of every unit (its sends and computations)."""
    return [[len(u.sends) + len(u.computes) for u in group] for group in groups]


def _operations(counts: Sequence[Sequence[int]], ops: Sequence[Sequence[int]]) -> int:
    """Operations of a period holding ``counts`` instances of the units of ``ops``."""
    return sum(c * o for row, o_row in zip(counts, ops, strict=True)
               for c, o in zip(row, o_row, strict=True))


def _per_time(groups: Sequence[Sequence[Unit]], ops: Sequence[Sequence[int]]) -> Fraction:
    """Operations per time unit at the units' weights."""
    return sum((u.weight * o for group, row in zip(groups, ops, strict=True)
                for u, o in zip(group, row, strict=True)), Fraction(0))


def _jump_periods(groups: Sequence[Sequence[Unit]], longest: int, *,
                  last: int | None = None, unit: Fraction = Fraction(1)) -> set[int]:
    """The periods ``ceil(j / weight)`` at which some unit gains an instance, for ``j`` up
    to ``floor(weight × longest)`` (only the ``last`` + 1 highest ``j`` when given),
    counted in time units of ``unit`` (the weights are per unit of time)."""
    jumps: set[int] = set()
    for group in groups:
        for u in group:
            if u.weight <= 0:
                continue
            # floor(weight × longest) and ceil(j / weight) in integers: a
            # Fraction division per candidate was a tenth of a build at the cap.
            weight = u.weight * unit
            wn, wd = weight.numerator, weight.denominator
            top = wn * longest // wd
            first = 1 if last is None else max(1, top - last)
            jumps.update(-(-j * wd // wn) for j in range(first, top + 1))
    return jumps


def _best_fixed_period(groups: Sequence[Sequence[Unit]], per_time: Fraction,
                       max_events: int, unit: Fraction = Fraction(1)) -> Fraction:
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

    Periods are whole numbers of ``unit`` (:func:`_choose_period` gives the
    grid of :func:`_grid_unit`, or tenths of it where that grid holds far too
    many instances); the formulas above count time in ``unit``.
    """
    ops = _unit_operations(groups)
    per_unit = per_time * unit
    base = max(1, math.floor(max_events / per_unit))
    longest = math.floor((max_events + sum(map(sum, ops))) / per_unit)
    jumps = {base, *_jump_periods(groups, longest, last=FIXED_PERIOD_CANDIDATES, unit=unit)}
    candidates = sorted((t for t in jumps if 1 <= t <= longest), reverse=True)
    # The best rate best_n / best_period so far, compared by cross-multiplying.
    best_n, best_period, best = -1, 1, base
    for period in sorted({base, *candidates[:FIXED_PERIOD_CANDIDATES]}):
        counts, n = _counts(groups, unit * period)
        events = _operations(counts, ops)
        if events <= max_events and n * best_period > best_n * period:
            best_n, best_period, best = n, period, period
    return unit * best


FIXED_SHARE_HINT = Fraction(9, 10)
"""When a fixed period forced by ``max_events`` carries less than this share of the exact
throughput, the notes name the least ``max_events`` whose fixed period would carry it
(:func:`_period_for_share`)."""

HINT_CAP_FACTOR = 16
""":func:`_period_for_share` looks at periods of up to this many times ``max_events``
operations."""


def _period_for_share(groups: Sequence[Sequence[Unit]], throughput: Fraction,
                      max_events: int, unit: Fraction = Fraction(1)
                      ) -> tuple[Fraction, int, Fraction] | None:
    """The shortest period, a whole number of ``unit``, whose fixed-period schedule
    (Proposition 4's floors, :func:`_counts`) carries at least
    :data:`FIXED_SHARE_HINT` of ``throughput``,
    with its operations per period and its rate; ``None`` when none holds at
    most :data:`HINT_CAP_FACTOR` × ``max_events`` operations, or within
    :data:`FIXED_PERIOD_CANDIDATES` periods tried.  With that many operations
    as ``max_events``, :func:`_best_fixed_period` chooses a period of at least
    that rate (checked), and the rounding up (:class:`_Rounding`) only adds.

    Only periods where some ``weight × T`` reaches an integer change the
    counts, so those are the periods tried (``ceil(j / weight)``), shortest
    first."""
    ops = _unit_operations(groups)
    per_time = _per_time(groups, ops)
    if per_time <= 0:
        return None
    ceiling = HINT_CAP_FACTOR * max_events
    longest = math.floor((ceiling + sum(map(sum, ops))) / (per_time * unit))
    jumps = _jump_periods(groups, longest, unit=unit)
    for whole in sorted(t for t in jumps if t <= longest)[:FIXED_PERIOD_CANDIDATES]:
        period = unit * whole
        counts, n = _counts(groups, period)
        events = _operations(counts, ops)
        if events > ceiling:
            return None
        rate = n / period
        if rate >= FIXED_SHARE_HINT * throughput:
            # The period the cap ``events`` would choose carries at least as much
            # (unless the candidates' limit left this one out: then look further).
            chosen = _best_fixed_period(groups, per_time, events, unit)
            if Fraction(_counts(groups, chosen)[1]) / chosen >= rate:
                return period, events, rate
    return None


class _Rounding:
    """Proposition 4's counts (``floor(weight × period)``, every group trimmed to the
    least) raised one instance at a time while the period still holds them.

    Each round gives every group one more instance: the unit of largest
    remainder ``weight × period - count`` whose operations still fit, that
    is, every node's sends and receives within its ports
    (:class:`~portsim.planners.lp._capacity.PortCapacity`) times the
    period, every link and CPU busy at most the period, and the operations
    within ``max_events``.  A round that some group cannot complete is not
    kept, and ends the search.  Those are the rows the period's b-matchings
    need (:mod:`portsim.planners.lp._capacity`): the peel fits in the period
    as it does with the floors.  Why a greedy: Proposition 4 rounds every
    unit down alone, and with few instances per period against many units
    (a fabric's allgather at ``max_events``: 68 trees, 14 instances) the
    floors lose most; the best rounding is an integer program.  On a
    platform with a unidirectional node (matchings, not port sums, say what
    a period holds there) the floors stay.

    Loads are integers, in units of the common denominator of every busy
    time, computed once for all the periods tried.
    """

    def __init__(self, platform: Platform, groups: Sequence[Sequence[Unit]],
                 size: Fraction) -> None:
        self.groups = groups
        self.ops = _unit_operations(groups)
        self.active = not any(platform.port_model_of(node).kind is PortKind.UNIDIRECTIONAL
                              for node in platform.node_ids)
        self.ports: dict[tuple[str, object], Fraction] = {}
        busy_of: list[list[dict[tuple[str, object], Fraction]]] = []
        if self.active:
            cap = PortCapacity.of(platform)
            for node in platform.node_ids:
                self.ports["send", node] = cap.send[node]
                self.ports["receive", node] = cap.receive[node]
            for group in groups:
                row = []
                for u in group:
                    busy: dict[tuple[str, object], Fraction] = defaultdict(Fraction)
                    for send in u.sends:
                        length = size * platform.cost(send.src, send.dst)
                        busy["send", send.src] += length
                        busy["receive", send.dst] += length
                        busy["link", (send.src, send.dst)] += length
                    for task in u.computes:
                        busy["cpu", task.node] += platform.compute_time(task.node)
                    row.append(busy)
                busy_of.append(row)
        self.scale = common_denominator(a for row in busy_of for busy in row
                                        for a in busy.values())
        self.loads = [[{r: int(a * self.scale) for r, a in busy.items()} for busy in row]
                      for row in busy_of]

    def counts(self, period: Fraction, max_events: int
               ) -> tuple[list[list[int]], int, int]:
        """Instances per period of every unit, instances per period, and operations per
        period: the floors, then raised where the period holds more."""
        counts, n = _counts(self.groups, period)
        events = _operations(counts, self.ops)
        if not self.active:
            return counts, n, events
        room = period * self.scale
        limit = {r: math.floor(k * room) for r, k in self.ports.items()}
        other = math.floor(room)  # a link or a CPU: busy at most the period
        used: dict[tuple[str, object], int] = defaultdict(int)
        for row, unit_loads in zip(counts, self.loads, strict=True):
            for copies, load in zip(row, unit_loads, strict=True):
                if copies:
                    for r, a in load.items():
                        used[r] += copies * a
        orders: list[list[int]] = []
        for group, row in zip(self.groups, counts, strict=True):
            remainder = [u.weight * period - c for u, c in zip(group, row, strict=True)]
            orders.append(sorted(range(len(group)), key=lambda i: (-remainder[i], i)))
        while True:
            trial = dict(used)
            picks: list[tuple[int, int]] = []
            more = 0
            for g, order in enumerate(orders):
                for i in order:
                    load = self.loads[g][i]
                    if all(trial.get(r, 0) + a <= limit.get(r, other) for r, a in load.items()):
                        for r, a in load.items():
                            trial[r] = trial.get(r, 0) + a
                        picks.append((g, i))
                        more += self.ops[g][i]
                        break
                else:
                    return counts, n, events
            if events + more > max_events:
                return counts, n, events
            for g, i in picks:
                counts[g][i] += 1
            used, events, n = defaultdict(int, trial), events + more, n + 1

    def integer(self, throughput: Fraction, max_events: int, start: Fraction,
                clock: Deadline) -> IntegerRounding | None:
        """The integer program's rounding (:func:`._integer_rounding.shortest_period`),
        when it carries more instances per time unit than :meth:`counts` in ``start``.

        Tried for the most instances a period holds within the cap at the
        units' weights (their operations per instance) and for fewer, down to
        :data:`INTEGER_TRIES` counts; the one of most instances per time unit
        is kept (more instances a period usually lose less to the rounding: an
        allgather over 4 DGX A100 servers, 15 instances reach the bound 25/3,
        14 carry 0.977 of it).
        """
        if not self.active or not self.groups:
            return None
        _, n, _ = self.counts(start, max_events)
        if Fraction(n) / start >= throughput:
            return None
        per_instance = _per_time(self.groups, self.ops) / throughput
        if per_instance <= 0:
            return None
        top = math.floor(max_events / per_instance)
        cap = max_events
        if top < 1:  # one instance alone is over the cap: its fewest operations
            top, cap = 1, max(max_events, sum(min(row, default=0) for row in self.ops))
        best: IntegerRounding | None = None
        best_n, best_period = n, start  # the rate to beat, n / period
        for instances in range(top, max(top - INTEGER_TRIES, 0), -1):
            # An improvement only: it never ends the call.  Under a time_limit,
            # HiGHS gets a quarter of what is left, and is not asked once less
            # than INTEGER_MIN_SECONDS is: the schedule's build must still fit.
            left = clock.remaining()
            if left is not None and left < INTEGER_MIN_SECONDS:
                break
            found = shortest_period(self.loads, self.ports, self.scale, self.ops, instances,
                                    cap, time_limit=None if left is None else left / 4)
            if found is not None and found.instances * best_period > best_n * found.period:
                best, best_n, best_period = found, found.instances, found.period
                if Fraction(best_n) / best_period >= throughput:
                    break
        return best


INTEGER_TRIES = 3
"""Most instance counts :meth:`_Rounding.integer` tries (one integer program each)."""

INTEGER_MIN_SECONDS = 5.0
"""Under a ``time_limit``, the integer program is not tried with less time left than
this: the greedy's rounding stays, and the build of the schedule (about a second at
20,000 events) still fits.  An allgather over 16 DGX A100 servers with ``time_limit:
60`` reaches the schedule with about a second left, its tree generation cut."""


DENSER_GRID = 60
"""A fixed period chosen by :func:`_denser_period` is a multiple of ``1 / DENSER_GRID`` of
the grid unit (:func:`_grid_unit`)."""

DENSER_TRIES = 64
"""Most periods :func:`_denser_period` tries."""


def _denser_period(rounding: _Rounding, throughput: Fraction, max_events: int,
                   start: Fraction, unit: Fraction = Fraction(1)) -> Fraction:
    """A fixed period within ``max_events`` that carries more instances per time unit
    than ``start`` once rounded up (:class:`_Rounding`), or ``start``.

    With the cap, a period holds at most some ``n`` instances; the shortest
    period that carries ``n`` after the rounding need not be an integer, nor
    the integer :func:`_best_fixed_period` chose by the floors (a fabric's
    allgather on 4 DGX A100 servers: 14 instances in 2 time units, 0.84 of
    its bound, where 12 fit in 89/60, 0.97).  Tried, from the most instances
    the cap allows down: for each count, periods that would carry 100%,
    99%, ... of ``throughput``, on a grid of ``unit / DENSER_GRID`` (``unit``
    the grid of ``start``, :func:`_grid_unit`), the first that holds the count
    kept; only what could beat the best so far, and :data:`DENSER_TRIES`
    periods at most.
    """
    grid = unit / DENSER_GRID
    _, n, _ = rounding.counts(start, max_events)
    best, best_rate = start, Fraction(n) / start
    per_instance = _per_time(rounding.groups, rounding.ops) / throughput
    if best_rate >= throughput or per_instance <= 0:
        return best
    tries = 0
    for target in range(math.floor(max_events / per_instance), 0, -1):
        for step in range(100):
            share = Fraction(100 - step, 100)
            if share * throughput <= best_rate:
                break
            exact = target / (share * throughput)
            ratio = exact / grid
            period = grid * -(-ratio.numerator // ratio.denominator)
            if Fraction(target) / period <= best_rate:
                break
            _, got, events = rounding.counts(period, max_events)
            tries += 1
            if events <= max_events and got >= target:
                best, best_rate = period, Fraction(got) / period
                break
            if tries >= DENSER_TRIES:
                return best
    return best


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


_Link = tuple[NodeId, NodeId]

Runs = list[tuple[int, int]]
"""The operations of one resource: per unit operation ``(unit index, operation index
in the unit)`` that runs there, once per instance slot of the unit (a *run*), in unit
order."""


@dataclass(frozen=True, slots=True)
class _Jobs:
    """Every operation of one period, numbered, and the resource each runs on.

    Unit ``u`` carries ``copies[u]`` instances, in the slots ``slot[u]``,
    ``slot[u] + 1``, ...; the operation ``oi`` of its ``t``-th instance is
    operation number ``first[u] + t × (operations of the unit) + oi`` of the
    period: numbers in (unit, slot, operation) order, which is the order ties
    are broken in.  A resource lists its runs, not its operations: the
    per-operation lists are made once, in :func:`_events`, with the events.
    """

    links: dict[_Link, Runs]  # per link, its transfers
    cpus: dict[NodeId, Runs]  # per node, its reductions
    copies: list[int]  # per unit: instances in the period
    slot: list[int]  # per unit: its first instance slot
    first: list[int]  # per unit: the number of its first operation
    total: int  # operations in the period

    def count(self, runs: Runs) -> int:
        """The operations of ``runs`` in the period."""
        copies = self.copies
        return sum(copies[u] for u, _ in runs)

    def slots(self) -> int:
        """The instance slots of the period (one more than the largest)."""
        return max((s + c for s, c in zip(self.slot, self.copies, strict=True)), default=0)


@dataclass(frozen=True, slots=True)
class _Period:
    """The period chosen, with the instances each unit carries in it."""

    period: Fraction
    exact: bool  # the lcm period (else a fixed one, Proposition 4)
    counts: tuple[tuple[int, ...], ...]  # per group, per unit: instances per period
    instances: int  # instances per period
    throughput: Fraction  # what the period achieves
    notes: tuple[str, ...]


def build_periodic(
    platform: Platform,
    operation: Operation,
    groups: Sequence[Sequence[Unit]],
    throughput: Fraction,
    *,
    split: bool = True,
    free_links: bool = False,
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
    free_links:
        Whole messages (``split`` false) and yet the links whose ports never
        bind outside the matchings, as when messages may be split: only the
        links in matchings scale the period.
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
    (:func:`_whole_messages`), lay the period out and pipeline it
    (:func:`_lay_out`, whose list scheduling gives every operation its
    place and its lag) and write the events (:func:`_events`).  Times
    inside the period are integers, in ticks of ``1 / D`` with ``D`` the
    common denominator of the period, every duration and every matching:
    exact, and far cheaper than ``Fraction`` arithmetic.  Operations are
    integers too (:class:`_Jobs`) until the events are written: they become
    ``Fraction`` times and :class:`~portsim.simulator.items.Item` objects
    only there.
    """
    clock = deadline if deadline is not None else Deadline()
    size = operation.size
    chosen = _choose_period(platform, groups, throughput, size, fixed_period, max_events,
                            round_up=matchings is None, clock=clock)
    notes = list(chosen.notes)
    period, n = chosen.period, chosen.instances
    units = [u for group in groups for u in group]
    depths = [[_depth(u, i) for i in range(len(u.sends) + len(u.computes))] for u in units]
    jobs = _jobs(groups, chosen.counts, 1, clock)
    duration = {e: size * platform.cost(*e) for e in jobs.links}
    steps = _orchestrate(platform, jobs, duration, period, depths, matchings,
                         split or free_links, clock)
    if not split:
        scale, note = _whole_messages(jobs, duration, steps, period, max_events)
        if note:
            notes.append(note)
        if scale > 1:
            period *= scale
            n *= scale
            jobs = _jobs(groups, chosen.counts, scale, clock)
            steps = [(d * scale, links) for d, links in steps]
    compute_time = {node: platform.compute_time(node) for node in jobs.cpus}
    tick = common_denominator([period, *duration.values(), *compute_time.values(),
                               *(d for d, _ in steps)])

    def ticks(v: Fraction) -> int:
        return v.numerator * (tick // v.denominator)

    link_ticks = {e: ticks(d) for e, d in duration.items()}
    cpu_ticks = {node: ticks(w) for node, w in compute_time.items()}
    where, lags = _lay_out(jobs, link_ticks, cpu_ticks,
                           [(ticks(d), links) for d, links in steps],
                           [_producers(u) for u in units], ticks(period), clock)
    events = _events(jobs, units, depths, where, lags, link_ticks, cpu_ticks, tick, clock)
    schedule = Schedule(platform, operation, events, period=period,
                        instances_per_period=max(n, 1))
    return PeriodicPlan(schedule, period, n, chosen.throughput, len(steps), tuple(notes))


def _on_grid_if_longer(period: Fraction, unit: Fraction) -> Fraction:
    """``period`` rounded up to a whole number of ``unit`` when it is longer than one
    ``unit``, else itself."""
    return unit * math.ceil(period / unit) if period >= unit else period


def _grid_unit(throughput: Fraction) -> Fraction:
    """The first grid of a fixed period the cap forces: the largest power of ten at
    most ``1 / throughput``, the time one instance takes at the exact throughput.

    A quantity of the program, not the number 1: scaling every time of a
    scenario by ``10^k`` scales it by ``10^k``, so the candidate periods, and
    with them the instances per period and the throughput, do not depend on
    the time unit (the grid used to start at 1: a broadcast over six nodes
    at 5 to 56 GB/s got three fixed periods in seconds, milliseconds and
    nanoseconds, 29696/3515625 s, 103/20 ms and 8317567 ns, three
    throughputs).  A period on this grid is rounded up by less than one
    instance's time.  1 without a throughput.

    >>> _grid_unit(Fraction(4, 7)), _grid_unit(Fraction(65, 3)), _grid_unit(Fraction(1, 10))
    (Fraction(1, 1), Fraction(1, 100), Fraction(10, 1))
    """
    if throughput <= 0:
        return Fraction(1)
    return Fraction(10) ** decimal_exponent(1 / throughput)


def _choose_period(platform: Platform, groups: Sequence[Sequence[Unit]], throughput: Fraction,
                   size: Fraction, fixed_period: Fraction | None, max_events: int, *,
                   round_up: bool = False, clock: Deadline | None = None) -> _Period:
    """The exact (lcm) period, or a fixed one (given, or when the exact one is over the cap).

    A fixed period the cap forces is a whole number of a grid unit, the
    largest power of ten at most the time of one instance
    (:func:`_grid_unit`; with every time of the scenario 10^k times longer,
    so is the grid); where even the best of those holds ten instances or
    more and still too many operations, of tenths of that unit, and so on
    (:func:`_period_in_units`; a safeguard: a period of one grid unit holds
    at most one instance at the units' weights).
    """
    unit = _grid_unit(throughput)
    while True:
        chosen, warned, finer = _period_in_units(platform, groups, throughput, size,
                                                 fixed_period, max_events, unit,
                                                 round_up=round_up, clock=clock)
        if not finer:
            break
        unit /= 10
    for text in warned:
        warnings.warn(text, stacklevel=4)
    return chosen


def _instances(count: Fraction) -> str:
    """``count`` instances, for a note (``"3 instances"``, ``"5/2 instances"``)."""
    if count.denominator == 1:
        return counted(int(count), "instance")
    return f"{format_rational(count)} instances"


def _period_in_units(platform: Platform, groups: Sequence[Sequence[Unit]],
                     throughput: Fraction, size: Fraction, fixed_period: Fraction | None,
                     max_events: int, unit: Fraction, *, round_up: bool,
                     clock: Deadline | None) -> tuple[_Period, list[str], bool]:
    """:func:`_choose_period`, a forced fixed period being a multiple of ``unit``: the
    period, the warnings to give, and whether a finer unit should be tried.

    Its warnings (the cap sends the exact period to a fixed one) are returned,
    for the caller to give once the unit is settled.  With ``round_up`` (port
    sums: the builder peels the period's loads itself), a fixed period
    carries the instances of Proposition 4's floors and more where the ports
    allow (:class:`_Rounding`), and the one the cap forces
    may be a shorter, denser one (:func:`_denser_period`), or the one an
    integer program's counts fill (:meth:`_Rounding.integer`) when they carry
    more.
    """
    notes: list[str] = []
    warned: list[str] = []
    given = fixed_period is not None
    exact = not given
    period = Fraction(1)
    rounding: _Rounding | None = None
    integer: IntegerRounding | None = None
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
        per_time = _per_time(groups, _unit_operations(groups))
        over = per_time * period > max_events
        least = _least_whole_period(groups) if over else None
        if least is not None and per_time * least <= max_events:
            fixed_period = least
            how = (f", the shortest in which every path and tree carries whole instances ("
                   f"{format_rational(per_time * least)} operations, no loss; its busy "
                   f"times are not whole time units)")
        elif over:
            n_units = sum(len(g) for g in groups)
            fixed_period = by_floors = _best_fixed_period(groups, per_time, max_events, unit)
            if round_up:
                rounding = _Rounding(platform, groups, size)
                fixed_period = _denser_period(rounding, throughput, max_events, by_floors,
                                              unit)
                integer = rounding.integer(throughput, max_events, fixed_period,
                                           clock if clock is not None else Deadline())
            if integer is not None:
                fixed_period = integer.period
                denser = (f", with counts of the paths and trees chosen by an integer "
                          f"program, which carry more per time unit than Proposition 4's "
                          f"floors in the period {format_rational(by_floors)}")
            elif fixed_period == by_floors:
                denser = ""
            else:
                denser = (f", where the rounded-up paths and trees carry more per time unit "
                          f"than in the period {format_rational(by_floors)} Proposition 4's "
                          f"floors pick")
            how = (f"{denser} (Proposition 4: throughput loss at most "
                   f"{format_rational(n_units / Fraction(fixed_period))}, "
                   f"{counted(n_units, 'unit')} over the period)")
        if over:
            assert fixed_period is not None  # set by either branch above
            # "operations" are the events max_events caps, not collective
            # operations: the instances are named apart (a student read the
            # scatter toy's 12 as 12 scatters in a period of 6, where TP = 1/2)
            text = (f"the exact period {format_rational(period)} would hold "
                    f"{format_rational(per_time * period)} operations (sends and "
                    f"computations) per period for its "
                    f"{_instances(throughput * period)} (cap {max_events}); "
                    f"using the fixed period {format_rational(fixed_period)} instead{how}; "
                    f"choose another with the option 'period:'")
            warned.append(text)
            notes.append(text)
            exact = False
    if fixed_period is not None:
        period = Fraction(fixed_period)
    counts, n = _counts(groups, period)
    floors = n
    # the floors' operations, when over the cap: they are no schedule the cap allows
    floors_over = _operations(counts, _unit_operations(groups)) if integer is not None else 0
    if integer is not None:
        counts, n = [list(row) for row in integer.counts], integer.instances
    else:
        if rounding is None and round_up and not exact:
            rounding = _Rounding(platform, groups, size)
        if rounding is not None:
            counts, n, _ = rounding.counts(period, max_events)
    if not exact and n == 0 and groups and all(groups):
        # A fixed period too short for any unit to carry one whole instance
        # would be a schedule of nothing: lengthen it to the shortest period
        # in which every group carries one (the unit of largest weight).
        # (whole grid units, unless an instance takes less than one: then exact)
        shortest = max(min(_on_grid_if_longer(1 / u.weight, unit) for u in group
                           if u.weight > 0)
                       for group in groups)
        notes.append(f"the fixed period {format_rational(period)} holds no whole instance; "
                     f"lengthened to {shortest}, the shortest period in which some unit "
                     f"carries a whole instance")
        period = Fraction(shortest)
        counts, n = _counts(groups, period)
        floors = n
        if rounding is not None:
            counts, n, _ = rounding.counts(period, max_events)
    if not exact:
        events = _operations(counts, _unit_operations(groups))
        if events > max_events:
            if not given and integer is None and n >= 10:
                return _Period(period, exact, (), n, throughput, ()), [], True
            why = ("the period given" if given else
                   "one instance alone is over the cap" if integer is not None else
                   f"no multiple of {format_rational(unit)} within the cap holds an "
                   f"instance")
            text = (f"the fixed period {format_rational(period)} holds {events} operations, "
                    f"over the cap of {max_events} operations per period ({why})")
            warned.append(text)
            notes.append(text)
        achieved = Fraction(n) / period
        n_units = sum(len(g) for g in groups)
        if achieved == throughput:
            notes.append(f"fixed period {format_rational(period)}: throughput "
                         f"{format_rational(achieved)}, the exact period's (Proposition 4 "
                         f"allows a loss up to {format_rational(n_units / period)}, "
                         f"{counted(n_units, 'unit')} over the period)")
        else:
            notes.append(f"fixed period {format_rational(period)}: throughput "
                         f"{format_rational(achieved)} instead of the exact period's "
                         f"{format_rational(throughput)} (loss "
                         f"{format_rational(throughput - achieved)} <= "
                         f"{format_rational(n_units / period)}, {counted(n_units, 'unit')} over "
                         f"the period, Proposition 4)")
        if integer is not None:
            notes.append(f"fixed period {format_rational(period)}: {counted(n, 'instance')}, "
                         f"the paths' and trees' counts chosen by an integer program (HiGHS, "
                         f"{counted(NODE_LIMIT, 'branch-and-bound node')} at most) with every "
                         f"port, link and CPU within the period; Proposition 4's floors give "
                         f"{floors}"
                         + (f" ({floors_over} operations, over the cap of {max_events})"
                            if floors_over > max_events else ""))
        elif n > floors:
            notes.append(f"fixed period {format_rational(period)}: {n} instances, where "
                         f"Proposition 4's floors give {floors}: units rounded up while every "
                         f"port, link and CPU stays within the period")
        if not given and achieved < FIXED_SHARE_HINT * throughput:
            hint = _period_for_share(groups, throughput, max_events, unit)
            if hint is not None:
                longer, events, rate = hint
                notes.append(f"with max_events: {events} (an lp option), a fixed period "
                             f"would carry at least {format_rational(rate)} (period "
                             f"{format_rational(longer)}), "
                             f"{float(rate / throughput):.3f} of the exact period's")
        throughput = achieved
    return _Period(period, exact, tuple(tuple(row) for row in counts), n, throughput,
                   tuple(notes)), warned, False


def _jobs(groups: Sequence[Sequence[Unit]], counts: Sequence[Sequence[int]], scale: int,
          clock: Deadline) -> _Jobs:
    """Every link's transfers and every CPU's reductions in one period (``scale`` times
    the instances of ``counts``), as runs of the units' operations (:class:`_Jobs`)."""
    links: dict[_Link, Runs] = {}
    cpus: dict[NodeId, Runs] = {}
    copies: list[int] = []
    slots: list[int] = []
    first: list[int] = []
    total = 0
    uid = 0
    for group, row in zip(groups, counts, strict=True):
        slot = 0
        for unit, count in zip(group, row, strict=True):
            clock.check(_PHASE)
            copies.append(count * scale)
            slots.append(slot)
            first.append(total)
            if count:  # else the unit's links and CPUs get no job from it
                for oi, s in enumerate(unit.sends):
                    links.setdefault((s.src, s.dst), []).append((uid, oi))
                for ci, c in enumerate(unit.computes):
                    cpus.setdefault(c.node, []).append((uid, len(unit.sends) + ci))
            total += count * scale * (len(unit.sends) + len(unit.computes))
            slot += count * scale
            uid += 1
    return _Jobs(links, cpus, copies, slots, first, total)


def _orchestrate(platform: Platform, jobs: _Jobs, duration: dict[_Link, Fraction],
                 period: Fraction, depths: list[list[int]],
                 matchings: Sequence[tuple[Fraction, Sequence[_Link]]] | None,
                 free: bool, clock: Deadline) -> list[tuple[Fraction, list[_Link]]]:
    """The matchings of one period, in the order they run (shallow links first).

    The caller's matchings (per time unit) scaled to the period, else the
    period's link loads peeled into matchings: the one place of
    :func:`build_periodic` that peels (``platform`` tells the ports of every
    node, for a peel that depends on them).  With ``free``, links whose
    ports never bind (:func:`_unbound_links`) are left out of every
    matching: they run on their own, each transfer whole when it is ready
    (:func:`_lay_out`).  Without, every link is in matchings, as in the
    papers' construction of whole messages (the scatter toy's period 48);
    the lp on links with latency keeps its links free (a ``multiport``
    fabric then keeps its period instead of one 11 times longer).
    """
    transfers = {e: jobs.count(runs) for e, runs in jobs.links.items()}
    unbound = _unbound_links(platform, transfers, duration, period) if free else set()
    steps: list[tuple[Fraction, list[_Link]]]
    if matchings is None:
        loads = {e: count * duration[e] for e, count in transfers.items() if e not in unbound}
        steps = peel_platform(platform, loads, deadline=clock)  # b-matchings
    else:
        steps = [(w * period, kept) for w, links in matchings if w > 0
                 if (kept := [e for e in links if e in duration and e not in unbound])]
    # Matchings whose links carry shallow operations first (their mean depth).
    copies = jobs.copies
    mean_depth = {e: sum(depths[u][oi] * copies[u] for u, oi in runs) / transfers[e]
                  for e, runs in jobs.links.items()}
    return sorted(steps, key=lambda m: (
        sum(mean_depth.get(e, 0) for e in m[1]) / max(1, len(m[1]))))


def _unbound_links(platform: Platform, transfers: dict[_Link, int],
                   duration: dict[_Link, Fraction], period: Fraction) -> set[_Link]:
    """Links whose ports never bind: at most one transfer at a time on the link is
    then the only constraint on its transfers, and they need no matching.

    A side of a node (its sends, or its receives) never binds when it has at
    most as many links used in the period as ports (``multiport`` without
    ``k``, ``multiport:k`` with ``k`` at least those links, a one-port node
    with one link used on that side; a unidirectional node with one link used
    in all): every link carries one transfer at a time, so no more transfers
    ever run at once there than the port model allows.  A link both of whose
    ends never bind, and whose transfers fit in the period, is unbound.
    ``transfers``: per link used in the period, its transfers.
    """
    used = [e for e, count in transfers.items() if count]
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

    out: set[_Link] = set()
    for u, v in used:
        if transfers[u, v] * duration[u, v] > period:
            continue
        if free(u, sends[u], platform.degree(u)[0]) and free(v, receives[v],
                                                             platform.degree(v)[1]):
            out.add((u, v))
    return out


WHOLE_MESSAGES_NOTE = "keeping messages whole needs"
"""How the note of :func:`_whole_messages` begins when whole messages are over the cap."""


def _whole_messages(jobs: _Jobs, duration: dict[_Link, Fraction],
                    steps: Sequence[tuple[Fraction, Sequence[_Link]]],
                    period: Fraction, max_events: int) -> tuple[int, str]:
    """How many times longer the period must be for every message to be sent whole,
    with a note saying so (1, with a note and a warning, when that is over the cap)."""
    denoms = [(d / duration[e]).denominator for d, links in steps for e in links]
    scale = _lcm(denoms)
    if jobs.total * scale > max_events:
        text = (f"{WHOLE_MESSAGES_NOTE} a period {scale} times longer "
                f"({format_rational(period * scale)}) of {jobs.total * scale:,} operations, "
                f"over the cap of {max_events} (max_events): messages are split instead")
        warnings.warn(text, stacklevel=4)
        return 1, text
    if scale > 1:
        return scale, (f"messages sent whole (split: false): the period "
                       f"{format_rational(period)} is {scale} times longer, "
                       f"{format_rational(period * scale)}, with {scale} times its instances "
                       f"(the matchings' numbers of messages are whole only then)")
    return scale, ""


def _lay_out(jobs: _Jobs, duration: dict[_Link, int], compute_time: dict[NodeId, int],
             steps: Sequence[tuple[int, Sequence[_Link]]],
             producers: list[list[list[int]]], period: int, clock: Deadline
             ) -> tuple[list[_Place], list[int]]:
    """One period laid out, in ticks, and pipelined: where every operation runs in the
    period, and its lag (both indexed by operation number, :class:`_Jobs`).

    The matchings run one after the other, and a link in matchings sends its
    transfers one after the other during the matchings that contain it, a
    message split where a matching ends: that fixes the link's *slots* (its
    k-th transfer), whichever transfer takes each.  A CPU, and a link in no
    matching (its ports never bind, :func:`_unbound_links`), runs its
    operations whole wherever it is free in the period (zero-time
    computations all at 0, where they may share the instant).  Each
    resource runs one operation at a time within its matchings whatever
    operation goes where, so the schedule is valid either way; where they
    go sets the lags, hence the start-up: :func:`_place` decides both.
    """
    intervals: dict[_Link, list[tuple[int, int]]] = defaultdict(list)
    t = 0
    for d, links in steps:
        for e in links:
            intervals[e].append((t, t + d))
        t += d
    resources: dict[_Resource, _Slots | _Gaps] = {}
    for node, runs in jobs.cpus.items():
        w = compute_time[node]
        count = jobs.count(runs)
        resources[node] = _Gaps(period, w, count) if w > 0 else _Slots([[(0, 0)]] * count, period)
    for e, runs in jobs.links.items():
        clock.check(_PHASE)
        count = jobs.count(runs)
        d = duration[e]
        if e not in intervals:
            resources[e] = _Gaps(period, d, count)
            continue
        free = intervals[e]
        k = 0
        pos = free[0][0]
        row: list[_Pieces] = []
        for _ in range(count):
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
        resources[e] = _Slots(row, period)
    if not jobs.cpus:
        return _place(jobs, resources, producers, [_heights(p) for p in producers], clock)[:2]
    length: list[list[int]] = [[0] * len(row) for row in producers]
    for e, runs in jobs.links.items():
        for u, oi in runs:
            length[u][oi] = duration[e]
    for node, runs in jobs.cpus.items():
        for u, oi in runs:
            length[u][oi] = compute_time[node]
    return _critical_first(jobs, resources, producers, length, clock)


PLACEMENT_PASSES = 8
"""Most list-scheduling passes of a period with reductions (:func:`_critical_first`)."""

PLACEMENT_BUDGET = 10_000
"""Operations placed in all those passes, at most (at least one pass): a period of more
operations than this is placed once (the 20,000-operation builds of issue 15 keep their
time)."""


def _critical_first(jobs: _Jobs, resources: dict[_Resource, _Slots | _Gaps],
                    producers: list[list[list[int]]], length: list[list[int]],
                    clock: Deadline) -> tuple[list[_Place], list[int]]:
    """Where every operation of a period with reductions runs, and its lag: the best of a
    few critical-first list schedulings (:func:`_place`).

    The first pass takes the tails of :func:`_tails`; with more than one
    unit, the second places the units one after the other, longest tail
    first (:func:`_one_unit_after_another`); each further one adds to
    every operation's tail a random number of ticks, up to three mean
    operation lengths (seeded by the pass: the result is deterministic),
    so that ties and near-ties among critical branches break otherwise.
    Kept: the pass whose instances end earliest in all (the sum of their
    completion ticks, the start-up of the schedule: the instances lost in
    a long horizon), the first on ties, so never worse than the first
    pass.  :data:`PLACEMENT_PASSES` passes at most, and
    :data:`PLACEMENT_BUDGET` operations placed in all.  Measured
    (``benchmarks/pipeline_fill.py``): on ``fat_tree`` k=4, the aligned
    family of three reduction trees loses 26 time units in 100 periods
    after 8 passes (27 after the first); on k=8, the family of five loses
    46 (50 after the first; the second pass is the best).
    """
    tails = [_tails(p, w) for p, w in zip(producers, length, strict=True)]
    passes = max(1, min(PLACEMENT_PASSES, PLACEMENT_BUDGET // max(jobs.total, 1)))
    sizes = [w for row in length for w in row]
    spread = 3 * sum(sizes) // max(len(sizes), 1)
    tries: list[list[list[int]]] = [tails]
    if passes > 1 and len(tails) > 1:
        period = max(r.period for r in resources.values())
        tries.append(_one_unit_after_another(tails, sum(sizes) + 2 * period * jobs.total))
    for k in range(1, passes - len(tries) + 1):
        rng = random.Random(k)
        tries.append([[t + rng.randint(0, spread) for t in row] for row in tails])
    best: tuple[int, list[_Place], list[int]] | None = None
    for k, heights in enumerate(tries):
        fresh = {r: resource.fresh() for r, resource in resources.items()} if k else resources
        where, lags, ends = _place(jobs, fresh, producers, heights, clock, critical_first=True)
        if best is None or ends < best[0]:
            best = (ends, where, lags)
    assert best is not None
    return best[1], best[2]


def _one_unit_after_another(tails: list[list[int]], horizon: int) -> list[list[int]]:
    """Heights that place the units one after the other, the one of longest tail first:
    each unit's operations are raised by more than any ready time above every operation
    of the units after it.  ``horizon`` bounds the ready times: the ticks of all
    operations, and two periods per operation (an operation waits at most until the next
    period's free place of its resource).  On ``fat_tree`` k=8 (the aligned family of
    five trees, one instance each) this pass is the best: 454 instances in 100 periods
    instead of 450 (the sum of completion ticks 245 instead of 260)."""
    order = sorted(range(len(tails)), key=lambda u: (-max(tails[u], default=0), u))
    step = horizon + max((t for row in tails for t in row), default=0) + 1
    raised = [list(row) for row in tails]
    for rank, u in enumerate(order):
        lift = (len(order) - 1 - rank) * step
        raised[u] = [t + lift for t in tails[u]]
    return raised


_Resource = NodeId | _Link
"""A CPU (its node) or a link."""

_Pieces = list[tuple[int, int]]
"""Where a slot runs in the period: (start, length) in ticks, in time order."""

_Place = _Pieces | int
"""Where an operation runs in the period: its slot's pieces, or its start when it runs
whole on a resource without slots (an int: no container for the garbage collector to
track, in a list of up to ``max_events`` entries)."""

_Taken = tuple[int, _Place, int]
"""An operation placed on its resource: when it ends (a tick counted from the start of
the first period), where it runs in its period, and that period (its lag)."""


class _Slots:
    """A resource with fixed slots (the k-th transfer of a link in matchings, or
    zero-time computations at 0), each taken by one operation."""

    def __init__(self, pieces: list[_Pieces], period: int) -> None:
        self.pieces = pieces
        self.period = period
        self.starts = [p[0][0] for p in pieces]
        # Next free slot at or after k (union-find, path halving); len(pieces): none.
        self.after = list(range(len(pieces) + 1))

    def fresh(self) -> _Slots:
        """The same slots, all free again."""
        return _Slots(self.pieces, self.period)

    def _free_from(self, k: int) -> int:
        nxt = self.after
        while nxt[k] != k:
            nxt[k] = nxt[nxt[k]]
            k = nxt[k]
        return k

    def take(self, ready: int) -> _Taken:
        """The free slot starting first at or after ``ready`` (a tick of any period; a
        slot recurs every period), now taken (see :data:`_Taken`).  The slots run one
        after the other, so it also ends first."""
        lap, offset = divmod(ready, self.period)
        nxt = self.after
        k = bisect.bisect_left(self.starts, offset)
        while nxt[k] != k:  # _free_from, inlined: one call less per transfer
            nxt[k] = nxt[nxt[k]]
            k = nxt[k]
        if k == len(self.starts):  # none left in this period: the first of the next
            lap += 1
            k = self._free_from(0)
        nxt[k] = k + 1
        pieces = self.pieces[k]
        return lap * self.period + pieces[-1][0] + pieces[-1][1], pieces, lap


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
        self.count = count
        self.starts = [0]
        self.ends = [period]
        self.room = period // length  # operations the gaps can still hold
        self.left = count  # operations still to place

    def fresh(self) -> _Gaps:
        """The same resource, all free again."""
        return _Gaps(self.period, self.length, self.count)

    def take(self, ready: int) -> _Taken:
        """The earliest start at or after ``ready`` (see the class notes), now taken
        (see :data:`_Taken`; where it runs: its start in the period)."""
        lap, offset = divmod(ready, self.period)
        at = self._take_from(offset)
        if at is None:
            lap += 1
            at = self._take_from(0)
            assert at is not None, "count x length > period"
        return lap * self.period + at + self.length, at, lap

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


def _place(jobs: _Jobs, resources: dict[_Resource, _Slots | _Gaps],
           producers: list[list[list[int]]], heights: list[list[int]], clock: Deadline,
           *, critical_first: bool = False) -> tuple[list[_Place], list[int], int]:
    """Where every operation of the period runs, and its lag: list scheduling on the
    periodic resources.

    The operations of one period are scheduled as if all their instances
    started at time 0, in the order they become ready (all their inputs
    arrived; on ties, the longest chain of operations still to follow it
    first, then the operation number), each taking the place of its
    resource that starts first at or after that time, in this period or a
    later one (every place recurs each period): the greedy of modulo
    scheduling (Rau, "Iterative modulo scheduling", MICRO 1994), with the
    period as initiation interval.  The period an operation starts in is
    its lag: the first period in which its place starts after all its
    inputs have fully arrived (RR-4872, section 3.4: buffers fill during
    start-up), since no earlier place of its resource was free after them.
    The lags are as small as the places already taken allow, and the
    start-up as short.

    With ``critical_first`` (units with reductions: in-trees, whose
    results wait for their slowest branch), ``heights`` are tails in ticks
    (:func:`_tails`) and the ready operation taken next is instead the one
    whose instance would end last, ``ready + tail`` largest, then the
    longest tail, then the number: height-based priority, as Rau's
    iterative modulo scheduling orders its operations, taken as soon as
    its inputs are placed.  Measured (``benchmarks/pipeline_fill.py``):
    on ``fat_tree`` k=4 the aligned family of three reduction trees then
    loses 27 time units in 100 periods instead of 32 (one pass); the
    allreduce and reduce workloads there complete as many instances or more; on
    broadcasts and allgathers (out-trees) the ready-first order did as
    well or better, and stays theirs.

    The first two results are indexed by operation number (:class:`_Jobs`);
    the third is the sum over the period's instances of the tick their
    last operation ends (critical first only, else 0).  The heap holds one
    integer per ready operation, ``(ready × (tallest + 1) + tallest −
    height) × total + number``: its order is that of the
    tuple (ready, −height, number), at a fraction of the cost; critical
    first, ``(−(ready + tail) × (tallest + 1) + tallest − tail) × total +
    number``, the order of (−(ready + tail), −tail, number).
    """
    total = jobs.total
    # Per unit operation (q = its unit's first q + its index): its resource's
    # take, and its consumers (offset of their number, inputs, key part).
    first_q: list[int] = []
    q = 0
    for row in producers:
        first_q.append(q)
        q += len(row)
    take: list[Callable[[int], _Taken]] = [_unused] * q
    placed_on: list[tuple[_Resource, Runs]] = [*jobs.cpus.items(), *jobs.links.items()]
    for r, runs in placed_on:
        taker = resources[r].take
        for u, oi in runs:
            take[first_q[u] + oi] = taker
    tallest = max((h for row in heights for h in row), default=0)
    stride = (tallest + 1) * total
    # key = sign × ready × stride + ranks[operation] + number; ready = sign × (key //
    # stride) − shift[operation] (critical first: the key holds ready + tail).
    sign = -1 if critical_first else 1
    ranks: list[int] = [0] * q
    shift: list[int] = [0] * q
    for u, unit_heights in enumerate(heights):
        for oi, h in enumerate(unit_heights):
            if critical_first:
                ranks[first_q[u] + oi] = (tallest - h * (tallest + 2)) * total
                shift[first_q[u] + oi] = h
            else:
                ranks[first_q[u] + oi] = (tallest - h) * total
    follow: list[list[tuple[int, int, int]]] = [[] for _ in range(q)]
    for u, row in enumerate(producers):
        for oi, made_by in enumerate(row):
            for pi in made_by:
                follow[first_q[u] + pi].append((oi - pi, len(made_by),
                                                ranks[first_q[u] + oi] + oi - pi))
    # Per operation number: its unit operation, its inputs still to place; the ready
    # operations without inputs.
    q_of: list[int] = []
    left: list[int] = []
    heap: list[int] = []
    for u, row in enumerate(producers):
        copies, m = jobs.copies[u], len(row)
        if not copies:
            continue
        q_of += list(range(first_q[u], first_q[u] + m)) * copies
        left += [len(made_by) for made_by in row] * copies
        for oi, made_by in enumerate(row):
            if not made_by:
                key = ranks[first_q[u] + oi] + jobs.first[u] + oi
                heap += range(key, key + copies * m, m)
    heapq.heapify(heap)
    where: list[_Place] = [0] * total
    lags = [0] * total
    finish = [0] * total if critical_first else []
    ready = [0] * total  # the latest arrival of the inputs placed so far
    push, pop = heapq.heappush, heapq.heappop
    done = 0
    while heap:
        done += 1
        if done % 256 == 0:
            clock.check(_PHASE)
        key = pop(heap)
        number = key % total
        uq = q_of[number]
        at = sign * (key // stride) - shift[uq]
        end, where[number], lags[number] = take[uq](at)
        if critical_first:
            finish[number] = end
        for offset, inputs, rank in follow[uq]:
            if inputs > 1:
                nxt = number + offset
                waiting = left[nxt] - 1
                left[nxt] = waiting
                if ready[nxt] < end:
                    ready[nxt] = end
                if waiting:
                    continue
                push(heap, sign * ready[nxt] * stride + number + rank)
            else:
                push(heap, sign * end * stride + number + rank)
    if not critical_first:
        return where, lags, 0
    ended = 0
    for u, row in enumerate(producers):
        m = len(row)
        for start in range(jobs.first[u], jobs.first[u] + jobs.copies[u] * m, m):
            ended += max(finish[start:start + m])
    return where, lags, ended


def _unused(ready: int) -> _Taken:
    """The take of an operation no instance runs (its unit carries none): never called."""
    raise AssertionError("an operation of a unit without instances was placed")


def _events(jobs: _Jobs, units: Sequence[Unit], depths: list[list[int]],
            where: list[_Place], lags: list[int], duration: dict[_Link, int],
            compute_time: dict[NodeId, int], tick: int, clock: Deadline
            ) -> tuple[Event, ...]:
    """The schedule's events: per CPU (zero-time computes first: they may share the
    instant 0), then per link, its operations shallow first (depth, then instance
    slot, then number), a split message piece by piece.

    The one loop over every event of the period, where the integers become
    objects: times back to ``Fraction`` (ticks of ``1 / tick``), one per
    distinct start, shared by its events (a ``Fraction`` is slow to make, and
    the events of a period share a few thousand starts); items made once
    per instance of a unit (:meth:`~portsim.simulator.items.Item.with_instance`)
    and shared by the events of that instance.
    """
    # Per unit: its distinct items, the index of each send's item and each
    # compute's inputs (a getter of the tuple) and output.
    distinct: list[list[Item]] = []
    send_item: list[list[int]] = []
    compute_items: list[list[tuple[Callable[[list[Item]], tuple[Item, ...]], int]]] = []
    for unit in units:
        index: dict[Item, int] = {}
        send_item.append([index.setdefault(s.item, len(index)) for s in unit.sends])
        row = []
        for c in unit.computes:
            ins = tuple(index.setdefault(x, len(index)) for x in c.inputs)
            row.append((_getter(ins), index.setdefault(c.output, len(index))))
        compute_items.append(row)
        distinct.append(list(index))
    made: list[list[list[Item] | None]] = [[None] * c for c in jobs.copies]
    low = min((min(row) for row in depths if row), default=0)
    slots = jobs.slots()
    copies, slot, first = jobs.copies, jobs.slot, jobs.first
    operations = [len(u.sends) + len(u.computes) for u in units]

    def ordered(runs: Runs) -> list[int]:
        # Sort keys (depth, slot, run) as one integer each: a run's keys are a range.
        n = len(runs)
        keys: list[int] = []
        for r, (u, oi) in enumerate(runs):
            key = ((depths[u][oi] - low) * slots + slot[u]) * n + r
            keys += range(key, key + copies[u] * n, n)
        keys.sort()
        return keys

    starts: dict[int, Fraction] = {}
    whole = _WHOLE
    events: list[Event] = []
    add = events.append
    cpus = jobs.cpus
    for node in [*(v for v in cpus if not compute_time[v]), *(v for v in cpus if compute_time[v])]:
        clock.check(_PHASE)
        runs = cpus[node]
        timed = compute_time[node] > 0
        n = len(runs)
        info = [(made[u], distinct[u], slot[u], first[u] + oi - slot[u] * operations[u],
                 operations[u], *compute_items[u][oi - len(units[u].sends)])
                for u, oi in runs]
        for key in ordered(runs):
            j, r = divmod(key, n)
            j %= slots
            cache, base_items, s0, base, m, inputs, output = info[r]
            items = cache[j - s0]
            if items is None:
                items = cache[j - s0] = [x.with_instance(j) for x in base_items]
            number = base + j * m
            at = where[number] if timed else 0
            start = starts.get(at)  # type: ignore[arg-type]
            if start is None:
                assert isinstance(at, int)
                start = starts[at] = Fraction(at, tick)
            add(Compute(node, inputs(items), items[output], start, lags[number]))
    for (src, dst), runs in jobs.links.items():
        clock.check(_PHASE)
        d = duration[src, dst]
        parts: dict[int, Fraction] = {}
        n = len(runs)
        links = [(made[u], distinct[u], slot[u], first[u] + oi - slot[u] * operations[u],
                  operations[u], send_item[u][oi]) for u, oi in runs]
        for key in ordered(runs):
            j, r = divmod(key, n)
            j %= slots
            cache, base_items, s0, base, m, sent = links[r]
            items = cache[j - s0]
            if items is None:
                items = cache[j - s0] = [x.with_instance(j) for x in base_items]
            number = base + j * m
            found = where[number]
            lag = lags[number]
            if type(found) is int:  # whole, on a link without matchings
                pieces: _Pieces = [(found, d)]
            else:
                pieces = found  # type: ignore[assignment]
            for at, piece in pieces:
                start = starts.get(at)
                if start is None:
                    start = starts[at] = Fraction(at, tick)
                if piece == d:
                    part = whole
                else:
                    part = parts.get(piece)  # type: ignore[assignment]
                    if part is None:
                        part = parts[piece] = Fraction(piece, d)
                add(Send(src, dst, items[sent], start, part, lag))
    return tuple(events)


def _getter(indexes: tuple[int, ...]) -> Callable[[list[Item]], tuple[Item, ...]]:
    """The function taking the items at ``indexes`` of a list, as a tuple."""
    if len(indexes) >= 2:
        return operator.itemgetter(*indexes)  # a tuple for two indexes or more
    return lambda items: tuple(items[i] for i in indexes)


_WHOLE: Fraction = Send.__dataclass_fields__["part"].default  # type: ignore[assignment]
"""The part of a whole message: the default of :class:`Send` (which the engine
recognises by identity), shared by every whole message."""
