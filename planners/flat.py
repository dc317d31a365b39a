"""The ``flat`` planner: the naive flat tree, a one-shot baseline.

The root (the source of a scatter or broadcast, the target of a gather or
reduce) deals with every other participant directly, one at a time, in
participant order.  Exact start times come from the list scheduler of
:mod:`portsim.planners.timing`.
"""

from __future__ import annotations

from typing import Any

from portsim.planners.base import (
    FunctionPlanner,
    PlanResult,
    check_options,
    unsupported_reason,
)
from portsim.planners.timing import PortClock, cheapest_path, cheapest_paths_from
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Schedule

__all__ = ["FLAT_OPERATIONS", "FLAT_PLANNER", "FLAT_PORT_MODELS", "flat_tree"]

NAME = "flat"

FLAT_OPERATIONS: frozenset[OperationKind] = frozenset({
    OperationKind.SCATTER,
    OperationKind.GATHER,
    OperationKind.BROADCAST,
    OperationKind.REDUCE,
})
"""Operations the flat tree handles."""

FLAT_PORT_MODELS: frozenset[PortKind] = frozenset(PortKind)
"""Port models the flat tree handles (all of them)."""

_DESCRIPTION = (
    "naive flat tree: the root or source deals with every other participant "
    "directly, one at a time, in participant order (one-shot)"
)


