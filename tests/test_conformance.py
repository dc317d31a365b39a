"""One conformance suite over every registered planner (STYLE.md, "Tests").

The engine trusts no planner: on every example scenario and on random
platforms, each planner that accepts the operation must return a schedule
that replays in strict mode with no violation and completes the operation;
a one-shot planner's announced makespan must be the one the engine measures;
and a pipelined series of its operations must never beat the planner's own
throughput bound when it gives one.

A plan that asks for an as-soon-as-possible replay (``replay="asap"``,
``lp-naive``: its port-sum timing is not claimed feasible) is held to what
ASAP mode checks instead: no violation at all in that replay, the operation
completed, and what it measures never above the ``lp`` optimum (the true
bound, when ``lp`` handles the platform) nor its own bound.  Its bound is
never used to check another planner.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from example_cases import example_params
from hypothesis import given, settings
from hypothesis import strategies as st

from portsim.planners.registry import available_planners
from portsim.scenarios.generators import random_platform
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.pytest_plugin import assert_feasible
from portsim.simulator import Operation, OperationKind, Platform
from portsim.simulator.engine import replay, replay_series
from portsim.simulator.platform import PortKind

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "scenarios" / "examples")
                  .glob("*.yaml"))
PLANNERS = sorted(available_planners())


def check_plan(name: str, platform, operation,  # type: ignore[no-untyped-def]
               answers: tuple[str, ...] = ("unsupported",)) -> None:
    """``name`` on the problem: an answer in ``answers`` saying why, or a valid schedule."""
    result = available_planners()[name].plan(platform, operation)  # must not raise
    if result.status in answers:
        assert result.message, f"an {result.status} answer must say why"
        return
    assert result.status == "ok", result.message
    assert result.schedule is not None
    if result.replay == "asap":
        check_asap_plan(result, platform, operation)
        return
    report = assert_feasible(result.schedule)  # the portsim pytest plugin's helper
    if result.schedule.period is None:
        assert report.makespan is not None
        if result.makespan is not None:
            assert result.makespan == report.makespan
        if result.throughput_bound is not None:
            series = replay_series(result.schedule, report.makespan * 20)
            assert series.measured_throughput is not None
            assert series.measured_throughput <= result.throughput_bound


def check_asap_plan(result, platform, operation) -> None:  # type: ignore[no-untyped-def]
    """An ASAP-replayed plan: clean ASAP replay, complete, never above the true bound."""
    schedule = result.schedule
    if all(platform.port_model_of(n).kind is PortKind.BIDIRECTIONAL
           for n in platform.node_ids):
        assert_feasible(schedule)  # the port-sum program is exact there
    if schedule.period is not None:
        lags = max((e.lag for e in schedule.events), default=0)
        horizon = schedule.period * (lags + 20)
        report = replay(schedule, mode="asap", horizon=horizon)
        measured = report
    else:
        report = replay(schedule, mode="asap")
        assert report.makespan is not None
        horizon = report.makespan * 20
        measured = replay_series(schedule, horizon)
    assert report.violations == (), report.violations
    assert measured.violations == (), measured.violations
    assert report.completed >= 1
    done = measured.completed
    if result.throughput_bound is not None:
        assert done <= result.throughput_bound * horizon
    true = available_planners()["lp"].plan(platform, operation)
    if true.status == "ok" and true.throughput_bound is not None:
        assert done <= true.throughput_bound * horizon


@pytest.mark.parametrize("example", example_params(EXAMPLES))
@pytest.mark.parametrize("name", PLANNERS)
def test_every_planner_on_every_example(name: str, example: Path) -> None:
    scenario = load_scenario(example)
    check_plan(name, scenario.platform, scenario.operation)


KINDS = [OperationKind.SCATTER, OperationKind.GATHER, OperationKind.BROADCAST,
         OperationKind.REDUCE, OperationKind.ALLREDUCE, OperationKind.ALLGATHER,
         OperationKind.ALLTOALL]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(2, 7), kind=st.sampled_from(KINDS),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2"]),
       commutative=st.booleans(), name=st.sampled_from(PLANNERS))
def test_every_planner_on_random_platforms(seed: int, n: int, kind: OperationKind, model: str,
                                           commutative: bool, name: str) -> None:
    platform = random_platform(n, min(2, n - 1), c=(1, 5), compute=(0, 3), seed=seed,
                               port_model=model)
    root = platform.processors[seed % n]
    if kind in (OperationKind.SCATTER, OperationKind.BROADCAST):
        operation = Operation(kind, source=root)
    elif kind in (OperationKind.REDUCE, OperationKind.GATHER):
        operation = Operation(kind, target=root, commutative=commutative and
                              kind is OperationKind.REDUCE)
    elif kind is OperationKind.ALLREDUCE:
        operation = Operation(kind, commutative=commutative)
    else:
        operation = Operation(kind)
    check_plan(name, platform, operation.resolve(platform))


def sparse_platform(seed: int, n: int, kind: OperationKind, model: str) -> Platform:
    """A random tree towards (reduce, gather) or from (scatter, broadcast) P0, plus a
    few random links: the root's paths exist, most paths between others do not."""
    rng = random.Random(seed)
    names = [f"P{i}" for i in range(n)]
    towards_root = kind in (OperationKind.REDUCE, OperationKind.GATHER)
    links: dict[tuple[str, str], int] = {}
    for i in range(1, n):
        parent = names[rng.randrange(i)]
        pair = (names[i], parent) if towards_root else (parent, names[i])
        links[pair] = rng.randint(1, 4)
    for _ in range(rng.randint(0, n)):
        a, b = rng.sample(names, 2)
        links.setdefault((a, b), rng.randint(1, 4))
    return Platform.build(names, [(a, b, c) for (a, b), c in links.items()],
                          port_model=model)


@pytest.mark.parametrize("name", PLANNERS)
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 7),
       kind=st.sampled_from([OperationKind.REDUCE, OperationKind.GATHER,
                             OperationKind.SCATTER, OperationKind.BROADCAST]),
       model=st.sampled_from(["bidirectional", "unidirectional", "multiport:2"]),
       commutative=st.booleans())
def test_every_planner_where_paths_are_missing(name: str, seed: int, n: int,
                                               kind: OperationKind, model: str,
                                               commutative: bool) -> None:
    """Issue 12: a planner that cannot handle a platform answers ``unsupported`` (or
    ``error``, ``infeasible``) with the reason; it never raises."""
    platform = sparse_platform(seed, n, kind, model)
    if kind in (OperationKind.SCATTER, OperationKind.BROADCAST):
        operation = Operation(kind, source="P0")
    else:
        operation = Operation(kind, target="P0",
                              commutative=commutative and kind is OperationKind.REDUCE)
    check_plan(name, platform, operation.resolve(platform),
               answers=("unsupported", "error", "infeasible"))


def test_the_sparse_platforms_miss_paths() -> None:
    """The generator above does produce the case of issue 12 (others unreachable)."""
    platform = sparse_platform(6, 6, OperationKind.REDUCE, "bidirectional")
    from portsim.planners.base import missing_path

    assert missing_path(platform, platform.node_ids) is not None
    result = available_planners()["greedy"].plan(
        platform, Operation(OperationKind.REDUCE, target="P0").resolve(platform))
    assert result.status == "unsupported"
    assert "no path from" in result.message
