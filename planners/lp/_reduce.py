"""Series of reduces: SSR(G) (Legrand, Marchal and Robert, RR-4872, section 4.2).

Variables: ``send(i→j, v[k,m])`` (messages per time unit) and
``cons(i, T_{k,l,m})`` (tasks ``v[k,l] ⊕ v[l+1,m] -> v[k,m]`` per time unit).
Constraints: the one-port rows (2), (3) with (8); the CPU row
``α(i) = Σ cons · w(i) <= 1`` (7), (9); the conservation law (10) for every
partial result ``v[k,m]`` on every node, except ``v_i`` on its owner
(unlimited) and the final ``v[0,N-1]`` on the target, whose production is the
throughput (11).  On multi-port nodes the right-hand sides of (2) and (3)
and the per-link rows come from :class:`~portsim.planners.lp._capacity.PortCapacity`.

Two deliberate departures from the text, both making the bound tighter and
never looser than a real schedule allows:

- no variable sends ``v[0,N-1]`` out of the target (with the target exempt
  from conservation, a round trip target → j → target would be counted twice
  by (11));
- no variable sends ``v_i`` back into its owner (it would simply vanish).

:func:`build_reduce_model` builds this program whole (``N^3 n / 6`` task
variables: 176,608 columns at N = n = 30, where HiGHS's interior point takes
15-21 s); its solution is decomposed into weighted reduction trees by
EXTRACT_TREES (section 4.4, Fig. 8), after cancelling send cycles of any one
partial result (they carry nothing and could make FIND_TREE loop).

The planner solves the same program as a packing of reduction trees
(:func:`reduction_trees`): by Lemma 2 every SSR(G) solution is a weighted sum
of trees, so the optimum is the same.  The master program has one row per
port and per CPU; the pricing step is a dynamic program over intervals and
shortest paths (:func:`cheapest_tree`), which also gives the certificate:
priced exactly, it turns the master's exact dual into an exactly feasible
dual of the whole SSR(G) program.  At N = n = 30 this takes well under a
second, exact, and yields the weighted trees directly.

The operator is taken non-commutative (intervals in order).  A commutative
reduction could combine any subsets, which this program does not model: the
``lp`` planner reports such a reduction as unsupported rather than give a
bound that might be beaten.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from portsim.planners.base import PlanResult
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import NAME, LpOptions, finish, solve_exactly, time_limit_error
from portsim.planners.lp._exact import ExactSolution, recover
from portsim.planners.lp._periodic import ComputeTask, SendTask, Unit
from portsim.planners.lp._solve import (
    Deadline,
    LinearModel,
    TimeLimitReached,
    new_highs,
    solve_float,
)
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = ["SsrVariables", "add_ssr_variables", "build_reduce_model", "cheapest_tree",
           "cheapest_trees", "extract_trees", "plan_reduce", "receive_capacity",
           "reduction_trees", "refuse_reduction", "tasks_unit"]

TP = "TP"

_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)

Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)


def receive_capacity(platform: Platform, size: Fraction) -> dict[NodeId, Fraction]:
    """Messages of ``size`` each node can receive per time unit, all its in-links together."""
    g = platform.graph
    return {v: sum((1 / (size * g.edges[u, v]["c"]) for u in g.predecessors(v)), Fraction(0))
            for v in g.nodes}


@dataclass(frozen=True)
class SsrVariables:
    """The ``send`` and ``cons`` variables of SSR(G) and their rows, not yet added.

    Attributes
    ----------
    balance:
        ``(node, k, m) ->`` coefficients of in minus out of ``v[k,m]`` on
        ``node`` (conservation law (10)), in declaration order.
    out_port, in_port, cpu:
        Busy time per unit of each variable, per node (rows (2), (3), (7)).
    link_port:
        Busy time per unit of each variable on the links that need their
        own row (:attr:`PortCapacity.links <portsim.planners.lp._capacity.PortCapacity>`).
    """

    balance: dict[tuple[NodeId, int, int], dict[int, Fraction]]
    out_port: dict[NodeId, dict[int, Fraction]]
    in_port: dict[NodeId, dict[int, Fraction]]
    cpu: dict[NodeId, dict[int, Fraction]]
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]]


def add_ssr_variables(model: LinearModel, platform: Platform, operation: Operation, *,
                      no_final_from: Container[NodeId],
                      task_cap: Mapping[NodeId, Fraction],
                      final_at: Container[NodeId] | None = None) -> SsrVariables:
    """Declare SSR(G)'s ``("send", i, j, k, m)`` and ``("cons", i, k, l, m)`` variables.

    Never a send of ``v_k`` into its owner, nor of ``v[0,N-1]`` out of a node
    in ``no_final_from``; the final task ``T_{0,l,N-1}`` only on ``final_at``
    (every processor when ``None``).  A send is at most ``1 / (size · c)``;
    a task at most ``task_cap[node]``, and ``1 / w`` on a node of compute
    time ``w > 0``.  Shared by the reduce (SSR(G) itself) and the allreduce's
    reduce-then-broadcast program.
    """
    g = platform.graph
    parts = operation.participants
    n = len(parts)
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    intervals = [(k, m) for k in range(n) for m in range(k, n)]
    ssr = SsrVariables(defaultdict(dict), defaultdict(dict), defaultdict(dict), defaultdict(dict),
                       defaultdict(dict))
    own_row = PortCapacity.of(platform).own_row
    for u, v, data in g.edges(data=True):
        busy = size * data["c"]
        send_cap = 1 / busy
        for k, m in intervals:
            if (k, m) == (0, n - 1) and u in no_final_from:
                continue
            if k == m and owner.get(v) == k:
                continue
            j = model.variable(("send", u, v, k, m), upper=send_cap)
            ssr.out_port[u][j] = busy
            ssr.in_port[v][j] = busy
            if (u, v) in own_row:
                ssr.link_port[u, v][j] = busy
            ssr.balance[v, k, m][j] = _ONE
            ssr.balance[u, k, m][j] = _MINUS_ONE
    for node in platform.processors:
        w = platform.compute_time(node)
        cap = task_cap[node] if w == 0 else min(task_cap[node], 1 / w)
        for k in range(n):
            for m in range(k + 1, n):
                if (k, m) == (0, n - 1) and final_at is not None and node not in final_at:
                    continue
                for l_ in range(k, m):
                    j = model.variable(("cons", node, k, l_, m), upper=cap)
                    if w > 0:
                        ssr.cpu[node][j] = w
                    # the three partial results are distinct: one coefficient each
                    ssr.balance[node, k, m][j] = _ONE
                    ssr.balance[node, k, l_][j] = _MINUS_ONE
                    ssr.balance[node, l_ + 1, m][j] = _MINUS_ONE
    return ssr


def build_reduce_model(platform: Platform, operation: Operation) -> LinearModel:
    """SSR(G) with exact coefficients (see the module notes).

    Variable keys: ``("send", i, j, k, m)``, ``("cons", i, k, l, m)`` and ``"TP"``.
    """
    g = platform.graph
    parts = operation.participants
    n = len(parts)
    target = operation.target
    assert target is not None
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    model = LinearModel()
    receive_cap = receive_capacity(platform, size)
    tp = model.variable(TP, upper=4 * receive_cap[target] + 1)
    model.objective = tp
    ssr = add_ssr_variables(model, platform, operation, no_final_from={target},
                            task_cap={v: 3 * receive_cap[v] for v in g.nodes})
    balance, out_port, in_port, cpu = ssr.balance, ssr.out_port, ssr.in_port, ssr.cpu
    for (node, k, m), coeffs in balance.items():
        if k == m and owner.get(node) == k:
            continue  # v_k on its owner: unlimited
        if node == target and (k, m) == (0, n - 1):
            row = dict(coeffs)
            row[tp] = Fraction(-1)
            model.add(row, "==", Fraction(0), f"throughput (11) at {node}")
        else:
            model.add(coeffs, "==", Fraction(0), f"conservation (10) of v[{k},{m}] at {node}")
    if (target, 0, n - 1) not in balance:
        model.add({tp: Fraction(1)}, "==", Fraction(0), "no way to build the result")
    capacity = PortCapacity.of(platform)
    for node, coeffs in out_port.items():
        model.add(coeffs, "<=", capacity.send[node], f"one-port send (2) of {node}")
    for node, coeffs in in_port.items():
        model.add(coeffs, "<=", capacity.receive[node], f"one-port receive (3) of {node}")
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", Fraction(1), f"computation (7) of {node}")
    capacity.add_link_rows(model, ssr.link_port)
    return model


def _cancel_send_cycles(amount: dict[Task, Fraction], eps: float = 0) -> None:
    """Remove circulations of one partial result over links (they carry nothing)."""
    by_item: dict[tuple[int, int], dict[NodeId, list[NodeId]]] = defaultdict(
        lambda: defaultdict(list))
    for task, a in amount.items():
        if task[0] == "send" and a > eps:
            by_item[task[3], task[4]][task[1]].append(task[2])
    for (k, m), succ in by_item.items():
        while True:
            cycle = _find_cycle(succ, amount, k, m, eps)
            if cycle is None:
                break
            keys = [("send", u, v, k, m) for u, v in cycle]
            w = min(amount[t] for t in keys)
            for t in keys:
                amount[t] -= w


def _find_cycle(succ: dict[NodeId, list[NodeId]], amount: dict[Task, Fraction],
                k: int, m: int, eps: float = 0) -> list[tuple[NodeId, NodeId]] | None:
    color: dict[NodeId, int] = {}
    for root in list(succ):
        if root in color:
            continue
        stack: list[tuple[NodeId, int]] = [(root, 0)]
        path: list[NodeId] = []
        while stack:
            u, i = stack.pop()
            if i == 0:
                color[u] = 1
                path.append(u)
            nexts = [v for v in succ.get(u, []) if amount.get(("send", u, v, k, m), 0) > eps]
            if i < len(nexts):
                stack.append((u, i + 1))
                v = nexts[i]
                if color.get(v) == 1:
                    cyc = [*path[path.index(v):], v]
                    return list(itertools.pairwise(cyc))
                if v not in color:
                    stack.append((v, 0))
            else:
                color[u] = 2
                path.pop()
    return None


def extract_trees(operation: Operation, amount: dict[Task, Fraction], tp: Fraction, *,
                  eps: float = 0, strict: bool = True, deadline: Deadline | None = None
                  ) -> list[tuple[Fraction, list[Task]]]:
    """EXTRACT_TREES (RR-4872, section 4.4, Fig. 8) on per-time-unit amounts.

    Parameters
    ----------
    operation:
        The reduce (participants, target).
    amount:
        ``send``/``cons`` task -> amount per time unit (modified in place).
    tp:
        The throughput to extract.
    eps:
        Amounts at most ``eps`` count as zero (float amounts, for the repair).
    strict:
        Raise when FIND_TREE gets stuck; else return the trees found so far.
    deadline:
        The planner call's deadline, checked before every tree.

    Returns
    -------
    list of (weight, tasks)
        Reduction trees whose weights sum to ``tp``.

    Raises
    ------
    TimeLimitReached
        When ``deadline`` passes (phase ``"tree extraction"``).
    """
    parts = operation.participants
    n = len(parts)
    target = operation.target
    assert target is not None
    _cancel_send_cycles(amount, eps)
    cons_at: dict[tuple[NodeId, int, int], list[Task]] = defaultdict(list)
    send_into: dict[tuple[NodeId, int, int], list[Task]] = defaultdict(list)
    for task in amount:
        if task[0] == "cons":
            cons_at[task[1], task[2], task[4]].append(task)
        else:
            send_into[task[2], task[3], task[4]].append(task)
    trees: list[tuple[Fraction, list[Task]]] = []
    extracted = Fraction(0)
    while extracted < tp - eps:
        if deadline is not None:
            deadline.check("tree extraction")
        inputs = [(target, 0, n - 1)]
        tasks: list[Task] = []
        while inputs:
            node, k, m = inputs.pop()
            if k == m and parts[k] == node:
                continue
            found = next((t for t in cons_at[node, k, m] if amount[t] > eps), None)
            if found is not None:
                l_ = found[3]
                inputs.extend([(node, k, l_), (node, l_ + 1, m)])
            else:
                found = next((t for t in send_into[node, k, m] if amount[t] > eps), None)
                if found is None:
                    if not strict:
                        return trees
                    raise AssertionError(f"FIND_TREE: nothing produces v[{k},{m}] on {node}")
                inputs.append((found[1], k, m))
            tasks.append(found)
        w = min(min(amount[t] for t in tasks), tp - extracted)
        for t in tasks:
            amount[t] -= w
        trees.append((w, tasks))
        extracted += w
    return trees


def _unit(weight: Fraction, tasks: list[Task]) -> Unit:
    """A reduction tree as a :class:`Unit` (``tasks`` found top-down: consumers first)."""
    return tasks_unit(weight, reversed(tasks))


def tasks_unit(weight: Fraction, tasks: Iterable[Task]) -> Unit:
    """Reduction tasks and sends, producers first, as a :class:`Unit`.

    Each task is one deeper than the producers of its inputs (an item a
    node holds from the start has depth -1), so the lags of
    :mod:`portsim.planners.lp._periodic` never use an item before it exists.
    """
    made: dict[tuple[NodeId, int, int], int] = {}  # (node, k, m) -> depth of its producer
    sends: list[SendTask] = []
    computes: list[ComputeTask] = []
    for task in tasks:
        if task[0] == "send":
            _, u, v, k, m = task
            depth = made.get((u, k, m), -1) + 1
            made[v, k, m] = depth
            sends.append(SendTask(u, v, Item.interval(k, m), depth))
        else:
            _, node, k, l_, m = task
            depth = max(made.get((node, k, l_), -1), made.get((node, l_ + 1, m), -1)) + 1
            made[node, k, m] = depth
            computes.append(ComputeTask(node, (Item.interval(k, l_), Item.interval(l_ + 1, m)),
                                        Item.interval(k, m), depth))
    return Unit(weight, tuple(sends), tuple(computes))


def _repair(platform: Platform, operation: Operation, model: LinearModel, x: np.ndarray
            ) -> list[Fraction] | None:
    """An exactly feasible primal from float values (certified lower bound, Lemma 2).

    Trees are extracted from the float solution, their weights rounded down
    to multiples of ``1/10^7``; a combination of reduction trees satisfies the
    conservation law (10) exactly, and scaling it so that no port or CPU
    exceeds 1 makes it feasible.
    """
    amount: dict[Task, Fraction] = {
        key: float(x[j]) for key, j in model.index.items()  # type: ignore[misc]
        if key != TP and x[j] > 1e-9}
    trees = extract_trees(operation, amount, float(x[model.objective]),  # type: ignore[arg-type]
                          eps=1e-9, strict=False)
    size = operation.size
    values = [Fraction(0)] * model.n_variables
    load: dict[tuple[str, NodeId], Fraction] = defaultdict(Fraction)
    total = Fraction(0)
    for w_float, tasks in trees:
        w = Fraction(int(w_float * 10**7), 10**7)
        if w <= 0:
            continue
        total += w
        for task in tasks:
            values[model.index[task]] += w
            if task[0] == "send":
                busy = w * size * platform.cost(task[1], task[2])
                load["out", task[1]] += busy
                load["in", task[2]] += busy
            else:
                load["cpu", task[1]] += w * platform.compute_time(task[1])
    if total <= 0:
        return None
    worst = max([*load.values(), Fraction(1)])
    values = [v / worst for v in values]
    values[model.index[TP]] = total / worst
    return values


# -- column generation over reduction trees ----------------------------------------------

MAX_ROUNDS = 5_000
"""Cap on the float pricing rounds of the column generation."""

EXACT_ROUNDS = 50
"""Cap on the exact rounds (exact master, exact pricing); past it the answer
is the certified interval of the last one."""

COLUMNS_PER_ROUND = 3
"""Trees added per pricing round at most (the cheapest, then other last tasks)."""

SMOOTHING = 0.8
"""Wentges dual smoothing: price at ``α·center + (1-α)·y`` (the center is the
dual of the best bound so far), then at the master's ``y`` if that tree does
not improve the master; 0 disables it."""

_PRICING_TOLERANCE = 1e-9
"""A tree enters the master when its float price is below ``1 - this``."""


@dataclass
class _TreeSpace:
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
           port_sum: frozenset[NodeId] = frozenset()) -> _TreeSpace:
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


def cheapest_tree(space: _TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray, *,
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


def cheapest_trees(space: _TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray,
                   count: int, below: float | int = math.inf, *,
                   deadline: Deadline | None = None) -> list[tuple[float | int, list[Task]]]:
    """Up to ``count`` cheap reduction trees, the cheapest first.

    The cheapest tree, then the cheapest ones with another last task (the
    node computing ``v[0,N-1]`` and its split point), each completed with the
    cheapest subtrees: several columns from one dynamic program.  Only trees
    priced below ``below`` are returned (the cheapest is always tried).
    """
    parts = len(space.owners)
    tables = price_tables(space, link_price, cpu_price, deadline=deadline)
    target = space.target
    last = parts - 1
    cheapest = tables.best[target, 0, last]
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


def price_tables(space: _TreeSpace, link_price: np.ndarray, cpu_price: np.ndarray, *,
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

    Returns
    -------
    PriceTables
        All-pairs shortest-path prices and next hops, and the tables above.
    """
    n = len(space.nodes)
    parts = len(space.owners)
    dist, nxt = _all_pairs(n, space.links, link_price)
    dtype = link_price.dtype
    by_start = np.empty((parts, parts, n), dtype=dtype)   # [k, d, j]: v[k,k+d] on j
    by_end = np.empty((parts, parts, n), dtype=dtype)     # [m, d, j]: v[m-d,m] on j
    comp = np.empty((parts, parts, n), dtype=dtype)       # [k, m, i]: v[k,m] made on i
    for k, o in enumerate(space.owners):
        by_start[k, 0] = by_end[k, 0] = dist[o, :]
    cpu = cpu_price[None, :]
    for length in range(1, parts):
        if deadline is not None:
            deadline.check("pricing (dynamic program)")
        count = parts - length
        ks = np.arange(count)
        pair = by_start[:count, :length] + by_end[length:, length - 1::-1]   # (k, split, i)
        here = pair.min(axis=1) + cpu                                        # (k, i)
        comp[ks, ks + length] = here
        held = (here[:, :, None] + dist[None, :, :]).min(axis=1)             # (k, j)
        by_start[ks, length] = held
        by_end[ks + length, length] = held
    best = np.empty((n, parts, parts), dtype=dtype)
    for d in range(parts):
        ks = np.arange(parts - d)
        best[:, ks, ks + d] = by_start[ks, d].T
    return PriceTables(dist, nxt, best, comp, by_start, by_end)


