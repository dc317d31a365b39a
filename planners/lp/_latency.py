"""The steady-state programs on links with latency: whole messages only.

Shared by ``lp`` and ``lp-naive``: each solves its own program on the
platform of linear link costs :func:`whole_messages` builds.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace

from portsim.planners.base import PlanResult
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._periodic import WHOLE_MESSAGES_NOTE
from portsim.simulator.numbers import readable
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Link, Platform
from portsim.simulator.schedule import Send

__all__ = ["LATENCY_NOTE", "whole_messages"]

LATENCY_NOTE = ("links with latency: every message is sent whole (split: false), each "
                "transfer lasting latency + size / bandwidth")
"""The note of a result :func:`whole_messages` gives."""

Solve = Callable[[Platform, Operation, LpOptions], PlanResult]
"""A planner's program on a platform without latency, with checked options."""


def whole_messages(platform: Platform, operation: Operation, parsed: LpOptions,
                   solve: Solve, planner: str) -> PlanResult:
    """``solve`` on links with latency: whole messages only.

    A transfer of a whole message of size ``s`` lasts ``d_e = latency +
    s / bandwidth``, and a part ``p`` of it ``latency + p·s / bandwidth >=
    p·d_e``: per unit of message carried a link is busy at least ``d_e``.
    So the programs on the platform whose link ``e`` costs ``d_e / s`` (no
    latency) bound every schedule, and a periodic schedule that keeps every
    message whole (``split: false``) has exactly the durations they assume.
    When whole messages would need too long a period (over ``max_events``),
    the lp gives no schedule: splitting would pay the latency per part; the
    message says how many operations the period of whole messages holds
    (the ``max_events`` that would do) and the throughput bound, still
    valid, and the build's warning that messages are split, which does not
    happen, is dropped.
    """
    size = operation.size
    linear = Platform(platform.nodes,
                      tuple(Link(x.src, x.dst, x.duration(size) / size) for x in platform.links),
                      platform.port_model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(linear, operation,
                       replace(parsed, split=False, free_links=True, schedule=True))
    schedule = result.schedule
    if schedule is not None and any(isinstance(e, Send) and e.part != 1
                                    for e in schedule.events):
        needs = next((n.split(": messages are split")[0] for n in result.notes
                      if n.startswith(WHOLE_MESSAGES_NOTE)), "")
        needs = needs or f"{WHOLE_MESSAGES_NOTE} a period over max_events operations"
        bound = result.throughput_bound
        if bound is not None and not parsed.schedule:
            # The bound alone (``lp_throughput_bound``: validate's comparison):
            # valid for every schedule, whole or split, so given without one.
            kept = tuple(n for n in result.notes if not n.startswith(WHOLE_MESSAGES_NOTE))
            return replace(result, schedule=None, period=None, achieved_throughput=None,
                           notes=(*kept, f"{LATENCY_NOTE}; no periodic schedule: {needs}"))
        found = "" if bound is None else f"the throughput bound is {readable(bound)}, but "
        # no schedule, but the bound holds (the row's throughput_bound, as the message says)
        return replace(PlanResult.unsupported(
            planner, f"links with latency: {found}{needs}; a message split in parts would "
                     f"pay the latency once per part: raise max_events (an lp option) to that"),
            throughput_bound=bound, bound_exact=None if bound is None else result.bound_exact)
    for w in caught:  # the build's warnings, for the caller, as they were
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if schedule is None:
        return result
    whole = replace(schedule, platform=platform)
    return replace(result, schedule=whole, notes=(*result.notes, LATENCY_NOTE))
