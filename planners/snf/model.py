"""The sender-time model, earliest-possible schedules and reduction trees.

Liu, Kuo and Wang (2007), sections 2–3: processor ``p`` sends a message to
any other processor in ``t(p)`` (computation folded in), and takes part in
one communication at a time.  A reduction schedule is a sequence of the
``n - 1`` senders (every processor but the destination sends exactly once);
algorithm EP (Fig. 2) starts each sender as soon as two processors are free,
and Lemma 1 assigns the receivers.  This module turns such a sequence, or a
minimum-critical-path tree (section 5.3.1), into a concrete
:class:`ReductionTree` and then into a :class:`~portsim.simulator.schedule.Schedule`
the engine replays.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.base import WeightedTree
from portsim.planners.timing import PortClock
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Schedule, Send

__all__ = [
    "SENDER_TIME_PORT_MODELS",
    "CriticalPathTree",
    "ReductionTree",
    "Transmission",
    "broadcast_schedule",
    "earliest_possible",
    "earliest_possible_makespan",
    "reduction_schedule",
    "sender_times",
    "tree_from_critical_path",
    "weighted_tree",
]

SENDER_TIME_PORT_MODELS: frozenset[PortKind] = frozenset(
    {PortKind.BIDIRECTIONAL, PortKind.UNIDIRECTIONAL}
)
"""Port models these planners accept.  The paper's one-port model is the
unidirectional one; in a one-shot reduction or broadcast no node ever needs
to send and receive at once, so the same schedules are feasible and have the
same length under the bidirectional model."""


def sender_times(
    platform: Platform,
    nodes: Sequence[NodeId],
    *,
    size: Fraction = Fraction(1),
    zero_compute: bool = True,
) -> dict[NodeId, Fraction] | str:
    """The transmission time ``t(p)`` of each node, or why the platform is not sender-time.

    Parameters
    ----------
    platform:
        The platform.
    nodes:
        The processors taking part (participants, or source and targets).
    size:
        Message size; ``t(p)`` is the duration of a send of it over ``p -> q``
        (:meth:`Platform.duration`, latency included).
    zero_compute:
        Require compute time 0 on every node (reductions: the model folds
        the combining step into ``t(p)``, Liu–Kuo–Wang section 2).

    Returns
    -------
    dict or str
        ``{p: t(p)}`` when every ordered pair of ``nodes`` is linked and
        ``c(p, q)`` does not depend on ``q``; otherwise a sentence saying
        which link or node breaks the model.

    Examples
    --------
    >>> from portsim.scenarios.generators import sender_times_platform
    >>> sender_times(sender_times_platform({"A": 2, "B": 1}), ["A", "B"])
    {'A': Fraction(2, 1), 'B': Fraction(1, 1)}
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> sender_times(p, ["A", "B"], zero_compute=False)
    'no link B -> A: the sender-time model needs a complete platform'
    """
    times: dict[NodeId, Fraction] = {}
    for p in nodes:
        if zero_compute and platform.compute_time(p) != 0:
            return (f"node {p} has compute time {platform.compute_time(p)}: the sender-time "
                    "model folds computation into t(p) and needs compute 0")
        cost: Fraction | None = None
        for q in nodes:
            if q == p:
                continue
            if not platform.has_link(p, q):
                return f"no link {p} -> {q}: the sender-time model needs a complete platform"
            c = platform.duration(p, q, size)
            if cost is None:
                cost = c
            elif c != cost:
                return (f"a send {p} -> {q} lasts {c}, a send over another link out of {p} "
                        f"{cost}: the sender-time model needs one send time t(p) for every q")
        times[p] = cost if cost is not None else size
    return times


@dataclass(frozen=True, slots=True)
class Transmission:
    """One transmission window: ``sender`` sends to ``receiver`` during ``[start, end]``."""

    sender: NodeId
    receiver: NodeId
    start: Fraction
    end: Fraction


@dataclass(frozen=True)
class ReductionTree:
    """A timed reduction (or broadcast) tree: its root and its transmissions in start order.

    Parameters
    ----------
    root:
        The reduction destination (or broadcast source).
    transmissions:
        Every transmission, sorted by start time.
    """

    root: NodeId
    transmissions: tuple[Transmission, ...]

    @property
    def makespan(self) -> Fraction:
        """When the last transmission ends (0 without any)."""
        return max((x.end for x in self.transmissions), default=Fraction(0))

    @property
    def edges(self) -> tuple[tuple[NodeId, NodeId], ...]:
        """``(sender, receiver)`` pairs in start order."""
        return tuple((x.sender, x.receiver) for x in self.transmissions)

    def start_of(self, node: NodeId) -> Fraction:
        """When ``node`` starts sending (a reduction tree: each node sends once)."""
        for x in self.transmissions:
            if x.sender == node:
                return x.start
        raise PlannerError("this node never sends", value=node)


def earliest_possible(
    order: Sequence[NodeId],
    times: Mapping[NodeId, Fraction],
    destination: NodeId,
) -> ReductionTree:
    """Algorithm EP (Liu–Kuo–Wang Fig. 2) with the destinations of Lemma 1.

    Parameters
    ----------
    order:
        The ``n - 1`` senders (every processor but ``destination``), in the
        order EP starts them.
    times:
        ``t(p)`` of every sender.
    destination:
        The processor that ends with the reduction.

    Returns
    -------
    ReductionTree
        Sender ``order[i]`` starts at the EP start time ``s(order[i])``; the
        receivers make the schedule feasible in the one-port model.

    Notes
    -----
    EP starts the next sender of ``order`` whenever two processors are free
    (one sends, one receives); after a transmission only the receiver is
    free again.  Lemma 1 assigns receivers top-down in the dependency tree;
    the same assignment is built forward here with *tokens*: the ``n``
    processors are ``n`` anonymous tokens, a start takes two free tokens, the
    first becomes the sender (it is never used again) and the second
    receives and returns to the pool when the transmission ends.  A token
    only receives until it sends, so naming it after the processor it sends
    as (and the one token that never sends after ``destination``) is a
    bijection, and no token is in two transmissions at once.  The free pool
    is first in, first out: a start uses the token freed longest ago and
    the next one, i.e. the receivers of its predecessors (Lemma 1).  Every
    start takes at least one token freed at that very instant (or 0), so
    an as-soon-as-possible replay of the tree reproduces the EP times.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> t = earliest_possible(["A", "B", "C"], {"A": F(2), "B": F(1), "C": F(1)}, "D")
    >>> [(x.sender, x.receiver, str(x.start)) for x in t.transmissions]
    [('A', 'D', '0'), ('B', 'C', '0'), ('C', 'D', '2')]
    >>> t.makespan
    Fraction(3, 1)
    """
    n = len(order) + 1
    if len(set(order)) != len(order) or destination in order:
        raise PlannerError("EP needs distinct senders other than the destination",
                           value=list(order))
    pool: deque[int] = deque(range(n))
    identity: dict[int, NodeId] = {}
    active: list[tuple[Fraction, int, int]] = []  # (end, sequence index, receiver token)
    starts: list[tuple[Fraction, Fraction, int]] = []  # (start, end, receiver token)
    time = Fraction(0)
    i = 0
    while i < n - 1:
        while len(pool) >= 2 and i < n - 1:
            sender, receiver = pool.popleft(), pool.popleft()
            identity[sender] = order[i]
            end = time + times[order[i]]
            starts.append((time, end, receiver))
            heapq.heappush(active, (end, i, receiver))
            i += 1
        if i < n - 1:
            time = active[0][0]
            while active and active[0][0] == time:
                pool.append(heapq.heappop(active)[2])
    while active:
        pool.append(heapq.heappop(active)[2])
    assert len(pool) == 1
    identity[pool[0]] = destination
    return ReductionTree(destination, tuple(
        Transmission(order[k], identity[receiver], start, end)
        for k, (start, end, receiver) in enumerate(starts)
    ))


def earliest_possible_makespan(
    order: Sequence[Fraction | int], n: int | None = None
) -> Fraction | int:
    """The EP makespan of a sequence of transmission times (no tree built).

    Parameters
    ----------
    order:
        ``t`` of the senders in EP order (Fractions or scaled integers).
    n:
        Number of processors (default ``len(order) + 1``).

    Examples
    --------
    >>> earliest_possible_makespan([3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2])  # Fig. 8, x = 3/2, doubled
    9
    """
    n = len(order) + 1 if n is None else n
    free = n
    active: list[Fraction | int] = []
    time: Fraction | int = 0
    finish: Fraction | int = 0
    for t in order:
        while free < 2:
            time = heapq.heappop(active)
            free += 1
            while active and active[0] == time:
                heapq.heappop(active)
                free += 1
        end = time + t
        finish = max(finish, end)
        heapq.heappush(active, end)
        free -= 2
    return finish


@dataclass(frozen=True)
class CriticalPathTree:
    """A node of a minimum-critical-path tree (Liu–Kuo–Wang section 5.3.1, Fig. 11).

    Each node is one transmission window of weight ``time``; its children
    are the (at most two) windows that must end before it starts.  The
    critical path (the makespan of the schedule) is ``time`` plus the
    largest critical path of the children.
    """

    time: Fraction
    children: tuple[CriticalPathTree, ...] = ()

    @property
    def critical_path(self) -> Fraction:
        """Length of the longest root-to-leaf path."""
        return self.time + max((c.critical_path for c in self.children), default=Fraction(0))

    @property
    def size(self) -> int:
        """Number of windows (senders) in the tree."""
        return 1 + sum(c.size for c in self.children)


def tree_from_critical_path(
    forest: Sequence[CriticalPathTree],
    senders_by_time: Mapping[Fraction, Sequence[NodeId]],
    destination: NodeId,
) -> ReductionTree:
    """Assign processors to a minimum-critical-path tree and time it (section 5.3.1).

    Parameters
    ----------
    forest:
        At most two trees: the subtrees reducing onto the destination (a
        single tree is the usual case: its root sends last, to the
        destination).
    senders_by_time:
        The processors of each transmission time; each window of weight
        ``t`` takes one of them.
    destination:
        The reduction destination.

    Returns
    -------
    ReductionTree
        The window of node ``x`` with children ``a`` and ``b`` goes from a
        processor ``p`` to the processor its parent's subtree reduces onto;
        ``a``'s subtree reduces onto ``p`` and ``b``'s onto the same receiver
        as ``x``, both before ``x`` starts.  Every window starts as soon as
        its children end, so the makespan is the critical path.
    """
    pools = {t: list(reversed(nodes)) for t, nodes in senders_by_time.items()}
    out: list[Transmission] = []

    def place(node: CriticalPathTree, receiver: NodeId) -> Fraction:
        try:
            sender = pools[node.time].pop()
        except (KeyError, IndexError):
            raise PlannerError("no processor left with this transmission time",
                               value=str(node.time)) from None
        ready = Fraction(0)
        for k, child in enumerate(node.children):
            ready = max(ready, place(child, sender if k == 0 else receiver))
        out.append(Transmission(sender, receiver, ready, ready + node.time))
        return ready + node.time

    for root in forest:
        place(root, destination)
    if any(pools.values()):
        raise PlannerError("the tree does not use every sender",
                           value={str(t): list(v) for t, v in pools.items() if v})
    out.sort(key=lambda x: (x.start, x.end))
    return ReductionTree(destination, tuple(out))


def reduction_schedule(
    platform: Platform, operation: Operation, tree: ReductionTree, clock: PortClock | None = None
) -> tuple[PortClock, dict[NodeId, Item]]:
    """Turn a commutative reduction tree into timed sends and zero-time combines.

    Parameters
    ----------
    platform, operation:
        The problem (``operation`` resolved, commutative).
    tree:
        Every participant but the root sends once, to its receiver in the
        tree, the union of the sets it holds; each receiver combines what it
        gets with what it holds on arrival (compute time 0).  A root that is
        not a participant holds what it receives first.
    clock:
        A clock to continue (default: a fresh one holding the initial items).

    Returns
    -------
    (PortClock, dict)
        The clock with the events placed, and what each participant holds at
        the end (the root: ``v{0..N-1}``).

    Raises
    ------
    PlannerError
        If the list scheduler does not reproduce the tree's start times
        (a bug: the tree would not be a valid one-port schedule).
    """
    if clock is None:
        clock = PortClock(platform, size=operation.size)
        for node, items in operation.initial_items().items():
            for item in items:
                clock.hold(node, item)
    acc = {p: operation.partial(i) for i, p in enumerate(operation.participants)}
    for x in tree.transmissions:
        item = acc[x.sender]
        send = clock.send(x.sender, x.receiver, item)
        if send.start != x.start:
            raise PlannerError(
                f"reduction tree bug: {x.sender} -> {x.receiver} planned at {x.start}, "
                f"placed at {send.start}", value=str(x))
        if x.receiver not in acc:  # a target without an operand: its first receive
            acc[x.receiver] = item
            continue
        merged = Item.subset(sorted(acc[x.receiver].covers() | item.covers()))
        clock.compute(x.receiver, (acc[x.receiver], item), merged)
        acc[x.receiver] = merged
    return clock, acc


def broadcast_schedule(clock: PortClock, tree: ReductionTree, item: Item) -> PortClock:
    """Place the sends of a broadcast tree (each receiver forwards ``item`` once it holds it).

    Raises
    ------
    PlannerError
        If the list scheduler does not reproduce the tree's start times.
    """
    for x in tree.transmissions:
        send = clock.send(x.sender, x.receiver, item)
        if send.start != x.start:
            raise PlannerError(
                f"broadcast tree bug: {x.sender} -> {x.receiver} planned at {x.start}, "
                f"placed at {send.start}", value=str(x))
    return clock


def weighted_tree(platform: Platform, schedule: Schedule,
                  edges: Iterable[tuple[NodeId, NodeId]]) -> WeightedTree:
    """The tree with its pipelined rate: 1 over the busiest port or CPU of one operation.

    Reused for a series of operations (as-soon-as-possible replay, instance
    after instance on every port), the tree completes at most this many
    operations per time unit.
    """
    load: dict[tuple[NodeId, str], Fraction] = {}
    size = schedule.operation.size
    for e in schedule.events:
        if isinstance(e, Send):
            d = platform.duration(e.src, e.dst, size)
            link = (e.src, f"link to {e.dst}")  # a link carries one transfer at a time
            load[link] = load.get(link, Fraction(0)) + d
            for node, way in ((e.src, "send"), (e.dst, "recv")):
                shared = platform.port_model_of(node).kind is PortKind.UNIDIRECTIONAL
                key = (node, "port" if shared else way)
                load[key] = load.get(key, Fraction(0)) + d
    heaviest = max(load.values(), default=Fraction(0))
    return WeightedTree(Fraction(1) / heaviest if heaviest else Fraction(0), tuple(edges))
