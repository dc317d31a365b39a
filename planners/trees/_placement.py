"""Placing a reduction tree on a portsim platform and timing it exactly.

A tree of :mod:`portsim.planners.trees._model` is placed on the participants by the
labelling of section 4.1 (or built directly on them with the real costs, for
a commutative operator on a heterogeneous platform); its sends and computes
are then emitted, in the order of the algorithm's reference times, to
:class:`portsim.planners.timing.PortClock`, which starts each as early as the
platform's ports, the CPUs and the inputs allow.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx

from portsim.planners.timing import PortClock, cheapest_path
from portsim.planners.trees._model import ReductionTree, interval_labels
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item, combine
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform
from portsim.simulator.schedule import Schedule

__all__ = [
    "Placement",
    "emit_tree",
    "mean_costs",
    "model_costs",
    "pair_durations",
    "place_by_labels",
    "place_greedy",
    "route",
    "transfer_cost",
    "tree_schedule",
]

_ZERO = Fraction(0)


@dataclass
class Placement:
    """A tree placed on participants: which node each machine is, and the reference times.

    ``receptions[m]`` lists the predecessors of machine ``m`` in arrival order
    and ``prepend[m]`` says which go left of the accumulated value;
    ``send_ref[i]`` is the reference start of machine ``i``'s transfer (only its
    order matters: :class:`PortClock` computes the real times).
    """

    nodes: list[NodeId]
    positions: list[int]
    child: list[int]
    receptions: list[list[int]]
    prepend: list[list[bool]]
    send_ref: list[Fraction]
    transfer_ref: list[Fraction]
    compute_ref: list[Fraction]
    lanes: list[int] | None = None


def model_costs(platform: Platform, op: Operation) -> tuple[Fraction, Fraction] | None:
    """``(d, c)`` when every participant pair has a direct link of one cost and every
    participant one compute time (the model is then exact); else ``None``."""
    parts = op.participants
    computes = {platform.compute_time(p) for p in parts}
    if len(computes) != 1:
        return None
    # One transfer time d (the engine's Link.duration, latency included), not one c.
    durations: set[Fraction] = set()
    for a in parts:
        for b in parts:
            if a != b:
                if not platform.has_link(a, b):
                    return None
                durations.add(platform.duration(a, b, op.size))
                if len(durations) > 1:
                    return None
    return next(iter(durations)) if durations else op.size, computes.pop()


def mean_costs(platform: Platform, op: Operation,
               cache: dict[NodeId, dict[NodeId, Fraction]] | None = None
               ) -> tuple[Fraction, Fraction]:
    """Representative ``(d, c)`` of a heterogeneous platform: mean link cost among
    participants and mean participant compute time.

    Where no link joins two participants (GPUs behind a switch), ``d`` is
    the mean duration of the cheapest paths between them (as :func:`route`
    sends, computed by :func:`transfer_cost` into ``cache``), not the mean
    over every link: a `dgx_a100` server's NIC links would set ``d`` to
    1/36 where every GPU pair is 1/150 apart.  Without a path either, the
    mean over every link (or the size).
    """
    members = set(op.participants)
    inner = [x.duration(op.size) for x in platform.links
             if x.src in members and x.dst in members]
    if not inner:
        inner = [d for d in pair_durations(platform, op, {} if cache is None else cache)
                 if d is not None]
    pool = inner or [x.duration(op.size) for x in platform.links] or [op.size]
    computes = [platform.compute_time(p) for p in op.participants]
    return sum(pool, _ZERO) / len(pool), sum(computes, _ZERO) / len(computes)


def pair_durations(platform: Platform, op: Operation,
                   cache: dict[NodeId, dict[NodeId, Fraction]]) -> list[Fraction | None]:
    """The duration of a transfer between every ordered pair of distinct participants,
    as :func:`transfer_cost` makes it (``None`` where there is no path)."""
    parts = op.participants
    durations: list[Fraction | None] = []
    for a in parts:
        for b in parts:
            if a != b:
                try:
                    durations.append(transfer_cost(cache, platform, op.size, a, b))
                except KeyError:  # b is not reachable from a
                    durations.append(None)
    return durations


def transfer_cost(cache: dict[NodeId, dict[NodeId, Fraction]], platform: Platform,
                  size: Fraction, src: NodeId, dst: NodeId) -> Fraction:
    """Duration of a transfer as :func:`route` makes it: the direct link, else the
    cheapest path (distances from ``src`` computed once, then cached)."""
    if platform.has_link(src, dst):
        return platform.duration(src, dst, size)
    if src not in cache:
        if platform.has_latency:
            lengths = nx.single_source_dijkstra_path_length(
                platform.graph, src, weight=lambda u, v, _: platform.duration(u, v, size))
            cache[src] = {v: Fraction(w) for v, w in lengths.items()}
        else:
            # every duration is size * c: the same lengths, from the links' integer
            # costs (Platform.graph's ticks; a Python weight function per edge made
            # the placements of a tree on 500 nodes spend most of their time here)
            lengths = nx.single_source_dijkstra_path_length(platform.graph, src,
                                                            weight="ticks")
            tick = size * platform.cost_tick
            cache[src] = {v: w * tick for v, w in lengths.items()}
    return cache[src][dst]


def place_by_labels(tree: ReductionTree, op: Operation, sink_position: int) -> Placement:
    """Place an abstract tree on the participants by the labelling of section 4.1."""
    position, prepend = interval_labels(tree, sink_position)
    nodes = [op.participants[p] for p in position]
    n = tree.n
    return Placement(
        nodes=nodes, positions=position, child=list(tree.child),
        receptions=tree.receptions(), prepend=prepend,
        send_ref=[tree.send_time(i) for i in range(n)],
        transfer_ref=[tree.d] * n, compute_ref=[tree.c] * n,
        lanes=None if tree.lanes is None else list(tree.lanes),
    )


def place_greedy(platform: Platform, op: Operation, sink: NodeId,
                 reducers: int | None,
                 cache: dict[NodeId, dict[NodeId, Fraction]] | None = None) -> Placement:
    """Algorithm 1 (or 3) with the real costs, machines being the participants.

    Heuristic on a heterogeneous platform: the machines are inserted in
    increasing compute time (the first ones become the reducers near the
    sink); each takes as child the machine ``M`` minimising ``s_M + c_M +
    d(i, M)`` with ``d`` the cheapest-path transfer cost, and ``s_M`` grows by
    ``max(c_M, d(i, M))``.  The minimum is exact: candidates leave a heap in
    increasing ``s_M + c_M`` until that plus the smallest link cost cannot
    beat the best found.
    """
    parts = list(op.participants)
    index = {p: i for i, p in enumerate(parts)}
    others = sorted((p for p in parts if p != sink),
                    key=lambda p: (platform.compute_time(p), index[p]))
    order = [sink, *others]
    n = len(order)
    limit = n if reducers is None else reducers
    # A lower bound on any transfer (latency included): the pruning below is exact.
    d_low = min((x.duration(op.size) for x in platform.links), default=op.size)
    if cache is None:  # (transfer_cost's distances, which callers may share)
        cache = {}
    compute = [platform.compute_time(p) for p in order]
    s = [_ZERO] * n
    s_ins = [_ZERO] * n
    child = [-1] * n
    transfer = [_ZERO] * n
    heap: list[tuple[Fraction, int]] = [(compute[0], 0)]
    for i in range(1, n):
        popped: list[tuple[Fraction, int]] = []
        best: tuple[Fraction, int, Fraction] | None = None
        while heap and (best is None or heap[0][0] + d_low < best[0]):
            key, m = heapq.heappop(heap)
            popped.append((key, m))
            cost = transfer_cost(cache, platform, op.size, order[i], order[m])
            if best is None or key + cost < best[0]:
                best = (key + cost, m, cost)
        assert best is not None
        value, m, cost = best
        for entry in popped:
            if entry[1] != m:
                heapq.heappush(heap, entry)
        s_ins[i] = value
        child[i] = m
        transfer[i] = cost
        s[m] += max(compute[m], cost)
        heapq.heappush(heap, (s[m] + compute[m], m))
        if i < limit:
            s[i] = value
            heapq.heappush(heap, (value + compute[i], i))
    length = max(s_ins)
    send_ref = [length - v for v in s_ins]
    send_ref[0] = length
    receptions: list[list[int]] = [[] for _ in range(n)]
    for i in range(n - 1, 0, -1):
        receptions[child[i]].append(i)
    return Placement(
        nodes=order, positions=[index[p] for p in order], child=child,
        receptions=receptions, prepend=[[False] * len(r) for r in receptions],
        send_ref=send_ref, transfer_ref=transfer, compute_ref=compute,
    )


def emit_tree(platform: Platform, op: Operation, placed: Placement,
              clock: PortClock,
              paths: dict[tuple[NodeId, NodeId], list[NodeId]] | None = None) -> Item:
    """Emit the tree's sends and computes, in reference-time order; return the result item.

    ``paths``: the routes known so far (:func:`route`), shared with the caller's."""
    n = len(placed.nodes)
    final: list[Item | None] = [None] * n
    plan: list[tuple[Fraction, Fraction, int, tuple[Any, ...]]] = []
    for m in range(n - 1, -1, -1):  # predecessors (larger indexes) first
        acc = op.partial(placed.positions[m])
        free: Fraction | None = None
        for j, p in enumerate(placed.receptions[m]):
            block = final[p]
            assert block is not None
            inputs = (block, acc) if placed.prepend[m][j] else (acc, block)
            out = combine(inputs, commutative=op.commutative)
            if isinstance(out, str):
                raise PlannerError(f"tree planner bug: {out}", value=str(inputs))
            arrival = placed.send_ref[p] + placed.transfer_ref[p]
            start = arrival if free is None else max(arrival, free)
            free = start + placed.compute_ref[m]
            plan.append((placed.send_ref[p], arrival, len(plan), ("send", p, block)))
            plan.append((start, free, len(plan), ("compute", m, inputs, out)))
            acc = out
        final[m] = acc
    plan.sort(key=lambda entry: entry[:3])
    if paths is None:
        paths = {}
    for _, _, _, action in plan:
        if action[0] == "compute":
            _, m, inputs, out = action
            clock.compute(placed.nodes[m], inputs, out)
        else:
            _, p, block = action
            lane = () if placed.lanes is None else (("transfer slot", placed.lanes[p]),)
            route(clock, paths, placed.nodes[p], placed.nodes[placed.child[p]], block, lane)
    result = final[0]
    assert result is not None
    return result


