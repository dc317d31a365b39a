"""``portsim validate``: throughput or makespan of a feasible schedule, and its
ratio to the ``lp`` bound when one applies (expected figures by hand)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import portsim.scenarios.bounds
from portsim.planners.msccl import ring_allgather_xml
from portsim.scenarios.cli import main
from portsim.simulator import Operation, Platform

PERIODIC = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: "1/2"}]
operation: {type: scatter, source: S, targets: [A, B]}
period: 2
events:
  - {kind: send, src: S, dst: A, item: "m[A]", start: 0}
  - {kind: send, src: S, dst: B, item: "m[B]", start: 1}
"""

ONE_SHOT = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: "1/2"}]
operation: {type: scatter, source: S, targets: [A, B]}
events:
  - {kind: send, src: S, dst: A, item: "m[A]", start: 0}
  - {kind: send, src: S, dst: B, item: "m[B]", start: 1}
"""


class FakeLp:
    def __init__(self, bound: Fraction | None) -> None:
        self.bound = bound
        self.models: list[str] = []

    def plan(self, platform: Platform, operation: Operation) -> SimpleNamespace:
        self.models.append(str(platform.port_model))
        return SimpleNamespace(status="ok" if self.bound else "unsupported",
                               throughput_bound=self.bound,
                               message="" if self.bound else "lp: not this operation")


def validate(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "schedule.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["validate", str(path), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def with_lp(monkeypatch: pytest.MonkeyPatch, lp: FakeLp | None) -> None:
    planners = {} if lp is None else {"lp": lp}
    monkeypatch.setattr(portsim.scenarios.bounds, "available_planners", lambda: planners)


def test_a_long_lp_bound_gets_its_decimal_value(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound of 51 digits over 51 (an lp bound on 500 nodes had 110) is printed
    exactly, then to 6 digits: (10^50 + 1) / (3 * 10^50) is 0.333333..."""
    bound = Fraction(10**50 + 1, 3 * 10**50)
    with_lp(monkeypatch, FakeLp(bound))
    code, out, _ = validate(tmp_path, PERIODIC)
    assert code == 0
    assert f"lp bound: {bound.numerator}/{bound.denominator} (~0.333333), ratio" in out


def test_periodic_throughput_and_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # S sends for 1 + 1/2 per period 2: one scatter per 2 time units.  With a
    # bound of 2/3, the ratio is (1/2) / (2/3) = 3/4.
    lp = FakeLp(Fraction(2, 3))
    with_lp(monkeypatch, lp)
    code, out, _ = validate(tmp_path, PERIODIC)
    assert code == 0
    assert "throughput: 1/2 (1 instance(s) per period 2)" in out
    assert "lp bound: 2/3, ratio to the bound: 3/4 = 0.75" in out
    code, _, _ = validate(tmp_path, PERIODIC, "--port-model", "unidirectional")
    assert code == 0
    assert lp.models == ["bidirectional", "unidirectional"]


def test_a_ratio_just_below_one_is_not_said_equal_to_one(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The periodic schedule's 1/2 against a bound of 1000001/2000000 (a
    latency of 10^-6 on a link of bandwidth 1/2, say): the ratio
    1000000/1000001 = 0.999999 was printed "= 1" beside the exact fraction."""
    with_lp(monkeypatch, FakeLp(Fraction(1000001, 2000000)))
    code, out, _ = validate(tmp_path, PERIODIC)
    assert code == 0
    assert "ratio to the bound: 1000000/1000001 ~ 1\n" in out


def test_measured_throughput_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Instance q ends at 2q + 3/2: three of them by 7, so 3/7 (was "0.4286").
    with_lp(monkeypatch, FakeLp(Fraction(2, 3)))
    code, out, _ = validate(tmp_path, PERIODIC, "--horizon", "7")
    assert code == 0
    assert ("horizon: 7, completed: 3, measured throughput: 3/7 (completed / horizon, "
            "start-up included)\n") in out
    # --float times the events in floats, but 3 instances over the horizon 7
    # asked are 3/7 all the same, as `run --float` says (it printed 0.4286)
    _, out, _ = validate(tmp_path, PERIODIC, "--horizon", "7", "--float")
    assert ("horizon: 7, completed: 3, measured throughput: 3/7 (completed / horizon, "
            "start-up included)\n") in out


def test_one_shot_makespan_and_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_lp(monkeypatch, FakeLp(Fraction(2, 3)))
    code, out, _ = validate(tmp_path, ONE_SHOT)
    assert code == 0
    # Makespan 1 + 1/2 = 3/2: back to back, 2/3 scatters per time unit, the bound.
    assert "makespan: 3/2" in out
    assert "throughput: 2/3 (1 instance(s) per makespan, back to back)" in out
    assert "ratio to the bound: 1\n" in out   # not "1 = 1"


TAIL = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: "1/2"}, {src: A, dst: B, c: 2}]
operation: {type: scatter, source: S, targets: [A, B]}
events:
  - {kind: send, src: S, dst: A, item: "m[A]#0", start: %s}
  - {kind: send, src: S, dst: B, item: "m[B]#0", start: %s}
  - {kind: send, src: A, dst: B, item: "m[A]#0", start: %s}
"""


def _tail(*offsets: Fraction) -> str:
    """TAIL's three sends, copied at each offset (copy k is instance #k)."""
    head, events = TAIL.split("events:\n")
    lines = events.splitlines()
    out = []
    for k, offset in enumerate(offsets):
        starts = [offset, offset + 1, offset + Fraction(3, 2)]
        text = "\n".join(lines) % tuple(str(t) for t in starts)
        out.append(text.replace("#0", f"#{k}"))
    return head + "events:\n" + "\n".join(out) + "\n"


