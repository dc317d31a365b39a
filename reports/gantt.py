"""The Gantt chart of a schedule: one row per port and per CPU, one bar per event.

:func:`gantt_figure` draws a one-shot schedule, or one period of a periodic
one, from the schedule alone: durations are re-derived from the platform as
the engine does, the events a violation names are outlined in red, and the
port rows of ``multiport`` nodes are split into lanes where transfers run at
the same time (greedy colouring of an interval graph).  Charts past
:data:`GANTT_EVENT_CAP` events draw the earliest and say where they stop.
The port models are those of the broadcast report of Beaumont, Legrand,
Marchal and Robert (one-port, bidirectional or unidirectional, and the
multi-port of its section 5).

Every string coming from outside (node ids, item names, titles) is
HTML-escaped before it reaches a plotly label.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final

import numpy as np
import plotly.graph_objects as go

from portsim.reports._style import TEMPLATE as _TEMPLATE
from portsim.reports._style import TIME_UNIT, readable_rational, set_title
from portsim.reports._style import escape_label as _esc
from portsim.reports._style import palette as _palette
from portsim.simulator.engine import check_schedule
from portsim.simulator.errors import PlatformError, ScenarioError
from portsim.simulator.numbers import format_rational, parse_rational, readable, short
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.report import Violation
from portsim.simulator.schedule import Event, Schedule, Send

__all__ = ["GANTT_EVENT_CAP", "GanttWindow", "gantt_event_indexes", "gantt_figure",
           "gantt_note", "gantt_time_span", "parse_gantt_window"]

GANTT_EVENT_CAP: Final = 2_000
"""At most this many schedule events are drawn in one Gantt chart (the earliest)."""

_MAX_ITEM_COLOURS: Final = 24
"""Beyond this many distinct items, Gantt bars are coloured by instance or by kind."""
_LEGEND_LINE: Final = 20
"""Pixels per item of a legend (plotly's 12 px font)."""
_LEGEND_HEAD: Final = 30
"""Pixels of a legend's title."""
_GANTT_BOTTOM: Final = 80
"""Pixels below a Gantt chart's plot area (plotly's bottom margin: ticks, axis title)."""
_GANTT_PLOT_WIDTH: Final = 1100
"""Pixels of a Gantt chart's time axis on a page of 1,400 pixels (the report's width)."""
_THIN_BAR_PIXELS: Final = 4
"""Gantt bars narrower than this many pixels at first sight are drawn without outline."""
_FAULT_COLOUR: Final = "#c0392b"
"""Outline of the Gantt bars of events involved in a violation."""
_FAULT_OPACITY: Final = 0.6
"""Their fill: see-through, so two bars overlapping on one port both show."""


@dataclass(frozen=True, slots=True)
class GanttWindow:
    """A part of the time axis to draw in a Gantt chart: ``[start, end)``.

    An event is in the window when it runs in it: it starts before ``end``
    and ends after ``start`` (an event of duration 0, at its time, when that
    time is in the window).  Times are those of the schedule (for a periodic
    schedule, within its period).

    Parameters
    ----------
    start:
        The window's start, ``>= 0``.
    end:
        Its end, ``> start``; ``None`` for "to the end of the schedule".

    Raises
    ------
    ScenarioError
        When ``start`` is negative or ``end`` is not after ``start``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> window = GanttWindow(Fraction(12, 5), Fraction(40))
    >>> window.holds(Fraction(2), Fraction(1)), window.holds(Fraction(40), Fraction(1))
    (True, False)
    >>> str(window), str(GanttWindow(Fraction(3)))
    ('[12/5, 40)', 'from 3')
    """

    start: Fraction
    end: Fraction | None = None

    def __post_init__(self) -> None:
        if self.start < 0:
            raise ScenarioError("the start of a time window must be >= 0",
                                path="window", value=str(self))
        if self.end is not None and self.end <= self.start:
            raise ScenarioError("the start of a time window must be before its end",
                                path="window", value=str(self))

    def holds(self, start: Fraction, duration: Fraction) -> bool:
        """Whether an event of ``start`` and ``duration`` runs in the window."""
        if self.end is not None and start >= self.end:
            return False
        return start >= self.start or start + duration > self.start

    def __str__(self) -> str:
        if self.end is None:
            return f"from {format_rational(self.start)}"
        return f"[{format_rational(self.start)}, {format_rational(self.end)})"


def parse_gantt_window(text: str, *, path: str = "--gantt-window") -> GanttWindow:
    """Read a time window written ``START:END``, ``START:`` (to the end) or ``:END`` (from 0).

    Parameters
    ----------
    text:
        The window; ``START`` and ``END`` are exact numbers (``12/5``, ``0.5``, ``40``).
    path:
        The option or key it came from, for the error message.

    Returns
    -------
    GanttWindow

    Raises
    ------
    ScenarioError
        When ``text`` has no ``:``, a bound is not a number, ``START`` is
        negative or ``START >= END``; the message names ``path`` and ``text``.

    Examples
    --------
    >>> str(parse_gantt_window("12/5:40")), str(parse_gantt_window("3:"))
    ('[12/5, 40)', 'from 3')
    """
    head, colon, tail = text.partition(":")
    if not colon or ":" in tail or not (head.strip() or tail.strip()):
        raise ScenarioError("expected START:END, START: or :END, such as 12/5:40",
                            path=path, value=text)
    start = parse_rational(head.strip(), path=path, error=ScenarioError) \
        if head.strip() else Fraction(0)
    end = parse_rational(tail.strip(), path=path, error=ScenarioError) \
        if tail.strip() else None
    if start < 0:
        raise ScenarioError("START must be >= 0", path=path, value=text)
    if end is not None and end <= start:
        raise ScenarioError("START must be before END", path=path, value=text)
    return GanttWindow(start, end)


@dataclass(frozen=True, slots=True)
class _Bar:
    """One bar of the Gantt chart: one port (or CPU) busy for one event."""

    row: str
    start: Fraction
    duration: Fraction
    colour_key: str
    label: str
    hover: str
    flagged: bool = False
    """The event takes part in a violation the engine found."""
    peer: tuple[str, NodeId] | None = None
    """The other end of a send, for a port row (``("→", "B")`` or ``("←", "A")``); ``None``
    for a CPU."""


def _port_rows(platform: Platform, node: NodeId) -> tuple[str, str]:
    """The rows of ``node``'s sending and receiving port(s) (one shared row if unidirectional)."""
    model = platform.port_model_of(node)
    if model.kind is PortKind.UNIDIRECTIONAL:
        return f"{node} port", f"{node} port"
    if model.kind is PortKind.MULTIPORT:
        # `multiport` without k has one port per link: no count to show.
        ports = "one per link" if model.k is None else f"k={model.k}"
        return f"{node} send ports ({ports})", f"{node} receive ports ({ports})"
    return f"{node} send port", f"{node} receive port"


def _send_duration(schedule: Schedule, send: Send) -> Fraction | None:
    """The engine's duration of ``send`` (:meth:`Link.duration`), ``None`` without a link."""
    try:
        return schedule.platform.duration(send.src, send.dst, schedule.operation.size, send.part)
    except PlatformError:
        return None


def _event_duration(schedule: Schedule, event: Event) -> Fraction:
    """How long ``event`` lasts as the chart draws it (the engine's time, when it knows it)."""
    if isinstance(event, Send):
        found = _send_duration(schedule, event)
        return found if found is not None else (event.duration or Fraction(0))
    return schedule.platform.compute_time(event.node) * event.tasks


def gantt_event_indexes(schedule: Schedule, window: GanttWindow | None = None) -> list[int]:
    """The events a Gantt chart of ``schedule`` draws before its cap, by index, in order.

    Parameters
    ----------
    schedule:
        The schedule.
    window:
        Only the events that run in this window (:meth:`GanttWindow.holds`),
        every event without.

    Returns
    -------
    list of int
        Indexes into ``schedule.events``, earliest start first (ties in
        schedule order); :func:`gantt_figure` draws the first ``max_events``.
    """
    events = schedule.events
    order = sorted(range(len(events)), key=lambda i: (events[i].start, i))
    if window is None:
        return order
    return [i for i in order if window.holds(events[i].start,
                                             _event_duration(schedule, events[i]))]


def gantt_time_span(schedule: Schedule) -> str:
    """Where the events of a Gantt chart of ``schedule`` run, in words.

    Said where a time window holds none of them: a periodic schedule's chart is
    one period, so a window past it is empty however long the schedule runs.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B"], [("A", "B", "2/3")])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B",
    ...                                  "item": "b", "start": 1}])
    >>> gantt_time_span(s)
    'its events run from 1 to 5/3'
    """
    events = schedule.events
    if not events:
        return "it has no event"
    first = min(e.start for e in events)
    last = max(e.start + _event_duration(schedule, e) for e in events)
    whose = "its events" if schedule.period is None else (
        f"the chart is one period (T = {format_rational(schedule.period)}), whose events")
    return f"{whose} run from {format_rational(first)} to {format_rational(last)}"


def gantt_note(schedule: Schedule, window: GanttWindow | None = None
               ) -> tuple[str, str] | None:
    """The line a report writes above a Gantt chart of ``schedule``: ``(css class, text)``.

    Both reports (``portsim run --report`` and ``portsim report DIR``) write it
    in a ``<p>`` of that class, the text HTML-escaped.  Below, ``T`` is the
    number of events of ``schedule``, ``N`` the number of those that run in
    ``window`` (:func:`gantt_event_indexes`: :meth:`GanttWindow.holds` with the
    durations the chart draws) and ``CAP`` is :data:`GANTT_EVENT_CAP`; numbers
    are written with thousands separators (``2,500``).

    Parameters
    ----------
    schedule:
        The schedule the chart draws.
    window:
        The chart's time window, ``None`` for the whole schedule.

    Returns
    -------
    tuple of (str, str), or None
        With ``window``, always a line, ``"Time window W: N of T events run
        in it"`` (``W`` is ``str(window)``) followed by

        - ``"."``, class ``"hint"``, when ``0 < N <= CAP``, or when
          ``N = T = 0``;
        - ``": only the first CAP (earliest starts) are drawn."``, class
          ``"warn"``, when ``N > CAP``;
        - ``": " + gantt_time_span(schedule) + "."``, class ``"warn"``,
          when ``N = 0 < T`` (where the events run, the window holding none).

        Without ``window``: ``("warn", "T events: only the first CAP
        (earliest starts) are drawn.")`` when ``T > CAP``, else ``None``
        (nothing to say: the chart draws every event).
    """
    total = len(schedule.events)
    if window is None:
        if total <= GANTT_EVENT_CAP:
            return None
        return ("warn", f"{total:,} events: only the first {GANTT_EVENT_CAP:,} "
                        "(earliest starts) are drawn.")
    inside = len(gantt_event_indexes(schedule, window))
    cut = (f": only the first {GANTT_EVENT_CAP:,} (earliest starts) are drawn"
           if inside > GANTT_EVENT_CAP else "")
    if inside == 0 and total:
        cut = f": {gantt_time_span(schedule)}"
    return ("warn" if cut else "hint",
            f"Time window {window}: {inside:,} of {total:,} events run in it{cut}.")


def _event_bars(schedule: Schedule, event: Event, colour_key: str,
                faults: Sequence[str] = ()) -> list[_Bar]:
    """The bars of one event: sender and receiver ports of a send, the CPU of a compute.

    ``faults`` are the kinds of the violations the event takes part in.
    """
    lines: list[str] = []
    duration = _event_duration(schedule, event)
    if isinstance(event, Send):
        label = str(event.item)
        lines.append(f"<b>{_esc(label)}</b>")
        lines.append(f"send {_esc(event.src)} → {_esc(event.dst)}")
        if event.part != 1:
            lines.append(f"part {format_rational(event.part)}")
        if _send_duration(schedule, event) is None:
            lines.append("no such link!")
    else:
        label = str(event.output)
        lines.append(f"<b>{_esc(label)}</b>")
        inputs = " ⊕ ".join(_esc(x) for x in event.inputs)
        lines.append(f"compute on {_esc(event.node)}: {inputs}")
    end = event.start + duration
    lines.append(f"start {format_rational(event.start)}, end {format_rational(end)}")
    if short(event.start) != format_rational(event.start) or short(end) != format_rational(end):
        # a time of 70 digits over 70 (a chain of links of costs p/(p+2)) reads as
        # nothing: its decimal value, as the table's cell gives it
        lines.append(f"(start {short(event.start)}, end {short(end)})")
    lines.append(f"duration {readable(duration)}")
    if event.lag:
        lines.append(f"lag {event.lag} period(s)")
    if faults:
        lines.append(f"<b>violation: {_esc(', '.join(dict.fromkeys(faults)))}</b>")
    hover = "<br>".join(lines)
    if isinstance(event, Send):
        send_row, _ = _port_rows(schedule.platform, event.src)
        _, receive_row = _port_rows(schedule.platform, event.dst)
        rows = [send_row, receive_row]
        peers: list[tuple[str, NodeId] | None] = [("→", event.dst), ("←", event.src)]
    else:
        rows = [f"{event.node} CPU"]
        peers = [None]
    return [_Bar(row, event.start, duration, colour_key, label, hover, bool(faults), peer)
            for row, peer in zip(rows, peers, strict=True)]


def _event_item(event: Event) -> tuple[str, int]:
    """The item an event moves or produces: ``(name without instance, instance)``."""
    item = event.item if isinstance(event, Send) else event.output
    return item.base_name(), item.instance


def _colour_keys(events: Sequence[Event]) -> list[str]:
    """A legend group per event: its item, else its instance, else its kind.

    Colouring by item reads best; past :data:`_MAX_ITEM_COLOURS` distinct
    items the colours would repeat, so it falls back to instances, then to
    send/compute.
    """
    items = [_event_item(e) for e in events]
    if len({name for name, _ in items}) <= _MAX_ITEM_COLOURS:
        return [name for name, _ in items]
    instances = {t for _, t in items}
    if 1 < len(instances) <= _MAX_ITEM_COLOURS:
        return [f"instance #{t}" for _, t in items]
    return ["send" if isinstance(e, Send) else "compute" for e in events]


_MAX_LANE_PEERS: Final = 3
"""A lane of a ``multiport`` node (one port per link) names up to this many links."""


def _lane_assignment(spans: Sequence[tuple[int, int]],
                     peers: Sequence[tuple[str, NodeId] | None]) -> tuple[list[int], int]:
    """A lane per bar of one row, no two overlapping bars on one lane, and the lane count.

    ``spans`` are the bars' ``(start, end)`` in a unit that makes every time
    an integer (exact, and cheaper to compare than fractions).  Greedy
    colouring of an interval graph by start time: a bar takes a free lane
    (the one that last carried its link, ``peers``, if it is free, else the
    lowest), and a new lane only when every lane is busy, so the lane count
    is the largest number of bars that overlap at one time (intervals are
    half-open: a bar may start when another ends).
    """
    lanes = [0] * len(spans)
    busy: list[tuple[int, int]] = []  # (end, lane), earliest end first
    free: list[int] = []  # the free lanes, lowest first
    last_peer: dict[int, tuple[str, NodeId] | None] = {}
    count = 0
    for index in sorted(range(len(spans)), key=lambda i: (spans[i][0], i)):
        start, end = spans[index]
        while busy and busy[0][0] <= start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        same = [lane for lane in free if last_peer.get(lane) == peers[index]]
        if same:
            lane = min(same)
            free.remove(lane)
            heapq.heapify(free)
        elif free:
            lane = heapq.heappop(free)
        else:
            lane, count = count, count + 1
        lanes[index] = lane
        last_peer[lane] = peers[index]
        heapq.heappush(busy, (end, lane))
    return lanes, count


def _lane_name(platform: Platform, node: NodeId, side: str, lane: int,
               peers: Sequence[tuple[str, NodeId]]) -> str:
    """The row of one lane of a multiport node's port row: which port, or which links.

    ``side`` is ``"send"`` or ``"receive"``; ``peers`` are the ``(arrow, node)``
    ends of the links the lane carries, in order of first use.
    """
    k = platform.port_model_of(node).k
    if k is not None:
        over = f" (over k={k}!)" if lane > k else ""
        return f"{node} {side} port {lane} of {k}{over}"
    shown = ", ".join(str(peer) for _, peer in peers[:_MAX_LANE_PEERS])
    more = f" +{len(peers) - _MAX_LANE_PEERS}" if len(peers) > _MAX_LANE_PEERS else ""
    arrow = peers[0][0] if peers else ""
    return f"{node} {side} lane {lane}: {arrow} {shown}{more}"


def _split_lanes(platform: Platform, bars: Sequence[_Bar]) -> tuple[list[_Bar],
                                                                   dict[str, list[str]]]:
    """``bars`` with each multiport row whose bars overlap split into lanes.

    A ``multiport`` or ``multiport:k`` node runs transfers at once on one
    port row, where their bars would hide each other: such a row becomes as
    many rows (lanes) as the most transfers at one time (at most ``k`` in a
    valid schedule), each named by its port (``"A send port 2 of 3"``) or,
    with one port per link, by the links it carries (``"A send lane 1: → B,
    C"``).  Other rows, and multiport rows without overlap, are kept as they
    are.  Returns the bars and, per row split, its lanes in order.
    """
    # a multiport node has a send row and a receive row: (node, side) of each
    multiport = {row: (node, side) for node in platform.node_ids
                 if platform.port_model_of(node).kind is PortKind.MULTIPORT
                 for row, side in zip(_port_rows(platform, node), ("send", "receive"),
                                      strict=True)}
    by_row: dict[str, list[int]] = {}
    for index, bar in enumerate(bars):
        if bar.row in multiport:
            by_row.setdefault(bar.row, []).append(index)
    split = list(bars)
    lanes_of: dict[str, list[str]] = {}
    # one time unit in which every start and duration is a whole number
    unit = math.lcm(*{t.denominator for indexes in by_row.values() for i in indexes
                      for t in (bars[i].start, bars[i].duration)}, 1)
    for row, indexes in by_row.items():
        spans = []
        for i in indexes:
            start = bars[i].start.numerator * (unit // bars[i].start.denominator)
            spans.append((start, start + bars[i].duration.numerator
                          * (unit // bars[i].duration.denominator)))
        lanes, count = _lane_assignment(spans, [bars[i].peer for i in indexes])
        if count <= 1:
            continue
        peers: list[dict[tuple[str, NodeId], None]] = [{} for _ in range(count)]
        for index, lane in zip(indexes, lanes, strict=True):
            peer = bars[index].peer
            if peer is not None:  # always so on a port row
                peers[lane][peer] = None
        node, side = multiport[row]
        names = [_lane_name(platform, node, side, lane + 1, list(peers[lane]))
                 for lane in range(count)]
        lanes_of[row] = names
        for index, lane in zip(indexes, lanes, strict=True):
            split[index] = replace(bars[index], row=names[lane])
    return split, lanes_of


def _ordered_rows(platform: Platform, bars: Sequence[_Bar],
                  lanes: Mapping[str, Sequence[str]] | None = None) -> list[tuple[NodeId, str]]:
    """The rows in use as ``(node, row)``, in platform order: send, receive (or port), CPU.

    A row split into ``lanes`` (:func:`_split_lanes`) gives its lanes, in order.
    """
    used = {b.row for b in bars}
    lanes = lanes or {}
    rows: list[tuple[NodeId, str]] = []
    for node in platform.node_ids:
        send_row, receive_row = _port_rows(platform, node)
        for row in dict.fromkeys((send_row, receive_row, f"{node} CPU")):
            rows += [(node, lane) for lane in lanes.get(row, (row,)) if lane in used]
    return rows


def _node_bands(rows: Sequence[tuple[NodeId, str]]) -> list[dict[str, object]]:
    """Light background bands behind every other node's rows, to group them by eye."""
    spans: dict[NodeId, list[int]] = {}
    for index, (node, _) in enumerate(rows):
        spans.setdefault(node, []).append(index)
    return [
        {"type": "rect", "xref": "paper", "yref": "y", "x0": 0, "x1": 1,
         "y0": indexes[0] - 0.5, "y1": indexes[-1] + 0.5, "layer": "below",
         "line": {"width": 0}, "fillcolor": "rgba(0, 0, 0, 0.05)"}
        for n, indexes in enumerate(spans.values()) if n % 2 == 0
    ]


def _faults(schedule: Schedule, violations: Sequence[Violation]) -> dict[int, list[str]]:
    """The kinds of violation each event (by its index in the schedule) takes part in."""
    faults: dict[int, list[str]] = {}
    for violation in violations:
        for index in violation.events:
            if 0 <= index < len(schedule.events):
                faults.setdefault(index, []).append(violation.kind)
    return faults


def _gantt_title(schedule: Schedule, title: str | None, shown: int,
                 cut: Fraction | None = None, window: GanttWindow | None = None,
                 in_window: int = 0) -> str:
    total = len(schedule.events)
    if schedule.period is not None:
        what = (f"one period of the periodic schedule (T = {readable_rational(schedule.period)}, "
                f"{schedule.instances_per_period} instance(s) per period)")
    else:
        what = "one-shot schedule"
    head = f"{_esc(title)}: {what}" if title else what.capitalize()
    of, events = total, "events"
    if window is not None:
        head += (f"<br>time window {window}: the {in_window:,} of {total:,} events "
                 "that run in it")
        if in_window == 0 and total:
            head += f" ({gantt_time_span(schedule)})"
        of, events = in_window, "events of the window"
    if shown < of:
        # Say up to when the drawing is whole: the rest of the time axis is not idle.
        until = "" if cut is None else f": every event starting before {readable_rational(cut)}"
        head += f"<br><span style='color:#c0392b'>showing the first {shown:,} of {of:,} " \
                f"{events} (earliest starts{until})</span>"
    return head


def gantt_figure(
    schedule: Schedule,
    *,
    title: str | None = None,
    max_events: int = GANTT_EVENT_CAP,
    violations: Sequence[Violation] = (),
    window: GanttWindow | None = None,
) -> go.Figure:
    """Gantt chart of a one-shot schedule, or of one period of a periodic one.

    Parameters
    ----------
    schedule:
        The schedule.  Durations are re-derived from its platform, as the
        engine does: ``latency + part * size / bandwidth`` for a send
        (``part * size * c(src, dst)`` on a link without latency), the node's
        compute time for a compute.
    title:
        Shown before the description of the schedule (the planner's name).
    max_events:
        Draw at most this many events, the earliest (of the window, with
        ``window``); the title says when some were left out, and up to when
        the drawing is whole.
    violations:
        The violations the engine found in ``schedule`` (a
        :class:`~portsim.simulator.report.Report`'s): the bars of the events
        they name are outlined in red and drawn see-through, so that bars
        which overlap on a port stay visible; their hover text names the
        violations, and the title counts them.
    window:
        Draw only the events that run in this part of the time axis
        (:meth:`GanttWindow.holds`; bars are cut at its edges, their hover
        keeps the events' times), which the time axis then spans; the title
        gives the window and how many events run in it.  ``max_events``
        still applies inside it.

    Returns
    -------
    plotly.graph_objects.Figure
        One row per port: ``"<node> send port"`` and ``"<node> receive port"``
        (``"<node> port"`` for a unidirectional node, whose sends and receives
        share it; ``"<node> send ports (k=2)"`` for ``multiport:2``,
        ``"<node> send ports (one per link)"`` for ``multiport``), and
        ``"<node> CPU"`` for computes; only rows in use appear.
        On a ``multiport`` node, a port row where transfers overlap in time is
        split into as many lanes as the most transfers at one time (greedy
        interval colouring by start time), so that every transfer shows:
        ``"<node> send port 2 of 3"`` for ``multiport:3``, ``"<node> send lane 1:
        → B, C"`` (the links it carries) for ``multiport``.
        A send is drawn twice, on the sender's and the receiver's port: a
        schedule of ``s`` sends and ``k`` computes gives ``2 s + k`` bars.
        Bars are coloured by item (one legend entry per item) and their hover
        text gives the item, ``src → dst``, start and end as exact rationals
        (and, when one is longer than 40 characters, their decimal values).
        An event of duration 0 (a computation on a node of compute time 0)
        is a diamond at its time instead of a bar.
        A periodic schedule has a dashed line at the period.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B"], [("A", "B", "2/3")])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B",
    ...                                  "item": "b", "start": 0}])
    >>> fig = gantt_figure(s, title="by hand")
    >>> sum(len(trace.x) for trace in fig.data)
    2
    >>> list(fig.data[0].y)
    ['A send port', 'B receive port']
    """
    check_schedule(schedule)
    order = gantt_event_indexes(schedule, window)
    shown = order[:max(0, max_events)]
    events = [schedule.events[i] for i in shown]
    faults = _faults(schedule, violations)
    bars = [bar for index, event, key in zip(shown, events, _colour_keys(events), strict=True)
            for bar in _event_bars(schedule, event, key, faults.get(index, ()))]
    bars, lanes = _split_lanes(schedule.platform, bars)
    keys = list(dict.fromkeys(b.colour_key for b in bars))
    colours = _palette(len(keys))
    # The white outline that separates back-to-back bars covers a bar of a pixel or
    # two, which then reads as a pale, different colour: no outline on those.
    span = max([b.start + b.duration for b in bars] + [schedule.period or Fraction(0)])
    axis: tuple[Fraction, Fraction] | None = None
    if window is not None:
        axis = (window.start, window.end if window.end is not None
                else max(span, window.start + 1))
        span = axis[1] - axis[0]
    thin = span / _GANTT_PLOT_WIDTH * _THIN_BAR_PIXELS
    fig = go.Figure()
    for i, key in enumerate(keys):
        colour = colours[i % len(colours)]
        group = [b for b in bars if b.colour_key == key and b.duration > 0]
        # A bar of length 0 (a computation on a node of compute time 0) is invisible:
        # such an event is a diamond at its time, in its item's legend entry.
        instant = [b for b in bars if b.colour_key == key and b.duration == 0]
        if instant:
            fig.add_trace(go.Scatter(
                name=_esc(key), legendgroup=_esc(key), showlegend=not group, mode="markers",
                y=[b.row for b in instant], x=[float(b.start) for b in instant],
                marker={"symbol": "diamond-tall", "size": 14, "color": colour,
                        "line": {"color": [_FAULT_COLOUR if b.flagged else "white"
                                           for b in instant],
                                 "width": [3 if b.flagged else 1 for b in instant]}},
                hovertext=[b.hover for b in instant],
                hovertemplate="%{hovertext}<extra></extra>",
            ))
        if not group:
            continue
        spans = [_drawn_span(b, axis) for b in group]
        fig.add_trace(go.Bar(
            name=_esc(key), legendgroup=_esc(key), orientation="h",
            y=[b.row for b in group], base=[float(s) for s, _ in spans],
            x=[float(length) for _, length in spans],
            marker=_bar_marker(colour, group, [length for _, length in spans], thin),
            text=[_esc(b.label) for b in group], textposition="inside",
            insidetextanchor="middle", textangle=0,
            hovertext=[b.hover for b in group], hovertemplate="%{hovertext}<extra></extra>",
        ))
    rows = _ordered_rows(schedule.platform, bars, lanes)
    names = [row for _, row in rows]
    fig.update_layout(
        template=_TEMPLATE, barmode="overlay", bargap=0.25, showlegend=True,
        height=max(260, 160 + 26 * len(names)),
        legend_title_text=_legend_title(keys),
        legend_tracegroupgap=0,  # one legend group per item: no gap between the items
        uniformtext={"minsize": 8, "mode": "hide"},
        shapes=_node_bands(rows),
        margin={"l": 10},
    )
    cut = schedule.events[order[len(shown)]].start if len(shown) < len(order) else None
    head = _gantt_title(schedule, title, len(events), cut, window, len(order))
    if violations:
        drawn = sum(1 for i in shown if i in faults)
        head += (f"<br><span style='color:{_FAULT_COLOUR}'>infeasible: {len(violations):,} "
                 f"violation(s); the {drawn:,} event(s) drawn that they involve are "
                 "outlined in red</span>")
    if lanes:
        head += ("<br><sup>multiport nodes: transfers at the same time are drawn on separate "
                 "rows (lanes), named by port, or by the links they carry</sup>")
    set_title(fig, head)
    # The legend (one item a line) starts at the top of the plot area: make that area
    # tall enough for all of it, or plotly cuts it and adds a scroll bar.
    legend = _LEGEND_HEAD + _LEGEND_LINE * len(keys)
    fig.update_layout(height=max(fig.layout.height, fig.layout.margin.t + _GANTT_BOTTOM + legend))
    fig.update_yaxes(categoryorder="array", categoryarray=names, autorange="reversed",
                     title_text="port / CPU")
    if not names:
        # no row (a window outside the events): plotly would number an empty axis
        fig.update_yaxes(showticklabels=False, showgrid=False)
    fig.update_xaxes(title_text=f"time ({TIME_UNIT})", rangemode="tozero", zeroline=True)
    if axis is not None:
        fig.update_xaxes(range=[float(axis[0]), float(axis[1])])
    if schedule.period is not None:
        fig.add_vline(x=float(schedule.period), line_dash="dash", line_color="#555",
                      annotation_text=f"period T = {short(schedule.period)}",
                      annotation_position="top right")
    return fig


def _drawn_span(bar: _Bar, axis: tuple[Fraction, Fraction] | None) -> tuple[Fraction, Fraction]:
    """``(base, length)`` of ``bar`` as drawn: cut to the time axis of a window, so that its
    label sits in the part that shows (the hover keeps the event's own times)."""
    if axis is None:
        return bar.start, bar.duration
    start = max(bar.start, axis[0])
    return start, min(bar.start + bar.duration, axis[1]) - start


def _bar_marker(colour: str, bars: Sequence[_Bar], lengths: Sequence[Fraction],
                thin: Fraction) -> dict[str, object]:
    """The marker of one item's bars: white outlines, red and see-through where flagged.

    ``lengths`` are the bars' lengths as drawn (cut to a window's time axis):
    a bar of which a pixel or two shows is thin, however long its event.
    A value per bar only where the bars differ: plotly checks every colour of
    an array one by one (3x the time of the whole chart at 20,000 events).
    """
    widths = [3 if b.flagged else 0 if length < thin else 1
              for b, length in zip(bars, lengths, strict=True)]
    marker: dict[str, object] = {
        "color": colour,
        "line": {"color": "white", "width": widths[0] if len(set(widths)) == 1
                 else np.array(widths)}}
    if any(b.flagged for b in bars):
        marker["opacity"] = np.array([_FAULT_OPACITY if b.flagged else 1.0 for b in bars])
        marker["line"] = {"color": [_FAULT_COLOUR if b.flagged else "white" for b in bars],
                          "width": np.array(widths)}
    return marker


def _legend_title(keys: Sequence[str]) -> str:
    if keys and keys[0].startswith("instance #"):
        return "instance"
    if set(keys) <= {"send", "compute"}:
        return "event"
    return "item"
