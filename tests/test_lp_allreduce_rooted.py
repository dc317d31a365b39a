"""Step 2 of the ``lp`` allreduce by tree columns (``planners/lp/_allreduce_rooted.py``).

The reduce-then-broadcast program priced by reduction trees and
arborescences must have the optimum of the same program with SSR(G)'s
variables (``build_allreduce_master``, an independent formulation: flows,
then EXTRACT_TREES), and its instances must replay clean in the engine.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from budget_cases import budget_passing_at
from random_cases import random_multiport_platform
from relaxation_cases import relaxation_solution, solved_once
from scipy.optimize import linprog

import portsim.planners.lp._allreduce as allreduce_module
import portsim.planners.lp._allreduce_rooted as rooted_module
from portsim.planners.base import PlanResult
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import (
    build_allreduce_bound_model,
    relaxation_size,
)
from portsim.planners.lp._allreduce_columns import _Operations, _Rows, _split, split_bound
from portsim.planners.lp._allreduce_rooted import rooted_columns
from portsim.planners.lp._arborescence import prune
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._solve import Deadline, TimeLimitReached
from portsim.planners.lp._ssr import port_rates
from portsim.planners.lp._tree_pricing import SharedTrees, TreeSpace, cheapest_trees
from portsim.scenarios.generators import fat_tree_platform, random_platform
from portsim.scenarios.testing import assert_throughput_at_least
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.numbers import format_rational

ALLREDUCE = OperationKind.ALLREDUCE


def _step_values(platform: Platform, participants: tuple[str, ...] = ()
                 ) -> tuple[Fraction, Fraction]:
    op = Operation(ALLREDUCE, participants=participants).resolve(platform)
    options = LpOptions()
    rooted = allreduce_module._rooted_step(platform, op, options, options.clock())
    ssr = allreduce_module._ssr_step(platform, op, options, options.clock())
    assert not isinstance(rooted, PlanResult)
    assert not isinstance(ssr, PlanResult)
    return rooted[0].lower, ssr[0].lower


@pytest.mark.parametrize(("n", "degree", "seed"), [
    *((n, 3, seed) for n in (4, 5, 6, 7) for seed in (0, 1, 2)),
    *((n, n - 1, seed) for n in (5, 6, 7) for seed in (0, 1))])
def test_same_optimum_as_the_ssr_variables(n: int, degree: int, seed: int) -> None:
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    rooted, ssr = _step_values(platform)
    assert rooted == ssr


@pytest.mark.parametrize(("n", "degree", "seed"), [(6, 3, 0), (7, 3, 1), (6, 5, 1), (7, 6, 0)])
def test_partial_pricing_keeps_the_optimum(monkeypatch: pytest.MonkeyPatch, n: int,
                                           degree: int, seed: int) -> None:
    """With the columns of one root a round entering (``ROOTS_PER_ROUND``; the
    platforms above have fewer roots than its default), step 2 still ends at the
    optimum of the program with SSR(G)'s variables."""
    monkeypatch.setattr(rooted_module, "ROOTS_PER_ROUND", 1)
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    rooted, ssr = _step_values(platform)
    assert rooted == ssr


def test_same_optimum_with_routers_and_a_subset() -> None:
    platform = Platform.build(
        {"A": 1, "B": 2, "C": 1, "R": 1},
        [("A", "R", 1), ("R", "A", 2), ("B", "R", 1), ("R", "B", 1), ("C", "R", 3),
         ("R", "C", 1), ("A", "B", 2), ("B", "C", 1)], routers=["R"])
    rooted, ssr = _step_values(platform, ("C", "A", "B"))
    assert rooted == ssr > 0
    rooted, ssr = _step_values(platform, ("B", "A"))
    assert rooted == ssr > 0


def test_prune_drops_leaves_outside_the_participants() -> None:
    tree = (("A", "B"), ("B", "C"), ("B", "D"), ("D", "E"))
    assert prune(tree, {"A", "C"}) == (("A", "B"), ("B", "C"))
    assert prune(tree, {"A", "E"}) == (("A", "B"), ("B", "D"), ("D", "E"))


