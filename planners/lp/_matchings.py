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
configuration per link (and one breadth-first tree per source, or the
cheapest reduction tree) and is solved by HiGHS's dual simplex, warm-started
after every new column (:class:`~portsim.planners.lp._incremental.IncrementalMaster`).  With
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
cost above :data:`~portsim.planners.lp._incremental.TOLERANCE` (``1e-9``; for a
configuration, of the master's throughput: its duals are throughputs, so an
absolute tolerance read them as 0 in a slow time unit), or after
:data:`~portsim.planners.lp._incremental.MAX_ROUNDS` rounds (the one loop of
:func:`~portsim.planners.lp._incremental.generate`).  Both families of tree
columns (arborescences and reduction trees) go through the same generation
(``_generate``): only their master, their columns and their pricing differ.

**Certification.**  The final master is solved again and recovered in exact
rationals (:mod:`portsim.planners.lp._exact`); its exact duals are priced exactly
(the maximum-weight matching on integer-scaled weights, the minimum
arborescence in Fractions).  An exactly improving column is added and the
exact solve repeated (at most
:data:`~portsim.planners.lp._incremental.EXACT_ROUNDS` times).  Then
``u' = max(u, W)`` (``W`` the exact heaviest configuration) and
``z'_s = min(z_s, W_s)`` (``W_s`` the exact cheapest tree, or a certified
lower bound on it where the Steiner pricing is heuristic) make the dual
feasible for every column outside the master, and weak duality over the
master's own columns (:func:`portsim.planners.lp._exact.dual_bound`, with the
variables' explicit upper bounds; or of the same dual scaled to cover ``TP``'s
column, :func:`portsim.planners.lp._exact.covering_bound`) gives a certified
upper bound on the full program, each exact round's, the least kept.  When it
meets the exact primal the optimum is exact; else the result states the
certified interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Generic, Protocol, TypeVar

import networkx as nx
import numpy as np

from portsim.planners.base import PlanResult
from portsim.planners.lp._arborescence import min_arborescence
from portsim.planners.lp._broadcast import STEINER_NOTE, multicast_flow_model, tree_unit
from portsim.planners.lp._driver import (
    NAME,
    LpOptions,
    finish,
    no_communication,
    solve_exactly,
    time_limit_error,
)
from portsim.planners.lp._exact import ExactSolution, covering_bound
from portsim.planners.lp._extract import extract_trees, top_down_unit
from portsim.planners.lp._flows import build_flow_model, commodities_of, decompose_paths
from portsim.planners.lp._incremental import (
    TOLERANCE,
    IncrementalMaster,
    MasterFailed,
    MasterPoint,
    exact_rounds,
    generate,
)
from portsim.planners.lp._periodic import Unit
from portsim.planners.lp._ports import Configuration, Link, PortGraph
from portsim.planners.lp._reduce import refuse_reduction
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached, time_unit_of
from portsim.planners.lp._ssr import Task, build_reduce_model
from portsim.planners.lp._steiner import TreePricer, heuristic_note, improving_trees
from portsim.planners.lp._tree_pricing import TreeSpace, cheapest_tree, cheapest_trees
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = [
    "TOLERANCE",
    "CGSolution",
    "min_arborescence",
    "plan_matchings",
    "solve_with_matchings",
]

Tree = tuple[tuple[NodeId, NodeId], ...]
W = TypeVar("W", float, Fraction)
C = TypeVar("C")
"""A tree column: ``(source index, tree)`` or a reduction tree's tasks."""
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
    comm = _config_variables(m, configs, edge)
    m.rows = list(base.model.rows)
    first_source = len(m.rows)
    for s, row in enumerate(source_rows):
        m.add(row, "==", Fraction(0), f"trees of source {s} carry TP")
    first_edge = len(m.rows)
    for e in links:
        m.add(edge[e], "<=", Fraction(0), f"matchings cover {e[0]}->{e[1]}")
    m.add(comm, "<=", Fraction(1), "matchings fit in one time unit")
    return m, (first_source, first_edge, len(m.rows) - 1)


