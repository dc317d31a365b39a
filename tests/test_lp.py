"""The ``lp`` planner: exact bounds, certificates, periodic schedules.

Expected values come from the papers (Legrand, Marchal and Robert, RR-4872,
and the slides), from independent computations (a path-enumeration LP, a
hand-derived optimum) or from brute force; never from the planner itself.
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from bound_checks import assert_no_planner_beats
from budget_cases import budget_passing_at
from hypothesis import example, given, settings
from hypothesis import strategies as st
from random_cases import operation_for
from scipy.optimize import linprog

from portsim.planners.base import PlanResult as PlanResultType
from portsim.planners.lp import LP_PLANNER, steady_state
from portsim.planners.lp._driver import finish, parse_options
from portsim.planners.lp._exact import (
    ExactSolution,
    _refine,
    _solve_exact,
    basis_recover,
    dual_bound,
    primal_feasible,
    recover,
)
from portsim.planners.lp._flows import Commodity, build_flow_model
from portsim.planners.lp._periodic import SendTask, Unit, build_periodic, peel_matchings
from portsim.planners.lp._solve import LinearModel, solve_float
from portsim.planners.registry import available_planners, get_planner
from portsim.scenarios.generators import dgx1_platform, random_platform, torus_platform
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.runner import guarded_plan, run_scenario
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.errors import PlannerError
from portsim.simulator.items import Item
from portsim.simulator.numbers import format_rational, parse_rational
from portsim.simulator.platform import Link, Node

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
F = Fraction


def _ratio(result, periods: int) -> float:  # type: ignore[no-untyped-def]
    """completed(K) / (TP * K) after a strict replay of ``periods`` periods."""
    report = replay(result.schedule, horizon=result.period * periods)
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    return report.completed / float(result.throughput_bound * result.period * periods)


# -- the scatter toy (RR-4872 section 3.2, Fig. 2-4; slides 28-43) -------------------

def test_scatter_toy_example_file() -> None:
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    assert "lp" in [spec.name for spec in scenario.planners]
    outcome = run_scenario(scenario)
    (lp,) = [r for r in outcome.results if r.planner == "lp"]
    assert lp.status == "ok"
    assert lp.throughput_bound == F(1, 2)  # published: TP = 1/2
    assert lp.feasible is True
    assert lp.plan is not None
    assert lp.plan.schedule is not None
    # The LP optimum is degenerate on this platform (see test below); whichever
    # optimal vertex HiGHS returns, keeping messages whole multiplies the period
    # by 4 here, as in the paper (12 -> 48).
    whole = steady_state(scenario.platform, scenario.operation, split=False)
    assert whole.period == 4 * lp.period
    assert _ratio(whole, 40) > 0.9


def test_scatter_toy_paper_solution_gives_period_12_and_48() -> None:
    """The slides' LP solution (slide 29): 1/4 m0 via Pa, 1/4 m0 and 1/2 m1 via Pb."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    m0, m1 = Item.message("P0"), Item.message("P1")
    groups = [
        [Unit(F(1, 4), (SendTask("Ps", "Pa", m0, 0), SendTask("Pa", "P0", m0, 1))),
         Unit(F(1, 4), (SendTask("Ps", "Pb", m0, 0), SendTask("Pb", "P0", m0, 1)))],
        [Unit(F(1, 2), (SendTask("Ps", "Pb", m1, 0), SendTask("Pb", "P1", m1, 1)))],
    ]
    split = build_periodic(scenario.platform, scenario.operation, groups, F(1, 2))
    assert (split.period, split.instances_per_period, split.matchings) == (12, 6, 4)
    whole = build_periodic(scenario.platform, scenario.operation, groups, F(1, 2), split=False)
    assert (whole.period, whole.instances_per_period) == (48, 24)
    # the lengthening is said (it was silent): 12 -> 48, 4 times
    assert ("messages sent whole (split: false): the period 12 is 4 times longer, 48, with "
            "4 times its instances (the matchings' numbers of messages are whole only then)"
            in whole.notes)
    assert not any("messages sent whole" in note for note in split.notes)
    assert all(e.part == 1 for e in whole.schedule.events)
    for plan in (split, whole):
        report = replay(plan.schedule, horizon=plan.period * 30)
        assert report.violations == ()
        assert report.completed >= plan.instances_per_period * 29  # lag 1: one period lost


def test_scatter_toy_optimum_is_degenerate() -> None:
    """Every split x in [0, 3] of m0 through Pb (per period 12) is optimal (hand LP)."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    for x in range(4):
        loads = {  # busy time per period 12
            ("Ps", "Pa"): (6 - x) * F(1), ("Ps", "Pb"): (6 + x) * F(1),
            ("Pa", "P0"): (6 - x) * F(2, 3), ("Pb", "P0"): x * F(4, 3),
            ("Pb", "P1"): 6 * F(4, 3),
        }
        for node in scenario.platform.node_ids:
            assert sum(w for (u, _), w in loads.items() if u == node) <= 12
            assert sum(w for (_, v), w in loads.items() if v == node) <= 12


def test_certificate_proves_the_toy_bound() -> None:
    """The exact dual certifies 1/2: weak duality with an exactly feasible dual."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    op = scenario.operation
    flow_model = build_flow_model(
        scenario.platform,
        [Commodity("Ps", op.targets, tuple(Item.message(k) for k in op.targets))], op.size)
    sol = solve_float(flow_model.model)
    exact = recover(flow_model.model, sol)
    assert exact is not None
    assert exact.exact
    assert exact.method in ("basis", "rounding")  # the sparse basis solve comes first
    assert all(y >= 0 for y in exact.y_ub)
    assert dual_bound(flow_model.model, exact.y_ub, exact.y_eq) == F(1, 2)
    assert primal_feasible(flow_model.model, exact.values)


# -- independent check of the bound: a path-enumeration LP ---------------------------------

def _path_lp_bound(platform: Platform, commodities: list[tuple[str, str]]) -> float:
    """max TP over weights of every simple path (an independent formulation)."""
    g = platform.graph
    columns: list[tuple[int, list[str]]] = []
    for c, (s, t) in enumerate(commodities):
        columns.extend((c, p) for p in nx.all_simple_paths(g, s, t))
    nodes = list(g.nodes)
    n_cols = len(columns) + 1
    a_ub = np.zeros((2 * len(nodes), n_cols))
    for k, (_, path) in enumerate(columns):
        for u, v in itertools.pairwise(path):
            c = float(g.edges[u, v]["c"])
            a_ub[nodes.index(u), k] += c
            a_ub[len(nodes) + nodes.index(v), k] += c
    a_eq = np.zeros((len(commodities), n_cols))
    for k, (c, _) in enumerate(columns):
        a_eq[c, k] = 1
    a_eq[:, -1] = -1
    cost = np.zeros(n_cols)
    cost[-1] = -1
    res = linprog(cost, A_ub=a_ub, b_ub=np.ones(2 * len(nodes)), A_eq=a_eq,
                  b_eq=np.zeros(len(commodities)), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(-res.fun)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5),
       kind=st.sampled_from(["scatter", "gather", "alltoall"]))
def test_bound_matches_path_enumeration(seed: int, n: int, kind: str) -> None:
    platform = random_platform(n, min(2, n - 1), c=(1, 5), seed=seed)
    nodes = platform.processors
    root = nodes[seed % n]
    if kind == "scatter":
        op = Operation(OperationKind.SCATTER, source=root)
        pairs = [(root, k) for k in nodes if k != root]
    elif kind == "gather":
        op = Operation(OperationKind.GATHER, target=root)
        pairs = [(k, root) for k in nodes if k != root]
    else:
        op = Operation(OperationKind.ALLTOALL)
        pairs = [(j, k) for j in nodes for k in nodes if j != k]
    result = steady_state(platform, op)
    assert result.status == "ok"
    assert result.throughput_bound == pytest.approx(_path_lp_bound(platform, pairs), rel=1e-7)


def test_bound_by_hand_on_a_chain() -> None:
    """S -> A -> B, costs 1 and 2: scatter to A and B; S sends 2 msgs (1 each), A
    forwards m_B (2): TP = 1/2 is limited by A's send port (2 TP <= 1)."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 2)])
    result = steady_state(p, Operation(OperationKind.SCATTER, source="S"))
    assert result.throughput_bound == F(1, 2)
    assert _ratio(result, 50) > 0.95


# -- the periodic machinery ---------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.tuples(st.sampled_from("abcd"), st.sampled_from("wxyz")),
                       st.fractions(min_value=F(1, 7), max_value=5, max_denominator=12),
                       min_size=1, max_size=12))
def test_peel_matchings_is_a_weighted_edge_colouring(loads: dict) -> None:  # type: ignore[type-arg]
    matchings = peel_matchings(loads)
    per_link: dict[tuple[str, str], Fraction] = {}
    for duration, links in matchings:
        assert duration > 0
        assert len({u for u, _ in links}) == len(links)  # one send per sender
        assert len({v for _, v in links}) == len(links)  # one receive per receiver
        for e in links:
            per_link[e] = per_link.get(e, F(0)) + duration
    assert per_link == {e: w for e, w in loads.items() if w > 0}
    out = {u: sum(w for (a, _), w in loads.items() if a == u) for u, _ in loads}
    inn = {v: sum(w for (_, b), w in loads.items() if b == v) for _, v in loads}
    # König: the matchings last exactly the largest port load.
    assert sum(d for d, _ in matchings) == max(*out.values(), *inn.values())


def test_fixed_period_reports_proposition_4_loss() -> None:
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    result = steady_state(scenario.platform, scenario.operation, period=5)
    assert result.period == 5
    assert result.throughput_bound == F(1, 2)
    (note,) = [n for n in result.notes if "Proposition 4" in n]
    assert "fixed period 5" in note
    # the loss bound #units / T as one reduced rational, then the count of units
    units = len(result.trees)
    assert f"<= {format_rational(F(units, 5))}, {units} units over the period" in note
    schedule = result.schedule
    assert schedule is not None
    achieved = F(schedule.instances_per_period) / 5
    # floor(w * 5) per path: paths of weight 1/2 carry 2 instances: 2/5.
    assert achieved == F(2, 5)
    report = replay(schedule, horizon=100)
    assert report.violations == ()


def test_period_cap_falls_back_to_a_fixed_period() -> None:
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    # 12 operations per exact period 6 (2 per time unit): a cap of 6 allows the
    # fixed period 3 (one scatter, 1/3 of the optimal 1/2), but the period 2
    # holds one scatter too, in 4 operations: the optimum 1/2 (RR-4872) within
    # the cap, which no fixed period can beat.
    with pytest.warns(UserWarning, match="period:"):
        result = steady_state(scenario.platform, scenario.operation, max_events=6)
    assert result.status == "ok"
    assert any("Proposition 4" in n for n in result.notes)
    assert result.schedule is not None
    assert result.schedule.instances_per_period == 1  # 4 sends: within the cap of 6
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()
    assert (result.period, report.throughput) == (2, Fraction(1, 2))


def test_the_period_cap_note_tells_instances_from_operations() -> None:
    """The note of a capped exact period said "would hold 12 operations per period"
    on the scatter toy, which a student reads as 12 scatters in a period of 6 where
    LMR's TP = 1/2 gives 3.  Both counts by hand: 3 = TP x 6 scatters, each two
    paths of two hops (Ps -> Pa | Pb -> P0, Ps -> Pb -> P1), so 12 sends."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    with pytest.warns(UserWarning, match="period:"):
        result = steady_state(scenario.platform, scenario.operation, max_events=6)
    assert result.throughput_bound == Fraction(1, 2)
    instances = result.throughput_bound * 6
    sends = instances * 2 * 2
    note = next(n for n in result.notes if n.startswith("the exact period 6 "))
    assert note.startswith(f"the exact period 6 would hold {sends} operations (sends and "
                           f"computations) per period for its {instances} instances (cap 6)")


def test_a_fixed_period_holding_no_instance_is_lengthened() -> None:
    """A period so short that floor(w·T) = 0 for every path: not an empty schedule
    claiming one instance per period (the validator now refuses that), but a longer
    period."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    result = steady_state(scenario.platform, scenario.operation, period=Fraction(1, 10))
    assert result.status == "ok"
    assert any("holds no whole instance" in n for n in result.notes)
    assert result.schedule is not None
    assert len(result.schedule.events) > 0
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()
    assert report.throughput is not None
    assert 0 < report.throughput <= Fraction(1, 2)  # never above TP = 1/2 (Fig. 2)


def test_a_cap_below_one_instance_gives_the_integer_rounding_of_one_instance() -> None:
    """A cap so low (3 operations) that one instance (4 transfers) is over it: the
    integer rounding's period holds one instance, said over the cap, and that
    period is 2, where the scatter toy's two paths carry TP = 1/2 (Fig. 2)."""
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    with pytest.warns(UserWarning, match="period:"):
        result = steady_state(scenario.platform, scenario.operation, max_events=3)
    assert result.status == "ok"
    assert result.period == 2
    assert result.achieved_throughput == Fraction(1, 2)
    assert any("4 operations, over the cap of 3 operations per period (one instance alone"
               in n for n in result.notes)
    assert result.schedule is not None
    assert result.schedule.instances_per_period == 1
    assert replay(result.schedule, horizon=result.period * 10).violations == ()