def test_one_shot_throughput_counts_events_after_the_completion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The scatter completes at 3/2, but A keeps sending (an extra copy to B)
    # until 7/2.  Copies of the schedule 3/2 apart collide on B's receive
    # port; 7/2 apart they do not: the proven rate is 2/7, not 2/3.
    with_lp(monkeypatch, FakeLp(Fraction(2, 3)))
    code, out, _ = validate(tmp_path, _tail(Fraction(0)))
    assert code == 0
    assert "makespan: 3/2" in out
    assert "throughput: 2/7 (1 instance(s) every 7/2, when its last event ends" in out
    _, out, _ = validate(tmp_path, _tail(Fraction(0)), "--format", "json")
    assert json.loads(out)["throughput"] == "2/7"
    # the independent check: back to back at the makespan fails, at 7/2 it holds
    code, out, _ = validate(tmp_path, _tail(Fraction(0), Fraction(3, 2)), "--format", "json")
    assert code == 1
    assert {v["kind"] for v in json.loads(out)["violations"]} >= {"port_conflict"}
    code, _, _ = validate(tmp_path, _tail(Fraction(0), Fraction(7, 2)), "--format", "json")
    assert code == 0


def test_no_lp_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_lp(monkeypatch, None)
    code, out, _ = validate(tmp_path, PERIODIC)
    assert code == 0
    assert "no lp bound available (no lp planner is registered)" in out
    with_lp(monkeypatch, FakeLp(None))
    _, out, _ = validate(tmp_path, PERIODIC)
    assert "no lp bound available (lp: not this operation)" in out


