"""All-reduce instance structures: the optimal packing and its certificate.

A *structure* is what one all-reduce instance does: a set of sends of partial
results ``v[k,m]`` over links and of reduction tasks ``T_{k,l,m}`` on nodes,
such that every participant ends up holding ``v[0,N-1]``; equivalently, a
union of one reduction tree per destination, operations shared by set union
(a partial result, once made, may be copied and serve several destinations).
Reduce-then-broadcast, butterflies and every mix of them are structures.

**The optimum is a packing of structures.**  Take any schedule, a horizon
``H`` and an instance completed by ``H``.  Follow, for every item a node
holds, how it first came to hold it: its own computation, or received
parts taken in arrival order until they sum to 1 (each from a sender that
already held the item).  Choosing one of those senders at random, each with
probability its part, gives a structure (every destination's result traces
back to the initial values, acyclic by time) whose expected port and CPU
load is at most what the instance actually used.  Summing over the
completed instances, the one-port rows give ``completed(H) / H <= OPT``,
where ``OPT`` is the best weighting ``w_s >= 0`` of structures with
``Σ_s w_s · load_s(row) <= b(row)`` on every send port, receive port, CPU
and link of its own (``b`` from
:class:`~portsim.planners.lp._capacity.PortCapacity` on the port and link
rows, 1 on the CPUs; on a bidirectional platform every ``b`` is 1 and no
link has a row).
Conversely every weighting is a periodic schedule (each structure a
:class:`~portsim.planners.lp._periodic.Unit`, depths as lags).  So ``OPT`` is the
optimal throughput.

**Column generation** (:func:`pack_structures`).  The master program is the
packing over the structures found so far (``TP = Σ w_s``).  Its duals
``y >= 0`` price every operation (a send ``i -> j``: ``size · c(i,j) ·
(y_send(i) + y_recv(j) + y_link(i,j))``, the last on links of their own row
only; a task on ``i``: ``w_i · y_cpu(i)``); a structure of price below 1
improves it.  The pricing program
(:func:`build_pricing_model`) is the bound program of
:mod:`portsim.planners.lp._allreduce` for one instance: 0/1 actual operations ``z``,
one SSR(G) copy per destination with ``send_d <= z``, ``cons_d <= z``,
``TP = 1``, minimising the price of ``z``.  HiGHS solves it as a mixed
integer program (``scipy.optimize.milp``), ``z`` integral; the support of
``z`` holds a reduction tree to every destination.

**Certificate** (:func:`certify`).  Let ``(y, θ)`` be the exact dual of the
final master (``y >= 0`` on the port and CPU rows, ``θ`` on ``TP = Σ w_s``)
and ``p`` an exactly proven lower bound on ``y · load_s`` over every
structure ``s``.  Then ``(y, p)`` is a feasible dual of the packing over
*all* structures, with ``TP`` at most its cap: no packing exceeds
``Σ b·y + cap · max(0, 1 - p)``, nor ``Σ b·y / p`` (``b`` the rows'
right-hand sides).  With ``p >= θ`` this is the
master's own value, so the packing found is optimal.  ``p`` comes from a
best-first branch and bound in exact arithmetic on the pricing program:

- each node's linear relaxation is solved by HiGHS and recovered exactly
  (:func:`portsim.planners.lp._driver.solve_exactly`), whose dual certifies the
  node's lower bound (weak duality with the variables' upper bounds);
- a node closes when that bound reaches ``min(1, θ)``, or when its priced
  operations are all 0 or 1 (a structure: if it costs less, it joins the
  master and the loop repeats);
- otherwise it splits on a sum: a priced link's number of sends, or a
  node's number of tasks, when fractional (a structure's price depends on
  these counts only, so this closes nodes much faster than splitting one
  operation: 3 nodes instead of more than 500 on a four-node platform);
  else on one fractional operation.  Operations of price 0 are free: a
  structure may use them all, so only priced ones need be integral.

A node HiGHS calls infeasible is closed without an exact proof (a node is
infeasible only when its branching rows exclude every structure).  Past
:data:`NODE_LIMIT` nodes or the call's deadline, ``p`` is the least bound of
the open nodes and the result is the certified interval.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from portsim.planners.base import PlanResult
from portsim.planners.lp._allreduce_bound import (
    TP,
    add_copies,
    add_operations,
    tp_cap,
)
from portsim.planners.lp._capacity import PortCapacity, link_row_name
from portsim.planners.lp._driver import NAME, LpOptions, solve_exactly
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._extract import tasks_unit
from portsim.planners.lp._incremental import (
    TOLERANCE,
    MasterFailed,
    MasterPoint,
    RebuiltMaster,
    exact_rounds,
    generate,
)
from portsim.planners.lp._periodic import Unit
from portsim.planners.lp._solve import Deadline, LinearModel
from portsim.planners.lp._ssr import reduction_tasks
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["NODE_LIMIT", "Certificate", "Packing", "Structure", "build_master",
           "build_pricing_model", "canonical", "certify", "dual_bound", "pack_structures",
           "packing_solution", "structure_unit"]

Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)
Structure = tuple[Task, ...]
"""A structure's tasks, each once, producers before consumers (:func:`canonical`)."""