@pytest.mark.filterwarnings("ignore:the exact period")  # a capped period: in the notes
@pytest.mark.parametrize(("n", "seed"), [(3, 0), (4, 1), (5, 2), (6, 0)])
def test_the_planner_by_tree_columns_replays_clean(monkeypatch: pytest.MonkeyPatch, n: int,
                                                   seed: int) -> None:
    platform = random_platform(n, min(3, n - 1), c=(1, 5), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    default = steady_state(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert any("reduction tree and" in note for note in result.notes)
    assert result.throughput_bound == default.throughput_bound
    horizon = result.period * 50
    report = replay(result.schedule, horizon=horizon)
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    achieved = Fraction(result.schedule.instances_per_period) / result.period
    assert report.completed <= result.throughput_bound * horizon
    assert report.completed >= 0.8 * float(achieved * horizon)


def test_an_expired_deadline_stops_the_generation() -> None:
    platform = random_platform(6, 3, c=(1, 5), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    with pytest.raises(TimeLimitReached, match=r"pricing|arborescences"):
        rooted_columns(platform, op, deadline=Deadline.after(0.0))


def test_the_deadline_is_checked_between_arborescences(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadline that passes during a round's arborescences stops the next one: the
    round does not price every remaining root first (seconds at 128 nodes)."""
    platform = random_platform(9, 3, c=(1, 5), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    deadline = Deadline.after(3600.0)
    calls = []
    plain = rooted_module.min_arborescence

    def expiring(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        object.__setattr__(deadline, "at", 0.0)  # the deadline passes during this one
        return plain(*args, **kwargs)

    monkeypatch.setattr(rooted_module, "min_arborescence", expiring)
    with pytest.raises(TimeLimitReached, match="arborescences"):
        rooted_columns(platform, op, deadline=deadline)
    assert len(calls) == 1  # the first round has 9 roots to price


def _budget_passing_at(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """Step 2's budget passes at the ``call``-th dynamic program (the first prices the
    first columns, the next ones each round)."""
    budget_passing_at(monkeypatch, rooted_module, "SharedTrees", call)


BUDGET_CASES = [pytest.param(6, True, id="six"),
                pytest.param(9, False, id="nine", marks=pytest.mark.slow)]
"""The platforms of the budget tests below: ``random_platform(n, 3, seed=0)``, nine
nodes at the default ROOTED_FROM (the relaxation the planner solves for its upper end
takes 7 s there: the slow suite), six from ROOTED_FROM 2, where every check below
holds as well (the default suite's duplicate of the nine-node case)."""


def _budget_platform(monkeypatch: pytest.MonkeyPatch, n: int, rooted_from_two: bool
                     ) -> tuple[Platform, Operation]:
    """The platform of :data:`BUDGET_CASES` and its allreduce, the relaxation the
    planner solves being the test's own (:func:`solved_once`)."""
    platform = random_platform(n, 3, c=(1, 10), compute=(0, 3), seed=0)
    if rooted_from_two:
        monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    solved_once(monkeypatch)
    return platform, Operation(ALLREDUCE).resolve(platform)


@pytest.mark.filterwarnings("ignore:the exact period")  # a capped period: in the notes
@pytest.mark.parametrize(("n", "rooted_from_two", "optimum"), [
    pytest.param(6, True, Fraction(517, 3994), id="six"),
    pytest.param(9, False, Fraction(378317, 3336558), id="nine", marks=pytest.mark.slow)])
def test_a_step2_cut_by_its_budget_gives_a_schedule_and_the_interval(
        monkeypatch: pytest.MonkeyPatch, n: int, rooted_from_two: bool,
        optimum: Fraction) -> None:
    """Step 2's generation stopped by its budget after three rounds: the schedule of
    its columns in use, below the optimum, and the certified interval up to the
    relaxation (which step 2 uncut reaches: ``optimum``, the exact optimum; the
    relaxation alone gives it, an independent program).  The planner solves that same
    relaxation for its upper end: once for both (:func:`solved_once`)."""
    platform, op = _budget_platform(monkeypatch, n, rooted_from_two)
    assert _relaxation(platform, op) == optimum
    _budget_passing_at(monkeypatch, 4)
    result = steady_state(platform, op, time_limit=600)
    assert result.status == "ok", result.message
    assert result.throughput_bound == optimum
    assert any("after 3 round(s) (the generation stopped after 85% of the time left" in note
               for note in result.notes)
    lower = Fraction(result.message.split("[")[1].split(",")[0])
    assert 0 < lower < optimum
    horizon = result.period * 20
    report = replay(result.schedule, horizon=horizon)
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    assert report.completed <= lower * horizon


@pytest.mark.filterwarnings("ignore:the exact period")  # a capped period: in the notes
@pytest.mark.parametrize(("n", "rooted_from_two"), BUDGET_CASES)
def test_an_interval_says_what_a_fixed_period_achieves(
        monkeypatch: pytest.MonkeyPatch, n: int, rooted_from_two: bool) -> None:
    """The interval's lower end is what step 2's program carries; a fixed period (here
    forced by ``max_events``) carries less, and the message gives that figure, the
    replay's, not "the schedule achieves the lower end"."""
    platform, op = _budget_platform(monkeypatch, n, rooted_from_two)
    _budget_passing_at(monkeypatch, 4)
    result = steady_state(platform, op, time_limit=600, max_events=400)
    assert result.status == "ok", result.message
    lower = Fraction(result.message.split("[")[1].split(",")[0])
    achieved = Fraction(result.schedule.instances_per_period) / result.period
    assert result.achieved_throughput == achieved < lower
    assert result.message.endswith(f"the periodic schedule built achieves "
                                   f"{format_rational(achieved)} (a fixed period, see the "
                                   f"notes)")
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()


def test_a_budget_passing_before_any_round_is_a_time_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No round priced, no schedule to give: the budget stops step 2 as the time limit
    does (an error that still states the caps' bound)."""
    platform = random_platform(9, 3, c=(1, 10), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    _budget_passing_at(monkeypatch, 1)
    result = steady_state(platform, op, time_limit=600)
    assert result.status == "error"
    assert result.message.startswith("time limit of 600.0 s reached during pricing")
    assert "certified all the same" in result.message


# -- the bound at scale ---------------------------------------------------------------------

def _relaxation(platform: Platform, op: Operation) -> Fraction:
    """The whole relaxation's value, solved once a session (``relaxation_cases.py``)."""
    return relaxation_solution(platform, op).upper


@pytest.mark.parametrize(("n", "degree", "seed"), [
    *((n, 3, seed) for n in (4, 5, 6) for seed in (0, 1, 2)), (5, 4, 0), (6, 5, 1)])
def test_split_bound_is_never_below_the_relaxation(n: int, degree: int, seed: int) -> None:
    """Any prices y >= 0 give a bound of the packing of fractional structures (the relaxation)."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    options = LpOptions()
    step2 = allreduce_module._rooted_step(platform, op, options, options.clock())
    assert not isinstance(step2, PlanResult)
    rows = len(step2[0].y_ub)
    rng = random.Random(seed)
    for y in (step2[0].y_ub, [Fraction(rng.randint(0, 9), rng.randint(1, 9)) for _ in range(rows)],
              [Fraction(1)] * rows):
        for rounds in (0, 20):
            upper = split_bound(platform, op, y, deadline=Deadline.after(None), max_rounds=rounds)
            assert upper is None or upper >= relaxation


@pytest.mark.parametrize(("n", "degree", "seed"), [(5, 4, 0), (5, 4, 1), (7, 3, 1)])
def test_the_best_split_meets_the_schedule_where_the_first_does_not(
        n: int, degree: int, seed: int) -> None:
    """Measured cases where step 2 is optimal: the best split's bound is within 1e-6 of it."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    options = LpOptions()
    step2 = allreduce_module._rooted_step(platform, op, options, options.clock())
    assert not isinstance(step2, PlanResult)
    value = step2[0].lower
    assert value == _relaxation(platform, op)
    first = split_bound(platform, op, step2[0].y_ub, deadline=Deadline.after(None),
                        max_rounds=0)
    best = split_bound(platform, op, step2[0].y_ub, deadline=Deadline.after(None))
    assert first is not None
    assert best is not None
    assert value <= best < first
    assert best <= value * (1 + Fraction(1, 10**6))


def test_a_spent_budget_keeps_the_best_split_found() -> None:
    platform = random_platform(5, 4, c=(1, 10), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    options = LpOptions()
    step2 = allreduce_module._rooted_step(platform, op, options, options.clock())
    assert not isinstance(step2, PlanResult)
    spent = split_bound(platform, op, step2[0].y_ub, deadline=Deadline.after(None),
                        budget=Deadline.after(0.0))
    first = split_bound(platform, op, step2[0].y_ub, deadline=Deadline.after(None),
                        max_rounds=0)
    assert spent == first
    with pytest.raises(TimeLimitReached):
        split_bound(platform, op, step2[0].y_ub, deadline=Deadline.after(0.0))


def test_relaxation_size_counts_the_model_without_building_it() -> None:
    platform = Platform.build(
        {"A": 1, "B": 0, "C": 1, "R": 1},
        [("A", "R", 1), ("R", "A", 2), ("B", "R", 1), ("R", "B", 1), ("C", "R", 3),
         ("R", "C", 1), ("A", "B", 2), ("B", "C", 1)], routers=["R"])
    for participants in (("C", "A", "B"), ("B", "A")):
        op = Operation(ALLREDUCE, participants=participants).resolve(platform)
        model = build_allreduce_bound_model(platform, op)
        assert relaxation_size(platform, op) == model.n_variables
    platform = random_platform(7, 6, c=(1, 10), compute=(0, 3), seed=3)
    op = Operation(ALLREDUCE).resolve(platform)
    assert relaxation_size(platform, op) == build_allreduce_bound_model(platform, op).n_variables


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "degree", "seed"), [
    *((n, 3, seed) for n in (5, 6, 7) for seed in (0, 1)), (6, 5, 0), (7, 6, 1)])
def test_the_plan_at_scale_never_claims_more_than_it_proves(
        monkeypatch: pytest.MonkeyPatch, n: int, degree: int, seed: int) -> None:
    """Step 2 first, then the cheapest bound: an exact claim equals the relaxation.

    The upper end is a bound on the structure packing, the relaxation bounds
    it from above, and step 2 is achievable: so an exact result (upper end
    equal to step 2) must equal the whole relaxation, computed independently
    (the program of N SSR(G) copies), and an interval must contain it or lie
    above it.
    """
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)  # cheap bounds only
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert any(note.startswith("upper bound: ") for note in result.notes)
    if result.message:
        assert "certified interval" in result.message
        assert any("not attempted" in note for note in result.notes)
        assert result.throughput_bound >= relaxation
    else:
        assert result.throughput_bound == relaxation
    report = replay(result.schedule, horizon=result.period * 20)
    assert report.violations == (), [str(v) for v in report.violations[:3]]


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "degree", "seed"), [(5, 3, 5), (5, 2, 1)])
def test_a_time_limit_lets_a_relaxation_above_the_cap_run(
        monkeypatch: pytest.MonkeyPatch, n: int, degree: int, seed: int) -> None:
    """Above RELAXATION_MAX_VARIABLES (here 0) the relaxation is skipped without a
    time_limit (a certified interval on these platforms), and above
    RELAXATION_MAX_WITH_TIME_LIMIT even with one; below that it runs with one: the
    result is then exact, at the whole relaxation computed independently."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    skipped = steady_state(platform, op)
    assert "certified interval" in skipped.message
    assert any("not attempted" in note and "without a time_limit" in note
               for note in skipped.notes)
    assert skipped.throughput_bound > relaxation
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_WITH_TIME_LIMIT", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_WITH_TIME_LIMIT", 0)
    too_big = steady_state(platform, op, time_limit=120)
    assert "certified interval" in too_big.message
    assert any("even with a time_limit" in note for note in too_big.notes)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_WITH_TIME_LIMIT", 400_000)
    monkeypatch.setattr(allreduce_module, "_dual_check",  # no dual check: the relaxation
                        lambda *_, **__: "off")
    ran = steady_state(platform, op, time_limit=120)
    assert ran.status == "ok"
    assert ran.message == ""
    assert ran.throughput_bound == ran.achieved_throughput == relaxation
    assert any("per-destination SSR(G) copies over shared operations" in note
               for note in ran.notes)


@pytest.mark.filterwarnings("ignore:the exact period")
def test_with_a_time_limit_a_small_relaxation_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a time_limit and a relaxation of at most RELAXATION_FIRST_WITH_TIME_LIMIT
    variables, the restricted relaxation keeps its limits of no time_limit (here
    one program: RESTRICTED_WORK 1) and the relaxation runs next: exact, at the
    relaxation computed independently.  Above it, the restricted generation has no
    work limit and runs on, to the relaxation's value ("fits") or the schedule."""
    platform = random_platform(5, 2, c=(1, 10), compute=(0, 3), seed=1)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_WORK", 1)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    monkeypatch.setattr(allreduce_module, "_dual_check",  # no dual check: the relaxation
                        lambda *_, **__: "off")
    first = steady_state(platform, op, time_limit=120)
    assert first.message == ""
    assert first.throughput_bound == first.achieved_throughput == relaxation
    assert any(note.startswith("restricted relaxation (1 program)") for note in first.notes)
    assert any(note.startswith("restricted relaxation stopped: the next program")
               for note in first.notes)
    assert any("per-destination SSR(G) copies over shared operations" in note
               for note in first.notes)
    monkeypatch.setattr(allreduce_module, "RELAXATION_FIRST_WITH_TIME_LIMIT", 0)
    generated = steady_state(platform, op, time_limit=120)
    assert generated.throughput_bound == relaxation
    assert not any(note.startswith("restricted relaxation stopped")
                   for note in generated.notes)
    assert any(note.startswith("restricted relaxation (") and "(1 program)" not in note
               for note in generated.notes)


@pytest.mark.filterwarnings("ignore:the exact period")
def test_a_relaxation_cut_by_the_time_limit_leaves_the_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the cap, the relaxation gets RELAXATION_SHARE of the time left, not all of
    it: cut (here at once), the result is the certified interval, status ok, not a
    time-limit error, and a note says the relaxation did not finish."""
    platform = random_platform(5, 3, c=(1, 10), compute=(0, 3), seed=5)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    monkeypatch.setattr(allreduce_module, "RELAXATION_SHARE", 1e-9)
    result = steady_state(platform, op, time_limit=120)
    assert result.status == "ok"
    assert "certified interval" in result.message
    assert any("not finished" in note for note in result.notes)
    assert result.throughput_bound > result.achieved_throughput == Fraction(7, 36)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "complete"), [(9, False), (9, True), (10, False)])
def test_nine_and_ten_participants_against_the_relaxation(n: int, complete: bool) -> None:
    """At the sizes of the default path: exact claims equal the whole relaxation."""
    platform = random_platform(n, n - 1 if complete else 3, c=(1, 10), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    if result.message:
        assert result.throughput_bound >= relaxation
    else:
        assert result.throughput_bound == relaxation
    report = replay(result.schedule, horizon=result.period * 20)
    assert report.violations == ()


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_proportional_shares_never_exceed_the_residual(seed: int, exact: bool) -> None:
    """The proportional split gives every operation's price out, never more (validity)."""
    platform = random_platform(5, 4, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    space = TreeSpace.of(platform, replace(op, target=op.participants[0]))
    ops = _Operations(space, len(op.participants))
    rng = random.Random(seed)
    y = [Fraction(rng.randint(0, 9), rng.randint(1, 9)) for _ in range(space.n_rows)]
    if exact:
        link, cpu, _ = space.prices(y, exact=True)
        cost = ops.cost(link, cpu)
        mu = np.zeros(0, dtype=object)
    else:
        link, cpu, _ = space.prices([float(v) for v in y], exact=False)
        cost = ops.cost(link, cpu)
        mu = np.zeros(0)
    ordered, _ = _split(ops, _Rows(), cost, mu, len(op.participants),
                        clock=Deadline.after(None))
    shared, _ = _split(ops, _Rows(), cost, mu, len(op.participants),
                       clock=Deadline.after(None), proportional=True)
    for prices in (ordered, shared):
        given = [sum(p[i] for p in prices if p[i] != math.inf) for i in range(ops.n_ops)]
        finite = [i for i in range(ops.n_ops) if cost[i] != math.inf]
        assert all(given[i] <= cost[i] * (1 + 1e-12) for i in finite)
    # the two rules give out differently (else the test would not tell them apart)
    assert any(not np.array_equal(a, b) for a, b in zip(ordered, shared, strict=True))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the exact period")
def test_a_complete_nine_is_certified_by_the_split_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """N = 9, complete platform: the split of step 2's dual certifies it, the relaxation agrees.

    The relaxation is kept from running (``RELAXATION_MAX_VARIABLES`` 0), so
    the exact claim comes from the split bound alone; the whole relaxation,
    solved independently (N SSR(G) copies), must have the same value.
    """
    platform = random_platform(9, 8, c=(1, 10), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    result = steady_state(platform, op)
    assert result.status == "ok"
    assert result.message == ""
    assert any("split among the destinations" in note for note in result.notes
               if note.startswith("upper bound: "))
    assert result.throughput_bound == _relaxation(platform, op) == Fraction(31, 126)


def _delivers(tasks: list[tuple[Any, ...]], participants: tuple[str, ...], d: str) -> bool:
    """Replay ``tasks`` in some valid order: does ``d`` end with ``v[0,N-1]``?"""
    last = len(participants) - 1
    held = {(p, k, k) for k, p in enumerate(participants)}
    pending = list(tasks)
    while pending:
        for t in pending:
            if t[0] == "send" and (t[1], t[3], t[4]) in held:
                held.add((t[2], t[3], t[4]))
                break
            if t[0] == "cons" and (t[1], t[2], t[3]) in held and (t[1], t[3] + 1, t[4]) in held:
                held.add((t[1], t[2], t[4]))
                break
        else:
            return False
        pending.remove(t)
    return (d, 0, last) in held


@pytest.mark.parametrize(("n", "degree", "seed"), [(5, 3, 0), (6, 3, 1), (5, 4, 2)])
def test_step2_instances_as_destination_trees(n: int, degree: int, seed: int) -> None:
    """The split's first columns: each a reduction tree that delivers the result to its d."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    options = LpOptions()
    step2 = allreduce_module._rooted_step(platform, op, options, options.clock())
    assert not isinstance(step2, PlanResult)
    assert step2.trees
    for d, tasks in step2.trees:
        assert _delivers(tasks, op.participants, op.participants[d])
        assert not _delivers([t for t in tasks if t[0] != "cons"], op.participants,
                             op.participants[d])  # the check can fail: no computation
    # every instance gives one tree to every destination but those it makes the result on
    assert len({d for d, _ in step2.trees}) == n


@pytest.mark.parametrize("compute", [0, 1])
def test_one_slow_receiver_is_an_exact_optimum(compute: int) -> None:
    """Nine nodes, every link of cost 1 but those into P4 (cost 10): one-port P4
    receives one message an instance at least, busy 10, so TP <= 1/10, and
    reduce-then-broadcast meets it.  The cap that sums P4's eight in-links
    (8/10, what only a port per link reaches) left the interval [1/10, 4/5]
    with compute time 1."""
    nodes = [f"P{i}" for i in range(9)]
    platform = Platform.build(dict.fromkeys(nodes, compute),
                              [(a, b, 10 if b == "P4" else 1)
                               for a in nodes for b in nodes if a != b])
    op = Operation(ALLREDUCE).resolve(platform)
    assert len(op.participants) >= allreduce_module.ROOTED_FROM
    result = steady_state(platform, op, max_events=3_000)
    assert result.status == "ok", result.message
    assert result.throughput_bound == Fraction(1, 10)
    assert "interval" not in result.message
    # what proves it is a cap of one node, and the note says so (not "structure dual")
    assert ("optimal throughput 1/10 exact (single-node bound), certified by the "
            "single-node bound") in result.notes
    # the engine's strict replay proves the schedule's 1/10: the whole bound
    assert assert_throughput_at_least(result.schedule, 1, bound=Fraction(1, 10)) == 1


def test_a_step2_stopped_by_its_time_limit_still_says_the_caps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When reduce-then-broadcast does not finish (here its pricing stops at once), the
    error still gives the caps' certified bound: on the nine nodes whose links into P4
    cost 10, 1/10 (P4's one port receives a message of time 10 an instance)."""
    nodes = [f"P{i}" for i in range(9)]
    platform = Platform.build(dict.fromkeys(nodes, 1),
                              [(a, b, 10 if b == "P4" else 1)
                               for a in nodes for b in nodes if a != b])
    op = Operation(ALLREDUCE).resolve(platform)

    def stopped(*_: object, **__: object) -> None:
        raise TimeLimitReached("the tree pricing")

    monkeypatch.setattr(allreduce_module, "rooted_columns", stopped)
    result = steady_state(platform, op, time_limit=30)
    assert result.status == "error"
    assert result.throughput_bound is None
    assert result.message.startswith("time limit of 30.0 s reached during the tree pricing")
    assert result.message.endswith("(certified all the same: the least receive rate of a "
                                   "participant (its ports) bounds the throughput by 1/10)")


@pytest.mark.parametrize("seed", range(6))
def test_port_rates_are_the_ports_linear_program(seed: int) -> None:
    """port_rates against the port and link rows solved as a linear program (scipy)."""
    platform = random_multiport_platform(6, seed, compute=(0, 1))
    send, receive = port_rates(platform, Fraction(1))
    capacity = PortCapacity.of(platform)
    g = platform.graph
    for v in g.nodes:
        for links, ports, got in ((list(g.out_edges(v)), capacity.send[v], send[v]),
                                  (list(g.in_edges(v)), capacity.receive[v], receive[v])):
            if not links:
                assert got == 0
                continue
            busy = np.array([float(g.edges[e]["c"]) for e in links])
            res = linprog(-np.ones(len(links)), A_ub=np.vstack([busy, np.diag(busy)]),
                          b_ub=np.r_[float(ports), np.ones(len(links))], bounds=(0, None),
                          method="highs")
            assert res.status == 0
            assert float(got) == pytest.approx(-res.fun, rel=1e-9)


@pytest.mark.filterwarnings("ignore:the exact period")
def test_the_split_search_has_rounds_fixed_by_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a time_limit the split search runs SPLIT_WORK // cells rounds, cells =
    N (N^2 |E| + N^3 n) counted here; cut there, a note says so, and two calls give the
    same upper end (no clock decides it)."""
    platform = random_platform(5, 3, c=(1, 10), compute=(0, 3), seed=5)
    op = Operation(ALLREDUCE).resolve(platform)
    n, links, nodes = 5, platform.graph.number_of_edges(), len(platform.node_ids)
    cells = n * (n ** 2 * links + n ** 3 * nodes)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", cells + cells // 2)  # one round
    first, second = steady_state(platform, op), steady_state(platform, op)
    assert "certified interval" in first.message
    assert any("stopped after its 1 round (the rounds this size gets without a time_limit"
               in note for note in first.notes), first.notes
    assert first.throughput_bound == second.throughput_bound
    assert first.notes == second.notes


@pytest.mark.parametrize(("platform_of", "seed"), [
    (lambda: random_platform(9, 3, c=(1, 10), compute=(0, 3), seed=4), 0),
    (lambda: random_platform(7, 6, c=(1, 5), compute=(1, 2), seed=2), 1),
    (lambda: fat_tree_platform(4), 2),
])
def test_one_program_prices_every_root_as_one_program_each(platform_of: Any, seed: int) -> None:
    """``SharedTrees`` (one dynamic program for every target, as step 2 prices its
    roots) gives, for each target, what ``cheapest_trees`` returns from the program
    computed for that target alone: the same prices and the same trees."""
    platform = platform_of()
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    space = TreeSpace.of(platform, replace(op, target=op.participants[0]))
    rng = np.random.default_rng(seed)
    y = rng.random(space.n_rows) * (rng.random(space.n_rows) < 0.6)  # dual-like: many zeros
    link, cpu, _ = space.prices(y, exact=False)
    spaces = [replace(space, target=space.index[p]) for p in platform.processors]
    shared = SharedTrees(spaces, link, cpu)
    alone = [cheapest_trees(s, link, cpu, 3) for s in spaces]
    assert [shared.trees(i, 3) for i in range(len(spaces))] == alone
    assert [shared.least(i) for i in range(len(spaces))] == [found[0][0] for found in alone]
    assert all(found for found in alone)  # every processor receives a tree
