"""The replay engine: every violation kind, both port models, exact time, periodic replay.

Every expected value here is computed by hand from the platform costs.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portsim.simulator import (
    Item,
    Operation,
    OperationKind,
    Platform,
    Schedule,
    ScheduleError,
    Send,
    ViolationKind,
    replay,
)
from portsim.simulator.engine import replay_series

F = Fraction
BOTH_MODELS = ("bidirectional", "unidirectional")


def send(src: str, dst: str, item: str, start: object, **extra: object) -> dict[str, object]:
    return {"kind": "send", "src": src, "dst": dst, "item": item, "start": start, **extra}


def compute(node: str, inputs: list[str], output: str, start: object,
            **extra: object) -> dict[str, object]:
    return {"kind": "compute", "node": node, "inputs": inputs, "output": output,
            "start": start, **extra}


def kinds(report) -> list[str]:  # type: ignore[no-untyped-def]
    return [v.kind for v in report.violations]


@pytest.fixture
def chain() -> Platform:
    """A -> B -> C, every link cost 1."""
    return Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)])


@pytest.fixture
def triangle() -> Platform:
    """Three nodes, every link both ways cost 1, compute 1 except P0 (1/2): the reduce toy."""
    ids = ["P0", "P1", "P2"]
    return Platform.build({"P0": "1/2", "P1": 1, "P2": 1},
                          [(a, b, 1) for a in ids for b in ids if a != b])


def broadcast(platform: Platform, source: str = "A") -> Operation:
    return Operation(OperationKind.BROADCAST, source=source).resolve(platform)


def reduce_op(platform: Platform, commutative: bool = False) -> Operation:
    return Operation(OperationKind.REDUCE, participants=("P0", "P1", "P2"), target="P0",
                     commutative=commutative).resolve(platform)


REDUCE_OK = [
    send("P1", "P0", "v[1,1]", 0),
    send("P2", "P0", "v[2,2]", 1),
    compute("P0", ["v[0,0]", "v[1,1]"], "v[0,1]", 1),
    compute("P0", ["v[0,1]", "v[2,2]"], "v[0,2]", 2),
]


# -- ports ------------------------------------------------------------------------


@pytest.mark.parametrize("exact", [True, False])
def test_relay_sends_and_receives_at_once_only_bidirectional(chain: Platform, exact: bool) -> None:
    # B receives instance 1 from A while it forwards instance 0 to C, during [1, 2).
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", 1),
              send("B", "C", "b#0", 1), send("B", "C", "b#1", 2)]
    s = Schedule.from_dicts(chain, broadcast(chain), events)
    bidir = replay(s, exact=exact)
    assert bidir.feasible
    assert bidir.makespan == 3
    uni = replay(s, port_model="unidirectional", exact=exact)
    assert kinds(uni) == [ViolationKind.PORT_CONFLICT]
    v = uni.violations[0]
    assert (v.node, v.time, set(v.events)) == ("B", 1, {1, 2})
    assert "port of B" in v.detail


def test_per_node_override_to_unidirectional(chain: Platform) -> None:
    mixed = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)],
                           node_port_models={"B": "unidirectional"})
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", 1),
              send("B", "C", "b#0", 1), send("B", "C", "b#1", 2)]
    report = replay(Schedule.from_dicts(mixed, broadcast(mixed), events))
    assert kinds(report) == [ViolationKind.PORT_CONFLICT]
    assert report.violations[0].node == "B"


@pytest.mark.parametrize("model", BOTH_MODELS)
def test_two_sends_at_once(model: str) -> None:
    p = Platform.build(["A", "B", "C"], [("A", "B", 2), ("A", "C", 1)])
    events = [send("A", "B", "b", 0), send("A", "C", "b", 1)]
    report = replay(Schedule.from_dicts(p, broadcast(p), events), port_model=model)
    assert kinds(report) == [ViolationKind.PORT_CONFLICT]
    v = report.violations[0]
    assert (v.node, v.time, v.events) == ("A", 1, (1, 0))


@pytest.mark.parametrize("model", BOTH_MODELS)
def test_two_receives_at_once(model: str) -> None:
    p = Platform.build(["A", "B", "C"], [("A", "C", 1), ("B", "C", 1)])
    op = Operation(OperationKind.GATHER, participants=("A", "B", "C"), target="C").resolve(p)
    events = [send("A", "C", "m[A]", 0), send("B", "C", "m[B]", "1/2")]
    report = replay(Schedule.from_dicts(p, op, events), port_model=model)
    assert kinds(report) == [ViolationKind.PORT_CONFLICT]
    assert report.violations[0].node == "C"
    assert report.violations[0].time == F(1, 2)


def test_a_conflicting_send_still_holds_its_other_ports() -> None:
    # B (unidirectional) receives from A during [0, 1) and sends to C during
    # [1/2, 5/2): a conflict at B.  That send still runs as written, so A's
    # send to C during [2, 4) also overlaps it on C's one receive port: two
    # violations (the second was missed, the first send never holding C's port).
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 2), ("A", "C", 2)],
                       node_port_models={"B": "unidirectional"})
    events = [send("A", "B", "b", 0), send("B", "C", "b", "1/2"), send("A", "C", "b", 2)]
    report = replay(Schedule.from_dicts(p, broadcast(p), events))
    assert [(v.kind, v.resource, v.time, set(v.events)) for v in report.violations] == [
        (ViolationKind.ITEM_NOT_HELD, "b", F(1, 2), {1}),
        (ViolationKind.PORT_CONFLICT, "port of B", F(1, 2), {0, 1}),
        (ViolationKind.PORT_CONFLICT, "receive port of C", 2, {1, 2}),
    ]


def _overlapping_pairs(platform_models: dict[str, str], costs: dict[tuple[str, str], int],
                       events: list[tuple[str, str, Fraction]]) -> set[tuple[str, frozenset[int]]]:
    """Every pair of transfers sharing a one-at-a-time port while they overlap:
    an independent count of the port conflicts a strict replay must report."""
    spans = [(start, start + costs[src, dst]) for src, dst, start in events]
    pairs = set()
    for i, (a_src, a_dst, _) in enumerate(events):
        for j in range(i + 1, len(events)):
            b_src, b_dst, _ = events[j]
            if not (spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]):
                continue
            for node, model in platform_models.items():
                if model == "unidirectional":
                    if node in (a_src, a_dst) and node in (b_src, b_dst):
                        pairs.add((f"port of {node}", frozenset((i, j))))
                    continue
                if a_src == node == b_src:
                    pairs.add((f"send port of {node}", frozenset((i, j))))
                if a_dst == node == b_dst:
                    pairs.add((f"receive port of {node}", frozenset((i, j))))
    return pairs


def test_every_overlap_on_a_port_is_reported_brute_force() -> None:
    # Every schedule of three transfers on a platform mixing the unidirectional
    # and bidirectional models, starts in {0, 1/2, 1, 3/2}: the port conflicts
    # the replay reports are exactly the overlapping pairs on a port.
    models = {"A": "unidirectional", "B": "bidirectional", "C": "unidirectional"}
    costs = {("A", "B"): 1, ("B", "A"): 1, ("B", "C"): 1, ("A", "C"): 2, ("C", "B"): 1}
    p = Platform.build(["A", "B", "C"], [(s, d, c) for (s, d), c in costs.items()],
                       node_port_models=models)
    op = broadcast(p)
    starts = [F(k, 2) for k in range(4)]
    transfers = [(s, d, t) for (s, d) in costs for t in starts]
    checked = 0
    for events in itertools.combinations(transfers, 3):
        report = replay(Schedule.from_dicts(p, op, [send(s, d, "b", t) for s, d, t in events]))
        got = {(v.resource, frozenset((v.events[0], other)))
               for v in report.violations if v.kind == ViolationKind.PORT_CONFLICT
               for other in v.events[1:]}
        assert got == _overlapping_pairs(models, costs, list(events)), events
        checked += 1
    assert checked == 1140


def test_multiport_allows_k_transfers() -> None:
    p = Platform.build(["A", "B", "C", "D"], [("A", "B", 1), ("A", "C", 1), ("A", "D", 1)])
    events = [send("A", "B", "b", 0), send("A", "C", "b", 0), send("A", "D", "b", 0)]
    s = Schedule.from_dicts(p, broadcast(p), events)
    assert replay(s, port_model="multiport:3").feasible
    two = replay(s, port_model="multiport:2")
    assert kinds(two) == [ViolationKind.PORT_CONFLICT]
    assert set(two.violations[0].events) == {2, 0, 1}


def test_back_to_back_sends_do_not_conflict(chain: Platform) -> None:
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", 1), send("A", "B", "b#2", 2)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events), horizon=100)
    # No port conflict; only C, which never receives anything, is reported.
    assert kinds(report) == [ViolationKind.INCOMPLETE]
    assert "C never holds b (and 2 more instances)" in report.violations[0].detail
    assert report.completed == 0
    assert not report.complete


# -- exact time -------------------------------------------------------------------


@pytest.mark.parametrize("exact", [True, False])
def test_three_tenths_back_to_back_is_fine(exact: bool) -> None:
    # Three sends of 1/10 back to back, then one at 3/10: 0.1+0.1+0.1 > 0.3 in
    # floating point, so a float engine without care reports a false conflict.
    assert 0.1 + 0.1 + 0.1 > 0.3
    p = Platform.build(["A", "B"], [("A", "B", "1/10")])
    op = Operation(OperationKind.SCATTER, source="A", targets=("B",)).resolve(p)
    events = [send("A", "B", f"m[B]#{i}", F(i, 10)) for i in range(4)]
    report = replay(Schedule.from_dicts(p, op, events), exact=exact)
    assert report.feasible
    assert report.completed == 4
    assert report.makespan == (F(2, 5) if exact else pytest.approx(0.4))


def test_exact_mode_reports_fractions(triangle: Platform) -> None:
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), REDUCE_OK))
    assert report.feasible
    # P0 holds v[2,2] at 2, computes from 2 to 2 + 1/2.
    assert report.makespan == F(5, 2)
    assert isinstance(report.makespan, Fraction)


# -- items --------------------------------------------------------------------------


@pytest.mark.parametrize("model", BOTH_MODELS)
def test_forwarding_before_full_arrival(chain: Platform, model: str) -> None:
    events = [send("A", "B", "b", 0), send("B", "C", "b", "1/2")]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events), port_model=model)
    v = report.violations_of(ViolationKind.ITEM_NOT_HELD)[0]
    assert (v.node, v.time) == ("B", F(1, 2))
    assert "arrives only at t=1" in v.detail
    # Unidirectional B also cannot send while it still receives.
    expected = {ViolationKind.ITEM_NOT_HELD}
    if model == "unidirectional":
        expected.add(ViolationKind.PORT_CONFLICT)
    assert set(kinds(report)) == expected


def test_sending_an_item_never_received(chain: Platform) -> None:
    events = [send("B", "C", "b", 0)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events))
    assert ViolationKind.ITEM_NOT_HELD in kinds(report)
    assert "never received" in report.violations_of(ViolationKind.ITEM_NOT_HELD)[0].detail


def test_an_item_of_another_operation_is_named_so(chain: Platform,
                                                  triangle: Platform) -> None:
    """``m[A]`` (an allgather's or gather's name) in a broadcast can never be held:
    the detail says the broadcast's item is ``b``.  A reduce's intermediate interval
    never produced gets no such hint: it is an item of the reduce."""
    report = replay(Schedule.from_dicts(chain, broadcast(chain), [send("A", "B", "m[A]", 0)]))
    [v] = report.violations_of(ViolationKind.ITEM_NOT_HELD)
    assert v.detail == ("A sends m[A] at t=0 but it never received it "
                        "(m[A] is no item of a broadcast, whose item is b)")
    gather = Operation(OperationKind.GATHER, participants=("A", "B"), target="C"
                       ).resolve(chain)
    report = replay(Schedule.from_dicts(chain, gather, [send("A", "B", "b", 0)]))
    [v] = report.violations_of(ViolationKind.ITEM_NOT_HELD)
    assert v.detail.endswith("(b is no item of a gather, whose items are m[A], m[B])")
    events = [send("P1", "P0", "v[1,2]", 0)]
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), events))
    [v] = report.violations_of(ViolationKind.ITEM_NOT_HELD)
    assert v.detail == "P1 sends v[1,2] at t=0 but it never received it"


@pytest.mark.parametrize("mode", ["strict", "asap"])
def test_a_compute_of_mixed_instances_looks_for_its_inputs_as_written(
        triangle: Platform, mode: str) -> None:
    """P0 reduces v[0,0]#1 with v[1,1] (instance 0, held from t=1) at t=1: one
    reduction_order violation.  The replay looked for v[1,1]#1 instead (the
    output's instance), which arrives at t=2, and added `P0 computes with
    v[1,1]#1 at t=1 but it arrives only at t=2`, an item the event does not use."""
    op = Operation(OperationKind.REDUCE, participants=("P0", "P1"), target="P0"
                   ).resolve(triangle)
    events = [send("P1", "P0", "v[1,1]", 0), send("P1", "P0", "v[1,1]#1", 1),
              compute("P0", ["v[0,0]#1", "v[1,1]"], "v[0,1]#1", 1),
              compute("P0", ["v[0,0]", "v[1,1]#1"], "v[0,1]", 2)]
    report = replay(Schedule.from_dicts(triangle, op, events), mode=mode)
    assert kinds(report) == [ViolationKind.REDUCTION_ORDER] * 2
    assert [v.events for v in report.violations] == [(2,), (3,)]


