"""The ``lp`` planner on hostile but valid inputs (issue 13 item 3, issue 12 item 1).

It writes nothing on standard output (HiGHS's banner), never raises (deep
arborescence contractions, exact arithmetic too large for floats, times
beyond the solver's range), keeps the replay's time scale bounded, and
stops by default after :data:`~portsim.planners.lp._driver.DEFAULT_TIME_LIMIT`.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import portsim.planners.lp as lp_module
from portsim.planners.lp import _driver as driver
from portsim.planners.lp import _naive as naive_module
from portsim.planners.lp import naive_steady_state, steady_state
from portsim.planners.lp._arborescence import min_arborescence
from portsim.planners.lp._driver import DEFAULT_TIME_LIMIT, MAX_SCALE_BITS, LpOptions
from portsim.scenarios.loader import load_scenario
from portsim.simulator.errors import OperationError
from portsim.simulator.numbers import common_denominator
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"
SCATTER = OperationKind.SCATTER


def _primes(start: int, count: int) -> list[int]:
    out: list[int] = []
    x = start
    while len(out) < count:
        if x > 1 and all(x % d for d in range(2, int(x ** 0.5) + 1)):
            out.append(x)
        x += 1
    return out


def _star(costs: list[Fraction]) -> Platform:
    """S sends to N0..N{k-1}, link i of cost ``costs[i]``."""
    return Platform.build(["S", *(f"N{i}" for i in range(len(costs)))],
                          [("S", f"N{i}", c) for i, c in enumerate(costs)])


# -- the solver's banner ----------------------------------------------------------------


_CHILD = """
import sys
from portsim.planners.lp import steady_state
from portsim.planners.lp._solve import new_highs
from portsim.scenarios.loader import load_scenario

example, port_model = sys.argv[1], sys.argv[2]
if example == "new_highs":
    h = new_highs()
    h.addVar(0.0, 1.0)
    h.run()
else:
    scenario = load_scenario(example)
    platform = scenario.platform
    if port_model != "-":
        platform = platform.with_port_model(port_model)
    result = steady_state(platform, scenario.operation)
    sys.stderr.write(result.status)
"""


@pytest.mark.parametrize(("example", "port_model"), [
    ("new_highs", "-"),                      # the helper alone, then a solve (no log)
    ("scatter-toy", "-"),                    # port sums: _solve's HiGHS object
    ("broadcast-unidir", "-"),               # matchings: the column-generation master
    ("reduce-toy", "-"),                     # reduction trees: the reduce master
    ("reduce-toy", "unidirectional"),        # reduction trees over matchings
])
def test_planning_writes_nothing_on_stdout(example: str, port_model: str) -> None:
    """highspy 1.16 printed "Running HiGHS 1.16.0 ... Copyright ..." on file
    descriptor 1 when the first solver object of a process was created (issue
    12).  HiGHS prints it once per process, so each site runs in a fresh
    interpreter, whose whole standard output must stay empty."""
    path = example if example == "new_highs" else str(EXAMPLES / f"{example}.yaml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _CHILD, path, port_model], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    if example != "new_highs":
        assert done.stderr.endswith("ok"), done.stderr


# -- never raises -----------------------------------------------------------------------


def test_min_arborescence_is_not_recursive() -> None:
    """A chain of 2-cycles contracts one level per node: the recursive version
    needed n levels of Python recursion (a RecursionError on a 2,000-node
    platform).  Here 400 nodes under a recursion limit of 150 frames more
    than the current depth; the only spanning arborescence of cost 1 is the path."""
    n = 400
    edges = [(0, 1, 1)]
    edges += [(i, i + 1, 0) for i in range(1, n - 1)]
    edges += [(i + 1, i, 0) for i in range(1, n - 1)]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 150)
    try:
        chosen = min_arborescence(n, 0, edges)
    finally:
        sys.setrecursionlimit(old)
    assert chosen is not None
    assert sorted(edges[i][:2] for i in chosen) == [(i, i + 1) for i in range(n - 1)]


@pytest.mark.slow
def test_a_2000_node_broadcast_does_not_raise() -> None:
    """The issue's reproducer: a 2,000-node random platform (a broadcast, minimum
    arborescence pricing), cut by a time limit: an ok or a time-limit error."""
    from portsim.scenarios.generators import random_platform

    platform = random_platform(2000, 3, c=(1, 10), seed=1, port_model="unidirectional")
    result = steady_state(platform, Operation(OperationKind.BROADCAST, source="P0"),
                          time_limit=60)
    assert result.is_ok or "time limit" in result.message, result.message


@pytest.mark.filterwarnings("ignore:the exact period")
def test_exact_overflow_falls_back_and_says_so() -> None:
    """Costs 1/p for 90 distinct primes p > 10,000: the source's send row scaled to
    integers has a common denominator of about 1,200 bits, beyond a float, and
    the exact basis solve raised OverflowError.  Now the step is skipped (a
    note says so) and the rounding step still finds the exact optimum, the
    source's port being the bottleneck: TP = 1 / sum(1/p)."""
    primes = _primes(10_000, 90)
    costs = [Fraction(1, p) for p in primes]
    result = steady_state(_star(costs), Operation(SCATTER, source="S"))
    assert result.is_ok, result.message
    assert result.throughput_bound == 1 / sum(costs)
    assert any("arithmetic overflow" in n and "skipped" in n for n in result.notes), \
        result.notes


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the exact period")
def test_the_issue_star_of_150_prime_costs() -> None:
    """The issue's reproducer: 150 links of cost 1/p, the first 150 primes."""
    costs = [Fraction(1, p) for p in _primes(2, 150)]
    result = steady_state(_star(costs), Operation(SCATTER, source="S"))
    assert result.is_ok, result.message
    assert result.throughput_bound == 1 / sum(costs)


