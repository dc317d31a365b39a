"""Series of all-reduces, bidirectional one-port: a valid bound and a periodic schedule.

Every participant ``P_d`` must end with ``v[0,N-1] = v_0 ⊕ … ⊕ v_{N-1}``
(non-commutative operator, intervals combined left then right as in SSR(G),
Legrand, Marchal and Robert, RR-4872, section 4.2).

**Upper bound: per-destination SSR(G) flows over shared operations**
(:func:`build_allreduce_bound_model`).  Variables: the *actual* operations
per time unit, ``x(i→j, v[k,m])`` (sends) and ``y(i, T_{k,l,m})``
(computations); for every destination ``d`` a copy of SSR(G) with target
``d``, ``send_d`` and ``cons_d``, delivering ``v[0,N-1]`` to ``d`` at the
common rate TP (conservation law (10), throughput (11)).  Coupling:
``send_d <= x`` and ``cons_d <= y`` for every ``d`` (a partial result, once
made, may be copied and serve several destinations, so the operations are
shared, not summed); one-port rows ``Σ size·c·x <= 1`` on every send port
and every receive port; CPU rows ``Σ w·y <= 1``.

*Why no schedule beats it.*  Take any feasible schedule and a horizon
``H``.  For a completed instance and a destination ``d``, trace ``d``'s
result back in time: a held item was obtained first either by a
computation on that node (follow both inputs) or by received parts (follow
each part's sender, with weight the part, the parts taken in arrival order
until they sum to 1), down to the initial ``v_i`` on ``P_i``.  The weights
satisfy the conservation law (10) with one result delivered at ``d``, so
the trace is a feasible point of SSR(G) for target ``d`` with TP = 1; it
never sends ``v_i`` into its owner (that copy is held from the start) nor
the result out of ``d`` (``d`` held it before).  For a participant index
``i``, the trace weight on items containing ``i`` is a unit flow backwards
in time (a computation passes its weight to exactly one input containing
``i``, a reception passes it to parts summing to 1), from ``d``'s result to
``v_i`` on ``P_i``, in an acyclic graph of holdings; so every holding gets
weight at most 1 and every operation in the trace has weight at most its
actual amount (its part, or 1).  Summing over the instances completed by
``H`` and dividing by ``H``: ``send_d``, ``cons_d`` (one per ``d``),
``x``, ``y`` (every operation ending by ``H``) and ``TP = completed / H``
satisfy every row, because one-port sends, receives and computations do
not overlap in ``[0, H]``.  Hence ``completed(H) <= TP* · H`` for every
``H``; ``tests/test_lp_allreduce.py`` checks it against a brute force over
every union of per-destination reduction trees on tiny platforms.

*Size.*  ``N`` copies of SSR(G): about ``N · (|E| N²/2 + n N³/6)``
variables and as many coupling rows, solved by HiGHS (interior point above
2,000 variables) and recovered exactly from the basis.  Measured on random
platforms of degree 3 (every node a participant): N = 6 in 0.8 s, N = 8 in
5 s, N = 10 (35,611 variables) in about 30 s, of which 22 s is the bound;
beyond that, set ``time_limit``.

**Schedule: reduce to a root, then broadcast from it**
(:func:`build_allreduce_master`).  An instance is one reduction tree whose
final computation ``T_{0,l,N-1}`` runs on some processor ``r`` (the root,
any processor reaching every participant), then one broadcast arborescence
of ``v[0,N-1]`` from ``r`` (spanning the nodes ``r`` reaches, leaves that
are not participants pruned).  The program: SSR(G) variables (no send of
the final result) with the result produced at any root, weighted
arborescences per root by column generation (minimum-arborescence pricing,
as :mod:`planners.lp._broadcast`), the arborescence weights of ``r`` equal
to the results made at ``r``; shared port and CPU rows.  The reduction part
is decomposed by EXTRACT_TREES (section 4.4) root by root; each root's
reduction trees and arborescences are paired (north-west corner rule) into
weighted units, each a whole instance: the broadcast sends come after the
final computation, so the lags of :mod:`planners.lp._periodic` never send
``v[0,N-1]`` before it exists.

When the schedule's rate equals the bound the result is exact; otherwise
``throughput_bound`` is the bound and the message states the certified
interval ``[achieved, bound]`` (reduce-then-broadcast may fall short of the
optimum, and the bound may not be reachable by any schedule).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

import networkx as nx

from planners.base import PlanResult
from planners.lp._arborescence import min_arborescence
from planners.lp._broadcast import tree_depths
from planners.lp._driver import NAME, LpOptions, finish, solve_exactly, time_limit_error
from planners.lp._exact import ExactSolution
from planners.lp._periodic import SendTask, Unit
from planners.lp._reduce import _unit as _reduce_unit
from planners.lp._reduce import extract_trees, refuse_reduction
from planners.lp._solve import Deadline, LinearModel, TimeLimitReached, solve_float
from simulator.items import Item
from simulator.numbers import format_rational
from simulator.operations import Operation, OperationKind
from simulator.platform import NodeId, Platform

__all__ = ["allreduce_bound", "build_allreduce_bound_model", "build_allreduce_master",
           "plan_allreduce"]

TP = "TP"

MAX_ROUNDS = 300
"""Cap on the column-generation rounds over broadcast arborescences."""

_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)

Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)
Tree = tuple[tuple[NodeId, NodeId], ...]


def _caps(platform: Platform, operation: Operation) -> tuple[dict[NodeId, Fraction], Fraction]:
    """Receive capacity of every node (messages per time unit) and a cap on TP.

    Every participant must receive at least one message per instance (``N >= 2``),
    so TP is at most the smallest receive capacity of a participant.
    """
    g = platform.graph
    size = operation.size
    receive = {v: sum((1 / (size * g.edges[u, v]["c"]) for u in g.predecessors(v)),
                      Fraction(0)) for v in g.nodes}
    return receive, min(receive[p] for p in operation.participants)


def build_allreduce_bound_model(platform: Platform, operation: Operation) -> LinearModel:
    """The upper-bound program: one SSR(G) copy per destination over shared operations.

    Parameters
    ----------
    platform:
        A bidirectional platform.
    operation:
        A resolved, non-commutative allreduce with at least two participants.

    Returns
    -------
    LinearModel
        Maximises ``"TP"``.  Variable keys: ``("x", i, j, k, m)`` and
        ``("y", i, k, l, m)`` (actual sends and computations), ``("send", d,
        i, j, k, m)`` and ``("cons", d, i, k, l, m)`` (the copy of
        destination ``d``).  The module notes prove that no schedule beats it.

    Examples
    --------
    Two nodes, links of cost 1 both ways, compute time 1: each node must
    receive one message per instance, so TP <= 1, and the butterfly (or
    reduce then send back) reaches it.

    >>> from simulator.platform import Platform
    >>> from planners.lp._solve import solve_float
    >>> p = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    >>> op = Operation(OperationKind.ALLREDUCE).resolve(p)
    >>> m = build_allreduce_bound_model(p, op)
    >>> round(float(solve_float(m).x[m.objective]), 9)
    1.0
    """
    g = platform.graph
    parts = operation.participants
    n = len(parts)
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    intervals = [(k, m) for k in range(n) for m in range(k, n)]
    _, tp_cap = _caps(platform, operation)
    model = LinearModel()
    tp = model.variable(TP, upper=tp_cap)
    model.objective = tp
    out_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    cpu: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    x: dict[tuple[NodeId, NodeId, int, int], int] = {}
    for u, v, data in g.edges(data=True):
        busy = size * data["c"]
        for k, m in intervals:
            if k == m and owner.get(v) == k:
                continue  # v_k into its owner: never in a trace
            j = x[u, v, k, m] = model.variable(("x", u, v, k, m), upper=1 / busy)
            out_port[u][j] = busy
            in_port[v][j] = busy
    y: dict[tuple[NodeId, int, int, int], int] = {}
    tasks = [(k, l_, m) for k in range(n) for m in range(k + 1, n) for l_ in range(k, m)]
    for node in platform.processors:
        w = platform.compute_time(node)
        if w > 0:  # a free computation needs no CPU row, so no shared variable
            for k, l_, m in tasks:
                j = y[node, k, l_, m] = model.variable(("y", node, k, l_, m),
                                                       upper=min(tp_cap, 1 / w))
                cpu[node][j] = w
    for d in parts:
        balance: dict[tuple[NodeId, int, int], dict[int, Fraction]] = defaultdict(dict)
        for (u, v, k, m), xj in x.items():
            if u == d and (k, m) == (0, n - 1):
                continue  # the result never leaves d in d's trace
            j = model.variable(("send", d, u, v, k, m), upper=model.upper[xj])
            balance[v, k, m][j] = _ONE
            balance[u, k, m][j] = _MINUS_ONE
            model.add({j: _ONE, xj: _MINUS_ONE}, "<=", Fraction(0),
                      f"copy {d}: send {u}->{v} v[{k},{m}] is an actual send")
        for node in platform.processors:
            for k, l_, m in tasks:
                # a trace uses each task at most once per instance: cons_d <= TP
                j = model.variable(("cons", d, node, k, l_, m), upper=tp_cap)
                balance[node, k, m][j] = _ONE
                balance[node, k, l_][j] = _MINUS_ONE
                balance[node, l_ + 1, m][j] = _MINUS_ONE
                yj = y.get((node, k, l_, m))
                if yj is not None:
                    model.add({j: _ONE, yj: _MINUS_ONE}, "<=", Fraction(0),
                              f"copy {d}: T[{k},{l_},{m}] on {node} is an actual task")
        for (node, k, m), coeffs in balance.items():
            if k == m and owner.get(node) == k:
                continue  # v_k on its owner: unlimited
            if node == d and (k, m) == (0, n - 1):
                row = dict(coeffs)
                row[tp] = _MINUS_ONE
                model.add(row, "==", Fraction(0), f"throughput (11) at {d}")
            else:
                model.add(coeffs, "==", Fraction(0),
                          f"copy {d}: conservation (10) of v[{k},{m}] at {node}")
        if (d, 0, n - 1) not in balance:
            model.add({tp: _ONE}, "==", Fraction(0), f"no way to build the result at {d}")
    for node, coeffs in out_port.items():
        model.add(coeffs, "<=", _ONE, f"one-port send of {node}")
    for node, coeffs in in_port.items():
        model.add(coeffs, "<=", _ONE, f"one-port receive of {node}")
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", _ONE, f"computation of {node}")
    return model


def allreduce_bound(platform: Platform, operation: Operation, options: LpOptions, *,
                    deadline: Deadline | None = None) -> ExactSolution | PlanResult:
    """Solve :func:`build_allreduce_bound_model` exactly (or a certified interval).

    Returns
    -------
    ExactSolution or PlanResult
        ``upper`` is a certified upper bound on the throughput of every
        schedule; a :class:`PlanResult` says why the solve failed.
    """
    model = build_allreduce_bound_model(platform, operation)
    return solve_exactly(model, options, what="allreduce bound", deadline=deadline)


# -- the schedule: reduce to a root, broadcast from it ---------------------------------------

def _roots(platform: Platform, operation: Operation) -> list[NodeId]:
    """Processors that reach every participant (they may finish and broadcast)."""
    parts = set(operation.participants)
    return [r for r in platform.processors
            if parts <= ({r} | nx.descendants(platform.graph, r))]


def _prune(tree: Tree, root: NodeId, keep: set[NodeId]) -> Tree:
    """Drop leaves that are not in ``keep`` until none is left (a Steiner arborescence)."""
    edges = set(tree)
    while True:
        has_child = {u for u, _ in edges}
        leaves = {(u, v) for u, v in edges if v not in has_child and v not in keep}
        if not leaves:
            return tuple(sorted(edges))
        edges -= leaves


def _arborescence(platform: Platform, root: NodeId, nodes: set[NodeId],
                  price: dict[tuple[NodeId, NodeId], float] | None) -> Tree:
    """A minimum spanning arborescence of ``nodes`` from ``root`` (BFS tree without prices)."""
    if len(nodes) == 1:
        return ()
    arcs = [(u, v) for u, v in platform.graph.edges
            if v != root and u in nodes and v in nodes]
    if price is None:
        g = nx.DiGraph(arcs)
        g.add_nodes_from(nodes)
        return tuple(sorted(nx.bfs_tree(g, root).edges))
    # Our Chu-Liu/Edmonds: networkx's raised "No minimum spanning
    # arborescence" on some reachable graphs with zero weights (duals).
    index = {root: 0}
    for node in sorted(nodes - {root}):
        index[node] = len(index)
    chosen = min_arborescence(len(index), 0,
                              [(index[u], index[v], price[u, v]) for u, v in arcs])
    if chosen is None:
        raise AssertionError(f"no arborescence from {root} spans {sorted(nodes)}")
    return tuple(sorted(arcs[i] for i in chosen))


def build_allreduce_master(platform: Platform, operation: Operation,
                           columns: Sequence[tuple[NodeId, Tree]]
                           ) -> tuple[LinearModel, dict[NodeId, int]]:
    """Reduce-then-broadcast program over the given broadcast arborescences.

    Parameters
    ----------
    platform, operation:
        As :func:`build_allreduce_bound_model`.
    columns:
        ``(root, arborescence)`` pairs; every root in :func:`_roots`.

    Returns
    -------
    (LinearModel, dict)
        The program (variable keys ``("send", i, j, k, m)``, ``("cons", i,
        k, l, m)`` as SSR(G), ``("tree", c)`` for column ``c``, ``"TP"``)
        and, per root, the index among the ``==`` rows of the row tying the
        results made at the root to its arborescences (for the duals).
    """
    g = platform.graph
    parts = operation.participants
    n = len(parts)
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    intervals = [(k, m) for k in range(n) for m in range(k, n) if (k, m) != (0, n - 1)]
    _, tp_cap = _caps(platform, operation)
    roots = _roots(platform, operation)
    model = LinearModel()
    tp = model.variable(TP, upper=tp_cap)
    model.objective = tp
    out_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    cpu: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    balance: dict[tuple[NodeId, int, int], dict[int, Fraction]] = defaultdict(dict)
    for u, v, data in g.edges(data=True):
        busy = size * data["c"]
        for k, m in intervals:
            if k == m and owner.get(v) == k:
                continue
            j = model.variable(("send", u, v, k, m), upper=1 / busy)
            out_port[u][j] = busy
            in_port[v][j] = busy
            balance[v, k, m][j] = _ONE
            balance[u, k, m][j] = _MINUS_ONE
    for node in platform.processors:
        w = platform.compute_time(node)
        cap = tp_cap if w == 0 else min(tp_cap, 1 / w)
        for k in range(n):
            for m in range(k + 1, n):
                if (k, m) == (0, n - 1) and node not in roots:
                    continue
                for l_ in range(k, m):
                    j = model.variable(("cons", node, k, l_, m), upper=cap)
                    if w > 0:
                        cpu[node][j] = w
                    balance[node, k, m][j] = _ONE
                    balance[node, k, l_][j] = _MINUS_ONE
                    balance[node, l_ + 1, m][j] = _MINUS_ONE
    total: dict[int, Fraction] = {tp: _ONE}
    for c, (root, tree) in enumerate(columns):
        first = min((size * platform.cost(*e) for e in tree), default=_ONE)
        j = model.variable(("tree", c), upper=min(tp_cap, 1 / first))
        total[j] = _MINUS_ONE
        balance[root, 0, n - 1][j] = _MINUS_ONE
        for u, v in tree:
            busy = size * platform.cost(u, v)
            out_port[u][j] = out_port[u].get(j, Fraction(0)) + busy
            in_port[v][j] = in_port[v].get(j, Fraction(0)) + busy
    final_rows: dict[NodeId, int] = {}
    n_eq = 0
    model.add(total, "==", Fraction(0), "the arborescences carry TP")
    n_eq += 1
    for (node, k, m), coeffs in balance.items():
        if k == m and owner.get(node) == k:
            continue
        if (k, m) == (0, n - 1):
            final_rows[node] = n_eq
            model.add(coeffs, "==", Fraction(0), f"results made at {node} are broadcast")
        else:
            model.add(coeffs, "==", Fraction(0), f"conservation (10) of v[{k},{m}] at {node}")
        n_eq += 1
    for node in platform.node_ids:  # a fixed order: send row, receive row, per node
        model.add(out_port.get(node, {}), "<=", _ONE, f"send:{node}")
        model.add(in_port.get(node, {}), "<=", _ONE, f"recv:{node}")
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", _ONE, f"computation of {node}")
    return model, final_rows


def _generate_columns(platform: Platform, operation: Operation, options: LpOptions,
                      deadline: Deadline) -> list[tuple[NodeId, Tree]] | PlanResult:
    """Broadcast arborescences by column generation on the float master program."""
    roots = _roots(platform, operation)
    keep = set(operation.participants)
    reach = {r: {r} | nx.descendants(platform.graph, r) for r in roots}
    columns = [(r, _prune(_arborescence(platform, r, reach[r], None), r, keep)) for r in roots]
    seen = set(columns)
    busy = {e: float(operation.size * platform.cost(*e)) for e in platform.graph.edges}
    for _ in range(MAX_ROUNDS):
        deadline.check("column generation (allreduce master program)")
        model, final_rows = build_allreduce_master(platform, operation, columns)
        sol = solve_float(model, method="highs-ds" if options.method == "auto"
                          else options.method, time_limit=deadline.remaining())
        if sol.status == "time_limit":
            raise TimeLimitReached("column generation (allreduce master program)")
        if sol.status != "optimal" or sol.y_ub is None or sol.y_eq is None:
            return PlanResult.error(NAME, f"allreduce master program: {sol.message}")
        duals = [float(v) for v in sol.y_ub]
        pi_out = {node: duals[2 * i] for i, node in enumerate(platform.node_ids)}
        pi_in = {node: duals[2 * i + 1] for i, node in enumerate(platform.node_ids)}
        price = {(u, v): b * (pi_out[u] + pi_in[v]) for (u, v), b in busy.items()}
        z_tp = float(sol.y_eq[0])
        added = False
        for r in roots:
            tree = _prune(_arborescence(platform, r, reach[r], price), r, keep)
            cost = sum(price[e] for e in tree)
            if cost < z_tp + float(sol.y_eq[final_rows[r]]) - 1e-9 and (r, tree) not in seen:
                seen.add((r, tree))
                columns.append((r, tree))
                added = True
        if not added:
            break
    return columns


def _pair(reductions: list[tuple[Fraction, list[Task]]], broadcasts: list[tuple[Fraction, Tree]]
          ) -> list[tuple[Fraction, list[Task], Tree]]:
    """North-west corner rule: split two weight lists of equal sums into common pieces."""
    out: list[tuple[Fraction, list[Task], Tree]] = []
    a = [w for w, _ in reductions]
    b = [w for w, _ in broadcasts]
    i = j = 0
    while i < len(a) and j < len(b):
        w = min(a[i], b[j])
        if w > 0:
            out.append((w, reductions[i][1], broadcasts[j][1]))
        a[i] -= w
        b[j] -= w
        if a[i] == 0:
            i += 1
        if j < len(b) and b[j] == 0:
            j += 1
    return out


def _instance_unit(weight: Fraction, tasks: list[Task], root: NodeId, tree: Tree,
                   n: int) -> Unit:
    """One instance: the reduction tree, then the broadcast of the result from ``root``."""
    reduction = _reduce_unit(weight, tasks)
    sends = list(reduction.sends)
    computes = list(reduction.computes)
    final = max((c.depth for c in computes), default=0)
    result = Item.interval(0, n - 1)
    below = tree_depths(tree, root)  # the broadcast starts after the final computation
    sends.extend(SendTask(u, v, result, final + below[u] + 1) for u, v in tree)
    return Unit(weight, tuple(sends), tuple(computes))


def plan_allreduce(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Steady-state series of non-commutative all-reduces (bidirectional one-port).

    Parameters
    ----------
    platform:
        A bidirectional platform.
    operation:
        A resolved allreduce.
    options:
        The ``lp`` options (``time_limit`` covers both programs).

    Returns
    -------
    PlanResult
        ``ok`` with ``throughput_bound`` the certified bound of
        :func:`build_allreduce_bound_model` and a periodic reduce-then-broadcast
        schedule: exact when the schedule reaches the bound, else the message
        states the interval ``[achieved, bound]``.  ``unsupported`` for a
        commutative operator; ``error`` for one participant or a time limit.

    Notes
    -----
    The formulation and the proof that no schedule beats the bound are in the
    module notes.  Two nodes with links of cost 1 and compute time 1: TP = 1
    (each node receives one message per instance; reduce on either node and
    send the result back, roots alternating, meets it).

    Examples
    --------
    >>> from simulator.platform import Platform
    >>> p = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    >>> op = Operation(OperationKind.ALLREDUCE).resolve(p)
    >>> r = plan_allreduce(p, op, LpOptions())
    >>> r.status, r.throughput_bound, r.message
    ('ok', Fraction(1, 1), '')
    """
    refused = refuse_reduction(operation)
    if refused is not None:
        return refused
    deadline = options.clock()
    bound = allreduce_bound(platform, operation, options, deadline=deadline)
    if isinstance(bound, PlanResult):
        return bound
    try:
        columns = _generate_columns(platform, operation, options, deadline)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase}")
    if isinstance(columns, PlanResult):
        return columns
    model, _ = build_allreduce_master(platform, operation, columns)
    master = solve_exactly(model, options, what="allreduce reduce-then-broadcast",
                           deadline=deadline)
    if isinstance(master, PlanResult):
        return master
    if master.lower <= 0:
        return PlanResult.error(NAME, "the reduce-then-broadcast program carries nothing")
    amount: dict[Task, Fraction] = {
        key: master.values[j] for key, j in model.index.items()  # type: ignore[misc]
        if isinstance(key, tuple) and key[0] in ("send", "cons") and master.values[j] > 0}
    units: list[Unit] = []
    by_root: dict[NodeId, list[tuple[Fraction, Tree]]] = defaultdict(list)
    for c, (root, tree) in enumerate(columns):
        w = master.values[model.index["tree", c]]
        if w > 0:
            by_root[root].append((w, tree))
    for root, trees in by_root.items():
        carried = sum((w for w, _ in trees), Fraction(0))
        reduce_op = replace(operation, kind=OperationKind.REDUCE, target=root)
        try:
            reductions = extract_trees(reduce_op, amount, carried, deadline=deadline)
        except TimeLimitReached as stop:
            return time_limit_error(options, f"{stop.phase} of the allreduce schedule")
        for w, tasks, tree in _pair(reductions, trees):
            units.append(_instance_unit(w, tasks, root, tree, len(operation.participants)))
    if deadline.expired:
        return time_limit_error(options, "tree extraction, before the periodic schedule")
    upper = max(bound.upper, master.lower)
    exact = ExactSolution(master.values, master.lower, upper, bound.y_ub, bound.y_eq,
                          bound.method if upper == master.lower else "interval")
    notes = [f"bound: {len(operation.participants)} per-destination SSR(G) copies over "
             f"shared operations ({bound.method}), {format_rational(bound.upper)}",
             f"schedule: reduce to a root then broadcast, {len(columns)} arborescence "
             f"column(s), {len(units)} weighted instance unit(s) over {len(by_root)} root(s), "
             f"{format_rational(master.lower)}"]
    return finish(platform, operation, exact, [units], options, notes=notes)