@dataclass
class _Rows:
    """Where the master's rows are: per link, the time row, the tree rows, the CPU rows."""

    link: dict[Link, int]
    comm: int
    trees: list[int]
    """The ``==`` row of each tree family (one per source; one for reduction trees)."""
    cpu: dict[int, int] = field(default_factory=dict)


class _TreeColumns(Protocol[C]):
    """The tree columns of a master beside the matchings (broadcast or reduction trees)."""

    columns: list[C]
    """The tree columns generated so far, in the order of their variables."""

    def master(self, configs: Sequence[Configuration]) -> tuple[LinearModel, _Rows]:
        """The exact master over :attr:`columns` and ``configs``."""
        ...  # pragma: no cover - a protocol

    def column(self, tree: C, rows: _Rows) -> dict[int, Fraction]:
        """The master column of ``tree``."""
        ...  # pragma: no cover - a protocol

    def price_float(self, y: np.ndarray, v: Mapping[Link, float], rows: _Rows,
                    deadline: Deadline) -> list[C]:
        """The new improving trees under float duals (appended to :attr:`columns`)."""
        ...  # pragma: no cover - a protocol

    def price_exact(self, y: list[Fraction], v: Mapping[Link, Fraction], rows: _Rows,
                    deadline: Deadline) -> tuple[list[Fraction], bool] | str:
        """A certified least price per tree row, and whether an exactly improving
        tree joined :attr:`columns`; or why no tree exists."""
        ...  # pragma: no cover - a protocol


class _Matchings:
    """The configuration columns: one per link to start, then maximum-weight matchings."""

    def __init__(self, ports: PortGraph) -> None:
        self.ports = ports
        self.links = list(ports.links)
        self.columns: list[Configuration] = [((e, 1),) for e in self.links]
        self.seen = set(self.columns)
        self.heaviest = Fraction(0)
        """The exact heaviest configuration's weight at the last exact pricing."""

    def _join(self, config: Configuration) -> None:
        self.columns.append(config)
        self.seen.add(config)

    def price_float(self, master: IncrementalMaster, v: Mapping[Link, float], y_comm: float,
                    rows: _Rows, value: float) -> bool:
        """Add the heaviest configuration when it improves the float master.

        Improves: its weight exceeds the time row's dual ``y_comm`` by more than
        :data:`TOLERANCE` of the master's ``value`` (the throughput, of which
        ``y_comm`` is the time row's share): the duals of the time and link
        rows are throughputs per time unit, so an absolute tolerance read
        them as 0 in a slow unit (a reduce over 8 nodes with every time
        10^9: ``y_comm`` about 6·10^-10, under 10^-9, and the generation
        stopped after 9 rounds on an interval 10^18 wide, where it takes 69
        and is exact in units 10^9 times shorter).
        """
        weight, config = self.ports.best_float(v)
        if (weight > y_comm + TOLERANCE * (value if value > 0 else 1.0)
                and config not in self.seen):
            self._join(config)
            _add_float(master, _config_column(config, rows.comm, rows.link), share=True)
            return True
        return False

    def price_exact(self, v: Mapping[Link, Fraction], y_comm: Fraction) -> bool:
        """Price exactly (:attr:`heaviest`); add the configuration when it improves."""
        self.heaviest, config = self.ports.best(v)
        if self.heaviest > y_comm and config not in self.seen:
            self._join(config)
            return True
        return False


def _add_float(master: IncrementalMaster, col: Mapping[int, Fraction], *,
               share: bool = False) -> None:
    """Add ``col`` to the float master (``share``: a matching's weight, not a rate)."""
    master.add_column(0.0, list(col), [float(a) for a in col.values()], share=share)


@dataclass
class _Generated(Generic[C]):
    """The certified master of :func:`_generate` and what was generated."""

    exact: ExactSolution
    trees: list[tuple[Fraction, C]]
    """``(weight, tree column)`` with positive weights, in the columns' order."""
    configurations: list[tuple[Fraction, Configuration]]
    rounds: int
    n_configs: int
    n_trees: int


