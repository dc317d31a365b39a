"""Series of all-reduces (port sums): the optimal throughput and a periodic schedule.

Every participant ``P_d`` must end with ``v[0,N-1] = v_0 ⊕ … ⊕ v_{N-1}``
(non-commutative operator, intervals combined left then right as in SSR(G),
Legrand, Marchal and Robert, RR-4872, section 4.2).  Every platform without
a unidirectional node: each program's port rows take their right-hand sides
and per-link rows from :class:`~portsim.planners.lp._capacity.PortCapacity`
(on a bidirectional platform, the one-port rows alone), and the period is
split into b-matchings as for the other collectives.

Three steps, the later ones only when needed:

1. **Relaxation** (:mod:`portsim.planners.lp._allreduce_bound`): one SSR(G) copy per
   destination over shared operations, an exact upper bound with its proof.
2. **Reduce to a root, then broadcast from it** (below): a schedule.  When
   it carries the relaxation's value, both are the optimum.
3. **Structures** (:mod:`portsim.planners.lp._allreduce_packing`), when step 2
   falls short: the optimum is the best packing of instance structures
   (unions of per-destination reduction trees, which is where butterflies
   live); column generation with mixed integer pricing, started from step
   2's instances, then an exact branch and bound proves that no structure
   improves the packing, so its value is the exact optimum.  Measured on
   random platforms (``random_platform(n, min(2, n - 1))`` for n = 2-5 and
   ``random_platform(n, 3)`` for n = 6-8, seeds 0-15 and 0-4): step 2
   reached the relaxation on 76 of 79.  On the other three the relaxation
   is not reachable by any schedule, and step 3 proved step 2's schedule
   optimal: n = 4, seeds 2 and 3, 3/20 and 1/6 against 13/80 and 3/17, in
   0.2 s; n = 7, seed 2, 382723/2068740 against 55523/300084, in 6 s.  Step
   3 runs up to :data:`PACKING_MAX_PARTICIPANTS` participants, for at most
   :data:`PACKING_SECONDS` without a ``time_limit`` (the whole call's time
   with one); above, past that, or when its branch and bound stops at its
   node limit, the message states the certified interval.

**Schedule: reduce to a root, then broadcast from it**
(:func:`build_allreduce_master`).  An instance is one reduction tree whose
final computation ``T_{0,l,N-1}`` runs on some processor ``r`` (the root,
any processor reaching every participant), then one broadcast arborescence
of ``v[0,N-1]`` from ``r`` (spanning the nodes ``r`` reaches, leaves that
are not participants pruned).  The program: SSR(G) variables (no send of
the final result) with the result produced at any root, weighted
arborescences per root by column generation (minimum-arborescence pricing,
as :mod:`portsim.planners.lp._broadcast`), the arborescence weights of ``r`` equal
to the results made at ``r``; shared port and CPU rows.  The reduction part
is decomposed by EXTRACT_TREES (section 4.4) root by root; each root's
reduction trees and arborescences are paired (north-west corner rule) into
weighted units, each a whole instance: the broadcast sends come after the
final computation, so the lags of :mod:`portsim.planners.lp._periodic` never send
``v[0,N-1]`` before it exists.

When the schedule's rate equals the certified upper end the result is
exact; otherwise ``throughput_bound`` is the upper end and the message
states the certified interval ``[achieved, upper end]``.

**From** :data:`ROOTED_FROM` **participants** (:func:`_plan_at_scale`) the
relaxation, about ``N⁵`` variables, is what does not scale (measured,
interior point: 5 s at N = 9, 12 s at N = 10, more than 300 s at N = 12),
so the order turns: step 2 first, by reduction-tree and arborescence
columns (:mod:`portsim.planners.lp._allreduce_rooted`: N = 12 on a
complete platform in 0.7 s of CPU, against 22 s with SSR(G)'s variables,
the same value), then the cheapest upper bound that meets it: the
receive and single-node caps, step 2's exact dual with its prices split
among the destinations (a dual of the structure packing,
:func:`~portsim.planners.lp._allreduce_columns.split_bound`, up to
:data:`SPLIT_MAX_CELLS` price cells: at N = 64 on a complete platform it
would take 15 GiB), the restricted relaxation (whole copies for a few
destinations, every other one by its own node's rows, by destination
generation: :mod:`portsim.planners.lp._allreduce_restricted`, up to
:data:`RESTRICTED_MAX_VARIABLES` variables a program and
:data:`RESTRICTED_WORK` in all), with a ``time_limit`` step 2's exact dual
priced over every fractional structure (:func:`_dual_check`), and only then
the relaxation, up to :data:`RELAXATION_MAX_VARIABLES` variables and
:data:`RELAXATION_SECONDS` (with a ``time_limit``, up to
:data:`RELAXATION_MAX_WITH_TIME_LIMIT` variables in it).
What none of them closes is the certified interval ``[step 2, least upper
bound]``, the notes naming that bound; the structure search (step 3) does
not run at these sizes.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import NamedTuple

import networkx as nx

from portsim.planners.base import PlanResult
from portsim.planners.lp._allreduce_bound import (
    TP,
    allreduce_bound,
    relaxation_size,
    restricted_size,
    tp_cap,
)
from portsim.planners.lp._allreduce_columns import SPLIT_ROUNDS, split_bound
from portsim.planners.lp._allreduce_packing import (
    NODE_LIMIT,
    Packing,
    Structure,
    canonical,
    certify,
    dual_bound,
    pack_structures,
    packing_solution,
    structure_unit,
)
from portsim.planners.lp._allreduce_restricted import restricted_bound
from portsim.planners.lp._allreduce_rooted import (
    rooted_columns,
    rooted_master,
    roots,
    solution_weights,
)
from portsim.planners.lp._arborescence import min_arborescence, prune
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import NAME, LpOptions, finish, solve_exactly, time_limit_error
from portsim.planners.lp._exact import GOSSIP_BOUND, SINGLE_NODE_BOUND, ExactSolution
from portsim.planners.lp._extract import extract_trees
from portsim.planners.lp._gossip import gossip_cap
from portsim.planners.lp._incremental import (
    GENERATION_SHARE,
    TOLERANCE,
    MasterFailed,
    MasterPoint,
    RebuiltMaster,
    generate,
)
from portsim.planners.lp._reduce import refuse_reduction
from portsim.planners.lp._solve import Deadline, LinearModel, TimeLimitReached
from portsim.planners.lp._ssr import add_ssr_variables, port_rates, reduce_cap
from portsim.planners.lp._tree_pricing import TreeSpace
from portsim.simulator.numbers import counted, format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = ["build_allreduce_master", "plan_allreduce"]

PACKING_MAX_PARTICIPANTS = 8
"""When reduce-then-broadcast falls short of the bound, the search over every
instance structure (:mod:`portsim.planners.lp._allreduce_packing`) runs up to this
many participants; its mixed integer pricing programs grow as N copies of
SSR(G)."""

ROOTED_FROM = 9
"""From this many participants, step 2 prices reduction trees by the reduce's
interval dynamic program (:mod:`portsim.planners.lp._allreduce_rooted`)
instead of declaring SSR(G)'s variables, about ``|E| N^2 / 2 + n N^3 / 6``
of them, in a master rebuilt and solved again every round.  Below, the
variables stay (the same optimum; the bundled examples keep their
schedules, and the structure search starts from the instances it always
had)."""

SPLIT_WORK = 12_500_000
"""Without a ``time_limit``, the search for the best split of step 2's dual
among the destinations (:func:`~portsim.planners.lp._allreduce_columns.split_bound`)
runs at most ``SPLIT_WORK // cells`` rounds, at least one (``cells`` its price
cells, :func:`_split_cells`); the best split found then stands.  A number of
rounds fixed by the platform's size, not a time: the same scenario gives the
same upper end on a quiet and on a loaded machine (a 5-second budget gave
1.20 times the schedule on random N = 12, seed 1, on a quiet machine and
1.26 beside two other jobs).  Measured (CPU seconds of the split, out-degree
3 or complete, costs 1..10; ``/work/scratch/rounds.py`` of the twelfth
session): random N = 12, 40 rounds, 6.7-7.7 s, seed 1 at 1.20 times the
schedule (30 rounds: 1.34, 60: 1.10 in 13 s, 100: 1.04 in 33 s); complete
N = 12, 26 rounds, 4.6 s; random N = 16, 10 rounds, 3.4 s; N = 24, one
round (20 rounds, 27 s, left the single-node bound standing)."""

SPLIT_MAX_CELLS = 80_000_000
"""From :data:`ROOTED_FROM` participants, without a ``time_limit``, the split of
step 2's dual (:func:`~portsim.planners.lp._allreduce_columns.split_bound`) runs
only when it holds at most this many price cells (:func:`_split_cells`: one
price per destination and shared operation, ``N · (N² |E| + N³ n)`` for ``N``
participants, ``|E|`` links and ``n`` nodes), so that a default call stays
under about 2 GiB and 60 s of CPU.  Its time and memory grow with them:
measured (CPU seconds of the split and of the whole ``lp`` call, peak resident
memory; complete platforms, ``c = 1``, compute 1) N = 16, 2.0 million cells,
1.0 s of 1.4 s, 141 MiB; N = 24, 15.6 million, 17 s of 19 s, 454 MiB; N = 32,
66 million, 38 s of 46 s, 1.2 GiB; N = 40, 202 million, 116 s of 138 s, 2.7
GiB; N = 64, 2.1 billion cells: 349 s and 15 GiB (a user's ``validate``).  On
those platforms it never improved the single-node bound.  Four ``dgx_a100``
servers (32 GPUs, 70 nodes, 79.7 million cells): ``portsim run`` 56 s and 1.5
GiB.  Above this size the
split is not attempted: the receive and single-node caps stand, and a note
says so with the size figure."""

SPLIT_MAX_CELLS_WITH_TIME_LIMIT = 320_000_000
"""With a ``time_limit``, the split of step 2's dual runs up to this many price
cells (about 4 GiB resident, extrapolating the figures of
:data:`SPLIT_MAX_CELLS`), and is not attempted above: a time limit does not bound
its memory."""

RELAXATION_MAX_VARIABLES = 40_000
"""From :data:`ROOTED_FROM` participants, the relaxation (N copies of SSR(G))
is solved only up to this many variables: measured (interior point, CPU
seconds, out-degree 3) N = 9, 22,294 variables, 5 s; N = 10, 35,446, 12 s
(16 s with crossover); N = 12, about 75,000, more than 300 s.  Above it,
without a ``time_limit``, the cheaper bounds of :func:`_cheap_upper` stand,
and the notes say so; with one, the relaxation runs within it up to
:data:`RELAXATION_MAX_WITH_TIME_LIMIT` variables (complete platforms, N =
12, costs 1..10, seeds 0 and 1: 174,329 and
174,615 variables, 298 and 277 s of CPU, and it equals step 2's value on
both: the schedule is then proved optimal)."""

RELAXATION_SECONDS = 60.0
"""Without a ``time_limit``, the relaxation of :data:`RELAXATION_MAX_VARIABLES`
has this many seconds; past them the cheaper bounds stand (the notes say so)."""

RELAXATION_MAX_WITH_TIME_LIMIT = 400_000
"""Even with a ``time_limit``, the relaxation is not attempted above this many variables:
its memory (measured: out-degree 3, N = 16, 293,033 variables, 785 MiB resident while
HiGHS solves it; N = 24 would hold 1.9 million)."""

RELAXATION_SHARE = 0.8
"""With a ``time_limit``, a relaxation above :data:`RELAXATION_MAX_VARIABLES` may take
at most this share of the time left; the rest stays for the periodic schedule, so
that a relaxation cut by the time leaves the certified interval, not a time-limit
error."""

RESTRICTED_LOCAL_VARIABLES = 70_000
"""From :data:`ROOTED_FROM` participants, when the relaxation is above
:data:`RELAXATION_MAX_VARIABLES`, its restricted form
(:mod:`portsim.planners.lp._allreduce_restricted`: whole copies for a few
destinations) keeps every other destination by its own node's rows when,
without a ``time_limit``, the first program then holds at most this many
variables: random platforms of out-degree 3, about 19,500 at N = 12 and
54,000 at N = 16; complete, about 46,800 at N = 12.  Above, by receive cuts
(no variable): random N = 24 (seed 1), 141,954 variables instead of 235,449,
1.0073 times the schedule in 35-46 s of CPU instead of 1.0005 in 134 s (1.1
GiB); complete N = 16 (seed 0), 84,506 instead of 155,231, 1.016 in 15 s
instead of 1.0049 in 66 s (1.4 GiB)."""

RESTRICTED_MAX_VARIABLES = 150_000
"""Without a ``time_limit``, no restricted program above this many variables
(random N = 24, out-degree 3: 141,954 with receive cuts; complete N = 24:
about 450,000, not attempted)."""

RESTRICTED_WORK = 60_000
"""Without a ``time_limit``, the restricted relaxation's programs hold at most
this many variables in all, the first program running whatever this budget
(random N = 12: two programs, about 19,000 and 25,000 variables, about 7 s of
CPU; N = 16 and 24: the first alone): a budget of work, not of time, so that
the bound is the same on every machine."""

RESTRICTED_MAX_WITH_TIME_LIMIT = 400_000
"""With a ``time_limit``, and a relaxation above
:data:`RELAXATION_FIRST_WITH_TIME_LIMIT`, the restricted relaxation's programs may
hold up to this many variables (the memory bound of
:data:`RELAXATION_MAX_WITH_TIME_LIMIT`), as many programs as
:data:`RELAXATION_SHARE` of the time left allows."""

RELAXATION_FIRST_WITH_TIME_LIMIT = 200_000
"""With a ``time_limit``, a relaxation of at most this many variables decides: the
restricted relaxation keeps the limits it has without a ``time_limit`` (seconds),
and the relaxation has the time left.  Measured (CPU seconds of the float
relaxation, interior point): random N = 12, out-degree 3, costs 1..10, about
80,000 variables, 69-82 s, equal to step 2's schedule on three of the four
platforms measured (seeds 1, 2, 3; seed 5 1.0011 times it), where ten restricted
programs would not have reached it; complete N = 12, about 175,000, about 300 s.
Above it (random N = 16: about 293,000) the restricted generation takes
:data:`RELAXATION_SHARE` of the time, and the relaxation the rest."""

PACKING_SECONDS = 120.0
"""Without a ``time_limit``, the structure search stops after this many
seconds and the result states the certified interval; with one, the search
may use the whole call's time (measured: one pricing round takes 1.3 s and
one exact branch-and-bound node 2 s at N = 8)."""

_ONE = Fraction(1)
_MINUS_ONE = Fraction(-1)

Task = tuple  # ("send", src, dst, k, m) or ("cons", node, k, l, m)
Tree = tuple[tuple[NodeId, NodeId], ...]


class _Limits(NamedTuple):
    """The restricted relaxation's limits, in variables: ``local``, the largest first
    program that keeps the other destinations' own rows; ``largest``, the largest
    program; ``work``, all programs together."""

    local: int
    largest: int
    work: int


def _restricted_limits(options: LpOptions, relaxation: int) -> _Limits:
    """:data:`RESTRICTED_LOCAL_VARIABLES`, :data:`RESTRICTED_MAX_VARIABLES` and
    :data:`RESTRICTED_WORK` without a ``time_limit``, and with one when the
    relaxation (of ``relaxation`` variables) is at most
    :data:`RELAXATION_FIRST_WITH_TIME_LIMIT`: that relaxation then decides, in
    the time left.  Otherwise, :data:`RESTRICTED_MAX_WITH_TIME_LIMIT` for both
    sizes and no work limit."""
    if options.time_limit is None or relaxation <= RELAXATION_FIRST_WITH_TIME_LIMIT:
        return _Limits(RESTRICTED_LOCAL_VARIABLES, RESTRICTED_MAX_VARIABLES, RESTRICTED_WORK)
    return _Limits(RESTRICTED_MAX_WITH_TIME_LIMIT, RESTRICTED_MAX_WITH_TIME_LIMIT, sys.maxsize)


def _restricted_mode(platform: Platform, operation: Operation, limits: _Limits
                     ) -> tuple[str, int]:
    """How the restricted relaxation keeps the destinations without a whole copy, and its
    first program's variables.

    Their own node's rows (``local``) when the first program then holds at most
    ``limits.local``; else receive cuts (``cuts``: no variable, a looser bound).
    """
    first = operation.participants[:1]
    local = restricted_size(platform, operation, first, "local")
    if local <= limits.local:
        return "local", local
    return "cuts", restricted_size(platform, operation, first, "cuts")


def _budget(options: LpOptions, deadline: Deadline, seconds: float) -> Deadline:
    """``deadline`` itself, or ``seconds`` from now when sooner and no ``time_limit`` is set."""
    if options.time_limit is None:
        cut = Deadline.after(seconds)
        if deadline.at is None or (cut.at is not None and cut.at < deadline.at):
            return cut
    return deadline


# -- the schedule: reduce to a root, broadcast from it ---------------------------------------

def _arborescence(platform: Platform, root: NodeId, nodes: set[NodeId],
                  price: dict[tuple[NodeId, NodeId], float] | None) -> Tree:
    """A minimum spanning arborescence of ``nodes`` from ``root`` (BFS tree without prices)."""
    if len(nodes) == 1:
        return ()
    arcs = [(u, v) for u, v in platform.graph.edges
            if v != root and u in nodes and v in nodes]
    if price is None:
        g = nx.DiGraph(arcs)
        g.add_nodes_from(sorted(nodes))
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
        ``(root, arborescence)`` pairs; every root in
        :func:`~portsim.planners.lp._allreduce_rooted.roots`.

    Returns
    -------
    (LinearModel, dict)
        The program (variable keys ``("send", i, j, k, m)``, ``("cons", i,
        k, l, m)`` as SSR(G), ``("tree", c)`` for column ``c``, ``"TP"``)
        and, per root, the index among the ``==`` rows of the row tying the
        results made at the root to its arborescences (for the duals).  The
        ``<=`` rows: send and receive per node (right-hand sides of
        :class:`PortCapacity`), the link rows of :attr:`PortCapacity.links`,
        then the CPU rows.
    """
    parts = operation.participants
    n = len(parts)
    size = operation.size
    owner = {p: i for i, p in enumerate(parts)}
    cap = tp_cap(platform, operation)
    root_list = roots(platform, operation)
    model = LinearModel()
    tp = model.variable(TP, upper=cap)
    model.objective = tp
    ssr = add_ssr_variables(model, platform, operation, no_final_from=platform.graph.nodes,
                            task_cap=dict.fromkeys(platform.processors, cap), final_at=root_list)
    balance, out_port, in_port, cpu = ssr.balance, ssr.out_port, ssr.in_port, ssr.cpu
    capacity = PortCapacity.of(platform)
    own_row = capacity.own_row
    total: dict[int, Fraction] = {tp: _ONE}
    for c, (root, tree) in enumerate(columns):
        first = min((size * platform.cost(*e) for e in tree), default=_ONE)
        j = model.variable(("tree", c), upper=min(cap, 1 / first))
        total[j] = _MINUS_ONE
        balance[root, 0, n - 1][j] = _MINUS_ONE
        for u, v in tree:
            busy = size * platform.cost(u, v)
            out_port[u][j] = out_port[u].get(j, Fraction(0)) + busy
            in_port[v][j] = in_port[v].get(j, Fraction(0)) + busy
            if (u, v) in own_row:
                ssr.link_port[u, v][j] = ssr.link_port[u, v].get(j, Fraction(0)) + busy
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
    # a fixed order: send row, receive row, per node
    capacity.add_node_rows(model, out_port, in_port, nodes=platform.node_ids)
    capacity.add_link_rows(model, ssr.link_port)  # then the link rows (none if bidirectional)
    for node, coeffs in cpu.items():
        model.add(coeffs, "<=", _ONE, f"computation of {node}")
    return model, final_rows


