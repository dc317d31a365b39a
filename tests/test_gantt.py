"""The Gantt chart's module and its time window (``--gantt-window START:END``).

The events a windowed chart draws are checked against a filter written here
from the schedule's events and the platform's costs as given, not with the
chart's own code; the command line's bad values are one line and exit 2.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from fractions import Fraction as F
from pathlib import Path

import plotly.graph_objects as go
import pytest
from browser import drawn, needs_chromium
from click.testing import CliRunner
from test_report_views import figures as page_figures
from test_report_views import write_store
from test_reports import PlannerRun, ScenarioResult, StandInScenario

import portsim.reports
import portsim.reports.figures as figures
import portsim.reports.gantt as gantt
from portsim.planners.base import PlanResult
from portsim.planners.registry import get_planner
from portsim.reports.gantt import (
    GANTT_EVENT_CAP,
    GanttWindow,
    gantt_figure,
    parse_gantt_window,
)
from portsim.reports.html import render_run_report
from portsim.scenarios.cli import main
from portsim.simulator.errors import ScenarioError
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule, Send

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"


def test_the_gantt_chart_is_still_importable_from_where_it_was() -> None:
    # reports/figures.py held the Gantt chart until it moved to reports/gantt.py
    assert figures.gantt_figure is gantt.gantt_figure is portsim.reports.gantt_figure
    assert figures.GANTT_EVENT_CAP == gantt.GANTT_EVENT_CAP == portsim.reports.GANTT_EVENT_CAP
    assert {"gantt_figure", "GANTT_EVENT_CAP", "set_title", "TIME_UNIT",
            "MODEBAR_SPACE"} <= set(figures.__all__)
    assert all(hasattr(figures, name) for name in figures.__all__)


# -- which events a window holds, by a filter written here ---------------------------------


def _random_reduce(rng: random.Random, target_compute: F | None = None
                   ) -> tuple[Schedule, dict[tuple[str, str], F], dict[str, F]]:
    """``flat``'s reduce onto P0 on random costs, with the costs and compute times given."""
    leaves = [f"P{i}" for i in range(1, rng.randrange(3, 9))]
    if target_compute is None:
        target_compute = rng.choice([F(0), F(1, 2), F(3)])
    compute = {"P0": target_compute,
               **{leaf: F(rng.randrange(1, 4)) for leaf in leaves}}
    costs = {(leaf, "P0"): F(rng.randrange(1, 7), rng.randrange(1, 4)) for leaf in leaves}
    platform = Platform.build(compute, [(s, d, c) for (s, d), c in costs.items()])
    operation = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    plan = get_planner("flat").plan(platform, operation)
    assert plan.schedule is not None
    return plan.schedule, costs, compute


def _expected(schedule: Schedule, costs: dict[tuple[str, str], F], compute: dict[str, F],
              start: F, end: F | None) -> Counter[tuple[str, str]]:
    """(start, end) of every bar or diamond the window should show: a send on both ports."""
    out: Counter[tuple[str, str]] = Counter()
    for event in schedule.events:
        if isinstance(event, Send):
            length = costs[event.src, event.dst] * schedule.operation.size * event.part
            copies = 2
        else:
            length, copies = compute[event.node], 1
        runs_in = (end is None or event.start < end) and (
            event.start + length > start or event.start >= start)
        if runs_in:
            out[format_rational(event.start), format_rational(event.start + length)] += copies
    return out


_TIMES = re.compile(r"start ([0-9/]+), end ([0-9/]+)")


def _drawn(figure: go.Figure) -> Counter[tuple[str, str]]:
    """(start, end) of every bar and diamond of ``figure``, read from its hover texts."""
    out: Counter[tuple[str, str]] = Counter()
    for trace in figure.data:
        for hover in trace.hovertext:
            found = _TIMES.search(hover)
            assert found is not None
            out[found.group(1), found.group(2)] += 1
    return out


