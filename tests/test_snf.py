"""Liu–Kuo–Wang: EP, SNF, the exact DPs, branch and bound, FNF and all-reduce.

Expected values come from the paper (Fig. 8, equations (2)–(3), Theorems 1,
2 and 4) or from two brute forces written here, independent of the code
under test:

- :func:`brute_force_schedules` searches every one-port reduction schedule
  (each step: any remaining sender sends to any other live processor, as
  soon as both are free) — no EP, no trees, no DP;
- :func:`brute_force_sequences` tries every order of the senders in EP
  (section 6.2's search space) with a plain re-implementation of Fig. 2.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portsim.planners.registry import available_planners
from portsim.planners.snf import (
    OPTIMAL_METHODS,
    InstanceTooLarge,
    balanced_tree,
    branch_and_bound,
    earliest_possible,
    fastest_node_first,
    generic_branch_and_bound,
    multi_class_table,
    naive_pair_count,
    optimal_reduction_tree,
    search_tree_size,
    sender_times,
    slowest_node_first,
    two_class_table,
)
from portsim.planners.snf.dp import TWO_CLASS_METHODS
from portsim.scenarios.generators import complete_platform, sender_times_platform
from portsim.scenarios.loader import load_scenario
from portsim.simulator import Operation, OperationKind, PlannerError, Platform, Schedule, replay
from portsim.simulator.engine import replay_series
from portsim.simulator.items import Item
from portsim.simulator.schedule import Compute, Send

F = Fraction
EXAMPLE = "scenarios/examples/reduce-sender-times.yaml"


# -- independent brute forces ---------------------------------------------------


def brute_force_schedules(dest_time: Fraction, sender_list: list[Fraction]) -> Fraction:
    """Optimal reduction over every one-port schedule (small n only).

    A state is the multiset of live processors ``(ready, t, is_destination)``.
    A step picks a sender ``p`` (not the destination) and a receiver ``q``;
    the transmission starts when both are free and lasts ``t(p)``; ``p``
    is then done and ``q`` is free at its end.  Any schedule, replayed as
    soon as possible in the order of its start times, is one of these
    sequences and is no longer, so the minimum is the optimum.
    """

    @functools.cache
    def best(state: tuple[tuple[Fraction, Fraction, bool], ...]) -> Fraction:
        if len(state) == 1:
            return state[0][0]
        out: Fraction | None = None
        for i, (ready_p, t_p, dest_p) in enumerate(state):
            if dest_p:
                continue
            for j, (ready_q, t_q, dest_q) in enumerate(state):
                if j == i:
                    continue
                end = max(ready_p, ready_q) + t_p
                rest = [x for k, x in enumerate(state) if k not in (i, j)]
                rest.append((end, t_q, dest_q))
                value = best(tuple(sorted(rest)))
                if out is None or value < out:
                    out = value
        assert out is not None
        return out

    start = [(F(0), F(t), False) for t in sender_list] + [(F(0), F(dest_time), True)]
    return best(tuple(sorted(start)))


def ep_makespan(times: list[Fraction]) -> Fraction:
    """Fig. 2, written again: start the next sender whenever two processors are free."""
    free, time, finish = len(times) + 1, F(0), F(0)
    ends: list[Fraction] = []
    for t in times:
        while free < 2:
            time = heapq.heappop(ends)
            free += 1
        heapq.heappush(ends, time + t)
        finish = max(finish, time + t)
        free -= 2
    return finish


def brute_force_sequences(sender_list: list[Fraction]) -> Fraction:
    """Optimal reduction over every EP sequence (section 6.2's search space)."""
    counts: dict[Fraction, int] = {}
    for t in sender_list:
        counts[t] = counts.get(t, 0) + 1

    def orders(prefix: list[Fraction], left: int):  # type: ignore[no-untyped-def]
        if not left:
            yield list(prefix)
            return
        for t in counts:
            if counts[t]:
                counts[t] -= 1
                prefix.append(t)
                yield from orders(prefix, left - 1)
                prefix.pop()
                counts[t] += 1

    return min((ep_makespan(p) for p in orders([], len(sender_list))), default=F(0))


def cluster(times: list[Fraction]) -> dict[str, Fraction]:
    return {f"P{i}": F(t) for i, t in enumerate(times)}


def fig8_times(x: Fraction) -> dict[str, Fraction]:
    """Fig. 8: 4 slow processors of time x, 8 fast ones of time 1."""
    return {**{f"S{i}": x for i in range(4)}, **{f"F{i}": F(1) for i in range(8)}}


def classes_of(times: list[Fraction]) -> tuple[list[Fraction], list[int]]:
    distinct = sorted(set(times))
    return distinct, [times.count(t) for t in distinct]


rationals = st.builds(F, st.integers(2, 12), st.sampled_from([1, 2]))
powers_of_two = st.sampled_from([F(1), F(2), F(4), F(8)])


# -- EP and Lemma 1 ---------------------------------------------------------------


def test_ep_starts_half_at_zero_and_is_non_decreasing() -> None:
    times = cluster([F(10), F(5), F(5), F(5), F(4), F(2), F(2)])  # Fig. 1's seven processors
    tree = earliest_possible(["P0", "P1", "P2", "P3", "P4", "P5"], times, "P6")
    starts = [x.start for x in tree.transmissions]
    assert starts == sorted(starts)
    assert starts[:3] == [0, 0, 0]  # floor(7 / 2) senders start at time 0
    assert tree.makespan == ep_makespan([times[p] for p in ["P0", "P1", "P2", "P3", "P4",
                                                            "P5"]])


@settings(max_examples=60, deadline=None)
@given(st.lists(rationals, min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_lemma1_destinations_are_a_feasible_reduction(times: list[Fraction], rnd) -> None:  # type: ignore[no-untyped-def]
    """Lemma 1: every sender reaches the destination; no processor in two windows at once."""
    nodes = cluster(times)
    order = list(nodes)[1:]
    rnd.shuffle(order)
    tree = earliest_possible(order, nodes, "P0")
    assert sorted(x.sender for x in tree.transmissions) == sorted(order)
    assert tree.makespan == ep_makespan([nodes[p] for p in order])
    for a, b in itertools.combinations(tree.transmissions, 2):
        if a.start < b.end and b.start < a.end:
            assert not {a.sender, a.receiver} & {b.sender, b.receiver}
    sent = {x.sender: x for x in tree.transmissions}
    for x in tree.transmissions:  # a receiver sends only after it has received
        if x.receiver in sent:
            assert sent[x.receiver].start >= x.end


# -- SNF: Theorems 1, 2, 4 and Fig. 8 ----------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(powers_of_two, min_size=1, max_size=5), powers_of_two)
def test_theorem1_snf_optimal_on_power_of_two_clusters(senders: list[Fraction],
                                                       dest: Fraction) -> None:
    times = cluster([dest, *senders])
    snf = slowest_node_first(times, "P0", list(times)).makespan
    assert snf == brute_force_schedules(dest, senders)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([F(1), F(2), F(4), F(8)]), min_size=8, max_size=20))
def test_theorem1_on_larger_power_of_two_clusters_against_the_exact_method(
        senders: list[Fraction]) -> None:
    times = cluster([F(1), *senders])
    snf = slowest_node_first(times, "P0", list(times)).makespan
    tree, _ = optimal_reduction_tree(times, "P0", list(times))
    assert snf == tree.makespan


@settings(max_examples=50, deadline=None)
@given(st.lists(rationals, min_size=1, max_size=5), rationals)
def test_theorem2_snf_at_most_twice_optimal(senders: list[Fraction], dest: Fraction) -> None:
    times = cluster([dest, *senders])
    snf = slowest_node_first(times, "P0", list(times)).makespan
    optimum = brute_force_schedules(dest, senders)
    assert optimum <= snf <= 2 * optimum


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.integers(2, 5))
def test_theorem4_snf_optimal_with_two_classes_of_ratio_at_least_two(
        f: int, s: int, ratio: int) -> None:
    senders = [F(1)] * f + [F(ratio)] * s
    times = cluster([F(1), *senders])
    snf = slowest_node_first(times, "P0", list(times)).makespan
    assert snf == two_class_table(f, s, 1, ratio).value(f, s)


