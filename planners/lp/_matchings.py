"""Steady state on unidirectional and mixed platforms: column generation over matchings.

Under the unidirectional one-port model port sums are not enough (Beaumont
and Marchal, LIP RR-2004-32, section 2.2.2): the communications of a period
must be a weighted set of *matchings* of the platform graph.  With the
:class:`~portsim.planners.lp._ports.PortGraph` (one port vertex per unidirectional
node, ``out`` and ``in`` for a bidirectional node, ``k`` copies of each for
``multiport:k``, one port per link for ``multiport``, section 5) the same
holds for mixed platforms, a matching of the port graph being a
*configuration* of links active together; every link carries one transfer
at a time, so a configuration is a set of links (``mult_M(e)`` is 1).

The linear program (P) of section 3.2, generalised to every collective::

    maximise TP
    the collective's rows (flows, SSR(G) conservation and CPU, or trees)
    size · c(e) · traffic(e)  <=  Σ_{M ∋ e} mult_M(e) · x_M     (edge_e)
    Σ_M x_M  <=  1                                              (comm)

where ``traffic(e)`` is the explicit flow (scatter, gather, all-to-all), the
``send`` variables (reduce) or ``Σ_{T ∋ e} y_T`` (broadcast, all-gather:
weighted arborescences, spanning or Steiner, as in
:mod:`portsim.planners.lp._broadcast`).
Reduce takes the same structure as broadcast (:func:`reduce_with_matchings`):
weighted reduction trees as columns, priced by the interval dynamic program
:func:`portsim.planners.lp._tree_pricing.cheapest_tree` under link prices
``size · c(e) · v_e`` and CPU prices ``w(i) · y_cpu(i)``; the whole program
with ``send`` variables (``_plan_reduce_full``) is kept as the reference
the tests compare against, and for a commutative or one-participant reduce.

**Column generation** (the paper proves polynomiality with the ellipsoid
method on the dual (D) and calls it impractical; this is the practical
route, constraint generation on (D)).  The master starts with one
configuration per link (and one breadth-first tree per source) and is
solved by HiGHS's dual simplex, warm-started after every new column.  With
the duals ``v_e >= 0`` of the edge rows and ``u`` of the comm row, a
configuration improves when its weight ``Σ mult·v_e`` exceeds ``u``: the
best one is a maximum-weight matching of the port graph (networkx's
blossom algorithm).  A tree of source ``s`` improves when its cost
``Σ c·size·v_e`` is below the dual ``z_s`` of its source row: the best one
is a minimum arborescence (Chu–Liu/Edmonds), or a cheapest Steiner
arborescence where some reachable node is not a destination
(:mod:`portsim.planners.lp._steiner`: exact within its bound, else a
heuristic, tried first in every round anyway).  Paths and flows stay explicit
variables (polynomially many).  The loop stops when no column has a reduced
cost above :data:`TOLERANCE` (``1e-9``, absolute, in the master's float
duals), or after :data:`MAX_ROUNDS` rounds.

**Certification.**  The final master is solved again and recovered in exact
rationals (:mod:`portsim.planners.lp._exact`); its exact duals are priced exactly
(the maximum-weight matching on integer-scaled weights, the minimum
arborescence in Fractions).  An exactly improving column is added and the
exact solve repeated (at most :data:`EXACT_ROUNDS` times).  Then
``u' = max(u, W)`` (``W`` the exact heaviest configuration) and
``z'_s = min(z_s, W_s)`` (``W_s`` the exact cheapest tree, or a certified
lower bound on it where the Steiner pricing is heuristic) make the dual
feasible for every column outside the master, and weak duality over the
master's own columns (:func:`portsim.planners.lp._exact.dual_bound`, with the
variables' explicit upper bounds) gives a certified upper bound on the full
program.  When it meets the exact primal the optimum is exact; else the
result states the certified interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

import highspy
import networkx as nx
import numpy as np

from portsim.planners.base import PlanResult
from portsim.planners.lp._arborescence import min_arborescence
from portsim.planners.lp._broadcast import STEINER_NOTE, multicast_flow_model, tree_unit
from portsim.planners.lp._driver import NAME, LpOptions, finish, solve_exactly, time_limit_error
from portsim.planners.lp._exact import ExactSolution, dual_bound
from portsim.planners.lp._extract import extract_trees, top_down_unit
from portsim.planners.lp._flows import build_flow_model, commodities_of, decompose_paths
from portsim.planners.lp._periodic import Unit
from portsim.planners.lp._ports import Configuration, Link, PortGraph
from portsim.planners.lp._reduce import refuse_reduction
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached, new_highs
from portsim.planners.lp._ssr import Task, build_reduce_model
from portsim.planners.lp._steiner import TreePricer, heuristic_note, improving_trees
from portsim.planners.lp._tree_pricing import TreeSpace, cheapest_tree, cheapest_trees
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = [
    "EXACT_ROUNDS",
    "MAX_ROUNDS",
    "TOLERANCE",
    "CGSolution",
    "min_arborescence",
    "plan_matchings",
    "solve_with_matchings",
]

TOLERANCE = 1e-9
"""Column generation stops when no column's float reduced cost exceeds this."""

