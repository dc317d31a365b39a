"""A user's own planner, plugged in through the entry-point group, run by portsim.

Found by a new user writing a planner package of their own: a bad option
value checked as ``FunctionPlanner`` documents it, a planner that returns
something else than a ``PlanResult`` or calls ``sys.exit``, and a schedule
built on another platform or for another operation than the scenario's (the
engine replays a schedule on the platform it carries, so such a schedule
was measured on the planner's word: 100 times the ``lp`` bound, "feasible").
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from portsim import Operation, OperationKind, Platform, Schedule
from portsim.planners import FunctionPlanner, PlanResult, plugin_planners
from portsim.scenarios.cli import main
from portsim.scenarios.runner import foreign_schedule, guarded_plan
from portsim.simulator.errors import PlannerError
from portsim.simulator.platform import PortKind

MODULE = "portsim_test_user_planner"

SCENARIO = """\
name: mine
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 2}]
operation: {type: scatter, source: S}
planners: [PLANNERS]
"""


def _one_at_a_time(platform: Platform, operation: Operation) -> Schedule:
    """The honest schedule: S sends m[A], then m[B] (makespan 3)."""
    events, start = [], Fraction(0)
    for target in operation.targets:
        events.append({"kind": "send", "src": operation.source, "dst": target,
                       "item": f"m[{target}]", "start": start})
        start += platform.cost(str(operation.source), target)
    return Schedule.from_dicts(platform, operation, events)


def _mine(platform: Platform, operation: Operation, mode: str = "honest") -> PlanResult:
    if mode == "faster":  # the same links at a hundredth of their cost
        platform = Platform.build(list(platform.node_ids), [
            (link.src, link.dst, link.c / 100) for link in platform.links])
    if mode == "broadcast":  # a broadcast instead of the scatter asked for
        operation = Operation(OperationKind.BROADCAST, source=operation.source
                              ).resolve(platform)
        return PlanResult.ok("mine", Schedule.from_dicts(platform, operation, [
            {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
            {"kind": "send", "src": "S", "dst": "B", "item": "b", "start": 1}]), makespan=3)
    if mode == "small":  # one hundredth of the message, once
        return PlanResult.ok("mine", _one_at_a_time(
            platform, replace(operation, size=Fraction(1, 100))), makespan=Fraction(3, 100))
    if mode == "overlap":  # both sends at once: S's send port is taken twice
        return PlanResult.ok("mine", Schedule.from_dicts(platform, operation, [
            {"kind": "send", "src": "S", "dst": target, "item": f"m[{target}]", "start": 0}
            for target in operation.targets]), makespan=2)
    if mode == "periodic-overlap":  # every period of 2, both sends at once from S
        return PlanResult.ok("mine", Schedule.from_dicts(platform, operation, [
            {"kind": "send", "src": "S", "dst": target, "item": f"m[{target}]", "start": 0}
            for target in operation.targets], period=2))
    if mode == "boast":  # lp's own periodic schedule, announced at ten instances a unit
        from portsim.planners.lp import steady_state

        return replace(steady_state(platform, operation), planner="mine",
                       throughput_bound=Fraction(10), achieved_throughput=Fraction(10))
    if mode == "boast-once":  # the honest one-shot schedule (1/3), announced at 10
        return PlanResult.ok("mine", _one_at_a_time(platform, operation), makespan=3,
                             throughput_bound=Fraction(10), achieved_throughput=Fraction(10))
    if mode == "low-bound":  # the honest one-shot schedule (1/3), "bounded" by 1/10
        return PlanResult.ok("mine", _one_at_a_time(platform, operation), makespan=3,
                             throughput_bound=Fraction(1, 10),
                             achieved_throughput=Fraction(1, 10))
    if mode == "pieces":  # lp's periodic schedule of hundredths: 100/3 of them, 1/3 op.
        from portsim.planners.lp import steady_state

        pieces = steady_state(platform, replace(operation, size=Fraction(1, 100)))
        return replace(pieces, planner="mine", throughput_bound=Fraction(1, 3),
                       achieved_throughput=Fraction(1, 3))
    if mode == "claims-exact":  # lp's own result, its proof of optimality claimed too
        from portsim.planners.lp import steady_state
        return replace(steady_state(platform, operation), planner="mine")
    if mode == "exit":
        sys.exit(5)
    if mode == "long-note":
        return PlanResult.ok("mine", _one_at_a_time(platform, operation),
                             notes=["word " * 60 + "end"])
    return PlanResult.ok("mine", _one_at_a_time(platform, operation), makespan=3)


def _check_mine(options: Any) -> None:
    if options.get("mode", "honest") not in ("honest", "faster", "broadcast", "exit",
                                             "long-note", "overlap", "small", "boast",
                                             "boast-once", "low-bound", "pieces",
                                             "periodic-overlap", "claims-exact"):
        raise PlannerError("mode must be honest, faster, broadcast, exit or long-note",
                           value=options["mode"])


MINE = FunctionPlanner("mine", _mine, frozenset({OperationKind.SCATTER}), frozenset(PortKind),
                       "a user's scatter", options=frozenset({"mode"}),
                       check_options=_check_mine)


class ReturnsNone:
    """A planner written to the protocol (not a FunctionPlanner) that forgets to return."""

    name = "returns-none"
    operations = frozenset({OperationKind.SCATTER})
    port_models = frozenset(PortKind)
    description = "returns None"

    def plan(self, platform: Platform, operation: Operation, **options: Any) -> Any:
        return None


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``mine`` and ``returns-none`` installed as entry points of ``portsim.planners``."""
    module = types.ModuleType(MODULE)
    module.MINE = MINE  # type: ignore[attr-defined]
    module.NONE = ReturnsNone()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, MODULE, module)
    eps = [importlib.metadata.EntryPoint(name="mine", value=f"{MODULE}:MINE",
                                         group="portsim.planners"),
           importlib.metadata.EntryPoint(name="returns-none", value=f"{MODULE}:NONE",
                                         group="portsim.planners")]

    def entry_points(**params: Any) -> list[importlib.metadata.EntryPoint]:
        return eps if params.get("group") == "portsim.planners" else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    plugin_planners.cache_clear()
    yield
    plugin_planners.cache_clear()