def fig8_alternative(x: Fraction) -> list[tuple[str, str, Fraction]]:
    """Fig. 8's alternative schedule, rebuilt from section 5.3's description.

    Two slow processors send at time 0 and a third slow one relays their
    values, so the slow chain ends at ``2x`` and its last fast receiver
    reaches the slow destination ``S0`` at ``2x + 1``; meanwhile the fast
    processors halve among themselves and ``S0`` receives three fast
    messages ending at 1, 2 and 3.  Length ``max(2x + 1, 4)``.
    """
    return [
        ("F3", "F2", F(0)), ("F4", "F1", F(0)), ("F6", "F5", F(0)), ("F7", "S0", F(0)),
        ("S2", "S1", F(0)), ("S3", "F0", F(0)),
        ("F2", "F1", F(1)), ("F5", "S0", F(1)),
        ("S1", "F0", x), ("F1", "S0", F(2)), ("F0", "S0", max(2 * x, F(3))),
    ]


@pytest.mark.parametrize("x", [F(3, 2), F(5, 4), F(7, 4), F(11, 10), F(19, 10)])
def test_fig8_counterexample(x: Fraction) -> None:
    """SNF takes x + 3; the optimum is 2x + 1 (x >= 3/2) or 4 (x < 3/2), dest slow."""
    times = fig8_times(x)
    optimum = 2 * x + 1 if x >= F(3, 2) else F(4)
    assert slowest_node_first(times, "S0", list(times)).makespan == x + 3
    assert two_class_table(8, 3, 1, x).value(8, 3) == optimum
    assert branch_and_bound([x, 1], [3, 8]).makespan == optimum
    # the rebuilt figure, replayed by the engine in strict mode
    platform = sender_times_platform(times)
    op = Operation(OperationKind.REDUCE, target="S0", commutative=True).resolve(platform)
    index = {p: i for i, p in enumerate(op.participants)}
    acc = {p: Item.subset([index[p]]) for p in op.participants}
    events: list[Send | Compute] = []
    for src, dst, start in sorted(fig8_alternative(x), key=lambda e: e[2]):
        events.append(Send(src, dst, acc[src], start))
        merged = Item.subset(sorted(acc[src].covers() | acc[dst].covers()))
        events.append(Compute(dst, (acc[dst], acc[src]), merged, start + times[src]))
        acc[dst] = merged
    report = replay(Schedule(platform, op, tuple(events)))
    assert report.violations == ()
    assert report.makespan == optimum
    assert x + 3 > optimum