def test_json_carries_the_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_lp(monkeypatch, FakeLp(Fraction(2, 3)))
    code, out, _ = validate(tmp_path, PERIODIC, "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert document["ok"] is True
    assert (document["throughput"], document["lp_bound"], document["ratio_to_lp_bound"],
            document["lp_note"]) == ("1/2", "2/3", "3/4", "")
    with_lp(monkeypatch, None)
    document = json.loads(validate(tmp_path, PERIODIC, "--format", "json")[1])
    assert document["lp_bound"] is None
    assert document["lp_note"] == "no lp bound available (no lp planner is registered)"


def test_infeasible_schedule_gets_no_ratio(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    lp = FakeLp(Fraction(2, 3))
    with_lp(monkeypatch, lp)
    code, out, _ = validate(tmp_path, ONE_SHOT.replace('start: 1}', 'start: "1/2"}'))
    assert code == 1
    assert "port_conflict" in out
    assert "throughput" not in out
    assert "lp bound" not in out
    assert lp.models == []  # the lp planner is not even asked


def test_with_the_registered_planners(tmp_path: Path) -> None:
    # Whatever lp is installed (or none), a feasible schedule gets one verdict line.
    code, out, _ = validate(tmp_path, PERIODIC)
    assert code == 0
    assert ("lp bound:" in out) != ("no lp bound available" in out)


def test_oversized_periodic_replay_is_bad_input(tmp_path: Path) -> None:
    text = PERIODIC.replace('start: 1}', 'start: 1, lag: 1000000000000}')
    code, out, err = validate(tmp_path, text)
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith("portsim: error: ")
    assert "schedule.yaml: events[1].lag:" in line
    assert "exceeds the cap" in line
    # A horizon of 500,000,000,000 periods (it was refused) is counted as `run` counts
    # it, in closed form past the steady state: instance p completes at 2p + 3/2.
    code, out, err = validate(tmp_path, PERIODIC, "--horizon", "1e12", "--no-lp-bound")
    assert code == 0, err
    assert ("horizon: 1000000000000, completed: 500000000000, measured throughput: 1/2"
            in out)


TWO_NODES = """\
platform:
  nodes: [{id: A}, {id: B}]
  links: [{src: A, dst: B, c: 1}]
operation: {type: broadcast, source: A}
period: 1
"""


def test_idle_instance_slots_are_not_certified(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 13: 5 instances per period and no event at all was "feasible and
    # complete" at throughput 5 against an lp bound of 1.
    with_lp(monkeypatch, FakeLp(Fraction(1)))
    code, out, _ = validate(tmp_path, TWO_NODES + "instances_per_period: 5\nevents: []\n")
    assert code == 1
    assert "feasible and complete" not in out
    assert not any(line.startswith("throughput:") for line in out.splitlines())
    assert "lp bound" not in out
    _, out, _ = validate(tmp_path, TWO_NODES + "instances_per_period: 5\nevents: []\n",
                         "--format", "json")
    (violation,) = json.loads(out)["violations"]
    assert violation["kind"] == "incomplete"
    assert "instance slots #0-#4 (5 of 5) never complete" in violation["detail"]
    assert "slots #0-#4 have no event" in violation["detail"]


def test_one_send_does_not_serve_a_thousand_slots(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 13: one send of b and instances_per_period 1000 gave throughput 1000.
    with_lp(monkeypatch, FakeLp(Fraction(1)))
    text = TWO_NODES + ("instances_per_period: 1000\nevents:\n"
                        "  - {kind: send, src: A, dst: B, item: b, start: 0}\n")
    code, out, _ = validate(tmp_path, text, "--format", "json")
    document = json.loads(out)
    assert code == 1
    assert document["ok"] is False
    assert document["throughput"] is None
    (violation,) = document["violations"]
    assert violation["kind"] == "incomplete"
    assert violation["resource"] == "b#1"  # the first slot left idle
    assert "#1-#999 (999 of 1000) never complete" in violation["detail"]
    # The same schedule claiming one instance per period is certified at 1.
    code, out, _ = validate(tmp_path, text.replace("1000", "1"), "--format", "json")
    assert (code, json.loads(out)["throughput"]) == (0, "1")


@pytest.mark.parametrize(("item", "where"), [
    ('"m[PZ]"', "events[0].item: item m[PZ] names an unknown node 'PZ'"),
    # The index written, not the first one the interval covers beyond the list (2).
    ('"v[0,3]"', "events[0].item: item v[0,3] names participant 3, but the operation has 2"),
    # Its check listed every index of the interval: 10^11 of them never ended.
    ('"v[0,99999999999]"',
     "events[0].item: item v[0,99999999999] names participant 99999999999, but the operation "
     "has 2"),
])
def test_item_naming_an_unknown_node_or_participant(tmp_path: Path, item: str,
                                                    where: str) -> None:
    # Issue 12: an item for an unknown node was reported as "never received".
    text = f"""\
platform:
  nodes: [{{id: A}}, {{id: B}}]
  links: [{{src: A, dst: B, c: 1}}]
operation: {{type: reduce, target: B}}
events:
  - {{kind: send, src: A, dst: B, item: {item}, start: 0}}
"""
    if "m[" in item:
        text = text.replace("{type: reduce, target: B}", "{type: scatter, source: A}")
    code, out, err = validate(tmp_path, text)
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert f"schedule.yaml: {where}" in line
    assert "never" not in line


def test_the_lp_bound_of_a_schedule_prints_no_warning_of_its_own() -> None:
    """``validate`` wants lp's bound only: a period over ``max_events`` in the planner's
    own schedule must not surface (it used to print 'using the fixed period ...')."""
    import warnings
    from fractions import Fraction

    from portsim.planners.registry import get_planner
    from portsim.scenarios.bounds import lp_bound
    from portsim.simulator import Operation, OperationKind, Platform

    p = Platform.build(["A", "B", "C"], [("A", "B", "9973/7919"), ("A", "C", "7907/7901"),
                                         ("B", "C", "7883/7877")])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    with pytest.warns(UserWarning, match="fixed period"):  # the planner itself warns
        direct = get_planner("lp").plan(p, op).throughput_bound
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = lp_bound(p, op)
    assert found.reason == ""
    assert found.bound == direct
    assert isinstance(found.bound, Fraction)


AHEAD = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 1}, {src: A, dst: B, c: 1}]
operation: {type: broadcast, source: S}
period: 3
instances_per_period: 2
events:
  - {kind: send, src: S, dst: A, item: "b#0", start: 0}
  - {kind: send, src: S, dst: B, item: "b#0", start: 1}
  - {kind: send, src: A, dst: B, item: "b#0", start: 0, lag: 20}
  - {kind: send, src: S, dst: A, item: "b#1", start: 2}
"""

LATE_CLASH = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: A, dst: B, c: 1}, {src: S, dst: B, c: 1}]
operation: {type: broadcast, source: S}
period: 1
events:
  - {kind: send, src: S, dst: A, item: b, start: 0}
  - {kind: send, src: S, dst: B, item: b, start: 0, lag: 3}
"""


def test_red_team_an_asap_replay_ahead_of_time_is_not_complete(tmp_path: Path) -> None:
    """Slot #1 never delivers to B; slot #0's instances, none of them expected
    (a useless send at lag 20), completed ahead of time and made up the count:
    "feasible and complete", exit 0, before."""
    code, out, _ = validate(tmp_path, AHEAD, "--mode", "asap", "--horizon", "30")
    assert code == 1
    assert "schedule.yaml: feasible but incomplete (asap replay, bidirectional)" in out
    assert "incomplete: 10 of the 10 expected instance(s) never complete" in out


def test_red_team_a_short_horizon_still_sees_a_later_clash(tmp_path: Path) -> None:
    """S's send port clashes from t = 3 on; --horizon 2 said "feasible and
    complete", exit 0, before."""
    code, out, _ = validate(tmp_path, LATE_CLASH, "--horizon", "2")
    assert code == 1
    assert "schedule.yaml: 1 violation(s) (strict replay, bidirectional)" in out
    assert "horizon: 2, completed despite the violations: 0" in out  # not measured
    assert "port_conflict" in out


def test_red_team_a_steady_state_beyond_the_cap_is_bad_input(tmp_path: Path) -> None:
    """With a lag of 6,000,000 the steady state is beyond the replay cap: a
    --horizon of 2 used to check nothing of it and say "feasible and
    complete"; the file cannot be checked, and the error names the lag."""
    code, out, err = validate(tmp_path, LATE_CLASH.replace("lag: 3", "lag: 6000000"),
                              "--horizon", "2")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].endswith(
        "schedule.yaml: events[1].lag: replaying 6000001 periods of 2 events exceeds the "
        "cap of 5000000 events (the steady state checked past a short horizon follows "
        "the largest lag) (got 6000000)")


def test_no_lp_bound_skips_the_lp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a 64-rank MSCCL allreduce the bound took 349 s and 15 GiB: the user may skip it.
    lp = FakeLp(Fraction(2, 3))
    with_lp(monkeypatch, lp)
    code, out, _ = validate(tmp_path, PERIODIC, "--no-lp-bound")
    assert code == 0
    assert "throughput: 1/2 (1 instance(s) per period 2)" in out
    assert "lp bound not asked (--no-lp-bound)" in out
    code, out, _ = validate(tmp_path, PERIODIC, "--no-lp-bound", "--format", "json")
    found = json.loads(out)
    assert (code, found["lp_bound"], found["throughput"]) == (0, None, "1/2")
    assert lp.models == []  # the lp was never asked
    _, out, _ = validate(tmp_path, PERIODIC)
    assert lp.models == ["bidirectional"]
    assert "lp bound: 2/3" in out


def test_no_lp_bound_on_an_msccl_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lp = FakeLp(Fraction(2, 3))
    with_lp(monkeypatch, lp)
    algorithm = tmp_path / "ring.xml"
    algorithm.write_text(ring_allgather_xml(4))
    platform = tmp_path / "p.yaml"
    platform.write_text("platform: {generator: {type: complete, n: 4, c: 1}}\n")
    result = CliRunner().invoke(main, ["validate", str(algorithm), "--platform", str(platform),
                                       "--no-lp-bound", "--format", "json"])
    found = json.loads(result.stdout)
    assert (result.exit_code, found["correct"], found["lp_bound"]) == (0, True, None)
    assert found["lp_note"] == "not asked"
    assert lp.models == []
    # the text says it in the words of a schedule file's validate (it printed
    # "lp bound: - (not asked), ratio to the bound: -")
    result = CliRunner().invoke(main, ["validate", str(algorithm), "--platform", str(platform),
                                       "--no-lp-bound"])
    assert result.output.splitlines()[-1] == "lp bound not asked (--no-lp-bound)"
    assert lp.models == []


def test_validate_prints_each_line_whole_in_a_pipe(tmp_path: Path) -> None:
    # In a pipe or a file (here CliRunner's) the console is 160 characters wide:
    # a line longer than that (a long path, the lp note of an MSCCL allreduce) was
    # broken in two, as `portsim run`'s notes were before they were printed whole.
    folder = tmp_path / ("a-long-folder-name-" * 8)
    folder.mkdir()
    schedule = folder / "s.yaml"
    schedule.write_text(ONE_SHOT)
    result = CliRunner().invoke(main, ["validate", str(schedule), "--no-lp-bound"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        f"{schedule}: feasible and complete (strict replay, bidirectional)")
    algorithm = folder / "ring.xml"
    algorithm.write_text(ring_allgather_xml(4))
    platform = tmp_path / "p.yaml"
    platform.write_text("platform: {generator: {type: complete, n: 4, c: 1}}\n")
    result = CliRunner().invoke(main, ["validate", str(algorithm), "--platform", str(platform),
                                       "--no-lp-bound"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        f"{algorithm}: allgather on 4 ranks (P0, P1, P2, P3), port model bidirectional")
    assert len(result.output.splitlines()) == 4


def test_the_json_gives_the_measured_throughput_exactly(tmp_path: Path) -> None:
    # The text printed `measured throughput: 8/9`, the JSON only 0.888...: the
    # exact figure is `measured_throughput_exact`, as in `portsim run --json`.
    _, out, _ = validate(tmp_path, PERIODIC, "--no-lp-bound", "--format", "json")
    found = json.loads(out)
    assert found["measured_throughput_exact"] == str(
        Fraction(found["completed"]) / Fraction(found["horizon"]))
    _, text, _ = validate(tmp_path, PERIODIC, "--no-lp-bound")
    assert f"measured throughput: {found['measured_throughput_exact']} (" in text
    # one-shot over a horizon: the pipelined series, as `run` measures it (it
    # said 1/7, the schedule's one scatter): S sends for 1 + 1/2 per scatter,
    # so scatter t completes at 3(t + 1)/2, 4 of them within 7 time units
    _, out, _ = validate(tmp_path, ONE_SHOT, "--no-lp-bound", "--format", "json",
                         "--horizon", "7")
    assert json.loads(out)["measured_throughput_exact"] == "4/7"
    # a one-shot schedule without a horizon: no figure
    _, out, _ = validate(tmp_path, ONE_SHOT, "--no-lp-bound", "--format", "json")
    assert json.loads(out)["measured_throughput_exact"] is None
    # float time over the default horizon, 10 periods of 2: instance q ends at
    # 2q + 3/2, so 10 of them by 20, exactly (it gave null where `run --float`
    # gives the figure); the one-shot series over 7 as above
    _, out, _ = validate(tmp_path, PERIODIC, "--no-lp-bound", "--format", "json", "--float")
    found = json.loads(out)
    assert (found["horizon"], found["completed"], found["measured_throughput_exact"]) == (
        "20", 10, "1/2")
    _, out, _ = validate(tmp_path, ONE_SHOT, "--no-lp-bound", "--format", "json",
                         "--horizon", "7", "--float")
    assert json.loads(out)["measured_throughput_exact"] == "4/7"


def test_the_help_gives_the_exit_status_of_feasible_but_incomplete(tmp_path: Path) -> None:
    # `validate --mode asap` exits 1 with no violation when an expected instance
    # never completes; the help's exit statuses said 1 was for violations only.
    code, out, _ = validate(tmp_path, AHEAD, "--mode", "asap", "--horizon", "30")
    assert (code, "violation" in out) == (1, False)
    assert "feasible but incomplete" in out
    result = CliRunner().invoke(main, ["validate", "--help"])
    assert "1 violations (or, --mode asap, feasible but incomplete" in " ".join(
        result.output.split())


def test_series_of_a_one_shot_schedule_of_a_large_instance_number(tmp_path: Path) -> None:
    # A one-shot broadcast of instance #999999999999999999 only: `--horizon`
    # listed the instances 0..10^18 - 1 to compare them with the schedule's
    # and stopped on a MemoryError traceback; such a schedule has no series.
    text = TWO_NODES.replace("period: 1\n", "") + (
        "events:\n  - {kind: send, src: A, dst: B, item: 'b#999999999999999999', start: 0}\n")
    assert validate(tmp_path, text)[0] == 0  # checked whole, it is feasible and complete
    code, out, err = validate(tmp_path, text, "--horizon", "100")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"portsim: error: {tmp_path / 'schedule.yaml'}: events: a series repeats a one-shot "
        "schedule of instances 0..c-1 only, and no event names instance #0 (the schedule's "
        "1 instance: #999999999999999999)"]


def test_series_of_a_one_shot_schedule_missing_an_instance(tmp_path: Path) -> None:
    """Instances #0 and #2 and no #1 (the writer's tool skipped one): checked whole, the
    schedule is feasible and complete; its series is refused, and the line named no key
    and not the instance missing."""
    text = TWO_NODES.replace("period: 1\n", "") + (
        "events:\n  - {kind: send, src: A, dst: B, item: b, start: 0}\n"
        "  - {kind: send, src: A, dst: B, item: 'b#2', start: 1}\n")
    assert validate(tmp_path, text)[0] == 0
    code, out, err = validate(tmp_path, text, "--horizon", "100")
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"portsim: error: {tmp_path / 'schedule.yaml'}: events: a series repeats a one-shot "
        "schedule of instances 0..c-1 only, and no event names instance #1 (the schedule's "
        "2 instances: #0, #2)"]


MIXED_RELAY = """
platform:
  port_model: bidirectional
  nodes: [{id: A}, {id: B, port_model: unidirectional}, {id: C}]
  links: [{src: A, dst: B, c: 1}, {src: B, dst: C, c: 1}]
operation: {type: broadcast, source: A, targets: [B, C]}
events:
- {kind: send, src: A, dst: B, item: 'b#0', start: "0"}
- {kind: send, src: A, dst: B, item: 'b#1', start: "1"}
- {kind: send, src: B, dst: C, item: 'b#0', start: "1"}
- {kind: send, src: B, dst: C, item: 'b#1', start: "2"}
"""


@pytest.mark.parametrize(("args", "models"), [
    ((), "mixed: bidirectional, unidirectional"),
    (("--port-model", "multiport:2"), "mixed: multiport:2, unidirectional"),
])
def test_the_header_names_every_port_model_a_node_follows(
        tmp_path: Path, args: tuple[str, ...], models: str) -> None:
    # B relays under the unidirectional model of its own: receiving b#1 while
    # it forwards b#0 is its port conflict, which a platform said to be
    # "bidirectional" (the header's word before) would not have.
    code, out, _ = validate(tmp_path, MIXED_RELAY, "--no-lp-bound", *args)
    assert code == 1
    assert out.splitlines()[0].endswith(f": 1 violation(s) (strict replay, {models})")
    assert "needs the port of B, busy with event 1" in out


@pytest.mark.parametrize(("args", "platform_wide", "own"), [
    ((), "bidirectional", {"B": "unidirectional"}),
    (("--port-model", "unidirectional"), "unidirectional", {}),
    (("--port-model", "multiport:2"), "multiport:2", {"B": "unidirectional"}),
])
def test_the_json_names_the_nodes_that_follow_their_own_port_model(
        tmp_path: Path, args: tuple[str, ...], platform_wide: str,
        own: dict[str, str]) -> None:
    # The JSON said only "port_model": "bidirectional" of MIXED_RELAY, whose
    # violation is B's unidirectional port: a reader of the JSON could not tell.
    code, out, _ = validate(tmp_path, MIXED_RELAY, "--no-lp-bound", "--format", "json", *args)
    document = json.loads(out)
    assert (document["port_model"], document["node_port_models"]) == (platform_wide, own)
    assert code == 1  # B's conflict under every one of these models
    # run --json: the same fields, from the scenario the schedule's platform is
    (tmp_path / "mixed.yaml").write_text(
        "name: mixed\n" + MIXED_RELAY.split("events:")[0] + "planners: [flat]\n")
    result = CliRunner().invoke(main, ["run", str(tmp_path / "mixed.yaml"), "--json", "-"])
    (row,) = json.loads(result.stdout)["results"]
    assert (row["port_model"], row["node_port_models"]) == ("bidirectional",
                                                            {"B": "unidirectional"})


@pytest.mark.parametrize(("args", "text", "why"), [
    # period 2 (S busy 1 + 1/2): the first instance completes at 3/2, so a
    # horizon of 1 sees no slot complete; the strict replay is feasible
    (("--horizon", "1"), PERIODIC, "the horizon 1 is too short to see every instance slot "
                                   "complete past the start-up (a longer one, or none, does)"),
    (("--mode", "asap"), PERIODIC, "the as-soon-as-possible replay times the events anew; "
                                   "the strict replay measures the schedule as written"),
    # S sends m[B] at 1/2 while its send to A (0 to 1) is running: S's send port
    ((), ONE_SHOT.replace('start: 1}', 'start: "1/2"}'), "1 violation"),
])
def test_no_throughput_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                args: tuple[str, ...], text: str, why: str) -> None:
    """A null ``throughput`` (and so a null ``lp_bound``) came with an empty
    ``lp_note``: a feasible schedule over a short horizon, an as-soon-as-possible
    replay or a schedule with violations all looked alike.  The lp is never asked."""
    lp = FakeLp(Fraction(2, 3))
    with_lp(monkeypatch, lp)
    _, stdout, _ = validate(tmp_path, text, *args, "--format", "json")
    document = json.loads(stdout)
    assert (document["throughput"], document["lp_bound"]) == (None, None)
    assert document["lp_note"] == ("no throughput as written, so no comparison with the lp "
                                   f"bound: {why}")
    assert lp.models == []


