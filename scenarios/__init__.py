"""Scenario files, platform generators and schedule files of portsim.

Load a scenario (SPEC.md, "Scenario file") into checked model objects,
generate platforms, and read or write schedule files (SPEC.md, "Schedule
file").  Every bad input raises a one-line
:class:`~portsim.simulator.errors.ScenarioError` (scenarios) or
:class:`~portsim.simulator.errors.ScheduleError` (schedule files) naming the file,
the key path and the bad value.

The names below are imported on first use (PEP 562), so that importing one
submodule, such as the pytest plugin :mod:`portsim.scenarios.pytest_plugin`, does
not load the YAML schema and the generators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from portsim.scenarios.generators import (
        complete_platform,
        draw_rational,
        random_platform,
        random_state,
        sender_times_platform,
    )
    from portsim.scenarios.loader import (
        PlannerSpec,
        Scenario,
        build_operation,
        build_platform,
        load_scenario,
        scenario_from_dict,
    )
    from portsim.scenarios.schedule_file import (
        dump_schedule,
        load_schedule,
        platform_to_dict,
        schedule_from_dict,
        schedule_to_dict,
    )

_HOMES = {
    "portsim.scenarios.generators": ("complete_platform", "draw_rational", "random_platform",
                             "random_state", "sender_times_platform"),
    "portsim.scenarios.loader": ("PlannerSpec", "Scenario", "build_operation", "build_platform",
                         "load_scenario", "scenario_from_dict"),
    "portsim.scenarios.schedule_file": ("dump_schedule", "load_schedule", "platform_to_dict",
                                "schedule_from_dict", "schedule_to_dict"),
}

__all__ = [
    "PlannerSpec",
    "Scenario",
    "build_operation",
    "build_platform",
    "complete_platform",
    "draw_rational",
    "dump_schedule",
    "load_scenario",
    "load_schedule",
    "platform_to_dict",
    "random_platform",
    "random_state",
    "scenario_from_dict",
    "schedule_from_dict",
    "schedule_to_dict",
    "sender_times_platform",
]
assert sorted(__all__) == sorted(n for names in _HOMES.values() for n in names)


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