def test_fig8_example_scenario() -> None:
    scenario = load_scenario(EXAMPLE)
    planners = available_planners()
    snf = planners["snf"].plan(scenario.platform, scenario.operation)
    optimal = planners["optimal"].plan(scenario.platform, scenario.operation)
    assert snf.makespan == F(9, 2)
    assert optimal.makespan == 4
    assert any("two-class DP" in note for note in optimal.notes)
    for result in (snf, optimal):
        assert result.schedule is not None
        report = replay(result.schedule)
        assert report.violations == ()
        assert report.makespan == result.makespan


# -- the exact methods agree with each other and with brute force ---------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.integers(0, 5), rationals, st.integers(1, 3))
def test_two_class_dp_equals_branch_and_bound_and_brute_force(
        f: int, s: int, slow: Fraction, fast_num: int) -> None:
    fast = F(fast_num, 2)
    if slow <= fast:
        slow = fast + F(1, 3)
    senders = [fast] * f + [slow] * s
    expected = brute_force_sequences(senders)
    if f + s <= 6:
        assert brute_force_schedules(slow, senders) == expected
    for method in TWO_CLASS_METHODS:
        assert two_class_table(f, s, fast, slow, method=method).value(f, s) == expected
    assert branch_and_bound([fast, slow], [f, s]).makespan == expected
    assert generic_branch_and_bound([fast, slow], [f, s]).makespan == expected
    assert multi_class_table([fast, slow], [f, s]).value() == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([F(1), F(3, 2), F(2), F(5, 2), F(7, 2)]), min_size=1,
                max_size=8))
