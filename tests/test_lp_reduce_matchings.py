"""Unidirectional and mixed reduce: tree and matching columns equal the whole program.

:func:`portsim.planners.lp._matchings.reduce_with_matchings` (reduction-tree columns
priced by the interval dynamic program, matching columns priced on the port
graph) must give exactly the bound of the whole SSR(G) program with matching
coverage rows (kept as the reference, ``_plan_reduce_full``).
"""

from __future__ import annotations

import warnings

import pytest
from random_cases import mixed_platform

from portsim.planners.lp import steady_state
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._matchings import _plan_reduce_full
from portsim.scenarios.generators import random_platform
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
