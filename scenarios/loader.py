"""Load a scenario file into plain, checked, immutable model objects.

``load_scenario`` reads YAML, checks its shape against
:class:`portsim.scenarios.schema.ScenarioSpec`, builds the
:class:`~portsim.simulator.platform.Platform` (explicit or generated) and resolves
the :class:`~portsim.simulator.operations.Operation` against it.  Every bad input
raises :class:`~portsim.simulator.errors.ScenarioError` whose message is one line
naming the file, the key path and the bad value, e.g.::

    toy.yaml: platform.links[2].c: must be > 0 (got '0')

The building blocks (:func:`read_yaml`, :func:`build_platform`,
:func:`build_operation`) are shared with the schedule-file reader.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from portsim.scenarios.generators import (
    MULTIPORT,
    complete_platform,
    random_platform,
    sender_times_platform,
    three_class_platform,
)
from portsim.scenarios.json_text import DuplicateKeyError, parse_json
from portsim.scenarios.schema import (
    FABRIC_GENERATORS,
    CompleteGeneratorSpec,
    OperationSpec,
    PlatformSpec,
    RandomGeneratorSpec,
    ScenarioSpec,
    SenderTimesGeneratorSpec,
    SimgridSpec,
    ThreeClassGeneratorSpec,
    TiersGeneratorSpec,
)
from portsim.simulator.collector import paused_collection
from portsim.simulator.errors import (
    OperationError,
    PlatformError,
    PortsimError,
    ScenarioError,
    short_repr,
)
from portsim.simulator.operations import (
    OPERATION_FIELDS,
    Operation,
    misplaced_field,
)
from portsim.simulator.platform import Link, Node, Platform

__all__ = [
    "DEFAULT_SEED",
    "STDIN",
    "PlannerSpec",
    "Scenario",
    "build_operation",
    "build_platform",
    "load_scenario",
    "read_document",
    "read_once",
    "read_yaml",
    "scenario_from_dict",
    "validate_document",
]

DEFAULT_SEED = 0
"""Seed of the generators of a scenario that gives none, so that loading a
file twice always yields the same platform."""

_Model = TypeVar("_Model", bound=BaseModel)


@dataclass(frozen=True)
class PlannerSpec:
    """A planner to run: its registry name and its (unchecked) options."""

    name: str
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: everything a run needs, checked.

    Attributes
    ----------
    name:
        The scenario name (``[a-z0-9_-]+``).
    description:
        Free text (the published figure, for the examples).
    seed:
        The file's ``seed``, or ``None`` when it gives none.
    platform:
        The platform, explicit or generated.
    operation:
        The operation, already resolved against :attr:`platform`.
    planners:
        The planners to run, in file order.
    horizon:
        Time span of the steady-state replay, or ``None`` (planner's choice).
    source:
        Where the scenario came from (a file path or ``"<string>"``).
    """

    name: str
    description: str
    seed: int | None
    platform: Platform
    operation: Operation
    planners: tuple[PlannerSpec, ...]
    horizon: Fraction | None
    source: str


# -- public entry points ---------------------------------------------------------


STDIN = "-"
"""The file name that means standard input (and standard output for outputs)."""


def file_name(path: object, *, error: type[PortsimError], from_dict: str | None = None) -> str:
    """``os.fspath(path)``, or one error of class ``error`` naming what was given instead.

    The loaders take a file name (a ``str`` or a :class:`pathlib.Path`); a
    document already parsed goes to ``from_dict`` (named in the message when
    a mapping is given), not to a ``TypeError`` of :func:`os.fspath`.

    Examples
    --------
    >>> file_name(Path("a.yaml"), error=ScenarioError)
    'a.yaml'
    >>> file_name({"name": "x"}, error=ScenarioError, from_dict="scenario_from_dict")
    Traceback (most recent call last):
    ...
    portsim.simulator.errors.ScenarioError: expected a file name (a str or a pathlib.Path); \
a mapping already read goes to scenario_from_dict (got 'dict')
    """
    if isinstance(path, str | os.PathLike):
        name = os.fspath(path)
        if isinstance(name, str):
            return name
    hint = (f"; a mapping already read goes to {from_dict}"
            if from_dict is not None and isinstance(path, Mapping) else "")
    raise error(f"expected a file name (a str or a pathlib.Path){hint}",
                value=type(path).__name__)


