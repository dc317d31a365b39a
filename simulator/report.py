"""What a replay returns: violations and measured figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from portsim.simulator.errors import record_repr
from portsim.simulator.numbers import format_rational

if TYPE_CHECKING:
    from portsim.simulator.platform import Platform

__all__ = ["Report", "Violation", "ViolationKind", "own_port_models"]


def own_port_models(platform: Platform) -> tuple[tuple[str, str], ...]:
    """The ``node_port_models`` of a record: each node following another port model
    than the platform-wide one, with that model
    (:attr:`Platform.own_port_models <portsim.simulator.platform.Platform.own_port_models>`)."""
    return tuple((str(node), str(model)) for node, model in platform.own_port_models.items())


class ViolationKind:
    """Names of the violations the engine reports (the ``kind`` field)."""

    PORT_CONFLICT = "port_conflict"
    """A port used by more communications at once than the port model allows."""
    LINK_CONFLICT = "link_conflict"
    """A directed link carrying two transfers at once (a link is a resource
    under every port model; reported where the ports alone allow both)."""
    CPU_CONFLICT = "cpu_conflict"
    """Two computations at once on one node."""
    ITEM_NOT_HELD = "item_not_held"
    """A send or compute uses an item its node does not fully hold yet
    (never received, still arriving, or only some parts received)."""
    REDUCTION_ORDER = "reduction_order"
    """Compute inputs that are not adjacent intervals in order (swapped
    operands, a skipped participant, overlapping sets)."""
    WRONG_OUTPUT = "wrong_output"
    """A compute names an output that is not the combination of its inputs."""
    WRONG_DURATION = "wrong_duration"
    """A stated ``duration`` that differs from the one the platform implies."""
    NO_LINK = "no_link"
    """A send over a link the platform does not have."""
    ROUTER_COMPUTE = "router_compute"
    """A router asked to compute (routers only forward)."""
    INCOMPLETE = "incomplete"
    """An operation instance left incomplete at the end."""
    BLOCKED = "blocked"
    """An event that could never start (as-soon-as-possible replay)."""

    ALL = (
        PORT_CONFLICT, LINK_CONFLICT, CPU_CONFLICT, ITEM_NOT_HELD, REDUCTION_ORDER, WRONG_OUTPUT,
        WRONG_DURATION, NO_LINK, ROUTER_COMPUTE, INCOMPLETE, BLOCKED,
    )


def _time_out(value: Fraction | float | None) -> str | float | None:
    if value is None or isinstance(value, float):
        return value
    return format_rational(value)


@dataclass(frozen=True, slots=True)
class Violation:
    """One violation: what, when, where, and the events involved.

    ``time`` is exact (a ``Fraction``) in exact mode, a ``float`` in float mode.
    ``events`` holds the indexes (in the schedule's event list) of the events
    involved, the offending one first (a conflict names at most 8 of the
    events busy on its resource; its detail counts the others).
    ``resource`` names what the violation is about: a port (``"send port of
    A"``), a CPU, a link (``"link A -> B"``) or an item (``"v[0,1]#2"``);
    empty when unknown.
    """

    kind: str
    time: Fraction | float
    node: str
    detail: str
    events: tuple[int, ...] = ()
    resource: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The SPEC.md form: ``{"kind", "time", "node", "detail"}`` (plus ``events``
        and ``resource``)."""
        return {"kind": self.kind, "time": _time_out(self.time), "node": self.node,
                "detail": self.detail, "events": list(self.events),
                "resource": self.resource}

    def __str__(self) -> str:
        return f"{self.kind} at t={_time_out(self.time)} on {self.node}: {self.detail}"


@dataclass(frozen=True)
class Report:
    """The result of replaying a schedule.

    Attributes
    ----------
    mode:
        ``"strict"`` (every event at its stated time) or ``"asap"``.
    exact:
        True when times are exact rationals, False in float mode.
    port_model:
        The platform-wide port model the replay used.
    node_port_models:
        The nodes that followed another port model than ``port_model`` (their
        own, from the platform), with that model, in node order (the JSON
        gives them as a mapping).
    violations:
        Every violation found, in time order.
    completed:
        Operation instances complete by the end of the replay (by the horizon
        when there is one).
    instances:
        Instances the replay was expected to complete (one-shot: all those
        the schedule mentions; periodic: for every instance slot #j <
        instances_per_period, its instance of every period whose events all
        ended by the horizon, and for a slot no event serves, of every period
        the slowest slot's would have).
    makespan:
        One-shot: the time the last instance completed (``None`` if some
        instance never completed).
    end_time:
        When the last event ended.
    horizon:
        The time span replayed (periodic replays and throughput measurements).
    measured_throughput:
        ``completed / horizon`` as a float (``None`` without a horizon);
        :attr:`measured_throughput_exact` gives it exactly.
    throughput:
        The exact throughput the replay proves (strict replay with no
        violation, every expected instance complete): periodic,
        ``instances_per_period / period`` once every instance slot #j was
        expected, and so completed, in the replay; one-shot, ``instances /
        end_time`` (run back to back: the makespan, unless events end after
        the operation completed).  ``None`` otherwise.
    completion_times:
        When each completed instance completed, sorted.
    startup_skipped:
        Periodic: instance slots left idle at the start because their
        instance number would be negative.
    unfinished:
        Periodic: instances started but not complete at the horizon
        (wind-down).
    incomplete:
        Expected instances (counted in ``instances``) that did not complete.
        Apart from them, ``completed`` may count instances the replay was
        not expected to complete (an as-soon-as-possible replay runs ahead
        of the stated times), so ``completed >= instances`` alone does not
        say that every expected one completed.
    event_starts:
        As-soon-as-possible mode: the achieved start time of every replayed
        event, in the order of the replayed event list (``None`` if it never
        started).  Empty in strict mode.
    """

    mode: str
    exact: bool
    port_model: str
    violations: tuple[Violation, ...]
    completed: int
    instances: int
    makespan: Fraction | float | None = None
    end_time: Fraction | float | None = None
    horizon: Fraction | float | None = None
    measured_throughput: float | None = None
    throughput: Fraction | None = None
    completion_times: tuple[Fraction | float, ...] = ()
    startup_skipped: int = 0
    unfinished: int = 0
    incomplete: int = 0
    event_starts: tuple[Fraction | float | None, ...] = field(default=(), repr=False)
    node_port_models: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:
        return record_repr(self)

    @property
    def feasible(self) -> bool:
        """True when the engine found no violation."""
        return not self.violations

    @property
    def complete(self) -> bool:
        """True when every expected instance completed (see :attr:`incomplete`)."""
        return self.incomplete == 0 and self.completed >= self.instances

    @property
    def measured_throughput_exact(self) -> Fraction | None:
        """``completed / horizon`` exactly (``measured_throughput`` is the same
        as a float); ``None`` without an exact horizon.  The field of
        :meth:`to_dict` of the same name, as ``PlannerRun`` has it.

        Examples
        --------
        >>> Report("strict", True, "bidirectional", (), 166, 166, None, Fraction(10, 3),
        ...        Fraction(1000, 3), 0.498).measured_throughput_exact
        Fraction(249, 500)
        """
        if not isinstance(self.horizon, Fraction) or self.horizon <= 0:
            return None
        return Fraction(self.completed) / self.horizon

    def violations_of(self, kind: str) -> list[Violation]:
        """The violations of one kind."""
        return [v for v in self.violations if v.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (exact times as strings)."""
        return {
            "mode": self.mode,
            "exact": self.exact,
            "port_model": self.port_model,
            "node_port_models": dict(self.node_port_models),
            "feasible": self.feasible,
            "complete": self.complete,
            "completed": self.completed,
            "instances": self.instances,
            "makespan": _time_out(self.makespan),
            "end_time": _time_out(self.end_time),
            "horizon": _time_out(self.horizon),
            "measured_throughput": self.measured_throughput,
            # the exact figure beside the float, as `portsim run --json` gives it
            "measured_throughput_exact": _time_out(self.measured_throughput_exact),
            "throughput": _time_out(self.throughput),
            "startup_skipped": self.startup_skipped,
            "unfinished": self.unfinished,
            "incomplete": self.incomplete,
            "violations": [v.to_dict() for v in self.violations],
        }