FLOAT_SUMS = """\
platform:
  nodes: [{id: A}, {id: B}, {id: C}, {id: D}]
  links: [{src: A, dst: B, c: 0.1}, {src: B, dst: C, c: 0.7}, {src: C, dst: D, c: 0.2}]
operation: {type: broadcast, source: A}
events:
  - {kind: send, src: A, dst: B, item: b, start: 0.0}
  - {kind: send, src: B, dst: C, item: b, start: 0.1}
  - {kind: send, src: C, dst: D, item: b, start: 0.7999999999999999}
"""


def test_tolerance_accepts_float_sums_and_names_itself(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """0.1 + 0.7 is 0.7999999999999999 in floats: C forwards 10^-16 before the
    message arrives at 4/5, a violation unless ``--tolerance`` covers it."""
    with_lp(monkeypatch, FakeLp(Fraction(10, 7)))
    code, out, _ = validate(tmp_path, FLOAT_SUMS, "--format", "json")
    assert code == 1
    assert [v["time"] for v in json.loads(out)["violations"]] == [
        "7999999999999999/10000000000000000"]
    code, out, _ = validate(tmp_path, FLOAT_SUMS, "--format", "json", "--tolerance", "1e-9")
    report = json.loads(out)
    assert code == 0
    # one broadcast over the end of the last send, 0.7999999999999999 + 0.2
    assert report["throughput"] == "10000000000000000/9999999999999999"
    for args, message in ((["--tolerance", "-1"], "--tolerance: must be >= 0 (got '-1')"),
                          (["--tolerance", "1e-9", "--float"],
                           "--tolerance: applies to exact time only")):
        code, _, err = validate(tmp_path, FLOAT_SUMS, *args)
        assert code == 2
        assert err.startswith(f"portsim: error: {message}")


_EARLY = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 1}]
operation: {type: scatter, source: S}
period: "3/2"
events:
  - {kind: send, src: S, dst: A, item: "m[A]", start: 0}
  - {kind: send, src: S, dst: B, item: "m[B]", start: "3/4"}
