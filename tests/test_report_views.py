"""What a reader sees in the reports: labels, whiskers, identical series, titles, failures.

The study stores here are written row by row through the store's own API
(:class:`portsim.scenarios.study.store.ResultStore`), with makespans chosen so that
every expected figure is computed by hand; the charts are read back from the
plotly JSON embedded in the HTML, as a browser would get them.
"""

from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import replace
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pytest
from browser import drawn, needs_chromium
from click.testing import CliRunner

from portsim.reports.figures import (
    CONVERGENCE_PERIODS,
    MODEBAR_SPACE,
    keep_series_visible,
    throughput_figure,
)
from portsim.reports.html import CONVERGENCE_OPERATIONS, render_run_report
from portsim.reports.studies import RESULT_COLUMNS, ResultStore, load_results, write_study_report
from portsim.reports.studies.report import render_study_report, row_labels
from portsim.scenarios.asymptotic import asymptotic_study
from portsim.scenarios.cli import main
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.runner import PlannerRun, ScenarioResult, run_scenario
from portsim.simulator.errors import ScenarioError
from portsim.simulator.numbers import format_rational

ROOT = Path(__file__).resolve().parent.parent


# -- reading the page ------------------------------------------------------------------------

_NEW_PLOT = re.compile(r'Plotly\.newPlot\(\s*"[^"]+",\s*')


def figures(page: str) -> list[dict[str, Any]]:
    """Every figure of a page: ``{"data": [...], "layout": {...}}`` as plotly.js receives it."""
    decoder = json.JSONDecoder()
    found = []
    for match in _NEW_PLOT.finditer(page):
        data, end = decoder.raw_decode(page, match.end())
        rest = page[end:].lstrip()
        assert rest.startswith(",")
        layout, _ = decoder.raw_decode(rest[1:].lstrip())
        found.append({"data": data, "layout": layout})
    return found


def values(array: Any) -> list[float]:
    """A plotly array as numbers (plotly encodes numpy arrays as base64 typed arrays)."""
    if isinstance(array, dict) and "bdata" in array:
        return [float(v) for v in np.frombuffer(base64.b64decode(array["bdata"]),
                                                dtype=np.dtype(array["dtype"]))]
    return [float(v) for v in array]


def figure_titled(page: str, start: str) -> dict[str, Any]:
    matches = [f for f in figures(page) if f["layout"]["title"]["text"].startswith(start)]
    assert len(matches) == 1, [f["layout"]["title"]["text"] for f in figures(page)]
    return matches[0]


def table_labels(page: str, css: str) -> list[str]:
    """The first column of the table of class ``css``."""
    table = page.split(f'<table class="{css}">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr><td class="name">([^<]*)</td>', table)


# -- a hand-written store --------------------------------------------------------------------

DOCUMENT = {  # Canon-Antoniu's homogeneous reduce on 4 machines, d = c = 1
    "name": "hand",
    "platform": {"port_model": "unidirectional",
                 "generator": {"type": "complete", "n": 4, "c": 1, "compute": 1}},
    "operation": {"type": "reduce", "target": "P0"},
    "planners": ["binomial", "fibonacci", "greedy", {"name": "greedy", "reducers": 2}],
}
PLANNERS = [("binomial", {}), ("fibonacci", {}), ("greedy", {}), ("greedy", {"reducers": 2})]
# makespans per planner over 4 seeds, at n = 4 and n = 8: fibonacci and greedy identical;
# binomial's ratios to the best are 1, 1, 1, 3/2 (mean 9/8, standard deviation 1/4)
MAKESPANS = {"binomial": [4, 4, 4, 6], "fibonacci": [4, 4, 4, 4], "greedy": [4, 4, 4, 4],
             "greedy (reducers: 2)": [5, 5, 6, 6]}


def stored_row(run_index: int, seed: int, n: int, planner_index: int, **fields: Any
               ) -> dict[str, Any]:
    name, options = PLANNERS[planner_index]
    row: dict[str, Any] = {column: None for column, _ in RESULT_COLUMNS}
    row.update(study="hand", run_key=f"k{run_index}", run_index=run_index, seed=seed,
               scenario="hand", planner_index=planner_index, planner=name,
               planner_options=json.dumps(options, sort_keys=True), operation="reduce",
               port_model="unidirectional", status="ok", message="", violations="[]",
               notes="[]", violation_count=0, elapsed=0.0,
               scenario_document=json.dumps(DOCUMENT, sort_keys=True))
    row["grid.platform.generator.n"] = n
    row.update(fields)
    return row


