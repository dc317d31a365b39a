"""Series of gathers: the reverse of SSSP(G) (RR-4872, section 3.1, messages to one target).

Every participant ``k`` other than the target sends its own message ``m_k``
to the target: one commodity per participant, the same multi-commodity
program as the scatter with the roles of source and targets swapped.
"""

from __future__ import annotations

from planners.base import PlanResult
from planners.lp._driver import LpOptions
from planners.lp._flows import commodities_of
from planners.lp._scatter import plan_flows
from simulator.operations import Operation
from simulator.platform import Platform

__all__ = ["plan_gather"]


def plan_gather(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of gathers."""
    return plan_flows(platform, operation, commodities_of(operation), options, "gather")