EXACT_REPEATS = 200
"""Cap on the exact rounds (exact master, exact branch-and-bound pricing) after
the first: above the other generations' cap
(:data:`portsim.planners.lp._incremental.EXACT_ROUNDS`), as the packings have
always had it."""

NODE_LIMIT = 500
"""Cap on the branch-and-bound nodes of one certificate."""

_ONE = Fraction(1)
_ZERO = Fraction(0)
_SLACK = "S"

Row = tuple[str, NodeId] | tuple[str, tuple[NodeId, NodeId]]
"""A ``<=`` row of the master: ``("send" | "recv" | "cpu", node)`` or ``("link", (u, v))``."""


# -- structures ---------------------------------------------------------------------------

def canonical(operation: Operation, tasks: Iterable[Task]) -> Structure | None:
    """A structure inside ``tasks``: one producer per held item, only what is used.

    Items become held round by round (the owners' ``v_k`` first; a send once
    its sender holds the item; a task once its node holds both inputs); the
    first producer found is kept (the earliest, not the cheapest; the
    result is a subset of ``tasks``, so it never costs more).  Then only the
    producers that some participant's ``v[0,N-1]`` traces back to are kept.

    Returns
    -------
    Structure or None
        The tasks, producers first; ``None`` when some participant never
        holds the result.

    Examples
    --------
    Two participants: A sends ``v_0`` to B, B reduces and sends the result
    back; a useless send of ``v_1`` to A is dropped.

    >>> from portsim.simulator.operations import OperationKind
    >>> op = Operation(OperationKind.ALLREDUCE, participants=("A", "B"))
    >>> canonical(op, [("send", "B", "A", 0, 1), ("cons", "B", 0, 0, 1),
    ...                ("send", "A", "B", 0, 0), ("send", "B", "A", 1, 1)])
    (('send', 'A', 'B', 0, 0), ('cons', 'B', 0, 0, 1), ('send', 'B', 'A', 0, 1))
    """
    parts = operation.participants
    n = len(parts)
    held: dict[tuple[NodeId, int, int], Task | None] = {(p, i, i): None
                                                        for i, p in enumerate(parts)}
    order: list[Task] = []
    pending = sorted(set(tasks))
    progress = True
    while pending and progress:
        progress = False
        rest: list[Task] = []
        made: list[tuple[tuple[NodeId, int, int], Task]] = []
        for task in pending:
            if task[0] == "send":
                _, u, v, k, m = task
                ready, out = (u, k, m) in held, (v, k, m)
            else:
                _, node, k, l_, m = task
                ready = (node, k, l_) in held and (node, l_ + 1, m) in held
                out = (node, k, m)
            if out in held:
                continue  # held already: a second producer is never needed
            if ready:
                made.append((out, task))
            else:
                rest.append(task)
        for out, task in made:  # a round's outputs count from the next round on
            if out not in held:
                held[out] = task
                order.append(task)
                progress = True
        pending = rest
    needed: set[Task] = set()
    stack: list[tuple[NodeId, int, int]] = []
    for d in parts:
        if (d, 0, n - 1) not in held:
            return None
        stack.append((d, 0, n - 1))
    while stack:
        producer = held[stack.pop()]
        if producer is None or producer in needed:
            continue
        needed.add(producer)
        if producer[0] == "send":
            _, u, _, k, m = producer
            stack.append((u, k, m))
        else:
            _, node, k, l_, m = producer
            stack.extend([(node, k, l_), (node, l_ + 1, m)])
    return tuple(t for t in order if t in needed)


