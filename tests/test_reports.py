"""The HTML run report and its figures.

The outcome is built by hand, without the scenario loader: real flat-planner
schedules replayed by the engine, plus hand-made records (a steady-state
planner with an exact bound, an unsupported planner, a schedule with
violations).  The report reads only ``name``, ``description``, ``platform``
and ``operation`` of ``outcome.scenario``, so a small stand-in plays the
scenario.
"""

from __future__ import annotations

import importlib
import math
import random
import subprocess
import sys
import types
from dataclasses import dataclass
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest
from browser import CHROMIUM, FLAGS, drawn, needs_chromium

from portsim.planners.base import PlanResult
from portsim.planners.registry import get_planner
from portsim.reports import (
    GANTT_EVENT_CAP,
    THROUGHPUT_UNIT,
    TIME_UNIT,
    gantt_figure,
    makespan_figure,
    platform_figure,
    render_run_report,
    throughput_figure,
    write_run_report,
)
from portsim.simulator.engine import replay
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Link, Node, Platform, PortModel
from portsim.simulator.schedule import Compute, Schedule, Send


def _import_runner() -> types.ModuleType:
    """``portsim.scenarios.runner``, even while ``portsim.scenarios.loader`` is not written yet.

    The runner imports the loader only for type names; without the loader a
    throw-away stand-in is put in its place for the import, then removed so
    that no other test sees it.
    """
    try:
        importlib.import_module("portsim.scenarios.loader")
    except ModuleNotFoundError as err:
        if err.name != "portsim.scenarios.loader":
            raise
    else:
        return importlib.import_module("portsim.scenarios.runner")
    stand_in = types.ModuleType("portsim.scenarios.loader")
    stand_in.Scenario = object  # type: ignore[attr-defined]
    stand_in.PlannerSpec = object  # type: ignore[attr-defined]
    sys.modules["portsim.scenarios.loader"] = stand_in
    try:
        return importlib.import_module("portsim.scenarios.runner")
    finally:
        sys.modules.pop("portsim.scenarios.loader", None)
        sys.modules.pop("portsim.scenarios.runner", None)


_runner = _import_runner()
PlannerRun = _runner.PlannerRun
ScenarioResult = _runner.ScenarioResult

MALICIOUS = "<script>alert(1)</script>"
PLOTLY_JS_BANNER = "* plotly.js v"


@dataclass(frozen=True)
class StandInScenario:
    """The four attributes the report reads of a scenario."""

    name: str
    description: str
    platform: Platform
    operation: Operation


# -- building blocks -----------------------------------------------------------


def scatter_toy() -> tuple[Platform, Operation]:
    """The scatter toy of the scatter/reduce report, plus a router on a detour."""
    platform = Platform.build(
        {"Ps": 1, "Pa": 1, "Pb": 1, "P0": 1, "P1": 1, "R": 1},
        [("Ps", "Pa", 1), ("Ps", "Pb", 1), ("Pa", "P0", "2/3"), ("Pb", "P0", "4/3"),
         ("Pb", "P1", "4/3"), ("P0", "Pa", "2/3"), ("Pa", "R", 1), ("R", "P1", 1)],
        routers=["R"],
    )
    operation = Operation(OperationKind.SCATTER, source="Ps", targets=("P0", "P1"))
    return platform, operation.resolve(platform)


def reduce_star() -> tuple[Platform, Operation]:
    """Four participants around a unidirectional target (computes on P0)."""
    platform = Platform.build(
        {"P0": "1/2", "P1": 1, "P2": 1, "P3": 1},
        [("P1", "P0", 1), ("P2", "P0", "3/2"), ("P3", "P0", 2)],
        node_port_models={"P0": "unidirectional"},
    )
    operation = Operation(OperationKind.REDUCE, participants=("P0", "P1", "P2", "P3"),
                          target="P0")
    return platform, operation.resolve(platform)


def flat_run(platform: Platform, operation: Operation, name: str = "flat") -> Any:
    """A PlannerRun of the real flat planner, replayed strictly by the engine."""
    plan = get_planner("flat").plan(platform, operation)
    assert plan.is_ok
    assert plan.schedule is not None
    report = replay(plan.schedule)
    assert report.feasible
    assert report.makespan is not None
    horizon = F(report.makespan) * 10
    return PlannerRun(
        planner=name, operation=operation.kind.value, port_model=str(platform.port_model),
        status="ok", makespan=report.makespan,
        measured_throughput=float(report.completed / horizon), completed=report.completed,
        horizon=horizon, feasible=True, notes=plan.notes, plan=plan, validation=report,
    )


