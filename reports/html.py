"""The HTML report of ``portsim run SCENARIO --report OUT.html``.

One self-contained file: plotly's JavaScript is inlined once, with the first
figure, so the page opens without a network.  Every text that comes from the
scenario or a planner (names, descriptions, messages, violation details) is
HTML-escaped.

The page holds, in order: a header (scenario, operation, port model, size of
the platform), the results table, a throughput chart, a makespan chart (when
some planner is one-shot), a Gantt chart per planner schedule, the platform
graph, and the violations found by the engine.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import plotly.graph_objects as go

from reports.figures import (
    GANTT_EVENT_CAP,
    gantt_figure,
    makespan_figure,
    platform_figure,
    throughput_figure,
)
from simulator.numbers import format_rational
from simulator.operations import Operation
from simulator.platform import Platform

if TYPE_CHECKING:
    from scenarios.runner import PlannerRun, ScenarioResult

__all__ = [
    "MAX_VIOLATION_ROWS",
    "ReportScenario",
    "render_run_report",
    "write_run_report",
]

MAX_VIOLATION_ROWS: Final = 500
"""At most this many violations are listed per planner (the count is always given)."""

_MAX_LISTED_NODES: Final = 30
_PLOTLY_CONFIG: Final = {"displaylogo": False, "responsive": True}


class ReportScenario(Protocol):
    """What the report reads of ``outcome.scenario``: nothing else is needed.

    :class:`scenarios.loader.Scenario` satisfies it; so does any object with
    these four attributes.
    """

    @property
    def name(self) -> str:
        """The scenario's name."""
        ...

    @property
    def description(self) -> str | None:
        """Free text (may be empty or ``None``)."""
        ...

    @property
    def platform(self) -> Platform:
        """The platform."""
        ...

    @property
    def operation(self) -> Operation:
        """The operation (resolved against the platform)."""
        ...


# ---------------------------------------------------------------------------
# the public entry points
# ---------------------------------------------------------------------------


def write_run_report(outcome: ScenarioResult, path: Path) -> None:
    """Write the self-contained HTML report of one scenario run.

    Parameters
    ----------
    outcome:
        The result of :func:`scenarios.runner.run_scenario`.  Of
        ``outcome.scenario`` only ``name``, ``description``, ``platform``
        and ``operation`` are read (:class:`ReportScenario`); of each
        :class:`~scenarios.runner.PlannerRun`, its SPEC.md fields and
        ``plan.schedule`` (for the Gantt chart).
    path:
        The HTML file to write (UTF-8); its folder must exist.

    Raises
    ------
    OSError
        When the file cannot be written.

    Notes
    -----
    The file embeds plotly.js (about 4.8 MB) once and needs no network to
    open.  Gantt charts draw at most :data:`~reports.figures.GANTT_EVENT_CAP`
    events each, and say so when they leave some out.
    """
    Path(path).write_text(render_run_report(outcome), encoding="utf-8")


def render_run_report(outcome: ScenarioResult) -> str:
    """The HTML text of :func:`write_run_report`.

    Parameters
    ----------
    outcome:
        The result of :func:`scenarios.runner.run_scenario` (see
        :func:`write_run_report` for what is read).

    Returns
    -------
    str
        A complete HTML document.
    """
    scenario: ReportScenario = outcome.scenario
    runs = tuple(outcome.results)
    embed = _FigureEmbedder()
    sections = [
        _section("results", "Results", _results_table(runs) + _notes_html(runs)),
        _section("throughput", "Throughput", embed(throughput_figure(runs))),
    ]
    if any(r.makespan is not None for r in runs):
        sections.append(_section("makespan", "Makespan", embed(makespan_figure(runs))))
    sections.append(_section("schedules", "Schedules", _schedules_html(runs, embed)))
    sections.append(_section("platform", "Platform",
                             embed(platform_figure(scenario.platform, scenario.operation))))
    sections.append(_section("violations", "Violations", _violations_html(runs)))
    return _page(scenario, sections)


# ---------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------


class _FigureEmbedder:
    """Turns figures into ``<div>``s; plotly.js goes inline with the first one only."""

    def __init__(self) -> None:
        self._js_written = False

    def __call__(self, figure: go.Figure) -> str:
        include = not self._js_written
        self._js_written = True
        return str(figure.to_html(full_html=False, include_plotlyjs=include,
                                  config=_PLOTLY_CONFIG, default_width="100%"))


