"""The command line: run, plan, validate, planners; exit statuses; one-line errors."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from example_cases import example_params

from portsim.scenarios.cli import main

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


@pytest.mark.parametrize("example", example_params(sorted(EXAMPLES.glob("*.yaml"))))
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


def test_spec_json_example_has_the_output_fields_and_types(tmp_path: Path) -> None:
    """The JSON example of SPEC.md ("JSON result of portsim run --json") names
    fields of the real output with the real types (it showed "horizon" as a
    number; it is an exact rational string)."""
    import re

    spec = (EXAMPLES.parent.parent / "docs" / "SPEC.md").read_text(encoding="utf-8")
    block = spec.split("## JSON result of `portsim run --json`", 1)[1]
    block = block.split("```json", 1)[1].split("```", 1)[0]
    example = json.loads(re.sub(r"//[^\n]*", "", block))
    out = tmp_path / "toy.json"
    invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--json", str(out))
    actual = json.loads(out.read_text())
    (lp,) = [r for r in actual["results"] if r["planner"] == "lp"]
    (shown,) = example["results"]
    assert set(shown) <= set(lp)
    for key, value in shown.items():  # null where lp has none (its makespan)
        assert lp[key] is None or isinstance(lp[key], type(value)), key
    assert isinstance(lp["horizon"], str)


def test_python_records_carry_every_json_field_under_its_name() -> None:
    """``run_scenario``'s records are "the SPEC.md JSON record, typed": each JSON
    field is an attribute of the same name holding the same figure (the exact
    measured throughput was only ``measured_exact`` in Python)."""
    from portsim import load_scenario, run_scenario
    from portsim.simulator.numbers import format_rational

    result = run_scenario(load_scenario(EXAMPLES / "scatter-toy.yaml"))
    for record in result.results:
        for key, value in record.to_dict().items():
            attribute = getattr(record, key)
            if isinstance(attribute, Fraction):
                attribute = format_rational(attribute)
            elif key in ("violations", "notes"):
                attribute = len(attribute)
                value = len(value)
            elif key in ("options", "node_port_models"):  # pairs, a mapping in the JSON
                attribute = dict(attribute)
            assert attribute == value, key
    (flat,) = [r for r in result.results if r.planner == "flat"]
    # flat scatter on the toy: 166 completed in 100 makespans of 10/3
    assert flat.measured_throughput_exact == Fraction(166, Fraction(1000, 3))


@pytest.mark.parametrize("extra", [["--json", "OUT"], ["--report", "OUT"], ["--horizon", "5"],
                                   ["--float"]])
def test_asymptotic_refuses_the_options_it_would_ignore(extra: list[str],
                                                        tmp_path: Path) -> None:
    # `run --asymptotic --json out.json` printed its table, wrote no file and
    # exited 0; --horizon and --float were ignored as silently.
    out = tmp_path / "out"
    args = [str(out) if a == "OUT" else a for a in extra]
    code, stdout, stderr = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--asymptotic",
                                  *args)
    assert code == 2
    assert stdout == ""
    assert stderr.startswith(f"portsim: error: {extra[0]}: does not apply with --asymptotic")
    assert stderr.count("\n") == 1
    # the value given, if any: a flag has none (it once said "(got 'True')" of --float)
    given = f" (got {args[1]!r})" if len(args) == 2 else ""
    assert stderr.endswith(f"which prints its table only{given}\n")
    assert not out.exists()


def test_json_and_report_cannot_both_take_standard_output(tmp_path: Path) -> None:
    # Both went to standard output, one after the other: neither JSON nor HTML.
    scenario = write(tmp_path, SCATTER)
    code, stdout, stderr = invoke("run", str(scenario), "--json", "-", "--report", "-")
    assert code == 2
    assert stdout == ""
    assert stderr == ("portsim: error: --report: standard output (-) already carries the "
                      "--json document (got '-')\n")


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


def test_run_float_keeps_the_one_shot_makespan(tmp_path: Path) -> None:
    # The same 10/3 by hand as above: the float replay confirms the planner's
    # exact makespan (the row used to have none under --float).
    out = tmp_path / "toy.json"
    code, stdout, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--float",
                             "--json", str(out))
    assert code == 0
    (flat,) = [r for r in json.loads(out.read_text())["results"] if r["planner"] == "flat"]
    assert flat["makespan"] == "10/3"
    assert "10/3" in next(line for line in stdout.splitlines() if "flat" in line)


def test_run_exit_status_1_on_an_invalid_schedule(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from portsim.planners import registry
    from portsim.planners.base import FunctionPlanner, PlanResult
    from portsim.simulator import OperationKind, PortKind, Schedule

    def broken(platform, operation, **options):  # type: ignore[no-untyped-def]
        operation = operation.resolve(platform)
        events = [{"kind": "send", "src": "S", "dst": "A", "item": "m[A]", "start": 0},
                  {"kind": "send", "src": "S", "dst": "B", "item": "m[B]", "start": "1/2"}]
        return PlanResult.ok("broken", Schedule.from_dicts(platform, operation, events))

    planner = FunctionPlanner("broken", broken, frozenset(OperationKind), frozenset(PortKind),
                              "always overlaps two sends")
    monkeypatch.setattr(registry, "get_planner", lambda name: planner)
    monkeypatch.setattr("portsim.scenarios.runner.get_planner", lambda name: planner)
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


@pytest.mark.parametrize("command", ["run", "validate", "plan", "planners", "study", "report",
                                     "msccl-import"])
def test_help_texts_carry_no_markup(command: str) -> None:
    # Click prints a docstring as written: reST ``x`` showed as ``x``.
    code, stdout, _ = invoke(command, "--help")
    assert code == 0
    assert "``" not in stdout


def test_validate_help_names_both_modes_and_the_exit_statuses() -> None:
    _, stdout, _ = invoke("validate", "--help")
    assert "Replay SCHEDULE (strictly, or --mode asap)" in stdout
    assert ("0 feasible and complete, 1 violations (or, --mode asap, feasible but "
            "incomplete: some expected instance never completes), 2 bad input"
            in " ".join(stdout.split()))


def test_readme_commands_table_lists_every_option() -> None:
    """Each command's row of the README's commands table shows every option
    the command takes (long form, or its short form such as ``-o``), and no
    option the command lacks; the group's own options are named in the text."""
    import re

    readme = (EXAMPLES.parent.parent / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `portsim ([a-z-]+)(.*?) \| ", readme, flags=re.MULTILINE))
    assert set(rows) == set(main.commands)
    for name, command in main.commands.items():
        shown = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", rows[name]))
        for param in command.params:
            opts = [o for o in param.opts if o.startswith("-")]
            if opts:
                assert shown & set(opts), (name, opts)
        known = {o for p in command.params for o in p.opts} | {"--help", "-h"}
        assert shown <= known, (name, shown - known)
    for param in main.params:
        for opt in param.opts:
            assert f"`portsim {opt}`" in readme, opt


def test_readme_planners_table_gives_each_planner_its_operations() -> None:
    """The README's planners table has a row for every built-in planner and
    lists exactly the operations the planner handles (``snf``, ``optimal``
    and ``fnf`` shared one row that gave each all three; ``msccl`` had none)."""
    import re

    from portsim.planners.registry import BUILTIN_PLANNERS

    readme = (EXAMPLES.parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("| planner | kind | operations |\n", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines()[1:]:
        cells = line.strip().strip("|").split(" | ")
        for name in re.findall(r"`([a-z-]+)`", cells[0]):
            rows[name] = {op.strip() for op in cells[-1].split(",")}
    for name, planner in BUILTIN_PLANNERS.items():
        assert rows.get(name) == {str(op) for op in planner.operations}, name


def test_planners_lists_flat() -> None:
    code, stdout, _ = invoke("planners")
    assert code == 0
    assert "flat" in stdout
    assert "scatter" in stdout
    assert "unidirectional" in stdout


def test_planners_format_json_through_json_tool() -> None:
    """`portsim planners` had no JSON output where `validate` has `--format json`."""
    from portsim.planners import available_planners

    done = subprocess.run(f"{shlex.quote(sys.executable)} -m portsim planners --format json"
                          f" | {shlex.quote(sys.executable)} -m json.tool", shell=True,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr  # before: "no such option '--format'"
    listed = {p["name"]: p for p in json.loads(done.stdout)["planners"]}
    assert list(listed) == sorted(listed)
    # each entry as the planner itself says (imported, not the listing's table)
    for name, planner in available_planners().items():
        assert listed[name]["operations"] == sorted(str(k) for k in planner.operations)
        assert listed[name]["port_models"] == sorted(str(k) for k in planner.port_models)
        assert listed[name]["description"] == planner.description
    assert set(listed) == set(available_planners())
    # SPEC.md: lp plans every collective; flat is the naive flat tree of four
    assert listed["lp"]["operations"] == ["allgather", "allreduce", "alltoall", "broadcast",
                                          "gather", "reduce", "scatter"]
    assert listed["flat"]["operations"] == ["broadcast", "gather", "reduce", "scatter"]


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
    # random.Random(-1) is random.Random(1): a negative seed would repeat another run.
    "negative seed": ("seed: -1\n" + SCATTER, ["seed", "-1"]),
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
    done = subprocess.run([sys.executable, "-m", "portsim.scenarios.cli", "run", str(path)],
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


# -- one planner, one result (issue 12, item 2) -----------------------------------------

STAR_REDUCE = """\
name: star-reduce
platform:
  nodes: [{id: N0}, {id: N1}, {id: N2}, {id: N3}, {id: N4}, {id: N5}]
  links:
    - {src: N1, dst: N0, c: 1}
    - {src: N2, dst: N0, c: 2}
    - {src: N3, dst: N0, c: 1}
    - {src: N4, dst: N0, c: 3}
    - {src: N5, dst: N0, c: 1}
operation: {type: reduce, target: N0}
planners: [PLANNERS]
"""


def star_reduce(tmp_path: Path, planners: str) -> Path:
    return write(tmp_path, STAR_REDUCE.replace("PLANNERS", planners))


def test_tree_planners_without_paths_answer_unsupported(tmp_path: Path) -> None:
    # Every participant reaches the target, but not one another: the tree
    # planners once raised "no path from N4 to N3" and the run exited 2,
    # losing the flat result.
    out = tmp_path / "out.json"
    code, _stdout, stderr = invoke("run", str(star_reduce(tmp_path, "lp, greedy, binomial, "
                                                         "fibonacci, flat")),
                                  "--json", str(out))
    assert code == 0, stderr
    results = {r["planner"]: r for r in json.loads(out.read_text())["results"]}
    # Every v_i must cross its own link into N0, whose receive port then
    # works 1 + 2 + 1 + 3 + 1 = 8 per reduction: TP = 1/8.
    assert results["lp"]["status"] == "ok"
    assert results["lp"]["throughput_bound"] == "1/8"
    assert results["lp"]["feasible"] is True
    for name in ("greedy", "binomial", "fibonacci"):
        assert results[name]["status"] == "unsupported"
        assert "no path from" in results[name]["message"]
    flat = results["flat"]
    assert flat["status"] == "ok"
    assert flat["feasible"] is True
    # Flat reduce: N0 receives v1..v5 one after the other, 1 + 2 + 1 + 3 + 1 = 8
    # time units of its receive port, and combines them in order (compute 1
    # each, overlapping the next receive): the last ends at 8 + 1.
    assert flat["makespan"] == "9"


def raising_planner(error: Exception):  # type: ignore[no-untyped-def]
    from portsim.planners.base import FunctionPlanner
    from portsim.simulator import OperationKind, PortKind

    def plan(platform, operation, **options):  # type: ignore[no-untyped-def]
        raise error

    return FunctionPlanner("boom", plan, frozenset(OperationKind), frozenset(PortKind),
                           "always raises")


@pytest.mark.parametrize("error", [RuntimeError("solver crashed"), RecursionError("deep"),
                                   OverflowError("int too large to convert to float")])
def test_a_raising_planner_is_an_error_row_and_exit_3(
        error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from portsim.planners import registry

    boom = raising_planner(error)
    real = registry.get_planner
    monkeypatch.setattr("portsim.scenarios.runner.get_planner",
                        lambda name: boom if name == "boom" else real(name))
    out = tmp_path / "out.json"
    code, stdout, _ = invoke("run", str(star_reduce(tmp_path, "boom, flat")),
                             "--json", str(out))
    assert code == 3
    boom_row, flat_row = json.loads(out.read_text())["results"]
    assert boom_row["status"] == "error"
    assert type(error).__name__ in boom_row["message"]
    assert str(error) in boom_row["message"]
    assert flat_row["status"] == "ok"
    assert flat_row["makespan"] == "9"
    assert "boom: error: the planner failed" in stdout


def test_validation_failure_outranks_a_planner_error() -> None:
    from types import SimpleNamespace

    from portsim.scenarios.cli import EXIT_INVALID, EXIT_OK, EXIT_PLANNER_ERROR, _run_status

    def outcome(failed: bool, errored: bool) -> SimpleNamespace:
        return SimpleNamespace(any_failed_validation=failed, any_planner_error=errored)

    assert _run_status(outcome(True, True)) == EXIT_INVALID == 1  # type: ignore[arg-type]
    assert _run_status(outcome(False, True)) == EXIT_PLANNER_ERROR == 3  # type: ignore[arg-type]
    assert _run_status(outcome(False, False)) == EXIT_OK  # type: ignore[arg-type]


def test_a_bad_option_is_still_bad_input(tmp_path: Path) -> None:
    code, stdout, stderr = invoke("run", str(star_reduce(tmp_path, "{name: greedy, "
                                                         "reducers: 0}, flat")))
    assert code == 2
    assert stdout == ""
    assert stderr.splitlines() == [
        f"portsim: error: {tmp_path / 'scenario.yaml'}: planners[0].greedy.reducers: must "
        "be an integer >= 1 (got 0)"]


@pytest.mark.parametrize("option", ["--json", "--report"])
def test_run_output_in_a_missing_folder_fails_before_planning(
        tmp_path: Path, option: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # No planner runs at all (it used to plan, replay and print the table,
    # then fail to write).
    monkeypatch.setattr("portsim.scenarios.runner.run_scenario",
                        lambda *a, **k: pytest.fail("planned before checking the output"))
    target = tmp_path / "missing" / "out.txt"
    code, stdout, stderr = invoke("run", str(write(tmp_path, SCATTER)), option, str(target))
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        f"portsim: error: {target}: cannot write it: the folder {target.parent} does not exist"]


def unwritable_folder(tmp_path: Path) -> Path:
    """A folder no file can be created in: a read-only one, or (as root, whom
    permission bits do not stop) sysfs's ``/sys/kernel``."""
    import os

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, Path("/sys/kernel")):
        try:
            (candidate / "probe").touch()
        except OSError:
            return candidate
        (candidate / "probe").unlink()
    os.chmod(folder, 0o755)
    pytest.skip("no folder here refuses a new file")


@pytest.mark.parametrize("command", [["run", "--json"], ["run", "--report"],
                                     ["plan", "--planner", "flat", "-o"]])
def test_output_in_an_unwritable_folder_fails_before_planning(
        tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # It planned, replayed and printed the table, then failed to write (exit 2);
    # for a large lp, minutes late.
    monkeypatch.setattr("portsim.scenarios.runner.run_scenario",
                        lambda *a, **k: pytest.fail("planned before checking the output"))
    monkeypatch.setattr("portsim.scenarios.runner.guarded_plan",
                        lambda *a, **k: pytest.fail("planned before checking the output"))
    folder = unwritable_folder(tmp_path)
    target = folder / "out.txt"
    code, stdout, stderr = invoke(command[0], str(write(tmp_path, SCATTER)), *command[1:],
                                  str(target))
    (tmp_path / "read-only").chmod(0o755)
    assert (code, stdout) == (2, "")
    assert len(stderr.splitlines()) == 1
    assert stderr.startswith(f"portsim: error: {target}: cannot write it: cannot create a "
                             f"file in the folder {folder}: ")
    assert not target.exists()


def test_plan_of_an_order_only_planner_says_to_validate_asap(tmp_path: Path) -> None:
    # lp-naive's times are its port-sum timing, not achievable unidirectionally:
    # strict validation lists violations, --mode asap measures it.
    target = tmp_path / "naive.yaml"
    code, stdout, stderr = invoke("plan", str(EXAMPLES / "broadcast-unidir.yaml"),
                                  "--planner", "lp-naive", "-o", str(target))
    assert code == 0
    assert stderr.splitlines() == [
        f"note: lp-naive claims only the order of events, not their times: check it with "
        f"`portsim validate {target} --mode asap`"]
    assert invoke("validate", str(target))[0] == 1
    # as soon as possible: no violation, complete (exit 0; it runs behind its
    # own times, which is no defect of an order-only schedule), the README's 3/5
    code, stdout, _ = invoke("validate", str(target), "--mode", "asap")
    assert code == 0
    assert "feasible and complete (asap replay, unidirectional)" in stdout
    assert "measured throughput: 3/5" in stdout
    _, _, stderr = invoke("plan", str(EXAMPLES / "broadcast-unidir.yaml"), "--planner", "lp",
                          "-o", str(target))
    assert stderr == ""


def test_plan_output_in_a_missing_folder_fails_before_planning(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "s.yaml"
    code, stdout, stderr = invoke("plan", str(write(tmp_path, SCATTER)), "--planner", "flat",
                                  "-o", str(target))
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        f"portsim: error: {target}: cannot write it: the folder {target.parent} does not exist"]


def test_plan_of_a_raising_planner_exits_3(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("portsim.planners.registry.get_planner",
                        lambda name: raising_planner(RuntimeError("solver crashed")))
    code, stdout, stderr = invoke("plan", str(star_reduce(tmp_path, "flat")), "--planner",
                                  "boom", "-o", str(tmp_path / "s.yaml"))
    assert code == 3
    assert stdout == ""
    assert "returned error: the planner failed: RuntimeError: solver crashed" in stderr


# -- standard output is portsim's own (issue 12, items 1 and 6) ---------------------------


def _child_env(root: Path) -> dict[str, str]:
    """The environment of a child ``python -m portsim``: the tests' own PYTHONPATH kept
    (a worktree's copy comes through it; without it the child ran the installed one)."""
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), os.environ.get("PYTHONPATH", "")])}


def portsim(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a real process, standard streams apart (nothing captured by pytest)."""
    root = Path(__file__).resolve().parent.parent
    env = _child_env(root)
    return subprocess.run([sys.executable, "-m", "portsim.scenarios.cli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_run_json_to_stdout_parses(tmp_path: Path) -> None:
    done = portsim("run", str(EXAMPLES / "reduce-fibonacci.yaml"), "--json", "-")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # nothing else on standard output
    labels = [r["label"] for r in document["results"]]
    assert labels == ["greedy", "fibonacci", "binomial", "greedy (reducers: 2)", "flat"]
    assert "reduce-fibonacci" in done.stderr  # the table went to standard error
    assert not (tmp_path / "-").exists()
    assert not Path("-").exists()


def test_run_json_to_stdout_parses_with_lp() -> None:
    # Passes once the lp planner silences the HiGHS banner at solver creation.
    done = portsim("run", str(EXAMPLES / "reduce-toy.yaml"), "--json", "-")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [r["planner"] for r in document["results"]] == ["flat", "lp"]
    assert document["results"][1]["throughput_bound"] == "1"  # RR-4872 Fig. 6


def test_plan_to_stdout_then_validate_from_stdin() -> None:
    planned = portsim("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                      "-o", "-")
    assert planned.returncode == 0, planned.stderr
    document = yaml.safe_load(planned.stdout)  # nothing else on standard output
    assert len(document["events"]) == 4  # Ps -> Pa -> P0 and Ps -> Pb -> P1
    assert "wrote one-shot schedule of 4 events to -" in planned.stderr
    # Ps sends m[P1] at 1; moved to 1/2 it overlaps m[P0] on Ps's send port.
    (second,) = [e for e in document["events"] if e["src"] == "Ps" and e["start"] == "1"]
    second["start"] = "1/2"
    checked = portsim("validate", "-", "--format", "json", stdin=yaml.safe_dump(document))
    assert checked.returncode == 1, checked.stderr
    report = json.loads(checked.stdout)
    assert report["ok"] is False
    assert report["schedule"] == "-"
    assert "port_conflict" in {v["kind"] for v in report["violations"]}


def test_a_json_lines_schedule_validates_from_stdin(tmp_path: Path) -> None:
    """The JSON Lines form (``plan -o s.jsonl``) piped into ``validate -``: read as
    such, not as YAML (it was ``invalid YAML: expected '<document start>'``); the
    flat scatter of the toy has makespan 10/3 (Ps -> Pb -> P1: 1 + 1 + 4/3)."""
    schedule = tmp_path / "s.jsonl"
    assert invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat", "-o",
                  str(schedule))[0] == 0
    text = schedule.read_text()
    checked = portsim("validate", "-", "--format", "json", "--no-lp-bound", stdin=text)
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert (report["ok"], report["makespan"]) == (True, "10/3")
    header, first, *rest = text.splitlines(keepends=True)
    bad = header + first.replace('"dst":"Pa"', '"dst":"Q"') + "".join(rest)
    refused = portsim("validate", "-", stdin=bad)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "portsim: error: <stdin>: events[0].dst: unknown node id (got 'Q')"]


def test_validate_json_to_stdout_parses_with_lp(tmp_path: Path) -> None:
    # Passes once the lp planner silences the HiGHS banner: a feasible schedule
    # is compared with the lp bound.
    schedule = tmp_path / "s.yaml"
    assert invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat", "-o",
                  str(schedule))[0] == 0
    checked = portsim("validate", str(schedule), "--format", "json")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["ok"] is True
    assert report["lp_bound"] == "1/2"


def test_run_reads_the_scenario_from_stdin() -> None:
    done = portsim("run", "-", "--json", "-", stdin=SCATTER)
    assert done.returncode == 0, done.stderr
    (flat,) = json.loads(done.stdout)["results"]
    assert flat["makespan"] == "5/3"


def test_bad_input_on_stdin_is_named_stdin() -> None:
    done = portsim("run", "-", stdin="name: x\nplatform: {nodes: []}\n")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("portsim: error: <stdin>: ")
    assert len(done.stderr.splitlines()) == 1


def test_warnings_are_one_line_on_stderr(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from portsim.planners.base import FunctionPlanner
    from portsim.planners.flat import FLAT_PLANNER
    from portsim.simulator import OperationKind, PortKind

    def plan(platform, operation, **options):  # type: ignore[no-untyped-def]
        import warnings

        warnings.warn("first line\nsecond line", UserWarning, stacklevel=1)
        return FLAT_PLANNER.plan(platform, operation)

    noisy = FunctionPlanner("noisy", plan, frozenset(OperationKind), frozenset(PortKind), "")
    monkeypatch.setattr("portsim.scenarios.runner.get_planner", lambda name: noisy)
    out = tmp_path / "out.json"
    code, stdout, stderr = invoke("run", str(write(tmp_path, SCATTER)), "--json", str(out))
    assert code == 0
    # The planner's warning is a note of its result, printed once, one line.
    (row,) = json.loads(out.read_text())["results"]
    assert "first line second line" in row["notes"]
    assert stdout.count("first line second line") == 1
    assert "UserWarning" not in stdout + stderr


# -- budgets and honest horizons (issue 12 item 3, issue 13 item 4) ----------------------


def test_a_huge_horizon_is_exact_and_fast(tmp_path: Path) -> None:
    # It once replayed 42 s and 2.5 GB before exiting 2.  The flat series and the
    # periodic count are computed from their repeating patterns.
    out = tmp_path / "out.json"
    code, _, stderr = invoke("run", str(write(tmp_path, SCATTER)), "--json", str(out),
                             "--horizon", "1000000000000")
    assert code == 0, stderr
    (flat,) = json.loads(out.read_text())["results"]
    # S's send port is busy 5/3 per scatter and the series keeps it busy: the
    # k-th scatter completes at 5k/3, so 3 * 10^12 / 5 complete by 10^12.
    assert flat["completed"] == 600_000_000_000
    assert flat["replay_cut"] is False


def test_a_period_too_full_to_check_is_not_blamed_on_the_horizon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long periodic horizon is measured from two short replays (the steady
    state's check), whatever its length: when those are over the engine's cap,
    the period holds too many events, and "give a shorter horizon" (with exit
    status 2, bad input) was wrong advice.  Now the row's error says so."""
    import portsim.simulator.engine
    monkeypatch.setattr(portsim.simulator.engine, "MAX_REPLAY_EVENTS", 5)
    scenario = write(tmp_path, SCATTER.replace("[flat]", "[lp]"))
    code, stdout, _ = invoke("run", str(scenario), "--horizon", "1000000", "--json", "-")
    assert code == 3
    (row,) = json.loads(stdout)["results"]
    assert row["status"] == "error"
    assert "give a shorter horizon" not in row["message"]
    assert ("replaying 2 periods of 6 events exceeds the cap of 5 events, and those are "
            "the fewest periods that check its steady state") in row["message"]


def test_asymptotic_rows_are_labelled_and_exact(tmp_path: Path) -> None:
    from portsim.scenarios.asymptotic import asymptotic_study
    from portsim.scenarios.loader import load_scenario

    study = asymptotic_study(load_scenario(star_reduce(tmp_path, "flat, {name: greedy, "
                                                       "reducers: 2}")), periods=(10, 1000))
    labels = {row.planner for row in study.rows}
    assert labels == {"flat", "greedy (reducers: 2)", "lp"}
    flat = [row for row in study.rows if row.planner == "flat"]
    # N0's receive port takes 8 per flat reduce, so the series completes one
    # per 8 time units (the first at 9): floor((H - 9) / 8) + 1.
    for row in flat:
        assert row.completed == (row.horizon - 9) // 8 + 1
        assert row.note == ""
    assert study.ok


def test_asymptotic_table_says_what_c_is(tmp_path: Path) -> None:
    code, stdout, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--asymptotic")
    assert code == 0
    assert "C = TP*K - completed" in " ".join(stdout.split())
    # lp at K = 10 periods of 6: 29 of TP*K = 30 completed, so C = 1
    rows = [[c.strip() for c in line.split("│")][1:-1] for line in stdout.splitlines()
            if line.startswith("│")]
    assert ["lp", "10", "60", "29", "30", "29/30 ~ 0.9667", "1", ""] in rows
    # the ratio exact (it was a float of 4 digits, "0.9667"), its decimal marked
    # approximate as validate marks it: completed / TP*K, 3K - 1 of 3K for K periods
    assert {(row[0], row[5]) for row in rows} == {
        (planner, f"{3 * k - 1}/{3 * k} ~ {(3 * k - 1) / (3 * k):.4g}")
        for planner in ("flat", "lp") for k in (10, 100, 1000)}
    for row in rows:
        exact = row[5].split(" ~ ")[0]
        assert Fraction(exact) == Fraction(int(row[3]), int(row[4]))


def test_asymptotic_problem_gives_the_ratios_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit-1 line listed the lp ratios as floats of 4 digits (0.9667, ...)."""
    import portsim.scenarios.asymptotic as asymptotic

    monkeypatch.setattr(asymptotic, "APPROACH", 2)  # no ratio reaches it: the problem line
    code, stdout, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"), "--asymptotic")
    assert code == 1
    assert ("the lp ratio does not approach 1: 29/30 ~ 0.9667, 299/300 ~ 0.9967, "
            "2999/3000 ~ 0.9997") in " ".join(stdout.split())


def test_asymptotic_exit_1_when_lp_is_not_measured(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import portsim.simulator.engine
    monkeypatch.setattr(portsim.simulator.engine, "MAX_REPLAY_EVENTS", 5)
    code, stdout, _ = invoke("run", str(write(tmp_path, SCATTER)), "--asymptotic")
    assert code == 1
    assert "the lp ratio is not measured at the longest horizon" in stdout


def test_a_huge_horizon_on_the_reduce_toy(tmp_path: Path) -> None:
    # Issue 13: 42 s and 2.5 GB on the flat replay, then exit 2.  Now exact:
    # the flat reduce (makespan 5/2) is paced by P0's receive port, 2 per
    # operation, so copy t completes at 5/2 + 2t; lp (TP = 1, Fig. 6) loses a
    # start-up constant C that a full replay of 1000 time units already shows.
    from portsim.scenarios.loader import load_scenario
    from portsim.scenarios.runner import run_scenario
    from portsim.simulator.engine import replay

    horizon = Fraction(10**12)
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    flat, lp = run_scenario(scenario, horizon=horizon).results
    assert flat.completed == (horizon - Fraction(5, 2)) // 2 + 1 == 499_999_999_999
    assert lp.plan is not None
    assert lp.plan.schedule is not None
    short = replay(lp.plan.schedule, horizon=1000)
    assert lp.completed == 10**12 - (1000 - short.completed)
    assert lp.feasible
    assert not lp.replay_cut


def test_run_table_prints_the_measured_throughput_exactly(tmp_path: Path) -> None:
    """The table's ``measured TP`` is ``completed / horizon`` as a rational, the
    JSON result's figures (never a rounded float)."""
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "scatter-toy.yaml"),
                                       "--json", str(out)])
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in result.output.splitlines() if line.startswith("│")}
    for record in json.loads(out.read_text())["results"]:
        exact = Fraction(record["completed"]) / Fraction(record["horizon"])
        assert rows[record["label"]][5] == record["measured_throughput_exact"] \
            == (f"{exact.numerator}/{exact.denominator}" if exact.denominator > 1
                else str(exact.numerator))


# Two costs whose terms take 18 digits: every figure of the run is a fraction of
# some 36 digits over 36, longer than a table column shows.
LONG_COSTS = (Fraction("123456789012345677/987654321098765431"),
              Fraction("987654321098765429/123456789012345673"))
LONG_SCATTER = f"""\
name: long
platform:
  nodes: [{{id: S}}, {{id: A}}, {{id: B}}]
  links:
    - {{src: S, dst: A, c: "{LONG_COSTS[0]}"}}
    - {{src: S, dst: B, c: "{LONG_COSTS[1]}"}}
operation: {{type: scatter, source: S}}
planners: [lp, flat]
"""


def test_run_table_gives_a_long_fraction_as_its_decimal_value(tmp_path: Path) -> None:
    """A fraction of 70 characters in the table was cut to its first digits,
    ``1219326311370217892…``, read as some 10^18 where the bound is about 0.123;
    the cell now gives its value to 6 digits, the JSON the exact figure."""
    out = tmp_path / "r.json"
    code, stdout, _ = invoke("run", str(write(tmp_path, LONG_SCATTER)), "--json", str(out))
    assert code == 0, stdout
    assert "…" not in stdout
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in stdout.splitlines() if line.startswith("│")}
    records = {r["label"]: r for r in json.loads(out.read_text())["results"]}
    # The source's send port carries both messages: TP = 1 / (c(S,A) + c(S,B)),
    # and flat sends them one after the other: makespan c(S,A) + c(S,B).
    total = sum(LONG_COSTS, Fraction(0))
    bound = 1 / total

    def about(cell: str, value: Fraction) -> bool:  # 6 significant digits of value
        return cell.startswith("~") and abs(Fraction(cell[1:]) / value - 1) < Fraction(1, 10**5)

    assert Fraction(records["lp"]["throughput_bound"]) == bound
    assert rows["lp"][2] == "~0.123077"
    assert about(rows["lp"][2], bound)
    assert about(rows["flat"][4], total)
    for label, record in records.items():
        assert len(record["measured_throughput_exact"]) > 40
        assert about(rows[label][5], Fraction(record["measured_throughput_exact"]))
        assert about(rows[label][7], Fraction(record["horizon"]))
    assert "~: a longer exact rational, to 6 significant digits" in stdout
    # a short fraction stays exact, and the line is not printed
    code, stdout, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"))
    assert "~" not in stdout
    # the --asymptotic table likewise
    code, stdout, _ = invoke("run", str(write(tmp_path, LONG_SCATTER)), "--asymptotic")
    assert code == 0, stdout
    assert "…" not in stdout
    assert "TP = ~0.123077," in stdout

def test_validate_gives_a_long_makespan_and_throughput_their_decimal_value(
        tmp_path: Path) -> None:
    """``validate`` wrote ``lp bound: N/D (~0.123077)`` for a long bound, but the
    makespan and throughput above it, 36 digits over 36, with no decimal."""
    schedule = tmp_path / "flat.yaml"
    code, _, _ = invoke("plan", str(write(tmp_path, LONG_SCATTER)), "--planner", "flat",
                        "-o", str(schedule))
    assert code == 0
    code, stdout, _ = invoke("validate", str(schedule), "--no-lp-bound")
    assert code == 0, stdout
    total = sum(LONG_COSTS, Fraction(0))  # flat sends to A, then to B
    lines = dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)
    for key, value in (("makespan", total), ("throughput", 1 / total)):
        exact, decimal = re.match(r"(\S+) \(~(\S+)\)", lines[key]).groups()  # type: ignore[union-attr]
        assert Fraction(exact) == value
        assert abs(Fraction(decimal) / value - 1) < Fraction(1, 10**5)


def test_validate_a_bad_port_model_names_the_option(tmp_path: Path) -> None:
    schedule = write(tmp_path, SCATTER.split("planners:")[0].replace("name: tiny-scatter\n", "")
                     + "events:\n  - {kind: send, src: S, dst: A, item: 'm[A]', start: 0}\n"
                     "  - {kind: send, src: S, dst: B, item: 'm[B]', start: 1}\n",
                     "schedule.yaml")
    assert invoke("validate", str(schedule))[0] == 0
    code, _, stderr = invoke("validate", str(schedule), "--port-model", "multiport:0")
    assert code == 2
    assert stderr == ("portsim: error: --port-model: expected bidirectional, unidirectional, "
                      "multiport or multiport:K (K >= 1) (got 'multiport:0')\n")


LOWER_CASE = """\
platform:
  nodes: [{id: src}, {id: a}, {id: b}]
  links: [{src: src, dst: a, c: 1}, {src: a, dst: b, c: 1}]
operation: {type: scatter, source: src}
"""


def test_text_output_keeps_items_in_brackets(tmp_path: Path) -> None:
    # m[b] or v[k,l] look like console style tags: they used to vanish from the text
    scenario = write(tmp_path, "name: lower\n" + LOWER_CASE + "planners: [flat]\n")
    code, stdout, _ = invoke("run", str(scenario))
    assert code == 0
    assert "flat: note: m[b] forwarded along src -> a -> b" in stdout
    schedule = write(tmp_path, LOWER_CASE + "events:\n"
                     "  - {kind: send, src: src, dst: a, item: 'm[b]', start: 0}\n"
                     "  - {kind: send, src: src, dst: a, item: 'm[a]', start: '1/2'}\n",
                     "schedule.yaml")
    code, stdout, _ = invoke("validate", str(schedule))
    assert code == 1
    assert "send of m[a] to a (event 1) needs the send port of src, busy with event 0" in stdout
    assert "b never holds m[b]" in stdout
    commutative = write(tmp_path, """\
platform:
  nodes: [{id: P0}, {id: P1}]
  links: [{src: P1, dst: P0, c: 1}]
operation: {type: reduce, participants: [P0, P1], target: P0, commutative: true}
events:
  - {kind: send, src: P1, dst: P0, item: "v{1}", start: 0}
  - {kind: compute, node: P0, inputs: ["v{0}", "v{1}"], output: "v{0,1}", start: 1}
""", "commutative.yaml")
    code, stdout, _ = invoke("validate", str(commutative))
    assert code == 0
    assert "combines intervals v[k,l] and v[l+1,m]" in stdout


def test_ctrl_c_is_one_line_and_exit_status_130(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # click's default was "Aborted!" and exit status 1, the status of a schedule
    # that failed validation
    import portsim.scenarios.runner as runner

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_scenario", interrupted)
    code, stdout, stderr = invoke("run", str(write(tmp_path, SCATTER)))
    assert code == 130
    assert stdout == ""
    assert stderr == "portsim: stopped by SIGINT\n"


@pytest.mark.parametrize("how", [["-m", "portsim"],
                                 ["-c", "from portsim.__main__ import main; main()"]],
                         ids=["python -m portsim", "the portsim script's target"])
def test_ctrl_c_while_the_command_line_is_imported(how: list[str], tmp_path: Path) -> None:
    """Ctrl-C during click's import (``timeout -s INT 0.03 portsim run ...``) printed
    Python's traceback; here a ``click`` whose import is interrupted, first on the path."""
    import os

    (tmp_path / "click").mkdir()
    (tmp_path / "click" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, *how, "run", str(EXAMPLES / "scatter-toy.yaml")],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.stderr == "portsim: stopped by SIGINT\n"  # before: a traceback of 6 lines
    assert done.returncode == 130
    assert done.stdout == ""


@pytest.mark.parametrize("where", ["_guard_standard_streams", "make_context"])
def test_ctrl_c_before_a_command_runs(where: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted before the command runs: while the standard streams are set up (a
    traceback) or the arguments parsed (click's "Aborted!" and exit status 1)."""
    import click

    import portsim.scenarios.cli as cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    if where == "make_context":
        monkeypatch.setattr(click.Group, "make_context", interrupted)
    else:
        monkeypatch.setattr(cli, where, interrupted)
    try:
        result = CliRunner().invoke(main, ["run", str(write(tmp_path, SCATTER))])
    except KeyboardInterrupt:  # before the fix, from the streams' set-up: a traceback
        pytest.fail("KeyboardInterrupt escaped the command line")
    assert result.exit_code == 130, result.output
    assert result.stderr == "portsim: stopped by SIGINT\n"


def test_run_table_title_counts_routers_apart_and_names_every_port_model(
        tmp_path: Path) -> None:
    """One DGX A100 was titled "on 19 nodes" (ten of them routers), and a platform whose
    nodes override the port model showed the platform's default only."""
    path = tmp_path / "mixed.yaml"
    path.write_text("""\
name: mixed
platform:
  port_model: bidirectional
  nodes:
    - {id: S}
    - {id: A, port_model: "multiport:2"}
    - {id: B}
    - {id: sw, router: true}
  links:
    - {src: S, dst: sw, c: 1}
    - {src: sw, dst: A, c: 1}
    - {src: sw, dst: B, c: 2}
operation: {type: scatter, source: S, targets: [A, B]}
planners: [flat]
""")
    code, out, _ = invoke("run", str(path))
    assert code == 0, out
    assert "mixed: scatter on 4 nodes (1 router), mixed: bidirectional, multiport:2" in out
    code, out, _ = invoke("run", str(EXAMPLES / "allgather-dgx-a100.yaml"), "--horizon", "1")
    assert "allgather on 36 nodes (20 routers), multiport" in out


def test_plan_picks_an_entry_by_its_label(tmp_path: Path) -> None:
    # Found by a new user: with `lp` listed twice, `plan --planner lp` could
    # only ever write the first entry's schedule.  The README's figures for
    # the scatter toy: period 6 with split messages, 24 with whole ones.
    from portsim import load_schedule

    scenario = tmp_path / "toy.yaml"
    toy = (EXAMPLES / "scatter-toy.yaml").read_text()
    scenario.write_text(toy[:toy.index("planners:")] + "planners: [lp, {name: lp, split: false}]\n")
    periods = {}
    # the label as printed, or as the scenario file writes the option (it was refused)
    for choice in ("lp", "lp (split: False)", "lp (split: false)"):
        target = tmp_path / "s.yaml"
        code, _, stderr = invoke("plan", str(scenario), "--planner", choice, "-o", str(target))
        assert code == 0, stderr
        periods[choice] = load_schedule(target).period
    assert periods == {"lp": 6, "lp (split: False)": 24, "lp (split: false)": 24}
    code, _, stderr = invoke("plan", str(scenario), "--planner", "lp (split: True)", "-o",
                             str(tmp_path / "t.yaml"))
    assert code == 2
    assert "unknown planner" in stderr


# -- usage errors: one line, as every other bad input ---------------------------------------


def usage(*args: str) -> tuple[int, str, str]:
    """``invoke`` under the script's name, as the help hint names the command."""
    result = CliRunner().invoke(main, list(args), prog_name="portsim")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("args", "words"), [
    # found by a new user: click printed its four-line usage block for each
    (["run", "/tmp"], ["SCENARIO: file '/tmp' is a directory", "`portsim run --help`"]),
    (["run"], ["missing argument 'SCENARIO'", "`portsim run --help`"]),
    (["run", "x.yaml", "--bogus"], ["no such option '--bogus'", "`portsim run --help`"]),
    (["validate", "F", "--mode", "fast"],
     ["--mode: 'fast' is not one of 'strict', 'asap'", "`portsim validate --help`"]),
    (["study", "study.yaml", "--out", "zz", "--workers", "0"],
     ["--workers: 0 is not in the range x>=1", "`portsim study --help`"]),
    (["frobnicate"], ["no such command 'frobnicate'", "`portsim --help`"]),
    (["run", str(EXAMPLES / "scatter-toy.yaml"), "--report", "/tmp"],
     ["--report: file '/tmp' is a directory", "`portsim run --help`"]),
    # click gives this one no context: the command is still named
    (["validate", "F", "--mode"],
     ["option '--mode' requires an argument", "`portsim validate --help`"]),
    (["--bogus"], ["no such option '--bogus'", "`portsim --help`"]),
])
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], words: list[str]) -> None:
    code, stdout, stderr = usage(*args)
    assert code == 2
    assert stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("portsim: error: ")
    assert "Usage:" not in stderr
    assert "Try '" not in stderr
    for word in words:
        assert word in stderr


def test_a_usage_error_of_the_console_script_is_one_line() -> None:
    done = portsim("study", "study.yaml", "--out", "zz", "--workers", "0")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("portsim: error: --workers: 0 is not in the range x>=1 ")
    assert done.stderr.rstrip().endswith("study --help`)")