def test_a_build_cut_by_the_time_limit_drops_its_fixed_period_note(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap forces the fixed period 2 (the test above), whose note is warned
    as the build chooses it; the deadline then passes in the build: the error row
    says so and does not name the fixed period of a schedule never made."""
    from portsim.planners.lp import _periodic
    from portsim.planners.lp._solve import TimeLimitReached

    def expired(*args: object, **kwargs: object) -> None:
        raise TimeLimitReached("periodic schedule")

    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    monkeypatch.setattr(_periodic, "_jobs", expired)
    result = guarded_plan(LP_PLANNER, scenario.platform, scenario.operation,
                          {"max_events": 3, "time_limit": 60})
    assert result.status == "error"
    assert "time limit of 60.0 s reached during periodic schedule" in result.message
    assert result.notes == ()


def test_a_fixed_period_shorter_than_one_time_unit_on_fast_links() -> None:
    """Links of cost 1/p for primes p near 10^9: a billion broadcasts a time unit.
    The chain S -> A -> B -> C sends b once per port, the longest busy time being
    S's 1/999999937 (its cheapest link), and S sends every b at least once: the
    bound is 999999937, by hand.  The exact period (~10^18) is over the cap, and
    the fixed period was a whole time unit, 3 x 10^9 operations: the build ran out
    of memory.  It is now a fraction of a time unit, and carries the bound."""
    c = {("S", "A"): 999999937, ("S", "B"): 999999929, ("S", "C"): 999999893,
         ("A", "B"): 1000000007, ("B", "C"): 1000000009}
    platform = Platform.build(["S", "A", "B", "C"],
                              [(u, v, Fraction(1, p)) for (u, v), p in c.items()])
    with pytest.warns(UserWarning, match="using the fixed period"):
        result = steady_state(platform, Operation(OperationKind.BROADCAST, source="S"))
    assert result.status == "ok", result.message
    assert result.throughput_bound == 999999937
    assert result.period is not None
    assert result.period < 1
    assert result.achieved_throughput == 999999937
    assert result.schedule is not None
    assert len(result.schedule.events) <= 20000
    report = replay(result.schedule, horizon=result.period * 6)
    assert report.violations == ()
    assert report.throughput == 999999937


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("kind", [OperationKind.GATHER, OperationKind.SCATTER,
                                  OperationKind.BROADCAST])
def test_links_of_tiny_busy_times_are_not_dropped(kind: OperationKind) -> None:
    """Bandwidths of 10^9 to 2.5 x 10^10 and messages of size 1: busy times of
    10^-10, below the 10^-9 under which HiGHS drops a coefficient, so the ports'
    rows lost them and the program was `unbounded` (an error row).  The bound is
    the one for messages of size 10^6 (well scaled) times 10^6, as time scales."""
    links = [("S", "A", "1.25e9"), ("S", "B", "1e9"), ("S", "C", "12.5e9"),
             ("A", "B", "25e9"), ("B", "C", "1e10"), ("A", "C", "1e9"),
             ("C", "S", "1e9")]
    platform = Platform([Node(v) for v in "SABC"],
                        [Link.of_bandwidth(u, v, bw) for u, v, bw in links], "bidirectional")
    ends = {"target": "C"} if kind is OperationKind.GATHER else {"source": "S"}
    small = steady_state(platform, Operation(kind, size=1, **ends))
    large = steady_state(platform, Operation(kind, size=10**6, **ends))
    assert small.status == "ok", small.message
    assert large.status == "ok", large.message
    assert large.throughput_bound is not None
    assert small.throughput_bound == large.throughput_bound * 10**6
    assert small.achieved_throughput == small.throughput_bound
    assert small.schedule is not None
    report = replay(small.schedule, horizon=small.period * 4)
    assert report.violations == ()


_UNITS_LINKS = [("S", "A", "12.5"), ("S", "B", "10"), ("A", "B", "25"), ("B", "C", "7"),
                ("A", "C", "3")]
"""Both ways each: S reaches A at 12.5 and B at 10, A reaches B at 25 and C at 3,
B reaches C at 7 (bandwidths, no latency)."""

_UNITS_BOUND = {OperationKind.BROADCAST: Fraction(7), OperationKind.SCATTER: Fraction(25, 6),
                OperationKind.GATHER: Fraction(25, 6)}
"""The bound of a message of size 1, by hand: a broadcast's C receives at most
7 messages a time unit (at most 1/7 each, on B -> C; 1/3 on A -> C), which
S -> A -> B -> C reaches (S sends 7/12.5, A 7/25, B 1); S sends (a scatter)
or receives (a gather) three messages an operation, each at least 1/12.5
(its A link): 25/6, reached by routing every message through A and C's
through A -> B -> C (per time unit, A's receive port busy 1, its send port
1/3, B's send port 25/42)."""


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("size", ["1e-12", "1e-14", "1e7", "1e9"])
@pytest.mark.parametrize("kind", [OperationKind.BROADCAST, OperationKind.SCATTER,
                                  OperationKind.GATHER])
def test_the_bound_and_schedule_do_not_depend_on_the_time_unit(kind: OperationKind,
                                                               size: str) -> None:
    """A size of 10^9 on bandwidths of 3 to 25 (busy times of 10^8 an operation:
    bytes on GB/s) made the throughputs fall under HiGHS's feasibility
    tolerance: the lp gave the certified interval [0, bound] and an empty
    schedule (no tree, `not measured: 3 violation(s)`), from a size of 10^7
    on for the gather; a size of 10^-12 (busy times of 10^-14) made the
    broadcast's tree master unbounded (an error row).  On links without
    latency the bound is the size-1 bound over the size, and the schedule
    reaches it."""
    platform = Platform([Node(v) for v in "SABC"],
                        [Link.of_bandwidth(a, b, bw) for u, v, bw in _UNITS_LINKS
                         for a, b in ((u, v), (v, u))], "bidirectional")
    ends = {"target": "S"} if kind is OperationKind.GATHER else {"source": "S"}
    s = parse_rational(size, path="size")
    result = steady_state(platform, Operation(kind, size=s, **ends))
    assert result.status == "ok", result.message
    assert result.throughput_bound == _UNITS_BOUND[kind] / s
    assert result.achieved_throughput == result.throughput_bound
    assert result.schedule is not None
    assert result.period is not None
    report = replay(result.schedule, horizon=result.period * 4)
    assert report.violations == ()


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("case", ["toy in picoseconds", "dgx1 in bytes per second"])
def test_throughput_does_not_depend_on_the_time_unit(case: str) -> None:
    """Every rate about 10^-12 (the scatter toy's costs times 10^12) or about
    10^10 (a DGX-1's NVLinks of 25 * 10^9 bytes per second, messages of one
    byte) is beyond HiGHS's absolute tolerances: the toy's bound was 3/(4 *
    10^12) with a schedule of no instance that failed its replay, the gather
    ``HiGHS failed on the gather model: Unknown``.  The bound is now the
    paper's TP = 1/2 over 10^12, and for the gather the six NVLinks into P2
    over its 7 messages, 6 * 25 * 10^9 / 7, both reached by the schedule."""
    if case == "toy in picoseconds":
        toy = load_scenario(EXAMPLES / "scatter-toy.yaml")
        platform = Platform(toy.platform.nodes,
                            [Link(x.src, x.dst, x.c * 10**12) for x in toy.platform.links],
                            "bidirectional")
        op, expected = toy.operation, Fraction(1, 2 * 10**12)
    else:
        from portsim.scenarios.generators import dgx1_platform

        platform = dgx1_platform(nvlink=25 * 10**9)
        op = Operation(OperationKind.GATHER, target="P2").resolve(platform)
        expected = Fraction(6 * 25 * 10**9, 7)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert (result.throughput_bound, result.achieved_throughput) == (expected, expected)
    assert result.schedule is not None
    assert result.period is not None
    report = replay(result.schedule, horizon=result.period * 4)
    assert report.violations == ()


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("kind", [OperationKind.REDUCE, OperationKind.ALLREDUCE])
def test_a_reduction_of_large_messages_scales_with_the_size(kind: OperationKind) -> None:
    """A reduce of size 10^9 on bandwidths of 3 to 25 gave the interval [0,
    bound] and no schedule, an allreduce of 10^7 or 10^9 `the
    reduce-then-broadcast program carries nothing`.  Sends then last 10^5 to
    10^9 times a computation (1), which binds no longer: the throughput is
    the communication's, so the bound at 10^9 is that at 10^7 over 100; both
    are reached by schedules that replay without violation."""
    platform = Platform([Node(v) for v in "SABC"],
                        [Link.of_bandwidth(a, b, bw) for u, v, bw in _UNITS_LINKS
                         for a, b in ((u, v), (v, u))], "bidirectional")
    ends = {"target": "S"} if kind is OperationKind.REDUCE else {}
    found = []
    for size in (10**7, 10**9):
        result = steady_state(platform, Operation(kind, size=size, **ends))
        assert result.status == "ok", result.message
        assert result.throughput_bound is not None
        assert result.achieved_throughput == result.throughput_bound
        assert result.schedule is not None
        assert result.period is not None
        assert replay(result.schedule, horizon=result.period * 4).violations == ()
        found.append(result.throughput_bound)
    assert found[1] == found[0] / 100


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("size", ["1e-12", "1e-9", "1e9"])
@pytest.mark.parametrize("kind", [OperationKind.BROADCAST, OperationKind.SCATTER,
                                  OperationKind.GATHER, OperationKind.ALLGATHER,
                                  OperationKind.ALLTOALL])
def test_the_unidirectional_bound_does_not_depend_on_the_time_unit(kind: OperationKind,
                                                                   size: str) -> None:
    """The same on unidirectional nodes (the matchings' master): a size of 10^-12
    was an error row for each kind (``unbounded``), 10^-9 for the gather too
    (``Solve error``: in each link's row the trees' busy times of 10^-10 beside
    the time fractions' 1, which row scaling cannot bring together), and 10^9
    gave the allgather and the all-to-all the interval [0, bound].  The bound
    is that of a size of 1, solved where HiGHS is at ease, over the size; the
    schedule replays without violation, within 0.1% of it (its fixed period)."""
    platform = Platform([Node(v) for v in "SABC"],
                        [Link.of_bandwidth(a, b, bw) for u, v, bw in _UNITS_LINKS
                         for a, b in ((u, v), (v, u))], "unidirectional")
    ends = ({"target": "S"} if kind is OperationKind.GATHER
            else {"source": "S"} if kind in (OperationKind.BROADCAST, OperationKind.SCATTER)
            else {})
    unit = steady_state(platform, Operation(kind, size=1, **ends))
    assert unit.status == "ok", unit.message
    assert unit.throughput_bound is not None
    s = parse_rational(size, path="size")
    result = steady_state(platform, Operation(kind, size=s, **ends))
    assert result.status == "ok", result.message
    assert result.throughput_bound == unit.throughput_bound / s
    assert result.achieved_throughput is not None
    assert result.achieved_throughput >= Fraction(999, 1000) * result.throughput_bound
    assert result.schedule is not None
    assert result.period is not None
    report = replay(result.schedule, horizon=result.period * 4)
    assert report.violations == ()


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize(("model", "expected"), [("bidirectional", Fraction(500000)),
                                                 ("multiport", Fraction(4501000, 9))])
def test_a_link_no_good_tree_takes_does_not_set_the_tree_master_unit(
        model: str, expected: Fraction) -> None:
    """Broadcast from A over A -> B (4 * 10^-12), A -> C (2 * 10^-6), C -> B (5 * 10^-12),
    B -> C (9/1000) and B -> A (10^10): the float tree master took its time unit
    from the largest busy time, 10^10, which no good tree crosses, and 2 * 10^-6
    fell under HiGHS's least matrix entry: `broadcast master program: Unbounded`.
    By hand: every tree reaches C through A -> C or B -> C.  One port a node
    (C's receive port): at most 1 / (2 * 10^-6) = 500000 an instance, reached by
    the tree A -> C -> B.  One port a link: A -> C and B -> C each their own,
    500000 + 1000/9 = 4501000/9."""
    costs = {("A", "B"): Fraction(4, 10**12), ("A", "C"): Fraction(2, 10**6),
             ("B", "A"): Fraction(10**10), ("B", "C"): Fraction(9, 1000),
             ("C", "B"): Fraction(5, 10**12)}
    platform = Platform([Node(v) for v in "ABC"], [Link(u, v, c) for (u, v), c in costs.items()],
                        model)
    result = steady_state(platform, Operation(OperationKind.BROADCAST, source="A"))
    assert result.status == "ok", result.message
    assert result.throughput_bound == expected
    assert result.schedule is not None
    assert result.period is not None
    assert result.achieved_throughput is not None
    assert 0 < result.achieved_throughput <= expected
    assert replay(result.schedule, horizon=result.period * 2).violations == ()


@pytest.mark.parametrize("kind", [OperationKind.SCATTER, OperationKind.GATHER])
def test_flow_through_an_end_is_repaired(kind: OperationKind) -> None:
    """S -> A costs 10^-4, A -> B 3 * 10^-4, S -> C 1, and a useless S -> B 10^9
    (the gather: every link reversed).  HiGHS answers TP = 1 within its
    tolerance, the exact optimum being 1 / (1 + 2 * 10^-4) = 5000/5001 (S's port
    sends m[C] in 1, m[A] and m[B], through A, in 10^-4 each); no rounding of
    that answer is feasible, and the repair gave A all the flow that reaches it,
    B's share too, so no end had a positive share: `no exactly feasible
    solution recovered`.  Each end now takes its own share: the repaired
    primal is the optimum, and the exact dual of its tight rows proves it."""
    tiny, big = Fraction(1, 10**4), 10**9
    links = [("S", "A", tiny), ("S", "B", big), ("A", "B", 3 * tiny), ("S", "C", 1),
             ("C", "B", 7 * tiny)]
    if kind is OperationKind.GATHER:
        links = [(v, u, c) for u, v, c in links]
    platform = Platform.build(["S", "A", "B", "C"], links)
    ends = {"source": "S"} if kind is OperationKind.SCATTER else {"target": "S"}
    result = steady_state(platform, Operation(kind, **ends))
    assert result.status == "ok", result.message
    expected = Fraction(5000, 5001)
    assert (result.throughput_bound, result.achieved_throughput) == (expected, expected)
    # the note names the step that gave the primal (it said "exact (basis)")
    assert result.notes[0] == ("optimal throughput 5000/5001 exact (repair), certified by "
                               "an exactly feasible dual")
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 3).violations == ()


def _far_apart_scatter() -> tuple[Platform, Operation]:
    """Messages of size 10^18 over links of c = 10^-18 to 10^18: busy times from 1
    to 10^36.  By hand S's port sends m[A] (busy 1), m[B] through A (1) and m[C]
    (10^18 - 1) per scatter: TP = 1 / (10^18 + 1)."""
    e18 = 10**18
    platform = Platform.build(["S", "A", "B", "C"], [
        ("S", "A", Fraction(1, e18)), ("S", "B", e18), ("A", "B", Fraction(3, e18)),
        ("S", "C", Fraction(e18 - 1, e18)), ("C", "B", Fraction(7, e18 - 11))])
    return platform, Operation(OperationKind.SCATTER, source="S", size=e18).resolve(platform)


def test_no_instance_recovered_is_an_error_not_an_empty_schedule() -> None:
    """On :func:`_far_apart_scatter` HiGHS answered TP = 0 to ``lp-naive`` (``lp``
    too before it solved in the time unit of its cap).  The result was `ok` with
    the interval [0, U] and a periodic schedule of no event, whose replay failed
    (`feasible: false`, exit status 1, as if the planner's schedule were wrong).
    Such an answer is now an `error` giving the certified upper end (here that
    answer, made by hand for the schedule's builder); and ``lp-naive``, which
    now solves it once more with its columns balanced, gives a certified
    interval holding the optimum by hand, 1 / (10^18 + 1), with a schedule."""
    platform, op = _far_apart_scatter()
    e18 = 10**18
    upper = Fraction(1, e18)
    nothing = ExactSolution([Fraction(0)] * 3, Fraction(0), upper, [], [], "interval")
    result = finish(platform, op, nothing, [], parse_options({}))
    assert result.status == "error"
    assert result.message == (
        f"no schedule: HiGHS's answer, recovered exactly, carries no instance (certified "
        f"interval [0, {upper}]; the platform's times may span more orders of magnitude than "
        f"floating point resolves)")
    naive = get_planner("lp-naive").plan(platform, op)
    assert naive.status == "ok", naive.message
    assert naive.throughput_bound is not None
    assert naive.achieved_throughput is not None
    assert naive.throughput_bound >= Fraction(1, e18 + 1) >= naive.achieved_throughput > 0


def test_rows_a_few_bits_from_one_are_solved_in_their_time_unit() -> None:
    """``max TP``, ``TP = x``, ``256 x <= 1`` and ``640 x <= 2`` (busy times of
    a message 10^3 times longer than a unit's): the rows' ratios are both
    ``2^-8`` by bit lengths (``1/256``; ``2/640 = 1/320``), beyond ``2^5``
    of 1: the model is solved in that unit (it was
    solved as it was up to ``2^10``: an allreduce over eight ``multiport:2``
    nodes with costs of 1000 to 5000 took 39 s where it takes 17 s in units
    1000 times longer, and its answer was not recovered exactly).  The
    optimum, 1/320 by hand, is the same."""
    from portsim.planners.lp._driver import LpOptions, solve_exactly, time_unit
    from portsim.planners.lp._solve import LinearModel

    model = LinearModel()
    tp = model.variable("TP", upper=Fraction(1))
    x = model.variable("x", upper=Fraction(1))
    model.objective = tp
    model.add({tp: Fraction(1), x: Fraction(-1)}, "==", Fraction(0), "TP = x")
    model.add({x: Fraction(256)}, "<=", Fraction(1), "a port")
    model.add({x: Fraction(640)}, "<=", Fraction(2), "another")
    assert time_unit(model) == Fraction(1, 2**8)
    exact = solve_exactly(model, LpOptions(), what="test")
    assert isinstance(exact, ExactSolution)
    assert exact.lower == exact.upper == Fraction(1, 320)


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
@pytest.mark.parametrize("case", ["all-to-all, c from 10^-6 to 10^7", "far-apart scatter"])
def test_flows_far_from_one_are_solved_in_their_time_unit(case: str) -> None:
    """Costs spread over many orders of magnitude, most rows near 1, the
    throughput far from it: an all-to-all on 4 nodes whose N0 -> N3 (c = 8 *
    10^6) carries N0's 3 messages and N2's to N1 and N3 (N2's one link goes to
    N0), and N3's receive port takes these 5 and N1's own message to N3 over
    N1 -> N3 (c = 10^-6): TP = 1 / (4 * 10^7 + 10^-6) by hand; and
    :func:`_far_apart_scatter`, TP = 1 / (10^18 + 1).  Both were `error` rows
    (`no exactly feasible solution recovered`, and an empty schedule): the
    flows are now solved in the time unit of their cap (else of HiGHS's first
    answer) and the fallback rounds them to digits of their own size.  The
    bound holds the hand optimum, the schedule reaches it within 10^-5 and
    replays clean."""
    if case == "far-apart scatter":
        platform, op = _far_apart_scatter()
        optimum = Fraction(1, 10**18 + 1)
    else:
        platform = Platform.build(["N0", "N1", "N2", "N3"], [
            ("N0", "N3", 8 * 10**6), ("N1", "N0", 40), ("N1", "N2", Fraction(3, 10**6)),
            ("N1", "N3", Fraction(1, 10**6)), ("N2", "N0", Fraction(4, 5)),
            ("N3", "N1", 7000)])
        op = Operation(OperationKind.ALLTOALL).resolve(platform)
        optimum = 1 / (4 * 10**7 + Fraction(1, 10**6))
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound is not None
    assert result.achieved_throughput is not None
    assert result.throughput_bound >= optimum >= result.achieved_throughput
    assert result.achieved_throughput >= optimum * (1 - Fraction(1, 10**5))
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 3).violations == ()