def structure_unit(weight: Fraction, structure: Structure) -> Unit:
    """A structure as a weighted :class:`Unit`: each task one deeper than its inputs' producers."""
    return tasks_unit(weight, structure)


def _rows(platform: Platform, capacity: PortCapacity) -> list[tuple[Row, Fraction]]:
    """The master's ``<=`` rows and their right-hand sides, in order.

    Send port, receive port, CPU, per node; then one row per link of
    :attr:`PortCapacity.links` (none on a bidirectional platform).
    """
    rhs = {"send": capacity.send, "recv": capacity.receive}
    nodes: list[tuple[Row, Fraction]] = [
        ((kind, node), rhs[kind][node] if kind in rhs else _ONE)
        for node in platform.node_ids for kind in ("send", "recv", "cpu")]
    return [*nodes, *((("link", e), _ONE) for e in capacity.links)]


def _loads(platform: Platform, operation: Operation, structure: Structure,
           own_row: frozenset[tuple[NodeId, NodeId]]) -> dict[Row, Fraction]:
    """Busy time of each port, CPU and link of its own row per instance of ``structure``."""
    out: dict[Row, Fraction] = {}
    for task in structure:
        if task[0] == "send":
            busy = operation.size * platform.cost(task[1], task[2])
            out["send", task[1]] = out.get(("send", task[1]), _ZERO) + busy
            out["recv", task[2]] = out.get(("recv", task[2]), _ZERO) + busy
            link = (task[1], task[2])
            if link in own_row:
                out["link", link] = out.get(("link", link), _ZERO) + busy
        else:
            w = platform.compute_time(task[1])
            if w:
                out["cpu", task[1]] = out.get(("cpu", task[1]), _ZERO) + w
    return out


def build_master(platform: Platform, operation: Operation,
                 structures: Sequence[Structure]) -> LinearModel:
    """The packing over ``structures``: maximise ``TP = Σ w_s`` under the port and CPU rows.

    Variable keys: ``"TP"`` and ``("w", s)``; the ``<=`` rows follow :func:`_rows`
    (right-hand sides of :class:`PortCapacity`).
    """
    cap = tp_cap(platform, operation)
    capacity = PortCapacity.of(platform)
    rows = _rows(platform, capacity)
    model = LinearModel()
    tp = model.variable(TP, upper=cap)
    model.objective = tp
    total = {tp: _ONE}
    coeffs: dict[Row, dict[int, Fraction]] = {r: {} for r, _ in rows}
    for s, structure in enumerate(structures):
        j = model.variable(("w", s), upper=cap)
        total[j] = -_ONE
        for row, busy in _loads(platform, operation, structure, capacity.own_row).items():
            coeffs[row][j] = busy
    model.add(total, "==", _ZERO, "TP is the structures' total weight")
    for (kind, where), rhs in rows:
        name = (link_row_name(where) if kind == "link"  # type: ignore[arg-type]
                else f"{kind}:{where}")
        model.add(coeffs[kind, where], "<=", rhs, name)  # type: ignore[index]
    return model


# -- pricing ------------------------------------------------------------------------------

def _task_of(key: tuple) -> Task:  # type: ignore[type-arg]
    """The task of an actual-operation variable key (``("x", ...)`` or ``("y", ...)``)."""
    return ("send", *key[1:]) if key[0] == "x" else ("cons", *key[1:])