def bound_run() -> Any:
    """A steady-state record with an exact bound and period, without a schedule."""
    return PlannerRun(
        planner="lp", operation="scatter", port_model="bidirectional", status="ok",
        throughput_bound=F(1, 2), period=F(12), measured_throughput=0.4987, completed=498,
        horizon=F(1000), feasible=True,
    )


def unsupported_run() -> Any:
    return PlannerRun(planner="snf", operation="scatter", port_model="bidirectional",
                      status="unsupported", message="snf does not handle <scatter>")


def violating_run(platform: Platform, operation: Operation) -> Any:
    """Two sends of Ps at once: a port conflict, and the targets never served."""
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "Ps", "dst": "Pa", "item": "m[P0]", "start": 0},
        {"kind": "send", "src": "Ps", "dst": "Pb", "item": "m[P1]", "start": "1/2"},
    ])
    report = replay(schedule)
    assert not report.feasible
    return PlannerRun(
        planner="by-hand", operation="scatter", port_model="bidirectional", status="ok",
        feasible=False, violations=report.violations,
        plan=PlanResult.ok("by-hand", schedule), validation=report,
    )


@pytest.fixture
def outcome() -> Any:
    platform, operation = scatter_toy()
    runs = (flat_run(platform, operation), bound_run(), unsupported_run(),
            violating_run(platform, operation))
    scenario = StandInScenario("scatter-toy", f"the toy {MALICIOUS} & more",
                               platform, operation)
    return ScenarioResult(scenario, runs)


@pytest.fixture
def report_html(outcome: Any, tmp_path: Path) -> str:
    path = tmp_path / "report.html"
    write_run_report(outcome, path)
    assert path.is_file()
    return path.read_text(encoding="utf-8")


def has(page: str, part: str) -> bool:
    """``part in page``, without pytest printing a 5 MB page when it fails."""
    return part in page


def bar_count(figure: Any) -> int:
    return sum(len(trace.x) for trace in figure.data)


# -- the page ------------------------------------------------------------------


def test_report_names_every_planner_and_the_scenario(report_html: str) -> None:
    assert report_html.startswith("<!DOCTYPE html>")
    assert has(report_html, "scatter-toy")
    for name in ("flat", "lp", "snf", "by-hand"):
        assert has(report_html, f'<td class="name">{name}</td>')
    assert has(report_html, "<dt>operation</dt><dd>scatter</dd>")
    assert has(report_html, "<dt>links</dt><dd>8 directed</dd>")
    assert has(report_html, "6 (1 router(s))")


def test_report_prints_exact_figures(report_html: str) -> None:
    assert has(report_html, '<td class="num">1/2</td>')  # the bound
    assert has(report_html, '<td class="num">12</td>')  # the period
    assert has(report_html, '<td class="num">10/3</td>')  # flat's makespan on the toy


def test_measured_throughput_is_exact_in_the_table_and_the_chart(outcome: Any,
                                                                  report_html: str) -> None:
    """The measured throughput is completed / horizon as a rational, never a rounded float."""
    figure = throughput_figure(outcome.results)
    measured = figure.data[0]
    for i, run in enumerate(outcome.results):
        if run.completed is None:
            assert measured.text[i] == ""
            continue
        exact = F(run.completed) / run.horizon
        text = str(exact.numerator) if exact.denominator == 1 else \
            f"{exact.numerator}/{exact.denominator}"
        assert measured.text[i] == text
        assert measured.y[i] == run.measured_throughput
        assert has(report_html, f'<td class="num">{text}</td>')


def test_plotly_js_is_inlined_once_and_nothing_is_fetched(report_html: str) -> None:
    assert report_html.count(PLOTLY_JS_BANNER) == 1
    # the bundle mentions its CDN in a string; nothing is loaded from it
    assert not has(report_html, "<script src=")
    assert not has(report_html, 'src="http')


def test_scenario_and_planner_texts_are_escaped(report_html: str) -> None:
    assert not has(report_html, MALICIOUS)
    assert has(report_html, "the toy &lt;script&gt;alert(1)&lt;/script&gt; &amp; more")
    assert has(report_html, "snf does not handle &lt;scatter&gt;")


