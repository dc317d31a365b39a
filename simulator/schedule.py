"""Schedules: timed events, one-shot or periodic.

A one-shot schedule lists events with absolute start times.  A periodic
schedule (SPEC.md, periodic form) has a period ``T``, a number ``n`` of
instances started per period and events whose ``start`` lies in ``[0, T)``;
during period ``p`` an event with ``lag: d`` whose item is written ``#j``
acts on instance ``(p - d) * n + j``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, TypeAlias, cast

from portsim.simulator.collector import paused_collection
from portsim.simulator.errors import PortsimError, ScheduleError, record_repr
from portsim.simulator.items import Item, parse_item
from portsim.simulator.numbers import MAX_TERM, format_rational, parse_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["Compute", "Event", "EventReader", "Schedule", "Send"]

_ONE = Fraction(1)
"""The default ``part`` of a :class:`Send`: a whole message."""


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``part`` of ``item`` from ``src`` to ``dst`` starting at ``start``.

    It lasts the link's :meth:`~portsim.simulator.platform.Link.duration`
    (``latency + part * size / bandwidth``; ``part * size * c`` without
    latency); ``duration``, when given, is checked against that, never trusted.
    ``transit``: ``dst`` keeps no copy, it only passes the item on, by the
    send that follows this one (:attr:`Schedule.follows`; one-shot form only).
    """

    src: NodeId
    dst: NodeId
    item: Item
    start: Fraction
    part: Fraction = _ONE
    lag: int = 0
    duration: Fraction | None = None
    transit: bool = False

    def __init__(self, src: NodeId, dst: NodeId, item: Item, start: Fraction,
                 part: Fraction = _ONE, lag: int = 0, duration: Fraction | None = None,
                 transit: bool = False) -> None:
        # The dataclass's own __init__, through the slots' setters (below the class).
        _set_src(self, src)
        _set_dst(self, dst)
        _set_item(self, item)
        _set_start(self, start)
        _set_part(self, part)
        _set_lag(self, lag)
        _set_duration(self, duration)
        _set_transit(self, transit)

    @property
    def nodes(self) -> tuple[NodeId, ...]:
        return (self.src, self.dst)


@dataclass(frozen=True, slots=True)
class Compute:
    """Reduction on ``node``: combine ``inputs`` (in order) into ``output``.

    Two inputs make one reduction task, lasting the node's compute time; ``k``
    inputs make ``k - 1`` of them (:attr:`tasks`), lasting ``k - 1`` times it.
    """

    node: NodeId
    inputs: tuple[Item, ...]
    output: Item
    start: Fraction
    lag: int = 0
    duration: Fraction | None = None

    def __init__(self, node: NodeId, inputs: tuple[Item, ...], output: Item, start: Fraction,
                 lag: int = 0, duration: Fraction | None = None) -> None:
        # The dataclass's own __init__, through the slots' setters (below the class).
        _set_node(self, node)
        _set_inputs(self, inputs)
        _set_output(self, output)
        _set_compute_start(self, start)
        _set_compute_lag(self, lag)
        _set_compute_duration(self, duration)

    @property
    def nodes(self) -> tuple[NodeId, ...]:
        return (self.node,)

    @property
    def tasks(self) -> int:
        """Reduction tasks this compute performs, one fewer than its inputs.

        It lasts that many times the node's compute time (the time of one
        task), so three operands at once take as long as two computes of two.
        """
        return len(self.inputs) - 1


# The slots' setters, which the __init__ of Send and Compute use: frozen, they
# refuse ``self.x = ...``, and the dataclass's generated __init__
# (object.__setattr__ per field) takes twice as long, which counts at tens of
# thousands of events per periodic schedule.
(_set_src, _set_dst, _set_item, _set_start, _set_part, _set_lag, _set_duration,
 _set_transit) = (
    Send.__dict__[name].__set__
    for name in ("src", "dst", "item", "start", "part", "lag", "duration", "transit"))
(_set_node, _set_inputs, _set_output, _set_compute_start, _set_compute_lag,
 _set_compute_duration) = (
    Compute.__dict__[name].__set__
    for name in ("node", "inputs", "output", "start", "lag", "duration"))


Event: TypeAlias = Send | Compute
"""A schedule's event, a :class:`Send` or a :class:`Compute`."""