MAX_ROUNDS = 5_000
"""Cap on the float column-generation rounds."""

EXACT_ROUNDS = 20
"""Cap on the exact re-solves after the float loop."""

Tree = tuple[tuple[NodeId, NodeId], ...]
W = TypeVar("W", float, Fraction)
KeyToLink = Callable[[Hashable], Link | None]


@dataclass
class Base:
    """The collective's part of the master: its variables and rows, no port rows.

    Attributes
    ----------
    model:
        TP (the objective), the explicit variables and the collective's rows.
    loads:
        Per link, the busy time per unit of each explicit variable crossing it.
    """

    model: LinearModel
    loads: dict[Link, dict[int, Fraction]]


@dataclass
class CGSolution:
    """The certified outcome of the column generation."""

    exact: ExactSolution
    trees: list[tuple[int, Fraction, Tree]]
    configurations: list[tuple[Fraction, Configuration]]
    rounds: int
    columns: int
    notes: list[str] = field(default_factory=list)


def strip_ports(model: LinearModel, platform: Platform, size: Fraction,
                key_to_link: KeyToLink) -> Base:
    """Drop the one-port rows of a bidirectional ``model`` and record link loads.

    A port row is a ``<= k`` row (``k >= 1``: the node's ports, or 1 for a
    link row of :class:`~portsim.planners.lp._capacity.PortCapacity`) over
    link variables only.  Upper bounds stay: a link carries one transfer at
    a time under every port model.
    """
    out = LinearModel()
    out.keys = list(model.keys)
    out.index = dict(model.index)
    out.upper = list(model.upper)
    out.objective = model.objective
    links: dict[int, Link] = {}
    loads: dict[Link, dict[int, Fraction]] = defaultdict(dict)
    for key, j in model.index.items():
        link = key_to_link(key)
        if link is not None:
            links[j] = link
            loads[link][j] = size * platform.cost(*link)
    out.rows = [row for row in model.rows
                if not (row.sense == "<=" and row.rhs >= 1 and row.coeffs
                        and all(j in links for j in row.coeffs))]
    return Base(out, dict(loads))


def _master(base: Base, links: Sequence[Link], trees: Sequence[tuple[int, Tree]],
            n_sources: int, configs: Sequence[Configuration], busy: dict[Link, Fraction]
            ) -> tuple[LinearModel, tuple[int, int, int]]:
    """The exact master over the given columns, and where its rows are."""
    m = LinearModel()
    m.keys = list(base.model.keys)
    m.index = dict(base.model.index)
    m.upper = list(base.model.upper)
    m.objective = base.model.objective
    tp = m.objective
    edge: dict[Link, dict[int, Fraction]] = {e: dict(base.loads.get(e, {})) for e in links}
    source_rows: list[dict[int, Fraction]] = [{tp: Fraction(1)} for _ in range(n_sources)]
    for k, (s, tree) in enumerate(trees):
        first = min((busy[e] for e in tree), default=Fraction(1))
        j = m.variable(("tree", k), upper=1 / first)
        source_rows[s][j] = Fraction(-1)
        for e in tree:
            edge[e][j] = busy[e]
    comm: dict[int, Fraction] = {}
    for k, config in enumerate(configs):
        j = m.variable(("config", k), upper=Fraction(1))
        comm[j] = Fraction(1)
        for e, mult in config:
            edge[e][j] = Fraction(-mult)
    m.rows = list(base.model.rows)
    first_source = len(m.rows)
    for s, row in enumerate(source_rows):
        m.add(row, "==", Fraction(0), f"trees of source {s} carry TP")
    first_edge = len(m.rows)
    for e in links:
        m.add(edge[e], "<=", Fraction(0), f"matchings cover {e[0]}->{e[1]}")
    m.add(comm, "<=", Fraction(1), "matchings fit in one time unit")
    return m, (first_source, first_edge, len(m.rows) - 1)