def write_store(directory: Path, *, failures: bool = False) -> None:
    store = ResultStore(directory, {"grid.platform.generator.n": pa.int64()})
    rows = []
    run = 0
    for n in (4, 8):
        for seed in range(4):
            for index, (name, options) in enumerate(PLANNERS):
                label = name + "".join(f" ({k}: {v})" for k, v in options.items())
                rows.append(stored_row(run, seed, n, index,
                                       makespan=str(MAKESPANS[label][seed])))
            run += 1
    if failures:
        rows[1] = stored_row(0, 0, 4, 1, status="error",
                             message="PlannerError: no path from P3 to P0")
        rows[2] = stored_row(0, 0, 4, 2, status="unsupported",
                             message="greedy does not handle this <port model>")
    store.append(rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("hand-study")
    write_store(directory)
    return directory


@pytest.fixture(scope="module")
def study_page(store: Path) -> str:
    return render_study_report(load_results(store))


# -- one label per planner row -----------------------------------------------------------------


def test_study_rows_are_labelled_with_their_options(store: Path) -> None:
    frame = load_results(store)
    labels = row_labels(frame)
    assert list(labels[:4]) == ["binomial", "fibonacci", "greedy", "greedy (reducers: 2)"]


def test_study_table_and_charts_use_the_same_labels(study_page: str) -> None:
    expected = ["binomial", "fibonacci", "greedy", "greedy (reducers: 2)"]
    assert table_labels(study_page, "summary") == expected
    for title in ("Makespan of one operation", "Makespan / best makespan"):
        names = [t["name"] for t in figure_titled(study_page, title)["data"]]
        assert names == expected
    # the two greedy entries are two series: 8 rows each, not 16 in one
    ratio = figure_titled(study_page, "Makespan / best makespan")["data"]
    assert values(ratio[3]["y"]) == [pytest.approx(float(F(11, 2) / 4))] * 2


def test_run_report_table_and_charts_use_the_same_labels() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    runs = (PlannerRun("lp", "scatter", "bidirectional", "ok", throughput_bound=F(1, 2),
                       period=F(12), measured_throughput=0.5, completed=10, horizon=F(20),
                       feasible=True),
            PlannerRun("lp", "scatter", "bidirectional", "ok", throughput_bound=F(1, 2),
                       period=F(48), measured_throughput=0.5, completed=10, horizon=F(20),
                       feasible=True, options=(("split", False),)))
    labels = ["lp", "lp (split: False)"]
    assert list(throughput_figure(runs).data[0].x) == labels
    page = render_run_report(ScenarioResult(scenario, runs))
    assert table_labels(page, "results") == labels
    assert figure_titled(page, "Throughput by planner")["data"][0]["x"] == labels
    convergence = figure_titled(page, "completed(K) / (TP·K)")
    assert [t["name"] for t in convergence["data"]] == labels


# -- whiskers ------------------------------------------------------------------------------


def test_ratio_whiskers_never_go_below_one(study_page: str) -> None:
    ratio = figure_titled(study_page, "Makespan / best makespan")
    for trace in ratio["data"]:
        error = trace["error_y"]
        lows = [y - below for y, below in zip(values(trace["y"]), values(error["arrayminus"]),
                                              strict=True)]
        assert min(lows) >= 1 - 1e-12, trace["name"]
    binomial = ratio["data"][0]
    # mean 9/8; whiskers from the smallest (1) to the largest (3/2) ratio, not 9/8 ± 1/4
    assert values(binomial["y"]) == [1.125, 1.125]
    assert values(binomial["error_y"]["arrayminus"]) == [0.125, 0.125]
    assert values(binomial["error_y"]["array"]) == [0.375, 0.375]


# -- grid points that are whole generators (the fabrics study) ------------------------------

FABRICS = ['{"n": 8, "type": "ring"}', '{"cols": 3, "rows": 3, "type": "torus"}',
           '{"servers": 1, "type": "dgx_a100"}', '{"k": 4, "type": "fat_tree"}']


def test_a_linear_grid_axis_ticks_at_the_grid_values(study_page: str) -> None:
    # Seen in Chromium on the snf-three-class study: n = 10, 12, 14 ticked at
    # 10, 10.5, 11, ..., platforms of 10.5 nodes.
    for title in ("Makespan of one operation", "Makespan / best makespan"):
        axis = figure_titled(study_page, title)["layout"]["xaxis"]
        assert axis["tickvals"] == [4, 8]
        assert axis["ticktext"] == ["4", "8"]


def write_fabrics_store(directory: Path) -> None:
    """Two planners' rows at four grid points named by whole generators."""
    store = ResultStore(directory, {"grid.platform.generator": pa.string()})
    rows = []
    for run, generator in enumerate(FABRICS):
        for index in range(2):
            row = stored_row(run, 0, 4, index, makespan="4", efficiency=0.5 + index / 4)
            del row["grid.platform.generator.n"]
            rows.append({**row, "grid.platform.generator": generator})
    store.append(rows)


def test_long_grid_points_leave_room_for_the_axis_titles(tmp_path: Path) -> None:
    # Seen in Chromium on the fabrics study: the grid points, written on a slant,
    # took the plot area's height and its y-axis title ran over the chart's title.
    write_fabrics_store(tmp_path)
    page = render_study_report(load_results(tmp_path))
    for title in ("Measured throughput / bound", "Makespan of one operation"):
        layout = figure_titled(page, title)["layout"]
        axis = layout["xaxis"]
        assert axis["tickangle"] == 0
        assert axis["tickvals"] == [f"platform.generator={g}" for g in FABRICS]
        lines = [line for text in axis["ticktext"] for line in text.split("<br>")]
        # lines of 28 characters, or one word: a quarter of the width holds 30
        assert max(map(len, lines)) == len('platform.generator={"servers":')
        assert "&quot;" not in " ".join(lines)
        assert "&lt;" not in " ".join(lines)
        deepest = max(text.count("<br>") + 1 for text in axis["ticktext"])  # 3 lines (torus)
        assert deepest == 3
        plot_height = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        assert layout["margin"]["b"] >= 60 + 15 * (deepest - 1)
        # the y-axis title (14 px font, under 8 px a character) fits along the plot area
        assert 8 * len(layout["yaxis"]["title"]["text"]) <= plot_height


@pytest.mark.slow
@needs_chromium
def test_long_grid_points_leave_room_for_the_axis_titles_in_chromium(tmp_path: Path) -> None:
    write_fabrics_store(tmp_path / "store")
    page = tmp_path / "report.html"
    page.write_text(render_study_report(load_results(tmp_path / "store")), encoding="utf-8")
    seen = drawn(page, tmp_path)
    assert seen["errors"] == []
    assert len(seen["figures"]) >= 3
    for figure in seen["figures"]:
        assert figure["drawn"], figure["title"]
        assert not figure["title_meets_ytitle"], figure["title"]
        assert figure["ytitle_inside"], figure["title"]


# -- identical series ----------------------------------------------------------------------


def test_identical_series_stay_visible(study_page: str) -> None:
    for title in ("Makespan of one operation", "Makespan / best makespan"):
        figure = figure_titled(study_page, title)
        traces = {t["name"]: t for t in figure["data"]}
        first, second = traces["fibonacci"], traces["greedy"]
        assert values(first["y"]) == values(second["y"])  # they coincide...
        styles = {(t["marker"]["symbol"], t["line"]["dash"]) for t in figure["data"]}
        assert len(styles) == len(figure["data"])  # ...but every series is drawn its own way
        assert first["marker"]["size"] > second["marker"]["size"]  # the later one inside
        assert first["line"]["width"] > second["line"]["width"]
        notes = " ".join(a.get("text", "") for a in figure["layout"]["annotations"])
        assert "greedy: identical to fibonacci" in notes
        assert "binomial: identical" not in notes


def test_keep_series_visible_on_distinct_series_writes_no_note() -> None:
    figure = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name="a"),
                        go.Scatter(x=[1, 2], y=[1, 3], name="b")])
    assert keep_series_visible(figure) == []
    assert not figure.layout.annotations
    assert figure.data[0].marker.size == figure.data[1].marker.size