@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
def test_an_allreduce_in_nanoseconds_is_solved_once_in_its_time_unit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Six GPUs, each pair joined both ways at 300 bytes per ns with a latency of
    1000 ns (bidirectional one-port: a switch port each), messages of 2^20
    bytes, a reduction of 1000 ns: the bound is the gossip bound by hand, 2 (N -
    1) whole messages an instance into N receive ports of one transfer of 1000
    + 2^20 / 300 ns each, N / (2 (N - 1) (1000 + 2^20 / 300)) = 45/337144 per
    ns.  Its links' rows are 2^-12 from 1, the CPUs' 2^-10: the bound's program
    was solved as it was, the exact recovery failed, then balanced, failed
    again, then in the unit of HiGHS's answer (80 s at 8 GPUs, 9 s in
    microseconds); now in its rows' time unit at once, one solve, and one for
    the schedule's master."""
    from portsim.planners.lp import _driver
    solves: list[int] = []
    real = _driver.solve_float

    def counted(model: LinearModel, **options: object) -> object:
        solves.append(model.n_variables)
        return real(model, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(_driver, "solve_float", counted)
    gpus = [f"g{i}" for i in range(6)]
    platform = Platform([Node(g, compute=1000) for g in gpus],
                        [Link.of_bandwidth(a, b, 300, latency=1000)
                         for a in gpus for b in gpus if a != b], "bidirectional")
    op = Operation(OperationKind.ALLREDUCE, size=2**20).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    n, transfer = 6, 1000 + Fraction(2**20, 300)
    assert result.throughput_bound == n / (2 * (n - 1) * transfer) == Fraction(45, 337144)
    assert len(solves) == 2, solves


@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
def test_a_period_over_the_cap_in_seconds_gives_way_to_the_shortest_whole_one() -> None:
    """Six GPUs on a switch (a router, ``multiport``), 300 * 10^9 bytes per second
    and 10^-6 s of latency each way on each GPU's link, messages of 2^20 bytes:
    every transfer takes h = 10^-6 + 2^20 / (300 * 10^9) = 42143/9375000000 s
    and the allreduce's bound is the gossip bound by hand, 2 (N - 1) whole
    messages an instance into the N GPUs' links, N / (2 (N - 1) h) =
    5625000000/42143 per second.  Its exact (lcm) period, whose busy times are
    whole seconds, holds billions of instances, and the fixed period of the cap
    carried 4457812500000/33419399 (0.3% less; in nanoseconds the fixed period
    reached the bound): the shortest period in which every tree carries whole
    instances holds the bound within the cap, as in any time unit."""
    gpus = [f"g{i}" for i in range(6)]
    platform = Platform([*(Node(g, compute=Fraction(1, 10**6)) for g in gpus),
                         Node("sw", router=True)],
                        [Link.of_bandwidth(a, b, 300 * 10**9, latency=Fraction(1, 10**6))
                         for g in gpus for a, b in ((g, "sw"), ("sw", g))], "multiport")
    op = Operation(OperationKind.ALLREDUCE, size=2**20).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    h = Fraction(1, 10**6) + Fraction(2**20, 300 * 10**9)
    bound = 6 / (2 * 5 * h)
    assert bound == Fraction(5625000000, 42143)
    assert result.throughput_bound == bound
    assert result.achieved_throughput == bound
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 3).violations == ()


def _capping_model(loose: int) -> LinearModel:
    """Maximise TP under ``TP <= x``, ``x <= loose`` and ``y <= 1``: the slow
    row (reach 1) makes :func:`capped_rows` cap ``x``'s row at ``2**10``."""
    model = LinearModel()
    tp = model.variable("TP", upper=Fraction(loose))
    x = model.variable("x", upper=Fraction(loose))
    y = model.variable("y", upper=Fraction(1))
    model.add({tp: Fraction(1), x: Fraction(-1)}, "<=", Fraction(0), "TP <= x")
    model.add({x: Fraction(1)}, "<=", Fraction(loose), "fast link")
    model.add({y: Fraction(1)}, "<=", Fraction(1), "slow link")
    model.objective = tp
    return model


def test_capped_rows_lower_only_the_loose_resources() -> None:
    from portsim.planners.lp._driver import capped_rows
    capped = capped_rows(_capping_model(10**10))
    assert capped is not None
    assert [row.rhs for row in capped.rows] == [0, 2**10, 1]
    assert capped_rows(_capping_model(2**20)) is None  # reaches within 2**20: as it is


def test_caps_that_decide_the_optimum_are_not_kept() -> None:
    """The capped program's optimum is 2**10, its dual's bound on the
    uncapped rows 10^10: the caps decided it, so the program is solved
    without them, exactly 10^10 (by hand: TP = x = 10^10)."""
    from portsim.planners.lp._driver import parse_options, solve_exactly
    found = solve_exactly(_capping_model(10**10), parse_options({}), what="test")
    assert not isinstance(found, PlanResultType)
    assert found.lower == found.upper == 10**10



def test_a_capped_interval_is_not_kept_where_the_uncapped_program_is_exact() -> None:
    """An allgather whose links' reaches span 10^-6 to 3 * 10^5 (N0 -> N3 of
    c = 3 * 10^-6, N3 -> N1 of 6 * 10^6).  N3's message leaves only over
    N3 -> N1, and N1 receives the other two over N0 -> N1 (0.01 each): its
    receive port bounds TP <= 1 / (6 * 10^6 + 0.02) = 50/300000001, which the
    schedule reaches.  The capped program gave only the interval
    [9/54001664, 1/6000000]; it is not kept, and the program without caps is
    exact."""
    platform = Platform.build(["N0", "N1", "N2", "N3"], [
        ("N0", "N1", Fraction(1, 100)), ("N0", "N3", Fraction(3, 10**6)),
        ("N1", "N2", 700), ("N2", "N0", Fraction(9, 10)), ("N3", "N1", 6 * 10**6)])
    result = steady_state(platform, Operation(OperationKind.ALLGATHER).resolve(platform))
    assert result.status == "ok", result.message
    assert result.throughput_bound == result.achieved_throughput == Fraction(50, 300000001)



