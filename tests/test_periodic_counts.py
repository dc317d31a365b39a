"""A periodic schedule's replay over a horizon: the counts every path gives alike.

``portsim run`` replays a periodic schedule up to its steady state and counts
the rest in closed form (``replay_periodic``); ``portsim validate --horizon H``
and ``simulator.validate(horizon=H)`` replay every period; ``--float`` replays
in floats.  The figures below are counted by hand from the schedules' times.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from portsim.scenarios.runner import replay_periodic
from portsim.simulator.engine import replay
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Schedule


def chain(c_ab: str, *, period: str, slots: int = 1) -> Schedule:
    """S -> A (cost 1/3) -> B (cost ``c_ab``), one broadcast every ``period``: S sends
    at 0, A forwards the broadcast of the period before at 0."""
    platform = Platform.build(["S", "A", "B"], [("S", "A", "1/3"), ("A", "B", c_ab)])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    return Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0, "lag": 1},
    ], period=period, instances_per_period=slots)


def test_float_replay_plays_no_event_starting_at_the_horizon() -> None:
    """Horizon 5/3, period 1/3: S sends instances 0..4 (at 0 .. 4/3), A forwards 0..3
    (at 1/3 .. 4/3, ending by 5/3); instance 4 is begun and unfinished, and S's send of
    instance 5 starts at the horizon, so it is not played.  In floats it starts at
    5 * 0.3333333333333333 = 1.6666666666666665, below float(5/3), and was played:
    2 instances unfinished."""
    schedule = chain("1/3", period="1/3")
    for exact in (True, False):
        report = replay(schedule, horizon=Fraction(5, 3), exact=exact)
        assert (report.completed, report.unfinished, report.startup_skipped) == (4, 1, 1)
        assert report.feasible


def test_run_counts_the_repeats_of_a_violation_over_the_whole_horizon() -> None:
    """A -> B lasts 1/2 in a period of 1/3: A's play of period p (p >= 1) overlaps the
    one before from p = 2 on, on A's send port and B's receive port.  Over 100 periods
    (plays p = 1..99) that is 98 conflicts each: the first at 2/3, 97 later.  The
    closed-form replay of `run` said "repeated in 2 later periods", its own short
    replay's count, where `validate --horizon 100/3` said 97."""
    schedule = chain("1/2", period="1/3")
    horizon = Fraction(100, 3)
    for exact in (True, False):
        whole = replay(schedule, horizon=horizon, exact=exact)
        closed = replay_periodic(schedule, horizon, exact=exact)
        for report in (whole, closed):
            assert [(v.kind, v.node, round(float(v.time), 12)) for v in report.violations] == [
                ("port_conflict", "A", round(2 / 3, 12)), ("port_conflict", "B", round(2 / 3, 12))]
            assert all(v.detail.endswith("(repeated in 97 later periods)")
                       for v in report.violations)
        assert [v.detail for v in closed.violations] == [v.detail for v in whole.violations]
        assert closed.unfinished == whole.unfinished
        assert closed.end_time == whole.end_time


def test_run_counts_an_idle_slot_over_the_whole_horizon() -> None:
    """Two instance slots a period of 1, no event for slot #1.  Slot #0's instance p
    completes at p + 1 + 1/3 (S at p, A at p + 1), so 99 complete within 100 periods,
    and slot #1 is expected as often: 99 instances never complete, the row at the end
    of the last event (S's and A's sends of period 99 end at 99 + 1/3).  The closed
    form said "(and 1 more instances)" at time 3 + 1/3, incomplete 2."""
    schedule = chain("1/3", period="1", slots=2)
    horizon = Fraction(100)
    whole = replay(schedule, horizon=horizon)
    closed = replay_periodic(schedule, horizon)
    for report in (whole, closed):
        assert (report.completed, report.incomplete) == (99, 99)
        assert [(v.kind, v.node, v.time, v.resource) for v in report.violations] == [
            ("incomplete", "A", Fraction(298, 3), "b#1"),
            ("incomplete", "B", Fraction(298, 3), "b#1")]
        assert all("never holds b#1 (and 98 more instances)" in v.detail
                   for v in report.violations)
    assert closed.violations == whole.violations


