"""Read and write schedule files (SPEC.md, "Schedule file").

A schedule file holds a platform, an operation and timed events::

    platform: {...}              # as in a scenario (explicit or generator) ...
    platform_file: toy.yaml      # ... or a file, relative to this one
    port_model: unidirectional   # optional: overrides the platform-wide model
    seed: 3                      # optional: seed of a platform generator
    operation: {...}             # as in a scenario
    period: "12"                 # periodic form only
    instances_per_period: 1      # periodic form only
    follows: [[0, 1]]            # one-shot form only: event 1 starts once event 0 ends
    events:
      - {kind: send, src: Ps, dst: Pa, item: "m[P0]", start: "0", part: "1/4", lag: 1}
      - {kind: compute, node: P0, inputs: ["v[0,0]", "v[1,1]"], output: "v[0,1]", start: 1}
    description: free text       # optional, ignored when reading

The same document also comes in a compact form for very large schedules,
JSON Lines (a file ending in ``.jsonl``): the first line is a JSON object
holding every key but ``events``, and every further line is one event, a
JSON object with the same keys as in YAML (blank lines are skipped; event
``events[i]`` is the i-th event line).  :func:`load_schedule` and
:func:`dump_schedule` choose the form from the file name.

``platform_file`` names a YAML file holding either a mapping with a
``platform:`` key (a scenario file will do; its ``seed`` is used when the
schedule gives none) or a bare platform mapping (``port_model``, ``nodes``,
``links`` or ``generator``).  A generator without any seed uses seed 0.

:func:`dump_schedule` always writes the platform explicitly, every exact
number as a string (``"2/3"``), one node, link or event per line, so that
``load_schedule`` gives back the same platform, operation and events.
Every bad input raises :class:`~portsim.simulator.errors.ScheduleError` whose message
is one line naming the file, the key path and the bad value.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml

from portsim.scenarios.json_text import DuplicateKeyError, parse_json
from portsim.scenarios.loader import (
    DEFAULT_SEED,
    build_operation,
    build_platform,
    file_name,
    read_document,
    read_yaml,
    validate_document,
)
from portsim.scenarios.output import replacing, write_text
from portsim.scenarios.schema import PlatformSpec, ScheduleFileSpec
from portsim.simulator.errors import PortsimError, ScheduleError
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Event, EventReader, Schedule, event_to_dict

__all__ = [
    "JSONL_SUFFIX",
    "dump_schedule",
    "is_jsonl",
    "load_schedule",
    "load_schedule_text",
    "platform_to_dict",
    "read_platform_file",
    "schedule_from_dict",
    "schedule_to_dict",
]


JSONL_SUFFIX = ".jsonl"
"""File names ending so hold a schedule in the JSON Lines form."""

_BOM = "\ufeff"
"""The byte order mark Windows tools put first in a UTF-8 file, which JSON refuses."""

JSON_SUFFIX = ".json"
""":func:`dump_schedule` writes a path ending so as one JSON document, and
:func:`load_schedule` reads it back as JSON (duplicate keys refused)."""


# -- reading ---------------------------------------------------------------------


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read and check a schedule file.

    Parameters
    ----------
    path:
        The YAML file (one JSON document when the name ends in ``.json``), or a
        JSON Lines file when the name ends in ``.jsonl``
        (the compact form for very large schedules); a ``platform_file`` in
        it is relative to its directory.

    Returns
    -------
    Schedule
        One-shot, or periodic when the file has a ``period``.

    Raises
    ------
    ScheduleError
        One line naming the file, the key path and the bad value: unreadable
        or invalid YAML, unknown key, bad platform or operation, bad event
        (unknown key, unknown node, a time that is not a number, a negative
        start, a start outside ``[0, period)``).
    """
    if file_name(path, error=ScheduleError,
                 from_dict="schedule_from_dict").endswith(JSONL_SUFFIX):
        return _load_jsonl(path)
    data = read_yaml(path, error=ScheduleError)
    return schedule_from_dict(data, source=os.fspath(path), base_dir=Path(path).parent)


def _load_jsonl(path: str | os.PathLike[str]) -> Schedule:
    """The JSON Lines form: a header object, then one event object per line.

    The events are parsed line by line straight into events (no list of
    mappings is kept), so a file of a million events loads in seconds.
    """
    source = os.fspath(path)
    try:
        # utf-8-sig: a byte order mark opening the first line is no JSON
        stream = open(path, encoding="utf-8-sig")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise ScheduleError("file not found", source=source) from None
    except OSError as err:
        raise ScheduleError(f"cannot read file: {err.strerror or err}", source=source) from None
    with stream:
        return _read_jsonl(stream, source, Path(path).parent)


