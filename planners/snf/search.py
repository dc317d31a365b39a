"""Branch and bound over earliest-possible sequences (Liu–Kuo–Wang section 6.2).

Every reduction schedule can be normalised into an EP schedule (section 3),
which a sequence of the senders determines; processors of equal time are
interchangeable, so the search tree branches on the *class* of the next
sender (a node is a prefix; its children append one sender of each class
still available).  Three techniques of section 6.2:

1. SNF-first order: children are explored slowest class first, so the first
   leaf is the slowest-node-first schedule and the search starts with its
   length (at most twice the optimum, Theorem 2) as the incumbent;
2. Corollary 1: an optimal schedule exists in which the predecessors of
   every sender are no faster than it.  When a sender starts it takes two
   free processors, each of which last received from some earlier sender
   (its predecessor) or never received; the receivers are chosen as the
   free processors whose predecessor is the fastest among those no faster
   than the new sender (a greedy choice, optimal for such threshold
   constraints).  If fewer than two qualify, a faster processor would have
   to send to a slower one: the prefix is pruned;
3. bound pruning: a prefix whose lower bound reaches the incumbent is
   pruned.  The bound is the largest of the completions so far and of
   ``tau + max t(remaining)``, where ``tau`` is the earliest instant the
   next sender can start (EP starts are non-decreasing).

:func:`generic_branch_and_bound` is the baseline of Table 1: the same search
tree in the given class order, pruned only when the completions so far
reach the incumbent.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.snf.model import earliest_possible_makespan
from portsim.simulator.errors import PlannerError

__all__ = [
    "SearchResult",
    "branch_and_bound",
    "generic_branch_and_bound",
    "search_tree_size",
]

_INITIAL = 1 << 62  # a processor that never received: no predecessor


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a branch-and-bound search.

    Attributes
    ----------
    makespan:
        The optimal reduction time.
    sequence:
        An optimal EP sequence, as class indexes.
    nodes:
        Search-tree nodes examined (prefixes extended), as in Table 1.
    complete:
        ``False`` when the node limit stopped the search (``makespan`` is
        then only the best found).
    """

    makespan: Fraction
    sequence: tuple[int, ...]
    nodes: int
    complete: bool = True


def _classes(times: Sequence[Fraction | int], counts: Sequence[int]) -> tuple[list[int], int]:
    tq = [Fraction(t) for t in times]
    if len(tq) != len(counts) or any(t <= 0 for t in tq) or any(c < 0 for c in counts):
        raise PlannerError("one positive time and one count per class",
                           value=[str(t) for t in tq])
    scale = math.lcm(*(t.denominator for t in tq)) if tq else 1
    return [int(t * scale) for t in tq], scale


