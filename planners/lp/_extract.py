"""Reduction trees out of an SSR(G) solution: EXTRACT_TREES (RR-4872, section 4.4, Fig. 8).

:func:`extract_trees` decomposes an (exact) SSR(G) solution into weighted
reduction trees, after cancelling send cycles of any one partial result
(they carry nothing and could make FIND_TREE loop); :func:`tasks_unit` turns
a tree into the :class:`~portsim.planners.lp._periodic.Unit` the periodic
schedule lays out; :func:`repair_ssr` makes an exactly feasible primal from a
float solution (the certified lower bound of Lemma 2).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from portsim.planners.lp._exact import repair_grid
from portsim.planners.lp._periodic import ComputeTask, SendTask, Unit
from portsim.planners.lp._solve import (
    Deadline,
    LinearModel,
)
from portsim.planners.lp._ssr import (
    TP,
    Task,
)
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["extract_trees", "repair_ssr", "tasks_unit", "top_down_unit"]


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


def top_down_unit(weight: Fraction, tasks: list[Task]) -> Unit:
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


def repair_ssr(platform: Platform, operation: Operation, model: LinearModel, x: np.ndarray
            ) -> list[Fraction] | None:
    """An exactly feasible primal from float values (certified lower bound, Lemma 2).

    Trees are extracted from the float solution, their weights rounded down
    to multiples of ``1/10^7`` (finer below a throughput of 1,
    :func:`~portsim.planners.lp._exact.repair_grid`); a combination of
    reduction trees satisfies the conservation law (10) exactly, and scaling
    it so that no port or CPU exceeds 1 makes it feasible.  Amounts below
    ``10^-9`` of the throughput count as zero (below ``10^-9`` absolute, every
    amount of a platform whose times are 10^9 longer did).
    """
    tp = float(x[model.objective])
    zero = 1e-9 * min(tp, 1.0) if tp > 0 else 1e-9
    amount: dict[Task, Fraction] = {
        key: float(x[j]) for key, j in model.index.items()  # type: ignore[misc]
        if key != TP and x[j] > zero}
    trees = extract_trees(operation, amount, tp,  # type: ignore[arg-type]
                          eps=zero, strict=False)
    grid = repair_grid(tp, 7)
    size = operation.size
    values = [Fraction(0)] * model.n_variables
    load: dict[tuple[str, NodeId], Fraction] = defaultdict(Fraction)
    total = Fraction(0)
    for w_float, tasks in trees:
        w = Fraction(int(w_float * grid), grid)
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
