"""The HTML report of ``portsim run SCENARIO --report OUT.html``.

One self-contained file: plotly's JavaScript is inlined once, with the first
figure, so the page opens without a network.  Every text that comes from the
scenario or a planner (names, descriptions, messages, violation details) is
HTML-escaped.

The page holds, in order: a header (scenario, operation, port model, size of
the platform), the results table, a throughput chart, a makespan chart (when
some planner is one-shot), the convergence chart completed(K) / (TP · K) over
the horizon K (when the ``lp`` planner gives a bound), a Gantt chart per
planner schedule, the platform graph, and the violations found by the engine.
A planner row has one label everywhere, its name with its options
(:func:`portsim.reports.figures.run_labels`).

:class:`FigureEmbedder`, :class:`Cell`, :func:`html_table` and
:data:`PAGE_CSS` are the building blocks the study report
(:mod:`portsim.reports.studies.report`) shares.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import plotly.graph_objects as go

from portsim.reports._style import EXACT_TEXT_CHARS
from portsim.reports.figures import (
    CONVERGENCE_PERIODS,
    THROUGHPUT_UNIT,
    convergence_figure,
    makespan_figure,
    platform_figure,
    run_labels,
    throughput_figure,
)
from portsim.reports.gantt import GanttWindow, gantt_figure, gantt_note
from portsim.scenarios.output import write_text
from portsim.simulator.engine import replay
from portsim.simulator.errors import ScenarioError
from portsim.simulator.numbers import format_rational, short
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

if TYPE_CHECKING:
    from portsim.planners.base import PlanResult
    from portsim.scenarios.asymptotic import AsymptoticStudy
    from portsim.scenarios.loader import Scenario
    from portsim.scenarios.runner import PlannerRun, ScenarioResult

__all__ = [
    "CONVERGENCE_OPERATIONS",
    "MAX_VIOLATION_ROWS",
    "PAGE_CSS",
    "Cell",
    "FigureEmbedder",
    "ReportScenario",
    "convergence_study",
    "html_table",
    "render_run_report",
    "write_run_report",
]

MAX_VIOLATION_ROWS: Final = 500
"""At most this many violations are listed per planner (the count is always given)."""

CONVERGENCE_OPERATIONS: Final = 5_000
"""The convergence charts replay horizons K of at most this many operations (TP · K).

Replaying costs time in proportion to the operations completed (about a
millisecond each); a platform whose ``lp`` period holds thousands of
operations gets only its first horizons, and the chart says so (``portsim
run SCENARIO --asymptotic`` replays the long ones)."""

_MAX_LISTED_NODES: Final = 30
_PLOTLY_CONFIG: Final = {"displaylogo": False, "responsive": True}


class ReportScenario(Protocol):
    """What the report reads of ``outcome.scenario``: nothing else is needed.

    :class:`portsim.scenarios.loader.Scenario` satisfies it; so does any object with
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


def write_run_report(outcome: ScenarioResult, path: Path, *,
                     progress: Callable[[str], None] | None = None,
                     gantt_window: GanttWindow | None = None,
                     lp_time_limit: float | None = None) -> None:
    """Write the self-contained HTML report of one scenario run.

    Parameters
    ----------
    outcome:
        The result of :func:`portsim.scenarios.runner.run_scenario`.  Of
        ``outcome.scenario`` only ``name``, ``description``, ``platform``
        and ``operation`` are read (:class:`ReportScenario`); of each
        :class:`~portsim.scenarios.runner.PlannerRun`, its SPEC.md fields and
        ``plan.schedule`` (for the Gantt chart).
    path:
        The HTML file to write (UTF-8); its folder must exist.
    progress:
        Told each long step of the convergence chart before it starts (the
        ``lp`` bound when the run has none, each replay), as
        :func:`portsim.scenarios.asymptotic.asymptotic_study` tells it.
    gantt_window:
        Draw only this part of the time axis in every Gantt chart
        (``portsim run ... --gantt-window START:END``).
    lp_time_limit:
        Seconds the convergence chart's ``lp`` may take when the run has no
        ``lp`` result to reuse (``None``: the ``lp``'s default
        ``time_limit``; ``portsim run ... --lp-time-limit``).

    Raises
    ------
    OSError
        When the file cannot be written.
    ScenarioError
        As :func:`render_run_report`.

    Notes
    -----
    The file embeds plotly.js (about 4.8 MB) once and needs no network to
    open.  Gantt charts draw at most :data:`~portsim.reports.gantt.GANTT_EVENT_CAP`
    events each (of the window, with ``gantt_window``), and say so when they
    leave some out.
    """
    write_text(path, render_run_report(outcome, progress=progress, gantt_window=gantt_window,
                                       lp_time_limit=lp_time_limit))