@pytest.mark.parametrize("exact", [True, False])
def test_an_item_sent_later_arrives_later_not_never(chain: Platform, exact: bool) -> None:
    # B forwards b at 0, before A's send of it even starts (at 1): b reaches B
    # at 2 (chain: A -> B costs 1).  It was "never received".
    events = [send("B", "C", "b", 0), send("A", "B", "b", 1)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events), exact=exact)
    [v] = report.violations_of(ViolationKind.ITEM_NOT_HELD)
    assert (v.node, v.time, v.events) == ("B", 0, (0,))
    assert v.detail == "B sends b at t=0 but it arrives only at t=2"


def test_parts_sum_to_one(chain: Platform) -> None:
    events = [send("A", "B", "b", 0, part="1/4"), send("A", "B", "b", "1/4", part="3/4"),
              send("B", "C", "b", 1)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events))
    assert report.feasible
    assert report.makespan == 2


def test_missing_part_is_reported(chain: Platform) -> None:
    events = [send("A", "B", "b", 0, part="1/4"), send("A", "B", "b", "1/4", part="1/2"),
              send("B", "C", "b", 1)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events))
    assert ViolationKind.ITEM_NOT_HELD in kinds(report)
    assert "holds only 3/4" in report.violations_of(ViolationKind.ITEM_NOT_HELD)[0].detail
    # B itself is a target and never holds the whole of b.
    assert ViolationKind.INCOMPLETE in kinds(report)


