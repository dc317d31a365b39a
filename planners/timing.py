"""A small list scheduler that turns an ordered list of events into exact start times.

Planners that decide *what* to send and compute, and in which order, use
:class:`PortClock` to decide *when*: each event is placed, in the order it is
emitted, at the earliest instant when every resource it needs is free at once
and its inputs are held.  Nothing is ever placed before an event emitted
earlier on the same resource (no back-filling), so the events of one resource
never overlap and the schedule is feasible by construction.

Resources, per node, follow the node's port model
(:meth:`portsim.simulator.platform.Platform.port_model_of`):

- bidirectional: one send port and one receive port;
- unidirectional: one port shared by sends and receives;
- multiport:k: k send ports and k receive ports (a transfer takes one of each
  kind, on its sender and on its receiver); multiport: one of each per link;

plus one resource per directed link (a link carries one transfer at a time,
under every port model),
one CPU per node (computation overlaps communication fully) and optional
*lanes*: named exclusive resources a planner adds to serialise events that the
port model alone would let overlap (the flat tree uses one so that the root
deals with one participant at a time, whatever its number of ports).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction

import networkx as nx

from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Compute, Event, Send

__all__ = ["PortClock", "cheapest_path", "cheapest_paths_from"]

_ZERO = Fraction(0)


def _path_weight(platform: Platform, size: Fraction | int) -> str | Callable[..., Fraction]:
    """Dijkstra's weight: the link cost ``c`` (as the integer ``ticks``: the same
    order, compared nine times faster), or each link's duration for ``size``
    where a latency makes durations not proportional to ``c``."""
    if size == 1 or not platform.has_latency:
        return "ticks"    # every path's time is size * (its sum of c): the same order
    return lambda u, v, _data: platform.duration(u, v, size)


def cheapest_path(platform: Platform, src: NodeId, dst: NodeId,
                  size: Fraction | int = 1) -> list[NodeId]:
    """The cheapest directed path from ``src`` to ``dst`` for a message of ``size``.

    The sum of the links' durations for ``size`` (:meth:`Platform.duration`):
    the link costs ``c`` where no link has a latency; with latencies the
    cheapest path depends on the size (a direct link of latency 10 and
    bandwidth 100 beats two hops of bandwidth 1 for a message of size 100,
    not for one of size 1).  Routers and other processors may be
    intermediate hops.  Ties are broken by networkx's Dijkstra,
    deterministically for a given platform.

    Parameters
    ----------
    platform:
        The platform.
    src, dst:
        End points; ``[src]`` when they are equal.
    size:
        The message size (default 1).

    Returns
    -------
    list of NodeId
        The nodes of the path, ``src`` first and ``dst`` last.

    Raises
    ------
    PlannerError
        When ``dst`` is unreachable from ``src``.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "R", "B"], [("A", "R", 1), ("R", "B", 1), ("A", "B", 5)])
    >>> cheapest_path(p, "A", "B")
    ['A', 'R', 'B']
    """
    if src == dst:
        return [src]
    try:
        path: list[NodeId] = nx.dijkstra_path(platform.graph, src, dst,
                                              weight=_path_weight(platform, size))
    except (nx.NetworkXNoPath, nx.NodeNotFound) as err:
        raise PlannerError(f"no path from {src} to {dst}", value=f"{src} -> {dst}") from err
    return path


def cheapest_paths_from(platform: Platform, src: NodeId,
                        size: Fraction | int = 1) -> dict[NodeId, list[NodeId]]:
    """The path :func:`cheapest_path` gives from ``src`` to every node it reaches, in one search.

    One Dijkstra from ``src`` instead of one per destination: a flat scatter or
    broadcast from one source to the 1,999 other nodes of a random platform
    took 37 s in per-destination searches.  Each path is the one
    :func:`cheapest_path` returns (a search stopped at ``dst`` has settled
    the same paths up to it; ties broken alike).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "R", "B"], [("A", "R", 1), ("R", "B", 1), ("A", "B", 5)])
    >>> cheapest_paths_from(p, "A")
    {'A': ['A'], 'R': ['A', 'R'], 'B': ['A', 'R', 'B']}
    """
    paths: dict[NodeId, list[NodeId]] = nx.single_source_dijkstra_path(
        platform.graph, src, weight=_path_weight(platform, size))
    return paths


class PortClock:
    """Earliest-start list scheduler over ports, CPUs and lanes, in exact time.

    Parameters
    ----------
    platform:
        The platform; each node's port model comes from
        :meth:`~portsim.simulator.platform.Platform.port_model_of`.
    size:
        Message size: a send over ``(u, v)`` lasts ``size * c(u, v)``.

    Notes
    -----
    Each port, CPU and lane keeps the instant from which it is free.  An event
    needs a set of them; it starts at the largest of their free instants, of
    the instants its inputs are held, and of its ``not_before`` argument.  For
    a multi-port node the event takes, among the ports free by then, the one
    that became free last (best fit), which keeps earlier-free ports for later
    events.  A side with at least as many ports as links (``multiport``
    without ``k``) is never the latest of those instants, so it is not kept:
    each link carries its sends one after the other, and by induction the
    ports free after any instant ``t`` are never more than the links free
    after ``t``, so some port is free whenever the send's link is.  An item
    is held from the end of the send or compute that
    delivered it (store and forward: a hop never starts before the item has
    fully arrived).

    Examples
    --------
    >>> from portsim.simulator.items import Item
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 2)])
    >>> clock = PortClock(p)
    >>> clock.hold("S", Item.message("A"))
    >>> clock.hold("S", Item.message("B"))
    >>> clock.send("S", "A", Item.message("A")).start
    Fraction(0, 1)
    >>> clock.send("S", "B", Item.message("B")).start
    Fraction(1, 1)
    >>> clock.available("B", Item.message("B"))
    Fraction(3, 1)
    """

    def __init__(self, platform: Platform, *, size: Fraction | int = 1) -> None:
        self._platform = platform
        self._size = Fraction(size)
        if self._size <= 0:
            raise PlannerError("message size must be > 0", value=str(self._size))
        # A side with as many ports as links or more (`multiport` without k,
        # one per link) keeps no port list: its ports never delay a send that
        # its link lets start (see the Notes), and scanning them (64 into the
        # InfiniBand switch of 16 dgx_a100 servers) took most of the timing
        # of a 64-rank MSCCL ring.
        self._send_ports: dict[NodeId, list[Fraction] | None] = {}
        self._recv_ports: dict[NodeId, list[Fraction] | None] = {}
        for node in platform.node_ids:
            model = platform.port_model_of(node)
            if model.kind is PortKind.UNIDIRECTIONAL:
                shared = [_ZERO]
                self._send_ports[node] = shared
                self._recv_ports[node] = shared
            else:
                out_links, in_links = platform.degree(node)
                out_ports, in_ports = model.ports(out_links), model.ports(in_links)
                self._send_ports[node] = None if out_ports >= out_links else [_ZERO] * out_ports
                self._recv_ports[node] = None if in_ports >= in_links else [_ZERO] * in_ports
        self._durations: dict[tuple[NodeId, NodeId], Fraction] = {}
        self._links: dict[tuple[NodeId, NodeId], Fraction] = {}
        self._cpu: dict[NodeId, Fraction] = dict.fromkeys(platform.node_ids, _ZERO)
        self._lanes: dict[Hashable, Fraction] = {}
        self._held: dict[tuple[NodeId, Item], Fraction] = {}
        self._events: list[Event] = []
        self._follows: list[tuple[int, int]] = []
        self._end = _ZERO

    # -- state -----------------------------------------------------------------

    @property
    def platform(self) -> Platform:
        """The platform the clock schedules on."""
        return self._platform

    @property
    def size(self) -> Fraction:
        """The message size every send carries."""
        return self._size

    @property
    def events(self) -> tuple[Event, ...]:
        """The events placed so far, in the order they were emitted."""
        return tuple(self._events)

    @property
    def follows(self) -> tuple[tuple[int, int], ...]:
        """The pairs ``(i, j)`` of event indexes chained by :meth:`route` (``chained``):
        event ``j`` follows event ``i``; a schedule of :attr:`events` takes them
        as its :attr:`~portsim.simulator.schedule.Schedule.follows`."""
        return tuple(self._follows)

    @property
    def end_time(self) -> Fraction:
        """When the last event placed so far ends (0 when there is none)."""
        return self._end

    def first_deliveries(self) -> tuple[Event, ...]:
        """The events placed so far, less every send that delivers nothing.

        A send delivers nothing when its receiver holds its item from an
        earlier instant than the send's end (the start, a compute, another
        send), or from a send ending at the same instant placed before it.
        On ``multiport`` nodes a send placed later may arrive earlier, past
        :meth:`delivers`'s check: the ring's chain sent ``b`` to a node that
        another of its links had reached sooner.  Leaving such sends out
        moves no other event (each use of an item waited for its first
        arrival, which is kept) and only frees ports and links.  Not on a
        clock with chained routes: their :attr:`follows` number the events.
        """
        if self._follows:
            raise PlannerError("first_deliveries would renumber the events that the "
                               "chained routes' follows pairs name")
        kept: list[Event] = []
        delivered: set[tuple[NodeId, Item]] = set()
        for event in self._events:
            if isinstance(event, Send):
                key = (event.dst, event.item)
                end = event.start + self.transfer_time(event.src, event.dst)
                if self._held[key] < end or key in delivered:
                    continue
                delivered.add(key)
            kept.append(event)
        return tuple(kept)

    def transfer_time(self, src: NodeId, dst: NodeId) -> Fraction:
        """Duration of a send over the link ``src -> dst`` (:meth:`Platform.duration`)."""
        found = self._durations.get((src, dst))
        if found is None:
            if not self._platform.has_link(src, dst):
                raise PlannerError("no link", value=f"{src} -> {dst}")
            found = self._durations[src, dst] = self._platform.duration(src, dst, self._size)
        return found

    def completion_time(self, operation: Operation) -> Fraction:
        """When the last node ``operation`` requires to hold something holds it.

        Raises
        ------
        PlannerError
            When a required item is never delivered (a planner bug).
        """
        finish = _ZERO
        for node, items in operation.required_items().items():
            for item in items:
                at = self._held.get((node, item))
                if at is None:
                    raise PlannerError(f"planner bug: {node} never receives {item}",
                                       value=str(item))
                finish = max(finish, at)
        return finish

    def hold(self, node: NodeId, item: Item, at: Fraction | int = 0) -> None:
        """Record that ``node`` holds ``item`` from instant ``at`` (initial data)."""
        self._check_node(node)
        self._note_held(node, item, Fraction(at))

    def available(self, node: NodeId, item: Item) -> Fraction | None:
        """The instant from which ``node`` holds ``item``, or ``None`` if it never does."""
        return self._held.get((node, item))

    def holds(self, node: NodeId, item: Item) -> bool:
        """True when ``node`` holds ``item`` at some instant of the schedule so far."""
        return (node, item) in self._held

    def delivers(self, src: NodeId, dst: NodeId, item: Item, *,
                 lanes: Iterable[Hashable] = ()) -> bool:
        """Whether :meth:`send` of ``item`` over ``src -> dst`` would give ``dst`` anything.

        False when ``dst`` already holds ``item`` from the instant that send
        would end or before: it would only occupy ports and a link, and
        ``dst`` can forward its own copy (routers too: they store and
        forward, as the engine replays them).
        """
        at = self._held.get((dst, item))
        if at is None:
            return True
        start = self._earliest_start(src, dst, item, list(lanes), _ZERO)
        return at > start + self.transfer_time(src, dst)

    def send_start(self, src: NodeId, dst: NodeId, item: Item, *,
                   lanes: Iterable[Hashable] = ()) -> Fraction:
        """The instant :meth:`send` of ``item`` over ``src -> dst`` would start now.

        Raises
        ------
        PlannerError
            When ``src`` never holds ``item`` (so far).
        """
        return self._earliest_start(src, dst, item, list(lanes), _ZERO)

    # -- placing events --------------------------------------------------------

    def send(
        self,
        src: NodeId,
        dst: NodeId,
        item: Item,
        *,
        lanes: Iterable[Hashable] = (),
        not_before: Fraction | int = 0,
    ) -> Send:
        """Place one send of ``item`` over the link ``src -> dst``.

        Parameters
        ----------
        src, dst:
            The link; it must exist.
        item:
            What is sent; ``src`` must hold it (possibly from a later instant).
        lanes:
            Extra exclusive resources the send occupies.
        not_before:
            Earliest start allowed by the caller.

        Returns
        -------
        Send
            The placed event; ``dst`` holds ``item`` from its end.

        Raises
        ------
        PlannerError
            When the link does not exist or ``src`` never holds ``item``.
        """
        return self._send(src, dst, item, list(lanes),
                          not_before if type(not_before) is Fraction else Fraction(not_before))

    def _send(self, src: NodeId, dst: NodeId, item: Item, lane_list: list[Hashable],
              not_before: Fraction, *, relayed: bool = False, transit: bool = False) -> Send:
        """:meth:`send`; ``relayed``: ``src`` passes on a transit copy, ready at
        ``not_before`` (it holds none); ``transit``: ``dst`` keeps no copy."""
        duration = self.transfer_time(src, dst)
        send_ports = self._send_ports[src]
        recv_ports = self._recv_ports[dst]
        start = self._earliest_start(src, dst, item, lane_list, not_before, relayed=relayed)
        end = start + duration
        if send_ports is not None:
            _occupy(send_ports, start, end)
        if recv_ports is not None:
            _occupy(recv_ports, start, end)
        self._links[src, dst] = end
        for lane in lane_list:
            self._lanes[lane] = end
        if not transit:
            self._note_held(dst, item, end)
        event = Send(src=src, dst=dst, item=item, start=start, transit=transit)
        self._record(event, end)
        return event

    def route(
        self,
        path: Sequence[NodeId],
        item: Item,
        *,
        lanes_of: dict[NodeId, tuple[Hashable, ...]] | None = None,
        lanes: tuple[Hashable, ...] = (),
        skip_held: bool = False,
        chained: bool = False,
        not_before: Fraction | int = 0,
    ) -> list[Send]:
        """Forward ``item`` hop by hop along ``path`` (store and forward).

        Parameters
        ----------
        path:
            Nodes from the holder of ``item`` to its destination.
        item:
            What is forwarded.
        lanes_of:
            Lanes a hop occupies when it touches a given node (as sender or
            receiver), e.g. ``{root: ("root",)}``.
        lanes:
            Lanes every hop occupies.
        skip_held:
            Leave out every hop that :meth:`delivers` nothing (its end
            already holds ``item`` as early): the item goes on from that
            node's own copy.
        chained:
            Each hop waits for the end of the previous one, even where a node
            on the path holds ``item`` earlier (from another transfer): what
            goes on is what this route carries, as on an MSCCL connection.
            The pairs of chained hops are kept (:attr:`follows`), so that the
            engine's replays, a series as soon as possible too, chain them
            alike; every hop but the last is a ``transit`` send (its receiver
            keeps no copy, neither here nor in the engine: a relaying GPU
            holds the item only from its own receive).  Not with ``skip_held``.
        not_before:
            Earliest start of the first hop.

        Returns
        -------
        list of Send
            One send per hop placed, in path order.
        """
        if chained and skip_held:
            raise PlannerError("a chained route skips no hop (skip_held)", value=str(item))
        lanes_of = lanes_of or {}
        hops: list[Send] = []
        after = Fraction(not_before)
        last = len(path) - 2  # the index of the last hop
        for k, (u, v) in enumerate(itertools.pairwise(path)):
            hop_lanes = lanes + lanes_of.get(u, ()) + lanes_of.get(v, ())
            if skip_held and not self.delivers(u, v, item, lanes=hop_lanes):
                continue
            hop = self._send(u, v, item, list(hop_lanes), after,
                             relayed=chained and k > 0, transit=chained and k < last)
            if chained:
                if hops:
                    index = len(self._events) - 1
                    self._follows.append((index - 1, index))
                after = hop.start + self.transfer_time(u, v)
            hops.append(hop)
        return hops

    def compute(
        self,
        node: NodeId,
        inputs: Sequence[Item],
        output: Item,
        *,
        lanes: Iterable[Hashable] = (),
        not_before: Fraction | int = 0,
    ) -> Compute:
        """Place one reduction task on ``node``: ``inputs`` (in order) into ``output``.

        It lasts the node's compute time (``k - 1`` times it for ``k`` inputs:
        ``k - 1`` tasks) and needs the node's CPU, not its ports.

        Raises
        ------
        PlannerError
            When ``node`` is a router or never holds one of ``inputs``.
        """
        self._check_node(node)
        if self._platform.node(node).router:
            raise PlannerError("a router cannot compute", value=node)
        lane_list = list(lanes)
        start = max(
            self._cpu[node],
            Fraction(not_before),
            *(self._ready(node, x) for x in inputs),
            *(self._lanes.get(lane, _ZERO) for lane in lane_list),
        )
        end = start + self._platform.compute_time(node) * (len(inputs) - 1)  # Compute.tasks
        self._cpu[node] = end
        for lane in lane_list:
            self._lanes[lane] = end
        self._note_held(node, output, end)
        event = Compute(node=node, inputs=tuple(inputs), output=output, start=start)
        self._record(event, end)
        return event

    # -- internals -------------------------------------------------------------

    def _check_node(self, node: NodeId) -> None:
        if node not in self._cpu:
            raise PlannerError("unknown node", value=node)

    def _earliest_start(self, src: NodeId, dst: NodeId, item: Item, lanes: list[Hashable],
                        not_before: Fraction, *, relayed: bool = False) -> Fraction:
        """When :meth:`send` would start a send of ``item`` over ``src -> dst``
        (``relayed``: of a transit copy ready at ``not_before``)."""
        send_ports, recv_ports = self._send_ports[src], self._recv_ports[dst]
        return max(
            not_before if relayed else self._ready(src, item),
            not_before,
            _ZERO if send_ports is None else min(send_ports),
            _ZERO if recv_ports is None else min(recv_ports),
            self._links.get((src, dst), _ZERO),
            *(self._lanes.get(lane, _ZERO) for lane in lanes),
        )

    def _ready(self, node: NodeId, item: Item) -> Fraction:
        at = self._held.get((node, item))
        if at is None:
            raise PlannerError(f"{node} never holds {item}", value=str(item))
        return at

    def _note_held(self, node: NodeId, item: Item, at: Fraction) -> None:
        previous = self._held.get((node, item))
        if previous is None or at < previous:
            self._held[(node, item)] = at

    def _record(self, event: Event, end: Fraction) -> None:
        self._events.append(event)
        self._end = max(self._end, end)


def _occupy(ports: list[Fraction], start: Fraction, end: Fraction) -> None:
    """Mark busy until ``end`` the port free by ``start`` that became free last."""
    best = max((i for i, free in enumerate(ports) if free <= start), key=ports.__getitem__)
    ports[best] = end
