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

Each run is keyed by a hash of its inputs (the resolved scenario document and
its seed), so the result store can tell done runs from new ones.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scenarios.loader import read_yaml, validate_document
from scenarios.schema import ScenarioSpec
from simulator.errors import ScenarioError

__all__ = [
    "GRID_PREFIX",
    "Study",
    "StudyRun",
    "StudySpec",
    "expand_study",
    "load_study",
    "run_key",
    "study_from_dict",
]

GRID_PREFIX = "grid."
"""Result columns holding grid values are named ``grid.<dotted path>``."""


class StudySpec(BaseModel):
    """The shape of a study file; unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    description: str = ""
    base: dict[str, Any]
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    replicates: int = Field(default=1, ge=1)


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
    """

    index: int
    key: str
    grid: Mapping[str, Any]
    seed: int
    scenario: Mapping[str, Any]


@dataclass(frozen=True)
class Study:
    """A loaded study: its name, its grid keys and the expanded runs."""

    name: str
    description: str
    grid_keys: tuple[str, ...]
    runs: tuple[StudyRun, ...]
    source: str


def run_key(scenario: Mapping[str, Any]) -> str:
    """The hash of a run's inputs: SHA-256 of the canonical JSON of its scenario.

    The scenario document carries the seed, so two runs share a key exactly
    when they would compute the same thing.

    Examples
    --------
    >>> run_key({"a": 1, "b": [2]}) == run_key({"b": [2], "a": 1})
    True
    """
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def load_study(path: str | os.PathLike[str]) -> Study:
    """Read, check and expand a study file.

    Raises
    ------
    ScenarioError
        One line naming the file, the key path and the bad value: unknown
        key, wrong type, empty grid list, a grid path that crosses a
        non-mapping value of ``base``.
    """
    source = os.fspath(path)
    return study_from_dict(read_yaml(path, error=ScenarioError), source=source)


def study_from_dict(data: object, source: str = "<string>") -> Study:
    """Check and expand a study already parsed from YAML.

    Examples
    --------
    >>> base = {"platform": {"generator": {"type": "complete", "n": 2}},
    ...         "operation": {"type": "reduce", "target": "P0"}, "planners": ["flat"]}
    >>> s = study_from_dict({"name": "s", "base": base,
    ...                      "grid": {"platform.generator.n": [4, 8]}, "replicates": 2})
    >>> [(r.grid["platform.generator.n"], r.seed) for r in s.runs]
    [(4, 0), (4, 1), (8, 0), (8, 1)]
    >>> s.runs[0].scenario["name"], s.runs[0].scenario["platform"]["generator"]["n"]
    ('s', 4)
    """
    spec = validate_document(StudySpec, data, source=source, error=ScenarioError)
    return expand_study(spec, source=source)


def expand_study(spec: StudySpec, *, source: str = "<string>") -> Study:
    """The runs of ``spec``: grid points in file order, then seeds.

    Raises
    ------
    ScenarioError
        On an empty grid list, an empty path segment, or a path through a
        value of ``base`` that is not a mapping.
    """
    for key, values in spec.grid.items():
        if not values:
            raise ScenarioError("a grid list must not be empty", path=f"grid.{key}",
                                value=values, source=source)
        if not key or any(not part for part in key.split(".")):
            raise ScenarioError("a grid key is a dotted path of non-empty names",
                                path="grid", value=key, source=source)
    keys = tuple(spec.grid)
    runs: list[StudyRun] = []
    for point in itertools.product(*(spec.grid[k] for k in keys)):
        grid = dict(zip(keys, point, strict=True))
        for seed in range(spec.replicates):
            document = copy.deepcopy(spec.base)
            for key, value in grid.items():
                _assign(document, key, copy.deepcopy(value), source)
            document.setdefault("name", spec.name)
            document["seed"] = seed
            runs.append(StudyRun(len(runs), run_key(document), grid, seed, document))
    _check_some_run_is_well_formed(runs, source)
    return Study(spec.name, spec.description, keys, tuple(runs), source)


def _check_some_run_is_well_formed(runs: list[StudyRun], source: str) -> None:
    """Reject a study none of whose scenarios has the right shape (a typo in ``base``).

    Only the document's shape is checked (cheap: no platform is built).  When
    some runs are well formed, the others are left to fail at run time, each
    as a row with its error.
    """
    first: ScenarioError | None = None
    for run in runs:
        try:
            validate_document(ScenarioSpec, dict(run.scenario), source=source,
                              error=ScenarioError, prefix="base")
        except ScenarioError as err:
            first = first or err
            continue
        return
    if first is not None:
        raise first


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