def test_incomplete_operation(chain: Platform) -> None:
    report = replay(Schedule.from_dicts(chain, broadcast(chain), [send("A", "B", "b", 0)]))
    assert kinds(report) == [ViolationKind.INCOMPLETE]
    assert report.violations[0].node == "C"
    assert report.makespan is None
    assert report.completed == 0


# -- reductions -----------------------------------------------------------------------


def test_reduce_in_order_is_feasible(triangle: Platform) -> None:
    for model in BOTH_MODELS:
        report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), REDUCE_OK),
                        port_model=model)
        assert report.feasible
        assert report.complete


def test_swapped_operands(triangle: Platform) -> None:
    events = [*REDUCE_OK[:2], compute("P0", ["v[1,1]", "v[0,0]"], "v[0,1]", 1), REDUCE_OK[3]]
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), events))
    assert kinds(report) == [ViolationKind.REDUCTION_ORDER]
    assert "out of order" in report.violations[0].detail
    # The same schedule is fine when the operator is commutative.
    assert replay(Schedule.from_dicts(triangle, reduce_op(triangle, True), events)).feasible


def test_reduce_skipping_a_participant(triangle: Platform) -> None:
    events = [REDUCE_OK[1], compute("P0", ["v[0,0]", "v[2,2]"], "v[0,2]", 2)]
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), events))
    assert kinds(report) == [ViolationKind.REDUCTION_ORDER]
    assert "skips participant(s) 1" in report.violations[0].detail
    assert report.violations[0].time == 2


def test_commutative_sets_must_be_disjoint(triangle: Platform) -> None:
    op = reduce_op(triangle, commutative=True)
    events = [send("P1", "P0", "v{1}", 0), compute("P0", ["v{0,1}", "v{1}"], "v{0,1}", 1)]
    report = replay(Schedule.from_dicts(triangle, op, events))
    assert ViolationKind.REDUCTION_ORDER in kinds(report)


def test_wrong_output(triangle: Platform) -> None:
    events = [*REDUCE_OK[:2], compute("P0", ["v[0,0]", "v[1,1]"], "v[0,2]", 1)]
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), events))
    assert ViolationKind.WRONG_OUTPUT in kinds(report)