def test_k_class_dp_equals_branch_and_bound_and_brute_force(senders: list[Fraction]) -> None:
    classes, counts = classes_of(senders)
    expected = brute_force_sequences(senders)
    assert multi_class_table(classes, counts).value() == expected
    assert branch_and_bound(classes, counts).makespan == expected
    assert branch_and_bound(classes, counts, corollary=False, dominance=False).makespan == expected
    assert branch_and_bound(classes, counts, dominance=False).makespan == expected
    assert generic_branch_and_bound(classes, counts).makespan == expected


def test_dp_tables_agree_on_the_whole_grid() -> None:
    tables = [two_class_table(14, 14, 2, 3, method=m) for m in TWO_CLASS_METHODS]
    multi = multi_class_table([2, 3], [14, 14])
    for f in range(15):
        for s in range(15):
            values = {t.value(f, s) for t in tables} | {multi.value((f, s))}
            assert len(values) == 1
            tree = tables[2].tree(f, s)
            assert (tree.critical_path if tree else 0) == tables[0].value(f, s)


def test_equation3_and_lemmas_4_5() -> None:
    table = two_class_table(30, 30, 1, F(3, 2))
    for s in range(31):  # equation (3)
        assert table.value(0, s) == (s + 1 - 1).bit_length() * F(3, 2)
    for f in range(31):
        for s in range(30):  # Lemma 4
            assert table.value(f, s + 1) >= table.value(f, s)
    for f in range(30):
        for s in range(31):
            if f >= s - 1:  # Lemma 5
                assert table.value(f + 1, s) >= table.value(f, s)


def test_reference_counts_shrink_with_the_monotone_pruning() -> None:
    """Tables 2–4: the monotone DPs examine far fewer pairs than the naive one."""
    naive = two_class_table(40, 40, 1, 2, method="naive")
    s_mono = two_class_table(40, 40, 1, 2, method="s-monotone")
    mono = two_class_table(40, 40, 1, 2, method="monotone")
    for f in range(41):
        for s in range(41):
            assert naive.references[f][s] == naive_pair_count(f, s)
    assert naive_pair_count(3, 4) == 5 + 3  # f_l = 0 (s + 1 pairs), f_l = f_r = 1 (s//2 + 1)
    assert mono.total_references < s_mono.total_references < naive.total_references
    assert mono.references[40][40] < s_mono.references[40][40] < naive.references[40][40]


def test_naive_pair_count_is_every_unordered_buddy_pair() -> None:
    """Brute force over the splits of (2); the paper's Table 2 prints s f / 2 instead."""
    for f in range(12):
        for s in range(12):
            pairs = {frozenset({(fl, sl), (f - 1 - fl, s - sl)})
                     for fl in range(f) for sl in range(s + 1)}
            assert naive_pair_count(f, s) == len(pairs)
    assert naive_pair_count(10, 10) == 55  # Table 2: 50; section 6.3's formula: 45


def test_dp_150_by_150() -> None:
    """Section 6.3's setting: t_s = 2, f, s <= 150 (the paper: 11250 vs 117 and 120 pairs)."""
    table = two_class_table(150, 150, 1, 2)
    assert table.value(150, 150) == slowest_node_first(
        cluster([F(1)] + [F(1)] * 150 + [F(2)] * 150), "P0",
        list(cluster([F(1)] + [F(1)] * 150 + [F(2)] * 150))).makespan  # Theorem 4
    assert table.references[150][150] < naive_pair_count(150, 150) // 100


def test_balanced_tree_height() -> None:
    for count in range(1, 40):
        tree = balanced_tree(count, F(1))
        assert tree is not None
        assert tree.size == count
        assert tree.critical_path == count.bit_length()