def flat_tree(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a scatter, gather, broadcast or reduce as a naive flat tree.

    Parameters
    ----------
    platform:
        The platform; every port model is supported, per node.
    operation:
        A scatter, gather, broadcast or reduce (resolved against
        ``platform`` here if it was not already).
    **options:
        None are accepted.

    Returns
    -------
    PlanResult
        ``ok`` with a one-shot :class:`~portsim.simulator.schedule.Schedule` whose
        events carry exact start times, and ``makespan``, the exact instant
        the operation completes; ``unsupported`` (with the reason) for any
        other operation.

    Raises
    ------
    PlannerError
        On any option.
    OperationError
        When the operation does not fit the platform (see
        :meth:`~portsim.simulator.operations.Operation.resolve`).

    Notes
    -----
    The flat tree is the naive baseline the tree heuristics and the
    steady-state linear programs are measured against.  The root is the
    source of a scatter or broadcast and the target of a gather or reduce.

    - scatter: the source sends ``m[k]`` to each target ``k``, in target order;
    - broadcast: the source sends ``b`` to each target, in target order;
    - gather: each participant other than the target, in participant order,
      sends ``m[k]`` to the target;
    - reduce: the target builds the product left to right.  It starts from
      ``v[0,0]`` (its own, or received from ``participants[0]``); then for
      ``i = 1 .. N-1`` it obtains ``v[i,i]`` (its own, or received from
      ``participants[i]``) and computes ``v[0,i-1] ⊕ v[i,i] -> v[0,i]``.  With
      a commutative operator the same steps use sets ``v{0..i-1}``,
      ``v{i}``.  Computes take the target's compute time, run one at a time
      and overlap the receives of later operands.

    A send over ``(u, v)`` lasts ``size * c(u, v)`` (``latency + size /
    bandwidth`` on a link with latency: :meth:`Platform.duration`).  A
    participant without a direct link to the root is reached along the
    cheapest path for the message size (sum of ``c``, or of the durations
    where links have latency), hop by hop, store and forward; routers may be
    intermediate hops.
    A broadcast copy leaves from the last node of its path that already
    holds ``b`` rather than re-sending ``b`` to it.

    Each event starts at the earliest instant when all its resources are free
    at once (per node: one send and one receive port when bidirectional, a
    single port when unidirectional, ``k`` of each for ``multiport:k``; one
    CPU) and its inputs are held, taking events in the order above without
    back-filling.  The root's communications never overlap one another, even
    on a multi-port root: it deals with one participant at a time.

    On a star whose root ``r`` is directly linked to every other participant
    (no latency), with message size ``s``, the makespan is

    - scatter and broadcast: ``s * sum_k c(r, k)`` (back-to-back sends);
    - gather: ``s * sum_k c(k, r)`` (back-to-back receives);
    - reduce with ``N >= 2`` participants and target compute time ``w``:
      ``max(A_0 + (N-1) w, max_{1 <= i <= N-1} A_i + (N-i) w)``, where
      ``A_i`` is when the target holds ``v_i``: 0 for its own, otherwise ``s``
      times the sum of ``c(p_j, r)`` over the participants ``j <= i`` other
      than the target (the receives are back to back).

    These are the same in every port model on a star (the root only sends or
    only receives, and computes use no port).  The models differ when
    messages are forwarded: a unidirectional intermediate node cannot
    receive the next message while it forwards the previous one, and a
    multi-port one forwards several at once.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["S", "A", "B", "C"],
    ...                    [("S", "A", 1), ("S", "B", 2), ("S", "C", 3)])
    >>> result = flat_tree(p, Operation(OperationKind.SCATTER, source="S"))
    >>> result.status, result.makespan
    ('ok', Fraction(6, 1))
    >>> [str(e.start) for e in result.schedule.events]
    ['0', '1', '3']
    """
    check_options(NAME, options, ())
    reason = unsupported_reason(NAME, FLAT_OPERATIONS, FLAT_PORT_MODELS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(NAME, reason)
    op = operation.resolve(platform)
    clock = PortClock(platform, size=op.size)
    for node, items in op.initial_items().items():
        for item in items:
            clock.hold(node, item)

    forwarded: list[str] = []
    if op.kind in (OperationKind.SCATTER, OperationKind.BROADCAST):
        assert op.source is not None
        paths = cheapest_paths_from(platform, op.source, op.size)  # one search, not one per target
        for k in op.targets:
            item = Item.message(k) if op.kind is OperationKind.SCATTER else Item.broadcast()
            _deliver(clock, op.source, k, item, root=op.source, forwarded=forwarded,
                     path=paths.get(k))
    elif op.kind is OperationKind.GATHER:
        assert op.target is not None
        for p in op.participants:
            if p != op.target:
                _deliver(clock, p, op.target, Item.message(p), root=op.target,
                         forwarded=forwarded)
    else:
        _reduce(clock, op, forwarded)

    schedule = Schedule(platform, op, clock.events)
    notes = tuple(forwarded)
    return PlanResult.ok(NAME, schedule, makespan=clock.completion_time(op), notes=notes)


FLAT_PLANNER = FunctionPlanner(
    name=NAME,
    function=flat_tree,
    operations=FLAT_OPERATIONS,
    port_models=FLAT_PORT_MODELS,
    description=_DESCRIPTION,
)
"""The flat tree as a :class:`~portsim.planners.base.Planner`."""


def _deliver(
    clock: PortClock,
    src: NodeId,
    dst: NodeId,
    item: Item,
    *,
    root: NodeId,
    forwarded: list[str],
    path: list[NodeId] | None = None,
) -> None:
    """Bring ``item`` from ``src`` to ``dst`` along the cheapest path (``path``, if found
    already).

    Hops touching ``root`` occupy the root's lane, so that the root's
    communications happen one at a time.  The path starts at its last node
    that already holds ``item`` (only a broadcast copy can be held on the way).
    """
    if path is None:  # not found already, or no path: cheapest_path says so
        path = cheapest_path(clock.platform, src, dst, clock.size)
    start = max(i for i, node in enumerate(path) if clock.holds(node, item))
    path = path[start:]
    if len(path) > 2:
        forwarded.append(f"{item} forwarded along {' -> '.join(path)}")
    clock.route(path, item, lanes_of={root: (("root", root),)})


def _reduce(clock: PortClock, op: Operation, forwarded: list[str]) -> None:
    """Left-to-right reduction on the target (see :func:`flat_tree`, Notes)."""
    target = op.target
    assert target is not None

    def obtain(index: int) -> Item:
        item = op.partial(index)
        owner = op.participants[index]
        if owner != target:
            _deliver(clock, owner, target, item, root=target, forwarded=forwarded)
        return item

    acc = obtain(0)
    for i in range(1, len(op.participants)):
        operand = obtain(i)
        result = Item.subset(range(i + 1)) if op.commutative else Item.interval(0, i)
        clock.compute(target, (acc, operand), result)
        acc = result
