"""The ``ring`` planner (issue 14): hand-computed schedules, strict replays on
the fabric generators and random platforms, never above the ``lp`` bound."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schedule_checks import sends_that_deliver_nothing

from portsim.planners.lp import steady_state
from portsim.planners.registry import available_planners
from portsim.planners.ring import ring_collective
from portsim.scenarios.generators import (
    complete_platform,
    dgx1_platform,
    dgx_a100_platform,
    fat_tree_platform,
    mi250_platform,
    random_platform,
    ring_platform,
    torus_platform,
)
from portsim.simulator import Operation, OperationKind, Platform, Send, replay
from portsim.simulator.engine import replay_series

F = Fraction

KINDS = ["allgather", "broadcast", "reduce", "allreduce"]


def op_of(kind: str, platform: Platform, commutative: bool = False) -> Operation:
    if kind == "broadcast":
        return Operation(OperationKind.BROADCAST, source=platform.processors[0])
    if kind == "reduce":
        return Operation(OperationKind.REDUCE, target=platform.processors[1],
                         commutative=commutative)
    if kind == "allreduce":
        return Operation(OperationKind.ALLREDUCE, commutative=commutative)
    return Operation(OperationKind.ALLGATHER)


def test_registered() -> None:
    assert "ring" in available_planners()


def test_allgather_on_a_unit_ring_by_hand() -> None:
    """Four nodes, unit links both ways: three steps of one time unit, and
    once pipelined one operation per three time units (3 receives per node)."""
    p = ring_platform(4)
    r = ring_collective(p, op_of("allgather", p))
    assert r.status == "ok"
    assert r.makespan == 3
    sends = [e for e in r.schedule.events if isinstance(e, Send)]
    assert len(sends) == 4 * 3
    assert all((int(e.dst[1:]) - int(e.src[1:])) % 4 == 1 for e in sends)  # the ring only
    assert replay(r.schedule).makespan == 3
    series = replay_series(r.schedule, 300)
    assert series.completed == 100 - 1 + 1  # one every 3 time units, the first done at 3


def test_broadcast_is_a_chain_in_target_order() -> None:
    p = ring_platform(4)
    r = ring_collective(p, Operation(OperationKind.BROADCAST, source="P0",
                                     targets=("P2", "P1", "P3")))
    hops = [(e.src, e.dst) for e in r.schedule.events if isinstance(e, Send)]
    # P0 -> P2 goes through P1 (cheapest path), then P2 -> P1, then P1 -> P2 -> P3.
    assert hops[0] == ("P0", "P1")
    assert hops[1] == ("P1", "P2")
    assert replay(r.schedule).feasible
    # Pipelined chain on the plain order: one message per time unit.
    plain = ring_collective(p, op_of("broadcast", p))
    assert plain.makespan == 3
    assert replay_series(plain.schedule, 100).completed == 98


def test_broadcast_source_among_its_targets_is_not_sent_to() -> None:
    """targets [P1, P0, P2] on a complete unit platform: the source holds the
    message, so the chain is P0 -> P1 -> P2 and, pipelined, one broadcast per
    time unit (each port busy 1 per operation), as for targets [P1, P2]; the
    chain sent P1 -> P0 too, halving the series (100 in 200, not 199)."""
    p = complete_platform(3, c=1)
    r = ring_collective(p, Operation(OperationKind.BROADCAST, source="P0",
                                     targets=("P1", "P0", "P2")))
    assert r.schedule is not None
    hops = [(e.src, e.dst) for e in r.schedule.events if isinstance(e, Send)]
    assert hops == [("P0", "P1"), ("P1", "P2")]
    assert r.makespan == 2
    assert replay_series(r.schedule, 200).completed == 199  # the first at 2, then one per unit


def test_non_commutative_reduce_runs_in_participant_order() -> None:
    """Unit links, compute 1: v[0,0] reaches P1 at 1, P1 computes until 2,
    P2 receives at 3 and computes until 4, P3 at 5..6, then v[0,3] goes back
    P3 -> P0 -> P1 (ring): arrival at 8."""
    p = ring_platform(4)
    r = ring_collective(p, op_of("reduce", p))
    assert r.makespan == 8
    assert replay(r.schedule).feasible
    assert any("operand order" in note for note in r.notes)


def test_commutative_reduce_ends_on_the_target() -> None:
    """With a commutative operator the ring starts after the target P1:
    P2 -> P3 -> P0 -> P1, three hops and three computes: 6."""
    p = ring_platform(4)
    r = ring_collective(p, op_of("reduce", p, commutative=True))
    assert r.makespan == 6
    hops = [(e.src, e.dst) for e in r.schedule.events if isinstance(e, Send)]
    assert hops == [("P2", "P3"), ("P3", "P0"), ("P0", "P1")]


def test_commutative_reduce_onto_a_target_outside_the_ring() -> None:
    """Participants P0..P3, target P4 (no operand), unit links, compute 1: the
    ring runs P0 -> P1 -> P2 -> P3, each hop 1 and each combine 1, then
    P3 -> P4: 7 (it failed: ``ValueError: 'P4' is not in list``)."""
    p = complete_platform(5, c=1, compute=1)
    op = Operation(OperationKind.REDUCE, target="P4", participants=("P0", "P1", "P2", "P3"),
                   commutative=True)
    r = ring_collective(p, op)
    assert r.status == "ok", r.message
    assert r.makespan == 7
    assert r.schedule is not None
    report = replay(r.schedule)
    assert report.feasible
    assert report.makespan == 7


def test_allreduce_reduces_then_broadcasts() -> None:
    """Reduce P0 .. P3 (ends at 6), then v[0,3] around P3 -> P0 -> P1 -> P2: 9."""
    p = ring_platform(4)
    r = ring_collective(p, op_of("allreduce", p))
    assert r.makespan == 9
    assert replay(r.schedule).feasible


def test_hops_go_through_switches() -> None:
    p = dgx_a100_platform(1)
    r = ring_collective(p, op_of("allgather", p))
    first = [(e.src, e.dst) for e in r.schedule.events if isinstance(e, Send)][:2]
    assert first == [("P0", "nvswitch0"), ("nvswitch0", "P1")]


@pytest.mark.parametrize("kind", ["scatter", "gather", "alltoall"])
def test_other_operations_unsupported(kind: str) -> None:
    p = ring_platform(3)
    extra = {"source": "P0"} if kind == "scatter" else (
        {"target": "P0"} if kind == "gather" else {})
    r = ring_collective(p, Operation(OperationKind(kind), **extra))  # type: ignore[arg-type]
    assert r.status == "unsupported"
    assert r.message


def test_a_ring_neighbour_out_of_reach_is_unsupported() -> None:
    # SPEC.md: a planner missing a path it needs answers `unsupported` (as the
    # tree planners do), not `infeasible`.  On the one-way chain A -> B -> C
    # the broadcast's ring A -> C -> B needs a path from C to B.
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    r = ring_collective(p, Operation(OperationKind.BROADCAST, source="A", targets=("C", "B")))
    assert r.status == "unsupported"
    assert r.schedule is None
    assert r.message.endswith("no path from C to B")


FABRICS = {
    "dgx_a100": dgx_a100_platform(1), "dgx1": dgx1_platform(), "mi250": mi250_platform(1),
    "fat_tree": fat_tree_platform(4), "ring": ring_platform(5), "torus": torus_platform(3, 3),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(FABRICS))
def test_strict_replay_on_the_fabrics(name: str, kind: str) -> None:
    p = FABRICS[name]
    for commutative in (False, True):
        r = ring_collective(p, op_of(kind, p, commutative))
        assert r.status == "ok"
        report = replay(r.schedule)
        assert report.feasible, report.violations[:3]
        assert report.makespan == r.makespan


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize("kind", ["allgather", "broadcast", "reduce"])  # lp: no allreduce
@pytest.mark.parametrize("name", ["dgx1", "ring", "torus"])              # on multiport yet
def test_never_above_the_lp_bound_on_fabrics(name: str, kind: str) -> None:
    p = FABRICS[name]
    op = op_of(kind, p)
    r = ring_collective(p, op)
    bound = steady_state(p, op, max_events=2_000).throughput_bound
    assert bound is not None
    series = replay_series(r.schedule, r.makespan * 20)
    assert series.horizon is not None
    assert F(series.completed) / series.horizon <= bound  # exact


@pytest.mark.filterwarnings("ignore:the exact period")
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), kind=st.sampled_from(KINDS),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2", "multiport"]),
       commutative=st.booleans())
def test_random_platforms(seed: int, n: int, kind: str, model: str, commutative: bool) -> None:
    p = random_platform(n, min(2, n - 1), c=(1, 4), compute=(0, 2), seed=seed,
                        port_model=model)
    op = op_of(kind, p, commutative) if n > 1 else op_of("allgather", p)
    r = ring_collective(p, op)
    assert r.status == "ok"
    report = replay(r.schedule)
    assert report.feasible
    assert report.makespan == r.makespan
    lp = steady_state(p, op, max_events=2_000)
    if lp.status == "ok" and lp.throughput_bound is not None:
        series = replay_series(r.schedule, r.makespan * 20)
        assert series.horizon is not None
        assert F(series.completed) / series.horizon <= lp.throughput_bound  # exact


def test_operation_reads_plain_values() -> None:
    # A script writes the kind as text and the size as "1/2": the size was kept
    # as text and the planner died on `'<=' not supported between 'str' and
    # 'int'`; an unknown kind went through until resolve() raised a ValueError.
    from portsim.simulator.errors import OperationError

    p = ring_platform(4)
    op = Operation("allgather", participants=["P0", "P1", "P2", "P3"], size="1/2")  # type: ignore[arg-type]
    assert op.kind is OperationKind.ALLGATHER
    assert op.size == F(1, 2)
    assert op.participants == ("P0", "P1", "P2", "P3")
    assert ring_collective(p, op).makespan == 3 * F(1, 2)  # three unit-link steps of 1/2
    with pytest.raises(OperationError, match=r"operation\.type: unknown operation"):
        Operation("allgatherr")  # type: ignore[arg-type]
    with pytest.raises(OperationError, match=r"operation\.size: expected a number"):
        Operation(OperationKind.ALLGATHER, size="x")  # type: ignore[arg-type]


def test_broadcast_chain_sends_nothing_to_a_node_that_holds_the_message() -> None:
    """Links one way, B -> C -> A -> B (c = 1), broadcast from B to A then C: the
    chain's hop B -> A goes through C, so C holds b before its own hop A -> C,
    whose path A -> B -> C re-sent b to the source B and to C (4 sends, and a
    series of 1/2 a time unit).  By hand: 2 sends, makespan 2, and instance k of
    the series sends B -> C during [k, k+1] and C -> A during [k+1, k+2], so 199
    complete within 200 (lp's bound is 1)."""
    platform = Platform.build(["A", "B", "C"], [("B", "C", 1), ("C", "A", 1), ("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="B")
    result = ring_collective(platform, op)
    assert result.schedule is not None
    assert [(e.src, e.dst) for e in result.schedule.events if isinstance(e, Send)] == [
        ("B", "C"), ("C", "A")]
    assert result.makespan == 2
    assert replay_series(result.schedule, F(200)).completed == 199
    assert steady_state(platform, op).throughput_bound == 1


def test_allreduce_never_sends_the_result_back_to_a_relay() -> None:
    """On the line A - B - C the result goes C -> B -> A: B relayed it, so A does
    not send it back to B (it did, at t = 6, after the makespan 6: the series
    of operations then ran one every 7, not every 6)."""
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "A", 1),
                                         ("B", "C", 1), ("C", "B", 1)])
    r = ring_collective(p, Operation(OperationKind.ALLREDUCE))
    assert r.makespan == 6
    assert r.schedule is not None
    assert sends_that_deliver_nothing(r.schedule) == []
    assert [(e.src, e.dst) for e in r.schedule.events if isinstance(e, Send)] == [
        ("A", "B"), ("B", "C"), ("C", "B"), ("B", "A")]
    report = replay(r.schedule)
    assert report.feasible
    assert report.throughput == F(1, 6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("commutative", [False, True])
def test_allreduce_and_broadcast_chains_send_nothing_in_vain(seed: int,
                                                             commutative: bool) -> None:
    p = random_platform(8, 3, c=(1, 10), compute=(1, 5), seed=seed)
    _chains_send_nothing_in_vain(p, commutative)


def _chains_send_nothing_in_vain(p: Platform, commutative: bool) -> None:
    """The ring's allreduce and broadcast on ``p``: no send delivers nothing, and the
    schedule replays at the makespan the planner states."""
    for op in (Operation(OperationKind.ALLREDUCE, commutative=commutative),
               Operation(OperationKind.BROADCAST, source="P3")):
        r = ring_collective(p, op)
        assert r.schedule is not None
        assert sends_that_deliver_nothing(r.schedule) == []
        report = replay(r.schedule)
        assert report.feasible
        assert report.makespan == r.makespan


def test_allgather_searches_each_neighbour_path_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The allgather's n - 1 steps reuse the n ring neighbours' cheapest paths:
    n searches, not n (n - 1) (60 s of the plan on 200 random nodes), and the
    schedule ends no later than the one routing every hop on its own search,
    step after step, gives (the planner also tries the earliest-start order)."""
    import portsim.planners.ring as ring_module
    from portsim.planners.timing import PortClock, cheapest_path
    from portsim.simulator.items import Item
    platform = random_platform(12, 3, c=(1, 10), compute=(1, 5), seed=4)
    op = Operation(OperationKind.ALLGATHER).resolve(platform)
    calls: list[tuple[str, str]] = []

    def counted(p: Platform, src: str, dst: str, size: Fraction | int = 1) -> list[str]:
        calls.append((src, dst))
        return cheapest_path(p, src, dst, size)

    monkeypatch.setattr(ring_module, "cheapest_path", counted)
    result = ring_collective(platform, op)
    assert result.schedule is not None
    assert len(calls) == len(op.participants) == 12
    clock = PortClock(platform, size=op.size)
    for node, items in op.initial_items().items():
        for item in items:
            clock.hold(node, item)
    ring, n = op.participants, len(op.participants)
    for step in range(n - 1):
        for i in range(n):
            clock.route(cheapest_path(platform, ring[i], ring[(i + 1) % n]),
                        Item.message(ring[(i - step) % n]))
    assert result.makespan is not None
    assert result.makespan <= clock.completion_time(op)
    assert replay(result.schedule).makespan == result.makespan


def test_multiport_broadcast_sends_nothing_to_a_node_a_later_hop_reached_sooner() -> None:
    """Broadcast from P0 along the chain P0 -> P1 -> P2 -> P3 -> P4, every node
    `multiport` (one port per link).  By hand: P0 -> P1 goes through P3 (1 + 1
    against 4): P0 -> P3 in [0, 1], P3 -> P1 in [1, 2]; P1 -> P2 in [2, 4]; P3
    holds b, but the path of the hop P2 -> P3 (P2 -> P4 -> P3, 4 + 2) sent b
    to P4 in [4, 8]; then P3 -> P4 goes P3 -> P1 -> P4 from P1's copy, over
    P1's free link to P4 in [2, 3].  P4 got b twice, the send in [4, 8]
    delivering nothing, and in the pipelined series it held the next copy's
    P1 -> P4 back in P4's port order: one operation every 4 (100 by 400)
    where the link P1 -> P2 allows one every 2 (copy t completes at 4 + 2t:
    199 by 400).  The makespan, 4, is the same."""
    links = [("P0", "P1", 4), ("P0", "P3", 1), ("P1", "P2", 2), ("P1", "P4", 1),
             ("P2", "P0", 5), ("P2", "P4", 4), ("P3", "P1", 1), ("P3", "P2", 5),
             ("P4", "P0", 1), ("P4", "P3", 2)]
    platform = Platform.build([f"P{i}" for i in range(5)], links, "multiport")
    r = ring_collective(platform, Operation(OperationKind.BROADCAST, source="P0"))
    assert r.schedule is not None
    assert [(e.src, e.dst, e.start) for e in r.schedule.events if isinstance(e, Send)] == [
        ("P0", "P3", 0), ("P3", "P1", 1), ("P1", "P2", 2), ("P1", "P4", 2)]
    assert r.makespan == 4
    assert sends_that_deliver_nothing(r.schedule) == []
    assert replay(r.schedule).feasible
    assert replay_series(r.schedule, F(400)).completed == 199


@pytest.mark.parametrize("model", ["multiport", "multiport:2"])
@pytest.mark.parametrize("seed", range(4))
def test_multiport_chains_send_nothing_in_vain(model: str, seed: int) -> None:
    p = random_platform(12, 3, c=(1, 10), compute=(1, 5), seed=seed, port_model=model)
    _chains_send_nothing_in_vain(p, commutative=False)


def test_allgather_relays_are_not_sent_what_they_hold() -> None:
    """The ring A -> B -> C -> A on the line A - B - C (c = 1 both ways,
    bidirectional): C -> A goes through B, which so holds m[C] from 2 and m[B]
    from the start.  By hand, step 0: A -> B m[A] in [0, 1], B -> C m[B] in
    [0, 1], C -> B m[C] in [1, 2] (B's receive port), B -> A m[C] in [2, 3];
    step 1: B -> C m[A] in [3, 4], B -> A m[B] in [4, 5]; makespan 5.  The
    hops A -> B of m[C] (in [3, 4]) and C -> B of m[B] (in [4, 5]) delivered
    nothing, and kept B's receive port as busy as its send port: one
    operation every 5 in the pipelined series (120 by 600).  Without them B's
    send port, 4 sends a copy, sets the pace: copy t completes at 5 + 4t, 149
    by 600.  On random platforms of 4 to 14 nodes the ring allgather sent 2.4
    times the sends it needs (4790 for 2000).  The planner now also places the
    hops as soon as they can start, whatever their step, and keeps that order:
    step 1's B -> C of m[A] goes in [1, 2], B's send port free and m[A] held
    from 1, then B -> A m[C] in [2, 3] and B -> A m[B] in [3, 4]; makespan 4,
    B's four sends back to back (the least: B sends 4 a copy), and copy t
    completes at 4 + 4t, 150 by 600."""
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "A", 1),
                                         ("B", "C", 1), ("C", "B", 1)])
    r = ring_collective(p, Operation(OperationKind.ALLGATHER))
    assert r.schedule is not None
    assert [(e.src, e.dst, e.item.args[0], e.start) for e in r.schedule.events
            if isinstance(e, Send)] == [
        ("A", "B", "A", 0), ("B", "C", "B", 0), ("B", "C", "A", 1), ("C", "B", "C", 1),
        ("B", "A", "C", 2), ("B", "A", "B", 3)]
    assert r.makespan == 4
    assert sends_that_deliver_nothing(r.schedule) == []
    assert replay(r.schedule).feasible
    assert replay_series(r.schedule, F(600)).completed == (600 - 4) // 4 + 1


def test_first_deliveries_refuses_a_clock_with_chained_routes() -> None:
    """A chained route's follows pairs name events by index: dropping sends would
    renumber them, so the clock refuses (two chained hops A -> B -> C: pair (0, 1))."""
    from portsim.planners.timing import PortClock
    from portsim.simulator.errors import PlannerError
    from portsim.simulator.items import Item

    platform = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])
    clock = PortClock(platform)
    clock.hold("A", Item.broadcast())
    clock.route(["A", "B", "C"], Item.broadcast(), chained=True)
    assert clock.follows == ((0, 1),)
    with pytest.raises(PlannerError, match="renumber"):
        clock.first_deliveries()


def test_a_chained_route_passes_its_copy_through() -> None:
    """A chained route A -> B -> C (links 1): its first hop is a transit send, so
    B holds no copy (C from 2); B's own copy, sent A -> B after, arrives at 3."""
    from portsim.planners.timing import PortClock
    from portsim.simulator.items import Item

    platform = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)], "multiport")
    b = Item.broadcast()
    clock = PortClock(platform)
    clock.hold("A", b)
    hops = clock.route(["A", "B", "C"], b, chained=True)
    assert [(h.start, h.transit) for h in hops] == [(0, True), (1, False)]
    assert (clock.available("B", b), clock.available("C", b)) == (None, 2)
    clock.route(["A", "B"], b, chained=True)
    assert clock.available("B", b) == 2
    assert clock.route(["A", "B", "C"], b)[0].transit is False  # not chained: B keeps it


