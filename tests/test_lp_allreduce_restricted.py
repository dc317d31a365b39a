"""The restricted relaxation of the allreduce (whole copies for a few destinations).

Every value is checked against the whole relaxation, solved exactly on its own
(:func:`allreduce_bound`, itself checked against a brute force over every union of
per-destination trees in ``test_lp_allreduce.py``), and against schedules the
engine replays.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from random_cases import random_multiport_platform
from relaxation_cases import relaxation_solution

import portsim.planners.lp._allreduce as allreduce_module
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import (
    TP,
    add_copies,
    add_operations,
    build_allreduce_bound_model,
    relaxation_size,
    restricted_size,
    tp_cap,
)
from portsim.planners.lp._allreduce_restricted import _CopyRates, restricted_bound
from portsim.planners.lp._driver import LpOptions, percent, solve_exactly
from portsim.planners.lp._exact import ExactSolution, primal_feasible
from portsim.planners.lp._solve import LinearModel, solve_float
from portsim.scenarios.generators import random_platform
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.numbers import format_rational

ALLREDUCE = OperationKind.ALLREDUCE


def _relaxation(platform: Platform, op: Operation) -> Fraction:
    """The whole relaxation's value, solved once a session (``relaxation_cases.py``)."""
    return relaxation_solution(platform, op).upper


def _restricted(platform: Platform, op: Operation, full: list[str],
                others: str = "local") -> Fraction:
    model = build_allreduce_bound_model(platform, op, full=full, others=others)
    found = solve_exactly(model, LpOptions(), what="restricted relaxation",
                          repair=lambda _: [Fraction(0)] * model.n_variables)
    assert isinstance(found, ExactSolution)
    assert found.exact
    return found.upper


def _switched() -> Platform:
    """Two participants with zero compute time behind a router, one timed node."""
    return Platform.build(
        {"A": 0, "B": 2, "C": 0, "S": 0},
        [("A", "S", 1), ("S", "A", 1), ("B", "S", 2), ("S", "B", 1), ("C", "S", 3),
         ("S", "C", 1), ("A", "B", 4)], routers=["S"])


PLATFORMS = [
    ("random 5", lambda: random_platform(5, 2, c=(1, 10), compute=(0, 3), seed=1)),
    ("random 6", lambda: random_platform(6, 3, c=(1, 10), compute=(0, 3), seed=4)),
    ("multiport 5", lambda: random_multiport_platform(5, 3, compute=(0, 3))),
    ("router", _switched),
]


@pytest.mark.parametrize(("name", "make"), PLATFORMS, ids=[p[0] for p in PLATFORMS])
def test_restricted_size_counts_the_built_program(name: str, make) -> None:  # type: ignore[no-untyped-def]
    """The count made without building equals the built program's variables, for no,
    some and every whole copy; with every one it is the relaxation's count."""
    platform = make()
    op = Operation(ALLREDUCE).resolve(platform)
    parts = list(op.participants)
    for full in ([], parts[:1], parts[1:3], parts):
        for others in ("local", "cuts"):
            model = build_allreduce_bound_model(platform, op, full=full, others=others)
            assert restricted_size(platform, op, full, others) == model.n_variables, full
    assert restricted_size(platform, op, parts) == relaxation_size(platform, op)


@pytest.mark.parametrize(("n", "degree", "seed"), [(4, 2, 0), (5, 3, 2), (6, 3, 1), (6, 2, 3)])
def test_restricted_bounds_fall_to_the_relaxation_and_no_schedule_beats_them(
        n: int, degree: int, seed: int) -> None:
    """With more whole copies the bound can only fall (rows are added), ending at the
    relaxation with every copy whole; each one is above the throughput of the
    ``lp`` schedule, which the engine replays without a violation."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    parts = list(op.participants)
    relaxation = _relaxation(platform, op)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()
    bounds = [_restricted(platform, op, parts[:k]) for k in range(len(parts) + 1)]
    assert bounds == sorted(bounds, reverse=True)
    assert bounds[-1] == relaxation
    assert bounds[0] >= relaxation >= result.achieved_throughput


@pytest.mark.parametrize(("n", "degree", "seed"), [(4, 2, 2), (5, 3, 2), (6, 3, 2)])
def test_receive_cuts_sit_above_the_local_rows(n: int, degree: int, seed: int) -> None:
    """Each receive cut is a sum of the local copy's rows (its tasks cancel out), so with
    the same whole copies the cuts' bound is at or above the local rows' one, and both
    at or above the relaxation; the cuts still bind below the receive capacity."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    parts = list(op.participants)
    relaxation = _relaxation(platform, op)
    for full in ([], parts[:1], parts[:2]):
        local = _restricted(platform, op, full)
        cuts = _restricted(platform, op, full, "cuts")
        assert cuts >= local >= relaxation, full
    model = build_allreduce_bound_model(platform, op, full=parts[:1], others="cuts")
    assert _restricted(platform, op, parts[:1], "cuts") < model.upper[model.objective]
    with pytest.raises(ValueError, match="others 'none'"):
        build_allreduce_bound_model(platform, op, full=parts[:1], others="none")


