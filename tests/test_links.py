"""Links as resources (issue 14): one transfer at a time on a directed link,
under every port model; ``multiport`` without k; bandwidth and latency.

Every expected value is computed by hand from the platform.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from route_platforms import two_routes

from portsim.planners.flat import flat_tree
from portsim.planners.registry import get_planner
from portsim.planners.ring import ring_collective
from portsim.planners.timing import PortClock
from portsim.simulator import (
    Item,
    Operation,
    OperationKind,
    Platform,
    PlatformError,
    Schedule,
    Send,
    ViolationKind,
    replay,
)
from portsim.simulator.engine import replay_series
from portsim.simulator.platform import Link, PortKind, PortModel

F = Fraction


def send(src: str, dst: str, item: str, start: object) -> dict[str, object]:
    return {"kind": "send", "src": src, "dst": dst, "item": item, "start": start}


def broadcast(platform: Platform, source: str = "A") -> Operation:
    return Operation(OperationKind.BROADCAST, source=source).resolve(platform)


# -- the four engine cases of the "Done when" ---------------------------------------

def test_two_transfers_on_one_link_under_multiport_2_conflict() -> None:
    """Two ports at each end, but the link A -> B carries one transfer at a time."""
    p = Platform.build(["A", "B"], [("A", "B", 1)], "multiport:2")
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", F(1, 2))]
    s = Schedule.from_dicts(p, broadcast(p), events)
    report = replay(s)
    assert [v.kind for v in report.violations] == [ViolationKind.LINK_CONFLICT]
    v = report.violations[0]
    assert (v.resource, v.node, v.time, v.events) == ("link A -> B", "A", F(1, 2), (1, 0))
    assert "link A -> B" in v.detail
    # As soon as possible: the second transfer waits for the link (ends at 1 + 1).
    asap = replay(s, mode="asap", record_starts=True)
    assert asap.feasible
    assert asap.event_starts == (0, 1)
    assert asap.makespan == 2


def test_two_links_from_one_node_at_once_are_fine() -> None:
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)], "multiport:2")
    events = [send("A", "B", "b", 0), send("A", "C", "b", 0)]
    report = replay(Schedule.from_dicts(p, broadcast(p), events))
    assert report.feasible
    assert report.makespan == 1


def _switch(model: str) -> Schedule:
    """P0 -> nvswitch (a router) -> P1, P2, P3, all at once after the first hop."""
    gpus = ["P0", "P1", "P2", "P3"]
    links = [(g, "nvswitch", F(1, 300)) for g in gpus] + [("nvswitch", g, F(1, 300))
                                                           for g in gpus]
    p = Platform.build([*gpus, "nvswitch"], links, model, routers=["nvswitch"])
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(p)
    t = F(1, 300)
    events = [send("P0", "nvswitch", "b", 0)] + [send("nvswitch", g, "b", t)
                                                 for g in gpus[1:]]
    return Schedule.from_dicts(p, op, events)


def test_a_switch_forwards_to_three_gpus_at_once_under_multiport() -> None:
    report = replay(_switch("multiport"))
    assert report.feasible
    assert report.makespan == F(2, 300)


def test_a_switch_forwarding_to_three_gpus_under_multiport_2_conflicts() -> None:
    report = replay(_switch("multiport:2"))
    assert [v.kind for v in report.violations] == [ViolationKind.PORT_CONFLICT]
    assert report.violations[0].resource == "send port of nvswitch"


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("links", [[("A", "B", 1)],
                                   [("A", "B", 1), ("A", "C", 1), ("C", "B", 1)]])
def test_multiport_reports_a_busy_link_once_whatever_the_degree(links, exact: bool) -> None:
    """Under `multiport` (one port per link) a second transfer on a busy link is
    one link_conflict.  Where A and B had one link each, it was two
    port_conflicts (the send port of A, the receive port of B) for one clash."""
    p = Platform.build(["A", "B", "C"], links, "multiport")
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", F(1, 2))]
    s = Schedule.from_dicts(p, Operation(OperationKind.BROADCAST, source="A",
                                         targets=["B"]).resolve(p), events)
    report = replay(s, exact=exact)
    assert [(v.kind, v.resource, v.node, v.time, v.events) for v in report.violations] == [
        (ViolationKind.LINK_CONFLICT, "link A -> B", "A", F(1, 2), (1, 0))]
    # The ports still keep their order in the as-soon-as-possible replay.
    asap = replay(s, mode="asap", record_starts=True)
    assert asap.event_starts == (0, 1)


@pytest.mark.parametrize("model", ["bidirectional", "unidirectional"])
def test_one_port_models_report_the_port_not_the_link(model: str) -> None:
    """Where a port of capacity 1 already forbids the overlap, the port is named
    (as before issue 14), not the link as well."""
    p = Platform.build(["A", "B"], [("A", "B", 1)], model)
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", F(1, 2))]
    report = replay(Schedule.from_dicts(p, broadcast(p), events))
    assert ViolationKind.LINK_CONFLICT not in [v.kind for v in report.violations]
    assert report.violations[0].kind == ViolationKind.PORT_CONFLICT


# -- the as-soon-as-possible replay never overlaps two transfers on a link -----------------

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5),
       model=st.sampled_from(["multiport", "multiport:2", "multiport:3", "bidirectional"]),
       count=st.integers(2, 25))
def test_asap_never_overlaps_two_transfers_on_a_link(seed: int, n: int, model: str,
                                                     count: int) -> None:
    rng = random.Random(seed)
    nodes = [f"P{i}" for i in range(n)]
    links = [(a, b, F(rng.randint(1, 4), rng.randint(1, 3))) for a in nodes for b in nodes
             if a != b]
    p = Platform.build(nodes, links, model)
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(p)
    # The source sends many instances over random links, all stated at time 0.
    events = []
    for i in range(count):
        dst = rng.choice(nodes[1:])
        events.append(Send("P0", dst, Item.broadcast(i), F(0)))
    s = Schedule(p, op, tuple(events))
    report = replay(s, mode="asap", record_starts=True)
    busy: dict[tuple[str, str], list[tuple[Fraction, Fraction]]] = defaultdict(list)
    for e, start in zip(s.events, report.event_starts, strict=True):
        assert start is not None
        busy[e.src, e.dst].append((start, start + p.duration(e.src, e.dst)))  # type: ignore[union-attr]
    for intervals in busy.values():
        intervals.sort()
        for (_, end), (start, _) in itertools.pairwise(intervals):
            assert start >= end
    # The strict replay of those achieved starts has no conflict (only the
    # destinations the random sends missed are reported).
    again = Schedule(p, op, tuple(Send(e.src, e.dst, e.item, start)  # type: ignore[union-attr]
                                  for e, start in zip(s.events, report.event_starts,
                                                      strict=True)))
    assert {v.kind for v in replay(again).violations} <= {ViolationKind.INCOMPLETE}


# -- multiport without k -------------------------------------------------------------------

def test_multiport_without_k_parses_and_prints() -> None:
    m = PortModel.parse("multiport")
    assert (m.kind, m.k, str(m)) == (PortKind.MULTIPORT, None, "multiport")
    assert PortModel.parse("multiport:3").ports(2) == 3
    assert m.ports(7) == 7
    with pytest.raises(PlatformError):
        PortModel(PortKind.BIDIRECTIONAL, None)


def test_series_counts_the_link_load() -> None:
    """Three transfers of one instance on one link between multiport nodes: the
    link, not the ports, limits the series to one instance per 3 time units."""
    p = Platform.build(["A", "B"], [("A", "B", 1)], "multiport")
    op = Operation(OperationKind.SCATTER, source="A").resolve(p)
    s = Schedule.from_dicts(p, op, [send("A", "B", "m[B]", 0)])
    series = replay_series(s, 30)
    assert series.completed == 30  # one link, one unit message per time unit


def test_port_clock_keeps_a_link_to_one_transfer() -> None:
    p = Platform.build(["A", "B"], [("A", "B", 2)], "multiport:2")
    clock = PortClock(p)
    for i in range(2):
        clock.hold("A", Item.broadcast(i))
    first = clock.send("A", "B", Item.broadcast(0))
    second = clock.send("A", "B", Item.broadcast(1))
    assert (first.start, second.start) == (0, 2)


# -- bandwidth and latency ---------------------------------------------------------------

def test_duration_is_latency_plus_size_over_bandwidth() -> None:
    link = Link.of_bandwidth("A", "B", 25, latency=F(1, 10))
    assert link.c == F(1, 10) + F(1, 25)  # a unit message
    assert link.duration(3) == F(1, 10) + F(3, 25)
    assert link.duration(3, part=F(1, 3)) == F(1, 10) + F(1, 25)  # a part pays the latency
    plain = Link("A", "B", F(2, 3))
    assert (plain.latency, plain.bandwidth, plain.duration(3)) == (0, F(3, 2), 2)


def test_engine_uses_latency_and_bandwidth() -> None:
    p = Platform(Platform.build(["A", "B"], []).nodes,
                 (Link.of_bandwidth("A", "B", 4, latency=F(1, 2)),))
    op = Operation(OperationKind.BROADCAST, source="A", size=F(2)).resolve(p)
    report = replay(Schedule.from_dicts(p, op, [send("A", "B", "b", 0)]))
    assert report.makespan == F(1, 2) + F(2, 4)
    halves = Schedule.from_dicts(p, op, [
        {**send("A", "B", "b", 0), "part": "1/2"}, {**send("A", "B", "b", 1), "part": "1/2"}])
    # Each half lasts 1/2 + 1/4: the second ends at 1 + 3/4.
    assert replay(halves).makespan == F(7, 4)


@pytest.mark.parametrize(("bandwidth", "latency", "match"), [
    (0, 0, "bandwidth must be > 0"), (-1, 0, "bandwidth must be > 0"),
    (1, -1, "latency must be >= 0")])
def test_bad_bandwidth_or_latency(bandwidth: int, latency: int, match: str) -> None:
    with pytest.raises(PlatformError, match=match):
        Link.of_bandwidth("A", "B", bandwidth, latency=latency)


def test_schedule_file_round_trip_keeps_bandwidth_and_latency(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from portsim.scenarios.schedule_file import dump_schedule, load_schedule

    p = Platform(Platform.build(["A", "B"], []).nodes,
                 (Link.of_bandwidth("A", "B", 4, latency=F(1, 2)), Link("B", "A", F(2, 3))),
                 PortModel.parse("multiport"))
    op = Operation(OperationKind.BROADCAST, source="A", size=F(2)).resolve(p)
    s = Schedule.from_dicts(p, op, [send("A", "B", "b", 0)])
    path = tmp_path / "s.yaml"
    dump_schedule(s, path)
    text = path.read_text()
    assert 'bandwidth: "4", latency: "1/2"' in text
    again = load_schedule(path)
    assert again.platform == p
    assert replay(again).makespan == 1


@pytest.mark.parametrize(("model", "bound"), [("bidirectional", F(1, 3)),
                                              ("multiport", F(1, 2))])
def test_lp_on_links_with_latency_sends_whole_messages(model: str, bound: Fraction) -> None:
    """Size 3/2: S -> A lasts 1/4 + (3/2)/2 = 1, S -> B lasts 1/2 + 3/2 = 2.  A
    scatter's source sends both per operation: one after the other (1/3) on one
    port, both at once on one port per link (1/2)."""
    from portsim.planners.lp import steady_state

    p = Platform(Platform.build(["S", "A", "B"], []).nodes,
                 (Link.of_bandwidth("S", "A", 2, F(1, 4)), Link.of_bandwidth("S", "B", 1, F(1, 2))),
                 PortModel.parse(model))
    r = steady_state(p, Operation(OperationKind.SCATTER, source="S", size=F(3, 2)))
    assert r.status == "ok", r.message
    assert r.throughput_bound == bound
    assert r.schedule is not None
    assert r.period is not None
    assert r.schedule.platform == p
    assert all(e.part == 1 for e in r.schedule.events if isinstance(e, Send))
    report = replay(r.schedule, horizon=r.period * 100)
    assert report.feasible
    assert report.completed >= 0.9 * float(bound * r.period * 100)


def test_platform_constructor_reads_plain_values_as_build_does() -> None:
    # A fabric written in Python with bandwidths and latencies goes through the
    # constructor (Platform.build takes (src, dst, c) triples only); a text port
    # model was stored as text and failed only when a planner ran
    # ("'str' object has no attribute 'kind'").
    from portsim.planners.ring import ring_collective
    from portsim.simulator import Node

    p = Platform(
        [Node("A", 1, port_model="unidirectional"), Node("B", "1/2"),
         Node("sw", 0, router=True)],
        [Link.of_bandwidth("A", "sw", 100, latency="1/1000"), Link("sw", "B", "1/100")],
        "multiport",
    )
    assert p.port_model == PortModel(PortKind.MULTIPORT, None)
    assert p.port_model_of("A") == PortModel(PortKind.UNIDIRECTIONAL)
    assert p.compute_time("B") == Fraction(1, 2)
    assert isinstance(p.nodes, tuple)
    assert isinstance(p.links, tuple)
    r = ring_collective(p, Operation(OperationKind.BROADCAST, source="A", targets=("B",)))
    # A -> sw: 1/1000 + 1/100; sw -> B: 1/100
    assert r.makespan == Fraction(21, 1000)
    with pytest.raises(PlatformError, match=r"platform\.port_model: expected"):
        Platform((Node("A"),), (), "oneport")
    with pytest.raises(PlatformError, match=r"platform\.nodes\[0\]\.port_model"):
        Platform((Node("A", port_model="multiport:0"),), ())  # type: ignore[arg-type]


def _star_with_a_latency(model: str) -> Platform:
    """Four GPUs on a switch, one link with a latency (found by a new user's first hour)."""
    from portsim.simulator import Node

    gpus = [Node(f"G{i}", 1) for i in range(4)]
    links = []
    for g, bandwidth, latency in (("G0", 100, F(1, 1000)), ("G1", 100, 0), ("G2", 50, 0)):
        links += [Link.of_bandwidth(g, "sw", bandwidth, latency),
                  Link.of_bandwidth("sw", g, bandwidth, latency)]
    links += [Link.of_bandwidth("G3", "sw", 25), Link.of_bandwidth("sw", "G3", 200)]
    return Platform([*gpus, Node("sw", 0, router=True)], links, PortModel.parse(model))


def test_lp_allgather_on_a_multiport_fabric_with_a_latency_keeps_its_period() -> None:
    """Whole messages used to need every link in matchings, hence a period 11 times
    longer (660), over max_events: the lp said unsupported.  Links whose ports never
    bind carry whole messages anyway.  The bound is issue 14's cut formula, 1 / max over
    node sets S missing a participant of |S ∩ participants| · size / B⁺(S), with each
    link's bandwidth taken as size / (latency + size / bandwidth), by brute force."""
    import itertools

    from portsim.planners.lp import steady_state

    p = _star_with_a_latency("multiport")
    op = Operation(OperationKind.ALLGATHER).resolve(p)
    worst = F(0)
    nodes = list(p.node_ids)
    for r in range(1, len(nodes)):
        for chosen in itertools.combinations(nodes, r):
            inside = set(chosen)
            members = len(inside & set(op.participants))
            if members == 0 or members == len(op.participants):
                continue
            leaving = sum((op.size / x.duration(op.size) for x in p.links
                           if x.src in inside and x.dst not in inside), F(0))
            worst = max(worst, members * op.size / leaving)
    assert 1 / worst == F(50, 3)
    r = steady_state(p, op)
    assert r.status == "ok", r.message
    assert r.throughput_bound == r.achieved_throughput == 1 / worst
    assert r.period == 60
    assert r.schedule is not None
    assert all(e.part == 1 for e in r.schedule.events if isinstance(e, Send))
    report = replay(r.schedule, horizon=r.period * 100, mode="strict")
    assert report.feasible
    assert report.completed >= F(9, 10) * r.throughput_bound * r.period * 100


def test_lp_with_latency_over_max_events_says_how_many_and_does_not_say_split() -> None:
    """Under multiport:2 the links bind, whole messages need a period 22 times longer:
    the message gives the operations it would hold and the bound, still valid, and
    the build's warning that messages are split (they are not: no schedule) is not
    passed on.  The bound by hand: the switch sends each GPU the three others'
    messages, 3 (11/1000 + 1/100 + 1/50 + 1/200) = 69/500 an allgather, on two
    send ports: 1000/69 (the GPUs' own links allow more, G3's slowest at 25)."""
    import warnings

    from portsim.planners.lp import steady_state

    p = _star_with_a_latency("multiport:2")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = steady_state(p, Operation(OperationKind.ALLGATHER))
    assert r.status == "unsupported"
    assert "22 times longer (1518) of 352,000 operations" in r.message
    assert "links with latency: the throughput bound is 1000/69, but " in r.message
    assert "raise max_events" in r.message
    assert not [w for w in caught if "split instead" in str(w.message)]


@pytest.mark.parametrize(("size", "direct", "routed"), [(1, F(1001, 100), 2), (100, 11, 200)])
def test_one_shot_planners_route_by_the_duration_of_the_message_size(
        size: int, direct: Fraction, routed: Fraction) -> None:
    """The cheapest path depends on the message size where links have latency: A -> B
    takes 10 + s/100 directly and 2s through R, so the best broadcast takes
    min(10 + s/100, 2s) (the only two paths): 2 for s = 1, 11 for s = 100 (ring and
    flat took 200 through R, ranking paths by their unit cost c).  The reduce onto A
    (compute 1) of B's value: B -> R -> A takes 2s, B -> Q -> A 10 + s/50, so the
    best is min of those plus 1 (greedy, whose tree sends B's value along the
    cheapest path); the ring too (it sent v0 to B first and B's result back,
    best + 1 + back: 5 and 24 where 3 and 13 do)."""
    platform = two_routes()
    best = min(direct, routed)
    bcast = Operation(OperationKind.BROADCAST, source="A", size=size)
    for plan in (ring_collective, flat_tree):
        result = plan(platform, bcast)
        assert result.makespan == best
        assert replay(result.schedule).makespan == best
    reduce = Operation(OperationKind.REDUCE, participants=["A", "B"], target="A", size=size)
    back = min(2 * size, 10 + F(size, 50))   # B to A: through R or through Q
    for name in ("greedy", "flat", "ring"):
        assert get_planner(name).plan(platform, reduce).makespan == back + 1, name