def branch_and_bound(
    times: Sequence[Fraction | int],
    counts: Sequence[int],
    *,
    corollary: bool = True,
    dominance: bool = True,
    node_limit: int | None = None,
) -> SearchResult:
    """Optimal reduction by the SNF-guided branch and bound of section 6.2.

    Parameters
    ----------
    times:
        Transmission time of each class.
    counts:
        Number of senders of each class (the destination excluded).
    corollary:
        Apply the Corollary 1 pruning (default).
    dominance:
        Apply the two safe reductions of the Notes (default); without them
        the search uses only the three techniques of section 6.2.
    node_limit:
        Stop after examining this many nodes (``complete`` is then False).

    Returns
    -------
    SearchResult

    Notes
    -----
    Two safe reductions beyond section 6.2 make the search fit Python:

    - senders that start at the same instant are taken in SNF order
      (swapping two of them changes neither the schedule nor the state);
    - the *state* of a prefix is what its future depends on: the classes
      left, the free processors (with the time of their predecessors) and
      the transmissions in flight relative to the clock.  Two prefixes with
      the same state have the same completions up to the shift of their
      clocks, so a state met again at a later or equal clock is pruned.

    The bound also uses ``tau + ceil(log2(m + 1)) * t_min``: the ``m``
    remaining senders form a binary tree of height at least
    ``ceil(log2(m + 1))`` whose windows all last at least the fastest
    remaining time.

    Examples
    --------
    Fig. 8 with ``x = 3/2``: 3 slow senders and 8 fast ones.

    >>> branch_and_bound([Fraction(3, 2), 1], [3, 8]).makespan
    Fraction(4, 1)
    """
    t, scale = _classes(times, counts)
    k = len(t)
    order = sorted(range(k), key=lambda j: -t[j])  # SNF first: slowest class first
    remaining = list(counts)
    n = sum(remaining) + 1
    snf = [j for j in order for _ in range(remaining[j])]
    best = earliest_possible_makespan([t[j] for j in snf], n)
    best_seq: list[int] = list(snf)
    prefix: list[int] = []
    nodes = 0
    stopped = False

    seen: dict[tuple[object, ...], int] = {}
    rank = {j: i for i, j in enumerate(order)}

    def dfs(now: int, pool: list[int], active: list[tuple[int, int]], finish: int,
            last: int) -> None:
        nonlocal best, best_seq, nodes, stopped
        if not any(remaining):
            if finish < best:
                best, best_seq = finish, list(prefix)
            return
        if dominance:
            key = (tuple(remaining), tuple(pool), tuple((e - now, w) for e, w in active))
            earlier = seen.get(key)
            if earlier is not None and earlier <= now:
                return
            seen[key] = now
        # When can the next sender start?  Free processors reach two.
        need = 2 - len(pool)
        tau = now
        if need > 0:
            tau = active[need - 1][0]
        present = [t[j] for j in range(k) if remaining[j]]
        left = sum(remaining)
        bound = tau + max(max(present), left.bit_length() * min(present))
        if max(finish, bound) >= best:
            return
        for j in order:
            if not remaining[j] or stopped:
                continue
            if node_limit is not None and nodes >= node_limit:
                stopped = True
                return
            tj = t[j]
            new_pool = list(pool)
            new_active = list(active)
            clock = now
            while len(new_pool) < 2:
                clock = new_active[0][0]
                while new_active and new_active[0][0] == clock:
                    bisect.insort(new_pool, new_active.pop(0)[1])
            if dominance and clock == now and last >= 0 and rank[j] < rank[last]:
                continue  # same start as the previous sender: SNF order within the batch
            nodes += 1
            if corollary:
                at = bisect.bisect_left(new_pool, tj)
                if len(new_pool) - at < 2:
                    continue  # Corollary 1: a faster processor would send to this one
                del new_pool[at:at + 2]
            else:
                del new_pool[:2]
            end = clock + tj
            if max(finish, end) >= best:
                continue
            bisect.insort(new_active, (end, tj))
            remaining[j] -= 1
            prefix.append(j)
            dfs(clock, new_pool, new_active, max(finish, end), j)
            prefix.pop()
            remaining[j] += 1

    dfs(0, [_INITIAL] * n, [], 0, -1)
    return SearchResult(Fraction(best, scale), tuple(best_seq), nodes, not stopped)


def generic_branch_and_bound(
    times: Sequence[Fraction | int],
    counts: Sequence[int],
    *,
    node_limit: int | None = None,
) -> SearchResult:
    """The generic branch and bound of Table 1: classes in the given order, bound = completions.

    Parameters
    ----------
    times, counts:
        As in :func:`branch_and_bound`.
    node_limit:
        Stop after examining this many nodes.

    Returns
    -------
    SearchResult

    Examples
    --------
    >>> generic_branch_and_bound([1, Fraction(3, 2)], [8, 3]).makespan
    Fraction(4, 1)
    """
    t, scale = _classes(times, counts)
    k = len(t)
    remaining = list(counts)
    n = sum(remaining) + 1
    best = 1 << 62
    best_seq: list[int] = []
    prefix: list[int] = []
    nodes = 0
    stopped = False

    def dfs(now: int, free: int, active: list[int], finish: int) -> None:
        nonlocal best, best_seq, nodes, stopped
        if not any(remaining):
            if finish < best:
                best, best_seq = finish, list(prefix)
            return
        for j in range(k):
            if not remaining[j] or stopped:
                continue
            if node_limit is not None and nodes >= node_limit:
                stopped = True
                return
            nodes += 1
            new_active = list(active)
            clock, new_free = now, free
            while new_free < 2:
                clock = new_active.pop(0)
                new_free += 1
                while new_active and new_active[0] == clock:
                    new_active.pop(0)
                    new_free += 1
            end = clock + t[j]
            if max(finish, end) >= best:
                continue
            bisect.insort(new_active, end)
            remaining[j] -= 1
            prefix.append(j)
            dfs(clock, new_free - 2, new_active, max(finish, end))
            prefix.pop()
            remaining[j] += 1

    dfs(0, n, [], 0)
    return SearchResult(Fraction(best, scale), tuple(best_seq), nodes, not stopped)


def search_tree_size(counts: Sequence[int]) -> tuple[int, int]:
    """Nodes ``N`` (every non-empty prefix) and leaves ``L`` of the full search tree (Table 1).

    Examples
    --------
    >>> search_tree_size([1, 1])
    (4, 2)
    """
    total = sum(counts)
    # Prefixes of length m: multiset permutations of every sub-multiset of size m.
    nodes = 0
    by_length = [0] * (total + 1)

    def walk(j: int, m: int, ways: int) -> None:
        if j == len(counts):
            by_length[m] += ways
            return
        for x in range(counts[j] + 1):
            walk(j + 1, m + x, ways * math.comb(m + x, x))

    walk(0, 0, 1)
    nodes = sum(by_length[1:])
    return nodes, by_length[total]
