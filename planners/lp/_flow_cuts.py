"""The per-destination flow bound of broadcasts and all-gathers, by cut generation.

The bound of :func:`portsim.planners.lp._broadcast.multicast_flow_model`
(Beaumont and Marchal, section 2.2.1, one message type per source) has a
flow ``x_{s,t}`` per source and destination under copies ``n_s(e) >=
x_{s,t}(e)``.  By the max-flow min-cut theorem, copies ``n_s`` carry a flow
``TP`` from ``s`` to ``t`` exactly when every cut ``S`` (``s ∈ S``, ``t ∉
S``) has ``Σ_{e ∈ δ⁺(S)} n_s(e) >= TP``.  So the program is::

    maximise TP
    port rows on Σ_s busy(e) · n_s(e)     (PortCapacity: nodes, links)
    Σ_{e ∈ δ⁺(S)} n_s(e) >= TP            every source s, every S ∋ s missing
                                          one of s's destinations

with ``|sources| · |links|`` variables instead of ``|sources| · |targets| ·
|links|`` (23,585 variables and 30,648 rows on two DGX-A100 servers; HiGHS
took 8-21 s there).  The cut rows are generated: the master starts with the
cuts around every destination and every source; a float solution is
separated by one maximum flow per (source, destination) pair
(:func:`scipy.sparse.csgraph.maximum_flow` on integer-scaled copies, the
violated cut read off the residual graph).  Then the master is solved
exactly (:func:`portsim.planners.lp._driver.solve_exactly`) and its exact
copies checked by exact maximum flows (networkx, integers): when every pair
carries ``TP`` the exact master point is feasible for the whole program, so
its optimum is the program's; an exactly violated cut joins and the exact
solve is repeated.  Any master is a relaxation, so its certified upper end
bounds the program in every case.

Cut generation on this program is column generation on its dual, and it
runs in the same loop as every other ``lp`` generation
(:func:`portsim.planners.lp._incremental.generate`, one
:class:`~portsim.planners.lp._incremental.IncrementalMaster` whose rows grow):
the "pricer" is the separation above, which also runs the exact check when
the float point violates no cut.  The float separation runs for at most
:data:`~portsim.planners.lp._incremental.MAX_ROUNDS` rounds; past them every
round separates the exact point, at most
:data:`~portsim.planners.lp._incremental.EXACT_ROUNDS` times (then the bound is
the relaxation's, and the notes say so).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from portsim.planners.base import PlanResult
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import NAME, LpOptions, time_limit_error
from portsim.planners.lp._exact import ExactSolution, recover
from portsim.planners.lp._incremental import (
    EXACT_ROUNDS,
    MAX_ROUNDS,
    IncrementalMaster,
    MasterFailed,
    MasterPoint,
    generate,
)
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached
from portsim.simulator.platform import NodeId, Platform

__all__ = ["FlowBound", "multicast_flow_bound", "source_cap"]


_SCALE_BITS = 30
"""Float copies are scaled to integers below ``2**30`` for scipy's maximum flow."""

Cut = tuple[int, frozenset[NodeId]]


@dataclass(frozen=True)
class FlowBound:
    """The outcome of :func:`multicast_flow_bound`.

    Attributes
    ----------
    solution:
        The exact cut master's solution; ``solution.upper`` is certified.
    exact:
        True when the exact master point passed every exact maximum flow:
        ``solution.upper`` is then the program's optimum, else an upper
        bound on it (a relaxation).
    rounds, cuts:
        Separation rounds and cut rows generated.
    """

    solution: ExactSolution
    exact: bool
    rounds: int
    cuts: int

    @property
    def upper(self) -> Fraction:
        """A certified upper bound on the per-destination flow program."""
        return self.solution.upper


def source_cap(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
               size: Fraction) -> Fraction:
    """The upper bound of TP in the flow programs: no source sends faster than all
    its out-links together (``Σ 1 / (size · c)``), the least over the sources."""
    g = platform.graph
    return min(sum((1 / (size * g.edges[s, v]["c"]) for v in g.successors(s)), Fraction(0))
               for s, _ in sources)


