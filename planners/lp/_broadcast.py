"""Series of broadcasts, bidirectional one-port (Beaumont and Marchal, section 2.2.1).

Two formulations:

- **Per-destination flows** (the text's linear program): ``x_i^{j,k}``
  messages for destination ``i`` cross link ``(j, k)``; a link is busy
  ``t_{j,k} = c_{j,k} · max_i x_i^{j,k}`` (one copy serves every destination
  behind it); every destination receives TP; ports ``Σ t <= 1``.  This is an
  upper bound on any schedule.
- **Weighted broadcast trees by column generation**: the master program
  maximises ``Σ_T y_T`` under the port rows, over spanning arborescences
  rooted at the source; the pricing step is a minimum arborescence
  (Chu–Liu/Edmonds) under the port duals.  It gives the trees directly.  Its
  bound is certified globally by an exact pricing: with exact duals ``π``
  and ``W`` the exact minimum tree cost, ``Σπ / min(1, W)`` bounds every
  spanning-tree packing.

When every node reachable from the source is a destination, Edmonds'
branching theorem makes the two optima equal (the text: "a weighted version of
Edmond's branching theorem").  Otherwise (routers, or destinations a subset)
the columns are Steiner arborescences, which reach every destination and
relay through or skip the other nodes (:mod:`._steiner`): their packing
bounds every store-and-forward schedule (each piece of a message reaches the
destinations along one) and can be strictly below the flow program, whose
optimum stays only as a cap when the Steiner pricing is heuristic and the
result an interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import networkx as nx
import numpy as np

from portsim.planners.base import PlanResult
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import (
    NAME,
    LpOptions,
    finish,
    no_communication,
    solve_exactly,
    time_limit_error,
)
from portsim.planners.lp._exact import PORTS_CAP, ExactSolution, Repair, repair_grid
from portsim.planners.lp._flow_cuts import multicast_flow_bound, source_cap
from portsim.planners.lp._incremental import (
    EXACT_ROUNDS,
    GENERATION_SHARE,
    TOLERANCE,
    IncrementalMaster,
    MasterFailed,
    MasterPoint,
    exact_rounds,
    generate,
)
from portsim.planners.lp._periodic import SendTask, Unit
from portsim.planners.lp._solve import LinearModel, TimeLimitReached, time_unit_of
from portsim.planners.lp._ssr import crossing_rate, islands, port_rates
from portsim.planners.lp._steiner import SPREAD, TreePricer, heuristic_note, improving_trees
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["TreePacking", "broadcast_flow_model", "multicast_flow_model", "plan_allgather",
           "plan_broadcast", "tree_depths", "tree_unit"]

STEINER_NOTE = ("Steiner-arborescence pricing: the trees reach every destination and "
                "may skip the other nodes, which relay")
"""How the notes name the pricing when some reachable node is not a destination."""

TREES_PER_ROUND = 8
"""Partial pricing of the all-gather's sources: a round prices them in turn and
ends once this many improving trees are found (a full pass that finds none
ends the generation).  Pricing every source every round added trees the
master mostly never used: on ``dgx_a100`` 4 servers, 109 rounds and 3,399
trees in 10 s of CPU; with 8 a round, 172 rounds, 1,368 trees, 4.6 s; on 8
servers 143 s -> 51 s; ``mi250`` 2 servers 5.6 -> 4.0 s; same bounds."""

Tree = tuple[tuple[NodeId, NodeId], ...]


@dataclass(frozen=True)
class TreePacking:
    """What :func:`multicast_trees` found.

    Attributes
    ----------
    weighted:
        ``(source index, weight, tree)`` of the trees of positive weight.
    upper:
        The certified upper bound over tree packings, or ``None`` (no
        certificate: the generation was cut, or the duals priced every tree at 0).
    master:
        The exact master's solution over the trees found.
    notes:
        Notes on ``upper`` (which sources' cheapest trees stayed heuristic, the
        exact rounds run out): for the caller to give where it uses that bound.
    cut:
        The float generation stopped at its budget (``GENERATION_SHARE`` of the
        time left): the trees are those found, not priced exactly.
    """

    weighted: list[tuple[int, Fraction, Tree]]
    upper: Fraction | None
    master: ExactSolution
    notes: tuple[str, ...] = ()
    cut: bool = False


def broadcast_flow_model(platform: Platform, operation: Operation) -> LinearModel:
    """The per-destination flow program of section 2.2.1 (``t = c · max_i x_i``)."""
    assert operation.source is not None
    return multicast_flow_model(platform, [(operation.source, operation.targets)],
                                operation.size)


def multicast_flow_model(platform: Platform,
                         sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
                         size: Fraction, *,
                         port_sum: frozenset[NodeId] = frozenset()) -> LinearModel:
    """Per-destination flows for several broadcasts sharing the ports.

    For source ``s`` and destination ``i``, ``x_{s,i}(e)`` messages of ``s``
    for ``i`` cross link ``e``; ``n_s(e) >= x_{s,i}(e)`` copies of ``s``'s
    message cross it; ports: ``Σ_s Σ_e c(e) n_s(e) <= 1``; every destination
    of every source receives TP.  Any schedule satisfies it (count, over a
    time span, the distinct messages of each source crossing each link).

    Port rows take their right-hand sides and link rows from
    :class:`~portsim.planners.lp._capacity.PortCapacity`.  A node of
    ``port_sum`` gets one row ``Σ in + Σ out <= 1`` instead of two (the naive
    port-sum program of the broadcast report, section 2.2.2: a
    relaxation under the unidirectional model, not achievable in general).
    """
    g = platform.graph
    capacity = PortCapacity.of(platform)
    own_row = capacity.own_row
    model = LinearModel()
    tp = model.variable("TP", upper=source_cap(platform, sources, size))
    model.objective = tp
    out_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]] = defaultdict(dict)
    for source, targets in sources:
        copies: dict[tuple[NodeId, NodeId], int] = {}
        for u, v, data in g.edges(data=True):
            if v == source:
                continue
            busy = size * data["c"]
            j = copies[u, v] = model.variable(("n", source, u, v), upper=1 / busy)
            out_port[u][j] = busy
            in_port[v][j] = busy
            if (u, v) in own_row:
                link_port[u, v][j] = busy
        for t in targets:
            if t == source:
                continue
            balance: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
            for (u, v), n_uv in copies.items():
                if u == t:
                    continue
                j = model.variable(("x", source, t, u, v),
                                   upper=1 / (size * g.edges[u, v]["c"]))
                model.add({j: Fraction(1), n_uv: Fraction(-1)}, "<=", Fraction(0),
                          f"copies of {source}'s message on {u}->{v} cover {t}")
                balance[v][j] = Fraction(1)
                balance[u][j] = Fraction(-1)
            for node, coeffs in balance.items():
                if node == source:
                    continue
                if node == t:
                    row = dict(coeffs)
                    row[tp] = Fraction(-1)
                    model.add(row, "==", Fraction(0), f"{t} receives TP from {source}")
                else:
                    model.add(coeffs, "==", Fraction(0),
                              f"conservation of {source}->{t} at {node}")
    capacity.add_node_rows(model, out_port, in_port, port_sum=port_sum,
                           names=("one-port send of {}", "one-port receive of {}"))
    capacity.add_link_rows(model, link_port)
    return model


def _master(platform: Platform, columns: list[tuple[int, Tree]], n_sources: int,
            size: Fraction, port_sum: frozenset[NodeId] = frozenset()) -> LinearModel:
    """Max TP: for every source, its trees' weights sum to TP; port rows per node.

    Right-hand sides and link rows (after the node rows): :class:`PortCapacity`.

    A node of ``port_sum`` has one row, send and receive summed (in the send
    position; its receive row is empty), see :func:`multicast_flow_model`.
    """
    capacity = PortCapacity.of(platform)
    own_row = capacity.own_row
    model = LinearModel()
    tp = model.variable("TP", upper=Fraction(10**9))
    model.objective = tp
    link = {e: size * platform.cost(*e) for e in platform.graph.edges}
    out_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]] = defaultdict(dict)
    totals: list[dict[int, Fraction]] = [{tp: Fraction(1)} for _ in range(n_sources)]
    for k, (s, tree) in enumerate(columns):
        first = min((link[e] for e in tree), default=Fraction(1))
        j = model.variable(("tree", k), upper=1 / first)
        totals[s][j] = Fraction(-1)
        for u, v in tree:
            out_port[u][j] = out_port[u].get(j, Fraction(0)) + link[u, v]
            in_port[v][j] = in_port[v].get(j, Fraction(0)) + link[u, v]
            if (u, v) in own_row:
                link_port[u, v][j] = link[u, v]
    for s, total in enumerate(totals):  # rows 0 .. n_sources-1: the == rows, in order
        model.add(total, "==", Fraction(0), f"trees of source {s} carry TP")
    # then, per node: send row, receive row
    capacity.add_node_rows(model, out_port, in_port, nodes=platform.node_ids, port_sum=port_sum)
    capacity.add_link_rows(model, link_port)  # then the link rows (PortCapacity.links)
    return model


def _scaled_packing(model: LinearModel, columns: list[tuple[int, Tree]],
                    n_sources: int) -> Repair:
    """The repair of :func:`_master`: an exactly feasible packing from float weights.

    When neither the optimal basis nor a rounding gives an exactly feasible
    point (a large master: many trees, tight rows), the float tree weights,
    rounded down to multiples of ``1/10^6`` (finer below a throughput of 1,
    :func:`~portsim.planners.lp._exact.repair_grid`: with every time 10^6
    longer the grid left nothing), are scaled per source to the
    least source total, then all together into every port and link row: a
    feasible packing, so a certified lower end (the dual keeps the upper).
    """
    def repair(x: np.ndarray) -> list[Fraction] | None:
        values = [Fraction(0)] * model.n_variables
        totals = [Fraction(0)] * n_sources
        grid = repair_grid(float(x[model.objective]), 6)
        for k, (s, _) in enumerate(columns):
            j = model.index["tree", k]
            values[j] = Fraction(math.floor(max(float(x[j]), 0.0) * grid), grid)
            totals[s] += values[j]
        tp = min(totals, default=Fraction(0))
        if tp <= 0:
            return None
        for k, (s, _) in enumerate(columns):
            j = model.index["tree", k]
            values[j] = values[j] * tp / totals[s]
        values[model.objective] = tp
        worst = Fraction(1)
        for row in model.rows:
            if row.sense != "<=":
                continue
            load = sum((c * values[j] for j, c in row.coeffs.items()), Fraction(0))
            if load > 0 and row.rhs <= 0:
                return None
            if load > row.rhs:
                worst = max(worst, load / row.rhs)
        return [v / worst for v in values]

    return repair


def _bottleneck(busy: dict[tuple[NodeId, NodeId], float], source: NodeId,
                ends: Collection[NodeId]) -> float:
    """The largest, over ``ends``, of the least busy time a path from ``source`` to
    the end must cross (its most busy link; paths of links in ``busy``).

    Every tree of ``source`` reaching ``ends`` has a link at least this busy, so
    the tree master's float program keeps such an entry in its unit.

    >>> _bottleneck({("S", "A"): 1e-12, ("A", "B"): 2e-6, ("S", "B"): 1e10}, "S", {"A", "B"})
    2e-06
    """
    import heapq

    out: dict[NodeId, list[tuple[NodeId, float]]] = defaultdict(list)
    for (u, v), b in busy.items():
        out[u].append((v, b))
    least = {source: 0.0}
    heap = [(0.0, str(source), source)]
    while heap:
        d, _, u = heapq.heappop(heap)
        if d > least[u]:
            continue
        for v, b in out[u]:
            if max(d, b) < least.get(v, math.inf):
                least[v] = max(d, b)
                heapq.heappush(heap, (least[v], str(v), v))
    return max((least.get(v, 0.0) for v in ends), default=0.0)


class _FloatTreeMaster:
    """:func:`_master` in floats, kept in one :class:`IncrementalMaster` as trees arrive.

    Rows in :func:`_master`'s order: the ``n_sources`` rows ``TP - Σ_T y_T
    = 0``, then per node its send and receive rows, then the link rows of
    :class:`PortCapacity`; column 0 is ``TP``.
    """

    def __init__(self, platform: Platform, n_sources: int, size: Fraction,
                 port_sum: frozenset[NodeId], reach: Sequence[tuple[NodeId, Collection[NodeId]]]
                 ) -> None:
        capacity = PortCapacity.of(platform)
        nodes = list(platform.node_ids)
        upper = [0.0] * n_sources
        for node in nodes:
            upper += [float(capacity.send[node]), float(capacity.receive[node])]
        upper += [1.0] * len(capacity.links)
        lower = [0.0] * n_sources + [-math.inf] * (len(upper) - n_sources)
        # Several sources (all-gather): the primal simplex, as the round's new
        # columns leave the last vertex primal feasible (measured on mi250:2
        # allgather, 82 runs: 2.2 s against 8.8 s for HiGHS's default choice,
        # the dual simplex).  One source (one column a round): HiGHS's
        # default, whose duals give the bundled broadcast example the trees
        # (and fixed-period figure, 973/3) it had when rebuilt every round.
        settings: dict[str, bool | int | float | str] = {"solver": "simplex",
                                                         "presolve": "off"}
        if n_sources > 1:
            settings["simplex_strategy"] = 4
        self.busy = {e: float(size * platform.cost(*e)) for e in platform.graph.edges}
        """Float busy time of each link per tree."""
        # The unit of the busy time every tree must have (_bottleneck), not of the
        # largest: a link of 10^10 no good tree takes made 2 * 10^-6 fall under
        # HiGHS's least matrix entry, and the master was unbounded.
        self.master = IncrementalMaster(
            lower, upper, settings,
            unit=time_unit_of([_bottleneck(self.busy, s, ends) for s, ends in reach]))
        row = {node: n_sources + 2 * i for i, node in enumerate(nodes)}
        self._send = row
        self._receive = {v: r + (0 if v in port_sum else 1) for v, r in row.items()}
        first = n_sources + 2 * len(nodes)
        self._link = {e: first + i for i, e in enumerate(capacity.links)}
        self.master.add_column(1.0, range(n_sources), [1.0] * n_sources)

    def add(self, source: int, tree: Tree) -> None:
        """Append the column of ``tree`` (a tree of source number ``source``)."""
        col: dict[int, float] = defaultdict(float)
        col[source] = -1.0
        for e in tree:
            b = self.busy[e]
            col[self._send[e[0]]] += b
            col[self._receive[e[1]]] += b
            own = self._link.get(e)
            if own is not None:
                col[own] += b
        self.master.add_column(0.0, list(col), list(col.values()))

    def solve(self, time_limit: float | None) -> MasterPoint:
        """The master's float optimum and duals (see :class:`IncrementalMaster`)."""
        return self.master.solve(time_limit)


