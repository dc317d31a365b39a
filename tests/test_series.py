"""The pipelined series of a one-shot schedule and the periodic count, for any horizon.

:func:`portsim.simulator.engine.replay_series` counts completions from the series'
repeating pattern and :func:`portsim.scenarios.runner.replay_periodic` from whole
periods; both must give exactly what a full replay of every instance gives
(the brute force here), and a long horizon must take no longer than a short
one (issue 12: a silent cap of 2,000,000 events once printed 0.1000 ratios).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from example_cases import SLOW_EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

import portsim.simulator.engine
from portsim.planners.registry import get_planner
from portsim.scenarios.generators import random_platform
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.runner import replay_periodic
from portsim.simulator import Operation, OperationKind, Platform, Schedule
from portsim.simulator.engine import replay, replay_series
from portsim.simulator.platform import Link, Node, PortModel
from portsim.simulator.schedule import Send

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"


def _count_repeats(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The copies each :meth:`Schedule.repeat` call asks for, as the calls come."""
    copies: list[int] = []
    original = Schedule.repeat

    def counted(self: Schedule, count: int, spacing: Fraction) -> Schedule:
        copies.append(count)
        return original(self, count, spacing)

    monkeypatch.setattr(Schedule, "repeat", counted)
    return copies


def brute_series(schedule: Schedule, horizon: Fraction) -> int:
    """Completions by ``horizon`` of a full ASAP replay of enough copies: copy t
    cannot end before (t + 1) * (its longest event / k), so the copies past
    ``horizon`` over that are never counted."""
    platform = schedule.platform
    # multiport without k: at most one transfer per link, so a node's links bound it.
    k = max(platform.port_model_of(n).k
            or sum(1 for link in platform.links if n in (link.src, link.dst))
            for n in platform.node_ids)
    longest = max(schedule.operation.size * platform.cost(e.src, e.dst) * e.part
                  if isinstance(e, Send) else platform.compute_time(e.node)
                  for e in schedule.events)
    copies = int(horizon * k / longest) + 2
    # Copies spaced by the stated span at least: on every port, the stated times
    # then order the copies instance after instance, the series' definition (a
    # spacing by the shorter ASAP span would let a copy's early events overtake
    # the previous copy's late ones).
    stated = max(e.start + (platform.duration(e.src, e.dst, schedule.operation.size, e.part)
                            if isinstance(e, Send) else platform.compute_time(e.node))
                 for e in schedule.events)
    span = max(Fraction(1), stated, replay(schedule, mode="asap").end_time or 1)
    return replay(schedule.repeat(copies, Fraction(span)), mode="asap",
                  horizon=horizon).completed


def one_shot_plans():  # type: ignore[no-untyped-def]
    for path in sorted(EXAMPLES.glob("*.yaml")):
        scenario = load_scenario(path)
        for spec in scenario.planners:
            if spec.name.startswith("lp"):
                continue
            result = get_planner(spec.name).plan(scenario.platform, scenario.operation,
                                                 **dict(spec.options))
            if result.is_ok and result.schedule is not None and result.schedule.events:
                # the fabric examples' schedules take minutes to replay 200 makespans
                marks = pytest.mark.slow if path.stem in SLOW_EXAMPLES else ()
                yield pytest.param(result.schedule, id=f"{path.stem}-{spec.name}", marks=marks)


@pytest.mark.parametrize("schedule", list(one_shot_plans()))
def test_series_count_equals_the_full_replay(schedule: Schedule) -> None:
    makespan = replay(schedule).makespan
    assert makespan is not None
    # 200 makespans: far past the 64 copies replayed directly.
    for horizon in (makespan * 3 + Fraction(1, 7), makespan * 200 + Fraction(1, 3)):
        got = replay_series(schedule, horizon)
        assert got.horizon == horizon
        assert got.completed == brute_series(schedule, horizon)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 5000), n=st.integers(2, 6),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2",
                             "multiport"]),
       planner=st.sampled_from(["flat", "greedy", "binomial", "fibonacci"]),
       kind=st.sampled_from([OperationKind.REDUCE, OperationKind.BROADCAST,
                             OperationKind.SCATTER]))
