"""Plotly figures of one scenario run: throughputs, makespans, Gantt charts, platform.

Each function builds one :class:`plotly.graph_objects.Figure` from plain,
typed data and touches no file; :mod:`portsim.reports.html` assembles them into a
page.  Exact rationals appear in text and hover labels as ``"2/9"``; the
plotted coordinates are floats (plotly draws floats).

Every string coming from outside (planner names, node ids, item names) is
HTML-escaped before it reaches a plotly label, since plotly renders a subset
of HTML in titles, hover boxes and bar texts.
"""

from __future__ import annotations

import heapq
import html
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Final

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from portsim.simulator.errors import PlatformError
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform, PortKind
from portsim.simulator.report import Violation
from portsim.simulator.schedule import Event, Schedule, Send

if TYPE_CHECKING:
    from portsim.scenarios.asymptotic import AsymptoticRow, AsymptoticStudy
    from portsim.scenarios.runner import PlannerRun

__all__ = [
    "CONVERGENCE_PERIODS",
    "GANTT_EVENT_CAP",
    "MODEBAR_SPACE",
    "THROUGHPUT_UNIT",
    "TIME_UNIT",
    "convergence_figure",
    "distinct_labels",
    "gantt_figure",
    "keep_series_visible",
    "makespan_figure",
    "platform_figure",
    "run_labels",
    "series_colours",
    "set_title",
    "throughput_figure",
]

GANTT_EVENT_CAP: Final = 2_000
"""At most this many schedule events are drawn in one Gantt chart (the earliest)."""

THROUGHPUT_UNIT: Final = "operations per time unit"
"""Unit of every throughput axis."""

TIME_UNIT: Final = "time units"
"""Unit of every time axis."""

CONVERGENCE_PERIODS: Final = (1, 2, 5, 10, 20, 50, 100)
"""Horizons K of the convergence figure, in periods of the ``lp`` schedule."""

MODEBAR_SPACE: Final = 36
"""Pixels kept free above every title for plotly's toolbar (the modebar), so it never
covers the title, whatever the width of the page."""

_TEMPLATE: Final = "plotly_white"
_MAX_ITEM_COLOURS: Final = 24
"""Beyond this many distinct items, Gantt bars are coloured by instance or by kind."""
_MAX_ARROWS: Final = 150
"""Platform links drawn with arrowheads (beyond this they clutter and slow the page)."""
_MAX_COST_LABELS: Final = 40
"""Platform links whose cost is written on the drawing (hover always has it)."""

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
_MEASURED_COLOUR: Final = "#1f77b4"
_BOUND_COLOUR: Final = "#ff7f0e"
_MAKESPAN_COLOUR: Final = "#2ca02c"


def _esc(text: object) -> str:
    """``text`` made safe for a plotly label (which renders a subset of HTML)."""
    return html.escape(str(text), quote=False)


def _exact(value: Fraction | None) -> str:
    return "" if value is None else format_rational(value)


_TITLE_WIDTH: Final = 90
"""Characters per title line: longer plain lines are broken (plotly does not wrap)."""
_TITLE_LINE: Final = 24
"""Pixels per line of a title (plotly's default 17 px font, with line spacing)."""
_LEGEND_ROW: Final = 34
"""Pixels of a horizontal legend placed between the title and the plot."""


def _wrapped(title: str) -> str:
    """``title`` with its long plain lines broken at spaces (lines with markup are kept).

    Examples
    --------
    >>> _wrapped("a " * 50 + "<br><sup>b</sup>").count("<br>")
    2
    """
    lines = []
    for line in title.split("<br>"):
        if len(line) > _TITLE_WIDTH and "<" not in line:
            lines.extend(textwrap.wrap(line, _TITLE_WIDTH, break_long_words=False))
        else:
            lines.append(line)
    return "<br>".join(lines)