def test_a_window_draws_the_events_that_run_in_it() -> None:
    rng = random.Random(10)
    checked = 0
    for _ in range(40):
        schedule, costs, compute = _random_reduce(rng)
        last = max(e.start for e in schedule.events) + 4
        start = F(rng.randrange(0, 4 * int(last)), 4)
        end = None if rng.random() < 0.25 else start + F(rng.randrange(1, 12), 3)
        figure = gantt_figure(schedule, window=GanttWindow(start, end))
        expected = _expected(schedule, costs, compute, start, end)
        assert _drawn(figure) == expected
        checked += bool(expected) and sum(expected.values()) < 2 * len(schedule.events)
        title = figure.layout.title.text
        shown = f"[{format_rational(start)}, {format_rational(end)})" if end is not None \
            else f"from {format_rational(start)}"
        assert f"time window {shown}: the " in title
        if end is not None:
            assert list(figure.layout.xaxis.range) == [float(start), float(end)]
        # bars are cut to the window, so their labels sit in the part that shows
        for trace in figure.data:
            if isinstance(trace, go.Bar):
                for base, length in zip(trace.base, trace.x, strict=True):
                    assert base >= float(start) - 1e-9
                    assert end is None or base + length <= float(end) + 1e-9
    assert checked >= 10  # windows that cut the schedule, and are not empty


def test_an_event_of_no_time_is_in_a_window_at_its_time_only() -> None:
    # P0 computes in no time: its diamonds sit at the end of each receive
    schedule, costs, compute = _random_reduce(random.Random(1), F(0))
    computes = [e.start for e in schedule.events if not isinstance(e, Send)]
    at = computes[0]
    for start, end in ((at, at + 1), (at - F(1, 2), at), (at + F(1, 8), None)):
        figure = gantt_figure(schedule, window=GanttWindow(start, end))
        assert _drawn(figure) == _expected(schedule, costs, compute, start, end)
        diamonds = [x for t in figure.data if isinstance(t, go.Scatter) for x in t.x]
        assert (float(at) in diamonds) == (start <= at and (end is None or at < end))


def test_the_cap_still_applies_inside_a_window_and_the_title_says_both() -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    total = GANTT_EVENT_CAP + 1000
    events = [Send("A", "B", operation.initial_items(t)["A"][0], F(t)) for t in range(total)]
    schedule = Schedule(platform, operation, tuple(events))
    # one event per time unit, each lasting 1: [100, 2600) holds t = 100..2599
    figure = gantt_figure(schedule, window=parse_gantt_window("100:2600"))
    assert sum(len(t.x) for t in figure.data) == 2 * GANTT_EVENT_CAP
    assert min(b for t in figure.data for b in t.base) == 100
    title = figure.layout.title.text
    assert f"time window [100, 2600): the 2,500 of {total:,} events that run in it" in title
    assert (f"showing the first {GANTT_EVENT_CAP:,} of 2,500 events of the window "
            f"(earliest starts: every event starting before {100 + GANTT_EVENT_CAP})") in title
    # a window within the cap draws all of its events, and says no cut
    small = gantt_figure(schedule, window=parse_gantt_window("12/5:40"))
    assert sum(len(t.x) for t in small.data) == 2 * 38  # t = 2..39
    assert "showing the first" not in small.layout.title.text
    assert list(small.layout.xaxis.range) == [2.4, 40.0]


@pytest.mark.parametrize(("text", "message"), [
    ("4:2", "START must be before END"),
    ("4:4", "START must be before END"),
    ("-1:3", "START must be >= 0"),
    ("x:3", "expected a number"),
    ("1:1e400", "out of range"),
    ("5", "expected START:END"),
    ("1:2:3", "expected START:END"),
])
def test_bad_windows_are_refused(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_gantt_window(text)


def test_a_window_object_checks_its_bounds() -> None:
    with pytest.raises(ScenarioError, match="before its end"):
        GanttWindow(F(3), F(2))
    with pytest.raises(ScenarioError, match=">= 0"):
        GanttWindow(F(-1))
    assert parse_gantt_window(":4") == GanttWindow(F(0), F(4))
    assert parse_gantt_window("3:") == GanttWindow(F(3), None)


def test_the_run_report_says_how_many_events_run_in_the_window_and_any_cut() -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    total = GANTT_EVENT_CAP + 1000
    events = [Send("A", "B", operation.initial_items(t)["A"][0], F(t)) for t in range(total)]
    run = PlannerRun(planner="by-hand", operation="broadcast", port_model="bidirectional",
                     status="ok", plan=PlanResult.ok("by-hand",
                                                     Schedule(platform, operation,
                                                              tuple(events))))
    outcome = ScenarioResult(StandInScenario("long", "", platform, operation), (run,))
    page = render_run_report(outcome, gantt_window=parse_gantt_window("100:2600"))
    assert ('<p class="warn">Time window [100, 2600): 2,500 of 3,000 events run in it: '
            f"only the first {GANTT_EVENT_CAP:,} (earliest starts) are drawn.</p>") in page
    page = render_run_report(outcome, gantt_window=parse_gantt_window("1/2:3"))
    assert '<p class="hint">Time window [1/2, 3): 3 of 3,000 events run in it.</p>' in page


# -- the command line ---------------------------------------------------------------------


@pytest.mark.parametrize(("value", "line"), [
    ("4:2", "START must be before END (got '4:2')"),
    ("-1:3", "START must be >= 0 (got '-1:3')"),
    ("x:3", 'expected a number such as 3, 0.25 or "2/3" (got \'x\')'),
    ("5", "expected START:END, START: or :END, such as 12/5:40 (got '5')"),
    ("", "expected START:END, START: or :END, such as 12/5:40 (got '')"),
])
def test_run_refuses_a_bad_window_in_one_line(value: str, line: str, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "scatter-toy.yaml"),
                                       "--report", str(out), "--gantt-window", value])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"portsim: error: --gantt-window: {line}"]
    assert not out.exists()


