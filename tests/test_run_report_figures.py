"""The single-run HTML report gives the figures of ``portsim run``'s table and JSON.

Found by a new user's trial: ``scenarios/examples/broadcast-mi250.yaml``,
whose ``lp`` schedule carries 32150/97 of the bound 332 in its fixed period,
printed ``332 (not reached: 32150/97)`` in the terminal but only ``332`` in
the report's results table, as if the schedule reached the bound.
"""

from __future__ import annotations

import re
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from browser import CHROMIUM, FLAGS, needs_chromium

import portsim
from portsim.reports import render_run_report
from portsim.reports.gantt import GanttWindow

EXAMPLES = Path(portsim.__file__).resolve().parent / "scenarios" / "examples"


def test_a_bound_not_reached_says_so_in_the_results_table(tmp_path: Path) -> None:
    # lp on the scatter toy with the period forced to 5: at the optimum 1/2 a period
    # of 5 would hold 5/2 scatters; Proposition 4's floor keeps 2, i.e. 2/5.
    text = (EXAMPLES / "scatter-toy.yaml").read_text().replace(
        "  - lp\n", "  - {name: lp, period: 5}\n")
    path = tmp_path / "p5.yaml"
    path.write_text(text)
    outcome = portsim.run_scenario(portsim.load_scenario(path))
    flat, lp = outcome.results
    assert (lp.throughput_bound, lp.period) == (Fraction(1, 2), 5)
    assert lp.achieved_throughput == Fraction(5 * Fraction(1, 2) // 1, 5) == Fraction(2, 5)
    page = render_run_report(outcome)
    cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', page)
    assert "1/2 (not reached: 2/5)" in cells  # was "1/2"
    # a row that reaches its bound, or has none, shows the bound alone
    assert flat.throughput_bound is None
    assert not any("not reached" in c for c in cells if not c.startswith("1/2 ("))


def test_a_row_without_a_replay_counts_no_violations(tmp_path: Path) -> None:
    """An ``unsupported`` or ``error`` row was replayed by nobody: its feasible cell
    is ``—``, and so is its violations cell (it said 0, as for a clean replay)."""
    text = (EXAMPLES / "scatter-toy.yaml").read_text().replace(
        "  - lp\n", "  - lp\n  - fnf\n")
    path = tmp_path / "fnf.yaml"
    path.write_text(text)
    outcome = portsim.run_scenario(portsim.load_scenario(path))
    statuses = [r.status for r in outcome.results]
    assert statuses == ["ok", "ok", "unsupported"]
    page = render_run_report(outcome)
    table = page[page.index('<table class="results">'):]
    rows = re.findall(r"<tr>(.*?)</tr>", table[:table.index("</table>")])[1:]
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in rows]
    assert [row[-2:] for row in cells] == [["yes", "0"], ["yes", "0"], ["—", "—"]]