def _prices(platform: Platform, operation: Operation, y: Mapping[Row, Fraction],
            model: LinearModel, ops_columns: Iterable[int]) -> dict[int, Fraction]:
    """The price of each actual-operation column under the master's duals ``y``."""
    out: dict[int, Fraction] = {}
    for j in ops_columns:
        task = _task_of(model.keys[j])  # type: ignore[arg-type]
        if task[0] == "send":
            busy = operation.size * platform.cost(task[1], task[2])
            out[j] = busy * (y.get(("send", task[1]), _ZERO) + y.get(("recv", task[2]), _ZERO)
                             + y.get(("link", (task[1], task[2])), _ZERO))
        else:
            out[j] = platform.compute_time(task[1]) * y.get(("cpu", task[1]), _ZERO)
    return out


@dataclass(frozen=True)
class PricingModel:
    """The pricing program of one instance and where its parts are.

    Attributes
    ----------
    model:
        Maximises ``S = C - Σ price · z`` (``C`` the total price, so ``S >= 0``).
    priced:
        ``column -> price`` of the actual operations with a positive price:
        only their integrality matters.
    free:
        Every operation of price 0 (unpriced sends and tasks, and every task
        on a node that computes for free): a structure may use them all.
    total:
        ``C``.
    groups:
        The priced columns of each link and of each node's CPU: a
        structure's price depends only on these counts, so the branch and
        bound splits on them first.
    """

    model: LinearModel
    priced: dict[int, Fraction]
    free: tuple[Task, ...]
    total: Fraction
    groups: tuple[tuple[int, ...], ...]


Branch = tuple[tuple[int, ...], str, int]
"""A branching row: ``Σ z[columns] <= value`` (``"<="``) or ``>= value`` (``">="``)."""


def build_pricing_model(platform: Platform, operation: Operation,
                        y: Mapping[Row, Fraction],
                        branches: Sequence[Branch] = ()) -> PricingModel:
    """The least-price structure program (linear relaxation) under the master's duals ``y``.

    Parameters
    ----------
    y:
        ``(kind, node) -> dual`` of the master's rows (``kind`` in ``send``,
        ``recv``, ``cpu``; ``("link", (u, v))`` for a link row), all ``>= 0``.
    branches:
        The branch-and-bound rows on sums of ``z`` (a link's sends, a
        node's tasks, or one operation).
    """
    model = LinearModel()
    tp = model.variable(TP, upper=_ONE)
    ops = add_operations(model, platform, operation, unit=True)
    add_copies(model, platform, operation, ops, tp, cap=_ONE)
    model.add({tp: _ONE}, "==", _ONE, "one instance")
    prices = _prices(platform, operation, y, model, [*ops.x.values(), *ops.y.values()])
    priced = {j: p for j, p in prices.items() if p}
    total = sum(priced.values(), _ZERO)
    slack = model.variable(_SLACK, upper=total)
    model.objective = slack
    model.add({**priced, slack: _ONE}, "==", total, "S + price = C")
    for columns, sense, value in branches:
        sign = _ONE if sense == "<=" else -_ONE
        model.add(dict.fromkeys(columns, sign), "<=", sign * value,
                  f"branch: {len(columns)} operation(s) {sense} {value}")
    free = [_task_of(model.keys[j]) for j, p in prices.items() if not p]  # type: ignore[arg-type]
    free.extend(("cons", node, k, l_, m) for node in platform.processors
                if platform.compute_time(node) == 0
                for k, l_, m in reduction_tasks(len(operation.participants)))
    groups: dict[tuple[NodeId, ...], list[int]] = defaultdict(list)
    for j in priced:
        key = model.keys[j]
        groups[key[1:3] if key[0] == "x" else key[1:2]].append(j)  # type: ignore[index]
    return PricingModel(model, priced, tuple(free), total,
                        tuple(tuple(g) for _, g in sorted(groups.items())))