def test_run_refuses_a_window_without_a_report() -> None:
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "scatter-toy.yaml"),
                                       "--gantt-window", "1:2"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "portsim: error: --gantt-window: draws in the --report page, and there is none "
        "(got '1:2')"]


def test_run_report_draws_the_window(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "scatter-toy.yaml"),
                                       "--report", str(out), "--gantt-window", "1/2:3"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "Time window [1/2, 3): " in page
    titles = [f["layout"]["title"]["text"] for f in page_figures(page)]
    charts = [title for title in titles if "time window [1/2, 3): the " in title]
    assert len(charts) == len([title for title in titles if "schedule" in title]) >= 2


def test_report_refuses_a_bad_window_and_draws_a_good_one(tmp_path: Path) -> None:
    write_store(tmp_path / "study")
    out = tmp_path / "r.html"
    runner = CliRunner()
    bad = runner.invoke(main, ["report", str(tmp_path / "study"), "-o", str(out),
                               "--gantt-window", "3:1"])
    assert bad.exit_code == 2
    assert bad.output.strip().splitlines() == [
        "portsim: error: --gantt-window: START must be before END (got '3:1')"]
    assert not out.exists()
    good = runner.invoke(main, ["report", str(tmp_path / "study"), "-o", str(out),
                                "--gantt-window", "1:"])
    assert good.exit_code == 0, good.output
    titles = [f["layout"]["title"]["text"] for f in page_figures(out.read_text("utf-8"))]
    assert sum("time window from 1: the " in title for title in titles) == 1


@pytest.mark.slow
@needs_chromium
def test_chromium_draws_the_window_on_the_time_axis(tmp_path: Path) -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    events = [Send("A", "B", operation.initial_items(t)["A"][0], F(t)) for t in range(60)]
    schedule = Schedule(platform, operation, tuple(events))
    page = tmp_path / "gantt.html"
    gantt_figure(schedule, window=parse_gantt_window("12/5:40")).write_html(
        page, include_plotlyjs=True)
    seen = drawn(page, tmp_path)
    assert seen["errors"] == []
    (figure,) = seen["figures"]
    assert figure["drawn"]
    assert figure["x_range"] == [2.4, 40]
    assert "time window [12/5, 40)" in figure["title"]


def test_a_bar_cut_to_a_sliver_by_the_window_loses_its_outline() -> None:
    # The outline rule (none on bars of a pixel or two, tests/test_reports.py) measured
    # a cut bar by its event's whole length: a send of 1,000 time units of which 1
    # shows in the window kept an outline covering its one pixel.
    platform = Platform.build(["A", "B", "C"], [("A", "B", 1000), ("B", "C", 1000)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1000}])
    (bars,) = gantt_figure(schedule, window=parse_gantt_window("999:2000")).data
    # both ports of each send; 1 of the window's 1,001 time units is about one pixel
    assert list(bars.x) == [1, 1, 1000, 1000]
    assert _outline_widths(bars) == [0, 0, 1, 1]
    # the same bars whole, without a window: 1,000 of 2,000 time units, outlined
    (whole,) = gantt_figure(schedule).data
    assert list(whole.x) == [1000, 1000, 1000, 1000]
    assert _outline_widths(whole) == [1, 1, 1, 1]


def _outline_widths(bars: go.Bar) -> list[int]:
    """The outline width of every bar (plotly holds one number when they are all equal)."""
    width = bars.marker.line.width
    return [width] * len(bars.x) if isinstance(width, int | float) else list(width)


