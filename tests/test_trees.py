"""Canon–Antoniu trees: closed forms, theorems, brute-force optimality, replays.

The reference values come from the paper (Propositions 13 and 16, Theorems
14 and 17, Lemma 5, Proposition 6, Corollary 11) or from a brute force
written here, independent of the planner: every *plane* tree (a rooted tree
whose predecessors are ordered by arrival) is enumerated and timed forward,
each event as early as the model allows.  On a fixed plane tree the earliest
times are optimal (all constraints are of the max-plus kind), so the minimum
over all plane trees is the optimal length of the model (section 3).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import replace
from fractions import Fraction as F
from pathlib import Path

import pytest
from schedule_checks import sends_that_deliver_nothing

from portsim.planners import PlanResult, get_planner
from portsim.planners.trees import (
    ReductionTree,
    binomial_reduction,
    canon_antoniu_bounds,
    fibonacci_reduction,
    greedy_reduction,
    greedy_tree,
    interval_labels,
    strategy_tree,
    tree_length,
)
from portsim.scenarios.generators import (
    complete_platform,
    fat_tree_platform,
    random_platform,
    sender_times_platform,
)
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.runner import run_scenario
from portsim.simulator.engine import replay, replay_series
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
from portsim.simulator.schedule import Compute, Schedule, Send

REDUCE = OperationKind.REDUCE
ALLREDUCE = OperationKind.ALLREDUCE
COSTS = [(F(1), F(1)), (F(1), F(0)), (F(0), F(1)), (F(2), F(1)), (F(1), F(2)),
         (F(3), F(1)), (F(1), F(3)), (F(1, 2), F(1)), (F(5), F(2))]
"""(d, c) pairs: equal, one zero, transfer-bound, compute-bound, rational."""

PlaneTree = tuple["PlaneTree", ...]
"""A node is the tuple of its predecessors' subtrees, in arrival order."""


# -- the brute force -------------------------------------------------------------


@functools.cache
def plane_trees(n: int) -> tuple[PlaneTree, ...]:
    """Every plane tree with ``n`` nodes."""
    if n == 1:
        return ((),)
    out: list[PlaneTree] = []
    for sizes in compositions(n - 1):
        for parts in itertools.product(*(plane_trees(s) for s in sizes)):
            out.append(tuple(parts))
    return tuple(out)


@functools.cache
def compositions(total: int) -> tuple[tuple[int, ...], ...]:
    """Ordered ways of writing ``total`` as a sum of positive integers."""
    if total == 0:
        return ((),)
    return tuple((first, *rest) for first in range(1, total + 1)
                 for rest in compositions(total - first))


@functools.cache
def ready_time(tree: PlaneTree, d: F, c: F) -> F:
    """When the root of ``tree`` holds its subtree's reduction, timed forward.

    Transfer ``j`` into a machine starts when its sender is ready and the
    machine's previous transfer is over (one transfer at a time); reduction
    ``j`` starts when element ``j`` has arrived and reduction ``j - 1`` is over.
    """
    port = done = None
    for sub in tree:
        start = ready_time(sub, d, c) if port is None else max(ready_time(sub, d, c), port)
        port = start + d
        done = (port if done is None else max(done, port)) + c
    return F(0) if done is None else done


def reducers_of(tree: PlaneTree) -> int:
    """Machines that receive something (section 6.2's reducers)."""
    return (1 if tree else 0) + sum(reducers_of(sub) for sub in tree)


@functools.cache
def brute_force(n: int, d: F, c: F, reducers: int | None = None) -> F:
    """Optimal length over every reduction tree of ``n`` machines."""
    return min(ready_time(t, d, c) for t in plane_trees(n)
               if reducers is None or reducers_of(t) <= reducers)


def limited_transfers_length(tree: PlaneTree, d: int, c: int, k: int, bound: int) -> int:
    """Optimal length of ``tree`` with at most ``k`` transfers at once, or ``bound``.

    Integer costs make every start of a semi-active schedule an integer, so a
    depth-first search over instants ``0, 1, 2, ...`` that starts, at each
    instant, any subset of the transfers allowed then (sender ready, the
    receiver's previous transfer over, at most ``k`` running, at most one
    transfer into each machine) meets an optimal schedule.
    """
    children: list[list[int]] = []
    parent: list[int] = []
    rank: list[int] = []

    def walk(sub: PlaneTree, par: int, j: int) -> int:
        me = len(children)
        children.append([])
        parent.append(par)
        rank.append(j)
        for jj, grand in enumerate(sub):
            children[me].append(walk(grand, me, jj))
        return me

    walk(tree, -1, 0)
    n = len(children)
    best = bound

    def ready(v: int, starts: dict[int, int]) -> int | None:
        done: int | None = None
        for u in children[v]:
            if u not in starts:
                return None
            done = max(done if done is not None else 0, starts[u] + d) + c
        return 0 if done is None else done

    def search(t: int, starts: dict[int, int]) -> None:
        nonlocal best
        if len(starts) == n - 1:
            best = min(best, ready(0, starts) or 0)
            return
        if t + d + c > best:
            return
        running = sum(1 for s in starts.values() if s <= t < s + d)
        allowed = []
        for u in range(1, n):
            r = ready(u, starts)
            if u in starts or r is None or r > t:
                continue
            if rank[u] and starts.get(children[parent[u]][rank[u] - 1], t) + d > t:
                continue
            allowed.append(u)
        for r in range(min(len(allowed), k - running) + 1):
            for chosen in itertools.combinations(allowed, r):
                if len({parent[u] for u in chosen}) == len(chosen):
                    search(t + 1, {**starts, **dict.fromkeys(chosen, t)})

    search(0, {})
    return best


