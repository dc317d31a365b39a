"""Shared test check on a planner's schedule, computed from its events alone.

Imported as a plain module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from fractions import Fraction

from portsim.simulator import Schedule, Send
from portsim.simulator.items import Item


def sends_that_deliver_nothing(schedule: Schedule) -> list[Send]:
    """Sends into a node (a router too: it stores and forwards) that holds the item,
    from another event or from the start, by the time the send ends: they only
    occupy ports and a link."""
    platform, op = schedule.platform, schedule.operation
    arrivals: dict[tuple[str, Item], list[tuple[Fraction, int]]] = {}
    for node, items in op.initial_items().items():
        for item in items:
            arrivals.setdefault((node, item), []).append((Fraction(0), -1))
    ends: list[Fraction] = []
    for i, e in enumerate(schedule.events):
        if isinstance(e, Send):
            end = e.start + platform.duration(e.src, e.dst, op.size)
            arrivals.setdefault((e.dst, e.item), []).append((end, i))
        else:
            end = e.start + platform.compute_time(e.node) * e.tasks
            arrivals.setdefault((e.node, e.output), []).append((end, i))
        ends.append(end)
    return [e for i, e in enumerate(schedule.events)
            if isinstance(e, Send)
            and any(t <= ends[i] and j != i for t, j in arrivals[(e.dst, e.item)])]