def _master(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
            size: Fraction, capacity: PortCapacity, cuts: Sequence[Cut],
            deadline: Deadline, phase: str) -> LinearModel:
    """The copies, the port and link rows, and the given cut rows (``deadline``
    checked every :data:`_CHECK_EVERY` cuts: 16,384 of them at 128 sources)."""
    g = platform.graph
    model = LinearModel()
    tp = model.variable("TP", upper=source_cap(platform, sources, size))
    model.objective = tp
    out_port: dict[NodeId, dict[int, Fraction]] = {v: {} for v in platform.node_ids}
    in_port: dict[NodeId, dict[int, Fraction]] = {v: {} for v in platform.node_ids}
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]] = {
        e: {} for e in capacity.links}
    busy_of = {(u, v): size * c for u, v, c in g.edges(data="c")}
    most = {e: 1 / busy for e, busy in busy_of.items()}
    for i, (source, _) in enumerate(sources):
        deadline.check(phase)
        for (u, v), busy in busy_of.items():
            if v == source:
                continue
            j = model.variable(("n", i, u, v), upper=most[u, v])
            out_port[u][j] = busy
            in_port[v][j] = busy
            if (u, v) in link_port:
                link_port[u, v][j] = busy
    capacity.add_node_rows(model, out_port, in_port, nodes=platform.node_ids, skip_empty=True)
    capacity.add_link_rows(model, link_port)
    for k, cut in enumerate(cuts):
        if k % _CHECK_EVERY == 0:
            deadline.check(phase)
        model.add(_cut_row(platform, model, sources, cut), "<=", Fraction(0),
                  f"cut of {sources[cut[0]][0]}: {len(cut[1])} node(s) inside")
    return model


_CHECK_EVERY = 256
"""How many cut rows are built between two looks at the deadline."""


def _cut_row(platform: Platform, model: LinearModel, sources: Sequence[tuple[NodeId, object]],
             cut: Cut) -> dict[int, Fraction]:
    """``TP - Σ_{e ∈ δ⁺(S)} n_s(e)`` (the cut row, ``<= 0``)."""
    i, side = cut
    source = sources[i][0]
    g = platform.graph
    if 2 * len(side) <= g.number_of_nodes():  # the links out of the side's nodes
        crossing = [(u, v) for u in side for v in g.successors(u) if v not in side]
    else:  # the links into the other nodes (the cut of all nodes but one target)
        crossing = [(u, v) for v in g.nodes if v not in side for u in g.predecessors(v)
                    if u in side]
    # in the variables' order (the links' order), as the row always was
    columns = sorted(model.index["n", i, u, v] for u, v in crossing if v != source)
    row = {model.objective: Fraction(1)}
    row.update((j, Fraction(-1)) for j in columns)
    return row


def _initial_cuts(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]]
                  ) -> list[Cut]:
    everyone = frozenset(platform.node_ids)
    cuts: list[Cut] = []
    for i, (source, targets) in enumerate(sources):
        cuts.append((i, frozenset({source})))
        cuts.extend((i, everyone - {t}) for t in targets if t != source)
    return list(dict.fromkeys(cuts))


def _float_cuts(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
                model: LinearModel, x: np.ndarray, deadline: Deadline, phase: str
                ) -> list[Cut]:
    """Cuts the float point violates (one maximum flow per source and destination;
    ``deadline`` checked before each source: 16,256 flows at 128 sources)."""
    nodes = list(platform.node_ids)
    index = {v: k for k, v in enumerate(nodes)}
    n = len(nodes)
    tp = float(x[model.objective])
    out: list[Cut] = []
    for i, (source, targets) in enumerate(sources):
        deadline.check(phase)
        arcs = [(u, v, float(x[model.index["n", i, u, v]]))
                for u, v in platform.graph.edges if v != source]
        top = max([tp, *(w for _, _, w in arcs)])
        if top <= 0:
            continue
        scale = (2 ** _SCALE_BITS) / top
        rows = np.array([index[u] for u, _, _ in arcs], dtype=np.int32)
        cols = np.array([index[v] for _, v, _ in arcs], dtype=np.int32)
        caps = np.array([max(0, math.floor(w * scale)) for _, _, w in arcs], dtype=np.int32)
        graph = csr_matrix((caps, (rows, cols)), shape=(n, n))
        need = tp * scale * (1 - 1e-9) - len(arcs)
        for t in targets:
            if t == source:
                continue
            result = maximum_flow(graph, index[source], index[t], method="dinic")
            if result.flow_value >= need:
                continue
            residual = (graph - result.flow).tocsr()
            residual.data = np.where(residual.data > 0, 1, 0).astype(np.int32)
            residual.eliminate_zeros()
            reach = breadth_first_order(residual, index[source], directed=True,
                                        return_predecessors=False)
            out.append((i, frozenset(nodes[k] for k in reach)))
            # and the sink side: everything that cannot reach t in the residual graph
            back = breadth_first_order(residual.T.tocsr(), index[t], directed=True,
                                       return_predecessors=False)
            out.append((i, frozenset(nodes) - frozenset(nodes[k] for k in back)))
    return list(dict.fromkeys(out))