def test_series_count_on_random_platforms(seed: int, n: int, model: str, planner: str,
                                          kind: OperationKind) -> None:
    platform = random_platform(n, min(2, n - 1), c=(1, 5), compute=(0, 3), seed=seed,
                               port_model=model)
    root = platform.processors[0]
    operation = (Operation(kind, target=root) if kind is OperationKind.REDUCE
                 else Operation(kind, source=root)).resolve(platform)
    result = get_planner(planner).plan(platform, operation)
    if not result.is_ok or result.schedule is None or not result.schedule.events:
        return
    makespan = replay(result.schedule).makespan
    assert makespan is not None
    horizon = makespan * 150 + Fraction(1, 2)
    assert replay_series(result.schedule, horizon).completed == brute_series(
        result.schedule, horizon)


def chain(n: int) -> Schedule:
    """A broadcast along a chain of n nodes, cost 1 per hop: one per time unit."""
    names = [f"N{i}" for i in range(n)]
    platform = Platform.build(names, [(a, b, 1) for a, b in itertools.pairwise(names)])
    op = Operation(OperationKind.BROADCAST, source="N0").resolve(platform)
    return Schedule.from_dicts(platform, op, [
        {"kind": "send", "src": a, "dst": b, "item": "b", "start": i}
        for i, (a, b) in enumerate(itertools.pairwise(names))])


def test_a_huge_horizon_is_counted_exactly() -> None:
    # Copy t of the chain's broadcast ends at t + n - 1.
    report = replay_series(chain(5), 10**15)
    assert report.completed == 10**15 - 3
    assert report.measured_throughput == pytest.approx(1.0)


def test_a_series_that_does_not_settle_is_cut_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # With room for 2 copies only, no pattern can be confirmed (it takes the
    # window of 2 copies plus one cycle): the report's horizon is the span over
    # which its count is exact, not the one asked.
    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", 2 * 4)
    report = replay_series(chain(5), 1000)
    assert report.horizon is not None
    assert report.horizon < 1000
    assert report.completed == brute_series(chain(5), Fraction(report.horizon))


def two_hops(second: int) -> Schedule:
    """The chain S -> A (c = 1) -> B (c = ``second``): S sends every 1, A every
    ``second``."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", second)])
    op = Operation(OperationKind.BROADCAST, source="S").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 1}])


def sent_twice() -> Schedule:
    """S -> A (c = 1) twice, then A -> B (c = 3): S sends every 2, A every 3,
    and A holds b at the first of its two arrivals (the earliest, no
    latest-of rule): copy t's sends start at 2t, 2t + 1 and 1 + 3t, and it
    ends at 4 + 3t.  The starts never repeat with one delay, nor with each
    event's own (a key delivered twice is no dependency of the max-plus kind):
    the series of a long horizon is cut."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 3)])
    op = Operation(OperationKind.BROADCAST, source="S").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0},
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 1},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 2}])


def test_parts_at_different_rates_repeat_event_by_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On the chain S -> A (c = 1) -> B (c = 2) nothing holds S back, so copy
    t's first send starts at t and its second at 1 + 2t: the starts never
    repeat with one delay, and a long horizon was cut after 2,000,000 events
    (35 s).  Each event repeats with its own delay (1 and 2), and A's send
    waits on its own previous one: copy t ends at 3 + 2t for every t, counted
    in closed form from a prefix of 8 copies."""
    copies = _count_repeats(monkeypatch)
    slow = replay_series(two_hops(2), 10**8)
    assert copies == [8]
    assert slow.horizon == 10**8
    assert slow.completed == (10**8 - 3) // 2 + 1
    for horizon in (Fraction(2000), Fraction(4001, 3)):
        assert replay_series(two_hops(2), horizon).completed == brute_series(
            two_hops(2), horizon) == (horizon - 3) // 2 + 1
    settled = replay_series(two_hops(1), 10**6)
    assert settled.horizon == 10**6
    assert settled.completed == 10**6 - 1  # copy t ends at t + 2
    rounded = replay_series(two_hops(2), 10**6, exact=False)
    assert (rounded.completed, rounded.horizon) == ((10**6 - 3) // 2 + 1, 10.0**6)


def relayed_two_hops() -> Schedule:
    """The chain S -> A (c = 1) -> B (c = 2), A relaying B's copy: a transit
    send and its follower (as ``msccl-import`` writes a relay), the broadcast
    only to B.  S sends every 1, A every 2: copy t's hops start at t and
    1 + 2t, and it ends at 3 + 2t."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 2)])
    op = Operation(OperationKind.BROADCAST, source="S", targets=("B",)).resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b", "start": 0, "transit": True},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 1}],
        follows=[[0, 1]])