def test_search_tree_size_counts_prefixes() -> None:
    counts = [2, 1, 2]
    seq = [0, 0, 1, 2, 2]
    prefixes = {p[:m] for p in itertools.permutations(seq) for m in range(1, 6)}
    leaves = set(itertools.permutations(seq))
    assert search_tree_size(counts) == (len(prefixes), len(leaves))


def test_snf_guided_search_examines_fewer_nodes_than_generic() -> None:
    times, counts = [F(1), F(2), F(3)], [4, 4, 3]
    guided = branch_and_bound(times, counts)
    generic = generic_branch_and_bound(times, counts)
    paper = branch_and_bound(times, counts, dominance=False)
    assert guided.makespan == generic.makespan == multi_class_table(times, counts).value()
    assert paper.makespan == guided.makespan
    assert guided.nodes < paper.nodes < generic.nodes <= search_tree_size(counts)[0]


def test_node_limit_stops_the_search() -> None:
    result = generic_branch_and_bound([1, 2, 3], [4, 4, 4], node_limit=100)
    assert not result.complete
    assert result.nodes == 100


# -- the optimal planner picks a method ----------------------------------------------


@pytest.mark.parametrize(("times", "expected"), [
    ([F(1)] * 6, "closed form"),
    ([F(1)] * 4 + [F(3, 2)] * 3, "two-class DP"),
    ([F(1)] * 3 + [F(2)] * 3 + [F(3)] * 3, "branch and bound"),
])
def test_optimal_auto_method(times: list[Fraction], expected: str) -> None:
    nodes = cluster(times)
    tree, notes = optimal_reduction_tree(nodes, "P0", list(nodes))
    assert expected in notes[0]
    assert tree.makespan == brute_force_sequences(times[1:])


@pytest.mark.parametrize("method", OPTIMAL_METHODS)
def test_optimal_methods_agree(method: str) -> None:
    nodes = cluster([F(3, 2)] * 4 + [F(1)] * 5)
    tree, _notes = optimal_reduction_tree(nodes, "P0", list(nodes), method=method)
    assert tree.makespan == brute_force_sequences([F(3, 2)] * 3 + [F(1)] * 5)


def test_optimal_too_large_is_an_error_result() -> None:
    times = {**{f"F{i}": F(1) for i in range(2100)}, **{f"S{i}": F(3, 2) for i in range(2100)}}
    with pytest.raises(InstanceTooLarge, match="more than"):
        optimal_reduction_tree(times, "F0", list(times))


def test_optimal_search_budget_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """60 processors of 8 classes: the branch and bound's budget was the k-class
    DP's estimated work / 4, 1.4 * 10^12 nodes (at about 10^5 nodes a second, a
    run that never ended), though that DP is itself too large to be the
    fallback.  The budget now stays within about a minute of search, after
    which the instance is too large for every exact method."""
    import portsim.planners.snf.planners as snf_planners

    limits: list[int | None] = []

    def stub(times: object, counts: object, *, node_limit: int | None = None) -> object:
        limits.append(node_limit)
        return branch_and_bound(times, counts, node_limit=1000)  # type: ignore[arg-type]

    monkeypatch.setattr(snf_planners, "branch_and_bound", stub)
    times = {f"P{i}": F(i % 8 + 1) for i in range(60)}
    with pytest.raises(InstanceTooLarge):
        optimal_reduction_tree(times, "P0", list(times))
    assert limits[0] is not None
    assert limits[0] <= 6_000_000


def test_optimal_bad_methods() -> None:
    nodes = cluster([F(1), F(2), F(3), F(4)])
    with pytest.raises(PlannerError, match="unknown method"):
        optimal_reduction_tree(nodes, "P0", list(nodes), method="magic")
    with pytest.raises(PlannerError, match="two classes"):
        optimal_reduction_tree(nodes, "P0", list(nodes), method="two-class")
    platform = sender_times_platform({"A": 1, "B": 2})
    op = Operation(OperationKind.REDUCE, target="A", commutative=True)
    with pytest.raises(PlannerError, match="unknown option"):
        available_planners()["optimal"].plan(platform, op, depth=3)