def set_title(figure: go.Figure, title: str, *, legend_on_top: bool = False) -> go.Figure:
    """Put ``title`` at the top left, below a strip kept free for plotly's toolbar.

    Parameters
    ----------
    figure:
        The figure (changed in place).
    title:
        Its title, already escaped; ``<br>`` starts a new line.
    legend_on_top:
        Also place a horizontal legend between the title and the plot.

    Returns
    -------
    plotly.graph_objects.Figure
        ``figure``: its title starts :data:`MODEBAR_SPACE` pixels below the top
        of the figure, where the toolbar sits (at the top right, shown on
        hover), and the top margin is large enough for every title line (and
        the legend), so neither the toolbar nor the legend covers the title.
    """
    title = _wrapped(title)
    lines = title.count("<br>") + 1
    top = MODEBAR_SPACE + _TITLE_LINE * lines + (_LEGEND_ROW if legend_on_top else 14)
    figure.update_layout(
        title={"text": title, "x": 0, "xref": "container", "xanchor": "left", "y": 1,
               "yref": "container", "yanchor": "top",
               "pad": {"t": MODEBAR_SPACE, "l": 20}},
        margin_t=top,
    )
    if legend_on_top:
        figure.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02,
                                     "x": 0, "xanchor": "left"})
    return figure


# ---------------------------------------------------------------------------
# planner comparison
# ---------------------------------------------------------------------------


