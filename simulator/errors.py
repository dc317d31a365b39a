"""The one exception family of portsim.

Misuse raises; outcomes are results.  A schedule with violations or an
infeasible plan is a returned status, never an exception.  Every exception
below carries the offending value and where it came from, so a command-line
front end can print it as one line.
"""

from __future__ import annotations

__all__ = [
    "OperationError",
    "PlannerError",
    "PlatformError",
    "PortsimError",
    "ScenarioError",
    "ScheduleError",
]


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
            text = f"{text} (got {self.value!r})"
        return f"{prefix}: {text}" if prefix else text


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