def test_a_cut_series_reads_cut_as_in_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A series the replay cap cut has no count: ``portsim run`` prints ``cut``
    in its completed column, the report printed ``—`` as for a row never measured."""
    import portsim.simulator.engine

    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", 1)
    outcome = portsim.run_scenario(portsim.load_scenario(EXAMPLES / "reduce-toy.yaml"))
    labels = [r.label for r in outcome.results]
    assert [r.replay_cut for r in outcome.results] == [label == "flat" for label in labels]
    page = render_run_report(outcome)
    table = page[page.index('<table class="results">'):]
    rows = re.findall(r"<tr>(.*?)</tr>", table[:table.index("</table>")])[1:]
    completed = [re.findall(r"<td[^>]*>([^<]*)</td>", row)[7] for row in rows]
    assert completed == ["cut" if label == "flat" else str(r.completed)
                         for label, r in zip(labels, outcome.results, strict=True)]


def test_the_convergence_note_of_an_lp_the_chart_plans_itself() -> None:
    """broadcast-mi250.yaml with flat alone: the chart plans the lp itself, whose
    fixed period carries 32150/97 broadcasts a time unit against TP = 332 (the
    README's figures, tests/test_fabric_examples.py): the line tends to their
    ratio.  The note said "carries 32150/97 of the bound TP", read as a share."""
    import dataclasses

    import portsim.reports.html as report_html

    scenario = portsim.load_scenario(EXAMPLES / "broadcast-mi250.yaml")
    flat = dataclasses.replace(scenario, planners=tuple(
        p for p in scenario.planners if p.name == "flat"))
    _, note = report_html.convergence_study(flat)
    ratio = Fraction(32150, 97) / 332
    assert ratio == Fraction(16075, 16102)
    assert (f"the lp schedule carries 32150/97 operations per time unit, below TP = 332: "
            f"its line tends to {ratio}, not 1") in note


def test_the_convergence_note_counts_what_a_fixed_period_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lp on the scatter toy with period 5 carries 2/5 of the bound 1/2: one period
    holds 2 scatters (not TP · T = 5/2) and its line tends to (2/5) / (1/2) = 4/5,
    not 1 (``broadcast-mi250``: the note said 32204/25 operations a period, where
    the schedule holds 1286, and the page said the lp line tends to 1)."""
    import portsim.reports.html as report_html

    text = (EXAMPLES / "scatter-toy.yaml").read_text().replace(
        "  - lp\n", "  - {name: lp, period: 5}\n")
    path = tmp_path / "p5.yaml"
    path.write_text(text)
    scenario = portsim.load_scenario(path)
    outcome = portsim.run_scenario(scenario)
    lp = outcome.results[1]
    assert lp.plan is not None
    assert lp.plan.schedule is not None
    assert lp.plan.schedule.instances_per_period == 2
    # a cap of 20 operations: the horizons of 1, 2, 5 and 10 periods hold 2, 4, 10, 20
    monkeypatch.setattr(report_html, "CONVERGENCE_OPERATIONS", 20)
    study, note = report_html.convergence_study(scenario, [r.plan for r in outcome.results])
    assert sorted({row.periods for row in study.rows}) == [1, 2, 5, 10]  # was [1, 2, 5]
    assert "one period holds 2 operations" in note  # was 5/2 (about 2)
    assert "its line tends to 4/5, not 1" in note
    # the replay agrees: completed(K) <= (2/5) K, so the lp ratio never passes 4/5
    ratios = [row.ratio for row in study.rows if row.planner.startswith("lp")]
    assert ratios
    assert all(r is not None and r <= Fraction(4, 5) for r in ratios)
    assert ratios[-1] is not None
    assert ratios[-1] >= Fraction(7, 10)


@pytest.mark.slow
@needs_chromium
def test_an_empty_window_draws_no_numbered_rows(tmp_path: Path) -> None:
    """A Gantt chart with no event in its window has no port row: the browser drew
    plotly's numeric ticks 0, 2, 4 on its row axis, as if rows 0 to 4 existed."""
    outcome = portsim.run_scenario(portsim.load_scenario(EXAMPLES / "scatter-toy.yaml"))
    # flat's events run from 0 to 10/3: none in [5, 13/2); lp's period holds 2 there
    page = render_run_report(outcome, gantt_window=GanttWindow(Fraction(5), Fraction(13, 2)))
    path = tmp_path / "w.html"
    path.write_text(page)
    assert CHROMIUM is not None
    dom = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", path.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    charts = dom.split("plotly-graph-div")[1:]
    gantt = {label: next(c for c in charts if f">{label}: " in c and "port / CPU" in c)
             for label in ("flat", "lp")}
    rows = {label: re.findall(r'class="ytick"><text[^>]*data-unformatted="([^"]*)"', chart)
            for label, chart in gantt.items()}
    assert rows["flat"] == []  # was ['0', '2', '4']
    assert rows["lp"]  # the two events of lp's period that run in the window have rows
    assert all(name.endswith("port") for name in rows["lp"])


def test_an_order_only_schedule_outlines_the_conflicts_of_its_planned_times() -> None:
    """``lp-naive`` on a unidirectional platform claims only an order: the Gantt chart
    draws its planned times, where P2's port carries two sends at once, yet showed
    them as a clean schedule (its row is feasible in the as-soon-as-possible replay)."""
    outcome = portsim.run_scenario(portsim.load_scenario(EXAMPLES / "broadcast-unidir.yaml"))
    lp, naive = outcome.results
    assert (lp.replay, naive.replay, naive.feasible) == ("strict", "asap", True)
    assert naive.plan is not None
    assert naive.plan.schedule is not None
    strict = portsim.replay(naive.plan.schedule)
    involved = {i for v in strict.violations for i in v.events}
    assert len(strict.violations) == 2  # the 2 conflicts the run's note counts
    assert {v.kind for v in strict.violations} == {"port_conflict"}
    page = render_run_report(outcome).replace("<br>", " ")
    found = re.findall(r"infeasible: (\d+) violation\(s\); the (\d+) event\(s\) drawn", page)
    assert found == [(str(len(strict.violations)), str(len(involved)))]  # was []
    assert ("lp-naive claims only an order of events: the chart draws its planned times, "
            "in which a strict replay finds 2 violation(s)") in page


@pytest.mark.parametrize(("text", "shown"), [("commutative: false", "false"),
                                             ("commutative: true", "true")])
def test_the_header_spells_a_flag_as_the_scenario_does(tmp_path: Path, text: str,
                                                       shown: str) -> None:
    """The report's header showed ``commutative: false`` as Python's ``False``."""
    path = tmp_path / "reduce.yaml"
    path.write_text((EXAMPLES / "reduce-toy.yaml").read_text()
                    .replace("commutative: false", text).replace("  - lp\n", ""))
    outcome = portsim.run_scenario(portsim.load_scenario(path))
    assert outcome.scenario.operation.commutative is (shown == "true")
    page = render_run_report(outcome)
    assert re.findall(r"<dt>commutative</dt><dd>([^<]*)</dd>", page) == [shown]


def test_a_long_fraction_is_its_decimal_value_in_the_table_and_on_the_bars(
        tmp_path: Path) -> None:
    """Costs of 18-digit terms make every figure of a scatter 36 digits over 36: the
    results table scrolled sideways past its bound column, and plotly shrank the bar
    labels to an unreadable size.  Such a figure is now ``~`` and its value to 6
    digits, the exact one in the cell's hover (``title``) and the bar's hover."""
    from portsim.reports.figures import makespan_figure, throughput_figure

    costs = (Fraction("123456789012345677/987654321098765431"),
             Fraction("987654321098765429/123456789012345673"))
    path = tmp_path / "long.yaml"
    path.write_text(
        "name: long\nplatform:\n  nodes: [{id: S}, {id: A}, {id: B}]\n  links:\n"
        f"    - {{src: S, dst: A, c: '{costs[0]}'}}\n"
        f"    - {{src: S, dst: B, c: '{costs[1]}'}}\n"
        "operation: {type: scatter, source: S}\nplanners: [lp, flat]\n")
    outcome = portsim.run_scenario(portsim.load_scenario(path))
    lp, flat = outcome.results
    total = sum(costs, Fraction(0))
    # S's send port carries both messages: TP = 1 / (c(S,A) + c(S,B)); flat sends
    # them one after the other
    assert lp.throughput_bound == 1 / total
    assert flat.makespan == total

    def about(text: str, value: Fraction) -> bool:
        return text.startswith("~") and abs(Fraction(text[1:]) / value - 1) < Fraction(1, 10**5)

    page = render_run_report(outcome)
    table = page[page.index('<table class="results">'):]
    cells = re.findall(r'<td class="num" title="([^"]*)">([^<]*)</td>',
                       table[:table.index("</table>")])
    assert (str(lp.throughput_bound), "~0.123077") in cells
    for exact, text in cells:
        assert about(text, Fraction(exact))
    assert "hover over it for the exact figure" in page
    bars = throughput_figure(outcome.results).data
    for bar in bars:
        for text, exact in zip(bar.text, bar.customdata, strict=True):
            assert text == "" or about(text, Fraction(exact))
    assert [t for bar in bars for t in bar.text if t] == ["~0.123077"] * 3
    (makespan,) = makespan_figure(outcome.results).data
    assert about(makespan.text[0], total)
    assert Fraction(makespan.customdata[0]) == total
