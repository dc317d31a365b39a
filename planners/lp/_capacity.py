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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.lp._solve import LinearModel
from portsim.simulator.platform import NodeId, Platform, PortKind

__all__ = ["PAPER_ROW_NAMES", "PortCapacity", "link_row_name"]

Link = tuple[NodeId, NodeId]

PAPER_ROW_NAMES = ("one-port send (2) of {}", "one-port receive (3) of {}")
"""Names of the node rows as numbered in RR-4872 (rows (2) and (3)), for
:meth:`PortCapacity.add_node_rows`."""


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

    def add_node_rows(self, model: LinearModel, out_rows: Mapping[NodeId, Mapping[int, Fraction]],
                      in_rows: Mapping[NodeId, Mapping[int, Fraction]], *,
                      nodes: Iterable[NodeId] | None = None,
                      port_sum: frozenset[NodeId] = frozenset(),
                      names: tuple[str, str] = ("send:{}", "recv:{}"),
                      skip_empty: bool = False) -> None:
        """Append the send row ``<= send[u]`` and the receive row ``<= receive[u]`` of nodes.

        ``out_rows[u]`` (``in_rows[u]``) maps a variable to its busy time on
        ``u``'s out-links (in-links).  The one place every port-sum builder
        declares its node rows; what differs between builders is only where
        the rows stand, which fixes the indices of their duals:

        - ``nodes`` given: per node of ``nodes``, its send row then its
          receive row (empty rows included unless ``skip_empty``);
        - ``nodes`` omitted: every send row of ``out_rows``, then every
          receive row of ``in_rows``, in the mappings' order.

        A node of ``port_sum`` gets one row, ``Σ in + Σ out <= send[u]``, in
        the send position (its receive row is empty): the naive port-sum
        program of ``lp-naive`` (broadcast report, section 2.2.2).
        ``names`` are the rows' name patterns, ``{}`` the node.
        """
        if port_sum:
            merged = {u: dict(r) for u, r in out_rows.items()}
            inn = dict(in_rows)
            for node in sorted(port_sum):  # sorted: the row order must not depend on hashing
                for j, a in inn.pop(node, {}).items():  # a tree may enter and leave
                    row = merged.setdefault(node, {})
                    row[j] = row.get(j, Fraction(0)) + a
            out_rows, in_rows = merged, inn
        send_name, receive_name = names
        if nodes is None:
            for node, coeffs in out_rows.items():
                model.add(coeffs, "<=", self.send[node], send_name.format(node))
            for node, coeffs in in_rows.items():
                model.add(coeffs, "<=", self.receive[node], receive_name.format(node))
            return
        for node in nodes:
            out, inn_row = out_rows.get(node, {}), in_rows.get(node, {})
            if out or not skip_empty:
                model.add(out, "<=", self.send[node], send_name.format(node))
            if inn_row or not skip_empty:
                model.add(inn_row, "<=", self.receive[node], receive_name.format(node))

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