def run(tmp_path: Path, planners: str, *extra: str) -> tuple[int, str, str]:
    scenario = tmp_path / "mine.yaml"
    scenario.write_text(SCENARIO.replace("PLANNERS", planners))
    result = CliRunner().invoke(main, ["run", str(scenario), *extra])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.usefixtures("installed")
def test_the_honest_planner_runs_and_is_measured(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "mine, flat", "--json", "-")
    assert code == 0
    rows = {r["label"]: r for r in json.loads(out)["results"]}
    assert (rows["mine"]["status"], rows["mine"]["makespan"], rows["mine"]["feasible"]) == (
        "ok", "3", True)
    assert rows["mine"]["makespan"] == rows["flat"]["makespan"]  # the same two sends


def test_a_bad_option_value_from_check_options_is_put_under_planners_name() -> None:
    p = Platform.build(["S", "A"], [("S", "A", 1)])
    with pytest.raises(PlannerError) as info:
        MINE.plan(p, Operation(OperationKind.SCATTER, source="S"), mode="slow")
    assert info.value.path == "planners.mine"
    assert info.value.value == "slow"


@pytest.mark.usefixtures("installed")
def test_a_bad_option_value_of_a_plugin_is_bad_input(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "{name: mine, mode: slow}, flat")
    assert code == 2  # was 3, an error row "the planner failed"
    assert err.splitlines()[-1].endswith(
        "mine.yaml: planners[0].mine: mode must be honest, faster, broadcast, exit or "
        "long-note (got 'slow')")
    assert out == ""


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(("mode", "reason"), [
    ("faster", "the planner's schedule is not for this scenario: link S -> A: c = 1/100 in "
               "the schedule, 1 in the scenario"),
    ("broadcast", "the planner's schedule is not for this scenario: it is a broadcast, the "
                  "scenario's operation a scatter"),
    ("exit", "the planner failed: SystemExit: 5"),
    ("small", "the planner's schedule is not for this scenario: it moves 1 instance(s) of "
              "size 1/100, less than one operation of size 1"),
])
def test_a_schedule_the_engine_cannot_trust_is_an_error_row(tmp_path: Path, mode: str,
                                                            reason: str) -> None:
    code, out, _ = run(tmp_path, f"{{name: mine, mode: {mode}}}, flat", "--json", "-")
    assert code == 3  # a planner failed; the others still ran
    rows = json.loads(out)["results"]
    assert [(r["status"], r["message"]) for r in rows] == [("error", reason), ("ok", "")]
    assert rows[0]["measured_throughput"] is None


