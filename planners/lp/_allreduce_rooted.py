"""Series of all-reduces: reduce to a root, then broadcast from it, by tree columns.

Step 2 of :mod:`portsim.planners.lp._allreduce` (Legrand, Marchal and
Robert, RR-4872, section 4.2, for the reduction; the broadcast report's
arborescence column generation for the broadcast) at scale.  An instance is
one reduction tree delivering ``v[0,N-1]`` to a root ``r`` (a processor that
reaches every participant), then one broadcast arborescence of the result
from ``r``.  The program packs both kinds of columns:

``max TP`` subject to ``TP = Σ_A μ_A`` (the arborescences carry TP),
``Σ_{T of r} λ_T = Σ_{A of r} μ_A`` for every root ``r`` (every result made
for ``r`` is broadcast from ``r``), and the send, receive, CPU and link rows
of :class:`~portsim.planners.lp._tree_pricing.TreeSpace` (right-hand sides
of :class:`~portsim.planners.lp._capacity.PortCapacity`).

It has the optimum of :func:`~portsim.planners.lp._allreduce.build_allreduce_master`
(SSR(G)'s variables with the result made at a root): by Lemma 2 of RR-4872
every SSR(G) point is a weighted sum of reduction trees, so the per-root
reductions of that program are packings of trees; conversely a tree here may
make ``v[0,N-1]`` on a node ``i`` and send it on to ``r``, and that instance
is dominated by the reduction to ``i`` broadcast from ``i`` along ``r``'s
arborescence re-rooted at ``i`` (drop the arc into ``i``, add ``i -> r``),
which that program has.  Instead of declaring about ``|E| N^2 / 2`` send
and ``n N^3 / 6`` task variables (and solving that master again every
round), both kinds of columns are priced: a reduction tree by the reduce's
interval dynamic program (:class:`~portsim.planners.lp._tree_pricing.SharedTrees`,
one program for every root ``r``), an arborescence by Chu–Liu/Edmonds
(:func:`~portsim.planners.lp._arborescence.min_arborescence`, the root's
zero-price reach joined first) over the nodes ``r`` reaches, leaves that are
not participants pruned (as the broadcast's pricing: a heuristic for Steiner
arborescences, so the program is exact over the arborescences it can price,
as step 2 always was), a few roots' columns a round
(:data:`ROOTS_PER_ROUND`).  The first columns are every root's under unit
prices and the chains of the participants' order to every root
(:func:`~portsim.planners.lp._tree_pricing.chain_trees`).  One float
generation (:func:`~portsim.planners.lp._incremental.generate` on an
:class:`~portsim.planners.lp._incremental.IncrementalMaster`), then the
master over the columns in use is solved exactly: its value is carried by
the weighted instances returned, a schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import networkx as nx
import numpy as np

from portsim.planners.lp._allreduce_bound import TP, tp_cap
from portsim.planners.lp._arborescence import min_arborescence, prune
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._incremental import (
    TOLERANCE,
    IncrementalMaster,
    MasterPoint,
    generate,
)
from portsim.planners.lp._solve import (
    Deadline,
    LinearModel,
    TimeLimitReached,
    time_unit_of,
)
from portsim.planners.lp._ssr import Task
from portsim.planners.lp._tree_pricing import SharedTrees, TreeSpace, chain_trees
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["TREES_PER_ROOT", "RootedColumns", "Tree", "rooted_columns",
           "rooted_master", "roots"]

Tree = tuple[tuple[NodeId, NodeId], ...]
"""A broadcast arborescence: its arcs, sorted."""

ROOTS_PER_ROUND = 8
"""Partial pricing.  Each round reads every root's least reduction tree (one
dynamic program for all, :class:`~portsim.planners.lp._tree_pricing.SharedTrees`)
and lets those of the most improving ``ROOTS_PER_ROUND`` roots enter; it prices
arborescences root after root, from where the last round stopped, until this
many improving ones enter (or every root is priced); a column already in the
master does not count.  The generation stops only after a round that priced
every root and added nothing, as before.  With
every root's columns entering (up to three per root a round), measured:
``fat_tree_platform(6)`` (54 roots) 40.6 s of CPU for step 2 and 88 rounds,
3.9 s now; ``complete_platform(128)`` did not end within 300 s (about 5 s a
round, 128 arborescences of 16,256 arcs), now about 50 rounds (the whole
``lp`` call, exact 64/127, 56 s); ``fat_tree_platform(8)`` 85 s (56 s with the
hosts' results held through their edge switches); random platforms
(costs 1..10, seeds 0-2) the same values at N = 12, 16, 24 (also complete)
and 40, step 2 at N = 40 in 8-11 s instead of 29-41 s."""

TREES_PER_ROOT = 2
"""Reduction trees priced per root and round at most (the cheapest, then the
cheapest with another last task): fewer rounds for one dynamic program."""

_ONE = Fraction(1)


def roots(platform: Platform, operation: Operation) -> list[NodeId]:
    """Processors that reach every participant (they may finish and broadcast)."""
    parts = set(operation.participants)
    return [r for r in platform.processors
            if parts <= ({r} | nx.descendants(platform.graph, r))]


@dataclass(frozen=True)
class RootedColumns:
    """The columns of the reduce-then-broadcast program.

    Attributes
    ----------
    reductions:
        ``(root, tasks)``: a reduction tree delivering ``v[0,N-1]`` to ``root``.
    broadcasts:
        ``(root, arborescence)``: the result's broadcast from ``root``.
    rounds:
        Float column-generation rounds run.
    cut:
        The generation stopped at its ``budget`` (:func:`rooted_columns`)
        with improving columns left: these are the columns in use at its
        last master, not the best reduce-then-broadcast program's.
    """

    reductions: tuple[tuple[NodeId, tuple[Task, ...]], ...]
    broadcasts: tuple[tuple[NodeId, Tree], ...]
    rounds: int
    cut: bool = False


def _broadcast_tasks(operation: Operation, tree: Tree) -> list[Task]:
    """The sends of ``v[0,N-1]`` along ``tree`` (the loads of an arborescence column)."""
    last = len(operation.participants) - 1
    return [("send", u, v, 0, last) for u, v in tree]


def rooted_master(platform: Platform, operation: Operation, space: TreeSpace,
                  columns: RootedColumns) -> LinearModel:
    """The reduce-then-broadcast program over ``columns``, exact.

    Variable keys ``"TP"``, ``("reduction", c)`` and ``("broadcast", c)``
    (indexes into ``columns``); rows: ``TP = Σ μ``, one ``==`` row per root
    (in the order of :func:`roots`), then the ``<=`` rows of ``space``.
    Every column's upper bound is what its busiest row allows.
    """
    cap = tp_cap(platform, operation)
    order = {r: i for i, r in enumerate(roots(platform, operation))}
    model = LinearModel()
    tp = model.variable(TP, upper=cap)
    model.objective = tp
    total: dict[int, Fraction] = {tp: _ONE}
    per_root: list[dict[int, Fraction]] = [{} for _ in order]
    rows: list[dict[int, Fraction]] = [{} for _ in range(space.n_rows)]
    for kind, sign, items in (("reduction", _ONE, columns.reductions),
                              ("broadcast", -_ONE, columns.broadcasts)):
        for c, (root, what) in enumerate(items):
            tasks = list(what) if kind == "reduction" else _broadcast_tasks(operation, what)
            loads = space.loads(tasks)
            busiest = max(loads.values(), default=_ONE)
            j = model.variable((kind, c), upper=min(cap, 1 / busiest) if busiest else cap)
            per_root[order[root]][j] = sign
            if kind == "broadcast":
                total[j] = -_ONE
            for r, a in loads.items():
                rows[r][j] = a
    model.add(total, "==", Fraction(0), "the arborescences carry TP")
    for root, i in order.items():
        model.add(per_root[i], "==", Fraction(0), f"results made for {root} are broadcast")
    for r, coeffs in enumerate(rows):
        model.add(coeffs, "<=", space.rhs[r], f"row {r}")
    return model


def rooted_columns(platform: Platform, operation: Operation, *, deadline: Deadline,
                   budget: Deadline | None = None) -> tuple[TreeSpace, RootedColumns]:
    """Reduction trees and arborescences per root by float column generation.

    Parameters
    ----------
    platform, operation:
        As :func:`~portsim.planners.lp._allreduce.plan_allreduce`.
    deadline:
        Checked before every round and every arborescence, inside the
        dynamic program, and bounding every HiGHS run.
    budget:
        An earlier deadline for the generation alone: when it passes after
        a round was priced, the generation stops there and returns the
        columns in use at that round's master, ``cut`` set (the time left
        before ``deadline`` is for the exact master, the bounds and the
        schedule).  Without it, or before any round was priced, passing it
        raises as ``deadline`` does.

    Returns
    -------
    (TreeSpace, RootedColumns)
        The platform's rows (target: the first root) and every column
        generated, for :func:`rooted_master`.

    Raises
    ------
    TimeLimitReached
        When the deadline passes (the budget, before a round was priced).
    MasterFailed
        When HiGHS fails on the float master.
    """
    root_list = roots(platform, operation)
    if not root_list:
        raise ValueError("no processor reaches every participant")
    stop = deadline if budget is None else budget
    first = replace(operation, target=root_list[0])
    space = TreeSpace.of(platform, first)
    spaces = [replace(space, target=space.index[r]) for r in root_list]
    keep = set(operation.participants)
    reach = {r: sorted({r} | nx.descendants(platform.graph, r), key=space.index.__getitem__)
             for r in root_list}
    n_roots = len(root_list)
    row_of = {r: 1 + i for i, r in enumerate(root_list)}
    offset = 1 + n_roots  # the <= rows of ``space`` follow the == rows
    # busy times above 2^10 (an MI250 server in nanoseconds: 2 * 10^4 a message)
    # solved in a time unit of their own (time_unit_of's LONGEST_BUSY): HiGHS
    # said "Unknown" there; GB/s and seconds, 2 * 10^-5, solve as they are
    unit = time_unit_of([*map(float, space.busy), *(float(w) for w in space.compute if w)])
    master = IncrementalMaster(
        np.concatenate([np.zeros(offset), np.full(space.n_rows, -np.inf)]),
        np.concatenate([np.zeros(offset), np.array([float(b) for b in space.rhs])]),
        {"solver": "simplex", "presolve": "off"}, unit=unit)
    master.add_column(1.0, [0], [1.0])  # TP
    added: list[tuple[str, tuple[NodeId, tuple]]] = []  # type: ignore[type-arg]
    seen: set[tuple[str, NodeId, tuple]] = set()  # type: ignore[type-arg]

    def add(kind: str, root: NodeId, what: tuple) -> bool:  # type: ignore[type-arg]
        if (kind, root, what) in seen:
            return False
        seen.add((kind, root, what))
        tasks = list(what) if kind == "reduction" else _broadcast_tasks(operation, what)
        rows, values = space.float_loads(tasks)
        head = [row_of[root]] if kind == "reduction" else [0, row_of[root]]
        signs = [1.0] if kind == "reduction" else [-1.0, -1.0]
        master.add_column(0.0, [*head, *(offset + rows).tolist()], [*signs, *values.tolist()])
        added.append((kind, (root, what)))
        return True

    edge = {e: i for i, e in enumerate(platform.graph.edges)}  # the order of space.links
    # Per root, the arcs among the nodes it reaches (never into it), numbered locally:
    # the same every round, only their prices change.
    arcs_of: dict[NodeId, tuple[list[tuple[NodeId, NodeId]], np.ndarray, list[int], list[int]]]
    arcs_of = {}
    for r in root_list:
        local = {v: i for i, v in enumerate(reach[r])}
        arcs = [(e, u, v) for e, (u, v) in enumerate(platform.graph.edges)
                if v != r and u in local and v in local]
        arcs_of[r] = ([(u, v) for _, u, v in arcs], np.array([e for e, _, _ in arcs], dtype=int),
                      [local[u] for _, u, _ in arcs], [local[v] for _, _, v in arcs])

    phase = "column generation (allreduce reduction trees and arborescences)"

    def arborescence(root: NodeId, price: np.ndarray) -> Tree | None:
        # checked before each one: a pass over every root is seconds at 128 nodes
        stop.check(phase)
        arcs, index, tails, heads = arcs_of[root]
        chosen = min_arborescence(len(reach[root]), reach[root].index(root),
                                  list(zip(tails, heads, price[index].tolist(), strict=True)),
                                  free_first=True)
        if chosen is None:
            return None
        return prune((arcs[i] for i in chosen), keep)

    start = 0  # where the next round's arborescences are priced from (partial pricing)

    def price(y_rows: np.ndarray, duals: np.ndarray | None) -> bool:
        nonlocal start
        link, cpu, _ = space.prices(y_rows, exact=False)
        # One dynamic program for every root: the holding prices do not depend on it.
        shared = SharedTrees(spaces, link, cpu, deadline=stop)
        count = len(root_list)
        if duals is None:  # the first columns: every root's
            for i, r in enumerate(root_list):
                for _, tasks in shared.trees(i, TREES_PER_ROOT):
                    add("reduction", r, tuple(tasks))
                tree = arborescence(r, link)
                if tree is not None:
                    add("broadcast", r, tree)
            return True
        # Partial pricing: every root's least reduction tree is read (one program),
        # and the improving trees of the most improving roots enter, until those of
        # ROOTS_PER_ROUND roots have; arborescences are priced root after root from
        # where the last round stopped, until ROOTS_PER_ROUND improving ones have
        # entered.  A column already in the master does not count: the round adds
        # nothing only when no root has an improving column.
        sigma = [float(duals[row_of[r]]) for r in root_list]
        gain = [-(sigma[i] + float(shared.least(i))) for i in range(count)]
        entered = 0
        for i in sorted(range(count), key=lambda i: -gain[i]):
            if gain[i] <= TOLERANCE or entered == ROOTS_PER_ROUND:
                break
            fresh = [add("reduction", root_list[i], tuple(tasks))
                     for cost, tasks in shared.trees(i, TREES_PER_ROOT)
                     if -(sigma[i] + float(cost)) > TOLERANCE]
            entered += any(fresh)
        broadcasts = 0
        for step in range(count):
            i = (start + step) % count
            tree = arborescence(root_list[i], link)
            if (tree is not None
                    and float(duals[0]) + sigma[i] - sum(float(link[edge[e]]) for e in tree)
                    > TOLERANCE and add("broadcast", root_list[i], tree)):
                broadcasts += 1
                if broadcasts == ROOTS_PER_ROUND:
                    start = (i + 1) % count
                    break
        return entered + broadcasts > 0

    price(np.ones(space.n_rows), None)  # first columns: unit prices
    for r, rooted in zip(root_list, spaces, strict=True):
        # and the chains of the participants' order, each ending at the root: on a
        # fabric whose hosts each make one reduction, near the optimum at once
        # (fat_tree_platform(8): 64/127 after 192 rounds, not reached in 300 s
        # without them; fat_tree_platform(6): 65 rounds instead of 103)
        for chain in chain_trees(rooted):
            add("reduction", r, tuple(chain))

    # The columns in use at the last master priced, and the rounds priced: where a
    # cut generation stands (a HiGHS run the budget stopped has no solution to read).
    in_use: list[int] | None = None
    rounds = 0

    def pricing(point: MasterPoint) -> bool:
        nonlocal in_use, rounds
        in_use, rounds = master.used(), rounds + 1
        return price(point.duals[offset:], point.duals)

    cut = False
    try:
        rounds = generate(master, pricing, deadline=stop, phase=phase)
        in_use = master.used()
    except TimeLimitReached:
        if budget is None or deadline.expired or in_use is None:
            raise
        cut = True
    # The exact master takes the columns in use (positive or basic) only:
    # column 0 is TP, then the columns in the order they were added.
    used = set(in_use)
    keep_red = [c for c, (kind, _) in enumerate(added) if kind == "reduction" and c + 1 in used]
    keep_bc = [c for c, (kind, _) in enumerate(added) if kind == "broadcast" and c + 1 in used]
    return space, RootedColumns(tuple(added[c][1] for c in keep_red),  # type: ignore[misc]
                                tuple(added[c][1] for c in keep_bc), rounds, cut)


def solution_weights(model: LinearModel, exact: ExactSolution, columns: RootedColumns
                     ) -> tuple[list[tuple[NodeId, Fraction, tuple[Task, ...]]],
                                list[tuple[NodeId, Fraction, Tree]]]:
    """The positive weights of the exact master's reduction trees and arborescences."""
    reds = [(root, exact.values[model.index["reduction", c]], tasks)
            for c, (root, tasks) in enumerate(columns.reductions)
            if exact.values[model.index["reduction", c]] > 0]
    bcs = [(root, exact.values[model.index["broadcast", c]], tree)
           for c, (root, tree) in enumerate(columns.broadcasts)
           if exact.values[model.index["broadcast", c]] > 0]
    return reds, bcs