def test_violations_are_listed(report_html: str, outcome: Any) -> None:
    bad = outcome.results[3]
    assert has(report_html, "by-hand: 3 violation(s)")
    for violation in bad.violations:
        assert has(report_html, f'<td class="bad">{violation.kind}</td>')
    assert has(report_html, '<td class="bad">no</td>')  # feasible: no


def test_a_clean_run_says_no_violation(tmp_path: Path) -> None:
    platform, operation = reduce_star()
    scenario = StandInScenario("reduce-star", "", platform, operation)
    html = render_run_report(ScenarioResult(scenario, (flat_run(platform, operation),)))
    assert has(html, "The engine found no violation.")
    assert not has(html, 'class="description"')  # no empty description paragraph
    assert html.count(PLOTLY_JS_BANNER) == 1


def test_no_makespan_section_without_a_one_shot_planner() -> None:
    platform, operation = scatter_toy()
    scenario = StandInScenario("only-lp", "", platform, operation)
    html = render_run_report(ScenarioResult(scenario, (bound_run(),)))
    assert not has(html, 'id="makespan"')
    assert not has(html, 'href="#makespan"')
    assert has(html, "No planner produced a schedule.")


# -- figures ---------------------------------------------------------------------


def test_gantt_draws_every_event_on_its_ports() -> None:
    platform, operation = scatter_toy()
    schedule = flat_run(platform, operation).plan.schedule
    figure = gantt_figure(schedule, title="flat")
    sends = sum(isinstance(e, Send) for e in schedule.events)
    assert sends == len(schedule.events) > 0
    # a send is busy on two ports: the sender's and the receiver's
    assert bar_count(figure) == 2 * len(schedule.events)
    rows = {row for trace in figure.data for row in trace.y}
    assert {"Ps send port", "Pa receive port", "Pa send port", "P1 receive port"} <= rows
    assert figure.layout.xaxis.title.text == f"time ({TIME_UNIT})"
    hovers = [h for trace in figure.data for h in trace.hovertext]
    assert any("Pa → P0" in h and "start 1, end 5/3" in h for h in hovers)


def test_gantt_shares_one_port_row_when_unidirectional_and_shows_the_cpu() -> None:
    platform, operation = reduce_star()
    schedule = flat_run(platform, operation).plan.schedule
    sends = sum(isinstance(e, Send) for e in schedule.events)
    computes = sum(isinstance(e, Compute) for e in schedule.events)
    assert computes == 3
    figure = gantt_figure(schedule)
    assert bar_count(figure) == 2 * sends + computes
    rows = {row for trace in figure.data for row in trace.y}
    assert rows == {"P0 port", "P0 CPU", "P1 send port", "P2 send port", "P3 send port"}
    cpu = [(b, d) for trace in figure.data for y, b, d in zip(trace.y, trace.base, trace.x,
                                                                 strict=True) if y == "P0 CPU"]
    assert all(d == 0.5 for _, d in cpu)  # P0's compute time
    assert {trace.name for trace in figure.data} >= {"v[0,1]", "v[0,2]", "v[0,3]"}


def test_gantt_draws_a_computation_of_no_time_as_a_diamond() -> None:
    # Seen in Chromium on reduce-sender-times (compute time 0): every CPU row was
    # empty, and the legend listed items, v{4,7}, that no bar showed.
    platform = Platform.build({"P0": 0, "P1": 0, "P2": 0}, [("P1", "P0", 1), ("P2", "P0", 2)])
    operation = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    plan = get_planner("flat").plan(platform, operation)
    assert plan.schedule is not None
    assert replay(plan.schedule).feasible
    computes = [e for e in plan.schedule.events if isinstance(e, Compute)]
    assert len(computes) == 2
    figure = gantt_figure(plan.schedule)
    diamonds = [t for t in figure.data if isinstance(t, go.Scatter)]
    assert sorted(x for t in diamonds for x in t.x) == sorted(float(e.start) for e in computes)
    assert {y for t in diamonds for y in t.y} == {"P0 CPU"}
    assert all(t.marker.symbol == "diamond-tall" for t in diamonds)
    assert all("duration 0" in h for t in diamonds for h in t.hovertext)
    bars = [t for t in figure.data if isinstance(t, go.Bar)]
    assert all(d > 0 for t in bars for d in t.x)  # no bar of length 0 left
    assert all(t.showlegend for t in diamonds)  # items made by a computation only
    assert {t.name for t in diamonds} == {str(e.output) for e in computes}
    # an item's bars and diamonds share a legend group; groups are not spaced apart
    # (a gap per group had made a 4-port chart's 5-item legend scroll)
    assert figure.layout.legend.tracegroupgap == 0


