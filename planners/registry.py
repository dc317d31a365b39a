"""Planners by name: the built-in table and plug-ins from an entry-point group.

Outside packages add planners without editing portsim by declaring an entry
point in the group ``portsim.planners``::

    [project.entry-points."portsim.planners"]
    my-planner = "my_package.planning:MY_PLANNER"

The entry point loads to a :class:`~portsim.planners.base.Planner` object, or to a
zero-argument factory returning one.  A plug-in that fails to load is
reported with a :class:`PlannerPluginWarning` and skipped; it never breaks
the built-in planners.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from portsim.simulator.errors import PlannerError

if TYPE_CHECKING:
    import importlib.metadata

    from portsim.planners.base import Planner, PlanResult
    from portsim.simulator.operations import Operation
    from portsim.simulator.platform import Platform

__all__ = [
    "BUILTIN_PLANNERS",
    "ENTRY_POINT_GROUP",
    "PlannerInfo",
    "PlannerPluginWarning",
    "available_planners",
    "get_planner",
    "plan",
    "planner_infos",
    "plugin_planners",
]

ENTRY_POINT_GROUP = "portsim.planners"
"""The entry-point group read for plug-in planners."""


@dataclass(frozen=True)
class PlannerInfo:
    """What ``portsim planners`` lists about a planner, without importing it.

    The built-in planners' modules pull in networkx, scipy and HiGHS; their
    listing and the check of a scenario's planner names must not.
    ``tests/test_planners.py`` checks each entry against the planner itself.
    ``operations`` and ``port_models`` hold the kinds' names (``"reduce"``,
    ``"multiport"``).
    """

    name: str
    operations: frozenset[str]
    port_models: frozenset[str]
    description: str
    module: str = ""
    attribute: str = ""

    @classmethod
    def of(cls, planner: Planner) -> PlannerInfo:
        """The listing of an already loaded planner (a plug-in)."""
        return cls(planner.name, frozenset(str(k) for k in planner.operations),
                   frozenset(str(k) for k in planner.port_models), planner.description)


def _info(name: str, operations: str, port_models: str, description: str,
          home: str) -> PlannerInfo:
    module, attribute = home.split(":")
    return PlannerInfo(name, frozenset(operations.split()), frozenset(port_models.split()),
                       description, module, attribute)


_ALL_PORTS = "bidirectional unidirectional multiport"
_ONE_PORT = "bidirectional unidirectional"

_BUILTIN_INFOS: tuple[PlannerInfo, ...] = (
    _info("flat", "scatter gather broadcast reduce", _ALL_PORTS,
          "naive flat tree: the root or source deals with every other participant "
          "directly, one at a time, in participant order (one-shot)",
          "portsim.planners.flat:FLAT_PLANNER"),
    _info("greedy", "reduce allreduce", _ALL_PORTS,
          "Canon-Antoniu greedy reduction tree (Algorithm 1; options "
          "concurrent_transfers: K = Algorithm 2, reducers: K = Algorithm 3), one-shot",
          "portsim.planners.trees:GREEDY_PLANNER"),
    _info("fibonacci", "reduce allreduce", _ALL_PORTS,
          "Canon-Antoniu Fibonacci strategy: Algorithm 1 with d = c (section 7.3), one-shot",
          "portsim.planners.trees:FIBONACCI_PLANNER"),
    _info("binomial", "reduce allreduce", _ALL_PORTS,
          "Canon-Antoniu binomial strategy: Algorithm 1 with min(d, c) = 0 (section 7.3), "
          "one-shot",
          "portsim.planners.trees:BINOMIAL_PLANNER"),
    _info("lp", "scatter gather alltoall reduce broadcast allgather allreduce", _ALL_PORTS,
          "steady-state linear program (any port models; port sums without unidirectional "
          "nodes, column generation over matchings with): exact optimal throughput, "
          "certified by the dual, and an asymptotically optimal periodic schedule",
          "portsim.planners.lp:LP_PLANNER"),
    _info("lp-naive", "scatter gather alltoall reduce broadcast allgather", _ONE_PORT,
          "naive port-sum steady-state LP (Beaumont-Marchal 2004, section 2.2.2; "
          "unidirectional port: sum in + out <= 1), for comparison: its bound is NOT "
          "achievable in general; its trees are replayed as soon as possible",
          "portsim.planners.lp:LP_NAIVE_PLANNER"),
    _info("snf", "reduce allreduce", _ONE_PORT,
          "slowest node first + EP (Liu\u2013Kuo\u2013Wang), sender-time model, commutative "
          "reduce (2-approximation) and all-reduce (SNF then FNF, 3.5-approximation)",
          "portsim.planners.snf:SNF_PLANNER"),
    _info("optimal", "reduce", _ONE_PORT,
          "exact one-shot commutative reduce in the sender-time model: two-class DP, "
          "k-class DP or branch and bound (Liu\u2013Kuo\u2013Wang), the fastest per instance",
          "portsim.planners.snf:OPTIMAL_PLANNER"),
    _info("fnf", "broadcast", _ONE_PORT,
          "fastest node first broadcast in the sender-time model (one-shot)",
          "portsim.planners.snf:FNF_PLANNER"),
    _info("ring", "allgather broadcast reduce allreduce", _ALL_PORTS,
          "ring collectives (NCCL/MPI style): allgather, broadcast and reduce along "
          "the participant ring, allreduce as reduce then broadcast; each hop on a "
          "cheapest path through switches (one-shot)",
          "portsim.planners.ring:RING_PLANNER"),
    _info("msccl", "allgather alltoall allreduce reduce broadcast", _ALL_PORTS,
          "an MSCCL XML algorithm (option file: ALGO.xml, relative to the scenario), "
          "list-scheduled on the platform (one-shot)",
          "portsim.planners.msccl.planner:MSCCL_PLANNER"),
)


class _Builtins(Mapping[str, "Planner"]):
    """The built-in planners by name, each module imported on first use (read-only)."""

    def __init__(self, infos: tuple[PlannerInfo, ...]) -> None:
        self._infos = {info.name: info for info in infos}

    def __getitem__(self, name: str) -> Planner:
        info = self._infos[name]
        planner: Planner = getattr(importlib.import_module(info.module), info.attribute)
        return planner

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def __repr__(self) -> str:
        return f"BUILTIN_PLANNERS({', '.join(self._infos)})"

    def infos(self) -> tuple[PlannerInfo, ...]:
        """The listing of every built-in planner (nothing imported)."""
        return tuple(self._infos.values())


BUILTIN_PLANNERS: Mapping[str, Planner] = _Builtins(_BUILTIN_INFOS)
"""The planners shipped with portsim, by name (read-only; a planner's module is
imported when it is first looked up)."""


class PlannerPluginWarning(UserWarning):
    """A plug-in planner could not be loaded, or clashes with another planner."""


def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The entry points of :data:`ENTRY_POINT_GROUP` (a seam for tests)."""
    import importlib.metadata

    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load(entry_point: importlib.metadata.EntryPoint) -> Planner:
    """Load one plug-in; raise :class:`PlannerError` when it is not a planner."""
    from portsim.planners.base import Planner

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


