"""The replay engine: SimPy drives time, the schedule is checked event by event.

Two modes (DESIGN.md, "Engine"):

- ``strict``: every event starts exactly at its stated time; every conflict is
  a violation.  This is the validator.
- ``asap`` (as soon as possible): the order the schedule gives on every port
  and CPU is kept, and each event starts as soon as all its ports are free AT
  THE SAME INSTANT and its inputs have fully arrived; the achieved times are
  the result.

Both modes handle the bidirectional, unidirectional and multi-port models per
node, links as resources (one transfer at a time on a directed link, under
every model), computation fully overlapped with communication (one
computation at a time per node), fractional parts, and symbolic
non-commutative reductions.

Exact and float time
--------------------
In exact mode (the default) every time is multiplied by the least common
multiple ``D`` of all the denominators in the replay (starts, durations,
period, horizon), so the engine computes on Python integers: exact, and
nearly as fast as floats.  Times are turned back into ``Fraction`` only in
the report.  Float mode uses floats and compares times with an absolute
tolerance of a quarter of one tick ``1 / D`` (:data:`FLOAT_TICK_FRACTION`):
two distinct exact times differ by a tick at least, so no overlap of the
exact schedule hides in the tolerance; a schedule whose tick is finer than
float precision at its largest time is refused.

Cost
----
SimPy is the event core of both modes (public API only: ``Environment``,
``timeout``, ``Event.callbacks``, ``Event.value``).  Strict mode schedules
one SimPy event per distinct start time (a port is "busy until" a time, so
no end events are needed); ASAP mode schedules one SimPy event per event
(its end), and a per-port queue does the dispatching, so a transfer never
holds one port while waiting for another.  The compile step turns every
schedule event once into a :class:`_Play` record (integer keys, integer or
float times); a one-shot replay plays those records themselves, a periodic
one copies them period after period.  A replay runs with Python's cyclic
garbage collector paused (:mod:`portsim.simulator.collector`): its 100,000
records and keys all live until it ends, and the collector would walk them
(and the whole heap) several times to free nothing.  Nor does it leave them
in a reference cycle (see :meth:`_Strict.go`): they are freed when it
returns.  ``benchmarks/engine.py`` compares both modes with a bare
``heapq`` loop doing the same checks in the same process, the collector
paused for it too (100,000 transfers on 20 and 200 nodes): strict at 0.8
to 1.15 of its speed (0.83 to 0.93 on 200 nodes, exact time), as soon as
possible at 0.8 to 0.95 (the ratios move by 0.05 to 0.1 from run to run on
a shared machine).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from operator import attrgetter
from typing import Any, cast

import simpy

from portsim.simulator.collector import paused_collection
from portsim.simulator.errors import PlatformError, ScheduleError
from portsim.simulator.items import Item, combine
from portsim.simulator.numbers import (
    common_denominator,
    counted,
    format_rational,
    parse_rational,
    per_time,
    with_article,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform, PortKind, PortModel
from portsim.simulator.report import Report, Violation, ViolationKind, own_port_models
from portsim.simulator.schedule import Compute, Event, Schedule, Send

__all__ = [
    "DEFAULT_PERIODS",
    "FLOAT_TICK_FRACTION",
    "MAX_REPLAY_EVENTS",
    "MAX_SERIES_EVENTS",
    "check_schedule",
    "default_horizon",
    "measure_series",
    "parse_tolerance",
    "replay",
    "replay_asap_periodic",
    "replay_one_shot",
    "replay_periodic",
    "replay_series",
]

FLOAT_TICK_FRACTION = 0.25
"""Float mode compares times up to this fraction of one tick ``1 / D`` of the
exact schedule (``D``: the least common multiple of every denominator of its
starts, durations, period and horizon).  Two distinct exact times differ by
at least one tick, so an overlap of one tick is never hidden; a schedule
whose tick float arithmetic cannot resolve is refused (replay it exactly)."""

_NAMED_BUSY = 8
"""A conflict names at most this many of the events busy on its resource and
counts the rest: n sends started at once on one port made the i-th name the
i - 1 before it, a report (and its text) growing as n^2."""

_FLOAT_NOISE = 16 * 2.0 ** -52
"""Bound on the relative rounding error of a float time (a few operations,
each within half an ulp), with room to spare."""

DEFAULT_PERIODS = 10
"""Periods replayed past the largest lag when a periodic schedule comes
without a horizon."""

MAX_SERIES_EVENTS = 2_000_000
"""Cap on the events :func:`replay_series` replays to find the repeating
pattern of a pipelined series (beyond it the replay is cut, and says so by
a shorter ``horizon``)."""

MAX_REPLAY_EVENTS = 5_000_000
"""Cap on the concrete events of a periodic replay (periods times pattern
events): a huge horizon or lag is reported as bad input instead of hanging."""

_SEND = 0
_COMPUTE = 1

_WHOLE = cast(Fraction, Send.__dataclass_fields__["part"].default)
"""The default ``part`` of a :class:`Send` (a whole message), recognised by identity."""


@dataclass(slots=True, eq=False)
class _Play:
    """One play of a schedule event: what the strict and the ASAP replays read.

    Times are integer ticks (exact mode) or floats; ``res`` the resources it
    occupies (ports of a send, CPU of a compute, a link of two multi-port
    ends); ``needs`` and ``give`` held-item keys of its instance
    ``instance``; ``index`` the event's position in the schedule.

    A slotted dataclass rather than a NamedTuple: created as fast or faster
    (0.54 against 0.75 microseconds for nine fields, Python 3.11) and read
    as fast as a tuple; not frozen, since a frozen one takes four times as
    long to create (never changed after creation all the same).
    """

    start: Any
    duration: Any
    kind: int
    res: tuple[int, ...]
    needs: tuple[int, ...]
    give: int
    part: Any
    index: int
    instance: int


@dataclass(slots=True, eq=False)
class _Pattern(_Play):
    """What the compile step knows about one event of the schedule.

    Its play as instance ``instance`` (in a periodic schedule: the slot #j,
    played in period ``lag``): a one-shot replay plays the patterns
    themselves.  ``playable`` is False for a send over a missing link.
    """

    lag: int
    playable: bool


def _fraction(pair: tuple[int, int] | None) -> Fraction | None:
    """A duration kept as (numerator, denominator), back to a Fraction."""
    return None if pair is None else Fraction(*pair)


_start_of = attrgetter("start")
"""The sort key of plays: their start (a C function: sorting calls it once a play)."""


class _Run:
    """Compiled form of one replay: node, port and item numbering, time unit.

    Internal: built and consumed by :func:`replay`.
    """

    def __init__(
        self,
        schedule: Schedule,
        port_model: PortModel | None,
        exact: bool,
        tolerance: Fraction = Fraction(0),
    ) -> None:
        self.schedule = schedule
        self.tolerance = tolerance
        self.operation = schedule.operation
        self.platform = (
            schedule.platform if port_model is None
            else schedule.platform.with_port_model(port_model)
        )
        self.exact = exact
        self.violations: list[tuple[Any, int, Violation]] = []  # (time, order, violation)
        platform = self.platform
        self.node_ids = platform.node_ids
        self.node_index = {nid: i for i, nid in enumerate(self.node_ids)}
        self.nn = len(self.node_ids)

        # Resources: one send and one receive port per node (the same one
        # under the unidirectional model) with the capacity of its model
        # (PortModel.ports), then one CPU per node, then one resource per
        # directed link of capacity 1 (a link carries one transfer at a time).
        self.send_port: list[int] = []
        self.recv_port: list[int] = []
        # Ports that only repeat their links: `multiport` without k, one port
        # per link (and a side of `multiport:k` with k >= its links, the same).
        # Such a port is full only when all its links are busy, this
        # transfer's included, so its conflict is the link's: a link
        # resource is made for its links (below) and the strict replay reports
        # that alone (a second transfer on the one link of such a node was two
        # port_conflicts, send and receive, and one link_conflict on a node of
        # two links).  No event takes such a port (see compile): the
        # as-soon-as-possible replay keeps the order of the events per link
        # there (on a switch, the copies of a series pipeline through its
        # links), where it kept one order across all the node's links.
        self.by_links: set[int] = set()
        self.capacity: list[int] = []
        self.resource_names: list[str] = []
        self.resource_node: list[str] = []
        for nid in self.node_ids:
            model = platform.port_model_of(nid)
            out_links, in_links = platform.degree(nid)
            port = len(self.capacity)
            self.send_port.append(port)
            if model.kind is PortKind.UNIDIRECTIONAL:
                self.capacity.append(1)
                self.recv_port.append(port)
                self.resource_names.append(f"port of {nid}")
                self.resource_node.append(nid)
            else:
                self.capacity.extend([model.ports(out_links), model.ports(in_links)])
                if model.kind is PortKind.MULTIPORT:
                    # multiport:k with k >= the side's links is the same model
                    # (`multiport:8` on a switch of 8 links): one port per link
                    # too, or the order across its links came back
                    for side, links in ((port, out_links), (port + 1, in_links)):
                        if model.k is None or model.k >= links:
                            self.by_links.add(side)
                self.recv_port.append(port + 1)
                self.resource_names.extend([f"send port of {nid}", f"receive port of {nid}"])
                self.resource_node.extend([nid, nid])
        self.cpu = [len(self.capacity) + i for i in range(self.nn)]
        self.capacity.extend([1] * self.nn)
        self.resource_names.extend(f"CPU of {nid}" for nid in self.node_ids)
        self.resource_node.extend(self.node_ids)
        # A link needs its own resource only where both its ports may take
        # several transfers at once; elsewhere a port of capacity 1 already
        # keeps the link to one transfer (and reports the conflict as its own).
        self.link_resource: dict[tuple[int, int], int] = {}
        self.link_resources: set[int] = set()
        # else no link needs one
        several = bool(self.by_links) or any(c > 1 for c in self.capacity)
        capacity, by_links = self.capacity, self.by_links
        for link in platform.links if several else ():
            src, dst = self.node_index[link.src], self.node_index[link.dst]
            out, into = self.send_port[src], self.recv_port[dst]
            if ((capacity[out] > 1 or out in by_links)
                    and (capacity[into] > 1 or into in by_links)):
                r = len(self.capacity)
                self.link_resource[src, dst] = r
                self.link_resources.add(r)
                self.capacity.append(1)
                self.resource_names.append(f"link {link.src} -> {link.dst}")
                self.resource_node.append(link.src)

        # Items: canonical base items get small integer ids; an item held by a
        # node is the integer key  instance * (nb * nn) + base * nn + node.
        self.bases: dict[Item, int] = {}
        self.base_list: list[Item] = []
        # (kind, args, ordered) -> base id: hashed in C, whatever the instance.
        self._base_cache: dict[tuple[str, tuple[Any, ...], bool], int] = {}
        op = self.operation
        for table in (op.initial_items(0), op.required_items(0)):
            for items in table.values():
                for item in items:
                    self._base(item)
        self.own_bases = len(self.base_list)  # the operation's own items: the first ids

    def _base(self, item: Item) -> int:
        """The base id of ``item`` (its canonical form of instance 0)."""
        name = (item.kind, item.args, item.ordered)
        found = self._base_cache.get(name)
        if found is None:
            base = self.operation.normalize(item).with_instance(0)
            found = self.bases.get(base)
            if found is None:
                found = self.bases[base] = len(self.base_list)
                self.base_list.append(base)
            self._base_cache[name] = found
        return found

    def compile(self, horizon: Fraction | None) -> None:
        """Choose the time unit, then turn every schedule event into a :class:`_Pattern`.

        Two passes: the first numbers the durations and the items (so the key
        distance between two instances is known) and finds the time unit; the
        second builds the patterns, with the keys of their own instance.
        """
        schedule = self.schedule
        events = schedule.events
        platform = self.platform
        size = self.operation.size
        # Number the distinct durations: few (link, part) pairs and nodes in
        # practice, and hashing strings and ints is far cheaper than Fractions.
        # A duration is kept as (numerator, denominator): a tuple of ints,
        # which the garbage collector stops tracking (thousands of Fractions
        # kept alive here, one per link, made it walk the whole heap).
        duration_ids: dict[object, int] = {}
        distinct: list[tuple[int, int] | None] = []  # None: a send over a missing link
        distinct_parts: list[Fraction] = []
        # Per duration number of a send: its nodes' numbers and its resources.
        sends: list[tuple[int, int, tuple[int, ...]]] = []
        index = self.node_index
        send_port, recv_port, cpu = self.send_port, self.recv_port, self.cpu
        link_resource, by_links = self.link_resource, self.by_links
        event_duration: list[int] = []
        event_base: list[int] = []  # sends: the item's base id (computes: -1)
        base = self._base
        known = self._base_cache
        scale = 1  # the common denominator of the starts (then of everything)
        # The longest time a whole message takes without latency on a link
        # that carries parts: what the tolerance's fraction of a message is.
        parted_whole = Fraction(0)
        for e in events:
            d = e.start.denominator
            if d != 1 and scale % d:
                scale = scale * d // math.gcd(scale, d)
            if type(e) is Send:
                part = e.part
                key: object = ((e.src, e.dst) if part is _WHOLE
                               else (e.src, e.dst, part.numerator, part.denominator))
                item = e.item
                b = known.get((item.kind, item.args, item.ordered))  # _base, inlined
                event_base.append(base(item) if b is None else b)
            else:
                # one duration per node and number of reduction tasks (2 inputs: one)
                key = (e.node if len(e.inputs) == 2  # type: ignore[union-attr]
                       else (e.node, len(e.inputs)))  # type: ignore[union-attr]
                part = _WHOLE
                event_base.append(-1)
            j = duration_ids.get(key)
            if j is None:
                j = duration_ids[key] = len(distinct)
                if type(e) is Send:
                    try:
                        duration: Fraction | None = platform.duration(e.src, e.dst, size, part)
                    except PlatformError:  # no such link
                        duration = None
                    else:
                        if part is not _WHOLE and part != 1:
                            link_of = platform.link(e.src, e.dst)
                            parted_whole = max(parted_whole,
                                               (link_of.c - link_of.latency) * size)
                    src, dst = index[e.src], index[e.dst]
                    link = link_resource.get((src, dst))
                    taken: tuple[int, ...] = (send_port[src], recv_port[dst]) if (
                        link is None) else (send_port[src], recv_port[dst], link)
                    # A port of one slot per link (`by_links`) never binds: its
                    # link does.  Left out, so that the as-soon-as-possible
                    # replay keeps the order per link, each link being the
                    # node's port for it, not across all the node's links.
                    kept = tuple(r for r in taken if r not in by_links)
                    sends.append((src, dst, kept or taken))
                else:
                    duration = (platform.compute_time(e.node)  # type: ignore[union-attr]
                                * e.tasks)  # type: ignore[union-attr]
                    sends.append((-1, -1, ()))
                if duration is None:
                    distinct.append(None)
                else:
                    d = duration.denominator
                    if d != 1 and scale % d:
                        scale = scale * d // math.gcd(scale, d)
                    distinct.append((duration.numerator, d))
                distinct_parts.append(part)
            event_duration.append(j)
        values: list[Fraction] = []
        if schedule.period is not None:
            values.append(schedule.period)
        if horizon is not None:
            values.append(horizon)
        scale = math.lcm(scale, common_denominator(values))

        if self.exact:
            self.scale = scale
            # in time units: what the caller's tolerance spans, whole ticks
            self.tol: int | float = math.floor(self.tolerance * scale)
            # Parts that sum to just under 1 (three parts 0.3333333333333333):
            # whole once the fraction missing would take at most the tolerance
            # to send on every link that carries parts.
            self.part_tol: Fraction | float = (self.tolerance / parted_whole
                                               if parted_whole else 0)
            self.one: Fraction | float = Fraction(1)

            def to_time(v: Fraction) -> int | float:
                return v.numerator * (scale // v.denominator)
            parts: list[Any] = [1 if p is _WHOLE or p == 1 else p for p in distinct_parts]
        else:
            self.scale = 1
            self.part_tol = FLOAT_TICK_FRACTION / common_denominator(
                p for p in distinct_parts if p is not _WHOLE)  # (whole: denominator 1)
            self.one = 1.0

            def to_time(v: Fraction) -> int | float:
                return v.numerator / v.denominator
            parts = [1 if p is _WHOLE or p == 1 else float(p) for p in distinct_parts]
        self.to_time = to_time
        times = [0 if d is None else d[0] * (scale // d[1]) if self.exact else d[0] / d[1]
                 for d in distinct]

        nn = self.nn
        for e in events:  # the computes' items, now
            if type(e) is not Send:
                assert isinstance(e, Compute)
                for x in e.inputs:
                    base(x)
                base(e.output)
        self.nb = len(self.base_list)
        stride = self.stride = self.nb * nn  # key distance between two instances
        exact = self.exact
        patterns: list[_Pattern] = []
        self.patterns = patterns
        # Per duration number, what a send's pattern takes from it (one lookup).
        uses = [(src, dst, res, time, part, d is not None)
                for (src, dst, res), time, part, d in zip(sends, times, parts, distinct,
                                                          strict=True)]
        for i, (e, j, b) in enumerate(zip(events, event_duration, event_base, strict=True)):
            start = e.start
            start_t = (start.numerator * (scale // start.denominator) if exact
                       else start.numerator / start.denominator)
            if type(e) is Send:
                src, dst, res, time, part, playable = uses[j]
                instance = e.item.instance
                b = b * nn + instance * stride
                patterns.append(_Pattern(start_t, time, _SEND, res, (b + src,), b + dst,
                                         part, i, instance, e.lag, playable))
                if not playable or e.duration is not None:
                    self._check_static(i, e, _fraction(distinct[j]))
            else:
                assert isinstance(e, Compute)
                node = index[e.node]
                instance = e.output.instance
                shift = instance * stride + node
                # each input of its own instance: one of another instance than the
                # output (a reduction_order violation) is looked for as written
                patterns.append(_Pattern(
                    start_t, times[j], _COMPUTE, (cpu[node],),
                    tuple(base(x) * nn + x.instance * stride + node for x in e.inputs),
                    base(e.output) * nn + shift, 1, i, instance, e.lag, True))
                self._check_static(i, e, _fraction(distinct[j]))
        # Schedule.follows: event j waits for the end of event i, told by the
        # token key -1 - i (negative: no held-item key is), which i gives as it
        # ends (leads[i] set) and j needs as an input.  A flag per event, not a
        # dict: a series of a 64-rank ring has a million of them.
        self.leads = bytearray(len(patterns) if schedule.follows else 0)
        # Send.transit: its receiver keeps no copy.  Its play gives the token
        # of its own end (a whole, whatever its part) instead of the
        # receiver's key, and its follower (Schedule checked it: one pair
        # (i, j), j sending the item on from that receiver) needs that token
        # instead of the key: no other event, nor the operation's completion,
        # sees the copy.  ``transit``: event -> the receiver's key it does not
        # give (to name it); ``in_transit``: key -> those events (messages).
        self.transit: dict[int, int] = {}
        self.in_transit: dict[int, list[int]] = {}
        if schedule.follows:
            for i, e in enumerate(events):
                if type(e) is Send and e.transit:
                    pat = patterns[i]
                    self.transit[i] = pat.give
                    self.in_transit.setdefault(pat.give, []).append(i)
                    pat.give = -1 - i
                    pat.part = 1 if exact else 1.0
        transit = self.transit
        for i, j in schedule.follows:
            self.leads[i] = 1
            follower = patterns[j]
            relayed = transit.get(i)
            if (relayed is not None and follower.kind == _SEND and relayed in follower.needs
                    and events[j].part == events[i].part):  # type: ignore[union-attr]
                # the follower (Schedule.follows pairs i with others too): it sends
                # the transit copy on, not a copy its sender holds
                follower.needs = (*(k for k in follower.needs if k != relayed), -1 - i)
            else:
                follower.needs = (*follower.needs, -1 - i)
        self._durations = (distinct, event_duration)  # for exact_end()
        if not exact:
            # The largest start and duration, found among the floats (their
            # exact values are the ones the tolerance needs: their floats
            # are the same).
            largest = [v for v in (schedule.period, horizon) if v is not None]
            latest = max(patterns, key=_start_of, default=None)
            if latest is not None:
                largest.append(events[latest.index].start)
            longest = max(range(len(times)), key=times.__getitem__, default=None)
            duration = None if longest is None else _fraction(distinct[longest])
            if duration is not None:
                largest.append(duration)
            self.tol = _float_tolerance(largest, tick=scale)
        if schedule.period is not None:
            self._slot_spans(to_time(schedule.period))

    def _slot_spans(self, period: int | float) -> None:
        """Per instance slot #j: when, past its period's start, its last event ends.

        ``span[j]``: the latest end of slot j's events (``lag * period +
        start + duration``); ``instant[j]``: the same over its zero-time
        events.  A slot with no event at all (``idle``) must still complete
        its instance every period: it is expected as soon as the slowest slot
        is, ``idle_span`` after its period's start.
        """
        span: dict[int, Any] = {}  # a dict: instances_per_period may be huge
        instant: dict[int, Any] = {}
        for pat in self.patterns:
            end = pat.lag * period + pat.start + pat.duration
            slot = pat.instance
            if slot not in span or end > span[slot]:
                span[slot] = end
            if pat.duration == 0 and (slot not in instant or end > instant[slot]):
                instant[slot] = end
        self.span = span
        self.instant = instant
        self.idle_span: Any = max([period, *span.values()])

    def exact_end(self) -> Fraction | None:
        """The exact end of the last event (start + duration; ``None`` without one),
        for the throughput a float one-shot replay proves (its own end is a float).

        Only the events whose float end lies within a relative 10^-9 of the
        latest float end are summed exactly: a float start and duration are
        each within half an ulp of their exact values, so the latest exact end
        is among them (100,000 Fraction sums took a quarter of a float replay).
        """
        distinct, event_duration = self._durations
        ends = [(p.start + p.duration, p.index) for p in self.patterns if p.playable]
        if not ends:
            return None
        near = max(ends)[0] * (1 - 1e-9)
        events = self.schedule.events
        return max(events[i].start + _fraction(distinct[event_duration[i]])  # type: ignore[operator]
                   for end, i in ends if end >= near)

    def _check_static(self, i: int, e: Event, duration: Fraction | None) -> None:
        """Checks that do not depend on time: links, durations, reductions."""
        time = e.start if self.exact else float(e.start)
        op = self.operation
        if isinstance(e, Send):
            if duration is None:
                self.violate(time, ViolationKind.NO_LINK, e.src,
                             f"no link {e.src} -> {e.dst} for {e.item}", (i,),
                             resource=f"link {e.src} -> {e.dst}")
                return
            node = e.src
            resource = f"link {e.src} -> {e.dst}"
        else:
            node = e.node
            resource = f"CPU of {e.node}"
            if self.platform.node(e.node).router:
                self.violate(time, ViolationKind.ROUTER_COMPUTE, e.node,
                             f"router {e.node} computes {e.output}", (i,), resource=resource)
            inputs = [op.normalize(x) for x in e.inputs]
            result = combine(inputs, commutative=op.commutative)
            if isinstance(result, str):
                self.violate(time, ViolationKind.REDUCTION_ORDER, e.node,
                             f"compute of {e.output} from "
                             f"{', '.join(str(x) for x in e.inputs)}: {result}", (i,),
                             resource=str(e.output))
            elif result != op.normalize(e.output):
                self.violate(time, ViolationKind.WRONG_OUTPUT, e.node,
                             f"inputs {', '.join(str(x) for x in e.inputs)} make {result}, "
                             f"not {e.output}", (i,), resource=str(e.output))
        # a duration computed in floats, within the tolerance, is the platform's
        if e.duration is not None and e.duration != duration and (
                duration is None or abs(e.duration - duration) > self.tolerance):
            assert duration is not None
            self.violate(time, ViolationKind.WRONG_DURATION, node,
                         f"stated duration {format_rational(e.duration)} but the platform "
                         f"implies {format_rational(duration)}", (i,), resource=resource)

    # -- helpers -----------------------------------------------------------------

    def violate(self, time: Fraction | float, kind: str, node: str, detail: str,
                events: tuple[int, ...], *, resource: str = "") -> None:
        """Record a violation (``time`` as reported: Fraction or float)."""
        self.violations.append(
            (time, len(self.violations), Violation(kind, time, node, detail, events, resource))
        )

    def out_time(self, t: int | float) -> Fraction | float:
        """An internal time as reported: a Fraction in exact mode."""
        if self.exact:
            return Fraction(int(t), self.scale)
        return float(t)

    def foreign(self, key: int) -> str:
        """Why the item of a held-item key can never be held (it is no item of the
        operation: ``m[A]`` in a broadcast, whose message is ``b``), or ``""``."""
        base = self.base_list[key % self.stride // self.nn]
        if (self.bases[base] < self.own_bases
                or (self.operation.is_reduction and base.kind == "v")):
            return ""
        own = [str(b) for b in self.base_list[:self.own_bases]]
        listed = ", ".join(own[:4]) + (", ..." if len(own) > 4 else "")
        whose = f"whose item is {listed}" if len(own) == 1 else f"whose items are {listed}"
        return f" ({base} is no item of {with_article(str(self.operation.kind))}, {whose})"

    def given(self, play: _Play) -> int:
        """The held-item key ``play`` gives, or would give were it no transit send."""
        key = play.give
        return key if key >= 0 else self.transit[play.index]

    def transit_text(self, key: int) -> str:
        """What a node that never holds ``key`` received of it in transit, or ``""``."""
        sends = self.in_transit.get(key)
        if not sends:
            return ""
        events = ", ".join(map(str, sends[:_NAMED_BUSY]))
        more = f" and {len(sends) - _NAMED_BUSY} more" if len(sends) > _NAMED_BUSY else ""
        return (f" (the copy event{'s' if len(sends) > 1 else ''} {events}{more} "
                f"delivered {'were' if len(sends) > 1 else 'was'} in transit: "
                f"only its follower passes it on)")

    def key_name(self, key: int) -> tuple[str, str]:
        """(node id, item name) of a held-item key."""
        instance, rest = divmod(key, self.stride)
        base, node = divmod(rest, self.nn)
        return self.node_ids[node], str(self.base_list[base].with_instance(instance))

    # -- the concrete event list -------------------------------------------------

    def concrete(self, horizon: int | float | None) -> list[_Play]:
        """Every event to play, sorted by start (ties: schedule order).

        A one-shot schedule plays its patterns themselves; a periodic one
        plays, in period ``p``, every pattern of slot #j and lag ``d`` as
        instance ``(p - d) * n + j``: a new :class:`_Play`, its keys shifted.
        """
        out: list[_Play] = []
        if self.schedule.period is None:
            out.extend(pat for pat in self.patterns if pat.playable)
            out.sort(key=_start_of)
            return out
        assert horizon is not None
        period = self.to_time(self.schedule.period)
        n = self.schedule.instances_per_period
        end = self.cutoff(horizon)
        periods = math.ceil(end / period)
        order = sorted((p for p in self.patterns if p.playable), key=_start_of)
        stride = self.stride
        for p in range(periods):
            base_time = p * period
            for pat in order:
                start = base_time + pat.start
                if start >= end:
                    break
                instance = (p - pat.lag) * n + pat.instance
                if instance >= 0:
                    shift = (instance - pat.instance) * stride
                    out.append(_Play(start, pat.duration, pat.kind, pat.res,
                                     tuple([k + shift for k in pat.needs]), pat.give + shift,
                                     pat.part, pat.index, instance))
        return out

    def cutoff(self, horizon: int | float) -> int | float:
        """The start from which a periodic replay over ``horizon`` plays no event.

        The horizon itself; in float time the horizon less the tolerance, a
        start within it of the horizon being at it (5 periods of 1/3 start at
        1.6666666666666665, below the horizon 5/3 = 1.6666666666666667, and
        were played: an instance more begun, a conflict more counted).  What
        :meth:`concrete` plays, :meth:`_Strict.count_until` counts and
        :func:`_fully_played` expects.
        """
        return horizon if self.exact else horizon - self.tol

    def initial_holdings(self, instances: Iterable[int]) -> dict[int, Any]:
        """What every node holds at time 0, for every instance replayed."""
        zero = 0 if self.exact else 0.0
        keys = [
            self._base(item) * self.nn + self.node_index[node]
            for node, items in self.operation.initial_items(0).items()
            for item in items
        ]
        stride = self.stride
        return {t * stride + k: zero for t in instances for k in keys}


# ---------------------------------------------------------------------------
# strict replay
# ---------------------------------------------------------------------------


class _Strict:
    """Strict replay: every event at its stated time, every conflict reported."""

    def __init__(self, run: _Run, events: list[_Play], held: dict[int, Any]) -> None:
        self.run = run
        self.events = events
        self.held = held
        self.tol = run.tol
        self.parts: dict[int, list[tuple[Any, Any]]] = {}
        # Per resource slot: busy until when, and by which schedule event.  A
        # resource never needs more slots than events use it (multiport:K with
        # a huge K would otherwise allocate K slots); one-port platforms, where
        # every capacity is 1, skip the count.
        width = run.capacity
        if max(run.capacity, default=1) > 1:
            uses = [0] * len(run.capacity)
            for play in events:
                for r in play.res:
                    uses[r] += 1
            width = [min(c, u) for c, u in zip(run.capacity, uses, strict=True)]
        self.slots: list[list[Any]] = [[-math.inf] * w for w in width]
        self.holders: list[list[int]] = [[-1] * w for w in width]
        # Per resource: the events overbooking it (busy until when, which
        # event) that its slots no longer hold (see overbook)
        self.extra: dict[int, list[tuple[Any, int]]] = {}
        self.end_time: Any = 0
        self.counted_until: Any = None
        # item_not_held violations that said "never received": (violation
        # number, key, text before the reason), told again once the replay
        # is over if a later event delivered the item after all
        self.unreceived: list[tuple[int, int, str]] = []

    @property
    def played(self) -> set[int]:
        """The instances with an event played: a strict replay plays every event
        (those that start before the horizon, see :meth:`count_until`)."""
        until = self.counted_until
        if until is None:
            return {ev.instance for ev in self.events}
        return {ev.instance for ev in self.events if ev.start < until}

    def count_until(self, horizon: Any) -> None:
        """Count only the events that start before ``horizon`` in :attr:`played`
        and :attr:`end_time`: the replay ran past it to check the steady state
        (``horizon``: the cutoff of :meth:`_Run.cutoff`, in float time a start
        within the tolerance of the horizon being at it)."""
        self.counted_until = horizon
        self.end_time = max((ev.start + ev.duration for ev in self.events
                             if ev.start < horizon), default=0)

    def go(self) -> None:
        """Play the batches in time order: one SimPy event per distinct start time."""
        env = simpy.Environment()
        events = self.events
        n = len(events)
        position = 0
        batch, play, held, tol = self.batch, self.play, self.held, self.tol

        def fire(_wake: simpy.Event) -> None:
            nonlocal position
            first = events[position]
            t = first.start
            end = position + 1
            while end < n and events[end].start == t:
                end += 1
            if end == position + 1:  # alone at t: nothing to retry (see batch)
                limit = t + tol
                for key in first.needs:
                    arrival = held.get(key)
                    if arrival is None or arrival > limit:
                        self.report_missing(first, t)
                        break
                play(first, t)
            else:
                batch(t, events[position:end])
            position = end
            if position < n:
                env.timeout(events[position].start - t).callbacks.append(
                    fire)  # noqa: F821 (deleted below once the replay is over)

        if n:
            env.timeout(events[0].start).callbacks.append(fire)
        env.run()
        # fire names itself (it schedules its next call): a reference cycle
        # through which it would keep this replay's every play alive until the
        # garbage collector looked for cycles (a full walk of the heap).
        del fire
        self.tell_late_arrivals()

    def tell_late_arrivals(self) -> None:
        """An item used before any event delivering it had started may still
        arrive later: say when, as for an item still on its way, not "never"."""
        violations = self.run.violations
        for number, key, said in self.unreceived:
            arrival = self.held.get(key)
            if arrival is not None:
                time, order, violation = violations[number]
                how = "ends only at" if key < 0 else "it arrives only at"  # key < 0: follows
                transit = "" if key < 0 else self.run.transit_text(key)
                violations[number] = (time, order, replace(
                    violation,
                    detail=f"{said} {how} t={_fmt(self.run.out_time(arrival))}{transit}"))

    def batch(self, t: Any, batch: list[_Play]) -> None:
        """Play every event that starts at ``t``.

        Zero-duration computes may produce, at ``t``, an input another event of
        the batch needs; events whose inputs are missing are retried while the
        batch makes progress, and only then reported.
        """
        held = self.held
        limit = t + self.tol
        play = self.play
        pending = batch
        while True:
            deferred = []
            produced = False
            for ev in pending:
                for key in ev.needs:
                    arrival = held.get(key)
                    if arrival is None or arrival > limit:
                        deferred.append(ev)
                        break
                else:
                    produced |= play(ev, t)
            if not deferred or not produced:
                break
            pending = deferred
        for ev in deferred:
            self.report_missing(ev, t)
            play(ev, t)

    def report_missing(self, ev: _Play, t: Any) -> None:
        run = self.run
        limit = t + run.tol
        for key in ev.needs:
            arrival = self.held.get(key)
            if arrival is not None and arrival <= limit:
                continue
            if key < 0:  # Schedule.follows: the event it follows has not ended
                node, name = run.resource_node[ev.res[0]], run.key_name(run.given(ev))[1]
                action = "sends" if ev.kind == _SEND else "computes"
                led = -1 - key
                said = (f"event {ev.index} {action} {name} at t={_fmt(run.out_time(t))} "
                        f"but follows event {led}, which")
                if arrival is None:
                    why = "has not started"
                    self.unreceived.append((len(run.violations), key, said))
                else:
                    why = f"ends only at t={_fmt(run.out_time(arrival))}"
                run.violate(run.out_time(t), ViolationKind.ITEM_NOT_HELD, node,
                            f"{said} {why}", (ev.index, led), resource=name)
                continue
            node, name = run.key_name(key)
            if arrival is not None:
                why = (f"it arrives only at t={_fmt(run.out_time(arrival))}"
                       + run.transit_text(key))
            elif key in self.parts:
                got = sum((p for a, p in self.parts[key] if a <= limit), 0 * run.one)
                why = f"it holds only {_fmt(got)} of it"
            else:
                why = "it never received it" + (run.transit_text(key) or run.foreign(key))
            action = "sends" if ev.kind == _SEND else "computes with"
            said = f"{node} {action} {name} at t={_fmt(run.out_time(t))} but"
            if arrival is None and key not in self.parts:
                self.unreceived.append((len(run.violations), key, said))
            run.violate(run.out_time(t), ViolationKind.ITEM_NOT_HELD, node,
                        f"{said} {why}", (ev.index,), resource=name)

    def play(self, ev: _Play, t: Any) -> bool:
        """Play one event at ``t``; return True if it made an item available at ``t``."""
        duration = ev.duration
        end = t + duration
        if end > self.end_time:
            self.end_time = end
        limit = t + self.tol
        slots = self.slots
        for r in ev.res:
            if slots[r][0] > limit:  # first slot busy: look further (or report)
                self.claim(ev, t, end, limit)
                break
        else:  # every first slot free: take them (what claim would choose)
            holders = self.holders
            index = ev.index
            for r in ev.res:
                slots[r][0] = end
                holders[r][0] = index
        # The event takes effect as written: violations are reported, not repaired.
        part = ev.part
        if part == 1:
            held = self.held
            key = ev.give
            previous = held.get(key)
            if previous is None or end < previous:
                held[key] = end
        else:
            self.deliver_part(ev.give, end, part)
        leads = self.run.leads
        if leads and leads[ev.index]:  # Schedule.follows: its followers may start
            self.held[-1 - ev.index] = end
        return duration == 0

    def claim(self, ev: _Play, t: Any, end: Any, limit: Any) -> None:
        """Take a free slot of every resource of ``ev``, and report those with none.

        The event runs as written, so it holds every resource it uses, the full
        ones too (overbooked, see :meth:`overbook`): a later event that
        overlaps it on any of them is a conflict as well.
        """
        slots = self.slots
        holders = self.holders
        by_links = self.run.by_links
        extra = self.extra
        for r in ev.res:
            s = self.free_slot(r, limit) if r in extra else next(
                (s for s, busy in enumerate(slots[r]) if busy <= limit), None)
            if s is None:
                if r not in by_links:  # else its link's conflict (see _Run) is reported
                    self.report_conflict(ev, r, t)
                self.overbook(r, ev.index, end)
            else:
                slots[r][s] = end
                holders[r][s] = ev.index
                if r in extra:
                    self.latest_first(r)

    def free_slot(self, r: int, limit: Any) -> int | None:
        """A free slot of resource ``r``, which has overbooked events: one only
        while fewer events than its slots are running."""
        slots = self.slots[r]
        running = [(busy, h) for busy, h in self.extra[r] if busy > limit]
        if running:
            self.extra[r] = running
        else:
            del self.extra[r]
        if sum(busy > limit for busy in slots) + len(running) >= len(slots):
            return None
        return next(s for s, busy in enumerate(slots) if busy <= limit)

    def overbook(self, r: int, index: int, end: Any) -> None:
        """Event ``index`` runs until ``end`` on the full resource ``r``.

        The slots keep the events ending last, the others are kept aside
        (:attr:`extra`) until they end; slot 0 holds the latest end, so the
        quick test of :meth:`play` (slot 0 free) still means a free resource.
        """
        slots, holders = self.slots[r], self.holders[r]
        s = min(range(len(slots)), key=slots.__getitem__)
        aside = self.extra.setdefault(r, [])
        if slots[s] < end:
            aside.append((slots[s], holders[s]))
            slots[s], holders[s] = end, index
        else:
            aside.append((end, index))
        self.latest_first(r)

    def latest_first(self, r: int) -> None:
        """Move the slot of resource ``r`` busy the longest to position 0."""
        slots, holders = self.slots[r], self.holders[r]
        s = max(range(len(slots)), key=slots.__getitem__)
        slots[0], slots[s] = slots[s], slots[0]
        holders[0], holders[s] = holders[s], holders[0]

    def report_conflict(self, ev: _Play, r: int, t: Any) -> None:
        run = self.run
        running = [*zip(self.slots[r], self.holders[r], strict=True), *self.extra.get(r, ())]
        others = sorted({h for busy, h in running if busy > t + run.tol and h >= 0})
        node, name = run.key_name(run.given(ev))
        if ev.kind == _SEND:
            what = f"send of {name} to {node} (event {ev.index})"
            kind = (ViolationKind.LINK_CONFLICT if r in run.link_resources
                    else ViolationKind.PORT_CONFLICT)
        else:
            what = f"compute of {name} (event {ev.index})"
            kind = ViolationKind.CPU_CONFLICT
        named = others[:_NAMED_BUSY]
        busy_with = ", ".join(f"event {h}" for h in named)
        if len(others) > len(named):
            busy_with += f" and {len(others) - len(named)} more events"
        run.violate(run.out_time(t), kind, run.resource_node[r],
                    f"{what} needs the {run.resource_names[r]}, busy with {busy_with}",
                    (ev.index, *named), resource=run.resource_names[r])

    def deliver_part(self, key: int, arrival: Any, part: Any) -> None:
        """A part of an item arrives.

        Parts may arrive out of start order: the item is held from the
        arrival at which the received parts first sum to 1.
        """
        parts = self.parts.setdefault(key, [])
        parts.append((arrival, part))
        total = 0 * part
        for when, amount in sorted(parts, key=lambda x: x[0]):
            total += amount
            if total >= 1 - self.run.part_tol:
                previous = self.held.get(key)
                if previous is None or when < previous:
                    self.held[key] = when
                break


# ---------------------------------------------------------------------------
# as-soon-as-possible replay
# ---------------------------------------------------------------------------


class _Asap:
    """As-soon-as-possible replay with the per-port (and per-CPU) order kept.

    Every resource has a queue of events in schedule order.  An event starts
    when it is next in the queue of every resource it needs, all of them have
    a free slot at that instant, and its inputs have fully arrived; so no
    port is ever held while another is awaited.
    """

    def __init__(self, run: _Run, events: list[_Play], held: dict[int, Any],
                 until: Any) -> None:
        self.run = run
        self.events = events
        self.held = held
        self.until = until
        self.parts: dict[int, Any] = {}
        n_res = len(run.capacity)
        self.queues: list[list[int]] = [[] for _ in range(n_res)]
        self.next: list[int] = [0] * n_res
        self.busy: list[int] = [0] * n_res
        queues = self.queues
        for e, play in enumerate(events):
            for r in play.res:
                queues[r].append(e)
        for q in queues:
            q.append(-1)  # sentinel: nothing left
        self.waiting: dict[int, list[int]] = defaultdict(list)
        self.starts: list[Any] = [None] * len(events)
        self.end_time: Any = 0
        self.played: set[int] = set()

    def go(self) -> None:
        env = self.env = simpy.Environment()
        for _r, queue in enumerate(self.queues):
            if queue[0] >= 0:
                self.try_start(queue[0])
        env.run(until=self.until)

    def try_start(self, e: int) -> None:
        starts = self.starts
        if starts[e] is not None:
            return
        ev = self.events[e]
        queues, nxt, busy, capacity = self.queues, self.next, self.busy, self.run.capacity
        res = ev.res
        for r in res:
            if queues[r][nxt[r]] != e or busy[r] >= capacity[r]:
                return
        held = self.held
        for key in ev.needs:
            if key not in held:
                self.waiting[key].append(e)
                return
        env = self.env
        starts[e] = env.now
        for r in res:
            busy[r] += 1
            nxt[r] += 1
        self.played.add(ev.instance)
        env.timeout(ev.duration, e).callbacks.append(self.on_end)
        for r in res:
            if busy[r] < capacity[r]:  # a multi-port slot is still free
                following = queues[r][nxt[r]]
                if following >= 0:
                    self.try_start(following)

    def on_end(self, end: simpy.Event) -> None:
        ev = self.events[cast(int, end.value)]  # the timeout's value: the event's number
        now = self.env.now
        if now > self.end_time:
            self.end_time = now
        busy = self.busy
        res = ev.res
        for r in res:
            busy[r] -= 1
        key = ev.give
        part = ev.part
        arrived = True
        if part != 1:
            total = self.parts.get(key, 0) + part
            self.parts[key] = total
            arrived = total >= 1 - self.run.part_tol
        held = self.held
        if arrived and key not in held:
            held[key] = now
            waiters = self.waiting.pop(key, None)
            if waiters:
                for waiter in waiters:
                    self.try_start(waiter)
        leads = self.run.leads
        if leads and leads[ev.index]:  # Schedule.follows: the events waiting for its end
            token = -1 - ev.index
            held[token] = now
            for waiter in self.waiting.pop(token, ()):
                self.try_start(waiter)
        queues, nxt = self.queues, self.next
        for r in res:
            following = queues[r][nxt[r]]
            if following >= 0:
                self.try_start(following)

    def never_ends(self, index: int) -> str:
        """Why the event ``index`` (one an unstarted event follows) never ends.

        It is either blocked itself (reported on its own line) or queued behind
        another event on one of its resources: that event is named, as the
        per-port orders and the ``follows`` pairs then wait on each other.
        """
        run, queues, nxt = self.run, self.queues, self.next
        said = f"event {index}, which never ends"
        for e, start in enumerate(self.starts):
            ev = self.events[e]
            if start is not None or ev.index != index:
                continue
            for r in ev.res:
                head = queues[r][nxt[r]]
                if head != e and head >= 0:
                    return (f"{said}: it is queued after event {self.events[head].index} "
                            f"on the {run.resource_names[r]}")
            break
        return said

    def report_blocked(self) -> None:
        """Report the events that can never start (only when the replay ran dry)."""
        run = self.run
        queues, nxt = self.queues, self.next
        stuck = [e for e, start in enumerate(self.starts)
                 if start is None and all(queues[r][nxt[r]] == e for r in self.events[e].res)]
        if not stuck:  # a cycle in the per-port orders: report each queue head
            stuck = sorted({q[nxt[r]] for r, q in enumerate(queues) if q[nxt[r]] >= 0})
        for e in stuck:
            ev = self.events[e]
            missing = [k for k in ev.needs if k not in self.held and k >= 0]
            # Schedule.follows: a negative key is the end of the event it follows
            led = [-1 - k for k in ev.needs if k not in self.held and k < 0]
            if missing:
                names = [run.key_name(k) for k in missing]
                node = names[0][0]
                resource = ", ".join(name for _, name in names)
                why = f"{node} never holds {resource}" + "".join(
                    run.transit_text(k) for k in missing)
                if led:
                    why += f", and it follows {self.never_ends(led[0])}"
            elif led:
                node = run.resource_node[ev.res[0]]
                resource = run.key_name(run.given(ev))[1]
                why = f"it follows {self.never_ends(led[0])}"
            else:
                node = run.resource_node[ev.res[0]]
                resource = run.resource_names[ev.res[0]]
                why = "the per-port orders wait on each other (a cycle)"
            run.violate(run.out_time(self.env.now), ViolationKind.BLOCKED, node,
                        f"event {ev.index} (instance {ev.instance}) never starts: "
                        f"{why}", (ev.index,), resource=resource)


# ---------------------------------------------------------------------------
# the public entry point
# ---------------------------------------------------------------------------


def check_schedule(schedule: object) -> None:
    """Raise :class:`ScheduleError` unless ``schedule`` is a :class:`Schedule`.

    The replays' first step: a list of events or a planner's ``PlanResult``
    given in its place is named, not an ``AttributeError`` from the engine.
    """
    if not isinstance(schedule, Schedule):
        hint = ""
        if hasattr(schedule, "schedule") and hasattr(schedule, "status"):
            hint = " (a PlanResult: pass its .schedule)"
        elif hasattr(schedule, "plan") and hasattr(schedule, "planner"):
            hint = " (a PlannerRun: pass its .plan.schedule)"
        raise ScheduleError(f"expected a Schedule{hint}", path="schedule",
                            value=type(schedule).__name__)


def replay(
    schedule: Schedule,
    *,
    mode: str = "strict",
    exact: bool = True,
    horizon: Fraction | int | str | None = None,
    port_model: PortModel | str | None = None,
    record_starts: bool = False,
    tolerance: Fraction | int | float | str | None = None,
) -> Report:
    """Replay ``schedule`` and report every violation and the measured figures.

    Parameters
    ----------
    schedule:
        A one-shot or periodic :class:`~portsim.simulator.schedule.Schedule`.
    mode:
        ``"strict"`` (validator: events at their stated times) or ``"asap"``
        (per-port order kept, events as soon as ports, CPU and inputs allow).
    exact:
        Exact rational time (default) or float time (faster on huge
        denominators; tolerance: :data:`FLOAT_TICK_FRACTION` of one tick of
        the exact schedule, see :func:`_float_tolerance`).
    horizon:
        Time span to replay.  Periodic schedules: the pattern repeats until
        the horizon (default: the largest lag plus :data:`DEFAULT_PERIODS`
        periods); a strict replay plays on, for its checks only, to the
        steady state (every event played at its lag) when the horizon stops
        short of it, so a clash of later periods is never hidden by a short
        horizon.  One-shot: completions after the horizon do not count, and
        the measured throughput is ``completed / horizon``; every event is
        still played and checked, and an instance is expected only once all
        its events end within the horizon (as in a periodic replay), so a
        short horizon never makes a feasible schedule incomplete.  (The
        throughput of a one-shot schedule run again and again is that of its
        pipelined series: :func:`replay_one_shot`.)
    port_model:
        Replace the platform-wide port model (per-node overrides are kept).
    record_starts:
        ASAP mode, one-shot schedules: return the achieved start of every
        event in :attr:`Report.event_starts`.
    tolerance:
        Exact time only: an event may start up to this long before the port,
        link, CPU or item it needs is free or has arrived, with no
        violation (default 0).  For start times computed in floats, which
        land a rounding error (``0.7999999999999999`` for ``0.1 + 0.7``)
        before the exact time the platform gives: ``tolerance=1e-9``.
        Parts of an item that sum to just under 1 (three parts
        ``0.3333333333333333``) make the item when the fraction missing
        would take at most this long to send on every link that carries
        parts (``size * (c - latency)`` a whole message); a stated
        ``duration`` within it of the platform's is no ``wrong_duration``.

    Returns
    -------
    Report
        Violations (``kind``, ``time``, ``node``, ``detail``) in time order,
        completed instances, makespan, throughput.

    Raises
    ------
    ScheduleError
        On a bad ``mode`` or ``horizon``.

    Notes
    -----
    Every event takes effect as written even when it violates a rule, so a
    violation is reported once, where it happens, rather than cascading.
    The engine re-derives every duration from the platform; stated durations
    are only checked.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": "1/2"}])
    >>> report = replay(s)
    >>> [v.kind for v in report.violations]
    ['item_not_held']
    >>> replay(s, mode="asap").makespan
    Fraction(2, 1)
    """
    check_schedule(schedule)
    if mode not in ("strict", "asap"):
        raise ScheduleError("mode must be strict or asap", path="mode", value=mode)
    h = None if horizon is None else parse_rational(horizon, path="horizon", error=ScheduleError)
    if h is not None and h <= 0:
        raise ScheduleError("horizon must be > 0", path="horizon", value=str(h))
    model = None if port_model is None else PortModel.parse(port_model, path="port_model")
    slack = parse_tolerance(tolerance, exact=exact)
    period = schedule.period
    if (mode == "strict" and h is not None and period is not None
            and math.ceil(h / period) * len(schedule.events) > MAX_REPLAY_EVENTS):
        # too long to play every period: up to the steady state, the rest in closed form
        return replay_periodic(schedule, h, exact=exact, port_model=model, tolerance=slack)
    # The collector paused (see that module) until the replay's records are
    # freed: _play's result is a temporary, gone before the block exits.
    with paused_collection():
        return _conclude(*_play(schedule, mode, exact, h, model,
                                explicit_horizon=horizon is not None, tolerance=slack),
                         mode, record_starts)


def _gap_in_instances(numbers: list[int]) -> None:
    """Refuse a series of a one-shot schedule whose instances (distinct, sorted) are
    not 0..c-1, naming the first one no event names."""
    missing = next(i for i, n in enumerate(numbers) if n != i)
    shown = ", ".join(f"#{n}" for n in numbers[:4]) + (", ..." if len(numbers) > 4 else "")
    raise ScheduleError(f"a series repeats a one-shot schedule of instances 0..c-1 only, "
                        f"and no event names instance #{missing} (the schedule's "
                        f"{counted(len(numbers), 'instance')}: {shown})", path="events")


def _periodic_arguments(schedule: Schedule, horizon: Fraction | int | str,
                        refusal: str) -> tuple[Fraction, Fraction]:
    """The period and the horizon of a periodic replay's entry point, checked: the
    schedule (:func:`check_schedule`), periodic (else ``refusal``), and a horizon > 0."""
    check_schedule(schedule)
    if schedule.period is None:
        raise ScheduleError(refusal)
    h = parse_rational(horizon, path="horizon", error=ScheduleError)
    if h <= 0:
        raise ScheduleError("horizon must be > 0", path="horizon", value=str(h))
    return schedule.period, h


def replay_periodic(schedule: Schedule, horizon: Fraction | int | str, *, exact: bool = True,
                    port_model: PortModel | str | None = None,
                    tolerance: Fraction | int | float | str | None = None) -> Report:
    """Strict replay of a periodic schedule over ``horizon``, in a time independent of it.

    Instance ``q * n + j`` (period ``q``, slot ``j``) is played at the same
    offsets from ``q * T`` as instance ``j``, so it completes at ``q * T +
    off(j)`` with ``off(j)`` at most ``settle``, the latest end of a pattern
    event counted from the start of its instance's first period.  Past
    ``settle`` each period therefore adds the same number of completions.
    The schedule is replayed up to ``H'`` = the horizon less ``m`` whole
    periods (``H'`` in ``[settle + T, settle + 2T)``) and one period less;
    the difference of the two counts is the completions per period, and
    ``completed(H) = completed(H') + m * (that difference)``.  Violations are
    those of the ``H'`` replay (by then every pattern event has been played
    at every lag, next to every other), counted as ``H`` would count them
    (:func:`_extend_periodic`: the repeats of each, the instances an item
    misses, ``incomplete``), as the replay of every period counts them.
    ``portsim run`` measures every periodic schedule so; :func:`replay` (and
    ``validate --horizon H``) a strict one whose horizon holds more than
    :data:`MAX_REPLAY_EVENTS` events, which it would otherwise refuse.

    Returns
    -------
    Report
        As :func:`replay` over ``horizon`` (``completed``, ``instances``,
        ``incomplete``, ``unfinished``, ``measured_throughput``, ``horizon``,
        ``end_time`` and the violations for the whole horizon;
        ``completion_times`` those of the ``H'`` replay).

    Raises
    ------
    ScheduleError
        As :func:`replay`, e.g. when even ``H'`` needs more events than the
        engine replays.
    """
    period, horizon = _periodic_arguments(schedule, horizon,
                                          "replay_periodic needs a periodic schedule")
    model = None if port_model is None else PortModel.parse(port_model, path="port_model")
    slack = parse_tolerance(tolerance, exact=exact)

    def every_period(h: Fraction, *, play_on: bool = True) -> tuple[Report, _Run]:
        # every period up to h (not this function again); ``play_on``: past a
        # horizon short of the steady state, play on to it for the checks
        with paused_collection():
            played = _play(schedule, "strict", exact, h, model, explicit_horizon=True,
                           tolerance=slack, play_on=play_on)
            run = played[0]  # its patterns, for the end of the last event
            report = _conclude(*played, "strict", False)
            del played  # the replay's records freed before the collector resumes
        return report, run

    platform, size = schedule.platform, schedule.operation.size
    settle = Fraction(0)
    for e in schedule.events:
        # The engine's one rule (latency + part of size / bandwidth), not c * size * part:
        # that leaves out the latency of a part and puts ``settle`` too early.
        duration = (platform.duration(e.src, e.dst, size, e.part) if isinstance(e, Send)
                    and platform.has_link(e.src, e.dst) else
                    platform.compute_time(e.node) * e.tasks if isinstance(e, Compute)
                    else Fraction(0))
        settle = max(settle, e.lag * period + e.start + duration)
    skipped = math.floor((horizon - settle) / period) - 1
    if skipped <= 0:
        return every_period(horizon)[0]
    short = horizon - skipped * period
    try:
        # Counted up to H' and H' - T alone, what each period adds: H' - T may
        # stop short of the steady state (a period, when settle < T; in float
        # time, settle summed a rounding above H' - T = settle), where a
        # replay plays on for its checks (see _play) and counts the
        # violations of the events it then plays, a zero-time one starting at
        # ``settle``: one period of its repeats was lost.
        last, run = every_period(short, play_on=False)
        before = every_period(short - period, play_on=False)[0]
    except ScheduleError as err:
        if err.path != "horizon":
            raise
        # ``short`` is the least horizon that checks the steady state, whatever
        # the horizon asked: a shorter one is no advice (the period is too full).
        raise ScheduleError(
            f"{err.message.removesuffix(': give a shorter horizon')}, and those are the "
            f"fewest periods that check its steady state: a schedule of fewer events a "
            f"period can be checked (lp: the option max_events or period)",
            path="events", value=len(schedule.events)) from None
    gain = last.completed - before.completed
    completed = last.completed + skipped * gain
    whole: Fraction | float = horizon if exact else float(horizon)
    # the violations' repeats and missing instances counted over the whole horizon
    last = _extend_periodic(last, before, skipped, period,
                           end_time=run.out_time(_last_end(run, run.to_time(horizon))))
    return replace(last, completed=completed,
                   instances=last.instances + skipped * (last.instances - before.instances),
                   horizon=whole, measured_throughput=per_time(completed, whole))


def parse_tolerance(tolerance: object, *, exact: bool = True,
                    path: str = "tolerance") -> Fraction:
    """The ``tolerance`` of a replay, checked: a number >= 0, in exact time only.

    Examples
    --------
    >>> parse_tolerance(1e-9)
    Fraction(1, 1000000000)
    """
    if tolerance is None:
        return Fraction(0)
    value = parse_rational(tolerance, path=path, error=ScheduleError)
    if value < 0:
        raise ScheduleError("must be >= 0", path=path, value=tolerance)
    if value and not exact:
        raise ScheduleError("applies to exact time only (float time has its own, a "
                            "quarter of one tick)", path=path, value=tolerance)
    return value


def _play(
    schedule: Schedule,
    mode: str,
    exact: bool,
    h: Fraction | None,
    model: PortModel | None,
    *,
    explicit_horizon: bool,
    tolerance: Fraction = Fraction(0),
    play_on: bool = True,
) -> tuple[_Run, _Strict | _Asap, list[_Play], list[int], list[int],
           _Unserved | None, Any]:
    """Compile and play ``schedule``: the arguments of :func:`_conclude` but the last two.

    ``play_on``: a strict periodic replay over a horizon short of the steady
    state plays on to it for its checks (``False``: not, for
    :func:`replay_periodic`, which counts what its replays' periods add).
    """
    run = _Run(schedule, model, exact, tolerance)
    periodic = schedule.period is not None
    if periodic and h is None:
        h = default_horizon(schedule)
    if periodic:
        assert h is not None
        _check_replay_size(schedule, h, explicit_horizon=explicit_horizon)
    run.compile(h)
    horizon_t = None if h is None else run.to_time(h)
    events = run.concrete(horizon_t)

    idle: list[int] = []
    unserved: _Unserved | None = None
    steady = None
    if periodic:
        idle, unserved = _idle_slots(run, horizon_t)
        instance_numbers = sorted({play.instance for play in events}.union(idle))
        if mode == "strict" and play_on and run.idle_span > horizon_t:
            # A horizon short of the steady state (every event played at its
            # lag, next to every other) would leave the conflicts of later
            # periods unseen, and a schedule that clashes from period 3 on
            # "feasible" over 2 periods.  The strict replay plays on to it for
            # the checks; completions still count up to the horizon.
            steady = run.idle_span
            _check_replay_size(schedule, Fraction(run.out_time(steady)),
                               explicit_horizon=False, steady=True)
            events = run.concrete(steady)
    else:
        instance_numbers = schedule.instances()
    held = run.initial_holdings(
        instance_numbers if steady is None
        else sorted({play.instance for play in events}.union(instance_numbers)))

    engine: _Strict | _Asap
    if mode == "strict":
        engine = _Strict(run, events, held)
        engine.go()
        if steady is not None:
            assert horizon_t is not None  # a steady state is played on to past a horizon
            engine.count_until(run.cutoff(horizon_t))
    else:
        until = None
        if horizon_t is not None:
            # Events that end exactly at the horizon still count.
            until = horizon_t + (1 if exact else run.tol)
        engine = _Asap(run, events, held, until)
        engine.go()
        if engine.env.peek() == math.inf:
            engine.report_blocked()
    return run, engine, events, instance_numbers, idle, unserved, horizon_t


def default_horizon(schedule: Schedule) -> Fraction | None:
    """The horizon :func:`replay` takes when given none, exactly: for a periodic
    schedule, the largest lag plus :data:`DEFAULT_PERIODS` periods; ``None``
    for a one-shot one (replayed whole).

    Examples
    --------
    >>> from portsim.simulator.schedule import Send
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule(p, op, (Send("A", "B", "b#0", 0, lag=2),), period=Fraction(3, 2))
    >>> default_horizon(s)
    Fraction(18, 1)
    """
    if schedule.period is None:
        return None
    max_lag = max((e.lag for e in schedule.events), default=0)
    return schedule.period * (max_lag + DEFAULT_PERIODS)


def replay_series(
    schedule: Schedule,
    horizon: Fraction | int | str,
    *,
    exact: bool = True,
    port_model: PortModel | str | None = None,
    tolerance: Fraction | int | float | str | None = None,
) -> Report:
    """Measure a series of operations that all reuse one one-shot schedule.

    Instance ``t`` of the series is a copy of the schedule's instance 0; the
    copies keep, on every port and CPU, the order instance after instance, and
    are replayed as soon as possible until ``horizon``.  The report's
    ``completed`` and ``measured_throughput`` are those of the pipelined
    series; it is how a one-shot tree is compared with a steady-state bound.

    A schedule of instances ``0..c-1`` (an algorithm that moves ``c`` chunk
    indexes per run, as an imported MSCCL algorithm does) repeats as a whole:
    copy ``t``'s instance ``j`` is instance ``t * c + j``
    (:meth:`~portsim.simulator.schedule.Schedule.repeat`), and ``completed``
    counts instances, so a run is ``c`` of them.

    Parameters
    ----------
    schedule:
        A one-shot schedule of instance 0, or of instances ``0..c-1``.
    horizon:
        The time span of the series.
    exact, port_model:
        As in :func:`replay`.
    tolerance:
        As in :func:`replay`: the series keeps only the order of the events,
        so of the tolerance only its share for parts counts: parts summing
        to just under 1, which the check of the schedule takes as the item,
        are scaled to sum to 1 (each copy sends the whole item, and gains
        nothing from the fraction missing).

    Returns
    -------
    Report
        ``completed`` counts the instances complete by ``horizon``, exactly,
        however long the horizon (see the notes).  Should the series not
        settle into a repeating pattern within :data:`MAX_SERIES_EVENTS`
        replayed events, the replay is cut: the report's ``horizon`` is then
        shorter than the one asked (the span over which the count is still
        exact), and the caller must say so.

    Raises
    ------
    ScheduleError
        If the schedule is periodic or its instances are not ``0..c-1``.

    Notes
    -----
    The series is a max-plus linear system: each event of instance ``t + 1``
    starts at the latest of the ends of its predecessors on its ports and
    CPU (events of instance ``t``, or of the last ``k`` instances on a
    ``multiport:k`` node) and of its inputs' arrivals.  Shifting a state by a
    constant shifts everything after it by the same constant, so once the
    start times of ``W`` consecutive instances (``W`` = one more than the
    largest ``k``) equal those ``c`` instances earlier plus a constant
    ``delta``, instance ``t + c`` repeats instance ``t`` ``delta`` later
    forever.  Where parts of the series run at different rates (the leaves
    of a reduction tree send ahead of the tree), each event repeats with a
    delay of its own instead (:func:`_drifting_pattern`).
    :func:`replay_series` replays a prefix of the series long enough to see
    either (doubling it up to the cap), then counts the completions up to
    the horizon in closed form; a short horizon is replayed directly.  The
    count agrees with the full replay (``tests/test_series.py`` compares
    them).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}])
    >>> replay_series(s, 100).completed  # one per time unit once the pipe is full
    99
    >>> replay_series(s, 10**12).completed  # counted from the repeating pattern
    999999999999
    """
    check_schedule(schedule)
    numbers = schedule.instances()
    per_run = len(numbers)  # instances of one copy: 0..per_run-1
    # Distinct and sorted, they are 0..per_run-1 when the last is per_run-1
    # (listing range(numbers[-1] + 1) took all memory for one instance #10^17).
    if schedule.period is not None:
        raise ScheduleError("a series repeats a one-shot schedule of instances 0..c-1 only")
    if numbers[-1] != per_run - 1:
        _gap_in_instances(numbers)
    if not schedule.events:
        raise ScheduleError("an empty schedule has no series to measure: the operation "
                            "needs no communication and completes at time 0")
    h = parse_rational(horizon, path="horizon", error=ScheduleError)
    if h <= 0:
        raise ScheduleError("horizon must be > 0", path="horizon", value=str(h))
    slack = parse_tolerance(tolerance, exact=exact)
    platform = schedule.platform if port_model is None else schedule.platform.with_port_model(
        port_model)
    schedule = _parts_made_whole(schedule, slack)
    # Per-port (and per-CPU) busy time of one instance: instances pass each
    # resource one after the other, so instance t ends after (t + 1) * heaviest.
    load: dict[tuple[str, str], Fraction] = defaultdict(Fraction)
    span = Fraction(0)
    window = 1
    for e in schedule.events:
        if isinstance(e, Send):
            if not platform.has_link(e.src, e.dst):
                return replay(schedule, mode="asap", exact=exact, port_model=port_model,
                              tolerance=slack)
            d = platform.duration(e.src, e.dst, schedule.operation.size, e.part)
            load[e.src, f"link to {e.dst}"] += d  # a link carries one transfer at a time
            for node, direction in ((e.src, "send"), (e.dst, "recv")):
                model = platform.port_model_of(node)
                shared = model.kind is PortKind.UNIDIRECTIONAL
                links = platform.degree(node)[0 if direction == "send" else 1]
                ports = model.ports(links)
                load[node, "port" if shared else direction] += d / ports
                if ports < links:
                    # A port of k < links slots remembers the last k instances.
                    # One of `links` slots or more (`multiport` without k: one
                    # per link) is full only when the transfer's own link is
                    # busy: its state is its links', one instance deep.  Taking
                    # the degree here (64 links into an InfiniBand switch of 16
                    # dgx_a100 servers) asked for 65 repeating copies, past the
                    # cap, and cut the series of a 128-rank MSCCL ring.
                    window = max(window, ports)
        else:
            d = platform.compute_time(e.node) * e.tasks
            load[e.node, "cpu"] += d
        span = max(span, e.start + d)
    heaviest = max(load.values(), default=Fraction(0))
    spacing = span if span > 0 else Fraction(1)
    cap = max(1, MAX_SERIES_EVENTS // len(schedule.events))
    # Instances that may complete by the horizon (all of them at time 0 when
    # nothing takes time: the count is then unbounded, and the replay cut).
    needed = None if heaviest == 0 else int(h / heaviest) + 2
    if needed is not None and needed <= min(64, cap):
        series = schedule.repeat(needed, spacing)
        return replay(series, mode="asap", exact=exact, horizon=h, port_model=port_model,
                      tolerance=slack)
    # A pattern shows once the series has settled and replayed one cycle and
    # one window more: try a short prefix first, doubling it up to 64 copies
    # (then 4 times longer each time) until the cap.  Later copies never delay
    # earlier ones (they follow them on every port), so the prefix replayed
    # is exactly the start of every longer one and the count does not depend
    # on the length tried.  A try of at least half the copies that may complete
    # is not made: the direct replay of those costs at most twice as much, and
    # a series that never settles paid for both (a reduce tree on 500 nodes,
    # before its events' own delays were seen: 256 copies tried, then 495
    # replayed).
    forced = None if port_model is None else PortModel.parse(port_model, path="port_model")
    count = min(cap, 64, max(8, 2 * (window + 1)))
    last: Report | None = None  # the replay of ``count`` copies when the cap cuts the series
    while True:
        if needed is not None and needed <= cap and needed <= 2 * count:
            series = schedule.repeat(needed, spacing)
            return replay(series, mode="asap", exact=exact, horizon=h, port_model=port_model,
                          tolerance=slack)
        with paused_collection():
            played = _play(schedule.repeat(count, spacing), "asap", True, None, forced,
                           explicit_horizon=False, tolerance=slack)
            full = _conclude(*played, "asap", True)
        if full.violations or full.completed != count * per_run:
            # Blocked: measure the prefix honestly below, over as many copies
            # as a first try of 64 (the blocking shows in every longer prefix).
            count = max(count, min(64, cap))
            break
        found = _series_pattern(full.event_starts, len(schedule.events), count, window + 1)
        if found is not None:
            cycle, delta = found
            run, engine = played[0], played[1]
            completion, _ = _completions(run, engine.held, list(range(count * per_run)),
                                         None)
            done = sum(1 for x in full.completion_times if x <= h)
            # the instances of the last cycle of copies repeat every delta
            for t in range((count - cycle) * per_run, count * per_run):
                b = run.out_time(completion[t])
                if b + delta <= h:
                    done += int((h - b) / delta)
            return _counted(platform, exact, done, h)
        if window == 1:
            run, engine = played[0], played[1]
            assert isinstance(engine, _Asap)
            drifting = _drifting_pattern(run, engine, played[2], len(schedule.events), count)
            if drifting is not None:
                done = sum(1 for x in full.completion_times if x <= h)
                for arrivals in drifting[1]:
                    # copy m cycles later completes at the latest of end + m delta
                    more = min(math.floor((h - run.out_time(end)) / run.out_time(drift))
                               for end, drift in arrivals)
                    if more > 0:
                        done += more
                return _counted(platform, exact, done, h)
        if count >= cap:
            last = full
            break
        count = min(cap, count * 2 if count < 64 else count * 4)
    # Cut: ``count`` instances replayed, and none of the others can end before
    # (count + 1) * heaviest, so the count is exact up to count * heaviest.
    reach = count * heaviest
    if reach <= 0:
        reach = min(h, spacing)
    if last is not None:
        # The last try replayed exactly these copies (and each copy ends
        # where it would in any longer prefix): count its completions rather
        # than replaying the 2,000,000 events again (about 40% of a cut's time).
        end = min(h, reach)
        return _counted(platform, exact,
                        sum(1 for x in last.completion_times if x <= end), end)
    return replay(schedule.repeat(count, spacing), mode="asap", exact=exact,
                  horizon=min(h, reach), port_model=port_model, tolerance=slack)


def _counted(platform: Platform, exact: bool, done: int, horizon: Fraction) -> Report:
    """The as-soon-as-possible report of ``done`` instances counted by ``horizon`` (in
    closed form past a replayed prefix: no violation, no completion times)."""
    return Report(mode="asap", exact=exact, port_model=str(platform.port_model),
                  node_port_models=own_port_models(platform),
                  violations=(), completed=done, instances=done,
                  horizon=horizon if exact else float(horizon),
                  measured_throughput=per_time(done, horizon))


def _parts_made_whole(schedule: Schedule, tolerance: Fraction) -> Schedule:
    """``schedule`` with the parts the tolerance takes as a whole item sent whole.

    The check takes parts of an item that sum to just under 1 as the item
    when the fraction missing would take at most ``tolerance`` to send on
    the links that carry parts (:meth:`_Run.compile`): float rounding.  A
    series taking every copy so gains that fraction copy after copy (one
    part of ``1 - 10^-9`` on a link of cost 1 made 1,000,001,000 messages
    over ``10^12``, past the bound); here each such item's parts are scaled
    to sum to exactly 1 (their stated durations dropped, as they change),
    the schedule the rounding stands for.
    """
    if not tolerance:
        return schedule
    platform, size = schedule.platform, schedule.operation.size
    totals: dict[tuple[str, Item], Fraction] = defaultdict(Fraction)
    whole = Fraction(0)  # as _Run.compile: a whole message without latency, the longest
    for e in schedule.events:
        if type(e) is Send and e.part is not _WHOLE and e.part != 1 and platform.has_link(
                e.src, e.dst):
            if not e.transit:  # a transit copy is no part its receiver holds
                totals[e.dst, e.item] += e.part
            link = platform.link(e.src, e.dst)
            whole = max(whole, (link.c - link.latency) * size)
    short = {key: total for key, total in totals.items()
             if total < 1 and (1 - total) * whole <= tolerance}
    if not short:
        return schedule
    events = schedule.events
    # A transit send carries the part its follower passes on (Schedule checks
    # they are equal): scaled as the part at the end of its chain is.
    follower: dict[int, int] = {}
    for i, j in schedule.follows:
        first, then = events[i], events[j]
        if (type(first) is Send and first.transit and type(then) is Send
                and (then.src, then.item, then.part) == (first.dst, first.item, first.part)):
            follower[i] = j
    out: list[Event] = []
    for i, e in enumerate(events):
        if type(e) is Send and e.part is not _WHOLE and e.part != 1:
            end, hops = i, 0
            while end in follower and hops <= len(events):  # (a cycle of follows: cut)
                end, hops = follower[end], hops + 1
            last = cast(Send, events[end])
            key = (last.dst, last.item)
            if key in short:
                e = replace(e, part=e.part / short[key], duration=None)
        out.append(e)
    return replace(schedule, events=tuple(out))


def measure_series(
    schedule: Schedule,
    check: Report,
    horizon: Fraction | int | str,
    *,
    exact: bool = True,
    port_model: PortModel | str | None = None,
    tolerance: Fraction | int | float | str | None = None,
) -> Report | None:
    """The pipelined series of a one-shot schedule over ``horizon``, when it is measured.

    ``check`` is the replay of the schedule itself, as written (``portsim
    run``'s strict replay, or the as-soon-as-possible one of a plan that
    claims only an order).  The series (:func:`replay_series`) is measured
    only when ``check`` found no violation: a series replayed as soon as
    possible would repair the stated times and measure a schedule that is
    not the one written.  Nor is it measured when the schedule has no event
    (the operation needs nothing and completes at time 0: no rate).  ``None``
    then: the figures are "not measured", and ``completed`` with them.
    This is the one rule of ``portsim run``, ``portsim validate --horizon``
    and :func:`simulator.validate` for a one-shot schedule.

    Raises
    ------
    ScheduleError
        As :func:`replay_series` (a periodic schedule, a bad ``horizon``).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "A", "dst": "C", "item": "b", "start": 1}])
    >>> measure_series(s, replay(s), 10).completed  # one broadcast every 2 time units
    5
    >>> both_at_once = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "A", "dst": "C", "item": "b", "start": 0}])
    >>> print(measure_series(both_at_once, replay(both_at_once), 10))
    None
    """
    if schedule.period is not None:
        raise ScheduleError("a series repeats a one-shot schedule of instances 0..c-1 only")
    h = parse_rational(horizon, path="horizon", error=ScheduleError)
    if h <= 0:
        raise ScheduleError("horizon must be > 0", path="horizon", value=str(h))
    if not schedule.events or not check.feasible:
        return None
    return replay_series(schedule, h, exact=exact, port_model=port_model, tolerance=tolerance)


def replay_asap_periodic(
    schedule: Schedule,
    horizon: Fraction | int | str,
    *,
    exact: bool = True,
) -> Report:
    """Count the instances of a periodic schedule replayed as soon as possible over ``horizon``.

    What ``replay(schedule, mode="asap", horizon=horizon)`` counts
    (``completed``, ``measured_throughput``, ``violations``), from a prefix
    of periods once the replay repeats: every play of period ``p + c`` then
    starts ``delta`` after its play of period ``p``, so instance ``i + c n``
    completes ``delta`` after instance ``i`` (the series argument of
    :func:`replay_series`, with periods for copies).  ``lp-naive`` replays
    its periodic schedules so over ``(largest lag + 100)`` periods: 1.9
    million plays at 100 nodes, 12.6 s and 750 MiB, where a prefix of about
    40 periods settles.  When the prefix shows no such pattern (or the
    schedule is not of the kind the argument covers), the full replay is
    returned instead.

    Returns
    -------
    Report
        ``completed``, ``measured_throughput``, ``horizon`` and
        ``violations`` (none: a prefix that blocks is not used) as the full
        replay gives them; ``instances`` is ``completed``, and neither
        ``completion_times`` nor ``end_time`` is given, unlike the full
        replay.

    Raises
    ------
    ScheduleError
        On a one-shot schedule or a bad ``horizon``, as :func:`replay`.
    """
    _, h = _periodic_arguments(schedule, horizon,
                               "replay_asap_periodic replays a periodic schedule")
    found = _asap_periodic_count(schedule, h, exact)
    if found is None:
        return replay(schedule, mode="asap", horizon=h, exact=exact)
    return _counted(schedule.platform, exact, found, h)  # (exact: floats replay whole)


def _asap_periodic_count(schedule: Schedule, h: Fraction, exact: bool) -> int | None:
    """The completions by ``h`` of the as-soon-as-possible replay of a periodic
    schedule; ``None`` when no prefix of at most half the horizon repeats (see
    :func:`replay_asap_periodic`)."""
    period = schedule.period
    assert period is not None
    n = schedule.instances_per_period
    max_lag = max((e.lag for e in schedule.events), default=0)
    if not exact:  # (float times: the repeats are seldom equal; replayed whole)
        return None
    run = _Run(schedule, None, exact)
    run.compile(h)
    tick_period = run.to_time(period)
    if (run.violations or not run.patterns  # (no event: nothing repeats, the replay is short)
            or not all(p.playable and p.start < tick_period for p in run.patterns)):
        return None
    capacity = run.capacity
    deep = max((c for r, c in enumerate(capacity) if c > 1 and r not in run.by_links),
               default=1)
    window = max_lag + 1 + deep  # periods a play's state reaches back to
    horizon_t = run.to_time(h)
    deadline = horizon_t + run.tol
    # A play whose input is given by a play stated later could be played
    # while its giver is not (past the horizon): the count below assumes not.
    stated: dict[int, list[Any]] = defaultdict(list)
    for pat in run.patterns:
        stated[pat.give].append(pat.lag * tick_period + pat.start)
    for pat in run.patterns:
        own = pat.lag * tick_period + pat.start
        if any(max(stated[k]) > own for k in pat.needs if k in stated):
            return None
    size = len(run.patterns)
    stride = run.stride
    required = _required_keys(run)
    periods = max_lag + window + 4
    while True:
        if periods * tick_period * 2 > horizon_t or periods * size > MAX_SERIES_EVENTS:
            return None
        prefix_t = periods * tick_period
        with paused_collection():
            events = run.concrete(prefix_t)
            instance_numbers = sorted({play.instance for play in events})
            held = run.initial_holdings(instance_numbers)
            engine = _Asap(run, events, held, None)
            engine.go()
        starts = engine.starts
        if any(x is None for x in starts):
            return None
        total = len(events)
        # Plays are in period order (every start within its period), each
        # period from max_lag on holding one play of every pattern.
        steady = total - (periods - max_lag) * size  # the first play of period max_lag
        if (steady < 0 or events[steady].start < max_lag * tick_period
                or (steady and events[steady - 1].start >= max_lag * tick_period)):
            return None
        pattern = None
        for cycle in range(1, (periods - max_lag - window) // 2 + 1):
            block = cycle * size
            first = total - (window + cycle) * size  # the plays whose shift is checked
            if first - block < steady:
                break
            delta = starts[total - 1] - starts[total - 1 - block]
            if delta > 0 and all(
                    starts[e] - starts[e - block] == delta
                    and events[e].index == events[e - block].index
                    and events[e].instance == events[e - block].instance + cycle * n
                    for e in range(first, total)):
                pattern = cycle, delta
                break
        if pattern is not None:
            break
        periods *= 2
    cycle, delta = pattern
    # Instances of periods before `base` are played whole in the prefix; those
    # of periods base .. base + cycle - 1 repeat every cycle from there on.
    base = periods - window - cycle
    completion, _ = _completions(run, held, [t for t in instance_numbers if t < base * n],
                                 horizon_t)
    done = len(completion)
    shift_t = cycle * tick_period
    # per key: the plays giving it (end, part, stated start) in the prefix
    givers: dict[int, list[tuple[Any, Any, Any]]] = defaultdict(list)
    for play, start in zip(events, starts, strict=True):
        if play.instance >= base * n:
            givers[play.give].append((start + play.duration, play.part, play.start))
    initial = run.initial_holdings(range(base * n, (base + cycle) * n))
    for t in range(base * n, (base + cycle) * n):
        keys = []
        for k in required:
            key = k + t * stride
            if key in initial:
                continue
            gave = givers.get(key)
            if not gave:
                return None
            keys.append(sorted(gave))
        if not keys:
            return None
        latest = max(g[2] for gave in keys for g in gave)  # stated: all played while < horizon
        earliest = min(g[2] for gave in keys for g in gave)
        arrivals = [_arrival(gave, 0, horizon_t, shift_t, delta, run.part_tol)
                    for gave in keys]
        if any(x is None for x in arrivals):
            continue  # never complete
        arrival = max(arrivals)
        # Every giver played (m repeats later, while its stated start is before
        # the horizon): instance t + m cycle n completes at arrival + m delta.
        whole = max(0, -((latest - horizon_t) // shift_t))  # ceil((horizon - latest) / shift)
        if arrival <= deadline:
            done += min(whole, (deadline - arrival) // delta + 1)
        # some givers past the horizon: each repeat counted from the plays left
        m = whole
        while earliest + m * shift_t < horizon_t:
            last = [_arrival(gave, m, horizon_t, shift_t, delta, run.part_tol)
                    for gave in keys]
            if all(x is not None and x <= deadline for x in last):
                done += 1
            m += 1
    return done


def _arrival(gave: list[tuple[Any, Any, Any]], m: int, horizon_t: Any, shift_t: Any,
             delta: Any, part_tol: Fraction | float) -> Any:
    """When a key whose prefix givers are ``gave`` (end, part, stated start) arrives
    in the repeat ``m`` cycles later, from its givers stated before the horizon."""
    total: Any = 0
    for end, part, stated_start in gave:  # by end
        if stated_start + m * shift_t < horizon_t:
            total += part
            if total >= 1 - part_tol:
                return end + m * delta
    return None


def replay_one_shot(
    schedule: Schedule,
    horizon: Fraction | int | str,
    *,
    mode: str = "strict",
    exact: bool = True,
    port_model: PortModel | str | None = None,
    tolerance: Fraction | int | float | str | None = None,
) -> Report:
    """Check a one-shot schedule as written, and measure its pipelined series over ``horizon``.

    What ``portsim validate --horizon H`` and :func:`simulator.validate`
    do with a one-shot schedule, the figures ``portsim run`` gives for it:
    the schedule is replayed whole, with no horizon (:func:`replay`), so a
    horizon shorter than its makespan never makes it infeasible or
    incomplete; then, by :func:`measure_series`, the series of operations
    reusing it is measured over ``horizon``.  ``tolerance`` is the check's
    (:func:`replay`); the series keeps only the order of the events, and
    of the tolerance its share for parts (:func:`replay_series`).

    Returns
    -------
    Report
        The replay of the schedule (violations, ``makespan``, ``end_time``,
        ``throughput``), with the series' figures when it was measured:
        ``completed`` (instances of the series complete by the horizon,
        which are also its ``instances``: the series expects no other),
        ``horizon``, ``measured_throughput`` and ``completion_times``.
        Should the series be cut (:func:`replay_series`), ``horizon`` is the
        shorter span over which the count is exact.  When the series is not
        measured (a violation, or no event), the replay of the schedule
        alone, with no horizon and no measured throughput.

    Raises
    ------
    ScheduleError
        On a periodic schedule, a bad ``mode`` or ``horizon``.

    Examples
    --------
    A relay ``A -> B -> C`` of makespan 2: over a horizon of 1 no operation
    completes, and the schedule is still feasible and complete; over 10,
    the series completes one operation per time unit once the pipe is full.

    >>> from portsim.simulator.platform import Platform
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}])
    >>> short = replay_one_shot(s, 1)
    >>> short.feasible, short.complete, short.completed, short.makespan
    (True, True, 0, Fraction(2, 1))
    >>> replay_one_shot(s, 10).completed
    9
    """
    check_schedule(schedule)
    if schedule.period is not None:
        raise ScheduleError("replay_one_shot replays a one-shot schedule")
    h = parse_rational(horizon, path="horizon", error=ScheduleError)
    if h <= 0:
        raise ScheduleError("horizon must be > 0", path="horizon", value=str(h))
    check = replay(schedule, mode=mode, exact=exact, port_model=port_model,
                   tolerance=tolerance)
    series = measure_series(schedule, check, h, exact=exact, port_model=port_model,
                            tolerance=tolerance)
    if series is None:
        return check
    # The violations are the schedule's own: a series of a feasible schedule
    # blocks nowhere, and its count would show it if it did.
    return replace(check, completed=series.completed, instances=series.completed, incomplete=0,
                   horizon=series.horizon, measured_throughput=series.measured_throughput,
                   completion_times=series.completion_times)


def _series_pattern(starts: tuple[Any, ...], size: int, count: int,
                    window: int) -> tuple[int, Fraction] | None:
    """``(c, delta)`` such that the last ``window`` instances of a series start
    exactly ``delta`` after the instances ``c`` earlier, event by event; the
    smallest such ``c``, or ``None``."""
    if any(x is None for x in starts):
        return None
    last = count - 1
    for cycle in range(1, count - window + 1):
        base = (last - cycle) * size
        delta = starts[last * size] - starts[base]
        if delta <= 0:
            continue
        if all(starts[(last - j) * size + i] - starts[(last - cycle - j) * size + i] == delta
               for j in range(window) for i in range(size)):
            return cycle, Fraction(delta)
    return None


def _drifting_pattern(run: _Run, engine: _Asap, events: list[_Play], size: int,
                      count: int) -> tuple[int, list[list[tuple[Any, Any]]]] | None:
    """A repeating pattern of a series whose parts run at their own rates.

    On a reduction tree, a leaf sends at its own pace, faster than the
    rest: the starts of copy ``t + c`` are those of copy ``t`` plus a delay
    of each event's own, ``delta(i)``, never one for all
    (:func:`_series_pattern`).  Such a series still repeats, event by event,
    when the delays never decrease along a dependency and each event waits
    on something that drifts at its own rate (see the notes).

    Returns ``(c, arrivals)`` for the smallest cycle ``c`` found: per
    instance of the last ``c`` copies, the ``(end, delta)`` of every event
    whose end its completion waits on, in the replay's time unit (instance
    ``u + m c`` of a later copy completes at the latest of ``end + m
    delta``); or ``None``.

    Notes
    -----
    In an as-soon-as-possible replay on ports, CPUs and links of one slot,
    an event starts at the latest of the ends of the events it waits on: the
    one before it on each of its resources (a port of a slot per link only
    keeps the order: its start), the events giving its inputs (each part
    of an input, when the parts add up to exactly one), and the event it
    follows (``Schedule.follows``: the end of one event of its own copy,
    as a transit send's follower waits for it).  Copy ``t``'s events
    wait on copies ``t`` and ``t - 1`` only, in the same way for every
    ``t >= 1``.  Let ``delta(x)`` be the delay of event ``x`` of the last
    ``c`` copies over ``c`` copies before, and of every earlier copy of the
    same residue.  If, for each such ``x``, every event it waits on has a
    delay of at most ``delta(x)`` and one that ends when ``x`` starts has
    exactly ``delta(x)``, then the next copy's ``x`` starts at the latest of
    the shifted ends, which is its start shifted by ``delta(x)``, and the
    same event still ends when it starts: by induction, every later copy
    repeats the last ``c`` ones, each event drifting by its own delay.  The
    uniform pattern is the case of one delay for all.  A port of ``k > 1``
    slots shorter than its links (its slot frees at no one event's end;
    the caller does not ask then) or an input delivered more than once
    (held at the first arrival, the earliest) is no such dependency:
    ``None``.
    """
    n_events = len(events)
    if n_events != size * count or any(x is None for x in engine.starts):
        return None
    starts = engine.starts
    capacity = run.capacity
    exact = run.exact
    one = run.one
    for cycle in range(1, count // 3 + 1):
        block = cycle * size  # the last `cycle` copies: the last `block` plays
        first = n_events - block
        # Plays are in copy order (copies never overlap in stated time, and
        # ties keep schedule order): play e of the block is event e - block of
        # `cycle` copies earlier.  A candidate's delays must also repeat one
        # cycle further back (a cheap filter before the dependencies).
        if any(starts[e] - starts[e - block] != starts[e - block] - starts[e - 2 * block]
               for e in range(first, n_events)):
            continue  # (most candidates fail at the first play)
        delta = [starts[e] - starts[e - block] for e in range(first, n_events)]
        if any(d <= 0 for d in delta):
            continue
        if any(events[e].index != events[e - block].index + block
               for e in range(first - block, n_events)):
            return None

        # The delay of a play e of the block or of the copy just before it is
        # delta[(e - first) % block].  What each play of the block waits on:
        # (play, weight), start + weight being when it lets the play go.
        waits: dict[int, list[tuple[int, Any]]] = {e: [] for e in range(first, n_events)}
        for r, queue in enumerate(engine.queues):
            k = len(queue) - 2  # the last is the sentinel -1
            single = capacity[r] == 1
            while k > 0 and queue[k] >= first:
                before = queue[k - 1]
                if before < first - block:
                    return None  # not one copy deep (never so: every copy has the same plays)
                ev = events[before]
                waits[queue[k]].append((before, ev.duration if single else 0))
                if not single and r not in run.by_links:
                    return None  # a port of k slots frees at no one event's end
                k -= 1
            if k == 0 and queue[0] >= first:
                return None  # a resource first used in the block: not one copy deep
        # Keys are per instance: the block's plays wait on givers of the block.
        givers: dict[int, list[int]] = defaultdict(list)
        for e in range(first, n_events):
            givers[events[e].give].append(e)
        instances = sorted({events[e].instance for e in range(first, n_events)})
        initial = run.initial_holdings(instances)
        play_of: dict[int, int] | None = None
        bad = False
        for e in range(first, n_events):
            for key in events[e].needs:
                if key < 0:  # Schedule.follows: the end of event -1 - key, of its copy
                    if play_of is None:
                        play_of = {events[p].index: p for p in range(first, n_events)}
                    led = play_of.get(-1 - key)
                    if led is None:
                        return None  # (a pair across copies: Schedule.repeat makes none)
                    waits[e].append((led, events[led].duration))
                    continue
                gave = givers.get(key)
                if key in initial or not gave:
                    continue  # held from the start: a constant, never later
                if not _whole_once(events, gave, exact, run.part_tol, one):
                    return None
                waits[e].extend((g, events[g].duration) for g in gave)
        for e in range(first, n_events):
            s, d = starts[e], delta[e - first]
            tight = False
            for p, weight in waits[e]:
                dp = delta[(p - first) % block]
                ready = starts[p] + weight
                if dp > d or ready > s:  # (later than the start: not what it waits on)
                    bad = True
                    break
                if ready == s and dp == d:
                    tight = True
            if bad or not tight:
                bad = True
                break
        if bad:
            continue
        # The completion of an instance of the block: the latest arrival of
        # its required keys, each the latest end of the plays giving it.
        required = _required_keys(run)
        stride = run.stride
        arrivals: list[list[tuple[Any, Any]]] = []
        for t in instances:
            parts: list[tuple[Any, Any]] = []
            for k in required:
                key = k + t * stride
                if key in initial:
                    continue  # held from the start
                gave = givers.get(key)
                if not gave:
                    return None
                if not _whole_once(events, gave, exact, run.part_tol, one):
                    return None
                parts.extend((starts[g] + events[g].duration, delta[g - first]) for g in gave)
            if not parts:
                return None
            arrivals.append(parts)
        return cycle, arrivals
    return None


def _whole_once(events: list[_Play], gave: list[int], exact: bool,
                part_tol: Fraction | float, one: Any) -> bool:
    """Whether the plays ``gave`` deliver their key exactly once: the key
    then arrives at the latest of their ends."""
    if len(gave) == 1:
        return events[gave[0]].part == 1
    total = sum(events[g].part for g in gave)
    if exact:
        return bool(total == one)
    smallest = min(events[g].part for g in gave)
    return bool(abs(total - 1) <= part_tol and smallest > 2 * part_tol)


def _check_replay_size(schedule: Schedule, horizon: Fraction, *, explicit_horizon: bool,
                       steady: bool = False) -> None:
    """Refuse a periodic replay of more than :data:`MAX_REPLAY_EVENTS` events.

    When the operation needs no communication, the instances of the slots no
    event serves complete at once and are listed one by one: they count one
    each per period.  (When it needs some, they are counted, not listed.)
    ``steady``: ``horizon`` is the steady state a strict replay plays on to
    past a shorter horizon (the error then names the largest lag).
    """
    assert schedule.period is not None
    periods = math.ceil(horizon / schedule.period)
    count = periods * len(schedule.events)
    idle = 0
    if _needs_nothing(schedule.operation):
        used = {_slot_of(e) for e in schedule.events}
        idle = schedule.instances_per_period - len(used)
    if count + periods * idle <= MAX_REPLAY_EVENTS:
        return
    if count <= MAX_REPLAY_EVENTS:
        raise ScheduleError(
            f"checking {periods} periods of {schedule.instances_per_period} instance slots "
            f"({idle} of them with no event) exceeds the cap of {MAX_REPLAY_EVENTS} "
            f"events and instances", path="instances_per_period",
            value=schedule.instances_per_period)
    why = (f"replaying {periods} periods of {len(schedule.events)} events exceeds the cap "
           f"of {MAX_REPLAY_EVENTS} events")
    if explicit_horizon:
        raise ScheduleError(f"{why}: give a shorter horizon", path="horizon",
                            value=format_rational(horizon))
    lag, i = max((e.lag, i) for i, e in enumerate(schedule.events))
    follows = ("the steady state checked past a short horizon" if steady
               else "the default horizon")
    raise ScheduleError(f"{why} ({follows} follows the largest lag)",
                        path=f"events[{i}].lag", value=lag)


def _needs_nothing(operation: Operation) -> bool:
    """True when every node starts with every item it must end with (no communication)."""
    held = {node: {operation.normalize(x) for x in items}
            for node, items in operation.initial_items(0).items()}
    return all(operation.normalize(x) in held.get(node, ())
               for node, items in operation.required_items(0).items() for x in items)


def _slot_of(event: Event) -> int:
    """The instance slot #j an event serves (its item's, or its output's, suffix)."""
    return event.item.instance if isinstance(event, Send) else event.output.instance


def _conclude(
    run: _Run,
    engine: _Strict | _Asap,
    events: list[_Play],
    instance_numbers: list[int],
    idle: list[int],
    unserved: _Unserved | None,
    horizon_t: Any,
    mode: str,
    record_starts: bool,
) -> Report:
    schedule = run.schedule
    completion, missing = _completions(run, engine.held, instance_numbers, horizon_t)

    startup_skipped = 0
    unfinished = 0
    if schedule.period is None:
        expected = list(instance_numbers)
        if horizon_t is not None:
            # As in a periodic replay: an instance is expected only once all
            # its events end within the horizon (at the stated times; in an
            # as-soon-as-possible replay, as replayed too).  A short horizon
            # counts fewer completions; it never makes a feasible schedule
            # incomplete.
            late = {play.instance for play in events
                    if play.start + play.duration > horizon_t + run.tol}
            expected = [t for t in expected if t not in late]
            if isinstance(engine, _Asap):
                expected = _ended_asap(run, engine, events, expected, horizon_t)
    else:
        expected = _fully_played(run, instance_numbers, horizon_t)
        if isinstance(engine, _Asap) and horizon_t is not None:
            expected = _ended_asap(run, engine, events, expected, horizon_t)
        expected += idle
        # Per instance slot #j (a dict: instances_per_period may be huge).
        max_lag: dict[int, int] = {}
        for pat in run.patterns:
            max_lag[pat.instance] = max(max_lag.get(pat.instance, 0), pat.lag)
        startup_skipped = sum(max_lag.values())
        unfinished = sum(1 for t in engine.played if t not in completion)

    incomplete = [t for t in expected if t not in completion]
    if (incomplete or unserved) and not (mode == "asap" and horizon_t is not None):
        _report_incomplete(run, incomplete, missing, engine.end_time, unserved)

    completed = len(completion)
    times = sorted(completion.values())
    makespan = None
    if schedule.period is None and not incomplete and times:
        makespan = run.out_time(times[-1])
    horizon_out = None if horizon_t is None else run.out_time(horizon_t)
    throughput = None
    if horizon_out is not None and horizon_out > 0:
        throughput = per_time(completed, horizon_out)
    proven = None
    if mode == "strict" and not run.violations and not incomplete and unserved is None:
        proven = _proven_throughput(run, expected, makespan, run.out_time(engine.end_time))
    starts: tuple[Any, ...] = ()
    if record_starts and isinstance(engine, _Asap) and schedule.period is None:
        by_pattern: list[Any] = [None] * len(schedule.events)
        for e, start in enumerate(engine.starts):
            if start is not None:
                by_pattern[events[e].index] = run.out_time(start)
        starts = tuple(by_pattern)
    violations = _ordered_violations(run, periodic=schedule.period is not None)
    return Report(
        mode=mode,
        exact=run.exact,
        port_model=str(run.platform.port_model),
        node_port_models=own_port_models(run.platform),
        violations=violations,
        completed=completed,
        instances=len(expected) + (0 if unserved is None else unserved.instances),
        makespan=makespan,
        end_time=run.out_time(engine.end_time),
        horizon=horizon_out,
        measured_throughput=throughput,
        throughput=proven,
        completion_times=tuple(run.out_time(x) for x in times),
        startup_skipped=startup_skipped,
        unfinished=unfinished,
        # an asap replay may complete unexpected instances, ahead of the
        # stated times: they must not make up for expected ones left incomplete
        incomplete=len(incomplete) + (0 if unserved is None else unserved.instances),
        event_starts=starts,
    )


def _required_keys(run: _Run) -> list[int]:
    """The keys an instance ``t`` must hold to be complete, less ``t * run.stride``."""
    return [
        run._base(item) * run.nn + run.node_index[node]
        for node, items in run.operation.required_items(0).items()
        for item in items
    ]


def _completions(run: _Run, held: dict[int, Any], instance_numbers: list[int],
                 horizon_t: Any) -> tuple[dict[int, Any], dict[int, list[int]]]:
    """Per instance, when its last required item arrived (by the horizon), or the
    keys it misses."""
    required = _required_keys(run)
    stride = run.stride
    deadline = math.inf if horizon_t is None else horizon_t + run.tol
    completion: dict[int, Any] = {}
    missing: dict[int, list[int]] = {}
    for t in instance_numbers:
        latest: Any = 0
        shift = t * stride
        for k in required:
            arrival = held.get(k + shift)
            if arrival is None or arrival > deadline:
                missing.setdefault(t, []).append(k + shift)
                latest = None
            elif latest is not None and arrival > latest:
                latest = arrival
        if latest is not None:
            completion[t] = latest
    return completion, missing


def _ordered_violations(run: _Run, *, periodic: bool) -> tuple[Violation, ...]:
    """Violations in time order; in a periodic replay, the repeats of one
    pattern event's violation in later periods are folded into the first."""
    ordered = [v for _, _, v in sorted(run.violations, key=lambda x: (x[0], x[1]))]
    if not periodic:
        return tuple(ordered)
    # one row per resource: a send overlapping another on both its ports
    # is two violations a period, not one repeated in twice the periods
    first: dict[tuple[str, tuple[int, ...], str], int] = {}
    repeats: dict[int, int] = defaultdict(int)
    kept: list[Violation] = []
    for v in ordered:
        key = (v.kind, v.events, v.resource.partition("#")[0])  # an item of any period
        if v.events and key in first:
            repeats[first[key]] += 1
            continue
        first[key] = len(kept)
        kept.append(v)
    return tuple(
        replace(v, detail=f"{v.detail} (repeated in {counted(repeats[i], 'later period')})")
        if repeats.get(i) else v
        for i, v in enumerate(kept)
    )


_REPEATED = re.compile(r" \(repeated in (\d+) later periods?\)$")
"""The end :func:`_ordered_violations` gives a violation folded with its repeats."""

_MORE = re.compile(r" \(and (\d+) more instances\)")
"""What :func:`_report_incomplete` says of the other instances an item misses."""


def _extend_periodic(last: Report, before: Report, periods: int, period: Fraction, *,
                    end_time: Fraction | float | None = None) -> Report:
    """``last``, a strict replay of a periodic schedule past its steady state,
    as the replay ``periods`` periods longer gives it; ``before``: the replay one
    period shorter than ``last``, also past the steady state.

    Past the steady state each period repeats the one before: each violation
    folded with its repeats (:func:`_ordered_violations`) gains as many as it
    gained over ``before``'s last period, and so does each item an instance
    misses at the end (:func:`_report_incomplete`), whose row moves to the
    longer horizon's end, as ``end_time`` does; ``incomplete`` and
    ``unfinished`` count alike.  ``end_time``: the end of the last event over
    the longer horizon, when the caller knows it (:func:`replay_periodic`
    computes it as the longer replay would, :func:`_last_end`: no event
    played ends at 0, and a float sum is that replay's to the last bit);
    else ``last``'s, ``periods`` periods later.  ``completed``,
    ``instances`` and ``completion_times`` are the caller's
    (:func:`replay_periodic`).  A violation of neither kind is kept as it
    is: by the steady state every pattern event has met every other at
    every lag.
    """
    if periods <= 0:
        return last
    end = last.end_time
    if end_time is None and end is not None:
        end_time = end + periods * period

    def key(v: Violation) -> tuple[Any, ...]:
        return (v.kind, v.events, v.node, v.resource.partition("#")[0])

    def occurrences(v: Violation) -> int:
        found = (_REPEATED.search(v.detail) if v.events else _MORE.search(v.detail))
        return 1 + (int(found.group(1)) if found else 0)

    earlier = {key(v): occurrences(v) for v in before.violations}
    extended: list[Violation] = []
    for v in last.violations:
        seen = occurrences(v)
        total = seen + periods * (seen - earlier.get(key(v), 0))
        if v.events:  # one row a pattern event and resource, the later periods counted
            if total != seen:
                base = _REPEATED.sub("", v.detail)
                v = replace(
                    v, detail=f"{base} (repeated in {counted(total - 1, 'later period')})")
        elif v.kind == ViolationKind.INCOMPLETE and v.time == last.end_time:
            # an item missing at the end: as many more instances, named at the end
            detail = v.detail
            if total != seen:
                more = f" (and {total - 1} more instances)"
                detail = (_MORE.sub(more, detail, count=1) if _MORE.search(detail) else
                          detail.replace(f"never holds {v.resource}",
                                         f"never holds {v.resource}{more}", 1))
            v = replace(v, detail=detail, time=v.time if end_time is None else end_time)
        extended.append(v)
    extended.sort(key=lambda v: v.time)
    return replace(
        last, violations=tuple(extended),
        incomplete=last.incomplete + periods * (last.incomplete - before.incomplete),
        unfinished=last.unfinished + periods * (last.unfinished - before.unfinished),
        end_time=end_time)


def _last_end(run: _Run, horizon_t: Any) -> Any:
    """When the last event of a strict periodic replay over ``horizon_t`` past its
    steady state ends (0 when it plays none), in ``run``'s time unit.

    Each pattern event's last play is the one of the last period that plays
    it (:meth:`_Run.concrete`), its end computed as :meth:`_Strict.play`
    does: the same float sum, to the last bit.
    """
    assert run.schedule.period is not None
    period = run.to_time(run.schedule.period)
    cutoff = run.cutoff(horizon_t)
    last = math.ceil(cutoff / period) - 1  # the last period played
    latest: Any = 0
    for pat in run.patterns:
        if not pat.playable:
            continue
        p = last
        while p >= pat.lag and p * period + pat.start >= cutoff:
            p -= 1
        if p >= pat.lag:
            end = p * period + pat.start + pat.duration
            if end > latest:
                latest = end
    return latest


def _fully_played(run: _Run, instance_numbers: list[int], horizon_t: Any) -> list[int]:
    """Instances of a periodic replay whose every event ended by the horizon."""
    schedule = run.schedule
    assert schedule.period is not None
    n = schedule.instances_per_period
    period = run.to_time(schedule.period)
    span, instant = run.span, run.instant
    # A zero-time event is played only if it starts before the cutoff
    # (``concrete`` drops starts >= cutoff), so it must start strictly before.
    cutoff = run.cutoff(horizon_t)
    out = []
    for t in instance_numbers:
        q, j = divmod(t, n)
        if j in span and q * period + span[j] <= horizon_t + run.tol and (
                j not in instant or q * period + instant[j] < cutoff):
            out.append(t)
    return out


def _ended_asap(run: _Run, engine: _Asap, events: list[_Play], played: list[int],
                horizon_t: Any) -> list[int]:
    """Of ``played``, the instances whose every event also ended by the horizon as replayed.

    The as-soon-as-possible replay keeps only the order of the events, so an
    instance due by the horizon at the schedule's own times may still be
    running there (``lp-naive``'s periodic schedules: their port sums are
    not achievable, and the replay runs slower than their period).  Only
    an instance whose events all ran to their end and whose result is still
    missing is incomplete.
    """
    limit = horizon_t + run.tol
    unfinished: set[int] = set()
    for play, start in zip(events, engine.starts, strict=True):
        if start is None or start + play.duration > limit:
            unfinished.add(play.instance)
    return [t for t in played if t not in unfinished]


@dataclass(frozen=True, slots=True)
class _Unserved:
    """The instance slots no event serves, in an operation that needs communication.

    Every one of their instances is incomplete; they are counted, not listed
    (``instances_per_period`` may be huge).
    """

    slots: tuple[tuple[int, int], ...]  # the slots, as ranges (first, last)
    count: int  # how many slots
    instances: int  # their instances the horizon expects: count * periods
    missing: tuple[int, ...]  # held-item keys of instance 0 never held


def _idle_slots(run: _Run, horizon_t: Any) -> tuple[list[int], _Unserved | None]:
    """The instance slots of a periodic replay that no event serves.

    A periodic schedule claims ``instances_per_period`` instances every
    period: slot #j's instance of period q is expected once ``q * period +
    idle_span`` lies within the horizon, whether or not any event serves it.
    When the operation needs no communication those instances complete at
    once: they are returned, to be replayed like the others.  Otherwise they
    are all incomplete: an :class:`_Unserved` counts them.
    """
    schedule = run.schedule
    assert schedule.period is not None
    n = schedule.instances_per_period
    count = n - len(run.span)
    room = horizon_t + run.tol - run.idle_span
    if count == 0 or room < 0:
        return [], None
    periods = int(room // run.to_time(schedule.period)) + 1
    if _needs_nothing(run.operation):
        idle = [j for j in range(n) if j not in run.span]
        return [q * n + j for q in range(periods) for j in idle], None
    gaps: list[tuple[int, int]] = []
    following = 0
    for j in sorted(run.span):
        if j > following:
            gaps.append((following, j - 1))
        following = j + 1
    if following < n:
        gaps.append((following, n - 1))
    held = set(run.initial_holdings([0]))
    missing = tuple(sorted({run._base(item) * run.nn + run.node_index[node]
                            for node, items in run.operation.required_items(0).items()
                            for item in items} - held))
    return [], _Unserved(tuple(gaps), count, count * periods, missing)


def _proven_throughput(run: _Run, expected: list[int],
                       makespan: Fraction | float | None,
                       end_time: Fraction | float | None) -> Fraction | None:
    """The throughput a feasible, complete strict replay proves, exactly.

    Periodic: ``instances_per_period / period`` once every instance slot
    #j < instances_per_period was expected (and so completed) in at least
    one period; ``None`` when the horizon was too short to see every slot.
    One-shot: the instances completed divided by the time the last event
    ends, the makespan unless events run past the completion: copies of the
    schedule started that far apart never share a port, link or CPU, while
    copies a makespan apart could collide with such events.
    """
    schedule = run.schedule
    if schedule.period is not None:
        n = schedule.instances_per_period
        if len({t % n for t in expected}) < n:
            return None
        return Fraction(n) / schedule.period
    if makespan is None or makespan <= 0:
        return None
    if isinstance(end_time, Fraction) and isinstance(makespan, Fraction):
        return Fraction(len(expected)) / max(makespan, end_time)
    # float time: the exact end of the last event, the makespan or later (an
    # instance completes as an event ends), known from the schedule
    end = run.exact_end()
    if end is None or end <= 0:
        return None
    return Fraction(len(expected)) / end


def _ranges(slots: list[int], more: tuple[tuple[int, int], ...] = ()) -> list[tuple[int, int]]:
    """Slot numbers, and ranges ``more`` of them, as sorted disjoint ranges ``(first, last)``."""
    out: list[tuple[int, int]] = []
    for first, last in sorted([(j, j) for j in slots] + list(more)):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(last, out[-1][1]))
        else:
            out.append((first, last))
    return out


def _slot_text(ranges: list[tuple[int, int]], shown: int = 4) -> str:
    """Ranges of slots as ``#1-#3, #7`` (the first ``shown`` of them)."""
    text = ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in ranges[:shown])
    return text + (", ..." if len(ranges) > shown else "")