def test_a_matching_far_shorter_than_the_period_is_recovered_exactly() -> None:
    """A gather to N0 over the ring N0 -> N1 (9/10), N1 -> N2 (40), N2 -> N0
    (10^-10), unidirectional nodes: N2 receives N1's message (40) and sends
    two (2 * 10^-10) on its one port, so TP = 1 / (40 + 2 * 10^-10) =
    5000000000/200000000001 by hand.  HiGHS gave the N2 -> N0 matching's
    time fraction (5 * 10^-12) as 0, and the exact recovery found nothing: an
    error row.  The exact period would hold 2 * 10^11 instances; the fixed
    period's schedule is within 10^-4 of the bound and replays clean."""
    platform = Platform.build(["N0", "N1", "N2"], [
        ("N0", "N1", Fraction(9, 10)), ("N1", "N2", 40), ("N2", "N0", Fraction(1, 10**10))],
        port_model="unidirectional")
    result = steady_state(platform, Operation(OperationKind.GATHER, target="N0").resolve(platform))
    assert result.status == "ok", result.message
    bound = Fraction(5 * 10**9, 2 * 10**11 + 1)
    assert result.throughput_bound == bound
    assert result.achieved_throughput is not None
    assert bound >= result.achieved_throughput >= bound * (1 - Fraction(1, 10**4))
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 3).violations == ()