def _structure_from(operation: Operation, pricing: PricingModel,
                    values: Sequence[float] | Sequence[Fraction]) -> Structure | None:
    """The structure held by ``z``: its priced operations at 1, and every free one."""
    keys = pricing.model.keys
    tasks = [_task_of(keys[j]) for j in pricing.priced if values[j] > 0.5]  # type: ignore[arg-type]
    return canonical(operation, [*tasks, *pricing.free])


def _milp_price(platform: Platform, operation: Operation,
                y: Mapping[Row, Fraction], deadline: Deadline
                ) -> tuple[float, Structure | None]:
    """The least price of a structure (HiGHS mixed integer program), and the structure.

    ``(inf, None)`` when HiGHS returns no solution; the exact branch and bound
    of :func:`certify` still runs after the column generation.
    """
    pricing = build_pricing_model(platform, operation, y)
    model = pricing.model
    a_ub, b_ub, a_eq, b_eq = model.matrices()
    n = model.n_variables
    c = np.zeros(n)
    c[model.objective] = -1.0
    integrality = np.zeros(n)
    integrality[list(pricing.priced)] = 1
    constraints = [LinearConstraint(a_eq, b_eq, b_eq)]
    if a_ub.shape[0]:
        constraints.append(LinearConstraint(a_ub, -np.inf, b_ub))
    remaining = deadline.remaining()
    options = {} if remaining is None else {"time_limit": max(remaining, 1e-3)}
    res = milp(c, constraints=constraints, integrality=integrality,
               bounds=Bounds(np.zeros(n), np.array([float(u) for u in model.upper])),
               options=options)
    deadline.check("pricing (mixed integer program) of the allreduce structures")
    if res.x is None:  # HiGHS found no structure: the exact certificate decides
        return math.inf, None
    price = float(pricing.total) - float(res.x[model.objective])
    return price, _structure_from(operation, pricing, res.x)


# -- certificate --------------------------------------------------------------------------

@dataclass(frozen=True)
class Certificate:
    """A proven lower bound on the price of every structure.

    Attributes
    ----------
    least:
        Every structure costs at least this under the duals (the threshold
        when the branch and bound closed every node).
    nodes:
        Branch-and-bound nodes solved.
    found:
        A structure priced below the threshold, when one turned up (the master
        can improve).
    """

    least: Fraction
    nodes: int
    found: Structure | None = None


def certify(platform: Platform, operation: Operation, y: Mapping[Row, Fraction],
            options: LpOptions, *, deadline: Deadline, threshold: Fraction = _ONE,
            node_limit: int = NODE_LIMIT) -> Certificate:
    """Prove, in exact arithmetic, that no structure costs less than ``threshold`` under ``y``.

    Best-first branch and bound on the pricing program; each node's relaxation
    is recovered exactly and its dual bounds the node (weak duality).  Past
    ``node_limit`` nodes or the deadline the certificate is partial
    (``least < threshold``); it never raises.

    Examples
    --------
    Two nodes, links of cost 1, compute time 1: a structure sends at least
    one message into each node, so under the duals ``y = 1/2`` on both
    receive ports every structure costs at least 1.

    >>> from portsim.simulator.operations import OperationKind
    >>> from portsim.planners.lp._solve import Deadline
    >>> p = Platform.build({"A": 1, "B": 1}, [("A", "B", 1), ("B", "A", 1)])
    >>> op = Operation(OperationKind.ALLREDUCE).resolve(p)
    >>> y = {("recv", "A"): Fraction(1, 2), ("recv", "B"): Fraction(1, 2)}
    >>> certify(p, op, y, LpOptions(), deadline=Deadline.after(None)).least
    Fraction(1, 1)
    """
    counter = 0
    heap: list[tuple[Fraction, int, tuple[Branch, ...]]] = [(_ZERO, 0, ())]
    nodes = 0
    while heap:
        bound, _, branches = heapq.heappop(heap)
        if nodes >= node_limit or deadline.expired:
            return Certificate(min(bound, threshold), nodes)
        nodes += 1
        pricing = build_pricing_model(platform, operation, y, branches)
        solved = solve_exactly(pricing.model, options, what="allreduce pricing",
                               deadline=deadline)
        if isinstance(solved, PlanResult):
            if solved.status == "infeasible":
                continue  # no structure under these branches
            return Certificate(min(bound, threshold), nodes)  # time limit or solver failure
        lower = pricing.total - solved.upper  # no structure here costs less
        if lower >= threshold:
            continue
        values = solved.values
        split = _branching(pricing, values)
        if split is None:  # every priced operation is 0 or 1: a structure
            structure = _structure_from(operation, pricing, values)
            if structure is not None and pricing.total - solved.lower < threshold:
                return Certificate(min(lower, threshold), nodes, structure)
            # (exact, the structure costs ``lower`` < threshold and returned above;
            # else the bound is an interval and nothing is left to split)
            return Certificate(min(lower, threshold), nodes)
        columns, amount = split
        for row in ((columns, "<=", math.floor(amount)), (columns, ">=", math.ceil(amount))):
            counter += 1
            heapq.heappush(heap, (lower, counter, (*branches, row)))
    return Certificate(threshold, nodes)


