"""The ``lp`` planner: optimal steady-state throughput and periodic schedules.

A facade in the manner of ``scipy.optimize.linprog``: :func:`steady_state`
checks the options and dispatches on the collective to one private module
per operation (``_scatter``, ``_gather``, ``_alltoall``, ``_reduce``,
``_broadcast``, ``_allreduce``), sharing the solver
(``_solve``: HiGHS with sparse matrices), the exact recovery (``_exact``),
the flow model (``_flows``) and the periodic orchestration (``_periodic``).

Every platform without a unidirectional node (bidirectional, ``multiport:k``
and ``multiport`` nodes in any mix; a link carries one transfer at a time
under every model) takes the port-sum programs above, with the right-hand
sides and per-link rows of ``_capacity`` (k ports per side, one row per link
between two multi-port ends; all 1 and no link row when all bidirectional):
the bipartite b-matching polytope is integral, so port sums are exact, and
the period is split into b-matchings (``_bmatching``; König's matchings when
every capacity is 1), the allreduce's programs included.  Any platform
with a unidirectional node goes to ``_matchings`` (no allreduce there): the
same collective rows, link times covered by weighted matchings of the port graph
(``_ports``, node splitting of Beaumont and Marchal, LIP RR-2004-32, section
5), solved by column generation with maximum-weight-matching pricing and
certified exactly (section 3 of that report).

Sources: Legrand, Marchal and Robert, "Optimizing the steady-state
throughput of scatter and reduce operations on heterogeneous platforms",
INRIA RR-4872 (2003), sections 3 and 4.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from portsim.planners.base import FunctionPlanner, PlanResult, check_options, unsupported_reason
from portsim.planners.lp._allreduce import plan_allreduce
from portsim.planners.lp._alltoall import plan_alltoall
from portsim.planners.lp._broadcast import plan_allgather, plan_broadcast
from portsim.planners.lp._driver import NAME, OPTIONS, LpOptions, guarded, parse_options
from portsim.planners.lp._gather import plan_gather
from portsim.planners.lp._latency import whole_messages
from portsim.planners.lp._matchings import plan_matchings
from portsim.planners.lp._naive import LP_NAIVE_PLANNER, naive_steady_state
from portsim.planners.lp._reduce import plan_reduce
from portsim.planners.lp._reduce_startup import periodic_share_ceiling, reduce_makespan_bound
from portsim.planners.lp._restrict import plan_restricted
from portsim.planners.lp._scatter import plan_scatter
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform, PortKind

__all__ = ["LP_NAIVE_PLANNER", "LP_OPERATIONS", "LP_PLANNER", "LP_PORT_MODELS", "LpOptions",
           "lp_throughput_bound", "naive_steady_state", "periodic_share_ceiling",
           "reduce_makespan_bound", "steady_state"]

_DISPATCH: dict[OperationKind, Callable[[Platform, Operation, LpOptions], PlanResult]] = {
    OperationKind.SCATTER: plan_scatter,
    OperationKind.GATHER: plan_gather,
    OperationKind.ALLTOALL: plan_alltoall,
    OperationKind.REDUCE: plan_reduce,
    OperationKind.BROADCAST: plan_broadcast,
    OperationKind.ALLGATHER: plan_allgather,
    OperationKind.ALLREDUCE: plan_allreduce,
}

LP_OPERATIONS: frozenset[OperationKind] = frozenset(_DISPATCH)
"""Collectives the ``lp`` planner handles."""

LP_PORT_MODELS: frozenset[PortKind] = frozenset(
    {PortKind.BIDIRECTIONAL, PortKind.UNIDIRECTIONAL, PortKind.MULTIPORT})
"""Port models the ``lp`` planner handles (all three, mixed per node)."""

_DESCRIPTION = ("steady-state linear program (any port models; port sums without "
                "unidirectional nodes, column generation over matchings with): exact optimal "
                "throughput, certified by the dual, and an asymptotically optimal "
                "periodic schedule")


def steady_state(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a series of ``operation`` for the optimal steady-state throughput.

    Parameters
    ----------
    platform:
        Any platform: without unidirectional nodes (bidirectional,
        ``multiport:k``, ``multiport`` in any mix) the port-sum programs;
        with one, unidirectional, bidirectional, ``multiport:k`` and
        ``multiport`` nodes in any mix (column generation over matchings of
        the port graph; the notes give the rounds and the columns).  A link
        carries one transfer at a time; on links with latency every message
        is sent whole.
    operation:
        The collective (resolved against ``platform`` here).
    **options:
        ``method`` (``auto``, ``highs``, ``highs-ds``, ``highs-ipm``),
        ``time_limit`` (seconds for the whole call, default
        :data:`~portsim.planners.lp._driver.DEFAULT_TIME_LIMIT`), ``split``
        (default true), ``period`` (a fixed period, Proposition 4),
        ``max_events`` (cap on the operations per period of the exact
        period), ``restrict`` (broadcast: ``tree``, ``dag`` or ``graph``,
        the default; the best single spanning tree or acyclic sub-platform,
        by enumeration, capped; section 2.3 of the broadcast report).

    Returns
    -------
    PlanResult
        ``ok`` with the periodic schedule, ``throughput_bound`` (the exact
        optimum, or the upper end of a certified interval), ``period``, the
        weighted paths or trees, and notes; ``unsupported`` for another
        collective (or a commutative reduce, an allreduce on a platform with
        a unidirectional node, or, on a platform with a unidirectional
        node, a multi-port node with more than 16 useful ports); ``error``
        when the call hits its time limit,
        when a time of the platform is beyond floating point or needs more
        than :data:`~portsim.planners.lp._driver.MAX_SCALE_BITS` bits of denominator,
        or on any failure inside the planner (never an exception on a valid
        input).

    Raises
    ------
    PlannerError
        On an unknown option or a bad option value.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    >>> r = steady_state(p, Operation(OperationKind.SCATTER, source="S"))
    >>> r.throughput_bound, r.period
    (Fraction(1, 2), Fraction(2, 1))
    >>> u = p.with_port_model("unidirectional")
    >>> steady_state(u, Operation(OperationKind.SCATTER, source="S")).throughput_bound
    Fraction(1, 2)
    """
    check_options(NAME, options, OPTIONS)
    # One deadline for the whole call, from here: every phase of every
    # collective and port model (and every ``restrict`` candidate) shares it.
    parsed = parse_options(options).started()
    return guarded(NAME, platform, operation, parsed,
                   lambda: _steady_state(platform, operation, parsed))