_SEND_KEYS = {"kind", "src", "dst", "item", "start", "part", "lag", "duration", "transit"}
_COMPUTE_KEYS = {"kind", "node", "inputs", "output", "start", "lag", "duration"}


@dataclass(frozen=True)
class Schedule:
    """A schedule of one collective operation on one platform.

    Parameters
    ----------
    platform:
        The platform the schedule runs on (its port model is the default one
        used by the engine).
    operation:
        The operation; one not yet resolved (:attr:`Operation.resolved`) is
        resolved against ``platform`` here, so that, say, a scatter has its
        default targets.
    events:
        Sends and computes.  Equal start times are allowed in any order.  A
        number given as an ``int``, a ``float`` or a string (``"2/3"``) and
        an item given by its name (``"v[0,1]"``) are read exactly, as
        :meth:`from_dicts` reads them.
    period:
        ``None`` for a one-shot schedule; else the period ``T`` of a periodic
        one (a number, read likewise).
    instances_per_period:
        Instances started every period (periodic form only).
    follows:
        Pairs ``(i, j)`` of event indexes (one-shot form only): event ``j``
        starts only once event ``i`` has ended, whatever else it waits for.
        The hops of an MSCCL connection are chained so (its sender's own data
        goes on from each relay: a switch on the path forwards no copy it
        holds from another transfer); the replays honour the pairs, the
        strict one reporting an ``item_not_held`` violation where ``j`` starts
        before ``i`` ends, and :meth:`repeat` chains each copy's own events.
        A :class:`Send` with ``transit`` needs exactly one such ``j`` that
        sends its item (the same part) on from its receiver: the receiver
        keeps no copy, only ``j`` passes it on (each ``j`` one copy).

    Raises
    ------
    ScheduleError
        On an event or item naming an unknown node (an item ``v[k,m]``: an
        unknown participant index), an item that is no item name
        (``Item.interval(2, 1)``), a start outside ``[0, T)`` in a periodic
        schedule, a part outside ``(0, 1]``, a negative lag or start, a
        number that is not finite, or another type than a platform, an
        operation or events; a transit send in a periodic schedule or
        without its one follower.
    OperationError
        When an unresolved operation does not fit the platform.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> from portsim.simulator.operations import Operation, OperationKind
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B",
    ...                                  "item": "b", "start": 0}])
    >>> s.events[0].item
    Item(kind='b', args=(), ordered=True, instance=0)
    """

    platform: Platform
    operation: Operation
    events: tuple[Event, ...]
    period: Fraction | None = None
    instances_per_period: int = 1
    follows: tuple[tuple[int, int], ...] = ()

    def __repr__(self) -> str:
        return record_repr(self)

    def __post_init__(self) -> None:
        self._normalise_fields()
        self._check_follows()
        if not self.operation.resolved:
            # Unresolved, a scatter has no targets: its source would hold no message
            # and every send would be reported as sending an item never received.
            object.__setattr__(self, "operation", self.operation.resolve(self.platform))
        if self.period is not None and self.period <= 0:
            raise ScheduleError("period must be > 0", path="period", value=str(self.period))
        if self.instances_per_period < 1:
            raise ScheduleError("instances_per_period must be >= 1",
                                path="instances_per_period", value=self.instances_per_period)
        checked: set[tuple[str, tuple[Any, ...]]] = set()  # item names already checked
        # A fast pass says "valid" for the common event (Fraction times, items
        # already checked) in integer arithmetic; any other event, valid or
        # not, takes the full check, which alone raises (with its message).
        # A periodic schedule has tens of thousands of events, and Fraction
        # comparisons cost a microsecond each.
        nodes = frozenset(self.platform.node_ids)
        period = self.period
        fast = period is None or type(period) is Fraction  # else the full check alone
        period_num, period_den = ((period.numerator, period.denominator)
                                  if type(period) is Fraction else (0, 1))
        # One-shot: any instance, lag 0 only.
        count = self.instances_per_period if period is not None else math.inf
        most_lag = math.inf if period is not None else 0
        # The starts found valid, by identity: events share their start objects
        # (a few thousand distinct starts in a 20,000-event period), all alive
        # in self.events meanwhile, so an id stays theirs.
        good_starts: set[int] = set()
        replaced: dict[int, Event] = {}  # events given with inexact numbers, made exact
        transit: list[int] = []  # the sends whose receiver keeps no copy
        for i, event in enumerate(self.events):
            kind = type(event)
            if not fast:
                ok = False
            elif kind is Send:
                if event.transit is not False:  # type: ignore[union-attr]
                    transit.append(i)
                item = event.item  # type: ignore[union-attr]
                part = event.part  # type: ignore[union-attr]
                ok = (type(item) is Item  # an item name given by hand: the full check
                      and event.src in nodes and event.dst in nodes  # type: ignore[union-attr]
                      and (part is _ONE or (type(part) is Fraction
                                            and 0 < part.numerator <= part.denominator))
                      and (item.kind, item.args) in checked and 0 <= item.instance < count)
            elif kind is Compute:
                inputs = event.inputs  # type: ignore[union-attr]
                ok = (type(inputs) is tuple and event.node in nodes  # type: ignore[union-attr]
                      and len(inputs) >= 2)
                if ok:  # the inputs first, as the full check
                    for x in inputs:
                        if (type(x) is not Item or (x.kind, x.args) not in checked
                                or not 0 <= x.instance < count):
                            ok = False
                            break
                    output = event.output  # type: ignore[union-attr]
                    ok = ok and type(output) is Item and (
                        (output.kind, output.args) in checked and 0 <= output.instance < count)
            else:
                ok = False
            if ok:
                start, lag = event.start, event.lag
                if id(start) not in good_starts:
                    if type(start) is Fraction and start.numerator >= 0 and (
                            period is None
                            or start.numerator * period_den < period_num * start.denominator):
                        good_starts.add(id(start))
                    else:
                        ok = False
                ok = ok and type(lag) is int and 0 <= lag <= most_lag and event.duration is None
            if not ok:
                exact = self._check_event(i, event, checked)
                if exact is not event:
                    replaced[i] = exact
                if (type(exact) is Send and exact.transit is not False
                        and (not transit or transit[-1] != i)):
                    transit.append(i)
        if replaced:
            events = list(self.events)
            for i, exact in replaced.items():
                events[i] = exact
            object.__setattr__(self, "events", tuple(events))
        if transit:
            self._check_transit(transit)

    def _check_transit(self, transit: list[int]) -> None:
        """Each transit send (events ``transit``) has exactly one follower, or raise.

        Its follower: the event ``j`` of a pair ``(i, j)`` of :attr:`follows`
        that sends the same item (the same part) on from the transit send's
        receiver, and passes on no other transit send's copy.
        """
        events = self.events
        for i in transit:
            if events[i].transit is not True:  # type: ignore[union-attr]
                raise ScheduleError("transit must be true or false", path=f"events[{i}].transit",
                                    value=events[i].transit)  # type: ignore[union-attr]
        if self.period is not None:
            raise ScheduleError("transit applies to one-shot schedules only (its copy goes "
                                "on by the send that follows it, and follows is one-shot)",
                                path=f"events[{transit[0]}].transit", value=True)
        wanted = set(transit)
        followers: dict[int, set[int]] = {}
        for i, j in self.follows:
            if i in wanted:
                event, then = events[i], events[j]
                if (type(then) is Send and then.src == event.dst  # type: ignore[union-attr]
                        and then.item == event.item  # type: ignore[union-attr]
                        and then.part == event.part):  # type: ignore[union-attr]
                    followers.setdefault(i, set()).add(j)
        passed: dict[int, int] = {}  # follower -> the transit send whose copy it passes on
        for i in transit:
            event = cast(Send, events[i])
            found = sorted(followers.get(i, ()))
            if len(found) != 1:
                part = "" if event.part == 1 else f" (part {format_rational(event.part)})"
                got = ("none" if not found
                       else f"{len(found)} (events {', '.join(map(str, found))})")
                raise ScheduleError(
                    f"a transit send needs exactly one follower, a pair [{i}, j] in follows "
                    f"whose event j sends {event.item}{part} on from {event.dst}; found {got}",
                    path=f"events[{i}].transit", value=True)
            j = found[0]
            if j in passed:
                raise ScheduleError(
                    f"event {j} already passes on the copy of transit event {passed[j]}: "
                    f"each follower passes on one", path=f"events[{i}].transit", value=True)
            passed[j] = i

    def _normalise_fields(self) -> None:
        """Take the events as a tuple, the period as an exact rational, or raise.

        A schedule built in Python may give ``period=2`` or ``"5/3"``, a list
        or a generator of events: they become what the engine computes with,
        as :meth:`from_dicts` makes them; what is no number is a
        :class:`ScheduleError`, not a ``TypeError`` deep in the engine.
        """
        if not isinstance(self.platform, Platform):
            raise ScheduleError("platform must be a Platform", path="platform",
                                value=type(self.platform).__name__)
        if not isinstance(self.operation, Operation):
            raise ScheduleError("operation must be an Operation", path="operation",
                                value=type(self.operation).__name__)
        if type(self.events) is not tuple:
            if isinstance(self.events, str | bytes | Mapping) or not isinstance(
                    self.events, Iterable):
                raise ScheduleError("events must be a sequence of Send and Compute events",
                                    path="events", value=type(self.events).__name__)
            object.__setattr__(self, "events", tuple(self.events))
        if self.period is not None and type(self.period) is not Fraction:
            object.__setattr__(self, "period", parse_rational(
                self.period, path="period", error=ScheduleError))
        count = self.instances_per_period
        if isinstance(count, bool) or not isinstance(count, int):
            raise ScheduleError("instances_per_period must be an integer",
                                path="instances_per_period", value=count)

    def _check_follows(self) -> None:
        """Take :attr:`follows` as a tuple of pairs of event indexes, or raise."""
        follows = self.follows
        if not follows:
            if type(follows) is not tuple:
                object.__setattr__(self, "follows", ())
            return
        if self.period is not None:
            raise ScheduleError("follows applies to one-shot schedules only", path="follows")
        n = len(self.events)
        # The common case, a tuple of pairs of valid indexes (Schedule.repeat makes
        # a million of them for a series of a 128-rank ring), checked by builtins
        # in C; anything else takes the loop below, which names what is wrong.
        if (type(follows) is tuple and set(map(type, follows)) == {tuple}
                and set(map(len, follows)) == {2}):
            firsts, seconds = zip(*follows, strict=True)
            if (set(map(type, firsts)) | set(map(type, seconds)) == {int}
                    and min(min(firsts), min(seconds)) >= 0
                    and max(max(firsts), max(seconds)) < n
                    and not any(map(operator.eq, firsts, seconds))):
                return
        pairs: list[tuple[int, int]] = []
        for k, given in enumerate(follows):
            where = f"follows[{k}]"
            pair: tuple[object, ...] = (
                () if isinstance(given, str | bytes) or not isinstance(given, Iterable)
                else tuple(given))
            if len(pair) != 2:
                raise ScheduleError("a pair (i, j) of event indexes expected", path=where,
                                    value=given)
            for x in pair:
                if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n:
                    raise ScheduleError(f"an event index from 0 to {n - 1} expected" if n
                                        else "the schedule has no events to follow",
                                        path=where, value=x)
            i, j = cast(tuple[int, int], pair)
            if i == j:
                raise ScheduleError("an event cannot follow itself", path=where, value=i)
            pairs.append((i, j))
        object.__setattr__(self, "follows", tuple(pairs))

    @staticmethod
    def _exact_event(where: str, event: Event) -> Event:
        """``event`` with exact numbers and parsed items (itself when it has them).

        A :class:`Send` or :class:`Compute` built by hand may carry ``0.5``,
        ``"1/2"`` or an item name: they are read as :meth:`from_dicts` reads
        them (:func:`parse_rational`, :func:`parse_item`).
        """
        changes: dict[str, Any] = {}
        for key in ("start", "duration", "part"):
            value = getattr(event, key, None)
            if value is None and key != "start":
                continue
            if type(value) is not Fraction:
                changes[key] = parse_rational(value, path=f"{where}.{key}", error=ScheduleError)
        lag = event.lag
        if isinstance(lag, bool) or not isinstance(lag, int):
            raise ScheduleError("lag must be an integer", path=f"{where}.lag", value=lag)
        if isinstance(event, Send):
            if not isinstance(event.item, Item):
                changes["item"] = parse_item(event.item, path=f"{where}.item")
        else:
            inputs = event.inputs
            if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Iterable):
                raise ScheduleError("inputs must be a sequence of items",
                                    path=f"{where}.inputs", value=inputs)
            parsed = tuple(parse_item(x, path=f"{where}.inputs[{j}]")
                           for j, x in enumerate(inputs))
            if type(inputs) is not tuple or any(
                    x is not y for x, y in zip(parsed, inputs, strict=True)):
                changes["inputs"] = parsed
            if not isinstance(event.output, Item):
                changes["output"] = parse_item(event.output, path=f"{where}.output")
        return replace(event, **changes) if changes else event

    def _check_event(self, i: int, event: Event,
                     checked: set[tuple[str, tuple[Any, ...]]]) -> Event:
        """Check one event the fast pass did not pass; return it with exact numbers."""
        where = f"events[{i}]"
        if isinstance(event, Send | Compute):
            event = self._exact_event(where, event)
        if isinstance(event, Send):
            for key in ("src", "dst"):
                node = getattr(event, key)
                if node not in self.platform:
                    raise ScheduleError("unknown node id", path=f"{where}.{key}", value=node)
            if event.part != 1 and not 0 < event.part < 1:
                raise ScheduleError("part must lie in (0, 1]", path=f"{where}.part",
                                    value=format_rational(event.part))
            items: tuple[Item, ...] = (event.item,)
            self._check_item(event.item, f"{where}.item", checked)
        elif isinstance(event, Compute):
            if event.node not in self.platform:
                raise ScheduleError("unknown node id", path=f"{where}.node", value=event.node)
            if len(event.inputs) < 2:
                raise ScheduleError("a compute needs at least two inputs",
                                    path=f"{where}.inputs", value=[str(x) for x in event.inputs])
            items = (*event.inputs, event.output)
            for j, x in enumerate(event.inputs):
                self._check_item(x, f"{where}.inputs[{j}]", checked)
            self._check_item(event.output, f"{where}.output", checked)
        else:
            raise ScheduleError("an event must be a Send or a Compute", path=where,
                                value=type(event).__name__)
        if event.start < 0:
            raise ScheduleError("start must be >= 0", path=f"{where}.start",
                                value=format_rational(event.start))
        if event.lag < 0:
            raise ScheduleError("lag must be >= 0", path=f"{where}.lag", value=event.lag)
        if event.duration is not None and event.duration < 0:
            raise ScheduleError("duration must be >= 0", path=f"{where}.duration",
                                value=format_rational(event.duration))
        if self.period is not None:
            if event.start >= self.period:
                raise ScheduleError(
                    f"start must lie in [0, period) = [0, {format_rational(self.period)})",
                    path=f"{where}.start", value=format_rational(event.start),
                )
            for item in items:
                if item.instance >= self.instances_per_period:
                    raise ScheduleError(
                        f"instance suffix #j must be < instances_per_period "
                        f"({self.instances_per_period})",
                        path=f"{where}", value=str(item),
                    )
        elif event.lag:
            raise ScheduleError("lag is only meaningful in a periodic schedule",
                                path=f"{where}.lag", value=event.lag)
        return event

    def _check_item(self, item: Item, path: str,
                    checked: set[tuple[str, tuple[Any, ...]]]) -> None:
        """An item must name nodes of the platform and participants of the operation."""
        if type(item.instance) is not int or item.instance < 0:
            raise ScheduleError("an item's instance must be an integer >= 0", path=path,
                                value=str(item))
        name = (item.kind, item.args)
        if name in checked:
            return
        # An Item built in Python (Item.interval(2, 1)) is held to the grammar of
        # an item name in a file: printed, it must read back as itself.
        if parse_item(str(item), path=path) != item:
            raise ScheduleError("not a valid item (it prints as an item name that reads "
                                "back as another)", path=path, value=str(item))
        checked.add(name)
        if item.kind == "m":
            for node in item.args:
                if node not in self.platform:
                    raise ScheduleError(f"item {item} names an unknown node {node!r}",
                                        path=path, value=str(item))
        elif item.kind == "v":
            count = len(self.operation.participants)
            # The indexes as written (an interval's ends, a set's members): the
            # interval itself may be v[0,99999999999], far too long to list.
            beyond = [i for i in item.args if i >= count]
            if beyond:
                raise ScheduleError(
                    f"item {item} names participant {max(beyond)}, but the operation has "
                    f"{count} participant{'' if count == 1 else 's'} (indexes 0..{count - 1})"
                    if count else f"item {item} is a partial reduction, but the operation "
                    f"has no participants", path=path, value=str(item))

    # -- building --------------------------------------------------------------

    @classmethod
    def from_dicts(
        cls,
        platform: Platform,
        operation: Operation,
        events: Sequence[Mapping[str, Any]],
        *,
        period: object = None,
        instances_per_period: object = 1,
        follows: object = (),
    ) -> Schedule:
        """Build a schedule from plain mappings, as read from a schedule file.

        ``follows`` is :attr:`follows`, as pairs ``[i, j]`` of event indexes.

        Each mapping is ``{kind: send, src, dst, item, start[, part, lag, duration,
        transit]}`` or ``{kind: compute, node, inputs, output, start[, lag, duration]}``;
        numbers may be ``"2/3"`` strings.  Unknown keys are rejected.
        An ``operation`` not yet resolved is resolved against ``platform``
        (:meth:`Operation.resolve`: default targets or participants filled in,
        endpoints checked), as by the constructor.

        Raises
        ------
        ScheduleError
            Naming the event and key of a malformed event.
        OperationError
            When the operation does not fit the platform.
        """
        parsed_period = (
            None if period is None
            else parse_rational(period, path="period", error=ScheduleError)
        )
        if isinstance(instances_per_period, bool) or not isinstance(instances_per_period, int):
            raise ScheduleError("instances_per_period must be an integer",
                                path="instances_per_period", value=instances_per_period)
        if not isinstance(events, Sequence) or isinstance(events, str | bytes):
            raise ScheduleError("events must be a list", path="events", value=events)
        reader = EventReader()
        parsed = tuple(reader.read(e, f"events[{i}]") for i, e in enumerate(events))
        if follows is None:
            follows = ()
        if isinstance(follows, str | bytes | Mapping) or not isinstance(follows, Iterable):
            raise ScheduleError("must be a list of pairs [i, j] of event indexes",
                                path="follows", value=follows)
        return cls(platform, operation, parsed, parsed_period, instances_per_period,
                   tuple(follows))  # type: ignore[arg-type]  # checked by the constructor

    def to_dicts(self) -> list[dict[str, Any]]:
        """The events as plain mappings (exact numbers as strings), for a schedule file."""
        return [event_to_dict(e) for e in self.events]

    # -- views -----------------------------------------------------------------

    @property
    def is_periodic(self) -> bool:
        return self.period is not None

    def instances(self) -> list[int]:
        """Instance numbers a one-shot schedule mentions, sorted (``[0]`` if none)."""
        found: set[int] = set()
        for e in self.events:
            if isinstance(e, Send):
                found.add(e.item.instance)
            else:
                found.update(x.instance for x in e.inputs)
                found.add(e.output.instance)
        return sorted(found) or [0]

    def repeat(self, count: int, spacing: Fraction) -> Schedule:
        """A one-shot series of ``count`` copies shifted by ``t * spacing``.

        A schedule of instances ``0..c-1`` (``c`` = the largest instance it
        mentions, plus one; ``c = 1`` for a schedule of instance 0) is one
        run of ``c`` instances: copy ``t``'s instance ``j`` becomes instance
        ``t * c + j``.  Replayed as soon as possible, the per-port order is
        copy after copy, so the copies pipeline; with ``spacing`` at least the
        makespan, the series is feasible as written.

        Examples
        --------
        >>> from portsim.simulator.platform import Platform
        >>> from portsim.simulator.operations import Operation, OperationKind
        >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
        >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
        >>> s = Schedule.from_dicts(p, op, [
        ...     {"kind": "send", "src": "A", "dst": "B", "item": "b#0", "start": 0},
        ...     {"kind": "send", "src": "A", "dst": "B", "item": "b#1", "start": 1}])
        >>> [f"{e.item}@{e.start}" for e in s.repeat(2, Fraction(2)).events]
        ['b@0', 'b#1@1', 'b#2@2', 'b#3@3']
        """
        if self.is_periodic:
            raise ScheduleError("repeat applies to one-shot schedules only")
        if count < 1:
            raise ScheduleError("count must be >= 1", value=count)
        per_run = self.instances()[-1] + 1
        out: list[Event] = []
        # A series replays up to 2,000,000 events (engine.MAX_SERIES_EVENTS): each
        # copy is built by the classes' own constructors (dataclasses.replace took
        # half the time), each distinct start shifted once per copy, and without
        # the cyclic collector, which a million new objects set off again and again.
        # Starts are keyed by identity (they stay alive in self.events): hashing a
        # Fraction costs more than adding two.
        starts = {id(e.start): e.start for e in self.events}
        with paused_collection():
            for t in range(count):
                shift = spacing * t
                base = t * per_run
                shifted = {k: x + shift for k, x in starts.items()} if t else starts
                for e in self.events:
                    if isinstance(e, Send):
                        item = e.item
                        out.append(Send(e.src, e.dst, item.with_instance(base + item.instance),
                                        shifted[id(e.start)], e.part, e.lag, e.duration,
                                        e.transit))
                    else:
                        output = e.output
                        out.append(Compute(
                            e.node, tuple(x.with_instance(base + x.instance) for x in e.inputs),
                            output.with_instance(base + output.instance), shifted[id(e.start)],
                            e.lag, e.duration))
            n = len(self.events)
            follows = tuple((i + t * n, j + t * n) for t in range(count)
                            for i, j in self.follows)
            return replace(self, events=tuple(out), follows=follows)

    def unroll(self, periods: int) -> Iterator[tuple[int, int, Event]]:
        """The concrete events of a periodic schedule over ``periods`` periods.

        Yields ``(period p, instance, event)`` in time order; events whose
        instance would be negative (start-up) are skipped.  The event keeps its
        in-period ``start``; its absolute start is ``p * T + start``.
        """
        if self.period is None:
            raise ScheduleError("unroll applies to periodic schedules only")
        n = self.instances_per_period
        order = sorted(range(len(self.events)), key=lambda i: self.events[i].start)
        for p in range(periods):
            for i in order:
                e = self.events[i]
                instance = (p - e.lag) * n + _event_slot(e)
                if instance >= 0:
                    yield p, instance, e


