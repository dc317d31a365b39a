"""The ``ring`` planner: the ring collectives users know from NCCL and MPI.

The participants, in their order, form a ring ``p_0 -> p_1 -> ... -> p_{N-1}
-> p_0``; each hop goes along a cheapest path of the platform (sum of the
unit-message costs ``c``), through switches and routers, store and forward.
Exact start times come from the list scheduler of :mod:`portsim.planners.timing`,
which keeps every port, link and CPU to its capacity.  The schedule is
one-shot; a series of operations reusing it pipelines along the ring
(:func:`portsim.simulator.engine.replay_series`), which is how it is compared with
the ``lp`` bound.

- **allgather**: in step ``s = 0 .. N-2`` every ``p_i`` forwards to
  ``p_{i+1}`` the message of ``p_{i-s}`` (the one it received in the step
  before; its own in step 0); the hops are placed both step after step and
  each as soon as it can start, whatever its step, and the order that ends
  first is kept (the step order on a tie);
- **broadcast**: the source, then the targets in their order, form a chain
  ``source -> t_1 -> t_2 -> ...``: each target forwards the message to the
  next one (pipelined along the ring across the operations of a series);
- **reduce**: the partial result travels along the ring and each
  participant adds its own value: ``p_0`` sends ``v[0,0]``, ``p_i`` computes
  ``v[0,i-1] ⊕ v[i,i] -> v[0,i]`` and sends it on.  With a commutative
  operator the ring starts right after the target, so that it ends on the
  target (sets ``v{...}``); so it does without when the target is ``p_0``:
  ``v[1,N-1]`` travels ``p_1 .. p_{N-1}`` and ``p_0`` computes ``v[0,0] ⊕
  v[1,N-1]``; otherwise (the order demands it, or the target
  is not a participant) it runs ``p_0 .. p_{N-1}`` and the result then goes
  from ``p_{N-1}`` to the target along a cheapest path;
- **allreduce**: a reduce onto ``p_{N-1}`` (``p_0 .. p_{N-1}``, no operand
  reordered), then a broadcast of ``v[0,N-1]`` along the ring
  ``p_{N-1} -> p_0 -> ... -> p_{N-2}``.

Scatter, gather and all-to-all are not ring collectives: ``unsupported``.
"""

from __future__ import annotations

import heapq
import itertools
from fractions import Fraction
from typing import Any

from portsim.planners.base import FunctionPlanner, PlanResult, check_options, unsupported_reason
from portsim.planners.timing import PortClock, cheapest_path
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Schedule

__all__ = ["RING_OPERATIONS", "RING_PLANNER", "RING_PORT_MODELS", "ring_collective"]

NAME = "ring"

RING_OPERATIONS: frozenset[OperationKind] = frozenset({
    OperationKind.ALLGATHER,
    OperationKind.BROADCAST,
    OperationKind.REDUCE,
    OperationKind.ALLREDUCE,
})
"""Operations the ring planner handles."""

RING_PORT_MODELS: frozenset[PortKind] = frozenset(PortKind)
"""Port models the ring planner handles (all of them, per node)."""

_DESCRIPTION = ("ring collectives (NCCL/MPI style): allgather, broadcast and reduce along "
                "the participant ring, allreduce as reduce then broadcast; each hop on a "
                "cheapest path through switches (one-shot)")