@pytest.mark.usefixtures("installed")
def test_a_planner_returning_none_is_an_error_row_not_a_traceback(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "returns-none, flat", "--json", "-")
    assert code == 3
    rows = json.loads(out)["results"]
    assert (rows[0]["status"], rows[0]["message"]) == (
        "error", "the planner failed: it returned NoneType, not a PlanResult")


@pytest.mark.usefixtures("installed")
def test_a_long_note_is_one_line_in_a_pipe(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "{name: mine, mode: long-note}")
    assert code == 0
    notes = [line for line in out.splitlines() if "word" in line]
    assert notes == ["mine (mode: long-note): note: " + "word " * 60 + "end"]


def test_foreign_schedule_names_the_difference() -> None:
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 2)])
    scatter = Operation(OperationKind.SCATTER, source="S").resolve(p)
    honest = _one_at_a_time(p, scatter)
    assert foreign_schedule(honest, p, scatter) is None
    # Targets are a set: the same scatter listed in another order is the same.
    assert foreign_schedule(honest, p, Operation(OperationKind.SCATTER, source="S",
                                                 targets=("B", "A")).resolve(p)) is None
    fewer = Operation(OperationKind.SCATTER, source="S", targets=("A",)).resolve(p)
    assert foreign_schedule(honest, p, fewer) == (
        "operation targets: [A, B] in the schedule, [A] in the scenario")
    unidirectional = p.with_port_model("unidirectional")
    assert foreign_schedule(honest, unidirectional, scatter) == (
        "node S: port model bidirectional in the schedule, unidirectional in the scenario")
    more = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 2), ("A", "B", 1)])
    assert foreign_schedule(honest, more, scatter) == (
        "link A -> B is missing from the schedule's platform")
    # A non-commutative reduce keeps its participants' order.
    ring = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1), ("C", "A", 1)])
    abc = Operation(OperationKind.REDUCE, participants=("A", "B", "C"), target="A")
    cba = Operation(OperationKind.REDUCE, participants=("C", "B", "A"), target="A")
    schedule = Schedule.from_dicts(ring, abc, [])
    assert foreign_schedule(schedule, ring, cba.resolve(ring)) == (
        "operation participants: [A, B, C] in the schedule, [C, B, A] in the scenario")


def test_guarded_plan_keeps_misuse_raised() -> None:
    p = Platform.build(["S", "A"], [("S", "A", 1)])
    op = Operation(OperationKind.SCATTER, source="S").resolve(p)
    with pytest.raises(PlannerError, match="mode must be"):
        guarded_plan(MINE, p, op, {"mode": "slow"})
    assert guarded_plan(MINE, p, op, {}).status == "ok"


@pytest.mark.usefixtures("installed")
def test_an_infeasible_one_shot_schedule_is_not_measured_by_asymptotic(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "{name: mine, mode: overlap}, mine", "--asymptotic")
    assert code == 1  # was 0: the series repaired its times and showed ratio 1.0000
    rows = [line for line in out.splitlines() if line.startswith("│ mine")]
    assert len(rows) == 6
    for row in rows[:3]:  # no count, no ratio, the reason
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert cells[0] == "mine (mode: overlap)"
        assert (cells[3], cells[5]) == ("-", "-")
        assert cells[7].startswith("not measured: 1 violation(s) in its strict replay")
    assert "mine (mode: overlap): its schedule is infeasible (1 violation(s) in its strict " \
           "replay)" in out
    # The honest one: S sends for 1 then 2 time units, so in the series scatter
    # i ends at 3i + 3, 1000 of them by 3000 = 1000 lp periods of 3 (TP = 1/3).
    honest = [cell.strip() for cell in rows[5].strip("│").split("│")]
    assert honest[:6] == ["mine", "1000", "3000", "1000", "1000", "1"]  # was "1.0000"