def multicast_trees(platform: Platform, sources: Sequence[NodeId], size: Fraction,
                    options: LpOptions, *, port_sum: frozenset[NodeId] = frozenset(),
                    targets: Sequence[Collection[NodeId]] | None = None
                    ) -> TreePacking | PlanResult:
    """Column generation over arborescences of every source covering its ``targets``.

    Without ``targets`` (or when a source's targets are every node it reaches)
    the trees span the reachable nodes (minimum arborescence pricing); else
    they are Steiner arborescences, which may skip the other nodes
    (:class:`~portsim.planners.lp._steiner.TreePricer`: exact within its
    bound, a heuristic beyond it whose lower bound keeps the certificate
    valid, and a note says so).

    Dual of the master: ``π >= 0`` on the ports (and links,
    :class:`PortCapacity`), ``z_s`` on the source rows; feasible when every
    tree ``T`` of ``s`` costs ``Σ_{(u,v)∈T} c (π_out(u) + π_in(v) +
    π_link(u,v)) >= z_s`` and ``Σ_s z_s >= 1``.  With exact duals, the exact
    minimum tree cost ``W_s`` of each source gives the feasible dual
    ``z'_s = min(z_s, W_s)``, scaled by ``1 / Σ z'_s`` when that sum is below
    1: the certified bound is ``Σ k·π / min(1, Σ_s z'_s)`` (``k`` the rows'
    capacities).  Under heuristic Steiner pricing ``W_s`` is a certified lower
    bound on the cheapest tree, so the bound stays valid (possibly above the
    master's optimum).

    Floats drive the generation in one warm-started HiGHS object
    (:class:`_FloatTreeMaster`, new trees appended as columns, up to
    :data:`~portsim.planners.lp._steiner.SPREAD` per source priced in a round
    where the pricing finds one); then the master over
    every tree is solved exactly and priced exactly, and a tree priced below
    its source's exact dual joins for another exact round (at most
    :data:`~portsim.planners.lp._incremental.EXACT_ROUNDS`).  The float
    rounds stop after :data:`~portsim.planners.lp._incremental.GENERATION_SHARE`
    of the time left: the master over the trees found is then solved exactly,
    not priced (no tree bound), a note says so and :attr:`TreePacking.cut` is set.

    Returns
    -------
    TreePacking or PlanResult
        The trees, their bound and master, or a :class:`PlanResult` on failure.
    """
    link = {e: size * platform.cost(*e) for e in platform.graph.edges}
    pricers = [TreePricer(platform.graph.edges, s, {s} | nx.descendants(platform.graph, s),
                          None if targets is None else targets[i])
               for i, s in enumerate(sources)]
    columns: list[tuple[int, Tree]] = []
    seen: set[tuple[int, Tree]] = set()
    n = len(sources)
    master = _FloatTreeMaster(platform, n, size, port_sum,
                              [(s, nx.descendants(platform.graph, s) if targets is None
                                else targets[i]) for i, s in enumerate(sources)])

    def admit(new: Sequence[tuple[int, Tree]]) -> None:
        """New trees join the float master and the columns of the exact one."""
        for column in new:
            master.add(*column)
        columns.extend(new)
        seen.update(new)

    admit([(i, p.initial()) for i, p in enumerate(pricers)])
    if n == 1:  # one source: its trees fanned out of each link (few; see TreePricer.fanned)
        admit(list(dict.fromkeys(t for t in ((0, tree) for tree in pricers[0].fanned())
                                 if t not in seen)))
    turn = 0
    # The float rounds stop at this budget; the exact phase then runs over the
    # trees found (GENERATION_SHARE): a schedule and a certified interval.
    budget = options.clock().part(GENERATION_SHARE)
    cut = False
    unproven: list[NodeId] = []  # sources whose exact pricing was a heuristic
    bound_notes: list[str] = []  # on the tree packing's bound (the caller may not use it)

    def price(point: MasterPoint) -> bool:
        nonlocal turn
        out_dual, in_dual, link_dual = _port_duals(platform, point.duals[n:].tolist(),
                                                   port_sum)
        price: dict[tuple[NodeId, NodeId], Fraction | float] = {
            (u, v): busy * (out_dual[u] + in_dual[v] + link_dual.get((u, v), 0))
            for (u, v), busy in master.busy.items()}
        new = improving_trees(pricers, price, point.duals[:n].tolist(), seen,  # type: ignore[arg-type]
                              TOLERANCE, deadline=budget,
                              limit=TREES_PER_ROUND, start=turn, spread=SPREAD)
        turn = (turn + TREES_PER_ROUND) % n
        admit(new)
        return bool(new)

    def float_generation() -> PlanResult | None:
        nonlocal cut
        try:
            generate(master, price, deadline=budget,
                     phase="the column generation of the broadcast master")
        except TimeLimitReached as stop:
            if options.clock().expired:
                return time_limit_error(options, stop.phase)
            cut = True  # the budget, not the call's deadline: on with the trees found
        except MasterFailed as failure:
            return PlanResult.error(NAME, f"broadcast master program: {failure.status}")
        return None

    failed = float_generation()
    if failed is not None:
        return failed
    # Exact phase: the master over every column solved exactly and priced
    # exactly.  The warm-started float runs may end on another optimal dual
    # than the exact solve's; a tree priced below its source's exact dual
    # then joins, and the float generation resumes from it before the next
    # exact round: the master's optimal duals are many (a degenerate
    # program), and the heuristic Steiner pricing may find nothing under the
    # float one but a tree under the exact one (dgx_a100, 8 servers,
    # broadcast: the 20 exact rounds ended at 138 without resuming, 200 =
    # the bound with it).
    for exact_round in exact_rounds(
            deadline=options.clock(),
            phase="the build of the broadcast master model (before HiGHS started)"):
        model = _master(platform, columns, n, size, port_sum)
        found = solve_exactly(model, options, what="broadcast master",
                              repair=_scaled_packing(model, columns, n))
        if isinstance(found, PlanResult):
            return found
        exact = found
        if cut:  # no exact pricing either (128 sources' Steiner trees: minutes)
            exact = replace(exact, notes=(*exact.notes, (
                f"the tree generation stopped after {GENERATION_SHARE:.0%} of the time left "
                f"under the time limit of {options.limit_text}: the schedule is the best "
                f"packing of the trees found, not proven the best tree packing")))
            upper = None
            break
        out_dual, in_dual, link_dual = _port_duals(platform, exact.y_ub, port_sum)
        exact_price: dict[tuple[NodeId, NodeId], Fraction | float] = {
            (u, v): busy * (out_dual[u] + in_dual[v] + link_dual.get((u, v), 0))
            for (u, v), busy in link.items()}
        z_total = Fraction(0)
        unproven = []
        new = []
        for i, pricer in enumerate(pricers):
            options.clock().check("exact pricing (Steiner trees)")
            cheapest = pricer.best(exact_price, Fraction(0))  # type: ignore[arg-type,type-var]
            assert cheapest is not None, "the pricer reached its destinations before"
            z_total += min(exact.y_eq[i], Fraction(cheapest.lower))
            if not cheapest.exact:
                unproven.append(sources[i])
            if cheapest.cost < exact.y_eq[i] and (i, cheapest.edges) not in seen:
                new.append((i, cheapest.edges))
        rhs = [r.rhs for r in model.rows if r.sense == "<="]
        pi = sum((b * y for b, y in zip(rhs, exact.y_ub, strict=True)), Fraction(0))
        # No certificate from duals that price every source's trees at zero: the
        # caller then falls back to the flow program's bound.
        upper = pi if z_total >= 1 else (pi / z_total if z_total > 0 else None)
        if (upper is not None and upper <= exact.lower) or not new:
            break
        if exact_round == EXACT_ROUNDS:
            bound_notes.append(
                f"after {EXACT_ROUNDS} exact rounds of the tree master some tree "
                f"was still priced below its source's dual: the tree packing's bound is "
                f"the last one's certificate")
            break
        admit(new)
        failed = float_generation()
        if failed is not None:
            return failed
    weighted = [(i, exact.values[model.index["tree", k]], tree)
                for k, (i, tree) in enumerate(columns)]
    if unproven:
        bound_notes.append(heuristic_note(unproven))
    return TreePacking([c for c in weighted if c[1] > 0],
                       None if upper is None else max(upper, exact.lower), exact,
                       tuple(bound_notes), cut)


