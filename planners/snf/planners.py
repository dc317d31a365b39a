"""The ``snf``, ``optimal`` and ``fnf`` planners (Liu, Kuo and Wang 2007).

All three need the sender-time model among the processors involved: a
complete platform with ``c(p, q) = t(p)`` for every ``q`` (and, for a
reduction, compute time 0: combining is folded into ``t(p)``), one-port
nodes (unidirectional, or bidirectional: a one-shot reduction or broadcast
never needs a node to send and receive at once).  The destination of a
reduction is the scenario's ``target``; reductions must be commutative,
since these trees combine operands in whatever order they arrive.

Each tree serves twice: as a one-shot schedule (its ``makespan``) and,
reused instance after instance, as a pipelined series (the runner replays it
with :func:`portsim.simulator.engine.replay_series`); the tree's weight in
``trees`` is the rate such a series can reach at most, one over the busiest
port's load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from portsim.planners.base import FunctionPlanner, PlanResult, check_options, unsupported_reason
from portsim.planners.snf.broadcast import fastest_node_first
from portsim.planners.snf.dp import multi_class_table, naive_pair_count, two_class_table
from portsim.planners.snf.model import (
    SENDER_TIME_PORT_MODELS,
    ReductionTree,
    broadcast_schedule,
    earliest_possible,
    reduction_schedule,
    sender_times,
    tree_from_critical_path,
    weighted_tree,
)
from portsim.planners.snf.search import branch_and_bound
from portsim.planners.timing import PortClock
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform
from portsim.simulator.schedule import Schedule

__all__ = [
    "FNF_PLANNER",
    "OPTIMAL_METHODS",
    "OPTIMAL_PLANNER",
    "SNF_PLANNER",
    "InstanceTooLarge",
    "fastest_node_first_broadcast",
    "optimal_reduction",
    "optimal_reduction_tree",
    "slowest_node_first",
    "slowest_node_first_plan",
]

OPTIMAL_METHODS = ("auto", "two-class", "k-class", "branch-and-bound")
"""Values of the ``method`` option of ``optimal``."""

_DP_WORK_LIMIT = 50_000_000
"""Largest estimated k-class DP work (pairs examined) ``optimal`` attempts."""

_TABLE_CELL_LIMIT = 4_000_000
"""Largest two-class table ``(f + 1) (s + 1)`` ``optimal`` fills."""

_SEARCH_NODE_LIMIT = 2_000_000
"""Most search-tree nodes ``optimal`` lets the branch and bound examine under
``method: auto`` (about 10^5 a second: some 20 s)."""


class InstanceTooLarge(PlannerError):
    """No exact method fits the instance within the limits (an outcome, not misuse)."""


def _processors(platform: Platform, operation: Operation) -> list[NodeId]:
    """The processors taking part: the only nodes these planners use (direct links)."""
    op = operation.resolve(platform)
    return list(dict.fromkeys([*op.initial_items(), *op.required_items()]))


def _unsupported(name: str, operations: frozenset[OperationKind], platform: Platform,
                 operation: Operation) -> str | None:
    """:func:`unsupported_reason`, the port models checked on the processors taking part."""
    nodes = (_processors(platform, operation)
             if OperationKind(operation.kind) in operations else None)
    return unsupported_reason(name, operations, SENDER_TIME_PORT_MODELS, platform, operation,
                              nodes=nodes)


def _reduction_problem(
    name: str, platform: Platform, operation: Operation
) -> tuple[Operation, dict[NodeId, Fraction]] | PlanResult:
    """Resolve a commutative reduction on a sender-time platform, or say why not."""
    op = operation.resolve(platform)
    if not op.commutative:
        how = ("slowest node first, any tree shape" if name == SNF else
               "its trees combine the participants' values in any order")
        return PlanResult.unsupported(
            name, f"{name} reorders operands ({how}): the reduction must be declared "
                  "commutative: true")
    # the processors: the participants, then a target that holds no operand
    # (the destination of the model all the same, receiving only)
    times = sender_times(platform, _processors(platform, op), size=op.size)
    if isinstance(times, str):
        return PlanResult.unsupported(name, f"{name} needs the sender-time model: {times}")
    return op, times


def slowest_node_first(
    times: dict[NodeId, Fraction], destination: NodeId, participants: Sequence[NodeId]
) -> ReductionTree:
    """The SNF reduction tree (Liu–Kuo–Wang section 4).

    The ``n - 1`` processors other than ``destination`` are sorted by
    non-increasing ``t`` (ties: participant order) and given to EP (Fig. 2);
    receivers by Lemma 1.  At most twice the optimum (Theorem 2); optimal
    when every time is a power of two times the fastest (Theorem 1), or with
    two classes whose ratio is at least 2 (Theorem 4).

    Examples
    --------
    Fig. 8 with ``x = 3/2``: SNF takes ``x + 3``.

    >>> from fractions import Fraction as F
    >>> times = {**{f"S{i}": F(3, 2) for i in range(4)}, **{f"F{i}": F(1) for i in range(8)}}
    >>> slowest_node_first(times, "S0", list(times)).makespan
    Fraction(9, 2)
    """
    rank = {p: i for i, p in enumerate(participants)}
    senders = sorted((p for p in participants if p != destination),
                     key=lambda p: (-times[p], rank[p]))
    return earliest_possible(senders, times, destination)


def _classes(times: dict[NodeId, Fraction], senders: Sequence[NodeId]
             ) -> tuple[list[Fraction], dict[Fraction, list[NodeId]]]:
    by_time: dict[Fraction, list[NodeId]] = {}
    for p in senders:
        by_time.setdefault(times[p], []).append(p)
    return sorted(by_time), by_time


def optimal_reduction_tree(
    times: dict[NodeId, Fraction],
    destination: NodeId,
    participants: Sequence[NodeId],
    *,
    method: str = "auto",
) -> tuple[ReductionTree, list[str]]:
    """An optimal reduction tree and notes saying how it was found.

    Parameters
    ----------
    times:
        ``t(p)`` of every participant.
    destination:
        The reduction destination (given, Liu–Kuo–Wang section 2).
    participants:
        Every processor (the destination included).
    method:
        ``"auto"`` (below), ``"two-class"`` (section 5.3, with the monotone
        pruning of sections 5.3.3–5.3.4), ``"k-class"`` (Theorem 6) or
        ``"branch-and-bound"`` (section 6.2, run to the end when forced).

    Returns
    -------
    (ReductionTree, list of str)

    Raises
    ------
    PlannerError
        On an unknown method, ``two-class`` with another number of classes,
        or an instance too large for every exact method.

    Notes
    -----
    ``auto`` picks the method expected to be fastest: one class is equation
    (3) (SNF is then optimal); two classes, the monotone DP, whose time is
    polynomial and predictable (0.04 s for the whole table up to
    ``T(150, 150)``); three or more, branch and bound, with a node budget
    proportional to the estimated work of the k-class DP, and that DP if the
    budget runs out.  Measured medians on random clusters (class times drawn
    from 1..10): 3 classes and 21 processors, branch and bound 0.003 s
    (about 800 nodes) against 0.01 s for the k-class DP; 3 classes and 41
    processors, 0.15 s against 0.38 s; 4 classes and 21 processors, 0.01 s
    against 0.07 s.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> times = {**{f"S{i}": F(3, 2) for i in range(4)}, **{f"F{i}": F(1) for i in range(8)}}
    >>> tree, notes = optimal_reduction_tree(times, "S0", list(times))
    >>> tree.makespan
    Fraction(4, 1)
    """
    _check_method(method)
    senders = [p for p in participants if p != destination]
    classes, by_time = _classes(times, senders)
    counts = [len(by_time[t]) for t in classes]
    k = len(classes)
    notes: list[str] = []
    if not senders:
        return ReductionTree(destination, ()), ["a single participant: nothing to send"]
    if method == "two-class" and k != 2:
        raise PlannerError(f"the two-class DP needs two classes of senders, not {k}",
                           path="planners.optimal.method", value=method)
    forced = method != "auto"
    if method == "auto":
        method = "k-class" if k <= 1 else "two-class" if k == 2 else "branch-and-bound"
    if method == "two-class":
        if (counts[0] + 1) * (counts[1] + 1) > _TABLE_CELL_LIMIT:
            raise InstanceTooLarge(
                f"the T(f, s) table would have more than {_TABLE_CELL_LIMIT} cells; use snf "
                "(optimal when t_s >= 2 t_f, Theorem 4; a 2-approximation otherwise)",
                value=counts)
        table = two_class_table(counts[0], counts[1], classes[0], classes[1])
        root = table.tree(counts[0], counts[1])
        cell = table.references[counts[0]][counts[1]]
        naive = sum(naive_pair_count(f, s) for f in range(counts[0] + 1)
                    for s in range(counts[1] + 1))
        notes.append(
            f"method: two-class DP T(f, s) of Liu–Kuo–Wang section 5.3 with the monotone "
            f"pruning of sections 5.3.3–5.3.4; T({counts[0]}, {counts[1]}) = "
            f"{format_rational(table.value(counts[0], counts[1]))}, t_f = "
            f"{format_rational(classes[0])}, t_s = {format_rational(classes[1])}; "
            f"{table.total_references} table pairs examined ({cell} for the last cell), "
            f"the naive DP examines {naive}")
        tree = tree_from_critical_path([root] if root else [], by_time, destination)
        return _checked(tree, table.value(counts[0], counts[1])), notes
    if method == "branch-and-bound":
        c = counts
        work = math.prod((x + 1) * (x + 2) // 2 for x in c[:-1]) * (c[-1] + 1) * (
            c[-1].bit_length() + 1) if c else 0
        budget = min(max(20_000, work // 4), _SEARCH_NODE_LIMIT)
        order = sorted(range(k), key=lambda j: -classes[j])
        result = branch_and_bound(classes, counts, node_limit=None if forced else budget)
        if result.complete:
            pools = {t: list(by_time[t]) for t in classes}
            sequence = [pools[classes[j]].pop(0) for j in result.sequence]
            notes.append(
                f"method: branch and bound of Liu–Kuo–Wang section 6.2 (SNF-first order, "
                f"Corollary 1 pruning, bound pruning) over {k} classes "
                f"{', '.join(f'{c[j]} x {format_rational(classes[j])}' for j in order)}: "
                f"{result.nodes} search-tree nodes examined")
            return _checked(earliest_possible(sequence, times, destination),
                            result.makespan), notes
        notes.append(f"branch and bound stopped at its budget of {budget} nodes; "
                     "falling back on the k-class DP")
        method = "k-class"
    work = math.prod(x + 1 for x in counts)
    if work * max(1, math.prod(x + 1 for x in counts[:-1])) > _DP_WORK_LIMIT:
        searched = (f"branch and bound stopped at its budget of {budget} nodes, "
                    if notes else "")
        raise InstanceTooLarge(
            f"no exact method fits this instance ({k} classes, counts {counts}: "
            f"{searched}the k-class DP would examine more than {_DP_WORK_LIMIT} pairs); "
            "use snf (a 2-approximation, Theorem 2)", value=counts)
    multi = multi_class_table(classes, counts)
    root = multi.tree()
    what = "closed form (3): one class, SNF is optimal" if k <= 1 else (
        f"k-class DP of Liu–Kuo–Wang Theorem 6 over {k} classes; {multi.references} table "
        "pairs examined")
    notes.append(f"method: {what}")
    tree = tree_from_critical_path([root] if root else [], by_time, destination)
    return _checked(tree, multi.value()), notes


def _checked(tree: ReductionTree, value: Fraction) -> ReductionTree:
    """The tree, after checking that it is as long as the exact method said."""
    if tree.makespan != value:
        raise PlannerError(f"optimal bug: the method found {value}, its tree takes "
                           f"{tree.makespan}", value=str(tree.makespan))
    return tree


def _finish(
    name: str,
    platform: Platform,
    op: Operation,
    trees: Sequence[ReductionTree],
    notes: list[str],
    broadcast_item: Item | None = None,
) -> PlanResult:
    """Schedule the tree(s), check the makespan and build the result."""
    clock, _ = reduction_schedule(platform, op, trees[0])
    if len(trees) > 1:
        assert broadcast_item is not None
        broadcast_schedule(clock, trees[1], broadcast_item)
    schedule = Schedule(platform, op, clock.events)
    makespan = trees[-1].makespan
    if len(trees) > 1 and not trees[1].transmissions:
        makespan = trees[0].makespan
    finish = Fraction(0)
    for node, items in op.required_items().items():
        for item in items:
            at = clock.available(node, item)
            if at is None:
                raise PlannerError(f"{name} bug: {node} never holds {item}", value=str(item))
            finish = max(finish, at)
    if finish != makespan:
        raise PlannerError(f"{name} bug: tree makespan {makespan}, schedule {finish}",
                           value=str(finish))
    edges = [e for tree in trees for e in tree.edges]
    tree = weighted_tree(platform, schedule, edges)
    if tree.weight:
        notes.append(f"reused for a pipelined series, this tree completes at most "
                     f"{format_rational(tree.weight)} operations per time unit (busiest port)")
    return PlanResult.ok(name, schedule, makespan=makespan, trees=[tree], notes=notes)


def slowest_node_first_plan(
    platform: Platform, operation: Operation, **options: Any
) -> PlanResult:
    """Plan a reduce or all-reduce by slowest node first (Liu–Kuo–Wang sections 4, 5.2).

    Parameters
    ----------
    platform:
        A sender-time platform (see the module docstring).
    operation:
        A commutative ``reduce`` (destination: its ``target``) or
        ``allreduce``.
    **options:
        None are accepted.

    Returns
    -------
    PlanResult
        ``ok`` with a one-shot schedule and its exact ``makespan``;
        ``unsupported`` (with the reason) for a non-commutative reduction,
        another operation or a platform outside the sender-time model.

    Notes
    -----
    reduce: :func:`slowest_node_first`, at most twice the optimum
    (Theorem 2).  allreduce (section 5.2, Theorem 3): SNF reduction onto the
    fastest participant (ties: the first), then a fastest-node-first
    broadcast of the result from it; at most 3.5 times the optimal
    all-reduce (2 for the reduction, 1.5 for FNF from the fastest source).

    Examples
    --------
    >>> from portsim.scenarios.generators import sender_times_platform
    >>> p = sender_times_platform({"A": 2, "B": 1, "C": 1, "D": 1})
    >>> op = Operation(OperationKind.REDUCE, target="D", commutative=True)
    >>> slowest_node_first_plan(p, op).makespan
    Fraction(3, 1)
    """
    check_options(SNF, options, ())
    reason = _unsupported(SNF, _SNF_OPERATIONS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(SNF, reason)
    problem = _reduction_problem(SNF, platform, operation)
    if isinstance(problem, PlanResult):
        return problem
    op, times = problem
    participants = list(times)
    if op.kind is OperationKind.REDUCE:
        assert op.target is not None
        tree = slowest_node_first(times, op.target, participants)
        notes = ["slowest node first + EP (Liu–Kuo–Wang sections 3–4): at most twice the "
                 "optimal reduction time (Theorem 2)"]
        return _finish(SNF, platform, op, [tree], notes)
    rank = {p: i for i, p in enumerate(participants)}
    root = min(participants, key=lambda p: (times[p], rank[p]))
    reduce_tree = slowest_node_first(times, root, participants)
    others = [p for p in participants if p != root]
    spread = fastest_node_first(root, others, times, ready=reduce_tree.makespan)
    notes = [f"all-reduce of Liu–Kuo–Wang section 5.2: SNF reduction onto the fastest "
             f"participant {root} (ends at {format_rational(reduce_tree.makespan)}), then "
             f"fastest-node-first broadcast from it; at most 3.5 times the optimum (Theorem 3)"]
    return _finish(SNF, platform, op, [reduce_tree, spread], notes,
                   broadcast_item=op.full_reduction())


def _check_method(method: object) -> None:
    """Raise :class:`PlannerError` unless ``method`` is one of :data:`OPTIMAL_METHODS`."""
    if method not in OPTIMAL_METHODS:
        raise PlannerError("unknown method; valid: " + ", ".join(OPTIMAL_METHODS),
                           path="planners.optimal.method", value=method)


def _check_optimal_options(options: Mapping[str, Any]) -> None:
    _check_method(options.get("method", "auto"))


def optimal_reduction(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan an optimal one-shot reduction in the sender-time model.

    Parameters
    ----------
    platform:
        A sender-time platform (see the module docstring).
    operation:
        A commutative ``reduce``; the destination is its ``target``.
    **options:
        ``method``: ``auto`` (default), ``two-class``, ``k-class`` or
        ``branch-and-bound`` (see :func:`optimal_reduction_tree`).

    Returns
    -------
    PlanResult
        ``ok`` with the optimal one-shot schedule, its ``makespan`` and, in
        ``notes``, the exact method used and its work (table pairs or
        search-tree nodes) and the SNF length for comparison.

    Raises
    ------
    PlannerError
        On an unknown option or method, or an instance too large for every
        exact method.

    Examples
    --------
    >>> from portsim.scenarios.generators import sender_times_platform
    >>> times = {**{f"S{i}": "3/2" for i in range(4)}, **{f"F{i}": 1 for i in range(8)}}
    >>> op = Operation(OperationKind.REDUCE, target="S0", commutative=True)
    >>> optimal_reduction(sender_times_platform(times), op).makespan
    Fraction(4, 1)
    """
    check_options(OPTIMAL, options, ("method",))
    _check_optimal_options(options)
    reason = _unsupported(OPTIMAL, _OPTIMAL_OPERATIONS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(OPTIMAL, reason)
    problem = _reduction_problem(OPTIMAL, platform, operation)
    if isinstance(problem, PlanResult):
        return problem
    op, times = problem
    assert op.target is not None
    method = str(options.get("method", "auto"))
    senders = [p for p in times if p != op.target]
    k = len(_classes(times, senders)[0])
    if method == "two-class" and senders and k != 2:
        # a valid option this instance does not fit: an outcome, not misuse
        return PlanResult.unsupported(
            OPTIMAL, f"method two-class needs two classes of sender times among the "
                     f"participants other than the target, here {k}: use method auto, "
                     f"k-class or branch-and-bound")
    try:
        tree, notes = optimal_reduction_tree(times, op.target, list(times),
                                             method=method)
    except InstanceTooLarge as err:
        return PlanResult.error(OPTIMAL, str(err))
    snf = slowest_node_first(times, op.target, list(times)).makespan
    notes.append(f"slowest node first would take {format_rational(snf)}")
    return _finish(OPTIMAL, platform, op, [tree], notes)


def fastest_node_first_broadcast(
    platform: Platform, operation: Operation, **options: Any
) -> PlanResult:
    """Plan a broadcast by fastest node first in the sender-time model (section 5.2).

    Parameters
    ----------
    platform:
        A platform where the source and targets form a sender-time cluster
        (compute times are irrelevant to a broadcast).
    operation:
        A ``broadcast``.
    **options:
        None are accepted.

    Returns
    -------
    PlanResult
        ``ok`` with the one-shot schedule and its ``makespan``, or
        ``unsupported`` with the reason.

    Examples
    --------
    >>> from portsim.scenarios.generators import sender_times_platform
    >>> p = sender_times_platform({"S": 1, "A": 3, "B": 1, "C": 2})
    >>> fastest_node_first_broadcast(p, Operation(OperationKind.BROADCAST, source="S")).makespan
    Fraction(2, 1)
    """
    check_options(FNF, options, ())
    reason = _unsupported(FNF, _FNF_OPERATIONS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(FNF, reason)
    op = operation.resolve(platform)
    assert op.source is not None
    # A target may be the source itself: it holds the message from the start.
    targets = [t for t in op.targets if t != op.source]
    nodes = [op.source, *targets]
    times = sender_times(platform, nodes, size=op.size, zero_compute=False)
    if isinstance(times, str):
        return PlanResult.unsupported(FNF, f"{FNF} needs the sender-time model: {times}")
    tree = fastest_node_first(op.source, targets, times)
    clock = PortClock(platform, size=op.size)
    clock.hold(op.source, Item.broadcast())
    broadcast_schedule(clock, tree, Item.broadcast())
    schedule = Schedule(platform, op, clock.events)
    weighted = weighted_tree(platform, schedule, tree.edges)
    notes = ["fastest node first (Liu–Kuo–Wang section 5.2, refs. [2, 25]): at most twice "
             "the fastest broadcast, 1.5 times when the source is the fastest processor"]
    if weighted.weight:
        notes.append(f"reused for a pipelined series, this tree completes at most "
                     f"{format_rational(weighted.weight)} operations per time unit "
                     "(busiest port)")
    return PlanResult.ok(FNF, schedule, makespan=tree.makespan, trees=[weighted], notes=notes)


SNF = "snf"
OPTIMAL = "optimal"
FNF = "fnf"
_SNF_OPERATIONS = frozenset({OperationKind.REDUCE, OperationKind.ALLREDUCE})
_OPTIMAL_OPERATIONS = frozenset({OperationKind.REDUCE})
_FNF_OPERATIONS = frozenset({OperationKind.BROADCAST})

SNF_PLANNER = FunctionPlanner(
    name=SNF,
    function=slowest_node_first_plan,
    operations=_SNF_OPERATIONS,
    port_models=SENDER_TIME_PORT_MODELS,
    description=("slowest node first + EP (Liu–Kuo–Wang), sender-time model, commutative "
                 "reduce (2-approximation) and all-reduce (SNF then FNF, 3.5-approximation)"),
    port_nodes=_processors,
)
"""Slowest node first as a :class:`~portsim.planners.base.Planner`."""

OPTIMAL_PLANNER = FunctionPlanner(
    name=OPTIMAL,
    function=optimal_reduction,
    operations=_OPTIMAL_OPERATIONS,
    port_models=SENDER_TIME_PORT_MODELS,
    description=("exact one-shot commutative reduce in the sender-time model: two-class DP, "
                 "k-class DP or branch and bound (Liu–Kuo–Wang), the fastest per instance"),
    options=frozenset({"method"}),
    check_options=_check_optimal_options,
    port_nodes=_processors,
)
"""The exact reduction as a :class:`~portsim.planners.base.Planner`."""

FNF_PLANNER = FunctionPlanner(
    name=FNF,
    function=fastest_node_first_broadcast,
    operations=_FNF_OPERATIONS,
    port_models=SENDER_TIME_PORT_MODELS,
    description="fastest node first broadcast in the sender-time model (one-shot)",
    port_nodes=_processors,
)
"""Fastest node first as a :class:`~portsim.planners.base.Planner`."""