def planner_infos() -> tuple[PlannerInfo, ...]:
    """What ``portsim planners`` lists: the built-ins (without importing them), then
    the plug-ins, each under the name a scenario gives it (a plug-in's entry-point
    name, which :func:`plugin_planners` warns about when the planner calls itself
    otherwise).

    Examples
    --------
    >>> sorted(info.name for info in planner_infos())[:3]
    ['binomial', 'fibonacci', 'flat']
    """
    assert isinstance(BUILTIN_PLANNERS, _Builtins)
    return BUILTIN_PLANNERS.infos() + tuple(
        replace(PlannerInfo.of(planner), name=name)
        for name, planner in plugin_planners().items())


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
    if name in BUILTIN_PLANNERS:
        return BUILTIN_PLANNERS[name]
    plugins = plugin_planners()
    try:
        return plugins[name]
    except KeyError as err:
        valid = ", ".join(sorted({*BUILTIN_PLANNERS, *plugins}))
        raise PlannerError(
            f"unknown planner; valid planners: {valid}", value=name
        ) from err


def plan(name: str, platform: Platform, operation: Operation,
         **options: Any) -> PlanResult:
    """Plan ``operation`` on ``platform`` with the planner called ``name``.

    Raises
    ------
    PlannerError
        On an unknown planner name or option.
    """
    return get_planner(name).plan(platform, operation, **options)