def render_run_report(outcome: ScenarioResult, *,
                      progress: Callable[[str], None] | None = None,
                      gantt_window: GanttWindow | None = None,
                      lp_time_limit: float | None = None) -> str:
    """The HTML text of :func:`write_run_report`.

    Parameters
    ----------
    outcome:
        The result of :func:`portsim.scenarios.runner.run_scenario` (see
        :func:`write_run_report` for what is read).
    progress, gantt_window, lp_time_limit:
        As for :func:`write_run_report`.

    Returns
    -------
    str
        A complete HTML document.

    Raises
    ------
    ScenarioError
        When ``outcome`` is not a ``run_scenario`` result (a planner's
        ``PlanResult``, a list of runs).
    """
    from portsim.scenarios.runner import ScenarioResult

    if not isinstance(outcome, ScenarioResult):
        raise ScenarioError("expected the result of run_scenario(scenario)", path="outcome",
                            value=type(outcome).__name__)
    scenario: ReportScenario = outcome.scenario
    runs = tuple(outcome.results)
    embed = FigureEmbedder()
    labels = run_labels(runs)
    sections = [
        _section("results", "Results",
                 _results_table(runs, labels) + _notes_html(runs, labels)),
        _section("throughput", "Throughput", embed(throughput_figure(runs))),
    ]
    if any(r.makespan is not None for r in runs):
        sections.append(_section("makespan", "Makespan", embed(makespan_figure(runs))))
    sections.append(_section("convergence", "Convergence to the bound",
                             _convergence_html(scenario, runs, labels, embed, progress,
                                               lp_time_limit)))
    sections.append(_section("schedules", "Schedules",
                             _schedules_html(runs, labels, embed, gantt_window)))
    sections.append(_section("platform", "Platform",
                             embed(platform_figure(scenario.platform, scenario.operation))))
    sections.append(_section("violations", "Violations", _violations_html(runs, labels)))
    return _page(scenario, sections)


# ---------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------


class FigureEmbedder:
    """Turns figures into HTML ``<div>`` elements; plotly.js goes inline with the first only.

    Call it with a :class:`plotly.graph_objects.Figure`; it returns the HTML
    of the figure, for one self-contained page, in a ``<div>`` whose id numbers
    the figures in page order (``figure-1``, ...), so that one page of the same
    results is the same text.
    """

    def __init__(self) -> None:
        self._js_written = False
        self._figures = 0

    def __call__(self, figure: go.Figure) -> str:
        include = not self._js_written
        self._js_written = True
        # numbered ids, not plotly's random ones: the same results, the same page
        self._figures += 1
        return str(figure.to_html(full_html=False, include_plotlyjs=include,
                                  config=_PLOTLY_CONFIG, default_width="100%",
                                  div_id=f"figure-{self._figures}"))


