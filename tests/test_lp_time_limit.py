"""One deadline per ``lp`` planner call: every phase honours ``time_limit``.

The facade starts one :class:`~portsim.planners.lp._solve.Deadline` from
``time_limit`` and every phase (solves, exact recovery, column generation,
tree extraction, the periodic schedule) and every ``restrict`` candidate
shares it.
"""

from __future__ import annotations

import time
import warnings
from fractions import Fraction

import pytest

from portsim.planners.base import PlanResult
from portsim.planners.lp import naive_steady_state, steady_state
from portsim.planners.lp._driver import LpOptions, parse_options
from portsim.planners.lp._extract import extract_trees
from portsim.planners.lp._periodic import SendTask, Unit, build_periodic
from portsim.planners.lp._solve import Deadline, TimeLimitReached
from portsim.scenarios.generators import random_platform
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform

_PHASES = ("column generation", "periodic schedule", "exact recovery", "pricing",
           "HiGHS", "tree extraction", "model", "master")
"""Words one of which names the phase in a time-limit message."""

_CASES = [
    (OperationKind.SCATTER, 30),
    # 40 nodes: about 0.5 s unlimited (20 took 11-20 ms, so a 0.01 s limit
    # sometimes never tripped).
    (OperationKind.BROADCAST, 40),
    (OperationKind.REDUCE, 8),
]


def _operation(kind: OperationKind) -> Operation:
    if kind is OperationKind.REDUCE:
        return Operation(kind, target="P0")
    return Operation(kind, source="P0")


def _platform(n: int, port_model: str) -> Platform:
    return random_platform(n, 3, c=(1, 10), seed=n, port_model=port_model)


@pytest.mark.parametrize("port_model", ["bidirectional", "unidirectional"])
@pytest.mark.parametrize(("kind", "n"), _CASES)
def test_tiny_time_limit_is_an_error_naming_the_phase(port_model: str, kind: OperationKind,
                                                      n: int) -> None:
    platform = _platform(n, port_model)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, _operation(kind), time_limit=0.01)
    seconds = time.perf_counter() - started
    assert result.status == "error", result.message
    assert "time limit of 0.01 s" in result.message
    assert any(word in result.message for word in _PHASES), result.message
    assert seconds < 0.01 + 1.0