def test_a_relay_at_its_own_rate_repeats_event_by_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``follows`` pair is a wait on one event's end, like an input one
    event gives once, so the event-by-event pattern covers it.  It gave up
    on any ``follows`` pair: this series of 10^8 was cut after 2,000,000
    events, and an MSCCL all-pairs allgather on two ``dgx_a100`` servers
    (8 instances, 6,912 events) replayed its 100 makespans whole (11 s, 1
    GB; 0.7 s now, the same 823 instances).  Copy t ends at 3 + 2t: counted
    in closed form from a prefix of 8 copies, and the count is the full
    replay's."""
    copies = _count_repeats(monkeypatch)
    relayed = relayed_two_hops()
    slow = replay_series(relayed, 10**8)
    assert copies == [8]
    assert slow.horizon == 10**8
    assert slow.completed == (10**8 - 3) // 2 + 1
    for horizon in (Fraction(2000), Fraction(4001, 3)):
        assert replay_series(relayed, horizon).completed == brute_series(
            relayed, horizon) == (horizon - 3) // 2 + 1
    rounded = replay_series(relayed, 10**6, exact=False)
    assert (rounded.completed, rounded.horizon) == ((10**6 - 3) // 2 + 1, 10.0**6)


def test_a_reduction_tree_whose_leaves_run_ahead_is_counted_exactly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A greedy reduce tree on 10 heterogeneous nodes: some leaves send
    faster than the tree reduces, so no delay is common to all the starts,
    and the series of ``portsim run``'s horizon (100 makespans) was replayed
    whole, the reduce of 500 nodes cut (``-`` in the table) after 40 s and
    1.5 GiB.  Each event repeats with its own delay from 8 copies on; the
    count is the full replay's, and a huge horizon is no longer cut (the
    cap lowered here to 64 copies, which the old count exceeded)."""
    platform = random_platform(10, 2, c=(1, 9), compute=(1, 4), seed=1)
    operation = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    schedule = get_planner("greedy").plan(platform, operation).schedule
    assert schedule is not None
    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS",
                        64 * len(schedule.events))
    makespan = replay(schedule).makespan
    assert isinstance(makespan, Fraction)
    assert makespan == 44
    for horizon in (makespan * 100 + Fraction(1, 3), Fraction(10**9)):
        got = replay_series(schedule, horizon)
        assert got.horizon == horizon
        if horizon < 10**6:
            assert got.completed == brute_series(schedule, horizon)
    # an independent count: copy t of the tree completes at a + t * rate from
    # copy 8 on (the last two copies of a direct replay of 40 give both)
    copies = replay(schedule.repeat(40, Fraction(1000)), mode="asap").completion_times
    rate = copies[-1] - copies[-2]
    assert copies[-2] - copies[-3] == rate
    assert got.completed == 40 + (10**9 - copies[-1]) // rate


def test_a_key_delivered_twice_never_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", 3 * 1000)
    slow = replay_series(sent_twice(), 10**6)
    # cut: 1000 copies replayed, exact up to 1000 * 3 (copy t ends at 4 + 3t)
    assert slow.horizon == 3000
    assert slow.completed == 999 == brute_series(sent_twice(), Fraction(3000))
    # float mode counts the same copies, over the same span
    rounded = replay_series(sent_twice(), 10**6, exact=False)
    assert (rounded.completed, rounded.horizon) == (999, 3000.0)


def test_a_cut_counts_the_last_try_without_replaying_it_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The cut's figures come from the prefix replayed last: replaying those
    # copies once more took about 40% of a cut's time (33 s instead of 52 s
    # of CPU on a chain at the real cap and --horizon 10**8).
    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", 3 * 300)
    calls: list[object] = []
    original = portsim.simulator.engine.replay

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(portsim.simulator.engine, "replay", counted)
    report = replay_series(sent_twice(), 10**6)
    assert calls == []
    assert (report.completed, report.horizon) == (299, 900)  # copy t ends at 4 + 3t


def test_a_series_that_may_not_settle_is_not_tried_at_half_its_length(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over 200 time units, at most 200 / 3 + 2 = 68 copies of ``sent_twice``
    may complete (A -> B takes 3 a copy): the prefixes tried for a pattern
    stop below half of that (8, 16, 32), then the 68 copies are replayed
    once; a try of 64 copies paid for a replay that never settles (copy t
    ends at 4 + 3t: 66 complete by 200)."""
    copies = _count_repeats(monkeypatch)
    report = replay_series(sent_twice(), 200)
    assert copies == [8, 16, 32, 68]
    assert report.completed == 66 == brute_series(sent_twice(), Fraction(200))