def test_validate_takes_a_horizon_of_a_billion_as_run_does(tmp_path: Path) -> None:
    """`run --horizon 1000000000` counts a periodic schedule in closed form; `validate
    --horizon 1000000000` (and ``simulator.validate``) refused it: "replaying 3000000000
    periods of 2 events exceeds the cap".  By hand, period 1/3: instance p completes at
    (p + 2) / 3, so 3 * 10^9 - 1 of them by 10^9, instance 3 * 10^9 - 1 begun and
    unfinished; with A -> B lasting 1/2, plays 1 .. 3 * 10^9 - 1 of A, each from the
    second on overlapping the one before: 3 * 10^9 - 3 repeats of the first conflict."""
    from click.testing import CliRunner

    from portsim.scenarios import dump_schedule
    from portsim.scenarios.cli import main
    from portsim.simulator.validation import validate

    billion = 10**9
    feasible, clashing = chain("1/3", period="1/3"), chain("1/2", period="1/3")
    report = validate(feasible, horizon=billion)
    assert (report.completed, report.unfinished, report.feasible) == (3 * billion - 1, 1, True)
    assert report.measured_throughput_exact == Fraction(3 * billion - 1, billion)
    assert report.throughput == 3
    assert replay_periodic(feasible, Fraction(billion)) == report  # what run counts
    report = validate(clashing, horizon=billion)
    assert [v.detail.rpartition(" (")[2] for v in report.violations] == [
        f"repeated in {3 * billion - 3} later periods)"] * 2
    path = tmp_path / "s.yaml"
    dump_schedule(feasible, path)
    result = CliRunner().invoke(main, ["validate", str(path), "--horizon", str(billion),
                                       "--no-lp-bound", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["completed"], document["measured_throughput_exact"]) == (
        3 * billion - 1, f"{3 * billion - 1}/{billion}")


def reduce_pair() -> Platform:
    """A and B computing in no time, B -> A of cost 1/3."""
    return Platform.build({"A": 0, "B": 0}, [("B", "A", "1/3"), ("A", "B", "1/3")])


def test_float_replay_expects_no_instance_whose_zero_time_event_starts_at_the_horizon(
) -> None:
    """A reduce to A, period 1/3: B sends v[1,1] of period p at p/3 (ending (p + 1)/3),
    A combines it at once at (p + 1)/3 (lag 1).  Over 5/3 instances 0..3 complete (by
    4/3); instance 4's combine starts at 5/3, the horizon: not played, so the instance
    is begun (unfinished) and not expected.  In floats that start is 4 *
    0.3333333333333333 + 0.3333333333333333 = 1.6666666666666665, below float(5/3):
    not played (an event starting within the tolerance of the horizon is at it), yet
    the instance was expected: `incomplete` 1, "A never holds v[0,1]#4"."""
    platform = reduce_pair()
    operation = Operation(OperationKind.REDUCE, target="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "B", "dst": "A", "item": "v[1,1]", "start": 0},
        {"kind": "compute", "node": "A", "inputs": ["v[0,0]", "v[1,1]"], "output": "v[0,1]",
         "start": 0, "lag": 1},
    ], period="1/3")
    for exact in (True, False):
        report = replay(schedule, horizon=Fraction(5, 3), exact=exact)
        assert (report.completed, report.instances, report.incomplete, report.unfinished) == (
            4, 4, 0, 1)
        assert report.feasible