@pytest.mark.parametrize("model", BOTH_MODELS)
def test_two_computations_overlap(model: str) -> None:
    # P0 computes in 3; v[1,1], v[2,2], v[3,3] arrive at 1, 2, 3.
    ids = ["P0", "P1", "P2", "P3"]
    p = Platform.build({"P0": 3, "P1": 1, "P2": 1, "P3": 1},
                       [(a, b, 1) for a in ids for b in ids if a != b])
    op = Operation(OperationKind.REDUCE, participants=tuple(ids), target="P0").resolve(p)
    events = [send("P1", "P0", "v[1,1]", 0), send("P2", "P0", "v[2,2]", 1),
              send("P3", "P0", "v[3,3]", 2),
              compute("P0", ["v[0,0]", "v[1,1]"], "v[0,1]", 1),
              compute("P0", ["v[2,2]", "v[3,3]"], "v[2,3]", 4),
              compute("P0", ["v[0,1]", "v[2,3]"], "v[0,3]", 7)]
    report = replay(Schedule.from_dicts(p, op, events), port_model=model)
    assert report.feasible
    assert report.makespan == 10
    events[4] = compute("P0", ["v[2,2]", "v[3,3]"], "v[2,3]", 3)  # [3, 6) meets [1, 4)
    report = replay(Schedule.from_dicts(p, op, events), port_model=model)
    assert kinds(report) == [ViolationKind.CPU_CONFLICT]
    cpu = report.violations[0]
    assert (cpu.node, cpu.time, cpu.events) == ("P0", 3, (4, 3))


def test_computation_overlaps_communication(triangle: Platform) -> None:
    # P0 computes v[0,1] during [1, 3/2) while receiving v[2,2] during [1, 2).
    report = replay(Schedule.from_dicts(triangle, reduce_op(triangle), REDUCE_OK))
    assert report.feasible


def test_zero_time_computes_chain_at_one_instant() -> None:
    ids = ["A", "B", "C"]
    p = Platform.build({"A": 0, "B": 0, "C": 0}, [(a, b, 1) for a in ids for b in ids if a != b])
    op = Operation(OperationKind.REDUCE, participants=("A", "B", "C"), target="A").resolve(p)
    events = [send("B", "A", "v[1,1]", 0), send("C", "A", "v[2,2]", 0, **{})]
    events[1] = send("C", "A", "v[2,2]", 1)
    # Listed out of dependency order on purpose: both computes at t = 2.
    events += [compute("A", ["v[0,1]", "v[2,2]"], "v[0,2]", 2),
               compute("A", ["v[0,0]", "v[1,1]"], "v[0,1]", 2)]
    report = replay(Schedule.from_dicts(p, op, events))
    assert report.feasible
    assert report.makespan == 2


# -- other static checks ---------------------------------------------------------------


def test_wrong_duration_no_link_router_compute() -> None:
    p = Platform.build(["A", "R", "B"], [("A", "R", 1), ("R", "B", 2)], routers=["R"])
    op = Operation(OperationKind.SCATTER, source="A", targets=("B",)).resolve(p)
    events = [send("A", "R", "m[B]", 0, duration=2), send("R", "B", "m[B]", 1),
              send("A", "B", "m[B]", 0)]
    report = replay(Schedule.from_dicts(p, op, events))
    # The send over the missing link is reported and not played, so it does
    # not also collide with A's other send at 0.
    assert sorted(kinds(report)) == [ViolationKind.NO_LINK, ViolationKind.WRONG_DURATION]
    assert "implies 1" in report.violations_of(ViolationKind.WRONG_DURATION)[0].detail
    op_reduce = Operation(OperationKind.REDUCE, participants=("A", "B"), target="B")
    p2 = Platform.build(["A", "R", "B"], [("A", "R", 1), ("R", "B", 2)], routers=["R"])
    s = Schedule.from_dicts(p2, op_reduce.resolve(p2), [
        send("A", "R", "v[0,0]", 0), compute("R", ["v[0,0]", "v[1,1]"], "v[0,1]", 1)])
    assert ViolationKind.ROUTER_COMPUTE in kinds(replay(s))


# -- as soon as possible ------------------------------------------------------------------


def test_asap_keeps_port_order_and_computes_times(chain: Platform) -> None:
    # Unidirectional B cannot receive and forward at once: the pipeline serialises.
    events = [send("A", "B", "b#0", 0), send("A", "B", "b#1", 1),
              send("B", "C", "b#0", 1), send("B", "C", "b#1", 2)]
    s = Schedule.from_dicts(chain, broadcast(chain), events)
    report = replay(s, mode="asap", port_model="unidirectional", record_starts=True)
    assert report.feasible
    # B's port order: recv b#0 [0,1), recv b#1 [1,2), send b#0 [2,3), send b#1 [3,4).
    assert report.event_starts == (0, 1, 2, 3)
    assert report.makespan == 4
    bidir = replay(s, mode="asap", record_starts=True)
    assert bidir.event_starts == (0, 1, 1, 2)


def test_asap_contention_under_the_unidirectional_model() -> None:
    # All-to-all on A, B, C (unidirectional, c = 1 except C -> B = 2), planned
    # out of time; per-port orders: A: X, Z, Y;  B: W, X, Y;  C: W, Z.
    # W = C->B [0, 2); X = A->B waits for B: [2, 3); Z = C->A waits for A
    # (after X): [3, 4); Y = B->A waits for A (after Z): [4, 5).
    ids = ["A", "B", "C"]
    p = Platform.build(ids, [(a, b, 2 if (a, b) == ("C", "B") else 1)
                             for a in ids for b in ids if a != b], "unidirectional")
    op = Operation(OperationKind.ALLTOALL).resolve(p)
    events = [send("C", "B", "m[C,B]", 0), send("A", "B", "m[A,B]", 0),
              send("B", "A", "m[B,A]", 2), send("C", "A", "m[C,A]", 1)]
    report = replay(Schedule.from_dicts(p, op, events), mode="asap", record_starts=True,
                    horizon=100)
    assert report.event_starts == (0, 2, 4, 3)
    assert report.feasible