def test_help_version_and_the_bare_command_are_unchanged() -> None:
    code, stdout, stderr = usage("run", "-h")
    assert (code, stderr) == (0, "")
    assert stdout.startswith("Usage: portsim run [OPTIONS] SCENARIO")
    code, stdout, stderr = usage("--version")
    assert (code, stderr) == (0, "")
    assert stdout.startswith("portsim, version ")
    code, stdout, stderr = usage()  # `portsim` alone: its help, as click gives it
    assert code == 2
    assert "Usage: portsim [OPTIONS] COMMAND [ARGS]..." in stdout + stderr
    assert "portsim: error" not in stdout + stderr


def test_plan_an_unknown_planner_names_the_file_and_the_option(tmp_path: Path) -> None:
    scenario = EXAMPLES / "scatter-toy.yaml"
    code, _, stderr = usage("plan", str(scenario), "--planner", "nope", "-o",
                            str(tmp_path / "x.yaml"))
    assert code == 2
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"portsim: error: {scenario}: --planner: unknown planner; ")
    assert "valid planners: " in stderr
    assert ", flat, " in stderr
    assert "labels of the scenario's planners: 'flat', 'lp'" in stderr
    assert stderr.rstrip().endswith("(got 'nope')")


def test_plan_an_unknown_label_lists_the_scenario_s_labels(tmp_path: Path) -> None:
    scenario = EXAMPLES / "reduce-fibonacci.yaml"
    code, _, stderr = usage("plan", str(scenario), "--planner", "greedy (reducers: 3)", "-o",
                            str(tmp_path / "x.yaml"))
    assert code == 2
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"portsim: error: {scenario}: --planner: unknown planner; ")
    assert ("labels of the scenario's planners: 'greedy', 'fibonacci', 'binomial', "
            "'greedy (reducers: 2)', 'flat' (got 'greedy (reducers: 3)')") in stderr