def test_highs_infeasible_is_not_believed_where_zero_holds_every_row(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Max TP under TP <= x3, TP <= x3 + x4 + x5, 9000 x3 + 1000 x4 + 4500 x0 <= 2
    and a row of coefficients 10^-12 (the red team's fuzz, seed 540): TP = x3 =
    2/9000 = 1/4500 by hand.  Without its capped attempt, HiGHS called it
    infeasible and so did the planner, though x = 0 holds every row; a program
    that needs a positive left-hand side is still infeasible."""
    import portsim.planners.lp._driver as driver
    monkeypatch.setattr(driver, "capped_rows", lambda model: None)
    model = LinearModel()
    x = [model.variable(("x", j), upper=Fraction(10) ** 30) for j in range(6)]
    tp = model.variable("TP", upper=Fraction(10) ** 30)
    model.objective = tp
    model.add({tp: Fraction(1), x[3]: Fraction(-1)}, "<=", Fraction(0), "flow0")
    model.add({tp: Fraction(1), x[4]: Fraction(-1), x[3]: Fraction(-1), x[5]: Fraction(-1)},
              "<=", Fraction(0), "flow1")
    model.add({x[3]: Fraction(9000), x[4]: Fraction(1000), x[0]: Fraction(4500)}, "<=",
              Fraction(2), "res0")
    model.add({x[5]: Fraction(1, 15 * 10**11), x[3]: Fraction(1, 2 * 10**12),
               x[0]: Fraction(1, 25 * 10**11), x[2]: Fraction(1, 14 * 10**11),
               x[1]: Fraction(1, 10**12), x[4]: Fraction(1, 5 * 10**11)}, "<=", Fraction(2),
              "res1")
    found = driver.solve_exactly(model, parse_options({}), what="test")
    assert not isinstance(found, PlanResultType)
    assert found.lower == found.upper == Fraction(1, 4500)
    model.add({tp: Fraction(-1)}, "<=", Fraction(-1), "TP >= 1")
    refused = driver.solve_exactly(model, parse_options({}), what="test")
    assert isinstance(refused, PlanResultType)
    assert refused.status == "infeasible"


def test_an_interval_from_one_attempt_lets_the_next_attempts_try_for_the_optimum() -> None:
    """A scatter from N3 over N3 -> N1 (500), N1 -> N2 (9 * 10^6), N2 -> N0 (30)
    and two links it does not need, unidirectional nodes: N1's one port
    receives three messages (3 * 500) and sends two (2 * 9 * 10^6) an
    instance, the busiest port, so TP = 1/18001500 by hand.  The first
    attempt recovered the optimal primal with an exact dual far above it, and
    that certified interval [1/18001530, 1/10^7] ended the attempts (the red
    team's scale fuzz, seed 133, times 10^6); the next attempt is exact."""
    platform = Platform.build(["N0", "N1", "N2", "N3"], [
        ("N0", "N2", 5000), ("N0", "N3", 10**6), ("N1", "N2", 9 * 10**6), ("N2", "N0", 30),
        ("N3", "N1", 500)], port_model="unidirectional")
    result = steady_state(platform, Operation(OperationKind.SCATTER, source="N3").resolve(platform))
    assert result.status == "ok", result.message
    assert result.throughput_bound == result.achieved_throughput == Fraction(1, 18001500)
    assert result.bound_exact is True


def test_an_allreduce_relaxation_with_links_in_bytes_per_second_is_solved_capped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A DGX-1 whose NVLinks carry 25 * 10^9 bytes per second beside
    computations of 1: the relaxation's resources reach 1 at each processor
    and 2.5 * 10^10 on each link.  HiGHS's interior point made no progress on
    it (66 s of simplex after it); HiGHS now gets the program once, with the
    links' rows capped to reach at most 2**10 times the processors' rows.
    The bound is 8/7 as with links in GB/s (compute-bound: 8 processors of
    compute time 1, 7 combinations an allreduce, so TP <= 8/7)."""
    import portsim.planners.lp._driver as driver
    from portsim.planners.lp._allreduce_bound import allreduce_bound
    solves: list[Fraction] = []
    solve = driver.solve_float

    def counted(model: LinearModel, **kwargs: object) -> object:
        reach = [row.rhs / max(row.coeffs.values()) for row in model.rows
                 if row.sense == "<=" and row.rhs > 0 and min(row.coeffs.values()) > 0]
        solves.append(max(reach) / min(reach))
        return solve(model, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "solve_float", counted)
    platform = dgx1_platform(nvlink=25 * 10**9)
    op = Operation(OperationKind.ALLREDUCE).resolve(platform)
    found = allreduce_bound(platform, op, driver.parse_options({}))
    assert not isinstance(found, PlanResultType)
    assert found.upper == Fraction(8, 7)
    assert solves == [2**10]


# -- options, support ----------------------------------------------------------------------

def test_registered() -> None:
    assert get_planner("lp") is LP_PLANNER
    assert "lp" in available_planners()


@pytest.mark.parametrize(("options", "match"), [
    ({"method": "simplex"}, "method must be one of"),
    ({"time_limit": -1}, "time_limit must be a positive"),
    ({"time_limit": float("nan")}, "expected a finite number"),  # never expired before
    ({"time_limit": float("inf")}, "expected a finite number"),
    ({"time_limit": "1e300"}, "out of range"),
    ({"split": "no"}, "split must be true or false"),
    ({"period": 0}, "period must be > 0"),
    ({"max_events": 0}, "max_events must be a positive integer"),
    ({"depth": 3}, "unknown option 'depth'"),
])
def test_bad_options(options: dict, match: str) -> None:  # type: ignore[type-arg]
    p = Platform.build(["S", "A"], [("S", "A", 1)])
    with pytest.raises(PlannerError, match=match):
        LP_PLANNER.plan(p, Operation(OperationKind.SCATTER, source="S"), **options)


def test_floors_over_the_cap_are_said_to_be_over_it() -> None:
    """A reduce on a 2 x 3 torus with ``max_events: 20``: the integer program
    fills period 3 with 1 instance, and the note said "Proposition 4's
    floors give 3" as if the floors did better: their 3 instances are 34
    operations, over the cap.  The count is checked against the schedule
    of the floors themselves (``period: 3``: 3 instances, 34 events)."""
    p = torus_platform(2, 3)
    op = Operation(OperationKind.REDUCE, participants=tuple(p.processors), target="P0")
    floors = LP_PLANNER.plan(p, op, period=3)
    assert floors.schedule is not None
    assert floors.schedule.instances_per_period == 3
    operations = len(floors.schedule.events)  # one event per operation: no matchings
    assert operations > 20
    with pytest.warns(UserWarning, match="cap 20"):
        capped = LP_PLANNER.plan(p, op, max_events=20)
    assert capped.schedule is not None
    assert len(capped.schedule.events) <= 20
    (note,) = [n for n in capped.notes if "floors give" in n]
    assert note.endswith(f"Proposition 4's floors give 3 ({operations} operations, over the "
                         f"cap of 20)")


@pytest.mark.parametrize("limit", ["1e3", "10", "1/2", 10])
def test_time_limit_in_any_number_form(limit: object) -> None:
    """YAML reads ``time_limit: 1e3`` as the string '1e3': it was refused as
    not "a positive number of seconds"; every number form of the file is one."""
    options = parse_options({"time_limit": limit})
    assert options.time_limit == float(parse_rational(limit))
    p = Platform.build(["S", "A"], [("S", "A", 1)])
    result = LP_PLANNER.plan(p, Operation(OperationKind.SCATTER, source="S"), time_limit=limit)
    assert result.status == "ok", result.message
    assert result.throughput_bound == 1


@pytest.mark.parametrize(("model", "bound"), [
    ("unidirectional", Fraction(1, 2)), ("bidirectional", Fraction(1, 2)), ("multiport:2", 1),
    ("multiport", 1)])
def test_other_port_models_supported(model: str, bound: Fraction) -> None:
    """Issue 4: column generation over matchings (tests/test_lp_unidirectional.py).
    By hand: S scatters to A and B over two unit links; one port sends the two
    messages one after the other (1/2), two ports or one per link send both at
    once (1).  (A single link S -> A gives 1 under every model since issue 14:
    a link carries one transfer at a time.)"""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)], model)
    result = LP_PLANNER.plan(p, Operation(OperationKind.SCATTER, source="S"))
    assert result.status == "ok", result.message
    assert result.throughput_bound == bound


def test_time_limit_is_a_status_not_a_hang() -> None:
    p = random_platform(14, 4, c=(1, 9), seed=3)
    result = LP_PLANNER.plan(p, Operation(OperationKind.ALLTOALL), time_limit=1e-6)
    assert result.status == "error"
    assert "time limit" in result.message


# -- exact recovery ----------------------------------------------------------------------

def test_exact_solve_of_a_small_system() -> None:
    rows = [{0: F(1), 1: F(1)}, {0: F(1), 1: F(-1)}]
    assert _solve_exact(rows, [F(1), F(1, 3)], [0, 1], {}) == {0: F(2, 3), 1: F(1, 3)}


@pytest.mark.parametrize("seed", range(5))
def test_sparse_refinement_matches_flint(seed: int) -> None:
    """The numeric-symbolic solve of an integer system equals python-flint's
    exact dense solve (an independent method)."""
    import flint
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    rng = np.random.default_rng(seed)
    n = 25
    while True:
        dense = rng.integers(-9, 10, size=(n, n)) * (rng.random((n, n)) < 0.2)
        dense += np.diag(rng.integers(1, 30, size=n))
        if round(np.linalg.det(dense)) != 0:
            break
    rhs = [int(v) for v in rng.integers(-50, 50, size=n)]
    rows = [{j: int(dense[i, j]) for j in range(n) if dense[i, j]} for i in range(n)]
    mat = sp.csc_matrix(dense.astype(float))
    got = _refine(mat, spla.splu(mat), rows, rhs)
    want = flint.fmpq_mat(n, n, [int(v) for v in dense.flat]).solve(
        flint.fmpq_mat(n, 1, rhs))
    assert got == [F(int(want[i, 0].p), int(want[i, 0].q)) for i in range(n)]
    columns = [{i: int(dense[i, j]) for i in range(n) if dense[i, j]} for j in range(n)]
    got_t = _refine(mat, spla.splu(mat), columns, rhs, trans="T")
    want_t = flint.fmpq_mat(n, n, [int(v) for v in dense.T.flat]).solve(
        flint.fmpq_mat(n, 1, rhs))
    assert got_t == [F(int(want_t[i, 0].p), int(want_t[i, 0].q)) for i in range(n)]


def test_reduce_n10_exact_from_the_basis_with_its_certificate() -> None:
    """SSR(G) on the benchmark's N = n = 10 platform: the sparse basis solve
    gives the value that rounding recovered before it existed (372541/2277090,
    an independent method), and its dual certifies it by weak duality."""
    from portsim.planners.lp._ssr import build_reduce_model

    platform = random_platform(10, 3, c=(1, 10), compute=(1, 5), seed=10)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    model = build_reduce_model(platform, op)
    sol = solve_float(model, method="highs-ipm")
    assert sol.basis is not None
    exact = basis_recover(model, sol)
    assert exact is not None
    assert exact.method == "basis"
    assert exact.lower == exact.upper == F(372541, 2277090)
    assert primal_feasible(model, exact.values)
    assert all(y >= 0 for y in exact.y_ub)
    assert dual_bound(model, exact.y_ub, exact.y_eq) == F(372541, 2277090)


def test_ugly_denominators_are_recovered_or_bracketed() -> None:
    """Costs with large prime denominators defeat rounding to 10^7: the answer is
    still exact (basis solve) or a certified interval containing the optimum."""
    m = LinearModel()
    c1, c2 = F(10_000_019, 3_000_017), F(7_000_003, 1_000_033)
    x = m.variable("x", upper=1 / c1)
    y = m.variable("y", upper=1 / c2)
    tp = m.variable("TP", upper=F(10))
    m.objective = tp
    m.add({x: c1, y: c2}, "<=", F(1), "port")
    m.add({x: F(1), y: F(-1)}, "==", F(0), "balance")
    m.add({tp: F(1), x: F(-1)}, "==", F(0), "throughput")
    exact = recover(m, solve_float(m))
    assert exact is not None
    optimum = 1 / (c1 + c2)
    assert exact.lower <= optimum <= exact.upper
    assert primal_feasible(m, exact.values)
    if exact.method == "interval":
        assert exact.upper > exact.lower
    else:
        assert exact.lower == exact.upper == optimum


# -- properties on random platforms ----------------------------------------------------------

KINDS = [OperationKind.SCATTER, OperationKind.GATHER, OperationKind.ALLTOALL]


def _check_random(seed: int, n: int, degree: int, kind: OperationKind) -> None:
    platform = random_platform(n, min(degree, n - 1), c=(1, 6), compute=(0, 3), seed=seed)
    op = operation_for(kind, platform, seed)
    result = steady_state(platform, op, max_events=5_000)
    assert result.status == "ok", result.message
    bound = result.throughput_bound
    assert bound is not None
    assert result.period is not None
    ratio = _ratio(result, 100)
    assert ratio <= 1
    schedule = result.schedule
    assert schedule is not None
    if any("Proposition 4" in note for note in result.notes):
        # The period was capped: the fixed-period schedule carries n / T_fixed,
        # within the stated loss; measure against what it carries.
        carried = F(schedule.instances_per_period) / result.period
        assert carried <= bound
        report = replay(schedule, horizon=result.period * 100)
        assert report.completed >= 0.9 * float(carried * result.period * 100)
    else:
        assert ratio >= 0.9
    assert_no_planner_beats(platform, op, bound)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), kind=st.sampled_from(KINDS))
def test_random_small_platforms(seed: int, n: int, kind: OperationKind) -> None:
    _check_random(seed, n, 2, kind)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 12),
       kind=st.sampled_from([OperationKind.SCATTER, OperationKind.GATHER,
                             OperationKind.ALLTOALL, OperationKind.REDUCE,
                             OperationKind.BROADCAST, OperationKind.ALLGATHER]))
def test_random_medium_platforms(seed: int, n: int, kind: OperationKind) -> None:
    _check_random(seed, n, 3, kind)


# -- reduce (RR-4872 section 4) ------------------------------------------------------------

def test_reduce_toy_example_file() -> None:
    """Fig. 6: three reductions every three time units, TP = 1."""
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    assert "lp" in [spec.name for spec in scenario.planners]
    outcome = run_scenario(scenario)
    (lp,) = [r for r in outcome.results if r.planner == "lp"]
    assert lp.status == "ok"
    assert lp.throughput_bound == 1
    assert lp.feasible is True
    assert lp.plan is not None
    assert sum(t.weight for t in lp.plan.trees) == 1
    assert _ratio(lp.plan, 200) > 0.97


def test_reduce_paper_solution_is_feasible_in_the_model() -> None:
    """Fig. 6(b), per period T = 3, is a feasible point of our SSR(G) with TP = 1."""
    from portsim.planners.lp._ssr import build_reduce_model
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    model = build_reduce_model(scenario.platform, scenario.operation)
    values = [F(0)] * model.n_variables
    paper = {("send", "P1", "P2", 1, 1): 2, ("send", "P2", "P1", 2, 2): 1,
             ("send", "P1", "P0", 1, 2): 1, ("send", "P2", "P0", 1, 2): 2,
             ("cons", "P1", 1, 1, 2): 1, ("cons", "P2", 1, 1, 2): 2,
             ("cons", "P0", 0, 0, 2): 3, "TP": 3}
    for key, count in paper.items():
        values[model.index[key]] = F(count, 3)
    assert primal_feasible(model, values)


def _reduction_trees(platform: Platform, parts: tuple[str, ...], target: str
                     ) -> list[dict[tuple, int]]:  # type: ignore[type-arg]
    """Brute force: every reduction tree (bracketing, compute places, simple routes)."""
    g = platform.graph
    routes = {(a, b): ([[a]] if a == b else list(nx.all_simple_paths(g, a, b)))
              for a in g.nodes for b in g.nodes}

    def produce(k: int, m: int, at: str) -> list[dict[tuple, int]]:  # type: ignore[type-arg]
        out = []
        if k == m:
            places = [(parts[k], [])]
        else:
            places = []
            for y in platform.processors:
                for l_ in range(k, m):
                    for left in produce(k, l_, y):
                        for right in produce(l_ + 1, m, y):
                            tasks = dict(left)
                            for t, c in right.items():
                                tasks[t] = tasks.get(t, 0) + c
                            key = ("cons", y)
                            tasks[key] = tasks.get(key, 0) + 1
                            places.append((y, [tasks]))
        for y, variants in places:
            for route in routes[y, at]:
                hops = [("link", u, v) for u, v in itertools.pairwise(route)]
                for base in (variants or [{}]):
                    tasks = dict(base)
                    for h in hops:
                        tasks[h] = tasks.get(h, 0) + 1
                    out.append(tasks)
        return out

    return produce(0, len(parts) - 1, target)


def _tree_lp_bound(platform: Platform, parts: tuple[str, ...], target: str) -> float:
    trees = _reduction_trees(platform, parts, target)
    nodes = list(platform.graph.nodes)
    rows = 3 * len(nodes)
    a_ub = np.zeros((rows, len(trees)))
    for col, tasks in enumerate(trees):
        for t, count in tasks.items():
            if t[0] == "link":
                c = float(platform.cost(t[1], t[2]))
                a_ub[nodes.index(t[1]), col] += count * c
                a_ub[len(nodes) + nodes.index(t[2]), col] += count * c
            else:
                a_ub[2 * len(nodes) + nodes.index(t[1]), col] += (
                    count * float(platform.compute_time(t[1])))
    res = linprog(-np.ones(len(trees)), A_ub=a_ub, b_ub=np.ones(rows), bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return float(-res.fun)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 3))
def test_reduce_bound_matches_brute_force_over_trees(seed: int, n: int) -> None:
    """Lemma 2: SSR(G) equals the best weighted combination of reduction trees."""
    platform = random_platform(n, n - 1, c=(1, 4), compute=(1, 3), seed=seed)
    op = Operation(OperationKind.REDUCE, target=platform.processors[seed % n]).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok"
    brute = _tree_lp_bound(platform, op.participants, op.target)  # type: ignore[arg-type]
    assert float(result.throughput_bound) == pytest.approx(brute, rel=1e-7)


def test_commutative_reduce_is_unsupported() -> None:
    p = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    op = Operation(OperationKind.REDUCE, target="A", commutative=True)
    result = steady_state(p, op)
    assert result.status == "unsupported"
    assert "commutative" in result.message


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5))
def test_random_reduces(seed: int, n: int) -> None:
    _check_random(seed, n, 2, OperationKind.REDUCE)


def _reduce_case(seed: int) -> tuple[Platform, Operation]:
    """A small random reduce: a participant subset, a router or a free CPU now and then."""
    import random

    rng = random.Random(seed)
    n = rng.randint(3, 6)
    base = random_platform(n, rng.randint(2, n - 1), c=(1, 6), compute=(1, 4), seed=seed)
    compute = {v: base.compute_time(v) for v in base.node_ids}
    routers = set()
    if seed % 3 == 0:
        compute[base.node_ids[-1]] = F(0)   # a processor computing for free
    if seed % 4 == 1:
        routers.add(base.node_ids[-1])     # a router: forwards, never computes
    platform = Platform.build(compute, [(u, v, base.cost(u, v)) for u, v in base.graph.edges],
                              routers=routers)
    processors = list(platform.processors)
    rng.shuffle(processors)
    parts = tuple(processors[:rng.randint(2, len(processors))])
    op = Operation(OperationKind.REDUCE, participants=parts, target=rng.choice(processors),
                   size=rng.choice([F(1), F(1, 2)]))
    return platform, op.resolve(platform)


@pytest.mark.parametrize("seed", range(12))
def test_reduce_trees_equal_the_whole_ssr_program(seed: int) -> None:
    """The column generation over reduction trees reaches exactly the optimum of
    the whole SSR(G) program (an independent solve of the full model)."""
    from portsim.planners.lp._reduce_columns import reduction_trees
    from portsim.planners.lp._ssr import build_reduce_model

    platform, op = _reduce_case(seed)
    found = reduction_trees(platform, op)
    assert not isinstance(found, str), found
    exact, trees, _ = found
    model = build_reduce_model(platform, op)
    sol = solve_float(model)
    whole = recover(model, sol)
    assert whole is not None
    assert whole.exact
    assert exact.exact
    assert exact.lower == exact.upper == whole.lower
    assert sum(w for w, _ in trees) == exact.lower
    # the trees, added up, are an exactly feasible point of the whole program
    values = [F(0)] * model.n_variables
    for w, tasks in trees:
        for task in tasks:
            values[model.index[task]] += w
    values[model.objective] = exact.lower
    assert primal_feasible(model, values)


@pytest.mark.parametrize("seed", range(12))
def test_reduce_trees_priced_in_float32_equal_the_whole_ssr_program(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The float32 pricing of the large reduces (on here at every size) changes
    the trees the generation finds, never the certified optimum: still exactly
    the whole SSR(G) program's."""
    import portsim.planners.lp._reduce_columns as reduce_columns

    monkeypatch.setattr(reduce_columns, "SINGLE_PRECISION_FROM", 2)
    test_reduce_trees_equal_the_whole_ssr_program(seed)


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_reduce_tree_certificate_is_a_dual_of_the_whole_program(seed: int) -> None:
    """The exact pricing's holding prices, with the master's port and CPU duals,
    are an exactly feasible dual of the whole SSR(G) program whose value is the
    optimum (the certificate the column generation relies on)."""

    from portsim.planners.lp._reduce_columns import reduction_trees
    from portsim.planners.lp._ssr import build_reduce_model
    from portsim.planners.lp._tree_pricing import TreeSpace, price_tables

    platform, op = _reduce_case(seed)
    found = reduction_trees(platform, op)
    assert not isinstance(found, str)
    exact = found[0]
    space = TreeSpace.of(platform, op)
    link, cpu, q = space.prices(exact.y_ub, exact=True)
    best = price_tables(space, link, cpu)[2]
    cheapest = F(best[space.target, 0, len(op.participants) - 1], q)
    assert cheapest > 0
    model = build_reduce_model(platform, op)
    y_ub: list[F] = []
    y_eq: list[F] = []
    for row in model.rows:
        name = row.name
        if row.sense == "<=":
            port = re.fullmatch(r"one-port (send|receive) \(\d\) of (.+)", name)
            if port:
                r = 2 * space.index[port[2]] + (port[1] == "receive")
            else:
                r = space.cpu_rows[space.index[name.removeprefix("computation (7) of ")]]
            y_ub.append(exact.y_ub[r] / cheapest)
        else:
            k, m, node = re.fullmatch(r"conservation \(10\) of v\[(\d+),(\d+)\] at (.+)",
                                      name).groups() if name.startswith("conservation") else (
                0, len(op.participants) - 1, name.removeprefix("throughput (11) at "))
            y_eq.append(-F(best[space.index[node], int(k), int(m)], q) / cheapest)
    # dual_bound adds a penalty for every violated dual row: none here.
    assert dual_bound(model, y_ub, y_eq) == exact.lower == exact.upper


def test_reduce_time_limit_names_the_phase() -> None:
    """A small time_limit on a medium reduce: the clean error status naming the
    phase, quickly, never a hang."""
    import time

    platform = random_platform(20, 3, c=(1, 10), compute=(1, 5), seed=20)
    op = Operation(OperationKind.REDUCE, target="P0")
    started = time.perf_counter()
    result = steady_state(platform, op, time_limit=0.05)
    assert time.perf_counter() - started < 5
    assert result.status == "error"
    assert "time limit of 0.05 s reached during" in result.message
    assert "reduce (SSR)" in result.message


def test_exact_recovery_respects_the_deadline() -> None:
    """The exact recovery of a large basis stops at the deadline, naming its step;
    through the driver the planner gets the error status with that phase."""
    from portsim.planners.lp._driver import LpOptions, solve_exactly
    from portsim.planners.lp._solve import Deadline, TimeLimitReached
    from portsim.planners.lp._ssr import build_reduce_model

    platform = random_platform(10, 3, c=(1, 10), compute=(1, 5), seed=10)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    model = build_reduce_model(platform, op)
    sol = solve_float(model)
    with pytest.raises(TimeLimitReached, match="exact recovery"):
        recover(model, sol, deadline=Deadline(at=0.0))

    class AfterSolve(Deadline):
        """Expires once HiGHS is done: the next check is in the exact recovery."""

        def remaining(self) -> float | None:
            object.__setattr__(self, "at", 0.0)
            return 60.0

    result = solve_exactly(model, LpOptions(time_limit=60.0), what="reduce (SSR)",
                           deadline=AfterSolve(at=None))
    assert isinstance(result, PlanResultType)
    assert result.status == "error"
    assert "exact recovery" in result.message
    assert "time limit of 60.0 s" in result.message


# -- broadcast (Beaumont and Marchal, section 2.2.1) ------------------------------------------

def test_broadcast_example_file() -> None:
    """Fig. 2 of the broadcast report, bidirectional: TP = 1 with the tree T2 = {1->2, 2->3}."""
    scenario = load_scenario(EXAMPLES / "broadcast-bidir.yaml")
    assert "lp" in [spec.name for spec in scenario.planners]
    outcome = run_scenario(scenario)
    (lp,) = [r for r in outcome.results if r.planner == "lp"]
    assert lp.status == "ok"
    assert lp.throughput_bound == 1
    assert lp.feasible is True
    assert lp.plan is not None
    assert [(t.weight, t.edges) for t in lp.plan.trees] == [(1, (("N1", "N2"), ("N2", "N3")))]
    assert _ratio(lp.plan, 200) > 0.98


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6))
def test_broadcast_trees_meet_the_flow_bound(seed: int, n: int) -> None:
    """Edmonds' branching theorem: when every node is a destination, the
    column-generation tree packing reaches the per-destination flow optimum."""
    from portsim.planners.lp._broadcast import broadcast_flow_model
    from portsim.planners.lp._driver import parse_options, solve_exactly
    platform = random_platform(n, min(2, n - 1), c=(1, 6), seed=seed)
    op = Operation(OperationKind.BROADCAST, source=platform.processors[0]).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok"
    flow = solve_exactly(broadcast_flow_model(platform, op), parse_options({}), what="flow")
    assert not isinstance(flow, PlanResultType)
    assert flow.exact
    assert result.throughput_bound == flow.upper
    assert sum(t.weight for t in result.trees) == flow.upper


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6))
def test_random_broadcasts(seed: int, n: int) -> None:
    _check_random(seed, n, 2, OperationKind.BROADCAST)