class _FloatMaster:
    """The master in HiGHS (dual simplex), warm-started as columns arrive."""

    def __init__(self, model: LinearModel, deadline: Deadline) -> None:
        h = new_highs()
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 1)
        self.deadline = deadline
        inf = highspy.kHighsInf
        n = model.n_variables
        cols: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        lower, upper = [], []
        for i, row in enumerate(model.rows):
            for j, a in row.coeffs.items():
                cols[j].append((i, float(a)))
            lower.append(-inf if row.sense == "<=" else float(row.rhs))
            upper.append(float(row.rhs))
        h.addRows(len(lower), np.array(lower), np.array(upper), 0,
                  np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        for j in range(n):
            self._add(h, -1.0 if j == model.objective else 0.0, cols[j])
        self.h = h

    @staticmethod
    def _add(h: highspy.Highs, cost: float, col: list[tuple[int, float]]) -> None:
        h.addCol(cost, 0.0, highspy.kHighsInf, len(col),
                 np.array([i for i, _ in col], dtype=np.int32),
                 np.array([a for _, a in col], dtype=np.float64))

    def add(self, col: dict[int, Fraction]) -> None:
        self._add(self.h, 0.0, [(i, float(a)) for i, a in col.items()])

    def solve(self) -> tuple[str, float, np.ndarray]:
        left = self.deadline.remaining()
        if left is not None:  # HiGHS's clock runs on across the runs of one object
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(left, 1e-3))
        self.h.run()
        status = self.h.getModelStatus()
        if status == highspy.HighsModelStatus.kTimeLimit:
            return "time_limit", 0.0, np.zeros(0)
        if status != highspy.HighsModelStatus.kOptimal:
            return self.h.modelStatusToString(status), 0.0, np.zeros(0)
        duals = -np.asarray(self.h.getSolution().row_dual, dtype=float)
        return "optimal", -self.h.getObjectiveValue(), duals


