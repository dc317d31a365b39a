"""The ``greedy``, ``fibonacci`` and ``binomial`` planners (reduce and allreduce)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from portsim.planners.base import (
    FunctionPlanner,
    PlanResult,
    check_options,
    missing_path,
    unsupported_reason,
)
from portsim.planners.timing import PortClock
from portsim.planners.trees._model import (
    ReductionTree,
    Strategy,
    canon_antoniu_bounds,
    greedy_tree,
    sink_positions,
    strategy_tree,
    tree_length,
)
from portsim.planners.trees._placement import (
    Placement,
    emit_tree,
    mean_costs,
    model_costs,
    pair_durations,
    place_by_labels,
    place_greedy,
    route,
    transfer_cost,
)
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.schedule import Schedule

__all__ = [
    "BINOMIAL_PLANNER",
    "FIBONACCI_PLANNER",
    "GREEDY_PLANNER",
    "TREE_OPERATIONS",
    "binomial_reduction",
    "fibonacci_reduction",
    "greedy_reduction",
]

TREE_OPERATIONS: frozenset[OperationKind] = frozenset({OperationKind.REDUCE,
                                                       OperationKind.ALLREDUCE})
"""Operations the tree planners handle."""

_ZERO = Fraction(0)

_ALGORITHM = {
    "greedy": "Algorithm 1 (greedy)",
    "fibonacci": "Fibonacci strategy (Algorithm 1 with d = c, section 7.3)",
    "binomial": "binomial strategy (Algorithm 1 with min(d, c) = 0, section 7.3)",
}


def _check_tree_options(name: str, concurrent_transfers: object, reducers: object) -> None:
    """Raise :class:`PlannerError` on a bad ``concurrent_transfers`` or ``reducers``."""
    if concurrent_transfers is not None and reducers is not None:
        raise PlannerError("concurrent_transfers (Algorithm 2) and reducers (Algorithm 3) "
                           "cannot be combined", path=f"planners.{name}",
                           value="concurrent_transfers, reducers")
    for option, value in (("concurrent_transfers", concurrent_transfers),
                          ("reducers", reducers)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise PlannerError("must be an integer >= 1", path=f"planners.{name}.{option}",
                               value=value)


def _check_greedy_options(options: Mapping[str, Any]) -> None:
    _check_tree_options("greedy", options.get("concurrent_transfers"), options.get("reducers"))


def _why_no_model(platform: Platform, op: Operation,
                  cache: dict[NodeId, dict[NodeId, Fraction]]) -> str:
    """Why the model of section 3 (one ``d``, one ``c``) is not exact here, for a note."""
    parts = set(op.participants)
    if len({platform.compute_time(p) for p in parts}) == 1 and not any(
            x.src in parts and x.dst in parts for x in platform.links):
        durations = set(pair_durations(platform, op, cache))
        if len(durations) == 1:
            d = durations.pop()
            assert d is not None  # _plan refuses a pair without a path
            return (f"no link joins two participants: every pair is "
                    f"{d} apart through other nodes (switches or "
                    f"relays), taken as the model's d")
    return "heterogeneous costs among the participants"


def _plan(name: str, strategy: Strategy, platform: Platform, operation: Operation,
          concurrent_transfers: int | None = None, reducers: int | None = None) -> PlanResult:
    """Shared body of the three planners (see :func:`greedy_reduction`)."""
    _check_tree_options(name, concurrent_transfers, reducers)
    reason = unsupported_reason(name, TREE_OPERATIONS, frozenset(PortKind), platform, operation)
    if reason is not None:
        return PlanResult.unsupported(name, reason)
    op = operation.resolve(platform)
    parts = op.participants
    n = len(parts)
    gap = missing_path(platform, parts)
    if gap is not None:  # the tree may pair any two participants
        return PlanResult.unsupported(
            name, f"{name} needs a path between every two participants; there is no path "
                  f"from {gap[0]} to {gap[1]}")
    target = op.target if op.kind is OperationKind.REDUCE else None
    cache: dict[NodeId, dict[NodeId, Fraction]] = {}

    def cost_to_target(node: NodeId) -> Fraction:
        if target is None or node == target:
            return _ZERO
        return transfer_cost(cache, platform, op.size, node, target)

    model = model_costs(platform, op)
    notes: list[str] = []
    if model is None:
        notes.append(f"{_why_no_model(platform, op, cache)}: the tree is a heuristic "
                     "and the model figures below are only indicative")
    d, c = model if model is not None else mean_costs(platform, op, cache)
    if strategy == "greedy":
        tree = greedy_tree(n, d, c, concurrent_transfers=concurrent_transfers,
                           reducers=reducers)
    else:
        tree = strategy_tree(strategy, n)
    label = _ALGORITHM[strategy]
    if concurrent_transfers is not None:
        label = f"Algorithm 2 (at most {concurrent_transfers} concurrent transfers)"
    elif reducers is not None:
        label = f"Algorithm 3 (at most {reducers} reducers)"
    # Algorithms 1-3 announce their length; a strategy's tree is timed with (d, c).
    length = tree.length if strategy == "greedy" else tree_length(tree, d, c)
    said = (f"{label} on n = {n}, d = {d}, c = {c}: model length "
            f"{length} (Proposition 3 transfer times), "
            f"max in-degree {tree.max_in_degree()}, depth {tree.depth()}")
    # The tree placed by the labelling of section 4.1, as a non-commutative
    # operator needs it; with sets, also with the sink moved to the target.
    # Every schedule of a non-commutative reduction is one of the commutative
    # one, so the faster placement is kept: telling the planner that operands
    # commute never makes its schedule slower.
    sink_position, moved = _sink_position(tree, op, target, cost_to_target,
                                          commutative=False)
    candidates = [(place_by_labels(tree, op, sink_position), [said, moved] if moved else [said])]
    if op.commutative and target is not None:
        wanted, moved = _sink_position(tree, op, target, cost_to_target, commutative=True)
        candidates.insert(0, (_placed_with_sink(tree, op, wanted),
                              [said, moved] if moved else [said]))
    # An allreduce's sink is free: also the participant of least compute time,
    # which reduces most (compute times 10, 10 and 1: 5 where the first takes 23).
    # A commutative operator keeps every placement a non-commutative one has, so
    # that telling the planner operands commute never makes it slower.
    fastest = None
    if target is None:
        labelled = _fastest_sink(tree, op, platform, any_index=False)
        fastest = _fastest_sink(tree, op, platform, any_index=op.commutative)
        fast_note = (f"the sink is {parts[fastest]}, the participant of least compute "
                     f"time")
        if labelled != sink_position:
            candidates.append((place_by_labels(tree, op, labelled),
                               [said, f"the sink is {parts[labelled]}, the participant of "
                                      f"least compute time the labelling allows"]))
        if fastest not in (sink_position, labelled):
            candidates.append((_placed_with_sink(tree, op, fastest), [said, fast_note]))
    # the first of equally fast candidates: the one planned before the others existed
    # the candidates share their paths and distances: the same for every tree
    paths: dict[tuple[NodeId, NodeId], list[NodeId]] = {}
    timed = [(_timed(platform, op, placed, target, paths), said_of)
             for placed, said_of in candidates]
    (clock, makespan), model_notes = min(timed, key=lambda entry: entry[0][1])
    if (strategy == "greedy" and model is None and op.commutative
            and concurrent_transfers is None):
        # Algorithm 1 (or 3) on the real costs, unless a tree of the mean costs
        # above is faster; an allreduce's sink also at the least compute time.
        sinks = [target if target in parts else min(parts, key=cost_to_target)]
        if fastest is not None and parts[fastest] != sinks[0]:
            sinks.append(parts[fastest])
        real_clock, real_makespan = min(
            (_timed(platform, op, place_greedy(platform, op, sink, reducers, cache), target,
                    paths) for sink in sinks), key=lambda entry: entry[1])
        real = (f"{_ALGORITHM[strategy]} with the real link and compute costs"
                + (f", {reducers} reducers (Algorithm 3)" if reducers else ""))
        if real_makespan <= makespan:
            clock, makespan = real_clock, real_makespan
            model_notes = [real]
        else:
            model_notes = [f"{real} takes {real_makespan}: the tree of the mean costs, "
                           f"{makespan}, is kept", *model_notes]
    notes += model_notes
    bounds = canon_antoniu_bounds(n, d, c, concurrent_transfers=concurrent_transfers,
                                  reducers=reducers).notes()
    if model is None:
        # Lemma 5 and Propositions 6 and 8 hold for homogeneous d and c only: on
        # the mean costs they can exceed this platform's optimum (Liu-Kuo-Wang
        # Fig. 1 cluster: "optimal length >= 99/7", optimum 11), so say whose they are.
        bounds = [f"for the homogeneous model of the mean costs d = {d}, c = {c} only, "
                  f"not a bound on this platform: {line}" for line in bounds]
    notes += bounds
    if target is None:
        notes.append("allreduce: the reduction, then a broadcast of the result back along "
                     "the reversed tree")
    schedule = Schedule(platform, op, clock.events)
    return PlanResult.ok(name, schedule, makespan=makespan, notes=notes)


def _sink_candidates(tree: ReductionTree, any_index: bool) -> list[int]:
    """The participant indexes that may be the sink: any (``any_index``: sets), else
    those the labelling of section 4.1 gives it (:func:`sink_positions`)."""
    reach = (1 << tree.n) - 1 if any_index else sink_positions(tree)
    return [q for q in range(tree.n) if (reach >> q) & 1]


def _fastest_sink(tree: ReductionTree, op: Operation, platform: Platform, *,
                  any_index: bool) -> int:
    """The participant index of least compute time (the first of them) that may be
    the sink (:func:`_sink_candidates`)."""
    return min(_sink_candidates(tree, any_index),
               key=lambda q: (platform.compute_time(op.participants[q]), q))


def _placed_with_sink(tree: ReductionTree, op: Operation, position: int) -> Placement:
    """The tree placed with participant ``position`` at its sink: by the labelling
    of section 4.1, or (sets: any machine may hold any index) by the labelling
    with the sink's machine swapped for that participant's."""
    if not op.commutative:
        return place_by_labels(tree, op, position)
    placed = place_by_labels(tree, op, 0)  # then the swap
    if position:
        other = placed.positions.index(position)
        placed.positions[0], placed.positions[other] = position, 0
        placed.nodes[0], placed.nodes[other] = op.participants[position], op.participants[0]
    return placed


def _timed(platform: Platform, op: Operation, placed: Placement, target: NodeId | None,
           paths: dict[tuple[NodeId, NodeId], list[NodeId]]) -> tuple[PortClock, Fraction]:
    """Time a placed tree: the reduction, then the result to the target (reduce) or
    back along the reversed tree (allreduce); the clock and the makespan.  ``paths``:
    the routes known so far (:func:`route`), filled as it goes."""
    clock = PortClock(platform, size=op.size)
    for node, items in op.initial_items().items():
        for item in items:
            clock.hold(node, item)
    result = emit_tree(platform, op, placed, clock, paths)
    holder = placed.nodes[0]
    if target is not None:
        if holder != target:
            route(clock, paths, holder, target, result)
        makespan = clock.available(target, result)
    else:
        _broadcast_back(clock, paths, placed, result)
        makespan = max(clock.available(p, result) or _ZERO for p in op.participants)
    assert makespan is not None
    return clock, makespan


def _sink_position(tree: ReductionTree, op: Operation, target: NodeId | None,
                   cost_to_target: Callable[[NodeId], Fraction], *,
                   commutative: bool) -> tuple[int, str]:
    """The participant index of the sink, and a note when it is not the target's
    (``commutative``: any index may be the sink's, else only those the labelling
    of section 4.1 gives it)."""
    parts = op.participants
    if target is None:
        return 0, ""
    wanted = parts.index(target) if target in parts else None
    candidates = _sink_candidates(tree, commutative)
    if wanted in candidates:
        return wanted, ""
    best = min(candidates, key=lambda q: (cost_to_target(parts[q]),
                                          abs(q - (wanted or 0)), q))
    if wanted is None:
        why = f"the target {target} is not a participant"
    elif op.commutative:  # this placement was the faster one all the same
        why = (f"the labelling of this tree (section 4.1) does not give the sink the "
               f"target's index {wanted}")
    else:
        why = (f"non-commutative reduce: no labelling of this tree (section 4.1) gives the "
               f"sink the target's index {wanted}")
    return best, f"{why}; the sink is {parts[best]}, which forwards the result to {target}"


def _broadcast_back(clock: PortClock, paths: dict[tuple[NodeId, NodeId], list[NodeId]],
                    placed: Placement, result: Item) -> None:
    """Send the result from the sink back along the reversed tree, breadth first;
    each machine serves first the predecessor it received from last.

    A machine that already holds the result (it relayed it on a cheapest path
    to another one) is not sent it again, nor is any processor on the path
    that holds it already (the hop from there goes on from its copy): such a
    send would only occupy a link and ports after the operation completed."""
    queue = [0]
    for m in queue:
        for p in reversed(placed.receptions[m]):
            if not clock.holds(placed.nodes[p], result):
                route(clock, paths, placed.nodes[m], placed.nodes[p], result, skip_held=True)
            queue.append(p)


def greedy_reduction(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a reduce or allreduce with the Canon–Antoniu greedy tree.

    Parameters
    ----------
    platform:
        Any platform and port model.
    operation:
        A reduce or an allreduce (commutative or not); anything else is
        answered ``unsupported``.
    **options:
        ``concurrent_transfers: K`` (Algorithm 2) or ``reducers: K``
        (Algorithm 3), not both.

    Returns
    -------
    PlanResult
        A one-shot schedule with exact times, its makespan, and notes: the
        model ``(d, c)``, the tree's model length, and the bounds of Lemma 5,
        Proposition 6 and, with an option, Proposition 8 or Corollary 11.

    Raises
    ------
    PlannerError
        On an unknown option, a ``K`` that is not an integer ``>= 1``, or both
        options.

    Notes
    -----
    *Homogeneous platform* (every ordered pair of participants linked with
    one cost ``c(i, j)``, so ``d = size * c(i, j)``, and one compute time
    ``c``): the tree is Algorithm 1 of section 5 (Algorithm 2 or 3 with an
    option, section 6), placed on the participants by the labelling of
    section 4.1, so that every reduction combines ``v[k,l]`` then
    ``v[l+1,m]``.  Events are timed by :class:`~portsim.planners.timing.PortClock`,
    each as early as its ports, CPU and inputs allow (the transfer times of
    Proposition 3).  Under the unidirectional model this is the paper's
    model exactly and the makespan is optimal (Theorems 4, 7, 9).  A
    bidirectional platform gives the same makespan (in a tree a machine sends
    only after all its receptions); a multi-port one lets a machine receive
    several elements at once, so the same tree may finish earlier.

    *Heterogeneous platform*: it is then a heuristic.  With a commutative
    operator and no ``concurrent_transfers``, the greedy choice of Algorithm 1
    uses the real costs (``s_M + c_M + d(i, M)``, cheapest-path transfer
    costs; machines inserted by increasing compute time), unless the tree of
    the mean costs below, the one a non-commutative operator gets, is faster
    (a note then gives both makespans).  Otherwise the tree
    is Algorithm 1/2/3 on the mean link and compute costs, placed by the
    section 4.1 labelling.  Participants without a direct link are joined
    along the cheapest path, store and forward.

    The sink is the reduce target.  With a non-commutative operator the
    labelling can give the sink only the indexes that are subset sums of the
    sizes of the subtrees it receives (section 4.1 assumes the sink is free);
    otherwise, and when the target is not a participant, the sink is the
    participant closest to the target among those possible, and it forwards
    the result (a note says so).  An allreduce reduces on the first
    participant or, where it is faster, on the participant of least compute
    time (the first of them the labelling allows), then broadcasts the result
    back along the reversed tree; a processor already holding it is not sent
    it again.

    Examples
    --------
    >>> from portsim.scenarios.generators import complete_platform
    >>> p = complete_platform(5, c=1, compute=1, port_model="unidirectional")
    >>> r = greedy_reduction(p, Operation(OperationKind.REDUCE, target="P0"))
    >>> r.makespan  # Fibonacci tree of order 3: d + 2 max(d, c) + c
    Fraction(4, 1)
    """
    return _plan("greedy", "greedy", platform, operation,
                 concurrent_transfers=options.get("concurrent_transfers"),
                 reducers=options.get("reducers"))