def convergence_study(scenario: Scenario, plans: Sequence[PlanResult | None] | None = None,
                      *, progress: Callable[[str], None] | None = None,
                      lp_time_limit: float | None = None,
                      ) -> tuple[AsymptoticStudy, str]:
    """The convergence of ``scenario``'s planners, as both reports draw it.

    :func:`portsim.scenarios.asymptotic.asymptotic_study` over the horizons of
    :data:`~portsim.reports.figures.CONVERGENCE_PERIODS` (in ``lp`` periods) holding
    at most :data:`CONVERGENCE_OPERATIONS` operations of the ``lp`` schedule
    (``TP · K`` where it reaches the bound TP; always the first).
    ``plans``, aligned with ``scenario.planners``, are results already
    computed (a run's): they are replayed, not planned again.  ``progress``
    is told each step before it starts: the ``lp`` bound, then the replays
    (as :func:`~portsim.scenarios.asymptotic.asymptotic_study` tells them).
    ``lp_time_limit`` is the ``time_limit`` of an ``lp`` planned here (none
    listed in ``scenario``; :func:`~portsim.scenarios.asymptotic.bound_plan`).

    Returns
    -------
    tuple of (AsymptoticStudy, str)
        The study, and a note saying which horizons were left out and
        where the ``lp`` line tends when its schedule falls short of the
        bound (empty when neither).
    """
    from dataclasses import replace

    from portsim.planners.lp import LpOptions
    from portsim.scenarios.asymptotic import asymptotic_study, bound_plan, without_lp_schedule
    from portsim.scenarios.bounds import time_limit_words
    from portsim.scenarios.loader import PlannerSpec

    # the lp result first (the same lp entry asymptotic_study takes): TP and the period
    if progress is not None:
        planned = not any(s.name == "lp" and s.options.get("restrict", "graph") == "graph"
                          for s in scenario.planners)  # bound_plan's plain lp: how long
        progress("convergence chart: the lp bound" + (
            f" (time limit {LpOptions(time_limit=lp_time_limit).seconds:g} s)"
            if planned else ""))
    lp, index = bound_plan(scenario, plans, time_limit=lp_time_limit)
    if index is None:  # planned here: its time limit is the command's option
        lp = replace(lp, message=time_limit_words(lp.message, "portsim run --lp-time-limit"))
    if not lp.is_ok or lp.throughput_bound is None or lp.period is None:
        return without_lp_schedule(lp), ""
    known: list[PlanResult | None] = (list(plans) if plans is not None
                                      else [None] * len(scenario.planners))
    if index is None:  # the chart shows lp even when the scenario does not list it
        scenario = replace(scenario, planners=(*scenario.planners, PlannerSpec("lp")))
        known.append(lp)
    else:
        known[index] = lp
    plans = known
    # What one period of the lp schedule holds: less than TP · T where a fixed period
    # falls short of the bound (Proposition 4), whose line then tends to achieved / TP.
    carried = lp.throughput_bound if lp.achieved_throughput is None else lp.achieved_throughput
    per_period = carried * lp.period
    periods = [k for k in CONVERGENCE_PERIODS if per_period * k <= CONVERGENCE_OPERATIONS]
    periods = periods or [CONVERGENCE_PERIODS[0]]
    notes = []
    if len(periods) < len(CONVERGENCE_PERIODS):
        left = [k for k in CONVERGENCE_PERIODS if k not in periods]
        notes.append(f"horizons of {', '.join(map(str, left))} lp periods left out: one "
                     f"period holds {_operations_text(per_period)} operations and the chart "
                     f"replays at most {CONVERGENCE_OPERATIONS:,}; "
                     "portsim run --asymptotic replays longer horizons")
    if lp.bound_reached is False and lp.achieved_throughput is not None:
        # TP may be the upper end of a certified interval (a cut lp): the lp's own
        # message says which, and no other part of the page shows it when the
        # chart planned the lp itself
        said = f" (the lp says: {lp.message})" if index is None and lp.message else ""
        notes.append(f"the lp schedule carries {short(lp.achieved_throughput)} operations "
                     f"per time unit, below TP = {short(lp.throughput_bound)}: its line "
                     f"tends to {short(lp.achieved_throughput / lp.throughput_bound)}, "
                     f"not 1{said}")
    study = asymptotic_study(scenario, periods=periods, plans=plans, progress=progress)
    return study, "; ".join(notes)


def _operations_text(count: Fraction) -> str:
    """``"1100/3 (about 367)"``, ``"1470"`` for a whole count, or only ``"about 110"``
    where the exact count is longer than a chart's note writes
    (:data:`~portsim.reports._style.EXACT_TEXT_CHARS`)."""
    about = f"about {float(count):,.0f}"
    text = format_rational(count)
    if len(text) > EXACT_TEXT_CHARS:
        return about
    # a whole count is its own value: "1470", not "1470 (about 1,470)"
    return text if count.denominator == 1 else f"{text} ({about})"


