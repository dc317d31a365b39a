"""The validator as a library call: strict replay, and violations as a table.

Users who bring their own schedules (from their algorithms, from MPI traces)
need two things from portsim: is this schedule feasible under a one-port
model, and what exactly is wrong when it is not.  :func:`validate` answers
the first (a strict replay: every event at its stated time), and
:func:`violation_table` renders the second as a plain-text table for a test
failure or a terminal.

A schedule can be built in Python in two ways, both checked the same way as a
schedule file: from :class:`~portsim.simulator.schedule.Send` and
:class:`~portsim.simulator.schedule.Compute` dataclasses, or from a list of plain
mappings with :meth:`~portsim.simulator.schedule.Schedule.from_dicts` (numbers may be
``"2/3"`` strings).  A whole schedule document, platform included, goes through
:func:`scenarios.schedule_from_dict` (the platform parser lives in
:mod:`scenarios`).

Examples
--------
From dataclasses: a relay ``A -> B -> C``, every link cost 1.

>>> from fractions import Fraction
>>> from portsim.simulator import Item, Operation, OperationKind, Platform, Schedule, Send
>>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
>>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
>>> b = Item.broadcast()
>>> s = Schedule(p, op, (Send("A", "B", b, Fraction(0)), Send("B", "C", b, Fraction(1))))
>>> report = validate(s)
>>> report.feasible, report.makespan
(True, Fraction(2, 1))

From a list of dicts, with B forwarding before it holds the message:

>>> bad = Schedule.from_dicts(p, op, [
...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
...     {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": "1/2"}])
>>> print(violation_table(validate(bad)))
time  node  resource  kind           events  detail
----  ----  --------  -------------  ------  ---------------------------------------------
1/2   B     b         item_not_held  1       B sends b at t=1/2 but it arrives only at t=1
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from fractions import Fraction

from portsim.simulator.engine import check_schedule, replay, replay_one_shot
from portsim.simulator.errors import ScheduleError
from portsim.simulator.numbers import counted, format_rational
from portsim.simulator.platform import Platform, PortModel
from portsim.simulator.report import Report, Violation
from portsim.simulator.schedule import Compute, Event, Schedule, Send

__all__ = ["describe_event", "describe_violation_events", "kept_port_models",
           "schedule_throughput", "validate", "violation_table"]

_COLUMNS = ("time", "node", "resource", "kind", "events", "detail")


def kept_port_models(platform: Platform, port_model: PortModel | str,
                     option: str) -> str | None:
    """What a replay under ``port_model`` leaves as it was, said for ``option``; ``None``
    when every node follows it.

    ``port_model`` replaces the platform-wide model only
    (:meth:`Platform.with_port_model`): a node that gives its own keeps it.
    A platform whose every node gives its own is replayed as written, whatever
    ``port_model`` says.

    Examples
    --------
    >>> from portsim.simulator.platform import Node
    >>> p = Platform((Node("A", port_model=PortModel.parse("multiport:2")), Node("B")), ())
    >>> print(kept_port_models(p, "unidirectional", "--port-model unidirectional"))
    ... # doctest: +NORMALIZE_WHITESPACE
    --port-model unidirectional replaces the platform-wide port model only: 1 node
    keeps the one the platform gives: A (multiport:2)
    >>> print(kept_port_models(p, "multiport:2", "--port-model multiport:2"))
    None
    """
    model = PortModel.parse(port_model, path="port_model")
    kept = [f"{node.id} ({node.port_model})" for node in platform.nodes
            if node.port_model is not None and node.port_model != model]
    if not kept:
        return None
    who = "1 node keeps" if len(kept) == 1 else f"{len(kept)} nodes keep"
    more = f" and {len(kept) - 10} more" if len(kept) > 10 else ""
    moot = (" (every node has its own: it changes nothing)"
            if all(node.port_model is not None for node in platform.nodes) else "")
    return (f"{option} replaces the platform-wide port model only: {who} the one the "
            f"platform gives: {', '.join(kept[:10])}{more}{moot}")


def validate(
    schedule: Schedule,
    *,
    port_model: PortModel | str | None = None,
    horizon: Fraction | int | str | None = None,
    tolerance: Fraction | int | float | str | None = None,
) -> Report:
    """Check ``schedule`` as written: a strict, exact replay.

    Every event starts exactly at its stated time; the engine re-derives every
    duration from the platform and reports every port or CPU conflict, every
    item used before it is held, every bad reduction and every operation left
    incomplete.

    Parameters
    ----------
    schedule:
        A one-shot or periodic schedule.
    port_model:
        Check under another platform-wide port model (``"unidirectional"``,
        ``"multiport:2"``...); per-node overrides are kept.
    horizon:
        Time span of a periodic replay (default: ten periods past the largest
        lag).  For a one-shot schedule, the time span over which the
        pipelined series of operations reusing it is measured, as ``portsim
        run`` measures it (:func:`simulator.engine.replay_one_shot`): the
        schedule itself is checked whole, so a horizon shorter than its
        makespan never makes it infeasible; ``completed`` and
        ``measured_throughput`` are the series', and a schedule with a
        violation is not measured (no horizon in the report).
    tolerance:
        How long before its port, link, CPU or input is free an event may
        start with no violation (default 0, as written).  Start times
        computed in floats land a rounding error before the exact times
        the platform gives (``0.1 + 0.7`` is ``0.7999999999999999``, a
        transfer ending at ``4/5``): ``tolerance=1e-9`` accepts those.  It
        covers parts computed in floats too: parts that sum to just under 1
        make the item when the fraction missing would take at most
        ``tolerance`` to send on every link carrying parts; and a stated
        ``duration`` within ``tolerance`` of the platform's is no
        ``wrong_duration``.

    Returns
    -------
    Report
        ``report.feasible`` is True when there is no violation;
        ``report.violations`` lists them in time order.

    Raises
    ------
    ScheduleError
        On a bad ``horizon`` or a periodic replay too large to run.
    PlatformError
        On a bad ``port_model``.

    See Also
    --------
    simulator.replay : the engine, with the as-soon-as-possible mode and float time.
    violation_table : the violations as a readable table.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 2), ("A", "C", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
    ...     {"kind": "send", "src": "A", "dst": "C", "item": "b", "start": 2}])
    >>> validate(s).makespan
    Fraction(3, 1)

    Over a horizon, the series of broadcasts reusing it (A sends for 3 time
    units per broadcast): none complete by 2, and the schedule is still
    feasible; 3 complete by 9.

    >>> short = validate(s, horizon=2)
    >>> short.feasible, short.completed, short.makespan
    (True, 0, Fraction(3, 1))
    >>> validate(s, horizon=9).completed
    3
    """
    check_schedule(schedule)
    if port_model is not None:
        kept = kept_port_models(schedule.platform, port_model, f"port_model={str(port_model)!r}")
        if kept is not None:
            warnings.warn(kept, stacklevel=2)
    if schedule.period is None and horizon is not None:
        return replay_one_shot(schedule, horizon, mode="strict", exact=True,
                               port_model=port_model, tolerance=tolerance)
    return replay(schedule, mode="strict", exact=True, horizon=horizon, port_model=port_model,
                  tolerance=tolerance)


def schedule_throughput(schedule: Schedule, report: Report) -> Fraction | None:
    """The exact throughput a feasible schedule achieves as written, as the replay proves it.

    Periodic: ``instances_per_period / period``, once the strict replay saw
    every instance slot #j complete in every period past the start-up (a
    slot no event serves is an ``incomplete`` violation, so an idle slot
    never inflates the figure).  One-shot: the instances it completes divided
    by the end of its last event, its makespan unless events run past the
    completion (the rate of running it again and again, back to back).
    ``None`` when the report shows no such proof (a violation, an incomplete
    instance, an as-soon-as-possible replay, or a horizon too short to see
    every slot): this is :attr:`Report.throughput`.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B"], [("A", "B", "2/3")])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}])
    >>> schedule_throughput(s, validate(s))
    Fraction(3, 2)
    >>> claims_two = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}],
    ...     period=1, instances_per_period=2)
    >>> print(schedule_throughput(claims_two, validate(claims_two)))
    None
    """
    return report.throughput


def describe_event(index: int, event: Event) -> str:
    """One event in a few words: ``#3 send v[1,1] P1->P0 @2/3``.

    Examples
    --------
    >>> from portsim.simulator import Item
    >>> describe_event(3, Send("P1", "P0", Item.interval(1, 1), Fraction(2, 3)))
    '#3 send v[1,1] P1->P0 @2/3'
    >>> describe_event(0, Send("P1", "R", Item.broadcast(), Fraction(0), transit=True))
    '#0 send b P1->R (transit) @0'
    """
    if isinstance(event, Send):
        part = "" if event.part == 1 else f" part {format_rational(event.part)}"
        transit = " (transit)" if event.transit else ""
        text = f"#{index} send {event.item}{part} {event.src}->{event.dst}{transit}"
    else:
        assert isinstance(event, Compute)
        inputs = "+".join(str(x) for x in event.inputs)
        text = f"#{index} compute {inputs}->{event.output} on {event.node}"
    lag = f" lag {event.lag}" if event.lag else ""
    return f"{text} @{format_rational(event.start)}{lag}"


def describe_violation_events(violation: Violation, schedule: Schedule | None) -> list[str]:
    """The events a violation involves, each described by :func:`describe_event`.

    The one description of the events both tables use (:func:`violation_table`,
    ``portsim validate``'s) and ``described`` in ``validate --format json``.
    An index ``schedule`` does not hold (or no ``schedule``) is written ``#i``.

    Examples
    --------
    >>> from portsim.simulator import Item, Operation, OperationKind, Platform, Violation
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule(p, op, (Send("A", "B", Item.broadcast(), Fraction(0)),))
    >>> describe_violation_events(Violation("port_conflict", Fraction(0), "A", "", (0, 3)), s)
    ['#0 send b A->B @0', '#3']
    """
    events = () if schedule is None else schedule.events
    return [describe_event(i, events[i]) if 0 <= i < len(events) else f"#{i}"
            for i in violation.events]


def _time_text(value: Fraction | float) -> str:
    if isinstance(value, Fraction):
        return format_rational(value)
    return f"{value:.6g}"


def violation_table(
    report: Report | Sequence[Violation],
    schedule: Schedule | None = None,
    *,
    limit: int | None = 50,
) -> str:
    """The violations as a plain-text table, one line each.

    Columns: time, node, resource (port, CPU, link or item), kind, the events
    involved (described in a few words when ``schedule`` is given, else their
    indexes) and the engine's detail.

    Parameters
    ----------
    report:
        A :class:`Report`, or the violations themselves.
    schedule:
        The schedule replayed, to describe the events involved.
    limit:
        Show at most this many rows, then a line counting the rest
        (``None``: all of them; 0: only the count).

    Returns
    -------
    str
        ``"no violations"`` when there are none.

    Raises
    ------
    ScheduleError
        On a ``limit`` that is not an integer >= 0 or ``None``.

    Examples
    --------
    >>> from portsim.simulator import Violation
    >>> print(violation_table([Violation("port_conflict", Fraction(1), "A",
    ...                                  "two sends", (1, 0), "send port of A")]))
    time  node  resource        kind           events  detail
    ----  ----  --------------  -------------  ------  ---------
    1     A     send port of A  port_conflict  1, 0    two sends
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit < 0):
        raise ScheduleError("must be an integer >= 0 or None", path="limit", value=limit)
    violations = list(report.violations if isinstance(report, Report) else report)
    if not violations:
        return "no violations"
    if limit == 0:
        return f"{counted(len(violations), 'violation')} (none shown: limit 0)"
    shown = violations if limit is None else violations[:limit]
    rows = []
    for v in shown:
        if schedule is not None and all(0 <= i < len(schedule.events) for i in v.events):
            events = "; ".join(describe_violation_events(v, schedule))
        else:
            events = ", ".join(str(i) for i in v.events)
        rows.append((_time_text(v.time), v.node, v.resource, v.kind, events,
                     " ".join(v.detail.split())))
    widths = [max(len(c), *(len(r[k]) for r in rows)) for k, c in enumerate(_COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    if len(shown) < len(violations):
        lines.append(f"... and {counted(len(violations) - len(shown), 'more violation')}")
    return "\n".join(lines)