def _generate_columns(platform: Platform, operation: Operation, options: LpOptions,
                      deadline: Deadline) -> list[tuple[NodeId, Tree]] | PlanResult:
    """Broadcast arborescences by column generation on the float master program."""
    root_list = roots(platform, operation)
    keep = set(operation.participants)
    reach = {r: {r} | nx.descendants(platform.graph, r) for r in root_list}
    columns = [(r, prune(_arborescence(platform, r, reach[r], None), keep)) for r in root_list]
    seen = set(columns)
    busy = {e: float(operation.size * platform.cost(*e)) for e in platform.graph.edges}
    links = PortCapacity.of(platform).links
    final_rows: dict[NodeId, int] = {}   # index among the == rows
    by_sense: dict[str, list[int]] = {}   # the == rows and the <= rows, in order

    def build() -> LinearModel:
        model, rows = build_allreduce_master(platform, operation, columns)
        final_rows.clear()
        final_rows.update(rows)
        for sense in ("==", "<="):
            by_sense[sense] = [i for i, row in enumerate(model.rows) if row.sense == sense]
        return model

    def price(point: MasterPoint) -> bool:
        duals = [float(point.duals[i]) for i in by_sense["<="]]
        y_eq = [float(point.duals[i]) for i in by_sense["=="]]
        pi_out = {node: duals[2 * i] for i, node in enumerate(platform.node_ids)}
        pi_in = {node: duals[2 * i + 1] for i, node in enumerate(platform.node_ids)}
        first = 2 * len(platform.node_ids)  # the link rows follow the node rows
        pi_link = {e: duals[first + i] for i, e in enumerate(links)}
        price = {(u, v): b * (pi_out[u] + pi_in[v] + pi_link.get((u, v), 0.0))
                 for (u, v), b in busy.items()}
        z_tp = float(y_eq[0])
        added = False
        for r in root_list:
            tree = prune(_arborescence(platform, r, reach[r], price), keep)
            cost = sum(price[e] for e in tree)
            if cost < z_tp + float(y_eq[final_rows[r]]) - TOLERANCE \
                    and (r, tree) not in seen:
                seen.add((r, tree))
                columns.append((r, tree))
                added = True
        return added

    try:
        generate(RebuiltMaster(build, "highs-ds" if options.method == "auto" else options.method),
                 price, deadline=deadline, phase="column generation (allreduce master program)")
    except MasterFailed as failure:
        return PlanResult.error(NAME, f"allreduce master program: {failure.status}")
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


