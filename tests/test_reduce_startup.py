"""The start-up of the reduce: the makespan bound ``M`` and the shallow optimal trees.

:func:`~portsim.planners.lp.reduce_makespan_bound` is checked against a
brute force over every whole-message schedule at integer times on tiny
platforms (with unit durations, any schedule's start times can be rounded
down without breaking a resource or a precedence, so the brute force is the
true least makespan there); the shallow trees the reduce planner chooses
on ``fat_tree`` k=4 are checked to carry the certified bound exactly (link
and CPU loads summed here from the tasks) and to shorten the start-up of the
strict replay, which stays under the ceiling ``M`` implies.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from fractions import Fraction as F

import pytest

from portsim.planners.lp import periodic_share_ceiling, reduce_makespan_bound, steady_state
from portsim.planners.lp._reduce_columns import reduction_trees
from portsim.planners.lp._reduce_startup import aligned_trees, interleaved_trees, tree_makespan
from portsim.planners.lp._ssr import reduce_cap
from portsim.planners.lp._tree_pricing import TreeSpace
from portsim.scenarios.generators import fat_tree_platform
from portsim.simulator import Operation, OperationKind, replay
from portsim.simulator.platform import Link, Node, Platform


def _star(hosts: int) -> Platform:
    """``hosts`` processors ``P0..`` cabled to one router ``S`` (c = 1 both ways, compute 1)."""
    compute = {f"P{i}": F(1) for i in range(hosts)} | {"S": F(0)}
    links = [(f"P{i}", "S", F(1)) for i in range(hosts)]
    links += [("S", f"P{i}", F(1)) for i in range(hosts)]
    return Platform.build(compute, links, routers={"S"}, port_model="multiport")


def _brute_force_makespan(platform: Platform, operation: Operation, limit: int = 12) -> int:
    """Least makespan of one reduce over whole-message schedules at integer times.

    Every send and reduction lasts 1 (the platforms here); a state is what
    each node holds after a step.  Each step, every link sends one item its
    tail holds and its head lacks and every processor makes one new partial
    result from two adjacent ones it holds (holding more never hurts, so idling
    is dominated); states held by a superset state are dropped.

    A state is one integer, a bit per (node, partial result ``v[a,b]``): node
    ``x`` holds ``v[a,b]`` when bit ``x·N² + a·N + b`` is set, so unions are
    ``|`` and "held by a superset" is ``s | other == other``.
    """
    nodes = list(platform.node_ids)
    index = {v: i for i, v in enumerate(nodes)}
    parts = [index[p] for p in operation.participants]
    n = len(parts)
    last = n - 1
    width = n * n  # bits a node
    target = index[operation.target]
    links = [(index[u], index[v]) for u, v in platform.graph.edges]
    cpus = [index[v] for v in platform.processors]
    assert all(platform.duration(nodes[u], nodes[v], operation.size) == 1 for u, v in links)
    assert all(platform.compute_time(nodes[i]) == 1 for i in cpus)
    node_mask = (1 << width) - 1
    result = 1 << last  # v[0,last], a = 0
    # Every reduction a node can make: v[a,b] and v[b+1,d] give v[a,d]
    merges = [(1 << (a * n + b), 1 << ((b + 1) * n + d), 1 << (a * n + d))
              for a in range(n) for b in range(a, last) for d in range(b + 1, n)]
    start = 0
    for k, owner in enumerate(parts):
        start |= 1 << (owner * width + k * n + k)
    level = {start}
    for t in range(limit + 1):
        if any(state >> (target * width) & result for state in level):
            return t
        following: set[int] = set()
        for state in level:
            held = [state >> (x * width) & node_mask for x in range(len(nodes))]
            # One choice for every link and processor that has one: the set of the
            # choices' unions (their product), built one link or processor at a time.
            reached = {state}
            for u, v in links:
                new = held[u] & ~held[v]
                if u == target:
                    new &= ~result  # the target keeps the result
                if new:
                    sends = [1 << (v * width + b) for b in range(width) if new >> b & 1]
                    reached = {r | s for r in reached for s in sends}
            for i in cpus:
                own = held[i]
                made = [c << (i * width) for a, b, c in merges
                        if own & a and own & b and not own & c]
                if made:
                    reached = {r | o for r in reached for o in made}
            following |= reached
        # Keep the maximal states only (a subset state can do no better).
        kept: list[int] = []
        for state in sorted(following, key=lambda s: -s.bit_count()):
            if not any(state | other == other for other in kept):
                kept.append(state)
        level = set(kept)
    raise AssertionError("no schedule within the limit")


@pytest.mark.parametrize("hosts", [2, 3, 4])
def test_makespan_bound_equals_brute_force_on_stars(hosts: int) -> None:
    platform = _star(hosts)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    assert reduce_makespan_bound(platform, op) == _brute_force_makespan(platform, op)


def test_makespan_bound_on_the_two_host_fat_tree() -> None:
    """fat_tree k=2: the two hosts are 6 links apart; the bound is sound (below the
    brute force) but not tight there: a switch with two in-links could, as far as
    the bound knows, take a message in half the time from two holders."""
    platform = fat_tree_platform(2)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    bound = reduce_makespan_bound(platform, op)
    assert bound is not None
    assert bound <= _brute_force_makespan(platform, op) == 7
    assert bound == 5  # E = 1, 3/2, 2, 5/2, 3 along the switches, then P0 at 4; +1


def test_makespan_bound_on_fat_trees() -> None:
    """``w = 1``, ``δ = 2``: ``G(t) = G(t-1) + G(t-3)`` (the difference form of the sum
    recursion), ``G = 1`` before 3; ``M`` is the first ``t`` with ``G(t) >= N``."""
    g = [1, 1, 1]
    while len(g) < 20:
        g.append(g[-1] + g[-3])
    for k, hosts in ((4, 16), (8, 128)):
        platform = fat_tree_platform(k)
        op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
        expected = next(t for t, value in enumerate(g) if value >= hosts)
        assert reduce_makespan_bound(platform, op) == expected
    assert [next(t for t, v in enumerate(g) if v >= n) for n in (16, 128)] == [9, 14]


def test_fat_tree_reduce_trees_keep_the_bound_and_shorten_the_start_up() -> None:
    """fat_tree k=4, reduce onto P0: the chains (period 1, lag 64, share 0.36) give way
    to shallow trees at the same certified bound, and the replay stays under the
    ceiling of :func:`periodic_share_ceiling` (a check of ``M`` on a real schedule)."""
    platform = fat_tree_platform(4)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    found = reduction_trees(platform, op)
    assert not isinstance(found, str)
    exact, trees, _ = found
    cap = reduce_cap(platform, op)
    assert exact.lower == exact.upper == cap == 1
    assert sum(w for w, _ in trees) == cap
    # Independent loads: every directed link and every CPU busy at most 1 per time unit.
    link: dict[tuple[str, str], F] = defaultdict(F)
    cpu: dict[str, F] = defaultdict(F)
    for w, tasks in trees:
        for task in tasks:
            if task[0] == "send":
                link[task[1], task[2]] += w * platform.duration(task[1], task[2], op.size)
            else:
                cpu[task[1]] += w * platform.compute_time(task[1])
        # A reduction tree: N - 1 reductions, every participant but P0 sends.
        assert sum(1 for t in tasks if t[0] == "cons") == len(op.participants) - 1
    assert max(link.values()) <= 1
    assert max(cpu.values()) <= 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, op)
    assert result.status == "ok"
    assert result.throughput_bound == result.achieved_throughput == 1  # exact period
    horizon = result.period * 100
    report = replay(result.schedule, horizon=horizon, mode="strict")
    assert report.feasible
    share = F(report.completed) / (result.throughput_bound * horizon)
    least = reduce_makespan_bound(platform, op)
    assert least == 9
    ceiling = periodic_share_ceiling(F(1), least, result.period,
                                     result.schedule.instances_per_period, 100)
    assert share <= ceiling
    lag = max(e.lag for e in result.schedule.events)
    # The aligned family of three trees (period 3): issue 14, item 8's 0.9 of the bound in
    # 100 periods, and fewer instances lost than the aligned pair's 28 (period 2), which
    # no pair can bring under 20 (test_no_pair_of_trees_of_fan_in_two_is_shorter_than_22).
    assert result.period == 3
    assert lag * result.period <= 27   # time units of start-up; the chains': 64, the pair's: 30
    assert share >= F(9, 10)           # measured 0.913; the pair 0.86, the chains 0.36
    assert horizon - report.completed <= 26


def _computes_the_reduce(platform: Platform, op: Operation, tasks: list) -> bool:
    """Run the tasks of one tree in any feasible order (no timing): does the target end
    with ``v[0, N-1]``, every task having had its inputs?"""
    last = len(op.participants) - 1
    held = {(p, k, k) for k, p in enumerate(op.participants)}
    todo = list(tasks)
    while todo:
        ready = [t for t in todo
                 if (t[0] == "send" and (t[1], t[3], t[4]) in held)
                 or (t[0] == "cons" and (t[1], t[2], t[3]) in held
                     and (t[1], t[3] + 1, t[4]) in held)]
        if not ready:
            return False
        for t in ready:
            todo.remove(t)
            held.add((t[2], t[3], t[4]) if t[0] == "send" else (t[1], t[2], t[4]))
    return (op.target, 0, last) in held


def test_aligned_pair_keeps_the_bound_and_is_shorter_than_the_interleaved_pair() -> None:
    """fat_tree k=4: the two trees of aligned_trees (q = 2) are reduction trees, carry
    the bound 1 together (1/2 each: every link and CPU busy at most 1 per time unit,
    summed here from the tasks) and both are shorter than the interleaved pair's."""
    platform = fat_tree_platform(4)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    space = TreeSpace.of(platform, op)
    [family] = aligned_trees(space, [2])
    assert len(family) == 2
    link: dict[tuple[str, str], F] = defaultdict(F)
    cpu: dict[str, F] = defaultdict(F)
    for tasks in family:
        assert _computes_the_reduce(platform, op, tasks)
        assert sum(1 for t in tasks if t[0] == "cons") == len(op.participants) - 1
        for task in tasks:
            if task[0] == "send":
                link[task[1], task[2]] += F(1, 2) * platform.duration(task[1], task[2], op.size)
            else:
                cpu[task[1]] += F(1, 2) * platform.compute_time(task[1])
    assert max(link.values()) == 1
    assert max(cpu.values()) <= 1
    # Residue classes: a participant reduces in at most one of the two trees.
    for tasks_a, tasks_b in (family, family[::-1]):
        a = {t[1] for t in tasks_a if t[0] == "cons"} - {"P0"}
        b = {t[1] for t in tasks_b if t[0] == "cons"} - {"P0"}
        assert not a & b
    aligned = [tree_makespan(space, tasks) for tasks in family]
    interleaved = [tree_makespan(space, tasks) for tasks in interleaved_trees(space, [2])[0]]
    assert sorted(aligned) == [25, 28]
    assert sorted(interleaved) == [29, 30]