def _schedules_html(runs: Sequence[PlannerRun], embed: _FigureEmbedder) -> str:
    """A Gantt chart per planner that produced a schedule."""
    parts = []
    for run in runs:
        schedule = None if run.plan is None else run.plan.schedule
        if schedule is None:
            continue
        total = len(schedule.events)
        note = ""
        if total > GANTT_EVENT_CAP:
            note = (f'<p class="warn">{total:,} events: only the first {GANTT_EVENT_CAP:,} '
                    "(earliest starts) are drawn.</p>")
        parts.append(f"<h3>{_esc(run.label)}</h3>{note}"
                     + embed(gantt_figure(schedule, title=run.label)))
    if not parts:
        return "<p>No planner produced a schedule.</p>"
    intro = ("<p>One row per port (a unidirectional node's sends and receives share one "
             "port) and per CPU; a send occupies the sender's and the receiver's port. "
             "Hover over a bar for its item, endpoints and exact times.</p>")
    return intro + "".join(parts)


# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cell:
    """One table cell: its text (escaped when rendered) and an optional CSS class."""

    text: str
    css: str = ""


def _table(columns: Sequence[str], rows: Iterable[Sequence[_Cell]], css: str) -> str:
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(
            f'<td class="{cell.css}">{_esc(cell.text)}</td>' if cell.css
            else f"<td>{_esc(cell.text)}</td>" for cell in row
        ) + "</tr>"
        for row in rows
    )
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


_RESULT_COLUMNS: Final = (
    "planner", "status", "message", "throughput bound", "period", "makespan",
    "measured throughput", "completed", "horizon", "feasible", "violations",
)


def _exact(value: Fraction | None) -> str:
    return "—" if value is None else format_rational(value)


def _time(value: Fraction | float) -> str:
    return format_rational(value) if isinstance(value, Fraction) else f"{value:.6g}"


def _result_row(run: PlannerRun) -> list[_Cell]:
    feasible = {True: _Cell("yes", "good"), False: _Cell("no", "bad"), None: _Cell("—")}
    return [
        _Cell(run.label, "name"),
        _Cell(run.status, "good" if run.status == "ok" else "warn"),
        _Cell(run.message, "message"),
        _Cell(_exact(run.throughput_bound), "num"),
        _Cell(_exact(run.period), "num"),
        _Cell(_exact(run.makespan), "num"),
        _Cell("—" if run.measured_throughput is None else f"{run.measured_throughput:.6g}",
              "num"),
        _Cell("—" if run.completed is None else str(run.completed), "num"),
        _Cell(_exact(run.horizon), "num"),
        feasible[run.feasible],
        _Cell(str(len(run.violations)), "num bad" if run.violations else "num"),
    ]


def _results_table(runs: Sequence[PlannerRun]) -> str:
    if not runs:
        return "<p>No planner was run.</p>"
    legend = ("<p class=\"hint\">Exact figures (bound, period, makespan, horizon) are exact "
              "rationals; the measured throughput (operations per time unit) and the "
              "completed count come from the engine's replay over the horizon.</p>")
    return _table(_RESULT_COLUMNS, (_result_row(r) for r in runs), "results") + legend


def _notes_html(runs: Sequence[PlannerRun]) -> str:
    items = "".join(f"<li><b>{_esc(r.label)}</b>: {_esc(note)}</li>"
                    for r in runs for note in r.notes)
    return f"<h3>Notes</h3><ul class=\"notes\">{items}</ul>" if items else ""


def _violations_html(runs: Sequence[PlannerRun]) -> str:
    """A table of violations per planner that has some."""
    parts = []
    for run in runs:
        if not run.violations:
            continue
        shown = run.violations[:MAX_VIOLATION_ROWS]
        rows = ([_Cell(_time(v.time), "num"), _Cell(v.node), _Cell(v.kind, "bad"),
                 _Cell(v.detail)] for v in shown)
        more = len(run.violations) - len(shown)
        tail = f'<p class="warn">… and {more:,} more.</p>' if more > 0 else ""
        parts.append(f"<h3>{_esc(run.label)}: {len(run.violations):,} violation(s)</h3>"
                     + _table(("time", "node", "kind", "detail"), rows, "violations") + tail)
    return "".join(parts) or "<p class=\"good\">The engine found no violation.</p>"