def _convergence_html(scenario: ReportScenario, runs: Sequence[PlannerRun],
                      labels: Sequence[str], embed: FigureEmbedder,
                      progress: Callable[[str], None] | None = None,
                      lp_time_limit: float | None = None) -> str:
    """completed(K) / (TP · K) over K for the run's planners that returned a result.

    The run's plans are replayed again (:func:`convergence_study`); a planner that
    returned no result (``error``), or that is not registered (a hand-made
    record), is left out and said so.
    """
    from portsim.planners.registry import available_planners
    from portsim.scenarios.loader import PlannerSpec, Scenario
    from portsim.simulator.errors import PortsimError

    known = available_planners()
    kept = [(run, label) for run, label in zip(runs, labels, strict=True)
            if run.status != "error" and run.planner in known]
    left_out = [f"{label} ({run.status if run.status == 'error' else 'not registered'})"
                for run, label in zip(runs, labels, strict=True)
                if run.status == "error" or run.planner not in known]
    study_scenario = Scenario(
        name=scenario.name, description=scenario.description or "", seed=None,
        platform=scenario.platform, operation=scenario.operation,
        planners=tuple(PlannerSpec(run.planner, dict(run.options)) for run, _ in kept),
        horizon=None, source=scenario.name)
    try:
        study, note = convergence_study(study_scenario, [run.plan for run, _ in kept],
                                        progress=progress, lp_time_limit=lp_time_limit)
    except PortsimError as err:
        return f'<p class="warn">No convergence chart: {_esc(err)}.</p>'
    figure = convergence_figure(study, [label for _, label in kept],
                                notes=[note] if note else [])
    if figure is None:
        why = "; ".join(study.problems) or "no lp bound"
        return f'<p class="hint">No convergence chart: {_esc(why)}.</p>'
    intro = ("<p>Operations completed by time K over the optimal steady-state bound "
             f"TP · K (TP: the lp bound, in {_esc(THROUGHPUT_UNIT)}), for K = "
             f"{', '.join(str(r) for r in dict.fromkeys(r.periods for r in study.rows))} "
             "periods of the lp schedule. No schedule goes above 1 (Lemma 1 of Legrand, "
             "Marchal and Robert); the lp schedule tends to 1, or to its own throughput "
             "over TP where its period falls short of the bound.</p>")
    tail = (f'<p class="hint">Left out: {_esc(", ".join(left_out))}.</p>'
            if left_out else "")
    return intro + embed(figure) + tail


def _schedules_html(runs: Sequence[PlannerRun], labels: Sequence[str],
                    embed: FigureEmbedder, window: GanttWindow | None = None) -> str:
    """A Gantt chart per planner that produced a schedule (of ``window`` only, if given)."""
    parts = []
    for run, label in zip(runs, labels, strict=True):
        schedule = None if run.plan is None else run.plan.schedule
        if schedule is None:
            continue
        found = gantt_note(schedule, window)
        note = "" if found is None else f'<p class="{found[0]}">{_esc(found[1])}</p>'
        violations = run.violations
        if run.replay == "asap":
            # The chart draws the planned times, which claim only an order of events
            # (lp-naive): outline the events a strict replay of those times rejects.
            violations = replay(schedule).violations
            note += (f'<p class="hint">{_esc(label)} claims only an order of events: the '
                     f"chart draws its planned times, in which a strict replay finds "
                     f"{len(violations)} violation(s) (outlined in red); its figures come "
                     "from the as-soon-as-possible replay under the real port model.</p>")
        parts.append(f"<h3>{_esc(label)}</h3>{note}"
                     + embed(gantt_figure(schedule, title=label, violations=violations,
                                          window=window)))
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
class Cell:
    """One table cell: its text (escaped when rendered), an optional CSS class and an
    optional ``title`` (what a hover shows: the exact figure a long one stands for)."""

    text: str
    css: str = ""
    title: str = ""