@pytest.mark.usefixtures("installed")
def test_an_infeasible_one_shot_schedule_has_no_measured_figures_in_run(
        tmp_path: Path) -> None:
    """Both sends at once from S: the row's measured_throughput was null but its
    measured_throughput_exact "1/200" and completed 1 (the schedule's own
    replay, over the horizon of 100 makespans): SPEC gives the exact figure
    as the float's, null with completed.  In the JSON, the table and the
    HTML report alike; the honest planner beside it is measured (S sends for
    1 + 2 per scatter, scatter t completes at 3t + 3: 100 by 300)."""
    report = tmp_path / "r.html"
    code, out, _ = run(tmp_path, "{name: mine, mode: overlap}, mine", "--json", "-",
                       "--report", str(report))
    assert code == 1
    bad, honest = json.loads(out)["results"]
    assert (bad["feasible"], bad["makespan"], bad["horizon"]) == (False, "2", "200")
    assert (bad["measured_throughput"], bad["measured_throughput_exact"],
            bad["completed"]) == (None, None, None)
    assert any(note.startswith("not measured: 1 violation(s) in its strict replay")
               for note in bad["notes"])
    assert (honest["completed"], honest["horizon"], honest["measured_throughput_exact"]) == (
        100, "300", "1/3")
    # the table: no measured throughput, no count
    _, table, _ = run(tmp_path, "{name: mine, mode: overlap}, mine")
    row = next(line for line in table.splitlines() if line.startswith("│ mine (mode"))
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert (cells[4], cells[5], cells[6], cells[7]) == ("2", "-", "-", "200")
    # the HTML report: the same dashes
    page = report.read_text()
    start = page.index("<td class=\"name\">mine (mode: overlap)</td>")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page[start:page.index("</tr>", start)])
    assert cells[5:9] == ["2", "—", "—", "200"]

STUDY = """\
name: mine-vs-flat
base:
  platform:
    nodes: [{id: S}, {id: A}, {id: B}]
    links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 2}]
  operation: {type: scatter, source: S}
  planners: [mine, {name: mine, mode: overlap}, lp]
"""


@pytest.mark.usefixtures("installed")
def test_an_infeasible_periodic_schedule_has_no_measured_figures(tmp_path: Path) -> None:
    """Both sends at once from S every period of 2: S's send port is taken
    twice, and S -> B (cost 2) runs into the next period.  Its replay over the
    horizon still completed instances (a scatter a period: 1/2 a time unit,
    above lp's bound of 1/3) and `run` printed that as its measured
    throughput; a one-shot schedule's series is not measured in that case,
    nor now a periodic schedule's, in `run` and in `validate` alike."""
    code, out, _ = run(tmp_path, "{name: mine, mode: periodic-overlap}, lp", "--json", "-")
    assert code == 1
    bad, lp = json.loads(out)["results"]
    assert bad["feasible"] is False
    assert (bad["measured_throughput"], bad["measured_throughput_exact"],
            bad["completed"]) == (None, None, None)
    assert any(note.startswith("not measured: ") and "the throughput of a periodic "
               "schedule is measured only when the schedule is feasible" in note
               for note in bad["notes"])
    assert lp["feasible"] is True  # beside it, lp's schedule is measured
    assert lp["completed"] is not None
    schedule = tmp_path / "bad.yaml"
    scenario = tmp_path / "mine.yaml"
    planned = CliRunner().invoke(main, ["plan", str(scenario), "--planner",
                                        "mine (mode: periodic-overlap)", "-o", str(schedule)])
    assert planned.exit_code == 0, planned.output
    checked = CliRunner().invoke(main, ["validate", str(schedule), "--format", "json"])
    assert checked.exit_code == 1
    document = json.loads(checked.stdout)
    assert document["feasible"] is False
    assert document["completed"] > 0  # what the replay completed despite the violations
    assert (document["measured_throughput"], document["measured_throughput_exact"]) == (
        None, None)
    assert document["series_note"].startswith("not measured: ")
    text = CliRunner().invoke(main, ["validate", str(schedule)]).stdout
    assert "measured throughput" not in text
    assert "completed despite the violations" in text


@pytest.mark.usefixtures("installed")
def test_an_infeasible_periodic_schedule_is_not_measured_by_asymptotic(tmp_path: Path) -> None:
    """The periodic schedule above under ``run --asymptotic``: its rows gave a count
    and a ratio (1/2 a time unit against lp's 1/3: 1.5, flagged as beating the
    bound) from a replay with violations; no count, no ratio now, the reason."""
    code, out, _ = run(tmp_path, "{name: mine, mode: periodic-overlap}", "--asymptotic")
    assert code == 1
    rows = [line for line in out.splitlines() if line.startswith("│ mine")]
    assert len(rows) == 3
    for row in rows:
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert (cells[3], cells[5]) == ("-", "-")
        assert cells[7].startswith("not measured: ")
    assert "mine (mode: periodic-overlap): its schedule is infeasible" in out
    assert "more than the bound" not in out


