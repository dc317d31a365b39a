"""The allreduce upper bound by per-destination column generation (:func:`allreduce_trees`).

The upper-bound program of :mod:`portsim.planners.lp._allreduce_bound` holds
one SSR(G) copy per destination ``d`` (Legrand, Marchal and Robert,
RR-4872, section 4.2) over shared operations: about ``N^5`` variables.  This
module solves the same program as a packing of reduction trees, one family
per destination, over the same shared operations.

**Master program.**  Columns: ``TP``; the actual operations ``x_op`` (a
send of ``v[k,m]`` over a link, or a task ``T_{k,l,m}`` on a processor of
compute time ``w > 0``), busy on their ports, links and CPU; per destination
``d``, the weight ``λ_t`` of each reduction tree ``t`` delivering
``v[0,N-1]`` to ``d``.  Rows: ``TP - Σ_{t of d} λ_t = 0`` per ``d`` (dual
``π_d``); the port, link and CPU rows of the whole program (dual ``y >= 0``);
and the coupling rows ``Σ_{t of d, op ∈ t} λ_t - x_op <= 0`` (dual
``μ_{d,op} >= 0``), one per destination and operation *that one of d's
trees uses* (rows are generated with the columns).  Tasks on a processor of
compute time 0 have no row (as in the whole program: no CPU row to share).

*Same optimum as the whole program without its gossip rows* (those of
:mod:`portsim.planners.lp._gossip` tie the destinations together: not a
per-destination row, so the tree packing leaves them out).  A master point
gives ``send_d(op) = cons_d(op) = Σ_{t of d, op ∈ t} λ_t``: each tree is a feasible SSR(G) point
for target ``d`` carrying one result, and never sends ``v_k`` into its owner
nor the result out of ``d`` (its paths are simple), so these are feasible
copies at rate ``TP`` with ``send_d <= x`` and ``cons_d <= y`` (``y`` is
``x`` on tasks; its cap ``min(TP cap, 1/w)`` holds after lowering it to
``max_d cons_d <= TP``, which only relaxes the CPU rows; the sends' caps
``1/(size·c)`` are implied by the port and link rows of
:class:`~portsim.planners.lp._capacity.PortCapacity`).  Conversely, each
destination's copy of a whole-program optimum is an SSR(G) flow to ``d``;
after cancelling send cycles (which only lowers it) it is a weighted sum of
reduction trees of total weight ``TP`` (Lemma 2 and Theorem 1 of RR-4872,
section 4.4, EXTRACT_TREES), each operation used at most once per tree (an
interval is made or sent once per tree), so ``Σ_{t ∋ op} λ_t <= send_d(op)
<= x_op`` for each ``d`` separately: a master point of the same ``TP``.  The
copies need not share a split: the coupling is per destination.

**Pricing and the dual extension.**  A restricted master has some trees and
only their coupling rows.  Its dual ``(π, y, μ)`` extends to the missing
coupling rows by any ``μ_{d,op} >= 0`` with ``Σ_d μ_{d,op} <= cost_op(y)``
(the port, link and CPU price of one ``x_op``: the dual row of ``x_op``);
the restricted optimum makes ``Σ_{rows} μ_{d,op} <= cost_op(y)``, and
:func:`_split` shares the rest, the *residual*, as follows.  Each
destination is first priced with every missing operation at the whole
residual; the least holding prices ``φ_d(j, v[k,m])`` of that pricing tell
how much each missing operation must cost ``d`` for ``φ_d`` to stay a lower
bound (``φ_d(v) - φ_d(u)`` for a send ``u -> v``, ``φ_d(i, v[k,m]) -
φ_d(i, v[k,l]) - φ_d(i, v[l+1,m])`` for a task), and the residual is given
to the destinations in order, each up to that need.  A tree ``t`` of ``d``
then has reduced profit ``π_d - Σ_{op ∈ t} μ_{d,op}``: the pricing step is
the reduce's dynamic program with prices that depend on the interval
(:func:`~portsim.planners.lp._tree_pricing.cheapest_interval_tree`).  A tree
priced below ``π_d`` (under the split, or already under the whole
residuals, which are higher) enters with its rows; the master's previous
point stays feasible (a new row reads ``λ_new - x_op = -x_op <= 0``).  The
generation stops when no destination has a tree priced below ``π_d`` under
the split: the extended dual is then feasible for the whole master, so the
restricted optimum is the optimum.  It terminates: every entering tree
prices below ``π_d`` under a dual for which every tree already in the master
does not (their operations all have rows, priced by the master's own ``μ``),
so it is new, and trees are finitely many.  The float master is solved by
interior point without crossover while generating (central duals; the
vertices of this degenerate master made the simplex stall), then once with
crossover and by primal simplex from there, so that the last dual is a
basis's, recovered exactly.

**Certificate** (:func:`_certified_upper`).  For *any* ``y >= 0`` and
``μ >= 0`` with ``Σ_d μ_{d,op} <= cost_op(y)`` for every operation (``μ``
of an operation whose rows sum above its cost is set to 0 there: lowering
``μ`` keeps validity), let ``W_d`` be the least tree price of ``d``.  Then
``(π = W, y, μ)`` satisfies every dual row of the whole master except the
column of ``TP``, ``Σ_d π_d >= 1``; scaled by ``1 / Σ_d W_d`` when that is
below 1, it satisfies them all (the other rows are homogeneous).  By weak
duality the optimum is at most ``Σ rhs·y / min(1, Σ_d W_d)``.  The final
master is solved exactly (:func:`~portsim.planners.lp._exact.recover`), its
exact dual extended as above and priced exactly (integers over a common
denominator); a destination with a tree below its exact ``π_d`` adds it and
the exact master is solved again.  When the bound meets the exact master's
value, the value is the optimum of the whole program, certified.

**Measured** (``benchmarks/lp_allreduce.py --bound-only``, CPU seconds,
out-degree 3, costs 1..10, seed 0): N = 6 in 7.1 s (the whole program 0.35
s); N = 7 not within 300 s (the whole program 0.94 s).  On that N = 7
platform the interior phase reaches the optimum's value after 135 rounds
(25 s); the vertex phase then keeps finding trees that improve nothing (the
master's optimal dual face is large, and the simplex's vertex of it does not
extend into a certificate), so certifying, not finding, the optimum is what
is slow.  Hence :func:`~portsim.planners.lp._allreduce_bound.allreduce_bound`
keeps the whole program by default.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from portsim.planners.lp._exact import ExactSolution, recover
from portsim.planners.lp._incremental import IncrementalMaster, MasterPoint, generate
from portsim.planners.lp._solve import Deadline, FloatSolution, LinearModel, TimeLimitReached
from portsim.planners.lp._ssr import TP, Task, receive_capacity
from portsim.planners.lp._tree_pricing import (
    TreeSpace,
    cheapest_interval_tree,
    interval_tables,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import Platform

__all__ = ["EXACT_ROUNDS", "MAX_ROUNDS", "SMOOTHING", "allreduce_trees", "split_bound"]


MAX_ROUNDS = 5_000
"""Cap on the float pricing rounds (each prices every destination once)."""


EXACT_ROUNDS = 50
"""Cap on the exact rounds (exact master, exact pricing); past it the answer
is the certified interval of the last one."""


SMOOTHING = 0.8
"""Wentges dual smoothing of the float generation (see :func:`_generate`); 0 disables it."""


_PRICING_TOLERANCE = 1e-9
"""A tree enters the float master when its price is below ``π_d - this``
(relative to ``max(1, π_d)``)."""


_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)


@dataclass
class _Operations:
    """Shared operations as integers, and their port, link and CPU loads.

    A send of ``v[k,m]`` over link ``e`` is ``(k · P + m) · E + e``; a task
    ``T_{k,l,m}`` on node ``i`` is ``n_sends + ((k · P + m) · P + l - k) ·
    n + i`` (``P`` participants, ``E`` links, ``n`` nodes): the flat indexes
    of the price arrays of :func:`cheapest_interval_tree`.
    """

    space: TreeSpace
    parts: int
    link_of: dict[tuple[int, int], int] = field(init=False)
    n_sends: int = field(init=False)
    n_ops: int = field(init=False)
    _grid: tuple[np.ndarray, ...] = field(init=False)

    def __post_init__(self) -> None:
        space = self.space
        self.link_of = {e: i for i, e in enumerate(space.links)}
        self.n_sends = self.parts * self.parts * len(space.links)
        self.n_ops = self.n_sends + self.parts ** 3 * len(space.nodes)
        p = self.parts
        self._grid = tuple(np.meshgrid(np.arange(p), np.arange(p), np.arange(p), indexing="ij"))

    def of_tree(self, tasks: list[Task]) -> list[int]:
        """The operations of a tree that have a coupling row (tasks with ``w > 0``)."""
        space, p = self.space, self.parts
        n_links, n = len(space.links), len(space.nodes)
        out = []
        for task in tasks:
            if task[0] == "send":
                _, u, v, k, m = task
                e = self.link_of[space.index[u], space.index[v]]
                out.append((k * p + m) * n_links + e)
            else:
                _, node, k, l_, m = task
                i = space.index[node]
                if i in space.cpu_rows:
                    out.append(self.n_sends + ((k * p + m) * p + l_ - k) * n + i)
        return out

    def forbidden(self, d: int) -> np.ndarray:
        """Operations that no tree of ``d`` may use: tasks on routers, the result out of ``d``."""
        space, p = self.space, self.parts
        out = np.zeros(self.n_ops, dtype=bool)
        sends, tasks = out[:self.n_sends].reshape(p, p, -1), out[self.n_sends:].reshape(p, p, p, -1)
        target = space.owners[d]
        for e, (u, _) in enumerate(space.links):
            if u == target:
                sends[0, p - 1, e] = True
        for i, w in enumerate(space.compute):
            if w is None:
                tasks[..., i] = True
        return out

    def gains(self, hold: np.ndarray) -> np.ndarray:
        """Per operation, what its price may be at least so that ``hold`` stays a lower bound.

        ``hold[k, m, j]`` (:class:`IntervalTables`): a send ``u -> v`` of
        ``v[k,m]`` gains ``hold[k,m,v] - hold[k,m,u]``, a task ``T_{k,l,m}``
        on ``i`` gains ``hold[k,m,i] - hold[k,l,i] - hold[l+1,m,i]``; 0 where
        a term is out of reach or the cell is not an operation (not clipped).
        """
        space = self.space
        inf = math.inf
        reach = ~(hold == inf)
        h = np.where(reach, hold, 0)
        heads = np.array([v for _, v in space.links], dtype=np.int64)
        tails = np.array([u for u, _ in space.links], dtype=np.int64)
        sends = np.where(reach[:, :, heads] & reach[:, :, tails],
                         h[:, :, heads] - h[:, :, tails], 0)
        k, m, s = self._grid
        left, right = k + s, k + s + 1
        valid = (k < m) & (s < m - k)
        left = np.where(valid, left, 0)
        right = np.where(valid, right, 0)
        ok = reach[k, m] & reach[k, left] & reach[right, m] & valid[..., None]
        tasks = np.where(ok, h[k, m] - h[k, left] - h[right, m], 0)
        return np.concatenate([sends.reshape(-1), tasks.reshape(-1)])

    def loads(self, op: int) -> dict[int, Fraction]:
        """Port, link or CPU row (of :class:`TreeSpace`) -> busy time of one ``x_op``."""
        space = self.space
        if op < self.n_sends:
            e = op % len(space.links)
            u, v = space.links[e]
            node = space.nodes
            return space.loads([("send", node[u], node[v], 0, 0)])
        i = (op - self.n_sends) % len(space.nodes)
        return space.loads([("cons", space.nodes[i], 0, 0, 1)])

    def cost(self, link: np.ndarray, cpu: np.ndarray) -> np.ndarray:
        """``cost_op`` of every operation from the link and compute prices of ``y``."""
        p = self.parts
        sends = np.broadcast_to(link, (p, p, len(link))).reshape(-1)
        tasks = np.broadcast_to(cpu, (p, p, p, len(cpu))).reshape(-1)
        return np.concatenate([sends, tasks])

    def split(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The send and task price arrays of :func:`cheapest_interval_tree`."""
        p, n_links, n = self.parts, len(self.space.links), len(self.space.nodes)
        return (flat[:self.n_sends].reshape(p, p, n_links),
                flat[self.n_sends:].reshape(p, p, p, n))


