"""Minimum spanning arborescences (Chu–Liu/Edmonds) on exact or float weights.

The pricing step of every tree column generation (broadcast and allgather in
both port models): networkx's ``minimum_spanning_arborescence`` copies
multigraphs at every contraction (half of a broadcast's column generation at
n = 80) and, in networkx 3.6, raised "No minimum spanning arborescence" on a
few reachable graphs with zero weights, which duals produce often.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np

__all__ = ["min_arborescence", "prune"]

W = TypeVar("W", float, Fraction)
V = TypeVar("V", int, str)


VECTORISED_FROM = 512
"""From this many edges of float weights, :func:`min_arborescence` runs each
contraction level on numpy arrays (the same choices, tie for tie): the plain
loops took 1.3 s a call on a complete platform of 128 nodes, most of the
allreduce's step 2 there."""


def min_arborescence(n: int, root: int, edges: Sequence[tuple[int, int, W]], *,
                     free_first: bool = False) -> list[int] | None:
    """Chu–Liu/Edmonds: a minimum spanning arborescence of ``0..n-1`` rooted at ``root``.

    ``O(n·|edges|)`` with plain lists (networkx's version copies multigraphs
    at every contraction: measured, it took half of a broadcast's column
    generation at n = 80; and it raised "No minimum spanning arborescence"
    on a few reachable graphs with zero weights, which duals produce often).
    Exact on Fractions (the certificate's pricing), fast on floats.
    Iterative: a chain of 2-cycles contracts one level per node, which
    overflowed Python's recursion limit on a 2,000-node platform.

    With ``free_first`` (weights non-negative), the nodes that ``root`` reaches
    by arcs of weight 0 are first joined to it along a breadth-first tree of
    those arcs, and the algorithm runs on the rest with them merged into the
    root: a minimum arborescence too (every arborescence's arcs into the other
    nodes form one of the merged graph, and the free arcs cost nothing), but
    ties may be broken otherwise.  Column generations price under duals that
    leave most ports at 0, where the zero-weight arcs in both directions made
    the plain algorithm contract about 45 levels of 2-cycles a call
    (``fat_tree_platform(6)``).

    Returns
    -------
    list of int or None
        Indexes into ``edges`` of the tree's ``n - 1`` arcs; ``None`` when some
        node cannot be reached from ``root``.

    Examples
    --------
    >>> sorted(min_arborescence(3, 0, [(0, 1, 5.0), (0, 2, 1.0), (2, 1, 1.0), (1, 2, 0.0)]))
    [1, 2]
    >>> sorted(min_arborescence(3, 0, [(0, 1, 0.0), (1, 2, 2.0), (0, 2, 3.0)], free_first=True))
    [0, 1]
    """
    if free_first:
        return _free_first(n, root, edges)
    if len(edges) >= VECTORISED_FROM and all(isinstance(w, float) for _, _, w in edges):
        found = _vectorised(n, root, edges)  # type: ignore[arg-type]  # floats here
        if found is not _NON_FINITE:
            return found  # type: ignore[return-value]
    # Contract cycles level by level (no recursion: one level per contracted
    # cycle set, and a long chain of 2-cycles makes as many levels as nodes),
    # then expand the levels back in reverse order.
    levels: list[tuple[int, int, Sequence[tuple[int, int, W]], list[int], list[int], int,
                       list[int]]] = []
    while True:
        best = [-1] * n
        for i, (u, v, w) in enumerate(edges):
            if v != root and u != v and (best[v] < 0 or w < edges[best[v]][2]):
                best[v] = i
        if any(best[v] < 0 for v in range(n) if v != root):
            return None
        comp, cycles, k = _components(root, [edges[b][0] if b >= 0 else -1 for b in best])
        if cycles == 0:
            chosen = [best[v] for v in range(n) if v != root]
            break
        contracted: list[tuple[int, int, W]] = []
        origin: list[int] = []
        for i, (u, v, w) in enumerate(edges):
            if comp[u] != comp[v] and v != root:
                contracted.append((comp[u], comp[v], w - edges[best[v]][2]))
                origin.append(i)
        levels.append((n, root, edges, best, comp, cycles, origin))
        n, root, edges = k, comp[root], contracted
    while levels:
        n, root, edges, best, comp, cycles, origin = levels.pop()
        chosen = [origin[j] for j in chosen]
        entered = {edges[i][1] for i in chosen}
        chosen += [best[v] for v in range(n)
                   if v != root and comp[v] < cycles and v not in entered]
    return chosen


def _components(root: int, tail_of_best: Sequence[int]) -> tuple[list[int], int, int]:
    """One contraction level of Chu–Liu/Edmonds, shared by the plain and the vectorised
    loops: the cycles of the graph of each node's best incoming arc (``tail_of_best``,
    ``-1`` at the root).

    Returns ``(comp, cycles, k)``: the cycles are numbered ``0..cycles-1`` in the
    order they are found, then every other node gets its own number, up to
    ``k - 1``: ``comp[v]`` is ``v``'s node in the contracted graph of ``k`` nodes.
    """
    n = len(tail_of_best)
    comp = [-1] * n
    mark = [-1] * n
    cycles = 0
    for v in range(n):
        x = v
        while x != root and mark[x] == -1 and comp[x] == -1:
            mark[x] = v
            x = tail_of_best[x]
        if x != root and comp[x] == -1 and mark[x] == v:
            y = x
            while True:
                comp[y] = cycles
                y = tail_of_best[y]
                if y == x:
                    break
            cycles += 1
    k = cycles
    for v in range(n):
        if comp[v] == -1:
            comp[v] = k
            k += 1
    return comp, cycles, k