def _generate(ports: PortGraph, family: _TreeColumns[C], options: LpOptions, *, what: str,
              exact_what: str) -> _Generated[C] | PlanResult:
    """Column generation over matchings and ``family``'s trees, then exact pricing.

    The float loop is :func:`portsim.planners.lp._incremental.generate` on the
    master of ``family`` (HiGHS's dual simplex, warm-started); then the master
    over every column is solved exactly and priced exactly, an exactly
    improving column joining for another exact round
    (:func:`~portsim.planners.lp._incremental.exact_rounds`); the certificate
    is the module's (raise the time row's dual to the heaviest configuration,
    lower every tree row's to its least tree price,
    :func:`portsim.planners.lp._exact.dual_bound`).
    """
    deadline = options.clock()
    matchings = _Matchings(ports)
    model, rows = family.master(matchings.columns)
    # the busy times of links and CPUs (the positive coefficients of their rows)
    # set the float master's time unit
    unit = time_unit_of(float(a) for r in (*rows.link.values(), *rows.cpu.values())
                     for a in model.rows[r].coeffs.values() if a > 0)
    # the matchings' weights (the time row's variables) are shares of the time
    # unit, not rates: kept as they are
    master = IncrementalMaster.of(model, {"solver": "simplex", "simplex_strategy": 1},
                                  unit=unit, shares=set(model.rows[rows.comm].coeffs))

    def price(point: MasterPoint) -> bool:
        y = point.duals
        v = {e: max(float(y[rows.link[e]]), 0.0) for e in matchings.links}
        added = matchings.price_float(master, v, float(y[rows.comm]), rows, point.value)
        for tree in family.price_float(y, v, rows, deadline):
            _add_float(master, family.column(tree, rows))
            added = True
        return added

    best: tuple[Fraction, list[Fraction], list[Fraction]] | None = None
    try:
        rounds = generate(master, price, deadline=deadline,
                          phase=f"the column generation of the {what} master")
        for _ in exact_rounds(deadline=deadline,
                              phase=f"the exact pricing of the {what} master"):
            trees, configs = list(family.columns), list(matchings.columns)
            model, rows = family.master(configs)
            found = solve_exactly(model, options, what=exact_what)
            if isinstance(found, PlanResult):
                return found
            exact = found
            y_row = _row_duals(model, exact)
            v_exact = {e: max(y_row[rows.link[e]], Fraction(0)) for e in matchings.links}
            added = matchings.price_exact(v_exact, y_row[rows.comm])
            priced = family.price_exact(y_row, v_exact, rows, deadline)
            if isinstance(priced, str):
                return PlanResult.error(NAME, priced)
            cheapest, joined = priced
            # Every exact round's dual certifies the whole program: the best is kept
            # (the last one alone, where the rounds ran out, gave 10^8 for 1/4).
            round_bound = _certificate(model, rows, y_row, matchings.heaviest, cheapest)
            if best is None or round_bound[0] < best[0]:
                best = round_bound
            if not (added or joined):
                break
    except TimeLimitReached as stop:
        return time_limit_error(options, stop.phase)
    except MasterFailed as failure:
        return PlanResult.error(NAME, f"HiGHS failed on the {what} master: {failure.status}")
    assert best is not None
    bound, y_ub, y_eq = best
    upper = max(bound, exact.lower)
    certified = ExactSolution(exact.values, exact.lower, upper, y_ub, y_eq,
                              exact.method if upper == exact.lower else "interval",
                              exact.notes)
    weighted_trees = [(exact.values[model.index["tree", k]], tree)
                      for k, tree in enumerate(trees)]
    weighted_configs = [(exact.values[model.index["config", k]], config)
                        for k, config in enumerate(configs)]
    return _Generated(certified, [t for t in weighted_trees if t[0] > 0],
                      [c for c in weighted_configs if c[0] > 0], rounds,
                      len(matchings.columns), len(family.columns))


def _certificate(model: LinearModel, rows: _Rows, y_row: Sequence[Fraction],
                 heaviest: Fraction, cheapest: Sequence[Fraction]
                 ) -> tuple[Fraction, list[Fraction], list[Fraction]]:
    """The certified bound of one exact round's dual and that dual, made feasible for
    every column outside the master: the time row's dual raised to the
    ``heaviest`` configuration, each tree row's lowered to its ``cheapest``
    tree (:func:`~portsim.planners.lp._exact.covering_bound`)."""
    y = list(y_row)
    y[rows.comm] = max(y[rows.comm], heaviest)
    for r, least in zip(rows.trees, cheapest, strict=True):
        y[r] = min(y[r], least)
    y_ub = [y[i] for i, r in enumerate(model.rows) if r.sense == "<="]
    y_eq = [y[i] for i, r in enumerate(model.rows) if r.sense == "=="]
    return covering_bound(model, y_ub, y_eq), y_ub, y_eq