def lp_throughput_bound(platform: Platform, operation: Operation,
                        **options: Any) -> PlanResult:
    """:func:`steady_state`'s ``throughput_bound`` alone, without its periodic schedule.

    The same bound, notes and message (but those describing the schedule),
    status ``ok`` with no schedule, period nor achieved throughput.  The
    schedule took most of the call on large platforms: the bound of an
    allgather of 64 ranks over 8 ``dgx_a100`` servers, which ``portsim
    validate`` compares with, took 40 s, 4 s of them solving.  On links with
    latency the schedule is still built, as it decides whether messages are
    sent whole; where they would need a period over ``max_events`` (which
    makes :func:`steady_state` ``unsupported``), the bound, valid for every
    schedule, is still given, and a note says why there is no schedule.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    >>> r = lp_throughput_bound(p, Operation(OperationKind.SCATTER, source="S"))
    >>> r.status, r.throughput_bound, r.schedule, r.period
    ('ok', Fraction(1, 2), None, None)
    """
    check_options(NAME, options, OPTIONS)
    parsed = replace(parse_options(options), schedule=False).started()
    return guarded(NAME, platform, operation, parsed,
                   lambda: _steady_state(platform, operation, parsed))


def _steady_state(platform: Platform, operation: Operation, parsed: LpOptions) -> PlanResult:
    """:func:`steady_state` on checked options whose deadline is already running."""
    reason = unsupported_reason(NAME, LP_OPERATIONS, LP_PORT_MODELS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(NAME, reason)
    op = operation.resolve(platform)
    if platform.has_latency:  # the schedule says whether every message goes whole
        return whole_messages(platform, op, parsed, _steady_state, NAME)
    if parsed.restrict != "graph":  # best tree or DAG (section 2.3): lp on sub-platforms
        whole = replace(parsed, restrict="graph")  # same deadline for every candidate
        return plan_restricted(platform, op, parsed.restrict,
                               lambda sub: _steady_state(sub, op, whole))
    kinds = {platform.port_model_of(node).kind for node in platform.node_ids}
    if PortKind.UNIDIRECTIONAL in kinds:
        return plan_matchings(platform, op, parsed)
    return _DISPATCH[op.kind](platform, op, parsed)  # port sums (PortCapacity)


LP_PLANNER = FunctionPlanner(
    name=NAME,
    function=steady_state,
    operations=LP_OPERATIONS,
    port_models=LP_PORT_MODELS,
    description=_DESCRIPTION,
    options=OPTIONS,
)
"""The ``lp`` planner."""


