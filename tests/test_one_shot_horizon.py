"""A one-shot schedule measured over a horizon: ``portsim validate --horizon`` and
:func:`portsim.validate` measure the pipelined series, as ``portsim run`` does.

Found by a new user on ``scenarios/examples/scatter-toy.yaml`` and its ``flat``
schedule (makespan 10/3): ``validate --horizon 1`` said "2 violation(s)",
"P0 never holds m[P0]", for a schedule that is feasible and complete;
``validate --horizon 1000/3`` measured 1 scatter (3/1000) where ``run``
measures 166 (249/500) over the same horizon.

The expected figures are computed by hand.  The flat schedule sends m[P0]
``Ps -> Pa`` at 0 (cost 1) and ``Pa -> P0`` at 1 (2/3), m[P1] ``Ps -> Pb`` at 1
(1) and ``Pb -> P1`` at 2 (4/3).  Ps's send port is the bottleneck: 2 time
units per scatter (Pb relays in 4/3 < 2), so in the series reusing it,
scatter ``t`` is that schedule shifted by ``2t`` and completes at
``2t + 10/3``.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

import portsim
from portsim.scenarios.cli import main
from portsim.simulator.engine import replay

EXAMPLE = Path(portsim.__file__).resolve().parent / "scenarios" / "examples" / "scatter-toy.yaml"
MAKESPAN = Fraction(10, 3)
SPACING = Fraction(2)  # Ps sends two unit messages per scatter


def series_completed(horizon: Fraction) -> int:
    """Scatters of the series complete by ``horizon``: those with 2t + 10/3 <= horizon."""
    if horizon < MAKESPAN:
        return 0
    return math.floor((horizon - MAKESPAN) / SPACING) + 1


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def flat_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flat") / "sf.yaml"
    code, _ = invoke("plan", str(EXAMPLE), "--planner", "flat", "-o", str(path))
    assert code == 0
    return path


def test_the_hand_count_is_the_series_of_the_flat_schedule(flat_file: Path) -> None:
    schedule = portsim.load_schedule(flat_file)
    starts = [(e.src, e.dst, e.start) for e in schedule.events]
    assert starts == [("Ps", "Pa", 0), ("Pa", "P0", 1), ("Ps", "Pb", 1), ("Pb", "P1", 2)]
    assert portsim.validate(schedule).makespan == MAKESPAN
    assert series_completed(Fraction(1000, 3)) == 166


@pytest.mark.parametrize("horizon", ["1", "3"])
def test_a_short_horizon_never_makes_a_feasible_one_shot_schedule_infeasible(
        flat_file: Path, horizon: str) -> None:
    code, out = invoke("validate", str(flat_file), "--horizon", horizon, "--no-lp-bound")
    assert code == 0  # was 1: "2 violation(s)", "P0 never holds m[P0]"
    assert out.splitlines()[0] == (
        f"{flat_file}: feasible and complete (strict replay, bidirectional)")
    assert "makespan: 10/3" in out
    assert f"horizon: {horizon}, completed: 0, measured throughput: 0 (" in out
    assert "violation" not in out
    assert "never" not in out
    # the Python API agrees
    report = portsim.validate(portsim.load_schedule(flat_file), horizon=horizon)
    assert (report.feasible, report.complete, report.violations) == (True, True, ())
    assert (report.completed, report.makespan) == (0, MAKESPAN)


def test_the_engine_expects_a_one_shot_instance_only_once_its_events_end(
        flat_file: Path) -> None:
    """The strict replay of the schedule alone over a horizon (``simulator.replay``)
    counts the completions by the horizon; the instance, whose events end at
    10/3, is not expected by 3: no ``incomplete`` violation."""
    schedule = portsim.load_schedule(flat_file)
    for mode in ("strict", "asap"):
        short = replay(schedule, mode=mode, horizon=3)
        assert (short.feasible, short.complete, short.completed, short.instances) == (
            True, True, 0, 0), mode
    whole = replay(schedule, horizon=MAKESPAN)
    assert (whole.feasible, whole.completed, whole.instances) == (True, 1, 1)


@pytest.mark.parametrize("horizon", [Fraction(1000, 3), Fraction(16, 3), Fraction(10**9)])
def test_validate_measures_the_pipelined_series_as_run_does(flat_file: Path,
                                                            horizon: Fraction) -> None:
    expected = series_completed(horizon)
    text = portsim.format_rational(horizon)
    code, out = invoke("validate", str(flat_file), "--horizon", text, "--format", "json",
                       "--no-lp-bound")
    found = json.loads(out)
    assert code == 0
    assert (found["feasible"], found["complete"], found["horizon"]) == (True, True, text)
    assert found["completed"] == expected  # was 1 (the schedule's one scatter)
    assert found["measured_throughput_exact"] == str(Fraction(expected) / horizon)
    assert (found["makespan"], found["throughput"]) == ("10/3", "3/10")  # the schedule's own
    assert found["replay_cut"] is False
    # the Python API agrees, and so does --mode asap
    report = portsim.validate(portsim.load_schedule(flat_file), horizon=horizon)
    assert (report.completed, report.horizon) == (expected, horizon)
    _, out = invoke("validate", str(flat_file), "--horizon", text, "--format", "json",
                    "--mode", "asap")
    assert json.loads(out)["completed"] == expected


def test_validate_and_run_give_the_same_figures(flat_file: Path, tmp_path: Path) -> None:
    # run's default horizon for flat: 100 makespans = 1000/3
    out = tmp_path / "run.json"
    code, _ = invoke("run", str(EXAMPLE), "--json", str(out))
    assert code == 0
    flat = next(r for r in json.loads(out.read_text())["results"] if r["planner"] == "flat")
    assert (flat["completed"], flat["horizon"], flat["measured_throughput_exact"]) == (
        166, "1000/3", "249/500")
    _, text = invoke("validate", str(flat_file), "--horizon", flat["horizon"],
                     "--format", "json", "--no-lp-bound")
    found = json.loads(text)
    assert (found["completed"], found["measured_throughput_exact"]) == (166, "249/500")
    _, text = invoke("validate", str(flat_file), "--horizon", "1000/3", "--no-lp-bound")
    assert ("horizon: 1000/3, completed: 166, measured throughput: 249/500 (completed / "
            "horizon, of the pipelined series of operations reusing the schedule, as run "
            "measures it)") in text
    assert "throughput: 3/10 (1 instance(s) per makespan, back to back)" in text


OVERLAP = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 2}]
operation: {type: scatter, source: S, targets: [A, B]}
events:
  - {kind: send, src: S, dst: A, item: "m[A]", start: 0}
  - {kind: send, src: S, dst: B, item: "m[B]", start: 0}
"""