def _port_duals(platform: Platform, y_ub: list[Fraction] | list[float],
                port_sum: frozenset[NodeId] = frozenset()
                ) -> tuple[dict[NodeId, Fraction], dict[NodeId, Fraction],
                           dict[tuple[NodeId, NodeId], Fraction]]:
    """Duals of the master's send, receive and link rows (:func:`_master`'s order)."""
    out: dict[NodeId, Fraction] = {}
    inn: dict[NodeId, Fraction] = {}
    for i, node in enumerate(platform.node_ids):
        out[node] = y_ub[2 * i]  # type: ignore[assignment]
        # A port-sum node's single row (send position) prices both directions.
        inn[node] = y_ub[2 * i + (0 if node in port_sum else 1)]  # type: ignore[assignment]
    first = 2 * len(platform.node_ids)
    links: dict[tuple[NodeId, NodeId], Fraction] = {
        e: y_ub[first + i]  # type: ignore[misc]
        for i, e in enumerate(PortCapacity.of(platform).links)}
    return out, inn, links


def _flow_bound(platform: Platform, sources: list[tuple[NodeId, Sequence[NodeId]]],
                size: Fraction, options: LpOptions, what: str, port_sum: frozenset[NodeId],
                notes: list[str]) -> Fraction | PlanResult:
    """The certified upper end of the per-destination flow program (section 2.2.1).

    By cut generation (:mod:`portsim.planners.lp._flow_cuts`), the same
    optimum with one copy variable per source and link; the whole program
    for ``lp-naive``'s port sums.
    """
    if port_sum:
        flow = solve_exactly(multicast_flow_model(platform, sources, size, port_sum=port_sum),
                             options, what=f"{what} flow (section 2.2.1)")
        return flow if isinstance(flow, PlanResult) else flow.upper
    found = multicast_flow_bound(platform, sources, size, options, what=what)
    if isinstance(found, PlanResult):
        return found
    notes.append(f"per-destination flow bound by cut generation: {found.rounds} round(s), "
                 f"{found.cuts} cut(s)" + ("" if found.exact else
                                           f"; after {EXACT_ROUNDS} exact rounds some exact "
                                           f"cut was still violated: the bound is the "
                                           f"relaxation's upper end"))
    return found.upper