@pytest.mark.usefixtures("installed")
def test_a_rejected_schedule_is_no_makespan_yardstick_in_a_study(tmp_path: Path) -> None:
    from portsim import load_results

    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["study", str(study), "--out", str(out),
                                       "--workers", "1"])
    assert result.exit_code == 1, result.output  # a schedule was invalid
    frame = load_results(out).set_index("label")
    assert list(frame["makespan"].fillna("-")) == ["3", "2", "-"]
    assert list(frame["feasible"]) == [True, False, True]
    # The honest planner is the run's best (was 3/2: over the rejected 2).
    assert frame.loc["mine", "makespan_ratio"] == 1.0
    assert pd.isna(frame.loc["mine (mode: overlap)", "makespan_ratio"])
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "report.html").read_text()
    # The three charts leave the rejected row out, as the page says, and the
    # makespan charts say why lp (periodic) is not there.
    assert page.count("not drawn, no valid row: mine (mode: overlap) (see Failed runs)") == 3
    assert page.count("not drawn, no makespan: lp") == 2
    assert "ok row(s) have no reference bound" not in page  # every valid row has lp's


@pytest.mark.usefixtures("installed")
def test_an_announced_achieved_throughput_gives_way_to_the_proven_one(tmp_path: Path) -> None:
    """A planner announcing 10 for lp's schedule of the scatter (S sends one unit to A
    and two to B, one port: 1/3) was shown as reaching its bound 10: the strict
    replay's proven rate stands instead, with a note."""
    code, out, _ = run(tmp_path, "{name: mine, mode: boast}", "--json", "-")
    assert code == 0
    record = json.loads(out)["results"][0]
    assert record["status"] == "ok"
    assert (record["achieved_throughput"], record["bound_reached"]) == ("1/3", False)
    assert ("the planner announced achieved throughput 10, the strict replay proves 1/3"
            in record["notes"])


@pytest.mark.usefixtures("installed")
def test_an_announced_throughput_of_a_one_shot_schedule_is_checked_too(tmp_path: Path) -> None:
    """Red-team pass: a one-shot schedule (S sends m[A], then m[B]: makespan 3)
    announced at 10 was kept at 10 and shown as reaching its bound 10; the
    strict replay proves 1 instance per 3 time units, and that is shown."""
    code, out, _ = run(tmp_path, "{name: mine, mode: boast-once}", "--json", "-")
    assert code == 0
    record = json.loads(out)["results"][0]
    assert (record["feasible"], record["makespan"]) == (True, "3")
    assert (record["achieved_throughput"], record["bound_reached"]) == ("1/3", False)
    assert ("the planner announced achieved throughput 10, the strict replay proves 1/3"
            in record["notes"])


@pytest.mark.usefixtures("installed")
def test_an_announced_throughput_the_horizon_cannot_prove_is_not_shown(tmp_path: Path) -> None:
    """Red-team pass: with a horizon of half lp's period 3, no instance slot is
    seen complete and the replay proves nothing; the announced 10 was shown
    as reaching the bound 10 all the same."""
    code, out, _ = run(tmp_path, "{name: mine, mode: boast}", "--json", "-",
                       "--horizon", "3/2")
    assert code == 0
    record = json.loads(out)["results"][0]
    assert (record["feasible"], record["completed"]) == (True, 0)
    assert (record["achieved_throughput"], record["bound_reached"]) == (None, None)
    assert ("the planner announced achieved throughput 10, which the strict replay does "
            "not prove (its horizon does not see every instance slot complete): not shown"
            in record["notes"])


