"""Unidirectional and mixed reduce: tree and matching columns equal the whole program.

:func:`portsim.planners.lp._matchings.reduce_with_matchings` (reduction-tree columns
priced by the interval dynamic program, matching columns priced on the port
graph) must give exactly the bound of the whole SSR(G) program with matching
coverage rows (kept as the reference, ``_plan_reduce_full``).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import pytest
from random_cases import mixed_platform

from portsim.planners.lp import steady_state
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._matchings import _plan_reduce_full
from portsim.scenarios.generators import complete_platform, random_platform
from portsim.simulator.engine import replay
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform


def _compare(platform: Platform) -> None:
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = steady_state(platform, op)
        full = _plan_reduce_full(platform, op, LpOptions().started())
    assert new.is_ok, new.message
    assert full.is_ok, full.message
    assert new.throughput_bound == full.throughput_bound  # exact rationals, equal
    assert any("reduction trees and matchings" in note for note in new.notes)
    assert any("exact" in note and "certified" in note for note in new.notes)
    assert replay(new.schedule).feasible


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [3, 4, 5])
def test_unidirectional_tree_columns_equal_the_whole_program(seed: int, n: int) -> None:
    _compare(random_platform(n, 2, c=(1, 5), compute=(0, 2), seed=seed,
                             port_model="unidirectional"))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("models", [["bidirectional"], ["multiport:2"],
                                    ["bidirectional", "multiport:2"]])
def test_mixed_tree_columns_equal_the_whole_program(seed: int, models: list[str]) -> None:
    _compare(mixed_platform(random_platform(5, 2, c=(1, 5), compute=(0, 2), seed=seed,
                                            port_model="unidirectional"), seed, models))


@pytest.mark.parametrize("scale", [1, 10**3, 10**9, 5 * 10**10, 10**12, Fraction(1, 10**6)])
def test_the_matchings_generation_is_the_same_in_every_time_unit(scale: Fraction | int) -> None:
    """``reduce-fibonacci.yaml``'s platform (Canon and Antoniu's eight machines,
    d = c = 1, unidirectional) with every time multiplied by ``scale``: the
    optimum is the unscaled one over ``scale``: 4/7 (the bundled example's
    bound, computed exactly in its own unit).
    A matching entered the float master only when its weight beat the time
    row's dual by 10^-9, a throughput: at 10^9 the dual is about 6·10^-10,
    no matching ever entered, the generation stopped after 9 rounds and
    the result was an interval 10^18 wide, [7/15000000000, ~10^9].
    At 5·10^10 and 10^12 the matchings' weights, divided by the float
    master's time unit (2^35, 2^40) like rates, fell near or under HiGHS's
    least kept entry: ``HiGHS failed on the reduce (SSR) master:
    Unbounded``, and an interval 10^25 wide."""
    platform = complete_platform(8, c=scale, compute=scale, port_model="unidirectional")
    op = Operation(OperationKind.REDUCE, target="P0", commutative=False).resolve(platform)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = steady_state(platform, op, max_events=2000)
    assert got.is_ok, got.message
    assert got.throughput_bound == Fraction(4, 7) / scale
    assert any("exact" in note and "certified" in note for note in got.notes)
