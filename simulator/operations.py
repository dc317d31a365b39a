"""Collective operations: who holds what at the start, what "complete" means.

=============  ===================  =============================================
operation      initial items        complete when
=============  ===================  =============================================
scatter        source: m[k] each k  every target k holds m[k]
broadcast      source: b            every target holds b
gather         participant k: m[k]  the target holds m[k] for every participant
reduce         participant i: v_i   the target holds v[0,N-1] (v{0..N-1} if
                                    commutative)
allreduce      participant i: v_i   every participant holds v[0,N-1]
alltoall       source j: m[j,k]     every target k holds m[j,k] for each source j
allgather      participant k: m[k]  every participant holds m[j] for every j
=============  ===================  =============================================

``v_i`` is ``v[i,i]`` (``v{i}`` when commutative), ``i`` an index into the
ordered participant list.  Every item carries the instance number ``#t``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction

from portsim.simulator.errors import OperationError, record_repr
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational, parse_rational, with_article
from portsim.simulator.platform import NodeId, Platform

__all__ = ["OPERATION_FIELDS", "OPERATION_FIELD_ORDER", "Operation", "OperationKind",
           "misplaced_field"]


class OperationKind(StrEnum):
    """The collective operations portsim knows."""

    SCATTER = "scatter"
    GATHER = "gather"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    ALLREDUCE = "allreduce"
    ALLTOALL = "alltoall"
    ALLGATHER = "allgather"


_ROOTED_OUT = {OperationKind.SCATTER, OperationKind.BROADCAST}
_WITH_PARTICIPANTS = {
    OperationKind.GATHER,
    OperationKind.REDUCE,
    OperationKind.ALLREDUCE,
    OperationKind.ALLGATHER,
}
_REDUCTIONS = {OperationKind.REDUCE, OperationKind.ALLREDUCE}


OPERATION_FIELDS: dict[OperationKind, frozenset[str]] = {
    OperationKind.SCATTER: frozenset({"source", "targets"}),
    OperationKind.BROADCAST: frozenset({"source", "targets"}),
    OperationKind.GATHER: frozenset({"participants", "target"}),
    OperationKind.REDUCE: frozenset({"participants", "target", "commutative"}),
    OperationKind.ALLREDUCE: frozenset({"participants", "commutative"}),
    OperationKind.ALLGATHER: frozenset({"participants"}),
    OperationKind.ALLTOALL: frozenset({"sources", "targets"}),
}
"""The fields each kind of operation takes besides ``size``.