def test_asap_reports_blocked_events(chain: Platform) -> None:
    events = [send("B", "C", "b", 0)]
    report = replay(Schedule.from_dicts(chain, broadcast(chain), events), mode="asap")
    assert kinds(report)[0] == ViolationKind.BLOCKED
    assert "never holds b" in report.violations[0].detail


def test_asap_pipelines_a_repeated_one_shot_schedule(chain: Platform) -> None:
    one = Schedule.from_dicts(chain, broadcast(chain),
                              [send("A", "B", "b", 0), send("B", "C", "b", 1)])
    series = one.repeat(50, F(2))
    assert replay(series).feasible  # spaced by the makespan: feasible as written
    report = replay(series, mode="asap", horizon=20)
    # Bidirectional: one broadcast completes per time unit once the pipe is full:
    # instance t completes at t + 2, so 19 complete by 20.
    assert report.completed == 19
    assert report.measured_throughput == pytest.approx(19 / 20)


# -- periodic ----------------------------------------------------------------------------


def periodic_relay(chain: Platform, lag: int = 1) -> Schedule:
    op = Operation(OperationKind.SCATTER, source="A", targets=("C",)).resolve(chain)
    events = [send("A", "B", "m[C]", 0), send("B", "C", "m[C]", 0, lag=lag)]
    return Schedule.from_dicts(chain, op, events, period=1)


def test_periodic_pipeline_counts_instances(chain: Platform) -> None:
    report = replay(periodic_relay(chain), horizon=10)
    # Instance i crosses A->B in period i and B->C in period i+1: it completes
    # at i + 2, so instances 0..8 complete by t = 10: TP*K - C with TP 1, C 1.
    assert report.feasible
    assert report.completed == 9
    assert report.measured_throughput == pytest.approx(0.9)
    assert report.startup_skipped == 1
    assert report.unfinished == 1
    assert report.completion_times[:3] == (2, 3, 4)


def test_asap_periodic_replay_slower_than_its_period_is_complete(chain: Platform) -> None:
    """An order-only periodic schedule (lp-naive's kind) replayed as soon as
    possible under a slower port model is not "incomplete" because it runs
    behind its own times.  B's one unidirectional port keeps the schedule's
    order, receive i+1 before send i: r0 [0,1], r1 [1,2], s0 [2,3], r2 [3,4],
    s1 [4,5], ... so instances complete at 3, 5, 7, 9, four by t = 10, and
    they are all the instances whose events ran by then (nine are due at the
    schedule's own times)."""
    report = replay(periodic_relay(chain), mode="asap", port_model="unidirectional",
                    horizon=10)
    assert report.feasible
    assert report.completion_times == (3, 5, 7, 9)
    assert (report.completed, report.instances) == (4, 4)
    assert report.complete


def test_asap_periodic_replay_still_reports_a_result_never_delivered(chain: Platform) -> None:
    """Every event of every instance ran, but C never receives: incomplete."""
    s = Schedule.from_dicts(chain, broadcast(chain), [send("A", "B", "b", 0)], period=1)
    report = replay(s, mode="asap", horizon=10)
    assert report.feasible
    assert report.completed == 0
    assert report.instances == 10
    assert not report.complete


def test_periodic_without_lag_forwards_too_early(chain: Platform) -> None:
    report = replay(periodic_relay(chain, lag=0), horizon=10)
    assert kinds(report) == [ViolationKind.ITEM_NOT_HELD]
    # One report for the pattern event, folding the repeats of later periods.
    assert "repeated in 9 later periods" in report.violations[0].detail


def test_periodic_default_horizon(chain: Platform) -> None:
    report = replay(periodic_relay(chain))
    assert report.horizon == 11  # (largest lag 1 + 10) periods of 1


def test_periodic_wraparound_conflict(chain: Platform) -> None:
    op = Operation(OperationKind.SCATTER, source="A", targets=("B",)).resolve(chain)
    # Lasting exactly one period from 1/2, it meets itself back to back: fine.
    s = Schedule.from_dicts(chain, op, [send("A", "B", "m[B]", "1/2")], period=1)
    assert replay(s, horizon=5).feasible
    # With a period of 3/4 it overlaps itself in the next period.
    s = Schedule.from_dicts(chain, op, [send("A", "B", "m[B]", "1/2")], period="3/4")
    report = replay(s, horizon=5)
    # both its ports, as in a one-shot schedule (one row each)
    assert kinds(report) == [ViolationKind.PORT_CONFLICT] * 2
    assert [v.resource for v in report.violations] == ["send port of A", "receive port of B"]
    assert report.violations[0].time == F(5, 4)


def test_every_instance_slot_must_complete_every_period(chain: Platform) -> None:
    # Slot #1 has no event: its 9 instances of the 9 periods past the slowest
    # slot's span (2 periods of 1, horizon 10) are incomplete, named by slot.
    s = Schedule.from_dicts(chain, broadcast(chain), [send("A", "B", "b", 0),
                                                     send("B", "C", "b", 0, lag=1)],
                            period=1, instances_per_period=2)
    report = replay(s, horizon=10)
    assert kinds(report) == [ViolationKind.INCOMPLETE] * 2
    assert [v.resource for v in report.violations] == ["b#1", "b#1"]
    assert report.instances == 9 + 9
    assert report.completed == 9
    assert report.throughput is None
    # As-soon-as-possible replay counts completions only; nothing is proven.
    assert replay(s, mode="asap", horizon=10).throughput is None