@dataclass
class _Rows:
    """The coupling rows: ``(d, op)`` pairs, in master order."""

    dest: list[int] = field(default_factory=list)
    op: list[int] = field(default_factory=list)
    index: dict[tuple[int, int], int] = field(default_factory=dict)

    def add(self, d: int, op: int) -> int:
        r = self.index[d, op] = len(self.dest)
        self.dest.append(d)
        self.op.append(op)
        return r


def _split(ops: _Operations, rows: _Rows, cost: np.ndarray, mu: np.ndarray, n_dest: int, *,
           clock: Deadline, proportional: bool = False
           ) -> tuple[list[np.ndarray], list[tuple[int, list[Task], float | int]]]:
    """The extended dual of the module notes: every destination's price of every operation.

    ``cost`` (per operation) and ``mu`` (per coupling row) are floats, or
    integers over one denominator (object arrays; ``inf`` where forbidden)
    for the exact pricing.  First each destination is priced
    *pessimistically*, every operation without its row at the whole residual
    ``cost_op - Σ_{rows} μ_{·,op}``; the least holding prices ``φ_d`` of that
    program tell what each operation must cost ``d`` at least for ``φ_d`` to
    stay a lower bound (:meth:`_Operations.gains`).  The residual of an
    operation is then given to the destinations without its row in that
    order, each up to its need; with ``proportional``, to all of them at
    once, each its need scaled by ``min(1, residual / Σ needs)`` (rounded
    down on integers).  Either way a valid split: the shares sum to at most
    the residual.

    Returns
    -------
    (prices, trees)
        ``prices[d]``: the flat price of every operation for ``d`` under the
        split (``inf`` where ``d`` may not use it); ``trees``: ``(d, tasks,
        price)`` of the cheapest tree of each destination under the
        pessimistic prices (a tree priced below ``π_d`` there is so under
        the split too), empty when a destination has none.
    """
    exact = cost.dtype == object
    space = ops.space
    op_of = np.asarray(rows.op, dtype=np.int64)
    dest_of = np.asarray(rows.dest, dtype=np.int64)
    if exact:
        total = np.zeros(ops.n_ops, dtype=object)
        np.add.at(total, op_of, mu)
    else:
        total = np.bincount(op_of, weights=mu, minlength=ops.n_ops)
    over = total[op_of] > cost[op_of]
    if over.any() and exact:  # an inexact dual: drop μ of those operations (still valid)
        bad = np.unique(op_of[over])
        mu = np.where(np.isin(op_of, bad), 0, mu)
        total[bad] = 0
    elif over.any():  # round-off: scale μ down to the cost
        ratio = np.ones(ops.n_ops)
        np.divide(cost, total, out=ratio, where=total > cost)
        mu = mu * ratio[op_of]
        total = np.minimum(total, cost)
    residual = cost - total
    trees: list[tuple[int, list[Task], float | int]] = []
    needs: list[tuple[np.ndarray, np.ndarray]] = []
    forbidden = []
    for d in range(n_dest):
        clock.check("pricing (allreduce bound)")
        mine = dest_of == d
        banned = ops.forbidden(d)
        forbidden.append(banned)
        price = residual.copy()
        price[op_of[mine]] = mu[mine]
        price[banned] = math.inf
        tables = interval_tables(space, *ops.split(price), deadline=clock)
        value, tasks = cheapest_interval_tree(space, space.owners[d], *ops.split(price),
                                              tables=tables)
        if tasks is None:
            return [], []
        trees.append((d, tasks, value))
        gain = ops.gains(tables.hold)
        gain[op_of[mine]] = 0
        gain[banned] = 0
        keep = np.flatnonzero(gain > 0)
        need = np.minimum(gain[keep], residual[keep])
        needs.append((keep, need))
    # The residual, given in destination order up to each need, or to every
    # destination in proportion to its need (each share rounded down).
    given = np.zeros(ops.n_ops, dtype=object if exact else float)
    wanted = np.zeros(ops.n_ops, dtype=object if exact else float)
    if proportional:
        for keep, need in needs:
            wanted[keep] += need
    split: list[np.ndarray] = []
    for d in range(n_dest):
        keep, need = needs[d]
        if not proportional:
            share = np.maximum(np.minimum(need, residual[keep] - given[keep]), 0)
        elif exact:
            share = np.empty(len(keep), dtype=object)
            share[:] = [n_ if w_ <= r_ else n_ * r_ // w_ for n_, r_, w_
                        in zip(need.tolist(), residual[keep].tolist(), wanted[keep].tolist(),
                               strict=True)]
        else:
            share = need * np.minimum(1.0, residual[keep] / np.maximum(wanted[keep], 1e-300))
        given[keep] += share
        price = np.zeros(ops.n_ops, dtype=object if exact else float)
        price[keep] = share
        mine = dest_of == d
        price[op_of[mine]] = mu[mine]
        price[forbidden[d]] = math.inf
        split.append(price)
    return split, trees