class _SourceTrees:
    """Weighted arborescences of ``sources`` beside the collective's ``base`` (module notes).

    Spanning where a source's targets are every node it reaches, else Steiner
    (:class:`~portsim.planners.lp._steiner.TreePricer`); a column is
    ``(source index, tree)``.
    """

    def __init__(self, platform: Platform, base: Base, links: list[Link], size: Fraction,
                 sources: Sequence[NodeId], targets: Sequence[Collection[NodeId]] | None
                 ) -> None:
        self.base = base
        self.links = links
        self.busy = {e: size * platform.cost(*e) for e in links}
        self.sources = sources
        self.pricers = [TreePricer(platform.graph.edges, s,
                                   {s} | nx.descendants(platform.graph, s),
                                   None if targets is None else targets[i])
                        for i, s in enumerate(sources)]
        self.columns: list[tuple[int, Tree]] = [(i, p.initial())
                                                for i, p in enumerate(self.pricers)]
        self.seen = set(self.columns)
        self.unproven: set[int] = set()
        """Sources whose last exact pricing was heuristic (a certified lower bound)."""

    def master(self, configs: Sequence[Configuration]) -> tuple[LinearModel, _Rows]:
        model, (src0, edge0, comm) = _master(self.base, self.links, self.columns,
                                             len(self.sources), configs, self.busy)
        return model, _Rows({e: edge0 + i for i, e in enumerate(self.links)}, comm,
                            [src0 + s for s in range(len(self.sources))])

    def column(self, tree: tuple[int, Tree], rows: _Rows) -> dict[int, Fraction]:
        s, edges = tree
        col = {rows.trees[s]: Fraction(-1)}
        for e in edges:
            col[rows.link[e]] = self.busy[e]
        return col

    def price_float(self, y: np.ndarray, v: Mapping[Link, float], rows: _Rows,
                    deadline: Deadline) -> list[tuple[int, Tree]]:
        if not self.sources:
            return []
        price = {e: float(self.busy[e]) * v[e] for e in self.links}
        new = improving_trees(self.pricers, price, [float(y[r]) for r in rows.trees],
                              self.seen, TOLERANCE, deadline=deadline)
        self.columns.extend(new)
        self.seen.update(new)
        return new

    def price_exact(self, y: list[Fraction], v: Mapping[Link, Fraction], rows: _Rows,
                    deadline: Deadline) -> tuple[list[Fraction], bool] | str:
        cheapest: list[Fraction] = []
        self.unproven = set()
        joined = False
        price = {e: self.busy[e] * v[e] for e in self.links}
        for i, pricer in enumerate(self.pricers):
            found = pricer.best(price, Fraction(0))
            if found is None:
                return f"{self.sources[i]} reaches no spanning tree"
            cheapest.append(found.lower)
            if not found.exact:
                self.unproven.add(i)
            if found.cost < y[rows.trees[i]] and (i, found.edges) not in self.seen:
                self.columns.append((i, found.edges))
                self.seen.add((i, found.edges))
                joined = True
        return cheapest, joined


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
    family = _SourceTrees(platform, base, list(ports.links), size, sources, targets)
    found = _generate(ports, family, options, what=what, exact_what=f"{what} master")
    if isinstance(found, PlanResult):
        return found
    trees = [(s, w, tree) for w, (s, tree) in found.trees]
    notes = [f"column generation over matchings of the port graph ({what}): {found.rounds} "
             f"float round(s) with reduced-cost tolerance {TOLERANCE:g}, then exact pricing; "
             f"{found.n_configs} matching column(s), {found.n_trees} tree column(s); "
             f"{len(found.configurations)} matching(s) and {len(trees)} tree(s) used"]
    if family.unproven:
        notes.append(heuristic_note([sources[i] for i in family.unproven]))
    return CGSolution(found.exact, trees, found.configurations, found.rounds,
                      found.n_configs + found.n_trees, notes)