def _flat_reduce_of_ten_leaves() -> Schedule:
    """``flat``'s reduce onto P0 of 10 leaves: 12 Gantt rows, 20 legend items."""
    leaves = [f"P{i}" for i in range(1, 11)]
    platform = Platform.build({"P0": 1, **dict.fromkeys(leaves, 1)},
                              [(leaf, "P0", 1) for leaf in leaves])
    operation = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    plan = get_planner("flat").plan(platform, operation)
    assert plan.schedule is not None
    return plan.schedule


def test_gantt_is_tall_enough_for_its_legend() -> None:
    # Seen in Chromium on reduce-fibonacci, greedy (reducers: 2): 13 items on 10 rows,
    # the legend was cut after 12 and scrolled.  A flat reduce onto P0 of 10 leaves:
    # 12 rows, 20 items (10 leaves' v[i,i] sent, 10 partial results computed).
    schedule = _flat_reduce_of_ten_leaves()
    figure = gantt_figure(schedule)
    items = {t.name for t in figure.data}
    rows = {y for t in figure.data for y in t.y}
    assert (len(items), len(rows)) == (20, 12)
    layout = figure.layout
    plot = layout.height - layout.margin.t - 80  # plotly's default bottom margin
    assert plot >= 30 + 20 * len(items)  # the legend's title, and 20 pixels an item


@pytest.mark.slow
@needs_chromium
def test_gantt_legend_does_not_scroll_in_headless_chromium(tmp_path: Path) -> None:
    schedule = _flat_reduce_of_ten_leaves()
    page = tmp_path / "gantt.html"
    gantt_figure(schedule).write_html(page, include_plotlyjs=True)
    seen = drawn(page, tmp_path)
    assert seen["errors"] == []
    (figure,) = seen["figures"]
    assert figure["drawn"]
    assert not figure["legend_scrolls"]


def test_gantt_bars_last_as_long_as_the_engine_says_on_a_link_with_latency() -> None:
    # latency 1/2, bandwidth 4: a half of a message of size 2 lasts 1/2 + 1/4 = 3/4
    # (the engine's Link.duration), not part * size * c = 1/2 * 2 * 3/4 = 3/4 by chance:
    # size 4 tells them apart, 1/2 + 1/2 = 1 against 1/2 * 4 * 3/4 = 3/2.
    platform = Platform((Node("A"), Node("B")), (Link.of_bandwidth("A", "B", 4, "1/2"),),
                        PortModel.parse("multiport"))
    operation = Operation(OperationKind.BROADCAST, source="A", size=F(4)).resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0, "part": "1/2"},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 1, "part": "1/2"},
    ])
    assert replay(schedule).feasible
    figure = gantt_figure(schedule)
    durations = [d for trace in figure.data for d in trace.x]
    assert durations == [1.0] * 4
    # `multiport` without k: one port per link, no "k=None" in the row names
    rows = {row for trace in figure.data for row in trace.y}
    assert rows == {"A send ports (one per link)", "B receive ports (one per link)"}
    hovers = [h for trace in figure.data for h in trace.hovertext]
    assert any("start 1, end 2" in h for h in hovers)


def test_gantt_names_the_port_count_of_multiport_k() -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)], "multiport:2")
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}])
    rows = {row for trace in gantt_figure(schedule).data for row in trace.y}
    assert rows == {"A send ports (k=2)", "B receive ports (k=2)"}