def test_broadcast_with_a_router_states_an_interval_or_the_bound() -> None:
    """A router R must not be fed, yet spanning trees feed it: S->R->A, S->R->B is the
    only route, the flow bound counts one copy on S->R: TP = 1/2 (R's send port: 1 + 1)."""
    p = Platform.build({"S": 1, "R": 1, "A": 1, "B": 1},
                       [("S", "R", 1), ("R", "A", 1), ("R", "B", 1)], routers=["R"])
    result = steady_state(p, Operation(OperationKind.BROADCAST, source="S"))
    assert result.status == "ok"
    assert result.throughput_bound == F(1, 2)
    assert _ratio(result, 100) > 0.95


# -- asymptotic optimality (Proposition 1) -----------------------------------------------------

@pytest.mark.parametrize("example", ["scatter-toy", "reduce-toy", "broadcast-bidir"])
def test_asymptotic_ratio_approaches_one(example: str) -> None:
    from portsim.scenarios.asymptotic import asymptotic_study
    study = asymptotic_study(load_scenario(EXAMPLES / f"{example}.yaml"), periods=(10, 100, 400))
    assert study.ok, study.problems
    lp_rows = [r for r in study.rows if r.planner == "lp"]
    ratios = [r.ratio for r in lp_rows]
    assert ratios == sorted(ratios)
    assert ratios[-1] is not None
    assert ratios[-1] > F(97, 100)
    # completed(K) >= TP*K - C with the same constant C at every horizon.
    assert len({r.constant for r in lp_rows}) == 1
    for row in study.rows:
        assert row.ratio is None or row.ratio <= 1


def test_cli_run_asymptotic() -> None:
    from click.testing import CliRunner

    from portsim.scenarios.cli import main
    out = CliRunner().invoke(main, ["run", str(EXAMPLES / "scatter-toy.yaml"), "--asymptotic"])
    assert out.exit_code == 0, out.output
    assert "completed(K) / (TP*K)" in out.output
    assert "lp" in out.output


def test_tiers_like_example() -> None:
    """Our own Tiers-like platform (section 4.7 in spirit): TP = 1/40 by hand.

    Everything entering A0's LAN crosses L0's receive port: at least A1's value
    (size 10, cost 1), A2's (cost 2) and one partial result of the other LANs
    (W0 -> L0, cost 1): 10 + 20 + 10 = 40 time units per reduction.
    """
    scenario = load_scenario(EXAMPLES / "reduce-tiers.yaml")
    assert "TP = 1/40" in scenario.description
    outcome = run_scenario(scenario)
    (lp,) = [r for r in outcome.results if r.planner == "lp"]
    assert lp.status == "ok"
    assert lp.throughput_bound == F(1, 40)
    assert lp.feasible is True
    for other in outcome.results:
        if other.measured_throughput is not None:
            assert other.measured_throughput <= 1 / 40 + 1e-12


# -- allgather -------------------------------------------------------------------------------

def _arborescences(platform: Platform, root: str) -> list[list[tuple[str, str]]]:
    """Brute force: every spanning arborescence rooted at ``root`` (a parent per node)."""
    others = [v for v in platform.node_ids if v != root]
    choices = [list(platform.graph.predecessors(v)) for v in others]
    found = []
    for parents in itertools.product(*choices):
        edges = list(zip(parents, others, strict=True))
        tree = nx.DiGraph(edges)
        tree.add_node(root)
        if nx.is_arborescence(tree) and next(nx.topological_sort(tree)) == root:
            found.append(edges)
    return found


def _allgather_brute_force(platform: Platform) -> float:
    """max TP over weights of every combination of per-source arborescences."""
    nodes = list(platform.node_ids)
    columns = [(i, t) for i, s in enumerate(nodes) for t in _arborescences(platform, s)]
    n_cols = len(columns) + 1
    a_ub = np.zeros((2 * len(nodes), n_cols))
    a_eq = np.zeros((len(nodes), n_cols))
    for k, (i, tree) in enumerate(columns):
        a_eq[i, k] = 1
        for u, v in tree:
            c = float(platform.cost(u, v))
            a_ub[nodes.index(u), k] += c
            a_ub[len(nodes) + nodes.index(v), k] += c
    a_eq[:, -1] = -1
    cost = np.zeros(n_cols)
    cost[-1] = -1
    res = linprog(cost, A_ub=a_ub, b_ub=np.ones(2 * len(nodes)), A_eq=a_eq,
                  b_eq=np.zeros(len(nodes)), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(-res.fun)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4))
def test_allgather_bound_against_brute_force(seed: int, n: int) -> None:
    """The lp bound equals both the flow relaxation (valid for every schedule) and the
    best packing of per-source trees found by brute force (achieved by a schedule)."""
    from portsim.planners.lp._broadcast import multicast_flow_model
    from portsim.planners.lp._driver import parse_options, solve_exactly
    platform = random_platform(n, n - 1, c=(1, 5), seed=seed)
    op = Operation(OperationKind.ALLGATHER).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok"
    assert float(result.throughput_bound) == pytest.approx(
        _allgather_brute_force(platform), rel=1e-7)
    flow = solve_exactly(
        multicast_flow_model(platform, [(k, [p for p in op.participants if p != k])
                                        for k in op.participants], op.size),
        parse_options({}), what="flow")
    assert not isinstance(flow, PlanResultType)
    assert flow.exact
    assert result.throughput_bound == flow.upper


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5))
def test_random_allgathers(seed: int, n: int) -> None:
    _check_random(seed, n, 2, OperationKind.ALLGATHER)


def test_unsplit_period_over_the_cap_splits_with_a_warning() -> None:
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    with pytest.warns(UserWarning, match="messages are split instead"):
        result = steady_state(scenario.platform, scenario.operation, split=False,
                              max_events=40)
    assert result.status == "ok"
    assert replay(result.schedule, horizon=result.period * 20).violations == ()


@settings(max_examples=60, deadline=None)
@given(weights=st.lists(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 6)),
                                 min_size=1, max_size=4), min_size=1, max_size=3),
       cap=st.integers(4, 300))
@example(weights=[[(40, 5)]], cap=4)   # one instance alone is over the cap
@example(weights=[[(1, 1), (1, 4)]], cap=4)
def test_the_fixed_period_is_the_best_within_the_cap(weights: list, cap: int) -> None:  # type: ignore[type-arg]
    """Among every integer period whose rounded-down instances fit ``max_events``,
    none carries more instances per time unit than the one chosen (brute force over
    all periods up to the bound past which no rounding fits)."""
    import math

    from portsim.planners.lp._periodic import _best_fixed_period, _counts

    item = Item.broadcast()
    groups = [[Unit(Fraction(w, 40), tuple(SendTask("A", "B", item, d) for d in range(ops)))
               for w, ops in group] for group in weights]
    ops = [[len(u.sends) for u in group] for group in groups]
    per_time = sum(u.weight * len(u.sends) for group in groups for u in group)
    chosen = _best_fixed_period(groups, per_time, cap)

    def rate_and_events(period: int) -> tuple[Fraction, int]:
        counts, n = _counts(groups, Fraction(period))
        return Fraction(n, period), sum(c * o for row, o_row in zip(counts, ops, strict=True)
                                        for c, o in zip(row, o_row, strict=True))

    longest = math.floor((cap + sum(map(sum, ops))) / per_time)
    best = max((rate_and_events(t)[0] for t in range(1, longest + 1)
                if rate_and_events(t)[1] <= cap), default=Fraction(0))
    rate, events = rate_and_events(int(chosen))
    if rate > 0 and events > cap:  # no period holds an instance within the cap
        assert best == 0
    else:
        assert rate == best


def test_a_fixed_period_over_the_cap_says_so() -> None:
    """One instance of 5 operations against max_events 4: no period fits, the
    schedule holds the instance anyway and the notes say it is over the cap."""
    names = [f"N{i}" for i in range(6)]
    platform = Platform.build(names, [(names[i], names[i + 1], F(1, 5)) for i in range(5)])
    op = Operation(OperationKind.BROADCAST, source="N0", targets=tuple(names[1:]))
    units = [[Unit(F(1), tuple(SendTask(names[i], names[i + 1], Item.broadcast(), i)
                               for i in range(5)))]]
    with pytest.warns(UserWarning, match="over the cap of 4"):
        plan = build_periodic(platform, op.resolve(platform), units, F(1), max_events=4)
    assert any("holds 5 operations, over the cap of 4" in note for note in plan.notes)


@pytest.mark.parametrize("fabric", ["dgx_a100", "fat_tree", "fat_tree:6"])
def test_float_pricing_tables_on_switch_fabrics_match_the_exact_tables(fabric: str) -> None:
    """On a fabric most nodes are switches: the float tables keep holding prices
    on the nodes that compute and the target only.  With integer prices (exact
    in floats) they equal the exact tables, which hold every node's, there; and
    the cheapest tree and its price are the same.  On ``fat_tree_platform(6)``
    the float tables hold through the edge switches (``_Holding``'s hubs: 18
    of them for 54 hosts), the exact tables directly."""
    from portsim.planners.lp._tree_pricing import TreeSpace, cheapest_tree, price_tables
    from portsim.scenarios.generators import dgx_a100_platform, fat_tree_platform

    platform = (dgx_a100_platform(1) if fabric == "dgx_a100" else
                fat_tree_platform(6) if fabric == "fat_tree:6" else fat_tree_platform(4))
    op = Operation(OperationKind.REDUCE, target="P1").resolve(platform)
    space = TreeSpace.of(platform, op)
    rng = np.random.default_rng(3)
    links = rng.integers(1, 50, len(space.links))
    cpus = [None if w is None else int(x) for w, x in
            zip(space.compute, rng.integers(1, 50, len(space.nodes)), strict=True)]
    link_f = links.astype(float)
    cpu_f = np.array([math.inf if c is None else float(c) for c in cpus])
    link_x = np.empty(len(links), dtype=object)
    link_x[:] = [int(x) for x in links]
    cpu_x = np.empty(len(cpus), dtype=object)
    cpu_x[:] = [math.inf if c is None else c for c in cpus]
    floats = price_tables(space, link_f, cpu_f)
    exact = price_tables(space, link_x, cpu_x)
    holders = [i for i, c in enumerate(cpus) if c is not None]
    assert space.target in holders
    assert len(holders) < len(space.nodes)
    parts = len(op.participants)
    for k in range(parts):
        for m in range(k, parts):
            for j in holders:
                assert floats.best[j, k, m] == exact.best[j, k, m]
    # every node's holding price in the exact tables: finite where reachable
    assert all(exact.best[j, 0, 0] != math.inf for j in range(len(space.nodes)))
    assert cheapest_tree(space, link_f, cpu_f) == cheapest_tree(space, link_x, cpu_x)


@pytest.mark.parametrize(("k", "seed"), [(6, 0), (6, 1), (8, 2)])
def test_holding_through_the_hubs_is_holding_directly(k: int, seed: int) -> None:
    """``held[k, j] = min_i here[k, i] + dist[i, j]`` through the makers' out-links
    (the hubs) equals the direct minimum over the makers, on float prices with
    zeros and infinities (forbidden links), to the rounding of the sums."""
    from portsim.planners.lp._tree_pricing import TreeSpace, _all_pairs, _Holding
    from portsim.scenarios.generators import fat_tree_platform

    platform = fat_tree_platform(k)
    space = TreeSpace.of(platform, Operation(OperationKind.REDUCE, target="P1")
                         .resolve(platform))
    rng = np.random.default_rng(seed)
    price = rng.choice([0.0, 1.0, math.inf, *rng.random(5)], len(space.links))
    dist, _ = _all_pairs(len(space.nodes), space.links, price)
    makers = np.array([i for i, c in enumerate(space.compute) if c is not None])
    holders = np.union1d(makers, [space.target])
    inside = np.searchsorted(holders, makers)
    hold = _Holding.of(space.links, price, dist, makers, holders, inside)
    assert hold.direct is None  # through the hubs: fewer sums on a fat tree
    here = rng.choice([math.inf, *rng.random(9) * 10], (7, len(makers)))
    expected = np.array([[min(here[r, a] + dist[i, j] for a, i in enumerate(makers))
                          for j in holders] for r in range(7)])
    got = hold(here)
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    finite = ~np.isinf(expected)
    assert np.allclose(got[finite], expected[finite], rtol=1e-12, atol=0)