"""


def test_a_tolerance_that_beats_the_lp_bound_is_named(tmp_path: Path) -> None:
    """S sends two messages of time 1 an instance: at most 1/2 instance per
    time unit.  The period 3/2 (throughput 2/3) overlaps its sends by 1/4,
    which --tolerance 0.25 lets pass: ratio 4/3 to the bound, printed with no
    word that the tolerance made it."""
    path = tmp_path / "early.yaml"
    path.write_text(_EARLY)
    exact = CliRunner().invoke(main, ["validate", str(path), "--format", "json"])
    assert exact.exit_code == 1
    loose = CliRunner().invoke(main, ["validate", str(path), "--tolerance", "0.25",
                                      "--format", "json"])
    assert loose.exit_code == 0
    data = json.loads(loose.stdout)
    assert (data["throughput"], data["lp_bound"], data["ratio_to_lp_bound"]) == ("2/3", "1/2",
                                                                                 "4/3")
    assert "above the lp bound" in data["lp_note"]
    assert "--tolerance 1/4" in data["lp_note"]
    fine = CliRunner().invoke(main, ["validate", str(path), "--tolerance", "0.25", "--no-lp-bound",
                                     "--format", "json"])
    assert "above the lp bound" not in json.loads(fine.stdout)["lp_note"]


_OVERLAP = """\
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links: [{src: S, dst: A, c: 1}, {src: S, dst: B, c: 1}]
operation: {type: scatter, source: S}
events:
  - {kind: send, src: S, dst: A, item: "m[A]", start: 0}
  - {kind: send, src: S, dst: B, item: "m[B]", start: "1/2"}