def test_run_marks_a_cut_series(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from portsim.scenarios.runner import run_scenario

    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", 1)
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    (flat,) = [r for r in run_scenario(scenario).results if r.planner == "flat"]
    assert flat.replay_cut is True
    assert flat.measured_throughput is None
    assert flat.completed is None
    assert flat.to_dict()["replay_cut"] is True
    assert any(note.startswith("replay cut:") for note in flat.notes)


@pytest.mark.parametrize("example", ["reduce-toy", "scatter-toy", "broadcast-bidir",
                                     "allreduce-toy"])
def test_periodic_count_equals_the_full_replay(example: str) -> None:
    scenario = load_scenario(EXAMPLES / f"{example}.yaml")
    result = get_planner("lp").plan(scenario.platform, scenario.operation)
    assert result.is_ok
    assert result.schedule is not None
    period = result.schedule.period
    assert period is not None
    for horizon in (period * 3, period * 37 + period / 3, period * 120):
        fast = replay_periodic(result.schedule, horizon)
        full = replay(result.schedule, horizon=horizon)
        assert (fast.completed, fast.instances, fast.unfinished) == (
            full.completed, full.instances, full.unfinished)
        assert fast.horizon == horizon
        assert fast.feasible
        assert full.feasible


def test_float_mode_is_not_mistaken_for_a_cut(tmp_path: Path) -> None:
    # 1000/3 is no float: the float replay's horizon rounds it, not a cut.
    from portsim.scenarios.runner import run_scenario

    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    exact = run_scenario(scenario, horizon=Fraction(1000, 3)).results[0]
    rounded = run_scenario(scenario, horizon=Fraction(1000, 3), exact=False).results[0]
    assert exact.planner == rounded.planner == "flat"
    assert not rounded.replay_cut
    # Copy t of the flat reduce completes at 5/2 + 2t (P0's receive port).
    assert rounded.completed == exact.completed == (Fraction(1000, 3) - Fraction(5, 2)) // 2 + 1


def test_periodic_count_pays_the_latency_of_a_part() -> None:
    # Four quarter-messages of size 1/2 over a link of latency 3, bandwidth 4:
    # each lasts 3 + (1/4)(1/2)/4 = 97/32, not c * size * part = 13/32.  With
    # the short figure, the periodic count extrapolated from before the pattern
    # settled (0 completions); the full replay is the independent count.
    link = Link.of_bandwidth("A", "B", 4, latency=3)
    p = Platform((Node("A"), Node("B")), (link,), PortModel.parse("multiport:2"))
    op = Operation(OperationKind.BROADCAST, source="A", targets=("B",),
                   size=Fraction(1, 2)).resolve(p)
    assert p.duration("A", "B", op.size, Fraction(1, 4)) == Fraction(97, 32)
    events = [{"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0,
               "part": Fraction(1, 4), "lag": lag} for lag in (2, 3, 1, 1)]
    schedule = Schedule.from_dicts(p, op, events, period=Fraction(1, 2))
    for horizon in (Fraction(16, 3), Fraction(25, 2), Fraction(81, 4)):
        fast = replay_periodic(schedule, horizon)
        full = replay(schedule, horizon=horizon)
        assert (fast.completed, fast.instances, fast.unfinished, fast.feasible) == (
            full.completed, full.instances, full.unfinished, full.feasible)
    assert replay_periodic(schedule, Fraction(25, 2)).completed == 16


def test_a_switch_of_many_links_is_no_window_of_as_many_copies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A `multiport` switch of 8 links has 8 port slots, but each link carries
    one transfer at a time, so the slots never hold a transfer back: the state
    a copy leaves is one copy deep, as on a one-port node.  Counting the 8
    slots as 8 copies of memory asked for 9 repeating copies, past a cap of 9
    (at the real cap: the 64 links of an InfiniBand switch of 16 dgx_a100
    servers cut the series of a 128-rank MSCCL ring, `throughput: -`)."""
    from portsim.scenarios.msccl import read_msccl, ring_allgather_xml, time_msccl

    gpus = [f"P{i}" for i in range(8)]
    links = [(g, "sw", 1) for g in gpus] + [("sw", g, 1) for g in gpus]
    p = Platform.build([*gpus, "sw"], links, "multiport", routers=["sw"])
    ring = time_msccl(read_msccl(ring_allgather_xml(8)), p).schedule  # 112 sends
    monkeypatch.setattr(portsim.simulator.engine, "MAX_SERIES_EVENTS", len(ring.events) * 9)
    horizon = Fraction(300)
    got = replay_series(ring, horizon)
    assert got.horizon == horizon  # not cut
    # brute force: every copy that may end by the horizon, replayed; each link
    # carries 7 sends of 1/8 a copy, so copy t ends after (t + 1) * 7/8
    copies = int(horizon / Fraction(7, 8)) + 2
    span = replay(ring).end_time
    assert span is not None
    brute = replay(ring.repeat(copies, Fraction(span)), mode="asap", horizon=horizon)
    # by hand (hops of 1/8, each ring step two hops, the switch forwarding no
    # copy of its own): copy t ends at (14 + 13 t) / 8, and 14 + 13 t <= 2400
    # for t = 0..183
    assert got.completed == brute.completed == 184


def test_default_horizon_covers_a_long_start_up() -> None:
    """``lp``'s broadcast along a ring of 110 nodes pipelines each instance
    over more than 100 periods (its largest lag), so over the default 100
    periods no instance completed: measured throughput 0 beside the bound 2,
    and ``feasible``.  Without a horizon a periodic schedule is now replayed
    over twice its start-up when that is longer than 100 periods, and the
    count is the engine's full replay of that horizon."""
    from portsim.scenarios.generators import ring_platform
    from portsim.scenarios.loader import PlannerSpec, Scenario
    from portsim.scenarios.runner import run_planner
    platform = ring_platform(110)
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(platform)
    scenario = Scenario(name="ring", description="", seed=None, platform=platform,
                        operation=op, planners=(PlannerSpec("lp"),), horizon=None,
                        source="<test>")
    run = run_planner(scenario, PlannerSpec("lp"))
    assert run.plan is not None
    schedule = run.plan.schedule
    assert schedule is not None
    assert schedule.period is not None
    max_lag = max(e.lag for e in schedule.events)
    assert max_lag >= 100
    assert run.throughput_bound == 2
    assert run.horizon == schedule.period * 2 * (max_lag + 1)
    whole = replay(schedule, horizon=run.horizon)
    assert run.completed == whole.completed > 0


def _relay_ring() -> Schedule:
    """A broadcast A -> S -> B, then B -> S -> C, through the router S (every
    link 1): the second transfer carries B's copy, so its hop S -> C follows
    its hop B -> S (``follows``), though S holds ``b`` from t = 1."""
    p = Platform.build(["A", "B", "C", "S"],
                       [("A", "S", 1), ("S", "B", 1), ("B", "S", 1), ("S", "C", 1)],
                       "multiport", routers=["S"])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "S", "item": "b", "start": 0},
        {"kind": "send", "src": "S", "dst": "B", "item": "b", "start": 1},
        {"kind": "send", "src": "B", "dst": "S", "item": "b", "start": 2},
        {"kind": "send", "src": "S", "dst": "C", "item": "b", "start": 3}],
        follows=[[2, 3]])