def test_an_infeasible_one_shot_schedule_is_not_measured_by_validate(tmp_path: Path) -> None:
    """Both sends at once from S's one send port: as in `run`, its series is not
    measured (an as-soon-as-possible series would repair the times)."""
    path = tmp_path / "overlap.yaml"
    path.write_text(OVERLAP)
    code, out = invoke("validate", str(path), "--horizon", "30", "--format", "json")
    found = json.loads(out)
    assert code == 1
    assert [v["kind"] for v in found["violations"]] == ["port_conflict"]
    assert (found["horizon"], found["measured_throughput"],
            found["measured_throughput_exact"]) == (None, None, None)
    assert found["series_note"] == (
        "horizon 30: not measured: 1 violation(s) (the pipelined series of a one-shot "
        "schedule is measured only when the schedule is feasible, as in run)")
    code, out = invoke("validate", str(path), "--horizon", "30")
    assert code == 1
    assert "horizon 30: not measured: 1 violation(s)" in out
    report = portsim.validate(portsim.load_schedule(path), horizon=30)
    assert (report.feasible, report.horizon, report.measured_throughput) == (False, None, None)


def test_an_operation_with_nothing_to_do_has_no_measured_figures(tmp_path: Path) -> None:
    """A reduce on one participant needs no event: no series, no rate.  Its row
    gave completed 1 and measured_throughput_exact "1/100" (the schedule's
    own replay over the horizon of 100) beside a null measured_throughput."""
    path = tmp_path / "one.yaml"
    path.write_text("name: one\nplatform: {nodes: [{id: A}], links: []}\n"
                    "operation: {type: reduce, participants: [A], target: A}\n"
                    "planners: [flat]\n")
    code, out = invoke("run", str(path), "--json", "-")
    assert code == 0
    (row,) = json.loads(out)["results"]
    assert (row["makespan"], row["horizon"]) == ("0", "100")
    assert (row["completed"], row["measured_throughput"],
            row["measured_throughput_exact"]) == (None, None, None)


