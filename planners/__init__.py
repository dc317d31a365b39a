"""Planners: algorithms that turn a platform and an operation into a schedule.

Each planner follows the :class:`Planner` protocol and returns a
:class:`PlanResult`.  The registry maps names to planners, built-in or
plugged in through the ``portsim.planners`` entry-point group.  Names are
imported on first use (PEP 562), and the registry lists the built-in planners
without importing them, so ``portsim --help`` and ``portsim planners`` start
fast.

Examples
--------
>>> from portsim.planners import plan
>>> from portsim.simulator.platform import Platform
>>> from portsim.simulator.operations import Operation, OperationKind
>>> p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 2)])
>>> plan("flat", p, Operation(OperationKind.BROADCAST, source="S")).makespan
Fraction(3, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from portsim.planners.base import (
        FunctionPlanner,
        PlanFunction,
        Planner,
        PlanResult,
        PlanStatus,
        WeightedTree,
        check_options,
        missing_path,
        unsupported_reason,
    )
    from portsim.planners.flat import (
        FLAT_PLANNER,
        flat_tree,
    )
    from portsim.planners.registry import (
        BUILTIN_PLANNERS,
        ENTRY_POINT_GROUP,
        PlannerInfo,
        PlannerPluginWarning,
        available_planners,
        get_planner,
        plan,
        planner_infos,
        plugin_planners,
    )
    from portsim.planners.snf import (
        FNF_PLANNER,
        OPTIMAL_PLANNER,
        SNF_PLANNER,
    )
    from portsim.planners.trees import (
        BINOMIAL_PLANNER,
        FIBONACCI_PLANNER,
        GREEDY_PLANNER,
    )

_HOMES: dict[str, list[str]] = {
    "portsim.planners.base": [
        "FunctionPlanner", "PlanFunction", "Planner", "PlanResult", "PlanStatus", "WeightedTree",
        "check_options", "missing_path", "unsupported_reason",
    ],
    "portsim.planners.flat": ["FLAT_PLANNER", "flat_tree"],
    "portsim.planners.registry": [
        "BUILTIN_PLANNERS", "ENTRY_POINT_GROUP", "PlannerInfo", "PlannerPluginWarning",
        "available_planners", "get_planner", "plan", "planner_infos", "plugin_planners",
    ],
    "portsim.planners.snf": ["FNF_PLANNER", "OPTIMAL_PLANNER", "SNF_PLANNER"],
    "portsim.planners.trees": ["BINOMIAL_PLANNER", "FIBONACCI_PLANNER", "GREEDY_PLANNER"],
}

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
    "PlannerInfo",
    "PlannerPluginWarning",
    "WeightedTree",
    "available_planners",
    "check_options",
    "flat_tree",
    "get_planner",
    "missing_path",
    "plan",
    "planner_infos",
    "plugin_planners",
    "unsupported_reason",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
