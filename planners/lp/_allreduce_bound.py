"""Series of all-reduces: the upper-bound program (per-destination SSR(G) copies).

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
shared, not summed); port rows ``Σ size·c·x <= k`` on every send port
and every receive port (``k`` and the per-link rows ``size·c·x(link) <= 1``
from :class:`~portsim.planners.lp._capacity.PortCapacity`: all 1 and no link
row on a bidirectional platform); CPU rows ``Σ w·y <= 1``; and the gossip
rows of :mod:`portsim.planners.lp._gossip`, one per partition of
:func:`~portsim.planners.lp._gossip.gossip_partitions`: the actual sends into
its groups are at least ``(2g - 2) TP`` (a few rows; the copies share their
sends, so they do not imply them: on a fat tree they lower the bound).

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
not overlap in ``[0, H]``; under ``multiport:k`` (and ``multiport``) a node
runs at most ``k`` sends and ``k`` receives at once, each on its own link,
and a link one transfer at a time, so the port sums stay below ``k·H`` and
each link's below ``H``; every completed instance made at least ``2g - 2``
entries into the groups of each partition, each a message's worth of sends
into a group (:mod:`portsim.planners.lp._gossip`).  Hence ``completed(H) <=
TP* · H`` for every ``H``; ``tests/test_lp_allreduce.py`` checks it against a
brute force over every union of per-destination reduction trees on tiny
platforms.

*Size.*  ``N`` copies of SSR(G): about ``N · (|E| N²/2 + n N³/6)``
variables and as many coupling rows, solved by HiGHS (interior point above
2,000 variables) and recovered exactly from the basis.  Measured on random
platforms of degree 3 (every node a participant): N = 6 in 0.8 s, N = 8 in
5 s, N = 10 (35,611 variables) in about 30 s, of which 22 s is the bound;
beyond that, set ``time_limit``.  The same program solved as a packing of
per-destination reduction trees by column generation
(:mod:`portsim.planners.lp._allreduce_columns`, ``method="columns"`` of
:func:`allreduce_bound`) gives the same certified value without the gossip
rows (it cannot hold them: they are not per destination), but is slower on
every size measured (its master program is very degenerate): it is not the
default.

The program is a relaxation: where no schedule reaches it,
:mod:`portsim.planners.lp._allreduce_packing` finds the exact optimum.  Its parts
(:func:`add_operations`, :func:`add_copies`) also build that module's
pricing program, the same rows for one instance.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fractions import Fraction

from portsim.planners.base import PlanResult
from portsim.planners.lp._allreduce_columns import allreduce_trees
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import NAME, LpOptions, solve_exactly, time_limit_error
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._gossip import add_gossip_rows, gossip_partitions
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached
from portsim.planners.lp._ssr import (
    conserve_send,
    conserve_task,
    receive_capacity,
    reduction_tasks,
    ssr_sends,
)
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["BOUND_METHODS", "OTHERS", "TP", "SharedOperations", "add_copies",
           "add_operations", "add_receive_cuts", "allreduce_bound",
           "build_allreduce_bound_model", "relaxation_size", "restricted_size", "tp_cap"]

TP = "TP"

_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)


def tp_cap(platform: Platform, operation: Operation) -> Fraction:
    """A cap on TP: the least receive capacity of a participant (messages per time unit).

    Every participant must receive at least one message per instance (``N >= 2``),
    so TP is at most the smallest receive capacity of a participant.
    """
    receive = receive_capacity(platform, operation.size)
    return min(receive[p] for p in operation.participants)


OTHERS = ("local", "cuts")
"""How a restricted relaxation keeps the destinations without a whole copy:
``local`` (the rows of their own node, :func:`add_copies`) or ``cuts`` (one
row per other participant's index, :func:`add_receive_cuts`: no variable)."""


def build_allreduce_bound_model(platform: Platform, operation: Operation, *,
                                full: Collection[NodeId] | None = None,
                                others: str = "local", gossip: bool = True) -> LinearModel:
    """The upper-bound program: one SSR(G) copy per destination over shared operations.

    Parameters
    ----------
    platform:
        A platform without unidirectional nodes (port sums, :class:`PortCapacity`).
    operation:
        A resolved, non-commutative allreduce with at least two participants.
    full:
        The destinations whose copy is whole (default: every participant, the
        relaxation itself).  Each other destination keeps only the rows of its
        own node (:func:`add_copies`): the program is then a *restricted
        relaxation*, the relaxation with rows dropped, so its value is an
        upper bound too, at or above the relaxation's.
    others:
        One of :data:`OTHERS`: with ``cuts``, each destination without a whole
        copy keeps, instead of its own node's rows, their sum per index
        (:func:`add_receive_cuts`), a weaker bound without variables.
    gossip:
        Add the gossip rows (:func:`~portsim.planners.lp._gossip.add_gossip_rows`);
        without them the program is RR-4872's per-destination relaxation alone,
        the one :mod:`portsim.planners.lp._allreduce_columns` solves as a
        packing of trees.

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

    >>> from portsim.simulator.operations import OperationKind
    >>> from portsim.planners.lp._solve import solve_float
    >>> p = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    >>> op = Operation(OperationKind.ALLREDUCE).resolve(p)
    >>> m = build_allreduce_bound_model(p, op)
    >>> round(float(solve_float(m).x[m.objective]), 9)
    1.0
    """
    cap = tp_cap(platform, operation)
    model = LinearModel()
    tp = model.variable(TP, upper=cap)
    model.objective = tp
    ops = add_operations(model, platform, operation, unit=False)
    if others not in OTHERS:
        raise ValueError(f"others {others!r}: expected one of {OTHERS}")
    local = others == "local"
    add_copies(model, platform, operation, ops, tp, cap=cap, full=full, local=local)
    if not local and full is not None:
        add_receive_cuts(model, operation, ops, tp,
                         [d for d in operation.participants if d not in full])
    capacity = PortCapacity.of(platform)
    capacity.add_node_rows(model, ops.out_port, ops.in_port,
                           names=("one-port send of {}", "one-port receive of {}"))
    for node, coeffs in ops.cpu.items():
        model.add(coeffs, "<=", _ONE, f"computation of {node}")
    capacity.add_link_rows(model, ops.link_port)  # none on a bidirectional platform
    if gossip:
        add_gossip_rows(model, ((key[:2], j) for key, j in ops.x.items()), tp,
                        gossip_partitions(platform, operation))
    return model


@dataclass(frozen=True)
class SharedOperations:
    """The *actual* operation variables of an allreduce model and their port loads.

    Attributes
    ----------
    x:
        ``(i, j, k, m) -> column`` of the send of ``v[k,m]`` over ``i -> j``
        (never ``v_k`` into its owner).
    y:
        ``(node, k, l, m) -> column`` of ``T_{k,l,m}`` on ``node``, on nodes
        with a positive compute time only (a free computation needs no row).
    out_port, in_port, cpu:
        Busy time per unit of each variable, per node.
    link_port:
        Busy time per unit of each send on the links that need their own
        row (:attr:`PortCapacity.links <portsim.planners.lp._capacity.PortCapacity>`).
    """

    x: dict[tuple[NodeId, NodeId, int, int], int]
    y: dict[tuple[NodeId, int, int, int], int]
    out_port: dict[NodeId, dict[int, Fraction]]
    in_port: dict[NodeId, dict[int, Fraction]]
    cpu: dict[NodeId, dict[int, Fraction]]
    link_port: dict[tuple[NodeId, NodeId], dict[int, Fraction]]


def add_operations(model: LinearModel, platform: Platform, operation: Operation, *,
                   unit: bool) -> SharedOperations:
    """Declare the actual sends ``x`` and computations ``y`` of ``model``.

    With ``unit`` each is at most 1 (one instance: a 0/1 choice, the pricing
    program of :mod:`portsim.planners.lp._allreduce_packing`); otherwise at most
    what its port or CPU can do per time unit (the bound program).
    """
    n = len(operation.participants)
    cap = tp_cap(platform, operation)
    ops = SharedOperations({}, {}, defaultdict(dict), defaultdict(dict), defaultdict(dict),
                           defaultdict(dict))
    own_row = PortCapacity.of(platform).own_row
    for u, v, k, m, busy in ssr_sends(platform, operation):  # never v_k into its owner
        j = ops.x[u, v, k, m] = model.variable(("x", u, v, k, m),
                                               upper=_ONE if unit else 1 / busy)
        ops.out_port[u][j] = busy
        ops.in_port[v][j] = busy
        if (u, v) in own_row:
            ops.link_port[u, v][j] = busy
    tasks = reduction_tasks(n)
    for node in platform.processors:
        w = platform.compute_time(node)
        if w > 0:  # a free computation needs no CPU row, so no shared variable
            for k, l_, m in tasks:
                j = ops.y[node, k, l_, m] = model.variable(
                    ("y", node, k, l_, m), upper=_ONE if unit else min(cap, 1 / w))
                ops.cpu[node][j] = w
    return ops


def add_copies(model: LinearModel, platform: Platform, operation: Operation,
               ops: SharedOperations, tp: int, *, cap: Fraction,
               full: Collection[NodeId] | None = None, local: bool = True) -> None:
    """One SSR(G) copy per destination ``d`` (``send_d <= x``, ``cons_d <= y``) at rate ``tp``.

    ``cap`` bounds each ``cons_d`` (a trace uses a task at most once per instance).
    With ``full``, the copy of a destination ``d`` not in it is *local*: only
    the conservation rows of ``d``'s own node, with the variables in them, its
    sends into and out of ``d`` (each at most the actual send) and its tasks
    on ``d``.  The copy's other variables would then appear in no row but
    their ``<= x`` and ``<= y`` ones and are left out (zero).  So a local copy
    says: ``d`` builds ``v[0,N-1]`` at rate ``tp`` from what it receives and
    computes itself.  Dropping rows only relaxes the program.
    Without ``local``, the destinations not in ``full`` get no copy at all.
    """
    parts = operation.participants
    n = len(parts)
    owner = {p: i for i, p in enumerate(parts)}
    tasks = reduction_tasks(n)
    for d in parts:
        whole = full is None or d in full
        if not whole and not local:
            continue
        balance: dict[tuple[NodeId, int, int], dict[int, Fraction]] = defaultdict(dict)
        for (u, v, k, m), xj in ops.x.items():
            if u == d and (k, m) == (0, n - 1):
                continue  # the result never leaves d in d's trace
            if not whole and d not in (u, v):
                continue  # a local copy: the sends into and out of d only
            j = model.variable(("send", d, u, v, k, m), upper=model.upper[xj])
            conserve_send(balance, j, u, v, k, m)
            model.add({j: _ONE, xj: _MINUS_ONE}, "<=", Fraction(0),
                      f"copy {d}: send {u}->{v} v[{k},{m}] is an actual send")
        for node in platform.processors:
            if not whole and node != d:
                continue
            for k, l_, m in tasks:
                j = model.variable(("cons", d, node, k, l_, m), upper=cap)
                conserve_task(balance, j, node, k, l_, m)
                yj = ops.y.get((node, k, l_, m))
                if yj is not None:
                    model.add({j: _ONE, yj: _MINUS_ONE}, "<=", Fraction(0),
                              f"copy {d}: T[{k},{l_},{m}] on {node} is an actual task")
        for (node, k, m), coeffs in balance.items():
            if k == m and owner.get(node) == k:
                continue  # v_k on its owner: unlimited
            if not whole and node != d:
                continue  # a local copy keeps d's rows only
            if node == d and (k, m) == (0, n - 1):
                row = dict(coeffs)
                row[tp] = _MINUS_ONE
                model.add(row, "==", Fraction(0), f"throughput (11) at {d}")
            else:
                model.add(coeffs, "==", Fraction(0),
                          f"copy {d}: conservation (10) of v[{k},{m}] at {node}")
        if (d, 0, n - 1) not in balance:
            model.add({tp: _ONE}, "==", Fraction(0), f"no way to build the result at {d}")


def add_receive_cuts(model: LinearModel, operation: Operation, ops: SharedOperations,
                     tp: int, destinations: Sequence[NodeId]) -> None:
    """For each destination ``d`` and index ``i`` of another participant: the actual
    sends into ``d`` of intervals holding ``i`` are at least ``tp``.

    ``d`` starts an instance with ``v_d`` alone, and every partial result it
    combines is one it received or made from what it holds; so each other
    index ``i`` reaches ``d`` inside some received ``v[k,m]``, ``k <= i <= m``,
    once an instance at least, in a message of that instance.  Summed over
    the instances completed by a horizon, that is this row: it holds for
    every schedule.  (It is also the sum, over the intervals holding ``i``,
    of the rows of ``d``'s own node in ``d``'s copy: weaker than those rows.)
    """
    parts = operation.participants
    into: dict[NodeId, list[tuple[int, int, int]]] = defaultdict(list)
    for (_, v, k, m), xj in ops.x.items():
        into[v].append((k, m, xj))
    for d in destinations:
        mine = parts.index(d)
        for i in range(len(parts)):
            if i == mine:
                continue
            row = {xj: _MINUS_ONE for k, m, xj in into[d] if k <= i <= m}
            row[tp] = _ONE
            model.add(row, "<=", Fraction(0), f"{d} receives index {i} once an instance")


def relaxation_size(platform: Platform, operation: Operation) -> int:
    """Variables of :func:`build_allreduce_bound_model`, counted without building it:
    :func:`restricted_size` with every copy whole."""
    return restricted_size(platform, operation, operation.participants)


def restricted_size(platform: Platform, operation: Operation,
                    full: Sequence[NodeId], others: str = "local") -> int:
    """Variables of :func:`build_allreduce_bound_model` with whole copies for ``full``,
    counted without building it.

    ``TP``; every send of :func:`~portsim.planners.lp._ssr.ssr_sends` (each
    interval ``v[k,m]`` over each link, never ``v_k`` into its owner) and every
    task ``T_{k,l,m}`` on a node of positive compute time, once as the actual
    operation; a whole copy holds every send but the result's out of its
    destination and every task on every processor; a local copy, the sends
    into and out of its destination (but the result's out) and the tasks on
    it (``others="local"``); receive cuts, none.  Counted per link, not
    listed: listing the sends held 8.4 million tuples (about 800 MiB and 4 s)
    for 64 participants on a complete platform.
    """
    parts = operation.participants
    n = len(parts)
    pairs = n * (n + 1) // 2
    graph = platform.graph
    whole = set(full)
    owners = set(parts)

    def on_link(v: NodeId) -> int:  # the sends over a link into v: never v_k into its owner
        return pairs - (v in owners)

    sends = sum(on_link(v) for _, v in graph.edges)
    tasks = (n - 1) * n * (n + 1) // 6  # k <= l < m: len(reduction_tasks(n))
    processors = set(platform.processors)
    timed = sum(1 for node in processors if platform.compute_time(node) > 0)
    size = 1 + sends + tasks * timed
    for d in parts:
        if d in whole:
            size += sends - graph.out_degree(d) + tasks * len(processors)
        elif others == "local":
            size += (sum(on_link(v) for _, v in graph.in_edges(d))
                     + sum(on_link(v) - 1 for _, v in graph.out_edges(d))
                     + (tasks if d in processors else 0))
    return size


BOUND_METHODS = ("whole", "columns")
"""How :func:`allreduce_bound` solves the program: ``whole`` (the model of
:func:`build_allreduce_bound_model`, by HiGHS) or ``columns`` (per-destination
reduction trees by column generation,
:func:`~portsim.planners.lp._allreduce_columns.allreduce_trees`)."""


def allreduce_bound(platform: Platform, operation: Operation, options: LpOptions, *,
                    deadline: Deadline | None = None, method: str = "whole"
                    ) -> ExactSolution | PlanResult:
    """Solve :func:`build_allreduce_bound_model` exactly (or a certified interval).

    Parameters
    ----------
    platform, operation:
        As :func:`build_allreduce_bound_model`.
    options:
        The ``lp`` options (HiGHS method, time limit).
    deadline:
        The call's deadline (default: :meth:`LpOptions.clock`).
    method:
        One of :data:`BOUND_METHODS`.  ``whole`` holds the gossip rows, the
        tree packing of ``columns`` does not: without them both give the same
        certified value, so ``whole``'s is at most ``columns``' (lower where
        a gossip row binds, e.g. on a fat tree).  ``whole`` is the default:
        that, and it is the faster one on every size measured so far
        (``benchmarks/lp_allreduce.py --bound-only``).

    Returns
    -------
    ExactSolution or PlanResult
        ``upper`` is a certified upper bound on the throughput of every
        schedule; a :class:`PlanResult` says why the solve failed.

    Raises
    ------
    ValueError
        For a ``method`` not in :data:`BOUND_METHODS`.

    Notes
    -----
    Only the upper end matters here (the schedule gives the lower one).  When
    the exact recovery fails (seen once: N = 7, the basis HiGHS's crossover
    returned did not solve exactly), the zero point, feasible for every row,
    is the primal, and the upper end is the rationalised dual's certified
    bound, a hair above the optimum; the structure packing then decides.
    """
    if method not in BOUND_METHODS:
        raise ValueError(f"allreduce bound method {method!r}: expected one of {BOUND_METHODS}")
    if method == "columns":
        clock = deadline if deadline is not None else options.clock()
        try:
            found = allreduce_trees(platform, operation, deadline=clock)
        except TimeLimitReached as stop:
            return time_limit_error(options, f"{stop.phase} of the allreduce bound")
        if isinstance(found, str):
            return PlanResult.error(NAME, f"allreduce bound: {found}")
        return found
    model = build_allreduce_bound_model(platform, operation)
    zero = [Fraction(0)] * model.n_variables
    return solve_exactly(model, options, what="allreduce bound", repair=lambda _: zero,
                         deadline=deadline)