# -- titles clear of the toolbar ---------------------------------------------------------------


def test_every_title_sits_below_the_toolbar(study_page: str) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    run_page = render_run_report(run_scenario(scenario))
    shown = figures(study_page) + figures(run_page)
    assert len(shown) >= 10
    for figure in shown:
        title = figure["layout"]["title"]
        assert title["yref"] == "container"
        assert title["pad"]["t"] >= MODEBAR_SPACE
        lines = title["text"].count("<br>") + 1
        assert figure["layout"]["margin"]["t"] >= MODEBAR_SPACE + 20 * lines


# -- the convergence chart of a run report ---------------------------------------------------


def test_run_report_has_the_convergence_chart() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    page = render_run_report(run_scenario(scenario))
    assert 'id="convergence"' in page
    chart = figure_titled(page, "completed(K) / (TP·K) over horizon K")
    # the toy's published bound (RR-4872, section 3.2): TP = 1/2
    assert "TP = 1/2" in chart["layout"]["title"]["text"]
    assert [t["name"] for t in chart["data"]] == ["flat", "lp"]
    # the same figures as the asymptotic study; the lp ratio tends to 1, none passes it
    study = asymptotic_study(scenario, periods=(1, 2, 5, 10, 20, 50, 100))
    assert CONVERGENCE_OPERATIONS >= 3 * 100  # 3 operations per lp period: nothing left out
    for trace in chart["data"]:
        expected = [float(r.ratio) for r in study.rows
                    if r.planner == trace["name"] and r.ratio is not None]
        assert values(trace["y"]) == pytest.approx(expected)
        assert max(values(trace["y"])) <= 1
    assert values(chart["data"][1]["y"])[-1] >= 0.9