def fibonacci_reduction(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a reduce or allreduce with the Fibonacci strategy (section 7.3, Theorem 19).

    The tree is Algorithm 1's with ``d = c`` whatever the real costs: a
    Fibonacci tree of order ``k`` (Definition 15) when ``n = F(k+2)``, whose
    length is ``d + (k - 1) max(d, c) + c`` (Proposition 16), within a factor
    2 of the optimum.  Placement, timing, sink and allreduce as in
    :func:`greedy_reduction`.  No options.

    Examples
    --------
    >>> from portsim.scenarios.generators import complete_platform
    >>> p = complete_platform(8, c=2, compute=1, port_model="unidirectional")
    >>> fibonacci_reduction(p, Operation(OperationKind.REDUCE, target="P0")).makespan
    Fraction(9, 1)
    """
    check_options("fibonacci", options, ())
    return _plan("fibonacci", "fibonacci", platform, operation)


def binomial_reduction(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a reduce or allreduce with the binomial strategy (section 7.3, Theorem 18).

    The tree is Algorithm 1's with ``min(d, c) = 0``: a binomial tree of
    order ``k`` (Definition 12) when ``n = 2^k``, of length ``k (d + c)``
    (Proposition 13), a ``(1 + min(d, c) / max(d, c))``-approximation.
    Placement, timing, sink and allreduce as in :func:`greedy_reduction`.
    No options.

    Examples
    --------
    >>> from portsim.scenarios.generators import complete_platform
    >>> p = complete_platform(8, c=2, compute=1, port_model="unidirectional")
    >>> binomial_reduction(p, Operation(OperationKind.REDUCE, target="P0")).makespan
    Fraction(9, 1)
    """
    check_options("binomial", options, ())
    return _plan("binomial", "binomial", platform, operation)


_ALL_PORTS: frozenset[PortKind] = frozenset(PortKind)

GREEDY_PLANNER = FunctionPlanner(
    name="greedy",
    function=greedy_reduction,
    operations=TREE_OPERATIONS,
    port_models=_ALL_PORTS,
    description=("Canon-Antoniu greedy reduction tree (Algorithm 1; options "
                 "concurrent_transfers: K = Algorithm 2, reducers: K = Algorithm 3), one-shot"),
    options=frozenset({"concurrent_transfers", "reducers"}),
    check_options=_check_greedy_options,
)
"""``greedy``: Canon–Antoniu Algorithms 1–3 as a :class:`~portsim.planners.base.Planner`."""

FIBONACCI_PLANNER = FunctionPlanner(
    name="fibonacci",
    function=fibonacci_reduction,
    operations=TREE_OPERATIONS,
    port_models=_ALL_PORTS,
    description="Canon-Antoniu Fibonacci strategy: Algorithm 1 with d = c (section 7.3), one-shot",
)
"""``fibonacci``: the Fibonacci strategy as a :class:`~portsim.planners.base.Planner`."""

BINOMIAL_PLANNER = FunctionPlanner(
    name="binomial",
    function=binomial_reduction,
    operations=TREE_OPERATIONS,
    port_models=_ALL_PORTS,
    description=("Canon-Antoniu binomial strategy: Algorithm 1 with min(d, c) = 0 "
                 "(section 7.3), one-shot"),
)
"""``binomial``: the binomial strategy as a :class:`~portsim.planners.base.Planner`."""

