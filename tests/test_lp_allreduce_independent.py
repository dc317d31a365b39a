"""An independent check of the ``lp`` allreduce optimum: column generation over structures.

The planner (``planners/lp/_allreduce.py`` and ``_allreduce_packing.py``)
claims the exact steady-state optimum of a non-commutative allreduce under the
bidirectional one-port model.  This file recomputes it, in floats, without
importing any of the planner's models.

A *structure* is the set of operations of one instance (sends of partial
results ``v[k,m]`` over links, reduction tasks ``T_{k,l,m}`` on processors)
after which every participant holds ``v[0,N-1]``.  The optimum is the best
packing ``max Σ_s w_s`` subject to ``Σ_s w_s · load_s(row) <= 1`` for each row
(send port, receive port and CPU of each node).  It is solved by column
generation:

* the master LP (``scipy.optimize.linprog``, HiGHS) packs the structures found
  so far; its duals ``y >= 0`` price the rows;
* the pricing MIP (``scipy.optimize.milp``) finds the structure of least priced
  load ``y · load_s``; a structure with price below 1 improves the master, and
  the generation stops when the least price is ``>= 1 - 1e-9``.

Under multi-port models (``tests/test_lp_allreduce_ports.py``) the rows are
read off the port models here, not from the planner: a send (receive) row of
right-hand side 1 for a bidirectional node, ``k`` for ``multiport:k``, none
for ``multiport`` (one port per link), and one row ``busy <= 1`` for every
link of a platform with a multi-port node (a link carries one transfer at a
time); an all-bidirectional platform has the papers' rows only.

The pricing formulation is *holding-based* with time labels, unlike the
planner's per-destination flows: binaries ``send[u,v,k,m]``, ``task[x,k,l,m]``
and ``hold[x,k,m]``; a held item that ``x`` does not own needs a producer (an
incoming send or a task making it on ``x``); a send needs its item held at its
source; a task needs both inputs held on its node; every participant holds
``v[0,N-1]``.  Acyclicity of the derivation comes from continuous labels
``t[x,k,m]`` in ``[0, n_nodes - 1]`` that must grow by 1 along every chosen
send (Miller-Tucker-Zemlin style, big M = number of nodes): a task makes a
strictly longer interval than its inputs, so a cycle of derivations can only
be a cycle of sends of one item, and such a cycle cannot be labelled; every
held item is derived from the owners' values.

Tuning, each step keeping the check exact and free of the planner's code:

* valid cuts that only tighten the relaxation: holding ``v[k,m]`` (``k <
  m``) at some node takes at least ``m - k`` tasks on sub-intervals of
  ``[k,m]`` (a derivation of ``v[k,m]`` is a binary tree over its ``m - k +
  1`` values, with distinct intervals at its inner nodes); a node holding
  ``v[k,m]`` (``k < m``) owns at most one of its values, so it receives some
  sub-interval; what ``u`` sends to ``v`` it did not receive from ``v`` (a
  two-cycle has no labelling);
* a warm start built here: for each processor reaching and reached by every
  participant, every value goes to it by a cheapest path (networkx), it
  combines them left to right, and sends the result back by a cheapest-path
  tree; these columns only seed the master;
* an improving round gives the pricing 2 s (any structure priced below 1
  improves the master); only when that finds none does the pricing run to
  a relative gap of 1e-8, and the generation ends when a dual bound, from
  either run, is at least ``1 - 1e-7``.

With these, ``ring_platform(5)`` (bidirectional) takes 49 s instead of 111 s
of CPU, and nine or ten participants are in reach where the CPUs bind (the
task cut closes the pricing at once); where communication binds, one exact
pricing at N = 9 still takes 70-75 s (see the last test).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as F
from functools import cache
from itertools import pairwise

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import lil_matrix

from portsim.planners.base import PlanResult
from portsim.planners.lp import steady_state
from portsim.scenarios.generators import random_platform, ring_platform
from portsim.simulator import Operation, OperationKind, Platform
from portsim.simulator.platform import PortKind

_Item = tuple[int, int]


@dataclass
class _Pricing:
    """The pricing MIP of one platform and participant list, built once.

    ``load`` maps the variable vector to the row loads (send ports, receive
    ports, CPUs); the objective of a pricing is ``prices @ load``.
    """

    n_vars: int
    integrality: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    constraints: LinearConstraint
    load: np.ndarray  # rows x variables
    rhs: np.ndarray  # each row's right-hand side
    n_rows: int
    ops: dict[int, tuple[str, str, str, int, int, int]]  # op variable -> its description
    parts: tuple[str, ...]


def _build_pricing(platform: Platform, parts: tuple[str, ...], size: F) -> _Pricing:
    """The holding-based pricing MIP (see the module docstring)."""
    nodes = list(platform.node_ids)
    node_index = {v: i for i, v in enumerate(nodes)}
    n_nodes = len(nodes)
    n = len(parts)
    items: list[_Item] = [(k, m) for k in range(n) for m in range(k, n)]
    owner = {k: parts[k] for k in range(n)}

    variables: dict[tuple[object, ...], int] = {}

    def var(key: tuple[object, ...]) -> int:
        if key not in variables:
            variables[key] = len(variables)
        return variables[key]

    edges = list(platform.graph.edges)
    sends = [(u, v, k, m) for (u, v) in edges for (k, m) in items
             if not (k == m and v == owner[k])]
    tasks = [(x, k, l_, m) for x in platform.processors for (k, m) in items
             for l_ in range(k, m)]
    for s in sends:
        var(("send", *s))
    for t in tasks:
        var(("task", *t))
    for x in nodes:
        for it in items:
            var(("hold", x, *it))
    n_binary = len(variables)
    for x in nodes:
        for it in items:
            var(("time", x, *it))
    n_vars = len(variables)
    # A task makes a strictly longer interval than its inputs, so a cycle of
    # derivations is a cycle of sends of one item: labels along sends only,
    # each item's in [0, n_nodes - 1].
    big_m = float(n_nodes)

    integrality = np.zeros(n_vars)
    integrality[:n_binary] = 1
    lower = np.zeros(n_vars)
    upper = np.ones(n_vars)
    upper[n_binary:] = big_m - 1
    for k in range(n):
        lower[variables["hold", owner[k], k, k]] = 1  # an owner holds its value
    for d in parts:
        lower[variables["hold", d, 0, n - 1]] = 1  # every participant ends with the result

    rows: list[tuple[dict[int, float], float, float]] = []
    inf = np.inf
    keys = {j: key for key, j in variables.items()}

    def model_key(j: int) -> tuple[object, ...]:
        return keys[j]
    # A held item that is not owned needs a producer.
    incoming: dict[tuple[str, int, int], list[int]] = {}
    for (u, v, k, m) in sends:
        incoming.setdefault((v, k, m), []).append(variables["send", u, v, k, m])
    for (x, k, l_, m) in tasks:
        incoming.setdefault((x, k, m), []).append(variables["task", x, k, l_, m])
    for x in nodes:
        for (k, m) in items:
            if k == m and x == owner[k]:
                continue
            coefs: dict[int, float] = dict.fromkeys(incoming.get((x, k, m), []), 1.0)
            coefs[variables["hold", x, k, m]] = -1.0
            rows.append((coefs, 0.0, inf))
    # A send needs its item at its source; labels grow along it.
    for (u, v, k, m) in sends:
        js = variables["send", u, v, k, m]
        rows.append(({variables["hold", u, k, m]: 1.0, js: -1.0}, 0.0, inf))
        # t[v] - t[u] - M send >= 1 - M
        rows.append(({variables["time", v, k, m]: 1.0, variables["time", u, k, m]: -1.0,
                      js: -big_m}, 1.0 - big_m, inf))
    # A task needs both inputs on its node.
    for (x, k, l_, m) in tasks:
        jt = variables["task", x, k, l_, m]
        for (a, b) in ((k, l_), (l_ + 1, m)):
            rows.append(({variables["hold", x, a, b]: 1.0, jt: -1.0}, 0.0, inf))

    # Valid cuts (they only tighten the relaxation, see the module docstring).
    # 1. Holding v[k,m] takes m - k tasks on sub-intervals of [k,m], somewhere.
    inside: dict[_Item, list[int]] = {it: [] for it in items}
    for (x, a, l_, b) in tasks:
        for (k, m) in items:
            if k <= a and b <= m:
                inside[k, m].append(variables["task", x, a, l_, b])
    for x in nodes:
        for (k, m) in items:
            if k < m:
                coefs = dict.fromkeys(inside[k, m], 1.0)
                coefs[variables["hold", x, k, m]] = -float(m - k)
                rows.append((coefs, 0.0, inf))
    # 2. A node holding v[k,m] (k < m) owns at most one of its values: it
    # receives some sub-interval of [k,m].
    received: dict[tuple[str, int, int], list[int]] = {}
    for (u, v, a, b) in sends:
        for (k, m) in items:
            if k < m and k <= a and b <= m:
                received.setdefault((v, k, m), []).append(variables["send", u, v, a, b])
    for x in nodes:
        for (k, m) in items:
            if k < m:
                coefs = dict.fromkeys(received.get((x, k, m), []), 1.0)
                coefs[variables["hold", x, k, m]] = -1.0
                rows.append((coefs, 0.0, inf))
    # 3. No two-cycle: what u sends to v it did not get from v.
    for (u, v, k, m) in sends:
        coefs = {j: 1.0 for j in incoming.get((u, k, m), [])
                 if model_key(j) != ("send", v, u, k, m)}
        coefs[variables["send", u, v, k, m]] = -1.0
        rows.append((coefs, 0.0 if not (k == m and u == owner[k]) else -1.0, inf))

    matrix = lil_matrix((len(rows), n_vars))
    lo = np.empty(len(rows))
    hi = np.empty(len(rows))
    for r, (coefs, row_lo, row_hi) in enumerate(rows):
        for j, coef in coefs.items():
            matrix[r, j] = coef
        lo[r], hi[r] = row_lo, row_hi

    # Loads: send port of u, receive port of v (size · c(u, v)), CPU of x; then,
    # with a multi-port node anywhere, one row per link.
    multiport = any(platform.port_model_of(x).kind is PortKind.MULTIPORT for x in nodes)
    link_index = {e: i for i, e in enumerate(edges)} if multiport else {}
    n_rows = 3 * n_nodes + len(link_index)
    load = np.zeros((n_rows, n_vars))
    rhs = np.ones(n_rows)
    for x in nodes:
        model = platform.port_model_of(x)
        if model.kind is PortKind.MULTIPORT:  # k ports a side; no k: the link rows alone
            ports = np.inf if model.k is None else float(model.k)
            rhs[node_index[x]] = rhs[n_nodes + node_index[x]] = ports
    for (u, v, k, m) in sends:
        busy = float(size * platform.cost(u, v))
        j = variables["send", u, v, k, m]
        load[node_index[u], j] += busy
        load[n_nodes + node_index[v], j] += busy
        if link_index:
            load[3 * n_nodes + link_index[u, v], j] += busy
    for (x, k, l_, m) in tasks:
        load[2 * n_nodes + node_index[x], variables["task", x, k, l_, m]] += float(
            platform.compute_time(x))
    ops: dict[int, tuple[str, str, str, int, int, int]] = {}
    for (u, v, k, m) in sends:
        ops[variables["send", u, v, k, m]] = ("send", u, v, k, k, m)
    for (x, k, l_, m) in tasks:
        ops[variables["task", x, k, l_, m]] = ("task", x, x, k, l_, m)
    return _Pricing(n_vars, integrality, lower, upper,
                    LinearConstraint(matrix.tocsr(), lo, hi), load, rhs, n_rows, ops, parts)


def _check_structure(model: _Pricing, chosen: list[int]) -> None:
    """The chosen operations, replayed by forward chaining, give every participant the result.

    Independent of the MIP's constraints: a formulation bug that let a cheaper
    non-structure through would inflate the optimum; this catches it.
    """
    n = len(model.parts)
    held = {(model.parts[k], k, k) for k in range(n)}
    pending = [model.ops[j] for j in chosen]
    progress = True
    while progress:
        progress = False
        for op in list(pending):
            kind, src, dst, k, l_, m = op
            if kind == "send":
                ready = (src, k, m) in held
            else:
                ready = (src, k, l_) in held and (src, l_ + 1, m) in held
            if ready:
                held.add((dst, k, m))
                pending.remove(op)
                progress = True
    assert all((d, 0, n - 1) in held for d in model.parts)


def _price(model: _Pricing, prices: np.ndarray, gap: float,
           seconds: float | None = None) -> tuple[float, float, np.ndarray] | None:
    """A least priced structure (within relative ``gap``).

    Returns its price ``prices · load``, a lower bound on every structure's
    price (the MIP's dual bound) and its load vector.  With ``seconds``, the
    best structure found in that time (its dual bound then proves nothing),
    or None when none was found.
    """
    options: dict[str, float] = {"mip_rel_gap": gap}
    if seconds is not None:
        options["time_limit"] = seconds
    res = milp(prices @ model.load, integrality=model.integrality,
               bounds=Bounds(model.lower, model.upper), constraints=model.constraints,
               options=options)
    if seconds is not None and res.status == 1:
        if res.x is None:
            return None
    else:
        assert res.status == 0, res.message
    x = np.round(res.x)
    chosen = [j for j in model.ops if x[j] > 0.5]
    _check_structure(model, chosen)
    column = model.load[:, chosen].sum(axis=1)
    return float(prices @ column), float(res.mip_dual_bound), column


def _rooted_columns(platform: Platform, model: _Pricing) -> list[np.ndarray]:
    """Warm-start columns: every value to a root by a cheapest path, the root
    combines them left to right, the result back by a cheapest-path tree.

    Built here from the platform alone (networkx shortest paths), one per
    processor reaching and reached by every participant; each is replayed by
    :func:`_check_structure`.  They only seed the master: the pricing decides.
    """
    index = {op: j for j, op in model.ops.items()}
    n = len(model.parts)
    graph = nx.DiGraph()
    for (u, v) in platform.graph.edges:
        graph.add_edge(u, v, weight=float(platform.cost(u, v)))
    columns = []
    for root in platform.processors:
        to_root = nx.shortest_path(graph, target=root, weight="weight")
        from_root = nx.shortest_path(graph, source=root, weight="weight")
        if not all(p in to_root and p in from_root for p in model.parts):
            continue
        chosen: set[int] = set()
        for k, owner in enumerate(model.parts):
            path = to_root[owner]
            chosen.update(index["send", a, b, k, k, k] for a, b in pairwise(path))
        chosen.update(index["task", root, root, 0, m - 1, m] for m in range(1, n))
        for d in model.parts:
            path = from_root[d]
            chosen.update(index["send", a, b, 0, 0, n - 1] for a, b in pairwise(path))
        _check_structure(model, sorted(chosen))
        columns.append(model.load[:, sorted(chosen)].sum(axis=1))
    return columns


def packing_optimum(platform: Platform, parts: tuple[str, ...], size: F = F(1),
                     seconds: float = 2.0) -> float:
    """The best packing of allreduce structures, by column generation.

    Seeded with :func:`_rooted_columns`; an improving round first gives the
    pricing ``seconds`` (any structure priced below 1 improves the master),
    and only when that finds none does it run the pricing to optimality,
    whose dual bound ends the generation.
    """
    model = _build_pricing(platform, parts, size)
    columns = _rooted_columns(platform, model)
    if not columns:
        first = _price(model, np.ones(model.n_rows), 1e-4)
        assert first is not None
        columns = [first[2]]
    for _ in range(500):
        a_ub = np.array(columns).T
        finite = np.isfinite(model.rhs)  # a row of infinite capacity binds nothing
        master = linprog(-np.ones(len(columns)), A_ub=a_ub[finite], b_ub=model.rhs[finite],
                         bounds=(0, None), method="highs")
        assert master.status == 0, master.message
        prices = np.zeros(model.n_rows)
        prices[finite] = np.maximum(-master.ineqlin.marginals, 0.0)
        # A time limit while improving columns come easily; no limit, and a
        # tight gap, to prove none is left.  A dual bound of at least 1, even
        # from a cut run, is that proof.
        found = _price(model, prices, 1e-4, seconds)
        if found is None or (found[0] >= 1 - 1e-9 and found[1] < 1 - 1e-7):
            found = _price(model, prices, 1e-8)
            assert found is not None
        price, lowest, column = found
        if price >= 1 - 1e-9:
            # No structure prices below 1 (the dual bound certifies it): optimal.
            assert lowest >= 1 - 1e-7
            return float(-master.fun)
        columns.append(column)
    raise AssertionError("column generation did not converge")


@cache
def _random_case(n: int, seed: int) -> tuple[float, PlanResult]:
    """Our packing optimum and the planner's result on ``random_platform(n, ..., seed)``.

    Cached: the two gap cases are also among the parametrised random cases.
    """
    platform = random_platform(n, min(2, n - 1), c=(1, 5), compute=(0, 3), seed=seed)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    result = steady_state(platform, op, max_events=3_000)
    assert result.status == "ok", result.message
    return packing_optimum(platform, op.participants, op.size), result


# -- the cases where the per-destination relaxation is not reachable ---------------------

@pytest.mark.parametrize(("seed", "optimum", "relaxation"), [
    (2, F(3, 20), F(13, 80)), (3, F(1, 6), F(3, 17))])
def test_gap_cases_match_the_planner(seed: int, optimum: F, relaxation: F) -> None:
    """Four nodes where the older per-destination relaxation (13/80, 3/17) is too high."""
    ours, result = _random_case(4, seed)
    assert ours == pytest.approx(float(optimum), rel=1e-7)
    assert ours < float(relaxation) - 1e-6
    assert isinstance(result.throughput_bound, F)
    assert result.message == ""  # exact
    assert ours == pytest.approx(float(result.throughput_bound), rel=1e-7)


# -- small random platforms ---------------------------------------------------------------

@pytest.mark.parametrize(("n", "seed"), [
    *((3, seed) for seed in range(6)),
    # four nodes take 3-7 s each here (the gap seeds 2 and 3 run above)
    *(pytest.param(4, seed, marks=pytest.mark.slow) for seed in (0, 1, 4, 5))])
def test_random_platforms_match_the_planner(n: int, seed: int) -> None:
    """Equal where the planner says exact; never above the planner's bound."""
    ours, result = _random_case(n, seed)
    bound = result.throughput_bound
    assert isinstance(bound, F)
    assert ours <= float(bound) + 1e-9
    if result.message == "":
        assert ours == pytest.approx(float(bound), rel=1e-7)


# -- a hand case ----------------------------------------------------------------------------

def test_two_nodes_slow_compute() -> None:
    """Reduce on one node (compute 2), send the result back, roots alternating: TP = 1.

    The butterfly (both nodes compute) would give 1/2 only.
    """
    platform = Platform.build({"A": 2, "B": 2}, [("A", "B", 1), ("B", "A", 1)])
    assert packing_optimum(platform, ("A", "B")) == pytest.approx(1.0, rel=1e-9)


# -- nine and ten participants: the planner's path from ROOTED_FROM ----------------------

def _line(n: int, compute: int) -> Platform:
    """``P0 - P1 - ... - P{n-1}``, both directions, links of cost 1."""
    links = [link for i in range(n - 1)
             for link in ((f"P{i}", f"P{i + 1}", 1), (f"P{i + 1}", f"P{i}", 1))]
    return Platform.build({f"P{i}": compute for i in range(n)}, links)


def _star(n: int, compute: int) -> Platform:
    """Hub ``P0`` linked both ways to ``P1..P{n-1}``, links of cost 1."""
    links = [link for i in range(1, n) for link in (("P0", f"P{i}", 1), (f"P{i}", "P0", 1))]
    return Platform.build({f"P{i}": compute for i in range(n)}, links)


_AT_SCALE = {
    "line9": lambda: _line(9, 20),
    "star9": lambda: _star(9, 20),
    "ring9": lambda: ring_platform(9, compute=20, port_model="bidirectional"),
    "random9": lambda: random_platform(9, 2, c=(1, 5), compute=(20, 30), seed=0),
    "random10": lambda: random_platform(10, 2, c=(1, 5), compute=(20, 30), seed=0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["line9", "star9", "ring9", "random9", "random10"])
def test_at_scale_matches_the_planner(name: str) -> None:
    """From nine participants, where the planner says exact: our optimum equals it.

    Only platforms whose compute times (20, or 20-30) make the CPUs bind are
    in reach of the pricing MIP here: there the task cut (``m - k`` tasks per
    held ``v[k,m]``) gives a dual bound of 1 within the first, time-limited
    pricing.  On the random ones the CPUs differ, so the optimum is not the
    uniform ``N / ((N - 1) w)`` (line, star and ring: 9/160).  CPU time of
    our check, one at a time on this machine: line9 3.0 s, star9 2.2 s,
    ring9 2.2 s, random9 4.2 s, random10 5.0 s (planner: 0.1-0.2 s each).
    Where communication binds (the same line with compute 1, or
    ``random_platform(9, 2, compute=(5, 10), seed=1)``) one exact pricing
    takes 70-75 s and the generation does not finish in minutes.  The
    planner returned a certified interval on none of the platforms tried at
    N = 9 (these five, ``random_platform(9, 2, c=(1, 5))`` with compute
    (0, 3) and (4, 8), seeds 0-7), so no case here checks an interval.
    """
    platform = _AT_SCALE[name]()
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    assert len(op.participants) >= 9
    result = steady_state(platform, op, max_events=3_000)
    assert result.status == "ok", result.message
    bound = result.throughput_bound
    assert isinstance(bound, F)
    # exact (the message would state a certified interval); achieved_throughput
    # may be lower: max_events can make the schedule's period a fixed one
    assert result.message == ""
    ours = packing_optimum(platform, op.participants, op.size)
    assert ours == pytest.approx(float(bound), rel=1e-6)
