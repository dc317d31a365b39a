"""SSR(G) as a packing of reduction trees, by column generation (:func:`reduction_trees`).

By Lemma 2 of RR-4872 every SSR(G) solution is a weighted sum of reduction
trees, so the packing has the same optimum: the master program has one row
per port, per CPU and per shared link; the pricing step is
:func:`~portsim.planners.lp._tree_pricing.cheapest_tree`; floats drive the
generation, then the master is solved exactly and priced exactly, which
certifies the bound (see :func:`reduction_trees`).  When the master reaches
the single-node bound, a second, lexicographic phase picks among the optimal
tree mixes one of least weighted makespan (:func:`_shallowest`, with the
shallow seed families of :mod:`~portsim.planners.lp._reduce_startup`), for a
short start-up of the periodic schedule.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from fractions import Fraction

import numpy as np

from portsim.planners.lp._exact import SINGLE_NODE_BOUND, ExactSolution, recover
from portsim.planners.lp._incremental import (
    GENERATION_SHARE,
    TOLERANCE,
    IncrementalMaster,
    MasterFailed,
    MasterPoint,
    Probe,
    Smoothing,
    exact_rounds,
    generate,
)
from portsim.planners.lp._reduce_startup import (
    aligned_trees,
    interleaved_trees,
    tree_makespan,
)
from portsim.planners.lp._solve import (
    Deadline,
    LinearModel,
    TimeLimitReached,
    solve_float,
)
from portsim.planners.lp._ssr import (
    TP,
    Task,
    reduce_cap,
)
from portsim.planners.lp._tree_pricing import (
    TreeSpace,
    chain_trees,
    cheapest_tree,
    cheapest_trees,
    float_price,
)
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation
from portsim.simulator.platform import NodeId, Platform

__all__ = ["ALIGNED_ARITIES", "COLUMNS_PER_ROUND", "EXACT_ROUNDS", "PROBE_DENOMINATOR",
           "SEED_ARITIES", "SINGLE_PRECISION_FROM", "SINGLE_PRECISION_SLACK", "SMOOTHING",
           "STAR_SEEDS", "reduction_trees"]


EXACT_ROUNDS = 50
"""Cap on the exact rounds (exact master, exact pricing); past it the answer
is the certified interval of the last one.  Above the other generations' cap
(:data:`portsim.planners.lp._incremental.EXACT_ROUNDS`): the reduce results
have always had this one."""


COLUMNS_PER_ROUND = 3
"""Trees added per pricing round at most (the cheapest, then other last tasks)."""


SMOOTHING = Smoothing(0.8, adaptive=True)
"""Wentges dual smoothing of the generation
(:class:`~portsim.planners.lp._incremental.Smoothing`): price at
``α·center + (1-α)·y`` (the center is the dual of the best bound so far),
then at the master's ``y`` if no tree found improves the master; ``α``
starts at 0.8 and follows the subgradient (Pessoa et al. 2018): rounds at
N = 40, 60, 100 (seeds N, N + 1) 144, 123, 377, 352, 524, 439 with a fixed
0.8, 147, 111, 363, 302, 493, 434 self-adjusting."""


SINGLE_PRECISION_FROM = 50
"""From this many participants the pricing's dynamic program runs in float32
first: it is most of a round (N = 60: 70 %) and float32 halves its memory
traffic (three trees from one program, N = 60: 21 -> 13 ms, N = 100: 132 ->
70 ms); a probe whose float32 trees do not improve the master is priced
again in float64, so the loop ends on float64 prices as before.  Below, the
program is cheap and float64 keeps the trees found as they were (the
bundled examples' among them)."""

SINGLE_PRECISION_SLACK = 1e-4
"""A float32 tree price, a sum of ``K`` prices, may be off by ``K·2^-24``
relative (a tree at N = 100: ``K`` about 10^3, 6e-5); the bound a float32
least price gives is raised by this fraction so that the float loop does not
stop early on it (an early stop would only cost exact rounds: the
certificate is exact whatever the floats)."""


SEED_ARITIES = (2, 3, 4, 8)
"""Arities of the shallow seed families (:func:`~portsim.planners.lp._reduce_startup.
interleaved_trees`); every participant but the target is also the centre of one
star (arity ``N - 1``) when there are at most :data:`STAR_SEEDS` of them."""

STAR_SEEDS = 16
"""Most participants for which the star family (one tree per centre) is seeded."""

ALIGNED_ARITIES = (2, 3, 5)
"""Arities of the seed families whose roots and cuts are chosen for the earliest result
(:func:`~portsim.planners.lp._reduce_startup.aligned_trees`); :func:`_shallowest` takes
the mix of least weighted makespan among them.  On ``fat_tree`` k=4 that is the family of
3 (makespans 21, 24, 27), which loses 26 time units in 100 periods of 3 (0.913 of the
bound); the pair (25, 28) lost 27 in 100 periods of 2 (0.865).  On k=8 it is the family
of 5 (35, 37, 38, 36, 37: mean 36.6 against the family of 3's 39, 37, 39), which loses 46
time units in 100 periods of 5 (0.908 of the bound; the family of 3 lost 43 in 100
periods of 3, 0.857: fewer in time, too few in periods for issue 14's 0.9).  Not 4 and
6: with them, k=4 takes a mix of period 6 that loses 31 time units (0.948), and k=8
keeps the family of 5."""


def _master(space: TreeSpace, columns: list[list[Task]]) -> LinearModel:
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


def _shallowest(space: TreeSpace, columns: list[list[Task]],
                chosen: list[tuple[Fraction, list[Task]]], value: Fraction,
                clock: Deadline, method: str) -> list[tuple[Fraction, list[Task]]] | None:
    """Trees carrying exactly ``value`` of least weighted makespan, all shorter than ``chosen``'s.

    The second, lexicographic phase of :func:`reduction_trees` when the
    master reached :func:`~portsim.planners.lp._ssr.reduce_cap` with the
    trees ``chosen``: over the generated ``columns`` and the seed families of
    :func:`~portsim.planners.lp._reduce_startup.interleaved_trees` and
    :func:`~portsim.planners.lp._reduce_startup.aligned_trees` whose
    makespan (:func:`~portsim.planners.lp._reduce_startup.tree_makespan`)
    is below the longest of ``chosen`` (the periodic schedule's start-up
    follows its longest tree: it can only shrink), the same rows and ``Σ λ_T
    = value``, minimise ``Σ λ_T · makespan(T)``, solved exactly.  A seed
    family is one variable whose weight its ``q`` trees share equally: they
    reach the bound together, and a vertex mixing them with unequal weights
    would give a period of huge least common multiple (``fat_tree`` k=4:
    27960, hence a fixed period 232 and a start-up of ~1,900 time units).

    The bound does not change.  ``None`` (keep ``chosen``) when no seed
    family is shorter than ``chosen``'s longest tree (on ``dgx1`` and
    ``dgx_a100`` the chosen trees are already shallow; the program is then
    not even built), or when the exact solution fails the exact check of
    every row and of the total.
    """
    known: dict[tuple[Task, ...], Fraction] = {}

    def makespan(tasks: list[Task]) -> Fraction:
        key = tuple(tasks)
        if key not in known:
            known[key] = tree_makespan(space, tasks)
        return known[key]

    before = max(makespan(tasks) for _, tasks in chosen)
    others = len(space.owners) - 1
    arities = [*SEED_ARITIES, *([others] if others <= STAR_SEEDS else [])]
    groups: list[list[list[Task]]] = [
        family for family in [*interleaved_trees(space, arities),
                              *aligned_trees(space, ALIGNED_ARITIES)]
        if all(makespan(tasks) < before for tasks in family)]
    if not groups:
        return None
    seen = {tuple(tasks) for family in groups for tasks in family}
    groups += [[tasks] for tasks in columns if tuple(tasks) not in seen]
    span = [max(makespan(tasks) for tasks in group) for group in groups]
    loads: list[dict[int, Fraction]] = []
    for group in groups:
        mean: dict[int, Fraction] = defaultdict(Fraction)
        for tasks in group:
            for r, a in space.loads(tasks).items():
                mean[r] += a / len(group)
        loads.append(mean)

    def program(limit: Fraction) -> tuple[LinearModel, list[int]]:
        """Over the groups of makespan <= limit: max slack with Σ μ = value."""
        kept = [g for g in range(len(groups)) if span[g] <= limit]
        model = LinearModel()
        rows: list[dict[int, Fraction]] = [{} for _ in range(space.n_rows)]
        total: dict[int, Fraction] = {}
        spent: dict[int, Fraction] = {}
        for g in kept:
            j = model.variable(("group", g), upper=1 / max(loads[g].values()))
            total[j], spent[j] = Fraction(1), span[g]
            for r, a in loads[g].items():
                rows[r][j] = a
        # slack = limit · value - Σ μ · makespan >= 0, maximised
        slack = model.variable("slack", upper=limit * value + 1)
        model.objective = slack
        spent[slack] = Fraction(1)
        model.add(total, "==", value, "the trees carry the bound")
        model.add(spent, "==", limit * value, "slack + Σ μ · makespan")
        for r, coeffs in enumerate(rows):
            model.add(coeffs, "<=", space.rhs[r], f"row {r}")
        return model, kept

    options = "highs-ds" if method == "auto" else method
    # Only trees shorter than the longest chosen one: the start-up can only shrink.
    shorter = max(x for x in span if x < before) if any(x < before for x in span) else None
    if shorter is None:
        return None
    model, kept = program(shorter)
    sol = solve_float(model, method=options, time_limit=clock.remaining())
    if sol.status != "optimal":
        return None
    exact = recover(model, sol, deadline=clock)
    if exact is None:
        return None
    weights: dict[tuple[Task, ...], tuple[Fraction, list[Task]]] = {}
    for g in kept:
        mu = exact.values[model.index["group", g]]
        if mu < 0:
            return None
        for tasks in groups[g]:
            old, _ = weights.get(tuple(tasks), (Fraction(0), tasks))
            weights[tuple(tasks)] = (old + mu / len(groups[g]), tasks)
    mix = [(w, tasks) for w, tasks in weights.values() if w > 0]
    if sum(w for w, _ in mix) != value:
        return None
    used: dict[int, Fraction] = defaultdict(Fraction)
    for w, tasks in mix:
        for r, a in space.loads(tasks).items():
            used[r] += w * a
    if any(v > space.rhs[r] for r, v in used.items()):
        return None
    if max(makespan(tasks) for _, tasks in mix) >= before:
        return None
    return mix


PROBE_DENOMINATOR = 2 ** 40
"""A probed float dual is rounded down to multiples of ``1 / PROBE_DENOMINATOR``
before its exact pricing (:func:`_probe_bound`): any ``y >= 0`` certifies a
bound, and a common denominator keeps the exact dynamic program's integers
small."""


def _probe_bound(space: TreeSpace, probe: np.ndarray, clock: Deadline) -> Fraction | None:
    """The bound ``Σ rhs·y / W`` of a float dual ``y`` made exact (``W`` its least tree price).

    ``y`` is rounded down to multiples of :data:`PROBE_DENOMINATOR` (negative
    entries to 0): weak duality holds for every ``y >= 0`` (see
    :func:`reduction_trees`), so the bound is certified whatever the floats.
    ``None`` when the least price is 0.
    """
    y = [Fraction(max(0, math.floor(float(v) * PROBE_DENOMINATOR)), PROBE_DENOMINATOR)
         for v in probe]
    least, tasks = _least_tree(space, y, clock)
    if tasks is None or least <= 0:
        return None
    return space.dual_value(y) / least


def _least_tree(space: TreeSpace, y: list[Fraction],
                clock: Deadline) -> tuple[Fraction, list[Task] | None]:
    """The least price ``W`` of a reduction tree under the exact prices of ``y``, and
    that tree (``None`` when no tree reaches the target): the exact pricing of both
    certificates, the master's dual and a probed one."""
    link, cpu, q = space.prices(y, exact=True)
    price, tasks = cheapest_tree(space, link, cpu, deadline=clock)
    return Fraction(int(price), q), tasks


def reduction_trees(platform: Platform, operation: Operation, *,
                    deadline: Deadline | None = None, limit_text: str = "the call",
                    method: str = "auto",
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
        The float rounds stop after
        :data:`~portsim.planners.lp._incremental.GENERATION_SHARE` of the
        time left: the master over the trees in use is then solved exactly,
        the dual of the least bound the rounds probed is priced exactly
        (:func:`_probe_bound`; the master's own dual where none was probed),
        and the answer is the certified interval (a note says so).
    limit_text:
        The time limit as the note on such a cut names it.
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

    The master starts from the two chains of the participants' order
    (:func:`~portsim.planners.lp._tree_pricing.chain_trees`) and the cheapest
    tree at unit prices.  When its value reaches
    :func:`~portsim.planners.lp._ssr.reduce_cap`, a bound on every schedule,
    the generation stops there and no exact pricing runs: the result is
    exact with ``method`` :data:`~portsim.planners.lp._exact.SINGLE_NODE_BOUND`
    (on a fabric where every host makes one reduction, a chain is optimal at
    once; without it the generation needed hundreds of rounds, ``fat_tree``
    k=6: 235).  Then a second, lexicographic phase (:func:`_shallowest`)
    may replace the trees by a mix of the same value and of least weighted
    makespan among the generated columns and the shallow seed families of
    :func:`~portsim.planners.lp._reduce_startup.interleaved_trees` (arities
    :data:`SEED_ARITIES`, and the stars when there are at most
    :data:`STAR_SEEDS` other participants) and
    :func:`~portsim.planners.lp._reduce_startup.aligned_trees` (arities
    :data:`ALIGNED_ARITIES`), when every tree of the mix is shorter than the
    longest tree found: the bound and its certificate are the same, only
    the trees differ (``fat_tree`` k=4: the chains' start-up of 64 periods
    of 1 becomes 9 periods of 3, with the aligned family of three; on
    ``dgx_a100``, ``mi250`` and ``dgx1`` the trees stay).
    """
    clock = deadline if deadline is not None else Deadline()
    started = time.perf_counter()
    space = TreeSpace.of(platform, operation, port_sum)
    built = time.perf_counter()
    columns: list[list[Task]] = []
    seen: set[tuple[Task, ...]] = set()

    def add(tasks: list[Task] | None) -> bool:
        if tasks is None or tuple(tasks) in seen:
            return False
        seen.add(tuple(tasks))
        columns.append(tasks)
        master.add_column(1.0, *space.float_loads(tasks))
        return True

    # The tree master, float (rows: the port and CPU rows of SSR(G), ``<=``).
    master = IncrementalMaster(np.full(space.n_rows, -np.inf),
                               np.array([float(b) for b in space.rhs]),
                               {"solver": "simplex", "presolve": "off"})
    rhs_float = np.array([float(b) for b in space.rhs])
    link, cpu, _ = space.prices([Fraction(1)] * space.n_rows, exact=False)
    _, first = cheapest_tree(space, link, cpu, deadline=clock)
    # The float rounds stop at this budget; the exact phase then runs over the
    # trees found (GENERATION_SHARE): a schedule and a certified interval.
    budget = clock.part(GENERATION_SHARE)
    best: list[tuple[float, np.ndarray]] = []  # the dual of the least bound probed
    priced = 0  # the rounds priced
    if first is None:
        return "no reduction tree reaches the target"
    cap = reduce_cap(platform, operation)
    capped = False
    upper: Fraction | None
    for chain in chain_trees(space):
        add(chain)
    add(first)
    failed: list[str] = []

    def pricing(point: MasterPoint, probe: np.ndarray) -> Probe | None:
        nonlocal priced
        priced += 1
        if cap is not None and point.value >= float(cap) * (1 - TOLERANCE):
            return None  # at a proven bound: optimal
        budget.check("column generation (pricing)")
        link, cpu, _ = space.prices(probe, exact=False)
        single = len(space.owners) >= SINGLE_PRECISION_FROM
        entered = False
        for dtype in ((np.float32, np.float64) if single else (np.float64,)):
            found = cheapest_trees(space, link.astype(dtype), cpu.astype(dtype),
                                   COLUMNS_PER_ROUND, deadline=budget)
            if not found:
                failed.append("no reduction tree reaches the target")
                return None
            bound, subgradient = math.inf, None
            if found[0][0] > 0:  # any y >= 0 bounds SSR(G) by Σ rhs·y / (least tree price)
                bound = float(np.dot(rhs_float, probe)) / float(found[0][0])
                if dtype is np.float32:
                    bound *= 1 + SINGLE_PRECISION_SLACK
                rows, loads = space.float_loads(found[0][1])
                subgradient = rhs_float.copy()
                subgradient[rows] -= bound * loads
                if not best or bound < best[0][0]:
                    best[:] = [(bound, probe.copy())]
            improving = [t for _, t in found
                         if float_price(space, t, point.duals) < 1 - TOLERANCE]
            entered = sum(add(t) for t in improving) > 0
            if entered:
                break
        return Probe(bound, entered, subgradient)

    cut = False
    try:
        rounds = generate(master, pricing, deadline=budget,
                          phase="column generation (master program)", smoothing=SMOOTHING)
    except TimeLimitReached:
        if clock.expired:
            raise
        cut, rounds = True, priced  # the budget, not the call's: on with the trees found
    except MasterFailed as failure:
        return f"HiGHS failed on the reduce tree master program: {failure.status}"
    if failed:
        return failed[0]
    # Exact phase: the master over the trees in use solved exactly, its dual
    # priced exactly; a tree priced below 1 joins and the master is solved again.
    active = [columns[c] for c in master.used()] or list(columns)
    generated = time.perf_counter()
    for exact_round in exact_rounds(deadline=clock, phase="exact recovery (tree master)",
                                    max_rounds=EXACT_ROUNDS):
        model = _master(space, active)
        options_method = "highs-ds" if method == "auto" else method
        sol = solve_float(model, method=options_method, time_limit=clock.remaining())
        if sol.status == "time_limit":
            raise TimeLimitReached("exact recovery (tree master)")
        if sol.status != "optimal":
            return f"HiGHS failed on the reduce tree master program: {sol.message}"
        recovered = recover(model, sol, deadline=clock)
        if recovered is None:
            return "no exactly feasible solution of the reduce tree master program"
        exact = recovered
        if cap is not None and exact.lower >= cap:
            upper = cap  # reduce_cap bounds every schedule: no pricing needed
            capped = True
            break
        if cut and best:  # no time for more exact rounds: the least bound probed
            upper = _probe_bound(space, best[0][1], clock)
            if upper is not None:
                break
        clock.check("exact pricing (certificate)")
        y_rows = exact.y_ub
        cheapest, tasks = _least_tree(space, y_rows, clock)
        if tasks is None:
            return "no reduction tree reaches the target"
        dual_value = space.dual_value(y_rows)
        if cheapest >= 1:
            upper = dual_value
        elif cheapest > 0:
            upper = dual_value / cheapest
        else:
            upper = None
        if cut:
            break
        if (upper is not None and upper <= exact.lower) or exact_round >= EXACT_ROUNDS \
                or tasks in active:
            break
        active.append(tasks)
    if upper is None:
        return "the exact pricing found a tree of price 0: no certified bound"
    trees = [(exact.values[model.index["tree", c]], tasks)
             for c, tasks in enumerate(active) if exact.values[model.index["tree", c]] > 0]
    shallow = None
    if capped and upper is not None:
        shallow = _shallowest(space, columns, trees, upper, clock, method)
        if shallow is not None:
            trees = shallow
    upper = max(upper, exact.lower)
    method_name = exact.method if upper == exact.lower else "interval"
    notes = exact.notes
    if cut and not capped:
        notes = (*notes, f"the tree generation stopped after {GENERATION_SHARE:.0%} of the "
                         f"time left under the time limit of {limit_text}: the lower end "
                         f"is the best packing of the trees in use (what a schedule of them "
                         f"carries), the upper end a certified bound (the exact pricing of "
                         f"the best dual probed)")
    if capped:
        method_name = SINGLE_NODE_BOUND
        notes = (*notes, f"the trees reach {format_rational(upper)}, the single-node bound "
                         f"(reduce_cap: the target receives at least one message an instance, "
                         f"every other participant sends one, the N - 1 reductions share the "
                         f"processors): optimal, no pricing needed")
        if shallow is not None:
            notes = (*notes, "among the tree mixes at that bound, one of least weighted "
                             "makespan (shallow seed trees, for a short start-up)")
    certified = ExactSolution(exact.values, exact.lower, upper, exact.y_ub, exact.y_eq,
                              method_name, notes)
    if stats is not None:
        stats.update(build=built - started, solve=generated - built,
                     exact=time.perf_counter() - generated, rounds=rounds,
                     exact_rounds=exact_round, columns=len(columns))
    return certified, trees, rounds