def test_idle_slots_of_an_operation_needing_nothing_complete() -> None:
    # A broadcast to its own source needs no communication: every instance of
    # every slot is complete at time 0 (3 slots x 10 periods).
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="A", targets=("A",)).resolve(p)
    report = replay(Schedule.from_dicts(p, op, [], period=1, instances_per_period=3))
    assert report.feasible
    assert (report.completed, report.instances, report.throughput) == (30, 30, 3)


def test_a_billion_idle_slots_are_counted_not_listed(chain: Platform) -> None:
    s = Schedule.from_dicts(chain, broadcast(chain), [send("A", "B", "b", 0),
                                                     send("B", "C", "b", 1)],
                            period=2, instances_per_period=10**9)
    report = replay(s, horizon=10)
    # Slot #0 completes in the 5 periods; the 10^9 - 1 others in none of them.
    assert report.completed == 5
    assert report.instances == 5 + 5 * (10**9 - 1)
    assert [(v.kind, v.node, v.resource) for v in report.violations] == [
        ("incomplete", "B", "b#1"), ("incomplete", "C", "b#1")]
    assert report.violations[0].detail == (
        f"B never holds b#1 (and {5 * (10**9 - 1) - 1} more instances); instance slots "
        f"#1-#999999999 (999999999 of 1000000000) never complete; slots #1-#999999999 "
        f"have no event")


def test_idle_slots_of_an_operation_needing_nothing_are_capped() -> None:
    # Their instances complete at once and are replayed one by one: bounded.
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="A", targets=("A",)).resolve(p)
    s = Schedule.from_dicts(p, op, [], period=1, instances_per_period=10**9)
    with pytest.raises(ScheduleError, match=r"10 periods of 1000000000 instance slots "
                                            r"\(1000000000 of them with no event\)") as caught:
        replay(s)
    assert caught.value.path == "instances_per_period"


def test_bad_mode_and_horizon(chain: Platform) -> None:
    s = periodic_relay(chain)
    with pytest.raises(ScheduleError, match="mode"):
        replay(s, mode="fast")
    with pytest.raises(ScheduleError, match="horizon"):
        replay(s, horizon=0)
    with pytest.raises(ScheduleError, match="horizon"):
        replay(s, horizon="soon")


# -- float tolerance ------------------------------------------------------------------


def test_float_mode_reports_a_one_millionth_overlap_in_a_periodic_schedule() -> None:
    # Issue 13: the tolerance was 1e-9 x the largest time, 2e-6 over a horizon
    # of 2000 periods, so a send lasting 1 + 1e-6 per period of 1 (overlapping
    # itself by 1e-6 every period) passed in float mode.
    p = Platform.build(["A", "B"], [("A", "B", F(1_000_001, 1_000_000))])
    op = Operation(OperationKind.SCATTER, source="A", targets=("B",)).resolve(p)
    s = Schedule.from_dicts(p, op, [send("A", "B", "m[B]", "1/2")], period=1)
    for exact in (True, False):
        report = replay(s, horizon=2000, exact=exact)
        assert kinds(report) == [ViolationKind.PORT_CONFLICT] * 2, exact  # A's and B's port
        assert float(report.violations[0].time) == 1.5
    # One period later than needed, it is back to back: no false alarm.
    fine = Schedule.from_dicts(p, op, [send("A", "B", "m[B]", "1/2")], period=p.cost("A", "B"))
    assert replay(fine, horizon=2000, exact=False).feasible


def test_float_mode_refuses_a_tick_finer_than_float_precision(chain: Platform) -> None:
    # Times are multiples of 2^-60 up to about 2: floats cannot see one tick.
    s = Schedule.from_dicts(chain, broadcast(chain), [
        send("A", "B", "b", 0), send("B", "C", "b", F(2**60 + 1, 2**60))])
    assert replay(s).feasible
    with pytest.raises(ScheduleError, match=r"float time cannot resolve this schedule: its "
                                            r"times are multiples of 1/about 2\^60") as caught:
        replay(s, exact=False)
    assert caught.value.path == "float"


def test_float_mode_refuses_when_a_long_duration_makes_the_tick_unresolvable() -> None:
    # The starts are tiny (0 and 2^-40) but a transfer lasts 2^20: floats near
    # 2^21 cannot see a tick of 2^-40, so the replay is refused; the largest
    # time is a duration, not a start (the compile step finds it among the
    # durations).
    p = Platform.build(["A", "B", "C"], [("A", "B", 2**20), ("A", "C", 1)])
    s = Schedule.from_dicts(p, broadcast(p), [
        send("A", "B", "b", 0), send("A", "C", "b", F(1, 2**40))])
    with pytest.raises(ScheduleError, match=r"multiples of 1/1099511627776 up to 2\.09715e\+06"):
        replay(s, exact=False)
    short = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
    fine = Schedule.from_dicts(short, broadcast(short), [
        send("A", "B", "b", 0), send("A", "C", "b", F(1, 2**40))])
    assert kinds(replay(fine, exact=False)) == [ViolationKind.PORT_CONFLICT]


def test_a_whole_part_written_out_replays_as_the_default_one() -> None:
    # The compile step recognises the default part of a Send by identity; a
    # part of 1 written out (another Fraction object) must replay the same.
    triangle = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1), ("A", "C", 1)])
    op = broadcast(triangle)
    written = [Send("A", "B", Item.broadcast(0), F(0), part=F(1)),
               Send("B", "C", Item.broadcast(0), F(1, 2), part=Fraction(2, 2)),
               Send("A", "C", Item.broadcast(1), F(1, 2), part=F(1))]
    default = [Send(e.src, e.dst, e.item, e.start) for e in written]
    assert all(e.part is not default[0].part for e in written)
    for mode in ("strict", "asap"):
        for exact in (True, False):
            ours = replay(Schedule(triangle, op, tuple(written)), mode=mode, exact=exact)
            theirs = replay(Schedule(triangle, op, tuple(default)), mode=mode, exact=exact)
            assert ours == theirs, (mode, exact)
    strict = replay(Schedule(triangle, op, tuple(written)))
    assert {ViolationKind.ITEM_NOT_HELD, ViolationKind.PORT_CONFLICT} <= set(kinds(strict))