def _price_at(ops: _Operations, prices: list[np.ndarray], clock: Deadline
              ) -> tuple[list[float | int], list[tuple[int, list[Task], float | int]]]:
    """The least tree price ``W_d`` and a cheapest tree of every destination under ``prices``."""
    least: list[float | int] = []
    trees: list[tuple[int, list[Task], float | int]] = []
    for d, price in enumerate(prices):
        clock.check("pricing (allreduce bound)")
        value, tasks = cheapest_interval_tree(ops.space, ops.space.owners[d],
                                              *ops.split(price), deadline=clock)
        assert tasks is not None  # the pessimistic pricing found one
        least.append(value)
        trees.append((d, tasks, value))
    return least, trees


class _TreeMaster:
    """The float master (:class:`IncrementalMaster`) and the same program exactly.

    Rows: one ``==`` row per destination, the port, CPU and link rows of
    :class:`TreeSpace`, then the coupling rows in the order they were
    generated.  Columns: ``TP``, then each tree, preceded by the ``x`` of
    the operations it is the first to use.
    """

    def __init__(self, space: TreeSpace, ops: _Operations, n_dest: int, cap: Fraction) -> None:
        self.space, self.ops, self.n_dest, self.cap = space, ops, n_dest, cap
        self.n_port = space.n_rows
        rhs = np.array([float(b) for b in space.rhs])
        # Interior duals (no crossover) while generating: central duals price
        # better than the vertices of this very degenerate master (measured:
        # the primal simplex spent 95% of the time at N = 6).
        self.float = IncrementalMaster(np.r_[np.zeros(n_dest), np.full(self.n_port, -np.inf)],
                                       np.r_[np.zeros(n_dest), rhs],
                                       {"solver": "ipm", "run_crossover": "off",
                                        "presolve": "off"})
        self.interior = True
        """True while the float master is solved by interior point without crossover."""
        self.float.add_column(1.0, list(range(n_dest)), [1.0] * n_dest)
        self.described: list[tuple[str, int]] = [("TP", 0)]
        """Per master column: ``("TP", 0)``, ``("x", op)`` or ``("tree", c)``."""
        self.rows = _Rows()
        self.x_col: dict[int, int] = {}
        self.trees: list[tuple[int, list[Task], list[int]]] = []
        self.seen: set[tuple[int, tuple[Task, ...]]] = set()

    def add(self, d: int, tasks: list[Task]) -> bool:
        """Add the tree ``tasks`` of destination ``d`` and its coupling rows; False if known."""
        if (d, tuple(tasks)) in self.seen:
            return False
        self.seen.add((d, tuple(tasks)))
        used = self.ops.of_tree(tasks)
        new = [op for op in used if (d, op) not in self.rows.index]
        for op in new:
            if op not in self.x_col:
                loads = self.ops.loads(op)
                self.x_col[op] = self.float.add_column(0.0, [self.n_dest + r for r in loads],
                                                       [float(a) for a in loads.values()])
                self.described.append(("x", op))
            self.rows.add(d, op)
        self.float.add_rows(np.full(len(new), -np.inf), np.zeros(len(new)),
                            [([self.x_col[op]], [-1.0]) for op in new])
        first = self.n_dest + self.n_port
        self.float.add_column(0.0, [d] + [first + self.rows.index[d, op] for op in used],
                              [-1.0] + [1.0] * len(used))
        self.described.append(("tree", len(self.trees)))
        self.trees.append((d, tasks, used))
        return True

    def to_vertices(self) -> None:
        """Solve the float master at vertices from now on (a basis for the exact recovery).

        The next solve runs the interior point with crossover; the ones after
        it the primal simplex from that basis.
        """
        self.float.h.setOptionValue("run_crossover", "on")
        self.interior = False
        self._crossed = False

    def solved(self) -> None:
        """After a solve: once crossed over, continue by primal simplex (warm)."""
        if not self.interior and not self._crossed:
            self.float.h.setOptionValue("solver", "simplex")
            self.float.h.setOptionValue("simplex_strategy", 4)
            self._crossed = True

    def exact_model(self) -> LinearModel:
        """The master with exact coefficients, rows and columns in the float master's order."""
        model = LinearModel()
        cap = self.cap
        n_dest, first = self.n_dest, self.n_dest + self.n_port
        per_row: list[dict[int, Fraction]] = [{} for _ in range(first + len(self.rows.dest))]
        x_rows: dict[int, list[int]] = {}
        for r, op in enumerate(self.rows.op):
            x_rows.setdefault(op, []).append(first + r)
        for kind, what in self.described:
            if kind == "TP":
                j = model.variable(TP, upper=cap)
                model.objective = j
                for d in range(n_dest):
                    per_row[d][j] = _ONE
            elif kind == "x":
                loads = self.ops.loads(what)
                j = model.variable(("x", what), upper=1 / max(loads.values()))
                for r, a in loads.items():
                    per_row[n_dest + r][j] = a
                for r in x_rows[what]:
                    per_row[r][j] = _MINUS_ONE
            else:
                d, _, used = self.trees[what]
                j = model.variable(("tree", what), upper=cap)
                per_row[d][j] = _MINUS_ONE
                for op in used:
                    per_row[first + self.rows.index[d, op]][j] = _ONE
        for d in range(n_dest):
            model.add(per_row[d], "==", Fraction(0), f"the trees of destination {d} carry TP")
        for r in range(self.n_port):
            model.add(per_row[n_dest + r], "<=", self.space.rhs[r], f"row {r}")
        for r, (d, op) in enumerate(zip(self.rows.dest, self.rows.op, strict=True)):
            model.add(per_row[first + r], "<=", Fraction(0),
                      f"destination {d}: operation {op} is an actual one")
        return model

    def float_solution(self, duals: np.ndarray) -> FloatSolution:
        """The float master's last optimum (with its basis) as :func:`recover` reads it."""
        n_dest = self.n_dest
        return FloatSolution("optimal", self.float.values(), duals[n_dest:], duals[:n_dest],
                             "optimal", "highs-ds", 0.0, self.float.basis())