def test_allgather_on_a_one_port_fat_tree_does_not_queue_the_ring() -> None:
    """Fat tree k = 4 (16 hosts, 20 switches, unit links), every node
    ``multiport:1``: placed step after step, each hop queued behind the hops
    of the routes before it in the ring at the switches' single ports (P4's
    first send to edge1_0 waited until 10 for the route from P3), 172 in all;
    placed as soon as possible, 88.  A lower bound by hand: each host receives
    15 messages over its one link, 15."""
    p = fat_tree_platform(4, port_model="multiport:1")
    r = ring_collective(p, Operation(OperationKind.ALLGATHER))
    assert r.schedule is not None
    assert r.makespan == 88
    assert replay(r.schedule).makespan == 88
    first = {e.src: e.start for e in reversed(r.schedule.events)
             if isinstance(e, Send) and e.item.args == (e.src,)}
    assert first["P4"] == 0  # not behind the route from P3 (10)


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_non_commutative_reduce_onto_the_first_participant_ends_on_it(n: int) -> None:
    """Target P0 = p_0, operands in order: v[1,N-1] travels P1 .. P(N-1) and
    P0 computes v[0,0] ⊕ v[1,N-1], N - 1 hops of 1/4 and N - 1 combines of 1
    (bandwidth 4, compute 1), as the commutative ring does; it ran P0 .. P(N-1)
    and sent v[0,N-1] back to P0, one hop more (ring of 4: 4 where 15/4 do).  The
    engine checks the order of the operands."""
    p = ring_platform(n, bandwidth=4)
    op = Operation(OperationKind.REDUCE, target="P0")
    r = ring_collective(p, op)
    assert r.schedule is not None
    assert r.makespan == (n - 1) * F(5, 4)
    report = replay(r.schedule)
    assert report.feasible, report.violations
    assert report.makespan == r.makespan
    commutative = Operation(OperationKind.REDUCE, target="P0", commutative=True)
    assert r.makespan == ring_collective(p, commutative).makespan
    assert not r.notes