def _least_latency(k: int, most: int) -> int:
    """Least time in which ``P0`` of ``fat_tree`` k can hold ``v[0, N-1]``, over every interval
    tree whose participants each receive at most ``most`` results, without contention.

    An independent dynamic program (no planner code): ``ready(a, b, s)`` is the earliest
    time host ``s`` holds ``v[a, b]``; ``s`` receives the rest of ``[a, b]`` as at most
    ``most`` contiguous pieces, each from a host of its piece, ``hops`` time units later
    (store and forward, one time unit per link: 2 hops under one edge switch, 4 in a pod,
    6 across pods); its in-link takes one piece per time unit, its CPU one reduction
    per time unit, as soon as a piece arrives (optimistic: two pieces on one side of
    ``s`` may have to wait for each other).  ``P0`` receives one piece per instance
    (its in-link at the bound): either ``v[1, N-1]``, reduced last at ``P0``, or
    ``v[0, N-1]`` made elsewhere after ``P0`` sent ``v_0`` out (then ``P0`` reduces
    nothing).
    """
    half = k // 2
    n = k ** 3 // 4

    def hops(u: int, v: int) -> int:
        if u // half == v // half:
            return 2
        return 4 if u // (half * half) == v // (half * half) else 6

    def splits(lo: int, hi: int, parts: int) -> list[list[tuple[int, int]]]:
        if parts == 1:
            return [[(lo, hi)]]
        return [[(lo, m), *rest] for m in range(lo, hi)
                for rest in splits(m + 1, hi, parts - 1)]

    never = 10 ** 9

    @functools.cache
    def ready(a: int, b: int, s: int) -> int:
        if a == b:
            return 0
        if s == 0:   # P0 receives only the result, so it holds no larger interval before
            return never
        best = never
        sides = [(a, s - 1) if s > a else None, (s + 1, b) if s < b else None]
        counts = [range(1, most + 1) if side else range(1) for side in sides]
        for m_left in counts[0]:
            for m_right in counts[1]:
                if m_left + m_right > most:
                    continue
                left = splits(*sides[0], m_left) if m_left else [[]]
                right = splits(*sides[1], m_right) if m_right else [[]]
                for pieces in (lp + rp for lp in left for rp in right):
                    link, cpu = -1, 0
                    for at in sorted(min(ready(c, e, t) + hops(t, s) for t in range(c, e + 1))
                                     for c, e in pieces):
                        link = max(at, link + 1)
                        cpu = max(cpu, link) + 1
                    best = min(best, cpu)
        return best

    merged_at_p0 = min(ready(1, n - 1, t) + hops(t, 0) for t in range(1, n)) + 1
    sent_to_p0 = min(ready(0, n - 1, t) + hops(t, 0) for t in range(1, n))
    return min(merged_at_p0, sent_to_p0)