def port_cap(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
             size: Fraction) -> tuple[Fraction, str]:
    """A bound on every schedule's throughput from the ports alone, and what it is.

    An instance sends each source's message out of it at least once, and
    brings each message into each of its destinations at least once (as
    distinct items: one per source).  So the throughput is at most every
    source's send rate, and every destination's receive rate over the number
    of sources it receives from (:func:`~portsim.planners.lp._ssr.port_rates`:
    messages of ``size`` a node's ports carry per time unit).

    The same holds for a group of nodes: each source outside the group with a
    destination in it brings its message into the group at least once, and
    each source in the group with a destination outside takes its message out
    of it at least once (the parts of a split message that cross sum to at
    least one message).  So the throughput is at most what the links into
    (out of) the group carry per time unit
    (:func:`~portsim.planners.lp._ssr.crossing_rate`) over that count.  The
    groups tried are the islands of :func:`~portsim.planners.lp._ssr.islands`
    (on a fabric: each server behind its NICs, which bounds a broadcast or
    an allgather across servers).
    """
    send, receive = port_rates(platform, size)
    counts: dict[NodeId, int] = defaultdict(int)
    best, how = None, ""
    for s, targets in sources:
        if best is None or send[s] < best:
            best, how = send[s], f"what {s} sends"
        for t in targets:
            if t != s:
                counts[t] += 1
    for t, k in counts.items():
        if receive[t] / k < best:  # type: ignore[operator]
            best, how = receive[t] / k, f"what {t} receives, {k} message(s) an instance"
    assert best is not None, "sources are given"
    capacity = PortCapacity.of(platform)
    tried: set[frozenset[NodeId]] = set()
    for cost, components in islands(platform):
        for component in components:
            group = frozenset(component)
            if len(group) < 2 or group in tried:
                continue
            tried.add(group)
            into = sum(1 for s, targets in sources
                       if s not in group and any(t in group for t in targets))
            out = sum(1 for s, targets in sources
                      if s in group and any(t not in group for t in targets))
            for count, side in ((into, "into"), (out, "out of")):
                if not count:
                    continue
                cap = crossing_rate(platform, size, group, capacity, into=side == "into") / count
                if cap < best:
                    best, how = cap, (
                        f"what the links {side} the island of "
                        f"{next(v for v in platform.node_ids if v in group)} "
                        f"({len(group)} nodes joined by links of cost below "
                        f"{format_rational(cost)}) carry, {count} message(s) an instance")
    return best, how