"""


def test_the_violation_table_describes_each_event(tmp_path: Path) -> None:
    """The text table of `validate` showed `1, 0` in its events column where the
    Python table (`violation_table(report, schedule)`) shows each event described:
    the same table now, and the JSON gives the descriptions beside the indexes."""
    from portsim.scenarios import load_schedule
    from portsim.simulator import validate as validate_schedule
    from portsim.simulator import violation_table

    code, out, _ = validate(tmp_path, _OVERLAP)
    assert code == 1
    schedule = load_schedule(tmp_path / "schedule.yaml")
    table = violation_table(validate_schedule(schedule), schedule)
    assert "#1 send m[B] S->B @1/2; #0 send m[A] S->A @0" in table
    assert table in out
    code, out, _ = validate(tmp_path, _OVERLAP, "--format", "json")
    (violation,) = json.loads(out)["violations"]
    assert violation["events"] == [1, 0]
    assert violation["described"] == ["#1 send m[B] S->B @1/2", "#0 send m[A] S->A @0"]


def test_sends_all_at_once_name_a_few_busy_events_each(tmp_path: Path) -> None:
    """A script that forgets to stagger its sends (n sends from S at t=0) got
    n - 1 port conflicts, the i-th naming the i events before it: the
    output grew as n^2 (3,000 sends: 338 MB of text, 297 MB of JSON, 35 s).
    Each conflict now names its first busy events and counts the others."""
    n = 200
    nodes = ", ".join(f"{{id: T{i}}}" for i in range(n))
    links = ", ".join(f"{{src: S, dst: T{i}, c: 1}}" for i in range(n))
    events = "".join(f"  - {{kind: send, src: S, dst: T{i}, item: 'm[T{i}]', start: 0}}\n"
                     for i in range(n))
    text = (f"platform:\n  nodes: [{{id: S}}, {nodes}]\n  links: [{links}]\n"
            f"operation: {{type: scatter, source: S}}\nevents:\n{events}")
    code, out, _ = validate(tmp_path, text, "--format", "json", "--no-lp-bound")
    assert code == 1
    violations = json.loads(out)["violations"]
    assert len(violations) == n - 1   # events 1..n-1 each find the port busy
    last = violations[-1]
    named = len(last["events"]) - 1
    assert last["events"][0] == n - 1
    assert 0 < named < 20
    assert last["detail"].endswith(f"and {n - 1 - named} more events")
    assert len(out) < 1000 * n
    code, out, _ = validate(tmp_path, text, "--no-lp-bound")
    assert code == 1
    assert len(out) < 1000 * n


REDUCE_30 = """\
name: reduce30
platform:
  generator: {type: random, n: 30, degree: 3, c: [1, 10], compute: [1, 5]}
operation: {type: reduce, target: P0}
planners: [greedy]
"""


def _greedy_reduce_schedule(tmp_path: Path) -> Path:
    """A greedy reduce schedule on 30 random nodes (``portsim plan``), and its scenario."""
    scenario = tmp_path / "reduce30.yaml"
    scenario.write_text(REDUCE_30)
    schedule = tmp_path / "greedy.json"
    result = CliRunner().invoke(main, ["plan", str(scenario), "--planner", "greedy",
                                       "-o", str(schedule)])
    assert result.exit_code == 0, result.output
    return schedule


def test_lp_time_limit_cuts_the_bound_and_names_the_option(tmp_path: Path) -> None:
    """``--lp-time-limit`` bounds the wait for the lp bound (a 500-node reduce took
    over 300 s and 5 GiB with no way to shorten it but --no-lp-bound): cut, no
    figure is printed, and the note says where the lp stopped and which option
    raises the limit (the lp's own words name its time_limit option)."""
    schedule = _greedy_reduce_schedule(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(schedule), "--lp-time-limit", "0.001"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert not any(line.startswith("lp bound:") for line in lines)
    note = lines[-1]
    assert note.startswith("no lp bound available (time limit of 0.001 s reached during "), note
    assert note.endswith("; raise --lp-time-limit)"), note
    result = CliRunner().invoke(main, ["validate", str(schedule), "--lp-time-limit", "0.001",
                                       "--format", "json"])
    document = json.loads(result.stdout)
    assert document["lp_bound"] is None
    assert document["lp_note"] == note


def test_lp_time_limit_of_a_bound_that_ends_in_time_changes_nothing(tmp_path: Path) -> None:
    """Within its limit the bound is the one computed without the option: the
    scatter over links of cost 1 and 1/2 from one send port, TP = 1 / (1 + 1/2)
    = 2/3 by hand."""
    _, without, _ = validate(tmp_path, PERIODIC)
    code, out, _ = validate(tmp_path, PERIODIC, "--lp-time-limit", "60")
    assert code == 0
    assert out == without
    assert "lp bound: 2/3" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--lp-time-limit", "0"], "--lp-time-limit: must be > 0 (got '0')"),
    (["--lp-time-limit", "-3"], "--lp-time-limit: must be > 0 (got '-3')"),
    (["--lp-time-limit", "soon"], "--lp-time-limit"),
    (["--lp-time-limit", "5", "--no-lp-bound"],
     "--lp-time-limit: no lp bound is computed with --no-lp-bound (got '5')"),
])
def test_lp_time_limit_bad_values_are_one_line(tmp_path: Path, args: list[str],
                                               message: str) -> None:
    code, _, err = validate(tmp_path, PERIODIC, *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_run_report_lp_time_limit_bounds_the_convergence_chart(tmp_path: Path) -> None:
    """``run --report`` plans an lp for its convergence chart when the scenario lists
    none, with no way to bound it (300 s on a large reduce): ``--lp-time-limit``
    does, and the page says why the chart is missing.  It needs --report, and a
    listed lp keeps its own time_limit."""
    scenario = tmp_path / "reduce30.yaml"
    scenario.write_text(REDUCE_30)
    page = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["run", str(scenario), "--report", str(page),
                                       "--lp-time-limit", "0.001"])
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert "No convergence chart: no lp bound: time limit of 0.001 s reached during " in text
    # the limit in the command's words: the lp's own option is not the user's to set here
    assert "raise portsim run --lp-time-limit" in text
    assert "raise time_limit" not in text
    result = CliRunner().invoke(main, ["run", str(scenario), "--lp-time-limit", "5"])
    assert result.exit_code == 2
    assert "--lp-time-limit: limits the lp bound of the --report page's" in result.stderr
    listed = tmp_path / "listed.yaml"
    listed.write_text(REDUCE_30.replace("[greedy]", "[greedy, lp]"))
    result = CliRunner().invoke(main, ["run", str(listed), "--report", str(page),
                                       "--lp-time-limit", "5"])
    assert result.exit_code == 2
    assert "set its time_limit option instead (got '5')" in result.stderr