def test_no_pair_of_trees_of_fan_in_two_is_shorter_than_22() -> None:
    """Why the fat_tree k=4 reduce runs three trees a period, not two.

    At the bound (1 per time unit), in a period of 2 a host's in-link carries at most two
    results (one time unit each), so with a pair of trees each participant receives at
    most two results per tree, and ``P0`` exactly one.
    Every such tree needs 22 time units (the chain, one result each: 65), so instance j
    of either tree ends after 2j + 22, at most 90 of each in 100 periods: a pair holds at
    most 0.9 of the bound, and only without any contention.  The aligned pair (tree
    makespans 25 and 28) is above that floor; the family of three ends more instances in
    the same time (test above)."""
    assert _least_latency(4, 1) == 65
    assert _least_latency(4, 2) == 22
    platform = fat_tree_platform(4)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    pair = aligned_trees(TreeSpace.of(platform, op), [2])[0]
    assert min(tree_makespan(TreeSpace.of(platform, op), t) for t in pair) >= 22
    horizon = 200
    assert 2 * ((horizon - 22) // 2 + 1) == F(9, 10) * horizon


@pytest.mark.slow
def test_fat_tree_k8_reduce_reaches_nine_tenths_of_the_bound_in_100_periods() -> None:
    """fat_tree k=8, reduce onto P0 (issue 14, item 8): the aligned family of five trees
    (the least weighted makespan of the aligned families: their makespans, by the
    independent tree_makespan, are 35 to 38, the family of three's 37 to 39) runs at the
    bound 1 in a period of 5, and the strict replay of 100 periods completes 454 of the
    500 instances the bound allows (0.908; 450 without the unit-after-unit placement
    pass of the periodic schedule)."""
    platform = fat_tree_platform(8)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    space = TreeSpace.of(platform, op)
    three, five = (aligned_trees(space, [q])[0] for q in (3, 5))
    assert sorted(tree_makespan(space, t) for t in three) == [37, 39, 39]
    assert sorted(tree_makespan(space, t) for t in five) == [35, 36, 37, 37, 38]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, op)
    assert result.status == "ok"
    assert result.throughput_bound == result.achieved_throughput == 1
    assert result.period == 5
    horizon = result.period * 100
    report = replay(result.schedule, horizon=horizon, mode="strict")
    assert report.feasible
    assert F(report.completed) >= F(9, 10) * result.throughput_bound * horizon