def _rows_and_spans(figure: go.Figure) -> dict[str, list[tuple[float, float]]]:
    """Per Gantt row, the (start, end) of its bars, read back from the figure."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for trace in figure.data:
        if isinstance(trace, go.Bar):
            for row, base, length in zip(trace.y, trace.base, trace.x, strict=True):
                spans.setdefault(row, []).append((base, base + length))
    return spans


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    """Brute force: the most intervals [start, end) that hold one instant (a start)."""
    return max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)


@pytest.mark.parametrize("model", ["multiport:3", "multiport"])
def test_gantt_lays_concurrent_multiport_transfers_on_separate_lanes(model: str) -> None:
    # A sends to B, C, D at once (B and C twice in a row): on one row the bars would
    # hide each other; on lanes, none overlaps another and there are as many lanes as
    # transfers at one time (3), named by port (k=3) or by the links they carry.
    platform = Platform.build(["A", "B", "C", "D"],
                              [("A", "B", 1), ("A", "C", 1), ("A", "D", 2)], model)
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    sends = [("B", 0), ("C", 0), ("D", 0), ("B", 1), ("C", 1), ("D", 2)]
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": dst, "item": "b", "start": start}
        for dst, start in sends])
    assert replay(schedule).feasible
    figure = gantt_figure(schedule)
    spans = _rows_and_spans(figure)
    assert sum(len(s) for s in spans.values()) == 2 * len(sends)
    for row, row_spans in spans.items():
        assert _most_at_once(row_spans) == 1, row
    send_rows = [row for row in figure.layout.yaxis.categoryarray if row.startswith("A send")]
    if model == "multiport:3":
        assert send_rows == ["A send port 1 of 3", "A send port 2 of 3", "A send port 3 of 3"]
    else:
        # each link keeps its own lane here (a lane takes back the link it last carried)
        assert send_rows == ["A send lane 1: → B", "A send lane 2: → C", "A send lane 3: → D"]
    # receive rows see one transfer at a time: kept whole, as before
    assert sum(1 for row in spans if "receive" in row) == 3
    assert "lanes" in figure.layout.title.text


def test_gantt_lanes_number_the_most_transfers_at_once_on_random_schedules() -> None:
    rng = random.Random(8)
    nodes = ["S", *(f"T{i}" for i in range(6))]
    platform = Platform.build(nodes, [("S", t, 1) for t in nodes[1:]], "multiport")
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    for _ in range(20):
        # each link one transfer at a time (starts one apart), links overlapping freely
        events = [{"kind": "send", "src": "S", "dst": t, "item": "b",
                   "start": F(rng.randrange(4)) + 2 * j}
                  for t in nodes[1:] for j in range(rng.randrange(1, 4))]
        schedule = Schedule.from_dicts(platform, operation, events)
        expected = _most_at_once([(float(e["start"]), float(e["start"]) + 1) for e in events])
        spans = _rows_and_spans(gantt_figure(schedule))
        send_rows = [row for row in spans if row.startswith("S send")]
        assert len(send_rows) == (expected if expected > 1 else 1)
        assert all(_most_at_once(spans[row]) == 1 for row in send_rows)
        assert sum(len(spans[row]) for row in send_rows) == len(events)


def test_gantt_of_a_periodic_schedule_marks_the_period() -> None:
    platform = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", "1/2")])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": "1/2", "lag": 1},
    ], period=1)
    figure = gantt_figure(schedule, title="lp")
    assert bar_count(figure) == 4
    assert "one period" in figure.layout.title.text
    assert any(shape.type == "line" and shape.x0 == 1 for shape in figure.layout.shapes)
    assert any("lag 1" in h for trace in figure.data for h in trace.hovertext)


def test_gantt_of_an_infeasible_schedule_shows_the_events_in_conflict(report_html: str) -> None:
    # Seen in Chromium: Ps sends m[P0] over [0, 1] and m[P1] over [1/2, 3/2]; the
    # second bar covered the first, and the chart looked like a valid schedule.
    platform, operation = scatter_toy()
    run = violating_run(platform, operation)
    assert run.plan.schedule is not None
    figure = gantt_figure(run.plan.schedule, title="by-hand", violations=run.violations)
    assert "infeasible: 3 violation(s); the 2 event(s) drawn" in figure.layout.title.text
    for trace in figure.data:  # both events are in the port conflict: all 4 bars flagged
        assert list(trace.marker.opacity) == [0.6, 0.6]
        assert list(trace.marker.line.color) == ["#c0392b", "#c0392b"]
        assert all("violation: port_conflict" in h for h in trace.hovertext)
    clean = gantt_figure(run.plan.schedule, title="by-hand")
    assert "infeasible" not in clean.layout.title.text
    assert all(t.marker.opacity is None for t in clean.data)  # opaque
    assert all(t.marker.line.color == "white" for t in clean.data)
    assert has(report_html, "infeasible: 3 violation(s)")


def test_gantt_bars_of_a_pixel_or_two_have_no_white_outline() -> None:
    # Seen in Chromium on allgather-dgx-a100: receive ports full of short transfers
    # looked pale, their 1-pixel white outlines covering their colour.
    platform = Platform.build(["A", "B", "C"], [("A", "C", 1), ("A", "B", 1000)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "A", "dst": "C", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 1}])
    (bars,) = gantt_figure(schedule).data
    assert list(bars.x) == [1, 1, 1000, 1000]  # 1 of 1,001 time units: about one pixel
    assert list(bars.marker.line.width) == [0, 0, 1, 1]


def test_gantt_is_capped_with_a_visible_note() -> None:
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    events = [Send("A", "B", operation.initial_items(t)["A"][0], F(t))
              for t in range(GANTT_EVENT_CAP + 5)]
    schedule = Schedule(platform, operation, tuple(events))
    figure = gantt_figure(schedule)
    assert bar_count(figure) == 2 * GANTT_EVENT_CAP
    # one event per time unit from 0: the drawing is whole before time 2,000 (seen in
    # Chromium, the time axis beyond the last drawn event looked idle, not cut)
    assert (f"showing the first {GANTT_EVENT_CAP:,} of {GANTT_EVENT_CAP + 5:,} events "
            f"(earliest starts: every event starting before {GANTT_EVENT_CAP})") in \
        figure.layout.title.text
    # too many items for colours: grouped by instance or by kind instead
    assert len(figure.data) <= 24


def test_throughput_figure_shows_measures_and_exact_bounds(outcome: Any) -> None:
    figure = throughput_figure(outcome.results)
    measured, bound = figure.data
    assert list(measured.x) == ["flat", "lp", "snf", "by-hand"]
    assert bound.text[1] == "1/2"
    assert bound.y[1] == 0.5
    assert THROUGHPUT_UNIT in figure.layout.yaxis.title.text
    assert figure.layout.title.text
    assert any("unsupported" in a.text for a in figure.layout.annotations)


def test_planners_run_twice_keep_their_own_bars() -> None:
    platform, operation = reduce_star()
    runs = [flat_run(platform, operation), flat_run(platform, operation)]
    # the same planner with the same options: numbered, in a way no option looks like
    assert list(throughput_figure(runs).data[0].x) == ["flat", "flat #2"]
    assert list(makespan_figure(runs).data[0].x) == ["flat", "flat #2"]


def test_throughput_figure_without_bounds_has_one_trace() -> None:
    platform, operation = reduce_star()
    figure = throughput_figure([flat_run(platform, operation)])
    assert len(figure.data) == 1


def test_figures_take_a_run_scenario_result_and_name_a_wrong_argument(outcome: Any) -> None:
    """``throughput_figure(run_scenario(...))`` raised ``TypeError:
    'ScenarioResult' object is not iterable``; a list of ``PlanResult``\\s
    ``AttributeError: ... no attribute 'label'``; ``gantt_figure(plan)`` and
    ``platform_figure("x")`` an ``AttributeError``.  The result is taken as
    its runs; a wrong argument is one error of portsim's family naming it."""
    from portsim.simulator.errors import PlatformError, ScenarioError, ScheduleError

    whole = throughput_figure(outcome)
    assert whole.to_dict() == throughput_figure(outcome.results).to_dict()
    assert list(whole.data[0].x) == ["flat", "lp", "snf", "by-hand"]
    (bars,) = makespan_figure(outcome).data
    assert list(bars.text) == ["10/3"]
    plan = outcome.results[0].plan
    with pytest.raises(ScenarioError, match=r"^runs\[0\]: expected a PlannerRun .*PlanResult"):
        throughput_figure([plan])
    with pytest.raises(ScenarioError, match=r"^runs: expected the planner runs .*'str'"):
        makespan_figure("flat")  # type: ignore[arg-type]
    with pytest.raises(ScheduleError, match=r"a PlanResult: pass its \.schedule"):
        gantt_figure(plan)
    with pytest.raises(ScheduleError, match=r"a PlannerRun: pass its \.plan\.schedule"):
        gantt_figure(outcome.results[0])
    with pytest.raises(PlatformError, match=r"^platform: expected a Platform .*Scenario'"):
        platform_figure(outcome.scenario)