def test_an_empty_window_says_where_the_events_run() -> None:
    # A periodic schedule's chart is one period: `--gantt-window 10:20` on a period
    # of 6 drew an empty chart titled "the 0 of 12 events", with no word of why.
    platform = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", "3/2")])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    events = [{"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
              {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}]
    periodic = Schedule.from_dicts(platform, operation, events, period=3)
    one_shot = Schedule.from_dicts(platform, operation, events)
    # by hand: A -> B over [0, 1), B -> C over [1, 5/2)
    for schedule, where in ((periodic, "the chart is one period (T = 3), whose events run "
                                       "from 0 to 5/2"),
                            (one_shot, "its events run from 0 to 5/2")):
        figure = gantt_figure(schedule, window=parse_gantt_window("10:20"))
        title = re.sub("<br>", " ", figure.layout.title.text)
        assert f"the 0 of 2 events that run in it ({where})" in title
        run = PlannerRun(planner="by-hand", operation="broadcast", port_model="bidirectional",
                         status="ok", plan=PlanResult.ok("by-hand", schedule))
        outcome = ScenarioResult(StandInScenario("w", "", platform, operation), (run,))
        page = render_run_report(outcome, gantt_window=parse_gantt_window("10:20"))
        assert (f'<p class="warn">Time window [10, 20): 0 of 2 events run in it: {where}.</p>'
                in page)
        # a window that holds events says nothing of the kind
        page = render_run_report(outcome, gantt_window=parse_gantt_window("2:20"))
        assert '<p class="hint">Time window [2, 20): 1 of 2 events run in it.</p>' in page


def test_a_long_period_is_its_decimal_value_in_the_title_and_the_period_line() -> None:
    """A period of 36 digits over 36 (an lp schedule on links of 18-digit costs) ran
    across the chart's title and its period line's label; each now gives the value
    to 6 digits (the title also says how long the exact figure is)."""
    from portsim.simulator.schedule import Schedule

    cost = F("123456789012345677/987654321098765431") + F("987654321098765429/123456789012345673")
    platform = Platform.build(["S", "A"], [("S", "A", cost)])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0}], period=cost)
    assert len(format_rational(cost)) > 40
    figure = gantt_figure(schedule, title="mine")
    title = figure.layout.title.text.replace("<br>", " ")  # the title's line breaks
    found = re.search(r"\(T = ~(\S+) \(exact: a rational of (\d+) characters\)", title)
    assert found is not None, title
    assert abs(F(found.group(1)) / cost - 1) < F(1, 10**5)
    assert int(found.group(2)) == len(format_rational(cost))
    (line,) = [a.text for a in figure.layout.annotations if a.text.startswith("period T")]
    assert abs(F(line.removeprefix("period T = ~")) / cost - 1) < F(1, 10**5)


def test_a_long_start_or_end_gets_its_decimal_value_in_the_hover() -> None:
    """A broadcast along a chain of links of costs p/(p+2) (primes p from 197
    down): the last hops start at sums of 60 digits over 60, and the hover gave
    only those (`start 1287357440126707385.../7672638845946705522...`).  Each
    long time now also gets its value to 6 digits, the exact sum's; a short one
    stays exact alone."""
    from portsim.simulator.schedule import Schedule

    primes = [197, 193, 191, 181, 179, 173, 167, 163, 157, 151, 149, 139, 137, 131, 127]
    nodes = [f"P{i}" for i in range(len(primes) + 1)]
    costs = [F(p, p + 2) for p in primes]
    platform = Platform.build(nodes, [(a, b, c) for a, b, c in zip(nodes, nodes[1:], costs,
                                                                      strict=False)])
    operation = Operation(OperationKind.BROADCAST, source="P0").resolve(platform)
    starts = [sum(costs[:i], F(0)) for i in range(len(costs))]
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": a, "dst": b, "item": "b", "start": t}
        for a, b, t in zip(nodes, nodes[1:], starts, strict=False)])
    hovers = {h.split("<br>")[1]: h for trace in gantt_figure(schedule).data
              for h in trace.hovertext}
    last = hovers[f"send {nodes[-2]} → {nodes[-1]}"]
    start, end = starts[-1], starts[-1] + costs[-1]
    assert len(format_rational(start)) > 40
    assert len(format_rational(end)) > 40
    found = re.search(r"\(start ~(\S+), end ~(\S+)\)", last)
    assert found is not None, last
    assert abs(F(found.group(1)) / start - 1) < F(1, 10**5)
    assert abs(F(found.group(2)) / end - 1) < F(1, 10**5)
    assert f"start {format_rational(start)}, end {format_rational(end)}" in last
    first = hovers["send P0 → P1"]
    assert "(start" not in first  # 0 and 197/199: exact alone