def test_convergence_hover_gives_the_exact_horizon_and_ratio() -> None:
    # Seen hovering in Chromium: "ratio=0.6667" for lp's 2 operations of TP·K = 3, and
    # K written as plotly's float coordinate (1.8 for allgather-dgx-a100's period 9/5).
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    chart = figure_titled(render_run_report(run_scenario(scenario)),
                          "completed(K) / (TP·K) over horizon K")
    study = asymptotic_study(scenario, periods=CONVERGENCE_PERIODS)
    lp = chart["data"][1]
    rows = [r for r in study.rows if r.planner == "lp" and r.ratio is not None]
    assert [c[3:] for c in lp["customdata"]] == [
        [format_rational(r.horizon), format_rational(r.ratio)] for r in rows]
    assert lp["customdata"][0][3:] == ["6", "2/3"]  # one period: 2 of TP·K = 1/2 · 6 = 3
    assert "K=%{customdata[3]}" in lp["hovertemplate"]
    assert "ratio=%{customdata[4]}" in lp["hovertemplate"]
    assert "%{x}" not in lp["hovertemplate"]


# The lp bound of a study's run (a non-commutative reduce on 64 random nodes, seed 2),
# certified exact: 73 digits over 73, which the chart's title wrote whole, past its edge.
LONG_BOUND = F(911956065728085665306825962421809249269047379526582201132824072045823653,
               9601350121094864070457453579642542580874549804392243531647788522515922230)


def test_convergence_title_writes_a_long_bound_as_a_decimal() -> None:
    from portsim.reports.figures import convergence_figure
    from portsim.reports.html import _operations_text
    from portsim.scenarios.asymptotic import AsymptoticRow, AsymptoticStudy

    period = F(69781, 60)
    rows = tuple(AsymptoticRow("lp", k, period * k, 10 * k, LONG_BOUND * period * k,
                               F(1, 2), None) for k in (1, 2))
    figure = convergence_figure(AsymptoticStudy(LONG_BOUND, period, rows, ()), ["lp"])
    assert figure is not None
    title = figure.layout.title.text
    flat = title.replace("<br>", " ")
    assert f"TP = ~{float(LONG_BOUND):.6g} (exact: a rational of 146 characters)" in flat
    assert "lp period 69781/60" in flat
    assert max(len(line) for line in title.split("<br>")) <= 90
    # the note under the chart: one period holds TP times the period, about 110 operations
    per_period = LONG_BOUND * period
    assert _operations_text(per_period) == f"about {float(per_period):,.0f}" == "about 110"
    assert _operations_text(F(1100, 3)) == "1100/3 (about 367)"
    # a whole count once (mix.yaml of a new user's trial: "1470 (about 1,470)")
    assert _operations_text(F(21, 94) * 6580) == "1470"