def test_optimal_two_class_on_another_cluster_is_an_unsupported_row() -> None:
    """``method: two-class`` is a valid option; a cluster whose senders have
    three classes is an instance it does not handle: an ``unsupported`` row,
    the other entries still run (it was exit status 2, no table at all)."""
    from portsim.scenarios.loader import scenario_from_dict
    from portsim.scenarios.runner import run_scenario

    times = {"A": 1, "B": 2, "C": 3, "D": 4}
    scenario = scenario_from_dict({
        "name": "three-classes",
        "platform": {"generator": {"type": "sender_times", "times": times}},
        "operation": {"type": "reduce", "target": "A", "commutative": True},
        "planners": [{"name": "optimal", "method": "two-class"}, "optimal"]})
    forced, auto = run_scenario(scenario).results
    assert forced.status == "unsupported"
    assert "two-class" in forced.message
    assert "here 3" in forced.message
    assert auto.status == "ok"
    assert auto.makespan == brute_force_schedules(F(1), [F(2), F(3), F(4)])


# -- FNF and all-reduce -------------------------------------------------------------


def test_fnf_sends_to_the_fastest_waiting_processor() -> None:
    times = {"S": F(1), "A": F(3), "B": F(1), "C": F(2)}
    tree = fastest_node_first("S", ["A", "B", "C"], times)
    assert [(x.sender, x.receiver, x.start) for x in tree.transmissions] == [
        ("S", "B", 0), ("S", "C", 1), ("B", "A", 1)]
    assert tree.makespan == 2


def brute_force_broadcast(source: Fraction, targets: list[Fraction]) -> Fraction:
    """Optimal one-port broadcast: any holder sends to any waiting processor, ASAP."""

    @functools.cache
    def best(holders: tuple[tuple[Fraction, Fraction], ...],
             waiting: tuple[Fraction, ...]) -> Fraction:
        if not waiting:
            return max(F(0), *(ready for ready, _ in holders if ready > 0))
        out: Fraction | None = None
        for i, (ready, t) in enumerate(holders):
            for j, v in enumerate(waiting):
                if j and waiting[j - 1] == v:
                    continue
                end = ready + t
                rest = tuple(sorted([*holders[:i], (end, t), *holders[i + 1:], (end, v)]))
                value = best(rest, waiting[:j] + waiting[j + 1:])
                out = value if out is None else min(out, value)
        assert out is not None
        return out

    return best(((F(0), source),), tuple(sorted(targets)))


@settings(max_examples=25, deadline=None)
@given(st.lists(rationals, min_size=1, max_size=5), rationals)
def test_fnf_approximation_ratios(targets: list[Fraction], source: Fraction) -> None:
    """FNF: within 2 of the optimal broadcast (ref. [25]), 1.5 from the fastest source ([22])."""
    times = cluster([source, *targets])
    fnf = fastest_node_first("P0", list(times)[1:], times).makespan
    optimum = brute_force_broadcast(source, targets)
    assert optimum <= fnf <= 2 * optimum
    if source <= min(targets):
        assert 2 * fnf <= 3 * optimum


@pytest.mark.parametrize("targets", [["S", "A", "B"], ["A", "S", "B"], ["S"]])
def test_fnf_source_among_its_targets(targets: list[str]) -> None:
    """A broadcast listing its source as a target: the source already holds the
    message, so FNF serves the others (it sent S -> S: `no link` error)."""
    times = {"S": F(1), "A": F(1), "B": F(2)}
    platform = sender_times_platform(times)
    op = Operation(OperationKind.BROADCAST, source="S", targets=tuple(targets)).resolve(platform)
    result = available_planners()["fnf"].plan(platform, op)
    assert result.status == "ok", result.message
    others = [times[t] for t in targets if t != "S"]
    assert result.makespan == (brute_force_broadcast(times["S"], others) if others else 0)
    assert result.schedule is not None
    report = replay(result.schedule)
    assert report.violations == ()
    assert report.complete