def _instance_structure(operation: Operation, tasks: list[Task], tree: Tree) -> Structure:
    """One instance: the reduction tree, then the broadcast of the result along ``tree``.

    As a structure, so that its unit (:func:`structure_unit`) sends the result
    only after the final computation, one level deeper per hop.
    """
    n = len(operation.participants)
    structure = canonical(operation, [*tasks, *(("send", u, v, 0, n - 1) for u, v in tree)])
    if structure is None:
        raise AssertionError("a reduce-then-broadcast instance leaves a participant "
                             "without the result")
    return structure


class Step2(NamedTuple):
    """Step 2's exact master, its weighted instances and what its note says."""

    master: ExactSolution
    structures: list[tuple[Fraction, Structure]]
    note: str
    trees: tuple[tuple[int, list[Task]], ...] = ()
    """Per instance and destination ``d`` (its index among the participants),
    the instance's reduction tree then the broadcast's path to ``d``: the
    first columns of the split search (:func:`_cheap_upper`)."""


def _destination_trees(operation: Operation, tasks: list[Task], tree: Tree
                       ) -> list[tuple[int, list[Task]]]:
    """One instance as per-destination reduction trees: ``tasks``, then the path to ``d``.

    A destination whose tree would send the result out of it (the
    reduction makes ``v[0,N-1]`` there and sends it on) is left out.
    """
    parts = operation.participants
    last = len(parts) - 1
    parent = {v: u for u, v in tree}
    out: list[tuple[int, list[Task]]] = []
    for d, node in enumerate(parts):
        if any(t[0] == "send" and t[1] == node and (t[3], t[4]) == (0, last) for t in tasks):
            continue
        path: list[Task] = []
        v = node
        while v in parent:
            path.append(("send", parent[v], v, 0, last))
            v = parent[v]
        out.append((d, [*tasks, *reversed(path)]))
    return out