def is_jsonl(text: str) -> bool:
    r"""True when ``text`` is in the JSON Lines form: its first non-blank line is a
    JSON object and another non-blank line follows (one YAML or JSON document
    never is).

    Examples
    --------
    >>> is_jsonl('{"operation": {"type": "broadcast"}}\n{"kind": "send"}\n')
    True
    >>> is_jsonl('{"operation": {"type": "broadcast"}, "events": []}\n')
    False
    """
    lines = [line for line in text.removeprefix(_BOM).splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(lines[0]), dict)
    except ValueError:
        return False


def load_schedule_text(text: str, *, source: str = "<stdin>",
                       base_dir: str | os.PathLike[str] = ".") -> Schedule:
    """A schedule in the JSON Lines form given as text (``portsim validate -``).

    ``source`` names it in errors; a ``platform_file`` is relative to
    ``base_dir``.  A schedule in one YAML document is read by
    :func:`load_schedule` from a file.
    """
    return _read_jsonl(io.StringIO(text.removeprefix(_BOM)), source, Path(base_dir))


def _read_jsonl(stream: Iterable[str], source: str, base_dir: Path) -> Schedule:
    """The JSON Lines form from ``stream``'s lines (see :func:`_load_jsonl`)."""
    lines = enumerate(stream, start=1)
    try:
        header = _first_json_object(lines, source)
        if "events" in header:
            raise ScheduleError("in a .jsonl schedule the events follow the first line, "
                                "one per line", path="events", value="[...]",
                                source=source)
        spec = validate_document(ScheduleFileSpec, {**header, "events": []},
                                 source=source, error=ScheduleError)
        platform, operation = _platform_and_operation(spec, source, base_dir)
        reader = EventReader()
        events: list[Event] = []
        for lineno, line in lines:
            if not line.strip():
                continue
            data = _json_line(line, lineno, source)
            try:
                events.append(reader.read(data, f"events[{len(events)}]"))
            except PortsimError as err:
                raise _as_schedule_error(err, source) from None
    except UnicodeDecodeError as err:
        raise ScheduleError(f"cannot read file: {err.reason}", source=source) from None
    try:
        return Schedule(platform, operation, tuple(events), spec.period,
                        spec.instances_per_period,
                        tuple(spec.follows or ()))
    except PortsimError as err:
        raise _as_schedule_error(err, source) from None


def _first_json_object(lines: Iterable[tuple[int, str]], source: str) -> dict[str, Any]:
    for lineno, line in lines:
        if line.strip():
            data = _json_line(line, lineno, source)
            if not isinstance(data, dict):
                raise ScheduleError("the first line must be a JSON object: the schedule's "
                                    "keys but events", path=f"line {lineno}",
                                    value=_short_line(line), source=source)
            return data
    raise ScheduleError("empty file", source=source)


def _json_line(line: str, lineno: int, source: str) -> Any:
    try:
        return parse_json(line)
    except DuplicateKeyError as err:
        raise ScheduleError(f"invalid JSON: duplicate key {str(err)!r}", path=f"line {lineno}",
                            value=_short_line(line), source=source) from None
    except json.JSONDecodeError as err:
        raise ScheduleError(f"invalid JSON: {err.msg}", path=f"line {lineno}, column {err.pos + 1}",
                            value=_short_line(line), source=source) from None
    except (ValueError, RecursionError) as err:  # an integer beyond the digit limit...
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ScheduleError(f"invalid JSON: {reason}", path=f"line {lineno}",
                            value=_short_line(line), source=source) from None


def _short_line(line: str) -> str:
    line = line.strip()
    return line if len(line) <= 60 else line[:57] + "..."


def schedule_from_dict(
    data: object,
    *,
    source: str = "<string>",
    base_dir: str | os.PathLike[str] | None = None,
) -> Schedule:
    """Check a schedule document already parsed from YAML.

    Parameters
    ----------
    data:
        The mapping, as in a schedule file.
    source:
        Named in error messages.
    base_dir:
        Directory a ``platform_file`` is relative to (default: the current one).

    Returns
    -------
    Schedule

    Raises
    ------
    ScheduleError
        As :func:`load_schedule`.
    """
    spec = validate_document(ScheduleFileSpec, data, source=source, error=ScheduleError)
    platform, operation = _platform_and_operation(
        spec, source, Path(base_dir) if base_dir is not None else None)
    try:
        return Schedule.from_dicts(platform, operation, spec.events, period=spec.period,
                                   instances_per_period=spec.instances_per_period,
                                   follows=spec.follows)
    except PortsimError as err:
        raise _as_schedule_error(err, source) from None


