"""The start-up of lp's periodic schedules (issue 14, item 8).

The period's operations are placed by list scheduling, each as soon as its
inputs have arrived (planners/lp/_periodic.py, step 3), so the lags, and the
periods lost to the pipeline's fill, follow the instance's own critical path
where the resources leave room.  The values asserted here are computed by
hand from that critical path, never read off the planner.
"""

from __future__ import annotations

import warnings
from fractions import Fraction as F

import pytest

from portsim.planners.lp import steady_state
from portsim.planners.lp._periodic import SendTask, Unit, build_periodic
from portsim.scenarios.generators import dgx_a100_platform
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.items import Item


def _chain(k: int, model: str) -> tuple[Platform, Operation, list[list[Unit]]]:
    """A0 -> A1 -> ... -> Ak, every link of cost 1, one message relayed to Ak at 1/2."""
    nodes = [f"A{i}" for i in range(k + 1)]
    platform = Platform.build(nodes, [(nodes[i], nodes[i + 1], 1) for i in range(k)], model)
    op = Operation(OperationKind.SCATTER, source="A0", targets=(nodes[-1],)).resolve(platform)
    item = Item.message(nodes[-1])
    unit = Unit(F(1, 2), tuple(SendTask(nodes[i], nodes[i + 1], item, i) for i in range(k)))
    return platform, op, [[unit]]


@pytest.mark.parametrize("model", ["bidirectional", "multiport", "multiport:2"])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_a_relayed_chain_starts_up_along_its_critical_path(k: int, model: str) -> None:
    """Period 2 (one instance, every link busy 1 of it).  The d-th send (d = 0..k-1)
    cannot start before time d of its instance, and starts within [0, 1] of a
    period, so its lag is at least floor(d / 2): the largest lag is at least
    floor((k - 1) / 2), and sending each hop as soon as it arrives reaches it.
    Every node uses one link per side, so no port binds under any of these
    models.  Instance p completes at 2p + k: floor((200 - k) / 2) + 1 of them
    within 100 periods.  (The layout of portsim 0.2 ran every hop in the one
    matching [0, 1): lag d for the d-th send, k - 1 in all.)"""
    platform, op, groups = _chain(k, model)
    plan = build_periodic(platform, op, groups, F(1, 2))
    assert (plan.period, plan.instances_per_period) == (2, 1)
    assert max(e.lag for e in plan.schedule.events) == (k - 1) // 2
    report = replay(plan.schedule, horizon=plan.period * 100, mode="strict")
    assert report.violations == ()
    assert report.completed == (200 - k) // 2 + 1


def test_a_chain_in_matchings_keeps_its_matchings_order() -> None:
    """With whole messages every link stays in a matching (the period of the papers'
    construction): the same chain on ``multiport``, all three links in the one
    matching [0, 1) of the period 2, so each hop waits for the next period."""
    platform, op, groups = _chain(3, "multiport")
    plan = build_periodic(platform, op, groups, F(1, 2), split=False)
    assert plan.period == 2
    assert plan.matchings == 1
    assert sorted(e.lag for e in plan.schedule.events) == [0, 1, 2]
    report = replay(plan.schedule, horizon=plan.period * 100, mode="strict")
    assert report.violations == ()
    assert report.completed == 98  # instance p ends at 2(p + 2) + 1 <= 200


@pytest.mark.slow
def test_one_dgx_a100_server_allreduce_fills_within_a_tenth() -> None:
    """The allreduce on one DGX A100 server (issue 14, item 8): 0.9 of its bound
    8/7 within 100 periods of a strict replay.

    Its instances pass through the NVSwitch, NICs and IB switches and a chain
    of reductions of time 1 on GPUs busy all the period (7 reductions of 1
    per GPU in the fixed period 7, 8 instances): every instance started in
    period p has completed by the end of period p + L, L the largest lag, so
    100 periods complete at least 8 (100 - L).  portsim 0.2 laid out the
    links in matchings at the start of the period: L = 24, 688 instances
    (0.86); now L = 3.  About 25 s here (20 s the lp).
    """
    platform = dgx_a100_platform(1)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    with warnings.catch_warnings():  # the exact period is over the cap: the fixed one, noted
        warnings.simplefilter("ignore")
        result = steady_state(platform, op, max_events=20_000)
    assert result.status == "ok", result.message
    assert result.throughput_bound == F(8, 7)
    assert result.achieved_throughput == F(8, 7)
    assert result.period is not None
    assert result.schedule is not None
    n = result.schedule.instances_per_period
    assert F(n) / result.period == F(8, 7)
    lag = max(e.lag for e in result.schedule.events)
    assert lag <= 3
    report = replay(result.schedule, horizon=result.period * 100, mode="strict")
    assert report.violations == ()
    assert report.completed >= n * (100 - lag)
    assert report.completed >= F(9, 10) * F(8, 7) * result.period * 100