def route(clock: PortClock, paths: dict[tuple[NodeId, NodeId], list[NodeId]],
          src: NodeId, dst: NodeId, item: Item, lanes: tuple[Hashable, ...] = (),
          skip_held: bool = False) -> None:
    """Send ``item`` over the direct link, or hop by hop along the cheapest path for
    the message's size (:meth:`PortClock.route`; ``skip_held``: leave out the hops
    that deliver nothing)."""
    key = (src, dst)
    if key not in paths:
        platform = clock.platform
        direct = platform.has_link(src, dst)
        paths[key] = [src, dst] if direct else cheapest_path(platform, src, dst, clock.size)
    clock.route(paths[key], item, lanes=lanes, skip_held=skip_held)


def tree_schedule(platform: Platform, operation: Operation,
                  tree: ReductionTree) -> tuple[Schedule, Fraction]:
    """Materialise ``tree`` as a one-shot reduce schedule on ``platform``.

    Parameters
    ----------
    platform:
        The platform; transfers use the direct link, else the cheapest path.
    operation:
        A reduce whose target is one of its ``tree.n`` participants.
    tree:
        The tree, placed by :func:`interval_labels` with the sink at the
        target's index.

    Returns
    -------
    (Schedule, Fraction)
        The schedule, timed by :class:`~portsim.planners.timing.PortClock`, and its
        makespan.

    Raises
    ------
    PlannerError
        When the operation is not such a reduce, or no labelling puts the
        sink at the target's index.

    Examples
    --------
    >>> from portsim.planners.trees import greedy_tree
    >>> from portsim.scenarios.generators import complete_platform
    >>> p = complete_platform(4, c=1, compute=0, port_model="unidirectional")
    >>> op = Operation(OperationKind.REDUCE, target="P0")
    >>> tree_schedule(p, op, greedy_tree(4, 1, 0))[1]  # binomial tree of order 2
    Fraction(2, 1)
    """
    op = operation.resolve(platform)
    if (op.kind is not OperationKind.REDUCE or op.target not in op.participants
            or len(op.participants) != tree.n):
        raise PlannerError(f"needs a reduce of {tree.n} participants including its target",
                           value=str(op.to_dict()))
    clock = PortClock(platform, size=op.size)
    for node, items in op.initial_items().items():
        for item in items:
            clock.hold(node, item)
    assert op.target is not None
    placed = place_by_labels(tree, op, op.participants.index(op.target))
    result = emit_tree(platform, op, placed, clock)
    makespan = clock.available(op.target, result)
    assert makespan is not None
    return Schedule(platform, op, clock.events), makespan