@pytest.mark.parametrize("port_model", ["bidirectional", "unidirectional"])
@pytest.mark.parametrize(("kind", "n"), _CASES)
def test_generous_time_limit_gives_the_same_exact_bound(port_model: str, kind: OperationKind,
                                                        n: int) -> None:
    platform = _platform(n, port_model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = steady_state(platform, _operation(kind))
        limited = steady_state(platform, _operation(kind), time_limit=600)
    assert free.is_ok
    assert limited.is_ok
    assert isinstance(limited.throughput_bound, Fraction)
    assert limited.throughput_bound == free.throughput_bound
    assert limited.period == free.period


def test_naive_tiny_time_limit_is_an_error() -> None:
    platform = _platform(20, "unidirectional")
    started = time.perf_counter()
    result = naive_steady_state(platform, _operation(OperationKind.BROADCAST), time_limit=0.001)
    assert time.perf_counter() - started < 0.001 + 1.0
    assert result.status == "error"
    assert result.planner == "lp-naive"
    assert "time limit of 0.001 s" in result.message


def test_restrict_candidates_share_the_callers_deadline(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    import portsim.planners.lp as facade
    seen: list[Deadline | None] = []
    real = facade._DISPATCH[OperationKind.BROADCAST]

    def spy(platform: Platform, operation: Operation, options: LpOptions):  # type: ignore[no-untyped-def]
        seen.append(options.deadline)
        return real(platform, operation, options)

    monkeypatch.setitem(facade._DISPATCH, OperationKind.BROADCAST, spy)
    platform = Platform.build(["1", "2", "3"], [("1", "2", 1), ("1", "3", 1), ("2", "3", "1/2"),
                                                ("3", "2", "1/2")])
    result = steady_state(platform, Operation(OperationKind.BROADCAST, source="1"),
                          restrict="tree", time_limit=60)
    assert result.is_ok
    assert len(seen) >= 2
    assert all(d is not None for d in seen)
    assert len({id(d) for d in seen}) == 1  # one Deadline object for every candidate


def test_parse_options_leaves_the_deadline_unset() -> None:
    options = parse_options({"time_limit": 5})
    assert options.time_limit == 5.0
    assert options.deadline is None
    started = options.started()
    assert started.deadline is not None
    assert started.started().deadline is started.deadline
    assert started == options  # the deadline does not take part in equality


def test_build_periodic_checks_the_deadline() -> None:
    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    op = Operation(OperationKind.SCATTER, source="S").resolve(platform)
    groups = [[Unit(Fraction(1, 2), (SendTask("S", "A", Item.message("A"), 0),))],
              [Unit(Fraction(1, 2), (SendTask("S", "B", Item.message("B"), 0),))]]
    expired = Deadline(time.perf_counter() - 1)
    with pytest.raises(TimeLimitReached, match="periodic schedule"):
        build_periodic(platform, op, groups, Fraction(1, 2), deadline=expired)
    plan = build_periodic(platform, op, groups, Fraction(1, 2), deadline=Deadline.after(60))
    assert plan.period == 2


def test_extract_trees_checks_the_deadline() -> None:
    op = Operation(OperationKind.REDUCE, target="P0")
    platform = _platform(4, "bidirectional")
    resolved = op.resolve(platform)
    with pytest.raises(TimeLimitReached, match="tree extraction"):
        extract_trees(resolved, {}, Fraction(1), deadline=Deadline(time.perf_counter() - 1))


def test_the_steiner_pricing_checks_the_deadline_between_sources(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow Steiner search (here 0.4 s a tree) stops at the deadline, not at the end
    of a round over every source (an allgather of 6 sources: 2.4 s a round).  The
    limit (1 s) leaves the set-up before the first pricing, some 0.05 s, room on a
    loaded machine: with 0.3 s it could pass before the pricing started."""
    import portsim.planners.lp._steiner as steiner

    slow = steiner.TreePricer.best

    def best(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.4)
        return slow(self, *args, **kwargs)

    monkeypatch.setattr(steiner.TreePricer, "best", best)
    names = [f"P{i}" for i in range(6)]
    links = [(a, "R", 1) for a in names] + [("R", a, 1) for a in names]
    platform = Platform.build([*names, "R"], links, routers=["R"])
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, Operation(OperationKind.ALLGATHER), time_limit=1)
    seconds = time.perf_counter() - started
    assert result.status == "error", result.message
    assert "Steiner" in result.message
    assert seconds < 2.0  # at most one tree (0.4 s) past the limit, not the round


def _scatter_toy_cut_while_scheduled(monkeypatch: pytest.MonkeyPatch) -> PlanResult:
    """``lp`` on the scatter toy (LMR, Fig. 2: TP = 1/2) with ``time_limit: 60``,
    its periodic schedule's build stopped by the time limit."""
    import portsim.planners.lp._driver as driver

    def stopped(*args: object, **kwargs: object) -> None:
        raise TimeLimitReached("periodic schedule")

    monkeypatch.setattr(driver, "build_periodic", stopped)
    platform = Platform.build(["Ps", "Pa", "Pb", "P0", "P1"], [
        ("Ps", "Pa", 1), ("Ps", "Pb", 1), ("Pa", "P0", Fraction(2, 3)),
        ("Pb", "P0", Fraction(4, 3)), ("Pb", "P1", Fraction(4, 3))])
    op = Operation(OperationKind.SCATTER, source="Ps", targets=("P0", "P1"))
    return steady_state(platform, op, time_limit=60)


def test_schedule_cut_by_the_time_limit_still_gives_the_proven_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A time limit reached while the periodic schedule is built (an all-to-all on
    30 random nodes with ``time_limit: 0.5``) left an error row with no figure,
    though the program had proven its optimum: the row now gives it, as the
    allreduce's does.  The scatter toy, its build stopped: TP = 1/2 (LMR, Fig. 2)."""
    result = _scatter_toy_cut_while_scheduled(monkeypatch)
    assert (result.status, result.message) == (
        "error", "time limit of 60.0 s reached during periodic schedule (certified all the "
                 "same: the optimum is 1/2); raise time_limit")


def test_a_bound_proven_before_the_cut_is_the_rows_bound_and_the_studys_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound proven before the schedule's build was cut was in the message only:
    ``throughput_bound`` was null, so a study run whose only ``lp`` entry hit its
    ``time_limit`` there had no ``reference_bound`` and every planner of it lost its
    efficiency (left out of the means, the larger platforms first).  The scatter
    toy (LMR, Fig. 2): TP = 1/2; flat's efficiency = its measured throughput / (1/2)."""
    from portsim.scenarios.study import execute_run, study_from_dict

    result = _scatter_toy_cut_while_scheduled(monkeypatch)
    assert (result.status, result.throughput_bound, result.schedule) == (
        "error", Fraction(1, 2), None)
    assert result.bound_exact is True  # the optimum, proven before the cut
    study = study_from_dict({"name": "cut", "base": {
        "platform": {"nodes": [{"id": n} for n in ("Ps", "Pa", "Pb", "P0", "P1")],
                     "links": [{"src": "Ps", "dst": "Pa", "c": 1},
                               {"src": "Ps", "dst": "Pb", "c": 1},
                               {"src": "Pa", "dst": "P0", "c": "2/3"},
                               {"src": "Pb", "dst": "P0", "c": "4/3"},
                               {"src": "Pb", "dst": "P1", "c": "4/3"}]},
        "operation": {"type": "scatter", "source": "Ps", "targets": ["P0", "P1"]},
        "planners": [{"name": "lp", "time_limit": 60}, "flat"]}})
    lp, flat = execute_run(study.runs[0], "cut")
    assert (lp["status"], lp["throughput_bound"], lp["reference_bound"]) == ("error", "1/2",
                                                                              "1/2")
    assert (lp["bound_exact"], flat["reference_bound_exact"]) == (True, True)
    assert flat["efficiency"] == float(Fraction(flat["measured_throughput_exact"]) * 2)
