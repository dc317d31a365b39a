"""The one exception family of portsim.

Misuse raises; outcomes are results.  A schedule with violations or an
infeasible plan is a returned status, never an exception.  Every exception
below carries the offending value and where it came from, so a command-line
front end can print it as one line.
"""

from __future__ import annotations

import dataclasses
import reprlib

__all__ = [
    "OperationError",
    "PlannerError",
    "PlatformError",
    "PortsimError",
    "ScenarioError",
    "ScheduleError",
    "record_repr",
    "short_repr",
]


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlong = 60
_MAX_VALUE_TEXT = 120


def short_repr(value: object) -> str:
    """``repr(value)``, bounded: a deeply nested or self-referencing document
    (YAML aliases can build one of a billion elements) prints in a few
    characters, and the error stays one short line.

    Examples
    --------
    >>> short_repr("2/3")
    "'2/3'"
    >>> short_repr([[[[[1]]]]])
    '[[[[...]]]]'
    """
    text = _REPR.repr(value)
    if len(text) > _MAX_VALUE_TEXT:
        text = text[: _MAX_VALUE_TEXT - 3] + "..."
    return text


RECORD_REPR_ITEMS = 10
"""A record's tuple field longer than this shows its first 3 items and a count."""


def record_repr(record: object) -> str:
    """The dataclass ``repr`` of ``record``, with its long tuple fields abridged.

    A schedule of 20,000 events, a platform of 1,000 links or a report of
    14,000 completion times printed as the last line of a notebook cell
    would otherwise fill megabytes; their records (nested ones too, through
    their own ``repr``) show the first 3 items of a tuple of more than
    :data:`RECORD_REPR_ITEMS` and how many more there are.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     name: str
    ...     times: tuple[int, ...]
    ...     def __repr__(self) -> str:
    ...         return record_repr(self)
    >>> Run("a", (1, 2)), Run("b", tuple(range(100)))
    (Run(name='a', times=(1, 2)), Run(name='b', times=(0, 1, 2, ... 97 more)))
    """
    parts = []
    for one in dataclasses.fields(record):  # type: ignore[arg-type]
        if not one.repr:
            continue
        value = getattr(record, one.name)
        if isinstance(value, tuple) and len(value) > RECORD_REPR_ITEMS:
            text = f"({', '.join(map(repr, value[:3]))}, ... {len(value) - 3} more)"
        else:
            text = repr(value)
        parts.append(f"{one.name}={text}")
    return f"{type(record).__name__}({', '.join(parts)})"


class PortsimError(Exception):
    """Base class of every error raised by portsim.

    Parameters
    ----------
    message:
        What is wrong, in one sentence.
    path:
        Where the bad value sits, as a dotted key path (``"platform.links[2].c"``).
    value:
        The offending value, echoed in the message.
    source:
        The file (or other origin) the value was read from.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        value: object = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.value = value
        self.source = source

    def with_source(self, source: str) -> PortsimError:
        """Return the same error attributed to ``source`` (a file name)."""
        self.source = source
        return self

    def __str__(self) -> str:
        parts = []
        if self.source:
            parts.append(str(self.source))
        if self.path:
            parts.append(self.path)
        prefix = ": ".join(parts)
        text = self.message
        if self.value is not None:
            text = f"{text} (got {short_repr(self.value)})"
        line = f"{prefix}: {text}" if prefix else text
        # One line, always: a key read from a file may hold a line break.
        return line.replace("\r", "\\r").replace("\n", "\\n")


class PlatformError(PortsimError):
    """A platform is malformed: unknown node, bad cost, duplicate link..."""


class OperationError(PortsimError):
    """An operation does not fit its platform: unknown node, duplicate participant..."""


class ScheduleError(PortsimError):
    """A schedule document is malformed (not merely infeasible)."""


class ScenarioError(PortsimError):
    """A scenario or study file is malformed."""


class PlannerError(PortsimError):
    """A planner was misused: unknown name, bad option."""
