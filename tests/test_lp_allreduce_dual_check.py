"""Step 2's exact dual priced over every fractional structure (``_dual_check`` in
``planners/lp/_allreduce.py``).

Every value is checked against the relaxation (N per-destination SSR(G) copies,
:func:`allreduce_bound`), a different program: no bound from a dual may fall
below it, and where the check proves step 2 optimal the relaxation must equal
step 2's value.  On the six five-node platforms below, the independent structure
packing of ``test_lp_allreduce_independent.py`` equals step 2's value (measured
in the fifteenth session, 26-170 s each; seed 3 is the slow test below).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from relaxation_cases import relaxation_solution

import portsim.planners.lp._allreduce as allreduce_module
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce import DualCheck, Step2, _dual_check, _rooted_step
from portsim.planners.lp._allreduce_bound import allreduce_bound
from portsim.planners.lp._allreduce_packing import _loads, canonical
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._exact import ExactSolution, _balanced
from portsim.planners.lp._solve import Deadline
from portsim.planners.lp._tree_pricing import TreeSpace
from portsim.scenarios.generators import random_platform
from portsim.simulator import Operation, OperationKind, replay

ALLREDUCE = OperationKind.ALLREDUCE
OPTIONS = LpOptions()


def _checked(seed: int) -> tuple[Fraction, DualCheck | str, Fraction]:
    """Step 2's value, the dual check and the relaxation's value, five nodes."""
    platform = random_platform(5, 3, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    step2 = _rooted_step(platform, op, OPTIONS, OPTIONS.clock())
    assert isinstance(step2, Step2)
    checked = _dual_check(platform, op, step2.master, OPTIONS, Deadline.after(None))
    relaxation = relaxation_solution(platform, op)  # asserted exact; solved once a session
    return step2.master.lower, checked, relaxation.upper


@pytest.mark.parametrize(("seed", "least"), [(0, Fraction(1)), (1, Fraction(1)),
                                             (2, Fraction(1)), (3, Fraction(1)),
                                             (4, Fraction(1)), (5, Fraction(2, 3))])
def test_the_check_never_falls_below_the_relaxation(seed: int, least: Fraction) -> None:
    """The bound is step 2's dual value over the least fractional structure price, at
    or above the relaxation (the best such bound over every dual); at 1 it is step 2's
    value, and the relaxation equals it.  Where step 2's vertex dual is not a dual of
    the relaxation (seed 5), the least price is below 1, a whole structure's (the
    packing still equals step 2 there: another dual proves it).  Step 2's dual is a
    vertex of its master over the columns it generated: seed 1 gave 1/2 until step 2
    started from the participants' chains as well (sixteenth session), and its new
    vertex proves step 2 optimal."""
    lower, checked, relaxation = _checked(seed)
    assert isinstance(checked, DualCheck)
    assert checked.least == least
    assert checked.upper >= relaxation >= lower
    assert checked.cheaper == (least < 1)
    if least == 1:
        assert checked.upper == relaxation == lower
    else:
        assert checked.upper > relaxation


def test_row_keys_name_the_loads_of_the_structure_packing() -> None:
    """TreeSpace's row order, by name, gives the packing's own loads (multiport links
    with their own rows, CPUs of w > 0 only)."""
    platform = random_platform(5, 3, c=(1, 10), compute=(0, 3), seed=4,
                               port_model="multiport:2")
    op = Operation(ALLREDUCE).resolve(platform)
    space = TreeSpace.of(platform, replace(op, target=op.participants[0]))
    keys = space.row_keys()
    assert len(keys) == space.n_rows == len(set(keys))
    own = PortCapacity.of(platform).own_row
    step2 = _rooted_step(platform, op, OPTIONS, OPTIONS.clock())
    assert isinstance(step2, Step2)
    for _, structure in step2.structures:
        by_name = {keys[row]: load for row, load in space.loads(list(structure)).items()
                   if load}
        assert by_name == _loads(platform, op, structure, own)
        assert canonical(op, structure) == structure


def test_balanced_rows_keep_the_solution() -> None:
    """The exact recovery's row balancing: every row's largest coefficient gets the
    same bit length, by powers of two, rows, right-hand sides and scales alike; a
    point solving the rows solves the balanced ones (checked in integers)."""
    rows = [{0: 3, 1: 1}, {1: 2**54 + 1, 2: 5}, {0: 1, 2: 1}]
    x = [2, 7, 11]
    rhs = [sum(a * x[j] for j, a in row.items()) for row in rows]
    balanced, b_rhs, scales = _balanced(rows, rhs, [1, 1, 1])
    assert [max(abs(a).bit_length() for a in row.values()) for row in balanced] == [55] * 3
    assert scales == [2**53, 1, 2**54]
    assert balanced[0] == {0: 3 * 2**53, 1: 2**53}
    assert [sum(a * x[j] for j, a in row.items()) for row in balanced] == b_rhs
    assert b_rhs == [r * k for r, k in zip(rhs, scales, strict=True)]


@pytest.mark.slow
def test_a_dual_of_54_bit_prices_is_recovered() -> None:
    """Random N = 12 (out-degree 3, costs 1..10), seed 2 of benchmarks/lp_allreduce.py:
    step 2's dual needs 54 bits once scaled to integers, and the check's program was
    not recovered exactly before the rows were balanced (least 0); now it proves step
    2 optimal (the float relaxation equals step 2 there to 3e-15, fourteenth note)."""
    platform = random_platform(12, 3, c=(1, 10), compute=(0, 3), seed=2)
    op = Operation(ALLREDUCE).resolve(platform)
    step2 = _rooted_step(platform, op, OPTIONS, OPTIONS.clock())
    assert isinstance(step2, Step2)
    checked = _dual_check(platform, op, step2.master, OPTIONS, Deadline.after(None))
    assert isinstance(checked, DualCheck)
    assert checked.least == 1
    assert checked.upper == step2.master.lower == Fraction(3020813759284305,
                                                           39789971443168564)


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "seed", "step2", "default_limits"), [
    (6, 0, Fraction(517, 3994), False),
    pytest.param(9, 3, Fraction(7350827, 86673478), True, marks=pytest.mark.slow)],
    ids=["six", "nine"])
def test_with_a_time_limit_the_check_proves_step2_optimal(
        monkeypatch: pytest.MonkeyPatch, n: int, seed: int, step2: Fraction,
        default_limits: bool) -> None:
    """With a time_limit, the relaxation above its cap (here 0): the restricted
    relaxation stops at its work limit above step 2, and the check proves step 2
    optimal (method 'structure dual'); the relaxation computed on its own has that
    value, and the (fixed-period) schedule replays without a violation.

    Nine nodes take this path at the default limits (18 s: the slow suite; the
    restricted relaxation solves 5 programs and stops above step 2).  Six nodes take
    it from ROOTED_FROM 2 with a work limit of one program (RESTRICTED_WORK 1, as
    ``test_with_a_time_limit_a_small_relaxation_decides`` of
    ``test_lp_allreduce_rooted.py`` sets it): at the default the restricted
    relaxation meets step 2 there, and no check runs.  ``step2`` is step 2's value."""
    platform = random_platform(n, 3, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    if not default_limits:
        monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
        monkeypatch.setattr(allreduce_module, "RESTRICTED_WORK", 1)
    result = steady_state(platform, op, time_limit=300, max_events=500)
    assert result.status == "ok"
    assert result.message == ""
    assert result.throughput_bound == step2
    assert any(note.startswith("restricted relaxation stopped") for note in result.notes)
    assert any(note.startswith("upper bound: step 2's exact dual over every fractional "
                               "structure") for note in result.notes)
    assert any("exact (structure dual)" in note for note in result.notes)
    relaxation = allreduce_bound(platform, op, OPTIONS, deadline=Deadline.after(None))
    assert isinstance(relaxation, ExactSolution)
    assert relaxation.upper == result.throughput_bound
    report = replay(result.schedule, horizon=result.period * 20)
    assert report.violations == (), [str(v) for v in report.violations[:3]]


@pytest.mark.slow
def test_where_the_check_gives_one_the_packing_agrees() -> None:
    """Seed 3 (least price 1): the independent structure packing equals step 2."""
    from test_lp_allreduce_independent import packing_optimum

    platform = random_platform(5, 3, c=(1, 10), compute=(0, 3), seed=3)
    op = Operation(ALLREDUCE).resolve(platform)
    lower, checked, _ = _checked(3)
    assert isinstance(checked, DualCheck)
    assert checked.least == 1
    assert packing_optimum(platform, op.participants) == pytest.approx(float(lower), rel=1e-9)
