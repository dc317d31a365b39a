"""Series of personalized all-to-alls: SSPA2A(G) (RR-4872, section 3.5).

Every source ``j`` sends a distinct ``m_{j,k}`` to every target ``k != j``;
one commodity per pair, the same throughput at every pair.
"""

from __future__ import annotations

from portsim.planners.base import PlanResult
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._flows import commodities_of
from portsim.planners.lp._scatter import plan_flows
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

__all__ = ["plan_alltoall"]


def plan_alltoall(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of personalized all-to-alls (SSPA2A(G))."""
    return plan_flows(platform, operation, commodities_of(operation), options,
                      "all-to-all (SSPA2A)")