def distinct_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` made distinct: a label that comes back gets ``" #2"``, ``" #3"``...

    A planner's label (:attr:`portsim.scenarios.runner.PlannerRun.label`) already
    carries its options, so only a planner listed twice with the same
    options needs a number; the number never looks like an option.

    Examples
    --------
    >>> distinct_labels(["lp", "lp (split: False)", "lp", "flat"])
    ['lp', 'lp (split: False)', 'lp #2', 'flat']
    """
    seen: dict[str, int] = {}
    distinct = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        distinct.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return distinct


def run_labels(runs: Sequence[PlannerRun]) -> list[str]:
    """The one label of each planner row, as the results table, the charts and the
    convergence chart of a run report show it: :func:`distinct_labels` of the
    runs' :attr:`~portsim.scenarios.runner.PlannerRun.label`."""
    return distinct_labels([run.label for run in runs])


def _planner_labels(runs: Sequence[PlannerRun]) -> list[str]:
    """Axis labels: :func:`run_labels`, escaped for plotly."""
    return [_esc(label) for label in run_labels(runs)]


def throughput_figure(runs: Sequence[PlannerRun]) -> go.Figure:
    """Bar chart of the measured throughput of each planner, beside its exact bound.

    Parameters
    ----------
    runs:
        The planner results of one scenario, in the order to show them.  A
        planner without a measured throughput (no schedule) keeps its place on
        the axis with no bar; the bound trace appears only when at least one
        planner computes a bound.

    Returns
    -------
    plotly.graph_objects.Figure
        Grouped bars: "measured throughput" (replayed by the engine, printed
        to four significant digits) and "exact throughput bound" (printed as
        an exact rational such as ``1/2``).
    """
    names = _planner_labels(runs)
    measured = [r.measured_throughput for r in runs]
    fig = go.Figure()
    measured_text = [
        "" if r.measured_throughput_exact is None else _exact(r.measured_throughput_exact)
        for r in runs
    ]
    fig.add_trace(go.Bar(
        name="measured throughput (replay)", x=names, y=measured,
        marker_color=_MEASURED_COLOUR, text=measured_text, textposition="outside",
        customdata=measured_text,
        hovertemplate="%{x}<br>measured throughput %{customdata}<extra></extra>",
    ))
    if any(r.throughput_bound is not None for r in runs):
        bounds = [None if r.throughput_bound is None else float(r.throughput_bound)
                  for r in runs]
        labels = [_exact(r.throughput_bound) for r in runs]
        fig.add_trace(go.Bar(
            name="exact throughput bound (planner)", x=names, y=bounds,
            marker_color=_BOUND_COLOUR, text=labels, textposition="outside",
            customdata=labels,
            hovertemplate="%{x}<br>exact bound %{customdata}<extra></extra>",
        ))
    for name, run in zip(names, runs, strict=True):
        if run.measured_throughput is None:
            fig.add_annotation(x=name, y=0, yanchor="bottom", showarrow=False,
                               text=f"<i>{_no_measure_text(run.status)}</i>",
                               font={"color": "#7b8794", "size": 11})
    fig.update_layout(
        template=_TEMPLATE, barmode="group", height=440,
        xaxis_title="planner", yaxis_title=f"throughput ({THROUGHPUT_UNIT})",
    )
    set_title(fig, "Throughput by planner: measured in the replay vs. exact bound",
              legend_on_top=True)
    fig.update_yaxes(rangemode="tozero")
    return fig


def _no_measure_text(status: str) -> str:
    return "not measured" if status == "ok" else f"no schedule ({_esc(status)})"


def makespan_figure(runs: Sequence[PlannerRun]) -> go.Figure:
    """Bar chart of the makespans of the one-shot planners.

    Parameters
    ----------
    runs:
        The planner results of one scenario; only those with a ``makespan``
        (one-shot schedules the engine saw complete) are drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per one-shot planner, labelled with the exact makespan.
    """
    names = [n for n, r in zip(_planner_labels(runs), runs, strict=True)
             if r.makespan is not None]
    shown = [r for r in runs if r.makespan is not None]
    labels = [_exact(r.makespan) for r in shown]
    fig = go.Figure(go.Bar(
        name="makespan (replay)", x=names,
        y=[float(r.makespan) for r in shown if r.makespan is not None],
        marker_color=_MAKESPAN_COLOUR, text=labels, textposition="outside",
        customdata=labels, showlegend=True,
        hovertemplate="%{x}<br>makespan %{customdata}<extra></extra>",
    ))
    fig.update_layout(
        template=_TEMPLATE, height=400, bargap=max(0.2, 0.8 - 0.15 * len(names)),
        xaxis_title="planner", yaxis_title=f"makespan ({TIME_UNIT})",
    )
    set_title(fig, "Makespan of one operation, one-shot planners (lower is better)",
              legend_on_top=True)
    fig.update_yaxes(rangemode="tozero")
    return fig


# ---------------------------------------------------------------------------
# Gantt chart of a schedule
# ---------------------------------------------------------------------------


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
    peer: str = ""
    """The other end of a send, for a port row (``"→ B"`` or ``"← A"``); empty for a CPU."""


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


def _event_bars(schedule: Schedule, event: Event, colour_key: str,
                faults: Sequence[str] = ()) -> list[_Bar]:
    """The bars of one event: sender and receiver ports of a send, the CPU of a compute.

    ``faults`` are the kinds of the violations the event takes part in.
    """
    lines: list[str] = []
    if isinstance(event, Send):
        found = _send_duration(schedule, event)
        duration = found if found is not None else (event.duration or Fraction(0))
        label = str(event.item)
        lines.append(f"<b>{_esc(label)}</b>")
        lines.append(f"send {_esc(event.src)} → {_esc(event.dst)}")
        if event.part != 1:
            lines.append(f"part {format_rational(event.part)}")
        if found is None:
            lines.append("no such link!")
    else:
        duration = schedule.platform.compute_time(event.node)
        label = str(event.output)
        lines.append(f"<b>{_esc(label)}</b>")
        inputs = " ⊕ ".join(_esc(x) for x in event.inputs)
        lines.append(f"compute on {_esc(event.node)}: {inputs}")
    lines.append(f"start {format_rational(event.start)}, "
                 f"end {format_rational(event.start + duration)}")
    lines.append(f"duration {format_rational(duration)}")
    if event.lag:
        lines.append(f"lag {event.lag} period(s)")
    if faults:
        lines.append(f"<b>violation: {_esc(', '.join(dict.fromkeys(faults)))}</b>")
    hover = "<br>".join(lines)
    if isinstance(event, Send):
        send_row, _ = _port_rows(schedule.platform, event.src)
        _, receive_row = _port_rows(schedule.platform, event.dst)
        rows = [send_row, receive_row]
        peers = [f"→ {event.dst}", f"← {event.src}"]
    else:
        rows = [f"{event.node} CPU"]
        peers = [""]
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


def _lane_assignment(spans: Sequence[tuple[int, int]], peers: Sequence[str]
                     ) -> tuple[list[int], int]:
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
    last_peer: dict[int, str] = {}
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


def _lane_name(platform: Platform, node: NodeId, row: str, lane: int,
               peers: Sequence[str]) -> str:
    """The row of one lane of a multiport node's port row: which port, or which links."""
    k = platform.port_model_of(node).k
    side = row[len(str(node)) + 1:].split()[0]  # "send" or "receive" (multiport has both)
    if k is not None:
        over = f" (over k={k}!)" if lane > k else ""
        return f"{node} {side} port {lane} of {k}{over}"
    shown = ", ".join(p.split(" ", 1)[1] for p in peers[:_MAX_LANE_PEERS])
    more = f" +{len(peers) - _MAX_LANE_PEERS}" if len(peers) > _MAX_LANE_PEERS else ""
    arrow = peers[0].split(" ", 1)[0] if peers else ""
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
    multiport = {row: node for node in platform.node_ids
                 if platform.port_model_of(node).kind is PortKind.MULTIPORT
                 for row in _port_rows(platform, node)}
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
        peers: list[dict[str, None]] = [{} for _ in range(count)]
        for index, lane in zip(indexes, lanes, strict=True):
            peers[lane][bars[index].peer] = None
        names = [_lane_name(platform, multiport[row], row, lane + 1, list(peers[lane]))
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


def _palette(count: int) -> list[str]:
    base = list(qualitative.Plotly)
    return base if count <= len(base) else list(qualitative.Dark24)


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
                 cut: Fraction | None = None) -> str:
    total = len(schedule.events)
    if schedule.period is not None:
        what = (f"one period of the periodic schedule (T = {format_rational(schedule.period)}, "
                f"{schedule.instances_per_period} instance(s) per period)")
    else:
        what = "one-shot schedule"
    head = f"{_esc(title)}: {what}" if title else what.capitalize()
    if shown < total:
        # Say up to when the drawing is whole: the rest of the time axis is not idle.
        until = "" if cut is None else f": every event starting before {format_rational(cut)}"
        head += f"<br><span style='color:#c0392b'>showing the first {shown:,} of {total:,} " \
                f"events (earliest starts{until})</span>"
    return head


def gantt_figure(
    schedule: Schedule,
    *,
    title: str | None = None,
    max_events: int = GANTT_EVENT_CAP,
    violations: Sequence[Violation] = (),
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
        Draw at most this many events, the earliest; the title says when
        some were left out.
    violations:
        The violations the engine found in ``schedule`` (a
        :class:`~portsim.simulator.report.Report`'s): the bars of the events
        they name are outlined in red and drawn see-through, so that bars
        which overlap on a port stay visible; their hover text names the
        violations, and the title counts them.

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
        text gives the item, ``src → dst``, start and end as exact rationals.
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
    order = sorted(range(len(schedule.events)), key=lambda i: (schedule.events[i].start, i))
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
        fig.add_trace(go.Bar(
            name=_esc(key), legendgroup=_esc(key), orientation="h",
            y=[b.row for b in group], base=[float(b.start) for b in group],
            x=[float(b.duration) for b in group],
            marker=_bar_marker(colour, group, thin),
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
    head = _gantt_title(schedule, title, len(events), cut)
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
    fig.update_xaxes(title_text=f"time ({TIME_UNIT})", rangemode="tozero", zeroline=True)
    if schedule.period is not None:
        fig.add_vline(x=float(schedule.period), line_dash="dash", line_color="#555",
                      annotation_text=f"period T = {format_rational(schedule.period)}",
                      annotation_position="top right")
    return fig


def _bar_marker(colour: str, bars: Sequence[_Bar], thin: Fraction) -> dict[str, object]:
    """The marker of one item's bars: white outlines, red and see-through where flagged.

    A value per bar only where the bars differ: plotly checks every colour of
    an array one by one (3x the time of the whole chart at 20,000 events).
    """
    widths = [3 if b.flagged else 0 if b.duration < thin else 1 for b in bars]
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


# ---------------------------------------------------------------------------
# the platform graph
# ---------------------------------------------------------------------------


_ROLE_STYLE: Final[dict[str, tuple[str, str]]] = {
    "source": ("#d62728", "circle"),
    "target": ("#2ca02c", "circle"),
    "participant": ("#1f77b4", "circle"),
    "other processor": ("#b0b0b0", "circle"),
    "router": ("#7f7f7f", "square"),
}
"""Marker colour and symbol of each node role."""


def _node_role(platform: Platform, operation: Operation | None, node: NodeId) -> str:
    """What ``node`` is in the operation: source, target, participant, router or other."""
    if platform.node(node).router:
        return "router"
    if operation is None:
        return "other processor"
    if node == operation.source or node in operation.sources:
        return "source"
    if node == operation.target or node in operation.targets:
        return "target"
    if node in operation.participants:
        return "participant"
    return "other processor"


def _layout(platform: Platform) -> dict[NodeId, tuple[float, float]]:
    """Node positions: Kamada–Kawai for small connected graphs, else a seeded spring layout."""
    graph = platform.graph.to_undirected()
    if len(graph) == 0:
        return {}
    if len(graph) <= 60 and nx.is_connected(graph):
        pos = nx.kamada_kawai_layout(graph)
    else:
        pos = nx.spring_layout(graph, seed=0)
    return {node: (float(x), float(y)) for node, (x, y) in pos.items()}


def _link_pairs(platform: Platform) -> dict[tuple[NodeId, NodeId], list[tuple[NodeId, NodeId]]]:
    """The directed links grouped by unordered node pair (a pair drawn once)."""
    pairs: dict[tuple[NodeId, NodeId], list[tuple[NodeId, NodeId]]] = {}
    for link in platform.links:
        key = (link.src, link.dst) if link.src <= link.dst else (link.dst, link.src)
        pairs.setdefault(key, []).append((link.src, link.dst))
    return pairs


_COST_AT: Final = Fraction(2, 5)
"""A link's cost is written this far along the link from its sender (40%): the two
directions of a pair at 40% and 60%, and two links that cross at their middles
(the diagonals of a square) keep their numbers apart."""


def _cost_labels(platform: Platform, a: NodeId, b: NodeId,
                 directed: Sequence[tuple[NodeId, NodeId]]) -> list[tuple[NodeId, NodeId, str]]:
    """The cost labels of one linked pair: ``(from, to, text)``, written near ``from``.

    One label per direction, near its sender, when the two directions differ
    in cost; one label (the common cost, near ``a``) when they are equal.
    """
    costs = {(s, d): platform.cost(s, d) for s, d in directed}
    if len(set(costs.values())) == 1:
        return [(a, b, format_rational(next(iter(costs.values()))))]
    return [(s, d, format_rational(c)) for (s, d), c in costs.items()]


def _edge_traces(platform: Platform, pos: dict[NodeId, tuple[float, float]]) -> list[go.Scatter]:
    """The links: grey lines, and markers along them carrying the costs.

    The cost of a direction is written at :data:`_COST_AT` of the way from its
    sender (:func:`_cost_labels`), so that labels of crossing links and of
    the two directions of a pair do not fall on one point.
    """
    pairs = _link_pairs(platform)
    xs: list[float | None] = []
    ys: list[float | None] = []
    at_x, at_y, texts, hovers = [], [], [], []
    written = len(pairs) <= _MAX_COST_LABELS
    for (a, b), directed in pairs.items():
        (xa, ya), (xb, yb) = pos[a], pos[b]
        xs += [xa, xb, None]
        ys += [ya, yb, None]
        hover = "<br>".join(
            f"{_esc(s)} → {_esc(d)}: c = {format_rational(platform.cost(s, d))}"
            for s, d in directed)
        for src, dst, text in _cost_labels(platform, a, b, directed):
            (x0, y0), (x1, y1) = pos[src], pos[dst]
            at = float(_COST_AT)
            at_x.append(x0 + at * (x1 - x0))
            at_y.append(y0 + at * (y1 - y0))
            texts.append(text if written else "")
            hovers.append(hover)
    lines = go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#9aa5b1", "width": 1.5},
                       hoverinfo="skip", name="link", showlegend=False)
    costs = go.Scatter(
        x=at_x, y=at_y, mode="markers+text", text=texts, textposition="middle center",
        textfont={"size": 11, "color": "#1d2733"},
        marker={"size": 16, "color": "white", "opacity": 0},  # invisible, but hoverable
        hovertext=hovers, hovertemplate="%{hovertext}<extra>link cost</extra>",
        name="link cost c", showlegend=False,
    )
    return [lines, costs]


_LABEL_PLACES: Final = (
    ("top center", 90), ("top right", 45), ("middle right", 0), ("bottom right", -45),
    ("bottom center", -90), ("bottom left", -135), ("middle left", 180), ("top left", 135))
"""Where plotly can write a node's name around its marker, and the direction (degrees)."""
_PLATFORM_PLOT: Final = (1100, 420)
"""Pixels of the platform drawing's plot area (width, height) on the report's page:
angles between links and labels are measured on screen, not in layout units."""


def _angle_gap(a: float, b: float) -> float:
    """The angle between two directions, in degrees, from 0 to 180."""
    return abs((a - b + 180) % 360 - 180)


def _label_places(platform: Platform, pos: dict[NodeId, tuple[float, float]]) -> dict[NodeId, str]:
    """Where to write each node's name: the side farthest from its links (in angle).

    Of the eight places around the marker, the one whose direction is the
    farthest from the direction of every link at the node (on screen); ties
    go to the first of :data:`_LABEL_PLACES` (above the node, plotly's usual).
    Labels then stay clear of the links and of their arrowheads.
    """
    if not pos:
        return {}
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    sx = _PLATFORM_PLOT[0] / ((max(xs) - min(xs)) or 1.0)
    sy = _PLATFORM_PLOT[1] / ((max(ys) - min(ys)) or 1.0)
    around: dict[NodeId, set[NodeId]] = {n: set() for n in pos}
    for a, b in _link_pairs(platform):
        around[a].add(b)
        around[b].add(a)
    places: dict[NodeId, str] = {}
    for node, (x, y) in pos.items():
        angles = [math.degrees(math.atan2((pos[o][1] - y) * sy, (pos[o][0] - x) * sx))
                  for o in around[node] if pos[o] != (x, y)]
        places[node] = max(_LABEL_PLACES, key=lambda place: min(
            (_angle_gap(place[1], angle) for angle in angles), default=180.0))[0]
    return places


def _marker_size(platform: Platform) -> int:
    """Node marker diameter in pixels: large on small platforms, smaller on big ones."""
    return max(10, min(24, 24 - (len(platform.nodes) - 12) // 3))


def _arrows(platform: Platform, pos: dict[NodeId, tuple[float, float]]) -> list[dict[str, object]]:
    """Arrowheads showing each link's direction (both ends when both directions exist)."""
    pairs = _link_pairs(platform)
    if len(pairs) > _MAX_ARROWS:
        return []
    standoff = _marker_size(platform) // 2 + 2
    arrows: list[dict[str, object]] = []
    for directed in pairs.values():
        both = len(directed) == 2
        src, dst = directed[0]
        (xs, ys), (xd, yd) = pos[src], pos[dst]
        arrows.append({
            "x": xd, "y": yd, "ax": xs, "ay": ys, "xref": "x", "yref": "y",
            "axref": "x", "ayref": "y", "text": "", "showarrow": True,
            "arrowhead": 2, "arrowsize": 1.3, "arrowwidth": 1.5, "arrowcolor": "#6c7a89",
            "arrowside": "end+start" if both else "end", "standoff": standoff,
            "startstandoff": standoff,
        })
    return arrows


def _node_traces(
    platform: Platform, operation: Operation | None, pos: dict[NodeId, tuple[float, float]]
) -> list[go.Scatter]:
    """One marker trace per node role (so the legend explains the colours)."""
    places = _label_places(platform, pos)
    by_role: dict[str, list[NodeId]] = {}
    for node in platform.node_ids:
        by_role.setdefault(_node_role(platform, operation, node), []).append(node)
    traces = []
    for role, (colour, symbol) in _ROLE_STYLE.items():
        nodes = by_role.get(role, [])
        if not nodes:
            continue
        hovers = [
            f"<b>{_esc(n)}</b> ({role})<br>compute time {format_rational(platform.compute_time(n))}"
            f"<br>port model {platform.port_model_of(n)}" for n in nodes
        ]
        traces.append(go.Scatter(
            x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes],
            mode="markers+text", text=[_esc(n) for n in nodes],
            textposition=[places[n] for n in nodes],
            textfont={"size": 13},
            marker={"size": _marker_size(platform), "color": colour, "symbol": symbol,
                    "line": {"color": "white", "width": 2}},
            name=role, hovertext=hovers, hovertemplate="%{hovertext}<extra></extra>",
        ))
    return traces


def _link_legend(pairs: int) -> str:
    """How to read the links: the subtitle says which marks were left out, and why."""
    if pairs <= _MAX_COST_LABELS:
        return ("number on a link: its cost c, the time to send a unit-size message "
                "(written nearer the sender when the two directions differ)")
    legend = (f"link costs not written ({pairs} linked pairs of nodes, more than "
              f"{_MAX_COST_LABELS}): hover a link two fifths of the way from its "
              "sender for its cost c")
    if pairs > _MAX_ARROWS:
        legend += f"; no arrowheads (more than {_MAX_ARROWS} linked pairs)"
    return legend


def platform_figure(platform: Platform, operation: Operation | None = None) -> go.Figure:
    """Drawing of the platform graph.

    Parameters
    ----------
    platform:
        The platform.
    operation:
        The operation, if any: nodes are coloured by their role in it
        (source, target, participant, other); routers are grey squares.

    Returns
    -------
    plotly.graph_objects.Figure
        Nodes placed by Kamada–Kawai (small connected platforms) or a spring
        layout seeded with 0, so the drawing is reproducible.  Each link is a
        line with its cost ``c`` written 40% of the way from its sender (one
        number per direction when the two directions differ, at 40% and 60%;
        hover gives every direction's cost), and arrowheads give its
        direction(s).  A node's name is written on the side of its marker
        farthest from its links.  Beyond 40
        linked pairs of nodes the costs are not written, beyond 150 there are
        no arrowheads; the subtitle says so.
    """
    pos = _layout(platform)
    fig = go.Figure([*_edge_traces(platform, pos), *_node_traces(platform, operation, pos)])
    routers = len(platform.routers)
    fig.update_layout(
        template=_TEMPLATE, height=600 if len(platform.nodes) <= 30 else 800,
        annotations=_arrows(platform, pos), hovermode="closest",
        legend={"title": {"text": "node role"}},
    )
    set_title(fig, f"Platform: {len(platform.nodes)} nodes ({routers} router(s)), "
                   f"{len(platform.links)} directed links, port model {platform.port_model}"
                   f"<br><sup>{_link_legend(len(_link_pairs(platform)))}</sup>")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


# ---------------------------------------------------------------------------
# line charts whose series may coincide
# ---------------------------------------------------------------------------


_DASHES: Final = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS: Final = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross",
                   "x", "star", "pentagon", "hexagon")
_MARKER_SIZE: Final = 7
_LINE_WIDTH: Final = 2.0
_NOTE_LINE: Final = 17
"""Pixels per line of the notes written under a chart."""
_BELOW_AXIS: Final = 64
"""Pixels between the bottom of the plot area and the notes (tick labels, axis title)."""


def keep_series_visible(figure: go.Figure, colours: Mapping[str, str] | None = None,
                        *, notes: Sequence[str] = ()) -> list[str]:
    """Style the line series of ``figure`` so that none hides another.

    Every :class:`~plotly.graph_objects.Scatter` trace gets its own dash
    style and marker symbol (cycled in trace order).  Series with identical
    points (same ``x`` and ``y``) are drawn as nested rings: the first drawn
    has the largest markers and the widest line, each later one is smaller,
    so every one of them shows (unless the figure already sets them side by
    side, ``scattermode="group"``); and a note under the chart says
    ``"<later>: identical to <first>"``.

    Parameters
    ----------
    figure:
        The figure, changed in place.
    colours:
        A colour per trace name, for the same colour of a planner across
        several charts; traces not named keep plotly's colours.
    notes:
        More lines to write under the chart (after the identity notes).

    Returns
    -------
    list of str
        The identity notes (also written on the figure).
    """
    traces = [t for t in figure.data if isinstance(t, go.Scatter)]
    groups: dict[tuple[tuple[object, ...], tuple[object, ...]], list[int]] = {}
    for index, trace in enumerate(traces):
        key = (tuple(trace.x or ()), tuple(trace.y or ()))
        groups.setdefault(key, []).append(index)
    identical: list[str] = []
    side_by_side = figure.layout.scattermode == "group"  # already apart on the x axis
    for members in groups.values():
        for rank, index in enumerate(members):
            trace = traces[index]
            larger = 0 if side_by_side else min(len(members) - 1 - rank, 3)
            trace.update(
                line={"dash": _DASHES[index % len(_DASHES)],
                      "width": _LINE_WIDTH + 1.5 * larger},
                marker={"symbol": _SYMBOLS[index % len(_SYMBOLS)],
                        "size": _MARKER_SIZE + 5 * larger,
                        "line": {"width": 1, "color": "white"}},
            )
            if colours is not None and trace.name in colours:
                trace.update(line_color=colours[trace.name],
                             marker_color=colours[trace.name])
            if rank:
                identical.append(f"{trace.name}: identical to {traces[members[0]].name}")
    lines = [*identical, *notes]
    if lines:
        figure.add_annotation(
            text="<br>".join(lines), x=0, xref="paper", xanchor="left", y=0, yref="paper",
            yanchor="top", yshift=-_BELOW_AXIS, showarrow=False, align="left",
            font={"size": 12, "color": "#45515e"})
        bottom = _BELOW_AXIS + 12 + _NOTE_LINE * len(lines)
        figure.update_layout(margin_b=bottom,
                             height=(figure.layout.height or 460) + _NOTE_LINE * len(lines))
    return identical


def series_colours(labels: Sequence[str]) -> dict[str, str]:
    """A colour per label, from plotly's qualitative palettes, in the order given."""
    palette = _palette(len(labels))
    return {label: palette[i % len(palette)] for i, label in enumerate(labels)}


def convergence_figure(study: AsymptoticStudy, labels: Sequence[str] = (), *,
                       subtitle: str = "", colours: Mapping[str, str] | None = None,
                       notes: Sequence[str] = ()) -> go.Figure | None:
    """completed(K) / (TP · K) over the horizon K, one line per planner.

    Lemma 1 of Legrand, Marchal and Robert (RR-4872): no schedule completes
    more than ``TP · K`` operations by time K, so every line stays under 1;
    the ``lp`` schedule's tends to 1 (Proposition 1).

    Parameters
    ----------
    study:
        From :func:`portsim.scenarios.asymptotic.asymptotic_study`, whose rows come
        planner by planner, in the order of the scenario's planners (then
        ``lp`` when the scenario does not list it).
    labels:
        The label of each of the scenario's planners, in that order (a
        planner's name with its options, as the results table has it); a
        planner past the end of ``labels`` is named by its name.
    subtitle:
        A second title line (which run).
    colours:
        A colour per label (see :func:`keep_series_visible`).
    notes:
        More lines to write under the chart (plain text, escaped here).

    Returns
    -------
    plotly.graph_objects.Figure or None
        ``None`` when the study has no ``lp`` bound (``study.problems``
        says why).  A planner without a replay (no schedule) is named in a
        note under the chart; series that coincide stay visible
        (:func:`keep_series_visible`).
    """
    if study.bound is None or study.period is None:
        return None
    blocks: list[list[AsymptoticRow]] = []
    for row in study.rows:
        if (not blocks or row.planner != blocks[-1][-1].planner
                or row.periods <= blocks[-1][-1].periods):
            blocks.append([])
        blocks[-1].append(row)
    names = distinct_labels([labels[i] if i < len(labels) else block[0].planner
                             for i, block in enumerate(blocks)])
    figure = go.Figure()
    missing: list[str] = []
    for name, block in zip(names, blocks, strict=True):
        rows = [r for r in block if r.ratio is not None]
        if not rows:
            missing.append(f"{_esc(name)}: not drawn ({_esc(block[0].note or 'no replay')})")
            continue
        figure.add_trace(go.Scatter(
            x=[float(r.horizon) for r in rows], y=[float(r.ratio or 0) for r in rows],
            name=_esc(name), mode="lines+markers",
            # the exact K and ratio: plotly would write the float coordinates (2.4, 0.6667)
            customdata=[[r.completed, format_rational(r.bound_times_horizon), r.periods,
                         format_rational(r.horizon), format_rational(r.ratio or 0)]
                        for r in rows],
            hovertemplate=(f"{_esc(name)}<br>K=%{{customdata[3]}} (%{{customdata[2]}} lp "
                           "period(s))<br>ratio=%{customdata[4]} (%{y:.4f})<br>"
                           "completed=%{customdata[0]}<br>"
                           "TP·K=%{customdata[1]}<extra></extra>")))
    figure.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="TP·K")
    figure.update_layout(
        template=_TEMPLATE, height=480, legend_title="planner",
        xaxis={"title": f"horizon K ({TIME_UNIT}, log scale)", "type": "log"},
        yaxis_title="completed(K) / (TP·K)", margin={"l": 70, "r": 20, "b": 60})
    title = (f"completed(K) / (TP·K) over horizon K, TP = {format_rational(study.bound)}, "
             f"lp period {format_rational(study.period)}")
    set_title(figure, title + (f"<br><sup>{_esc(subtitle)}</sup>" if subtitle else ""))
    keep_series_visible(figure, {_esc(k): v for k, v in (colours or {}).items()},
                        notes=[*missing, *(_esc(n) for n in notes)])
    return figure