def test_message_size_scales_every_time() -> None:
    times = fig8_times(F(3, 2))
    platform = sender_times_platform(times)
    op = Operation(OperationKind.REDUCE, target="S0", commutative=True, size=F(2))
    assert available_planners()["snf"].plan(platform, op).makespan == 9
    assert available_planners()["optimal"].plan(platform, op).makespan == 8


def test_allreduce_is_snf_onto_the_fastest_then_fnf() -> None:
    times = {"A": F(3), "B": F(2), "C": F(1), "D": F(2), "E": F(3)}
    platform = sender_times_platform(times, port_model="unidirectional")
    op = Operation(OperationKind.ALLREDUCE, commutative=True).resolve(platform)
    result = available_planners()["snf"].plan(platform, op)
    reduce_part = slowest_node_first(times, "C", list(times)).makespan
    spread = fastest_node_first("C", ["A", "B", "D", "E"], times, ready=reduce_part)
    assert result.makespan == spread.makespan
    assert result.schedule is not None
    report = replay(result.schedule)
    assert report.violations == ()
    assert report.complete
    assert report.makespan == result.makespan


# -- unsupported inputs -------------------------------------------------------------


def test_unsupported_answers_say_why() -> None:
    planners = available_planners()
    sender = sender_times_platform({"A": 1, "B": 2, "C": 3})
    ordered = Operation(OperationKind.REDUCE, target="A")
    for name in ("snf", "optimal"):
        result = planners[name].plan(sender, ordered)
        assert result.status == "unsupported"
        assert "commutative" in result.message
        # optimal is the DP or the branch and bound, not slowest node first
        assert ("slowest node first" in result.message) == (name == "snf")
    generic = complete_platform(3, c=1, compute=1)
    op = Operation(OperationKind.REDUCE, target="P0", commutative=True)
    assert "compute" in planners["snf"].plan(generic, op).message
    uneven = sender_times_platform({"A": 1, "B": 2}).with_port_model("multiport:2")
    assert planners["snf"].plan(uneven, op.__class__(OperationKind.REDUCE, target="A",
                                                     commutative=True)).status == "unsupported"
    assert planners["fnf"].plan(sender, op.__class__(OperationKind.SCATTER, source="A")
                                ).status == "unsupported"
    assert isinstance(sender_times(complete_platform(2, c=1, compute=0), ["P0", "P1"]), dict)


def test_a_node_outside_the_cluster_does_not_matter() -> None:
    """Only the processors taking part must be one-port: a multi-port node
    Z outside the operation (no link at all) made snf, optimal and fnf
    ``unsupported`` ("does not handle the multiport port model of node Z")."""
    times = {"A": F(1), "B": F(2), "C": F(3)}
    platform = Platform.build({"A": 0, "B": 0, "C": 0, "Z": 0},
                              [(p, q, t) for p, t in times.items() for q in times if q != p],
                              "unidirectional", node_port_models={"Z": "multiport"})
    planners = available_planners()
    reduce_op = Operation(OperationKind.REDUCE, target="A", commutative=True,
                          participants=("A", "B", "C"))
    optimum = brute_force_schedules(F(1), [F(2), F(3)])
    for name in ("snf", "optimal"):
        result = planners[name].plan(platform, reduce_op)
        assert result.status == "ok", result.message
        assert result.makespan == optimum
        assert result.schedule is not None
        assert replay(result.schedule).feasible
    broadcast = Operation(OperationKind.BROADCAST, source="A", targets=("B", "C"))
    result = planners["fnf"].plan(platform, broadcast)
    assert result.status == "ok", result.message
    assert result.makespan == brute_force_broadcast(F(1), [F(2), F(3)])
    # a participant's port model still counts
    inside = platform.with_port_model("multiport")
    assert "multiport port model of node A" in planners["snf"].plan(inside, reduce_op).message


