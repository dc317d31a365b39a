"""Study files: a base scenario, a grid over dotted paths, replicate seeds.

A study file (SPEC.md, "Study file (YAML) and its outputs")::

    name: lp-vs-trees
    base: {platform: ..., operation: ..., planners: [lp, greedy, flat]}
    grid:
      platform.generator.n: [8, 16]
      platform.port_model: [bidirectional, unidirectional]
    replicates: 3

expands to the cartesian product of the grid values (in file order, the last
key varying fastest), each point run with seeds ``0 .. replicates-1``.  A grid
key is a dotted path into ``base``; missing intermediate mappings are created
(``platform.generator.degree`` on a base generator without ``degree``), and a
whole list or mapping may be a grid value (``planners: [[lp], [flat]]``).

``evaluation: model`` (default ``replay``) evaluates Canon–Antoniu tree
planners on their homogeneous model without building a platform or replaying
(:mod:`portsim.scenarios.study.model`); every run must then be that model.

Each run is keyed by a hash of its inputs (the resolved scenario document and
its seed), so the result store can tell done runs from new ones.

A ``platform.simgrid`` file named in ``base`` or in the grid is relative to
the study file; each run's document holds it as an absolute path, so a run
loads from any working directory (and the report can rebuild it).  So is the
``file`` of a ``{name: msccl, file: ALGO.xml}`` planner entry.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from portsim.planners.base import check_options
from portsim.scenarios.loader import (
    PlannerSpec,
    Scenario,
    file_name,
    read_document,
    scenario_from_dict,
    validate_document,
)
from portsim.scenarios.study.model import check_model_scenario
from portsim.simulator.errors import PortsimError, ScenarioError, short_repr

__all__ = [
    "DEFAULT_MAX_RUNS",
    "GRID_PREFIX",
    "INT64_RANGE",
    "Study",
    "StudyRun",
    "StudySpec",
    "count_runs",
    "document_values",
    "expand_study",
    "grid_point_label",
    "load_study",
    "run_key",
    "study_from_dict",
]

GRID_PREFIX = "grid."
"""Result columns holding grid values are named ``grid.<dotted path>``."""

DEFAULT_MAX_RUNS = 100_000
"""The largest study (grid points x replicates) expanded unless the caller raises it
(``portsim study --max-runs N``): past it a study is rejected before any grid
point is built, in the time it takes to multiply the grid's list lengths."""

INT64_RANGE = (-(2**63), 2**63 - 1)
"""Integers stored in the result store (grid values, seeds) are Arrow ``int64``."""

MAX_DOCUMENT_VALUES = 1_000_000
"""The most values (mappings, lists and scalars, a shared one counted each time it is
used) in ``base`` and ``grid`` together.  Each run's scenario document is hashed
and stored in full, so a YAML alias bomb of a few hundred bytes, which the YAML
reader builds as a small graph of shared lists, would expand in every run."""