def test_an_unreadable_msccl_file_names_the_scenario_and_the_key_path(
        tmp_path: Path) -> None:
    scenario = write(tmp_path, """\
name: ring
platform:
  nodes: [{id: A}, {id: B}]
  links: [{src: A, dst: B, c: 1}, {src: B, dst: A, c: 1}]
operation: {type: allgather, participants: [A, B]}
planners: [{name: msccl, file: nope.xml}]
""")
    code, _, stderr = usage("run", str(scenario))
    assert code == 2
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"portsim: error: {scenario}: planners[0].file: "
                             f"{tmp_path / 'nope.xml'}: cannot read the file")


def test_a_schedule_that_cannot_be_replayed_claims_no_achieved_throughput(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lp`` with ``period: 1000000`` on the scatter toy (2,000,000 events a
    period) was an `error` row, "the schedule cannot be replayed", whose JSON
    still said ``achieved_throughput: "1/2"`` and ``bound_reached: true``:
    nothing was replayed, so nothing is proven (SPEC: only as far as the
    strict replay proves it).  The cap is lowered here to get there fast."""
    import portsim.simulator.engine
    monkeypatch.setattr(portsim.simulator.engine, "MAX_REPLAY_EVENTS", 5)
    scenario = write(tmp_path, SCATTER.replace("[flat]", "[lp]"))
    code, stdout, _ = invoke("run", str(scenario), "--json", "-")
    assert code == 3
    (row,) = json.loads(stdout)["results"]
    assert row["status"] == "error"
    assert row["message"].startswith("the schedule cannot be replayed")
    # No horizon was given, and a shorter one would not help: the steady state's
    # check replays 2 periods of the 6 transfers of a period.
    assert "give a shorter horizon" not in row["message"]
    assert ("replaying 2 periods of 6 events exceeds the cap of 5 events, and those are "
            "the fewest periods that check its steady state") in row["message"]
    assert row["throughput_bound"] == "3/5"  # S sends 1 + 2/3 per scatter
    assert row["achieved_throughput"] is None
    assert row["bound_reached"] is None
    assert any("announced achieved throughput 3/5, which no strict replay proves" in note
               for note in row["notes"])


def test_a_long_step_off_a_terminal_prints_a_line_that_it_still_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal there is no spinner: a step running past ``quiet`` seconds gets
    one line on standard error (a CI log is not silence for minutes of lp), a step
    ending sooner none, and standard output nothing."""
    import re
    import time

    from portsim.scenarios.cli import _heartbeat

    with _heartbeat(quiet=1.0, still=60.0) as show:
        show("lp: planning and replaying")
        time.sleep(2.2)
        show("replaying 10 events (exact)")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert re.fullmatch(r"portsim: lp: planning and replaying: [12] s so far", lines[0])


def test_plan_warns_of_a_number_validate_cannot_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A schedule whose period has more than 18 digits on one side (an lp period on
    links of cost 1/p for large primes p) is written, with a warning that validate
    refuses such a number (SPEC, bounds), which it does."""
    from dataclasses import replace

    import portsim.scenarios.runner as runner

    period = Fraction(10**19, 3)
    plain = runner.guarded_plan

    def periodic(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = plain(*args, **kwargs)
        return replace(result, schedule=replace(result.schedule, period=period))

    monkeypatch.setattr(runner, "guarded_plan", periodic)
    out = tmp_path / "s.yaml"
    code, _, stderr = invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                             "-o", str(out))
    assert code == 0
    assert (f"portsim: warning: `portsim validate` cannot read {out} back: {out}: period: "
            f"number is out of range (beyond +-10^18)") in stderr
    monkeypatch.undo()
    code, _, stderr = invoke("validate", str(out))
    assert code == 2
    assert "period: number is out of range" in stderr
    code, _, stderr = invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                             "-o", str(out))
    assert (code, stderr.count("warning")) == (0, 0)


def test_run_describes_the_events_of_a_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planner's violation in `run`'s output names its events described, as
    `validate`'s table does (they were bare numbers in the detail).  The scatter
    toy's `flat` schedule, by hand: event 0 sends m[P0] from Ps to Pa at 0, event
    1 forwards it from Pa to P0 at 1; the violation is made up, on those events."""
    from dataclasses import replace

    from portsim import run_scenario
    from portsim.simulator.report import Violation

    def with_a_violation(*args: object, **kwargs: object) -> object:
        outcome = run_scenario(*args, **kwargs)  # type: ignore[arg-type]
        row = outcome.results[0]
        bad = Violation("port_conflict", Fraction(1), "Pa", "made up", (1, 0))
        return replace(outcome, results=(replace(row, violations=(bad,), feasible=False),
                                         *outcome.results[1:]))

    monkeypatch.setattr("portsim.scenarios.runner.run_scenario", with_a_violation)
    code, stdout, _ = invoke("run", str(EXAMPLES / "scatter-toy.yaml"))
    assert code == 1
    assert ("flat: port_conflict at t=1 on Pa: made up "
            "[#1 send m[P0] Pa->P0 @1; #0 send m[P0] Ps->Pa @0]") in stdout


def test_a_long_step_on_a_terminal_counts_its_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal a step shows as a spinner; one of minutes (the lp bound of a
    large reduce, 300 s by default) counts its seconds there, where the spinner
    said only what ran."""
    import io
    import re
    import time

    from rich.console import Console

    import portsim.scenarios.cli as cli

    screen = io.StringIO()
    monkeypatch.setattr(cli, "_console", lambda **_: Console(
        file=screen, force_terminal=True, width=100, color_system=None))
    with cli._activity() as show:
        show("the lp bound of the reduce (lp planner)")
        time.sleep(2.4)
    assert re.search(r"the lp bound of the reduce \(lp planner\)\.\.\. [12] s", screen.getvalue())


# -- a reader that leaves early (`| head -1`, `| true`) -------------------------------------


def portsim_unread(*args: str, both: bool = False) -> tuple[int, str]:
    """The command in a real process whose standard output (and, ``both``, standard
    error: ``2>&1 | true``) is a pipe closed before the command writes anything, as
    ``| true`` or ``| head -1`` leave it; the exit status and what reached stderr."""
    root = Path(__file__).resolve().parent.parent
    child = subprocess.Popen([sys.executable, "-m", "portsim", *args],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT if both else subprocess.PIPE,
                             env=_child_env(root))
    assert child.stdout is not None
    child.stdout.close()  # before the child has even imported portsim
    stderr = b"" if child.stderr is None else child.stderr.read()
    return child.wait(timeout=300), stderr.decode()


def test_a_closed_pipe_keeps_the_verdict_and_says_nothing(tmp_path: Path) -> None:
    """`validate FILE | head -1` exited 1 (click on a closed pipe: "a schedule failed
    validation") on the paper's feasible schedule, and `run --json - | true` 2 with
    `portsim: error: Broken pipe`; the command now ends as if read to the end."""
    paper = str(EXAMPLES / "schedules" / "scatter-toy-paper-split.yaml")
    assert portsim_unread("validate", paper) == (0, "")
    assert portsim_unread("validate", paper, "--format", "json") == (0, "")
    assert portsim_unread("validate", paper, both=True)[0] == 0
    # a schedule with a violation still exits 1 (the reduce toy's operands swapped)
    schedule = tmp_path / "schedule.yaml"
    assert invoke("plan", str(EXAMPLES / "reduce-toy.yaml"), "--planner", "flat",
                  "-o", str(schedule))[0] == 0
    document = yaml.safe_load(schedule.read_text())
    next(e for e in document["events"] if e["kind"] == "compute")["inputs"].reverse()
    schedule.write_text(yaml.safe_dump(document))
    assert portsim_unread("validate", str(schedule)) == (1, "")
    # the table on stderr, the JSON on the closed stdout: no error line, exit 0
    code, stderr = portsim_unread("run", str(EXAMPLES / "scatter-toy.yaml"), "--json", "-")
    assert code == 0
    assert "error" not in stderr
    assert "Broken pipe" not in stderr
    assert "scatter-toy" in stderr  # the table
    # the files a command writes are written whatever the reader of its table does
    out = tmp_path / "out.json"
    assert portsim_unread("run", str(EXAMPLES / "scatter-toy.yaml"), "--json", str(out),
                          both=True)[0] == 0
    rows = json.loads(out.read_text())["results"]
    assert [r["throughput_bound"] for r in rows if r["planner"] == "lp"] == ["1/2"]  # TP
    assert portsim_unread("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat",
                          "-o", "-") == (0, "wrote one-shot schedule of 4 events to -\n")
    assert portsim_unread("planners") == (0, "")


# -- a narrow terminal ---------------------------------------------------------------------


def portsim_on_a_terminal(*args: str, columns: int) -> str:
    """Standard output of the command on a terminal (a pseudo-terminal) ``columns``
    wide, colours and cursor moves taken out."""
    import os

    pty = pytest.importorskip("pty")  # POSIX only
    root = Path(__file__).resolve().parent.parent
    leader, follower = pty.openpty()
    env = {**_child_env(root), "COLUMNS": str(columns), "NO_COLOR": "1"}
    child = subprocess.Popen([sys.executable, "-m", "portsim", *args], stdout=follower,
                             stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert child.wait(timeout=300) == 0
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode()).replace("\r", "")


@pytest.mark.parametrize("columns", [40, 80])
def test_a_narrow_terminal_cuts_no_figure(columns: int) -> None:
    """On 80 columns the run table of the scatter toy read `249/5…` for the flat
    planner's measured throughput, 249/500 (166 scatters in the horizon 1000/3:
    the first ends at its makespan 10/3, then one every 2, Ps's two sends); on 40
    every cell was `…`.  Each row is now a line of its figures, whole."""
    text = portsim_on_a_terminal("run", str(EXAMPLES / "scatter-toy.yaml"), columns=columns)
    assert "…" not in text
    flat = " ".join(text[text.index("flat: status"):].split("\n")[:4]).split()
    assert flat[:8] == ["flat:", "status", "ok;", "bound", "-;", "period", "-;", "makespan"]
    words = " ".join(flat)
    assert "makespan 10/3; measured TP 249/500; completed 166; horizon 1000/3;" in words
    assert "lp: status ok; bound 1/2;" in " ".join(text.split())
    planners = portsim_on_a_terminal("planners", columns=columns)
    assert "…" not in planners
    assert "port models bidirectional, multiport, unidirectional" in " ".join(planners.split())


def test_a_wide_terminal_keeps_the_table() -> None:
    text = portsim_on_a_terminal("run", str(EXAMPLES / "scatter-toy.yaml"), columns=120)
    assert "…" not in text
    assert re.search(r"│ flat +│ ok +│ +- │ +- │ +10/3 │ +249/500 │ +166 │ +1000/3 │ +yes │",
                     text)


# -- a full disk, a closed stream ------------------------------------------------------------


def portsim_shell(command: str) -> subprocess.CompletedProcess[str]:
    """``python -m portsim COMMAND`` through the shell, for its redirections (``>&-``)."""
    import shlex

    root = Path(__file__).resolve().parent.parent
    return subprocess.run(f"{shlex.quote(sys.executable)} -m portsim {command}", shell=True,
                          capture_output=True, text=True, env=_child_env(root), timeout=300,
                          check=False, cwd=EXAMPLES)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("command", [
    "validate schedules/scatter-toy-paper-split.yaml", "run scatter-toy.yaml",
    "run scatter-toy.yaml --json -", "plan scatter-toy.yaml --planner flat -o -", "planners",
    "--version", "--help"])
def test_a_full_disk_on_stdout_is_one_line_and_exit_2(command: str) -> None:
    """`>/dev/full` (a full disk) was a traceback, then `Exception ignored` and exit
    status 120 (`plan -o -`), or exit 1 (`--help`); `plan -o -` said `wrote ... to -`."""
    done = portsim_shell(f"{command} >/dev/full")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1:] == [
        "portsim: error: standard output: No space left on device"]
    assert "Traceback" not in done.stderr
    assert "wrote" not in done.stderr


@pytest.mark.parametrize("command", ["run scatter-toy.yaml", "planners"])
def test_a_closed_stdout_is_one_line_and_exit_2(command: str) -> None:
    done = portsim_shell(f"{command} >&-")  # was a traceback: sys.stdout is None
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["portsim: error: standard output: the stream is closed"]


@pytest.mark.parametrize("command", ["run", "validate", "plan"])
def test_a_closed_stdin_reads_as_an_empty_file(command: str) -> None:
    option = " --planner flat -o out.yaml" if command == "plan" else ""
    done = portsim_shell(f"{command} -{option} <&-")  # was a traceback: sys.stdin is None
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == ["portsim: error: <stdin>: empty file"]
    assert not (EXAMPLES / "out.yaml").exists()


def test_a_closed_stderr_keeps_the_exit_status() -> None:
    assert portsim_shell("run scatter-toy.yaml --horizon 0 2>&-").returncode == 2
    done = portsim_shell("validate schedules/scatter-toy-paper-split.yaml 2>&-")
    assert done.returncode == 0
    assert "throughput: 1/2 (6 instance(s) per period 12)" in done.stdout  # the paper's TP


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("command", ["run scatter-toy.yaml --json", "run scatter-toy.yaml --report",
                                     "plan scatter-toy.yaml --planner flat -o"])
def test_a_full_disk_names_the_file(command: str) -> None:
    done = portsim_shell(f"{command} /dev/full >/dev/null")  # it said only the error
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["portsim: error: /dev/full: No space left on device"]


def test_an_output_onto_an_input_is_refused_before_any_work(tmp_path: Path) -> None:
    """`plan S.yaml -o S.yaml` replaced the scenario with its schedule (and `run
    S.yaml --json S.yaml` with the JSON); `--json X --report X` kept only the page."""
    scenario = write(tmp_path, SCATTER)
    original = scenario.read_text()
    (tmp_path / "link.yaml").symlink_to(scenario)
    for args, option, target in (
            (["plan", str(scenario), "--planner", "flat", "-o", str(scenario)],
             "-o / --output", scenario),
            (["run", str(scenario), "--json", str(tmp_path / "link.yaml")], "--json",
             tmp_path / "link.yaml"),
            (["run", str(scenario), "--report", str(scenario)], "--report", scenario)):
        code, stdout, stderr = invoke(*args)
        assert (code, stdout) == (2, "")
        assert stderr.splitlines() == [
            f"portsim: error: {option}: {target} is the scenario file this command reads: "
            f"writing it would replace it (got {str(target)!r})"]
    assert scenario.read_text() == original
    out = tmp_path / "out.json"
    code, stdout, stderr = invoke("run", str(scenario), "--json", str(out), "--report",
                                  str(tmp_path / "." / "out.json"))
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        f"portsim: error: --report: {out} is the --json file too: one would replace the "
        f"other (got {str(out)!r})"]
    assert not out.exists()
    # the flat scatter, written where asked (S -> A 1, S -> B 2/3: makespan 5/3)
    assert invoke("plan", str(scenario), "--planner", "flat", "-o", str(out))[0] == 0
    assert yaml.safe_load(out.read_text())["events"][-1]["start"] == "1"


def test_a_platform_file_on_standard_input() -> None:
    """`--platform -` was `-: file not found`; it reads standard input, as a scenario
    does, and gives what the file gives (the DGX A100 ring allgather: 7/1200)."""
    algorithm = str(Path(__file__).parent / "data" / "msccl" / "allgather_ring_8_1_1.xml")
    platform = EXAMPLES / "allgather-dgx-a100.yaml"
    args = ["validate", algorithm, "--format", "json", "--no-lp-bound"]
    from_file = CliRunner().invoke(main, [*args, "--platform", str(platform)])
    from_stdin = CliRunner().invoke(main, [*args, "--platform", "-"],
                                    input=platform.read_text())
    assert from_stdin.exit_code == from_file.exit_code == 0, from_stdin.stderr
    assert json.loads(from_stdin.stdout)["makespan"] == json.loads(from_file.stdout)[
        "makespan"] == "7/1200"


def test_an_error_naming_a_file_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    # `--json $'a\nb/x.json'` printed the folder's name over two lines
    target = tmp_path / "missing\nfolder" / "x.json"
    code, stdout, stderr = invoke("run", str(write(tmp_path, SCATTER)), "--json", str(target))
    assert (code, stdout) == (2, "")
    escaped = str(target).replace("\n", "\\n")
    assert stderr.splitlines() == [
        f"portsim: error: {escaped}: cannot write it: the folder "
        f"{escaped.removesuffix('/x.json')} does not exist"]


def test_main_gives_the_standard_streams_back(capfd: pytest.CaptureFixture[str]) -> None:
    """`main` wraps standard output and error (for a reader that leaves early, a full
    disk) and gives a program embedding it its own streams back when it ends."""
    streams = sys.stdin, sys.stdout, sys.stderr
    with pytest.raises(SystemExit) as ended:
        main(["planners"])
    assert ended.value.code == 0
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
    assert "fibonacci" in capfd.readouterr().out



def test_main_writes_to_an_embedders_own_writer(capfd: pytest.CaptureFixture[str]) -> None:
    """A notebook's sys.stdout is its own writer (not an io.TextIOWrapper) whose
    fileno() is a copy of the kernel's standard output: main took that descriptor
    and failed (`AttributeError: ... no attribute 'line_buffering'`, a traceback),
    and would have written past the notebook.  The writer gets the output."""
    import io
    import os

    class Writer(io.TextIOBase):
        def __init__(self) -> None:
            self.got: list[str] = []
            self.fd = os.dup(1)

        def write(self, text: str) -> int:
            self.got.append(text)
            return len(text)

        def fileno(self) -> int:
            return self.fd

    writer = Writer()
    saved = sys.stdout
    sys.stdout = writer
    try:
        with pytest.raises(SystemExit) as ended:
            main(["planners"])
    finally:
        sys.stdout = saved
        os.close(writer.fd)
    assert ended.value.code == 0
    assert "fibonacci" in "".join(writer.got)
    assert "fibonacci" not in capfd.readouterr().out

# -- standard input that is no UTF-8, a pipe given by name ------------------------------------


@pytest.mark.parametrize("command", [["run", "-"], ["validate", "-"],
                                     ["plan", "-", "--planner", "flat", "-o", "-"]])
def test_standard_input_that_is_no_utf8_is_one_line(command: list[str]) -> None:
    """Bytes that are no UTF-8 on standard input were a traceback (`UnicodeEncodeError:
    ... surrogates not allowed`); they are the error a file gives."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "portsim", *command], input=b"a: \xff\n",
                          capture_output=True, env=_child_env(root), timeout=300, check=False)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines() == [
        "portsim: error: <stdin>: cannot read file: 'utf-8' codec can't decode byte 0xff "
        "in position 3: invalid start byte"]


def test_a_json_lines_schedule_through_a_named_pipe(tmp_path: Path) -> None:
    """`validate <(zcat s.jsonl.gz)`: a pipe given by name was read as YAML only
    (`invalid YAML: expected '<document start>'`); it is told apart as standard
    input is.  The flat scatter of the toy: makespan 10/3 (Ps -> Pb -> P1: 1 + 1 + 4/3)."""
    import os
    import threading

    schedule = tmp_path / "s.jsonl"
    assert invoke("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "flat", "-o",
                  str(schedule))[0] == 0
    for text in (schedule.read_text(), yaml.safe_dump(yaml.safe_load(
            (EXAMPLES / "schedules" / "scatter-toy-paper-split.yaml").read_text()))):
        pipe = tmp_path / "pipe"
        pipe.unlink(missing_ok=True)
        os.mkfifo(pipe)
        writer = threading.Thread(target=pipe.write_text, args=(text,), daemon=True)
        writer.start()  # (a daemon: a reader that never opens the pipe hangs no test)
        code, stdout, stderr = invoke("validate", str(pipe), "--format", "json",
                                      "--no-lp-bound")
        writer.join(timeout=10)
        assert code == 0, stderr
        report = json.loads(stdout)
        if text.startswith("{"):
            assert report["makespan"] == "10/3"
        else:  # the paper's periodic schedule, YAML through the pipe: period 12
            assert report["throughput"] == "1/2"


@pytest.mark.parametrize(("args", "option"), [
    (["run", "{scenario}", "--json", ""], "--json"),
    (["run", ""], "SCENARIO"),
    (["plan", "{scenario}", "--planner", "flat", "-o", ""], "-o / --output"),
    (["study", "{scenario}", "--out", ""], "--out"),
    (["report", ""], "DIRECTORY")])
def test_an_empty_file_name_is_refused(args: list[str], option: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`--out "$OUT"` with OUT unset: `study --out ''` wrote the study into the current
    folder, `report ''` reported it, `run --json ''` ran every planner and then
    failed (`.: Is a directory`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("portsim.scenarios.runner.run_scenario",
                        lambda *a, **k: pytest.fail("planned before checking the output"))
    scenario = str(write(tmp_path, SCATTER))
    code, stdout, stderr = invoke(*(a.replace("{scenario}", scenario) for a in args))
    assert (code, stdout) == (2, "")
    command = args[0]
    assert stderr.splitlines() == [
        f"portsim: error: {option}: the name is empty (got '') (see `main {command} "
        f"--help`)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenario.yaml"]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
def test_a_missing_stream_leaves_no_descriptor_open(capfd: pytest.CaptureFixture[str]
                                                    ) -> None:
    """With no standard error at all (``2>&-``: ``sys.stderr`` is None), each call of
    main opened the null device for it and never closed it: an embedder calling main
    in a loop ran out of descriptors.  Five calls now leave as many open as before."""
    import gc
    import os

    def open_descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    saved = sys.stderr
    before = None
    try:
        for call in range(6):
            if call == 1:  # after a first call, which may open what stays open (imports)
                before = open_descriptors()
            sys.stderr = None  # type: ignore[assignment]
            with pytest.raises(SystemExit) as ended:
                main(["planners"])
            assert ended.value.code == 0
            gc.collect()
    finally:
        sys.stderr = saved
    assert open_descriptors() == before