def ring_collective(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan an allgather, broadcast, reduce or allreduce along the participant ring.

    Parameters
    ----------
    platform:
        Any platform; every port model, per node.  Hops between ring
        neighbours follow a cheapest path (routers may relay).
    operation:
        The collective (resolved against ``platform`` here).
    **options:
        None are accepted.

    Returns
    -------
    PlanResult
        ``ok`` with a one-shot schedule and its exact ``makespan``;
        ``unsupported`` for scatter, gather and all-to-all, and when a ring
        neighbour (or the target) is out of reach.

    Raises
    ------
    PlannerError
        On any option.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1), ("C", "A", 1)])
    >>> r = ring_collective(p, Operation(OperationKind.ALLGATHER))
    >>> r.makespan, len(r.schedule.events)
    (Fraction(2, 1), 6)
    """
    check_options(NAME, options, ())
    reason = unsupported_reason(NAME, RING_OPERATIONS, RING_PORT_MODELS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(NAME, reason)
    op = operation.resolve(platform)
    clock = _clock(platform, op)
    try:
        if op.kind is OperationKind.ALLGATHER:
            clock = _allgather(platform, op)
        elif op.kind is OperationKind.BROADCAST:
            assert op.source is not None
            # a target may be the source itself, which holds the message already
            _chain(clock, [op.source, *(t for t in op.targets if t != op.source)],
                   Item.broadcast())
        elif op.kind is OperationKind.REDUCE:
            assert op.target is not None
            _reduce(clock, op, op.target)
        else:
            last = op.participants[-1]
            _reduce(clock, op, last)
            ring = list(op.participants)
            _chain(clock, [last, *ring[:-1]], op.full_reduction())
    except PlannerError as err:  # a ring neighbour out of reach
        # SPEC.md: a missing path a planner needs makes it `unsupported`
        return PlanResult.unsupported(
            NAME, f"ring needs a path from each participant to the next one on the "
                  f"ring (and to the target): {err.message}")
    notes: list[str] = []
    if op.kind is OperationKind.REDUCE and not op.commutative \
            and op.target not in (op.participants[0], op.participants[-1]):
        notes.append(f"non-commutative reduce: the ring runs in operand order "
                     f"{op.participants[0]} .. {op.participants[-1]}, then v[0,"
                     f"{len(op.participants) - 1}] goes to the target {op.target}")
    elif op.kind is OperationKind.REDUCE and op.target not in op.participants:
        notes.append(f"the target {op.target} is not a participant: the ring runs "
                     f"{op.participants[0]} .. {op.participants[-1]}, then the result "
                     f"goes to {op.target}")
    # (multiport: a later hop may reach a node sooner than an earlier one did)
    schedule = Schedule(platform, op, clock.first_deliveries())
    return PlanResult.ok(NAME, schedule, makespan=clock.completion_time(op), notes=notes)


RING_PLANNER = FunctionPlanner(
    name=NAME,
    function=ring_collective,
    operations=RING_OPERATIONS,
    port_models=RING_PORT_MODELS,
    description=_DESCRIPTION,
)
"""The ring planner as a :class:`~portsim.planners.base.Planner`."""


def _hop(clock: PortClock, src: NodeId, dst: NodeId, item: Item, *,
         skip_held: bool = False) -> None:
    """Bring ``item`` from ring node ``src`` to its ring neighbour ``dst`` on the
    cheapest path for the message's size (``skip_held``: see :meth:`PortClock.route`)."""
    if src != dst:
        clock.route(cheapest_path(clock.platform, src, dst, clock.size), item,
                    skip_held=skip_held)


def _clock(platform: Platform, op: Operation) -> PortClock:
    """A clock on which every node holds its initial items."""
    clock = PortClock(platform, size=op.size)
    for node, items in op.initial_items().items():
        for item in items:
            clock.hold(node, item)
    return clock


def _allgather(platform: Platform, op: Operation) -> PortClock:
    """The ring allgather's sends placed step by step and as soon as possible,
    whichever ends first (the step order on a tie).

    In step order, every hop of step ``s`` is placed before any of step ``s +
    1``, route after route, and a hop never goes before one placed earlier on
    its ports or link: on switches with fewer ports than links (``multiport:k``,
    one-port) each route waited for the routes before it in the ring, and a
    fat tree of k = 4 under ``multiport:1`` took 172 where the earliest-start
    order takes 88.  That order can also lose a little (39 against 41 under
    ``multiport:2`` there), hence both.
    """
    ring = op.participants
    n = len(ring)
    # One cheapest path per ring neighbour, searched once, not once a step:
    # n (n - 1) Dijkstras took 60 s of the plan at 200 random nodes, over 5
    # minutes at 500.
    paths = [cheapest_path(platform, ring[i], ring[(i + 1) % n], op.size) for i in range(n)]
    in_steps = _clock(platform, op)
    for step in range(n - 1):
        for i in range(n):
            if len(paths[i]) > 1:
                in_steps.route(paths[i], Item.message(ring[(i - step) % n]))
    earliest = _clock(platform, op)
    _allgather_earliest_first(earliest, ring, paths)
    if earliest.completion_time(op) < in_steps.completion_time(op):
        return earliest
    return in_steps