# -- exact and float agree -------------------------------------------------------------


def random_schedule(seed: int, nodes: int, transfers: int, jitter: bool) -> Schedule:
    """A list-scheduled broadcast series; with ``jitter`` some starts move (conflicts)."""
    rng = random.Random(seed)
    ids = [f"P{i}" for i in range(nodes)]
    links = [(a, b, F(rng.randint(1, 9), rng.choice([1, 3, 7, 10])))
             for a in ids for b in ids if a != b]
    p = Platform.build(ids, links)
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(p)
    free_s = dict.fromkeys(ids, F(0))
    free_r = dict.fromkeys(ids, F(0))
    events = []
    for instance in range(max(1, transfers // (nodes - 1))):
        holds = {"P0": F(0)}
        for dst in rng.sample(ids[1:], nodes - 1):
            src = rng.choice(sorted(holds))
            c = p.cost(src, dst)
            start = max(free_s[src], free_r[dst], holds[src])
            if jitter and rng.random() < 0.2:
                start = max(F(0), start - F(rng.randint(1, 5), 10))
            free_s[src] = free_r[dst] = holds[dst] = start + c
            events.append(Send(src, dst, Item.broadcast(instance), start))
    return Schedule(p, op, tuple(events))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), nodes=st.integers(2, 6), jitter=st.booleans(),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2"]),
       mode=st.sampled_from(["strict", "asap"]))
def test_exact_and_float_agree(seed: int, nodes: int, jitter: bool, model: str,
                               mode: str) -> None:
    s = random_schedule(seed, nodes, 30, jitter)
    exact = replay(s, mode=mode, port_model=model)
    floating = replay(s, mode=mode, port_model=model, exact=False)
    assert [(v.kind, v.node, v.events) for v in exact.violations] == \
        [(v.kind, v.node, v.events) for v in floating.violations]
    assert exact.completed == floating.completed
    # the throughput proven is exact in both (float time once gave None)
    assert exact.throughput == floating.throughput
    if exact.makespan is None:
        assert floating.makespan is None
    else:
        assert float(exact.makespan) == pytest.approx(floating.makespan, rel=1e-9)
    if not jitter and model == "bidirectional":
        assert exact.feasible  # the list schedule respects the bidirectional model


def test_float_mode_proves_the_exact_throughput_of_a_one_shot_schedule() -> None:
    """``validate --float`` said "feasible and complete" then "the strict replay
    did not see every instance complete": a float replay proved no throughput."""
    p = Platform.build(["A", "B", "C"], [("A", "B", F(1, 3)), ("B", "C", F(1, 4)),
                                         ("C", "A", F(1, 7))])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    b = Item.broadcast()
    # done at 7/12; C then sends b back to A, ending at 7/12 + 1/7 = 61/84
    s = Schedule(p, op, (Send("A", "B", b, F(0)), Send("B", "C", b, F(1, 3)),
                         Send("C", "A", b, F(7, 12))))
    floating = replay(s, exact=False)
    assert floating.feasible
    assert floating.complete
    assert floating.throughput == replay(s).throughput == F(84, 61)
    assert replay(Schedule(p, op, s.events[:2]), exact=False).throughput == F(12, 7)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), nodes=st.integers(2, 6),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2"]))
def test_asap_never_later_than_a_feasible_plan(seed: int, nodes: int, model: str) -> None:
    # A feasible strict schedule replayed as soon as possible (same per-port
    # order) can only finish earlier.
    s = random_schedule(seed, nodes, 20, jitter=False)
    strict = replay(s, port_model=model)
    asap = replay(s, mode="asap", port_model=model)
    assert asap.feasible
    if strict.feasible:
        assert asap.makespan is not None
        assert strict.makespan is not None
        assert asap.makespan <= strict.makespan


def test_series_of_an_empty_schedule_is_refused() -> None:
    p = Platform.build(["A"], [])
    op = Operation(OperationKind.REDUCE, participants=("A",), target="A").resolve(p)
    empty = Schedule(p, op, ())
    report = replay(empty)
    assert report.feasible
    assert report.makespan == 0  # the target holds v[0,0] from the start
    with pytest.raises(ScheduleError, match="no series"):
        replay_series(empty, 10)


