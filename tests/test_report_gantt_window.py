"""The study report's line above its Gantt chart (``portsim report DIR --gantt-window``).

The run report writes ``Time window W: N of T events run in it.`` above each
Gantt chart drawn with a window; the study report now writes the same line
above its one chart.  The counts are checked against a filter written here from
the schedule's events and the costs of the hand-written study's document
(every link ``c = 1``, every node ``compute = 1``), not with the chart's code.
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_views import DOCUMENT, write_store
from test_reports import PlannerRun, ScenarioResult, StandInScenario

from portsim.planners.base import PlanResult
from portsim.planners.registry import get_planner
from portsim.reports.gantt import GANTT_EVENT_CAP, GanttWindow, gantt_note, parse_gantt_window
from portsim.reports.html import render_run_report
from portsim.reports.studies import load_results
from portsim.reports.studies.report import render_study_report
from portsim.scenarios.cli import main
from portsim.scenarios.loader import scenario_from_dict
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule, Send


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("gantt-window-study")
    write_store(directory)
    return directory


def _binomial_schedule() -> Schedule:
    """The schedule the study report draws for run 0 with ``--planner binomial``."""
    scenario = scenario_from_dict(DOCUMENT, source="hand")
    plan = get_planner("binomial").plan(scenario.platform, scenario.operation)
    assert plan.schedule is not None
    return plan.schedule


def _spans(schedule: Schedule) -> list[tuple[F, F]]:
    """(start, end) of every event, from the document's costs as given."""
    generator = DOCUMENT["platform"]["generator"]
    link, compute = F(generator["c"]), F(generator["compute"])
    return [(e.start, e.start + (link * schedule.operation.size * e.part
                                 if isinstance(e, Send) else compute))
            for e in schedule.events]


def _inside(spans: list[tuple[F, F]], start: F, end: F | None) -> int:
    """How many events run in ``[start, end)``: start before its end, end after its start
    (or, of no time, at a time in it)."""
    return sum(1 for s, e in spans
               if (end is None or s < end) and (e > start or s >= start))


def _gantt_section(page: str) -> str:
    return page.split('<section id="gantt">', 1)[1].split("</section>", 1)[0]


@pytest.mark.parametrize("text", ["1/2:3", "3/2:3", "1:3", "2:"])
def test_the_study_report_says_how_many_events_run_in_the_window(store: Path,
                                                                 text: str) -> None:
    window = parse_gantt_window(text)
    spans = _spans(_binomial_schedule())
    inside = _inside(spans, window.start, window.end)
    # by hand (six events of one time unit, at 0, 0, 1, 1, 2, 3): the windows cut it
    assert (len(spans), inside) == (6, {"1/2:3": 5, "3/2:3": 3, "1:3": 3, "2:": 2}[text])
    page = render_study_report(load_results(store), run_index=0, planner="binomial",
                               gantt_window=window)
    section = _gantt_section(page)
    line = (f'<p class="hint">Time window {window}: {inside} of {len(spans)} events run '
            "in it.</p>")
    # the line opens the section, above the chart
    assert section.startswith(f"<h2>Schedule of binomial</h2>{line}<div"), section[:300]
    assert page.count("Time window ") == 1


def test_an_empty_window_in_the_study_report_says_where_the_events_run(store: Path) -> None:
    spans = _spans(_binomial_schedule())
    first = min(s for s, _ in spans)
    last = max(e for _, e in spans)
    assert _inside(spans, F(10), F(20)) == 0
    page = render_study_report(load_results(store), run_index=0, planner="binomial",
                               gantt_window=GanttWindow(F(10), F(20)))
    assert _gantt_section(page).startswith(
        '<h2>Schedule of binomial</h2><p class="warn">Time window [10, 20): 0 of '
        f"{len(spans)} events run in it: its events run from {format_rational(first)} "
        f"to {format_rational(last)}.</p><div")


def test_the_study_report_says_nothing_of_a_window_without_one(store: Path) -> None:
    page = render_study_report(load_results(store), run_index=0, planner="binomial")
    assert _gantt_section(page).startswith("<h2>Schedule of binomial</h2><div")
    assert "Time window" not in page


def test_portsim_report_writes_the_line(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(store), "-o", str(out), "--run", "0",
                                       "--planner", "binomial", "--gantt-window", "3/2:3"])
    assert result.exit_code == 0, result.output
    spans = _spans(_binomial_schedule())
    assert (f'<p class="hint">Time window [3/2, 3): {_inside(spans, F(3, 2), F(3))} of '
            f"{len(spans)} events run in it.</p>") in out.read_text("utf-8")


def test_both_reports_write_the_same_line(store: Path) -> None:
    schedule = _binomial_schedule()
    run = PlannerRun(planner="binomial", operation="reduce", port_model="unidirectional",
                     status="ok", plan=PlanResult.ok("binomial", schedule))
    outcome = ScenarioResult(StandInScenario("hand", "", schedule.platform,
                                             schedule.operation), (run,))
    for window in (parse_gantt_window("1:3"), parse_gantt_window("10:20")):
        css, text = gantt_note(schedule, window) or ("", "")
        line = f'<p class="{css}">{text}</p>'
        assert line in render_run_report(outcome, gantt_window=window)
        assert line in render_study_report(load_results(store), run_index=0,
                                           planner="binomial", gantt_window=window)


def test_the_note_without_a_window_speaks_only_of_the_cap() -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)

    def schedule(count: int) -> Schedule:
        return Schedule(platform, operation, tuple(
            Send("A", "B", operation.initial_items(t)["A"][0], F(t)) for t in range(count)))

    assert gantt_note(schedule(GANTT_EVENT_CAP)) is None
    total = GANTT_EVENT_CAP + 1
    assert gantt_note(schedule(total)) == (
        "warn", f"{total:,} events: only the first {GANTT_EVENT_CAP:,} (earliest starts) "
                "are drawn.")
    # a window over every event of a short schedule: a hint, all of them
    assert gantt_note(schedule(3), parse_gantt_window("0:")) == (
        "hint", "Time window from 0: 3 of 3 events run in it.")
