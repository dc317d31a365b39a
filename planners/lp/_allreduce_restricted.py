"""Series of all-reduces: the relaxation restricted to a few whole copies (destination generation).

The relaxation of :mod:`portsim.planners.lp._allreduce_bound` holds one
SSR(G) copy per destination, about ``N⁵`` variables: more than 300 s of CPU
from N = 12.  Its *restricted* form
(:func:`~portsim.planners.lp._allreduce_bound.build_allreduce_bound_model`
with ``full``) keeps the whole copy of a few destinations ``D`` and, for
every other destination ``d``, only the rows of ``d``'s own node: ``d``
builds ``v[0,N-1]`` from what it receives (each reception at most the actual
send) and what it computes itself.  It is the relaxation with rows dropped,
so its value is a certified upper bound on every schedule, at or above the
relaxation's, and it falls as ``D`` grows (with every participant in ``D``
it *is* the relaxation).  Where those local rows are too many, the other
destinations are kept by *receive cuts* instead
(:func:`~portsim.planners.lp._allreduce_bound.add_receive_cuts`: each other
participant's index reaches ``d`` inside a received interval once an
instance), sums of the local rows: no variable, a looser bound.

**Destination generation** (:func:`restricted_bound`).  Start from ``D`` =
the first participant; solve exactly; stop when the bound meets the target
(step 2's schedule: then the schedule is optimal).  Otherwise, for each
destination outside ``D``, the largest rate its whole copy reaches inside
the solution's actual operations (a small program, one copy alone, in
floating point): the one with the least rate joins ``D`` when that rate is
below the solution's, and the restricted program is solved again.  When
every copy fits, the solution is feasible for the whole relaxation, so the
bound is the relaxation's value (up to the floating-point check; the bound
itself is certified either way).

Why this and not the relaxation's own column generation: the per-destination
master is very degenerate (its duals stall; the eleventh and twelfth
sessions' measurements in ``benchmarks/lp_allreduce.py``), whereas here every
program is an ordinary LP that HiGHS's interior point solves in seconds, and
a few whole copies suffice.  Measured (out-degree 3, costs 1..10, compute
0..3, CPU seconds, HiGHS interior point then the exact recovery from its
basis, ``/tmp/gen12.py`` of the thirteenth session): random N = 12, seed 1,
where the relaxation equals step 2 (68 s for the float relaxation alone),
``D`` of 1, 2, 3 and 4 destinations: 1.0035, 1.0035, 1.0014 and 1.0011
times step 2, in 1.6, 6.7, 15.7 and 27.7 s in all; the split of step 2's
dual gave 1.20.  Random N = 24, seed 1, one destination with receive cuts
(141,954 variables): 1.0073 in 35-46 s (the split gave 1.19).

The work is bounded by the variables solved, not by a clock: without a
``time_limit`` the same scenario gives the same bound on every machine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from portsim.planners.base import PlanResult
from portsim.planners.lp._allreduce_bound import build_allreduce_bound_model, restricted_size
from portsim.planners.lp._driver import LpOptions, solve_exactly
from portsim.planners.lp._exact import Repair
from portsim.planners.lp._solve import Deadline, LinearModel, highs_lp, new_highs
from portsim.planners.lp._ssr import conserve_send, conserve_task, reduction_tasks, ssr_sends
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["RestrictedBound", "restricted_bound"]


FIT = 1e-9
"""A copy whose rate inside the solution's operations is at least ``1 - FIT``
times the solution's counts as fitting (floating point)."""


@dataclass(frozen=True)
class RestrictedBound:
    """What :func:`restricted_bound` proved.

    Attributes
    ----------
    upper:
        The least certified upper bound found (``None`` when no program was
        solved).
    full:
        The destinations whose copies were whole in the program that gave it.
    programs:
        How many restricted programs were solved.
    stop:
        Why the generation stopped, one phrase: ``"met"`` (the target is
        reached), ``"fits"`` (every other copy fits: the relaxation's value),
        or the limit that cut it.
    others:
        How the other destinations were kept (``local`` or ``cuts``).
    """

    upper: Fraction | None
    full: tuple[NodeId, ...]
    programs: int
    stop: str
    others: str = "local"


def _zero(n: int) -> Repair:
    """The zero point, feasible for every row of a restricted program (its fallback primal)."""
    zero = [Fraction(0)] * n
    return lambda _: zero


