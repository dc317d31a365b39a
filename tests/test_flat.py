"""The flat planner: exact makespans computed by hand, schedules checked twice.

Every schedule is checked by a small independent checker written here (ports
per the node's model, CPU, items held before use, reduction order,
completion) and replayed by the engine in strict mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction as F

import pytest

from portsim.planners import FLAT_PLANNER, flat_tree, plan
from portsim.planners.timing import PortClock, cheapest_path
from portsim.simulator.engine import replay
from portsim.simulator.errors import OperationError, PlannerError
from portsim.simulator.items import Item, combine
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform, PortKind
from portsim.simulator.schedule import Compute, Schedule, Send

SCATTER = OperationKind.SCATTER
GATHER = OperationKind.GATHER
BROADCAST = OperationKind.BROADCAST
REDUCE = OperationKind.REDUCE

BI = "bidirectional"
UNI = "unidirectional"


# -- platforms -----------------------------------------------------------------


def star_out(port_model: str = BI) -> Platform:
    """S linked to A, B, C with costs 1, 2, 3."""
    return Platform.build(["S", "A", "B", "C"],
                          [("S", "A", 1), ("S", "B", 2), ("S", "C", 3)], port_model)


def star_in(port_model: str = BI) -> Platform:
    """A, B, C linked to S with costs 1, 2, 3."""
    return Platform.build(["S", "A", "B", "C"],
                          [("A", "S", 1), ("B", "S", 2), ("C", "S", 3)], port_model)


def router_out(port_model: str = BI) -> Platform:
    """S reaches A, B, C only through router R (S -> B direct costs more)."""
    return Platform.build(
        ["S", "R", "A", "B", "C"],
        [("S", "R", 1), ("R", "A", 3), ("R", "B", 1), ("R", "C", 1), ("S", "B", 5)],
        port_model, routers=["R"],
    )


def chain(port_model: str = BI) -> Platform:
    """S -> A -> B, every cost 1."""
    return Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 1)], port_model)


def router_in(port_model: str = BI, **overrides: str) -> Platform:
    """A and B reach T only through router R; T computes in 1."""
    return Platform.build(
        {"T": 1, "A": 1, "B": 1, "R": 1},
        [("A", "R", 1), ("B", "R", 1), ("R", "T", 2)],
        port_model, routers=["R"], node_port_models=overrides,
    )


def reduce_three(port_model: str = BI, compute: object = 3) -> Platform:
    """A -> T cost 1, B -> T cost 2, T computes in ``compute``."""
    return Platform.build({"T": compute, "A": 1, "B": 1},
                          [("A", "T", 1), ("B", "T", 2)], port_model)


def reduce_router(port_model: str = BI) -> Platform:
    """A, B -> R -> T, every cost 1, T computes in 1."""
    return Platform.build({"T": 1, "A": 1, "B": 1, "R": 1},
                          [("A", "R", 1), ("B", "R", 1), ("R", "T", 1)],
                          port_model, routers=["R"])


def reduce_star4(port_model: str = BI) -> Platform:
    """P1, P2, P3 -> P0 cost 1; P0 computes in 2 (computes dominate)."""
    return Platform.build({"P0": 2, "P1": 1, "P2": 1, "P3": 1},
                          [("P1", "P0", 1), ("P2", "P0", 1), ("P3", "P0", 1)], port_model)


# -- cases: (platform, operation, makespan computed by hand) -------------------


@dataclass(frozen=True)
class Case:
    id: str
    platform: Callable[[], Platform]
    operation: Operation
    makespan: F


def _op(kind: OperationKind, **fields: object) -> Operation:
    return Operation(kind, **fields)  # type: ignore[arg-type]


CASES = [
    # scatter on a star: sends back to back, 1 + 2 + 3
    Case("scatter-star-bi", lambda: star_out(BI), _op(SCATTER, source="S"), F(6)),
    Case("scatter-star-uni", lambda: star_out(UNI), _op(SCATTER, source="S"), F(6)),
    # the root deals with one participant at a time even with three ports
    Case("scatter-star-mp3", lambda: star_out("multiport:3"), _op(SCATTER, source="S"), F(6)),
    Case("scatter-star-size-half", lambda: star_out(UNI),
         _op(SCATTER, source="S", size=F(1, 2)), F(3)),
    Case("scatter-star-order", lambda: star_out(BI),
         _op(SCATTER, source="S", targets=("C", "A")), F(4)),
    # via router R: bi: R sends m[A] [1,4), m[B] [4,5), m[C] [5,6)
    Case("scatter-router-bi", lambda: router_out(BI), _op(SCATTER, source="S"), F(6)),
    # uni: R's one port: S->R [0,1) R->A [1,4) S->R [4,5) R->B [5,6) S->R [6,7) R->C [7,8)
    Case("scatter-router-uni", lambda: router_out(UNI), _op(SCATTER, source="S"), F(8)),
    # two ports: R->A [1,4) R->B [2,3) R->C [3,4)
    Case("scatter-router-mp2", lambda: router_out("multiport:2"),
         _op(SCATTER, source="S"), F(4)),
    # chain, targets [B, A]: bi: S->A [0,1) A->B [1,2) S->A [1,2); uni: S->A waits until 2
    Case("scatter-chain-bi", lambda: chain(BI), _op(SCATTER, source="S", targets=("B", "A")),
         F(2)),
    Case("scatter-chain-uni", lambda: chain(UNI), _op(SCATTER, source="S", targets=("B", "A")),
         F(3)),
    # broadcast
    Case("broadcast-star-bi", lambda: star_out(BI), _op(BROADCAST, source="S"), F(6)),
    Case("broadcast-star-uni", lambda: star_out(UNI), _op(BROADCAST, source="S"), F(6)),
    Case("broadcast-chain-bi", lambda: chain(BI), _op(BROADCAST, source="S"), F(2)),
    Case("broadcast-chain-uni", lambda: chain(UNI), _op(BROADCAST, source="S"), F(2)),
    Case("broadcast-chain-reversed", lambda: chain(UNI),
         _op(BROADCAST, source="S", targets=("B", "A")), F(2)),
    # R holds b from 1: R->A [1,4) R->B [4,5) R->C [5,6)
    Case("broadcast-router-bi", lambda: router_out(BI), _op(BROADCAST, source="S"), F(6)),
    Case("broadcast-router-uni", lambda: router_out(UNI), _op(BROADCAST, source="S"), F(6)),
    # two ports: R->A [1,4) R->B [1,2) R->C [2,3)
    Case("broadcast-router-mp2", lambda: router_out("multiport:2"),
         _op(BROADCAST, source="S"), F(4)),
    # gather on a star: receives back to back
    Case("gather-star-bi", lambda: star_in(BI), _op(GATHER, participants=("S", "A", "B", "C")),
         F(6)),
    Case("gather-star-uni", lambda: star_in(UNI),
         _op(GATHER, participants=("S", "A", "B", "C")), F(6)),
    Case("gather-target-outside", lambda: star_in(UNI),
         _op(GATHER, participants=("C", "A", "B"), target="S"), F(6)),
    # via router: bi: A->R [0,1) R->T [1,3) B->R [1,2) R->T [3,5)
    Case("gather-router-bi", lambda: router_in(BI), _op(GATHER, participants=("T", "A", "B")),
         F(5)),
    # uni: A->R [0,1) R->T [1,3) B->R [3,4) R->T [4,6)
    Case("gather-router-uni", lambda: router_in(UNI),
         _op(GATHER, participants=("T", "A", "B")), F(6)),
    # only the router is unidirectional: same as uni
    Case("gather-router-mixed", lambda: router_in(BI, R=UNI),
         _op(GATHER, participants=("T", "A", "B")), F(6)),
    # reduce, T computes in 3: v1 at 1, v[0,1] [1,4); v2 at 3, v[0,2] [4,7)
    Case("reduce-three-bi", lambda: reduce_three(BI),
         _op(REDUCE, participants=("T", "A", "B")), F(7)),
    Case("reduce-three-uni", lambda: reduce_three(UNI),
         _op(REDUCE, participants=("T", "A", "B")), F(7)),
    Case("reduce-three-commutative", lambda: reduce_three(UNI),
         _op(REDUCE, participants=("T", "A", "B"), commutative=True), F(7)),
    # target in the middle, computes in 1/2: v0 at 1, v[0,1] [1,3/2); v2 at 3, v[0,2] [3,7/2)
    Case("reduce-middle-bi", lambda: reduce_three(BI, "1/2"),
         _op(REDUCE, participants=("A", "T", "B"), target="T"), F(7, 2)),
    Case("reduce-middle-commutative", lambda: reduce_three(UNI, "1/2"),
         _op(REDUCE, participants=("A", "T", "B"), target="T", commutative=True), F(7, 2)),
    # target outside the participants: v0 at 1, v1 at 3, v[0,1] [3,6)
    Case("reduce-target-outside", lambda: reduce_three(BI),
         _op(REDUCE, participants=("A", "B"), target="T"), F(6)),
    # computes dominate: v_i at i, computes [1,3) [3,5) [5,7)
    Case("reduce-star4-bi", lambda: reduce_star4(BI), _op(REDUCE), F(7)),
    Case("reduce-star4-uni", lambda: reduce_star4(UNI), _op(REDUCE), F(7)),
    # via router, bi: A->R [0,1) R->T [1,2) c [2,3) B->R [1,2) R->T [2,3) c [3,4)
    Case("reduce-router-bi", lambda: reduce_router(BI),
         _op(REDUCE, participants=("T", "A", "B")), F(4)),
    # uni: A->R [0,1) R->T [1,2) c [2,3) B->R [2,3) R->T [3,4) c [4,5)
    Case("reduce-router-uni", lambda: reduce_router(UNI),
         _op(REDUCE, participants=("T", "A", "B")), F(5)),
    Case("reduce-router-commutative", lambda: reduce_router(UNI),
         _op(REDUCE, participants=("T", "A", "B"), commutative=True), F(5)),
    Case("reduce-alone", lambda: reduce_three(BI), _op(REDUCE, participants=("T",)), F(0)),
]


# -- an independent checker ----------------------------------------------------


def _max_overlap(intervals: list[tuple[F, F]]) -> int:
    """Largest number of half-open intervals [start, end) that overlap."""
    points = sorted([(s, 1) for s, e in intervals if e > s] + [(e, -1) for s, e in intervals
                                                                if e > s])
    current = best = 0
    for _, step in points:  # at equal times the end (-1) sorts first
        current += step
        best = max(best, current)
    return best


def independent_check(schedule: Schedule) -> F:
    """Check ``schedule`` without the engine and return when the operation completes."""
    platform, op = schedule.platform, schedule.operation
    arrival: dict[tuple[str, Item], F] = {}
    for node, items in op.initial_items().items():
        for item in items:
            arrival[(node, item)] = F(0)
    spans: list[tuple[Send | Compute, F]] = []
    for event in schedule.events:
        if isinstance(event, Send):
            end = event.start + op.size * platform.cost(event.src, event.dst)
            key = (event.dst, event.item)
        else:
            assert not platform.node(event.node).router
            end = event.start + platform.compute_time(event.node)
            key = (event.node, event.output)
            assert combine(event.inputs, commutative=op.commutative) == event.output
        arrival[key] = min(arrival.get(key, end), end)
        spans.append((event, end))
    outs: dict[str, list[tuple[F, F]]] = {n: [] for n in platform.node_ids}
    ins: dict[str, list[tuple[F, F]]] = {n: [] for n in platform.node_ids}
    cpu: dict[str, list[tuple[F, F]]] = {n: [] for n in platform.node_ids}
    for event, end in spans:
        if isinstance(event, Send):
            assert arrival[(event.src, event.item)] <= event.start, event
            outs[event.src].append((event.start, end))
            ins[event.dst].append((event.start, end))
        else:
            for x in event.inputs:
                assert arrival[(event.node, x)] <= event.start, event
            cpu[event.node].append((event.start, end))
    for node in platform.node_ids:
        model = platform.port_model_of(node)
        assert _max_overlap(cpu[node]) <= 1, node
        if model.kind is PortKind.UNIDIRECTIONAL:
            assert _max_overlap(outs[node] + ins[node]) <= 1, node
        else:
            assert _max_overlap(outs[node]) <= model.k, node
            assert _max_overlap(ins[node]) <= model.k, node
    finish = F(0)
    for node, items in op.required_items().items():
        for item in items:
            finish = max(finish, arrival[(node, item)])
    return finish


# -- makespans -----------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_makespan_by_hand(case: Case) -> None:
    result = flat_tree(case.platform(), case.operation)
    assert result.status == "ok", result.message
    assert result.planner == "flat"
    assert result.makespan == case.makespan
    assert isinstance(result.makespan, F)
    assert result.schedule is not None
    assert not result.schedule.is_periodic
    assert independent_check(result.schedule) == case.makespan


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_strict_replay_matches_plan(case: Case) -> None:
    result = flat_tree(case.platform(), case.operation)
    assert result.schedule is not None
    report = replay(result.schedule, mode="strict", exact=True)
    assert report.feasible, [str(v) for v in report.violations]
    assert report.complete
    assert report.makespan == result.makespan


# -- exact events --------------------------------------------------------------


def test_scatter_star_events() -> None:
    result = flat_tree(star_out(), _op(SCATTER, source="S"))
    assert result.schedule is not None
    assert result.schedule.events == (
        Send("S", "A", Item.message("A"), F(0)),
        Send("S", "B", Item.message("B"), F(1)),
        Send("S", "C", Item.message("C"), F(3)),
    )
    assert result.notes == ()


def test_gather_target_outside_events() -> None:
    result = flat_tree(star_in(), _op(GATHER, participants=("C", "A", "B"), target="S"))
    assert result.schedule is not None
    assert [(e.src, e.start) for e in result.schedule.events
            if isinstance(e, Send)] == [("C", 0), ("A", 3), ("B", 4)]


def test_reduce_three_events() -> None:
    result = flat_tree(reduce_three(), _op(REDUCE, participants=("T", "A", "B")))
    assert result.schedule is not None
    v = Item.interval
    assert result.schedule.events == (
        Send("A", "T", v(1, 1), F(0)),
        Compute("T", (v(0, 0), v(1, 1)), v(0, 1), F(1)),
        Send("B", "T", v(2, 2), F(1)),
        Compute("T", (v(0, 1), v(2, 2)), v(0, 2), F(4)),
    )


def test_reduce_commutative_uses_sets() -> None:
    op = _op(REDUCE, participants=("A", "T", "B"), target="T", commutative=True)
    result = flat_tree(reduce_three(BI, "1/2"), op)
    assert result.schedule is not None
    s = Item.subset
    assert result.schedule.events == (
        Send("A", "T", s([0]), F(0)),
        Compute("T", (s([0]), s([1])), s([0, 1]), F(1)),
        Send("B", "T", s([2]), F(1)),
        Compute("T", (s([0, 1]), s([2])), s([0, 1, 2]), F(3)),
    )


def test_scatter_router_events_and_notes() -> None:
    result = flat_tree(router_out(UNI), _op(SCATTER, source="S"))
    assert result.schedule is not None
    m = Item.message
    assert result.schedule.events == (
        Send("S", "R", m("A"), F(0)), Send("R", "A", m("A"), F(1)),
        Send("S", "R", m("B"), F(4)), Send("R", "B", m("B"), F(5)),
        Send("S", "R", m("C"), F(6)), Send("R", "C", m("C"), F(7)),
    )
    assert result.notes == (
        "m[A] forwarded along S -> R -> A",
        "m[B] forwarded along S -> R -> B",
        "m[C] forwarded along S -> R -> C",
    )


def test_broadcast_never_resends_to_a_holder() -> None:
    result = flat_tree(chain(BI), _op(BROADCAST, source="S", targets=("B", "A")))
    assert result.schedule is not None
    b = Item.broadcast()
    assert result.schedule.events == (Send("S", "A", b, F(0)), Send("A", "B", b, F(1)))


def test_reduce_alone_has_no_events() -> None:
    result = flat_tree(reduce_three(), _op(REDUCE, participants=("T",)))
    assert result.schedule is not None
    assert result.schedule.events == ()
    assert result.makespan == 0


def test_operation_is_resolved() -> None:
    result = flat_tree(star_out(), _op(SCATTER, source="S"))
    assert result.schedule is not None
    assert result.schedule.operation.targets == ("A", "B", "C")


# -- outcomes and misuse -------------------------------------------------------


@pytest.mark.parametrize(
    "kind", [OperationKind.ALLREDUCE, OperationKind.ALLTOALL, OperationKind.ALLGATHER]
)
def test_other_operations_unsupported(kind: OperationKind) -> None:
    p = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    result = flat_tree(p, Operation(kind))
    assert result.status == "unsupported"
    assert result.schedule is None
    assert result.message == (
        f"flat does not handle {kind} (it handles: broadcast, gather, reduce, scatter)"
    )
    assert FLAT_PLANNER.plan(p, Operation(kind)) == result


def test_flat_takes_no_options() -> None:
    with pytest.raises(PlannerError, match="unknown option 'depth' for planner 'flat'"):
        flat_tree(star_out(), _op(SCATTER, source="S"), depth=2)


def test_bad_operation_raises() -> None:
    with pytest.raises(OperationError, match="unknown node id"):
        flat_tree(star_out(), _op(SCATTER, source="Z"))


def test_registry_plan_matches_function() -> None:
    p, op = reduce_router(UNI), _op(REDUCE, participants=("T", "A", "B"))
    assert plan("flat", p, op) == flat_tree(p, op)


# -- the list scheduler --------------------------------------------------------


def test_cheapest_path_prefers_cheaper_route() -> None:
    assert cheapest_path(router_out(), "S", "B") == ["S", "R", "B"]
    assert cheapest_path(router_out(), "S", "S") == ["S"]
    with pytest.raises(PlannerError, match="no path from A to S"):
        cheapest_path(router_out(), "A", "S")


def test_port_clock_multiport_best_fit() -> None:
    p = Platform.build(["S", "A", "B", "C"],
                       [("S", "A", 4), ("S", "B", 1), ("S", "C", 1)], "multiport:2")
    clock = PortClock(p)
    for k in "ABC":
        clock.hold("S", Item.message(k))
    assert clock.send("S", "A", Item.message("A")).start == 0   # port 1 busy [0,4)
    assert clock.send("S", "B", Item.message("B")).start == 0   # port 2 busy [0,1)
    assert clock.send("S", "C", Item.message("C")).start == 1   # port 2 again
    assert clock.end_time == 4


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("model", ["multiport", "multiport:3", BI])
def test_port_clock_without_port_slots_places_every_send_alike(seed: int, model: str) -> None:
    """A side with as many port slots as links keeps no slots: its sends start
    where a clock scanning one slot per link, best fit (written here), starts
    them, in any order of placement and with any ``not_before``."""
    import random

    rng = random.Random(seed)
    names = [f"N{i}" for i in range(5)]
    links = [(a, b, rng.randint(1, 4)) for a in names for b in names
             if a != b and rng.random() < 0.6]
    if not links:
        return
    p = Platform.build(names, links, model)
    clock = PortClock(p)
    sends_of = {n: [F(0)] * p.port_model_of(n).ports(p.degree(n)[0]) for n in names}
    recvs_of = {n: [F(0)] * p.port_model_of(n).ports(p.degree(n)[1]) for n in names}
    link_free: dict[tuple[str, str], F] = {}

    def take(slots: list[F], start: F, end: F) -> None:
        free = [i for i, t in enumerate(slots) if t <= start]
        assert free  # some slot is free by then
        slots[max(free, key=lambda i: slots[i])] = end

    item = Item.message("N0")
    for n in names:
        clock.hold(n, item)
    for _ in range(60):
        src, dst, cost = rng.choice(links)
        not_before = F(rng.randint(0, 40), rng.choice([1, 2, 3]))
        start = max(not_before, min(sends_of[src]), min(recvs_of[dst]),
                    link_free.get((src, dst), F(0)))
        end = start + cost
        take(sends_of[src], start, end)
        take(recvs_of[dst], start, end)
        link_free[src, dst] = end
        assert clock.send(src, dst, item, not_before=not_before).start == start


def test_port_clock_lane_serialises() -> None:
    p = star_out("multiport:3")
    clock = PortClock(p)
    for k in "AB":
        clock.hold("S", Item.message(k))
    clock.send("S", "A", Item.message("A"), lanes=["root"])
    assert clock.send("S", "B", Item.message("B"), lanes=["root"]).start == 1


def test_port_clock_misuse() -> None:
    clock = PortClock(router_out())
    with pytest.raises(PlannerError, match="S never holds m\\[A\\]"):
        clock.send("S", "R", Item.message("A"))
    clock.hold("R", Item.message("A"))
    with pytest.raises(PlannerError, match="no link"):
        clock.send("R", "S", Item.message("A"))
    with pytest.raises(PlannerError, match="router cannot compute"):
        clock.compute("R", (Item.interval(0, 0), Item.interval(1, 1)), Item.interval(0, 1))
    with pytest.raises(PlannerError, match="size must be > 0"):
        PortClock(router_out(), size=0)


# -- one shortest-path search per source (a 2,000-node broadcast took 37 s) ---------------------


@pytest.mark.parametrize("seed", range(4))
def test_cheapest_paths_from_gives_cheapest_path_to_every_node(seed: int) -> None:
    from portsim.planners.timing import cheapest_paths_from
    from portsim.scenarios.generators import random_platform

    # costs from a small range: many ties, which both must break alike
    platform = random_platform(40, 2, c=(1, 3), seed=seed)
    for src in ("P0", "P7"):
        paths = cheapest_paths_from(platform, src)
        assert set(paths) == set(platform.node_ids)
        for dst in platform.node_ids:
            assert paths[dst] == cheapest_path(platform, src, dst), (src, dst)


@pytest.mark.parametrize("kind", [SCATTER, BROADCAST])
def test_flat_from_one_source_searches_its_paths_once(kind: OperationKind,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import portsim.planners.flat as flat_module
    from portsim.scenarios.generators import random_platform

    platform = random_platform(60, 2, c=(1, 3), seed=1)
    op = Operation(kind, source="P0")
    expected = flat_tree(platform, op)
    # the same schedule as one search per target, the planner's way until 0.3.0
    searched: list[tuple[str, str]] = []

    def per_target(p: Platform, src: str, dst: str, size: object = 1) -> list[str]:
        searched.append((src, dst))
        return cheapest_path(p, src, dst)

    monkeypatch.setattr(flat_module, "cheapest_path", per_target)
    monkeypatch.setattr(flat_module, "cheapest_paths_from",
                        lambda p, src, size=1: {d: cheapest_path(p, src, d) for d in p.node_ids})
    reference = flat_tree(platform, op)
    assert reference.schedule is not None
    assert expected.schedule is not None
    assert reference.schedule.events == expected.schedule.events
    assert reference.makespan == expected.makespan
    assert searched == []  # no search per target
