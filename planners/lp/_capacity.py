"""Port capacities of the port-sum programs (every platform without unidirectional nodes).

The bidirectional programs of Legrand, Marchal and Robert (RR-4872, rows
(2) and (3)) bound the busy time of every node's sends and of its receives
by the time unit.  The same rows describe every port model without a
unidirectional node once their right-hand sides are the node's number of
ports and every link carries one transfer at a time:

- per node ``u``: ``Σ_{u→w} busy(u→w) <= k_out(u)`` and
  ``Σ_{w→u} busy(w→u) <= k_in(u)``, where ``k = 1`` for a bidirectional
  node, ``k`` for ``multiport:k`` and the number of links of that side for
  ``multiport`` without ``k`` (one port per link: the node row is then
  implied by the link rows), each capped at the number of links of the
  side (more ports are never used: a link takes one transfer at a time);
- per link ``u→v``: ``busy(u→v) <= 1``, declared only where the node rows
  do not imply it, i.e. where ``k_out(u) >= 2`` and ``k_in(v) >= 2``.

These rows are exact: the busy times of a period split into b-matchings
(:mod:`portsim.planners.lp._bmatching`), each a set of links that the port
models allow at once.  On an all-bidirectional platform every capacity is 1
and no link row is declared, so the programs are the papers' rows as
before.  :class:`PortCapacity` is the one place that declares them; every
model builder of the port-sum path takes its right-hand sides and its link
rows from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.lp._solve import LinearModel
from portsim.simulator.platform import NodeId, Platform, PortKind

__all__ = ["PortCapacity", "link_row_name"]

Link = tuple[NodeId, NodeId]


def link_row_name(link: Link) -> str:
    """The name of a link row (``"link:A->B"``)."""
    return f"link:{link[0]}->{link[1]}"


@dataclass(frozen=True)
class PortCapacity:
    """Right-hand sides of the send, receive and link rows of a platform.

    Attributes
    ----------
    send, receive:
        Per node, how many transfers its out-links (in-links) run at once.
    links:
        Links whose busy time needs its own row ``<= 1`` (both ends may run
        two or more transfers at once), in the platform's link order.

    Examples
    --------
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1), ("B", "A", 1)],
    ...                    "multiport")
    >>> cap = PortCapacity.of(p)
    >>> cap.send["A"], cap.receive["A"], cap.links
    (Fraction(2, 1), Fraction(1, 1), ())
    >>> PortCapacity.of(p.with_port_model("bidirectional")).unit
    True
    """

    send: Mapping[NodeId, Fraction]
    receive: Mapping[NodeId, Fraction]
    links: tuple[Link, ...]

    @classmethod
    def of(cls, platform: Platform) -> PortCapacity:
        """The capacities of ``platform`` (see the module notes).

        A unidirectional node gets 1 on both sides (its rows are port sums
        only in ``lp-naive``; the exact ``lp`` orchestrates it by matchings).
        """
        send: dict[NodeId, Fraction] = {}
        receive: dict[NodeId, Fraction] = {}
        for node in platform.node_ids:
            model = platform.port_model_of(node)
            out_links, in_links = platform.degree(node)
            if model.kind is PortKind.MULTIPORT:
                send[node] = Fraction(max(1, min(model.ports(out_links), out_links)))
                receive[node] = Fraction(max(1, min(model.ports(in_links), in_links)))
            else:
                send[node] = receive[node] = Fraction(1)
        links = tuple((x.src, x.dst) for x in platform.links
                      if send[x.src] >= 2 and receive[x.dst] >= 2)
        return cls(send, receive, links)

    @property
    def unit(self) -> bool:
        """True when every capacity is 1 (no link rows): the one-port programs."""
        return not self.links and all(k == 1 for k in self.send.values()) \
            and all(k == 1 for k in self.receive.values())

    @property
    def own_row(self) -> frozenset[Link]:
        """:attr:`links` as a set (for the builders' loops)."""
        return frozenset(self.links)

    def add_link_rows(self, model: LinearModel,
                      load: Mapping[Link, Mapping[int, Fraction]]) -> dict[Link, int]:
        """Append one ``busy <= 1`` row per link of :attr:`links` to ``model``.

        ``load[link]`` maps a variable to the link's busy time per unit of
        it (a link without variables gets an empty row, so that the row of
        link ``i`` is always the ``i``-th appended).  Returns each link's row
        index.
        """
        rows: dict[Link, int] = {}
        for link in self.links:
            rows[link] = len(model.rows)
            model.add(load.get(link, {}), "<=", Fraction(1), link_row_name(link))
        return rows