def _branching(pricing: PricingModel, values: Sequence[Fraction]
               ) -> tuple[tuple[int, ...], Fraction] | None:
    """What to split on: a link or CPU whose count is fractional, else a fractional operation.

    The most priced fractional count first (its ``price · distance`` to the
    nearest integer), then the operation nearest 1/2.
    """
    best: tuple[Fraction, tuple[int, ...], Fraction] | None = None
    for group in pricing.groups:
        amount = sum((values[j] for j in group), _ZERO)
        if amount.denominator != 1:
            gap = min(amount - math.floor(amount), math.ceil(amount) - amount)
            score = gap * pricing.priced[group[0]]
            if best is None or score > best[0]:
                best = (score, group, amount)
    if best is not None:
        return best[1], best[2]
    fractional = [j for j in pricing.priced if values[j].denominator != 1]
    if not fractional:
        return None
    j = min(fractional, key=lambda c: abs(values[c] - Fraction(1, 2)))
    return (j,), values[j]


# -- the packing --------------------------------------------------------------------------

@dataclass(frozen=True)
class Packing:
    """The best packing found, its exact value and its certified upper bound.

    Attributes
    ----------
    weights:
        ``(weight, structure)`` with positive weights; their sum is ``lower``.
    lower:
        The packing's throughput (a schedule achieves it).
    upper:
        No schedule beats it (``Σ b·y / least`` of the certificate, :func:`_upper`).
    rounds, nodes:
        Column-generation rounds, branch-and-bound nodes.
    """

    weights: tuple[tuple[Fraction, Structure], ...]
    lower: Fraction
    upper: Fraction
    rounds: int
    nodes: int


def _duals(platform: Platform, y_ub: Iterable[object], *, exact: bool
           ) -> dict[Row, Fraction]:
    """The master's ``<=`` duals by row (:func:`_rows`), positive ones only.

    Exact duals are kept as they are; float ones are rationalised (they only
    steer the mixed integer pricing, never a certificate).
    """
    out: dict[Row, Fraction] = {}
    rows = [row for row, _ in _rows(platform, PortCapacity.of(platform))]
    for row, value in zip(rows, y_ub, strict=True):
        q = (value if exact and isinstance(value, Fraction)
             else Fraction(float(value)).limit_denominator(10**9))  # type: ignore[arg-type]
        if q > 0:
            out[row] = q
    return out