def _platform_and_operation(spec: ScheduleFileSpec, source: str,
                            base_dir: Path | None) -> tuple[Platform, Operation]:
    platform = _schedule_platform(spec, source, base_dir)
    try:
        if spec.port_model is not None:
            platform = platform.with_port_model(spec.port_model)
        return platform, build_operation(spec.operation, platform)
    except PortsimError as err:
        raise _as_schedule_error(err, source) from None


def _schedule_platform(spec: ScheduleFileSpec, source: str, base_dir: Path | None) -> Platform:
    if spec.platform is not None and spec.platform_file is not None:
        raise ScheduleError("give either platform or platform_file, not both",
                            path="platform_file", value=spec.platform_file, source=source)
    if spec.platform is not None:
        try:
            return build_platform(spec.platform, seed=_seed(spec.seed), base_dir=base_dir)
        except PortsimError as err:
            raise _as_schedule_error(err, source) from None
    if spec.platform_file is None:
        raise ScheduleError("missing required key (or give platform_file)", path="platform",
                            source=source)

    file = (base_dir or Path()) / spec.platform_file
    if not file.is_file():
        at = "" if str(file) == spec.platform_file else f" at {file}"
        raise ScheduleError(f"platform file not found{at}", path="platform_file",
                            value=spec.platform_file, source=source)
    return read_platform_file(file, seed=spec.seed)


def read_platform_file(path: str | os.PathLike[str], *, seed: int | None = None) -> Platform:
    """The platform of a YAML file: a ``platform:`` mapping, or a file with a ``platform:`` key.

    A scenario file therefore serves as a platform file (its ``seed`` drives
    its generator unless ``seed`` is given).  Relative file names inside are
    relative to the file's directory.

    Raises
    ------
    ScheduleError
        One line naming the file, the key path and the value.
    """
    # "-": standard input, as for a scenario (relative file names from the current folder)
    data, file_source, base_dir = read_document(path, error=ScheduleError)
    prefix = ""
    if isinstance(data, Mapping) and "platform" in data:
        prefix = "platform"
        file_seed = data.get("seed")
        if file_seed is not None and (isinstance(file_seed, bool) or not isinstance(file_seed,
                                                                                      int)):
            raise ScheduleError("seed must be an integer", path="seed", value=file_seed,
                                source=file_source)
        seed = seed if seed is not None else file_seed
        data = data["platform"]
    platform_spec = validate_document(PlatformSpec, data, source=file_source,
                                      error=ScheduleError, prefix=prefix)
    try:
        return build_platform(platform_spec, seed=_seed(seed), base_dir=base_dir)
    except PortsimError as err:
        error = _as_schedule_error(err, file_source)
        if not prefix and error.path and error.path.startswith("platform."):
            error.path = error.path.removeprefix("platform.")
        raise error from None


def _seed(seed: int | None) -> int:
    return seed if seed is not None else DEFAULT_SEED


def _as_schedule_error(err: PortsimError, source: str) -> PortsimError:
    return ScheduleError(err.message, path=err.path, value=err.value, source=source)


# -- writing -----------------------------------------------------------------------


def platform_to_dict(platform: Platform) -> dict[str, Any]:
    """The platform as an explicit scenario-file mapping (numbers as strings).

    Examples
    --------
    >>> p = Platform.build({"A": "1/2", "B": 1}, [("A", "B", "2/3")])
    >>> platform_to_dict(p)["links"]
    [{'src': 'A', 'dst': 'B', 'c': '2/3'}]
    """
    nodes: list[dict[str, Any]] = []
    for node in platform.nodes:
        entry: dict[str, Any] = {"id": node.id, "compute": format_rational(node.compute)}
        if node.port_model is not None:
            entry["port_model"] = str(node.port_model)
        if node.router:
            entry["router"] = True
        nodes.append(entry)
    links = [{"src": link.src, "dst": link.dst, "c": format_rational(link.c)}
             if link.latency == 0 else
             {"src": link.src, "dst": link.dst, "bandwidth": format_rational(link.bandwidth),
              "latency": format_rational(link.latency)}
             for link in platform.links]
    return {"port_model": str(platform.port_model), "nodes": nodes, "links": links}