def test_the_run_report_names_an_outcome_that_is_not_a_run(outcome: Any, tmp_path: Path) -> None:
    """``write_run_report(plan, path)`` raised ``AttributeError: 'PlanResult'
    object has no attribute 'scenario'``; nothing is written now."""
    from portsim.simulator.errors import ScenarioError

    for given, name in ((outcome.results[0].plan, "PlanResult"), (list(outcome.results), "list")):
        with pytest.raises(ScenarioError, match=rf"^outcome: expected the result of "
                                                rf"run_scenario\(scenario\) \(got '{name}'\)"):
            write_run_report(given, tmp_path / "r.html")  # type: ignore[arg-type]
        with pytest.raises(ScenarioError, match=r"^outcome: expected the result"):
            render_run_report(given)  # type: ignore[arg-type]
    assert not (tmp_path / "r.html").exists()


def test_makespan_figure_only_shows_one_shot_planners(outcome: Any) -> None:
    figure = makespan_figure(outcome.results)
    (bars,) = figure.data
    assert list(bars.x) == ["flat"]
    assert list(bars.text) == ["10/3"]
    assert TIME_UNIT in figure.layout.yaxis.title.text


def test_platform_figure_draws_nodes_links_and_routers() -> None:
    platform, operation = scatter_toy()
    figure = platform_figure(platform, operation)
    by_name = {trace.name: trace for trace in figure.data}
    assert by_name["router"].marker.symbol == "square"
    assert list(by_name["router"].text) == ["R"]
    assert list(by_name["source"].text) == ["Ps"]
    assert set(by_name["target"].text) == {"P0", "P1"}
    costs = by_name["link cost c"]
    assert len(costs.x) == 7  # Pa <-> P0 drawn once
    assert any("Pb → P0: c = 4/3" in h for h in costs.hovertext)
    assert len(figure.layout.annotations) == 7  # one arrow per drawn link
    assert figure.layout.title.text.startswith("Platform: 6 nodes")