def _solve_step2(model: LinearModel, options: LpOptions, deadline: Deadline
                 ) -> ExactSolution | PlanResult:
    """Step 2's master solved exactly; an ``error`` when it fails or carries nothing."""
    master = solve_exactly(model, options, what="allreduce reduce-then-broadcast",
                           deadline=deadline)
    if isinstance(master, ExactSolution) and master.lower <= 0:
        return PlanResult.error(NAME, "the reduce-then-broadcast program carries nothing")
    return master


def _ssr_step(platform: Platform, operation: Operation, options: LpOptions,
              deadline: Deadline) -> Step2 | PlanResult:
    """Step 2 with SSR(G)'s variables (:func:`build_allreduce_master`), then EXTRACT_TREES."""
    try:
        columns = _generate_columns(platform, operation, options, deadline)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase}")
    if isinstance(columns, PlanResult):
        return columns
    model, _ = build_allreduce_master(platform, operation, columns)
    master = _solve_step2(model, options, deadline)
    if isinstance(master, PlanResult):
        return master
    amount: dict[Task, Fraction] = {
        key: master.values[j] for key, j in model.index.items()  # type: ignore[misc]
        if isinstance(key, tuple) and key[0] in ("send", "cons") and master.values[j] > 0}
    structures: list[tuple[Fraction, Structure]] = []  # weighted instances
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
        structures.extend((w, _instance_structure(operation, tasks, tree))
                          for w, tasks, tree in _pair(reductions, trees))
    return Step2(master, structures, f"{len(columns)} arborescence column(s), "
                                     f"{len(structures)} weighted instance(s) over "
                                     f"{len(by_root)} root(s)")