def test_the_throughput_assertion_names_the_schedules_own_instances() -> None:
    """Over a horizon the report counts the series' instances; the assertion's
    message must still give the schedule's own (1 broadcast in 2)."""
    from portsim import Operation, OperationKind, Platform, Schedule
    from portsim.scenarios.testing import ScheduleAssertionError, assert_throughput_at_least

    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    s = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}])
    with pytest.raises(ScheduleAssertionError, match=r"^throughput 1/2 \(1 instance\(s\) in 2,"):
        assert_throughput_at_least(s, "9/10", bound=1, horizon=100)


def test_the_float_throughput_is_the_exact_ones_float(flat_file: Path, tmp_path: Path) -> None:
    """``measured_throughput`` is ``float(measured_throughput_exact)`` in run's and
    validate's JSON: 166 / float(1000/3) gave 0.49800000000000005 next to "249/500"."""
    out = tmp_path / "run.json"
    invoke("run", str(EXAMPLE), "--json", str(out))
    for row in json.loads(out.read_text())["results"]:
        exact = Fraction(row["measured_throughput_exact"])
        assert row["measured_throughput"] == float(exact), row["label"]
    assert float(Fraction(249, 500)) == 0.498
    for mode in ("strict", "asap"):
        _, text = invoke("validate", str(flat_file), "--horizon", "1000/3", "--format",
                         "json", "--no-lp-bound", "--mode", mode)
        found = json.loads(text)
        assert (found["measured_throughput_exact"], found["measured_throughput"]) == (
            "249/500", 0.498), mode


def test_the_spec_example_of_events_past_the_completion(tmp_path: Path) -> None:
    """SPEC.md's example of a one-shot schedule whose last event ends after its
    last instance completes: b to A at 0 (cost 1), A to B at 1 (cost 1), and
    again S to B at 2 (cost 3).  By hand: B holds b at 2 (the makespan), the last
    send ends at 5; back to back a copy starts every 5 (S's send port is busy 0-1
    and 2-5 each copy, the second send waiting for B's receive port), so over 100
    copies complete at 2 + 5t <= 100: t = 0..19, 20 of them.  (The SPEC's example
    was the ring allgather on allgather-dgx-a100.yaml, which no longer sends
    such transfers: its last event ends at its makespan, 71/150.)"""
    schedule = tmp_path / "past.yaml"
    schedule.write_text("""\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: A, dst: B, c: 1}, {src: S, dst: B, c: 3}]
operation: {type: broadcast, source: S}
events:
  - {kind: send, src: S, dst: A, item: b, start: 0}
  - {kind: send, src: A, dst: B, item: b, start: 1}
  - {kind: send, src: S, dst: B, item: b, start: 2}
""", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(schedule), "--no-lp-bound",
                                       "--horizon", "100", "--format", "json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert (verdict["makespan"], verdict["end_time"], verdict["throughput"]) == ("2", "5", "1/5")
    assert (verdict["completed"], verdict["measured_throughput_exact"]) == (20, "1/5")
    scenario = portsim.load_scenario(EXAMPLE.parent / "allgather-dgx-a100.yaml")
    ring = portsim.get_planner("ring").plan(scenario.platform, scenario.operation)
    assert ring.schedule is not None
    report = replay(ring.schedule)
    assert report.end_time == report.makespan == Fraction(71, 150)