def test_float_pricing_program_holds_one_table() -> None:
    """The pricing program keeps one ``N x N x n`` table of holding prices (the by-start
    and by-end views, and the makers' columns on a random platform where every
    node computes), not five: it was 5 GiB at 500 nodes.  Its peak, measured,
    stays under two and a half tables (the table and one step's sums; six
    before); the least tree's price is the exact
    program's."""
    import tracemalloc

    from portsim.planners.lp._tree_pricing import TreeSpace, cheapest_trees

    n = 80
    platform = random_platform(n, 3, c=(1, 10), compute=(1, 5), seed=n)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    space = TreeSpace.of(platform, op)
    rng = np.random.default_rng(0)
    link = rng.integers(1, 20, len(space.links)).astype(float)
    cpu = rng.integers(1, 20, n).astype(float)
    tracemalloc.start()
    try:
        price = cheapest_trees(space, link, cpu, 3)[0][0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    table = n * (n + 1) * n * 8
    assert peak < 2.5 * table, (peak, table)
    # the exact program (integers; its tables equal the cell-by-cell program's,
    # test_exact_pricing_tables_equal_a_cell_by_cell_program) gives the same price
    link_x = np.empty(len(link), dtype=object)
    link_x[:] = [int(x) for x in link.tolist()]
    cpu_x = np.empty(n, dtype=object)
    cpu_x[:] = [int(x) for x in cpu.tolist()]
    assert price == cheapest_trees(space, link_x, cpu_x, 1)[0][0]


def _whole_reduce_optimum(platform: Platform, op: Operation) -> F:
    """The optimum of the whole SSR(G) program, solved independently and exactly."""
    from portsim.planners.lp._ssr import build_reduce_model

    model = build_reduce_model(platform, op)
    whole = recover(model, solve_float(model))
    assert whole is not None
    assert whole.exact
    return whole.lower


@pytest.mark.parametrize("seed", range(6))
def test_exact_pricing_tables_equal_a_cell_by_cell_program(seed: int) -> None:
    """The exact tables take each minimum over its float near-ties only; they
    must equal the program written cell by cell in Python integers (its
    definition: ``v_k`` held on ``j`` at the shortest-path price from its
    owner, ``v[k,m]`` at ``min_i cpu(i) + min_l hold(i, v[k,l]) + hold(i,
    v[l+1,m]) + dist(i, j)``), on prices near 2^300 with ties, near-ties
    (1 apart) and zeros."""
    import random

    from portsim.planners.lp._tree_pricing import TreeSpace, price_tables

    rng = random.Random(seed)
    n = rng.randint(4, 8)
    platform = random_platform(n, rng.randint(2, n - 1), c=(1, 6), compute=(1, 4), seed=seed)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    space = TreeSpace.of(platform, op)
    base = 2**300

    def draw() -> int:
        return rng.choice([0, base, base + 1, 2 * base, 3 * base - 1, rng.randrange(base)])

    links = [draw() for _ in space.links]
    cpus = [draw() for _ in space.nodes]
    link = np.empty(len(links), dtype=object)
    link[:] = links
    cpu = np.empty(n, dtype=object)
    cpu[:] = cpus
    tables = price_tables(space, link, cpu)
    # the definition, cell by cell
    dist: list[list[int | float]] = [[0 if u == v else math.inf for v in range(n)]
                                     for u in range(n)]
    for (u, v), p in zip(space.links, links, strict=True):
        dist[u][v] = min(dist[u][v], p)
    for k in range(n):
        for u in range(n):
            for v in range(n):
                dist[u][v] = min(dist[u][v], dist[u][k] + dist[k][v])
    parts = len(space.owners)
    hold: dict[tuple[int, int], list[int | float]] = {}
    for k in range(parts):
        hold[k, k] = [dist[space.owners[k]][j] for j in range(n)]
    for length in range(1, parts):
        for k in range(parts - length):
            m = k + length
            made = [cpus[i] + min(hold[k, l_][i] + hold[l_ + 1, m][i] for l_ in range(k, m))
                    for i in range(n)]
            for i in range(n):
                assert tables.comp[k, m, i] == made[i]
            hold[k, m] = [min(made[i] + dist[i][j] for i in range(n)) for j in range(n)]
    for (k, m), row in hold.items():
        assert [tables.best[j, k, m] for j in range(n)] == row


@pytest.mark.parametrize("seed", range(12))
def test_reduce_cap_bounds_the_whole_ssr_program(seed: int) -> None:
    """The single-node bound (one message out of every other participant, one into
    the target, N - 1 reductions) is never below the whole program's optimum."""
    from portsim.planners.lp._ssr import reduce_cap

    platform, op = _reduce_case(seed)
    cap = reduce_cap(platform, op)
    optimum = _whole_reduce_optimum(platform, op)
    assert cap is None or optimum <= cap


@pytest.mark.parametrize(("fabric", "cap"), [("dgx_a100", F(8, 7)), ("fat_tree", F(1))])
def test_fabric_reduce_is_proven_by_the_single_node_bound(fabric: str, cap: F) -> None:
    """On a fabric a chain of the participants reaches the single-node bound (8/7
    on one DGX A100 server: 8 GPUs share the 7 reductions of an instance; 1 on a
    k=4 fat tree: the target's one link), so the generation stops at once; the
    value is the whole program's optimum, solved independently."""
    from portsim.planners.lp._exact import SINGLE_NODE_BOUND
    from portsim.planners.lp._reduce_columns import reduction_trees
    from portsim.planners.lp._ssr import reduce_cap
    from portsim.scenarios.generators import dgx_a100_platform, fat_tree_platform

    platform = dgx_a100_platform(1) if fabric == "dgx_a100" else fat_tree_platform(4)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    assert reduce_cap(platform, op) == cap
    stats: dict[str, float] = {}
    found = reduction_trees(platform, op, stats=stats)
    assert not isinstance(found, str), found
    exact = found[0]
    assert exact.method == SINGLE_NODE_BOUND
    assert exact.lower == exact.upper == cap == _whole_reduce_optimum(platform, op)
    assert stats["rounds"] <= 2
    result = steady_state(platform, op)
    assert result.throughput_bound == cap
    assert any("certified by the single-node bound" in note for note in result.notes)


def test_chain_trees_of_a_ring() -> None:
    """The two chains on a directed ring P0 -> P1 -> P2 -> P3 -> P0, target P0,
    by hand: right to left, P_k makes v[k,3] from v[k+1,3] sent by P_{k+1}, the
    long way round (3 hops each); left to right, P_k makes v[0,k] from v[0,k-1]
    sent by P_{k-1} (1 hop each), and P3 sends the result to P0."""
    from portsim.planners.lp._tree_pricing import TreeSpace, chain_trees

    names = ["P0", "P1", "P2", "P3"]
    ring = Platform.build(names, [(names[i], names[(i + 1) % 4], 1) for i in range(4)])
    op = Operation(OperationKind.REDUCE, target="P0").resolve(ring)
    leftward, rightward = chain_trees(TreeSpace.of(ring, op))
    assert sorted(t for t in leftward if t[0] == "send") == sorted([
        ("send", "P1", "P2", 1, 3), ("send", "P2", "P3", 1, 3), ("send", "P3", "P0", 1, 3),
        ("send", "P2", "P3", 2, 3), ("send", "P3", "P0", 2, 3), ("send", "P0", "P1", 2, 3),
        ("send", "P3", "P0", 3, 3), ("send", "P0", "P1", 3, 3), ("send", "P1", "P2", 3, 3)])
    assert sorted(t for t in leftward if t[0] == "cons") == [
        ("cons", "P0", 0, 0, 3), ("cons", "P1", 1, 1, 3), ("cons", "P2", 2, 2, 3)]
    assert sorted(t for t in rightward if t[0] == "send") == [
        ("send", "P0", "P1", 0, 0), ("send", "P1", "P2", 0, 1), ("send", "P2", "P3", 0, 2),
        ("send", "P3", "P0", 0, 3)]
    assert sorted(t for t in rightward if t[0] == "cons") == [
        ("cons", "P1", 0, 0, 1), ("cons", "P2", 0, 1, 2), ("cons", "P3", 0, 2, 3)]


def test_notes_count_one_unit_and_one_instance_in_the_singular() -> None:
    """S -> A, c = 3/2: broadcast bound 2/3 (exact period 3); the fixed period 2 holds
    floor(2/3 · 2) = 1 instance of the one tree: throughput 1/2, loss 1/6 <= 1/2."""
    p = Platform.build(["S", "A"], [("S", "A", Fraction(3, 2))])
    result = steady_state(p, Operation(OperationKind.BROADCAST, source="S").resolve(p), period=2)
    assert result.throughput_bound == Fraction(2, 3)
    assert result.achieved_throughput == Fraction(1, 2)
    assert ("fixed period 2: throughput 1/2 instead of the exact period's 2/3 "
            "(loss 1/6 <= 1/2, 1 unit over the period, Proposition 4)") in result.notes
    assert ("period 2: 1 instance per period, no matchings (each link used sends on its own: "
            "no port is shared by more links than it has ports)") in result.notes


def test_a_fixed_period_far_below_the_bound_names_the_max_events_that_would_do() -> None:
    """A fixed period forced by ``max_events`` that carries under 0.9 of the exact
    throughput: the notes name a max_events whose fixed period carries 0.9 at least,
    and running with it does (strict replay, feasible)."""
    import warnings

    p = random_platform(5, 2, c=(1, 10), seed=11)
    op = Operation(OperationKind.SCATTER, source="P0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tight = steady_state(p, op, max_events=10)
        assert tight.throughput_bound == F(4, 39)
        # One instance in the period 12 (the integer rounding; the greedy's
        # 20 instances in 241 carried less, 20/241 < 1/12).
        assert tight.achieved_throughput == F(1, 12)
        hint = [n for n in tight.notes if n.startswith("with max_events:")]
        assert hint == ["with max_events: 39 (an lp option), a fixed period would carry at "
                        "least 5/52 (period 52), 0.938 of the exact period's"]
        again = steady_state(p, op, max_events=39)
    assert again.achieved_throughput >= F(5, 52)
    assert not [n for n in again.notes if n.startswith("with max_events:")]
    assert again.schedule is not None
    assert again.period is not None
    assert replay(again.schedule, horizon=again.period * 20, mode="strict").feasible


def test_the_max_events_hint_is_the_first_period_whose_floors_carry_nine_tenths() -> None:
    """_period_for_share against a brute force over every integer period: Proposition
    4's floors, every group trimmed to the least, the operations they hold."""
    from portsim.planners.lp._periodic import _period_for_share
    from portsim.simulator.items import Item

    def unit(weight: F, sends: int) -> Unit:
        return Unit(weight, tuple(SendTask("A", "B", Item.message("B"), 0)
                                  for _ in range(sends)))

    groups = [[unit(F(2, 7), 3), unit(F(1, 5), 2)], [unit(F(3, 11), 1), unit(F(6, 29), 4)]]
    throughput = min(sum((u.weight for u in g), F(0)) for g in groups)
    for cap in (1, 5, 20):  # 16 × 1 is under the 24 operations of period 11: None
        want = None
        for period in range(1, 10_000):
            per_group = [[(u.weight * period).__floor__() for u in g] for g in groups]
            n = min(sum(row) for row in per_group)
            if F(n, period) >= F(9, 10) * throughput:
                events = 0
                for g, row in zip(groups, per_group, strict=True):
                    extra = sum(row) - n  # trimmed from the last unit first
                    for i in range(len(row) - 1, -1, -1):
                        cut = min(extra, row[i])
                        row[i] -= cut
                        extra -= cut
                    events += sum(c * len(u.sends) for c, u in zip(row, g, strict=True))
                want = (period, events, F(n, period))
                break
        got = _period_for_share(groups, throughput, cap)
        assert got == (want if want is not None and want[1] <= 16 * cap else None), cap


def test_a_fixed_period_rounds_units_up_where_the_ports_allow() -> None:
    """Proposition 4 floors every unit's weight × period alone: on this broadcast (bound 1,
    period 2) the floors carry 1 instance of 2.  Raising units while every port, link and
    CPU stays within the period carries 2, the bound, and the strict replay agrees."""
    import warnings

    p = random_platform(5, 2, c=(1, 4), seed=7, port_model="multiport:2")
    op = Operation(OperationKind.BROADCAST, source="P0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = steady_state(p, op, period=2)
    assert r.throughput_bound == 1
    assert r.achieved_throughput == 1
    assert "fixed period 2: 2 instances, where Proposition 4's floors give 1: units rounded " \
           "up while every port, link and CPU stays within the period" in r.notes
    assert r.schedule is not None
    report = replay(r.schedule, horizon=200, mode="strict")
    assert report.feasible
    assert report.completed >= F(9, 10) * 200


@pytest.mark.parametrize("seed", range(12))
def test_rounded_up_fixed_periods_replay_feasibly(seed: int) -> None:
    """Whatever the rounding adds, the period still holds it: strict replays of fixed
    periods 2, 3 and 5 on random platforms (one-port and multiport:2) are feasible, and
    never above the bound."""
    import warnings

    model = "multiport:2" if seed % 2 else "bidirectional"
    p = random_platform(5, 2, c=(1, 4), seed=seed, port_model=model)
    replayed = 0
    for kind, extra in ((OperationKind.BROADCAST, {"source": "P0"}),
                        (OperationKind.SCATTER, {"source": "P0"}),
                        (OperationKind.ALLGATHER, {})):
        for period in (2, 3, 5):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = steady_state(p, Operation(kind, **extra), period=period)
            if r.schedule is None:
                continue
            assert r.achieved_throughput is not None
            assert r.achieved_throughput <= r.throughput_bound
            assert r.period is not None
            report = replay(r.schedule, horizon=r.period * 10, mode="strict")
            assert report.feasible, (kind, period, report.violations[:1])
            replayed += 1
    assert replayed == 9  # every planner call gave a schedule


def test_a_denser_fixed_period_reaches_the_bound_where_the_floors_lose_a_ninth() -> None:
    """scatter, max_events 25: by the floors the best integer period is 18, carrying 2 of
    the 9/4 instances the bound 1/8 allows (1/9; the max_events hint test above
    checked that value against the 'period' option when fixed periods were floors
    only).  A period of 16 rounded up carries 2 (18 operations): the bound itself."""
    import warnings

    p = random_platform(5, 2, c=(1, 10), seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = steady_state(p, Operation(OperationKind.SCATTER, source="P0"), max_events=25)
    assert (r.throughput_bound, r.achieved_throughput, r.period) == (F(1, 8), F(1, 8), 16)
    assert r.schedule is not None
    assert len(r.schedule.events) <= 25
    assert replay(r.schedule, horizon=16 * 50, mode="strict").feasible


@pytest.mark.slow
def test_a_fabric_allgather_at_max_events_runs_a_fractional_denser_period() -> None:
    """4 DGX A100 servers, allgather (bound 25/3): at the default max_events the exact
    period (1404, 11,700 instances) is far over the cap.  The integer program that
    chooses the paths' and trees' counts fits 15 instances in the fixed period 9/5
    (Proposition 4's floors give 13): 25/3, the bound itself, and the strict replay
    of 100 periods is feasible.  (Before that program this test found 12 instances
    in 89/60, 720/89; the slow suite still expected them.)"""
    import warnings

    from portsim.scenarios.generators import dgx_a100_platform

    p = dgx_a100_platform(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = steady_state(p, Operation(OperationKind.ALLGATHER))
    assert r.throughput_bound == F(25, 3)
    assert (r.period, r.achieved_throughput) == (F(9, 5), F(25, 3))
    assert r.schedule is not None
    assert len(r.schedule.events) <= 20_000
    report = replay(r.schedule, horizon=r.period * 100, mode="strict")
    assert report.feasible
    assert report.completed >= F(9, 10) * r.throughput_bound * r.period * 100


_NOTHING_MOVES = [
    (OperationKind.SCATTER, {"source": "A", "targets": ("A",)}),
    (OperationKind.GATHER, {"target": "A", "participants": ("A",)}),
    (OperationKind.BROADCAST, {"source": "A", "targets": ("A",)}),
    (OperationKind.ALLGATHER, {"participants": ("A",)}),
    (OperationKind.ALLTOALL, {"sources": ("A",), "targets": ("A",)}),
    (OperationKind.REDUCE, {"target": "A", "participants": ("A",)}),
    (OperationKind.ALLREDUCE, {"participants": ("A",)}),  # lp-naive plans no allreduce
]


@pytest.mark.parametrize(("planner", "kind", "fields"), [
    (planner, kind, fields) for planner in ("lp", "lp-naive") for kind, fields in _NOTHING_MOVES
    if (planner, kind) != ("lp-naive", OperationKind.ALLREDUCE)])
def test_an_operation_that_moves_nothing_is_unsupported(planner: str, kind: OperationKind,
                                                        fields: dict[str, object]) -> None:
    """One participant, or a source that is its only destination: no transfer, so
    the steady-state throughput is unbounded; an ``unsupported`` row naming the
    operation with its article (``an allgather``), never an ``error`` (exit 3) nor
    a schedule."""
    platform = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])
    operation = Operation(kind, **fields)  # type: ignore[arg-type]
    result = get_planner(planner).plan(platform, operation)
    assert result.status == "unsupported"
    article = "an" if str(kind)[0] in "aeiou" else "a"
    assert result.message.startswith(f"{article} {kind} that moves nothing")
    assert result.schedule is None


@pytest.mark.parametrize("example", ["scatter-toy", "reduce-toy", "broadcast-unidir",
                                     "allreduce-toy", "gather-complete"])
def test_time_scale_is_the_common_denominator_of_every_time(example: str) -> None:
    """The scale an exact replay needs: every start, every event's duration and
    the period over one denominator (each duration is now taken once per
    distinct link and part, not once per event)."""
    from portsim.planners.lp._driver import _time_scale
    from portsim.simulator.numbers import common_denominator
    from portsim.simulator.schedule import Send

    scenario = load_scenario(Path(__file__).resolve().parent.parent / "scenarios" / "examples"
                             / f"{example}.yaml")
    result = steady_state(scenario.platform, scenario.operation)
    assert result.schedule is not None
    assert result.schedule.period is not None
    s, p = result.schedule, scenario.platform
    times = [e.start for e in s.events] + [result.schedule.period]
    times += [s.operation.size * p.cost(e.src, e.dst) * e.part if isinstance(e, Send)
              else p.compute_time(e.node) for e in s.events]
    assert _time_scale(s) == common_denominator(times)


@pytest.mark.filterwarnings("ignore:the exact period")  # a capped period: in the notes
@pytest.mark.parametrize("call", [2, 4])
def test_a_reduce_generation_cut_by_its_budget_gives_a_schedule_and_the_interval(
        monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """The reduce's float rounds stop at their budget (here at the ``call``-th pricing,
    without a clock): the exact master over the trees found gives the schedule, the
    exact pricing of the best dual probed a certified upper end, and the notes say
    where it stopped (before, the row was an ``error`` naming the phase).  The
    interval holds the whole SSR(G) program's optimum, solved independently, and the
    schedule replays within it."""
    import portsim.planners.lp._reduce_columns as reduce_columns

    platform = random_platform(12, 3, c=(1, 10), compute=(1, 5), seed=12)
    op = Operation(OperationKind.REDUCE, target="P0").resolve(platform)
    optimum = _whole_reduce_optimum(platform, op)
    budget_passing_at(monkeypatch, reduce_columns, "cheapest_trees", call)
    result = steady_state(platform, op, time_limit=600)
    assert result.status == "ok", result.message
    assert any(note.startswith("the tree generation stopped after 85% of the time left "
                               "under the time limit of 600")
               for note in result.notes)
    lower = F(result.message.split("[")[1].split(",")[0].split(" ")[0])
    assert result.throughput_bound is not None
    assert result.achieved_throughput is not None
    assert 0 < lower < optimum <= result.throughput_bound
    assert result.achieved_throughput <= lower
    assert result.schedule is not None
    assert result.period is not None
    report = replay(result.schedule, horizon=result.period * 10)
    assert report.violations == ()


@pytest.mark.parametrize(("example", "bound"), [
    ("scatter-toy.yaml", Fraction(1, 2)),       # scatter/reduce report, Fig. 2
    ("reduce-toy.yaml", Fraction(1)),           # Fig. 6
    ("broadcast-bidir.yaml", Fraction(1)),      # broadcast report, Fig. 2
    ("broadcast-unidir.yaml", Fraction(2, 3)),  # the same, unidirectional
])
def test_lp_bound_alone_builds_no_periodic_schedule(
        example: str, bound: Fraction, monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate`` compares with the lp bound only: ``lp_throughput_bound`` (which
    ``scenarios.bounds.lp_bound`` asks) gives the papers' figure without building
    the periodic schedule, which took a second of the 13 of a 64-rank allgather's
    bound (and, so the last notes said, most of it before)."""
    from portsim.planners.lp import _driver, lp_throughput_bound
    from portsim.scenarios.bounds import lp_bound

    scenario = load_scenario(EXAMPLES / example)
    full = steady_state(scenario.platform, scenario.operation)

    def no_schedule(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bound alone builds no periodic schedule")

    monkeypatch.setattr(_driver, "build_periodic", no_schedule)
    alone = lp_throughput_bound(scenario.platform, scenario.operation)
    assert (alone.status, alone.schedule, alone.period) == ("ok", None, None)
    assert alone.throughput_bound == full.throughput_bound == bound
    assert lp_bound(scenario.platform, scenario.operation).bound == bound


def test_the_lp_bound_on_links_with_latency_needs_no_whole_message_schedule() -> None:
    """Three nodes, S-A at 12.5 with latency 1.3·10^-6, S-B at 10 with 1/10, A-B
    at 25 with 1/100 (both ways): the allreduce's messages of size 1 take
    0.0800013, 0.2 and 0.05, and each instance needs 2 reductions of 1 on 3
    processors: the bound 3/2 by hand, which the lp computes.  Its periodic
    schedule would need a period 1,600,026 times longer to keep messages whole,
    so ``run`` says ``unsupported``; ``validate``'s comparison
    (``lp_throughput_bound``) said "no lp bound available" though the bound
    holds for every schedule, whole or split."""
    from portsim.planners.lp import lp_throughput_bound
    from portsim.scenarios.bounds import lp_bound

    links = [Link.of_bandwidth(a, b, bw, latency=lat) for u, v, bw, lat in
             [("S", "A", "12.5", "1.3e-6"), ("S", "B", "10", "0.1"), ("A", "B", "25", "0.01")]
             for a, b in ((u, v), (v, u))]
    platform = Platform([Node(v) for v in "SAB"], links, "bidirectional")
    operation = Operation(OperationKind.ALLREDUCE)
    full = steady_state(platform, operation)
    assert full.status == "unsupported"
    assert "the throughput bound is 3/2" in full.message
    alone = lp_throughput_bound(platform, operation)
    assert (alone.status, alone.schedule, alone.period) == ("ok", None, None)
    assert alone.throughput_bound == Fraction(3, 2)
    assert any("no periodic schedule: keeping messages whole needs" in n for n in alone.notes)
    assert lp_bound(platform, operation).bound == Fraction(3, 2)


def test_an_lp_row_without_whole_message_schedule_keeps_its_bound() -> None:
    """The allreduce of the three nodes above: ``run`` gave an ``unsupported``
    row whose ``throughput_bound`` was null (``-`` in the table) while its
    message gave the bound.  The row now carries it: 3/2, by hand above; no
    schedule, no achieved figure."""
    links = [Link.of_bandwidth(a, b, bw, latency=lat) for u, v, bw, lat in
             [("S", "A", "12.5", "1.3e-6"), ("S", "B", "10", "0.1"), ("A", "B", "25", "0.01")]
             for a, b in ((u, v), (v, u))]
    platform = Platform([Node(v) for v in "SAB"], links, "bidirectional")
    full = steady_state(platform, Operation(OperationKind.ALLREDUCE))
    assert full.status == "unsupported"
    assert full.throughput_bound == Fraction(3, 2)
    assert (full.schedule, full.achieved_throughput, full.bound_reached) == (None, None, None)
    assert full.to_dict()["throughput_bound"] == "3/2"


def test_without_a_whole_message_schedule_the_convergence_says_no_schedule() -> None:
    """The allreduce of the three nodes above, in ``run --asymptotic`` and the run
    report's convergence chart: the lp row now has its bound (3/2) and no schedule,
    and both said ``no lp bound: ... the throughput bound is 3/2 ...``.  They say the
    schedule is missing, not the bound; the study's bound is 3/2 (its title said
    ``TP = -``)."""
    from portsim.reports.html import convergence_study
    from portsim.scenarios.asymptotic import asymptotic_study
    from portsim.scenarios.loader import scenario_from_dict

    link = {"both_ways": True}
    scenario = scenario_from_dict({
        "name": "latency", "operation": {"type": "allreduce"}, "planners": ["lp"],
        "platform": {"nodes": [{"id": v} for v in "SAB"], "links": [
            {"src": "S", "dst": "A", "bandwidth": "12.5", "latency": "1.3e-6", **link},
            {"src": "S", "dst": "B", "bandwidth": 10, "latency": "0.1", **link},
            {"src": "A", "dst": "B", "bandwidth": 25, "latency": "0.01", **link}]}})
    for study in (asymptotic_study(scenario), convergence_study(scenario)[0]):
        assert (study.bound, study.period) == (Fraction(3, 2), None)
        assert study.rows == ()
        (problem,) = study.problems
        assert problem.startswith("no lp schedule (the lp bound is 3/2): links with latency")