def schedule_to_dict(schedule: Schedule, *, description: str | None = None) -> dict[str, Any]:
    """The schedule as a schedule-file mapping (platform explicit, numbers as strings)."""
    document: dict[str, Any] = {}
    if description:
        document["description"] = description
    document["platform"] = platform_to_dict(schedule.platform)
    document["operation"] = schedule.operation.to_dict()
    if schedule.period is not None:
        document["period"] = format_rational(schedule.period)
        document["instances_per_period"] = schedule.instances_per_period
    if schedule.follows:
        document["follows"] = [list(pair) for pair in schedule.follows]
    document["events"] = schedule.to_dicts()
    return document


def dump_schedule(
    schedule: Schedule,
    destination: str | os.PathLike[str] | TextIO,
    *,
    description: str | None = None,
    jsonl: bool | None = None,
) -> None:
    """Write ``schedule`` as a schedule file that :func:`load_schedule` reads back exactly.

    Parameters
    ----------
    schedule:
        The schedule to write.
    destination:
        A file path (ending in ``.jsonl``: the JSON Lines form; in ``.json``:
        one JSON document, for ``jq`` and ``json.load``; else YAML), or an
        open text stream (YAML unless ``jsonl``).
    description:
        Optional free text written as ``description:`` (the planner, its
        bound...); ignored when reading.
    jsonl:
        Write the JSON Lines form (default: when the path ends in ``.jsonl``).

    Raises
    ------
    ScheduleError
        When ``schedule`` is not a :class:`Schedule` (a planner's
        ``PlanResult``: pass its ``.schedule``) or ``destination`` neither a
        path nor a stream.
    """
    from portsim.simulator.engine import check_schedule  # the engine (SimPy) when writing only

    check_schedule(schedule)
    if not isinstance(destination, str | os.PathLike) and not callable(
            getattr(destination, "write", None)):
        raise ScheduleError("expected a file name or an open text stream",
                            path="destination", value=type(destination).__name__)
    if jsonl is None:
        jsonl = (isinstance(destination, str | os.PathLike)
                 and os.fspath(destination).endswith(JSONL_SUFFIX))
    if jsonl:
        _dump_jsonl(schedule, destination, description)
        return
    if (isinstance(destination, str | os.PathLike)
            and os.fspath(destination).endswith(JSON_SUFFIX)):
        # a file named .json is read by jq and json.load, which take no YAML
        document = schedule_to_dict(schedule, description=description)
        write_text(destination, json.dumps(document, indent=1) + "\n")
        return
    text = yaml.dump(
        schedule_to_dict(schedule, description=description),
        Dumper=_ScheduleDumper,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )
    if isinstance(destination, str | os.PathLike):
        write_text(destination, text)
    else:
        destination.write(text)


def _dump_jsonl(schedule: Schedule, destination: str | os.PathLike[str] | TextIO,
                description: str | None) -> None:
    header = schedule_to_dict(schedule, description=description)
    del header["events"]

    def write(stream: TextIO) -> None:
        stream.write(json.dumps(header, separators=(",", ":")) + "\n")
        for event in schedule.events:
            stream.write(json.dumps(event_to_dict(event), separators=(",", ":")) + "\n")

    if isinstance(destination, str | os.PathLike):
        with replacing(destination) as stream:
            write(stream)
    else:
        write(destination)


def _is_flat(value: object) -> bool:
    """True for a list of scalars, or a mapping of scalars and lists of scalars."""
    def scalar(x: object) -> bool:
        return not isinstance(x, Mapping | list)

    if isinstance(value, list):
        return all(scalar(x) for x in value)
    if isinstance(value, Mapping):
        return all(scalar(x) or (isinstance(x, list) and _is_flat(x)) for x in value.values())
    return True


_EXACT_NUMBER = re.compile(r"-?\d+(/\d+)?")


class _ScheduleDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Writes flat mappings and lists in flow style: one node, link or event per line.

    Exact numbers (strings such as ``"2/3"``) are always double-quoted, so
    that ``'1'`` and ``2/3`` do not alternate in one file.
    """

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if _EXACT_NUMBER.fullmatch(data):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)

    def represent_mapping(self, tag: str, mapping: Any, flow_style: bool | None = None
                          ) -> yaml.MappingNode:
        return super().represent_mapping(tag, mapping, flow_style=_is_flat(mapping))

    def represent_sequence(self, tag: str, sequence: Any, flow_style: bool | None = None
                           ) -> yaml.SequenceNode:
        return super().represent_sequence(tag, sequence, flow_style=_is_flat(sequence))


_ScheduleDumper.add_representer(str, _ScheduleDumper.represent_str)
