"""Plotly figures of one scenario run: throughputs, makespans, platform, convergence.

Each function builds one :class:`plotly.graph_objects.Figure` from plain,
typed data and touches no file; :mod:`portsim.reports.html` assembles them into a
page.  Exact rationals appear in text and hover labels as ``"2/9"``; the
plotted coordinates are floats (plotly draws floats).  The Gantt chart of a
schedule lives in :mod:`portsim.reports.gantt`; :func:`gantt_figure` and
:data:`GANTT_EVENT_CAP` are importable from here too, as are the shared
:func:`set_title`, :data:`TIME_UNIT` and :data:`MODEBAR_SPACE`.

Every string coming from outside (planner names, node ids, item names) is
HTML-escaped before it reaches a plotly label, since plotly renders a subset
of HTML in titles, hover boxes and bar texts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Final

import networkx as nx
import plotly.graph_objects as go

from portsim.reports._style import MODEBAR_SPACE, TIME_UNIT, readable_rational, set_title
from portsim.reports._style import TEMPLATE as _TEMPLATE
from portsim.reports._style import escape_label as _esc
from portsim.reports._style import palette as _palette
from portsim.reports.gantt import GANTT_EVENT_CAP, gantt_figure
from portsim.simulator.errors import PlatformError, ScenarioError
from portsim.simulator.numbers import format_rational, short
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

if TYPE_CHECKING:
    from portsim.scenarios.asymptotic import AsymptoticRow, AsymptoticStudy
    from portsim.scenarios.runner import PlannerRun, ScenarioResult

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
    "planner_runs",
    "platform_figure",
    "run_labels",
    "series_colours",
    "set_title",
    "throughput_figure",
]

THROUGHPUT_UNIT: Final = "operations per time unit"
"""Unit of every throughput axis."""

CONVERGENCE_PERIODS: Final = (1, 2, 5, 10, 20, 50, 100)
"""Horizons K of the convergence figure, in periods of the ``lp`` schedule."""

_MAX_ARROWS: Final = 150
"""Platform links drawn with arrowheads (beyond this they clutter and slow the page)."""
_MAX_COST_LABELS: Final = 40
"""Platform links whose cost is written on the drawing (hover always has it)."""

_MEASURED_COLOUR: Final = "#1f77b4"
_BOUND_COLOUR: Final = "#ff7f0e"
_MAKESPAN_COLOUR: Final = "#2ca02c"


def _exact(value: Fraction | None) -> str:
    return "" if value is None else format_rational(value)


def _label(value: Fraction | None) -> str:
    """A bar's label: the exact value, or its decimal one when the fraction is long
    (plotly shrinks a label of 70 characters to an unreadable size); the hover keeps
    the exact value."""
    return "" if value is None else short(value)


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


def planner_runs(runs: object) -> tuple[PlannerRun, ...]:
    """The planner rows the figures take: a ``run_scenario`` result's ``results``,
    or the result itself.

    Raises
    ------
    ScenarioError
        Naming what was given instead of a :class:`~portsim.scenarios.runner.PlannerRun`
        (a planner's ``PlanResult`` has no replay: run it with ``run_scenario``).
    """
    from portsim.scenarios.runner import PlannerRun, ScenarioResult

    if isinstance(runs, ScenarioResult):
        return runs.results
    if isinstance(runs, str | bytes | Mapping) or not isinstance(runs, Iterable):
        raise ScenarioError("expected the planner runs of run_scenario (its result or "
                            "its .results)", path="runs", value=type(runs).__name__)
    given = tuple(runs)
    for i, run in enumerate(given):
        if not isinstance(run, PlannerRun):
            hint = (": a PlanResult has no replay, run the planner with run_scenario"
                    if hasattr(run, "schedule") and hasattr(run, "status") else "")
            raise ScenarioError(f"expected a PlannerRun of run_scenario{hint}",
                                path=f"runs[{i}]", value=type(run).__name__)
    return given


def run_labels(runs: Sequence[PlannerRun]) -> list[str]:
    """The one label of each planner row, as the results table, the charts and the
    convergence chart of a run report show it: :func:`distinct_labels` of the
    runs' :attr:`~portsim.scenarios.runner.PlannerRun.label`."""
    return distinct_labels([run.label for run in planner_runs(runs)])


def _planner_labels(runs: Sequence[PlannerRun]) -> list[str]:
    """Axis labels: :func:`run_labels`, escaped for plotly."""
    return [_esc(label) for label in run_labels(runs)]


def throughput_figure(runs: Sequence[PlannerRun] | ScenarioResult) -> go.Figure:
    """Bar chart of the measured throughput of each planner, beside its exact bound.

    Parameters
    ----------
    runs:
        The planner results of one scenario, in the order to show them
        (``run_scenario``'s result or its ``results``).  A
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
    runs = planner_runs(runs)
    names = _planner_labels(runs)
    measured = [r.measured_throughput for r in runs]
    fig = go.Figure()
    measured_text = [_exact(r.measured_throughput_exact) for r in runs]
    fig.add_trace(go.Bar(
        name="measured throughput (replay)", x=names, y=measured,
        marker_color=_MEASURED_COLOUR,
        text=[_label(r.measured_throughput_exact) for r in runs], textposition="outside",
        customdata=measured_text,
        hovertemplate="%{x}<br>measured throughput %{customdata}<extra></extra>",
    ))
    if any(r.throughput_bound is not None for r in runs):
        bounds = [None if r.throughput_bound is None else float(r.throughput_bound)
                  for r in runs]
        labels = [_exact(r.throughput_bound) for r in runs]
        fig.add_trace(go.Bar(
            name="exact throughput bound (planner)", x=names, y=bounds,
            marker_color=_BOUND_COLOUR, text=[_label(r.throughput_bound) for r in runs],
            textposition="outside", customdata=labels,
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


def makespan_figure(runs: Sequence[PlannerRun] | ScenarioResult) -> go.Figure:
    """Bar chart of the makespans of the one-shot planners.

    Parameters
    ----------
    runs:
        The planner results of one scenario (``run_scenario``'s result or its
        ``results``); only those with a ``makespan``
        (one-shot schedules the engine saw complete) are drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per one-shot planner, labelled with the exact makespan.
    """
    runs = planner_runs(runs)
    names = [n for n, r in zip(_planner_labels(runs), runs, strict=True)
             if r.makespan is not None]
    shown = [r for r in runs if r.makespan is not None]
    labels = [_exact(r.makespan) for r in shown]
    fig = go.Figure(go.Bar(
        name="makespan (replay)", x=names,
        y=[float(r.makespan) for r in shown if r.makespan is not None],
        marker_color=_MAKESPAN_COLOUR, text=[_label(r.makespan) for r in shown],
        textposition="outside", customdata=labels, showlegend=True,
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
    if not isinstance(platform, Platform):
        raise PlatformError("expected a Platform (a Scenario's is its .platform)",
                            path="platform", value=type(platform).__name__)
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
    title = (f"completed(K) / (TP·K) over horizon K, TP = {readable_rational(study.bound)}, "
             f"lp period {readable_rational(study.period)}")
    set_title(figure, title + (f"<br><sup>{_esc(subtitle)}</sup>" if subtitle else ""))
    keep_series_visible(figure, {_esc(k): v for k, v in (colours or {}).items()},
                        notes=[*missing, *(_esc(n) for n in notes)])
    return figure
