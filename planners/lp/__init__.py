"""The ``lp`` planner: optimal steady-state throughput and periodic schedules.

A facade in the manner of ``scipy.optimize.linprog``: :func:`steady_state`
checks the options and dispatches on the collective to one private module
per operation (``_scatter``, ``_gather``, ``_alltoall``, ``_reduce``,
``_broadcast``), sharing the solver
(``_solve``: HiGHS with sparse matrices), the exact recovery (``_exact``),
the flow model (``_flows``) and the periodic orchestration (``_periodic``).

Under the bidirectional one-port model only (the other port models are
issue 4): any other node model gives ``unsupported`` with the reason.

Sources: Legrand, Marchal and Robert, "Optimizing the steady-state
throughput of scatter and reduce operations on heterogeneous platforms",
INRIA RR-4872 (2003), sections 3 and 4.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planners.base import FunctionPlanner, PlanResult, check_options, unsupported_reason
from planners.lp._alltoall import plan_alltoall
from planners.lp._broadcast import plan_allgather, plan_broadcast
from planners.lp._driver import NAME, OPTIONS, LpOptions, parse_options
from planners.lp._gather import plan_gather
from planners.lp._reduce import plan_reduce
from planners.lp._scatter import plan_scatter
from simulator.operations import Operation, OperationKind
from simulator.platform import Platform, PortKind

__all__ = ["LP_OPERATIONS", "LP_PLANNER", "LP_PORT_MODELS", "LpOptions", "steady_state"]

_DISPATCH: dict[OperationKind, Callable[[Platform, Operation, LpOptions], PlanResult]] = {
    OperationKind.SCATTER: plan_scatter,
    OperationKind.GATHER: plan_gather,
    OperationKind.ALLTOALL: plan_alltoall,
    OperationKind.REDUCE: plan_reduce,
    OperationKind.BROADCAST: plan_broadcast,
    OperationKind.ALLGATHER: plan_allgather,
}

LP_OPERATIONS: frozenset[OperationKind] = frozenset(_DISPATCH)
"""Collectives the ``lp`` planner handles."""

LP_PORT_MODELS: frozenset[PortKind] = frozenset({PortKind.BIDIRECTIONAL})
"""Port models the ``lp`` planner handles (bidirectional one-port)."""

_DESCRIPTION = ("steady-state linear program (bidirectional one-port): exact optimal "
                "throughput, certified by the dual, and an asymptotically optimal "
                "periodic schedule")


def steady_state(platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan a series of ``operation`` for the optimal steady-state throughput.

    Parameters
    ----------
    platform:
        A platform whose every node obeys the bidirectional one-port model.
    operation:
        The collective (resolved against ``platform`` here).
    **options:
        ``method`` (``auto``, ``highs``, ``highs-ds``, ``highs-ipm``),
        ``time_limit`` (seconds), ``split`` (default true), ``period`` (a
        fixed period, Proposition 4), ``max_events`` (cap on the operations
        per period of the exact period).

    Returns
    -------
    PlanResult
        ``ok`` with the periodic schedule, ``throughput_bound`` (the exact
        optimum, or the upper end of a certified interval), ``period``, the
        weighted paths or trees, and notes; ``unsupported`` for another port
        model or collective; ``error`` when the solver hits its time limit.

    Raises
    ------
    PlannerError
        On an unknown option or a bad option value.

    Examples
    --------
    >>> from simulator.platform import Platform
    >>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    >>> r = steady_state(p, Operation(OperationKind.SCATTER, source="S"))
    >>> r.throughput_bound, r.period
    (Fraction(1, 2), Fraction(2, 1))
    """
    check_options(NAME, options, OPTIONS)
    parsed = parse_options(options)
    reason = unsupported_reason(NAME, LP_OPERATIONS, LP_PORT_MODELS, platform, operation)
    if reason is not None:
        return PlanResult.unsupported(NAME, reason + "; other port models are planned "
                                      "for a later issue")
    op = operation.resolve(platform)
    return _DISPATCH[op.kind](platform, op, parsed)


LP_PLANNER = FunctionPlanner(
    name=NAME,
    function=steady_state,
    operations=LP_OPERATIONS,
    port_models=LP_PORT_MODELS,
    description=_DESCRIPTION,
    options=OPTIONS,
)
"""The ``lp`` planner."""
