"""Series of gathers: the reverse of SSSP(G) (RR-4872, section 3.1, messages to one target).

Every participant ``k`` other than the target sends its own message ``m_k``
to the target: one commodity per participant, the same multi-commodity
program as the scatter with the roles of source and targets swapped.
"""

from __future__ import annotations

from portsim.planners.base import PlanResult
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._flows import commodities_of
from portsim.planners.lp._scatter import plan_flows
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

__all__ = ["plan_gather"]


def plan_gather(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of gathers."""
    return plan_flows(platform, operation, commodities_of(operation), options, "gather")