def test_follows_chains_a_relay_in_every_replay() -> None:
    """By hand: the chain A, S, B, S, C is four hops of 1, so one broadcast ends
    at 4; without ``follows`` the as-soon-as-possible replay lets S send its
    own copy to C at 1 (end 2).  A series of broadcasts: S is a `multiport`
    router, one port per link, so the copies keep their order per link only
    and each link carries one hop a copy: copy t runs its hops in [t + h,
    t + h + 1] for h = 0..3 and ends at 4 + t, 97 by t = 100 (brute force
    alike; 49 when S's receive port kept one order across its two links,
    A -> S of copy t + 1 waiting for B -> S of copy t).  Without ``follows``
    copy t ends at t + 2: 99."""
    chained = _relay_ring()
    free = replace(chained, follows=())
    assert replay(chained, mode="asap").end_time == 4
    assert replay(free, mode="asap").end_time == 3  # S -> C at 1, and B -> S at 2
    assert replay(replace(free, events=free.events[:2] + free.events[3:])).feasible
    strict = replay(chained)
    assert strict.feasible
    assert strict.makespan == 4
    series = replay_series(chained, 100)
    assert series.completed == 97
    brute = replay(chained.repeat(100, Fraction(4)), mode="asap", horizon=100)
    assert brute.completed == 97
    assert replay_series(free, 100).completed == 99
    # as written at t = 1, S -> C is a violation: it follows B -> S, not yet sent
    from portsim.simulator.items import parse_item

    early = replace(chained, events=(*chained.events[:3], Send(
        "S", "C", parse_item("b"), Fraction(1))))
    got = replay(early)
    assert [v.kind for v in got.violations] == ["item_not_held"]
    assert "follows event 2, which ends only at t=3" in got.violations[0].detail
    assert replay(replace(early, follows=())).feasible