@pytest.mark.parametrize(("n", "costs", "arrows"), [(9, True, 36), (10, False, 45),
                                                    (18, False, 0)])
def test_platform_subtitle_says_which_link_marks_are_left_out(
        n: int, costs: bool, arrows: int) -> None:
    # Seen in Chromium on allgather-dgx-a100 (48 linked pairs): the subtitle said
    # "number on a link: its cost c" over a drawing with no number on any link.
    from portsim.scenarios.generators import complete_platform

    platform = complete_platform(n, c="2/3", compute=1, port_model="bidirectional")
    figure = platform_figure(platform)
    subtitle = figure.layout.title.text.split("<br>", 1)[1]
    written = [t for t in next(t for t in figure.data if t.name == "link cost c").text if t]
    pairs = n * (n - 1) // 2
    assert len(written) == (pairs if costs else 0)
    assert set(written) <= {"2/3"}
    assert ("number on a link: its cost c" in subtitle) is costs
    assert (f"link costs not written ({pairs} linked pairs" in subtitle) is not costs
    assert len(figure.layout.annotations) == arrows
    assert ("no arrowheads" in subtitle) is (arrows == 0)


def _screen(figure: go.Figure, x: float, y: float) -> tuple[float, float]:
    """Layout units to pixels of a 1,100 x 420 plot area (the page's), from the node span."""
    nodes = [t for t in figure.data if t.mode == "markers+text" and t.name != "link cost c"]
    xs = [v for t in nodes for v in t.x]
    ys = [v for t in nodes for v in t.y]
    return ((x - min(xs)) / (max(xs) - min(xs)) * 1100,
            (y - min(ys)) / (max(ys) - min(ys)) * 420)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_platform_cost_labels_of_crossing_links_do_not_coincide(asymmetric: bool) -> None:
    # Seen in Chromium: on a 4-node complete platform the two diagonals cross at their
    # middles, where both costs were written on top of each other.
    nodes = ["A", "B", "C", "D"]
    links = [(s, d, F(1 + (i if asymmetric else 0), 3))
             for i, (s, d) in enumerate((s, d) for s in nodes for d in nodes if s != d)]
    figure = platform_figure(Platform.build(nodes, links))
    costs = next(t for t in figure.data if t.name == "link cost c")
    assert len(costs.x) == (12 if asymmetric else 6)
    assert all(costs.text)
    points = [_screen(figure, x, y) for x, y in zip(costs.x, costs.y, strict=True)]
    # a label of a few characters at 11 px: two closer than 24 px overlap
    closest = min(math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1:])
    assert closest > 24
    # each number sits on its own link, 40% of the way from its sender
    by_text = {t: (x, y) for t, x, y in zip(costs.text, costs.x, costs.y, strict=True)}
    if asymmetric:
        nodes_at = {n: (x, y) for t in figure.data if t.name != "link cost c" and t.text
                    for n, x, y in zip(t.text, t.x, t.y, strict=True)}
        for s, d, c in links:
            (xs, ys), (xd, yd) = nodes_at[s], nodes_at[d]
            x, y = by_text[format_rational(c)]
            assert x == pytest.approx(xs + 0.4 * (xd - xs))
            assert y == pytest.approx(ys + 0.4 * (yd - ys))


