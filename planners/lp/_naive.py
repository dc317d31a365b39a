"""The ``lp-naive`` planner: the port-sum program of the broadcast report, for comparison.

Beaumont and Marchal (LIP RR-2004-32, section 2.2.2) first adapt the
bidirectional steady-state program to the unidirectional one-port model the
obvious way: a unidirectional node's port is busy ``Σ in + Σ out`` time per
time unit, so ``Σ in + Σ out <= 1``.  That program is a *relaxation*: every
schedule satisfies it, but its optimum is in general NOT achievable, because
communications must also form matchings (their Fig. 2: naive bound 3/4,
trees 1/4 on {1→2, 1→3} and 1/2 on {1→2, 2→3}; those trees achieve only 3/5;
the true optimum, the ``lp`` planner's, is 2/3).

``lp-naive`` solves that program exactly (the builders of the ``lp`` planner
with the ``port_sum`` switch: one summed row per unidirectional node, the two
rows of the bidirectional model for the others), reports its bound as
``throughput_bound`` and its weighted trees or paths, and builds the periodic
schedule the bidirectional way (bipartite peeling of the period's link
loads).  Its result carries ``replay="asap"``: the runner does not claim the
planned times feasible but replays the schedule as soon as possible under
the real port model, keeping the order of events on every port, which
measures what the naive trees really achieve.  On an all-bidirectional
platform the program is the ``lp`` planner's own and the schedule is exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from portsim.planners.base import FunctionPlanner, PlanResult, check_options, unsupported_reason
from portsim.planners.lp._broadcast import plan_multicast
from portsim.planners.lp._driver import (
    OPTIONS,
    LpOptions,
    finish,
    guarded,
    no_communication,
    parse_options,
    solve_exactly,
)
from portsim.planners.lp._flows import build_flow_model, commodities_of, decompose_paths
from portsim.planners.lp._latency import whole_messages
from portsim.planners.lp._reduce import plan_reduce
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform, PortKind

__all__ = ["LP_NAIVE_NAME", "LP_NAIVE_OPERATIONS", "LP_NAIVE_OPTIONS", "LP_NAIVE_PLANNER",
           "LP_NAIVE_PORT_MODELS", "naive_steady_state"]

LP_NAIVE_NAME = "lp-naive"

LP_NAIVE_OPERATIONS: frozenset[OperationKind] = frozenset({
    OperationKind.BROADCAST, OperationKind.ALLGATHER, OperationKind.SCATTER,
    OperationKind.GATHER, OperationKind.ALLTOALL, OperationKind.REDUCE})
"""Collectives ``lp-naive`` handles (trees: broadcast, all-gather; reduction trees:
reduce; paths: the others)."""

LP_NAIVE_PORT_MODELS: frozenset[PortKind] = frozenset(
    {PortKind.BIDIRECTIONAL, PortKind.UNIDIRECTIONAL})
"""Port models ``lp-naive`` handles (mixed per node)."""

LP_NAIVE_OPTIONS: frozenset[str] = frozenset(OPTIONS) - {"restrict"}
"""Options of ``lp-naive``: those of ``lp`` but ``restrict``."""

_DESCRIPTION = ("naive port-sum steady-state LP (Beaumont-Marchal 2004, section 2.2.2; "
                "unidirectional port: sum in + out <= 1), for comparison: its bound is "
                "NOT achievable in general; its trees are replayed as soon as possible")


def naive_steady_state(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Solve the naive port-sum program and schedule its trees for an ASAP replay.

    Parameters
    ----------
    platform:
        Bidirectional and unidirectional one-port nodes, in any mix.
    operation:
        Broadcast, all-gather, scatter, gather, all-to-all or a
        non-commutative reduce (SSR(G) of RR-4872 with port sums).
    **options:
        As the ``lp`` planner (``method``, ``time_limit``, ``split``,
        ``period``, ``max_events``), but ``restrict``.

    Returns
    -------
    PlanResult
        ``ok`` with ``replay="asap"``, ``throughput_bound`` the exact optimum
        of the port-sum program (labelled in the message and the notes as the
        naive bound, not achievable), the weighted trees or paths and their
        periodic schedule (bipartite orchestration); ``unsupported`` for
        another collective or a ``multiport`` node.

    Raises
    ------
    PlannerError
        On an unknown option or a bad option value.

    Notes
    -----
    The program is a relaxation of the unidirectional problem (any schedule's
    port occupation satisfies the port sums), so its bound is at least the
    ``lp`` optimum, and equal to it on an all-bidirectional platform.

    Examples
    --------
    The platform of Fig. 2 of the broadcast report, unidirectional:

    >>> p = Platform.build(["P1", "P2", "P3"], [("P1", "P2", 1), ("P1", "P3", 1),
    ...                    ("P2", "P3", "1/2")]).with_port_model("unidirectional")
    >>> r = naive_steady_state(p, Operation(OperationKind.BROADCAST, source="P1"))
    >>> r.throughput_bound, r.replay
    (Fraction(3, 4), 'asap')
    >>> sorted((format_rational(t.weight), t.edges) for t in r.trees)
    [('1/2', (('P1', 'P2'), ('P2', 'P3'))), ('1/4', (('P1', 'P2'), ('P1', 'P3')))]
    """
    check_options(LP_NAIVE_NAME, options, LP_NAIVE_OPTIONS)
    parsed = parse_options(options, LP_NAIVE_NAME).started()  # one deadline for the whole call
    reason = unsupported_reason(LP_NAIVE_NAME, LP_NAIVE_OPERATIONS, LP_NAIVE_PORT_MODELS,
                                platform, operation)
    if reason is not None:
        return PlanResult.unsupported(LP_NAIVE_NAME, reason)
    op = operation.resolve(platform)
    port_sum = frozenset(node for node in platform.node_ids
                         if platform.port_model_of(node).kind is PortKind.UNIDIRECTIONAL)

    def naive(on: Platform, op: Operation, parsed: LpOptions) -> PlanResult:
        if op.kind is OperationKind.REDUCE:
            # SSR(G) with each unidirectional node's send and receive rows merged.
            return plan_reduce(on, op, parsed, port_sum=port_sum)
        if op.kind in (OperationKind.BROADCAST, OperationKind.ALLGATHER):
            return _plan_trees(on, op, parsed, port_sum)
        return _plan_paths(on, op, parsed, port_sum)

    def plan() -> PlanResult:
        if platform.has_latency:   # as lp does: whole messages, linear link costs
            return whole_messages(platform, op, parsed, naive, LP_NAIVE_NAME)
        return naive(platform, op, parsed)

    return _relabel(guarded(LP_NAIVE_NAME, platform, op, parsed, plan), port_sum)