def _backtrack(space: _TreeSpace, tables: PriceTables, root_maker: int,
               root_split: int) -> list[Task]:
    """The tree of the dynamic program's choices, recomputed along the way.

    ``root_maker`` and ``root_split`` (``-1``: the cheapest) force the node
    computing ``v[0,N-1]`` and its split point.
    """
    dist, nxt = tables.dist, tables.nxt
    by_start, by_end, comp = tables.by_start, tables.by_end, tables.comp
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
            i = int(np.argmin(comp[k, m] + dist[:, j]))
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


def _float_price(space: _TreeSpace, tasks: list[Task], y: np.ndarray) -> float:
    """The price of one tree under the float dual ``y``."""
    rows, loads = space.float_loads(tasks)
    return float(loads @ y[rows])


def _master(space: _TreeSpace, columns: list[list[Task]]) -> LinearModel:
    """The tree master program: ``max TP = Σ_T λ_T`` under the port and CPU rows."""
    model = LinearModel()
    tp = model.variable(TP, upper=Fraction(10**9))
    model.objective = tp
    rows: list[dict[int, Fraction]] = [{} for _ in range(space.n_rows)]
    total: dict[int, Fraction] = {tp: Fraction(1)}
    for c, tasks in enumerate(columns):
        loads = space.loads(tasks)
        j = model.variable(("tree", c), upper=1 / max(loads.values()))
        total[j] = Fraction(-1)
        for r, a in loads.items():
            rows[r][j] = a
    model.add(total, "==", Fraction(0), "the trees carry TP")
    for r, coeffs in enumerate(rows):
        model.add(coeffs, "<=", space.rhs[r], f"row {r}")
    return model