def test_float_replay_past_a_short_horizon_counts_no_event_starting_at_it() -> None:
    """S -> A -> B (costs 1/10), period 3/10: S sends at p * 3/10 + 1/5, A forwards at
    lag 4, so a strict replay over 11/10 plays on to the steady state 13/10 for its
    checks and counts only the events starting before 11/10: S's sends at 1/5, 1/2,
    4/5 (instances 0..2 begun, none complete), the last ending at 9/10; S's send at
    3 * 3/10 + 1/5 = 11/10 starts at the horizon.  In floats it starts at
    1.0999999999999999, below float(11/10), and was counted: 4 unfinished, the last
    event ending at 1.2."""
    platform = Platform.build(["S", "A", "B"], [("S", "A", "1/10"), ("A", "B", "1/10")])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": "1/5"},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0, "lag": 4},
    ], period="3/10")
    for exact in (True, False):
        report = replay(schedule, horizon=Fraction(11, 10), exact=exact)
        assert (report.completed, report.instances, report.unfinished) == (0, 0, 3)
        assert report.end_time == (Fraction(9, 10) if exact else 0.9)


def test_run_counts_the_instances_never_completed_as_unfinished_over_the_whole_horizon(
) -> None:
    """A broadcast from S to A, B and C, period 1: S sends at p, A forwards to B at p + 1
    (lag 1), no event reaches C, so no instance completes.  Over 100 periods S's sends
    begin instances 0..99: 100 unfinished; instance p is expected once A's forward
    ends, p + 4/3 <= 100, so 99 are expected and incomplete.  The closed form said
    the `unfinished` of its short replay: 3."""
    platform = Platform.build(["S", "A", "B", "C"],
                              [("S", "A", "1/3"), ("A", "B", "1/3"), ("B", "C", "1/3")])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0, "lag": 1},
    ], period=1)
    whole, closed = replay(schedule, horizon=100), replay_periodic(schedule, 100)
    for report in (whole, closed):
        assert (report.completed, report.instances, report.incomplete, report.unfinished) == (
            0, 99, 99, 100)
    assert closed.violations == whole.violations


def test_run_ends_a_periodic_schedule_that_plays_no_event_at_0() -> None:
    """Two instance slots a period of 1: slot #0's one send, S -> B, has no link, slot
    #1 has no event.  No event is played, so the last one ends at 0 and the rows of the
    100 instances of slot #1 that never complete stand there, as in a replay of every
    period; the closed form moved them by its skipped periods, to t=99."""
    platform = Platform.build(["S", "A", "B"], [("S", "A", "1/3"), ("A", "B", "1/3")])
    operation = Operation(OperationKind.BROADCAST, source="S").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "S", "dst": "B", "item": "b", "start": 0},
    ], period=1, instances_per_period=2)
    whole, closed = replay(schedule, horizon=100), replay_periodic(schedule, 100)
    for report in (whole, closed):
        assert (report.completed, report.instances, report.incomplete) == (0, 100, 100)
        assert report.end_time == 0
        assert [(v.kind, v.time) for v in report.violations] == [
            ("no_link", 0), ("incomplete", 0), ("incomplete", 0)]
    assert closed.violations == whole.violations


def test_run_counts_the_repeats_of_a_zero_time_event_at_the_steady_state() -> None:
    """A combines v[0,0] and v[1,1] in no time at p + 1/2, and no event brings it v[1,1]:
    over 21/2 that is 10 plays (1/2 .. 19/2), the first "never received it", repeated
    in 9 later periods.  The closed form's shorter replay ended at 1/2, short of the
    steady state (a period), so it played on to 1 and counted the play at 1/2, as the
    replay one period longer did: no repeat seen, none counted."""
    platform = reduce_pair()
    operation = Operation(OperationKind.REDUCE, target="A").resolve(platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "compute", "node": "A", "inputs": ["v[0,0]", "v[1,1]"], "output": "v[0,1]",
         "start": "1/2"},
    ], period=1)
    horizon = Fraction(21, 2)
    for exact in (True, False):
        whole = replay(schedule, horizon=horizon, exact=exact)
        closed = replay_periodic(schedule, horizon, exact=exact)
        for report in (whole, closed):
            assert [(v.kind, v.detail.rpartition(" (")[2]) for v in report.violations] == [
                ("item_not_held", "repeated in 9 later periods)")]
        assert closed.violations == whole.violations