@pytest.mark.parametrize(("n", "degree", "seed"), [(4, 2, 2), (5, 3, 4), (6, 3, 2), (6, 5, 0)])
def test_the_relaxations_optimum_is_a_point_of_every_restricted_program(
        n: int, degree: int, seed: int) -> None:
    """The restricted program is the relaxation with rows dropped (and receive cuts are
    sums of rows): the relaxation's exact optimum, read by variable name, satisfies
    every row of every restricted program exactly, with the same TP."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    parts = list(op.participants)
    whole = build_allreduce_bound_model(platform, op)
    optimum = solve_exactly(whole, LpOptions(), what="relaxation",
                            repair=lambda _: [Fraction(0)] * whole.n_variables)
    assert isinstance(optimum, ExactSolution)
    assert optimum.exact
    for full in ([], parts[:1], parts[1:3]):
        for others in ("local", "cuts"):
            model = build_allreduce_bound_model(platform, op, full=full, others=others)
            point = [optimum.values[whole.index[key]] for key in model.keys]
            assert primal_feasible(model, point), (full, others)
            assert point[model.objective] == optimum.upper


def test_a_local_copy_is_a_real_relaxation_and_still_binds() -> None:
    """On this platform the bound with no whole copy is strictly above the relaxation
    (the local copies drop rows that matter), yet below the least receive capacity
    that caps TP: the local rows bind."""
    platform = random_platform(6, 3, c=(1, 10), compute=(0, 3), seed=1)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    local = _restricted(platform, op, [])
    model = build_allreduce_bound_model(platform, op, full=[])
    cap = model.upper[model.objective]
    assert relaxation < local < cap


@pytest.mark.parametrize(("n", "degree", "seed"), [(4, 2, 0), (5, 3, 2), (5, 2, 2), (6, 3, 2)])
def test_generation_without_a_target_ends_at_the_relaxation(
        n: int, degree: int, seed: int) -> None:
    """With a target of 0 the generation adds destinations until every other copy fits
    in the solution's operations: its bound is then the relaxation's, exactly."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    options = LpOptions()
    found = restricted_bound(platform, op, Fraction(0), options, deadline=options.clock(),
                             max_variables=10**9, work=10**12)
    assert found.stop == "fits"
    assert found.upper == _relaxation(platform, op)
    assert 1 <= len(found.full) <= found.programs <= n