@pytest.mark.slow
@needs_chromium
def test_platform_texts_do_not_overlap_in_headless_chromium(tmp_path: Path) -> None:
    nodes = ["A", "B", "C", "D"]
    links = [(s, d, F(1 + i, 3))
             for i, (s, d) in enumerate((s, d) for s in nodes for d in nodes if s != d)]
    page = tmp_path / "platform.html"
    platform_figure(Platform.build(nodes, links)).write_html(page, include_plotlyjs=True)
    seen = drawn(page, tmp_path)
    assert seen["errors"] == []
    (figure,) = seen["figures"]
    assert figure["drawn"]
    assert figure["text_overlaps"] == 0


@pytest.mark.parametrize("n", [4, 6])
def test_platform_node_names_are_written_away_from_their_links(n: int) -> None:
    # Seen in Chromium on allgather-dgx-a100: arrowheads ran through the names written
    # above the nodes (P10, nic1_6). A name goes on the side farthest from the links.
    from portsim.scenarios.generators import complete_platform

    figure = platform_figure(complete_platform(n, c=1, compute=1, port_model="bidirectional"))
    places = {"top center": 90, "top right": 45, "middle right": 0, "bottom right": -45,
              "bottom center": -90, "bottom left": -135, "middle left": 180, "top left": 135}
    nodes = [t for t in figure.data if t.name != "link cost c" and t.text]
    at = {name: _screen(figure, x, y)
          for t in nodes for name, x, y in zip(t.text, t.x, t.y, strict=True)}
    for trace in nodes:
        for name, place in zip(trace.text, trace.textposition, strict=True):
            (x, y) = at[name]
            for other, (xo, yo) in at.items():
                if other != name:
                    link = math.degrees(math.atan2(yo - y, xo - x))
                    gap = abs((places[place] - link + 180) % 360 - 180)
                    # n - 1 links leave gaps of 360 / (n - 1) degrees at least once
                    assert gap >= 180 / (n - 1) - 22.5, (name, place, other)


def test_platform_layout_is_reproducible() -> None:
    platform, operation = scatter_toy()
    first = platform_figure(platform, operation).to_json()
    assert platform_figure(platform, operation).to_json() == first


def test_tables_scroll_in_their_own_box(report_html: str) -> None:
    # Seen in Chromium in a 1,024-pixel window: the results table (11 columns) ran
    # past the page's right edge, its feasible and violations columns out of sight.
    assert report_html.count('<div class="table-scroll"><table') == report_html.count("<table")
    assert report_html.count("<table") >= 2  # results and violations
    assert ".table-scroll { overflow-x: auto; max-width: 100%; }" in report_html


@pytest.mark.slow
@needs_chromium
def test_report_fits_a_narrow_window_in_headless_chromium(report_html: str,
                                                          tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(report_html, encoding="utf-8")
    seen = drawn(page, tmp_path, width=1024)
    assert seen["errors"] == []
    assert seen["overflow"] == 0


# -- in a real browser -------------------------------------------------------------

@pytest.mark.slow
@needs_chromium
def test_report_renders_in_headless_chromium(report_html: str, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(report_html, encoding="utf-8")
    seen = drawn(page, tmp_path)
    assert seen["errors"] == []
    titles = [f["title"] for f in seen["figures"]]
    assert len(titles) == report_html.count('class="plotly-graph-div"') >= 5
    for figure in seen["figures"]:
        assert figure["drawn"], figure["title"]
        assert figure["traces"] >= 1, figure["title"]
        assert not figure["title_meets_ytitle"], figure["title"]
        assert not figure["title_meets_legend"], figure["title"]
        assert figure["ytitle_inside"], figure["title"]
    assert any(t.startswith("by-hand: one-shot scheduleinfeasible: 3 violation(s)")
               for t in titles), titles
    assert seen["overflow"] == 0
    shot = tmp_path / "shot.png"
    assert CHROMIUM is not None
    subprocess.run(
        [CHROMIUM, *FLAGS, "--window-size=1400,3000",
         f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    assert shot.stat().st_size > 50_000  # a blank page is a few kilobytes