def test_follows_round_trips_through_a_schedule_file(tmp_path: Path) -> None:
    from portsim.scenarios.schedule_file import dump_schedule, load_schedule

    chained = _relay_ring()
    for name in ("s.yaml", "s.jsonl", "s.json"):
        dump_schedule(chained, tmp_path / name)
        assert load_schedule(tmp_path / name).follows == ((2, 3),)


@pytest.mark.parametrize(("follows", "message"), [
    ([[0, 4]], r"follows\[0\]: an event index from 0 to 3 expected \(got 4\)"),
    ([[1, 1]], r"follows\[0\]: an event cannot follow itself"),
    ([[1]], r"follows\[0\]: a pair \(i, j\) of event indexes expected"),
    ("0 1", r"follows: must be a list of pairs"),
])
def test_follows_refused_when_malformed(follows: object, message: str) -> None:
    from portsim.simulator.errors import ScheduleError

    s = _relay_ring()
    with pytest.raises(ScheduleError, match=message):
        Schedule.from_dicts(s.platform, s.operation, s.to_dicts(), follows=follows)


def test_follows_in_a_schedule_without_events_says_so() -> None:
    """No event to follow: said so (it was 'an event index from 0 to -1 expected')."""
    from portsim.simulator.errors import ScheduleError

    s = _relay_ring()
    with pytest.raises(ScheduleError,
                       match=r"^follows\[0\]: the schedule has no events to follow"):
        Schedule.from_dicts(s.platform, s.operation, [], follows=[[0, 1]])


def test_follows_blocked_names_what_each_event_waits_for() -> None:
    """Without S -> B, B never holds ``b``; B -> S and S -> C follow each other
    (a cycle): neither starts, and each blocked event names what it waits for
    (an item named as a node's holding, not a follows key read as one:
    ``m[P7]#-1`` was printed)."""
    chained = _relay_ring()
    events = (chained.events[0], chained.events[2], chained.events[3])  # no S -> B
    cycle = replace(chained, events=events, follows=((1, 2), (2, 1)))
    got = replay(cycle, mode="asap")
    assert {(v.kind, v.node, v.detail) for v in got.violations if v.kind == "blocked"} == {
        ("blocked", "B", "event 1 (instance 0) never starts: B never holds b, and it "
                         "follows event 2, which never ends"),
        ("blocked", "S", "event 2 (instance 0) never starts: it follows event 1, which "
                         "never ends")}


def test_follows_blocked_names_the_queue_the_followed_event_waits_in() -> None:
    """A sends to B then to C on its one send port, but the send to B follows
    the send to C: the send to C waits behind it in the port's order, so
    neither starts.  Only the send to B heads its queues (the blocked line);
    it names where the event it follows waits (it said only "which never
    ends", and that event had no line of its own)."""
    from portsim.simulator.operations import Operation, OperationKind

    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)], "bidirectional")
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    s = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "C", "item": "b", "start": 1}],
        follows=[[1, 0]])
    got = replay(s, mode="asap")
    assert [(v.node, v.detail) for v in got.violations if v.kind == "blocked"] == [
        ("A", "event 0 (instance 0) never starts: it follows event 1, which never ends: "
              "it is queued after event 0 on the send port of A")]