def _event_slot(event: Event) -> int:
    if isinstance(event, Send):
        return event.item.instance
    return event.output.instance


def event_from_dict(data: object, *, path: str = "event") -> Event:
    """Parse one event mapping (see :meth:`Schedule.from_dicts`)."""
    return EventReader().read(data, path)


class EventReader:
    """Parses event mappings, remembering the item names and exact numbers it has read.

    A schedule of a million events names few distinct items and repeats
    many times (``"0"``, ``"1/2"``...), so each distinct text is parsed once.
    One reader serves one schedule (:meth:`Schedule.from_dicts`, the JSON
    Lines reader).
    """

    __slots__ = ("_items", "_numbers")

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}
        self._numbers: dict[str, Fraction] = {}

    def item(self, text: object, path: str) -> Item:
        """``text`` as an :class:`Item` (see :func:`~portsim.simulator.items.parse_item`)."""
        if type(text) is str:
            found = self._items.get(text)
            if found is None:
                found = self._items[text] = parse_item(text, path=path)
            return found
        return parse_item(text, path=path)

    def number(self, value: object, path: str) -> Fraction:
        """``value`` as an exact rational (:func:`~portsim.simulator.numbers.parse_rational`)."""
        if type(value) is str:
            found = self._numbers.get(value)
            if found is None:
                # "p/q" and "p" in plain digits, the form portsim writes, without
                # the general parser's regular expression; anything else goes to it.
                top, slash, bottom = value.partition("/")
                if (len(value) < 40 and top.isascii() and top.isdigit()
                        and (not slash or (bottom.isascii() and bottom.isdigit()
                                           and bottom.strip("0")))):
                    found = Fraction(int(top), int(bottom) if slash else 1)
                    if found.numerator > MAX_TERM or found.denominator > MAX_TERM:
                        # beyond the bound of every number read (SPEC): its message
                        found = parse_rational(value, path=path, error=ScheduleError)
                else:
                    found = parse_rational(value, path=path, error=ScheduleError)
                if len(self._numbers) < 65536:
                    self._numbers[value] = found
            return found
        if type(value) is int and -MAX_TERM <= value <= MAX_TERM:
            return Fraction(value)
        return parse_rational(value, path=path, error=ScheduleError)

    def read(self, data: object, path: str) -> Event:
        """One event mapping as a :class:`Send` or :class:`Compute`; ``path`` names it
        in errors."""
        if type(data) is not dict and not isinstance(data, Mapping):
            raise ScheduleError("an event must be a mapping", path=path, value=data)
        kind = data.get("kind")
        if kind == "send":
            allowed, required = _SEND_KEYS, ("src", "dst", "item", "start")
        elif kind == "compute":
            allowed, required = _COMPUTE_KEYS, ("node", "inputs", "output", "start")
        elif "kind" not in data:  # a key misspelt ("Kind") says so, else the key missing
            unknown = sorted(str(k) for k in data if k not in _SEND_KEYS | _COMPUTE_KEYS)
            if unknown:
                raise ScheduleError("unknown key", path=f"{path}.{unknown[0]}", value=unknown[0])
            raise ScheduleError("missing key (send or compute)", path=f"{path}.kind")
        else:
            raise ScheduleError("kind must be send or compute", path=f"{path}.kind", value=kind)
        if not allowed.issuperset(data):
            if kind == "compute" and "transit" in data:
                raise ScheduleError("transit applies to sends only (a compute keeps its "
                                    "output)", path=f"{path}.transit", value=data["transit"])
            unknown = sorted(str(k) for k in data if k not in allowed)
            raise ScheduleError("unknown key", path=f"{path}.{unknown[0]}", value=unknown[0])
        for key in required:
            if key not in data:
                raise ScheduleError("missing key", path=f"{path}.{key}")
        if data["start"] is None:  # "start:" with no value in YAML
            raise ScheduleError('start needs a value, a number such as 3, 0.25 or "2/3"',
                                path=f"{path}.start")
        lag = data.get("lag", 0)
        if type(lag) is not int and (isinstance(lag, bool) or not isinstance(lag, int)):
            raise ScheduleError("lag must be an integer", path=f"{path}.lag", value=lag)
        start = self.number(data["start"], f"{path}.start")
        duration = data.get("duration")
        stated = None if duration is None else self.number(duration, f"{path}.duration")
        try:
            if kind == "send":
                src, dst = data["src"], data["dst"]
                for key, node in (("src", src), ("dst", dst)):
                    if not isinstance(node, str):
                        raise ScheduleError("a node id must be a string", path=f"{path}.{key}",
                                            value=node)
                part = data.get("part")
                transit = data.get("transit", False)
                if type(transit) is not bool:
                    raise ScheduleError("transit must be true or false",
                                        path=f"{path}.transit", value=transit)
                return Send(
                    src=src, dst=dst, item=self.item(data["item"], f"{path}.item"),
                    start=start,
                    part=_ONE if part is None else self.number(part, f"{path}.part"),
                    lag=lag, duration=stated, transit=transit,
                )
            if not isinstance(data["node"], str):
                raise ScheduleError("a node id must be a string", path=f"{path}.node",
                                    value=data["node"])
            inputs = data["inputs"]
            if not isinstance(inputs, list):
                raise ScheduleError("inputs must be a list of items", path=f"{path}.inputs",
                                    value=inputs)
            return Compute(
                node=data["node"],
                inputs=tuple(self.item(x, f"{path}.inputs[{j}]") for j, x in enumerate(inputs)),
                output=self.item(data["output"], f"{path}.output"),
                start=start, lag=lag, duration=stated,
            )
        except PortsimError:
            raise
        except (TypeError, ValueError) as err:  # pragma: no cover - defensive
            raise ScheduleError(str(err), path=path, value=data) from None


def event_to_dict(event: Event) -> dict[str, Any]:
    """One event as a plain mapping with exact numbers as strings."""
    out: dict[str, Any]
    if isinstance(event, Send):
        out = {"kind": "send", "src": event.src, "dst": event.dst, "item": str(event.item),
               "start": format_rational(event.start)}
        if event.part != 1:
            out["part"] = format_rational(event.part)
        if event.transit:
            out["transit"] = True
    else:
        out = {"kind": "compute", "node": event.node,
               "inputs": [str(x) for x in event.inputs], "output": str(event.output),
               "start": format_rational(event.start)}
    if event.lag:
        out["lag"] = event.lag
    if event.duration is not None:
        out["duration"] = format_rational(event.duration)
    return out