class StudySpec(BaseModel):
    """The shape of a study file; unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    description: str = ""
    base: dict[str, Any]
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    replicates: int = Field(default=1, ge=1)
    evaluation: Literal["replay", "model"] = "replay"


@dataclass(frozen=True)
class StudyRun:
    """One run of a study: one grid point, one seed.

    Attributes
    ----------
    index:
        Position in the expansion (grid point major, seed minor).
    key:
        Hash of the inputs (:func:`run_key`); equal inputs, equal key.
    grid:
        The grid values of this point, by dotted path.
    seed:
        The replicate seed, also the scenario's ``seed``.
    scenario:
        The resolved scenario document (a plain, JSON-able mapping).
    evaluation:
        ``"replay"`` (plan and replay in the engine) or ``"model"`` (tree
        lengths on the homogeneous model, :mod:`portsim.scenarios.study.model`).
    written_files:
        The ``file`` of each ``{name: msccl, file: ALGO.xml}`` planner entry
        as the study file writes it, by the entry's index: the document holds
        it as an absolute path (to open it from any directory), the row label
        shows it as written, as ``portsim run`` does (:meth:`planner_options`).
    """

    index: int
    key: str
    grid: Mapping[str, Any]
    seed: int
    scenario: Mapping[str, Any]
    evaluation: str = "replay"
    written_files: Mapping[int, str] = field(default_factory=dict)

    def planner_options(self, index: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options of planner entry ``index``, its ``msccl`` file as the study file
        writes it (an :class:`~portsim.planners.msccl.planner.MscclFile` of the
        written text naming the absolute path): what the row's label and
        ``planner_options`` show.

        Examples
        --------
        >>> run = StudyRun(0, "k", {}, 0, {}, written_files={0: "ag.xml"})
        >>> options = run.planner_options(0, {"file": "/data/ag.xml"})
        >>> str(options["file"]), str(options["file"].path)
        ('ag.xml', '/data/ag.xml')
        >>> run.planner_options(1, {"split": False})
        {'split': False}
        """
        written = self.written_files.get(index)
        if written is None or not isinstance(options.get("file"), str):
            return dict(options)
        from portsim.planners.msccl.planner import MscclFile

        file = options["file"]
        return {**options, "file": MscclFile(written, getattr(file, "path", file))}

    def load_scenario(self, source: str) -> Scenario:
        """The run's scenario (:func:`~portsim.scenarios.loader.scenario_from_dict` of its
        document), each planner's options as :meth:`planner_options` gives them.

        Raises
        ------
        ScenarioError
            As :func:`~portsim.scenarios.loader.scenario_from_dict`.
        """
        scenario = scenario_from_dict(dict(self.scenario), source=source)
        if not self.written_files:
            return scenario
        return replace(scenario, planners=tuple(
            PlannerSpec(spec.name, MappingProxyType(self.planner_options(i, spec.options)))
            for i, spec in enumerate(scenario.planners)))


@dataclass(frozen=True)
class Study:
    """A loaded study: its name, its grid keys, the expanded runs, how they are evaluated."""

    name: str
    description: str
    grid_keys: tuple[str, ...]
    runs: tuple[StudyRun, ...]
    source: str
    evaluation: str = "replay"


