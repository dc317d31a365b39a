"""portsim's model and engine: platforms, operations, schedules, replay.

The one flow: a :class:`Platform` and an :class:`Operation` go to a planner,
which returns a :class:`Schedule`; :func:`replay` plays the schedule in SimPy
and returns a :class:`Report` with every :class:`Violation`.

Examples
--------
>>> from simulator import Operation, OperationKind, Platform, Schedule, replay
>>> p = Platform.build(["A", "B"], [("A", "B", "2/3")])
>>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
>>> s = Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B",
...                                  "item": "b", "start": 0}])
>>> replay(s).makespan
Fraction(2, 3)
"""

from simulator.engine import replay
from simulator.errors import (
    OperationError,
    PlannerError,
    PlatformError,
    PortsimError,
    ScenarioError,
    ScheduleError,
)
from simulator.items import Item, combine, parse_item
from simulator.numbers import Time, format_rational, parse_rational
from simulator.operations import Operation, OperationKind
from simulator.platform import Link, Node, NodeId, Platform, PortKind, PortModel
from simulator.report import Report, Violation, ViolationKind
from simulator.schedule import Compute, Event, Schedule, Send
from simulator.validation import validate, violation_table

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