def _config_variables(m: LinearModel, configs: Sequence[Configuration],
                      edge: dict[Link, dict[int, Fraction]]) -> dict[int, Fraction]:
    """Add a variable ``("config", k)`` per configuration, its ``-multiplicity`` on the
    coverage rows ``edge`` of its links; return the time row ``Σ_M μ_M``."""
    comm: dict[int, Fraction] = {}
    for k, config in enumerate(configs):
        j = m.variable(("config", k), upper=Fraction(1))
        comm[j] = Fraction(1)
        for e, mult in config:
            edge[e][j] = Fraction(-mult)
    return comm


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
        return no_communication(operation)
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
        return no_communication(operation)
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
    comm = _config_variables(m, configs, edge)
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


class _ReductionTrees:
    """Reduction trees of ``space`` as columns (a column: its tasks), priced by the interval DP."""

    def __init__(self, space: TreeSpace, links: list[Link], first: list[Task]) -> None:
        self.space = space
        self.links = links
        self.columns: list[list[Task]] = [first]
        self.seen = {tuple(first)}

    def master(self, configs: Sequence[Configuration]) -> tuple[LinearModel, _Rows]:
        model, tree_row, link_row, cpu_row, comm_row = _reduce_tree_master(
            self.space, self.links, self.columns, configs)
        return model, _Rows(link_row, comm_row, [tree_row], cpu_row)

    def column(self, tasks: list[Task], rows: _Rows) -> dict[int, Fraction]:
        link_load, cpu_load = _tree_loads(self.space, tasks)
        col = {rows.trees[0]: Fraction(-1)}
        for e, a in link_load.items():
            col[rows.link[e]] = a
        for i, a in cpu_load.items():
            col[rows.cpu[i]] = a
        return col

    def _join(self, tasks: list[Task]) -> None:
        self.columns.append(tasks)
        self.seen.add(tuple(tasks))

    def price_float(self, y: np.ndarray, v: Mapping[Link, float], rows: _Rows,
                    deadline: Deadline) -> list[list[Task]]:
        vc = {i: max(float(y[r]), 0.0) for i, r in rows.cpu.items()}
        new = []
        for price, tasks in _cheapest_reduce_trees(self.space, v, vc, 4, deadline):
            if float(price) < float(y[rows.trees[0]]) - TOLERANCE \
                    and tuple(tasks) not in self.seen:
                self._join(tasks)
                new.append(tasks)
        return new

    def price_exact(self, y: list[Fraction], v: Mapping[Link, Fraction], rows: _Rows,
                    deadline: Deadline) -> tuple[list[Fraction], bool] | str:
        vc = {i: max(y[r], Fraction(0)) for i, r in rows.cpu.items()}
        cheapest, tasks = _cheapest_reduce_tree_exact(self.space, v, vc, deadline)
        if tasks is None:
            return "no reduction tree reaches the target"
        joined = cheapest < y[rows.trees[0]] and tuple(tasks) not in self.seen
        if joined:
            self._join(tasks)
        return [cheapest], joined


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
    space = TreeSpace.of(platform, operation)
    ports = PortGraph.of(platform)
    links = list(ports.links)
    ones = dict.fromkeys(links, 1.0)
    first = _cheapest_reduce_trees(space, ones, dict.fromkeys(space.cpu_rows, 1.0), 1,
                                   options.clock())
    if not first:
        return PlanResult.error(NAME, "no reduction tree reaches the target")
    family = _ReductionTrees(space, links, first[0][1])
    found = _generate(ports, family, options, what="reduce (SSR)",
                      exact_what="reduce (SSR) tree master")
    if isinstance(found, PlanResult):
        return found
    weighted_trees = found.trees
    notes = [f"SSR(G) by column generation over reduction trees and matchings of the port "
             f"graph: {found.rounds} float round(s), then exact pricing; "
             f"{found.n_configs} matching column(s), {found.n_trees} tree column(s); "
             f"{len(weighted_trees)} tree(s) and "
             f"{len(found.configurations)} matching(s) used"]
    return found.exact, weighted_trees, found.configurations, notes
