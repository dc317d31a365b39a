"""Flow programs for scatter, gather and personalized all-to-all.

SSSP(G) of Legrand, Marchal and Robert (RR-4872, section 3.1) has one
commodity per message type ``m_k``::

    maximise TP
    Σ_j s(i→j) <= 1,  Σ_j s(j→i) <= 1                    (2), (3)
    s(i→j) = Σ_k send(i→j, m_k) · size · c(i, j)          (4)
    in(i, m_k) = out(i, m_k)        for i not an end of k  (5)
    in(k, m_k) = TP                                        (6)

Only the sum over ``k`` enters the port rows, and all the ``m_k`` leave the
same source: so the program is equivalent to ONE flow that leaves the source
at rate ``|T| · TP`` and of which every target keeps ``TP`` (any such flow
decomposes into source-to-target paths, each labelled with the message of its
end; conversely the sum of the ``m_k`` flows is such a flow).  This
aggregation divides the number of variables by the number of targets (for
scatter on 200 nodes: 600 instead of 60,000).  Likewise a gather is one flow
into the target, and a personalized all-to-all (SSPA2A(G), section 3.5) one
flow per source.

A :class:`Commodity` is such an aggregated flow: a hub (the source, or the
sink when ``outward`` is false) and its ends, each exchanging ``TP``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
import numpy as np

from portsim.planners.lp._capacity import PAPER_ROW_NAMES, PortCapacity
from portsim.planners.lp._periodic import SendTask, Unit
from portsim.planners.lp._solve import LinearModel
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = ["Commodity", "FlowModel", "build_flow_model", "commodities_of", "decompose_paths"]

TP = "TP"


@dataclass(frozen=True, slots=True)
class Commodity:
    """An aggregated flow between a hub and its ends.

    Attributes
    ----------
    hub:
        The source (``outward``) or the sink (not ``outward``).
    ends:
        The nodes that each receive (``outward``) or send ``TP``.
    items:
        The message a path to or from ``ends[i]`` carries.
    outward:
        True when the flow leaves the hub (scatter, all-to-all), False when
        it enters it (gather).
    """

    hub: NodeId
    ends: tuple[NodeId, ...]
    items: tuple[Item, ...]
    outward: bool = True


@dataclass
class FlowModel:
    """The LP and how to read its variables back."""

    model: LinearModel
    commodities: tuple[Commodity, ...]
    size: Fraction
    platform: Platform

    def flows(self, values: Sequence[Fraction] | np.ndarray
              ) -> list[dict[tuple[NodeId, NodeId], Fraction]]:
        """Per commodity, the flow on each link (non-zero entries only)."""
        out: list[dict[tuple[NodeId, NodeId], Fraction]] = [{} for _ in self.commodities]
        # floats are rounded down to about 6 significant digits of the largest
        # (a power of two quantum: rates of 10^-8 were all rounded to nothing)
        largest = max((float(v) for v in values), default=0.0)
        quantum = (Fraction(2) ** (math.frexp(largest)[1] - 20) if largest > 0
                   else Fraction(1, 10**6))
        for key, j in self.model.index.items():
            if key == TP or not values[j] > 0:
                continue
            c, u, v = _flow_key(key)
            value = values[j]
            out[c][u, v] = (value if isinstance(value, Fraction)
                            else math.floor(Fraction(float(value)) / quantum) * quantum)
        return out

    def repair(self, x: np.ndarray) -> list[Fraction] | None:
        """An exactly feasible primal from float values (certified lower bound).

        Each commodity's float flow, rounded down to about six significant
        digits of the largest value, is decomposed into paths; every end is
        cut to the smallest total, and everything is scaled so that no port
        exceeds 1.
        """
        decomposed = [_paths(com, flow, None)
                      for com, flow in zip(self.commodities, self.flows(x), strict=True)]
        totals = [[sum((w for w, _ in per_end), Fraction(0)) for per_end in paths]
                  for paths in decomposed]
        tp = min((t for row in totals for t in row), default=Fraction(0))
        if tp <= 0:
            return None
        values = [Fraction(0)] * self.model.n_variables
        load_out: dict[NodeId, Fraction] = defaultdict(Fraction)
        load_in: dict[NodeId, Fraction] = defaultdict(Fraction)
        for c, (paths, row) in enumerate(zip(decomposed, totals, strict=True)):
            for per_end, total in zip(paths, row, strict=True):
                for w, path in per_end:
                    amount = w * tp / total
                    for u, v in itertools.pairwise(path):
                        values[self.model.index[c, u, v]] += amount
                        busy = amount * self.size * self.platform.cost(u, v)
                        load_out[u] += busy
                        load_in[v] += busy
        worst = max([*load_out.values(), *load_in.values(), Fraction(1)])
        values = [v / worst for v in values]
        values[self.model.index[TP]] = tp / worst
        return values


def _flow_key(key: object) -> tuple[int, NodeId, NodeId]:
    assert isinstance(key, tuple)
    return key[0], key[1], key[2]


def commodities_of(operation: Operation) -> list[Commodity]:
    """The flows of a scatter, gather or personalized all-to-all (resolved operation).

    Scatter: one commodity out of the source to every other target; gather:
    one into the target from every other participant; all-to-all: one out of
    every source.  Empty when nothing moves.

    Examples
    --------
    >>> op = Operation(OperationKind.SCATTER, source="S", targets=("A", "B"))
    >>> [(c.hub, c.ends) for c in commodities_of(op)]
    [('S', ('A', 'B'))]
    """
    if operation.kind is OperationKind.SCATTER:
        assert operation.source is not None
        ends = tuple(k for k in operation.targets if k != operation.source)
        return [Commodity(operation.source, ends, tuple(Item.message(k) for k in ends))
                ] if ends else []
    if operation.kind is OperationKind.GATHER:
        assert operation.target is not None
        ends = tuple(p for p in operation.participants if p != operation.target)
        return [Commodity(operation.target, ends, tuple(Item.message(p) for p in ends),
                          outward=False)] if ends else []
    commodities = []
    for j in operation.sources:
        ends = tuple(k for k in operation.targets if k != j)
        if ends:
            commodities.append(Commodity(j, ends, tuple(Item.message(j, k) for k in ends)))
    return commodities


def build_flow_model(platform: Platform, commodities: Sequence[Commodity],
                     size: Fraction, *,
                     port_sum: frozenset[NodeId] = frozenset()) -> FlowModel:
    """Build the aggregated SSSP(G) / SSPA2A(G) program (see the module notes).

    The right-hand sides of (2) and (3) and the link rows are the
    platform's :class:`~portsim.planners.lp._capacity.PortCapacity` (1 and
    none when all bidirectional).  A node of ``port_sum`` gets one row
    ``Σ in + Σ out <= 1`` instead of (2) and (3): the naive port-sum program
    of ``lp-naive`` (broadcast report,
    section 2.2.2), not achievable in general under the unidirectional model.
    """
    g = platform.graph
    capacity = PortCapacity.of(platform)
    own_row = capacity.own_row
    model = LinearModel()
    caps = []
    for com in commodities:
        for end in com.ends:
            links = g.in_edges(end, data="c") if com.outward else g.out_edges(end, data="c")
            caps.append(sum((1 / (size * c) for _, _, c in links), Fraction(0)))
    tp = model.variable(TP, upper=min(caps) if caps else Fraction(0))
    model.objective = tp
    out_rows: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_rows: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    link_rows: dict[tuple[NodeId, NodeId], dict[int, Fraction]] = defaultdict(dict)
    for c, com in enumerate(commodities):
        if com.outward:
            down = nx.descendants(g, com.hub) | {com.hub}
            up: set[NodeId] = set()
            for end in com.ends:
                up |= nx.ancestors(g, end) | {end}
        else:
            up = nx.ancestors(g, com.hub) | {com.hub}
            down = set()
            for end in com.ends:
                down |= nx.descendants(g, end) | {end}
        balance: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
        for u, v, cost in g.edges(data="c"):
            if u not in down or v not in up:
                continue
            if (com.outward and v == com.hub) or (not com.outward and u == com.hub):
                continue
            busy = size * cost
            j = model.variable((c, u, v), upper=1 / busy)
            out_rows[u][j] = busy
            in_rows[v][j] = busy
            if (u, v) in own_row:
                link_rows[u, v][j] = busy
            balance[v][j] = Fraction(1)
            balance[u][j] = Fraction(-1)
        sign = Fraction(1) if com.outward else Fraction(-1)
        demand = dict.fromkeys(com.ends, sign)
        demand[com.hub] = -sign * len(com.ends)
        for node in [*balance, *(n for n in demand if n not in balance)]:
            row = dict(balance.get(node, {}))
            if node in demand:
                row[tp] = -demand[node]
            what = "throughput (6)" if node in demand else "conservation (5)"
            model.add(row, "==", Fraction(0), f"{what} of the flow of {com.hub} at {node}")
    capacity.add_node_rows(model, out_rows, in_rows, port_sum=port_sum, names=PAPER_ROW_NAMES)
    capacity.add_link_rows(model, link_rows)
    return FlowModel(model, tuple(commodities), size, platform)


def _paths(com: Commodity, flow: dict[tuple[NodeId, NodeId], Fraction],
           amount: Fraction | None) -> list[list[tuple[Fraction, list[NodeId]]]]:
    """Decompose an aggregated flow into hub-to-end (or end-to-hub) paths.

    With ``amount`` given, every end gets exactly that much (or less if the
    flow falls short); else each end takes its share of the flow, what it
    keeps (or, into a sink, gives) beyond what it relays.  Returns,
    per end, the weighted paths (node lists in the direction of the flow).
    """
    flow = {e: w for e, w in flow.items() if w > 0}
    succ: dict[NodeId, list[NodeId]] = defaultdict(list)
    for u, v in flow:
        if com.outward:
            succ[u].append(v)
        else:
            succ[v].append(u)
    index = {end: i for i, end in enumerate(com.ends)}
    left: dict[NodeId, Fraction | None] = dict.fromkeys(com.ends, amount)
    if amount is None:
        # each end takes its own share, what it keeps of the flow (gives, towards a
        # sink), not all that reaches it: an end also relays for the ends beyond
        share: dict[NodeId, Fraction] = dict.fromkeys(com.ends, Fraction(0))
        for (u, v), w in flow.items():
            keeper, relay = (v, u) if com.outward else (u, v)
            if keeper in share:
                share[keeper] += w
            if relay in share:
                share[relay] -= w
        left.update((end, max(kept, Fraction(0))) for end, kept in share.items())
    out: list[list[tuple[Fraction, list[NodeId]]]] = [[] for _ in com.ends]

    def arc(a: NodeId, b: NodeId) -> tuple[NodeId, NodeId]:
        return (a, b) if com.outward else (b, a)

    while True:
        parent: dict[NodeId, NodeId] = {}
        queue = deque([com.hub])
        seen = {com.hub}
        found = None
        while queue and found is None:
            a = queue.popleft()
            for b in succ[a]:
                if b not in seen and flow.get(arc(a, b), 0) > 0:
                    seen.add(b)
                    parent[b] = a
                    rest = left.get(b, 0)
                    if b in index and (rest is None or rest > 0):
                        found = b
                        break
                    queue.append(b)
        if found is None:
            break
        walk = [found]
        while walk[-1] != com.hub:
            walk.append(parent[walk[-1]])
        walk.reverse()  # hub ... end, in search direction
        w = min(flow[arc(a, b)] for a, b in itertools.pairwise(walk))
        rest = left[found]
        if rest is not None:
            w = min(w, rest)
            left[found] = rest - w
        for a, b in itertools.pairwise(walk):
            flow[arc(a, b)] -= w
        out[index[found]].append((w, walk if com.outward else walk[::-1]))
    return out


def decompose_paths(flow_model: FlowModel, values: Sequence[Fraction], tp: Fraction
                    ) -> list[list[Unit]]:
    """Weighted paths per (commodity, end), each group summing to ``tp`` exactly."""
    groups: list[list[Unit]] = []
    for com, flow in zip(flow_model.commodities, flow_model.flows(values), strict=True):
        for end, item, paths in zip(com.ends, com.items, _paths(com, flow, tp), strict=True):
            got = sum((w for w, _ in paths), Fraction(0))
            if got != tp:
                raise AssertionError(f"path decomposition gives {got}, not {tp}, to {end}")
            groups.append([
                Unit(w, tuple(SendTask(u, v, item, depth)
                              for depth, (u, v) in enumerate(itertools.pairwise(path))))
                for w, path in paths
            ])
    return groups
