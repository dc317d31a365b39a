"""portsim's model and engine: platforms, operations, schedules, replay.

The one flow: a :class:`Platform` and an :class:`Operation` go to a planner,
which returns a :class:`Schedule`; :func:`replay` plays the schedule in SimPy
and returns a :class:`Report` with every :class:`Violation`.  Names are
imported on first use (PEP 562): importing :mod:`portsim.simulator.errors` alone
does not load networkx and SimPy.

Examples
--------
>>> from portsim.simulator import Operation, OperationKind, Platform, Schedule, replay
>>> p = Platform.build(["A", "B"], [("A", "B", "2/3")])
>>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
>>> s = Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B",
...                                  "item": "b", "start": 0}])
>>> replay(s).makespan
Fraction(2, 3)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from portsim.simulator.engine import (
        replay,
    )
    from portsim.simulator.errors import (
        OperationError,
        PlannerError,
        PlatformError,
        PortsimError,
        ScenarioError,
        ScheduleError,
    )
    from portsim.simulator.items import (
        Item,
        combine,
        parse_item,
    )
    from portsim.simulator.numbers import (
        Time,
        format_rational,
        parse_rational,
    )
    from portsim.simulator.operations import (
        Operation,
        OperationKind,
    )
    from portsim.simulator.platform import (
        Link,
        Node,
        NodeId,
        Platform,
        PortKind,
        PortModel,
    )
    from portsim.simulator.report import (
        Report,
        Violation,
        ViolationKind,
    )
    from portsim.simulator.schedule import (
        Compute,
        Event,
        Schedule,
        Send,
    )
    from portsim.simulator.validation import (
        validate,
        violation_table,
    )

_HOMES: dict[str, list[str]] = {
    "portsim.simulator.engine": ["replay"],
    "portsim.simulator.errors": [
        "OperationError", "PlannerError", "PlatformError", "PortsimError", "ScenarioError",
        "ScheduleError",
    ],
    "portsim.simulator.items": ["Item", "combine", "parse_item"],
    "portsim.simulator.numbers": ["Time", "format_rational", "parse_rational"],
    "portsim.simulator.operations": ["Operation", "OperationKind"],
    "portsim.simulator.platform": ["Link", "Node", "NodeId", "Platform", "PortKind", "PortModel"],
    "portsim.simulator.report": ["Report", "Violation", "ViolationKind"],
    "portsim.simulator.schedule": ["Compute", "Event", "Schedule", "Send"],
    "portsim.simulator.validation": ["validate", "violation_table"],
}

__all__ = [
    "Compute",
    "Event",
    "Item",
    "Link",
    "Node",
    "NodeId",
    "Operation",
    "OperationError",
    "OperationKind",
    "PlannerError",
    "Platform",
    "PlatformError",
    "PortKind",
    "PortModel",
    "PortsimError",
    "Report",
    "ScenarioError",
    "Schedule",
    "ScheduleError",
    "Send",
    "Time",
    "Violation",
    "ViolationKind",
    "combine",
    "format_rational",
    "parse_item",
    "parse_rational",
    "replay",
    "validate",
    "violation_table",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
