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

__all__ = ["min_arborescence", "prune"]

W = TypeVar("W", float, Fraction)
V = TypeVar("V", int, str)


def min_arborescence(n: int, root: int, edges: Sequence[tuple[int, int, W]]
                     ) -> list[int] | None:
    """Chu–Liu/Edmonds: a minimum spanning arborescence of ``0..n-1`` rooted at ``root``.

    ``O(n·|edges|)`` with plain lists (networkx's version copies multigraphs
    at every contraction: measured, it took half of a broadcast's column
    generation at n = 80; and it raised "No minimum spanning arborescence"
    on a few reachable graphs with zero weights, which duals produce often).
    Exact on Fractions (the certificate's pricing), fast on floats.
    Iterative: a chain of 2-cycles contracts one level per node, which
    overflowed Python's recursion limit on a 2,000-node platform.

    Returns
    -------
    list of int or None
        Indexes into ``edges`` of the tree's ``n - 1`` arcs; ``None`` when some
        node cannot be reached from ``root``.

    Examples
    --------
    >>> sorted(min_arborescence(3, 0, [(0, 1, 5.0), (0, 2, 1.0), (2, 1, 1.0), (1, 2, 0.0)]))
    [1, 2]
    """
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
        comp = [-1] * n
        mark = [-1] * n
        cycles = 0
        for v in range(n):
            x = v
            while x != root and mark[x] == -1 and comp[x] == -1:
                mark[x] = v
                x = edges[best[x]][0]
            if x != root and comp[x] == -1 and mark[x] == v:
                y = x
                while True:
                    comp[y] = cycles
                    y = edges[best[y]][0]
                    if y == x:
                        break
                cycles += 1
        if cycles == 0:
            chosen = [best[v] for v in range(n) if v != root]
            break
        k = cycles
        for v in range(n):
            if comp[v] == -1:
                comp[v] = k
                k += 1
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