def _report_incomplete(
    run: _Run,
    incomplete: list[int],
    missing: dict[int, list[int]],
    end_time: Any,
    unserved: _Unserved | None,
) -> None:
    """One violation per (node, item) left missing, naming the instances concerned
    and, for a periodic schedule, the instance slots (and those no event serves)."""
    grouped: dict[int, list[int]] = defaultdict(list)  # instance-0 key -> instances
    for t in incomplete:
        for key in missing.get(t, []):
            grouped[key % run.stride].append(t)
    lost = set() if unserved is None else set(unserved.missing)
    n = run.schedule.instances_per_period
    for key0 in sorted(set(grouped) | lost):
        instances = grouped.get(key0, [])
        count = len(instances)
        first = min(instances, default=None)
        served = sorted({t % n for t in instances})
        slots = _ranges(served)
        slot_count = len(served)
        idle_text = ""
        if unserved is not None and key0 in lost:
            count += unserved.instances
            first = unserved.slots[0][0] if first is None else min(first, unserved.slots[0][0])
            slots = _ranges(served, unserved.slots)
            slot_count += unserved.count
            many = unserved.count > 1
            idle_text = (f"; slot{'s' if many else ''} {_slot_text(list(unserved.slots))} "
                         f"{'have' if many else 'has'} no event")
        assert first is not None
        node, name = run.key_name(key0 + first * run.stride)
        more = f" (and {count - 1} more instances)" if count > 1 else ""
        slots_text = ""
        if run.schedule.period is not None:
            many = slot_count > 1
            slots_text = (f"; instance slot{'s' if many else ''} {_slot_text(slots)} "
                          f"({slot_count} of {n}) never complete{'' if many else 's'}"
                          f"{idle_text}")
        transit = run.transit_text(key0 + first * run.stride)
        run.violate(run.out_time(end_time), ViolationKind.INCOMPLETE, node,
                    f"{node} never holds {name}{more}{transit}{slots_text}", (),
                    resource=name)


