"""Start-up of the reduce: a makespan lower bound and shallow trees that keep the optimum.

The ``lp`` reduce is a periodic schedule: instance ``q`` of a period-``T``
schedule with ``n`` instances a period starts no earlier than ``⌊q/n⌋·T``
and completes no earlier than that plus the least makespan of one reduce,
so the share of ``throughput × horizon`` that any such schedule completes is
bounded (:func:`periodic_share_ceiling`).  :func:`reduce_makespan_bound` is
that least makespan's lower bound ``M`` (a postal-model argument, Bar-Noy
and Kipnis's broadcast recursion read backwards for a reduce: see its
notes); issue 14 item 8 asks for 0.9 of the bound within 100 periods, and
on ``fat_tree`` k=8 at period 1 this ceiling is 0.87.

:func:`interleaved_trees` builds the seed families that reach the
single-node bound :func:`~portsim.planners.lp._ssr.reduce_cap` with shallow
trees: ``q`` interval trees whose internal nodes are the participants of
one residue class mod ``q`` (at most ``q`` children each), so that over the
``q`` trees taken ``1/q`` of the time every participant receives at most
one message, makes at most one reduction and sends one message per
instance, as a chain does, but at depth ``log_q N`` instead of ``N``.
:func:`aligned_trees` keeps those classes but chooses each interval's root
and cut by dynamic programming, for the earliest estimated result at the
target, so that the cuts fall where the platform's gaps are (on a fat tree,
at the switches): ``fat_tree`` k=4, makespans 25 and 28 against 29 and 30;
its family of three trees (21, 24 and 27) is the one the reduce keeps there.
:func:`tree_makespan` is the makespan of one tree alone (list scheduling,
one transfer per link, one reduction per CPU): the reduce column generation
(:mod:`portsim.planners.lp._reduce_columns`) chooses, among the tree mixes
at the optimum, one of least weighted makespan.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from portsim.planners.lp._ssr import Task
from portsim.planners.lp._tree_pricing import TreeSpace
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["aligned_trees", "interleaved_trees", "periodic_share_ceiling", "reduce_makespan_bound",
           "tree_makespan"]


def _transfer_floor(platform: Platform, size: Fraction) -> dict[tuple[NodeId, NodeId], Fraction]:
    """Link -> the time its bandwidth needs for a whole message (latency left out: parts pay it
    each, so it only adds)."""
    return {(u, v): (platform.link(u, v).c - platform.link(u, v).latency) * size
            for u, v in platform.graph.edges}


def reduce_makespan_bound(platform: Platform, operation: Operation) -> Fraction | None:
    """``M``: no schedule of one reduce of ``operation`` completes before time ``M``.

    Parameters
    ----------
    platform, operation:
        The platform and a resolved reduce (its ``participants`` and ``size``).

    Returns
    -------
    Fraction or None
        The least ``t`` with ``G(t) >= N`` (``N`` participants, ``G`` below);
        ``None`` for one participant, or when a processor reduces in zero
        time or a message can move in zero time (no bound then).

    Notes
    -----
    Let ``w`` be the least compute time of a processor and ``δ`` the least
    time in which a processor ``v`` can come to hold a whole item that
    another processor ``u`` holds (below).  Let ``F(t)`` be the most
    participants' values that an item held by some node at time ``t`` can
    cover, in any schedule.  Then ``F(t) <= G(t) = 1 + Σ_{i >= 1, t - iw - δ
    >= 0} G(t - iw - δ)``, so the target holds ``v[0,N-1]`` no earlier than
    ``M = min {t : G(t) >= N}``.

    Proof, by induction on ``t``.  An item ``P`` held by ``h`` at time ``t``
    was either received, or computed on ``h`` by a tree of reductions on
    ``h`` whose leaves are ``h``'s own value and items ``h`` received.  A
    received item was held (made or owned) by a processor ``p != h`` at a
    time ``τ`` with ``τ + δ <= t``, so it covers at most ``F(t - δ)``.  In
    the computed case ``h`` runs one reduction at a time, each lasting at
    least ``w``, and a tree with ``L`` leaves has ``L - 1`` reductions: when
    the ``j``-th last one starts (no later than ``t - jw``), ``j + 1`` items
    remain to be combined, so at most ``j - 1`` leaves arrive after ``t - jw``:
    the ``i``-th latest leaf arrives by ``t - iw``.  A received leaf arriving
    by ``s`` covers at most ``F(s - δ)`` (and none arrives before ``δ``); the
    own value covers one, at most as much as the received leaf whose place
    it takes.  So ``|P| <= 1 + Σ_i F(t - iw - δ)``, and ``F`` is
    non-decreasing.  The argument holds under every port model: it uses the
    CPUs and ``δ`` only.

    ``δ``: a node forwards an item only once it holds all of it (SPEC,
    "part"), so let ``E(x)`` be the earliest time node ``x`` holds an item
    that ``u`` holds at 0.  The first node other than ``u`` to hold it got
    every part from ``u`` over one out-link of ``u``: ``E(x) >= m_u``, the
    least ``size / bandwidth`` of ``u``'s out-links, for every ``x != u``.
    And ``x`` receives parts only from nodes that already hold the item, over
    its in-links, which together need ``h(x) = size / Σ_in bandwidth``:
    ``E(x) >= min_y E(y) + h(x)`` over ``x``'s in-neighbours ``y``.  ``δ`` is
    the least ``E(v)`` over processors ``u != v`` (a Dijkstra from each
    ``u``).  Latencies only add (every part pays one) and are left out.

    On a ``fat_tree`` (hosts with one link up and one down, ``c = 1``,
    compute 1: ``w = 1``, ``δ = 2``) ``G`` is 1, 1, 1, 2, 3, 4, 6, 9, 13, 19,
    28, 41, 60, 88, 129 at ``t = 0..14``: ``M = 9`` for 16 hosts (k=4) and
    ``M = 14`` for 128 (k=8).

    Examples
    --------
    Three hosts on one switch (``δ = 2``, ``w = 1``): ``G(4) = 3``.

    >>> from portsim.simulator import Operation, OperationKind
    >>> from portsim.simulator.platform import Platform
    >>> links = [(a, b, 1) for p in ("P0", "P1", "P2") for a, b in ((p, "S"), ("S", p))]
    >>> star = Platform.build({"P0": 1, "P1": 1, "P2": 1, "S": 0}, links, "multiport",
    ...                       routers={"S"})
    >>> reduce_makespan_bound(star, Operation(OperationKind.REDUCE, target="P0").resolve(star))
    Fraction(4, 1)
    """
    parts = len(operation.participants)
    if parts < 2:
        return None
    processors = list(platform.processors)
    w = min((platform.compute_time(v) for v in processors), default=Fraction(0))
    if w <= 0:
        return None
    floor = _transfer_floor(platform, Fraction(operation.size))
    graph = platform.graph
    if any(t <= 0 for t in floor.values()):
        return None
    into: dict[NodeId, Fraction] = {}   # h(x): the whole item over all of x's in-links
    for x in graph.nodes:
        rate = sum((1 / floor[y, x] for y in graph.predecessors(x)), Fraction(0))
        if rate > 0:
            into[x] = 1 / rate
    delta: Fraction | None = None
    targets = set(processors)
    for u in processors:
        first = min((floor[u, x] for x in graph.successors(u)), default=None)
        if first is None:
            continue
        # E(x) >= max(first, min over in-neighbours y of E(y) + h(x)): Dijkstra.
        held: dict[NodeId, Fraction] = {u: Fraction(0)}
        heap: list[tuple[Fraction, int, NodeId]] = [(Fraction(0), 0, u)]
        done: set[NodeId] = set()
        count = 1
        while heap:
            e, _, y = heapq.heappop(heap)
            if y in done:
                continue
            done.add(y)
            if y != u and y in targets:
                if delta is None or e < delta:
                    delta = e
                break  # the nearest other processor from u
            for x in graph.successors(y):
                if x == u or x in done:
                    continue
                ex = max(first, e + into[x])
                if x not in held or ex < held[x]:
                    held[x] = ex
                    heapq.heappush(heap, (ex, count, x))
                    count += 1
    if delta is None or delta <= 0:
        return None
    return _least_time(parts, w, delta)


def _least_time(parts: int, w: Fraction, delta: Fraction) -> Fraction:
    """The least ``t`` with ``G(t) >= parts`` (:func:`reduce_makespan_bound`).

    ``G`` is a step function that changes only at ``a·w + b·δ`` (``a >= b >=
    0``): every term ``t - iw - δ`` crosses 0 or a change of ``G`` there.
    Those points are visited in increasing order; ``G(x)`` between two of
    them is the value at the last one.
    """
    times: list[Fraction] = []
    values: list[int] = []
    heap: list[tuple[Fraction, int, int]] = [(Fraction(0), 0, 0)]
    visited: set[Fraction] = set()
    while heap:
        t, a, b = heapq.heappop(heap)
        heapq.heappush(heap, (t + w, a + 1, b))
        heapq.heappush(heap, (t + w + delta, a + 1, b + 1))
        if t in visited:
            continue
        visited.add(t)
        total = 1
        i = 1
        while t - i * w - delta >= 0:
            x = t - i * w - delta
            total += values[bisect.bisect_right(times, x) - 1]
            i += 1
        if total >= parts:
            return t
        times.append(t)
        values.append(total)
    raise AssertionError("unreachable: the heap never empties")  # pragma: no cover


def periodic_share_ceiling(bound: Fraction, makespan: Fraction, period: Fraction,
                           instances: int, periods: int) -> Fraction:
    """The most a periodic schedule completes in ``periods`` periods, as a share of the bound.

    Instance ``q`` (``n = instances`` a period) has no event before period
    ``⌊q/n⌋`` (lags are ``>= 0``) and takes at least ``makespan``
    (:func:`reduce_makespan_bound`), so at most ``n·(⌊periods - makespan/T⌋
    + 1)`` complete by ``periods·T``; the share is that over ``bound ·
    periods · T``.  At period 1 and one instance a period: ``(periods + 1 -
    M) / periods``.
    """
    horizon = period * periods
    if makespan > horizon:
        return Fraction(0)
    done = instances * (math.floor(periods - makespan / period) + 1)
    return min(Fraction(1), Fraction(done) / (bound * horizon))


def tree_makespan(space: TreeSpace, tasks: Sequence[Task]) -> Fraction:
    """Makespan of one instance of a reduction tree run alone, by list scheduling.

    Every task starts as soon as its input is held and its resource is free
    (a link carries one transfer at a time, a CPU makes one reduction at a
    time), the earliest-startable first.  An estimate of the tree's latency
    (an upper bound on its least makespan, since it is a schedule), the
    measure :func:`~portsim.planners.lp._reduce_columns.reduction_trees`
    minimises among optimal tree mixes.
    """
    nodes = space.index
    # Integer ticks of one common denominator: exact, and fast.
    scale = 1
    for f in [*space.busy, *(w for w in space.compute if w is not None)]:
        scale = scale * f.denominator // math.gcd(scale, f.denominator)
    busy = {e: int(b * scale) for e, b in zip(space.links, space.busy, strict=True)}
    cpu = [0 if w is None else int(w * scale) for w in space.compute]
    held: dict[tuple[int, int, int], int] = {}
    for k, o in enumerate(space.owners):
        held[o, k, k] = 0
    waiting: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    needs: list[list[tuple[int, int, int]]] = []
    for j, task in enumerate(tasks):
        if task[0] == "send":
            need = [(nodes[task[1]], task[3], task[4])]
        else:
            i = nodes[task[1]]
            need = [(i, task[2], task[3]), (i, task[3] + 1, task[4])]
        needs.append(need)
        for key in need:
            waiting[key].append(j)
    free: dict[object, int] = defaultdict(int)
    missing = [sum(1 for key in need if key not in held) for need in needs]
    heap: list[tuple[int, int]] = []

    def ready_at(j: int) -> int:
        return max(held[key] for key in needs[j])

    for j in range(len(tasks)):
        if missing[j] == 0:
            heapq.heappush(heap, (ready_at(j), j))
    end = 0
    while heap:
        key_time, j = heapq.heappop(heap)
        task = tasks[j]
        if task[0] == "send":
            resource: object = (nodes[task[1]], nodes[task[2]])
            length = busy[nodes[task[1]], nodes[task[2]]]
            made = (nodes[task[2]], task[3], task[4])
        else:
            i = nodes[task[1]]
            resource = i
            length = cpu[i]
            made = (i, task[2], task[4])
        start = max(key_time, free[resource])
        if start > key_time:
            heapq.heappush(heap, (start, j))  # its resource got busy: try again later
            continue
        finish = start + length
        free[resource] = finish
        end = max(end, finish)
        if made not in held:
            held[made] = finish
            for other in waiting.get(made, ()):
                missing[other] -= 1
                if missing[other] == 0:
                    heapq.heappush(heap, (ready_at(other), other))
        elif finish < held[made]:
            held[made] = finish
    return Fraction(end, scale)


Load = dict[tuple[int, int], float]
"""Busy time per link (node indexes) of the trees of a family laid so far."""

Route = Callable[[int, int, Load], "list[int] | None"]
"""``route(a, b, load)``: the nodes of a path from ``a`` to ``b`` (``None``: none)."""


@dataclass(frozen=True)
class _Sender:
    """Appends to ``tasks`` the hop-by-hop sends of ``v[k,m]`` from node ``a`` to ``b`` on
    ``route``'s path, charging each link's busy time to ``load``; ``False`` if no path."""

    nodes: Sequence[NodeId]
    route: Route
    busy: dict[tuple[int, int], Fraction]
    load: Load
    tasks: list[Task]

    def __call__(self, a: int, b: int, k: int, m: int) -> bool:
        hops = self.route(a, b, self.load)
        if hops is None:
            return False
        for u, v in reversed(list(itertools.pairwise(hops))):
            self.tasks.append(("send", self.nodes[u], self.nodes[v], k, m))
            self.load[u, v] += float(self.busy[u, v])
        return True


def _router(space: TreeSpace) -> Route:
    """Route messages on fewest-time paths of least (largest, total) load so far."""
    n = len(space.nodes)
    rows = [u for u, _ in space.links]
    cols = [v for _, v in space.links]
    weights = [float(b) for b in space.busy]
    graph = csr_matrix((weights, (rows, cols)), shape=(n, n))
    out: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for (u, v), b in zip(space.links, weights, strict=True):
        out[u].append((v, b))
    owners = sorted(set(space.owners) | {space.target})
    # dist[i, x]: least time from x to owners[i] (the reversed graph's distances);
    # after[i, x]: the next node from x on one such path
    dist, after = dijkstra(graph.T.tocsr(), indices=owners, return_predecessors=True)
    row = {o: i for i, o in enumerate(owners)}

    def route(a: int, b: int, load: dict[tuple[int, int], float]) -> list[int] | None:
        to_b = dist[row[b]]
        if not math.isfinite(to_b[a]):
            return None

        def tight(x: int) -> list[int]:
            return [v for v, w in out[x]
                    if abs(w + to_b[v] - to_b[x]) <= 1e-9 * max(1.0, to_b[x])]

        # The tight links from a (every fewest-time path to b), then, nearest
        # b first, the path of least (largest load, total load) from each node.
        seen, order = {a}, [a]
        for x in order:
            for v in tight(x):
                if v not in seen:
                    seen.add(v)
                    order.append(v)
        best: dict[int, tuple[float, float, int]] = {b: (0.0, 0.0, -1)}
        for x in sorted(seen, key=lambda x: to_b[x]):
            if x == b:
                continue
            options = [(max(load[x, v], best[v][0]), load[x, v] + best[v][1], v)
                       for v in tight(x) if v in best]
            if options:
                best[x] = min(options)
        hops = [a]
        while hops[-1] != b:
            if hops[-1] not in best:
                # float distances that no longer tell a link of 10^-13 from none
                # (30000 + 6·10^-6 + 7·10^-13): the fewest-time path Dijkstra kept
                hops = [a]
                while hops[-1] != b:
                    hops.append(int(after[row[b]][hops[-1]]))
                return hops
            hops.append(best[hops[-1]][2])
        return hops

    return route


def interleaved_trees(space: TreeSpace, arities: Sequence[int]) -> list[list[list[Task]]]:
    """For each ``q`` of ``arities``, a family of ``q`` interval trees with complementary
    internal nodes (the families, each a list of trees).

    The participants other than the target, in order, are cut into at
    most two intervals (left and right of the target); in tree ``j`` every
    internal node is a participant whose position among them is ``j`` mod
    ``q``, with at most ``q`` children, each child the subtree of a
    sub-interval of one position or of at least ``q`` (which holds every
    residue).  Each internal node ``r`` of interval ``[a, b]`` receives its
    children's results, combines them with ``v_r`` in order and sends
    ``v[a,b]`` to its parent; the target combines ``v_target`` with what it
    receives.  Over the ``q`` trees (``1/q`` each) every participant then
    sends one message per instance and receives and reduces at most one on
    average, like a chain, at depth about ``log_q N``.  Messages follow
    fewest-time paths, among them the one whose most loaded link (then whose
    total load) by the family so far is least, so that the ``q`` trees
    together spread over a fat tree's parallel links.  Tasks are in :func:`cheapest_tree`'s order.
    Trees needing a reduction on a node that cannot compute are left out.
    """
    owners, _nodes = space.owners, space.nodes
    parts = len(owners)
    t0 = owners.index(space.target) if space.target in owners else -1
    others = [k for k in range(parts) if k != t0]
    if t0 < 0 or not others:
        return []
    route = _router(space)
    out: list[list[list[Task]]] = []
    for q in sorted(set(arities)):
        if q < 2 or q > len(others):
            continue
        load: dict[tuple[int, int], float] = defaultdict(float)
        used: dict[int, int] = defaultdict(int)   # position -> children in the family
        family = [_interleaved(space, others, t0, q, j, route, load, used) for j in range(q)]
        if all(tree is not None for tree in family):
            out.append([tree for tree in family if tree is not None])
    return out


def _interleaved(space: TreeSpace, others: list[int], t0: int, q: int, j: int,
                 route: Route, load: Load, used: dict[int, int]) -> list[Task] | None:
    """Tree ``j`` of the family of arity ``q`` (:func:`interleaved_trees`)."""
    owners, nodes = space.owners, space.nodes
    busy = dict(zip(space.links, space.busy, strict=True))
    tasks: list[Task] = []

    send = _Sender(nodes, route, busy, load, tasks)

    def groups(lo: int, hi: int, count: int) -> list[tuple[int, int]]:
        """``[lo, hi]`` (positions) cut into at most ``count`` even pieces, each of one
        position or of at least ``q`` (which then holds a position of residue ``j``)."""
        size = hi - lo + 1
        if size <= 0:
            return []
        if size <= count:
            return [(p, p) for p in range(lo, hi + 1)]
        pieces = min(count, size // q) or count  # < q left: as even as can be
        cuts: list[tuple[int, int]] = []
        start = lo
        for p in range(pieces):
            share = (size - (start - lo)) // (pieces - p)
            cuts.append((start, start + share - 1))
            start += share
        return cuts

    def root(lo: int, hi: int) -> int:
        """The position making ``v`` of ``[lo, hi]``: residue ``j`` nearest the middle."""
        if lo == hi:
            return lo
        mid = (lo + hi) / 2
        candidates = [p for p in range(lo, hi + 1) if p % q == j]
        if candidates:
            return min(candidates, key=lambda p: (abs(p - mid), p))
        # No residue j here (fewer than q positions): the least busy so far.
        return min(range(lo, hi + 1), key=lambda p: (used[p], abs(p - mid), p))

    def build(lo: int, hi: int, into: int) -> bool:
        """Tasks making ``v`` of positions ``[lo, hi]`` and sending it to node ``into``."""
        r = root(lo, hi)
        maker = owners[others[r]]
        if maker != into and not send(maker, into, others[lo], others[hi]):
            return False
        if lo == hi:
            return True
        if space.compute[maker] is None:
            return False
        left_n, right_n = r - lo, hi - r
        # At most q children over the family's q trees in all (its own
        # residue's tree and the trees it stood in for another residue).
        room = max(2 if left_n and right_n else 1, q - used[r])
        left_c = 0 if left_n == 0 else max(1, min(left_n, round(room * left_n
                                                                 / (left_n + right_n))))
        right_c = 0 if right_n == 0 else max(1, min(right_n, room - left_c))
        if right_n:
            left_c = min(left_c, room - right_c)
        pieces = [*groups(lo, r - 1, left_c), (r, r), *groups(r + 1, hi, right_c)]
        used[r] += len(pieces) - 1
        # v[lo..hi] = ((p1 ⊕ p2) ⊕ ...) on the maker, left to right; FIND_TREE
        # order: each reduction before those making its inputs, the last first.
        for idx in range(len(pieces) - 1, 0, -1):
            tasks.append(("cons", nodes[maker], others[lo], others[pieces[idx - 1][1]],
                          others[pieces[idx][1]]))
            if pieces[idx] != (r, r) and not build(*pieces[idx], maker):
                return False
        return pieces[0] == (r, r) or build(*pieces[0], maker)

    target = space.target
    last = len(owners) - 1
    left = [p for p, k in enumerate(others) if k < t0]
    right = [p for p, k in enumerate(others) if k > t0]
    if left and right:
        tasks.append(("cons", nodes[target], 0, t0, last))
        tasks.append(("cons", nodes[target], 0, t0 - 1, t0))
    elif left:
        tasks.append(("cons", nodes[target], 0, t0 - 1, t0))
    else:
        tasks.append(("cons", nodes[target], t0, t0, last))
    if space.compute[target] is None:
        return None
    for side in (right, left):
        if side and not build(side[0], side[-1], target):
            return None
    return tasks


Plan = tuple[float, int, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
"""(time the parent holds the result, root, pieces, fold): pieces are position intervals
in order (the root's own ``(r, r)`` among them), fold the piece ranges ``(a, c)`` merged
in that order (:func:`_fold`)."""

Planner = Callable[[int, int, int], "Plan | None"]
"""``plan(lo, hi, parent)``: the memoised :data:`Plan` of positions ``lo..hi`` sending to
node ``parent`` (``None``: no tree), as :func:`_plan` returns it."""


@dataclass(frozen=True)
class _Layout:
    """What :func:`aligned_trees` estimates with: participants other than the target
    (``others``, positions ``0..``), their nodes, the gaps between consecutive ones,
    host-to-host fewest times, the least busy time of a node's in-links, compute times."""

    others: list[int]
    t0: int
    sides: list[list[int]]
    host_of: list[int]
    gaps: list[float]
    dist: np.ndarray
    row: dict[int, int]
    gap_in: dict[int, float]
    work: list[float]

    def time(self, a: int, b: int) -> float:
        """Least time from node ``a`` to node ``b`` (both participants' nodes)."""
        return 0.0 if a == b else float(self.dist[self.row[a], b])


def aligned_trees(space: TreeSpace, arities: Sequence[int]) -> list[list[list[Task]]]:
    """Families like :func:`interleaved_trees`, their shapes chosen for the earliest result.

    For each ``q`` of ``arities``, tree ``j`` of ``q`` keeps the residue
    classes of :func:`interleaved_trees`: its internal nodes are the
    participants whose position among those other than the target is ``j``
    mod ``q``, each with at most ``q`` children, every child a single
    position or a sub-interval holding a position of residue ``j``.  Taken
    ``1/q`` each, the ``q`` trees then load every participant with at most
    one reception and one reduction per instance, as a chain does.

    Where :func:`interleaved_trees` roots every interval at its middle and
    cuts it evenly, here each interval's root and cut are chosen by dynamic
    programming over (interval, parent) for the least estimated time at
    which the parent holds the interval's result (:func:`_plan`:
    fewest-time paths between participants, store and forward; receptions
    one at a time; reductions in the order the inputs arrive, each taking
    the node's compute time; no other contention).  The cuts tried are at
    the widest gaps between consecutive participants (on a fat tree the
    switches' boundaries) and the even ones, each also with the position
    next to the root a child alone; the roots tried, the residue-``j``
    positions within ``q`` of the interval's ends, middle and widest gaps.
    What a root makes of an interval does not depend on where it sends, so
    it is computed once per interval and root (``fat_tree`` k=8: the pair
    and the family of three in about 6 s).
    A position that took fewer than ``q`` children in its own tree may
    take the rest in the trees after it (its receptions over the family
    still at most ``q``): a residue class with one position fewer than the
    others can then still take every other position as a child.

    On ``fat_tree`` k=4 the pair (``q = 2``) has makespans 25 and 28 where
    the interleaved pair has 29 and 30 (:func:`tree_makespan`); on k=8, 42
    and 46 against 48 and 51, the family of three 39, 37 and 39 (the
    estimate leaves out the contention on the switches' links, which costs
    the second tree most).  No pair can be much shorter on k=4: every
    interval tree onto ``P0`` in which each participant receives at most two
    results needs 22 time units (a dynamic program over intervals, links and
    reductions without contention; see the tests), so a pair loses at least
    20 of 200 time units, and 100 periods of 2 hold at most 0.9 of the
    bound.  The family of three (``q = 3``: 21, 24 and 27) loses 26 of 300
    (0.913 of the bound), fewer than the pair's 27.

    Returns
    -------
    list
        One family (a list of ``q`` trees, each a task list in
        :func:`cheapest_tree`'s order) per arity for which every tree exists.
    """
    owners = space.owners
    parts = len(owners)
    t0 = owners.index(space.target) if space.target in owners else -1
    others = [k for k in range(parts) if k != t0]
    if t0 < 0 or len(others) < 2 or space.compute[space.target] is None:
        return []
    n = len(space.nodes)
    graph = csr_matrix(([float(b) for b in space.busy],
                        ([u for u, _ in space.links], [v for _, v in space.links])),
                       shape=(n, n))
    hosts = sorted(set(owners))
    dist = dijkstra(graph, indices=hosts)
    row = {v: i for i, v in enumerate(hosts)}
    gap_in: dict[int, float] = defaultdict(lambda: math.inf)
    for (_u, v), b in zip(space.links, space.busy, strict=True):
        gap_in[v] = min(gap_in[v], float(b))
    host_of = [owners[k] for k in others]
    layout = _Layout(
        others, t0,
        [[p for p, k in enumerate(others) if k < t0], [p for p, k in enumerate(others) if k > t0]],
        host_of,
        [max(float(dist[row[a], b]), float(dist[row[b], a]))
         for a, b in itertools.pairwise(host_of)],
        dist, row, dict(gap_in),
        [math.inf if w is None else float(w) for w in space.compute])
    route = _router(space)
    busy = dict(zip(space.links, space.busy, strict=True))
    out: list[list[list[Task]]] = []
    for q in sorted(set(arities)):
        if q < 2 or q > len(others):
            continue
        load: dict[tuple[int, int], float] = defaultdict(float)
        family = []
        # Children each position may still take in the family: q in its own tree,
        # then, in the trees after it, what its own tree left.
        spare = [0] * len(others)
        position = {space.nodes[h]: p for p, h in enumerate(host_of)}
        for j in range(q):
            caps = [q if p % q == j else spare[p] for p in range(len(others))]
            plan = _plan(layout, q, caps)
            tree = _emit(space, layout, plan, route, load, busy)
            if tree is None:
                break
            family.append(tree)
            taken = [0] * len(others)
            for task in tree:   # a position with k children makes k reductions
                if task[0] == "cons" and task[1] in position:
                    taken[position[task[1]]] += 1
            spare = [c - t for c, t in zip(caps, taken, strict=True)]
        else:
            out.append(family)
    return out


def _fold(ready: Sequence[float], work: float) -> tuple[float, list[tuple[int, int, int]]]:
    """Reduce adjacent items ready at ``ready`` on one processor, the earliest-startable
    adjacent pair first: (finish, [(first, middle, last) item indexes merged])."""
    spans = [(i, i, t) for i, t in enumerate(ready)]   # (first item, last item, ready)
    free = 0.0
    order: list[tuple[int, int, int]] = []
    while len(spans) > 1:
        k = min(range(len(spans) - 1), key=lambda k: (max(spans[k][2], spans[k + 1][2]), k))
        start = max(free, spans[k][2], spans[k + 1][2])
        free = start + work
        order.append((spans[k][0], spans[k][1], spans[k + 1][1]))
        spans[k:k + 2] = [(spans[k][0], spans[k + 1][1], free)]
    return (spans[0][2] if spans else 0.0), order


def _plan(layout: _Layout, q: int, caps: list[int]) -> Planner:
    """The dynamic program of :func:`aligned_trees` for one tree: at most ``caps[p]``
    children at position ``p`` (internal nodes only where it is positive).  Returns the
    memoised ``plan(lo, hi, parent)`` -> :data:`Plan` or ``None``."""
    gaps, host_of = layout.gaps, layout.host_of
    count = [0]
    for cap in caps:
        count.append(count[-1] + (cap > 0))

    def valid(lo: int, hi: int) -> bool:
        return lo == hi or count[hi + 1] > count[lo]

    # Every step below is memoised for the tree (functools.cache on the closures).
    @functools.cache
    def cuts(lo: int, hi: int, pieces: int) -> list[tuple[int, int]] | None:
        """``lo..hi`` in ``pieces`` valid pieces: at the largest gaps, else evenly."""
        if pieces == 1:
            return [(lo, hi)] if valid(lo, hi) else None
        if hi - lo + 1 < pieces:
            return None
        inside = sorted(range(lo, hi), key=lambda p: (-gaps[p], abs(p - (lo + hi) / 2)))
        for chosen in (sorted(inside[:pieces - 1]),
                       [lo + (hi - lo + 1) * (i + 1) // pieces - 1 for i in range(pieces - 1)]):
            bounds = [lo, *[c + 1 for c in chosen], hi + 1]
            out = [(a, b - 1) for a, b in itertools.pairwise(bounds)]
            if all(a <= b and valid(a, b) for a, b in out):
                return out
        return None

    @functools.cache
    def sides(lo: int, hi: int, pieces: int, near_hi: bool) -> list[list[tuple[int, int]]]:
        """``lo..hi`` in ``pieces`` valid pieces: as :func:`cuts` gives them, and with the
        position next to the root (``hi`` if ``near_hi``, else ``lo``) a piece alone,
        the rest cut so (a leaf child next to its parent, as on a switch's last port)."""
        out = [found] if (found := cuts(lo, hi, pieces)) is not None else []
        if pieces > 1:
            rest = cuts(lo, hi - 1, pieces - 1) if near_hi else cuts(lo + 1, hi, pieces - 1)
            if rest is not None:
                out.append([*rest, (hi, hi)] if near_hi else [(lo, lo), *rest])
        return out

    def roots(lo: int, hi: int) -> list[int]:
        """Candidate roots: inner positions near the ends, the middle and the widest gaps."""
        widest = max(gaps[lo:hi])
        marks = {lo, hi, (lo + hi) // 2}
        marks |= {m for p in range(lo, hi) if gaps[p] >= widest - 1e-9 for m in (p, p + 1)}
        return sorted({p for m in marks for p in range(max(lo, m - q), min(hi, m + q) + 1)
                       if caps[p]})

    # What a root makes of an interval does not depend on where it sends: per interval,
    # the best finish of each root (and its pieces and fold), then per parent the root
    # whose result arrives first.
    @functools.cache
    def finishes(lo: int, hi: int) -> list[tuple[float, int, tuple[tuple[int, int], ...],
                                               tuple[tuple[int, int], ...]]]:
        """Per candidate root of ``lo..hi`` with a tree: (finish, root, pieces, fold)."""
        out = []
        for r in roots(lo, hi):
            node = host_of[r]
            if not math.isfinite(layout.work[node]):
                continue
            best: tuple[float, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] | None
            best = None
            work = layout.work[node]
            n_left, n_right = r - lo, hi - r
            cap = caps[r]
            for n_l in range(0 if n_left == 0 else 1, min(n_left, cap) + 1):
                for n_r in range(0 if n_right == 0 else 1, min(n_right, cap - n_l) + 1):
                    lefts = sides(lo, r - 1, n_l, True) if n_l else [[]]
                    rights = sides(r + 1, hi, n_r, False) if n_r else [[]]
                    for lp, rp in itertools.product(lefts, rights):
                        pieces = [*lp, (r, r), *rp]
                        came: list[tuple[float, int]] = []
                        for idx, (a, b) in enumerate(pieces):
                            if (a, b) != (r, r):
                                sub = plan(a, b, node)
                                if sub is None:
                                    break
                                came.append((sub[0], idx))
                        else:
                            if best is not None and max(came)[0] + work >= best[0]:
                                continue   # its last input arrives too late to do better
                            ready = [0.0] * len(pieces)
                            last = -math.inf
                            for at, idx in sorted(came):   # receptions one at a time
                                last = max(at, last + layout.gap_in[node])
                                ready[idx] = last
                            finish, order = _fold(ready, work)
                            if best is None or finish < best[0]:
                                best = (finish, tuple(pieces),
                                        tuple((a, c) for a, _b, c in order))
            if best is not None:
                out.append((best[0], r, best[1], best[2]))
        return out

    @functools.cache
    def plan(lo: int, hi: int, parent: int) -> Plan | None:
        found: Plan | None = None
        if lo == hi:
            found = (layout.time(host_of[lo], parent), lo, ((lo, lo),), ())
        else:
            middle = (lo + hi) / 2
            for finish, r, pieces, fold in finishes(lo, hi):
                at = finish + layout.time(host_of[r], parent)
                if found is None or (at, abs(r - middle)) < (found[0], abs(found[1] - middle)):
                    found = (at, r, pieces, fold)
        # A result that never reaches ``parent`` (no path: a participant with no
        # in-link, links one way only) is no tree.
        return found if found is not None and math.isfinite(found[0]) else None

    return plan


def _emit(space: TreeSpace, layout: _Layout, plan: Planner, route: Route, load: Load,
          busy: dict[tuple[int, int], Fraction]) -> list[Task] | None:
    """The tasks of the tree ``plan`` gives, in :func:`cheapest_tree`'s order."""
    owners, nodes, others, host_of = space.owners, space.nodes, layout.others, layout.host_of
    t0, target, last = layout.t0, space.target, len(owners) - 1
    tasks: list[Task] = []
    if layout.sides[0] and layout.sides[1]:
        tasks.append(("cons", nodes[target], 0, t0, last))
        tasks.append(("cons", nodes[target], 0, t0 - 1, t0))
    elif layout.sides[0]:
        tasks.append(("cons", nodes[target], 0, t0 - 1, t0))
    else:
        tasks.append(("cons", nodes[target], t0, t0, last))

    send = _Sender(nodes, route, busy, load, tasks)

    def build(lo: int, hi: int, into: int) -> bool:
        found = plan(lo, hi, into)
        if found is None:
            return False
        _, r, pieces, fold = found
        maker = host_of[r]
        if maker != into and not send(maker, into, others[lo], others[hi]):
            return False
        if lo == hi:
            return True
        # Where each merged range was cut: its left part is the latest range
        # merged before it that starts where it starts (or one piece).
        middle: dict[tuple[int, int], int] = {}
        for a, c in fold:
            middle[a, c] = max(b for b in range(a, c) if b == a or (a, b) in middle)

        def emit(a: int, c: int) -> bool:
            """FIND_TREE order: a reduction, then the tasks making its inputs."""
            if a == c:
                piece = pieces[a]
                return piece == (r, r) or build(piece[0], piece[1], maker)
            b = middle[a, c]
            tasks.append(("cons", nodes[maker], others[pieces[a][0]], others[pieces[b][1]],
                          others[pieces[c][1]]))
            return emit(b + 1, c) and emit(a, b)

        return emit(0, len(pieces) - 1)

    for side in (layout.sides[1], layout.sides[0]):
        if side and not build(side[0], side[-1], target):
            return None
    return tasks