def test_generation_stops_at_the_target_and_at_its_limits() -> None:
    """A target the first program meets stops it there; the size and work limits stop it
    before a program that would exceed them (no program: no bound), with the figures."""
    platform = random_platform(4, 2, c=(1, 10), compute=(0, 3), seed=2)
    op = Operation(ALLREDUCE).resolve(platform)
    options = LpOptions()
    parts = list(op.participants)
    first = _restricted(platform, op, parts[:1])
    assert first > _relaxation(platform, op)
    met = restricted_bound(platform, op, first, options, deadline=options.clock(),
                           max_variables=10**9, work=10**12)
    assert (met.upper, met.stop, met.programs, met.full) == (first, "met", 1, (parts[0],))
    size = restricted_size(platform, op, parts[:1])
    small = restricted_bound(platform, op, Fraction(0), options, deadline=options.clock(),
                             max_variables=size - 1, work=10**12)
    assert (small.upper, small.programs) == (None, 0)
    assert f"{size:,} variables, above {size - 1:,}" in small.stop
    one = restricted_bound(platform, op, Fraction(0), options, deadline=options.clock(),
                           max_variables=10**9, work=size)
    assert (one.upper, one.programs) == (first, 1)
    assert "past" in one.stop


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "degree", "seed"), [(5, 3, 2), (6, 3, 1), (6, 2, 3)])
def test_the_planner_uses_the_restricted_relaxation_where_the_relaxation_is_too_big(
        monkeypatch: pytest.MonkeyPatch, n: int, degree: int, seed: int) -> None:
    """With the relaxation kept from running (as above its size), the restricted one gives
    the upper end: never below the relaxation, equal to it when the result is exact, and
    the schedule replays."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound >= relaxation
    if not result.message:  # exact (the schedule may lose a little to its period's cap)
        assert result.throughput_bound == relaxation
    ran = [note for note in result.notes if note.startswith("restricted relaxation")]
    upper = [note for note in result.notes if note.startswith("upper bound: ")]
    if ran:
        assert "whole SSR(G) copies for" in ran[0]
    else:  # a cap met step 2 first
        assert "restricted" not in upper[0]
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()


@pytest.mark.filterwarnings("ignore:the exact period")
def test_above_its_local_size_the_planner_keeps_the_others_by_receive_cuts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When the local rows would make the first program too big, the planner keeps the
    other destinations by receive cuts, says so, and its upper end stays above the
    relaxation and at or below the receive capacity's cap."""
    platform = random_platform(6, 3, c=(1, 10), compute=(0, 3), seed=2)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = _relaxation(platform, op)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_LOCAL_VARIABLES", 0)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    ran = [note for note in result.notes if note.startswith("restricted relaxation (")]
    assert len(ran) == 1
    assert "every other destination by receive cuts" in ran[0]
    parts = list(op.participants)
    assert result.throughput_bound >= relaxation
    assert result.throughput_bound <= _restricted(platform, op, parts[:1], "cuts")


@pytest.mark.filterwarnings("ignore:the exact period")
def test_random_twelve_participants_within_a_third_of_a_percent() -> None:
    """Out-degree 3, N = 12, seed 1: the relaxation (computed once in 87 s of CPU,
    ``benchmarks/lp_allreduce.py`` docstring) equals step 2's schedule,
    6900896951/87086981320; the split of step 2's dual gave 1.20 times it.  The
    restricted relaxation, two programs, gives an upper end at or above the
    relaxation and within 0.35 % of it."""
    platform = random_platform(12, 3, c=(1, 10), compute=(0, 3), seed=1)
    op = Operation(ALLREDUCE).resolve(platform)
    relaxation = Fraction(6900896951, 87086981320)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.message.startswith(f"certified interval [{format_rational(relaxation)}, ")
    width = (result.throughput_bound - relaxation) / relaxation  # also said relatively
    assert f"{float(width):.2%} of the lower end" in result.message
    assert relaxation < result.throughput_bound <= relaxation * Fraction(10035, 10000)
    assert any(note.startswith("upper bound: the restricted relaxation")
               for note in result.notes)
    report = replay(result.schedule, horizon=result.period * 3)
    assert report.violations == ()


@pytest.mark.parametrize(("name", "make"), PLATFORMS)
def test_copy_rates_match_a_copy_built_as_a_program(name: str, make) -> None:  # type: ignore[no-untyped-def]
    """The generation's copy check (conservation rows built once, the solution's
    operations as column bounds) against the same copy built by the programs'
    builders (the actual operations as variables, each at most the solution's)."""
    platform = make()
    op = Operation(ALLREDUCE).resolve(platform)
    parts = op.participants
    model = build_allreduce_bound_model(platform, op, full=[parts[0]])
    found = solve_exactly(model, LpOptions(), what="restricted relaxation",
                          repair=lambda _: [Fraction(0)] * model.n_variables)
    assert isinstance(found, ExactSolution)
    copies = _CopyRates(platform, op, model)
    for d in parts:
        check = LinearModel()
        tp = check.variable(TP, upper=tp_cap(platform, op))
        check.objective = tp
        ops = add_operations(check, platform, op, unit=False)
        for kind, columns in (("x", ops.x), ("y", ops.y)):
            for key, j in columns.items():
                check.add({j: Fraction(1)}, "<=", found.values[model.index[(kind, *key)]],
                          "at most the solution's")
        add_copies(check, platform, op, ops, tp, cap=tp_cap(platform, op), full=(d,),
                   local=False)
        expected = solve_float(check).x[tp]
        assert copies.rate(d, found.values) == pytest.approx(expected, rel=1e-7, abs=1e-12)
    # the whole copy in the program fits at the program's rate
    assert copies.rate(parts[0], found.values) >= float(found.lower) * (1 - 1e-9)


def test_a_narrow_interval_is_not_said_to_be_zero_percent_wide() -> None:
    """random_platform(10, 3, c=(1, 10), compute=(1, 5), seed=2), the allreduce:
    certified interval [641876483/8676035939, 13081256893/176808839449], of width
    4018902123699660/1533999845392404957611, 0.003541...% of the lower end, which
    the message printed as ``0.00% of the lower end``."""
    lower = Fraction(641876483, 8676035939)
    width = Fraction(13081256893, 176808839449) - lower
    assert width == Fraction(4018902123699660, 1533999845392404957611)
    assert round(float(width / lower) * 100, 6) == 0.003541
    assert percent(width / lower) == "0.0035%"
    assert percent(Fraction(35, 10000)) == f"{0.0035:.2%}" == "0.35%"  # as before