class _CopyRates:
    """The largest rate of a destination's whole copy inside the actual operations of a
    solution (floating point, HiGHS), for every destination of one restricted program.

    The copy of :func:`~portsim.planners.lp._allreduce_bound.add_copies` for
    one destination ``d``, with the actual operations eliminated: each send
    and task of the copy is at most the solution's ``x`` or ``y`` (a column
    bound; a task on a processor of compute time 0 is unbounded, as there),
    the result never leaves ``d``.  The conservation rows are the same for
    every destination but for the one that carries ``TP``: they are built
    once (:func:`~portsim.planners.lp._ssr.conserve_send` and
    :func:`~portsim.planners.lp._ssr.conserve_task`, as every SSR(G) program),
    and each destination only sets the bounds and the ``TP`` column.  Building
    a :class:`LinearModel` per destination took 0.25 s at N = 12, 90% of it in
    Python (Fractions), for a solve of 0.02 s.
    """

    def __init__(self, platform: Platform, operation: Operation, model: LinearModel) -> None:
        parts = operation.participants
        n = self._n = len(parts)
        owner = {p: i for i, p in enumerate(parts)}
        balance: dict[tuple[NodeId, int, int], dict[int, Fraction]] = defaultdict(dict)
        self._sends: list[tuple[NodeId, int, int, int]] = []  # (u, k, m, actual column)
        for u, v, k, m, _ in ssr_sends(platform, operation):
            conserve_send(balance, len(self._sends), u, v, k, m)
            self._sends.append((u, k, m, model.index[("x", u, v, k, m)]))
        self._tasks: list[int | None] = []  # the actual column, None when free
        for node in platform.processors:
            for k, l_, m in reduction_tasks(n):
                conserve_task(balance, len(self._sends) + len(self._tasks), node, k, l_, m)
                self._tasks.append(model.index.get(("y", node, k, l_, m)))
        kept = [key for key in balance
                if not (key[1] == key[2] and owner.get(key[0]) == key[1])]
        self._row = {key: i for i, key in enumerate(kept)}
        rows, cols, vals = [], [], []
        for key, i in self._row.items():
            for j, a in balance[key].items():
                rows.append(i)
                cols.append(j)
                vals.append(float(a))
        self._columns = len(self._sends) + len(self._tasks)
        self._matrix = (np.asarray(rows), np.asarray(cols), np.asarray(vals))

    def rate(self, d: NodeId, values: Sequence[Fraction]) -> float:
        """The largest ``TP`` of ``d``'s whole copy inside ``values`` (0 when none)."""
        import highspy

        result = self._row.get((d, 0, self._n - 1))
        if result is None:
            return 0.0  # no way to build the result at d
        n_cols = self._columns + 1
        rows, cols, vals = self._matrix
        a = sp.csc_matrix((np.append(vals, -1.0), (np.append(rows, result),
                                                   np.append(cols, n_cols - 1))),
                          shape=(len(self._row), n_cols))
        inf = highspy.kHighsInf
        upper = np.empty(n_cols)
        for j, (u, k, m, xj) in enumerate(self._sends):
            upper[j] = 0.0 if (u == d and (k, m) == (0, self._n - 1)) else float(values[xj])
        for j, yj in enumerate(self._tasks, start=len(self._sends)):
            upper[j] = inf if yj is None else float(values[yj])
        upper[-1] = inf
        cost = np.zeros(n_cols)
        cost[-1] = -1.0
        zero = np.zeros(a.shape[0])
        lp = highs_lp(a, cost, upper, zero, zero)
        h = new_highs()
        h.passModel(lp)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return 0.0
        return float(h.getSolution().col_value[-1])


def restricted_bound(platform: Platform, operation: Operation, target: Fraction,
                     options: LpOptions, *, deadline: Deadline, max_variables: int,
                     work: int, others: str = "local") -> RestrictedBound:
    """Destination generation on the restricted relaxation, down to ``target`` at best.

    Parameters
    ----------
    platform, operation:
        As :func:`~portsim.planners.lp._allreduce_bound.build_allreduce_bound_model`.
    target:
        A schedule's throughput: the generation stops when the bound meets it.
    options:
        The ``lp`` options (HiGHS method).
    deadline:
        The time the programs may take; a program stopped by it ends the
        generation, and the bounds proved before it stand.
    max_variables:
        No program above this many variables
        (:func:`~portsim.planners.lp._allreduce_bound.restricted_size`).
    work:
        At most this many variables summed over the programs solved (the
        first one runs whatever this budget, within ``max_variables``): the
        generation's budget, the same on every machine.
    others:
        How the destinations without a whole copy are kept
        (:data:`~portsim.planners.lp._allreduce_bound.OTHERS`).

    Returns
    -------
    RestrictedBound
    """
    parts = operation.participants
    full = [parts[0]]
    best: Fraction | None = None
    best_full: tuple[NodeId, ...] = ()
    programs = spent = 0

    def beyond(size: int) -> str:
        """Why a next program of ``size`` variables may not run, or ``""``."""
        if size > max_variables:
            return f"the next program holds {size:,} variables, above {max_variables:,}"
        if programs and spent + size > work:
            return (f"the next program ({size:,} variables) would take the programs past "
                    f"{work:,} variables in all")
        return ""

    while True:
        size = restricted_size(platform, operation, full, others)
        stop = beyond(size)
        if stop:
            break
        model = build_allreduce_bound_model(platform, operation, full=full, others=others)
        found = solve_exactly(model, options, what="restricted relaxation",
                              repair=_zero(model.n_variables), deadline=deadline)
        if isinstance(found, PlanResult):
            stop = f"a program did not finish ({found.message})"
            break
        programs += 1
        spent += size
        if best is None or found.upper < best:
            best, best_full = found.upper, tuple(full)
        if found.upper <= target:
            stop = "met"
            break
        left = [d for d in parts if d not in full]
        if left:  # no check of the copies when no next program may run
            stop = beyond(min(restricted_size(platform, operation, [*full, d], others)
                              for d in left))
            if stop:
                break
        value = float(found.lower)
        copies = _CopyRates(platform, operation, model)
        rates = sorted((copies.rate(d, found.values), i, d)
                       for i, d in enumerate(parts) if d not in full)
        if not rates or rates[0][0] >= value * (1 - FIT):
            stop = "fits"
            break
        full.append(rates[0][2])
    return RestrictedBound(best, best_full, programs, stop, others)