def _rooted_step(platform: Platform, operation: Operation, options: LpOptions,
                 deadline: Deadline) -> Step2 | PlanResult:
    """Step 2 by reduction-tree and arborescence columns (:mod:`._allreduce_rooted`), the
    generation within :data:`~portsim.planners.lp._incremental.GENERATION_SHARE` of the
    time left."""
    budget = deadline.part(GENERATION_SHARE)
    try:
        space, columns = rooted_columns(platform, operation, deadline=deadline, budget=budget)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase}")
    except MasterFailed as failure:
        return PlanResult.error(NAME, f"allreduce reduce-then-broadcast master: {failure.status}")
    model = rooted_master(platform, operation, space, columns)
    master = _solve_step2(model, options, deadline)
    if isinstance(master, PlanResult):
        return master
    reductions, broadcasts = solution_weights(model, master, columns)
    structures: list[tuple[Fraction, Structure]] = []
    seeds: list[tuple[int, list[Task]]] = []
    by_root = {root for root, _, _ in broadcasts}
    for root in sorted(by_root, key=str):
        mine = [(w, list(tasks)) for r, w, tasks in reductions if r == root]
        trees = [(w, tree) for r, w, tree in broadcasts if r == root]
        for w, tasks, tree in _pair(mine, trees):
            structures.append((w, _instance_structure(operation, tasks, tree)))
            seeds.extend(_destination_trees(operation, tasks, tree))
    cut = (f" (the generation stopped after {GENERATION_SHARE:.0%} of the time left under the "
           f"time limit of {options.limit_text}, with improving columns left: the best "
           f"schedule over the columns found, not the best reduce-then-broadcast one)"
           if columns.cut else "")
    return Step2(master, structures, f"{len(columns.reductions)} reduction tree and "
                                     f"{len(columns.broadcasts)} arborescence column(s) in use "
                                     f"after {columns.rounds} round(s){cut}, {len(structures)} "
                                     f"weighted instance(s) over {len(by_root)} root(s)",
                 tuple(seeds))


def _caps(platform: Platform, operation: Operation) -> tuple[Fraction, str, str]:
    """The least of the receive, single-node and gossip caps (no program), which one it
    is, and the :attr:`ExactSolution.method` that names it when it proves the optimum.

    The least receive rate of a participant (:func:`port_rates`: every
    participant receives at least one message an instance); for every
    destination ``d``, the single-node bound of a reduce to ``d``
    (:func:`~portsim.planners.lp._ssr.reduce_cap`); and the gossip bound
    (:func:`~portsim.planners.lp._gossip.gossip_cap`: at least ``2g - 2``
    messages into ``g`` groups of nodes an instance).
    """
    rates = port_rates(platform, operation.size)
    best, how, method = (min(rates[1][p] for p in operation.participants),
                         "the least receive rate of a participant (its ports)",
                         SINGLE_NODE_BOUND)
    for d in operation.participants:
        cap = reduce_cap(platform, replace(operation, kind=OperationKind.REDUCE, target=d),
                         rates=rates)
        if cap is not None and cap < best:
            best, how = cap, f"the single-node bound of a reduce to {d}"
    gossip = gossip_cap(platform, operation)
    if gossip is not None and gossip[0] < best:
        best, how, method = gossip[0], gossip[1], GOSSIP_BOUND
    return best, how, method


