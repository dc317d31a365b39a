"""portsim: simulate and validate collective communications on heterogeneous platforms.

This is the curated public API, ``portsim.__all__`` (tabled in the API
reference).  Every one of its names is imported on first use (PEP 562), so
``import portsim`` is cheap and ``portsim --help`` does not load the solvers.
The four layers stay importable as subpackages, in the order of the one data
flow: :mod:`portsim.simulator` (platforms, operations, schedules, the SimPy
engine) <- :mod:`portsim.planners` <- :mod:`portsim.scenarios` (files,
generators, runs, the command line) <- :mod:`portsim.reports`.

Examples
--------
>>> import portsim
>>> platform = portsim.Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", "2/3")])
>>> operation = portsim.Operation(portsim.OperationKind.SCATTER, source="S")
>>> plan = portsim.get_planner("flat").plan(platform, operation)
>>> plan.makespan, portsim.replay(plan.schedule).feasible
(Fraction(5, 3), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from portsim.planners import Planner, PlanResult, available_planners, get_planner
    from portsim.scenarios.loader import Scenario, load_scenario
    from portsim.scenarios.msccl import validate_msccl
    from portsim.scenarios.runner import ScenarioResult, run_scenario
    from portsim.scenarios.schedule_file import dump_schedule, load_schedule
    from portsim.scenarios.study.store import load_results
    from portsim.simulator import (
        Compute,
        Event,
        Item,
        Link,
        Node,
        Operation,
        OperationKind,
        Platform,
        PortKind,
        PortModel,
        PortsimError,
        Report,
        Schedule,
        Send,
        Violation,
        ViolationKind,
        format_rational,
        parse_rational,
        replay,
        validate,
    )

__version__ = "0.2.0"

_HOMES: dict[str, tuple[str, ...]] = {
    "portsim.simulator": (
        "Compute", "Event", "Item", "Link", "Node", "Operation", "OperationKind", "Platform",
        "PortKind", "PortModel", "PortsimError", "Report", "Schedule", "Send", "Violation",
        "ViolationKind", "format_rational", "parse_rational", "replay", "validate",
    ),
    "portsim.planners": ("PlanResult", "Planner", "available_planners", "get_planner"),
    "portsim.scenarios.loader": ("Scenario", "load_scenario"),
    "portsim.scenarios.msccl": ("validate_msccl",),
    "portsim.scenarios.runner": ("ScenarioResult", "run_scenario"),
    "portsim.scenarios.schedule_file": ("dump_schedule", "load_schedule"),
    "portsim.scenarios.study.store": ("load_results",),
}

__all__ = [
    "Compute",
    "Event",
    "Item",
    "Link",
    "Node",
    "Operation",
    "OperationKind",
    "PlanResult",
    "Planner",
    "Platform",
    "PortKind",
    "PortModel",
    "PortsimError",
    "Report",
    "Scenario",
    "ScenarioResult",
    "Schedule",
    "Send",
    "Violation",
    "ViolationKind",
    "available_planners",
    "dump_schedule",
    "format_rational",
    "get_planner",
    "load_results",
    "load_scenario",
    "load_schedule",
    "parse_rational",
    "replay",
    "run_scenario",
    "validate",
    "validate_msccl",
]
assert sorted(__all__) == sorted(n for names in _HOMES.values() for n in names)


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
