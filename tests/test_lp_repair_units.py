"""The repairs of the lp planner (float rates to an exactly feasible primal) in every time unit.

A repair is :func:`~portsim.planners.lp._driver.solve_exactly`'s last resort
when neither HiGHS's basis nor a rounding of its answer is exactly feasible.
It receives the rates in the platform's own time unit: with every time
``10^k`` longer they are ``10^k`` times smaller.  Its grid (``1/10^7`` for the
reduce's trees, ``1/10^6`` for the broadcast's) was absolute, so a platform
in a slow unit rounded every rate to nothing (no primal at all) or to a few
digits.  The float answer is fed scaled, as HiGHS would give it, so the
repair alone is under test; the independent value is the exact optimum in
the platform's first unit over ``10^k``.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from portsim.planners.base import PlanResult
from portsim.planners.lp import _broadcast, steady_state
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._exact import primal_feasible
from portsim.planners.lp._extract import repair_ssr
from portsim.planners.lp._solve import solve_float
from portsim.planners.lp._ssr import build_reduce_model
from portsim.scenarios.generators import dgx_a100_platform, random_platform
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Link, Node, Platform


def _scaled(platform: Platform, scale: int) -> Platform:
    """``platform`` with every time multiplied by ``scale``."""
    return Platform(tuple(Node(n.id, n.compute * scale, n.port_model, n.router)
                          for n in platform.nodes),
                    tuple(Link(e.src, e.dst, e.c * scale, e.latency * scale)
                          for e in platform.links), platform.port_model)


@pytest.mark.parametrize("scale", [1, 10**3, 10**6, 10**9])
def test_the_reduce_repair_keeps_seven_digits_in_every_unit(scale: int) -> None:
    """Five nodes, reduce to P0: the SSR(G) optimum is 1/3 (the exact solve, below)
    in the first unit.  The repair of HiGHS's answer, its rates over ``scale``,
    is exactly feasible and within 10^-7 of 1/3 over ``scale``; it kept three
    digits at 10^3 (0.3331) and gave no primal at 10^6 and 10^9."""
    base = random_platform(5, 2, c=(1, 5), compute=(1, 3), seed=4)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(base)
    model = build_reduce_model(base, op)
    sol = solve_float(model, method="highs-ds")
    assert sol.x is not None
    optimum = F(1, 3)
    assert steady_state(base, op, max_events=2000).throughput_bound == optimum
    platform = _scaled(base, scale)
    scaled_model = build_reduce_model(platform, op)
    values = repair_ssr(platform, op, scaled_model, sol.x / scale)
    assert values is not None
    assert primal_feasible(scaled_model, values)
    got = values[scaled_model.objective] * scale
    assert optimum * (1 - F(1, 10**7)) <= got <= optimum


@pytest.mark.parametrize("scale", [1, 10**6, 10**9])
def test_the_tree_master_repair_in_every_unit(scale: int) -> None:
    """A DGX A100 server's broadcast master with every time ``scale`` times longer
    (bandwidths in GB/s over ``scale``): float weights 1% over the optimum
    (infeasible) are scaled into an exactly feasible packing of at least 99% of
    the optimum over ``scale``; at 10^9 the grid of 10^-6 left no tree (the case
    ``scale = 1`` was a test of ``test_steiner.py``)."""
    platform = dgx_a100_platform(1)
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(platform)
    found = _broadcast.multicast_trees(platform, ["P0"], op.size, LpOptions(),
                                       targets=[op.targets])
    assert not isinstance(found, PlanResult)
    weighted, exact = found.weighted, found.master
    assert exact.lower == exact.upper
    columns = [(i, tree) for i, _, tree in weighted]
    slow = _scaled(platform, scale)
    model = _broadcast._master(slow, columns, 1, op.size)
    x = np.zeros(model.n_variables)
    for k, (_, weight, _) in enumerate(weighted):
        x[model.index["tree", k]] = float(weight) * 1.01 / scale
    x[model.objective] = float(exact.lower) * 1.01 / scale
    assert not primal_feasible(model, [F(v) for v in x])  # 1% over: infeasible
    values = _broadcast._scaled_packing(model, columns, 1)(x)
    assert values is not None
    assert primal_feasible(model, values)
    assert exact.lower * F(99, 100) <= values[model.objective] * scale <= exact.lower