def test_run_report_tells_its_long_steps_before_they_start() -> None:
    # a run without lp: the report computes the bound itself, then replays each planner
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    flat_only = replace(scenario, planners=tuple(p for p in scenario.planners if p.name == "flat"))
    told: list[str] = []
    render_run_report(run_scenario(flat_only), progress=told.append)
    # how long it may take: the lp's default time limit (--lp-time-limit's below)
    assert told[0] == "convergence chart: the lp bound (time limit 300 s)"
    # every horizon of the chart, for flat and for the lp row the chart adds
    steps = [f"{name}: replaying {k} periods" for name in ("flat", "lp")
             for k in CONVERGENCE_PERIODS]
    assert [t for t in told if "replaying" in t] == steps
    told.clear()
    render_run_report(run_scenario(flat_only), progress=told.append, lp_time_limit=2.5)
    assert told[0] == "convergence chart: the lp bound (time limit 2.5 s)"
    # a listed lp gives the chart its result: nothing to wait for there
    told.clear()
    render_run_report(run_scenario(scenario), progress=told.append)
    assert told[0] == "convergence chart: the lp bound"


# -- failed rows -----------------------------------------------------------------------------


def test_report_shows_failed_rows_instead_of_refusing_the_store(tmp_path: Path) -> None:
    write_store(tmp_path, failures=True)
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="failed"' in page
    failed = page.split('<table class="failed">', 1)[1].split("</table>", 1)[0]
    assert failed.count("<tr><td") == 2
    assert "PlannerError: no path from P3 to P0" in failed
    assert "greedy does not handle this &lt;port model&gt;" in failed
    summary = page.split('<table class="summary">', 1)[1].split("</table>", 1)[0]
    assert "<th>error</th>" in summary
    assert "<th>unsupported</th>" in summary


def test_report_of_a_store_where_a_planner_never_ran(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, {"grid.platform.generator.n": pa.int64()})
    document = {**DOCUMENT, "planners": ["binomial", "lpp"]}
    rows = []
    for run in range(2):
        rows.append(stored_row(run, 0, 4 + 4 * run, 0, makespan="4",
                               scenario_document=json.dumps(document)))
        rows.append(stored_row(run, 0, 4 + 4 * run, 1, planner="lpp", status="error",
                               scenario_document=json.dumps(document),
                               message="PlannerError: unknown planner (got 'lpp')"))
    store.append(rows)
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "unknown planner (got &#x27;lpp&#x27;)" in page
    makespan = figure_titled(page, "Makespan of one operation")
    notes = " ".join(a.get("text", "") for a in makespan["layout"]["annotations"])
    assert "not drawn, no valid row: lpp" in notes
    assert "Schedule of binomial" in page


# -- --run and --planner -------------------------------------------------------------------


def test_cli_rejects_an_unknown_run_or_planner(store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path / "r.html")
    bad_run = runner.invoke(main, ["report", str(store), "-o", out, "--run", "999"])
    assert bad_run.exit_code == 2
    assert bad_run.output.strip().splitlines() == [
        f"portsim: error: {store}: --run: no such run in the study; valid runs: 0-7 "
        "(got 999)"]
    bad_planner = runner.invoke(main, ["report", str(store), "-o", out, "--planner", "nope"])
    assert bad_planner.exit_code == 2
    assert bad_planner.output.strip().splitlines() == [
        f"portsim: error: {store}: --planner: no such planner in the study; valid planners: "
        "binomial, fibonacci, greedy, greedy (reducers: 2) (got 'nope')"]
    assert not Path(out).exists()


def test_planner_is_chosen_by_label_or_name(store: Path) -> None:
    frame = load_results(store)
    page = render_study_report(frame, run_index=5, planner="greedy (reducers: 2)")
    assert "Schedule of greedy (reducers: 2)" in page
    assert "run 5 (platform.generator.n=8, seed 1)" in page
    assert "Schedule of fibonacci" in render_study_report(frame, planner="fibonacci")
    with pytest.raises(ScenarioError, match="valid runs: 0-7"):
        render_study_report(frame, run_index=8)


def test_study_report_tells_its_long_steps_before_they_start(store: Path) -> None:
    # run 5's planners are planned again for its convergence chart (none is lp: the bound
    # first), then the Gantt chart's planner once more
    told: list[str] = []
    render_study_report(load_results(store), run_index=5, planner="fibonacci",
                        progress=told.append)
    assert told[0] == "convergence chart: the lp bound (time limit 300 s)"
    assert "greedy (reducers: 2): planning" in told
    assert told[-1] == "fibonacci: planning for the Gantt chart"