def html_table(columns: Sequence[str], rows: Iterable[Sequence[Cell]], css: str = "") -> str:
    """An HTML table: ``columns`` as the head, one ``<tr>`` per row of cells, all escaped.

    The table sits in a ``<div class="table-scroll">``: on a window narrower
    than the table it scrolls sideways in its own box, instead of running past
    the page's right edge with its last columns out of sight.
    """
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    def td(cell: Cell) -> str:
        css = f' class="{cell.css}"' if cell.css else ""
        title = f' title="{html.escape(cell.title)}"' if cell.title else ""
        return f"<td{css}{title}>{_esc(cell.text)}</td>"

    body = "".join("<tr>" + "".join(td(cell) for cell in row) + "</tr>" for row in rows)
    return (f'<div class="table-scroll"><table class="{css}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


_RESULT_COLUMNS: Final = (
    "planner", "status", "message", "throughput bound", "period", "makespan",
    "measured throughput", "completed", "horizon", "feasible", "violations",
)


def _exact(value: Fraction | None) -> str:
    return "—" if value is None else format_rational(value)


def _time(value: Fraction | float) -> str:
    return format_rational(value) if isinstance(value, Fraction) else f"{value:.6g}"


def _result_row(run: PlannerRun, label: str) -> list[Cell]:
    feasible = {True: Cell("yes", "good"), False: Cell("no", "bad"), None: Cell("—")}
    return [
        Cell(label, "name"),
        Cell(run.status, "good" if run.status == "ok" else "warn"),
        Cell(run.message, "message"),
        _bound_cell(run),
        _figure_cell(run.period),
        _figure_cell(run.makespan),
        _figure_cell(run.measured_throughput_exact),
        # as ``portsim run`` prints them: ``cut`` for a series the replay cap cut,
        # no count of violations for a row nothing was replayed for
        Cell("cut" if run.replay_cut else "—" if run.completed is None
             else str(run.completed), "num"),
        _figure_cell(run.horizon),
        feasible[run.feasible],
        Cell("—" if run.feasible is None and not run.violations else str(len(run.violations)),
             "num bad" if run.violations else "num"),
    ]


def _bound_cell(run: PlannerRun) -> Cell:
    """The bound, followed by what the schedule reaches when it falls short of it
    (``1/2 (not reached: 2/5)``, as ``portsim run`` prints it)."""
    if run.bound_reached is False:
        exact = f"{_exact(run.throughput_bound)} (not reached: {_exact(run.achieved_throughput)})"
        text = (f"{_short(run.throughput_bound)} (not reached: "
                f"{_short(run.achieved_throughput)})")
        return Cell(text, "num warn", exact if text != exact else "")
    return _figure_cell(run.throughput_bound)


def _short(value: Fraction | None) -> str:
    return "—" if value is None else short(value)


def _figure_cell(value: Fraction | None) -> Cell:
    """An exact figure's cell: a fraction longer than ``EXACT_TEXT_CHARS`` (70 digits
    over 70, which would make the table scroll sideways) as its decimal value,
    ``~0.123077``, with the exact figure on hover."""
    text, exact = _short(value), _exact(value)
    return Cell(text, "num", exact if text != exact else "")


def _results_table(runs: Sequence[PlannerRun], labels: Sequence[str]) -> str:
    if not runs:
        return "<p>No planner was run.</p>"
    rows = [_result_row(r, label) for r, label in zip(runs, labels, strict=True)]
    rounded = any(cell.title for row in rows for cell in row)
    legend = ("<p class=\"hint\">Every figure is an exact rational"
              + (f" (one longer than {EXACT_TEXT_CHARS} characters is written ~ and its "
                 "value to 6 significant digits; hover over it for the exact figure)"
                 if rounded else "")
              + "; the measured throughput (operations per time unit: completed / horizon) "
              "and the completed count come from the engine's replay over the horizon.</p>")
    return html_table(_RESULT_COLUMNS, rows, "results") + legend


def _notes_html(runs: Sequence[PlannerRun], labels: Sequence[str]) -> str:
    items = "".join(f"<li><b>{_esc(label)}</b>: {_esc(note)}</li>"
                    for r, label in zip(runs, labels, strict=True) for note in r.notes)
    return f"<h3>Notes</h3><ul class=\"notes\">{items}</ul>" if items else ""


def _violations_html(runs: Sequence[PlannerRun], labels: Sequence[str]) -> str:
    """A table of violations per planner that has some."""
    parts = []
    for run, label in zip(runs, labels, strict=True):
        if not run.violations:
            continue
        shown = run.violations[:MAX_VIOLATION_ROWS]
        rows = ([Cell(_time(v.time), "num"), Cell(v.node), Cell(v.kind, "bad"),
                 Cell(v.detail)] for v in shown)
        more = len(run.violations) - len(shown)
        tail = f'<p class="warn">… and {more:,} more.</p>' if more > 0 else ""
        parts.append(f"<h3>{_esc(label)}: {len(run.violations):,} violation(s)</h3>"
                     + html_table(("time", "node", "kind", "detail"), rows, "violations") + tail)
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
    """An operation field as text: lists joined (and cut after a few dozen), a flag
    spelled as in the scenario file (``false``, not Python's ``False``)."""
    if isinstance(values, bool):
        return "true" if values else "false"
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
    routers = len(platform.routers)
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


PAGE_CSS: Final = """
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
.table-scroll { overflow-x: auto; max-width: 100%; }
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
        f"<title>portsim: {_esc(scenario.name)}</title><style>{PAGE_CSS}</style></head>"
        f"<body>{_header(scenario)}{_nav(sections)}{''.join(s.html() for s in sections)}"
        '<footer class="hint"><p>Generated by portsim.</p></footer></body></html>\n'
    )
