"""Series of reduces: SSR(G) (Legrand, Marchal and Robert, RR-4872, section 4.2).

Variables: ``send(i→j, v[k,m])`` (messages per time unit) and
``cons(i, T_{k,l,m})`` (tasks ``v[k,l] ⊕ v[l+1,m] -> v[k,m]`` per time unit).
Constraints: the one-port rows (2), (3) with (8); the CPU row
``α(i) = Σ cons · w(i) <= 1`` (7), (9); the conservation law (10) for every
partial result ``v[k,m]`` on every node, except ``v_i`` on its owner
(unlimited) and the final ``v[0,N-1]`` on the target, whose production is the
throughput (11).

Two deliberate departures from the text, both making the bound tighter and
never looser than a real schedule allows:

- no variable sends ``v[0,N-1]`` out of the target (with the target exempt
  from conservation, a round trip target → j → target would be counted twice
  by (11));
- no variable sends ``v_i`` back into its owner (it would simply vanish).

The solution is decomposed into weighted reduction trees by EXTRACT_TREES
(section 4.4, Fig. 8), after cancelling send cycles of any one partial
result (they carry nothing and could make FIND_TREE loop).

The operator is taken non-commutative (intervals in order).  A commutative
reduction could combine any subsets, which this program does not model: the
``lp`` planner reports such a reduction as unsupported rather than give a
bound that might be beaten.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction

import numpy as np

from planners.base import PlanResult
from planners.lp._driver import NAME, LpOptions, finish, solve_exactly
from planners.lp._periodic import ComputeTask, SendTask, Unit
from planners.lp._solve import LinearModel
from simulator.items import Item
from simulator.operations import Operation
from simulator.platform import NodeId, Platform

__all__ = ["build_reduce_model", "extract_trees", "plan_reduce"]

TP = "TP"

_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)

Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)


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
    intervals = [(k, m) for k in range(n) for m in range(k, n)]
    model = LinearModel()
    receive_cap = {v: sum((1 / (size * g.edges[u, v]["c"]) for u in g.predecessors(v)),
                          Fraction(0)) for v in g.nodes}
    tp = model.variable(TP, upper=4 * receive_cap[target] + 1)
    model.objective = tp
    # balance[(node, k, m)] = coefficients of in - out (== 0, or == TP for the final)
    balance: dict[tuple[NodeId, int, int], dict[int, Fraction]] = defaultdict(dict)
    out_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    in_port: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    cpu: dict[NodeId, dict[int, Fraction]] = defaultdict(dict)
    for u, v, data in g.edges(data=True):
        busy = size * data["c"]
        send_cap = 1 / busy
        for k, m in intervals:
            if u == target and (k, m) == (0, n - 1):
                continue
            if k == m and owner.get(v) == k:
                continue
            j = model.variable(("send", u, v, k, m), upper=send_cap)
            out_port[u][j] = busy
            in_port[v][j] = busy
            balance[v, k, m][j] = _ONE
            balance[u, k, m][j] = _MINUS_ONE
    for node in platform.processors:
        w = platform.compute_time(node)
        cap = 3 * receive_cap[node]
        if w > 0:
            cap = min(cap, 1 / w)
        for k in range(n):
            for m in range(k + 1, n):
                for l_ in range(k, m):
                    j = model.variable(("cons", node, k, l_, m), upper=cap)
                    if w > 0:
                        cpu[node][j] = w
                    # the three partial results are distinct: one coefficient each
                    balance[node, k, m][j] = _ONE
                    balance[node, k, l_][j] = _MINUS_ONE
                    balance[node, l_ + 1, m][j] = _MINUS_ONE
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
    for node, coeffs in out_port.items():
        model.add(coeffs, "<=", Fraction(1), f"one-port send (2) of {node}")
    for node, coeffs in in_port.items():
        model.add(coeffs, "<=", Fraction(1), f"one-port receive (3) of {node}")
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", Fraction(1), f"computation (7) of {node}")
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
                  eps: float = 0, strict: bool = True) -> list[tuple[Fraction, list[Task]]]:
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

    Returns
    -------
    list of (weight, tasks)
        Reduction trees whose weights sum to ``tp``.
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
    """A reduction tree as a :class:`Unit`: each task at depth 1 + its inputs' depth."""
    # tasks were found top-down; producers come after consumers in the list.
    made: dict[tuple[NodeId, int, int], int] = {}  # (node, k, m) -> depth of its producer
    sends: list[SendTask] = []
    computes: list[ComputeTask] = []
    for task in reversed(tasks):
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


def plan_reduce(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Optimal steady-state series of non-commutative reduces (SSR(G)).

    Notes
    -----
    On the toy platform of Fig. 6 (three nodes, links of cost 1, compute 1
    except 1/2 on the target) the optimum is TP = 1 (section 4.3).
    """
    if operation.commutative:
        return PlanResult.unsupported(
            NAME, "lp models non-commutative reductions only (SSR(G) combines intervals "
                  "v[k,l] and v[l+1,m]); a commutative operator could beat that bound")
    if len(operation.participants) < 2:
        return PlanResult.error(NAME, "a reduce of one participant needs no communication: "
                                      "the throughput is unbounded")
    model = build_reduce_model(platform, operation)

    def repair(x: np.ndarray) -> list[Fraction] | None:
        return _repair(platform, operation, model, x)

    exact = solve_exactly(model, options, what="reduce (SSR)", repair=repair)
    if isinstance(exact, PlanResult):
        return exact
    amount = {key: exact.values[j] for key, j in model.index.items()
              if key != TP and exact.values[j] > 0}
    trees = extract_trees(operation, amount, exact.lower)  # type: ignore[arg-type]
    groups = [[_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options)