def test_lp_time_limit_of_an_msccl_file(tmp_path: Path) -> None:
    """``validate ALGO.xml --lp-time-limit`` limits its lp bound too: within the
    limit the ring allgather of 8 ranks on a complete platform of cost 1 meets
    its bound 8/7 (7/8 a run, by hand); cut, the note names the option."""
    algorithm = tmp_path / "ring.xml"
    algorithm.write_text(ring_allgather_xml(8))
    platform = tmp_path / "complete.yaml"
    platform.write_text("platform:\n  generator: {type: complete, n: 8, c: 1, compute: 1}\n")
    args = ["validate", str(algorithm), "--platform", str(platform), "--lp-time-limit"]
    result = CliRunner().invoke(main, [*args, "60"])
    assert result.exit_code == 0, result.output
    assert "lp bound: 8/7, ratio to the bound: 1" in result.stdout
    result = CliRunner().invoke(main, [*args, "0.001", "--format", "json"])
    note = json.loads(result.stdout)["lp_note"]
    assert note.startswith("time limit of 0.001 s reached during "), note
    assert note.endswith("; raise --lp-time-limit"), note


class SlowLp(FakeLp):
    """An lp that takes its time, and takes a time_limit (as portsim's does)."""

    def plan(self, platform: Platform, operation: Operation,  # type: ignore[override]
             **options: object) -> SimpleNamespace:
        import time

        time.sleep(1.2)
        return super().plan(platform, operation)


@pytest.mark.parametrize(("args", "limit"), [((), "300"), (("--lp-time-limit", "7/2"), "3.5")])
def test_the_lp_bound_step_names_its_time_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...],
        limit: str) -> None:
    """A user waiting on the lp bound (300 s by default on a large reduce) sees how
    long it may take, in the line a long step prints off a terminal (and its
    spinner on one): the time limit in force, the default or --lp-time-limit's."""
    import re

    import portsim.scenarios.cli as cli

    monkeypatch.setattr(portsim.scenarios.bounds, "available_planners",
                        lambda: {"lp": SlowLp(Fraction(2, 3))})
    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.4)
    code, out, err = validate(tmp_path, PERIODIC, *args)
    assert code == 0
    assert "lp bound: 2/3" in out
    assert re.search(rf"portsim: the lp bound of the scatter \(lp planner, time limit "
                     rf"{re.escape(limit)} s\): [01] s so far", err), err


@pytest.mark.filterwarnings("ignore:the exact period")
def test_lp_time_limit_that_cuts_the_tree_generation_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reduce bound whose tree generation the time limit stops (here at the
    second pricing, without a clock) is the upper end of a certified interval:
    the note named the interval and not the limit that cut it, so the user of
    ``--lp-time-limit 600`` could not tell that raising it would narrow it.  The
    note now names the limit given; the interval's upper end is the bound, and
    it holds the optimum the same lp reaches uncut."""
    from budget_cases import budget_passing_at

    import portsim.planners.lp._reduce_columns as reduce_columns

    schedule = _greedy_reduce_schedule(tmp_path)
    uncut = CliRunner().invoke(main, ["validate", str(schedule), "--format", "json"])
    optimum = Fraction(json.loads(uncut.stdout)["lp_bound"])
    budget_passing_at(monkeypatch, reduce_columns, "cheapest_trees", 2)
    result = CliRunner().invoke(main, ["validate", str(schedule), "--lp-time-limit", "600",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    note = document["lp_note"]
    assert "certified interval [" in note
    lower = Fraction(note.split("certified interval [")[1].split(",")[0].split(" ")[0])
    assert lower <= optimum <= Fraction(document["lp_bound"])
    assert "under the time limit of 600" in note, note


RELAY_EVERY_NODE_OWN = """
platform:
  port_model: bidirectional
  nodes: [{id: S, port_model: bidirectional}, {id: A, port_model: "multiport:2"},
          {id: B, port_model: unidirectional}]
  links: [{src: S, dst: A, c: 1}, {src: A, dst: B, c: 1}]
