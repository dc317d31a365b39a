"""A transit send (``transit: true``): its receiver only passes the copy on.

Every expected value is computed by hand from the link costs (each link 1,
``multiport``: one transfer per link and no other limit).
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from portsim.scenarios.cli import main
from portsim.scenarios.schedule_file import dump_schedule, load_schedule
from portsim.simulator import (
    Operation,
    OperationKind,
    Platform,
    Schedule,
    ScheduleError,
    ViolationKind,
    replay,
)
from portsim.simulator.engine import replay_one_shot, replay_series
from portsim.simulator.validation import describe_event

# A -> B -> C and B -> D, every link 1: B relays A's copy to C.
RELAY = Platform.build(["A", "B", "C", "D"], [("A", "B", 1), ("B", "C", 1), ("B", "D", 1)],
                       "multiport")


def send(src: str, dst: str, start: object, **extra: object) -> dict[str, object]:
    return {"kind": "send", "src": src, "dst": dst, "item": "b", "start": start, **extra}


def relayed(targets: tuple[str, ...], *more: dict[str, object]) -> Schedule:
    """Event 0: A -> B in transit at 0; event 1: B -> C at 1, its follower; then ``more``."""
    op = Operation(OperationKind.BROADCAST, source="A", targets=targets).resolve(RELAY)
    return Schedule.from_dicts(RELAY, op, [send("A", "B", 0, transit=True), send("B", "C", 1),
                                           *more], follows=[[0, 1]])


@pytest.mark.parametrize("exact", [True, False])
def test_the_relay_holds_no_copy_its_own_comes_later(exact: bool) -> None:
    """By hand: A -> B [0, 1] in transit, B -> C [1, 2], then B's own copy A -> B
    [2, 3]: C holds b at 2, B at 3 (not 1): makespan 3 (2 if B kept the copy)."""
    r = replay(relayed(("B", "C"), send("A", "B", 2)), exact=exact)
    assert (r.feasible, r.complete) == (True, True)
    assert r.makespan == 3
    assert sorted(r.completion_times) == [3]
    # C alone as the target: the transit copy reaches it at 2
    alone = replay(relayed(("C",)), exact=exact)
    assert (alone.feasible, alone.complete, alone.makespan) == (True, True, 2)


@pytest.mark.parametrize("exact", [True, False])
def test_only_the_follower_passes_the_copy_on(exact: bool) -> None:
    """A second send of b from B (B -> D at 1, not the follower) needs B's own copy:
    strictly, item_not_held (it arrives at 2, from A -> B [1, 2]); as soon as
    possible it waits for it: B -> D [2, 3], makespan 3 (2 if B kept the copy
    it relayed: B -> D at 1)."""
    s = relayed(("B", "C", "D"), send("A", "B", 1), send("B", "D", 1))
    strict = replay(s, exact=exact)
    assert [v.kind for v in strict.violations] == [ViolationKind.ITEM_NOT_HELD]
    assert strict.violations[0].events == (3,)
    assert strict.violations[0].detail == (
        "B sends b at t=1 but it arrives only at t=2 (the copy event 0 delivered was in "
        "transit: only its follower passes it on)")
    asap = replay(s, mode="asap", exact=exact, record_starts=True)
    assert (asap.feasible, asap.complete) == (True, True)
    assert list(asap.event_starts) == [0, 1, 1, 2]
    assert asap.makespan == 3
    # never any copy of B's own: the send is never received, and says so
    never = relayed(("C", "D"), send("B", "D", 1))
    got = replay(never, exact=exact)
    assert [v.kind for v in got.violations] == [ViolationKind.ITEM_NOT_HELD]
    assert got.violations[0].detail == (
        "B sends b at t=1 but it never received it (the copy event 0 delivered was in "
        "transit: only its follower passes it on)")
    blocked = replay(never, mode="asap", exact=exact)
    assert [v.kind for v in blocked.violations] == [ViolationKind.BLOCKED,
                                                    ViolationKind.INCOMPLETE]
    assert "B never holds b (the copy event 0 delivered was in transit" in (
        blocked.violations[0].detail)


def test_a_target_left_with_a_transit_copy_is_incomplete() -> None:
    """B a target with only the relayed copy: incomplete at the end (t=2)."""
    r = replay(relayed(("B", "C")))
    assert (r.feasible, r.complete, r.makespan) == (False, False, None)
    assert [(v.kind, v.node, v.time) for v in r.violations] == [
        (ViolationKind.INCOMPLETE, "B", 2)]
    assert "B never holds b (the copy event 0 delivered was in transit" in r.violations[0].detail


@pytest.mark.parametrize("exact", [True, False])
def test_the_follower_waits_for_the_transit_send(exact: bool) -> None:
    """The follower stated at 1/2, before the transit send ends (1): item_not_held
    naming the pair; as soon as possible it starts at 1."""
    op = Operation(OperationKind.BROADCAST, source="A", targets=("C",)).resolve(RELAY)
    s = Schedule.from_dicts(RELAY, op, [send("A", "B", 0, transit=True),
                                        send("B", "C", "1/2")], follows=[[0, 1]])
    got = replay(s, exact=exact)
    assert [v.kind for v in got.violations] == [ViolationKind.ITEM_NOT_HELD]
    assert "follows event 0, which ends only at t=1" in got.violations[0].detail
    asap = replay(s, mode="asap", exact=exact, record_starts=True)
    assert list(asap.event_starts) == [0, 1]
    assert asap.makespan == 2


@pytest.mark.parametrize("exact", [True, False])
def test_a_series_of_relays(exact: bool) -> None:
    """The series of A -> B (transit), B -> C, A -> B (B's own), B -> D: link
    A -> B carries two hops a copy, so copy t runs A -> B in [2t, 2t + 1] and
    [2t + 1, 2t + 2], B -> C in [2t + 1, 2t + 2], B -> D (after B's own copy)
    in [2t + 2, 2t + 3]: it ends at 2t + 3, 4 copies by 10 (t <= 3), 499 by
    1000.  Were the relayed copy B's, B -> D would start at 2t + 1 and copy t
    end at 2t + 2: 5 by 10."""
    s = relayed(("B", "C", "D"), send("A", "B", 1), send("B", "D", 2))
    assert replay(s).makespan == 3
    short = replay_series(s, 10, exact=exact)
    assert short.completed == 4
    assert list(short.completion_times) == [3, 5, 7, 9]
    assert replay_series(s, 1000, exact=exact).completed == 499
    assert replay_one_shot(s, 10, exact=exact).completed == 4


def test_transit_round_trips_through_a_schedule_file(tmp_path: Path) -> None:
    s = relayed(("B", "C"), send("A", "B", 2))
    assert s.to_dicts()[0] == {"kind": "send", "src": "A", "dst": "B", "item": "b",
                               "start": "0", "transit": True}
    assert "transit" not in s.to_dicts()[1]
    for name in ("s.yaml", "s.jsonl", "s.json"):
        dump_schedule(s, tmp_path / name)
        back = load_schedule(tmp_path / name)
        assert back == s
        assert [getattr(e, "transit", None) for e in back.events] == [True, False, False]
    repeated = s.repeat(2, F(3))
    assert [e.transit for e in repeated.events] == [True, False, False] * 2  # type: ignore[union-attr]
    assert describe_event(0, s.events[0]) == "#0 send b A->B (transit) @0"


def _refused(events: list[dict[str, object]], follows: object = (), **kw: object) -> str:
    op = Operation(OperationKind.BROADCAST, source="A").resolve(RELAY)
    with pytest.raises(ScheduleError) as info:
        Schedule.from_dicts(RELAY, op, events, follows=follows, **kw)  # type: ignore[arg-type]
    return str(info.value)


def test_transit_refusals() -> None:
    assert _refused([send("A", "B", 0, transit=True), send("B", "C", 1)]) == (
        "events[0].transit: a transit send needs exactly one follower, a pair [0, j] in "
        "follows whose event j sends b on from B; found none (got True)")
    # a follower of another item, of another part, or from another node: none
    alltoall = Operation(OperationKind.SCATTER, source="A", targets=("C", "D")).resolve(RELAY)
    with pytest.raises(ScheduleError, match=r"events\[0\]\.transit: .* sends m\[C\] on from "
                                            r"B; found none"):
        Schedule.from_dicts(RELAY, alltoall, [
            {"kind": "send", "src": "A", "dst": "B", "item": "m[C]", "start": 0,
             "transit": True},
            {"kind": "send", "src": "B", "dst": "D", "item": "m[D]", "start": 1}],
            follows=[[0, 1]])
    assert "sends b (part 1/2) on from B; found none" in _refused(
        [send("A", "B", 0, transit=True, part="1/2"), send("B", "C", 1)], [[0, 1]])
    # two followers
    assert _refused([send("A", "B", 0, transit=True), send("B", "C", 1), send("B", "D", 1)],
                    [[0, 1], [0, 2]]).endswith("found 2 (events 1, 2) (got True)")
    # one follower for two transit copies
    assert "event 2 already passes on the copy of transit event 0" in _refused(
        [send("A", "B", 0, transit=True), send("A", "B", 1, transit=True), send("B", "C", 2)],
        [[0, 2], [1, 2]])
    # not a boolean
    assert _refused([send("A", "B", 0, transit="yes")]) == (
        "events[0].transit: transit must be true or false (got 'yes')")
    # a compute
    reduce = Operation(OperationKind.REDUCE, target="B", participants=("A", "B")).resolve(RELAY)
    with pytest.raises(ScheduleError, match=r"events\[0\]\.transit: transit applies to sends "
                                            r"only"):
        Schedule.from_dicts(RELAY, reduce, [{"kind": "compute", "node": "B",
                                             "inputs": ["v[0,0]", "v[1,1]"],
                                             "output": "v[0,1]", "start": 0,
                                             "transit": True}])
    # periodic
    assert _refused([send("A", "B", 0, transit=True)], period=1) == (
        "events[0].transit: transit applies to one-shot schedules only (its copy goes on "
        "by the send that follows it, and follows is one-shot) (got True)")


def test_a_transit_send_without_follower_at_the_cli(tmp_path: Path) -> None:
    s = relayed(("C",))
    dump_schedule(s, tmp_path / "s.yaml")
    text = (tmp_path / "s.yaml").read_text(encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text.replace("follows:\n- [0, 1]\n", ""),
                                       encoding="utf-8")
    assert "follows" not in (tmp_path / "bad.yaml").read_text(encoding="utf-8")
    ok = CliRunner().invoke(main, ["validate", str(tmp_path / "s.yaml")])
    assert ok.exit_code == 0, ok.output
    assert "makespan: 2\n" in ok.output
    bad = CliRunner().invoke(main, ["validate", str(tmp_path / "bad.yaml")])
    assert bad.exit_code == 2
    assert bad.stderr.count("\n") == 1
    assert "events[0].transit: a transit send needs exactly one follower" in bad.stderr