def _plan_trees(platform: Platform, operation: Operation, options: LpOptions,
                port_sum: frozenset[NodeId]) -> PlanResult:
    if operation.kind is OperationKind.BROADCAST:
        assert operation.source is not None
        sources = [(operation.source, operation.targets, Item.broadcast())]
        what = "naive broadcast"
    else:
        parts = operation.participants
        sources = [(k, tuple(p for p in parts if p != k), Item.message(k)) for k in parts]
        what = "naive allgather"
    return plan_multicast(platform, operation, sources, options, what, port_sum=port_sum)


def _plan_paths(platform: Platform, operation: Operation, options: LpOptions,
                port_sum: frozenset[NodeId]) -> PlanResult:
    commodities = commodities_of(operation)
    if not commodities:
        return no_communication(operation, LP_NAIVE_NAME)
    flow_model = build_flow_model(platform, commodities, operation.size, port_sum=port_sum)
    # No float repair: it scales by separate send and receive loads, which a
    # summed row does not honour; the exact recovery alone is used.
    exact = solve_exactly(flow_model.model, options, what=f"naive {operation.kind}")
    if isinstance(exact, PlanResult):
        return exact
    groups = decompose_paths(flow_model, exact.values, exact.lower)
    return finish(platform, operation, exact, groups, options)


def _relabel(result: PlanResult, port_sum: frozenset[NodeId]) -> PlanResult:
    """Name the result ``lp-naive``, label its bound, ask for an ASAP replay."""
    if not result.is_ok:
        return replace(result, planner=LP_NAIVE_NAME)
    bound = result.throughput_bound
    assert bound is not None
    if port_sum:
        label = (f"naive port-sum bound {format_rational(bound)} (Beaumont-Marchal 2004, "
                 f"section 2.2.2: sum in + out <= 1 on {len(port_sum)} unidirectional "
                 f"node(s)), NOT achievable in general; its trees are replayed as soon "
                 f"as possible under the real port model to measure what they achieve")
    else:
        label = (f"naive port-sum bound {format_rational(bound)}: every node is "
                 f"bidirectional, so it is the exact lp optimum and the schedule is exact")
    notes = [label] + [n for n in result.notes if not n.startswith("optimal throughput ")]
    message = label if not result.message else f"{label}; {result.message}"
    # With a summed row the planned timing is not claimed feasible: the
    # schedule's throughput is the ASAP replay's, not a planner's figure.
    achieved = None if port_sum else result.achieved_throughput
    # the port-sum program relaxes the unidirectional rows: its optimum bounds the
    # real one, which it need not be
    exactness = False if port_sum else result.bound_exact
    return replace(result, planner=LP_NAIVE_NAME, replay="asap", notes=tuple(notes),
                   message=message, achieved_throughput=achieved, bound_exact=exactness)


def _check_naive_options(options: Mapping[str, Any]) -> None:
    parse_options(options, LP_NAIVE_NAME)


LP_NAIVE_PLANNER = FunctionPlanner(
    name=LP_NAIVE_NAME,
    function=naive_steady_state,
    operations=LP_NAIVE_OPERATIONS,
    port_models=LP_NAIVE_PORT_MODELS,
    description=_DESCRIPTION,
    options=LP_NAIVE_OPTIONS,
    check_options=_check_naive_options,
)
"""The ``lp-naive`` planner."""