operation: {type: broadcast, source: S, targets: [A, B]}
period: 1
events:
- {kind: send, src: S, dst: A, item: b, start: 0}
- {kind: send, src: A, dst: B, item: b, start: 0, lag: 1}
"""


@pytest.mark.parametrize(("default", "kept"), [
    # B is unidirectional already: S and A keep another model
    ("", ["S (bidirectional)", "A (multiport:2)"]),
    # without S's own model, S follows the option: A alone keeps its own
    ("S", ["A (multiport:2)"]),
])
def test_port_model_option_names_the_nodes_that_keep_their_own(
        tmp_path: Path, default: str, kept: list[str]) -> None:
    """``validate --port-model unidirectional`` replaced the platform-wide model
    only, silently: on a file whose every node gives its own model (as a
    scenario may, and then ``plan -o``) the schedule replayed as written and
    was "feasible" under the unidirectional model.  Every node of the relay
    keeps a model that lets it send and receive at once, so the relay is
    feasible; with S on the option, it still is (S only sends)."""
    text = RELAY_EVERY_NODE_OWN
    if default:
        text = text.replace(f"{{id: {default}, port_model: bidirectional}}",
                            f"{{id: {default}}}")
    code, out, err = validate(tmp_path, text, "--no-lp-bound", "--port-model",
                              "unidirectional")
    assert code == 0, out
    (line,) = err.splitlines()
    assert line.startswith("portsim: warning: --port-model unidirectional replaces the "
                           "platform-wide port model only: ")
    named = line.split(" the one the platform gives: ")[1].split(" (every node")[0]
    assert named.split(", ") == kept
    assert line.endswith("changes nothing)") is (not default)
    # a node that follows the option is no warning's; A, unidirectional then,
    # receives b of the next instance while it forwards b: its port conflict
    code, out, err = validate(tmp_path, text.replace(', port_model: "multiport:2"', "")
                              .replace("{id: S, port_model: bidirectional}", "{id: S}"),
                              "--no-lp-bound", "--port-model", "unidirectional")
    assert (code, err) == (1, "")
    assert "needs the port of A, busy with event 0" in out


def test_msccl_header_names_every_port_model_a_node_follows(tmp_path: Path) -> None:
    """``validate ALGO.xml`` printed ``port model bidirectional``, the platform's
    default, on a triangle where A is unidirectional, while it replayed A so:
    the ring allgather's makespan is A's four transfers (two chunks sent, two
    received) of 1/3 one after another, 4/3, not the two steps of 1/3 of
    the bidirectional ring (``validate SCHEDULE.yaml`` already said
    ``mixed: ...``)."""
    algorithm = tmp_path / "ring.xml"
    algorithm.write_text(ring_allgather_xml(3))
    platform = tmp_path / "p.yaml"
    platform.write_text("platform:\n  nodes: [{id: A, port_model: unidirectional}, {id: B}, "
                        "{id: C}]\n  links:\n" + "".join(
                            f"    - {{src: {a}, dst: {b}, c: 1, both_ways: true}}\n"
                            for a, b in ("AB", "BC", "CA")))
    for extra, models in (((), "bidirectional, unidirectional"),
                          (("--port-model", "multiport"), "multiport, unidirectional")):
        result = CliRunner().invoke(main, ["validate", str(algorithm), "--platform",
                                           str(platform), "--no-lp-bound", *extra])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert lines[0] == (f"{algorithm}: allgather on 3 ranks (A, B, C), port models "
                            f"mixed: {models}")
        assert lines[1] == "feasible: yes, correct: yes, makespan: 4/3"
    platform.write_text(platform.read_text().replace(", port_model: unidirectional", ""))
    result = CliRunner().invoke(main, ["validate", str(algorithm), "--platform",
                                       str(platform), "--no-lp-bound"])
    assert result.stdout.splitlines()[:2] == [
        f"{algorithm}: allgather on 3 ranks (A, B, C), port model bidirectional",
        "feasible: yes, correct: yes, makespan: 2/3"]


def test_validate_function_warns_of_the_port_models_it_keeps() -> None:
    """``simulator.validate(schedule, port_model=...)``, which the pytest
    plugin's ``assert_feasible(schedule, port_model="unidirectional")``
    calls, kept every node's own model silently, as the command did: the
    relay whose every node gives one passed under "unidirectional".  With A
    on the platform's model, A's port conflict in each of the 10 periods of
    the horizon, folded into one violation."""
    import warnings

    import yaml

    from portsim.scenarios.schedule_file import schedule_from_dict
    from portsim.simulator import validate as check

    def load_schedule_text(text: str) -> Any:
        return schedule_from_dict(yaml.safe_load(text))

    schedule = load_schedule_text(RELAY_EVERY_NODE_OWN)
    with pytest.warns(UserWarning, match=r"^port_model='unidirectional' replaces the "
                      r"platform-wide port model only: 2 nodes keep the one the platform "
                      r"gives: S \(bidirectional\), A \(multiport:2\) \(every node has its "
                      r"own: it changes nothing\)$"):
        assert check(schedule, port_model="unidirectional", horizon=10).feasible
    follows = load_schedule_text(RELAY_EVERY_NODE_OWN.replace(
        '{id: A, port_model: "multiport:2"}', "{id: A}"))
    plain = load_schedule_text(RELAY_EVERY_NODE_OWN.replace(', port_model: "multiport:2"', "")
                               .replace(", port_model: bidirectional}", "}"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # B is unidirectional already: nothing kept
        assert check(plain, port_model="unidirectional", horizon=10).violations
    with pytest.warns(UserWarning, match=r": 1 node keeps the one the platform gives: S "
                      r"\(bidirectional\)$"):
        report = check(follows, port_model="unidirectional", horizon=10)
    assert [(v.kind, v.node) for v in report.violations] == [("port_conflict", "A")]


def test_reading_a_long_schedule_file_says_it_still_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a schedule file is a step as the replay is: 300,000 events of YAML take
    about 25 s, which ``validate`` spent silent (off a terminal no line, on one no
    spinner) before its first "replaying" line. The reading is slowed here, and the
    line a step prints once it passes ``QUIET_SECONDS`` names it."""
    import re
    import time

    import portsim.scenarios.cli as cli
    import portsim.scenarios.loader as loader

    plain = loader.read_document

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.5)
        return plain(*args, **kwargs)

    monkeypatch.setattr(loader, "read_document", slow)
    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.1)
    code, out, err = validate(tmp_path, PERIODIC, "--no-lp-bound")
    assert code == 0
    assert "throughput: 1/2" in out
    path = tmp_path / "schedule.yaml"
    assert re.search(rf"^portsim: reading {re.escape(str(path))}: [01] s so far$", err,
                     re.MULTILINE), err