def solve_with_matchings(platform: Platform, base: Base, options: LpOptions, *,
                         what: str, size: Fraction,
                         sources: Sequence[NodeId] = (),
                         targets: Sequence[Collection[NodeId]] | None = None
                         ) -> CGSolution | PlanResult:
    """Column generation over configurations (and trees of ``sources``), certified.

    Parameters
    ----------
    platform:
        The platform (any port models).
    base:
        The collective's variables and rows (:func:`strip_ports`), or TP alone
        with ``sources`` for broadcast trees.
    options:
        The ``lp`` options (``time_limit`` bounds the float loop and every
        HiGHS solve).
    what:
        The program's name, for messages.
    size:
        Message size (tree columns load ``size · c(e)`` on their links).
    sources:
        Sources of weighted arborescences (broadcast, all-gather).
    targets:
        Per source, its destinations (``None``: every node it reaches).  Where
        they miss a reachable node the trees are Steiner arborescences
        (:class:`~portsim.planners.lp._steiner.TreePricer`), priced exactly
        within its bound, else by a heuristic whose lower bound certifies.

    Returns
    -------
    CGSolution or PlanResult
        A :class:`PlanResult` on solver failure.
    """
    ports = PortGraph.of(platform)
    links = list(ports.links)
    busy = {e: size * platform.cost(*e) for e in links}
    pricers = [TreePricer(platform.graph.edges, s, {s} | nx.descendants(platform.graph, s),
                          None if targets is None else targets[i])
               for i, s in enumerate(sources)]
    trees: list[tuple[int, Tree]] = [(i, p.initial()) for i, p in enumerate(pricers)]
    configs: list[Configuration] = [((e, 1),) for e in links]
    seen_trees = set(trees)
    seen_configs = set(configs)
    model, (src0, edge0, comm_row) = _master(base, links, trees, len(sources), configs, busy)
    deadline = options.clock()
    float_master = _FloatMaster(model, deadline)
    rounds = 0

    link_row = {e: edge0 + i for i, e in enumerate(links)}

    def tree_column(s: int, tree: Tree) -> dict[int, Fraction]:
        col = {src0 + s: Fraction(-1)}
        for e in tree:
            col[link_row[e]] = busy[e]
        return col

    while rounds < MAX_ROUNDS:
        rounds += 1
        if deadline.expired:
            return time_limit_error(options, f"the column generation of the {what} "
                                             f"master ({rounds} rounds)")
        status, _, y = float_master.solve()
        if status == "time_limit":
            return time_limit_error(options, f"the column generation of the {what} "
                                             f"master (HiGHS, round {rounds})")
        if status != "optimal":
            return PlanResult.error(NAME, f"HiGHS failed on the {what} master: {status}")
        v = {e: max(float(y[link_row[e]]), 0.0) for e in links}
        added = False
        weight, config = ports.best_float(v)
        if weight > float(y[comm_row]) + TOLERANCE and config not in seen_configs:
            configs.append(config)
            seen_configs.add(config)
            float_master.add(_config_column(config, comm_row, link_row))
            added = True
        if sources:
            price = {e: float(busy[e]) * v[e] for e in links}
            for i, tree in improving_trees(pricers, price,
                                           [float(y[src0 + i]) for i in range(len(sources))],
                                           seen_trees, TOLERANCE, deadline=deadline):
                trees.append((i, tree))
                seen_trees.add((i, tree))
                float_master.add(tree_column(i, tree))
                added = True
        if not added:
            break
    float_rounds = rounds
    exact: ExactSolution | None = None
    best_weight = Fraction(0)
    cheapest: list[Fraction] = []
    used_trees: list[tuple[int, Tree]] = []
    used_configs: list[Configuration] = []
    for _ in range(EXACT_ROUNDS):
        if deadline.expired:
            return time_limit_error(options, f"the exact pricing of the {what} master")
        used_trees, used_configs = list(trees), list(configs)
        model, _ = _master(base, links, used_trees, len(sources), used_configs, busy)
        found = solve_exactly(model, options, what=f"{what} master")
        if isinstance(found, PlanResult):
            return found
        exact = found
        y_row = _row_duals(model, exact)
        v_exact = {e: max(y_row[link_row[e]], Fraction(0)) for e in links}
        best_weight, config = ports.best(v_exact)
        added = False
        if best_weight > y_row[comm_row] and config not in seen_configs:
            configs.append(config)
            seen_configs.add(config)
            added = True
        cheapest = []
        unproven: set[int] = set()
        price_exact = {e: busy[e] * v_exact[e] for e in links}
        for i in range(len(sources)):
            found_tree = pricers[i].best(price_exact, Fraction(0))
            if found_tree is None:
                return PlanResult.error(NAME, f"{sources[i]} reaches no spanning tree")
            exact_tree, exact_cost = found_tree.edges, found_tree.cost
            cheapest.append(found_tree.lower)
            if not found_tree.exact:
                unproven.add(i)
            if exact_cost < y_row[src0 + i] and (i, exact_tree) not in seen_trees:
                trees.append((i, exact_tree))
                seen_trees.add((i, exact_tree))
                added = True
        if not added:
            break
    assert exact is not None
    # Certificate: make the dual feasible for every column outside the master.
    y_row = _row_duals(model, exact)
    y_row[comm_row] = max(y_row[comm_row], best_weight)
    for i in range(len(sources)):
        y_row[src0 + i] = min(y_row[src0 + i], cheapest[i])
    y_ub = [y_row[i] for i, r in enumerate(model.rows) if r.sense == "<="]
    y_eq = [y_row[i] for i, r in enumerate(model.rows) if r.sense == "=="]
    upper = max(dual_bound(model, y_ub, y_eq), exact.lower)
    certified = ExactSolution(exact.values, exact.lower, upper, y_ub, y_eq,
                              exact.method if upper == exact.lower else "interval",
                              exact.notes)
    n_base = base.model.n_variables
    weighted_trees = [(s, exact.values[n_base + k], tree)
                      for k, (s, tree) in enumerate(used_trees)]
    offset = n_base + len(used_trees)
    weighted_configs = [(exact.values[offset + k], config)
                        for k, config in enumerate(used_configs)]
    notes = [f"column generation over matchings of the port graph ({what}): {float_rounds} "
             f"float round(s) with reduced-cost tolerance {TOLERANCE:g}, then exact pricing; "
             f"{len(configs)} matching column(s), {len(trees)} tree column(s); "
             f"{sum(1 for w, _ in weighted_configs if w > 0)} matching(s) and "
             f"{sum(1 for _, w, _ in weighted_trees if w > 0)} tree(s) used"]
    if unproven:
        notes.append(heuristic_note([sources[i] for i in unproven]))
    return CGSolution(certified, [t for t in weighted_trees if t[1] > 0],
                      [c for c in weighted_configs if c[0] > 0], float_rounds,
                      len(configs) + len(trees), notes)


def _config_column(config: Configuration, comm_row: int,
                   link_row: Mapping[Link, int]) -> dict[int, Fraction]:
    """A matching's master column: 1 on the time row, ``-multiplicity`` on each link it covers."""
    col = {comm_row: Fraction(1)}
    for e, mult in config:
        col[link_row[e]] = Fraction(-mult)
    return col


def _row_duals(model: LinearModel, exact: ExactSolution) -> list[Fraction]:
    """The exact dual of every row, in the model's row order."""
    out: list[Fraction] = []
    i_ub = i_eq = 0
    for row in model.rows:
        if row.sense == "<=":
            out.append(exact.y_ub[i_ub])
            i_ub += 1
        else:
            out.append(exact.y_eq[i_eq])
            i_eq += 1
    return out


def _lanes(configs: Sequence[tuple[Fraction, Configuration]]
           ) -> list[tuple[Fraction, list[Link]]]:
    """Configurations as the schedule's weighted matchings (a link once per lane)."""
    return [(w, [e for e, mult in config for _ in range(mult)]) for w, config in configs]