def _allgather_earliest_first(clock: PortClock, ring: tuple[NodeId, ...],
                              paths: list[list[NodeId]]) -> None:
    """Place the allgather's hops one at a time, always the one that can start first.

    Route ``i`` (``ring[i] -> ring[i + 1]`` on ``paths[i]``) forwards in step
    ``s`` the message of ``ring[i - s]``, which route ``i - 1`` brought to
    ``ring[i]`` in step ``s - 1``.  A route's next hop can start no earlier
    as other hops are placed (they only take ports and links), so the heap's
    keys are lower ends: a popped key that has grown is pushed back.
    """
    n = len(ring)
    hop = [1] * n  # the index in paths[i] of route i's next hop's receiver
    step = [0] * n
    done = [-1] * n  # the last step route i has finished
    waiting: set[int] = set()  # routes whose next step's message has not reached them
    heap: list[tuple[Fraction, int]] = []

    def offer(i: int) -> None:
        if step[i] >= n - 1:
            return
        if step[i] > 0 and done[(i - 1) % n] < step[i] - 1 and len(paths[(i - 1) % n]) > 1:
            waiting.add(i)
            return
        item = Item.message(ring[(i - step[i]) % n])
        heapq.heappush(heap, (clock.send_start(paths[i][hop[i] - 1], paths[i][hop[i]], item), i))

    for i in range(n):
        if len(paths[i]) > 1:
            offer(i)
    while heap:
        key, i = heapq.heappop(heap)
        item = Item.message(ring[(i - step[i]) % n])
        u, v = paths[i][hop[i] - 1], paths[i][hop[i]]
        start = clock.send_start(u, v, item)
        if start > key:
            heapq.heappush(heap, (start, i))
            continue
        clock.send(u, v, item)
        hop[i] += 1
        if hop[i] == len(paths[i]):
            done[i], hop[i] = step[i], 1
            step[i] += 1
            offer(i)
            following = (i + 1) % n
            if following in waiting:
                waiting.discard(following)
                offer(following)
        else:
            offer(i)


def _chain(clock: PortClock, order: list[NodeId], item: Item) -> None:
    """Forward ``item`` along ``order``, each node to the next.

    A processor that already holds ``item`` (it relayed it on the cheapest path
    to an earlier node of the chain, or it is the source) is not sent it again,
    and forwards its own copy: on the line A - B - C, the allreduce's result
    goes C -> B -> A, and A does not send it back to B."""
    for src, dst in itertools.pairwise(order):
        _hop(clock, src, dst, item, skip_held=True)


def _reduce(clock: PortClock, op: Operation, target: NodeId) -> None:
    """Accumulate along the ring and leave the full reduction on ``target``."""
    ring = list(op.participants)
    n = len(ring)
    if not op.commutative and n > 1 and target == ring[0]:
        # v[1, N-1] along p_1 .. p_{N-1}, then p_0 computes v[0,0] ⊕ v[1,N-1]:
        # the operands' order, ending on the target as the commutative ring does
        acc, holder = op.partial(1), ring[1]
        for index in range(2, n):
            _hop(clock, holder, ring[index], acc)
            result = Item.interval(1, index)
            clock.compute(ring[index], (acc, op.partial(index)), result)
            acc, holder = result, ring[index]
        _hop(clock, holder, target, acc)
        clock.compute(target, (op.partial(0), acc), Item.interval(0, n - 1))
        return
    if op.commutative and target in ring:  # start right after the target, end on it
        t = ring.index(target)
        order = [(t + 1 + j) % n for j in range(n)]
    else:  # the operands' order (or a target outside the ring): the ring's
        order = list(range(n))
    acc = op.partial(order[0])
    covered = [order[0]]
    holder = ring[order[0]]
    for index in order[1:]:
        node = ring[index]
        _hop(clock, holder, node, acc)
        covered.append(index)
        result = (Item.subset(covered) if op.commutative
                  else Item.interval(0, index))
        clock.compute(node, (acc, op.partial(index)), result)
        acc, holder = result, node
    _hop(clock, holder, target, acc)