def test_a_target_outside_the_participants() -> None:
    """A reduce onto a node that holds no operand (``target: D``, participants
    A, B, C): D is the destination processor of the model, receiving only;
    snf and optimal failed with ``KeyError: 'D'``."""
    platform = sender_times_platform({"A": 1, "B": 2, "C": 3, "D": 1})
    op = Operation(OperationKind.REDUCE, target="D", participants=("A", "B", "C"),
                   commutative=True).resolve(platform)
    optimum = brute_force_schedules(F(1), [F(1), F(2), F(3)])
    planners = available_planners()
    for name in ("snf", "optimal"):
        result = planners[name].plan(platform, op)
        assert result.status == "ok", result.message
        assert result.schedule is not None
        report = replay(result.schedule)
        assert report.violations == ()
        assert report.complete
        assert result.makespan is not None
        assert report.makespan == result.makespan
        assert optimum <= result.makespan <= 2 * optimum
    assert planners["optimal"].plan(platform, op).makespan == optimum


# -- every planner's schedule replays, one-shot and pipelined --------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(rationals, min_size=1, max_size=9), st.sampled_from(["bidirectional",
                                                                      "unidirectional"]),
       st.sampled_from(["reduce", "allreduce", "broadcast"]), st.integers(0, 8),
       st.sampled_from([F(1), F(1, 2), F(3)]))
def test_schedules_replay_one_shot_and_pipelined(times: list[Fraction], model: str, kind: str,
                                                 root: int, size: Fraction) -> None:
    nodes = cluster(times)
    platform = sender_times_platform(nodes, port_model=model)
    who = f"P{root % len(times)}"
    if kind == "reduce":
        op = Operation(OperationKind.REDUCE, target=who, commutative=True, size=size)
    elif kind == "allreduce":
        op = Operation(OperationKind.ALLREDUCE, commutative=True, size=size)
    else:
        op = Operation(OperationKind.BROADCAST, source=who, size=size)
    op = op.resolve(platform)
    for name in ("snf", "optimal", "fnf"):
        result = available_planners()[name].plan(platform, op)
        if result.status == "unsupported":
            continue
        assert result.status == "ok"
        assert result.schedule is not None
        report = replay(result.schedule)
        assert report.violations == ()
        assert report.complete
        assert report.makespan == result.makespan
        if not result.schedule.events:
            continue
        horizon = 10 * max(report.makespan, F(1))
        series = replay_series(result.schedule, horizon)
        assert series.violations == ()
        assert series.completed >= 1
        assert series.measured_throughput is not None
        assert series.measured_throughput <= float(result.trees[0].weight) + 1e-9


def _latency_platform(latency_a_to_c: int) -> Platform:
    # c = 2 on every link; only the latency of A -> C may differ (1 elsewhere).
    from portsim.simulator.platform import Link, Node, PortModel

    links = tuple(Link.of_bandwidth(a, b, 1, latency=1) if (a, b) != ("A", "C")
                  else Link(a, b, Fraction(2), Fraction(latency_a_to_c))
                  for a, b in itertools.permutations("ABC", 2))
    return Platform(tuple(Node(x, compute=Fraction(0)) for x in "ABC"), links,
                    PortModel.parse("bidirectional"))


def test_sender_times_are_the_engines_durations_latency_included() -> None:
    # A send of size 1/2 over c = 2, latency 1 lasts 1 + (2 - 1) / 2 = 3/2
    # (Link.duration), not size * c = 1.
    same = _latency_platform(1)
    assert sender_times(same, ["A", "B", "C"], size=Fraction(1, 2)) == {
        p: Fraction(3, 2) for p in "ABC"}
    # Same c out of A, but A -> C has no latency: 1 there, 3/2 to B.
    mixed = _latency_platform(0)
    assert mixed.duration("A", "C", Fraction(1, 2)) == 1
    found = sender_times(mixed, ["A", "B", "C"], size=Fraction(1, 2))
    assert found == ("a send A -> C lasts 1, a send over another link out of A 3/2: "
                     "the sender-time model needs one send time t(p) for every q")