def test_a_horizon_short_of_the_steady_state_still_sees_its_conflicts() -> None:
    """Red-team pass: S sends b to A every period (lag 0) and to B from period 3
    on (lag 3), both at offset 0 of a period 1: S's send port clashes at t = 3
    and in every period after.  ``validate --horizon 2`` said "feasible and
    complete" (exit 0); the strict replay now plays on to the steady state
    for its checks, while its figures stay those of the horizon."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 1), ("S", "B", 1)])
    s = Schedule.from_dicts(p, broadcast(p, "S"), [
        send("S", "A", "b", 0), send("S", "B", "b", 0, lag=3)], period=1)
    for exact in (True, False):
        short = replay(s, horizon=2, exact=exact)
        assert [(v.kind, v.time, v.events) for v in short.violations] == [
            ("port_conflict", 3, (1, 0))]
        assert (short.completed, short.instances, short.end_time, short.unfinished) == (
            0, 0, 2, 2)
        assert short.throughput is None
    # the same violation as over the default horizon (3 + 10 periods)
    assert [v.events for v in replay(s).violations] == [(1, 0)]


def test_an_asap_replay_running_ahead_does_not_make_up_for_an_incomplete_slot() -> None:
    """Red-team pass: slot #1 never sends b to B; slot #0 carries a useless send
    at lag 20, so over the horizon 30 none of its instances is expected, but
    the as-soon-as-possible replay completes its 10 all the same.  10
    completed >= 10 expected made the report "complete" (``validate --mode
    asap --horizon 30``: "feasible and complete", exit 0) though none of the
    10 expected instances (slot #1's) ever completes."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1), ("A", "B", 1)])
    s = Schedule.from_dicts(p, broadcast(p, "S"), [
        send("S", "A", "b#0", 0), send("S", "B", "b#0", 1),
        send("A", "B", "b#0", 0, lag=20), send("S", "A", "b#1", 2)],
        period=3, instances_per_period=2)
    report = replay(s, mode="asap", horizon=30)
    assert (report.feasible, report.completed, report.instances) == (True, 10, 10)
    assert report.incomplete == 10
    assert not report.complete
    assert report.to_dict()["complete"] is False


# -- a compute of k inputs is k - 1 reduction tasks (red team) -----------------------------


def _three_operands(period: object = None) -> Schedule:
    """A (compute 1) reduces v[0,0], v[1,1] and v[2,2] in one compute event;
    B and C (compute 100) only send, over links of cost 1/10."""
    platform = Platform.build({"A": 1, "B": 100, "C": 100},
                              [("B", "A", "1/10"), ("C", "A", "1/10")])
    op = Operation(OperationKind.REDUCE, target="A", participants=("A", "B", "C"))
    return Schedule.from_dicts(platform, op, [
        send("B", "A", "v[1,1]", 0), send("C", "A", "v[2,2]", "1/10"),
        compute("A", ["v[0,0]", "v[1,1]", "v[2,2]"], "v[0,2]", "1/5")], period=period)


def test_a_compute_of_three_inputs_lasts_two_tasks() -> None:
    """Three operands are two reduction tasks, 2 time units on A (compute 1):
    makespan 1/5 + 2.  It lasted one task: a period of 1 replayed with no
    violation, throughput 1, twice the lp bound 1/2 (A alone computes, two
    tasks an instance: the others' compute time 100 gives them nothing)."""
    from portsim.planners.registry import get_planner

    one_shot = _three_operands()
    assert replay(one_shot).makespan == F(11, 5)
    assert replay(one_shot, mode="asap").makespan == F(11, 5)
    bound = get_planner("lp").plan(one_shot.platform, one_shot.operation).throughput_bound
    assert bound == F(1, 2)
    too_fast = replay(_three_operands(period=1))
    assert [v.kind for v in too_fast.violations] == [ViolationKind.CPU_CONFLICT]
    at_bound = replay(_three_operands(period=2))
    assert at_bound.feasible
    assert at_bound.throughput == bound
    stated = Schedule.from_dicts(one_shot.platform, one_shot.operation, [
        *one_shot.to_dicts()[:2],
        compute("A", ["v[0,0]", "v[1,1]", "v[2,2]"], "v[0,2]", "1/5", duration=1)])
    assert [v.kind for v in replay(stated).violations] == [ViolationKind.WRONG_DURATION]
    series = replay_series(one_shot, 200)
    assert series.completed is not None
    assert series.completed <= bound * 200


def test_a_periodic_conflict_on_two_ports_is_two_rows_each_counting_its_periods() -> None:
    """Two sends S -> A overlap by 1/2 every period 1: each finds both S's send
    port and A's receive port busy, in each of the 10 periods replayed.  The
    fold of repeats keyed on the events alone merged the two ports: one row
    said `repeated in 19 later periods` of 10, and A's port went unnamed."""
    p = Platform.build(["S", "A"], [("S", "A", 1)])
    op = Operation(OperationKind.BROADCAST, source="S").resolve(p)
    s = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "S", "dst": "A", "item": "b#0", "start": 0},
        {"kind": "send", "src": "S", "dst": "A", "item": "b#1", "start": "1/2"}],
        period=1, instances_per_period=2)
    rows = {(v.events, v.resource): v.detail
            for v in replay(s, mode="strict", horizon=10).violations}
    # event 1 of periods 0..9 starts during event 0; event 0 of periods 1..9 during event 1
    assert set(rows) == {((1, 0), "send port of S"), ((1, 0), "receive port of A"),
                         ((0, 1), "send port of S"), ((0, 1), "receive port of A")}
    for (events, _), detail in rows.items():
        assert detail.endswith(f"(repeated in {9 if events == (1, 0) else 8} later periods)")


@pytest.mark.parametrize("switch", ["multiport", "multiport:2", "multiport:5"])
def test_a_multiport_k_side_of_at_least_its_links_keeps_the_order_per_link(switch: str) -> None:
    """A relays to B (cost 1) and C (cost 3) through a switch of two links out;
    three copies replayed as soon as possible.  With k >= its links,
    ``multiport:k`` is the switch's ``multiport`` (every link may send at once),
    and the order is kept per link: copy 3 reaches sw at 3 and goes on to B at 3,
    by hand.  One order across the switch's links (kept for ``multiport:2``,
    not for ``multiport``) held it behind copy 2's send to C, which waits for
    the link to C until 4: 4, and the series measured ``multiport:8`` on an
    8-link NVSwitch at 100 runs where ``multiport`` gives 147."""
    p = Platform.build(["A", "B", "C", "sw"],
                       [("A", "sw", 1), ("sw", "B", 1), ("sw", "C", 3)],
                       routers=["sw"], node_port_models={"sw": switch})
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    s = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "sw", "item": "b", "start": 0},
        {"kind": "send", "src": "sw", "dst": "B", "item": "b", "start": 1},
        {"kind": "send", "src": "sw", "dst": "C", "item": "b", "start": 1}])
    starts = replay(s.repeat(3, F(4)), mode="asap", record_starts=True).event_starts
    assert list(starts) == [0, 1, 1, 1, 2, 4, 2, 3, 7]