def read_document(path: str | os.PathLike[str], *,
                  error: type[PortsimError], text: str | None = None) -> tuple[Any, str, Path]:
    """Read one YAML document from ``path``, or from standard input for ``"-"``
    (``text``: what the caller already read from it with :func:`read_once`).

    Returns
    -------
    tuple
        ``(data, source, base_dir)``: the parsed document, the name errors
        give it (``"<stdin>"`` for standard input) and the directory its
        relative file names are relative to (the current one for stdin).

    Raises
    ------
    PortsimError
        (of class ``error``) as :func:`read_yaml`.
    """
    name = file_name(path, error=error)
    if name != STDIN and text is None:
        return read_yaml(path, error=error), name, Path(path).parent
    import tempfile

    source, base_dir = ("<stdin>", Path.cwd()) if name == STDIN else (name, Path(path).parent)
    if text is None:
        text = read_once(path, error=error)
    with tempfile.TemporaryDirectory(prefix="portsim-") as folder:
        copy = Path(folder) / "stdin.yaml"
        copy.write_text(text, encoding="utf-8")
        try:
            data = read_yaml(copy, error=error)
        except PortsimError as err:
            raise err.with_source(source) from None
    return data, source, base_dir


def read_once(path: str | os.PathLike[str], *, error: type[PortsimError]) -> str:
    """The text of standard input (``"-"``) or of the file ``path``, read in one go:
    for a stream that cannot be read twice (a pipe: ``<(zcat s.jsonl.gz)``), whose
    form (YAML or JSON Lines) is told from its text before it is parsed.

    Raises
    ------
    PortsimError
        (of class ``error``) as :func:`read_yaml`: on bytes that are not UTF-8 (a
        byte order mark is dropped), naming ``<stdin>`` or the file.
    """
    name = file_name(path, error=error)
    if name != STDIN:
        return _read_text(path, name, error)
    # the bytes, decoded here as a file's are: the stream's own decoding either fails
    # with a traceback or (surrogateescape) passes undecodable bytes on
    stream = sys.stdin
    data = (stream.buffer.read() if hasattr(stream, "buffer")
            else stream.read().encode("utf-8", "surrogateescape"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"cannot read file: {str(err).splitlines()[0]}", source="<stdin>") from None


def _read_text(path: str | os.PathLike[str], source: str, error: type[PortsimError]) -> str:
    """The text of the file ``path`` (UTF-8, a byte order mark dropped), or the error
    naming ``source``: ``file not found``, ``cannot read file: REASON``."""
    try:
        # utf-8-sig: a byte order mark (Windows tools write one) is no JSON
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error("file not found", source=source) from None
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or str(err).splitlines()[0]
        raise error(f"cannot read file: {reason}", source=source) from None


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read and check a scenario file.

    Parameters
    ----------
    path:
        The YAML file, or ``"-"`` for standard input.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        One line naming the file, the key path and the bad value: file not
        found, YAML syntax error, empty file, unknown key, wrong type, unknown
        node id, non-positive cost, target unreachable from its source,
        participant listed twice, bad port model, bad generator parameter.
    """
    file_name(path, error=ScenarioError, from_dict="scenario_from_dict")
    data, source, base_dir = read_document(path, error=ScenarioError)
    if isinstance(data, dict) and "events" in data and "planners" not in data:
        raise ScenarioError("this is a schedule file (it has events and no planners): "
                            "check it with `portsim validate`", source=source)
    return scenario_from_dict(data, source=source, base_dir=base_dir)


def scenario_from_dict(data: object, source: str = "<string>", *,
                       base_dir: str | os.PathLike[str] | None = None) -> Scenario:
    """Check a scenario already parsed from YAML (or built in Python).

    Parameters
    ----------
    data:
        The scenario mapping, as in a scenario file.
    source:
        Named in error messages.
    base_dir:
        Directory a ``platform.simgrid`` file is relative to (default: the
        current directory).

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        As :func:`load_scenario`.

    Examples
    --------
    >>> s = scenario_from_dict({
    ...     "name": "tiny",
    ...     "platform": {"nodes": [{"id": "A"}, {"id": "B"}],
    ...                  "links": [{"src": "A", "dst": "B", "c": "2/3"}]},
    ...     "operation": {"type": "broadcast", "source": "A"},
    ...     "planners": ["flat", {"name": "greedy", "concurrent_transfers": 4}],
    ... })
    >>> s.platform.cost("A", "B"), s.operation.targets
    (Fraction(2, 3), ('B',))
    >>> s.planners[1].name, s.planners[1].options["concurrent_transfers"]
    ('greedy', 4)
    """
    spec = validate_document(ScenarioSpec, data, source=source, error=ScenarioError)
    seed = spec.seed if spec.seed is not None else DEFAULT_SEED
    try:
        platform = build_platform(spec.platform, seed=seed, base_dir=base_dir)
        operation = build_operation(spec.operation, platform)
    except (PlatformError, OperationError) as err:
        raise _converted(err, ScenarioError, source) from None
    return Scenario(
        name=spec.name,
        description=spec.description,
        seed=spec.seed,
        platform=platform,
        operation=operation,
        planners=tuple(_planner_spec(i, p.name, p.options, source, base_dir)
                       for i, p in enumerate(spec.planners)),
        horizon=spec.horizon,
        source=source,
    )


def _planner_spec(index: int, name: str, options: Mapping[str, Any], source: str,
                  base_dir: str | os.PathLike[str] | None) -> PlannerSpec:
    """A planner entry; the ``msccl`` planner's ``file`` is resolved against the
    scenario's directory and read now, so a malformed algorithm is bad input."""
    if name != "msccl":
        return PlannerSpec(name, MappingProxyType(dict(options)))
    from portsim.planners.msccl.planner import msccl_file_option

    resolved = dict(options)
    try:
        resolved["file"] = msccl_file_option(options.get("file"), base_dir,
                                             path=f"planners[{index}].file")
    except PortsimError as err:
        if err.source:  # the algorithm's own line (its file, GPU, step): after the entry's
            raise ScenarioError(str(err), path=f"planners[{index}].file",
                                source=source) from None
        raise _converted(err, ScenarioError, source) from None
    return PlannerSpec(name, MappingProxyType(resolved))


# -- shared building blocks ------------------------------------------------------------


YAML_ALIAS_BUDGET = 1_000_000
"""How many nodes YAML aliases may add to a document once expanded (beyond
the document's own nodes).  A "billion laughs" file of a few hundred bytes
expands to billions; an honest file with a few anchors adds a handful."""

YAML_MAX_DEPTH = 100
"""How deeply mappings and lists may nest in a YAML document (portsim's own
files nest fewer than ten levels); deeper is "nested too deeply"."""


def read_yaml(path: str | os.PathLike[str], *, error: type[PortsimError]) -> Any:
    """Read one YAML document, rejecting duplicate keys and alias bombs (a file
    named ``.json``: one JSON document, :func:`_read_json`).

    The C parser of libyaml is used when PyYAML has it (ten times faster);
    on a syntax error the pure-Python parser is run again, so messages are
    the same with or without libyaml.  Before anything is built from the
    parsed nodes, the size the document would have with every alias
    expanded is computed (a memoised walk over the node graph, which never
    expands anything): more than :data:`YAML_ALIAS_BUDGET` nodes added by
    aliases, or an alias inside itself, is an error naming the top-level key.

    Raises
    ------
    PortsimError
        (of class ``error``) when the file cannot be read, is not valid YAML,
        is empty or expands too much; the message names the file, and the
        line and column of a syntax error.
    """
    source = file_name(path, error=error)
    text = _read_text(path, source, error)
    if source.lower().endswith(".json"):
        return _read_json(text, source, error)
    try:
        try:
            data = _load_bounded(text, _FastUniqueKeyLoader, source, error)
        except yaml.YAMLError:
            if _FastUniqueKeyLoader is _UniqueKeyLoader:
                raise
            # libyaml words its errors differently: report the pure-Python parser's.
            data = _load_bounded(text, _UniqueKeyLoader, source, error)
    except yaml.YAMLError as err:
        raise _yaml_error(err, text, source, error) from None
    except RecursionError:
        raise error("invalid YAML: nested too deeply", source=source) from None
    except ValueError as err:  # an integer beyond Python's digit limit, for one
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "integer string conversion" in reason:
            reason = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise error(f"invalid YAML: {reason}", source=source) from None
    if data is None:
        raise error("empty file", source=source)
    return data


def _read_json(text: str, source: str, error: type[PortsimError]) -> Any:
    """A ``.json`` file as JSON (:func:`~portsim.scenarios.json_text.parse_json`): its
    errors say JSON, with the line and column, and a large schedule reads in C (50,000
    events: 12 s through the YAML reader)."""
    try:
        data = parse_json(text)
    except DuplicateKeyError as err:
        raise error(f"invalid JSON: duplicate key {str(err)!r}", source=source) from None
    except json.JSONDecodeError as err:
        raise error(f"invalid JSON: {err.msg}", path=f"line {err.lineno}, column {err.colno}",
                    source=source) from None
    except RecursionError:
        raise error("invalid JSON: nested too deeply", source=source) from None
    except ValueError as err:  # an integer beyond Python's digit limit
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise error(f"invalid JSON: {reason}", source=source) from None
    if data is None:
        raise error("empty file", source=source)
    return data


def _load_bounded(text: str, loader_class: type[Any], source: str,
                  error: type[PortsimError]) -> Any:
    """Parse ``text`` into nodes, check the alias expansion, then build the data.

    The garbage collector is paused meanwhile (:func:`paused_collection`):
    the node graph and the data built from it survive until the end, and its
    walks over them took two thirds of the time (a schedule of 100,000 events
    read in 11.4 s, 4.0 s paused).
    """
    if loader_class is _FastUniqueKeyLoader and "&" not in text and (
            _C_SAFE_LOADER is not yaml.SafeLoader):
        try:  # no anchor, so no alias: item by item
            return _load_bounded(text, _ItemByItemLoader, source, error)
        except ValueError:
            # A value no type takes (an integer of 5,000 digits, 2001-02-30) in an
            # item built before the rest is parsed: read whole, so that a syntax
            # error, duplicate key or depth after it is the error, as it was.
            pass
    loader = loader_class(text)
    try:
        with paused_collection():
            node = loader.get_single_node()
            if node is None:
                return None
            if "&" in text:  # an anchor, so maybe aliases: the graph may share nodes
                _check_alias_expansion(node, source, error)
            elif _too_deep(node):  # a tree
                raise error("invalid YAML: nested too deeply", source=source)
            return loader.construct_document(node)
    finally:
        loader.dispose()


def _too_deep(root: yaml.Node, depth: int = 1) -> bool:
    """True when collections nest more than :data:`YAML_MAX_DEPTH` levels (a tree:
    no node shared); ``root`` at level ``depth``."""
    stack = [(root, depth)]
    while stack:
        node, depth = stack.pop()
        if depth > YAML_MAX_DEPTH:
            return True
        for child in _yaml_children(node):
            if not isinstance(child, yaml.ScalarNode):
                stack.append((child, depth + 1))
    return False


def _check_alias_expansion(root: yaml.Node, source: str, error: type[PortsimError]) -> None:
    """Refuse a document whose aliases expand it by more than :data:`YAML_ALIAS_BUDGET`
    nodes, that holds an alias inside the node it names, or that nests more than
    :data:`YAML_MAX_DEPTH` levels."""
    # Per collection node: its expanded size (scalars count 1) and how many
    # levels of collections it holds; scalars are leaves, never stacked.
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    scalars = 0  # scalar nodes, for the file's own size
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _yaml_children(node)
        if finished:
            total, levels = 1, 0
            for child in children:
                if isinstance(child, yaml.ScalarNode):
                    total += 1
                else:
                    total += size[id(child)]
                    levels = max(levels, height[id(child)])
            size[key], height[key] = total, levels + 1
            if levels + 1 > YAML_MAX_DEPTH:
                raise error("invalid YAML: nested too deeply", source=source)
            on_path.discard(key)
            continue
        if key in size:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if isinstance(child, yaml.ScalarNode):
                scalars += 1  # once per collection holding it (an aliased scalar: more)
                continue
            if id(child) in on_path:
                raise error("a YAML alias refers to a node that contains it (a recursive "
                            "structure)", path=_top_key(root, child),
                            value=_anchor_text(child), source=source)
            if id(child) not in size:
                stack.append((child, False))
    added = size[id(root)] - len(size) - scalars
    if added > YAML_ALIAS_BUDGET:
        heaviest = _top_key(root, None, size)
        raise error(f"YAML aliases expand this to {size[id(root)]:,} nodes, "
                    f"{added:,} more than the file holds (the budget is "
                    f"{YAML_ALIAS_BUDGET:,}): an alias bomb?", path=heaviest, source=source)


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _top_key(root: yaml.Node, target: yaml.Node | None,
             size: dict[int, int] | None = None) -> str | None:
    """The top-level key whose value holds ``target`` (or, with ``size``, the
    heaviest one), for the error message."""
    if not isinstance(root, yaml.MappingNode):
        return None
    best: tuple[int, str] | None = None
    for key_node, value_node in root.value:
        name = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
        if size is not None:
            weight = size.get(id(value_node), 0)
            if best is None or weight > best[0]:
                best = (weight, name)
        elif _reaches(value_node, target):
            return name
    return None if best is None else best[1]


def _reaches(start: yaml.Node, target: yaml.Node | None) -> bool:
    seen: set[int] = set()
    stack = [start]
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(_yaml_children(node))
    return False


def _anchor_text(node: yaml.Node) -> str | None:
    mark = getattr(node, "start_mark", None)
    return None if mark is None else f"line {mark.line + 1}"


def validate_document(
    model: type[_Model],
    data: object,
    *,
    source: str,
    error: type[PortsimError],
    prefix: str = "",
) -> _Model:
    """Validate ``data`` against a schema model, as a one-line ``error``.

    Parameters
    ----------
    model:
        A model of :mod:`portsim.scenarios.schema`.
    data:
        The parsed document (or part of it).
    source:
        Named in the message.
    error:
        The exception class to raise.
    prefix:
        Key path of ``data`` inside its file (``""`` for the whole file).

    Raises
    ------
    PortsimError
        (of class ``error``) for the first problem pydantic reports, with the
        key path read from its location.
    """
    if not isinstance(data, Mapping):
        raise error("expected a mapping of keys", path=prefix or None, value=_short(data),
                    source=source)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise _from_validation(err, data, source=source, error=error, prefix=prefix) from None


def build_platform(spec: PlatformSpec, *, seed: int | None = DEFAULT_SEED,
                   base_dir: str | os.PathLike[str] | None = None) -> Platform:
    """Build the platform a :class:`~portsim.scenarios.schema.PlatformSpec` describes.

    An explicit link with ``both_ways: true`` also adds the reverse link with
    the same cost.  A generator is called with ``seed``.  A ``simgrid`` file
    is read relative to ``base_dir`` (default: the current directory) by
    :func:`portsim.scenarios.simgrid.simgrid_platform`.

    Raises
    ------
    PlatformError
        With the key path in the file (``platform.links[2].dst``); for a
        SimGrid file, the path is ``platform.simgrid`` and the message names
        the XML file and the element (``small.xml: route[0].dst: ...``).
    """
    explicit = spec.nodes is not None or spec.links is not None
    forms = [key for key, given in (("nodes", explicit), ("generator", spec.generator),
                                    ("simgrid", spec.simgrid)) if given]
    if len(forms) > 1:
        raise PlatformError("give one of nodes and links, a generator or a simgrid file, not both",
                            path=f"platform.{forms[-1]}", value=", ".join(forms))
    if spec.generator is not None:
        return _generate(spec, seed)
    if spec.simgrid is not None:
        return _simgrid(spec.simgrid, spec, base_dir)
    if spec.nodes is None:
        raise PlatformError("missing required key (or give a generator)", path="platform.nodes")
    nodes = tuple(Node(n.id, n.compute, n.port_model, n.router) for n in spec.nodes)
    links: list[Link] = []
    origin: list[int] = []  # index, in the file, of the entry each link comes from
    for i, link in enumerate(spec.links or ()):
        for made in link.links():
            links.append(made)
            origin.append(i)
    try:
        return Platform(nodes, tuple(links), spec.port_model)
    except PlatformError as err:
        prefix = "platform.links["
        if err.path and err.path.startswith(prefix):
            index, _, rest = err.path[len(prefix):].partition("]")
            err.path = f"{prefix}{origin[int(index)]}]{rest}"
        raise


def build_operation(spec: OperationSpec, platform: Platform) -> Operation:
    """Build the operation of ``spec`` and resolve it against ``platform``.

    Raises
    ------
    OperationError
        With the key path (``operation.participants[1]``): a field that does
        not apply to this kind of operation, an unknown node, a node listed
        twice, a target unreachable from its source.
    """
    kind = spec.kind
    misplaced = sorted(spec.model_fields_set - {"type", "size"} - OPERATION_FIELDS[kind])
    if misplaced:
        key = misplaced[0]
        raise misplaced_field(kind, key, getattr(spec, key))
    operation = Operation(
        kind=kind,
        source=spec.source,
        targets=tuple(spec.targets or ()),
        participants=tuple(spec.participants or ()),
        target=spec.target,
        sources=tuple(spec.sources or ()),
        commutative=spec.commutative,
        size=spec.size,
    )
    return operation.resolve(platform)


# -- helpers -------------------------------------------------------------------------


def _generate(spec: PlatformSpec, seed: int | None) -> Platform:
    generator = spec.generator
    try:
        if isinstance(generator, FABRIC_GENERATORS):
            # Fabrics default to multiport nodes (one port per link), not the
            # platform-wide default of the other platforms.
            given = "port_model" in spec.model_fields_set
            return generator.build(spec.port_model if given else MULTIPORT)
        if isinstance(generator, CompleteGeneratorSpec):
            return complete_platform(generator.n, generator.c, generator.compute,
                                     port_model=spec.port_model)
        if isinstance(generator, SenderTimesGeneratorSpec):
            return sender_times_platform(generator.times, port_model=spec.port_model)
        if isinstance(generator, TiersGeneratorSpec):
            from portsim.scenarios.tiers import tiers_platform  # on use: start-up

            return tiers_platform(generator.wan, generator.man, generator.lan, generator.hosts,
                                  c_wan=generator.c_wan, c_man=generator.c_man,
                                  c_lan=generator.c_lan, compute=generator.compute,
                                  wan_redundancy=generator.wan_redundancy, seed=seed,
                                  port_model=spec.port_model)
        if isinstance(generator, ThreeClassGeneratorSpec):
            return three_class_platform(
                generator.n, generator.times, probabilities=generator.probabilities,
                counts=generator.counts,
                seed=seed, port_model=spec.port_model)
        assert isinstance(generator, RandomGeneratorSpec)
        return random_platform(generator.n, generator.degree, generator.c, generator.compute,
                               seed=seed, port_model=spec.port_model)
    except PlatformError as err:
        err.path = f"platform.generator.{err.path}" if err.path else "platform.generator"
        raise


def _simgrid(simgrid: SimgridSpec, spec: PlatformSpec,
             base_dir: str | os.PathLike[str] | None) -> Platform:
    """Import ``simgrid.file``; an error names the XML file as written and the element."""
    from portsim.scenarios.simgrid import simgrid_platform  # on use: start-up (XML parser)

    path = Path(simgrid.file)
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    if not path.exists():
        # where it was looked for: relative to the scenario's folder, the current
        # one for a scenario on standard input
        at = "" if str(path) == simgrid.file else f" at {path}"
        raise PlatformError(f"{simgrid.file}: file not found{at}", path="platform.simgrid")
    try:
        return simgrid_platform(path, message_size=simgrid.message_size,
                                task_flops=simgrid.task_flops, port_model=spec.port_model)
    except ScenarioError as err:
        where = f"{err.path}: " if err.path else ""
        raise PlatformError(f"{simgrid.file}: {where}{err.message}", path="platform.simgrid",
                            value=err.value) from None


def _converted(err: PortsimError, error: type[PortsimError], source: str) -> PortsimError:
    return error(err.message, path=err.path, value=err.value, source=source)


def _short(value: object, limit: int = 80) -> object:
    """``value`` itself, or a truncated ``repr`` when it would make the line too long.

    The ``repr`` is bounded (:func:`~portsim.simulator.errors.short_repr`): a document
    built from YAML aliases may hold a billion elements.
    """
    text = short_repr(value)
    return value if len(text) <= limit else text[: limit - 3] + "..."


def _format_path(prefix: str, segments: Sequence[str | int]) -> str:
    path = prefix
    for segment in segments:
        if isinstance(segment, int):
            path += f"[{segment}]"
        else:
            path += f".{segment}" if path else str(segment)
    return path


def _document_location(loc: Sequence[str | int], data: object) -> list[str | int]:
    """Turn a pydantic error location into a key path of the document.

    Pydantic inserts union tags (``"random"``) and validator names into
    locations; walking the document drops every element it does not hold.
    The last element is kept (it names a missing or unknown key).  An index
    into a list becomes an ``int``, a mapping key a ``str``.
    """
    segments: list[str | int] = []
    node = data
    for position, key in enumerate(loc):
        if isinstance(node, Mapping) and key in node:
            segments.append(str(key))
            node = node[key]
        elif (isinstance(node, list) and isinstance(key, int)
              and not isinstance(key, bool) and 0 <= key < len(node)):
            segments.append(key)
            node = node[key]
        elif position == len(loc) - 1 and key != "[key]":
            segments.append(str(key))
    return segments


def _from_validation(
    err: ValidationError,
    data: object,
    *,
    source: str,
    error: type[PortsimError],
    prefix: str,
) -> PortsimError:
    errors = err.errors(include_url=False)
    # A misspelt key shows up both as unknown and as missing: name the typo.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    segments = _document_location(first["loc"], data)
    kind = first["type"]
    message = first["msg"]
    value: object = first.get("input")
    context = first.get("ctx") or {}
    if kind == "extra_forbidden":
        message, value = "unknown key", segments[-1] if segments else None
    elif kind == "missing":
        message, value = "missing required key", None
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        segments.append(str(context.get("discriminator", "type")).strip("'"))
        if kind == "union_tag_not_found":
            message, value = "missing required key", None
        else:
            expected = context.get("expected_tags", "")
            message, value = f"unknown type, expected one of {expected}", context.get("tag")
    else:
        message = message[:1].lower() + message[1:]
    if value is not None:
        value = _short(value)  # PortsimError prints it as "(got ...)"
    return error(message, path=_format_path(prefix, segments) or None, value=value,
                 source=source)


def _yaml_error(
    err: yaml.YAMLError, text: str, source: str, error: type[PortsimError]
) -> PortsimError:
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    mark = getattr(err, "problem_mark", None)
    if mark is None:
        return error(f"invalid YAML: {problem}", source=source)
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    # The bad value is the text of the line; at the end of the file, the line
    # where the unfinished construct began.
    lines = text.splitlines()
    line = None
    for candidate in (mark, getattr(err, "context_mark", None)):
        if candidate is not None and candidate.line < len(lines) and lines[candidate.line].strip():
            line = lines[candidate.line].strip()
            break
    return error(f"invalid YAML: {problem}", path=where, value=_short(line) if line else None,
                 source=source)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class _UniqueKeys(yaml.constructor.SafeConstructor):
    """Mixin of the safe YAML loaders: a key given twice in one mapping is an error."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                # ``<<: *anchor``: the base class merges it (flatten_mapping), the
                # mapping's own keys overriding the merged ones, as YAML says.
                continue
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: let the base class report it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"duplicate key {key!r}", key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    """The pure-Python safe YAML loader, rejecting duplicate keys."""


_C_SAFE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastUniqueKeyLoader(_UniqueKeys, _C_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """The same on libyaml's C parser (PyYAML without libyaml: the pure-Python one)."""


_BUILT_TAG = "tag:portsim,2026:built"
"""The tag of a node :class:`_ItemByItemLoader` has already built (its value is the data)."""


class _ItemByItemLoader(_UniqueKeys, _C_SAFE_LOADER, yaml.composer.Composer):  # type: ignore[misc,valid-type]
    """libyaml's parser under PyYAML's composer, building each item of a top-level
    list as soon as it is parsed.

    A document's node graph is about eight times the data built from it (a
    scalar node keeps its tag and two marks): a schedule of 100,000 events
    held 390 MB of nodes for 60 MB of data.  Here each item of a list that
    is the value of a top-level key (``events``, ``links``...) is built as
    soon as it is composed, after the same depth check, and its nodes freed:
    the same data, about a fifth of the peak memory, about a sixth more
    time (Python composes the nodes libyaml parses).  Only for a document
    without anchors (no ``&``): an alias may name any earlier node, and
    :func:`_check_alias_expansion` walks the whole graph.
    """

    get_single_node = yaml.composer.Composer.get_single_node
    compose_document = yaml.composer.Composer.compose_document

    def __init__(self, stream: str) -> None:
        _C_SAFE_LOADER.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        self._depth = 0
        self._merged = False  # the top-level value being composed is merged (``<<:``)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self._depth == 1:
            self._merged = isinstance(index, yaml.ScalarNode) and index.tag == _MERGE_TAG
        self._depth += 1
        try:
            node = yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1
        # an item of a plain list (not a !!omap, nor mappings to merge), not too
        # deep (left as it is for the whole document's check)
        if (node is not None and self._depth == 2 and isinstance(parent, yaml.SequenceNode)
                and parent.tag == _SEQ_TAG and not self._merged
                and not _too_deep(node, depth=3)):
            data = self.construct_object(node, deep=True)
            self.constructed_objects.clear()
            self.recursive_objects.clear()
            return yaml.ScalarNode(_BUILT_TAG, data, node.start_mark, node.end_mark)
        return node


_ItemByItemLoader.add_constructor(_BUILT_TAG, lambda _loader, node: node.value)
