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
  ``in`` (Fig. 8, generalised): at most ``k`` sends and ``k`` receives.

Every link ``u -> v`` joins every copy of ``u``'s sending port to every copy
of ``v``'s receiving port.  A matching of this undirected graph is a
*configuration*: the multiset of links it uses (a link between two
multi-port nodes may carry several transfers at once, one per pair of
copies, exactly as the engine allows: it counts port slots, not links).
Conversely every multiset of links that respects every node's own model is
a matching (each port hands out distinct copies), so configurations and
matchings correspond exactly.  On an all-bidirectional platform the port
graph is bipartite (``out`` × ``in``).

Copies are capped at the number of transfers the port could ever take at
once (the sum, over its links, of the other end's copies).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx

from simulator.errors import PlannerError
from simulator.platform import NodeId, Platform, PortKind

__all__ = ["MAX_COPIES", "Configuration", "Link", "Port", "PortGraph"]

MAX_COPIES = 16
"""Most copies of one port (a ``multiport:k`` node with more useful ports is refused)."""

Link = tuple[NodeId, NodeId]
Port = tuple[NodeId, str]
Configuration = tuple[tuple[Link, int], ...]
"""Links active at the same time, each with its multiplicity, sorted."""


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
        ends: dict[Link, tuple[Port, Port]] = {}
        for node in platform.node_ids:
            model = platform.port_model_of(node)
            if model.kind is PortKind.UNIDIRECTIONAL:
                raw[node, "io"] = 1
            else:
                k = model.k if model.kind is PortKind.MULTIPORT else 1
                raw[node, "out"] = raw[node, "in"] = k
        for link in platform.links:
            src = (link.src, "io") if (link.src, "io") in raw else (link.src, "out")
            dst = (link.dst, "io") if (link.dst, "io") in raw else (link.dst, "in")
            ends[link.src, link.dst] = (src, dst)
        useful: dict[Port, int] = dict.fromkeys(raw, 0)
        for a, b in ends.values():
            useful[a] += min(raw[a], raw[b])
            useful[b] += min(raw[a], raw[b])
        copies = {p: max(1, min(k, useful[p])) for p, k in raw.items()}
        for (node, _), k in copies.items():
            if k > MAX_COPIES:
                raise PlannerError(f"a port of {node} may take {k} transfers at once; the lp "
                                   f"planner handles at most {MAX_COPIES}",
                                   value=str(platform.port_model_of(node)))
        return cls(tuple(ends), ends, copies)

    @property
    def bipartite(self) -> bool:
        """True when no port is shared by sends and receives (no unidirectional node)."""
        return all(side != "io" for _, side in self.copies)

    def multiplicity(self, link: Link) -> int:
        """How many transfers ``link`` may carry at once."""
        a, b = self.ends[link]
        return min(self.copies[a], self.copies[b])

    @property
    def max_multiplicity(self) -> int:
        """The largest :meth:`multiplicity` (1 on one-port platforms)."""
        return max((self.multiplicity(e) for e in self.links), default=1)

    def _graph(self, weights: Mapping[Link, int | float]) -> tuple[nx.Graph, dict[
            tuple[tuple[Port, int], tuple[Port, int]], Link]]:
        g = nx.Graph()
        owner: dict[tuple[tuple[Port, int], tuple[Port, int]], Link] = {}
        for link, w in weights.items():
            if not w > 0:
                continue
            a, b = self.ends[link]
            for i in range(self.copies[a]):
                for j in range(self.copies[b]):
                    x, y = (a, i), (b, j)
                    if g.has_edge(x, y) and g.edges[x, y]["w"] >= w:
                        continue  # two links between the same unidirectional nodes
                    g.add_edge(x, y, w=w)
                    owner[x, y] = owner[y, x] = link
        return g, owner

    def best_float(self, weights: Mapping[Link, float]) -> tuple[float, Configuration]:
        """A maximum-weight configuration under float weights (pricing in the loop)."""
        g, owner = self._graph(weights)
        count: dict[Link, int] = {}
        for x, y in sorted(nx.max_weight_matching(g, weight="w")):  # a set: fix the order
            link = owner[x, y]
            count[link] = count.get(link, 0) + 1
        value = sum(weights[e] * m for e, m in count.items())
        return value, tuple(sorted(count.items()))

    def best(self, weights: Mapping[Link, Fraction]) -> tuple[Fraction, Configuration]:
        """An exact maximum-weight configuration under rational weights.

        The weights are scaled to integers by their common denominator, so
        that networkx's blossom algorithm computes in integers only (exact).
        """
        positive = {e: Fraction(w) for e, w in weights.items() if w > 0}
        denominator = 1
        for w in positive.values():
            denominator = denominator * w.denominator // math.gcd(denominator, w.denominator)
        scaled = {e: int(w * denominator) for e, w in positive.items()}
        g, owner = self._graph(scaled)
        count: dict[Link, int] = {}
        for x, y in sorted(nx.max_weight_matching(g, weight="w")):  # a set: fix the order
            link = owner[x, y]
            count[link] = count.get(link, 0) + 1
        value = sum((positive[e] * m for e, m in count.items()), Fraction(0))
        return value, tuple(sorted(count.items()))
