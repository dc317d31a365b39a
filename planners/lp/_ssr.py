"""SSR(G): the steady-state reduce program (RR-4872, section 4.2).

Legrand, Marchal and Robert's linear program for a series of reductions of
``v_0 ⊕ … ⊕ v_{N-1}`` (non-commutative, intervals ``v[k,m]`` combined left
then right) onto a target: per time unit, ``send(i→j, v[k,m])`` transfers and
``cons(i, T_{k,l,m})`` computations under the port rows (2), (3) (with the
capacities of :class:`~portsim.planners.lp._capacity.PortCapacity`) and the
CPU rows (7), the conservation law (10) and the throughput (11).
:func:`add_ssr_variables` declares them (the reduce planner and the
allreduce programs share it); :func:`build_reduce_model` is the whole
program, the reference the column generation of
:mod:`portsim.planners.lp._reduce_columns` is tested against.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.lp._capacity import PAPER_ROW_NAMES, PortCapacity
from portsim.planners.lp._solve import (
    LinearModel,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = [
    "TP",
    "SsrVariables",
    "Task",
    "add_ssr_variables",
    "build_reduce_model",
    "conserve_send",
    "conserve_task",
    "crossing_rate",
    "islands",
    "port_rates",
    "receive_capacity",
    "reduce_cap",
    "reduction_tasks",
    "side_rate",
    "ssr_sends",
]


TP = "TP"


_ONE = Fraction(1)


_MINUS_ONE = Fraction(-1)


Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)


def _messages_per_time(platform: Platform, size: Fraction,
                       links: Iterable[tuple[NodeId, NodeId]]) -> Fraction:
    """Messages of ``size`` that ``links`` carry per time unit, all together."""
    g = platform.graph
    return sum((1 / (size * g.edges[e]["c"]) for e in links), Fraction(0))


def receive_capacity(platform: Platform, size: Fraction) -> dict[NodeId, Fraction]:
    """Messages of ``size`` each node can receive per time unit, all its in-links together.

    A cap under every port model (the variable bounds of the programs);
    :func:`port_rates` is the tight one of a node's ports.
    """
    g = platform.graph
    return {v: _messages_per_time(platform, size, g.in_edges(v)) for v in g.nodes}


def port_rates(platform: Platform, size: Fraction
               ) -> tuple[dict[NodeId, Fraction], dict[NodeId, Fraction]]:
    """Messages of ``size`` each node can send, and receive, per time unit through its ports.

    On one side of a node with ``k`` ports (:class:`PortCapacity`: 1 for a
    one-port node), the port row ``Σ busy <= k`` and each link's one
    transfer at a time (``busy <= 1``) make the most messages a fractional
    knapsack: the ``k`` cheapest links, each busy the whole time unit (``k``
    is a whole number, at most the links of that side).  One port: ``1 /
    (size · c)`` of the cheapest link, where :func:`receive_capacity` sums
    over the links (what only a node with a port per link reaches).
    """
    g, capacity = platform.graph, PortCapacity.of(platform)
    return ({v: side_rate(platform, size, g.out_edges(v), capacity.send[v]) for v in g.nodes},
            {v: side_rate(platform, size, g.in_edges(v), capacity.receive[v])
             for v in g.nodes})


def side_rate(platform: Platform, size: Fraction, links: Iterable[tuple[NodeId, NodeId]],
              ports: Fraction) -> Fraction:
    """Messages of ``size`` that ``links``, one side of a node with ``ports`` ports, carry
    per time unit at most: the fractional knapsack of :func:`port_rates`, the
    ``int(ports)`` cheapest links each busy the whole time unit."""
    g = platform.graph
    rates = sorted((1 / (size * g.edges[e]["c"]) for e in links), reverse=True)
    return sum(rates[:int(ports)], Fraction(0))


def crossing_rate(platform: Platform, size: Fraction, group: Collection[NodeId],
                  capacity: PortCapacity, *, into: bool) -> Fraction:
    """Messages of ``size`` the links into ``group`` (``into``), or out of it, carry per
    time unit, at most: per node of the group, :func:`side_rate` of its links from
    (to) outside under its receive (send) ports; the nodes' ports are disjoint, so
    the sum is the most."""
    g = platform.graph
    total = Fraction(0)
    for v in group:
        if into:
            links = [(a, b) for a, b in g.in_edges(v) if a not in group]
            total += side_rate(platform, size, links, capacity.receive[v])
        else:
            links = [(a, b) for a, b in g.out_edges(v) if b not in group]
            total += side_rate(platform, size, links, capacity.send[v])
    return total


def islands(platform: Platform) -> list[tuple[Fraction, list[set[NodeId]]]]:
    """For each distinct link cost ``c``, increasing, at which they change:
    ``(c, components)``, the connected components (links taken both ways) of the
    links of cost below ``c``.

    On a fabric these are its tiers: the GPUs of a server and their switch (links
    of the fast cost), then the servers with their NICs, and so on.  The links
    are joined in order of cost (union-find), so the components change at most
    ``n - 1`` times however many distinct costs there are (a random platform
    has about as many as links).
    """
    g = platform.graph
    parent = {v: v for v in g.nodes}

    def find(v: NodeId) -> NodeId:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    by_cost: dict[Fraction, list[tuple[NodeId, NodeId]]] = defaultdict(list)
    for e in g.edges:
        by_cost[g.edges[e]["c"]].append(e)
    out: list[tuple[Fraction, list[set[NodeId]]]] = []
    changed = True  # the first cost: every node alone
    for cost in sorted(by_cost):
        if changed:
            groups: dict[NodeId, set[NodeId]] = {}
            for v in g.nodes:
                groups.setdefault(find(v), set()).add(v)
            out.append((cost, list(groups.values())))
        changed = False
        for u, v in by_cost[cost]:
            a, b = find(u), find(v)
            if a != b:
                parent[a] = b
                changed = True
    return out


def reduce_cap(platform: Platform, operation: Operation, *,
               rates: tuple[Mapping[NodeId, Fraction], Mapping[NodeId, Fraction]] | None = None
               ) -> Fraction | None:
    """A bound on the reduce throughput from single nodes (instances per time unit).

    Every instance sends at least one message out of each participant other
    than the target (its ``v_k``, alone or in a partial result) and brings
    at least one into the target, so TP is at most the least of those
    nodes' port rates (:func:`port_rates`); and it makes exactly ``N - 1``
    reductions (a reduction tree has ``N - 1`` internal nodes, Lemma 2 of
    RR-4872), so TP is at most the reductions per time unit of all
    processors together over ``N - 1`` (no such bound when a processor
    reduces in zero time).  ``None`` for a single participant on the target.
    ``rates``: :func:`port_rates` of ``platform`` for ``operation.size``, when
    the caller already has them (one call per target otherwise recomputes
    them: 1.2 s for the 64 targets of a complete 64-node platform).
    """
    parts = operation.participants
    others = [p for p in parts if p != operation.target]
    if not others:
        return None
    size = operation.size
    assert operation.target is not None, "a resolved reduce has a target"
    send, receive = rates if rates is not None else port_rates(platform, size)
    caps = [receive[operation.target]]
    caps += [send[p] for p in others]
    times = [platform.compute_time(v) for v in platform.processors]
    if len(parts) > 1 and all(w > 0 for w in times):
        caps.append(sum((1 / w for w in times), Fraction(0)) / (len(parts) - 1))
    return min(caps)


@dataclass(frozen=True)
class SsrVariables:
    """The ``send`` and ``cons`` variables of SSR(G) and their rows, not yet added.

    Attributes
    ----------
    balance:
        ``(node, k, m) ->`` coefficients of in minus out of ``v[k,m]`` on
        ``node`` (conservation law (10)), in declaration order.
    out_port, in_port, cpu:
        Busy time per unit of each variable, per node (rows (2), (3), (7)).
    link_port:
        Busy time per unit of each variable on the links that need their
        own row (:attr:`PortCapacity.links <portsim.planners.lp._capacity.PortCapacity>`).
    """

    balance: dict[tuple[NodeId, int, int], dict[int, Fraction]]
    out_port: dict[NodeId, dict[int, Fraction]]
    in_port: dict[NodeId, dict[int, Fraction]]
    cpu: dict[NodeId, dict[int, Fraction]]
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]]


def reduction_tasks(n: int) -> list[tuple[int, int, int]]:
    """Every reduction task ``T_{k,l,m}`` (``v[k,l] ⊕ v[l+1,m]``) of ``n`` participants,
    in the order every program declares them."""
    return [(k, l_, m) for k in range(n) for m in range(k + 1, n) for l_ in range(k, m)]


def ssr_sends(platform: Platform, operation: Operation
              ) -> Iterator[tuple[NodeId, NodeId, int, int, Fraction]]:
    """Every send ``(u, v, k, m)`` of SSR(G) with its busy time ``size · c``.

    Links in the platform's order, then the intervals ``v[k,m]`` (``k <= m``),
    the order every program declares them in; never ``v_k`` into its owner
    (that copy is held from the start).
    """
    parts = operation.participants
    n = len(parts)
    owner = {p: i for i, p in enumerate(parts)}
    intervals = [(k, m) for k in range(n) for m in range(k, n)]
    for u, v, data in platform.graph.edges(data=True):
        busy = operation.size * data["c"]
        for k, m in intervals:
            if k == m and owner.get(v) == k:
                continue
            yield u, v, k, m, busy


def conserve_send(balance: dict[tuple[NodeId, int, int], dict[int, Fraction]], j: int,
                  u: NodeId, v: NodeId, k: int, m: int) -> None:
    """Column ``j`` sends ``v[k,m]`` from ``u`` to ``v``: its place in the conservation law (10)."""
    balance[v, k, m][j] = _ONE
    balance[u, k, m][j] = _MINUS_ONE


def conserve_task(balance: dict[tuple[NodeId, int, int], dict[int, Fraction]], j: int,
                  node: NodeId, k: int, l_: int, m: int) -> None:
    """Column ``j`` computes ``v[k,m] = v[k,l] ⊕ v[l+1,m]`` on ``node`` (law (10)); the
    three partial results are distinct, one coefficient each."""
    balance[node, k, m][j] = _ONE
    balance[node, k, l_][j] = _MINUS_ONE
    balance[node, l_ + 1, m][j] = _MINUS_ONE


def add_ssr_variables(model: LinearModel, platform: Platform, operation: Operation, *,
                      no_final_from: Container[NodeId],
                      task_cap: Mapping[NodeId, Fraction],
                      final_at: Container[NodeId] | None = None) -> SsrVariables:
    """Declare SSR(G)'s ``("send", i, j, k, m)`` and ``("cons", i, k, l, m)`` variables.

    Never a send of ``v_k`` into its owner, nor of ``v[0,N-1]`` out of a node
    in ``no_final_from``; the final task ``T_{0,l,N-1}`` only on ``final_at``
    (every processor when ``None``).  A send is at most ``1 / (size · c)``;
    a task at most ``task_cap[node]``, and ``1 / w`` on a node of compute
    time ``w > 0``.  Shared by the reduce (SSR(G) itself) and the allreduce's
    reduce-then-broadcast program.
    """
    n = len(operation.participants)
    ssr = SsrVariables(defaultdict(dict), defaultdict(dict), defaultdict(dict), defaultdict(dict),
                       defaultdict(dict))
    own_row = PortCapacity.of(platform).own_row
    for u, v, k, m, busy in ssr_sends(platform, operation):
        if (k, m) == (0, n - 1) and u in no_final_from:
            continue
        j = model.variable(("send", u, v, k, m), upper=1 / busy)
        ssr.out_port[u][j] = busy
        ssr.in_port[v][j] = busy
        if (u, v) in own_row:
            ssr.link_port[u, v][j] = busy
        conserve_send(ssr.balance, j, u, v, k, m)
    tasks = reduction_tasks(n)
    for node in platform.processors:
        w = platform.compute_time(node)
        cap = task_cap[node] if w == 0 else min(task_cap[node], 1 / w)
        for k, l_, m in tasks:
            if (k, m) == (0, n - 1) and final_at is not None and node not in final_at:
                continue
            j = model.variable(("cons", node, k, l_, m), upper=cap)
            if w > 0:
                ssr.cpu[node][j] = w
            conserve_task(ssr.balance, j, node, k, l_, m)
    return ssr


def build_reduce_model(platform: Platform, operation: Operation) -> LinearModel:
    """SSR(G) with exact coefficients (see the module notes).

    Variable keys: ``("send", i, j, k, m)``, ``("cons", i, k, l, m)`` and ``"TP"``.
    """
    g = platform.graph
    parts = operation.participants
    n = len(parts)
    target = operation.target
    assert target is not None
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    model = LinearModel()
    receive_cap = receive_capacity(platform, size)
    tp = model.variable(TP, upper=4 * receive_cap[target] + 1)
    model.objective = tp
    ssr = add_ssr_variables(model, platform, operation, no_final_from={target},
                            task_cap={v: 3 * receive_cap[v] for v in g.nodes})
    balance, out_port, in_port, cpu = ssr.balance, ssr.out_port, ssr.in_port, ssr.cpu
    for (node, k, m), coeffs in balance.items():
        if k == m and owner.get(node) == k:
            continue  # v_k on its owner: unlimited
        if node == target and (k, m) == (0, n - 1):
            row = dict(coeffs)
            row[tp] = Fraction(-1)
            model.add(row, "==", Fraction(0), f"throughput (11) at {node}")
        else:
            model.add(coeffs, "==", Fraction(0), f"conservation (10) of v[{k},{m}] at {node}")
    if (target, 0, n - 1) not in balance:
        model.add({tp: Fraction(1)}, "==", Fraction(0), "no way to build the result")
    capacity = PortCapacity.of(platform)
    capacity.add_node_rows(model, out_port, in_port, names=PAPER_ROW_NAMES)
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", Fraction(1), f"computation (7) of {node}")
    capacity.add_link_rows(model, ssr.link_port)
    return model
