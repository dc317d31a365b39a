"""Scenario files, platform generators and schedule files of portsim.

Load a scenario (SPEC.md, "Scenario file") into checked model objects,
generate platforms, and read or write schedule files (SPEC.md, "Schedule
file").  Every bad input raises a one-line
:class:`~simulator.errors.ScenarioError` (scenarios) or
:class:`~simulator.errors.ScheduleError` (schedule files) naming the file,
the key path and the bad value.
"""

from scenarios.generators import (
    complete_platform,
    draw_rational,
    random_platform,
    random_state,
    sender_times_platform,
)
from scenarios.loader import (
    PlannerSpec,
    Scenario,
    build_operation,
    build_platform,
    load_scenario,
    scenario_from_dict,
)
from scenarios.schedule_file import (
    dump_schedule,
    load_schedule,
    platform_to_dict,
    schedule_from_dict,
    schedule_to_dict,
)

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
