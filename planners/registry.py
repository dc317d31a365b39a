"""Planners by name: the built-in table and plug-ins from an entry-point group.

Outside packages add planners without editing portsim by declaring an entry
point in the group ``portsim.planners``::

    [project.entry-points."portsim.planners"]
    my-planner = "my_package.planning:MY_PLANNER"

The entry point loads to a :class:`~planners.base.Planner` object, or to a
zero-argument factory returning one.  A plug-in that fails to load is
reported with a :class:`PlannerPluginWarning` and skipped; it never breaks
the built-in planners.
"""

from __future__ import annotations

import functools
import importlib.metadata
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from planners.base import Planner, PlanResult
from planners.flat import FLAT_PLANNER
from planners.lp import LP_NAIVE_PLANNER, LP_PLANNER
from planners.ring import RING_PLANNER
from planners.snf import FNF_PLANNER, OPTIMAL_PLANNER, SNF_PLANNER
from planners.trees import BINOMIAL_PLANNER, FIBONACCI_PLANNER, GREEDY_PLANNER
from simulator.errors import PlannerError
from simulator.operations import Operation
from simulator.platform import Platform

__all__ = [
    "BUILTIN_PLANNERS",
    "ENTRY_POINT_GROUP",
    "PlannerPluginWarning",
    "available_planners",
    "get_planner",
    "plan",
    "plugin_planners",
]

ENTRY_POINT_GROUP = "portsim.planners"
"""The entry-point group read for plug-in planners."""

BUILTIN_PLANNERS: Mapping[str, Planner] = MappingProxyType({
    FLAT_PLANNER.name: FLAT_PLANNER,
    GREEDY_PLANNER.name: GREEDY_PLANNER,
    FIBONACCI_PLANNER.name: FIBONACCI_PLANNER,
    BINOMIAL_PLANNER.name: BINOMIAL_PLANNER,
    LP_PLANNER.name: LP_PLANNER,
    LP_NAIVE_PLANNER.name: LP_NAIVE_PLANNER,
    SNF_PLANNER.name: SNF_PLANNER,
    OPTIMAL_PLANNER.name: OPTIMAL_PLANNER,
    FNF_PLANNER.name: FNF_PLANNER,
    RING_PLANNER.name: RING_PLANNER,
})
"""The planners shipped with portsim, by name (read-only)."""


class PlannerPluginWarning(UserWarning):
    """A plug-in planner could not be loaded, or clashes with another planner."""


def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The entry points of :data:`ENTRY_POINT_GROUP` (a seam for tests)."""
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load(entry_point: importlib.metadata.EntryPoint) -> Planner:
    """Load one plug-in; raise :class:`PlannerError` when it is not a planner."""
    obj = entry_point.load()
    if not isinstance(obj, Planner) and callable(obj):
        obj = obj()
    if not isinstance(obj, Planner):
        raise PlannerError(
            "does not load to a Planner (an object with name, operations, port_models, "
            "description and plan) or a zero-argument factory of one",
            value=type(obj).__name__,
        )
    return obj


@functools.lru_cache(maxsize=1)
def plugin_planners() -> Mapping[str, Planner]:
    """Planners declared by installed packages in the ``portsim.planners`` group.

    Loaded once per process (call ``plugin_planners.cache_clear()`` to read
    the entry points again).  A plug-in that fails to load, or whose name is
    taken by a built-in or an earlier plug-in, is skipped with a
    :class:`PlannerPluginWarning`.

    Returns
    -------
    Mapping
        Read-only mapping from entry-point name to planner.
    """
    found: dict[str, Planner] = {}
    for entry_point in _entry_points():
        where = f"plug-in planner {entry_point.name!r} ({entry_point.value})"
        if entry_point.name in BUILTIN_PLANNERS or entry_point.name in found:
            warnings.warn(f"{where} skipped: the name is already taken",
                          PlannerPluginWarning, stacklevel=2)
            continue
        try:
            planner = _load(entry_point)
        except Exception as err:  # a broken plug-in must not break portsim
            warnings.warn(f"{where} skipped: {type(err).__name__}: {err}",
                          PlannerPluginWarning, stacklevel=2)
            continue
        if planner.name != entry_point.name:
            warnings.warn(
                f"{where} calls itself {planner.name!r}; registered as {entry_point.name!r}",
                PlannerPluginWarning, stacklevel=2,
            )
        found[entry_point.name] = planner
    return MappingProxyType(found)


def available_planners() -> dict[str, Planner]:
    """Every planner by name: the built-ins, then the plug-ins.

    Returns
    -------
    dict
        A fresh dictionary (modifying it changes nothing in the registry).

    Examples
    --------
    >>> "flat" in available_planners()
    True
    """
    return {**BUILTIN_PLANNERS, **plugin_planners()}


def get_planner(name: str) -> Planner:
    """The planner called ``name``.

    Raises
    ------
    PlannerError
        When there is no such planner; the message lists the valid names.

    Examples
    --------
    >>> get_planner("flat").name
    'flat'
    """
    if not isinstance(name, str):
        raise PlannerError("a planner name must be a string", value=name)
    planners = available_planners()
    try:
        return planners[name]
    except KeyError as err:
        valid = ", ".join(sorted(planners))
        raise PlannerError(
            f"unknown planner; valid planners: {valid}", value=name
        ) from err


def plan(name: str, platform: Platform, operation: Operation, **options: Any) -> PlanResult:
    """Plan ``operation`` on ``platform`` with the planner called ``name``.

    Raises
    ------
    PlannerError
        On an unknown planner name or option.
    """
    return get_planner(name).plan(platform, operation, **options)