A field another type takes is an error naming it (SPEC.md)."""

OPERATION_FIELD_ORDER = ("source", "sources", "targets", "participants", "target",
                         "commutative")
"""The operation fields in the order an error message lists those that apply."""


def misplaced_field(kind: OperationKind, key: str, value: object) -> OperationError:
    """The error for a field ``key`` that a ``kind`` of operation does not take.

    Examples
    --------
    >>> print(misplaced_field(OperationKind.BROADCAST, "participants", ["A"]))
    operation.participants: participants does not apply to a broadcast (it takes source, \
targets and size) (got ['A'])
    """
    takes = [f for f in OPERATION_FIELD_ORDER if f in OPERATION_FIELDS[kind]]
    return OperationError(f"{key} does not apply to {with_article(str(kind))} (it takes "
                          f"{', '.join(takes)} and size)", path=f"operation.{key}", value=value)


@dataclass(frozen=True)
class Operation:
    """A collective operation on a platform.

    Build one with the fields that matter for its kind, then call
    :meth:`resolve` with the platform to fill defaults and check it.

    Parameters
    ----------
    kind:
        The collective.
    source:
        Scatter and broadcast: the node that holds the data.
    targets:
        Scatter and broadcast (default: every other non-router node);
        all-to-all (default: the sources).
    participants:
        Reduce, allreduce, gather, allgather: ORDERED; ``v_i`` lives on
        ``participants[i]`` (default: every non-router node).
    target:
        Reduce and gather: the node that receives the result (default: the
        first participant).
    sources:
        All-to-all: the nodes that send (default: every non-router node).
    commutative:
        Reduce and allreduce: may operands be reordered?  Default ``False``.
    size:
        Message size; a send lasts ``latency + size / bandwidth`` (``size * c``
        on a link without latency; :meth:`portsim.simulator.platform.Link.duration`).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
    >>> op = Operation(OperationKind.SCATTER, source="A").resolve(p)
    >>> op.targets
    ('B', 'C')
    """

    kind: OperationKind
    source: NodeId | None = None
    targets: tuple[NodeId, ...] = ()
    participants: tuple[NodeId, ...] = ()
    target: NodeId | None = None
    sources: tuple[NodeId, ...] = ()
    commutative: bool = False
    size: Fraction = Fraction(1)

    def __repr__(self) -> str:
        return record_repr(self)

    def __post_init__(self) -> None:
        # Plain values as a script writes them: the kind as text, the size as
        # an int or "1/2", lists of nodes.  An unknown kind or a bad size is an
        # OperationError here, not a ValueError or TypeError in a planner.
        if not isinstance(self.kind, OperationKind):
            try:
                kind = OperationKind(self.kind)
            except ValueError:
                raise OperationError(
                    f"unknown operation, expected one of {', '.join(OperationKind)}",
                    path="operation.type", value=self.kind) from None
            object.__setattr__(self, "kind", kind)
        if not isinstance(self.size, Fraction):
            object.__setattr__(self, "size", parse_rational(
                self.size, path="operation.size", error=OperationError))
        for name in ("targets", "participants", "sources"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                    # "AB" would be read as the nodes A and B
                    raise OperationError(f"{name} must be a list of node ids",
                                         path=f"operation.{name}", value=value)
                object.__setattr__(self, name, tuple(value))
        if not isinstance(self.commutative, bool):
            raise OperationError("commutative must be True or False",
                                 path="operation.commutative", value=self.commutative)

    # -- checking --------------------------------------------------------------

    def resolve(self, platform: Platform) -> Operation:
        """Fill defaults from ``platform`` and check the operation against it.

        Raises
        ------
        OperationError
            Naming the key path (``operation.targets[1]``; ``operation`` and "the
            default targets" for a list the operation leaves to its default) and
            the bad value:
            a field this kind does not take (a broadcast's ``participants``),
            unknown node, router used as an endpoint, node listed twice,
            target unreachable from its source, missing source.
        """
        if not isinstance(platform, Platform):
            raise OperationError("expected a Platform to resolve the operation on",
                                 path="platform", value=type(platform).__name__)
        kind = OperationKind(self.kind)
        if self.size <= 0:
            raise OperationError("size must be > 0", path="operation.size", value=str(self.size))
        for key in OPERATION_FIELD_ORDER:
            value = getattr(self, key)
            if key not in OPERATION_FIELDS[kind] and value not in (None, (), False):
                # a broadcast's participants would be ignored, not its targets
                raise misplaced_field(kind, key, list(value) if isinstance(value, tuple)
                                      else value)
        processors = platform.processors
        op = replace(self, kind=kind)
        if kind in _ROOTED_OUT:
            if self.source is None:
                raise OperationError(f"a {kind} needs a source", path="operation.source")
            _check_node(platform, self.source, "operation.source")
            targets = self.targets or tuple(n for n in processors if n != self.source)
            _check_nodes(platform, targets, "operation.targets")
            # One traversal, not one per target: thousands of targets stay fast.
            import networkx as nx  # lazily, as Platform.graph

            reachable = nx.descendants(platform.graph, self.source) | {self.source}
            for i, t in enumerate(targets):
                if t not in reachable:
                    path, where = _listed("targets", i, None if self.targets else
                                          "every non-router node but the source")
                    raise OperationError(
                        f"target unreachable from source {self.source}{where}",
                        path=path, value=t,
                    )
            op = replace(op, targets=tuple(targets))
        elif kind in _WITH_PARTICIPANTS:
            participants = self.participants or processors
            _check_nodes(platform, participants, "operation.participants")
            if len(participants) < 1:
                raise OperationError("needs at least one participant",
                                     path="operation.participants")
            op = replace(op, participants=tuple(participants))
            if kind in (OperationKind.REDUCE, OperationKind.GATHER):
                target = self.target if self.target is not None else participants[0]
                _check_node(platform, target, "operation.target")
                import networkx as nx

                reaching = nx.ancestors(platform.graph, target) | {target}
                for i, p in enumerate(participants):
                    if p not in reaching:
                        path, where = _listed("participants", i, None if self.participants
                                              else "every non-router node")
                        raise OperationError(
                            f"target {target} unreachable from this participant{where}",
                            path=path, value=p,
                        )
                op = replace(op, target=target)
            else:
                _check_all_pairs(platform, participants, participants, "participants",
                                 None if self.participants else "every non-router node")
        else:  # all-to-all
            sources = self.sources or processors
            _check_nodes(platform, sources, "operation.sources")
            targets = self.targets or tuple(sources)
            _check_nodes(platform, targets, "operation.targets")
            _check_all_pairs(platform, sources, targets, "targets", None if self.targets else
                             "the sources" if self.sources else "every non-router node")
            op = replace(op, sources=tuple(sources), targets=tuple(targets))
        return op

    @property
    def resolved(self) -> bool:
        """Whether the endpoints are filled in, as :meth:`resolve` leaves them (the
        targets of a scatter or broadcast, the participants and the target of a
        reduce or gather, the participants of the others, the sources and targets
        of an all-to-all)."""
        kind = OperationKind(self.kind)
        if kind in _ROOTED_OUT:
            return bool(self.targets)
        if kind in (OperationKind.REDUCE, OperationKind.GATHER):
            return bool(self.participants) and self.target is not None
        if kind in _WITH_PARTICIPANTS:
            return bool(self.participants)
        return bool(self.sources) and bool(self.targets)

    # -- items -----------------------------------------------------------------

    @property
    def is_reduction(self) -> bool:
        """True for reduce and allreduce (items are partial reductions)."""
        return self.kind in _REDUCTIONS

    def partial(self, index: int, instance: int = 0) -> Item:
        """``v_index`` of ``instance`` in this operation's form (interval or set)."""
        if self.commutative:
            return Item.subset([index], instance)
        return Item.interval(index, index, instance)

    def full_reduction(self, instance: int = 0) -> Item:
        """``v[0,N-1]`` (or ``v{0..N-1}``), the result of a reduction."""
        n = len(self.participants)
        if self.commutative:
            return Item.subset(range(n), instance)
        return Item.interval(0, n - 1, instance)

    def normalize(self, item: Item) -> Item:
        """The canonical form of ``item`` for this operation.

        For a commutative reduction every partial reduction is a set, so
        ``v[0,1]`` and ``v{0,1}`` are the same value.
        """
        if self.commutative and item.kind == "v":
            return item.as_subset()
        return item

    def initial_items(self, instance: int = 0) -> dict[NodeId, list[Item]]:
        """What each node holds when ``instance`` starts."""
        held: dict[NodeId, list[Item]] = {}
        kind = self.kind
        if kind is OperationKind.SCATTER:
            assert self.source is not None
            held[self.source] = [
                Item.message(t, instance=instance) for t in self.targets
            ]
        elif kind is OperationKind.BROADCAST:
            assert self.source is not None
            held[self.source] = [Item.broadcast(instance)]
        elif kind in (OperationKind.GATHER, OperationKind.ALLGATHER):
            for p in self.participants:
                held.setdefault(p, []).append(Item.message(p, instance=instance))
        elif kind in _REDUCTIONS:
            for i, p in enumerate(self.participants):
                held.setdefault(p, []).append(self.partial(i, instance))
        else:
            for j in self.sources:
                held[j] = [Item.message(j, k, instance=instance) for k in self.targets if k != j]
        return held

    def required_items(self, instance: int = 0) -> dict[NodeId, list[Item]]:
        """What each node must hold for ``instance`` to be complete."""
        need: dict[NodeId, list[Item]] = {}
        kind = self.kind
        if kind is OperationKind.SCATTER:
            for t in self.targets:
                need.setdefault(t, []).append(Item.message(t, instance=instance))
        elif kind is OperationKind.BROADCAST:
            for t in self.targets:
                need[t] = [Item.broadcast(instance)]
        elif kind is OperationKind.GATHER:
            assert self.target is not None
            need[self.target] = [Item.message(p, instance=instance) for p in self.participants]
        elif kind is OperationKind.ALLGATHER:
            pieces = [Item.message(p, instance=instance) for p in self.participants]
            for p in self.participants:
                need[p] = list(pieces)
        elif kind is OperationKind.REDUCE:
            assert self.target is not None
            need[self.target] = [self.full_reduction(instance)]
        elif kind is OperationKind.ALLREDUCE:
            for p in self.participants:
                need[p] = [self.full_reduction(instance)]
        else:
            for k in self.targets:
                need[k] = [Item.message(j, k, instance=instance) for j in self.sources if j != k]
        return {node: items for node, items in need.items() if items}

    def to_dict(self) -> dict[str, object]:
        """The operation as a scenario-file mapping (only the fields that matter)."""
        out: dict[str, object] = {"type": self.kind.value}
        if self.kind in _ROOTED_OUT:
            out.update(source=self.source, targets=list(self.targets))
        elif self.kind in _WITH_PARTICIPANTS:
            out["participants"] = list(self.participants)
            if self.target is not None:
                out["target"] = self.target
        else:
            out.update(sources=list(self.sources), targets=list(self.targets))
        if self.is_reduction:
            out["commutative"] = self.commutative
        if self.size != 1:
            out["size"] = format_rational(self.size)
        return out


def _check_node(platform: Platform, node: NodeId, path: str) -> None:
    if node not in platform:
        raise OperationError("unknown node id", path=path, value=node)
    if platform.node(node).router:
        raise OperationError("a router cannot be an endpoint of an operation", path=path,
                             value=node)


def _check_nodes(platform: Platform, nodes: Iterable[NodeId], path: str) -> None:
    seen: set[NodeId] = set()
    for i, node in enumerate(nodes):
        _check_node(platform, node, f"{path}[{i}]")
        if node in seen:
            raise OperationError("node listed twice", path=f"{path}[{i}]", value=node)
        seen.add(node)


def _listed(key: str, index: int, default: str | None) -> tuple[str, str]:
    """Where an error about the ``index``-th node of the operation's list ``key`` points:
    ``("operation.KEY[i]", "")`` for a list the file gives, ``("operation", " (in the
    default KEY: DEFAULT)")`` for one left to its default (described by ``default``),
    which the file does not have: ``operation.targets[0]`` named a key it lacks."""
    if default is None:
        return f"operation.{key}[{index}]", ""
    return "operation", f" (in the default {key}: {default})"


def _check_all_pairs(
    platform: Platform, sources: Iterable[NodeId], targets: Iterable[NodeId], key: str,
    default: str | None = None,
) -> None:
    """Every target reachable from every source, else an error naming the first target
    missed (at ``operation.KEY[i]``, or the default list, :func:`_listed`)."""
    import networkx as nx  # lazily, as Platform.graph

    targets = list(targets)
    graph = platform.graph
    # Nodes of one strongly connected component reach the same nodes: one
    # traversal per component, not per source (a ring of thousands is one).
    component: dict[NodeId, int] = {}
    for k, members in enumerate(nx.strongly_connected_components(graph)):
        component.update(dict.fromkeys(members, k))
    unreachable: dict[int, list[int]] = {}  # component -> indexes of targets it misses
    for src in sources:
        k = component[src]
        if k not in unreachable:
            reachable = nx.descendants(graph, src) | {src}
            unreachable[k] = [i for i, dst in enumerate(targets) if dst not in reachable]
        if unreachable[k]:
            i = unreachable[k][0]
            path, where = _listed(key, i, default)
            raise OperationError(f"unreachable from {src}{where}", path=path, value=targets[i])