def test_participant_with_no_in_link_roots_no_subtree() -> None:
    """Links one way only (B -> A, C -> A, C -> B; c = 1, compute 1), reduce onto A:
    C has no in-link, so the start-up's aligned trees cannot root a subtree on it
    (this was ``KeyError: 2``, an ``error`` row).  By hand the bound is 1: A
    receives one message an instance, and the tree C -> B -> A (B reduces v[1,2],
    A the last step) carries 1 with every link and CPU busy at most 1."""
    platform = Platform.build(["A", "B", "C"], [("B", "A", 1), ("C", "A", 1), ("C", "B", 1)])
    op = Operation(OperationKind.REDUCE, participants=["A", "B", "C"],
                   target="A").resolve(platform)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound == result.achieved_throughput == 1
    assert replay(result.schedule, horizon=result.period * 10, mode="strict").feasible


@pytest.mark.parametrize(("model", "bound"), [("bidirectional", F(1)), ("multiport", F(1)),
                                              ("unidirectional", F(1, 2))])
def test_a_participant_without_in_links(model: str, bound: F) -> None:
    """Links A -> B and C -> A only (C has no in-link), reduce of (A, C, B)
    onto B: the one tree sends v[1,1] C -> A, A makes v[0,1] and sends it to
    B, which makes v[0,2].  Each link and CPU is busy 1 an instance: bound 1
    (1/2 unidirectional, where A's one port receives then sends).  The
    start-up trees looked up C's in-link gap: an internal error (KeyError)."""
    platform = Platform.build(["A", "B", "C"], [("A", "B", 1), ("C", "A", 1)], model)
    result = steady_state(platform, Operation(OperationKind.REDUCE, target="B",
                                              participants=("A", "C", "B")))
    assert result.status == "ok", result.message
    assert result.throughput_bound == bound
    assert result.schedule is not None
    check = replay(result.schedule)
    assert check.feasible
    assert check.throughput == bound


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
def test_a_link_float_distances_cannot_see_is_routed() -> None:
    """A ring N0 -> N1 -> N2 -> N3 -> N0 whose busy times are 2·10^-4, 7·10^-13,
    6·10^-6 and 30000 (compute 10^-12 to 10^-11), a reduce onto N3.  From N1 to
    N0, the float distances 30000 + 6·10^-6 and 30000 + 6·10^-6 + 7·10^-13 are
    equal, so the start-up's router found no tight link out of N1 and the lp
    was an internal error (`KeyError: 1`).  By hand the optimum is 5000: v0
    leaves N0 by its one link, busy 2·10^-4, and nothing else binds."""
    nodes = [Node("N0", F(1, 125 * 10**9)), Node("N1", F(1, 2 * 10**11)),
             Node("N2", F(1, 10**12)), Node("N3", F(9, 10**12))]
    links = [Link("N0", "N1", F(1, 5000)), Link("N1", "N2", F(7, 10**13)),
             Link("N2", "N3", F(3, 500000)), Link("N3", "N0", 30000)]
    platform = Platform(nodes, links, "bidirectional")
    result = steady_state(platform, Operation(OperationKind.REDUCE, target="N3"))
    assert result.status == "ok", result.message
    assert result.throughput_bound == result.achieved_throughput == 5000
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 4).violations == ()
