"""Heterogeneous platforms: nodes, directed links, port models.

A platform is a directed graph.  Each link ``(i, j)`` has a cost ``c(i, j)``,
the time to send a unit-size message from ``i`` to ``j``, or a bandwidth and a
latency: a transfer of size ``s`` then lasts ``latency + s / bandwidth``
(:meth:`Link.duration`, the one place a transfer's duration is computed).
Each link is a resource: it carries one transfer at a time.  Each node has a
compute time (one reduction task) and obeys a port model; routers only
forward (store and forward, under any port model).  Computation always
overlaps communication fully.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, TypeAlias

from portsim.simulator.errors import PlatformError, record_repr
from portsim.simulator.numbers import parse_rational

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["BIDIRECTIONAL", "Link", "Node", "NodeId", "Platform", "PortKind", "PortModel"]

NodeId: TypeAlias = str
"""A node identifier, matching ``[A-Za-z0-9_.-]+``."""

NODE_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")


class PortKind(StrEnum):
    """The three port models.

    - ``bidirectional``: at most one send and at most one receive at a time
      (the papers' one-port model);
    - ``unidirectional``: at most one communication, send or receive;
    - ``multiport``: at most ``k`` sends and ``k`` receives at a time
      (``multiport:k``), or no limit but the links (``multiport``, the
      broadcast report's Delta-port model of Fig. 8: one port per link).

    Under every model a link carries at most one transfer at a time.
    """

    BIDIRECTIONAL = "bidirectional"
    UNIDIRECTIONAL = "unidirectional"
    MULTIPORT = "multiport"


@dataclass(frozen=True, slots=True)
class PortModel:
    """A port model: a kind and, for multi-port, the number ``k`` of ports.

    ``k`` is ``None`` for ``multiport`` without a number: one port per link,
    so a node takes as many transfers at once as it has links (each link
    still carries one at a time).

    Examples
    --------
    >>> PortModel.parse("multiport:4")
    PortModel(kind=<PortKind.MULTIPORT: 'multiport'>, k=4)
    >>> str(PortModel.parse("unidirectional"))
    'unidirectional'
    >>> m = PortModel.parse("multiport"); m.k is None, str(m), m.ports(5)
    (True, 'multiport', 5)
    >>> PortModel.parse("multiport:3").ports(2)
    3
    """

    kind: PortKind = PortKind.BIDIRECTIONAL
    k: int | None = 1

    def __post_init__(self) -> None:
        if self.k is None:
            if self.kind is not PortKind.MULTIPORT:
                raise PlatformError(f"the {self.kind} model has exactly one port", value="none")
            return
        if self.k < 1:
            raise PlatformError("a multi-port model needs k >= 1", value=self.k)
        if self.kind is not PortKind.MULTIPORT and self.k != 1:
            raise PlatformError(f"the {self.kind} model has exactly one port", value=self.k)

    def ports(self, links: int) -> int:
        """Ports on one side (sends, or receives) of a node with ``links`` links on that side.

        ``k`` under ``multiport:k``; ``links`` (at least 1) under ``multiport``
        without ``k``, one port per link; 1 otherwise (unidirectional nodes
        share their one port between both sides).  Each link carries one
        transfer at a time, so at most ``min(ports, links)`` run at once.
        """
        if self.kind is not PortKind.MULTIPORT:
            return 1
        if self.k is None:
            return max(1, links)
        return self.k

    @classmethod
    def parse(cls, text: object, *, path: str | None = None) -> PortModel:
        """Read ``bidirectional``, ``unidirectional``, ``multiport`` or ``multiport:K``."""
        if isinstance(text, PortModel):
            return text
        if not isinstance(text, str):
            raise PlatformError(
                "expected bidirectional, unidirectional, multiport or multiport:K", path=path,
                value=text
            )
        name = text.strip().lower()
        if name in (PortKind.BIDIRECTIONAL, PortKind.UNIDIRECTIONAL):
            return cls(PortKind(name))
        if name == PortKind.MULTIPORT:
            return cls(PortKind.MULTIPORT, None)
        match = re.fullmatch(r"multiport:(\d{1,18})", name)  # int() of 5000 digits raises
        if match and int(match.group(1)) >= 1:
            return cls(PortKind.MULTIPORT, int(match.group(1)))
        raise PlatformError(
            "expected bidirectional, unidirectional, multiport or multiport:K (K >= 1)",
            path=path, value=text
        )

    @property
    def shared_port(self) -> bool:
        """True when sends and receives share the same port(s) (unidirectional)."""
        return self.kind is PortKind.UNIDIRECTIONAL

    def __str__(self) -> str:
        if self.kind is PortKind.MULTIPORT and self.k is not None:
            return f"multiport:{self.k}"
        return self.kind.value


BIDIRECTIONAL = PortModel(PortKind.BIDIRECTIONAL)


@dataclass(frozen=True, slots=True)
class Node:
    """A processor (or a router, which only forwards).

    Parameters
    ----------
    id:
        Identifier, ``[A-Za-z0-9_.-]+``.
    compute:
        Time of one reduction task on this node (>= 0).
    port_model:
        Per-node override of the platform's port model, or ``None``.
    router:
        A router forwards messages but holds no data of its own and computes
        nothing.
    """

    id: NodeId
    compute: Fraction = Fraction(1)
    port_model: PortModel | None = None
    router: bool = False


@dataclass(frozen=True, slots=True)
class Link:
    """A directed link ``src -> dst``: ``c`` is the time of a unit-size message.

    A link given by a ``bandwidth`` and a ``latency`` (:meth:`of_bandwidth`)
    has ``c = latency + 1 / bandwidth``; a link given by ``c`` alone has
    latency 0 and bandwidth ``1 / c``.  :meth:`duration` is the one rule for
    the time of a transfer: ``latency + s / bandwidth`` for size ``s``, which
    is ``s * c`` when the latency is 0 (and not otherwise).

    Examples
    --------
    >>> link = Link.of_bandwidth("A", "B", 4, latency="1/2")
    >>> link.c, link.bandwidth, link.duration(2), link.duration(2, part=Fraction(1, 2))
    (Fraction(3, 4), Fraction(4, 1), Fraction(1, 1), Fraction(3, 4))

    ``c`` and ``latency`` given as an ``int``, a ``float`` or a string such as
    ``"2/3"`` are read as exact fractions (as :meth:`Platform.build`
    reads them):

    >>> Link("A", "B", "1/3").duration(2), Link("A", "B", 0.1).duration(3)
    (Fraction(2, 3), Fraction(3, 10))
    """

    src: NodeId
    dst: NodeId
    c: Fraction
    latency: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        # A "1/3" kept as text made duration() repeat the string ("1/31/3")
        # and a float c gave float times; the platform's range checks come later.
        for key in ("c", "latency"):
            value = getattr(self, key)
            if not isinstance(value, Fraction):
                object.__setattr__(self, key, parse_rational(
                    value, path=f"links.{self.src}->{self.dst}.{key}", error=PlatformError))

    @classmethod
    def of_bandwidth(cls, src: NodeId, dst: NodeId, bandwidth: object,
                     latency: object = 0) -> Link:
        """The link of ``bandwidth`` (> 0) and ``latency`` (>= 0): ``c = latency + 1/bandwidth``.

        Raises
        ------
        PlatformError
            On a bandwidth <= 0 or a negative latency.
        """
        where = f"links.{src}->{dst}"
        bw = parse_rational(bandwidth, path=f"{where}.bandwidth", error=PlatformError)
        lat = parse_rational(latency, path=f"{where}.latency", error=PlatformError)
        if bw <= 0:
            raise PlatformError("bandwidth must be > 0", path=f"{where}.bandwidth",
                                value=str(bw))
        if lat < 0:
            raise PlatformError("latency must be >= 0", path=f"{where}.latency",
                                value=str(lat))
        return cls(src, dst, lat + 1 / bw, lat)

    @property
    def bandwidth(self) -> Fraction:
        """Size units per time unit, ``1 / (c - latency)``."""
        return 1 / (self.c - self.latency)

    def duration(self, size: Fraction | int = 1, part: Fraction | int = 1) -> Fraction:
        """Time of a transfer of ``part`` of a message of ``size``: ``latency + part·size/bw``.

        Every transfer pays the whole latency, a part of a message too.
        """
        if self.latency == 0:
            return self.c * size * part
        return self.latency + (self.c - self.latency) * size * part


@dataclass(frozen=True)
class Platform:
    """A heterogeneous platform: nodes, directed links and a port model.

    The constructor checks the platform and raises :class:`PlatformError` on
    duplicate or malformed node ids, links to unknown nodes, self-loops,
    duplicate links and non-positive costs.  A ``networkx.DiGraph`` view with
    attributes ``c`` (links), ``compute`` and ``router`` (nodes) is available
    as :attr:`graph`.

    Examples
    --------
    >>> from fractions import Fraction
    >>> p = Platform.build(
    ...     nodes={"A": 1, "B": 1},
    ...     links=[("A", "B", "2/3")],
    ... )
    >>> p.cost("A", "B")
    Fraction(2, 3)
    """

    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    port_model: PortModel = field(default=BIDIRECTIONAL)

    def __repr__(self) -> str:
        return record_repr(self)

    def __post_init__(self) -> None:
        self._normalise()
        seen: set[str] = set()
        for i, node in enumerate(self.nodes):
            where = f"platform.nodes[{i}]"
            if not isinstance(node.id, str) or not NODE_ID_PATTERN.match(node.id):
                raise PlatformError(
                    "node id must match [A-Za-z0-9_.-]+", path=f"{where}.id", value=node.id
                )
            if node.id in seen:
                raise PlatformError("duplicate node id", path=f"{where}.id", value=node.id)
            if node.compute < 0:
                raise PlatformError(
                    "compute time must be >= 0", path=f"{where}.compute", value=str(node.compute)
                )
            seen.add(node.id)
        pairs: set[tuple[str, str]] = set()
        for i, link in enumerate(self.links):
            where = f"platform.links[{i}]"
            if link.src not in seen:
                raise PlatformError("unknown node", path=f"{where}.src", value=link.src)
            if link.dst not in seen:
                raise PlatformError("unknown node", path=f"{where}.dst", value=link.dst)
            if link.src == link.dst:
                raise PlatformError("a link cannot join a node to itself", path=where,
                                    value=link.src)
            if link.latency < 0:
                raise PlatformError("latency must be >= 0", path=f"{where}.latency",
                                    value=str(link.latency))
            if link.c <= link.latency:
                if link.latency == 0:
                    raise PlatformError("link cost c must be > 0", path=f"{where}.c",
                                        value=str(link.c))
                raise PlatformError("link cost c must exceed the latency (finite bandwidth)",
                                    path=f"{where}.c", value=str(link.c))
            if (link.src, link.dst) in pairs:
                raise PlatformError(
                    "duplicate link", path=where, value=f"{link.src} -> {link.dst}"
                )
            pairs.add((link.src, link.dst))

    def _normalise(self) -> None:
        """Read plain values given to the constructor as :meth:`build` reads them.

        A port model given as text (``"multiport"``, platform-wide or per node),
        a compute time, a cost or a latency given as an ``int``, ``float`` or
        ``"2/3"`` become a :class:`PortModel` and exact ``Fraction``s; lists
        become tuples.  Without this a string port model was stored as is and
        failed much later (``'str' object has no attribute 'kind'``).
        """
        if not isinstance(self.port_model, PortModel):
            object.__setattr__(self, "port_model",
                               PortModel.parse(self.port_model, path="platform.port_model"))
        for key, kind in (("nodes", Node), ("links", Link)):
            given = getattr(self, key)
            if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
                raise PlatformError(f"{key} must be a sequence of {kind.__name__}s",
                                    path=f"platform.{key}", value=given)
            given = tuple(given)
            for i, one in enumerate(given):
                if not isinstance(one, kind):
                    hint = ("Node('A')" if kind is Node else "Link('A', 'B', c)")
                    raise PlatformError(
                        f"expected a {kind.__name__} such as {hint} (Platform.build takes "
                        f"plain ids and (src, dst, c) triples)", path=f"platform.{key}[{i}]",
                        value=one)
            object.__setattr__(self, key, given)
        nodes = []
        for i, node in enumerate(self.nodes):
            where = f"platform.nodes[{i}]"
            model = node.port_model
            if model is not None and not isinstance(model, PortModel):
                node = replace(node, port_model=PortModel.parse(model, path=f"{where}.port_model"))
            if not isinstance(node.compute, Fraction):
                node = replace(node, compute=parse_rational(
                    node.compute, path=f"{where}.compute", error=PlatformError))
            nodes.append(node)
        links = []
        for i, link in enumerate(self.links):
            where = f"platform.links[{i}]"
            if not isinstance(link.c, Fraction) or not isinstance(link.latency, Fraction):
                link = replace(
                    link,
                    c=parse_rational(link.c, path=f"{where}.c", error=PlatformError),
                    latency=parse_rational(link.latency, path=f"{where}.latency",
                                           error=PlatformError))
            links.append(link)
        object.__setattr__(self, "nodes", tuple(nodes))
        object.__setattr__(self, "links", tuple(links))

    @classmethod
    def build(
        cls,
        nodes: Mapping[NodeId, object] | Iterable[NodeId],
        links: Iterable[tuple[NodeId, NodeId, object]],
        port_model: PortModel | str = BIDIRECTIONAL,
        *,
        routers: Iterable[NodeId] = (),
        node_port_models: Mapping[NodeId, PortModel | str] | None = None,
    ) -> Platform:
        """Build a platform from plain Python values (costs may be ``"2/3"``).

        Parameters
        ----------
        nodes:
            Node ids mapped to compute times, or a list of ids (compute 1).
        links:
            ``(src, dst, c)`` triples; for a bandwidth and a latency, give
            :meth:`Link.of_bandwidth` links to the constructor instead.
        port_model:
            The platform's port model (``"bidirectional"``, ``"multiport:2"``...).
        routers:
            Nodes that only store and forward (switches): no computation.
        node_port_models:
            Per-node port models overriding ``port_model``.

        Returns
        -------
        Platform

        Raises
        ------
        PlatformError
            On a bad number, an unknown port model, or a link naming an
            unknown node (one line naming the field).

        Examples
        --------
        >>> p = Platform.build(["A", "B", "sw"], [("A", "sw", 1), ("sw", "B", "1/2")],
        ...                    "multiport", routers=["sw"])
        >>> p.duration("sw", "B", 2)
        Fraction(1, 1)
        """
        if isinstance(nodes, str | bytes):
            raise PlatformError("nodes must be a list of node ids or a mapping of ids to "
                                "compute times", path="nodes", value=nodes)
        if isinstance(nodes, Mapping):
            compute = dict(nodes)
        else:
            ids = list(nodes)
            compute = dict.fromkeys(ids, 1)
            if len(compute) < len(ids):
                twice = next(n for i, n in enumerate(ids) if n in ids[:i])
                raise PlatformError("duplicate node id", path="nodes", value=twice)
        routers = set(routers)
        overrides = {k: PortModel.parse(v, path=f"node_port_models.{k}")
                     for k, v in (node_port_models or {}).items()}
        for key, named in (("routers", routers), ("node_port_models", overrides)):
            unknown = sorted(str(n) for n in named if n not in compute)
            if unknown:
                raise PlatformError("unknown node", path=key, value=unknown[0])
        triples: list[tuple[NodeId, NodeId, object]] = []
        for i, link in enumerate(links):
            if isinstance(link, str | bytes) or not isinstance(link, Sequence) or len(link) != 3:
                raise PlatformError("a link is a (src, dst, c) triple", path=f"links[{i}]",
                                    value=link)
            triples.append((link[0], link[1], link[2]))
        node_objs = tuple(
            Node(
                id=nid,
                compute=parse_rational(comp, path=f"nodes.{nid}", error=PlatformError),
                port_model=overrides.get(nid),
                router=nid in routers,
            )
            for nid, comp in compute.items()
        )
        link_objs = tuple(
            Link(s, d, parse_rational(c, path=f"links.{s}->{d}", error=PlatformError))
            for s, d, c in triples
        )
        return cls(node_objs, link_objs, PortModel.parse(port_model, path="port_model"))

    # -- views -----------------------------------------------------------------

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The platform as a ``networkx.DiGraph`` (attributes ``c``, ``ticks``, ``compute``,
        ``router``).

        ``ticks`` is ``c`` in units of :attr:`cost_tick`, an integer: a search
        on it compares integers, not fractions (nine times faster), and finds
        the same paths, ties included, as every sum is scaled alike.

        The graph is the one the planners search, computed once: it is frozen
        (:func:`networkx.freeze`), so adding or removing a node or a link
        raises ``NetworkXError``; ``platform.graph.copy()`` gives one to change.
        """
        import networkx as nx  # lazily: networkx takes a third of a second to import

        g = nx.DiGraph()
        for node in self.nodes:
            g.add_node(node.id, compute=node.compute, router=node.router,
                       port_model=self.port_model_of(node.id))
        scale = 1 / self.cost_tick
        for link in self.links:
            g.add_edge(link.src, link.dst, c=link.c, ticks=int(link.c * scale))
        # A user's g.remove_node(...) (to look at part of it) changed what every
        # planner saw of this frozen platform, and the schedules it gave.
        return nx.freeze(g)

    @cached_property
    def cost_tick(self) -> Fraction:
        """``1 / D``, ``D`` the least common multiple of the denominators of the links' ``c``.

        >>> Platform.build(["A", "B", "C"], [("A", "B", "1/2"), ("B", "C", "2/3")]).cost_tick
        Fraction(1, 6)
        """
        return Fraction(1, math.lcm(*(link.c.denominator for link in self.links)))

    @cached_property
    def _nodes_by_id(self) -> dict[NodeId, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def _costs(self) -> dict[tuple[NodeId, NodeId], Fraction]:
        return {(link.src, link.dst): link.c for link in self.links}

    @cached_property
    def _links_by_pair(self) -> dict[tuple[NodeId, NodeId], Link]:
        return {(link.src, link.dst): link for link in self.links}

    @cached_property
    def has_latency(self) -> bool:
        """True when some link has a latency > 0 (transfer times not linear in size)."""
        return any(link.latency for link in self.links)

    @property
    def node_ids(self) -> tuple[NodeId, ...]:
        """Node ids in declaration order."""
        return tuple(n.id for n in self.nodes)

    @property
    def processors(self) -> tuple[NodeId, ...]:
        """Ids of the nodes that are not routers, in declaration order."""
        return tuple(n.id for n in self.nodes if not n.router)

    @property
    def routers(self) -> tuple[NodeId, ...]:
        """Ids of the routers (switches and NICs, which forward and never compute), in order."""
        return tuple(n.id for n in self.nodes if n.router)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes_by_id

    def node(self, node_id: NodeId) -> Node:
        """The node called ``node_id``; :class:`PlatformError` if there is none."""
        try:
            return self._nodes_by_id[node_id]
        except KeyError:
            raise PlatformError("unknown node", value=node_id) from None

    def has_link(self, src: NodeId, dst: NodeId) -> bool:
        """True when the directed link ``src -> dst`` exists."""
        return (src, dst) in self._costs

    def cost(self, src: NodeId, dst: NodeId) -> Fraction:
        """The cost ``c(src, dst)``; :class:`PlatformError` if there is no such link."""
        try:
            return self._costs[(src, dst)]
        except KeyError:
            raise PlatformError("no link", value=f"{src} -> {dst}") from None

    def link(self, src: NodeId, dst: NodeId) -> Link:
        """The link ``src -> dst``; :class:`PlatformError` if there is none."""
        try:
            return self._links_by_pair[(src, dst)]
        except KeyError:
            raise PlatformError("no link", value=f"{src} -> {dst}") from None

    def duration(self, src: NodeId, dst: NodeId, size: Fraction | int = 1,
                 part: Fraction | int = 1) -> Fraction:
        """Time of a transfer over ``src -> dst`` (:meth:`Link.duration`)."""
        return self.link(src, dst).duration(size, part)

    def degree(self, node_id: NodeId) -> tuple[int, int]:
        """``(out-links, in-links)`` of ``node_id``."""
        g = self.graph
        return g.out_degree(node_id), g.in_degree(node_id)

    def compute_time(self, node_id: NodeId) -> Fraction:
        """Time of one reduction task on ``node_id``."""
        return self.node(node_id).compute

    def port_model_of(self, node_id: NodeId) -> PortModel:
        """The port model that ``node_id`` obeys (its override, else the platform's)."""
        return self.node(node_id).port_model or self.port_model

    @property
    def own_port_models(self) -> dict[NodeId, PortModel]:
        """The nodes that follow another port model than the platform-wide
        :attr:`port_model` (their own), in node order; empty when none does.

        >>> p = Platform.build(["A", "B"], [("A", "B", 1)], port_model="bidirectional",
        ...                    node_port_models={"A": "unidirectional"})
        >>> {k: str(v) for k, v in p.own_port_models.items()}
        {'A': 'unidirectional'}
        """
        return {node.id: node.port_model for node in self.nodes
                if node.port_model is not None and node.port_model != self.port_model}

    def with_port_model(self, port_model: PortModel | str) -> Platform:
        """The same platform under another platform-wide port model (overrides kept)."""
        return Platform(self.nodes, self.links, PortModel.parse(port_model, path="port_model"))

    def is_reachable(self, src: NodeId, dst: NodeId) -> bool:
        """True when a directed path leads from ``src`` to ``dst``."""
        import networkx as nx

        for node in (src, dst):
            self.node(node)  # an unknown id: a PlatformError, not networkx's NodeNotFound
        return src == dst or nx.has_path(self.graph, src, dst)