def _free_first(n: int, root: int, edges: Sequence[tuple[int, int, W]]) -> list[int] | None:
    """:func:`min_arborescence` with ``free_first``: the zero-weight reach of ``root``
    joined first, breadth first in edge order, then the rest merged into the root."""
    out: dict[int, list[int]] = {}
    for i, (u, _, w) in enumerate(edges):
        if not w:
            out.setdefault(u, []).append(i)
    parent_arc = {root: -1}
    queue = [root]
    for u in queue:
        for i in out.get(u, ()):
            v = edges[i][1]
            if v not in parent_arc:
                parent_arc[v] = i
                queue.append(v)
    chosen = [i for i in parent_arc.values() if i >= 0]
    if len(parent_arc) == n:
        return chosen
    rest = [v for v in range(n) if v not in parent_arc]
    local = {v: j for j, v in enumerate(rest, start=1)}  # 0: the root and its free reach
    merged: list[tuple[int, int, W]] = []
    origin: list[int] = []
    for i, (u, v, w) in enumerate(edges):
        if v in local:
            merged.append((local.get(u, 0), local[v], w))
            origin.append(i)
    found = min_arborescence(len(rest) + 1, 0, merged)
    if found is None:
        return None
    return chosen + [origin[j] for j in found]


_NON_FINITE = object()
""":func:`_vectorised` met an infinite or undefined weight: the plain loops decide."""


def _vectorised(n: int, root: int, edges: Sequence[tuple[int, int, float]]
                ) -> list[int] | object | None:
    """:func:`min_arborescence` on float weights, each level's edge loops on numpy arrays.

    The same choices as the plain loops: the best edge into a node is the
    first of least weight in edge order (a stable sort by head, weight, then
    index), contracted weights are the same float subtractions, and the
    contracted edges keep their order.  Infinite or NaN weights (which the
    plain loops compare in their own way) return :data:`_NON_FINITE`.
    """
    tails = np.fromiter((u for u, _, _ in edges), dtype=np.int64, count=len(edges))
    heads = np.fromiter((v for _, v, _ in edges), dtype=np.int64, count=len(edges))
    weights = np.fromiter((w for _, _, w in edges), dtype=np.float64, count=len(edges))
    levels: list[tuple[int, int, np.ndarray, list[int], list[int], int, np.ndarray]] = []
    while True:
        if not np.isfinite(weights).all():
            return _NON_FINITE
        candidates = np.flatnonzero((heads != root) & (tails != heads))
        order = candidates[np.lexsort((candidates, weights[candidates], heads[candidates]))]
        ordered_heads = heads[order]
        first = np.r_[True, ordered_heads[1:] != ordered_heads[:-1]] if len(order) else order
        best_arr = np.full(n, -1, dtype=np.int64)
        best_arr[ordered_heads[first]] = order[first]
        best = best_arr.tolist()
        if any(best[v] < 0 for v in range(n) if v != root):
            return None
        comp, cycles, k = _components(root, [int(tails[b]) if b >= 0 else -1 for b in best])
        if cycles == 0:
            chosen = [best[v] for v in range(n) if v != root]
            break
        comp_arr = np.asarray(comp, dtype=np.int64)
        origin = np.flatnonzero((comp_arr[tails] != comp_arr[heads]) & (heads != root))
        levels.append((n, root, heads, best, comp, cycles, origin))
        new_weights = weights[origin] - weights[best_arr[heads[origin]]]
        n, root = k, comp[root]
        tails, heads, weights = comp_arr[tails[origin]], comp_arr[heads[origin]], new_weights
    while levels:
        n, root, level_heads, best, comp, cycles, origin = levels.pop()
        picked = np.asarray(chosen, dtype=np.int64)
        chosen = origin[picked].tolist()
        entered = set(level_heads[origin[picked]].tolist())
        chosen += [best[v] for v in range(n)
                   if v != root and comp[v] < cycles and v not in entered]
    return chosen


def prune(edges: Iterable[tuple[V, V]], keep: Collection[V]) -> tuple[tuple[V, V], ...]:
    """The arborescence ``edges`` without its leaves outside ``keep``, repeatedly.

    What is left is the union of the paths from the root to the nodes of
    ``keep`` it reaches: a Steiner arborescence of ``keep`` (the root always
    stays).  Linear in the edges: each node's children are counted once, and
    dropping a leaf can only make its parent a leaf.  Every tree pricing
    that prunes uses it: the broadcast's Steiner heuristic, the candidate
    trees of ``restrict``, the allreduce's broadcast arborescences.

    Returns
    -------
    tuple of (tail, head)
        The edges kept, sorted.

    Examples
    --------
    >>> prune([("A", "B"), ("B", "C"), ("B", "D"), ("D", "E")], {"C"})
    (('A', 'B'), ('B', 'C'))
    """
    parent = {v: u for u, v in edges}
    children = Counter(parent.values())
    stack = [v for v in parent if v not in keep and not children[v]]
    while stack:
        v = stack.pop()
        u = parent.pop(v)
        children[u] -= 1
        if u in parent and u not in keep and not children[u]:
            stack.append(u)
    return tuple(sorted((u, v) for v, u in parent.items()))
