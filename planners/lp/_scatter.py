"""Series of scatters: SSSP(G) (Legrand, Marchal and Robert, RR-4872, section 3.1).

The source sends a distinct message ``m_k`` to every target ``k``; the flow
of each message type is decomposed into weighted paths, scheduled
periodically (section 3.3).
"""

from __future__ import annotations

from portsim.planners.base import PlanResult
from portsim.planners.lp._driver import LpOptions, finish, no_communication, solve_exactly
from portsim.planners.lp._flows import Commodity, build_flow_model, commodities_of, decompose_paths
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

__all__ = ["plan_scatter"]


def plan_scatter(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of scatters (SSSP(G), equations (1)-(6)).

    Notes
    -----
    On the toy platform of Fig. 2 the optimum is TP = 1/2 (section 3.2).
    """
    return plan_flows(platform, operation, commodities_of(operation), options,
                      "scatter (SSSP)")


def plan_flows(platform: Platform, operation: Operation, commodities: list[Commodity],
               options: LpOptions, what: str) -> PlanResult:
    """Solve a multi-commodity model, decompose it into paths, schedule it."""
    if not commodities:
        return no_communication(operation)
    flow_model = build_flow_model(platform, commodities, operation.size)
    model = flow_model.model
    exact = solve_exactly(model, options, what=what, repair=flow_model.repair,
                          scale=model.upper[model.objective])  # the ends' in-link cap
    if isinstance(exact, PlanResult):
        return exact
    groups = decompose_paths(flow_model, exact.values, exact.lower)
    return finish(platform, operation, exact, groups, options)