def _cheap_upper(platform: Platform, operation: Operation, master: ExactSolution,
                 seeds: Sequence[tuple[int, list[Task]]], options: LpOptions,
                 deadline: Deadline, *, search: bool, then_relax: bool = False
                 ) -> tuple[Fraction, str, str, str]:
    """The least of four certified upper bounds that cost no big program, which one, the
    :attr:`ExactSolution.method` naming it, and why the split did not run (empty when
    it ran).

    The least receive rate of a participant (:func:`port_rates`: every
    participant receives at least one message an instance); for every
    destination ``d``, the single-node bound of a reduce to ``d``
    (:func:`~portsim.planners.lp._ssr.reduce_cap`: an allreduce makes the
    reduce's ``N - 1`` reductions and its sends out of every participant
    other than ``d``); the gossip bound (:func:`_caps`); and the structure
    dual of step 2's exact dual, split among the destinations
    (:func:`~portsim.planners.lp._allreduce_columns.split_bound`; with
    ``search``, its search for the best split from ``seeds``, step 2's
    instances as per-destination trees, cut after the rounds
    :data:`SPLIT_WORK` gives this size without a ``time_limit``; without
    ``search``, the first split only: the relaxation, or its restricted form,
    will run, and no split bounds below it).  With ``then_relax`` (a relaxation above
    :data:`RELAXATION_MAX_VARIABLES` will run in the call's ``time_limit``),
    the search has those rounds even with a ``time_limit``: the rest is the
    relaxation's; with a ``time_limit`` and no relaxation to come, it runs up
    to :data:`~portsim.planners.lp._allreduce_columns.SPLIT_ROUNDS` rounds
    within it.  Above :data:`SPLIT_MAX_CELLS` price cells without a
    ``time_limit``, or :data:`SPLIT_MAX_CELLS_WITH_TIME_LIMIT` with one, the
    split is not attempted (its memory and time, estimated before anything is
    allocated): the caps stand and the fourth string says so; it also says
    when the search was cut at its rounds.
    """
    best, how, method = _caps(platform, operation)
    if best <= master.lower:
        return best, how, method, ""  # a cap meets step 2: optimal, no split to search
    skipped = _split_skipped(platform, operation, options)
    if skipped:
        return best, how, method, skipped
    fixed = options.time_limit is None or then_relax
    rounds = max(1, SPLIT_WORK // _split_cells(platform, operation)[1]) if fixed else SPLIT_ROUNDS
    stats: dict[str, float] = {}
    split = split_bound(platform, operation, master.y_ub, deadline=deadline,
                        budget=None if fixed else deadline,
                        max_rounds=min(rounds, SPLIT_ROUNDS) if search else 0, seeds=seeds,
                        stats=stats)
    cut = ""
    if search and stats.get("rounds", 0) >= min(rounds, SPLIT_ROUNDS):
        cut = (f"the search for the best split of step 2's dual stopped after its "
               f"{counted(min(rounds, SPLIT_ROUNDS), 'round')}" +
               (" (the rounds this size gets without a time_limit, the same on every "
                "machine; with one, up to " f"{SPLIT_ROUNDS})" if fixed else ""))
    if split is not None and split < best:
        best, method = split, "structure dual"
        how = ("step 2's exact dual, its prices split among the destinations (a dual of "
               "the structure packing)")
    return best, how, method, cut


class DualCheck(NamedTuple):
    """What :func:`_dual_check` proved: every structure costs at least ``least`` under
    step 2's exact dual, so no schedule beats ``upper``; ``cheaper`` when a whole
    structure below 1 turned up (that dual is then no dual of the packing over every
    structure; the schedule may still be optimal, another dual proving it)."""

    least: Fraction
    upper: Fraction
    cheaper: bool


def _dual_check(platform: Platform, operation: Operation, master: ExactSolution,
                options: LpOptions, deadline: Deadline) -> DualCheck | str:
    """Step 2's exact dual priced over every fractional structure (one exact program), or
    why it gave no bound (its program did not finish by ``deadline``).

    Step 2's master is the structure packing of
    :mod:`portsim.planners.lp._allreduce_packing` over reduce-then-broadcast
    instances only; its exact dual ``y`` prices the ports, CPUs and links.  The
    least price of a *fractional* structure under ``y`` (the linear relaxation
    of the packing's pricing program: one SSR(G) copy per destination over
    shared operations of at most 1, the ports priced; :func:`certify` with one
    node, solved and recovered exactly) is at most that of every structure, so
    ``y / least`` is a feasible dual of the packing over *every* structure and
    no schedule beats ``Σ b·y / least`` (:func:`dual_bound`).  With ``least =
    1`` that is step 2's own value: the schedule is optimal.  It is also at
    least the relaxation's value (which is this bound at the best ``y``), so it
    settles the platforms where the relaxation equals step 2 with a dual step 2
    has.  Measured (random platforms of out-degree 3, costs 1..10, N = 12, CPU
    seconds of the float program, interior point with crossover,
    ``/work/scratch/ysprice.py`` of the fifteenth session): seeds 1, 2, 3,
    ``least = 1`` in 37-52 s, where the relaxation takes 69-82 s; with the exact
    recovery, seeds 1 and 2 in 41 and 73 s (seed 2's prices need 54 bits once
    scaled to integers: the recovery balances its rows for them); seed 5, 0.9965
    (1.0035 times step 2; the relaxation, 1.0011).
    """
    space = TreeSpace.of(platform, replace(operation, target=operation.participants[0]))
    y = {row: value for row, value in zip(space.row_keys(), master.y_ub, strict=True)
         if value > 0}
    found = certify(platform, operation, y, options, deadline=deadline, node_limit=1)
    if found.least <= 0:  # the root program did not finish, or was not recovered exactly
        return "not finished in the time given, or not recovered exactly"
    return DualCheck(found.least, dual_bound(platform, operation, y, found.least, master),
                     found.found is not None)


def _split_cells(platform: Platform, operation: Operation) -> tuple[int, int]:
    """The shared operations of the split bound and its price cells, counted without
    allocating them.

    :func:`~portsim.planners.lp._allreduce_columns.split_bound` indexes a send
    of ``v[k,m]`` per link and a task ``T_{k,l,m}`` per node, every ``k``,
    ``l``, ``m`` among the ``N`` participants (``N² |E| + N³ n`` operations,
    routers included), and prices every one for each of the ``N``
    destinations: that array of ``N`` times as many cells is its peak memory.
    """
    n_parts = len(operation.participants)
    links = platform.graph.number_of_edges()
    nodes = platform.graph.number_of_nodes()
    ops = n_parts ** 2 * links + n_parts ** 3 * nodes
    return ops, n_parts * ops


def _split_skipped(platform: Platform, operation: Operation, options: LpOptions) -> str:
    """Why the split of step 2's dual is not attempted at this size, or ``""`` when it runs."""
    ops, cells = _split_cells(platform, operation)
    limit = SPLIT_MAX_CELLS if options.time_limit is None else SPLIT_MAX_CELLS_WITH_TIME_LIMIT
    if cells <= limit:
        return ""
    n = len(operation.participants)
    why = (f"above {SPLIT_MAX_CELLS:,} without a time_limit (with one, it runs up to "
           f"{SPLIT_MAX_CELLS_WITH_TIME_LIMIT:,} cells)" if options.time_limit is None else
           f"above {SPLIT_MAX_CELLS_WITH_TIME_LIMIT:,}, even with a time_limit")
    return (f"split bound (step 2's exact dual, its prices split among the {n} destinations) "
            f"not attempted: {cells:,} price cells ({n} destinations x {ops:,} operations), "
            f"{why}: its memory and time grow with them (complete platforms: 66 million "
            f"cells, 1.2 GiB and 38 s of CPU; 202 million, 2.7 GiB and 116 s)")


def _plan_at_scale(platform: Platform, operation: Operation, options: LpOptions,
                   deadline: Deadline) -> PlanResult:
    """From :data:`ROOTED_FROM` participants: step 2 first, then the cheapest bound that meets it.

    Step 2 by tree columns (:func:`_rooted_step`) gives the schedule; its
    value is certified optimal as soon as an upper bound meets it:
    :func:`_cheap_upper` first (without its split search when the next one
    runs), then, where the relaxation is above
    :data:`RELAXATION_MAX_VARIABLES`, the restricted relaxation
    (:func:`~portsim.planners.lp._allreduce_restricted.restricted_bound`:
    programs of up to :data:`RESTRICTED_MAX_VARIABLES` variables,
    :data:`RESTRICTED_WORK` in all, without a ``time_limit`` and with one when
    the relaxation holds at most :data:`RELAXATION_FIRST_WITH_TIME_LIMIT`
    variables; else, with one, up to :data:`RESTRICTED_MAX_WITH_TIME_LIMIT`
    within :data:`RELAXATION_SHARE` of the time left), then, with a
    ``time_limit`` and a relaxation above :data:`RELAXATION_MAX_VARIABLES`,
    step 2's exact dual priced over every fractional structure
    (:func:`_dual_check`, within :data:`RELAXATION_SHARE` of the time left),
    then the relaxation
    (:func:`~portsim.planners.lp._allreduce_bound.allreduce_bound`) when it
    has at most :data:`RELAXATION_MAX_VARIABLES` variables, within
    :data:`RELAXATION_SECONDS` (or the call's ``time_limit``), or, when the
    call has a ``time_limit``, up to :data:`RELAXATION_MAX_WITH_TIME_LIMIT`
    variables within :data:`RELAXATION_SHARE` of the time left (complete
    platforms, N = 12: 174,329 variables, about 300 s of CPU, and it met step
    2 on both seeds measured).  Otherwise the
    result is the certified interval ``[step 2, the least upper bound]``,
    its notes saying which bound that is and why the relaxation did not run
    or finish.  The structure search (step 3) does not run at these sizes.
    """
    step2 = _rooted_step(platform, operation, options, deadline)
    if isinstance(step2, PlanResult):
        if step2.status != "error":
            return step2
        # No schedule, but the caps cost no program: say what they prove (a user
        # validating a schedule of their own still learns an upper bound).
        cap, how, _ = _caps(platform, operation)
        return PlanResult.error(NAME, f"{step2.message} (certified all the same: {how} "
                                      f"bounds the throughput by {format_rational(cap)})",
                                notes=step2.notes)
    master, structures, step2_note, seeds = step2
    n = len(operation.participants)
    notes = [f"reduce to a root then broadcast: {step2_note}, {format_rational(master.lower)}"]
    size = relaxation_size(platform, operation)
    big = size > RELAXATION_MAX_VARIABLES
    huge = size > RELAXATION_MAX_WITH_TIME_LIMIT
    relax = not big or (options.time_limit is not None and not huge)
    limits = _restricted_limits(options, size)
    others, first = _restricted_mode(platform, operation, limits)
    restrict = big and first <= limits.largest
    try:
        upper, how, method, split_note = _cheap_upper(
            platform, operation, master, seeds, options, deadline,
            search=big and not restrict, then_relax=big and relax)
    except TimeLimitReached as stop:
        return time_limit_error(options, f"{stop.phase} of the allreduce bound")
    if split_note and upper > master.lower:
        notes.append(split_note)
    if upper > master.lower and big and not restrict:
        notes.append(f"restricted relaxation not attempted: with one whole copy and receive "
                     f"cuts it already holds {first:,} variables, above {limits.largest:,}"
                     + ("" if options.time_limit is not None else
                        f" without a time_limit (with one: {RESTRICTED_MAX_WITH_TIME_LIMIT:,})"))
    fits = False
    if upper > master.lower and restrict:
        budget = deadline
        left = deadline.remaining()
        if options.time_limit is not None and left is not None:
            budget = Deadline.after(RELAXATION_SHARE * left)
        found = restricted_bound(platform, operation, master.lower, options, deadline=budget,
                                 max_variables=limits.largest, work=limits.work, others=others)
        if found.upper is not None:
            names = [str(d) for d in found.full]
            whole = (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1
                     else names[0])
            kept = ("the rows of its own node" if others == "local" else
                    "receive cuts (each other participant's index reaches it once an "
                    "instance: with its own node's rows the first program would hold "
                    f"more than {limits.local:,} variables)")
            notes.append(f"restricted relaxation ({counted(found.programs, 'program')}): "
                         f"whole SSR(G) copies for {whole}; every other destination by "
                         f"{kept}; {format_rational(found.upper)}")
            if found.upper < upper:
                upper, how, method = (found.upper, "the restricted relaxation",
                                      "restricted relaxation")
        fits = found.stop == "fits"
        if fits:
            notes.append("restricted relaxation: every other destination's whole copy fits in "
                         "its operations (floating-point check), so its value is the "
                         "relaxation's")
        elif found.stop != "met":
            notes.append(f"restricted relaxation stopped: {found.stop}")
    out_of_time = ("not attempted: the time_limit was reached (the interval below "
                   "stands; raise time_limit)")
    if upper > master.lower and not fits and big and relax and deadline.expired:
        notes.append(f"step 2's exact dual over every fractional structure: {out_of_time}")
    elif upper > master.lower and not fits and big and relax:  # with a time_limit
        left = deadline.remaining()
        budget = deadline if left is None else Deadline.after(RELAXATION_SHARE * left)
        checked = _dual_check(platform, operation, master, options, budget)
        if isinstance(checked, str):
            notes.append(f"step 2's exact dual over every fractional structure: {checked}")
        else:
            notes.append(f"step 2's exact dual over every fractional structure (the "
                         f"linear relaxation of the structures' pricing, solved exactly): "
                         f"each costs at least {format_rational(checked.least)}, so no "
                         f"schedule beats {format_rational(checked.upper)}")
            if checked.cheaper:
                notes.append("a structure costs less than 1 under step 2's exact dual: "
                             "schedules beyond reduce-then-broadcast may do better")
            if checked.upper < upper:
                upper, how, method = (checked.upper, "step 2's exact dual over every "
                                      "fractional structure", "structure dual")
    if upper > master.lower and not fits:
        if not relax and huge:
            notes.append(f"relaxation ({n} per-destination SSR(G) copies, {size} variables) "
                         f"not attempted: above {RELAXATION_MAX_WITH_TIME_LIMIT} variables, "
                         f"even with a time_limit (its memory)")
        elif not relax:
            notes.append(f"relaxation ({n} per-destination SSR(G) copies, {size} variables) "
                         f"not attempted: above {RELAXATION_MAX_VARIABLES} variables without "
                         f"a time_limit (with one, it runs in that time: complete platform "
                         f"N = 12, 174,329 variables, about 300 s of CPU)")
        elif deadline.expired:  # its model alone takes seconds to build
            notes.append(f"relaxation ({n} per-destination SSR(G) copies, {size} variables) "
                         f"{out_of_time}")
        else:
            budget = _budget(options, deadline, RELAXATION_SECONDS)
            left = deadline.remaining()
            if big and left is not None:
                budget = Deadline.after(RELAXATION_SHARE * left)
            bound = allreduce_bound(platform, operation, options, deadline=budget)
            if isinstance(bound, ExactSolution):
                notes.append(f"bound: {n} per-destination SSR(G) copies over shared "
                             f"operations ({bound.method}), {format_rational(bound.upper)}")
                if bound.upper < upper:
                    upper, how, method = bound.upper, "the relaxation", bound.method
                    notes.extend(bound.notes)
            elif budget is not deadline and budget.expired:
                # stopped by its own share of the time, not by the call's time
                # limit, which bound.message names (300 s, the default, say)
                share = (f"the {RELAXATION_SECONDS:g} s it gets without a time_limit (set "
                         f"time_limit to allow longer)" if options.time_limit is None else
                         f"its share of the time_limit, {RELAXATION_SHARE:.0%} of the time "
                         f"left (raise time_limit)")
                notes.append(f"relaxation ({n} per-destination SSR(G) copies, {size} "
                             f"variables) not finished: stopped after {share}")
            else:
                notes.append(f"relaxation ({n} per-destination SSR(G) copies, {size} "
                             f"variables) not finished: {bound.message}")
    upper = max(upper, master.lower)
    notes.append(f"upper bound: {how}, {format_rational(upper)}")
    if upper > master.lower:
        notes.append(f"{n} participants: above {PACKING_MAX_PARTICIPANTS}, the search over "
                     f"every structure (mixed integer pricing) does not run")
    exact = ExactSolution(master.values, master.lower, upper, master.y_ub, master.y_eq,
                          method if upper == master.lower else "interval", master.notes)
    if deadline.expired:
        # No schedule, but the bounds found still hold (as when step 2 stops).
        certified = (f"no schedule beats {format_rational(upper)} ({how})" if upper > master.lower
                     else f"the optimum is {format_rational(upper)} ({how})")
        return time_limit_error(options, f"the allreduce bound, before the periodic schedule "
                                         f"(certified all the same: {certified}; "
                                         f"reduce-then-broadcast carries "
                                         f"{format_rational(master.lower)})", upper,
                                bound_exact=upper == master.lower)
    units = [structure_unit(w, s) for w, s in structures]
    return finish(platform, operation, exact, [units], options, notes=notes)


def plan_allreduce(platform: Platform, operation: Operation, options: LpOptions) -> PlanResult:
    """Steady-state series of non-commutative all-reduces (port sums).

    Parameters
    ----------
    platform:
        A platform without unidirectional nodes (bidirectional,
        ``multiport:k`` and ``multiport`` in any mix).
    operation:
        A resolved allreduce.
    options:
        The ``lp`` options (``time_limit`` covers both programs).

    Returns
    -------
    PlanResult
        ``ok`` with ``throughput_bound`` the optimal throughput (the
        relaxation's value, or the packing's proven by branch and bound) and
        a periodic schedule achieving it; when the optimum is not proven,
        the message states the certified interval ``[achieved, upper end]``.
        ``unsupported`` for a commutative operator; ``error`` for one
        participant or a time limit.

    Notes
    -----
    The formulations and the proofs that no schedule beats them are in the
    module notes of :mod:`portsim.planners.lp._allreduce_bound` and
    :mod:`portsim.planners.lp._allreduce_packing`.  Two nodes with links of cost 1
    and compute time 1: TP = 1 (each node receives one message per
    instance; reduce on either node and send the result back, roots
    alternating, meets it).

    Examples
    --------
    >>> from portsim.simulator.platform import Platform
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
    n = len(operation.participants)
    if n >= ROOTED_FROM:
        return _plan_at_scale(platform, operation, options, deadline)
    bound = allreduce_bound(platform, operation, options, deadline=deadline)
    if isinstance(bound, PlanResult):
        return bound
    step2 = _ssr_step(platform, operation, options, deadline)
    if isinstance(step2, PlanResult):
        return step2
    master, structures, step2_note, _ = step2
    if deadline.expired:
        return time_limit_error(options, "tree extraction, before the periodic schedule")
    notes = [f"bound: {n} per-destination SSR(G) copies over "
             f"shared operations ({bound.method}), {format_rational(bound.upper)}",
             f"reduce to a root then broadcast: {step2_note}, {format_rational(master.lower)}"]
    skipped = f"{n} participants: above {PACKING_MAX_PARTICIPANTS}, the search"
    if master.lower < bound.upper and n <= PACKING_MAX_PARTICIPANTS:
        # Without a time_limit option the search has PACKING_SECONDS (within the
        # default time limit), then the interval stands; with one, the call's
        # deadline rules (an error past it).
        budget = _budget(options, deadline, PACKING_SECONDS)
        try:
            packing = pack_structures(platform, operation, [s for _, s in structures], options,
                                      deadline=budget)
        except TimeLimitReached as stop:
            if budget is deadline:
                return time_limit_error(options, f"{stop.phase}")
            packing = None
        if isinstance(packing, PlanResult) and (budget is deadline or not budget.expired):
            return packing  # a failure, or an error past the caller's time limit
        if isinstance(packing, Packing):
            units = [structure_unit(w, s) for w, s in packing.weights]
            exact = packing_solution(packing, bound)
            closed = packing.upper <= packing.lower  # every node closed: the packing is optimal
            proof = ("" if closed else
                     f" stopped before closing every node (its limits: {NODE_LIMIT} nodes, "
                     f"and {PACKING_SECONDS:g} s without a time_limit), and")
            notes.append(f"structures (unions of per-destination reduction trees): "
                         f"{packing.rounds} column-generation round(s), {len(units)} weighted "
                         f"structure(s), {format_rational(packing.lower)}; exact branch and "
                         f"bound ({packing.nodes} node(s)){proof} proves no schedule beats "
                         f"{format_rational(packing.upper)}")
            return finish(platform, operation, exact, [units], options, notes=notes)
        skipped = f"stopped after {PACKING_SECONDS} s (set time_limit to allow longer), the search"
    units = [structure_unit(w, s) for w, s in structures]
    upper = max(bound.upper, master.lower)
    # the relaxation's own lower end may be 0 (its recovery failed): only its
    # certified upper end counts, against what the schedule carries
    method = bound.method if bound.method != "interval" else "rationalised dual"
    exact = ExactSolution(master.values, master.lower, upper, bound.y_ub, bound.y_eq,
                          method if upper == master.lower else "interval",
                          master.notes + bound.notes)
    if master.lower < bound.upper:
        notes.append(f"{skipped} over every structure (mixed integer pricing) was not "
                     f"completed")
    return finish(platform, operation, exact, [units], options, notes=notes)