class _FloatMaster:
    """The master program kept in one highspy object, columns added as found."""

    def __init__(self, space: _TreeSpace) -> None:
        import highspy

        self._hs = highspy
        self.h = new_highs()
        h = self.h
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("presolve", "off")
        inf = highspy.kHighsInf
        h.addRows(space.n_rows, np.full(space.n_rows, -inf),
                  np.array([float(b) for b in space.rhs]),
                  0, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.space = space

    def add(self, tasks: list[Task]) -> None:
        idx, val = self.space.float_loads(tasks)
        self.h.addCol(-1.0, 0.0, self._hs.kHighsInf, len(idx), idx, val)

    def solve(self, time_limit: float | None) -> tuple[str, float, np.ndarray]:
        """Status, optimum and the port/CPU dual (maximisation form, ``>= 0``)."""
        if time_limit is not None:  # HiGHS's clock runs on across the runs of one object
            self.h.setOptionValue("time_limit",
                                  self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        status = self.h.getModelStatus()
        ms = self._hs.HighsModelStatus
        if status == ms.kTimeLimit:
            return "time_limit", 0.0, np.zeros(0)
        if status != ms.kOptimal:
            return self.h.modelStatusToString(status), 0.0, np.zeros(0)
        y = -np.asarray(self.h.getSolution().row_dual, dtype=float)
        return "optimal", -float(self.h.getInfo().objective_function_value), np.maximum(y, 0)

    def used(self) -> list[int]:
        """Columns with a positive value, or basic, in the last solution."""
        x = self.h.getSolution().col_value
        basis = self.h.getBasis()
        basic = self._hs.HighsBasisStatus.kBasic
        return [c for c, (v, st) in enumerate(zip(x, basis.col_status, strict=True))
                if v > 0 or st == basic]


def reduction_trees(platform: Platform, operation: Operation, *,
                    deadline: Deadline | None = None, method: str = "auto",
                    stats: dict[str, float] | None = None,
                    port_sum: frozenset[NodeId] = frozenset()
                    ) -> tuple[ExactSolution, list[tuple[Fraction, list[Task]]], int] | str:
    """SSR(G) solved as a packing of reduction trees, by column generation.

    The master program maximises ``Σ_T λ_T`` over weighted reduction trees
    under the send, receive and CPU rows of SSR(G) (2), (3), (7); the
    pricing step finds the tree of least price under the master's dual by
    :func:`cheapest_tree`.  Floats drive the generation; then the master is
    solved exactly (:func:`portsim.planners.lp._exact.recover`) and priced exactly.

    Parameters
    ----------
    platform, operation:
        The platform and the (resolved, non-commutative) reduce.
    deadline:
        Checked between rounds and during the exact recovery
        (:class:`~portsim.planners.lp._solve.TimeLimitReached` names the phase).
    method:
        HiGHS method for the exact solve of the master (``auto``: dual simplex).
    stats:
        When given, filled with the seconds spent in ``build``, ``solve``
        (float column generation) and ``exact`` (exact master and exact
        pricing), and the counts ``rounds``, ``exact_rounds`` and ``columns``.
    port_sum:
        Nodes whose send and receive rows are one ``Σ in + Σ out <= 1`` row
        (the naive port-sum program of ``lp-naive``; not a valid bound for
        unidirectional nodes in general, see Beaumont and Marchal, section
        2.2.2).

    Returns
    -------
    (exact, trees, rounds) or str
        The exact master solution, whose ``upper`` is certified for SSR(G),
        the weighted trees (weights sum to ``exact.lower``) and the number of
        pricing rounds; or the phase during which ``deadline`` passed.

    Notes
    -----
    Equal to SSR(G): a tree is a feasible SSR(G) point and every SSR(G) point
    is a weighted sum of trees after cancelling send cycles (Lemma 2 and
    Theorem 1 of RR-4872, section 4.4), which only lowers the loads.  The
    certificate: given the master's exact dual ``y >= 0`` on the port and CPU
    rows and ``W``, the exact least tree price, let ``π(j, v[k,m])`` be the
    least price of holding ``v[k,m]`` on ``j`` (0 for ``v_k`` on its owner).
    Then ``π / W``, ``y / W`` satisfy every dual row of SSR(G): a send
    ``(u→v, v[k,m])`` gives ``π(v) <= π(u) + price(u→v)`` (shortest paths),
    a task ``T_{k,l,m}`` on ``i`` gives ``π(i, v[k,m]) <= π(i, v[k,l]) +
    π(i, v[l+1,m]) + w(i) y_cpu(i)``, and the throughput column gives
    ``π(target, v[0,N-1]) / W = 1``.  Weak duality bounds SSR(G) by
    ``Σ rhs·y / min(1, W)`` (``rhs`` the rows' capacities, 1 when all
    bidirectional; link rows priced into their links), which equals the
    master's optimum once ``W >= 1``.
    Sends of ``v_k`` into its owner and of the result out of the target never
    occur in these trees (shortest paths are simple), as in
    :func:`build_reduce_model`.
    """
    clock = deadline if deadline is not None else Deadline()
    started = time.perf_counter()
    space = _TreeSpace.of(platform, operation, port_sum)
    built = time.perf_counter()
    columns: list[list[Task]] = []
    seen: set[tuple[Task, ...]] = set()

    def add(tasks: list[Task] | None) -> bool:
        if tasks is None or tuple(tasks) in seen:
            return False
        seen.add(tuple(tasks))
        columns.append(tasks)
        master.add(tasks)
        return True

    try:
        master = _FloatMaster(space)
    except ImportError:  # pragma: no cover - highspy is a dependency
        return "highspy is not installed"
    rhs_float = np.array([float(b) for b in space.rhs])
    link, cpu, _ = space.prices([Fraction(1)] * space.n_rows, exact=False)
    price, first = cheapest_tree(space, link, cpu, deadline=clock)
    if first is None:
        return "no reduction tree reaches the target"
    add(first)
    rounds = 0
    center: np.ndarray | None = None   # the dual of the best bound so far (smoothing)
    best_bound = math.inf
    while rounds < MAX_ROUNDS:
        rounds += 1
        clock.check("column generation (master program)")
        status, value, y = master.solve(clock.remaining())
        if status == "time_limit":
            raise TimeLimitReached("column generation (master program)")
        if status != "optimal":
            return f"HiGHS failed on the reduce tree master program: {status}"
        clock.check("column generation (pricing)")
        entered = False
        for alpha in ((SMOOTHING, 0.0) if center is not None and SMOOTHING else (0.0,)):
            probe = y if alpha == 0.0 or center is None else alpha * center + (1 - alpha) * y
            link, cpu, _ = space.prices(probe, exact=False)
            found = cheapest_trees(space, link, cpu, COLUMNS_PER_ROUND, deadline=clock)
            if not found:
                return "no reduction tree reaches the target"
            if found[0][0] > 0:  # any y >= 0 bounds SSR(G) by Σ rhs·y / (least tree price)
                bound = float(np.dot(rhs_float, probe)) / float(found[0][0])
                if bound < best_bound:
                    best_bound, center = bound, probe
            improving = [t for t in (t for _, t in found) if _float_price(space, t, y)
                         < 1 - _PRICING_TOLERANCE]
            if improving and sum(add(t) for t in improving):
                entered = True
                break
        if center is None:
            center = y
        if not entered or value >= best_bound * (1 - _PRICING_TOLERANCE):
            break
    # Exact phase: the master over the trees in use solved exactly, its dual
    # priced exactly; a tree priced below 1 joins and the master is solved again.
    active = [columns[c] for c in master.used()] or list(columns)
    generated = time.perf_counter()
    exact_rounds = 0
    while True:
        exact_rounds += 1
        clock.check("exact recovery (tree master)")
        model = _master(space, active)
        options_method = "highs-ds" if method == "auto" else method
        sol = solve_float(model, method=options_method, time_limit=clock.remaining())
        if sol.status == "time_limit":
            raise TimeLimitReached("exact recovery (tree master)")
        if sol.status != "optimal":
            return f"HiGHS failed on the reduce tree master program: {sol.message}"
        exact = recover(model, sol, deadline=clock)
        if exact is None:
            return "no exactly feasible solution of the reduce tree master program"
        clock.check("exact pricing (certificate)")
        y_rows = exact.y_ub
        link, cpu, q = space.prices(y_rows, exact=True)
        price, tasks = cheapest_tree(space, link, cpu, deadline=clock)
        if tasks is None:
            return "no reduction tree reaches the target"
        cheapest = Fraction(int(price), q)
        dual_value = space.dual_value(y_rows)
        if cheapest >= 1:
            upper = dual_value
        elif cheapest > 0:
            upper = dual_value / cheapest
        else:
            upper = None
        if (upper is not None and upper <= exact.lower) or exact_rounds >= EXACT_ROUNDS \
                or tasks in active:
            break
        active.append(tasks)
    if upper is None:
        return "the exact pricing found a tree of price 0: no certified bound"
    trees = [(exact.values[model.index["tree", c]], tasks)
             for c, tasks in enumerate(active) if exact.values[model.index["tree", c]] > 0]
    upper = max(upper, exact.lower)
    method_name = exact.method if upper == exact.lower else "interval"
    certified = ExactSolution(exact.values, exact.lower, upper, exact.y_ub, exact.y_eq,
                              method_name, exact.notes)
    if stats is not None:
        stats.update(build=built - started, solve=generated - built,
                     exact=time.perf_counter() - generated, rounds=rounds,
                     exact_rounds=exact_rounds, columns=len(columns))
    return certified, trees, rounds


def refuse_reduction(operation: Operation) -> PlanResult | None:
    """Why ``lp`` cannot plan this reduce or allreduce, or ``None`` when it can.

    SSR(G) orders operands, so a commutative operator (which could combine
    any subsets, beating the bound) is ``unsupported``; one participant needs
    no communication (unbounded throughput, an ``error``).
    """
    allreduce = operation.kind is OperationKind.ALLREDUCE
    if operation.commutative:
        what = "all-reduces" if allreduce else "reductions"
        return PlanResult.unsupported(
            NAME, f"lp models non-commutative {what} only (SSR(G) combines intervals "
                  "v[k,l] and v[l+1,m]); a commutative operator could beat that bound")
    if len(operation.participants) < 2:
        what = "an allreduce" if allreduce else "a reduce"
        return PlanResult.error(NAME, f"{what} of one participant needs no communication: "
                                      "the throughput is unbounded")
    return None


def plan_reduce(platform: Platform, operation: Operation, options: LpOptions, *,
                port_sum: frozenset[NodeId] = frozenset()) -> PlanResult:
    """Optimal steady-state series of non-commutative reduces (SSR(G)).

    SSR(G) is solved as a packing of reduction trees by column generation
    (:func:`reduction_trees`; the same optimum as :func:`build_reduce_model`,
    certified by an exact pricing), which gives the weighted trees of
    EXTRACT_TREES directly.  ``time_limit`` covers the column generation,
    the exact recovery and the certificate (the periodic schedule is built
    only if time remains); ``method`` is HiGHS's method for the exact solve
    of the master.  Should the column generation fail (HiGHS error on the
    master), the whole SSR(G) program is solved instead.

    Notes
    -----
    On the toy platform of Fig. 6 (three nodes, links of cost 1, compute 1
    except 1/2 on the target) the optimum is TP = 1 (section 4.3).
    """
    refused = refuse_reduction(operation)
    if refused is not None:
        return refused
    deadline = options.clock()
    try:
        found = reduction_trees(platform, operation, deadline=deadline, method=options.method,
                                port_sum=port_sum)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase} of the reduce (SSR) trees")
    if isinstance(found, str) and port_sum:
        return PlanResult.error(NAME, f"naive port-sum reduce program: {found}")
    if isinstance(found, str):
        return _plan_reduce_flat(platform, operation, options, deadline, found)
    exact, trees, rounds = found
    if deadline.expired:
        return time_limit_error(options, "the reduce (SSR) trees (before the periodic "
                                         "schedule)")
    groups = [[_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options,
                  notes=[f"SSR(G) by column generation over reduction trees: {rounds} "
                         f"pricing rounds, {len(trees)} weighted trees"])


def _plan_reduce_flat(platform: Platform, operation: Operation, options: LpOptions,
                      deadline: Deadline, why: str) -> PlanResult:
    """The whole SSR(G) program, when the column generation gave no answer."""
    if deadline.expired:
        return time_limit_error(options, f"the reduce (SSR) trees ({why})")
    model = build_reduce_model(platform, operation)

    def repair(x: np.ndarray) -> list[Fraction] | None:
        return _repair(platform, operation, model, x)

    exact = solve_exactly(model, options, what="reduce (SSR)", repair=repair,
                          deadline=deadline)
    if isinstance(exact, PlanResult):
        return exact
    amount = {key: exact.values[j] for key, j in model.index.items()
              if key != TP and exact.values[j] > 0}
    try:
        trees = extract_trees(operation, amount, exact.lower,  # type: ignore[arg-type]
                              deadline=deadline)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase} of the reduce (SSR) program")
    if deadline.expired:
        return time_limit_error(options, "tree extraction (before the periodic schedule)")
    groups = [[_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options,
                  notes=[f"whole SSR(G) program (column generation: {why})"])