@pytest.mark.usefixtures("installed")
def test_a_bound_below_the_schedules_own_throughput_is_not_shown(tmp_path: Path) -> None:
    """Red-team pass: the honest one-shot scatter (1 instance per makespan 3)
    announced with a throughput bound 1/10 and an achieved 1/10 was shown as
    reaching its bound; its strict replay proves 1/3, so 1/10 bounds nothing."""
    code, out, _ = run(tmp_path, "{name: mine, mode: low-bound}", "--json", "-")
    assert code == 0
    record = json.loads(out)["results"][0]
    assert (record["feasible"], record["throughput_bound"], record["bound_reached"]) == (
        True, None, None)
    assert record["achieved_throughput"] == "1/10"
    assert ("the planner announced throughput bound 1/10, below the throughput 1/3 its own "
            "schedule proves: not an upper bound, not shown" in record["notes"])


@pytest.mark.usefixtures("installed")
def test_a_periodic_schedule_in_pieces_is_proven_in_operations(tmp_path: Path) -> None:
    """Red-team pass: lp's periodic scatter of messages of size 1/100 moves 100
    instances per period 3, one third of an operation of size 1 per unit; the
    planner's right 1/3 was replaced by "the strict replay proves 100/3", the
    rate of pieces, a hundred times the operations it completes."""
    code, out, _ = run(tmp_path, "{name: mine, mode: pieces}", "--json", "-")
    assert code == 0
    record = json.loads(out)["results"][0]
    assert (record["feasible"], record["period"]) == (True, "3")
    assert (record["throughput_bound"], record["achieved_throughput"],
            record["bound_reached"]) == ("1/3", "1/3", True)
    assert not [note for note in record["notes"] if "announced" in note]
    assert Fraction(record["measured_throughput_exact"]) <= Fraction(1, 3)


def test_a_commutative_schedule_does_not_stand_for_a_non_commutative_reduce() -> None:
    """Red-team pass: the engine checks a reduction's order by the operation the
    schedule carries.  A planner's schedule declared commutative, combining
    v0 with v2 and then v1, was taken for the scenario's non-commutative
    reduce (it is wrong there) and replayed as feasible."""
    ids = ["P0", "P1", "P2"]
    p = Platform.build(ids, [(a, b, 1) for a in ids for b in ids if a != b])
    mine = Operation(OperationKind.REDUCE, participants=tuple(ids), target="P0").resolve(p)
    theirs = replace(mine, commutative=True)
    schedule = Schedule.from_dicts(p, theirs, [
        {"kind": "send", "src": "P1", "dst": "P0", "item": "v{1}", "start": 0},
        {"kind": "send", "src": "P2", "dst": "P0", "item": "v{2}", "start": 1},
        {"kind": "compute", "node": "P0", "inputs": ["v{0}", "v{2}"], "output": "v{0,2}",
         "start": 2},
        {"kind": "compute", "node": "P0", "inputs": ["v{0,2}", "v{1}"],
         "output": "v{0,1,2}", "start": 3}])
    assert foreign_schedule(schedule, p, mine) == (
        "its reduction is commutative, the scenario's operator is not")
    # the other way round is fine: an ordered reduction is a commutative one too
    ordered = Schedule.from_dicts(p, mine, [
        {"kind": "send", "src": "P1", "dst": "P0", "item": "v[1,1]", "start": 0},
        {"kind": "send", "src": "P2", "dst": "P0", "item": "v[2,2]", "start": 1},
        {"kind": "compute", "node": "P0", "inputs": ["v[0,0]", "v[1,1]"], "output": "v[0,1]",
         "start": 1},
        {"kind": "compute", "node": "P0", "inputs": ["v[0,1]", "v[2,2]"], "output": "v[0,2]",
         "start": 2}])
    assert foreign_schedule(ordered, p, theirs) is None


@pytest.mark.usefixtures("installed")
def test_a_plugins_claim_of_an_optimal_bound_is_not_shown(tmp_path: Path) -> None:
    """``bound_exact: true`` is lp's exact certificate; a plug-in that returns
    lp's own result (bound 1/3: S's send port carries m[A] and m[B], 1 + 2 time
    units an instance) keeps its bound, but its claim that it is optimal is
    nothing the runner can check: null, where lp's row says true."""
    code, out, _ = run(tmp_path, "lp, {name: mine, mode: claims-exact}", "--json", "-")
    assert code == 0
    rows = {row["planner"]: row for row in json.loads(out)["results"]}
    assert rows["lp"]["throughput_bound"] == rows["mine"]["throughput_bound"] == "1/3"
    assert (rows["lp"]["bound_exact"], rows["mine"]["bound_exact"]) == (True, None)
