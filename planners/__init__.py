"""Planners: algorithms that turn a platform and an operation into a schedule.

Each planner follows the :class:`Planner` protocol and returns a
:class:`PlanResult`.  The registry maps names to planners, built-in or
plugged in through the ``portsim.planners`` entry-point group.

Examples
--------
>>> from simulator.platform import Platform
>>> from simulator.operations import Operation, OperationKind
>>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 2)])
>>> plan("flat", p, Operation(OperationKind.BROADCAST, source="S")).makespan
Fraction(3, 1)
"""

from planners.base import (
    FunctionPlanner,
    PlanFunction,
    Planner,
    PlanResult,
    PlanStatus,
    WeightedTree,
    check_options,
    unsupported_reason,
)
from planners.flat import FLAT_PLANNER, flat_tree
from planners.registry import (
    BUILTIN_PLANNERS,
    ENTRY_POINT_GROUP,
    PlannerPluginWarning,
    available_planners,
    get_planner,
    plan,
    plugin_planners,
)
from planners.snf import FNF_PLANNER, OPTIMAL_PLANNER, SNF_PLANNER
from planners.trees import BINOMIAL_PLANNER, FIBONACCI_PLANNER, GREEDY_PLANNER

__all__ = [
    "BINOMIAL_PLANNER",
    "BUILTIN_PLANNERS",
    "ENTRY_POINT_GROUP",
    "FIBONACCI_PLANNER",
    "FLAT_PLANNER",
    "FNF_PLANNER",
    "GREEDY_PLANNER",
    "OPTIMAL_PLANNER",
    "SNF_PLANNER",
    "FunctionPlanner",
    "PlanFunction",
    "PlanResult",
    "PlanStatus",
    "Planner",
    "PlannerPluginWarning",
    "WeightedTree",
    "available_planners",
    "check_options",
    "flat_tree",
    "get_planner",
    "plan",
    "plugin_planners",
    "unsupported_reason",
]