# -- the collectives -----------------------------------------------------------------------

def _flow_link(key: Hashable) -> Link | None:
    if isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], int):
        return key[1], key[2]
    return None


def _send_link(key: Hashable) -> Link | None:
    if isinstance(key, tuple) and key and key[0] == "send":
        return key[1], key[2]
    return None


def _copies_link(key: Hashable) -> Link | None:
    if isinstance(key, tuple) and key and key[0] == "n":
        return key[2], key[3]
    return None


def _plan_flows(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    commodities = commodities_of(operation)
    if not commodities:
        return PlanResult.error(NAME, f"nothing to transfer in this {operation.kind}: "
                                      f"the throughput is unbounded")
    flow_model = build_flow_model(platform, commodities, operation.size)
    base = strip_ports(flow_model.model, platform, operation.size, _flow_link)
    found = solve_with_matchings(platform, base, options, what=str(operation.kind),
                                 size=operation.size)
    if isinstance(found, PlanResult):
        return found
    groups = decompose_paths(flow_model, found.exact.values, found.exact.lower)
    return finish(platform, operation, found.exact, groups, options, notes=found.notes,
                  matchings=_lanes(found.configurations))


def _plan_reduce(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Reduce by reduction-tree and matching columns (:func:`reduce_with_matchings`)."""
    if operation.commutative or len(operation.participants) < 2:
        return _plan_reduce_full(platform, operation, options)
    found = reduce_with_matchings(platform, operation, options)
    if isinstance(found, PlanResult):
        return found
    exact, trees, configs, notes = found
    groups = [[top_down_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options, notes=notes,
                  matchings=_lanes(configs))


def _plan_reduce_full(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Reduce by the whole SSR(G) program with matching coverage rows (the reference)."""
    refused = refuse_reduction(operation)
    if refused is not None:
        return refused
    model = build_reduce_model(platform, operation)
    base = strip_ports(model, platform, operation.size, _send_link)
    found = solve_with_matchings(platform, base, options, what="reduce (SSR)",
                                 size=operation.size)
    if isinstance(found, PlanResult):
        return found
    values = found.exact.values
    amount = {key: values[j] for key, j in model.index.items()
              if key != "TP" and values[j] > 0}
    try:
        trees = extract_trees(operation, amount, found.exact.lower,  # type: ignore[arg-type]
                              deadline=options.clock())
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase} of the reduce (SSR) program")
    groups = [[top_down_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, found.exact, groups, options, notes=found.notes,
                  matchings=_lanes(found.configurations))


def _plan_multicast(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    if operation.kind is OperationKind.BROADCAST:
        assert operation.source is not None
        sources = [(operation.source, operation.targets, Item.broadcast())]
    else:
        parts = operation.participants
        sources = [(k, tuple(p for p in parts if p != k), Item.message(k)) for k in parts]
    sources = [(s, t, item) for s, t, item in sources if [x for x in t if x != s]]
    what = str(operation.kind)
    if not sources:
        return PlanResult.error(NAME, f"a {what} without destinations needs no "
                                      f"communication: the throughput is unbounded")
    base_model = LinearModel()
    tp = base_model.variable("TP", upper=Fraction(10**9))
    base_model.objective = tp
    found = solve_with_matchings(platform, Base(base_model, {}), options,
                                 what=f"{what} trees", size=operation.size,
                                 sources=[s for s, _, _ in sources],
                                 targets=[t for _, t, _ in sources])
    if isinstance(found, PlanResult):
        return found
    notes = list(found.notes)
    exact = found.exact
    steiner = any(({s} | nx.descendants(platform.graph, s)) - set(t) - {s}
                  for s, t, _ in sources)
    if steiner:
        notes.append(STEINER_NOTE)
    if steiner and exact.upper > exact.lower:
        flow = multicast_flow_model(platform, [(s, t) for s, t, _ in sources],
                                    operation.size)
        bound = solve_with_matchings(
            platform, strip_ports(flow, platform, operation.size, _copies_link),
            options, what=f"{what} per-destination flow", size=operation.size)
        if isinstance(bound, PlanResult):
            return bound
        upper = max(min(exact.upper, bound.exact.upper), exact.lower)
        notes.append("the bound is the least of the tree packing's certified bound and "
                     "the per-destination flow program's over matchings")
        exact = ExactSolution(exact.values, exact.lower, upper, exact.y_ub, exact.y_eq,
                              exact.method if upper == exact.lower else "interval",
                              exact.notes + bound.exact.notes)
    groups: list[list[Unit]] = [
        [tree_unit(w, t, sources[i][0], sources[i][2]) for j, w, t in found.trees if j == i]
        for i in range(len(sources))]
    return finish(platform, operation, exact, groups, options, notes=notes,
                  matchings=_lanes(found.configurations))


_PLANS: dict[OperationKind, Callable[[Platform, Operation, LpOptions], PlanResult]] = {
    OperationKind.SCATTER: _plan_flows,
    OperationKind.GATHER: _plan_flows,
    OperationKind.ALLTOALL: _plan_flows,
    OperationKind.REDUCE: _plan_reduce,
    OperationKind.BROADCAST: _plan_multicast,
    OperationKind.ALLGATHER: _plan_multicast,
}


def plan_matchings(platform: Platform, operation: Operation, options: LpOptions
                   ) -> PlanResult:
    """Optimal steady state on any mix of port models, by column generation.

    Parameters
    ----------
    platform:
        Nodes under any port models (unidirectional, bidirectional, multiport:k).
    operation:
        A resolved collective.
    options:
        The ``lp`` options.

    Returns
    -------
    PlanResult
        As :func:`portsim.planners.lp.steady_state`; the notes give the rounds and columns.

    Notes
    -----
    On Fig. 2 of the broadcast report under the unidirectional model (links
    1→2 and 1→3 of cost 1, 2→3 of cost 1/2) the optimum is 2/3 (section
    2.2.2), against 1 under the bidirectional model.

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
    >>> p = Platform.build(["P1", "P2", "P3"], [("P1", "P2", 1), ("P1", "P3", 1),
    ...                    ("P2", "P3", "1/2")], "unidirectional")
    >>> op = Operation(OperationKind.BROADCAST, source="P1").resolve(p)
    >>> plan_matchings(p, op, LpOptions()).throughput_bound
    Fraction(2, 3)
    """
    plan = _PLANS.get(operation.kind)
    if plan is None:
        return PlanResult.unsupported(NAME, f"lp handles {operation.kind} on "
                                            f"platforms without unidirectional nodes only")
    try:
        PortGraph.of(platform)
    except PlannerError as exc:
        return PlanResult.unsupported(NAME, str(exc))
    return plan(platform, operation, options)


def _reduce_tree_master(space: TreeSpace, links: Sequence[Link], trees: Sequence[list[Task]],
                        configs: Sequence[Configuration]
                        ) -> tuple[LinearModel, int, dict[Link, int], dict[int, int], int]:
    """The SSR(G) tree-packing master with matching coverage, over the given columns.

    Rows: ``TP - Σ_T λ_T == 0``; per link ``Σ_T busy_T(e) λ_T - Σ_M mult_M(e) μ_M <= 0``;
    per CPU ``Σ_T w(i) tasks_T(i) λ_T <= 1``; ``Σ_M μ_M <= 1``.  Returns the
    model, the tree row, the link rows, the CPU rows (node index -> row) and
    the matching row.
    """
    m = LinearModel()
    tp = m.variable("TP", upper=Fraction(10**9))
    m.objective = tp
    tree_row: dict[int, Fraction] = {tp: Fraction(1)}
    edge: dict[Link, dict[int, Fraction]] = {e: {} for e in links}
    cpu: dict[int, dict[int, Fraction]] = {i: {} for i in space.cpu_rows}
    for k, tasks in enumerate(trees):
        link_load, cpu_load = _tree_loads(space, tasks)
        most = max(link_load.values(), default=Fraction(0))
        j = m.variable(("tree", k), upper=(1 / most) if most > 0 else Fraction(10**9))
        tree_row[j] = Fraction(-1)
        for e, a in link_load.items():
            edge[e][j] = a
        for i, a in cpu_load.items():
            cpu[i][j] = a
    comm: dict[int, Fraction] = {}
    for k, config in enumerate(configs):
        j = m.variable(("config", k), upper=Fraction(1))
        comm[j] = Fraction(1)
        for e, mult in config:
            edge[e][j] = Fraction(-mult)
    m.add(tree_row, "==", Fraction(0), "the reduction trees carry TP")
    link_row: dict[Link, int] = {}
    for e in links:
        link_row[e] = len(m.rows)
        m.add(edge[e], "<=", Fraction(0), f"matchings cover {e[0]}->{e[1]}")
    cpu_row: dict[int, int] = {}
    for i, coeffs in cpu.items():
        cpu_row[i] = len(m.rows)
        m.add(coeffs, "<=", Fraction(1), f"CPU of {space.nodes[i]}")
    m.add(comm, "<=", Fraction(1), "matchings fit in one time unit")
    return m, 0, link_row, cpu_row, len(m.rows) - 1


def _tree_loads(space: TreeSpace, tasks: Sequence[Task]
                ) -> tuple[dict[Link, Fraction], dict[int, Fraction]]:
    """Busy time per link and per CPU (node index) of one instance of a reduction tree."""
    link_load: dict[Link, Fraction] = defaultdict(Fraction)
    cpu_load: dict[int, Fraction] = defaultdict(Fraction)
    busy = dict(zip((tuple(space.nodes[x] for x in uv) for uv in space.links), space.busy,
                    strict=True))
    for task in tasks:
        if task[0] == "send":
            e = (task[1], task[2])
            link_load[e] += busy[e]  # type: ignore[index]
        else:
            i = space.index[task[1]]  # type: ignore[index]
            if i in space.cpu_rows:
                w = space.compute[i]
                assert w is not None
                cpu_load[i] += w
    return dict(link_load), dict(cpu_load)  # type: ignore[return-value]


def _tree_prices(space: TreeSpace, y_link: Mapping[Link, W], y_cpu: Mapping[int, W]
                 ) -> tuple[list[W], list[W | None]]:
    """Price of one send per link of ``space.links`` and of one task per node (None: router)."""
    link = [b * y_link.get((space.nodes[u], space.nodes[v]), 0 * b)  # type: ignore[operator]
            for (u, v), b in zip(space.links, space.busy, strict=True)]
    cpu: list[W | None] = []
    for i, w in enumerate(space.compute):
        if w is None:
            cpu.append(None)
        else:
            cpu.append(w * y_cpu[i] if i in y_cpu else 0 * w)  # type: ignore[operator,arg-type]
    return link, cpu  # type: ignore[return-value]


def _cheapest_reduce_trees(space: TreeSpace, y_link: Mapping[Link, float],
                           y_cpu: Mapping[int, float], count: int, deadline: Deadline
                           ) -> list[tuple[float | int, list[Task]]]:
    link, cpu = _tree_prices(space, {e: float(v) for e, v in y_link.items()},
                             {i: float(v) for i, v in y_cpu.items()})
    return cheapest_trees(space, np.array([float(x) for x in link]),
                          np.array([np.inf if c is None else float(c) for c in cpu]),
                          count, deadline=deadline)


def _cheapest_reduce_tree_exact(space: TreeSpace, y_link: Mapping[Link, Fraction],
                                y_cpu: Mapping[int, Fraction], deadline: Deadline
                                ) -> tuple[Fraction, list[Task] | None]:
    """The least exact tree price (integers scaled by the lcm of the denominators)."""
    link, cpu = _tree_prices(space, y_link, y_cpu)
    q = 1
    for f in [*link, *(c for c in cpu if c is not None)]:
        d = Fraction(f).denominator
        q = q * d // math.gcd(q, d)
    link_int = np.empty(len(link), dtype=object)
    link_int[:] = [int(f * q) for f in link]
    cpu_int = np.empty(len(cpu), dtype=object)
    cpu_int[:] = [math.inf if c is None else int(c * q) for c in cpu]
    price, tasks = cheapest_tree(space, link_int, cpu_int, deadline=deadline)
    if tasks is None:
        return Fraction(0), None
    return Fraction(int(price), q), tasks


def reduce_with_matchings(platform: Platform, operation: Operation, options: LpOptions
                          ) -> tuple[ExactSolution, list[tuple[Fraction, list[Task]]],
                                     list[tuple[Fraction, Configuration]], list[str]
                                     ] | PlanResult:
    """SSR(G) on any port models as a packing of reduction trees and matchings.

    The master holds reduction-tree columns (priced by
    :func:`portsim.planners.lp._tree_pricing.cheapest_tree` under link prices
    ``busy(e) · y(e)``, ``y`` the coverage-row duals, and CPU prices
    ``w(i) · y_cpu(i)``) and matching columns (priced by a maximum-weight
    configuration of the port graph), the same structure as broadcast trees.

    Returns
    -------
    (exact, trees, configurations, notes) or PlanResult
        The certified master solution, the weighted trees (weights sum to
        ``exact.lower``), the weighted configurations; a result on failure.

    Notes
    -----
    Equal to SSR(G) with matching coverage: every SSR(G) point is a weighted
    sum of reduction trees with no larger link and CPU loads (Lemma 2 of
    RR-4872, section 4.4), and every tree packing is an SSR(G) point.  The
    certificate is the broadcast one: the exact master dual, with the
    matching row raised to the exact best configuration weight and the tree
    row lowered to the exact least tree price, is feasible for every column,
    so :func:`portsim.planners.lp._exact.dual_bound` bounds the whole program.
    """
    deadline = options.clock()
    space = TreeSpace.of(platform, operation)
    ports = PortGraph.of(platform)
    links = list(ports.links)
    configs: list[Configuration] = [((e, 1),) for e in links]
    seen_configs = set(configs)
    ones = dict.fromkeys(links, 1.0)
    first = _cheapest_reduce_trees(space, ones, dict.fromkeys(space.cpu_rows, 1.0), 1, deadline)
    if not first:
        return PlanResult.error(NAME, "no reduction tree reaches the target")
    trees: list[list[Task]] = [first[0][1]]
    seen_trees = {tuple(first[0][1])}
    model, tree_row, link_row, cpu_row, comm_row = _reduce_tree_master(
        space, links, trees, configs)
    float_master = _FloatMaster(model, deadline)

    def tree_column(tasks: list[Task]) -> dict[int, Fraction]:
        link_load, cpu_load = _tree_loads(space, tasks)
        col = {tree_row: Fraction(-1)}
        for e, a in link_load.items():
            col[link_row[e]] = a
        for i, a in cpu_load.items():
            col[cpu_row[i]] = a
        return col

    rounds = 0
    try:
        while rounds < MAX_ROUNDS:
            rounds += 1
            deadline.check("the column generation of the reduce (SSR) master")
            status, _, y = float_master.solve()
            if status == "time_limit":
                raise TimeLimitReached("the column generation of the reduce (SSR) master")
            if status != "optimal":
                return PlanResult.error(NAME, f"HiGHS failed on the reduce (SSR) master: "
                                              f"{status}")
            v = {e: max(float(y[link_row[e]]), 0.0) for e in links}
            vc = {i: max(float(y[r]), 0.0) for i, r in cpu_row.items()}
            added = False
            weight, config = ports.best_float(v)
            if weight > float(y[comm_row]) + TOLERANCE and config not in seen_configs:
                configs.append(config)
                seen_configs.add(config)
                float_master.add(_config_column(config, comm_row, link_row))
                added = True
            for price, tasks in _cheapest_reduce_trees(space, v, vc, 4, deadline):
                if float(price) < float(y[tree_row]) - TOLERANCE \
                        and tuple(tasks) not in seen_trees:
                    trees.append(tasks)
                    seen_trees.add(tuple(tasks))
                    float_master.add(tree_column(tasks))
                    added = True
            if not added:
                break
        float_rounds = rounds
        for _ in range(EXACT_ROUNDS):
            deadline.check("the exact pricing of the reduce (SSR) master")
            model, tree_row, link_row, cpu_row, comm_row = _reduce_tree_master(
                space, links, trees, configs)
            found = solve_exactly(model, options, what="reduce (SSR) tree master")
            if isinstance(found, PlanResult):
                return found
            exact = found
            y_row = _row_duals(model, exact)
            v_exact = {e: max(y_row[link_row[e]], Fraction(0)) for e in links}
            vc_exact = {i: max(y_row[r], Fraction(0)) for i, r in cpu_row.items()}
            best_weight, config = ports.best(v_exact)
            cheapest, tasks_exact = _cheapest_reduce_tree_exact(space, v_exact, vc_exact,
                                                                deadline)
            if tasks_exact is None:
                return PlanResult.error(NAME, "no reduction tree reaches the target")
            added = False
            if best_weight > y_row[comm_row] and config not in seen_configs:
                configs.append(config)
                seen_configs.add(config)
                added = True
            if cheapest < y_row[tree_row] and tuple(tasks_exact) not in seen_trees:
                trees.append(tasks_exact)
                seen_trees.add(tuple(tasks_exact))
                added = True
            if not added:
                break
    except TimeLimitReached as stop:
        return time_limit_error(options, stop.phase)
    # Certificate: a dual feasible for every column outside the master too.
    y_row[comm_row] = max(y_row[comm_row], best_weight)
    y_row[tree_row] = min(y_row[tree_row], cheapest)
    y_ub = [y_row[i] for i, r in enumerate(model.rows) if r.sense == "<="]
    y_eq = [y_row[i] for i, r in enumerate(model.rows) if r.sense == "=="]
    upper = max(dual_bound(model, y_ub, y_eq), exact.lower)
    certified = ExactSolution(exact.values, exact.lower, upper, y_ub, y_eq,
                              exact.method if upper == exact.lower else "interval",
                              exact.notes)
    weighted_trees = [(exact.values[model.index["tree", k]], tasks)
                      for k, tasks in enumerate(trees)
                      if exact.values[model.index["tree", k]] > 0]
    weighted_configs = [(exact.values[model.index["config", k]], c)
                        for k, c in enumerate(configs)
                        if exact.values[model.index["config", k]] > 0]
    notes = [f"SSR(G) by column generation over reduction trees and matchings of the port "
             f"graph: {float_rounds} float round(s), then exact pricing; "
             f"{len(configs)} matching column(s), {len(trees)} tree column(s); "
             f"{len(weighted_trees)} tree(s) and "
             f"{len(weighted_configs)} matching(s) used"]
    return certified, weighted_trees, weighted_configs, notes
