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

Modules: the program :mod:`~portsim.planners.lp._ssr`, tree extraction
:mod:`~portsim.planners.lp._extract`, the pricing dynamic program
:mod:`~portsim.planners.lp._tree_pricing`, the column generation
:mod:`~portsim.planners.lp._reduce_columns`; this module is the planner.

The operator is taken non-commutative (intervals in order).  A commutative
reduction could combine any subsets, which this program does not model: the
``lp`` planner reports such a reduction as unsupported rather than give a
bound that might be beaten.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from portsim.planners.base import PlanResult
from portsim.planners.lp._driver import (
    NAME,
    LpOptions,
    finish,
    no_communication,
    solve_exactly,
    time_limit_error,
)
from portsim.planners.lp._extract import extract_trees, repair_ssr, top_down_unit
from portsim.planners.lp._reduce_columns import (
    reduction_trees,
)
from portsim.planners.lp._solve import (
    Deadline,
    TimeLimitReached,
)
from portsim.planners.lp._ssr import (
    TP,
    build_reduce_model,
)
from portsim.simulator.numbers import counted
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = ["plan_reduce", "refuse_reduction"]


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
        return no_communication(operation)
    return None


def plan_reduce(platform: Platform, operation: Operation, options: LpOptions, *,
                port_sum: frozenset[NodeId] = frozenset()) -> PlanResult:
    """Optimal steady-state series of non-commutative reduces (SSR(G)).

    SSR(G) is solved as a packing of reduction trees by column generation
    (:func:`reduction_trees`; the same optimum as :func:`build_reduce_model`,
    certified by an exact pricing), which gives the weighted trees of
    EXTRACT_TREES directly.  ``time_limit`` covers the column generation,
    the exact recovery and the certificate (the periodic schedule is built
    only if time remains); the generation stops after
    :data:`~portsim.planners.lp._incremental.GENERATION_SHARE` of it, and the
    answer is then the certified interval over the trees found; ``method``
    is HiGHS's method for the exact solve of the master.  Should the column
    generation fail (HiGHS error on the master), the whole SSR(G) program is
    solved instead.

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
        found = reduction_trees(platform, operation, deadline=deadline,
                                limit_text=options.limit_text, method=options.method,
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
    groups = [[top_down_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options,
                  notes=[f"SSR(G) by column generation over reduction trees: "
                         f"{counted(rounds, 'pricing round')}, "
                         f"{counted(len(trees), 'weighted tree')}"])


def _plan_reduce_flat(platform: Platform, operation: Operation, options: LpOptions,
                      deadline: Deadline, why: str) -> PlanResult:
    """The whole SSR(G) program, when the column generation gave no answer."""
    if deadline.expired:
        return time_limit_error(options, f"the reduce (SSR) trees ({why})")
    model = build_reduce_model(platform, operation)

    def repair(x: np.ndarray) -> list[Fraction] | None:
        return repair_ssr(platform, operation, model, x)

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
    groups = [[top_down_unit(w, tasks) for w, tasks in trees]]
    return finish(platform, operation, exact, groups, options,
                  notes=[f"whole SSR(G) program (column generation: {why})"])