def test_write_study_report_names_the_store(store: Path, tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        write_study_report(store, tmp_path / "r.html", planner="lp")
    assert str(caught.value).startswith(f"{store}: --planner: ")


def test_grid_points_without_a_number_are_drawn_in_the_grid_order(store: Path) -> None:
    # a grid over generators (the fabrics study): torus runs first, then ring; the
    # x axis used to sort the labels alphabetically (ring before torus)
    frame = load_results(store).rename(
        columns={"grid.platform.generator.n": "grid.platform.generator.type"})
    frame["grid.platform.generator.type"] = frame["grid.platform.generator.type"].map(
        {4: "torus", 8: "ring"}).astype("string")
    page = render_study_report(frame, run_index=0, planner="greedy")
    figure = figure_titled(page, "Makespan of one operation")
    order = ["platform.generator.type=torus", "platform.generator.type=ring"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "grid point"
    by_trace = {trace["name"]: (list(trace["x"]), values(trace["y"]))
                for trace in figure["data"]}
    # binomial: makespans 4, 4, 4, 6 over the seeds at both grid points
    assert by_trace["binomial"] == (order, [4.5, 4.5])
    assert by_trace["greedy (reducers: 2)"] == (order, [5.5, 5.5])
    assert figure["layout"]["xaxis"]["categoryarray"] == order


def test_series_named_by_a_json_grid_value_show_its_quotes(store: Path) -> None:
    # Seen in Chromium on a study over n and `operation: [{type: reduce, target: P0},
    # {type: allreduce}]`: the legend read `greedy [operation={&quot;target&quot;: ...}]`
    # (plotly writes no `&quot;`), and the page's contents `operation={"target": "p0"...`
    # (the whole title lower-cased).
    frame = load_results(store)
    operation = {4: '{"target": "P0", "type": "reduce"}', 8: '{"type": "<all>reduce"}'}
    frame["grid.operation"] = frame["grid.platform.generator.n"].map(operation).astype("string")
    page = render_study_report(frame, run_index=0, planner="greedy")
    names = {trace["name"] for trace in figure_titled(page, "Makespan of one operation")["data"]}
    assert 'binomial [operation={"target": "P0", "type": "reduce"}]' in names
    assert 'binomial [operation={"type": "&lt;all&gt;reduce"}]' in names
    nav = page.split("<nav>", 1)[1].split("</nav>", 1)[0]
    assert "platform of run 0 (platform.generator.n=4, operation={&quot;target&quot;: " \
           "&quot;P0&quot;" in nav
    assert ">summary<" in nav


def test_a_long_grid_value_is_cut_in_the_run_headings(store: Path) -> None:
    # A study over whole platforms (the gpu trial's): each heading and link of the
    # chosen run held the platform's 1,300 characters of JSON.
    frame = load_results(store)
    long = '{"links": [' + ", ".join(f'{{"src": "G{k}", "dst": "S", "c": "1"}}'
                                     for k in range(40)) + "]}"
    assert len(long) > 1300
    frame["grid.platform"] = pd.Series([long] * len(frame), dtype="string")
    page = render_study_report(frame, run_index=0, planner="greedy")
    nav = page.split("<nav>", 1)[1].split("</nav>", 1)[0]
    cut = html.escape(long[:79]) + "…"
    assert f"platform of run 0 (platform.generator.n=4, platform={cut}, seed 0)" in nav
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert max(len(h) for h in headings) < 300, headings


def test_default_run_is_the_first_where_the_planners_differ_the_most(store: Path) -> None:
    # The default used to be run 0 (canon-antoniu-fig2: n = 2, every tree alike).
    # By hand from MAKESPANS: longest over shortest makespan per seed is 5/4, 5/4,
    # 6/4, 6/4 (the same at n = 4 and n = 8): runs 2, 3, 6, 7 tie at 3/2; run 2 first.
    frame = load_results(store)
    spreads = {}
    for run in range(8):
        seed = run % 4
        values = [MAKESPANS[label][seed] for label in MAKESPANS]
        spreads[run] = F(max(values), min(values))
    best = max(spreads.values())
    assert best == F(3, 2)
    expected = min(run for run, spread in spreads.items() if spread == best)
    page = render_study_report(frame)
    assert f"run {expected} (platform.generator.n=4, seed {expected})" in page
    chosen = re.search(r'<p class="hint" id="chosen-run">(.*?)</p>', page)
    assert chosen is not None
    assert f"The charts below draw run {expected} " in chosen.group(1)
    assert "differ the most (makespan, longest over shortest: 3/2" in chosen.group(1)
    assert "--run I" in chosen.group(1)
    # --run keeps its word, and the page says the run was asked for
    page = render_study_report(frame, run_index=5)
    assert "The charts below draw run 5 (platform.generator.n=8, seed 1), chosen with --run" \
        in page


def test_default_run_when_the_planners_agree_everywhere(tmp_path: Path) -> None:
    store = ResultStore(tmp_path, {"grid.platform.generator.n": pa.int64()})
    store.append([stored_row(run, run, 4, index, makespan="4")
                  for run in range(3) for index in range(len(PLANNERS))])
    page = render_study_report(load_results(tmp_path))
    assert ("The charts below draw run 0 (platform.generator.n=4, seed 0), by default, the "
            "first run where every planner ran: the planners agree on every run") in page


def test_default_run_leaves_aside_a_planner_that_ran_nowhere(tmp_path: Path) -> None:
    # A study listing a planner that handles none of its runs (binomial on a
    # broadcast) had no run "where every planner ran": the page drew the first run
    # where a planner ran, whatever the others' spread.  By hand: without binomial
    # (unsupported everywhere) the spreads of MAKESPANS are 5/4, 5/4, 3/2, 3/2 per
    # seed; run 2 is the first at 3/2.
    store = ResultStore(tmp_path, {"grid.platform.generator.n": pa.int64()})
    store.append([stored_row(run, run, 4, index,
                             **({"status": "unsupported", "message": "no"} if index == 0
                                else {"makespan": str(MAKESPANS[label][run])}))
                  for run in range(4)
                  for index, label in enumerate(MAKESPANS)])
    page = render_study_report(load_results(tmp_path))
    chosen = re.search(r'<p class="hint" id="chosen-run">(.*?)</p>', page)
    assert chosen is not None
    assert chosen.group(1).startswith(
        "The charts below draw run 2 (platform.generator.n=4, seed 2), by default, the run "
        "where the planners differ the most (makespan, longest over shortest: 3/2; the first "
        "such run) (binomial ran in no run)")


def test_comparison_hovers_give_exact_means_and_extremes(study_page: str) -> None:
    # By hand from MAKESPANS: binomial's ratios to the best over the 4 seeds are
    # 1, 1, 1, 3/2 (mean 9/8); greedy (reducers: 2)'s makespans 5, 5, 6, 6 (mean 11/2),
    # ratios 5/4, 5/4, 3/2, 3/2 (mean 11/8). The hovers used to say 1.125, 1.375.
    ratio = figure_titled(study_page, "Makespan / best makespan")
    by_name = {trace["name"]: trace for trace in ratio["data"]}
    assert by_name["binomial"]["customdata"] == [["9/8 (1.125)", "1", "3/2 (1.5)", 4]] * 2
    assert by_name["greedy (reducers: 2)"]["customdata"] == [
        ["11/8 (1.375)", "5/4 (1.25)", "3/2 (1.5)", 4]] * 2
    assert "mean=%{customdata[0]}" in by_name["binomial"]["hovertemplate"]
    makespan = figure_titled(study_page, "Makespan of one operation")
    reducers = next(t for t in makespan["data"] if t["name"] == "greedy (reducers: 2)")
    assert reducers["customdata"] == [["11/2 (5.5)", "5", "6", 4]] * 2


def test_comparison_hover_of_a_mean_with_a_long_exact_value(tmp_path: Path) -> None:
    # makespans 1/3, 1/7, ..., 1/97 over 23 seeds: the exact mean has a denominator of
    # some 30 digits; the hover gives the float and says the exact value is not written
    primes = (3, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
              83, 89, 97)
    store = ResultStore(tmp_path, {"grid.platform.generator.n": pa.int64()})
    store.append([stored_row(run, run, 4, index, makespan=f"1/{p}")
                  for run, p in enumerate(primes) for index in range(len(PLANNERS))])
    mean = sum((F(1, p) for p in primes), F(0)) / len(primes)
    exact = format_rational(mean)
    assert len(exact) > 40
    page = render_study_report(load_results(tmp_path), run_index=0)
    makespan = figure_titled(page, "Makespan of one operation")
    assert makespan["data"][0]["customdata"] == [[
        f"{float(mean):.4g} (exact rational of {len(exact)} characters, not written)",
        "1/97 (0.01031)", "1/3 (0.3333)", 23]]


# -- a run whose lp failed: no bound planned in its place --------------------------------------


def test_a_run_whose_lp_failed_draws_no_convergence_chart(tmp_path: Path) -> None:
    """The study's lp row of the chosen run failed (here by its time limit): the report
    says so in the convergence section and plans no lp of its own (a plain lp there
    would draw a bound the study never had).  The scenario lists binomial then lp."""
    store = ResultStore(tmp_path, {"grid.platform.generator.n": pa.int64()})
    document = {**DOCUMENT, "planners": ["binomial", {"name": "lp", "time_limit": 0.001}]}
    rows = []
    for index, (name, options, status, message) in enumerate([
            ("binomial", {}, "ok", ""),
            ("lp", {"time_limit": 0.001}, "error", "time limit of 0.001 s reached")]):
        row = stored_row(0, 0, 4, 0, makespan="4" if status == "ok" else None)
        row.update(planner_index=index, planner=name, status=status, message=message,
                   planner_options=json.dumps(options, sort_keys=True),
                   scenario_document=json.dumps(document, sort_keys=True))
        rows.append(row)
    store.append(rows)
    page = render_study_report(load_results(tmp_path))
    section = page.split('<section id="convergence">', 1)[1].split("</section>", 1)[0]
    assert ("its lp bound failed in the study (lp (time_limit: 0.001), error: time limit "
            "of 0.001 s reached)") in section
    assert not any(f["layout"]["title"]["text"].startswith("completed(K) / (TP·K)")
                   for f in figures(page))


def test_report_to_standard_output(store: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # `-o -` is standard output (portsim --help: "A file name `-` is ... standard output
    # (--json, --report, -o)"): it once wrote a file named "-" and printed
    # "report written to -" on standard output.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report", str(store), "-o", "-", "--run", "5"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert result.stdout.rstrip().endswith("</html>")
    assert "report written" not in result.stdout
    assert "run 5 (platform.generator.n=8, seed 1)" in result.stdout


def test_a_boolean_grid_key_is_not_the_numeric_axis(tmp_path: Path) -> None:
    """A grid over ``operation.commutative: [false, true]`` and ``operation.size: [0.5,
    2]``: the comparison charts took the boolean key as their numeric x axis (ticks 0
    and 1, a line drawn between false and true) and drew the sizes as series.  The
    axis is the first numeric key that is not a boolean: the sizes."""
    from portsim.scenarios.study import run_study, study_from_dict

    study = study_from_dict({
        "name": "flags",
        "base": {"platform": {"generator": {"type": "complete", "n": 4, "c": 1,
                                            "compute": 1}},
                 "operation": {"type": "reduce", "target": "P0"},
                 "planners": ["flat", "greedy"]},
        "grid": {"operation.commutative": [False, True], "operation.size": [0.5, 2]},
    })
    run_study(study, tmp_path, workers=1)
    page = render_study_report(load_results(tmp_path))
    figure = figure_titled(page, "Makespan of one operation")
    assert figure["layout"]["xaxis"]["title"]["text"] == "operation.size"
    for trace in figure["data"]:
        assert trace["x"] == [0.5, 2.0]
    names = {trace["name"] for trace in figure["data"]}
    assert names == {f"{p} [commutative={c}]" for p in ("flat", "greedy")
                     for c in (False, True)}


def test_a_report_of_the_same_results_is_the_same_page(store: Path, study_page: str) -> None:
    """Each figure's ``<div>`` had a random id (plotly's uuid4), so two reports of one
    store differed in every chart and a report kept under version control changed
    on every rebuild.  The ids are now numbered in page order."""
    again = render_study_report(load_results(store))
    assert again == study_page
    ids = re.findall(r'<div id="([^"]+)" class="plotly-graph-div"', study_page)
    assert len(ids) >= 4
    assert ids == [f"figure-{i}" for i in range(1, len(ids) + 1)]
    scenario = load_scenario(ROOT / "scenarios" / "examples" / "scatter-toy.yaml")
    runs = (PlannerRun("flat", "scatter", "bidirectional", "ok", makespan=F(3),
                       measured_throughput=0.25, completed=5, horizon=F(20), feasible=True),)
    first, second = (render_run_report(ScenarioResult(scenario, runs)) for _ in range(2))
    assert first == second