def pack_structures(platform: Platform, operation: Operation, start: Sequence[Structure],
                    options: LpOptions, *, deadline: Deadline) -> Packing | PlanResult:
    """Column generation over structures from ``start``, then the exact certificate.

    Parameters
    ----------
    start:
        Initial structures (the reduce-then-broadcast instances), not empty.

    Returns
    -------
    Packing or PlanResult
        A :class:`PlanResult` when a master program fails.

    Raises
    ------
    TimeLimitReached
        When the deadline passes during the column generation.
    """
    structures = list(dict.fromkeys(start))

    def price(point: MasterPoint) -> bool:
        # Rows: ``TP = Σ w_s`` first, then the ``<=`` rows of :func:`_rows`.
        y = _duals(platform, point.duals[1:], exact=False)
        cost, structure = _milp_price(platform, operation, y, deadline)
        if structure is None or cost >= float(point.duals[0]) - TOLERANCE \
                or structure in structures:
            return False
        structures.append(structure)
        return True

    try:
        # Rebuilt every round, not warm-started: measured on 15 random
        # platforms of 3 to 5 nodes, an IncrementalMaster gives the same
        # bounds with other (equally optimal) structures on 3 of them.
        rounds = generate(RebuiltMaster(lambda: build_master(platform, operation, structures),
                                        "highs-ds"), price, deadline=deadline,
                          phase="column generation (allreduce structures)")
    except MasterFailed as failure:
        return PlanResult.error(NAME, f"allreduce structure master: {failure.status}")
    nodes = 0
    for number in exact_rounds(
            deadline=deadline, max_rounds=1 + EXACT_REPEATS,
            phase="the build of the allreduce structure master model (before HiGHS started)"):
        model = build_master(platform, operation, structures)
        master = solve_exactly(model, options, what="allreduce structure master",
                               deadline=deadline)
        if isinstance(master, PlanResult):
            return master
        y = _duals(platform, master.y_ub, exact=True)
        threshold = min(_ONE, master.y_eq[0])  # the dual of TP = Σ w_s
        cert = certify(platform, operation, y, options, deadline=deadline,
                       threshold=threshold)
        nodes += cert.nodes
        if cert.found is None or cert.found in structures or number > EXACT_REPEATS:
            break
        structures.append(cert.found)  # HiGHS missed it; the exact search did not
    if isinstance(master, PlanResult):  # pragma: no cover - returned in the loop
        return master
    weights = tuple((master.values[model.index["w", s]], structure)
                    for s, structure in enumerate(structures)
                    if master.values[model.index["w", s]] > 0)
    return Packing(weights, master.lower,
                   dual_bound(platform, operation, y, cert.least, master), rounds, nodes)


def dual_bound(platform: Platform, operation: Operation, y: Mapping[Row, Fraction],
               least: Fraction, master: ExactSolution) -> Fraction:
    """The certified upper end from duals ``y`` and a proven least structure price.

    Every structure has reduced cost ``y · load - least >= 0`` in the full
    packing, so ``(y, least)`` is a feasible dual of it with ``TP <= cap``:
    ``Σ b·y + cap · max(0, 1 - least)``; also ``Σ_s w_s <= Σ b·y / least``
    (``b`` the rows' right-hand sides, :func:`_rows`).  Where ``least <= 0``
    (the branch and bound proved nothing: stopped by the time limit at its
    first node) only the first holds, ``Σ b·y + cap · (1 - least)``.  It was
    the master's own optimum, a bound on the structures found only: an
    allreduce over eight multiport:2 nodes with every time 10^6, its pricing
    cut by the time limit of 40 s, claimed an optimum 3% under what
    reduce-then-broadcast carries in seconds.
    """
    cap = tp_cap(platform, operation)
    rhs = dict(_rows(platform, PortCapacity.of(platform)))
    total = sum((rhs[row] * value for row, value in y.items()), _ZERO)
    if least <= 0:
        return max(total + cap * (1 - least), master.lower)
    return max(min(total / least, total + cap * max(_ZERO, 1 - least)), master.lower)


def packing_solution(packing: Packing, bound: ExactSolution) -> ExactSolution:
    """The result's exact solution: the packing's value, the tighter of the two upper ends."""
    upper = max(min(packing.upper, bound.upper), packing.lower)
    return ExactSolution([], packing.lower, upper, bound.y_ub, bound.y_eq,
                         "structure packing" if upper == packing.lower else "interval",
                         bound.notes)
