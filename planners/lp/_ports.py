"""The port graph: which links of a platform may be active at the same time.

Beaumont and Marchal (LIP RR-2004-32, section 2.2.2) schedule a
unidirectional one-port platform by weighted *matchings* of the platform
graph; section 5 (Fig. 7 and 8) maps bidirectional and multi-port nodes to
unidirectional ones by node splitting.  The :class:`PortGraph` does both at
once:

- a unidirectional node is one port vertex (``io``), shared by its sends
  and receives;
- a bidirectional node is two port vertices, ``out`` and ``in`` (Fig. 7);
- a ``multiport:k`` node is ``k`` copies of ``out`` and ``k`` copies of
  ``in`` (Fig. 8, generalised): at most ``k`` sends and ``k`` receives;
- a ``multiport`` node (no ``k``, the Delta-port node of Fig. 8) is one
  port vertex per link: ``out:w`` for its link to ``w``, ``in:u`` for its
  link from ``u``.

Every link ``u -> v`` joins every copy of ``u``'s sending port to every copy
of ``v``'s receiving port.  **A link carries one transfer at a time** (under
every port model).  Where one of its two ports has a single copy, a matching
uses the link at most once anyway; where both have several copies (two
``multiport:k`` ends, k >= 2), the link goes through a *gadget*: the
edge ``u -> v`` is subdivided into the path ``u — x_e — y_e — v`` whose three
edges all weigh ``w_e``.  A matching covers ``x_e`` and ``y_e`` either by
the middle edge (the link idle, weight ``w_e``) or by the two outer ones
(the link used once, weight ``2 w_e``, one copy of each port taken); an
outer edge alone also weighs ``w_e`` and carries nothing.  So a maximum-
weight matching of the port graph weighs ``Σ_e w_e`` plus a maximum-weight
*configuration*: a set of links in which every node keeps to its own model
(each port hands out distinct copies) and no link appears twice.
Conversely every such set is the trace of a matching.  On a platform
without unidirectional nodes the port graph is bipartite (``out`` and
``y_e`` on one side, ``in`` and ``x_e`` on the other).

Copies are capped at the number of links of the port (each link takes one
transfer at a time, so more copies are never used).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx

from portsim.simulator.errors import PlannerError
from portsim.simulator.platform import NodeId, Platform, PortKind

__all__ = ["MAX_COPIES", "Configuration", "Link", "Port", "PortGraph"]

MAX_COPIES = 16
"""Most copies of one port (a ``multiport:k`` node with more useful ports is refused;
``multiport`` without ``k`` needs no copies)."""

Link = tuple[NodeId, NodeId]
Port = tuple[NodeId, str]
Configuration = tuple[tuple[Link, int], ...]
"""Links active at the same time, each with its multiplicity (always 1: a link
carries one transfer at a time), sorted."""

_Vertex = Hashable


@dataclass(frozen=True)
class PortGraph:
    """Ports, their copies, and the two ports of every link.

    Examples
    --------
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)],
    ...                    "unidirectional")
    >>> g = PortGraph.of(p)
    >>> g.best({("A", "B"): Fraction(2), ("B", "C"): Fraction(3)})
    (Fraction(3, 1), ((('B', 'C'), 1),))
    >>> PortGraph.of(p.with_port_model("bidirectional")).best(
    ...     {("A", "B"): Fraction(2), ("B", "C"): Fraction(3)})[0]
    Fraction(5, 1)

    Two ``multiport:2`` nodes: the link ``A -> B`` runs once at a time.

    >>> q = Platform.build(["A", "B"], [("A", "B", 1)], "multiport:2")
    >>> PortGraph.of(q).best({("A", "B"): Fraction(1)})
    (Fraction(1, 1), ((('A', 'B'), 1),))
    """

    links: tuple[Link, ...]
    ends: dict[Link, tuple[Port, Port]]
    copies: dict[Port, int]

    @classmethod
    def of(cls, platform: Platform) -> PortGraph:
        """The port graph of ``platform`` (see the module notes).

        Raises
        ------
        PlannerError
            When a ``multiport:k`` port would need more than :data:`MAX_COPIES` copies.
        """
        raw: dict[Port, int] = {}
        per_link: set[NodeId] = set()  # multiport nodes without k: one port per link
        for node in platform.node_ids:
            model = platform.port_model_of(node)
            if model.kind is PortKind.UNIDIRECTIONAL:
                raw[node, "io"] = 1
            elif model.kind is PortKind.MULTIPORT and model.k is None:
                per_link.add(node)
            else:
                out_links, in_links = platform.degree(node)
                raw[node, "out"] = max(1, min(model.ports(out_links), out_links))
                raw[node, "in"] = max(1, min(model.ports(in_links), in_links))
        ends: dict[Link, tuple[Port, Port]] = {}
        for link in platform.links:
            if link.src in per_link:
                src: Port = (link.src, f"out:{link.dst}")
                raw[src] = 1
            else:
                src = (link.src, "io") if (link.src, "io") in raw else (link.src, "out")
            if link.dst in per_link:
                dst: Port = (link.dst, f"in:{link.src}")
                raw[dst] = 1
            else:
                dst = (link.dst, "io") if (link.dst, "io") in raw else (link.dst, "in")
            ends[link.src, link.dst] = (src, dst)
        for (node, _), k in raw.items():
            if k > MAX_COPIES:
                raise PlannerError(f"a port of {node} may take {k} transfers at once; the lp "
                                   f"planner handles at most {MAX_COPIES} (multiport without "
                                   f"k has no such limit)",
                                   value=str(platform.port_model_of(node)))
        return cls(tuple(ends), ends, raw)

    @property
    def bipartite(self) -> bool:
        """True when no port is shared by sends and receives (no unidirectional node)."""
        return all(side != "io" for _, side in self.copies)

    def _graph(self, weights: Mapping[Link, int | float]) -> tuple[
            nx.Graph, dict[tuple[_Vertex, _Vertex], Link], dict[Link, tuple[_Vertex, _Vertex]]]:
        """The weighted port graph; ``owner`` maps an edge to its link and
        ``gadgets`` a gadget link to its two middle vertices."""
        g = nx.Graph()
        owner: dict[tuple[_Vertex, _Vertex], Link] = {}
        gadgets: dict[Link, tuple[_Vertex, _Vertex]] = {}
        for link, w in weights.items():
            if not w > 0:
                continue
            a, b = self.ends[link]
            if self.copies[a] > 1 and self.copies[b] > 1:
                x, y = ("gadget", link, "x"), ("gadget", link, "y")
                gadgets[link] = (x, y)
                g.add_edge(x, y, w=w)
                for i in range(self.copies[a]):
                    g.add_edge((a, i), x, w=w)
                for j in range(self.copies[b]):
                    g.add_edge(y, (b, j), w=w)
                continue
            for i in range(self.copies[a]):
                for j in range(self.copies[b]):
                    u, v = (a, i), (b, j)
                    if g.has_edge(u, v) and g.edges[u, v]["w"] >= w:
                        continue  # two links between the same unidirectional nodes
                    g.add_edge(u, v, w=w)
                    owner[u, v] = owner[v, u] = link
        return g, owner, gadgets

    def _configuration(self, weights: Mapping[Link, int | float]) -> list[Link]:
        """The links of a maximum-weight configuration (each at most once)."""
        g, owner, gadgets = self._graph(weights)
        matching = nx.max_weight_matching(g, weight="w")
        covered = {v for edge in matching for v in edge}
        used = [owner[x, y] for x, y in matching if (x, y) in owner]
        for link, (x, y) in gadgets.items():
            if (x, y) not in matching and (y, x) not in matching and x in covered \
                    and y in covered:
                used.append(link)  # both outer edges: the link carries one transfer
        return sorted(used)  # the matching is a set: fix the order (PYTHONHASHSEED)

    def best_float(self, weights: Mapping[Link, float]) -> tuple[float, Configuration]:
        """A maximum-weight configuration under float weights (pricing in the loop)."""
        used = self._configuration(weights)
        value = sum(weights[e] for e in used)
        return value, tuple(sorted((e, 1) for e in used))

    def best(self, weights: Mapping[Link, Fraction]) -> tuple[Fraction, Configuration]:
        """An exact maximum-weight configuration under rational weights.

        The weights are scaled to integers by their common denominator, so
        that networkx's blossom algorithm computes in integers only (exact).
        """
        positive = {e: Fraction(w) for e, w in weights.items() if w > 0}
        denominator = 1
        for w in positive.values():
            denominator = denominator * w.denominator // math.gcd(denominator, w.denominator)
        used = self._configuration({e: int(w * denominator) for e, w in positive.items()})
        value = sum((positive[e] for e in used), Fraction(0))
        return value, tuple(sorted((e, 1) for e in used))
