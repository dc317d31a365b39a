"""The least-price reduction tree (the pricing step of the reduce column generation).

Under prices on the links and the CPUs (the duals of the tree master
program), the cheapest reduction tree delivering ``v[0,N-1]`` to the target
is a dynamic program over intervals and shortest paths
(:func:`cheapest_tree`, :func:`price_tables`): ``O(N^3 n / 6 + N^2 n^2 / 2)``
operations in numpy, exact on integer prices.  :class:`TreeSpace` indexes a
platform's ports, CPUs and links for it and the master program.

:func:`cheapest_interval_tree` is the same dynamic program when the price of
an operation depends on the partial result it carries (a send of ``v[k,m]``
over a link, the task ``T_{k,l,m}`` on a node): the pricing step of the
allreduce bound (:mod:`portsim.planners.lp._allreduce_columns`), one
destination at a time.  Holding ``v[k,m]`` on ``j`` is then a shortest path
under ``v[k,m]``'s own link prices, from every maker at once.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

import networkx as nx
import numpy as np

from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._solve import (
    Deadline,
)
from portsim.planners.lp._ssr import (
    Task,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["IntervalTables", "PriceTables", "SharedTrees", "TreeSpace", "chain_trees",
           "cheapest_interval_tree", "cheapest_tree", "cheapest_trees", "float_price",
           "interval_tables", "price_tables"]


@dataclass
class TreeSpace:
    """The platform as the pricing step sees it: indexes, link and compute costs.

    Nodes are numbered in ``platform.node_ids`` order; ``links`` are index
    pairs with their busy time ``size · c``; ``compute`` is ``w(i)`` for a
    processor (``None`` for a router: no reduction task there).
    """

    nodes: tuple[NodeId, ...]
    index: dict[NodeId, int]
    owners: tuple[int, ...]
    target: int
    links: tuple[tuple[int, int], ...]
    busy: tuple[Fraction, ...]
    compute: tuple[Fraction | None, ...]
    cpu_rows: dict[int, int]
    """Node index -> master row of its CPU (processors with ``w > 0``)."""
    merged: frozenset[int] = frozenset()
    """Node indexes whose receive row is their send row (``lp-naive``'s port sums)."""
    link_rows: dict[tuple[int, int], int] = field(default_factory=dict)
    """Link (index pair) -> master row of its own busy row, after the CPU rows
    (:class:`~portsim.planners.lp._capacity.PortCapacity`)."""
    rhs: tuple[Fraction, ...] = ()
    """Right-hand side of every master row (port capacities, 1 for CPUs and links)."""

    @classmethod
    def of(cls, platform: Platform, operation: Operation,
           port_sum: frozenset[NodeId] = frozenset()) -> TreeSpace:
        nodes = tuple(platform.node_ids)
        index = {v: i for i, v in enumerate(nodes)}
        processors = set(platform.processors)
        links = tuple((index[u], index[v]) for u, v in platform.graph.edges)
        busy = tuple(operation.size * platform.cost(u, v) for u, v in platform.graph.edges)
        compute = tuple(platform.compute_time(v) if v in processors else None for v in nodes)
        cpu_rows: dict[int, int] = {}
        for i, w in enumerate(compute):
            if w is not None and w > 0:
                cpu_rows[i] = 2 * len(nodes) + len(cpu_rows)
        assert operation.target is not None
        capacity = PortCapacity.of(platform)
        rhs = [k for v in nodes for k in (capacity.send[v], capacity.receive[v])]
        rhs += [Fraction(1)] * len(cpu_rows)
        link_rows: dict[tuple[int, int], int] = {}
        for u, v in capacity.links:
            link_rows[index[u], index[v]] = len(rhs)
            rhs.append(Fraction(1))
        return cls(nodes, index, tuple(index[p] for p in operation.participants),
                   index[operation.target], links, busy, compute, cpu_rows,
                   frozenset(index[v] for v in port_sum), link_rows, tuple(rhs))

    @property
    def n_rows(self) -> int:
        """Master rows: send and receive port of every node, the CPUs, then the links."""
        return 2 * len(self.nodes) + len(self.cpu_rows) + len(self.link_rows)

    def row_keys(self) -> list[tuple[str, NodeId] | tuple[str, tuple[NodeId, NodeId]]]:
        """The master rows by name, in order: ``("send", v)`` and ``("recv", v)`` per node,
        ``("cpu", v)`` per processor of ``w > 0``, then ``("link", (u, v))``.

        The names of the structure packing's rows
        (:data:`~portsim.planners.lp._allreduce_packing.Row`), so that a dual of
        a master over this space prices structures.  Not for a space of merged
        ports (``lp-naive``), whose receive row is the send row.
        """
        assert not self.merged, "merged ports have no receive row of their own"
        nodes = self.nodes
        keys: list[tuple[str, NodeId] | tuple[str, tuple[NodeId, NodeId]]] = [
            (kind, v) for v in nodes for kind in ("send", "recv")]
        keys += [("cpu", nodes[i]) for i in sorted(self.cpu_rows, key=self.cpu_rows.__getitem__)]
        keys += [("link", (nodes[u], nodes[v]))
                 for u, v in sorted(self.link_rows, key=self.link_rows.__getitem__)]
        return keys

    def dual_value(self, y: Sequence[Fraction]) -> Fraction:
        """``Σ rhs · y`` over the master rows (the dual objective)."""
        return sum((b * v for b, v in zip(self.rhs, y, strict=True)), Fraction(0))

    def loads(self, tasks: Sequence[Task]) -> dict[int, Fraction]:
        """Master row -> time one instance of the tree ``tasks`` keeps it busy."""
        key = tuple(tasks)
        known = self._loads.get(key)
        if known is not None:
            return known
        out: dict[int, Fraction] = defaultdict(Fraction)
        for task in tasks:
            if task[0] == "send":
                u, v = self.index[task[1]], self.index[task[2]]
                b = self._busy[u, v]
                out[2 * u] += b
                out[self._in_row[v]] += b
                own = self.link_rows.get((u, v))
                if own is not None:
                    out[own] += b
            else:
                i = self.index[task[1]]
                row = self.cpu_rows.get(i)
                if row is not None:
                    w = self.compute[i]
                    assert w is not None
                    out[row] += w
        self._loads[key] = dict(out)
        return self._loads[key]

    def float_loads(self, tasks: Sequence[Task]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`loads` in floats, as (rows, values) arrays for the solver."""
        out: dict[int, float] = defaultdict(float)
        index = self.index
        for task in tasks:
            if task[0] == "send":
                u, v = index[task[1]], index[task[2]]
                b = self._busy_float[u, v]
                out[2 * u] += b
                out[self._in_row[v]] += b
                own = self.link_rows.get((u, v))
                if own is not None:
                    out[own] += b
            else:
                i = index[task[1]]
                row = self.cpu_rows.get(i)
                if row is not None:
                    out[row] += self._compute_float[i]
        rows = sorted(out)
        return np.array(rows, dtype=np.int32), np.array([out[r] for r in rows])

    def __post_init__(self) -> None:
        self._busy = dict(zip(self.links, self.busy, strict=True))
        self._busy_float = {e: float(b) for e, b in self._busy.items()}
        self._compute_float = [0.0 if w is None else float(w) for w in self.compute]
        self._loads: dict[tuple[Task, ...], dict[int, Fraction]] = {}
        # A merged node's receptions load its send row: Σ in + Σ out <= 1.
        self._in_row = [2 * v if v in self.merged else 2 * v + 1
                        for v in range(len(self.nodes))]
        # The row of each link's own busy row (-1: none), in ``links`` order.
        self._own_row = [self.link_rows.get(e, -1) for e in self.links]
        if not self.rhs:  # built by hand (tests): unit capacities, no link rows
            self.rhs = (Fraction(1),) * self.n_rows

    def prices(self, y: Sequence[Fraction] | np.ndarray, *, exact: bool
               ) -> tuple[np.ndarray, np.ndarray, int]:
        """Link and compute prices under the master dual ``y``.

        Float prices when ``exact`` is false; else integers (object arrays)
        over the returned common denominator.  A router's compute price is
        infinite.
        """
        n = len(self.nodes)
        own = self._own_row
        if not exact:
            yf = np.asarray([float(v) for v in y])
            link = np.array([float(b) * (yf[2 * u] + yf[self._in_row[v]]
                                         + (yf[own[i]] if own[i] >= 0 else 0.0))
                             for i, ((u, v), b) in enumerate(zip(self.links, self.busy,
                                                                 strict=True))])
            cpu = np.array([np.inf if w is None else
                            (float(w) * yf[self.cpu_rows[i]] if i in self.cpu_rows else 0.0)
                            for i, w in enumerate(self.compute)])
            return link, cpu, 1
        fl = [b * (y[2 * u] + y[self._in_row[v]] + (y[own[i]] if own[i] >= 0 else 0))
              for i, ((u, v), b) in enumerate(zip(self.links, self.busy, strict=True))]
        fc: list[Fraction | None] = [
            None if w is None else (w * y[self.cpu_rows[i]] if i in self.cpu_rows
                                    else Fraction(0))
            for i, w in enumerate(self.compute)]
        q = 1
        for f in [*fl, *(c for c in fc if c is not None)]:
            d = Fraction(f).denominator
            if q % d:
                q = q * d // math.gcd(q, d)
        link = np.empty(len(fl), dtype=object)
        link[:] = [Fraction(f).numerator * (q // Fraction(f).denominator) for f in fl]
        cpu = np.empty(n, dtype=object)
        cpu[:] = [math.inf if c is None else c.numerator * (q // c.denominator) for c in fc]
        return link, cpu, q


def _all_pairs(n: int, links: Sequence[tuple[int, int]], link_price: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Floyd–Warshall: distances and next hops (``-1``: unreachable)."""
    dtype = link_price.dtype
    dist = np.full((n, n), math.inf, dtype=dtype)
    nxt = np.full((n, n), -1, dtype=np.int64)
    for i in range(n):
        dist[i, i] = 0
        nxt[i, i] = i
    for (u, v), p in zip(links, link_price, strict=True):
        if p < dist[u, v]:
            dist[u, v] = p
            nxt[u, v] = v
    for k in range(n):
        cand = dist[:, k:k + 1] + dist[k:k + 1, :]
        better = cand < dist
        if better.any():
            dist = np.where(better, cand, dist)
            nxt = np.where(better, nxt[:, k:k + 1], nxt)
    return dist, nxt


def cheapest_tree(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray, *,
                  deadline: Deadline | None = None) -> tuple[float | int, list[Task] | None]:
    """The reduction tree of least price (the pricing step), by dynamic programming.

    ``best[j, k, m]``, the least price of holding ``v[k,m]`` on node ``j``,
    is the shortest-path price from the owner for ``k = m``, else
    ``min_i (cpu(i) + min_l best[i,k,l] + best[i,l+1,m]) + dist(i, j)``.
    Exact on integer (object) prices.

    Parameters
    ----------
    space:
        The platform's indexes and costs.
    link_price, cpu_price:
        Price of one send over each link of ``space.links``, of one
        reduction task on each node (infinite on routers).
    deadline:
        Checked at every interval length of the dynamic program.

    Returns
    -------
    (price, tasks)
        The least price and the tree's tasks in FIND_TREE order (each task
        before the tasks producing its inputs); ``None`` when no tree exists.
    """
    found = cheapest_trees(space, link_price, cpu_price, 1, deadline=deadline)
    if not found:
        return math.inf, None
    return found[0]


def cheapest_trees(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray,
                   count: int, below: float | int = math.inf, *,
                   deadline: Deadline | None = None) -> list[tuple[float | int, list[Task]]]:
    """Up to ``count`` cheap reduction trees, the cheapest first.

    The cheapest tree, then the cheapest ones with another last task (the
    node computing ``v[0,N-1]`` and its split point), each completed with the
    cheapest subtrees: several columns from one dynamic program.  Only trees
    priced below ``below`` are returned (the cheapest is always tried).
    """
    tables = _program(space, link_price, cpu_price, deadline=deadline)
    return _cheapest_from(space, tables, cpu_price, count, below)


class SharedTrees:
    """:func:`cheapest_trees` in each of ``spaces`` (one platform, one target each), from
    one program.

    Under the same prices the dynamic program's holding prices do not depend
    on the target: the target only reads its own column.  So one program,
    holding on the makers and every target, serves them all, with the same
    minima, hence the same trees, as one program per target.  The allreduce's
    step 2 prices a tree to every root each round
    (:mod:`portsim.planners.lp._allreduce_rooted`): on ``fat_tree_platform(6)``
    (54 roots) that was 70 of its 167 s.  :meth:`least` reads a target's
    least price without building the tree (:meth:`trees` backtracks).
    """

    def __init__(self, spaces: Sequence[TreeSpace], link_price: np.ndarray,
                 cpu_price: np.ndarray, *, deadline: Deadline | None = None) -> None:
        self._spaces = spaces
        self._cpu = cpu_price
        self._tables = _program(spaces[0], link_price, cpu_price, deadline=deadline,
                                targets=[space.target for space in spaces])

    def least(self, i: int) -> float | int:
        """The least price of a tree to ``spaces[i]``'s target (infinite: none)."""
        space = self._spaces[i]
        return self._tables.by_start[0, len(space.owners) - 1, space.target]  # type: ignore[no-any-return]

    def trees(self, i: int, count: int) -> list[tuple[float | int, list[Task]]]:
        """:func:`cheapest_trees` (``count``, no ``below``) to ``spaces[i]``'s target."""
        return _cheapest_from(self._spaces[i], self._tables, self._cpu, count, math.inf)


def _cheapest_from(space: TreeSpace, tables: _Program, cpu_price: np.ndarray, count: int,
                   below: float | int) -> list[tuple[float | int, list[Task]]]:
    """:func:`cheapest_trees` on the program's tables (holding on ``space.target``)."""
    parts = len(space.owners)
    target = space.target
    last = parts - 1
    cheapest = tables.by_start[0, last, target]
    if cheapest == math.inf:
        return []
    roots: list[tuple[float | int, int, int]] = [(cheapest, -1, -1)]
    if count > 1:
        # v[0,l] and v[l+1,N-1] held on i, for every split l: (l, i), then (i, l).
        halves = tables.by_start[0, :last] + tables.by_end[last, last - 1::-1]
        root_price = (halves.T + cpu_price[:, None]
                      + tables.dist[:, target][:, None])         # (i, l)
        order = np.argsort(root_price, axis=None, kind="stable")[:count]
        for flat in order.tolist()[1:]:
            i, l_ = divmod(flat, last)
            p = root_price[i, l_]
            if p < below and p != math.inf:
                roots.append((p, i, l_))
    out: list[tuple[float | int, list[Task]]] = []
    for p, i0, l0 in roots[:count]:
        if p >= below and out:
            break
        out.append((p, _backtrack(space, tables, i0, l0)))
    return out


class PriceTables(NamedTuple):
    """The tables of the pricing dynamic program (:func:`price_tables`).

    ``best[j, k, m]`` is the least price of holding ``v[k,m]`` on node ``j``;
    the same values are kept by interval start, ``by_start[k, d, j]`` for
    ``v[k,k+d]``, and by interval end, ``by_end[m, d, j]`` for ``v[m-d,m]``,
    so that the program reads contiguous slices; ``comp[k, m, i]`` is the
    least price of computing ``v[k,m]`` on ``i`` (``k < m``).
    """

    dist: np.ndarray
    nxt: np.ndarray
    best: np.ndarray
    comp: np.ndarray
    by_start: np.ndarray
    by_end: np.ndarray


def price_tables(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray, *,
                 deadline: Deadline | None = None) -> PriceTables:
    """The dynamic program of :func:`cheapest_tree`.

    Interval length by interval length, every interval at once: computing
    ``v[k,k+L]`` on ``i`` costs ``cpu(i) + min_l hold(i, v[k,l]) +
    hold(i, v[l+1,k+L])``, read as ``by_start[k, l-k, i] + by_end[k+L,
    k+L-l-1, i]``: two strided views of the tables, summed without any gather
    (``O(N^3 n / 6)`` additions); holding it on ``j`` adds the shortest path
    from ``i`` (a min-plus product, ``O(N^2 n^2 / 2)`` in all).  The sums and
    minima are the same as a cell-by-cell program's, so the prices are
    identical.

    Only the ``p`` nodes that can compute (finite CPU price) make partial
    results, so ``i`` runs over them alone: ``O(N^3 p / 6)`` and ``O(N^2 p
    n / 2)``.  Float prices (the generation's) keep holding prices on those
    nodes and the target only, ``O(N^2 p^2 / 2)``; their other columns of
    ``best``, ``by_start`` and ``by_end`` are infinite, and nothing reads
    them.  On a fabric most nodes are switches: ``dgx_a100`` 8 servers (138
    nodes, 64 GPUs) 78 -> 39 ms a call, ``fat_tree`` k=8 (208 nodes, 128
    hosts) 1.10 -> 0.38 s.  Exact prices (the certificate's) keep every
    node's holding price, the dual of the whole SSR(G) program.

    Returns
    -------
    PriceTables
        All-pairs shortest-path prices and next hops, and the tables above.
    """
    tables = _program(space, link_price, cpu_price, deadline=deadline)
    n, parts = len(space.nodes), len(space.owners)
    best = np.empty((n, parts, parts), dtype=link_price.dtype)
    comp = np.full((parts, parts, n), math.inf, dtype=link_price.dtype)
    for d in range(parts):
        ks = np.arange(parts - d)
        best[:, ks, ks + d] = tables.by_start[ks, d].T
        if d:
            for k in ks.tolist():
                comp[k, k + d] = tables.made(k, k + d)
    return PriceTables(tables.dist, tables.nxt, best, comp, tables.by_start,
                       tables.by_end)


class _Program(NamedTuple):
    """:class:`PriceTables` but ``best`` and ``comp`` (which the pricing itself never
    reads whole: :meth:`made` gives the row of ``comp`` a backtrack needs).

    ``by_start`` and ``by_end`` are two views of one table (:func:`_diagonal`).
    """

    dist: np.ndarray
    nxt: np.ndarray
    cpu: np.ndarray
    by_start: np.ndarray
    by_end: np.ndarray

    def made(self, k: int, m: int) -> np.ndarray:
        """``comp[k, m]``: the least price of computing ``v[k,m]`` (``k < m``) on each
        node, from the same sums as the program's (the same values)."""
        length = m - k
        pair = self.by_start[k, :length] + self.by_end[m, length - 1::-1]   # (split, i)
        return pair.min(axis=0) + self.cpu  # type: ignore[no-any-return]


def _program(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray, *,
             deadline: Deadline | None = None, targets: Sequence[int] = ()) -> _Program:
    """The tables of :func:`price_tables` but ``best`` (float prices: holding on
    ``targets`` too, besides the makers and ``space.target``)."""
    makers = np.array([i for i, c in enumerate(cpu_price.tolist()) if c != math.inf],
                      dtype=np.int64)
    if link_price.dtype.kind != "O":
        return _float_tables(space, link_price, cpu_price, makers, deadline=deadline,
                             targets=targets)
    return _exact_tables(space, link_price, cpu_price, makers, deadline=deadline)


def _float_tables(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray,
                  makers: np.ndarray, *, every: bool = False,
                  deadline: Deadline | None = None, targets: Sequence[int] = ()) -> _Program:
    """:func:`price_tables` on float prices (holding prices on every node if ``every``,
    else on the makers, ``space.target`` and ``targets``)."""
    n = len(space.nodes)
    parts = len(space.owners)
    dist, nxt = _all_pairs(n, space.links, link_price)
    dtype = link_price.dtype
    # Only the nodes that can compute (a finite CPU price) make partial
    # results: the others' computing prices are infinite and never the
    # minimum, so the program runs over them alone (on a fabric, most nodes
    # are switches): the same minima, fewer terms.  The generation's tables
    # hold values on the makers and the target only: the program and the
    # tree it returns never read another node's holding price.
    holders = np.arange(n) if every else np.union1d(makers, [space.target, *targets])
    # The program's own tables are length-major, ``[d, k, .]`` for
    # ``v[k,k+d]`` and ``[d, m, .]`` for ``v[m-d,m]``, and every minimum runs
    # over the leading axis: its terms are then whole contiguous ``(k, .)``
    # blocks, which numpy reduces faster than a middle axis.  Both are views
    # of one table (:func:`_diagonal`), and where every node makes (a random
    # platform) the makers' columns are that table itself: one table of
    # ``N^2 n`` prices where there were five (500 nodes: 1 GB, not 5).
    held_start, held_end = _diagonal(parts, n, dtype)    # [d, k, j], [d, m, j]
    everyone = len(makers) == n
    # The same tables on the makers' columns only, read by the splits.
    start_at, end_at = ((held_start, held_end) if everyone
                        else _diagonal(parts, len(makers), dtype))   # [d, k, i], [d, m, i]
    for k, o in enumerate(space.owners):
        held_start[0, k] = dist[o, :]
        if not everyone:
            start_at[0, k] = dist[o, makers]
    cpu = cpu_price[makers][None, :]
    all_held = len(holders) == n
    makers_in_holders = makers if all_held else np.searchsorted(holders, makers)
    hold = _Holding.of(space.links, link_price, dist, makers, holders, makers_in_holders)
    for length in range(1, parts):
        if deadline is not None:
            deadline.check("pricing (dynamic program)")
        count = parts - length
        # a block of intervals at a time: the sums of one block stay under
        # _BLOCK_CELLS prices (at 500 nodes a length's sums were 1 GB)
        block = max(1, _BLOCK_CELLS // max(length * len(makers), len(makers) * len(holders)))
        for first in range(0, count, block):
            last = min(count, first + block)
            pair = (start_at[:length, first:last]
                    + end_at[length - 1::-1, first + length:last + length])  # (split, k, i)
            here = pair.min(axis=0) + cpu                                     # (k, i)
            held = hold(here)                                                 # (k, j)
            if all_held:
                held_start[length, first:last] = held
            else:
                held_start[length][first:last, holders] = held
            if not everyone:
                start_at[length, first:last] = held[:, makers_in_holders]
    return _Program(dist, nxt, cpu_price, held_start.transpose(1, 0, 2),
                    held_end.transpose(1, 0, 2))


_BLOCK_CELLS = 1 << 22
"""Most prices summed at once by one step of :func:`_float_tables` (32 MiB in float64)."""


def _diagonal(parts: int, width: int, dtype: np.dtype | type) -> tuple[np.ndarray, np.ndarray]:
    """One table of ``v[k,k+d]``'s prices, infinite, as the two length-major views
    ``by_start[d, k, :]`` (``v[k,k+d]``) and ``by_end[d, m, :]`` (``v[m-d,m]``).

    The table is ``[d, k, :]`` with one spare ``k``, ``parts + 1`` of them:
    ``v[m-d,m]`` is its row ``(d, m - d)``, so ``by_end`` is a strided view,
    one ``k`` less per ``d``; its cells of ``m < d`` (no interval) fall on
    rows ``(d - 1, k > parts - d)``, no interval either, which stay infinite.
    ``by_end`` is read-only: a program writes ``by_start``.
    """
    table = np.full((parts, parts + 1, width), math.inf, dtype=dtype)
    d_step, k_step, j_step = table.strides
    by_end = np.lib.stride_tricks.as_strided(
        table, shape=(parts, parts, width), strides=(d_step - k_step, k_step, j_step),
        writeable=False)
    return table[:, :parts], by_end


class _Holding:
    """``held[k, j] = min_i here[k, i] + dist[i, j]`` over the makers ``i``, for the
    holders ``j``: where a result made on ``i`` is cheapest to hold on ``j``.

    Directly, that is ``|makers| x |holders|`` sums a row.  A path out of ``i``
    leaves by one of ``i``'s links, so for ``j != i``, ``dist[i, j] = min_s
    (p(i, s) + dist[s, j])`` over those links ``i -> s``, and ``held`` is
    also the least of ``here[k, j]`` (``i = j``, no send) and ``min_s (A[k, s]
    + dist[s, j])`` with ``A[k, s] = min_{i -> s} (here[k, i] + p(i, s))``.
    On a fabric the makers hang off few switches (``fat_tree_platform(8)``:
    128 hosts, 32 edge switches), so the second form, over those *hubs*
    ``s``, has a quarter of the sums; it is used when it has at most half as
    many.  The same minima, up to the rounding of the sums' order.
    """

    def __init__(self, direct: np.ndarray | None, arc_from: np.ndarray, arc_price: np.ndarray,
                 starts: np.ndarray, from_hubs: np.ndarray, makers_in_holders: np.ndarray
                 ) -> None:
        self.direct = direct
        self.arc_from = arc_from
        self.arc_price = arc_price
        self.starts = starts
        self.from_hubs = from_hubs
        self.makers_in_holders = makers_in_holders

    @classmethod
    def of(cls, links: Sequence[tuple[int, int]], link_price: np.ndarray, dist: np.ndarray,
           makers: np.ndarray, holders: np.ndarray, makers_in_holders: np.ndarray
           ) -> _Holding:
        """The way with fewer sums, for these links, prices and shortest paths."""
        position = {int(i): a for a, i in enumerate(makers.tolist())}
        arcs = sorted((v, position[u], e) for e, (u, v) in enumerate(links) if u in position)
        hubs = np.array(sorted({v for v, _, _ in arcs}), dtype=np.int64)
        direct_sums = len(makers) * len(holders)
        if not arcs or 2 * (len(hubs) * len(holders) + len(arcs)) > direct_sums:
            return cls(dist[np.ix_(makers, holders)][:, None, :], np.zeros(0, dtype=np.int64),
                       link_price[:0], np.zeros(0, dtype=np.int64), dist[:0, :0],
                       makers_in_holders)
        heads = np.array([v for v, _, _ in arcs], dtype=np.int64)
        return cls(None, np.array([a for _, a, _ in arcs], dtype=np.int64),
                   link_price[np.array([e for _, _, e in arcs], dtype=np.int64)],
                   np.flatnonzero(np.r_[True, heads[1:] != heads[:-1]]),
                   dist[np.ix_(hubs, holders)], makers_in_holders)

    def __call__(self, here: np.ndarray) -> np.ndarray:
        """``held`` for ``here`` of shape ``(count, makers)``: ``(count, holders)``."""
        if self.direct is not None:
            return (here.T[:, :, None] + self.direct).min(axis=0)
        at_hub = np.minimum.reduceat(here[:, self.arc_from] + self.arc_price, self.starts,
                                     axis=1)                                 # (k, s)
        held = (at_hub.T[:, :, None] + self.from_hubs[:, None, :]).min(axis=0)
        mine = self.makers_in_holders
        held[:, mine] = np.minimum(held[:, mine], here)
        return held


def _exact_tables(space: TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray,
                  makers: np.ndarray, *, deadline: Deadline | None = None) -> _Program:
    """:func:`price_tables` on integer prices, every minimum taken over its float near-ties.

    The same program in floats (:func:`_float_tables`, every node holding)
    tells, for each minimum, which terms can be least: a float sum of ``K``
    non-negative roundings is within ``K·2^-53`` of the exact one (relative),
    so every exactly least term is within :data:`_NEAR` of the float minimum
    (``K`` up to 10^6 here).  Only those terms are added up in integers: a
    few per cell instead of all ``N^3 p / 6 + N^2 p n / 2`` (N = 100, random
    prices near 10^100: 4.2 -> 0.9 s).  The tables are the full program's,
    cell by cell.
    """
    n = len(space.nodes)
    parts = len(space.owners)
    # Prices below 2^1024 (:func:`_all_pairs` adds them to float infinities),
    # scaled below 2^900 so that no float sum of the program overflows; the
    # least non-zero one stays above 2^-124, far from underflow.
    bits = max((int(x).bit_length() for x in [*link_price.tolist(), *cpu_price.tolist()]
                if x != math.inf), default=0)
    scale = 2 ** max(0, bits - 900)
    link_f = np.array([x / scale for x in link_price.tolist()])
    cpu_f = np.array([math.inf if x == math.inf else x / scale for x in cpu_price.tolist()])
    guide = _float_tables(space, link_f, cpu_f, makers, every=True, deadline=deadline)
    dist, nxt = _all_pairs(n, space.links, link_price)
    dist_f = guide.dist
    everyone = len(makers) == n
    held_start, held_end = _diagonal(parts, n, object)   # [d, k, j], [d, m, j]
    start_at, end_at = ((held_start, held_end) if everyone
                        else _diagonal(parts, len(makers), object))  # [d, k, i], [d, m, i]
    # The float tables of the same cells, length-major on the makers.
    start_f = guide.by_start.transpose(1, 0, 2)
    end_f = guide.by_end.transpose(1, 0, 2)
    if not everyone:
        start_f = np.ascontiguousarray(start_f[:, :, makers])
        end_f = np.ascontiguousarray(end_f[:, :, makers])
    for first, owner in enumerate(space.owners):
        held_start[0, first] = dist[owner, :]
        if not everyone:
            start_at[0, first] = dist[owner, makers]
    cpu = cpu_price[makers][None, :]
    cpu_f_makers = cpu_f[makers][None, :]
    from_makers = dist[makers, :]
    from_makers_f = dist_f[makers, :][:, None, :]
    for length in range(1, parts):
        if deadline is not None:
            deadline.check("pricing (dynamic program)")
        count = parts - length
        # blocks of intervals, as in _float_tables: the float sums stay small
        block = max(1, _BLOCK_CELLS // max(length * len(makers), len(makers) * n))
        for top in range(0, count, block):
            size = min(count, top + block) - top
            pair_f = (start_f[:length, top:top + size]
                      + end_f[length - 1::-1, top + length:top + length + size])  # (split, k, i)
            split, k_, i_ = _near_least(pair_f)
            pair = (start_at[split, top + k_, i_]
                    + end_at[length - 1 - split, top + length + k_, i_])
            here = _least_by_group(pair, k_ * len(makers) + i_).reshape(size, len(makers)) + cpu
            here_f = pair_f.min(axis=0) + cpu_f_makers                    # (k, i): the guide's
            i_, k_, j_ = _near_least(here_f.T[:, :, None] + from_makers_f)     # (i, k, j)
            held = _least_by_group(here[k_, i_] + from_makers[i_, j_],
                                   k_ * n + j_).reshape(size, n)
            held_start[length, top:top + size] = held
            if not everyone:
                start_at[length, top:top + size] = held[:, makers]
    return _Program(dist, nxt, cpu_price, held_start.transpose(1, 0, 2),
                    held_end.transpose(1, 0, 2))


_NEAR = 1e-9
"""Relative margin of :func:`_exact_tables`' float near-ties (far above the
float error of a sum of up to 10^6 roundings, 10^6 · 2^-53 ≈ 1.1e-10)."""


def _near_least(terms: np.ndarray) -> tuple[np.ndarray, ...]:
    """Indexes of the terms within :data:`_NEAR` of their minimum over axis 0.

    Returned as (axis 0, axis 1, axis 2) index arrays sorted by (axis 1, axis
    2) then axis 0: the cells of one minimum are consecutive, every cell has
    at least one term (its float least).
    """
    near = terms <= terms.min(axis=0) * (1 + _NEAR)   # inf <= inf: an unreached cell keeps all
    b, c, a = np.nonzero(near.transpose(1, 2, 0))
    return a, b, c


def _least_by_group(values: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The least of ``values`` per run of equal ``cells`` (runs consecutive)."""
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
    return np.minimum.reduceat(values, starts)


def _backtrack(space: TreeSpace, tables: _Program, root_maker: int,
               root_split: int) -> list[Task]:
    """The tree of the dynamic program's choices, recomputed along the way.

    ``root_maker`` and ``root_split`` (``-1``: the cheapest) force the node
    computing ``v[0,N-1]`` and its split point.
    """
    dist, nxt = tables.dist, tables.nxt
    by_start, by_end = tables.by_start, tables.by_end
    nodes = space.nodes
    n = len(nodes)
    parts = len(space.owners)
    tasks: list[Task] = []
    stack = [(space.target, 0, parts - 1)]
    first = True
    while stack:
        j, k, m = stack.pop()
        if k == m:
            i = space.owners[k]
        elif first and root_maker >= 0:
            i = root_maker
        else:
            i = int(np.argmin(tables.made(k, m) + dist[:, j]))
        hops = [i]
        while hops[-1] != j:
            hops.append(int(nxt[hops[-1], j]))
            if len(hops) > n:  # pragma: no cover - next hops of shortest paths
                raise AssertionError("next-hop cycle in the shortest paths")
        for u, v in reversed(list(itertools.pairwise(hops))):
            tasks.append(("send", nodes[u], nodes[v], k, m))
        if k == m:
            first = False
            continue
        if first and root_split >= 0:
            l_ = root_split
        else:  # split l in k..m-1: v[k,l] and v[l+1,m] held on i
            l_ = k + int(np.argmin(by_start[k, :m - k, i] + by_end[m, m - k - 1::-1, i]))
        first = False
        tasks.append(("cons", nodes[i], k, l_, m))
        stack.extend([(i, k, l_), (i, l_ + 1, m)])
    return tasks


def float_price(space: TreeSpace, tasks: list[Task], y: np.ndarray) -> float:
    """The price of one tree under the float dual ``y``."""
    rows, loads = space.float_loads(tasks)
    return float(loads @ y[rows])


def chain_trees(space: TreeSpace) -> list[list[Task]]:
    """The two chains of the participants' order, as first columns of the generation.

    Right to left, ``v[k,N-1] = v_k ⊕ v[k+1,N-1]`` made on ``P_k`` from
    ``v[k+1,N-1]`` sent by ``P_{k+1}``, then ``v[0,N-1]`` sent to the
    target; left to right, ``v[0,k] = v[0,k-1] ⊕ v_k`` made on ``P_k``.
    Each participant makes at most one partial result, receives one and
    sends one, so where the per-node rows bind (many CPUs and ports at
    once, as on a fabric whose hosts each make one reduction) a chain is
    near the optimum at once, which a generation started from one cheap
    tree reaches only after hundreds of rounds (``fat_tree`` k=6: 235).
    Sends follow paths of fewest hops (breadth first, ties by the links'
    order).  A chain whose hops do not exist is left out.  Tasks are in
    :func:`cheapest_tree`'s order (each task before those making its inputs).
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(space.nodes)))
    graph.add_edges_from(space.links)

    def path(a: int, b: int) -> list[int] | None:
        """Nodes of a fewest-hop path from ``a`` to ``b`` (breadth first)."""
        try:
            return list(nx.shortest_path(graph, a, b))
        except nx.NetworkXNoPath:
            return None

    owners, nodes, last = space.owners, space.nodes, len(space.owners) - 1

    def sends(tasks: list[Task], a: int, b: int, k: int, m: int) -> bool:
        """Append the sends of ``v[k,m]`` from ``a`` to ``b`` (last hop first)."""
        hops = path(a, b)
        if hops is None:
            return False
        for u, v in reversed(list(itertools.pairwise(hops))):
            tasks.append(("send", nodes[u], nodes[v], k, m))
        return True

    def chain(leftward: bool) -> list[Task] | None:
        tasks: list[Task] = []
        if leftward:   # v[k,N-1] made on P_k; the result leaves P_0
            if not sends(tasks, owners[0], space.target, 0, last):
                return None
            for k in range(last):
                if space.compute[owners[k]] is None:
                    return None
                tasks.append(("cons", nodes[owners[k]], k, k, last))
                if not sends(tasks, owners[k + 1], owners[k], k + 1, last):
                    return None
        else:          # v[0,k] made on P_k; the result leaves P_{N-1}
            if not sends(tasks, owners[last], space.target, 0, last):
                return None
            for k in range(last, 0, -1):
                if space.compute[owners[k]] is None:
                    return None
                tasks.append(("cons", nodes[owners[k]], 0, k - 1, k))
                if not sends(tasks, owners[k - 1], owners[k], 0, k - 1):
                    return None
        return tasks

    chains = [c for c in (chain(True), chain(False)) if c is not None]
    return chains


def _shortest_from(labels: np.ndarray, price: np.ndarray, links: Sequence[tuple[int, int]],
                   *, deadline: Deadline | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Shortest paths from initial labels, many price vectors at once (Bellman–Ford).

    ``labels[b, j]`` is the price of having the item on ``j`` before any send
    (``inf``: not there), ``price[b, e]`` the price of a send over
    ``links[e]``, both non-negative.  Returns the least prices and, per
    ``(b, j)``, the link of the last send (``-1``: the initial label stands).
    A label changes only on a strict improvement, so the links of the last
    sends form a forest (a cycle would need a cycle of negative price): its
    paths are simple.
    """
    batch, n = labels.shape
    labels = labels.copy()
    last = np.full((batch, n), -1, dtype=np.int64)
    if not links:
        return labels, last
    heads_all = np.fromiter((v for _, v in links), dtype=np.int64, count=len(links))
    order = np.argsort(heads_all, kind="stable")
    tails = np.fromiter((links[e][0] for e in order), dtype=np.int64, count=len(order))
    heads_sorted = heads_all[order]
    starts = np.flatnonzero(np.r_[True, heads_sorted[1:] != heads_sorted[:-1]])
    heads = heads_sorted[starts]
    counts = np.diff(np.r_[starts, len(order)])
    sorted_price = price[:, order]
    position = np.arange(len(order))
    for _ in range(n):
        if deadline is not None:
            deadline.check("pricing (dynamic program)")
        cand = labels[:, tails] + sorted_price                         # (b, links by head)
        least = np.minimum.reduceat(cand, starts, axis=1)              # (b, heads)
        better = least < labels[:, heads]
        if not better.any():
            break
        tight = cand == np.repeat(least, counts, axis=1)
        first = np.minimum.reduceat(np.where(tight, position, len(order)), starts, axis=1)
        rows, cols = np.nonzero(better)
        labels[rows, heads[cols]] = least[rows, cols]
        last[rows, heads[cols]] = order[first[rows, cols]]
    return labels, last


class IntervalTables(NamedTuple):
    """The tables of :func:`interval_tables`.

    ``hold[k, m, j]``: the least price of holding ``v[k,m]`` on ``j``
    (``inf`` for ``m < k`` or out of reach); ``by_start``, ``by_end`` as in
    :class:`PriceTables`; ``last[k, m, j]``: the link of the last send of
    ``v[k,m]`` into ``j`` on a cheapest way (``-1``: made or owned there).
    """

    hold: np.ndarray
    by_start: np.ndarray
    by_end: np.ndarray
    last: np.ndarray


def interval_tables(space: TreeSpace, send_price: np.ndarray, task_price: np.ndarray, *,
                    deadline: Deadline | None = None) -> IntervalTables:
    """The dynamic program of :func:`cheapest_interval_tree`, for every node at once.

    Interval length by interval length, every interval of a length at once
    (as :func:`price_tables`), holding ``v[k,m]`` on ``j`` is the shortest
    path under ``v[k,m]``'s link prices from every node at the price of
    making it there (:func:`_shortest_from`), the task's price added per
    split point.  Arguments as :func:`cheapest_interval_tree`.
    """
    n = len(space.nodes)
    parts = len(space.owners)
    dtype = send_price.dtype
    inf: float | int = math.inf
    big: int | None = None
    if dtype.kind == "O":
        # Exact prices may be integers beyond float range: ``inf`` becomes an
        # integer above any tree free of forbidden operations (at most the sum
        # of every finite price), and back to ``inf`` at the end.
        send_price, task_price, big = _integer_infinity(send_price, task_price)
        inf = big
    by_start = np.empty((parts, parts, n), dtype=dtype)   # [k, d, j]: v[k,k+d] on j
    by_end = np.empty((parts, parts, n), dtype=dtype)     # [m, d, j]: v[m-d,m] on j
    last = np.full((parts, parts, n), -1, dtype=np.int64)  # [k, m, j]: link into j
    hold = np.full((parts, parts, n), inf, dtype=dtype)   # [k, m, j]
    ks = np.arange(parts)
    start = np.full((parts, n), inf, dtype=dtype)
    start[ks, list(space.owners)] = 0
    held, into = _shortest_from(start, send_price[ks, ks], space.links, deadline=deadline)
    by_start[:, 0] = by_end[:, 0] = hold[ks, ks] = held
    last[ks, ks] = into
    for length in range(1, parts):
        count = parts - length
        ks = np.arange(count)
        pair = (by_start[:count, :length] + by_end[length:, length - 1::-1]
                + task_price[ks, ks + length, :length])                     # (k, split, i)
        here = pair.min(axis=1)                                             # (k, i)
        held, into = _shortest_from(here, send_price[ks, ks + length], space.links,
                                    deadline=deadline)
        by_start[ks, length] = held
        by_end[ks + length, length] = held
        hold[ks, ks + length] = held
        last[ks, ks + length] = into
    if big is not None:
        hold = np.where(hold >= big, math.inf, hold)
    return IntervalTables(hold, by_start, by_end, last)


def _integer_infinity(send_price: np.ndarray, task_price: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer price arrays with every ``inf`` replaced by one integer above any finite tree."""
    finite_send = send_price != math.inf
    finite_task = task_price != math.inf
    big = 1 + int(sum(send_price[finite_send].tolist()) + sum(task_price[finite_task].tolist()))
    return (np.where(finite_send, send_price, big), np.where(finite_task, task_price, big), big)


def cheapest_interval_tree(space: TreeSpace, target: int, send_price: np.ndarray,
                           task_price: np.ndarray, *, deadline: Deadline | None = None,
                           tables: IntervalTables | None = None
                           ) -> tuple[float | int, list[Task] | None]:
    """The reduction tree to ``target`` of least price when prices depend on the interval.

    The dynamic program of :func:`price_tables` with a price per operation
    (:func:`interval_tables`), then the tree of its choices.

    Parameters
    ----------
    space:
        The platform's indexes (its own ``target`` is not used).
    target:
        Index of the node that must end with ``v[0,N-1]``.
    send_price:
        ``send_price[k, m, e]``: price of sending ``v[k,m]`` over
        ``space.links[e]`` (``k <= m``; the other cells are not read).
    task_price:
        ``task_price[k, m, l - k, i]``: price of ``T_{k,l,m}`` on node ``i``
        (``inf`` where no task may run, e.g. on a router).
    deadline:
        Checked at every interval length.
    tables:
        The tables of these prices when already computed.

    Returns
    -------
    (price, tasks)
        As :func:`cheapest_tree`: exact on integer (object) prices; a tree
        never sends ``v_k`` into its owner nor ``v[0,N-1]`` out of
        ``target`` (its paths are simple, :func:`_shortest_from`).
    """
    if tables is None:
        tables = interval_tables(space, send_price, task_price, deadline=deadline)
    by_start, by_end, last = tables.by_start, tables.by_end, tables.last
    n = len(space.nodes)
    parts = len(space.owners)
    price = tables.hold[0, parts - 1, target]
    if price == math.inf:
        return math.inf, None
    nodes = space.nodes
    tasks: list[Task] = []
    stack = [(target, 0, parts - 1)]
    while stack:
        j, k, m = stack.pop()
        hops = 0
        while last[k, m, j] >= 0:  # the sends into j, last first
            u, _ = space.links[int(last[k, m, j])]
            tasks.append(("send", nodes[u], nodes[j], k, m))
            j = u
            hops += 1
            if hops > n:  # pragma: no cover - the last sends form a forest
                raise AssertionError("a cycle in the shortest paths")
        if k == m:
            continue  # j is the owner of v_k
        task = task_price[k, m, :m - k, j]
        allowed = np.flatnonzero(task != math.inf)   # no float inf next to huge integers
        split = int(allowed[np.argmin(by_start[k, allowed, j] + by_end[m, m - k - 1 - allowed, j]
                                      + task[allowed])])
        tasks.append(("cons", nodes[j], k, k + split, m))
        stack.extend([(j, k, k + split), (j, k + split + 1, m)])
    return price, tasks
