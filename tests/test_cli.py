"""The command line: run, plan, validate, planners; exit statuses; one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from scenarios.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
SPEC_KEYS = {"planner", "operation", "port_model", "status", "message", "throughput_bound",
             "period", "makespan", "measured_throughput", "completed", "horizon", "feasible",
             "violations"}

SCATTER = """\
name: tiny-scatter
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links:
    - {src: S, dst: A, c: 1}
    - {src: S, dst: B, c: "2/3"}
operation: {type: scatter, source: S, targets: [A, B]}
planners: [flat]
"""


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- run -------------------------------------------------------------------------------


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_run_every_example(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    code, stdout, _ = invoke("run", str(example), "--json", str(out))
    assert code == 0, stdout
    document = json.loads(out.read_text())
    assert document["scenario"] == yaml.safe_load(example.read_text())["name"]
    for result in document["results"]:
        assert set(result) >= SPEC_KEYS
        if result["status"] == "ok":
            assert result["feasible"] is True
            assert result["violations"] == []


def test_run_json_figures_are_exact(tmp_path: Path) -> None:
    scenario = write(tmp_path, SCATTER)
    out = tmp_path / "out.json"
    code, stdout, _ = invoke("run", str(scenario), "--json", str(out), "--horizon", "50")
    assert code == 0
    (result,) = json.loads(out.read_text())["results"]
    # Flat scatter: S sends to A [0, 1) then to B [1, 5/3).
    assert result["makespan"] == "5/3"
    assert result["horizon"] == "50"
    # The series is bounded by S's send port, busy 5/3 per scatter: 30 fit
    # in 50, and the last completes at exactly 30 * 5/3 = 50.
    assert result["completed"] == 30
    assert result["measured_throughput"] == pytest.approx(30 / 50)
    assert "tiny-scatter" in stdout
    assert "5/3" in stdout


def test_run_scatter_toy_with_flat(tmp_path: Path) -> None:
    out = tmp_path / "toy.json"
    code, _, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--json", str(out))
    assert code == 0
    (flat,) = [r for r in json.loads(out.read_text())["results"] if r["planner"] == "flat"]
    # Ps -> Pa -> P0 (1 + 2/3), then Ps -> Pb -> P1 (1 + 4/3): Ps's port is free
    # at 1, so m[P1] reaches Pb at 2 and P1 at 10/3.
    assert flat["makespan"] == "10/3"
    # In the pipelined series Ps sends 2 per scatter: at most 1/2 per time unit,
    # the optimal steady-state throughput of the paper (TP = 1/2).
    assert flat["measured_throughput"] <= 0.5


def test_run_exit_status_1_on_an_invalid_schedule(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from planners import registry
    from planners.base import FunctionPlanner, PlanResult
    from simulator import OperationKind, PortKind, Schedule

    def broken(platform, operation, **options):  # type: ignore[no-untyped-def]
        operation = operation.resolve(platform)
        events = [{"kind": "send", "src": "S", "dst": "A", "item": "m[A]", "start": 0},
                  {"kind": "send", "src": "S", "dst": "B", "item": "m[B]", "start": "1/2"}]
        return PlanResult.ok("broken", Schedule.from_dicts(platform, operation, events))

    planner = FunctionPlanner("broken", broken, frozenset(OperationKind), frozenset(PortKind),
                              "always overlaps two sends")
    monkeypatch.setattr(registry, "get_planner", lambda name: planner)
    monkeypatch.setattr("scenarios.runner.get_planner", lambda name: planner)
    code, stdout, _ = invoke("run", str(write(tmp_path, SCATTER)))
    assert code == 1
    assert "port_conflict" in stdout


# -- plan and validate -----------------------------------------------------------------


@pytest.mark.parametrize("example", ["scatter-toy", "reduce-toy", "broadcast-bidir"])
def test_plan_then_validate(example: str, tmp_path: Path) -> None:
    schedule = tmp_path / "schedule.yaml"
    code, stdout, _ = invoke("plan", str(EXAMPLES / f"{example}.yaml"), "--planner", "flat",
                             "-o", str(schedule))
    assert code == 0, stdout
    code, stdout, _ = invoke("validate", str(schedule))
    assert code == 0, stdout
    assert "feasible and complete" in stdout


def test_validate_a_hand_broken_copy(tmp_path: Path) -> None:
    schedule = tmp_path / "schedule.yaml"
    assert invoke("plan", str(EXAMPLES / "reduce-toy.yaml"), "--planner", "flat",
                  "-o", str(schedule))[0] == 0
    document = yaml.safe_load(schedule.read_text())
    computes = [e for e in document["events"] if e["kind"] == "compute"]
    computes[0]["inputs"].reverse()  # swap the operands of the first reduction
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(document))
    code, stdout, _ = invoke("validate", str(broken))
    assert code == 1
    assert "reduction_order" in stdout
    code, stdout, _ = invoke("validate", str(broken), "--format", "json")
    assert code == 1
    report = json.loads(stdout)
    assert report["ok"] is False
    assert [v["kind"] for v in report["violations"]] == ["reduction_order"]


def test_validate_a_shifted_send(tmp_path: Path) -> None:
    schedule = tmp_path / "schedule.yaml"
    assert invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                  "-o", str(schedule))[0] == 0
    document = yaml.safe_load(schedule.read_text())
    # Make the forwarding hop Pa -> P0 start before m[P0] reached Pa (at 1).
    for event in document["events"]:
        if event["src"] == "Pa":
            event["start"] = "1/2"
    (tmp_path / "shifted.yaml").write_text(yaml.safe_dump(document))
    code, stdout, _ = invoke("validate", str(tmp_path / "shifted.yaml"))
    assert code == 1
    assert "item_not_held" in stdout


# -- planners --------------------------------------------------------------------------


def test_planners_lists_flat() -> None:
    code, stdout, _ = invoke("planners")
    assert code == 0
    assert "flat" in stdout
    assert "scatter" in stdout
    assert "unidirectional" in stdout


# -- bad input: exit 2, one line, the file, the key path, the value --------------------


BAD_SCENARIOS = {
    "unknown key": (SCATTER.replace("planners: [flat]", "planners: [flat]\ncolour: red"),
                    ["colour"]),
    "unknown node id": (SCATTER.replace("{src: S, dst: B", "{src: S, dst: Q"),
                        ["platform.links[1].dst", "Q"]),
    "zero cost": (SCATTER.replace('c: "2/3"', "c: 0"), ["platform.links[1].c", "0"]),
    "negative cost": (SCATTER.replace('c: "2/3"', 'c: "-2/3"'), ["platform.links[1].c", "-2/3"]),
    "garbage number": (SCATTER.replace('c: "2/3"', 'c: "two thirds"'),
                       ["platform.links[1].c", "two thirds"]),
    "unreachable target": (
        SCATTER.replace("{src: S, dst: B, c: \"2/3\"}", "{src: B, dst: S, c: 1}"),
        ["operation.targets[1]", "B"]),
    "participant twice": (
        SCATTER.replace("operation: {type: scatter, source: S, targets: [A, B]}",
                        "operation: {type: reduce, participants: [S, A, S], target: S}"),
        ["operation.participants[2]", "S"]),
    "unknown operation node": (SCATTER.replace("source: S", "source: Z"),
                               ["operation.source", "Z"]),
    "unknown planner": (SCATTER.replace("planners: [flat]", "planners: [flat, quantum]"),
                        ["planners[1]", "quantum", "valid planners: ", "flat"]),
    "bad planner option": (SCATTER.replace("planners: [flat]", "planners: [{name: flat, k: 3}]"),
                           ["planners[0]", "k"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_exit_2_one_line(case: str, tmp_path: Path) -> None:
    text, needles = BAD_SCENARIOS[case]
    path = write(tmp_path, text, "bad.yaml")
    code, _stdout, stderr = invoke("run", str(path))
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert "bad.yaml" in lines[0]
    for needle in needles:
        assert needle in lines[0]


def test_missing_file_and_yaml_syntax(tmp_path: Path) -> None:
    code, _, stderr = invoke("run", str(tmp_path / "nowhere.yaml"))
    assert code == 2
    assert "nowhere.yaml" in stderr
    assert len(stderr.strip().splitlines()) == 1
    path = write(tmp_path, "name: x\nplatform: {nodes: [\n", "broken.yaml")
    code, _, stderr = invoke("run", str(path))
    assert code == 2
    assert "broken.yaml" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_bad_schedule_file(tmp_path: Path) -> None:
    schedule = tmp_path / "schedule.yaml"
    assert invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                  "-o", str(schedule))[0] == 0
    document = yaml.safe_load(schedule.read_text())
    document["events"][0]["start"] = "soon"
    bad = tmp_path / "bad-schedule.yaml"
    bad.write_text(yaml.safe_dump(document))
    code, _, stderr = invoke("validate", str(bad))
    assert code == 2
    assert "bad-schedule.yaml" in stderr
    assert "events[0].start" in stderr
    assert "soon" in stderr


def test_bad_horizon() -> None:
    code, _, stderr = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--horizon", "-3")
    assert code == 2
    assert "--horizon" in stderr


def test_console_entry_point_has_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, SCATTER.replace('c: "2/3"', "c: 0"), "bad.yaml")
    done = subprocess.run([sys.executable, "-m", "scenarios.cli", "run", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_run_an_operation_with_nothing_to_do(tmp_path: Path) -> None:
    path = write(tmp_path, "name: one\nplatform: {nodes: [{id: A}], links: []}\n"
                           "operation: {type: reduce, participants: [A], target: A}\n"
                           "planners: [flat]\n")
    out = tmp_path / "out.json"
    code, _, _ = invoke("run", str(path), "--json", str(out))
    assert code == 0
    (result,) = json.loads(out.read_text())["results"]
    assert result["makespan"] == "0"
    assert result["measured_throughput"] is None
    assert "needs no communication" in result["notes"][0]