def as_plane_tree(tree: ReductionTree) -> PlaneTree:
    """The planner's tree as a plane tree (predecessors in arrival order)."""
    receptions = tree.receptions()
    built: dict[int, PlaneTree] = {}
    for m in range(tree.n - 1, -1, -1):
        built[m] = tuple(built[p] for p in receptions[m])
    return built[0]


def canonical(tree: PlaneTree) -> tuple:
    """Form shared by isomorphic (unordered) trees."""
    return tuple(sorted(canonical(sub) for sub in tree))


def binomial(k: int) -> PlaneTree:
    """Definition 12: the sink of one order k-1 tree sends to the sink of another."""
    if k == 0:
        return ()
    return (*binomial(k - 1), binomial(k - 1))


def fibonacci_tree(k: int) -> PlaneTree:
    """Definition 15: the sink of an order k-2 tree sends to the sink of an order k-1 one."""
    if k <= 0:
        return ()
    return (*fibonacci_tree(k - 1), fibonacci_tree(k - 2))


def size(tree: PlaneTree) -> int:
    return 1 + sum(size(sub) for sub in tree)


def fib(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def test_brute_force_counts_plane_trees() -> None:
    # Catalan numbers: plane trees with n nodes number C(n-1).
    assert [len(plane_trees(n)) for n in range(1, 10)] == [1, 1, 2, 5, 14, 42, 132, 429, 1430]


# -- closed forms and theorems (section 7) ------------------------------------------


@pytest.mark.parametrize(("d", "c"), COSTS)
@pytest.mark.parametrize("k", range(1, 9))
def test_fibonacci_tree_closed_form(k: int, d: F, c: F) -> None:
    # Proposition 16: order k reduces F(k+2) elements in d + (k-1) max(d, c) + c.
    tree = fibonacci_tree(k)
    assert size(tree) == fib(k + 2)
    assert ready_time(tree, d, c) == d + (k - 1) * max(d, c) + c


@pytest.mark.parametrize(("d", "c"), COSTS)
@pytest.mark.parametrize("k", range(0, 8))
def test_binomial_tree_closed_form(k: int, d: F, c: F) -> None:
    # Proposition 13: order k reduces 2^k elements in k (d + c).
    tree = binomial(k)
    assert size(tree) == 2 ** k
    assert ready_time(tree, d, c) == k * (d + c)


@pytest.mark.parametrize(("d", "c"), [(F(1), F(0)), (F(0), F(1)), (F(3), F(0)), (F(0), F(2))])
@pytest.mark.parametrize("k", range(0, 10))
def test_theorem_14_algorithm_1_builds_binomial_trees(k: int, d: F, c: F) -> None:
    tree = greedy_tree(2 ** k, d, c)
    assert canonical(as_plane_tree(tree)) == canonical(binomial(k))
    assert tree.length == k * (d + c)
    # ... and no more than 2^k elements fit in k (d + c).
    assert greedy_tree(2 ** k + 1, d, c).length > k * (d + c)


@pytest.mark.parametrize("d", [F(1), F(2), F(1, 3)])
@pytest.mark.parametrize("k", range(1, 12))
def test_theorem_17_algorithm_1_builds_fibonacci_trees(k: int, d: F) -> None:
    tree = greedy_tree(fib(k + 2), d, d)
    assert canonical(as_plane_tree(tree)) == canonical(fibonacci_tree(k))
    assert tree.length == d + (k - 1) * d + d
    assert greedy_tree(fib(k + 2) + 1, d, d).length > (k + 1) * d


@pytest.mark.parametrize(("d", "c"), COSTS)
@pytest.mark.parametrize("k", range(1, 8))
def test_strategies_build_their_trees_whatever_the_costs(k: int, d: F, c: F) -> None:
    # Section 7.3: the strategies ignore the real costs.
    fibo = strategy_tree("fibonacci", fib(k + 2), d, c)
    assert canonical(as_plane_tree(fibo)) == canonical(fibonacci_tree(k))
    assert tree_length(fibo, d, c) == d + (k - 1) * max(d, c) + c
    bino = strategy_tree("binomial", 2 ** k, d, c)
    assert canonical(as_plane_tree(bino)) == canonical(binomial(k))
    assert tree_length(bino, d, c) == k * (d + c)


def check_approximation_ratios(largest: int) -> None:
    for d, c in COSTS:
        for n in range(2, largest + 1):
            optimum = greedy_tree(n, d, c).length
            binomial_length = tree_length(strategy_tree("binomial", n), d, c)
            fibonacci_length = tree_length(strategy_tree("fibonacci", n), d, c)
            # Theorem 18: a (1 + min(d, c) / max(d, c))-approximation.
            assert binomial_length <= (1 + min(d, c) / max(d, c)) * optimum, (n, d, c)
            # Theorem 19: a 2-approximation.
            assert fibonacci_length <= 2 * optimum, (n, d, c)
            # With the costs it assumes, a strategy is Algorithm 1 itself.
            if d == c:
                assert fibonacci_length == optimum
            if min(d, c) == 0:
                assert binomial_length == optimum


def test_theorems_18_and_19_approximation_ratios() -> None:
    check_approximation_ratios(150)


@pytest.mark.slow
def test_theorems_18_and_19_up_to_1000_elements() -> None:
    check_approximation_ratios(1000)


# -- optimality against the brute force ----------------------------------------------


@pytest.mark.parametrize(("d", "c"), COSTS)
@pytest.mark.parametrize("n", range(1, 10))
def test_greedy_equals_brute_force(n: int, d: F, c: F) -> None:
    tree = greedy_tree(n, d, c)
    assert tree.length == brute_force(n, d, c)
    # Proposition 3: the forward default transfer times give the same length.
    assert tree_length(tree) == tree.length
    assert ready_time(as_plane_tree(tree), d, c) == tree.length


@pytest.mark.parametrize(("d", "c"), COSTS[:7])
@pytest.mark.parametrize("n", range(2, 9))
def test_algorithm_3_equals_brute_force_with_few_reducers(n: int, d: F, c: F) -> None:
    for k in range(1, n):
        tree = greedy_tree(n, d, c, reducers=k)
        assert tree.length == brute_force(n, d, c, k), k
        assert reducers_of(as_plane_tree(tree)) <= k
        assert tree_length(tree) == tree.length


def check_algorithm_2_against_brute_force(largest: int) -> None:
    for n in range(2, largest + 1):
        for d, c in [(1, 1), (2, 1), (1, 2), (3, 1), (1, 3)]:
            for k in (1, 2, 3):
                length = greedy_tree(n, d, c, concurrent_transfers=k).length
                best = min(limited_transfers_length(t, d, c, k, int(length) + 1)
                           for t in plane_trees(n))
                assert length == best, (n, d, c, k)


def test_algorithm_2_equals_brute_force_with_few_concurrent_transfers() -> None:
    check_algorithm_2_against_brute_force(5)  # Theorem 7


@pytest.mark.slow
def test_algorithm_2_equals_brute_force_up_to_7_machines() -> None:
    check_algorithm_2_against_brute_force(7)


@pytest.mark.parametrize(("d", "c"), COSTS)
def test_bounds_hold(d: F, c: F) -> None:
    for n in range(1, 64):
        length = greedy_tree(n, d, c).length
        bounds = canon_antoniu_bounds(n, d, c)
        assert bounds.lemma_5_lower <= length <= bounds.proposition_6_upper
        for k in range(1, n // 2 + 1):
            alg2 = greedy_tree(n, d, c, concurrent_transfers=k)
            alg3 = greedy_tree(n, d, c, reducers=k)
            b = canon_antoniu_bounds(n, d, c, concurrent_transfers=k, reducers=k)
            assert length <= alg2.length <= b.proposition_8_corrected  # type: ignore[operator]
            assert tree_length(alg2) <= alg2.length
            assert length <= alg3.length <= b.corollary_11_upper  # type: ignore[operator]
            if k & (k - 1) == 0:  # Proposition 8 as printed holds for powers of two
                assert alg2.length <= b.proposition_8_upper  # type: ignore[operator]
            if k >= n // 2:  # no contention left: Algorithm 1
                assert alg2.length == length


def test_proposition_8_as_printed_fails_for_k_not_a_power_of_two() -> None:
    # n = 6, K = 3, d = c = 1: the bound as printed claims 2 (d + c) = 4, below
    # even the unconstrained optimum (two steps of d + c reduce at most 4 elements).
    b = canon_antoniu_bounds(6, 1, 1, concurrent_transfers=3)
    assert b.proposition_8_upper == 4
    assert brute_force(6, F(1), F(1)) == 5
    assert b.proposition_8_corrected == 6
    assert greedy_tree(6, 1, 1, concurrent_transfers=3).length == 5


def test_greedy_scales_as_n_log_n() -> None:
    tree = greedy_tree(200_000, 3, 2)
    assert tree.n == 200_000
    assert canon_antoniu_bounds(tree.n, 3, 2).lemma_5_lower <= tree.length


# -- section 4.1 labelling ----------------------------------------------------------


def labelled_interval(m: int, position: list[int], prepend: list[list[bool]],
                      receptions: list[list[int]]) -> tuple[int, int]:
    """The interval machine ``m`` ends with, checking every reduction is adjacent."""
    left = right = position[m]
    for j, p in enumerate(receptions[m]):
        a, b = labelled_interval(p, position, prepend, receptions)
        if prepend[m][j]:
            assert b == left - 1
            left = a
        else:
            assert a == right + 1
            right = b
    return left, right


@pytest.mark.parametrize(("d", "c"), COSTS[:5])
@pytest.mark.parametrize("n", range(1, 14))
def test_labelling_makes_adjacent_intervals(n: int, d: F, c: F) -> None:
    tree = greedy_tree(n, d, c)
    receptions = tree.receptions()
    for sink in range(n):
        position, prepend = interval_labels(tree, sink)
        assert sorted(position) == list(range(n))
        assert position[0] == sink
        assert labelled_interval(0, position, prepend, receptions) == (0, n - 1)


# -- the planners on platforms ------------------------------------------------------


def check_schedule(result: PlanResult, commutative: bool = False) -> tuple[Schedule, F]:
    """Strict replay clean, complete, announced makespan measured; series clean too.

    Returns the schedule and its makespan.
    """
    assert result.status == "ok", result.message
    assert result.schedule is not None
    assert result.makespan is not None
    report = replay(result.schedule)
    assert report.violations == (), [str(v) for v in report.violations[:5]]
    assert report.complete
    assert report.makespan == result.makespan
    if not commutative:  # every compute combines v[k,l] then v[l+1,m]
        for event in result.schedule.events:
            if isinstance(event, Compute):
                (a, b), out = event.inputs, event.output
                assert a.ordered
                assert b.ordered
                assert a.args[1] + 1 == b.args[0]
                assert out == Item.interval(a.args[0], b.args[1])
    if result.makespan > 0:
        series = replay_series(result.schedule, result.makespan * 10)
        assert series.violations == ()
        assert series.completed >= 10
    return result.schedule, result.makespan


@pytest.mark.parametrize(("d", "c"), [(1, 1), (1, 0), (2, 1), (1, 2), ("1/2", 1), (3, 1)])
@pytest.mark.parametrize("n", range(1, 10))
@pytest.mark.parametrize("model", ["unidirectional", "bidirectional", "multiport:2"])
def test_greedy_planner_is_optimal_on_homogeneous_platforms(n: int, d: int | str, c: int,
                                                           model: str) -> None:
    platform = complete_platform(n, c=d, compute=c, port_model=model)
    result = greedy_reduction(platform, Operation(REDUCE, target="P0"))
    _, makespan = check_schedule(result)
    if model == "multiport:2":  # two receptions at once: never longer
        assert makespan <= brute_force(n, F(d), F(c))
    else:  # in a tree a machine sends after all its receptions: both models agree
        assert makespan == brute_force(n, F(d), F(c))


@pytest.mark.parametrize(("d", "c"), [(1, 1), (2, 1), (1, 2), (1, 0)])
@pytest.mark.parametrize("k", range(1, 6))
def test_strategy_planners_match_propositions_13_and_16(k: int, d: int, c: int) -> None:
    fibo = complete_platform(fib(k + 2), c=d, compute=c, port_model="unidirectional")
    result = fibonacci_reduction(fibo, Operation(REDUCE, target="P0"))
    check_schedule(result)
    assert result.makespan == d + (k - 1) * max(d, c) + c
    bino = complete_platform(2 ** k, c=d, compute=c, port_model="unidirectional")
    result = binomial_reduction(bino, Operation(REDUCE, target="P0"))
    check_schedule(result)
    assert result.makespan == k * (d + c)


@pytest.mark.parametrize("name", ["greedy", "fibonacci", "binomial"])
@pytest.mark.parametrize("n", range(2, 10))
def test_every_target_non_commutative(name: str, n: int) -> None:
    platform = complete_platform(n, c=2, compute=1, port_model="unidirectional")
    tree = strategy_tree(name, n, 2, 1)  # type: ignore[arg-type]
    for t in range(n):
        result = get_planner(name).plan(platform, Operation(REDUCE, target=f"P{t}"))
        check_schedule(result)
        assert not any("forwards the result" in note for note in result.notes)
        assert result.makespan == tree_length(tree, 2, 1)


def test_sink_index_unreachable_by_labelling() -> None:
    # A sink receiving a leaf, then a 3-machine subtree: its own index can be
    # 0, 1, 3 or 4 (subset sums of 1 and 3), never 2.
    tree = ReductionTree(child=(-1, 0, 1, 1, 0), send_start=(4, 2, 0, 0, 1), unit=F(1),
                         d=F(1), c=F(1))
    assert [tree.subtree_sizes()[p] for p in tree.receptions()[0]] == [1, 3]
    for p in (0, 1, 3, 4):
        assert interval_labels(tree, p)[0][0] == p
    with pytest.raises(PlannerError, match="no labelling"):
        interval_labels(tree, 2)


@pytest.mark.parametrize(("d", "c"), COSTS)
def test_greedy_trees_let_the_sink_take_any_index(d: F, c: F) -> None:
    # Observed, not proved in the paper: the blocks a greedy sink receives have
    # subset sums covering 0 .. n-1, so section 4.1's labelling never needs the
    # forwarding fallback when the target is a participant.
    for n in range(1, 120):
        tree = greedy_tree(n, d, c)
        sizes = tree.subtree_sizes()
        sums = {0}
        for p in tree.receptions()[0]:
            sums |= {s + sizes[p] for s in sums}
        assert sums == set(range(n))


@pytest.mark.parametrize("commutative", [False, True])
@pytest.mark.parametrize("model", ["unidirectional", "bidirectional", "multiport:2"])
@pytest.mark.parametrize("seed", range(6))
def test_heterogeneous_platforms(seed: int, model: str, commutative: bool) -> None:
    platform = random_platform(7, 3, c=(1, 5), compute=(0, 3), seed=seed, port_model=model)
    target = platform.processors[seed % 7]
    for options in ({}, {"reducers": 2}, {"concurrent_transfers": 2}):
        result = get_planner("greedy").plan(
            platform, Operation(REDUCE, target=target, commutative=commutative), **options)
        check_schedule(result, commutative)
        assert any("heuristic" in note for note in result.notes)


@pytest.mark.parametrize("commutative", [False, True])
@pytest.mark.parametrize("name", ["greedy", "fibonacci", "binomial"])
def test_allreduce(name: str, commutative: bool) -> None:
    platform = complete_platform(9, c=1, compute=1, port_model="unidirectional")
    op = Operation(ALLREDUCE, commutative=commutative)
    _, makespan = check_schedule(get_planner(name).plan(platform, op), commutative)
    _, reduce_only = check_schedule(get_planner(name).plan(
        platform, Operation(REDUCE, target="P0", commutative=commutative)), commutative)
    assert makespan > reduce_only


def test_concurrent_transfers_limit_is_respected() -> None:
    platform = complete_platform(20, c=1, compute=1, port_model="unidirectional")
    for k in (1, 2, 3, 5):
        result = greedy_reduction(platform, Operation(REDUCE, target="P0"),
                                  concurrent_transfers=k)
        schedule, _ = check_schedule(result)
        sends = [e for e in schedule.events if isinstance(e, Send)]
        instants = sorted({e.start for e in sends})
        busiest = max(sum(1 for e in sends if e.start <= t < e.start + 1) for t in instants)
        assert busiest <= k
        # Theorem 7: optimal, the length Algorithm 2 announces.
        assert result.makespan == greedy_tree(20, 1, 1, concurrent_transfers=k).length


def test_reducers_limit_is_respected() -> None:
    platform = complete_platform(12, c=2, compute=1, port_model="unidirectional")
    for k in (1, 2, 4):
        result = greedy_reduction(platform, Operation(REDUCE, target="P0"), reducers=k)
        schedule, _ = check_schedule(result)
        assert len({e.node for e in schedule.events if isinstance(e, Compute)}) <= k
        assert result.makespan == greedy_tree(12, 2, 1, reducers=k).length


def test_mean_cost_bounds_are_not_claimed_for_a_heterogeneous_platform() -> None:
    # Liu-Kuo-Wang Fig. 1 cluster (times 10, 5, 5, 5, 4, 2, 2; A the destination).
    # Slowest node first by hand (EP, Fig. 2): B, C, D send over [0, 5], E over
    # [5, 9], F over [5, 7], G over [9, 11]: 11, which `optimal` proves optimal.
    platform = sender_times_platform({"A": 10, "B": 5, "C": 5, "D": 5, "E": 4, "F": 2, "G": 2})
    operation = Operation(REDUCE, target="A", commutative=True)
    assert get_planner("snf").plan(platform, operation).makespan == 11
    assert get_planner("optimal").plan(platform, operation).makespan == 11
    notes = greedy_reduction(platform, operation).notes
    # Lemma 5 on the mean costs (d = 33/7, c = 0) gives 3 * 33/7 = 99/7 > 11: it
    # holds for the homogeneous model only, and the note must say so.
    (lemma,) = [n for n in notes if "Lemma 5" in n]
    assert lemma.endswith("= 99/7")
    assert lemma.startswith("for the homogeneous model of the mean costs d = 33/7, c = 0 only")
    assert not any(n.startswith(("Lemma", "Proposition", "Corollary")) for n in notes)


def test_notes_report_the_bounds() -> None:
    platform = complete_platform(10, c=2, compute=1)
    notes = greedy_reduction(platform, Operation(REDUCE, target="P0"),
                             concurrent_transfers=3).notes
    text = "\n".join(notes)
    assert "Lemma 5: optimal length >= ceil(log2 n) max(d, c) = 8" in text
    assert "Proposition 6: optimal length <= ceil(log2 n) (d + c) = 12" in text
    assert "Proposition 8" in text
    assert "fails for K not a power of two" in text
    # n = 10, K = 2: (ceil(log2 2 + 1) + ceil(10/2 - 2)) (d + c) = (2 + 3) 3 = 15
    notes = greedy_reduction(platform, Operation(REDUCE, target="P0"), reducers=2).notes
    assert any(n.startswith("Corollary 11") and n.endswith("= 15") for n in notes)


def test_bad_options_and_unsupported_operations() -> None:
    platform = complete_platform(4)
    op = Operation(REDUCE, target="P0")
    greedy = get_planner("greedy")
    with pytest.raises(PlannerError, match="cannot be combined"):
        greedy.plan(platform, op, reducers=2, concurrent_transfers=2)
    with pytest.raises(PlannerError, match="integer >= 1"):
        greedy.plan(platform, op, reducers=0)
    with pytest.raises(PlannerError, match="integer >= 1"):
        greedy.plan(platform, op, concurrent_transfers=True)
    with pytest.raises(PlannerError, match="unknown option 'depth'"):
        greedy.plan(platform, op, depth=2)
    with pytest.raises(PlannerError, match="it takes no options"):
        get_planner("fibonacci").plan(platform, op, reducers=2)
    with pytest.raises(PlannerError, match="cannot be combined"):
        greedy_tree(4, 1, 1, reducers=2, concurrent_transfers=2)
    with pytest.raises(PlannerError, match="must be >= 0"):
        greedy_tree(4, -1, 1)
    for name in ("greedy", "fibonacci", "binomial"):
        result = get_planner(name).plan(platform, Operation(OperationKind.SCATTER, source="P0"))
        assert result.status == "unsupported"
        assert "does not handle scatter" in result.message


def test_message_size_scales_the_transfer_cost() -> None:
    platform = complete_platform(7, c="1/2", compute=2, port_model="unidirectional")
    result = greedy_reduction(platform, Operation(REDUCE, target="P3", size=F(3)))
    check_schedule(result)
    assert result.makespan == brute_force(7, F(3, 2), F(2))


def test_target_outside_the_participants() -> None:
    platform = complete_platform(6, c=1, compute=1, port_model="unidirectional")
    op = Operation(REDUCE, participants=("P1", "P2", "P3", "P4", "P5"), target="P0")
    result = greedy_reduction(platform, op)
    check_schedule(result)
    assert result.makespan == greedy_tree(5, 1, 1).length + 1
    assert any("not a participant" in note for note in result.notes)


def test_reduce_fibonacci_example() -> None:
    scenario = load_scenario(Path(__file__).resolve().parent.parent / "scenarios" / "examples"
                             / "reduce-fibonacci.yaml")
    runs = run_scenario(scenario).results
    assert all(run.feasible for run in runs)
    makespans = [run.makespan for run in runs]
    # Proposition 16 (k = 4), Proposition 13 (k = 3), Algorithm 3 with 2 reducers
    # against the brute force, and the flat tree (receptions back to back).
    assert makespans == [5, 5, 6, brute_force(8, F(1), F(1), 2), 8]
    for figure in ("= 5", "= 6"):
        assert figure in scenario.description


@pytest.mark.slow
def test_greedy_on_a_million_elements_under_10_seconds() -> None:
    import time

    start = time.perf_counter()
    tree = greedy_tree(1_000_000, 3, 2)
    assert time.perf_counter() - start < 10
    bounds = canon_antoniu_bounds(tree.n, 3, 2)
    assert bounds.lemma_5_lower <= tree.length <= bounds.proposition_6_upper


@pytest.mark.parametrize("name", ["greedy", "fibonacci", "binomial"])
def test_pipelined_series_never_beats_the_steady_state_bound(name: str) -> None:
    # Section 4 of the issue: the same tree reused for a series of reduces,
    # replayed as soon as possible, against the lp bound on the same platform.
    platform = complete_platform(6, c=1, compute=1, port_model="bidirectional")
    op = Operation(REDUCE, target="P0")
    schedule, makespan = check_schedule(get_planner(name).plan(platform, op))
    series = replay_series(schedule, makespan * 50)
    assert series.violations == ()
    assert series.measured_throughput is not None
    assert series.measured_throughput >= 1 / (2 * makespan)  # instances overlap
    # The bound is 1: P0 receives at least one message (cost 1) an instance,
    # and lp reaches it with trees (its single-node bound, by hand too).
    lp = get_planner("lp").plan(platform, op)
    assert lp.throughput_bound == 1
    assert series.measured_throughput <= lp.throughput_bound


@pytest.mark.parametrize("name", ["greedy", "binomial"])
def test_allreduce_broadcast_back_skips_a_machine_that_relayed_the_result(name: str) -> None:
    # allreduce-gap.yaml with P1's compute time 1 (as P0's, so the sink is P0,
    # the first participant of least compute time): the result goes back from
    # P0 to P2 along the cheapest path P0 -> P3 -> P2, so P3 holds it before its
    # own turn comes; sending it P2 -> P3 again (c = 5) only kept the link busy
    # until 21 after the operation had completed at 19.
    scenario = load_scenario(Path(__file__).parents[1] / "scenarios/examples/allreduce-gap.yaml")
    platform = Platform(tuple(replace(x, compute=F(1)) if x.id == "P1" else x
                              for x in scenario.platform.nodes),
                        scenario.platform.links, scenario.platform.port_model)
    result = get_planner(name).plan(platform, scenario.operation)
    assert result.schedule is not None
    sends = [(e.dst, e.item) for e in result.schedule.events if isinstance(e, Send)]
    assert len(sends) == len(set(sends))  # no machine receives the same item twice
    report = replay(result.schedule)
    assert report.feasible
    assert report.makespan == result.makespan == 19
    assert report.end_time == 19


@pytest.mark.parametrize("commutative", [False, True])
@pytest.mark.parametrize("name", ["greedy", "fibonacci", "binomial"])
def test_allreduce_reduces_on_the_fastest_cpu(name: str, commutative: bool) -> None:
    """Complete platform of A, B, C (c = 1, bidirectional), compute 10, 10 and 1.
    By hand the optimum is 5: a reduction on A or B alone takes 10; else C makes
    both, receiving the two other operands on its one receive port (the second
    by 2), reducing last by 3 and sending the result to A and B one at a time.
    The trees reduced on A, the first participant: 23 (15 commutative)."""
    platform = complete_platform(3, c=1, compute=1)
    nodes = tuple(replace(x, compute=F(10) if x.id != "P2" else F(1))
                  for x in platform.nodes)
    platform = Platform(nodes, platform.links, platform.port_model)
    op = Operation(OperationKind.ALLREDUCE, commutative=commutative)
    result = get_planner(name).plan(platform, op)
    assert result.schedule is not None
    assert result.makespan == replay(result.schedule).makespan == 5


def test_one_c_but_different_latencies_is_not_the_exact_model() -> None:
    # Every link has c = 2, but A -> C has no latency: a send of size 1/2
    # lasts 1 there and 3/2 elsewhere (Link.duration).  Not one d: heuristic.
    from portsim.simulator.platform import Link, Node, Platform, PortModel

    links = tuple(Link.of_bandwidth(a, b, 1, latency=1) if (a, b) != ("A", "C")
                  else Link(a, b, F(2), F(0)) for a, b in itertools.permutations("ABC", 2))
    p = Platform(tuple(Node(x) for x in "ABC"), links, PortModel.parse("bidirectional"))
    op = Operation(OperationKind.REDUCE, target="A", size=F(1, 2), commutative=True)
    result = get_planner("greedy").plan(p, op)
    assert result.is_ok
    assert any(note.startswith("heterogeneous costs") for note in result.notes)


def test_participants_behind_one_switch_take_the_path_as_the_models_d() -> None:
    # Six participants, each linked to a switch S by c = 1 both ways, and a
    # seventh node X on a c = 100 link.  Every participant pair is 1 + 1 = 2
    # apart through S; the mean over every link, 106/7 with X's (the model's
    # d before), is no transfer any tree makes.  With c = 2 = d, Algorithm 1's model length is
    # that of the Fibonacci tree, 10, and the measured makespan is 10 too.
    from portsim.simulator.platform import Link, Node, Platform, PortModel

    parts = [f"P{i}" for i in range(6)]
    nodes = (*(Node(x, F(2)) for x in [*parts, "X"]), Node("S", router=True))
    links = tuple(link for x, c in [*((x, 1) for x in parts), ("X", 100)]
                  for link in (Link(x, "S", F(c)), Link("S", x, F(c))))
    p = Platform(nodes, links, PortModel.parse("bidirectional"))
    op = Operation(OperationKind.REDUCE, target="P0", participants=tuple(parts))
    result = get_planner("greedy").plan(p, op)
    assert result.is_ok
    assert result.schedule is not None
    assert result.notes[0].startswith("no link joins two participants: every pair is 2 "
                                      "apart through other nodes")
    assert any(n.startswith("Algorithm 1 (greedy) on n = 6, d = 2, c = 2: model length 10 ")
               for n in result.notes)
    assert result.makespan == replay(result.schedule).makespan == 10


@pytest.mark.parametrize("commutative", [False, True])
@pytest.mark.parametrize("name", ["greedy", "fibonacci", "binomial"])
def test_allreduce_result_goes_back_once_to_each_node(name: str, commutative: bool) -> None:
    """Links one way, B -> A, C -> A, A -> B, B -> C (c = 1), compute 0 on A and 1
    elsewhere: the sink is A.  C's operand can only leave by C -> A and the result
    only reach C by B -> C, B's only by A -> B, so each of the four links carries
    exactly one message, and the optimum is 4 (A holds both operands at 2, then
    A -> B, B -> C).  Going back to C along A -> B -> C after serving B sent the
    result to B a second time (the commutative greedy tree)."""
    platform = Platform.build({"A": F(0), "B": F(1), "C": F(1)},
                              [("B", "A", 1), ("C", "A", 1), ("A", "B", 1), ("B", "C", 1)])
    result = get_planner(name).plan(platform, Operation(OperationKind.ALLREDUCE,
                                                        commutative=commutative))
    assert result.schedule is not None
    sends = sorted((e.src, e.dst) for e in result.schedule.events if isinstance(e, Send))
    assert sends == [("A", "B"), ("B", "A"), ("B", "C"), ("C", "A")]
    assert result.makespan == replay(result.schedule).makespan == 4


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("commutative", [False, True])
@pytest.mark.parametrize("planner", ["greedy", "fibonacci", "binomial"])
def test_allreduce_broadcast_back_sends_nothing_in_vain(planner: str, seed: int,
                                                        commutative: bool) -> None:
    """The result goes back along the reversed tree, each hop on a cheapest path:
    a processor on that path that already holds it (it relayed it to another
    machine) is not sent it again.  On random_platform(8, 3, seed 3) the greedy
    tree sent it four times in vain (P0 -> P6 and P6 -> P4 again, ...), and
    its last send ended at 53, after the makespan 47."""
    p = random_platform(8, 3, c=(1, 10), compute=(1, 5), seed=seed)
    r = get_planner(planner).plan(p, Operation(ALLREDUCE, commutative=commutative))
    assert r.schedule is not None
    assert sends_that_deliver_nothing(r.schedule) == []
    report = replay(r.schedule)
    assert report.feasible
    assert report.makespan == r.makespan


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", [REDUCE, ALLREDUCE])
@pytest.mark.parametrize(("planner", "options"), [
    ("greedy", {}), ("greedy", {"reducers": 2}), ("fibonacci", {}), ("binomial", {})])
def test_a_commutative_operator_never_makes_a_tree_planner_slower(
        seed: int, kind: OperationKind, planner: str, options: dict[str, int]) -> None:
    """Every schedule of a non-commutative reduction is one of the commutative one,
    so declaring the operator commutative must not make the planner slower.  On
    random_platform(8, 3, seed 3) the commutative greedy allreduce took 53 (the
    real-cost Algorithm 1) against 47 for the non-commutative one (the tree of the
    mean costs), 53 against 39 with reducers: 2; 30 of 120 such cases were slower
    (found by a trial).  The commutative planner now times every placement the
    non-commutative one has, and more, and keeps the fastest."""
    p = random_platform(8, 3, c=(1, 10), compute=(1, 5), seed=seed)
    target = "P2" if kind is REDUCE else None
    plan = get_planner(planner).plan
    ordered = plan(p, Operation(kind, target=target), **options)
    free = plan(p, Operation(kind, target=target, commutative=True), **options)
    assert ordered.makespan is not None
    assert free.makespan is not None
    assert free.makespan <= ordered.makespan
    for result in (ordered, free):
        assert result.schedule is not None
        assert sends_that_deliver_nothing(result.schedule) == []
        report = replay(result.schedule)
        assert report.feasible
        assert report.makespan == result.makespan


@pytest.mark.parametrize("planner", ["greedy", "fibonacci", "binomial", "ring"])
def test_an_allreduce_through_switches_sends_nothing_in_vain(planner: str) -> None:
    """A fat tree (k = 6, 54 hosts): the result goes back through the switches, which
    store and forward; a switch that holds it already is not sent it again (greedy
    sent 469 events, 130 of them in vain, its last send ending at 39 after the
    makespan 33; now 339 events ending at the makespan, found by a trial)."""
    p = fat_tree_platform(6)
    r = get_planner(planner).plan(p, Operation(ALLREDUCE))
    assert r.schedule is not None
    assert sends_that_deliver_nothing(r.schedule) == []
    report = replay(r.schedule)
    assert report.feasible
    assert report.makespan == r.makespan == report.end_time


@pytest.mark.parametrize("seed", [3, 11])
def test_integer_ticks_find_the_paths_and_lengths_of_the_fractional_costs(seed: int) -> None:
    """The tree planners' transfer costs and every cheapest_path search run on
    ``Platform.graph``'s integer ``ticks`` (a reduce tree on 500 random nodes:
    7.4 s of planning with a commutative operator, 15.5 s for an allreduce,
    now 1.6 s and 2.6 s): the paths, ties included, and the lengths are those
    of the fractional ``c`` (networkx on ``c`` and on each link's duration,
    here the independent count)."""
    import networkx as nx

    from portsim.planners.timing import cheapest_path, cheapest_paths_from

    platform = random_platform(30, 2, c=(F(1, 3), F(7, 2)), seed=seed)
    tick = platform.cost_tick
    assert tick.denominator > 1
    assert all(F(data["ticks"]) * tick == data["c"]
               for _, _, data in platform.graph.edges(data=True))
    size = F(5, 4)
    for src in platform.node_ids:
        lengths = nx.single_source_dijkstra_path_length(
            platform.graph, src, weight=lambda u, v, _: platform.duration(u, v, size))
        ticks = nx.single_source_dijkstra_path_length(platform.graph, src, weight="ticks")
        assert {v: size * tick * w for v, w in ticks.items()} == lengths
        from_src = cheapest_paths_from(platform, src, size)
        for dst in platform.node_ids:
            want = nx.dijkstra_path(platform.graph, src, dst, weight="c")
            assert cheapest_path(platform, src, dst, size) == want == from_src[dst]