def tree_depths(tree: Tree, root: NodeId) -> dict[NodeId, int]:
    """Depth of every node of an arborescence below ``root`` (``root`` at 0).

    Examples
    --------
    >>> tree_depths((("S", "A"), ("A", "B"), ("S", "C")), "S")
    {'S': 0, 'A': 1, 'C': 1, 'B': 2}
    """
    depth = {root: 0}
    children: dict[NodeId, list[NodeId]] = defaultdict(list)
    for u, v in tree:
        children[u].append(v)
    order = [root]
    for u in order:
        for v in children[u]:
            depth[v] = depth[u] + 1
            order.append(v)
    return depth


def tree_unit(weight: Fraction, tree: Tree, source: NodeId, item: Item) -> Unit:
    """A weighted broadcast tree of ``item`` from ``source`` as a periodic-schedule unit
    (each send one deeper than the one bringing the item to its sender)."""
    depth = tree_depths(tree, source)
    return Unit(weight, tuple(SendTask(u, v, item, depth[u]) for u, v in tree))


def plan_broadcast(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of broadcasts (bidirectional one-port).

    Notes
    -----
    On Fig. 2 of the broadcast report (links 1→2 and 1→3 of cost 1, 2→3 of
    cost 1/2) the optimum is 1, with the single tree {1→2, 2→3}.
    """
    source = operation.source
    assert source is not None
    return plan_multicast(platform, operation, [(source, operation.targets, Item.broadcast())],
                          options, "broadcast")


def plan_allgather(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of all-gathers: every participant broadcasts its piece.

    Notes
    -----
    Formulation: one broadcast per participant ``k`` of ``m[k]`` to the other
    participants, all sharing the ports, at a common throughput TP (the
    per-destination flow program of :func:`multicast_flow_model`, the
    bidirectional program of the broadcast report's section 2.2.1 with one
    message type per source).  It bounds every schedule: over any time span,
    the distinct copies of ``m[k]`` crossing each link satisfy it.  The
    schedule uses weighted arborescences per source, by column
    generation; when every reachable node is a participant they meet the bound
    (Edmonds' branching theorem, source by source); else they are Steiner
    arborescences that skip or relay through the other nodes, and the bound
    is their packing's optimum.  The test suite checks the
    bound against a brute force over every combination of trees on tiny
    platforms.
    """
    parts = operation.participants
    sources = [(k, tuple(p for p in parts if p != k), Item.message(k)) for k in parts]
    return plan_multicast(platform, operation, sources, options, "allgather")


def plan_multicast(platform: Platform, operation: Operation,
                   sources: Sequence[tuple[NodeId, Sequence[NodeId], Item]],
                   options: LpOptions, what: str, *,
                   port_sum: frozenset[NodeId] = frozenset()) -> PlanResult:
    """Trees by column generation, the bound certified, then the periodic schedule.

    ``port_sum``: nodes whose send and receive rows are summed (the naive
    program of ``lp-naive``; the periodic schedule then peels the port-sum
    trees bipartite-wise, feasible only under the bidirectional model).
    """
    sources = [(s, targets, item) for s, targets, item in sources
               if [t for t in targets if t != s]]
    if not sources:
        return no_communication(operation)
    found = multicast_trees(platform, [s for s, _, _ in sources], operation.size, options,
                            port_sum=port_sum, targets=[t for _, t, _ in sources])
    if isinstance(found, PlanResult):
        return found
    weighted, tree_upper, master = found.weighted, found.upper, found.master
    steiner = False
    for s, targets, _ in sources:
        reachable = {s} | nx.descendants(platform.graph, s)
        steiner = steiner or bool(reachable - set(targets) - {s})
    notes = [f"{len(weighted)} weighted broadcast tree(s) by column generation "
             f"({STEINER_NOTE if steiner else 'minimum-arborescence pricing'})"]
    lower = master.lower
    upper = tree_upper if tree_upper is not None else lower
    method = "rounding"
    bound_notes: tuple[str, ...] = ()  # the tree bound's, where it is part of the result
    pairs = [(s, t) for s, t, _ in sources]
    refine: Callable[[ExactSolution], tuple[ExactSolution, list[str]]] | None = None
    if found.cut:
        # The generation was cut: no tree bound.  The ports' cap, then, once the
        # schedule is built, the flow program in the time left (a broadcast over
        # 16 dgx_a100 servers: 1 s; their allgather: more than 10 minutes).
        cap, how = port_cap(platform, pairs, operation.size)
        upper = cap

        def refine(exact: ExactSolution) -> tuple[ExactSolution, list[str]]:
            said: list[str] = []
            flow = _flow_bound(platform, pairs, operation.size, options, what, port_sum,
                               said)
            least = cap if isinstance(flow, PlanResult) else min(flow, cap)
            said.append(f"the bound is the least of the ports' cap ({how}, "
                        f"{format_rational(cap)}) and the per-destination flow program's "
                        + ("(section 2.2.1; not finished in the time left after the "
                           "schedule)" if isinstance(flow, PlanResult) else "(section 2.2.1)"))
            least = max(least, exact.lower)
            return replace(exact, upper=least,
                           method="rounding" if least == exact.lower else "interval"), said
    elif tree_upper is None or tree_upper > lower:
        # The ports' cap first (no program): where the packing meets it, it is the
        # certificate (on a fabric, often a server's NICs; on a complete one-port
        # platform, a node's receive port); else, with Steiner trees, the flow program.
        cap, how = port_cap(platform, pairs, operation.size)
        if cap < lower:  # a bound below a packing that replays: a bug, never a result
            raise AssertionError(f"the ports' cap {cap} ({how}) is below the tree "
                                 f"packing's {lower}")
        if cap == lower:
            upper, method = cap, PORTS_CAP
            notes.append(f"the bound is the ports' cap ({how}, {format_rational(cap)}), "
                         f"which the tree packing meets")
        elif tree_upper is not None and not steiner:
            # Spanning trees, priced exactly: only their exact rounds ran out.
            upper, bound_notes = min(tree_upper, cap), found.notes
            if cap < tree_upper:
                notes.append(f"the bound is the least of the tree packing's certified bound "
                             f"and the ports' cap ({how}, {format_rational(cap)})")
        else:
            flow = _flow_bound(platform, pairs, operation.size, options, what, port_sum,
                               notes)
            if isinstance(flow, PlanResult):
                return flow
            upper = min(flow, cap) if tree_upper is None else min(tree_upper, flow, cap)
            bound_notes = found.notes
            notes.append("the bound is the least of "
                         + ("" if tree_upper is None else
                            "the tree packing's certified bound, ")
                         + f"the ports' cap ({how}, {format_rational(cap)}) and the "
                           "per-destination flow program's (section 2.2.1)")
    else:
        bound_notes = found.notes
    exact = ExactSolution(master.values, lower, max(upper, lower), master.y_ub, master.y_eq,
                          method if upper == lower else "interval",
                          (*master.notes, *bound_notes))
    groups = [[tree_unit(w, t, sources[i][0], sources[i][2]) for j, w, t in weighted if j == i]
              for i in range(len(sources))]
    return finish(platform, operation, exact, groups, options, notes=notes, refine=refine)
