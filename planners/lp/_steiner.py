"""Cheapest directed Steiner arborescences: the pricing of broadcast and all-gather trees.

A series of broadcasts (or the broadcasts of an all-gather) is a packing of
arborescences rooted at each source that reach every *destination*; the
other nodes (routers, non-participants) are optional relays that store and
forward.  Over any time span of any store-and-forward schedule, each piece
of a message reaches the destinations first along such an arborescence, so
the optimal packing bounds every schedule and the periodic schedule built
from it reaches that bound (Beaumont and Marchal, LIP RR-2004-32, sections 3
and 6; section 5 adds relays as fictitious nodes).  Column generation
prices one tree per source under the master's port duals: the cheapest
arborescence rooted at ``s`` covering ``D`` under nonnegative arc prices.

When every node reachable from ``s`` is a destination this is a minimum
spanning arborescence (Chu–Liu/Edmonds, :mod:`._arborescence`), polynomial.
Otherwise it is the directed Steiner tree problem, NP-hard (it contains set
cover).  networkx offers only approximations of the *undirected* Steiner
tree (``networkx.algorithms.approximation.steiner_tree``), which do not apply
to arborescences on directed links, hence this module:

- **Exact**, by the Dreyfus–Wagner dynamic program generalised to
  arborescences: ``dp[S][v]``, the cheapest arborescence rooted at ``v``
  covering the terminal set ``S``, is ``min_u dist(v, u) + g[S][u]`` with
  ``g[S][u] = min over splits S = S1 ⊎ S2 of dp[S1][u] + dp[S2][u]``
  (``dist`` from one Floyd–Warshall; both minima vectorised with numpy over
  the nodes).  Time ``O(3^k·n + 2^k·n² + n³)`` for ``k = |D|`` and ``n``
  nodes, memory ``O(2^k·n + n²)``.  It runs only when ``3^k·n + 2^k·n² <=
  EXACT_WORK`` (:data:`EXACT_WORK`, 10^6: e.g. 6 destinations among up to
  115 nodes, 8 among up to 50, 9 among up to 28).  Exact prices
  (Fractions) are scaled to integers by the lcm of their denominators and
  searched in doubles when every sum stays below 2^53 (exactly), else in
  Python integers: the search is exact.
- **Beyond that bound, heuristic**: the shortest-path heuristic (grow the tree
  from the root, attaching at each step the nearest uncovered destination
  by a shortest path from any tree node), improved by re-spanning its
  nodes with a minimum arborescence and pruning the leaves that are not
  destinations, until nothing changes.  The result then says it is
  heuristic (``exact`` false) and carries a *lower* bound on the cheapest
  cost, the larger of the longest shortest path from the root to a
  destination and the exact cheapest tree covering the ``k'`` farthest
  destinations (as many as the same bound allows): any tree covering ``D`` covers
  that subset, and prices are nonnegative.  The certificate of the column
  generation uses that lower bound, so its upper bound stays valid.

No priced tree has a leaf that is not a destination (it would only add
cost; zero-price leaves are pruned too).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

import networkx as nx
import numpy as np

from portsim.planners.lp._arborescence import min_arborescence, prune
from portsim.planners.lp._solve import Deadline
from portsim.simulator.platform import NodeId

__all__ = ["EXACT_WORK", "SPREAD", "PricedTree", "TreePricer", "heuristic_note", "improving_trees"]

EXACT_WORK = 1_000_000
"""Exact Steiner search only where ``3^k·n + 2^k·n²`` (``k`` destinations, ``n``
nodes) is at most this."""

SPREAD = 4
"""Trees a source and round of the broadcast and all-gather generations
(``spread`` of :func:`improving_trees`).  One tree a round climbed about
0.27 a round to a broadcast's bound 200 on ``dgx_a100`` 8 servers (718
rounds, 14.7 s of CPU); with 4: 37 rounds, 1.6 s.  All-gather on 8 servers
50.8 -> 10.7 s (its final dual then leaves the heuristic Steiner pricing
uncertified: the islands' cap of :func:`~portsim.planners.lp._broadcast.port_cap`
certifies it), on 16 servers exact 5/3 in 86-100 s (it took 1,371 s); the
broadcast on 16 servers exact 200 in 11-15 s (it stopped at 300 s on the
interval [162, 200]).  ``mi250`` 2 servers, all-gather: 4.5 -> 5.1 s (1,365
more trees).  The same bounds everywhere.  The matchings generation
(:mod:`portsim.planners.lp._matchings`, unidirectional nodes) keeps one: no
gain measured there (``dgx_a100`` 1-2 and ``mi250`` 1 servers, unidirectional,
all under a second either way)."""

W = TypeVar("W", float, Fraction)
Link = tuple[NodeId, NodeId]
Tree = tuple[Link, ...]
_Num = int | float


def _work(k: int, n: int) -> int:
    """The steps of the exact search for ``k`` destinations among ``n`` nodes."""
    return 3 ** k * n + 2 ** k * n * n


def _array(work: Sequence[_Num], n: int) -> tuple[np.ndarray, _Num]:
    """An ``n × n`` array in the dtype that holds ``work`` exactly, filled with a value
    beyond every sum the search forms (``unreached``), and that value.

    Every value the search compares is at most three trees' costs, so at most
    3 · Σ work: integers below 2^53 add exactly in doubles, and ``inf`` marks
    the pairs no path joins.  Larger integers are Python integers, and
    ``unreached`` is the integer 4 · Σ work + 1: ``inf`` plus an integer
    beyond a double's range (10^308, exact prices scaled by the common
    denominator of their fractions) raised ``OverflowError``, and an
    allgather over eight GCDs of an MI250 with every time 10^6 ended in an
    error where the same platform in every other unit is exact.
    """
    if any(isinstance(w, float) for w in work):
        return np.full((n, n), math.inf), math.inf
    beyond = 4 * sum(abs(w) for w in work)
    if beyond < 2 ** 53:
        return np.full((n, n), math.inf), math.inf
    out = np.empty((n, n), dtype=object)
    out.fill(beyond + 1)
    return out, beyond + 1


@dataclass(frozen=True)
class PricedTree(Generic[W]):
    """A priced arborescence of one source.

    Attributes
    ----------
    edges:
        Its links, sorted.
    cost:
        Its price (the sum of its links' prices, in the prices' type).
    lower:
        A lower bound on the cheapest tree's price (``cost`` when ``exact``).
    exact:
        True when the tree is proven cheapest.
    """

    edges: Tree
    cost: W
    lower: W
    exact: bool


class TreePricer:
    """Cheapest arborescences of one source covering its destinations.

    Parameters
    ----------
    arcs:
        The platform's links (those outside ``reach`` or into ``root`` are ignored).
    root:
        The source.
    reach:
        The nodes reachable from ``root`` (``root`` included).
    terminals:
        The destinations (``None``: every node of ``reach``).  When they miss
        a node of ``reach`` the pricer is a Steiner one (:attr:`steiner`).

    Examples
    --------
    >>> p = TreePricer([("S", "A"), ("S", "R"), ("R", "A"), ("R", "B"), ("S", "B")],
    ...                "S", {"S", "A", "B", "R"}, {"A", "B"})
    >>> t = p.best({("S", "A"): 3, ("S", "R"): 1, ("R", "A"): 1, ("R", "B"): 1,
    ...             ("S", "B"): 3}, 0)
    >>> t.edges, t.cost, t.exact
    ((('R', 'A'), ('R', 'B'), ('S', 'R')), 3, True)
    """

    def __init__(self, arcs: Iterable[Link], root: NodeId, reach: Collection[NodeId],
                 terminals: Collection[NodeId] | None = None) -> None:
        order = [root, *sorted(set(reach) - {root})]
        index = {v: i for i, v in enumerate(order)}
        self.root = root
        self.order = order
        self.n = len(order)
        self.arcs = [(u, v) for u, v in arcs if u in index and v in index and v != root]
        self.ends = [(index[u], index[v]) for u, v in self.arcs]
        wanted = set(reach) if terminals is None else set(terminals) & set(reach)
        self.terminals = sorted(index[t] for t in wanted - {root})
        self.steiner = len(self.terminals) < self.n - 1
        """True when some reachable node is not a destination."""
        self.exact_search = (not self.steiner
                             or _work(len(self.terminals), self.n) <= EXACT_WORK)
        """True when :meth:`best` with ``exact`` is proven cheapest."""
        self._split_cache: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.out: list[list[int]] = [[] for _ in range(self.n)]
        for j, (a, _) in enumerate(self.ends):
            self.out[a].append(j)
        self.heads: list[list[tuple[int, int]]] = [[(j, self.ends[j][1]) for j in out]
                                                   for out in self.out]
        """Per node, its out-arcs with their heads (:meth:`_dijkstra`'s inner loop)."""

    def initial(self) -> Tree:
        """A first column: a breadth-first tree, its non-destination leaves pruned."""
        g = nx.DiGraph()
        g.add_nodes_from(sorted(self.order))
        g.add_edges_from(self.arcs)
        position = {e: j for j, e in enumerate(self.arcs)}
        return self._edges(self._prune([position[e] for e in nx.bfs_tree(g, self.root).edges]))

    def fanned(self) -> list[Tree]:
        """First columns fanned out of the root: for each node ``k`` the root feeds,
        the arc to ``k`` then a breadth-first tree from ``k`` not through the root,
        its non-destination leaves pruned (those that reach every destination).

        On a complete ``multiport`` platform these are the optimal packing: each
        of the root's links carries one tree.
        """
        g = nx.DiGraph()
        g.add_nodes_from(sorted(self.order))
        g.add_edges_from(self.arcs)
        position = {e: j for j, e in enumerate(self.arcs)}
        rest = g.copy()
        rest.remove_node(self.root)
        wanted = {self.order[t] for t in self.terminals}
        out = []
        for k in sorted(g.successors(self.root), key=str):
            arcs = [(self.root, k), *nx.bfs_tree(rest, k).edges]
            if wanted <= {v for _, v in arcs}:
                out.append(self._edges(self._prune([position[e] for e in arcs])))
        return out

    def best(self, price: Mapping[Link, W], zero: W, *, exact: bool = True
             ) -> PricedTree[W] | None:
        """The cheapest tree under ``price`` (``zero`` starts the sums), or ``None``.

        ``None`` when some destination is out of reach.  A Steiner pricer runs
        the exact search when ``exact`` and :attr:`exact_search`; else the
        heuristic, whose result carries ``exact`` false and a lower bound
        (with ``exact`` false only the cheap one, the longest shortest path).
        """
        weights = [price[e] for e in self.arcs]
        if not self.steiner:
            if isinstance(zero, Fraction):
                # Exact on integers over the common denominator: the same comparisons
                # and differences, so the same tree, without a gcd per operation
                # (Fractions took 295 of 300 s of an allgather bound on 64 ranks).
                fractions = [Fraction(w) for w in weights]
                scale = math.lcm(*(w.denominator for w in fractions))
                scaled = [(a, b, w.numerator * (scale // w.denominator))
                          for (a, b), w in zip(self.ends, fractions, strict=True)]
                chosen = min_arborescence(self.n, 0, scaled)
            else:
                chosen = min_arborescence(  # type: ignore[type-var]  # floats
                    self.n, 0, [(a, b, w) for (a, b), w in zip(self.ends, weights, strict=True)])
            if chosen is None:
                return None
            total = zero
            for j in chosen:
                total += weights[j]
            return PricedTree(self._edges(chosen), total, total, True)
        scale = 1
        if isinstance(zero, Fraction):
            for w in weights:
                d = Fraction(w).denominator
                scale = scale * d // math.gcd(scale, d)
        work: list[_Num] = ([int(w * scale) for w in weights] if isinstance(zero, Fraction)
                            else [float(w) for w in weights])
        if exact and self.exact_search:
            found = self._dreyfus_wagner(work, self.terminals)
            if found is None:
                return None
            cost = self._cost(found, weights, zero)
            return PricedTree(self._edges(found), cost, cost, True)
        heuristic = self._shortest_path_heuristic(work)
        if heuristic is None:
            return None
        chosen, farthest = heuristic
        cost = self._cost(chosen, weights, zero)
        bound: _Num = farthest
        if exact:  # the exact tree of the farthest destinations bounds every tree below
            dist = self._dijkstra(work, [0])[0]
            by_distance = sorted(self.terminals, key=lambda t: (-dist[t], t))
            k = 0
            while k < len(by_distance) and _work(k + 1, self.n) <= EXACT_WORK:
                k += 1
            subset = self._dreyfus_wagner(work, sorted(by_distance[:k]))
            if subset is not None:
                sub_cost = sum((work[j] for j in subset), 0)
                covered = {self.ends[j][1] for j in subset}
                if covered >= set(self.terminals) and sub_cost <= sum(work[j] for j in chosen):
                    chosen, cost = subset, self._cost(subset, weights, zero)
                bound = max(bound, sub_cost)
        lower = self._unscale(bound, scale, zero)
        return PricedTree(self._edges(chosen), cost, lower, lower >= cost)

    # -- internals ---------------------------------------------------------------------

    def _edges(self, chosen: Iterable[int]) -> Tree:
        return tuple(sorted(self.arcs[j] for j in chosen))

    @staticmethod
    def _cost(chosen: Iterable[int], weights: Sequence[W], zero: W) -> W:
        total = zero
        for j in sorted(chosen):
            total += weights[j]
        return total

    @staticmethod
    def _unscale(value: _Num, scale: int, zero: W) -> W:
        if isinstance(zero, Fraction):
            return Fraction(int(value), scale)  # type: ignore[return-value]
        return float(value)  # type: ignore[return-value]

    def _dijkstra(self, work: Sequence[_Num], start: Iterable[int]
                  ) -> tuple[list[_Num], list[int]]:
        """Distances from the nodes ``start`` and the last arc of a cheapest path."""
        dist: list[_Num] = [math.inf] * self.n
        for v in start:
            dist[v] = 0
        via = [-1] * self.n
        heap = [(dist[v], v) for v in range(self.n) if dist[v] == 0]
        heapq.heapify(heap)
        pop, push, heads = heapq.heappop, heapq.heappush, self.heads
        while heap:
            d, u = pop(heap)
            if d > dist[u]:
                continue
            for j, w in heads[u]:
                nd = d + work[j]
                if nd < dist[w]:
                    dist[w] = nd
                    via[w] = j
                    push(heap, (nd, w))
        return dist, via

    def _layers(self, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Terminal sets (bit masks) by size from 2 up, each with its splits
        ``S1 | S2``, ``S1`` holding the lowest terminal (each split once): per
        size, the masks ``(L,)`` and the two parts ``(L, 2^(size-1) - 1)``."""
        if k not in self._split_cache:
            by_size: dict[int, list[int]] = {}
            for mask in range(1, 1 << k):
                by_size.setdefault(mask.bit_count(), []).append(mask)
            layers = []
            for size in range(2, k + 1):
                masks = by_size[size]
                parts = []
                for mask in masks:
                    low = mask & -mask
                    subs = []
                    sub = (mask - 1) & mask
                    while sub:
                        if sub & low:
                            subs.append(sub)
                        sub = (sub - 1) & mask
                    parts.append(subs)
                one = np.array(parts, dtype=np.int64)
                layers.append((np.array(masks, dtype=np.int64), one,
                               np.array(masks, dtype=np.int64)[:, np.newaxis] ^ one))
            self._split_cache[k] = layers
        return self._split_cache[k]

    def _all_pairs(self, work: Sequence[_Num]) -> tuple[np.ndarray, np.ndarray, _Num]:
        """Floyd–Warshall: distances and the first arc of a cheapest path, every pair,
        and the distance of a pair no path joins (:func:`_array`)."""
        n = self.n
        dist, unreached = _array(work, n)
        first = np.full((n, n), -1, dtype=np.int64)
        for j, (a, b) in enumerate(self.ends):
            if work[j] < dist[a, b]:
                dist[a, b] = work[j]
                first[a, b] = j
        for i in range(n):
            dist[i, i] = 0
        for m in range(n):
            through = dist[:, m:m + 1] + dist[m:m + 1, :]
            better = np.asarray(through < dist, dtype=bool)
            dist = np.where(better, through, dist)
            first = np.where(better, first[:, m:m + 1], first)
        return dist, first, unreached

    def _dreyfus_wagner(self, work: Sequence[_Num], terminals: Sequence[int]
                        ) -> list[int] | None:
        """Arc indexes of a cheapest arborescence from node 0 covering ``terminals``.

        ``dp[S][v] = min_u dist(v, u) + g[S][u]``, ``g[S][u]`` the best split
        of ``S`` at ``u`` (0 at the terminal itself when ``S`` is a single
        one), vectorised with numpy over the nodes (floats, 64-bit integers
        when the scaled exact prices fit, Python integers otherwise).
        """
        k = len(terminals)
        if k == 0:
            return []
        n = self.n
        dist, first, unreached = self._all_pairs(work)
        dp = np.empty((1 << k, n), dtype=dist.dtype)
        via = np.zeros((1 << k, n), dtype=np.int64)
        cut = np.zeros((1 << k, n), dtype=np.int64)
        # One terminal t: a cheapest path from v to t.
        singles = np.array([1 << i for i in range(k)], dtype=np.int64)
        dp[singles] = dist[:, terminals].T
        via[singles] = np.array(terminals, dtype=np.int64)[:, np.newaxis]
        for masks, subs, others in self._layers(k):  # by size: the parts are done
            options = dp[subs] + dp[others]  # (L, splits, n)
            best = np.argmin(options, axis=1)  # (L, n)
            g = np.take_along_axis(options, best[:, np.newaxis, :], axis=1)[:, 0, :]
            cut[masks] = np.take_along_axis(subs, best, axis=1)
            closure = dist[np.newaxis, :, :] + g[:, np.newaxis, :]  # (L, v, u)
            u = np.argmin(closure, axis=2)
            dp[masks] = np.take_along_axis(closure, u[:, :, np.newaxis], axis=2)[:, :, 0]
            via[masks] = u
        full = (1 << k) - 1
        if not dp[full, 0] < unreached:
            return None
        used: set[int] = set()
        stack = [(full, 0)]
        while stack:
            s, v = stack.pop()
            u = int(via[s, v])
            while v != u:
                j = int(first[v, u])
                used.add(j)
                v = self.ends[j][1]
            sub = int(cut[s, u])
            if sub:
                stack += [(sub, u), (s ^ sub, u)]
        return self._respan(sorted(used), work)

    def _respan(self, arcs: Sequence[int], work: Sequence[_Num]) -> list[int]:
        """A minimum arborescence over ``arcs`` spanning their nodes, then pruned.

        Never dearer than ``arcs`` (they contain an arborescence from the root
        reaching every node they touch).
        """
        nodes = sorted({0} | {self.ends[j][1] for j in arcs} | {self.ends[j][0] for j in arcs})
        local = {v: i for i, v in enumerate(nodes)}
        chosen = min_arborescence(len(nodes), local[0], [  # type: ignore[type-var]
            (local[self.ends[j][0]], local[self.ends[j][1]], work[j]) for j in arcs])
        assert chosen is not None, "the arcs reach every node they touch"
        return self._prune([arcs[i] for i in chosen])

    def _prune(self, chosen: Sequence[int]) -> list[int]:
        """Drop leaves that are not destinations, repeatedly (:func:`prune` on the arcs'
        ends, one arc per pair of nodes)."""
        arc = {self.ends[j]: j for j in chosen}
        return sorted(arc[ends] for ends in prune(arc, set(self.terminals)))

    def _shortest_path_heuristic(self, work: Sequence[_Num]
                                 ) -> tuple[list[int], _Num] | None:
        """The shortest-path heuristic, re-spanned and pruned until stable.

        Returns the tree's arc indexes and the longest shortest path from the
        root to a destination (a lower bound on every tree), or ``None``.
        """
        inf = math.inf
        in_tree = {0}
        chosen: set[int] = set()
        left = set(self.terminals)
        farthest: _Num = 0
        first = True
        while left:
            dist, via = self._dijkstra(work, sorted(in_tree))
            if first:
                farthest = max(dist[t] for t in left)
                if farthest == inf:
                    return None
                first = False
            t = min(left, key=lambda x: (dist[x], x))
            v = t
            while v not in in_tree:
                j = via[v]
                chosen.add(j)
                in_tree.add(v)
                v = self.ends[j][0]
            left -= in_tree
        tree = self._prune(sorted(chosen))
        total = sum((work[j] for j in tree), 0)
        while True:
            nodes = {0} | {self.ends[j][1] for j in tree}
            induced = [j for j, (a, b) in enumerate(self.ends) if a in nodes and b in nodes]
            again = self._respan(induced, work)
            cost = sum((work[j] for j in again), 0)
            if cost >= total:
                return tree, farthest
            tree, total = again, cost


def improving_trees(pricers: Sequence[TreePricer], price: Mapping[Link, float],
                    duals: Sequence[float], seen: Collection[tuple[int, Tree]],
                    tolerance: float, *, deadline: Deadline | None = None,
                    limit: int | None = None, start: int = 0, spread: int = 1
                    ) -> list[tuple[int, Tree]]:
    """The new columns of one float pricing round: trees cheaper than their source's dual.

    Every pricer first runs fast (spanning pricers are exact anyway, Steiner
    pricers their heuristic); only when no source gains a new column that way
    do the Steiner pricers within the exact search's bound run it, so the
    float loop stops only where the exact pricing finds nothing either (the
    others stay heuristic; the certificate then uses their lower bounds).
    ``deadline`` is checked before every source's pricing (a Steiner search on
    a large fabric may take seconds).

    Partial pricing: with ``limit``, the sources are priced in turn from
    ``start`` (cyclically) and the fast pass ends once ``limit`` trees are
    found; a round that finds fewer has priced every source, so an empty
    answer still means that no source improves.

    Several trees a source (``spread`` > 1): after a source's cheapest tree
    is found, it is priced again up to ``spread - 1`` times, each time with
    the links of the trees just found dearer by the source's dual spread over
    their links (``dual / |tree|`` a use), so that the next tree takes other
    links; each tree whose price under the *master's* prices is still below
    the source's dual joins.  These are improving columns like the first, so
    neither the stopping rule nor the bound changes; only fewer rounds are
    needed where one tree a round climbed slowly (:data:`SPREAD`).
    """
    turn = [(start + k) % len(pricers) for k in range(len(pricers))]
    for exact in (False, True):
        found: list[tuple[int, Tree]] = []
        for i in turn:
            if limit is not None and not exact and len(found) >= limit:
                break
            pricer = pricers[i]
            if exact and not (pricer.steiner and pricer.exact_search):
                continue
            if deadline is not None:
                deadline.check("column generation (Steiner pricing)")
            tree = pricer.best(price, 0.0, exact=exact)
            if tree is not None and tree.cost < duals[i] - tolerance \
                    and (i, tree.edges) not in seen:
                found.append((i, tree.edges))
        if found:
            return _spread(pricers, price, duals, seen, tolerance, found, spread,
                           deadline=deadline, exact=exact)
    return []


def _spread(pricers: Sequence[TreePricer], price: Mapping[Link, float], duals: Sequence[float],
            seen: Collection[tuple[int, Tree]], tolerance: float,
            found: list[tuple[int, Tree]], spread: int, *, deadline: Deadline | None,
            exact: bool) -> list[tuple[int, Tree]]:
    """``found`` and up to ``spread - 1`` more improving trees of each of its sources.

    See :func:`improving_trees`: the links of each tree are made dearer by
    ``dual / |tree|`` before the next pricing of the same source.
    """
    out = list(found)
    taken = set(found)
    for i, tree in found:
        work = dict(price)
        last = tree
        for _ in range(spread - 1):
            penalty = duals[i] / max(1, len(last))
            for link in last:
                work[link] += penalty
            if deadline is not None:
                deadline.check("column generation (Steiner pricing)")
            again = pricers[i].best(work, 0.0, exact=exact)
            if again is None:
                break
            column = (i, again.edges)
            if column not in taken and column not in seen \
                    and sum(price[link] for link in again.edges) < duals[i] - tolerance:
                out.append(column)
                taken.add(column)
            last = again.edges
    return out


def heuristic_note(sources: Iterable[NodeId]) -> str:
    """The note of a certificate whose Steiner pricing stayed heuristic for ``sources``."""
    return (f"Steiner trees of {', '.join(map(str, sources))}: cheapest tree not proven "
            f"(too many destinations for the exact search, {EXACT_WORK:,} steps); the "
            f"certified upper bound uses a lower bound on its price")