def run_key(scenario: Mapping[str, Any]) -> str:
    """The hash of a run's inputs: SHA-256 of the canonical JSON of its scenario.

    The scenario document carries the seed, so two runs share a key exactly
    when they would compute the same thing.  A platform imported from a
    SimGrid file is an input too: the file's content is hashed with the
    document, so after the XML is edited those runs have other keys and
    ``--resume`` refuses the store rather than reuse their stale rows.

    Examples
    --------
    >>> run_key({"a": 1, "b": [2]}) == run_key({"b": [2], "a": 1})
    True
    """
    inputs: dict[str, Any] = {"scenario": scenario}
    content = _simgrid_content(scenario)
    algorithms = _msccl_contents(scenario)
    if content is not None:
        inputs["simgrid_sha256"] = hashlib.sha256(content).hexdigest()
    if algorithms:
        inputs["msccl_sha256"] = [hashlib.sha256(x).hexdigest() for x in algorithms]
    if content is None and not algorithms:
        inputs = dict(scenario)  # keys of studies without input files stay as they were
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _msccl_planner_entries(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``{name: msccl, file: ...}`` entries of the scenario's planners."""
    planners = scenario.get("planners")
    if not isinstance(planners, list):
        return []
    return [p for p in planners if _is_msccl_entry(p)]


def _is_msccl_entry(entry: object) -> bool:
    """Whether a planner entry is ``{name: msccl, file: ...}`` with a file named."""
    return (isinstance(entry, dict) and entry.get("name") == "msccl"
            and isinstance(entry.get("file"), str) and bool(entry["file"]))


def _msccl_contents(scenario: Mapping[str, Any]) -> list[bytes]:
    """The bytes of the MSCCL algorithm files the planners name (unreadable: skipped,
    the run reports them)."""
    found = []
    for entry in _msccl_planner_entries(scenario):
        try:
            found.append(Path(entry["file"]).read_bytes())
        except OSError:
            continue
    return found


def _simgrid_content(scenario: Mapping[str, Any]) -> bytes | None:
    """The bytes of the scenario's SimGrid platform file, if it names a readable one."""
    platform = scenario.get("platform")
    if not isinstance(platform, Mapping):
        return None
    simgrid = platform.get("simgrid")
    file = simgrid.get("file") if isinstance(simgrid, Mapping) else simgrid
    if not isinstance(file, str):
        return None
    try:
        return Path(file).read_bytes()
    except OSError:
        return None  # the run itself reports the missing file


def load_study(path: str | os.PathLike[str], *, max_runs: int = DEFAULT_MAX_RUNS) -> Study:
    """Read, check and expand a study file.

    ``max_runs`` caps the number of runs (grid points x replicates); see
    :func:`expand_study`.

    Raises
    ------
    ScenarioError
        One line naming the file, the key path and the bad value: unknown
        key, wrong type, empty grid list, a grid path that crosses a
        non-mapping value of ``base``, an integer grid value outside int64,
        more runs than ``max_runs``, a grid point whose scenario does not
        load or names an unknown planner or option.
    """
    file_name(path, error=ScenarioError, from_dict="study_from_dict")
    # "-": standard input, as for a scenario (relative file names from the current folder)
    data, source, base_dir = read_document(path, error=ScenarioError)
    return study_from_dict(data, source=source, base_dir=base_dir, max_runs=max_runs)


def study_from_dict(data: object, source: str = "<string>", *,
                    base_dir: str | os.PathLike[str] | None = None,
                    max_runs: int = DEFAULT_MAX_RUNS) -> Study:
    """Check and expand a study already parsed from YAML.

    ``base_dir`` is the directory ``platform.simgrid`` files are relative to
    (default: the current one); ``max_runs`` as in :func:`expand_study`.

    Examples
    --------
    >>> base = {"platform": {"generator": {"type": "random", "n": 2, "degree": 1}},
    ...         "operation": {"type": "reduce", "target": "P0"}, "planners": ["flat"]}
    >>> s = study_from_dict({"name": "s", "base": base,
    ...                      "grid": {"platform.generator.n": [4, 8]}, "replicates": 2})
    >>> [(r.grid["platform.generator.n"], r.seed) for r in s.runs]
    [(4, 0), (4, 1), (8, 0), (8, 1)]
    >>> s.runs[0].scenario["name"], s.runs[0].scenario["platform"]["generator"]["n"]
    ('s', 4)
    """
    spec = validate_document(StudySpec, data, source=source, error=ScenarioError)
    return expand_study(spec, source=source, base_dir=base_dir, max_runs=max_runs)


def count_runs(spec: StudySpec) -> int:
    """Grid points x replicates, computed from the list lengths (nothing is expanded).

    Examples
    --------
    >>> count_runs(StudySpec(name="s", base={}, grid={"a": [1, 2], "b": [3, 4, 5]},
    ...                      replicates=7))
    42
    """
    return math.prod(len(values) for values in spec.grid.values()) * spec.replicates


def expand_study(spec: StudySpec, *, source: str = "<string>",
                 base_dir: str | os.PathLike[str] | None = None,
                 max_runs: int = DEFAULT_MAX_RUNS) -> Study:
    """The runs of ``spec``: grid points in file order, then seeds.

    Before anything is expanded, the number of runs is checked against
    ``max_runs`` and every integer grid value against int64 (it is stored in
    an ``int64`` column).  After expansion, every grid point is checked as a
    run would load it: its scenario (with the first seed), its planner names
    and their option names; nothing has run yet.  (Option *values* are the
    planner's to check when it runs; a bad one is that run's ``error`` row.)

    Raises
    ------
    ScenarioError
        On an empty grid list, an empty path segment, a path through a value
        of ``base`` that is not a mapping, an integer outside int64, a ``seed``
        in ``base`` or as a grid key (the replicates set it), more runs
        than ``max_runs``, or a grid point that does not load (the message
        names the grid point and its values).
    """
    for key, values in spec.grid.items():
        if not values:
            raise ScenarioError("a grid list must not be empty", path=f"grid.{key}",
                                value=values, source=source)
        if not key or any(not part for part in key.split(".")):
            raise ScenarioError("a grid key is a dotted path of non-empty names",
                                path="grid", value=key, source=source)
        for i, value in enumerate(values):
            if (isinstance(value, int) and not isinstance(value, bool)
                    and not INT64_RANGE[0] <= value <= INT64_RANGE[1]):
                raise ScenarioError("an integer grid value must fit in int64 (it is stored "
                                    "as one)", path=f"grid.{key}[{i}]", value=value,
                                    source=source)
    # Keys are assigned in file order: a key that holds an earlier one (platform.generator
    # after platform.generator.n) replaces its value at every point, and the earlier
    # key's column would name a value no run has.
    keys = tuple(spec.grid)
    for later, key in enumerate(keys):
        for earlier in keys[:later]:
            if earlier.startswith(key + "."):
                raise ScenarioError(f"replaces the value of grid.{earlier}, listed before "
                                    f"it; list {key} first", path=f"grid.{key}",
                                    source=source)
    # The expansion writes each run's seed over the document's: a seed given here
    # would be dropped without a word (a grid over three seeds ran seed 0 once).
    for where, part in (("base", spec.base), ("grid", spec.grid)):
        if "seed" in part:
            raise ScenarioError(
                f"a study sets each run's seed from replicates (seeds 0 .. replicates-1, "
                f"the column seed); remove {where}.seed and set replicates",
                path=f"{where}.seed", value=part["seed"], source=source)
    _check_run_count(spec, max_runs, source)
    for where, part in (("base", spec.base), ("grid", spec.grid)):
        size = document_values(part, limit=MAX_DOCUMENT_VALUES, source=source, path=where)
        if size > MAX_DOCUMENT_VALUES:
            raise ScenarioError(
                f"expands to more than {MAX_DOCUMENT_VALUES} values (YAML aliases count "
                f"each time they are used), all hashed and stored with every run",
                path=where, value=f"over {MAX_DOCUMENT_VALUES} values", source=source)
    runs: list[StudyRun] = []
    for point in itertools.product(*(spec.grid[k] for k in keys)):
        grid = dict(zip(keys, point, strict=True))
        for seed in range(spec.replicates):
            document = copy.deepcopy(spec.base)
            for key, value in grid.items():
                _assign(document, key, copy.deepcopy(value), source)
            document.setdefault("name", spec.name)
            document["seed"] = seed
            _anchor_simgrid_file(document, Path(base_dir) if base_dir is not None else Path())
            written = _anchor_msccl_files(document, Path(base_dir) if base_dir is not None
                                          else Path())
            # A model evaluation computes other fields than a replay: another key.
            key = (run_key(document) if spec.evaluation == "replay"
                   else run_key({"evaluation": spec.evaluation, "scenario": document}))
            runs.append(StudyRun(len(runs), key, grid, seed, document, spec.evaluation,
                                 written))
    # Runs are stored once per key: a grid point making the scenario of an earlier
    # one (a value repeated, a key whose value a later key replaces) would vanish,
    # and the earlier point's rows would stand for it under the wrong grid values.
    firsts = runs[::spec.replicates]
    point_of: dict[str, int] = {}
    for number, first in enumerate(firsts):
        same = point_of.setdefault(first.key, number)
        if same != number:
            raise ScenarioError(
                f"grid point {number} ({grid_point_label(first.grid)}) makes the same "
                f"scenario as grid point {same} ({grid_point_label(firsts[same].grid)}"
                f"); each would be stored as the other", path="grid", source=source)
    if spec.evaluation == "model":
        for run in runs:  # the model is a static property of each document: check them all
            check_model_scenario(run.scenario, source=source)
    else:
        for number, first in enumerate(firsts):
            _check_grid_point(first, number, source)
    if spec.replicates > 1:
        _warn_identical_replicates(runs, spec.replicates, source)
    return Study(spec.name, spec.description, keys, tuple(runs), source, spec.evaluation)


def _warn_identical_replicates(runs: list[StudyRun], replicates: int, source: str) -> None:
    """Warn where a grid point's replicates are the same run: the seed only draws
    random platforms (``random``, ``three_class``, ``tiers``), so ``replicates: 3``
    over a complete platform, a fat tree or a DGX ran one run three times, and
    every mean over it counted that run three times as if independent."""
    points = [runs[start:start + 2] for start in range(0, len(runs), replicates)]
    same = [number for number, (first, second) in enumerate(points)
            if first.load_scenario(source).platform == second.load_scenario(source).platform]
    if same:
        first = points[same[0]][0]
        where = f" ({grid_point_label(first.grid)})" if first.grid else ""
        warnings.warn(
            f"{source}: replicates: {replicates}, but the seed changes nothing in "
            f"{len(same)} of {len(points)} grid point(s) (grid point {same[0]}{where}): only "
            f"random generators use it, so their {replicates} runs are the same run, and a "
            f"mean over them counts it {replicates} times", stacklevel=3)


def document_values(data: object, *, limit: int, source: str = "<string>",
                    path: str = "") -> int:
    """How many values ``data`` holds once every shared part is expanded, up to ``limit + 1``.

    Shared parts (what YAML aliases build) are measured once and counted as
    often as they are used, so a document of a billion values is measured in
    the time its distinct parts take; the count stops past ``limit``.

    Raises
    ------
    ScenarioError
        When a part contains itself (an alias inside its own anchor).

    Examples
    --------
    >>> leaf = ["x"] * 10
    >>> bomb = [leaf] * 10
    >>> document_values(bomb, limit=1000)
    111
    >>> document_values([[bomb] * 10] * 10, limit=1000)
    1001
    """
    sizes: dict[int, int] = {}
    stack: list[tuple[object, bool]] = [(data, False)]
    open_parts: set[int] = set()
    while stack:
        item, children_done = stack.pop()
        if not isinstance(item, Mapping | list | tuple):
            continue
        children = list(item.values()) if isinstance(item, Mapping) else list(item)
        if children_done:
            open_parts.discard(id(item))
            total = 1 + sum(sizes.get(id(c), 1) if isinstance(c, Mapping | list | tuple)
                            else 1 for c in children)
            sizes[id(item)] = min(total, limit + 1)
            continue
        if id(item) in sizes:
            continue
        if id(item) in open_parts:
            raise ScenarioError("a value contains itself (a YAML alias inside its own "
                                "anchor)", path=path or None, source=source)
        open_parts.add(id(item))
        stack.append((item, True))
        stack.extend((c, False) for c in children
                     if isinstance(c, Mapping | list | tuple) and id(c) not in sizes)
    return sizes.get(id(data), 1)


def _check_run_count(spec: StudySpec, max_runs: int, source: str) -> None:
    """Reject a study of more than ``max_runs`` runs, naming the key that makes it big."""
    total = count_runs(spec)
    if total <= max_runs:
        return
    points = total // spec.replicates
    shape = " x ".join(str(len(v)) for v in spec.grid.values()) or "1"
    where, value = ("replicates", spec.replicates) if points <= max_runs else ("grid", shape)
    raise ScenarioError(f"the study has {total} runs ({shape} grid point(s) x "
                        f"{spec.replicates} replicate(s)), more than the cap of {max_runs}; "
                        f"raise it with --max-runs", path=where, value=value, source=source)


def grid_point_label(grid: Mapping[str, Any]) -> str:
    """``key=value, ...`` of a grid point, each value shortened (for messages).

    Examples
    --------
    >>> grid_point_label({"platform.generator.n": 8, "planners": ["lp"]})
    "platform.generator.n=8, planners=['lp']"
    """
    return ", ".join(f"{key}={short_repr(value)}" for key, value in grid.items())


def _check_grid_point(run: StudyRun, point: int, source: str) -> None:
    """Load ``run``'s scenario and look up its planners and option names, as a run would.

    Raises
    ------
    ScenarioError
        ``FILE: grid point P (key=value, ...): base.path: message (got value)``.
    """
    from portsim.planners.registry import get_planner  # the registry imports every planner

    where = f"{source}: grid point {point} ({grid_point_label(run.grid)})" if run.grid \
        else source
    try:
        scenario = run.load_scenario(where)
        nodes = scenario.platform.nodes
        for index, spec in enumerate(scenario.planners):
            try:
                planner = get_planner(spec.name)
                allowed = getattr(planner, "options", None)
                if isinstance(allowed, frozenset | set):
                    check_options(spec.name, spec.options, allowed)
            except PortsimError as err:
                raise ScenarioError(err.message, path=f"planners[{index}]" + (
                    f".{err.path.rsplit('.', 1)[-1]}" if err.path else ""),
                    value=err.value) from None
    except PortsimError as err:
        raise ScenarioError(err.message, path=f"base.{err.path}" if err.path else "base",
                            value=err.value, source=where) from None
    except Exception as err:  # a loader bug must still name the grid point, in one line
        raise ScenarioError(f"cannot load: {type(err).__name__}: {err}", path="base",
                            source=where) from None
    if "platform.port_model" in run.grid and all(n.port_model is not None for n in nodes):
        # every run of the sweep would replay the same platform, labelled apart
        raise ScenarioError(
            "a port model no node follows: every node of base.platform.nodes gives its own "
            "port_model, which the platform-wide one does not replace (sweep "
            "platform.nodes[i].port_model, or leave it out of the nodes)",
            path="grid.platform.port_model", value=run.grid["platform.port_model"],
            source=where)


def _anchor_simgrid_file(document: dict[str, Any], base_dir: Path) -> None:
    """Make a relative ``platform.simgrid`` file absolute (relative to ``base_dir``)."""
    platform = document.get("platform")
    simgrid = platform.get("simgrid") if isinstance(platform, dict) else None
    holder, key = (platform, "simgrid") if isinstance(simgrid, str) else (simgrid, "file")
    if isinstance(holder, dict) and isinstance(holder.get(key), str) and holder[key]:
        holder[key] = str((base_dir / holder[key]).absolute())


def _anchor_msccl_files(document: dict[str, Any], base_dir: Path) -> dict[int, str]:
    """Make the ``file`` of each ``msccl`` planner entry absolute (relative to
    ``base_dir``); the files as written, by planner index."""
    planners = document.get("planners")
    written: dict[int, str] = {}
    for index, entry in enumerate(planners if isinstance(planners, list) else []):
        if _is_msccl_entry(entry):
            written[index] = entry["file"]
            entry["file"] = str((base_dir / entry["file"]).absolute())
    return written


def _assign(document: dict[str, Any], dotted: str, value: Any, source: str) -> None:
    """Set ``document[a][b][c] = value`` for ``dotted = "a.b.c"``, creating mappings."""
    parts = dotted.split(".")
    node: Any = document
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            where = ".".join(parts[: depth + 1])
            raise ScenarioError(f"grid path {dotted!r} goes through a value that is not a "
                                f"mapping", path=f"base.{where}", value=child, source=source)
        node = child
    node[parts[-1]] = value