# ---------------------------------------------------------------------------
# page
# ---------------------------------------------------------------------------


def _esc(text: object) -> str:
    return html.escape(str(text))


@dataclass(frozen=True, slots=True)
class _Section:
    """A titled part of the page, linked from the navigation bar."""

    anchor: str
    title: str
    body: str

    def html(self) -> str:
        return f'<section id="{self.anchor}"><h2>{_esc(self.title)}</h2>{self.body}</section>'


def _section(anchor: str, title: str, body: str) -> _Section:
    return _Section(anchor, title, body)


def _nav(sections: Sequence[_Section]) -> str:
    links = " · ".join(f'<a href="#{s.anchor}">{_esc(s.title.lower())}</a>' for s in sections)
    return f"<nav>{links}</nav>"


def _listing(values: object) -> str:
    """An operation field as text: lists joined (and cut after a few dozen)."""
    if not isinstance(values, list | tuple):
        return str(values)
    shown = ", ".join(str(v) for v in values[:_MAX_LISTED_NODES])
    extra = len(values) - _MAX_LISTED_NODES
    return shown + (f", … ({len(values)} in all)" if extra > 0 else "")


def _operation_html(operation: Operation) -> str:
    fields = {key: value for key, value in operation.to_dict().items() if key != "type"}
    if "size" not in fields:
        fields["size"] = format_rational(operation.size)
    return "".join(f"<dt>{_esc(key)}</dt><dd>{_esc(_listing(value))}</dd>"
                   for key, value in fields.items())


def _platform_summary(platform: Platform) -> str:
    routers = sum(1 for n in platform.nodes if n.router)
    overrides = [f"{n.id} ({n.port_model})" for n in platform.nodes
                 if n.port_model is not None and n.port_model != platform.port_model]
    port = str(platform.port_model)
    if overrides:
        port += "; overridden on " + _listing(overrides)
    return (f"<dt>port model</dt><dd>{_esc(port)}</dd>"
            f"<dt>nodes</dt><dd>{len(platform.nodes)} ({routers} router(s))</dd>"
            f"<dt>links</dt><dd>{len(platform.links)} directed</dd>")


def _header(scenario: ReportScenario) -> str:
    description = scenario.description or ""
    operation = scenario.operation
    return (
        f"<header><h1>portsim run report: {_esc(scenario.name)}</h1>"
        + (f'<p class="description">{_esc(description)}</p>' if description else "")
        + '<dl class="facts">'
        + f"<dt>operation</dt><dd>{_esc(operation.kind)}</dd>"
        + _operation_html(operation)
        + _platform_summary(scenario.platform)
        + "</dl></header>"
    )


_CSS: Final = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       margin: 0 auto; max-width: 1400px; padding: 1rem 2rem; color: #1d2733; }
h1 { margin-bottom: .3rem; }
h2 { border-bottom: 2px solid #dde3ea; padding-bottom: .2rem; margin-top: 2.2rem; }
nav { margin: .5rem 0 1rem; } nav a { color: #2c6fbb; }
.description { font-size: 1.05rem; color: #45515e; max-width: 70rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem;
           margin: .8rem 0; }
dl.facts dt { font-weight: 600; color: #45515e; } dl.facts dd { margin: 0; }
table { border-collapse: collapse; font-size: .92rem; margin: .6rem 0; }
th, td { border: 1px solid #dde3ea; padding: .3rem .6rem; text-align: left;
         vertical-align: top; }
th { background: #f2f5f8; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-weight: 600; white-space: nowrap; } td.message { max-width: 28rem; }
.good { color: #1e7b34; } .bad { color: #b42318; font-weight: 600; }
.warn { color: #b54708; } .hint { color: #5b6673; font-size: .88rem; }
"""


def _page(scenario: ReportScenario, sections: Sequence[_Section]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>portsim: {_esc(scenario.name)}</title><style>{_CSS}</style></head>"
        f"<body>{_header(scenario)}{_nav(sections)}{''.join(s.html() for s in sections)}"
        '<footer class="hint"><p>Generated by portsim.</p></footer></body></html>\n'
    )