@pytest.mark.parametrize("port_model", ["bidirectional", "unidirectional"])
@pytest.mark.parametrize("kind", [SCATTER, OperationKind.BROADCAST])
def test_a_time_beyond_floats_is_an_error_naming_it(port_model: str,
                                                    kind: OperationKind) -> None:
    """A link cost of 1e400 raised OverflowError (float of the coefficient)."""
    platform = Platform.build(["S", "A", "B"], [("S", "A", Fraction(10) ** 400),
                                                ("S", "B", 1), ("A", "B", 1)])
    result = steady_state(platform.with_port_model(port_model), Operation(kind, source="S"))
    assert result.status == "error"
    assert "link S->A" in result.message
    assert "~1.000e+400" in result.message
    assert "floating-point" in result.message


def test_a_huge_compute_time_matters_only_to_reductions() -> None:
    platform = Platform.build({"S": Fraction(10) ** 400, "A": 1},
                              [("S", "A", 1), ("A", "S", 1)])
    scatter = steady_state(platform, Operation(SCATTER, source="S"))
    assert scatter.throughput_bound == 1
    reduce = steady_state(platform, Operation(OperationKind.REDUCE, target="S"))
    assert reduce.status == "error"
    assert "compute time of node S" in reduce.message


def test_a_tiny_compute_time_is_an_error_naming_it() -> None:
    """``compute: 1e-999`` on the reduce toy took 160 s and 3.3 GB (a 5,000-instance
    fixed period replayed on 3,320-bit integers)."""
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    nodes = {n.id: (Fraction(1, 10 ** 999) if n.id == "P0" else n.compute)
             for n in scenario.platform.nodes}
    platform = Platform.build(nodes, [(x.src, x.dst, x.c) for x in scenario.platform.links])
    result = steady_state(platform, scenario.operation)
    assert result.status == "error"
    assert "compute time of node P0, ~1.000e-999" in result.message
    assert "3319 bits" in result.message
    assert f"{MAX_SCALE_BITS} bits" in result.message


def test_the_schedule_scale_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each cost has a denominator of at most 3 bits, the schedule's times their
    lcm, 210 (8 bits): with the bound lowered to 4 bits, the schedule is refused."""
    costs = [Fraction(1, p) for p in (2, 3, 5, 7)]
    platform = _star(costs)
    ok = steady_state(platform, Operation(SCATTER, source="S"))
    assert ok.is_ok
    assert ok.schedule is not None
    times = [e.start for e in ok.schedule.events] + costs + [ok.period]
    assert common_denominator(times).bit_length() == 8
    monkeypatch.setattr(driver, "MAX_SCALE_BITS", 4)
    refused = steady_state(platform, Operation(SCATTER, source="S"))
    assert refused.status == "error"
    assert "common denominator of 8 bits" in refused.message


def test_any_failure_inside_is_an_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(lp_module._DISPATCH, SCATTER, broken)
    monkeypatch.setattr(naive_module, "_plan_paths", broken)
    platform = _star([Fraction(1)])
    for plan, name in ((steady_state, "lp"), (naive_steady_state, "lp-naive")):
        result = plan(platform, Operation(SCATTER, source="S"))
        assert result.status == "error"
        assert result.planner == name
        assert "ZeroDivisionError: a bug" in result.message


def test_bad_input_still_raises() -> None:
    """An operation naming an unknown node is the caller's error, not the planner's."""
    with pytest.raises(OperationError):
        steady_state(_star([Fraction(1)]), Operation(SCATTER, source="Z"))


# -- the default time limit -------------------------------------------------------------


def test_a_default_time_limit_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``time_limit`` a call ran unbounded (a 1,000-node broadcast past 300 s)."""
    assert LpOptions().seconds == DEFAULT_TIME_LIMIT
    assert LpOptions(time_limit=5.0).seconds == 5.0
    monkeypatch.setattr(driver, "DEFAULT_TIME_LIMIT", 1e-9)
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    result = steady_state(scenario.platform, scenario.operation)
    assert result.status == "error"
    assert "time limit of 1e-09 s (the default time_limit) reached" in result.message
    given = steady_state(scenario.platform, scenario.operation, time_limit=60)
    assert given.is_ok
