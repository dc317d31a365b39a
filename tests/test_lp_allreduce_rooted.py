"""Step 2 of the ``lp`` allreduce by tree columns (``planners/lp/_allreduce_rooted.py``).

The reduce-then-broadcast program priced by reduction trees and
arborescences must have the optimum of the same program with SSR(G)'s
variables (``build_allreduce_master``, an independent formulation: flows,
then EXTRACT_TREES), and its instances must replay clean in the engine.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import portsim.planners.lp._allreduce as allreduce_module
from portsim.planners.base import PlanResult
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_rooted import prune, rooted_columns
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._solve import Deadline, TimeLimitReached
from portsim.scenarios.generators import random_platform
from portsim.simulator import Operation, OperationKind, Platform, replay

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