def _float_tolerance(values: list[Fraction], *, tick: int | None = None) -> float:
    """Float mode's tolerance: :data:`FLOAT_TICK_FRACTION` of the exact schedule's tick.

    Every time of the replay is a multiple of ``1 / D`` (``D`` the common
    denominator of ``values``) and at most twice the largest of them (a start
    plus a duration; the horizon plus a duration).  The tolerance is a
    quarter tick; it must also exceed twice the rounding noise of floats at
    that size, else float time cannot tell one tick from rounding and the
    replay is refused.  ``tick``: ``D`` when the caller knows it (it may
    then pass only the largest of the times that ``D`` covers).
    """
    if tick is None:
        tick = common_denominator(values)
    largest = 2 * max((abs(v) for v in values), default=Fraction(1))
    tolerance = FLOAT_TICK_FRACTION / tick
    noise = float(largest) * _FLOAT_NOISE
    if 2 * noise > tolerance:
        bits = tick.bit_length()
        denominator = str(tick) if bits <= 50 else f"about 2^{bits - 1}"
        raise ScheduleError(
            f"float time cannot resolve this schedule: its times are multiples of "
            f"1/{denominator} up to {float(largest):.6g}, finer than float precision "
            f"there; replay it in exact time", path="float", value=f"1/{denominator}")
    return tolerance


def _fmt(value: Fraction | float) -> str:
    return format_rational(value) if isinstance(value, Fraction) else f"{value:.6g}"