def _certified_upper(master: _TreeMaster, y_ub: list[Fraction], clock: Deadline
                     ) -> tuple[Fraction | None, list[tuple[int, list[Task], Fraction]]]:
    """The certificate of the module notes from an exact master dual.

    Returns the certified bound (``None`` when the least tree prices sum to
    0) and the cheap trees found, with their exact prices.
    """
    space = master.space
    y_port = [max(v, Fraction(0)) for v in y_ub[:space.n_rows]]
    mu = [max(v, Fraction(0)) for v in y_ub[space.n_rows:]]
    link, cpu, q = space.prices(y_port, exact=True)
    scale = q
    for v in mu:
        scale = scale * v.denominator // math.gcd(scale, v.denominator)
    link_int = np.empty(len(link), dtype=object)
    link_int[:] = [v * (scale // q) for v in link.tolist()]
    cpu_int = np.empty(len(cpu), dtype=object)
    cpu_int[:] = [v if v is math.inf else v * (scale // q) for v in cpu.tolist()]
    mu_int = np.empty(len(mu), dtype=object)
    mu_int[:] = [v.numerator * (scale // v.denominator) for v in mu]
    prices, _ = _split(master.ops, master.rows, master.ops.cost(link_int, cpu_int), mu_int,
                       master.n_dest, clock=clock)
    if not prices:
        return None, []
    least, trees = _price_at(master.ops, prices, clock)
    found = [(d, tasks, Fraction(int(price), scale)) for d, tasks, price in trees]
    total = Fraction(sum(int(w) for w in least), scale)
    if not least or total <= 0:
        return None, found
    return space.dual_value(y_port) / min(_ONE, total), found


GRID = 2 ** 40
"""The float split of :func:`split_bound` is made exact on a grid of ``1 / (GRID · q)``
(``q`` the common denominator of the prices)."""

SPLIT_ROUNDS = 200
"""Cap on the float rounds of :func:`split_bound`'s generation (each prices
every destination once); the bound of the last exact split stands."""


def split_bound(platform: Platform, operation: Operation, y: Sequence[Fraction], *,
                deadline: Deadline, budget: Deadline | None = None,
                max_rounds: int = SPLIT_ROUNDS,
                seeds: Sequence[tuple[int, list[Task]]] = (),
                stats: dict[str, float] | None = None) -> Fraction | None:
    """An upper bound on every schedule's throughput from port, CPU and link prices ``y``.

    Parameters
    ----------
    platform, operation:
        As :func:`allreduce_trees`.
    y:
        Non-negative prices of the rows of :class:`TreeSpace` (send and
        receive port per node, CPUs of ``w > 0``, links of their own row),
        e.g. the exact dual of the reduce-then-broadcast master.
    deadline:
        The call's deadline, checked in every round and dynamic program.
    budget:
        When given, the generation of the best split stops there (the best
        split found so far is then made exact and priced).
    max_rounds:
        Rounds of the generation of the best split (0: the master over each
        destination's first tree only).
    seeds:
        ``(d, tasks)``: reduction trees of destination ``d`` (its index among
        the participants) that enter the master before the generation, e.g.
        the instances of the reduce-then-broadcast schedule, each as its
        reduction tree then the broadcast's path to ``d``.  They only steer
        the search: the bound is priced over every tree.
    stats:
        When given, ``stats["rounds"]`` is set to the rounds of the
        generation run (``max_rounds`` when it was cut there).

    Returns
    -------
    Fraction or None
        ``Σ rhs·y / Σ_d W_d``, certified; ``None`` when ``Σ_d W_d = 0``.

    Raises
    ------
    TimeLimitReached
        When the deadline passes.

    Notes
    -----
    Every schedule's throughput is at most the best packing of structures
    (unions of one reduction tree per destination, operations shared;
    :mod:`portsim.planners.lp._allreduce_packing`), whose dual is ``min
    rhs·z`` over ``z >= 0`` with ``z·load_s >= 1`` for every structure
    ``s``.  Split each operation's price ``cost_op(y)`` among the
    destinations, ``μ_{d,op} >= 0`` with ``Σ_d μ_{d,op} <= cost_op(y)``.  A
    structure ``s`` holds a tree ``t_d`` of every ``d``, so ``y·load_s =
    Σ_{op ∈ s} cost_op >= Σ_d Σ_{op ∈ t_d} μ_{d,op} >= Σ_d W_d``, ``W_d``
    the least price of a tree of ``d`` under ``μ_d``
    (:func:`~portsim.planners.lp._tree_pricing.cheapest_interval_tree`,
    exact on integers).  So ``z = y / Σ_d W_d`` is dual feasible and the
    packing, hence every schedule, is at most ``Σ rhs·y / Σ_d W_d``.

    The best split is the dual of the least price of a *fractional*
    structure, ``min Σ cost_op ζ_op`` over ``ζ_op >= Σ_{t of d ∋ op} λ_t``
    for every destination ``d``, ``Σ_{t of d} λ_t = 1``: a column generation
    over per-destination trees (:class:`_SplitMaster`), whose coupling rows
    come with the trees, their duals ``μ`` extended to the other operations
    by :func:`_split`.  It stops when no tree improves, or as soon as the
    split proves ``Σ_d W_d >= 1`` (nothing more to gain: ``y`` itself is
    then a dual of the packing) or the master's fractional structures cost
    less than 1 (no split of these prices reaches 1).  The master is solved
    by interior point without crossover: its central duals split far better
    than its vertices, which this degenerate master has many of (measured
    at N = 5, a vertex's split reached 0.6 of the master's value, a
    central one 0.96 in 30 rounds).  The best split found is made exactly
    valid on a grid (:meth:`_SplitMaster.exact_least`) and priced exactly:
    the bound holds whatever the float rounds did, and it is a hair above
    the value a float split proves.

    Operations without a coupling row are shared among the destinations in
    proportion to what each one's holding prices need (``proportional`` of
    :func:`_split`), not in destination order: the first destinations no
    longer take whole prices that then cost the others nothing.  Measured
    (CPU seconds, complete N = 10, 5 s budget, step 2's vertex dual): seed
    1, the bound over step 2's value 1.00026 -> 1.00000008 (3.4 s); seed 0,
    1.63 -> 1.38; random N = 12 (out-degree 3, costs 1..10) seed 1, 1.37 ->
    1.39 (the only worse case measured; 1.23 with step 2's instances as
    ``seeds``).  The first split by destination order is still priced and
    the least bound kept.  On the complete N = 10 platforms tried (seeds 0
    and 1), the relaxation's own exact dual had the same ``y`` as step 2's
    vertex dual: there the split is what is slow, not ``y``.  On the
    complete N = 12 platform of seed 0, with ``seeds``, 20 s of search
    reach 1.41 from step 2's vertex dual and 1.39 from a central dual of
    its master (interior point, no crossover): ``y`` matters little there
    either within such budgets.
    """
    parts = operation.participants
    n_dest = len(parts)
    space = TreeSpace.of(platform, replace(operation, target=parts[0]))
    ops = _Operations(space, n_dest)
    y_port = [max(v, Fraction(0)) for v in y]
    link_q, cpu_q, q = space.prices(y_port, exact=True)
    cost_q = ops.cost(link_q, cpu_q)
    link_f, cpu_f, _ = space.prices(y_port, exact=False)
    master = _SplitMaster(ops, cost_q, q, ops.cost(link_f, cpu_f), n_dest)
    _, first = _split(ops, master.rows, master.cost, np.zeros(0), n_dest, clock=deadline,
                      proportional=True)
    if not first:
        return None
    for d, tasks, _ in first:
        master.add(d, tasks)
    for d, tasks in seeds:
        master.add(d, tasks)
    if max_rounds > 0:
        clock = budget if budget is not None else deadline
        try:
            rounds = generate(master.float, master.pricing(clock), deadline=clock,
                              phase="pricing (allreduce bound: the split of the duals)",
                              max_rounds=max_rounds)
            if stats is not None:
                stats["rounds"] = rounds
        except TimeLimitReached:
            if budget is None or deadline.expired:
                raise  # the call's own deadline; past the budget, the best split stands
    # The first split (no coupling row) and the best one found, each exact:
    # the central duals may split worse than the first split where the
    # fractional structures cost less than 1 (the generation stops early).
    totals = [t for t in (master.exact_least(deadline, first=True),
                          master.exact_least(deadline, first=True, proportional=False),
                          master.exact_least(deadline) if master.best is not None else None)
              if t is not None and t > 0]
    if not totals:
        return None
    return space.dual_value(y_port) / max(totals)


class _SplitMaster:
    """The least fractional structure under fixed prices, by per-destination trees.

    Rows: ``S + Σ cost_op ζ_op = C`` (``C`` the sum of every finite price:
    ``S`` is maximised), one ``Σ λ = 1`` row per destination, then the
    coupling rows ``Σ_{t of d ∋ op} λ_t - ζ_op <= 0`` of the operations of
    positive price the trees use, in the order they came.  Columns: ``S``,
    then each tree preceded by the ``ζ`` of the operations it is the first
    to use.
    """

    def __init__(self, ops: _Operations, cost_q: np.ndarray, q: int, cost: np.ndarray,
                 n_dest: int) -> None:
        self.ops, self.cost_q, self.q, self.cost, self.n_dest = ops, cost_q, q, cost, n_dest
        finite = [int(c) for c in cost_q.tolist() if c is not math.inf]
        self.total = Fraction(sum(finite), q)
        self.float = IncrementalMaster(np.r_[float(self.total), np.ones(n_dest)],
                                       np.r_[float(self.total), np.ones(n_dest)],
                                       {"solver": "ipm", "run_crossover": "off",
                                        "presolve": "off"})
        self.float.add_column(1.0, [0], [1.0])
        self.described: list[tuple[str, int]] = [("S", 0)]
        self.rows = _Rows()
        self.zeta: dict[int, int] = {}
        self.trees: list[tuple[int, list[int]]] = []
        self.seen: set[tuple[int, tuple[Task, ...]]] = set()
        self.best: tuple[float, np.ndarray] | None = None
        """The float ``Σ_d W_d`` of the best split so far and its coupling duals ``μ``
        (one per row then present: rows are only appended)."""

    def add(self, d: int, tasks: list[Task]) -> bool:
        """Add the tree ``tasks`` of destination ``d`` and its rows; False if known."""
        if (d, tuple(tasks)) in self.seen:
            return False
        self.seen.add((d, tuple(tasks)))
        used = [op for op in self.ops.of_tree(tasks) if self.cost_q[op]]
        new = [op for op in used if (d, op) not in self.rows.index]
        for op in new:
            if op not in self.zeta:
                self.zeta[op] = self.float.add_column(0.0, [0], [float(self.cost[op])])
                self.described.append(("zeta", op))
            self.rows.add(d, op)
        self.float.add_rows(np.full(len(new), -np.inf), np.zeros(len(new)),
                            [([self.zeta[op]], [-1.0]) for op in new])
        first = 1 + self.n_dest
        self.float.add_column(0.0, [1 + d] + [first + self.rows.index[d, op] for op in used],
                              [1.0] * (1 + len(used)))
        self.described.append(("tree", len(self.trees)))
        self.trees.append((d, used))
        return True

    def pricing(self, clock: Deadline) -> Callable[[MasterPoint], bool]:
        """The pricer of :func:`generate`: each destination's cheapest tree under the split."""
        def price(point: MasterPoint) -> bool:
            least_structure = float(self.total) - point.value  # min Σ cost·ζ
            if least_structure < 1 - _PRICING_TOLERANCE:
                return False  # no split of these prices reaches 1
            pi = point.duals[1:1 + self.n_dest]
            mu = point.duals[1 + self.n_dest:]
            prices, pessimistic = _split(self.ops, self.rows, self.cost, mu, self.n_dest,
                                         clock=clock, proportional=True)
            least, trees = _price_at(self.ops, prices, clock)
            total = float(sum(least))
            if self.best is None or total > self.best[0]:
                self.best = (total, np.asarray(mu, dtype=float).copy())
            if total >= 1:
                return False  # this split already proves what is to prove
            entered = False
            for d, tasks, _ in [*pessimistic, *trees]:
                if _improves(self.ops, prices[d], tasks, -float(pi[d])):
                    entered = self.add(d, tasks) or entered
            return entered
        return price

    def exact_least(self, clock: Deadline, *, first: bool = False,
                    proportional: bool = True) -> Fraction | None:
        """``Σ_d W_d`` of the best split found, made exactly valid and priced exactly.

        The best float ``μ`` is floored to a grid of ``1 / (GRID · q)``; where
        an operation's shares still sum above its price, the largest shares
        are lowered until they do not (lowering ``μ`` keeps the split valid).
        With ``first`` (or without a float split) the first split: no
        coupling row, each destination's share what its own holding prices
        need, in proportion to the needs (or, without ``proportional``, the
        destinations served in order; :func:`_split`).
        """
        rows = _Rows()
        mu_int: list[int] = []
        scale = GRID * self.q
        if self.best is not None and not first:
            mu_float = self.best[1]
            for d, op in zip(self.rows.dest[:len(mu_float)], self.rows.op[:len(mu_float)],
                             strict=True):
                rows.add(d, op)
            mu_int = [max(0, math.floor(Fraction(float(v)) * scale)) for v in mu_float]
            by_op: dict[int, list[int]] = {}
            for r, op in enumerate(rows.op):
                by_op.setdefault(op, []).append(r)
            for op, members in by_op.items():
                excess = sum(mu_int[r] for r in members) - int(self.cost_q[op]) * GRID
                for r in sorted(members, key=mu_int.__getitem__, reverse=True):
                    if excess <= 0:
                        break
                    cut = min(excess, mu_int[r])
                    mu_int[r] -= cut
                    excess -= cut
        cost = np.empty(len(self.cost_q), dtype=object)
        cost[:] = [c if c is math.inf else c * GRID for c in self.cost_q.tolist()]
        mu = np.empty(len(mu_int), dtype=object)
        mu[:] = mu_int
        prices, _ = _split(self.ops, rows, cost, mu, self.n_dest, clock=clock,
                           proportional=proportional)
        if not prices:
            return None
        least, _ = _price_at(self.ops, prices, clock)
        return Fraction(sum(int(w) for w in least), scale)


def allreduce_trees(platform: Platform, operation: Operation, *,
                    deadline: Deadline | None = None,
                    stats: dict[str, float] | None = None) -> ExactSolution | str:
    """The allreduce upper bound (per-destination SSR(G) copies) by column generation.

    Parameters
    ----------
    platform:
        A platform without unidirectional nodes (port sums, as the whole program).
    operation:
        A resolved, non-commutative allreduce; every participant is a destination.
    deadline:
        Checked between rounds, in the pricing and during the exact recovery
        (:class:`~portsim.planners.lp._solve.TimeLimitReached` names the phase).
    stats:
        When given, filled with the seconds spent in ``solve`` (float
        generation) and ``exact`` (exact masters and pricing), and the counts
        ``rounds``, ``exact_rounds``, ``columns`` (trees) and ``rows``
        (coupling rows).

    Returns
    -------
    ExactSolution or str
        The exact master solution, whose ``upper`` is certified for the whole
        program of :func:`~portsim.planners.lp._allreduce_bound.build_allreduce_bound_model`
        (its ``y_ub``, ``y_eq`` are the master's exact dual; the certificate
        is that dual extended and priced, see the module notes), ``method``
        ``"interval"`` when ``upper`` exceeds ``lower``; or a sentence saying
        why there is none (a participant no tree reaches, a HiGHS failure).

    Examples
    --------
    Three nodes fully linked by links of cost 1, free computation: 3/4 (the
    hand-computed case of ``tests/test_lp_allreduce.py``).

    >>> from portsim.simulator.operations import OperationKind
    >>> p = Platform.build(dict.fromkeys("ABC", 0),
    ...                    [(a, b, 1) for a in "ABC" for b in "ABC" if a != b])
    >>> op = Operation(OperationKind.ALLREDUCE).resolve(p)
    >>> bound = allreduce_trees(p, op)
    >>> bound.lower, bound.upper
    (Fraction(3, 4), Fraction(3, 4))
    """
    clock = deadline if deadline is not None else Deadline()
    started = time.perf_counter()
    parts = operation.participants
    n_dest = len(parts)
    space = TreeSpace.of(platform, replace(operation, target=parts[0]))  # targets: below
    ops = _Operations(space, n_dest)
    receive = receive_capacity(platform, operation.size)
    master = _TreeMaster(space, ops, n_dest, min(receive[p] for p in parts))
    n_port = space.n_rows
    # First trees: every port and CPU row priced 1, no coupling row yet.
    link, cpu, _ = space.prices([_ONE] * n_port, exact=False)
    _, first = _split(ops, master.rows, ops.cost(link, cpu), np.zeros(0), n_dest, clock=clock)
    if not first:
        return "some participant is reached by no reduction tree"
    for d, tasks, _ in first[:n_dest]:
        master.add(d, tasks)
    rounds = exact_rounds = 0
    exact_seconds = 0.0
    while True:
        duals, spent = _generate(master, clock, rounds_left=MAX_ROUNDS - rounds)
        rounds += spent
        if isinstance(duals, str):
            return duals
        if master.interior:  # converged on interior duals: now at a vertex, to recover it
            master.to_vertices()
            continue
        # Exact: the same basis solved exactly, its dual extended and priced exactly.
        exact_rounds += 1
        exact_started = time.perf_counter()
        clock.check("exact recovery (allreduce bound master)")
        model = master.exact_model()
        exact = recover(model, master.float_solution(duals), repair=_zero_point,
                        deadline=clock)
        if exact is None:  # pragma: no cover - the zero point is always feasible
            return "no exactly feasible solution of the allreduce bound master"
        upper, trees = _certified_upper(master, exact.y_ub, clock)
        exact_seconds += time.perf_counter() - exact_started
        if upper is not None and upper <= exact.lower:
            break
        entered = sum(master.add(d, tasks) for d, tasks, price in trees
                      if price < exact.y_eq[d])
        if not entered or exact_rounds >= EXACT_ROUNDS or rounds >= MAX_ROUNDS:
            break
    if upper is None:
        return "the exact pricing found trees of total price 0: no certified bound"
    upper = max(upper, exact.lower)
    if stats is not None:
        stats.update(solve=time.perf_counter() - started - exact_seconds, exact=exact_seconds,
                     rounds=rounds, exact_rounds=exact_rounds, columns=len(master.trees),
                     rows=len(master.rows.dest))
    return ExactSolution(exact.values, exact.lower, upper, exact.y_ub, exact.y_eq,
                         exact.method if upper == exact.lower else "interval", exact.notes)


def _generate(master: _TreeMaster, clock: Deadline, *, rounds_left: int
              ) -> tuple[np.ndarray | str, int]:
    """Float column generation until no destination has a tree below its ``π_d``.

    Wentges smoothing (as :mod:`portsim.planners.lp._reduce_columns`): each
    round prices at ``α·center + (1-α)·(y, prices)``, the center being the
    extended dual of the best Lagrangian bound ``Σ rhs·y / min(1, Σ W_d)``
    so far (a convex combination of valid extended duals is one), and keeps
    the trees that improve the master at its own dual; when none does, it
    prices at the master's dual itself, so the generation stops only when
    that dual, extended, proves the master optimal.

    Returns the last optimal dual of the float master (or why it failed)
    and the number of rounds.
    """
    space, ops, n_dest, n_port = master.space, master.ops, master.n_dest, master.n_port
    rhs = np.array([float(b) for b in space.rhs])
    rounds = 0
    center: tuple[np.ndarray, list[np.ndarray]] | None = None
    best = math.inf
    while True:
        rounds += 1
        clock.check("column generation (allreduce bound master)")
        point = master.float.solve(clock.remaining())
        master.solved()
        if point.status == "time_limit":
            raise TimeLimitReached("column generation (allreduce bound master)")
        if point.status != "optimal":
            return f"HiGHS failed on the allreduce bound master: {point.status}", rounds
        y = point.duals
        pi, y_port, mu = y[:n_dest], y[n_dest:n_dest + n_port], y[n_dest + n_port:]
        link, cpu, _ = space.prices(y_port, exact=False)
        prices, pessimistic = _split(ops, master.rows, ops.cost(link, cpu), mu, n_dest,
                                     clock=clock)

        entered = False
        for d, tasks, _ in pessimistic:
            if _improves(ops, prices[d], tasks, pi[d]):
                entered = master.add(d, tasks) or entered
        probes = [SMOOTHING, 0.0] if center is not None and SMOOTHING else [0.0]
        for alpha in probes:
            if alpha:
                assert center is not None
                at_y = alpha * center[0] + (1 - alpha) * y_port
                at = [alpha * c + (1 - alpha) * q for c, q in zip(center[1], prices,
                                                                  strict=True)]
            else:
                at_y, at = y_port, prices
            least, trees = _price_at(ops, at, clock)
            total = float(sum(least))
            if total > 0:
                bound = float(rhs @ at_y) / min(1.0, total)
                if bound < best:
                    best, center = bound, (at_y, at)
            for d, tasks, _ in trees:
                if _improves(ops, prices[d], tasks, pi[d]):
                    entered = master.add(d, tasks) or entered
            if entered:
                break
        if not entered or rounds >= rounds_left:
            return y, rounds


def _improves(ops: _Operations, price: np.ndarray, tasks: list[Task], pi: float) -> bool:
    """True when the tree ``tasks`` costs less than ``pi`` under the flat ``price``."""
    return float(price[ops.of_tree(tasks)].sum()) < pi - _PRICING_TOLERANCE * max(1.0, abs(pi))


def _zero_point(values: np.ndarray) -> list[Fraction]:
    """The zero point, feasible for every row of the master (the recovery's last resort)."""
    return [Fraction(0)] * len(values)