def _exact_cuts(platform: Platform, sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
                model: LinearModel, values: Sequence[Fraction], deadline: Deadline,
                phase: str) -> list[Cut]:
    """Cuts the exact point violates (exact maximum flows on integer-scaled copies)."""
    tp = values[model.objective]
    out: list[Cut] = []
    for i, (source, targets) in enumerate(sources):
        deadline.check(phase)
        arcs = [(u, v, values[model.index["n", i, u, v]])
                for u, v in platform.graph.edges if v != source]
        scale = math.lcm(tp.denominator, *(w.denominator for _, _, w in arcs))
        g = nx.DiGraph()
        g.add_nodes_from(platform.node_ids)
        for u, v, w in arcs:
            if w > 0:
                g.add_edge(u, v, capacity=int(w * scale))
        for t in targets:
            if t == source:
                continue
            value, (side, _) = nx.minimum_cut(g, source, t)
            if value < tp * scale:
                out.append((i, frozenset(side)))
    return list(dict.fromkeys(out))


def multicast_flow_bound(platform: Platform,
                         sources: Sequence[tuple[NodeId, Sequence[NodeId]]],
                         size: Fraction, options: LpOptions, *, what: str
                         ) -> FlowBound | PlanResult:
    """The optimum of the per-destination flow program, by cut generation (module notes).

    Returns
    -------
    FlowBound or PlanResult
        ``exact`` true when the exact master point passes every exact maximum
        flow (then ``upper`` is the program's optimum); a result on failure
        or at the time limit.
    """
    capacity = PortCapacity.of(platform)
    deadline = options.clock()
    cuts = _initial_cuts(platform, sources)
    known = set(cuts)
    phase = f"the cut generation of the {what} flow bound"
    try:
        model = _master(platform, sources, size, capacity, cuts, deadline, phase)
    except TimeLimitReached as stop:
        return time_limit_error(options, stop.phase)
    # The master's rows grow: columns first (no rows), then every row as a cut.
    master = IncrementalMaster([], [], {"solver": "simplex", "simplex_strategy": 1})
    for j in range(model.n_variables):
        master.add_column(1.0 if j == model.objective else 0.0, [], [])
    for k, row in enumerate(model.rows):
        if k % _CHECK_EVERY == 0 and deadline.expired:
            return time_limit_error(options, phase)
        _add_row(master, row.coeffs, row.rhs)
    rounds = exact_rounds = 0
    outcome: list[FlowBound | PlanResult] = []

    def separate(point: MasterPoint) -> bool:
        """Add the cuts the point violates: float ones, else exact ones; False when done."""
        nonlocal rounds, exact_rounds, model
        rounds += 1
        new = [] if rounds > MAX_ROUNDS else [
            c for c in _float_cuts(platform, sources, model, master.values(), deadline, phase)
            if c not in known]
        if not new:
            # The same vertex in exact rationals (its basis solved exactly).
            exact_rounds += 1
            model = _master(platform, sources, size, capacity, cuts, deadline, phase)
            found = recover(model, master.solution(), deadline=deadline)
            if found is None:
                outcome.append(PlanResult.error(NAME, f"no exactly feasible solution of the "
                                                      f"{what} flow bound's cut master"))
                return False
            new = [c for c in _exact_cuts(platform, sources, model, found.values, deadline,
                                          phase)
                   if c not in known]
            if not new or exact_rounds >= EXACT_ROUNDS:
                outcome.append(FlowBound(found, not new, rounds, len(cuts)))
                return False
        for cut in new:
            known.add(cut)
            cuts.append(cut)
            _add_row(master, _cut_row(platform, model, sources, cut), Fraction(0))
        return True

    try:
        generate(master, separate, deadline=deadline, max_rounds=MAX_ROUNDS + EXACT_ROUNDS,
                 phase=phase)
    except TimeLimitReached as stop:
        return time_limit_error(options, stop.phase)
    except MasterFailed as failure:
        return PlanResult.error(NAME, f"HiGHS failed on the {what} flow bound: {failure.status}")
    return outcome[0]


def _add_row(master: IncrementalMaster, coeffs: Mapping[int, Fraction], rhs: Fraction) -> None:
    """Append the row ``coeffs · x <= rhs`` to the float master."""
    master.add_row(list(coeffs), [float(a) for a in coeffs.values()], float(rhs))
