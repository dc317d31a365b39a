"""The ``lp-naive`` planner: the port-sum program of the broadcast report, section 2.2.2.

Figures from Beaumont and Marchal, LIP RR-2004-32, section 2.2.2 (the
platform of Fig. 2: links 1->2 and 1->3 of cost 1, 2->3 of cost 1/2, source
1, unidirectional): the naive program claims 3/4 with the trees 1/4 on
{1->2, 1->3} and 1/2 on {1->2, 2->3}; replaying them achieves only 3/5; the
true optimum (the ``lp`` planner) is 2/3.

Why 3/5, by hand: per 3/4 of a message, the trees keep link 1->2 busy 3/4,
link 1->3 busy 1/4 and link 2->3 busy 1/2 * 1/2 = 1/4.  Any two of those
three links share a node (1, 2 or 3), and every node has ONE port, so no two
of the transfers can ever overlap: they take 3/4 + 1/4 + 1/4 = 5/4 time
units, and the trees carry at most (3/4) / (5/4) = 3/5 message per time
unit.  The ASAP replay keeps some port busy at every instant once the
pipeline is full, so it reaches 3/5 up to the start-up: over a horizon of
4000 the measured throughput lies in [0.59, 0.61].
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from portsim.planners.base import PlanResult
from portsim.planners.lp import LP_NAIVE_PLANNER, naive_steady_state, steady_state
from portsim.planners.registry import available_planners, get_planner
from portsim.scenarios.asymptotic import asymptotic_study
from portsim.scenarios.cli import main
from portsim.scenarios.generators import random_platform
from portsim.scenarios.loader import PlannerSpec, load_scenario
from portsim.scenarios.runner import run_scenario
from portsim.simulator import Operation, OperationKind, Platform, Schedule, replay
from portsim.simulator.errors import PlannerError
from portsim.simulator.platform import Link, Node

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
F = Fraction
FIG2 = [("P1", "P2", 1), ("P1", "P3", 1), ("P2", "P3", "1/2")]
BROADCAST = Operation(OperationKind.BROADCAST, source="P1")


def fig2(model: str = "unidirectional") -> Platform:
    return Platform.build(["P1", "P2", "P3"], FIG2, model)


# -- the published figures -----------------------------------------------------------------


def test_naive_bound_and_trees_of_fig2() -> None:
    result = naive_steady_state(fig2(), BROADCAST)
    assert result.status == "ok"
    assert result.planner == "lp-naive"
    assert result.replay == "asap"
    assert result.throughput_bound == F(3, 4)
    assert sorted((t.weight, t.edges) for t in result.trees) == [
        (F(1, 4), (("P1", "P2"), ("P1", "P3"))),
        (F(1, 2), (("P1", "P2"), ("P2", "P3"))),
    ]
    # Clearly labelled as the naive bound, not an achievable throughput.
    assert "naive port-sum bound 3/4" in result.message
    assert "NOT achievable" in result.message
    assert result.notes[0].startswith("naive port-sum bound 3/4")
    assert not any(n.startswith("optimal throughput") for n in result.notes)


def test_naive_timing_conflicts_under_the_unidirectional_model() -> None:
    result = naive_steady_state(fig2(), BROADCAST)
    assert result.schedule is not None
    assert result.period is not None
    strict = replay(result.schedule, horizon=result.period * 10)
    assert strict.violations
    assert {v.kind for v in strict.violations} == {"port_conflict"}
    # ... but the same timing is fine where each node has two ports.
    bidirectional = replay(result.schedule, horizon=result.period * 10,
                           port_model="bidirectional")
    assert bidirectional.violations == ()


def test_example_file_figures() -> None:
    scenario = load_scenario(EXAMPLES / "broadcast-unidir.yaml")
    assert [spec.name for spec in scenario.planners] == ["lp", "lp-naive"]
    outcome = run_scenario(scenario, horizon=F(4000))
    lp, naive = outcome.results
    assert (lp.planner, lp.throughput_bound, lp.replay) == ("lp", F(2, 3), "strict")
    assert (naive.planner, naive.throughput_bound, naive.replay) == ("lp-naive", F(3, 4), "asap")
    assert naive.feasible is True
    assert naive.violations == ()
    assert naive.measured_throughput is not None
    assert lp.measured_throughput is not None
    # 3/5 (module notes), measured over a long horizon.
    assert 0.59 <= naive.measured_throughput <= 0.61
    assert naive.measured_throughput < float(F(3, 5)) + 1e-12
    # The true optimum is achieved, the naive trees fall short of it.
    assert lp.measured_throughput > 0.66
    assert naive.measured_throughput < lp.measured_throughput
    assert any("strict replay of the planned times finds" in n for n in naive.notes)
    record = naive.to_dict()
    assert record["replay"] == "asap"
    assert record["throughput_bound"] == "3/4"


def test_bidirectional_naive_equals_lp_and_is_exact() -> None:
    platform = fig2("bidirectional")
    naive = naive_steady_state(platform, BROADCAST)
    assert naive.throughput_bound == 1 == steady_state(platform, BROADCAST).throughput_bound
    assert "exact lp optimum" in naive.message
    assert naive.schedule is not None
    assert naive.period is not None
    assert replay(naive.schedule, horizon=naive.period * 20).violations == ()


@pytest.mark.parametrize("kind", [OperationKind.BROADCAST, OperationKind.ALLGATHER,
                                  OperationKind.SCATTER, OperationKind.GATHER,
                                  OperationKind.ALLTOALL])
@pytest.mark.parametrize("seed", [3, 11, 20])
def test_naive_is_a_relaxation(kind: OperationKind, seed: int) -> None:
    """Naive >= lp under the unidirectional model (port sums hold in any schedule);
    equal under the bidirectional one (the same program)."""
    for model in ("unidirectional", "bidirectional"):
        platform = random_platform(4, 2, c=(1, 4), compute=(0, 2), seed=seed, port_model=model)
        root = platform.processors[seed % 4]
        op = (Operation(kind, source=root) if kind in (OperationKind.BROADCAST,
                                                       OperationKind.SCATTER)
              else Operation(kind, target=root) if kind is OperationKind.GATHER
              else Operation(kind))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a capped period is a warning, not the point
            naive = naive_steady_state(platform, op)
            exact = steady_state(platform, op)
        assert naive.status == exact.status == "ok", (naive.message, exact.message)
        assert naive.throughput_bound is not None
        assert exact.throughput_bound is not None
        if model == "bidirectional":
            assert naive.throughput_bound == exact.throughput_bound
        else:
            assert naive.throughput_bound >= exact.throughput_bound


def test_asymptotic_study_replays_naive_asap() -> None:
    study = asymptotic_study(load_scenario(EXAMPLES / "broadcast-unidir.yaml"),
                             periods=(10, 100))
    assert study.bound == F(2, 3)
    assert study.problems == ()
    naive = [r for r in study.rows if r.planner == "lp-naive"]
    assert naive
    assert all(r.ratio is not None and r.ratio < 1 for r in naive)


# -- options, support, registry ------------------------------------------------------------


def test_registered_with_its_operations_and_port_models() -> None:
    planner = get_planner("lp-naive")
    assert planner is LP_NAIVE_PLANNER
    assert "lp-naive" in available_planners()
    assert {str(k) for k in planner.operations} == {"broadcast", "allgather", "scatter",
                                                     "gather", "alltoall", "reduce"}
    assert {str(m) for m in planner.port_models} == {"bidirectional", "unidirectional"}


def test_bad_options() -> None:
    with pytest.raises(PlannerError, match="unknown option 'restrict' for planner 'lp-naive'"):
        LP_NAIVE_PLANNER.plan(fig2(), BROADCAST, restrict="tree")
    # named as lp-naive's option (was planners.lp.method), and raised on an
    # operation lp-naive does not handle too (was an unsupported result)
    with pytest.raises(PlannerError, match=r"planners\.lp-naive\.method: method must be one of"):
        LP_NAIVE_PLANNER.plan(fig2(), BROADCAST, method="simplex")
    with pytest.raises(PlannerError, match=r"planners\.lp-naive\.split: split must be"):
        LP_NAIVE_PLANNER.plan(fig2(), Operation(OperationKind.ALLREDUCE), split="maybe")
    with pytest.raises(PlannerError, match="max_events must be a positive integer"):
        naive_steady_state(fig2(), BROADCAST, max_events=0)


def test_unsupported_answers_say_why() -> None:
    allreduce = Operation(OperationKind.ALLREDUCE)
    result = LP_NAIVE_PLANNER.plan(fig2(), allreduce)
    assert result.status == "unsupported"
    assert "lp-naive does not handle allreduce" in result.message
    multiport = fig2().with_port_model("multiport:2")
    result = LP_NAIVE_PLANNER.plan(multiport, BROADCAST)
    assert result.status == "unsupported"
    assert "multiport:2" in result.message


def test_plan_result_replay_field() -> None:
    with pytest.raises(PlannerError, match="replay must be strict or asap"):
        PlanResult("ok", None, replay="later")  # type: ignore[arg-type]
    assert "replay" not in PlanResult.ok("lp", None).to_dict()
    assert PlanResult.ok("lp-naive", None, replay="asap").to_dict()["replay"] == "asap"


# -- the command line ---------------------------------------------------------------------------


def test_cli_run_example(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "broadcast-unidir.yaml"),
                                       "--json", str(out), "--horizon", "1000"])
    assert result.exit_code == 0, result.stdout
    records = {r["planner"]: r for r in json.loads(out.read_text())["results"]}
    assert records["lp"]["throughput_bound"] == "2/3"
    naive = records["lp-naive"]
    assert (naive["status"], naive["throughput_bound"], naive["replay"]) == ("ok", "3/4", "asap")
    assert naive["feasible"] is True
    assert naive["violations"] == []
    assert 0.58 <= naive["measured_throughput"] <= 0.61
    assert "naive port-sum bound 3/4" in result.stdout


def test_runner_replays_a_one_shot_asap_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot plan with replay="asap": conflicting planned times are only counted."""
    import portsim.scenarios.runner as runner
    from portsim.planners.base import FunctionPlanner
    from portsim.scenarios.loader import PlannerSpec
    from portsim.simulator import Schedule
    from portsim.simulator.platform import PortKind

    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1)], "unidirectional")
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    # B forwards at 1/2 what it receives until 1, on its single port: strictly wrong.
    schedule = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": "1/2"}])

    def order_only(platform: Platform, operation: Operation) -> PlanResult:
        return PlanResult.ok("order-only", schedule, replay="asap")

    fake = FunctionPlanner("order-only", order_only, frozenset({OperationKind.BROADCAST}),
                           frozenset(PortKind), "claims an order only")
    monkeypatch.setattr(runner, "get_planner", lambda name: fake)
    scenario = load_scenario(EXAMPLES / "broadcast-unidir.yaml")
    scenario = type(scenario)(**{**scenario.__dict__, "platform": p, "operation": op})
    run = runner.run_planner(scenario, PlannerSpec("order-only"), horizon=F(30))
    assert run.replay == "asap"
    assert run.feasible is True
    assert run.violations == ()
    # ASAP: A->B [0, 1), then B->C [1, 2); the series: one operation per 2 time units.
    assert run.makespan == 2
    assert run.completed == 15
    strict = replay(schedule)
    assert strict.violations
    assert any(f"finds {len(strict.violations)} violation(s)" in n for n in run.notes)


@pytest.mark.parametrize("seed", [1, 7, 12, 30])
def test_naive_trees_never_beat_the_true_optimum(seed: int) -> None:
    """Replayed ASAP under the unidirectional model, the naive trees complete at most
    lp's optimum times the horizon (the lp bound holds for any feasible execution)."""
    platform = random_platform(5, 2, c=(1, 4), compute=(0, 2), seed=seed,
                               port_model="unidirectional")
    op = Operation(OperationKind.BROADCAST, source=platform.processors[0])
    naive = naive_steady_state(platform, op)
    exact = steady_state(platform, op)
    assert naive.schedule is not None
    assert naive.period is not None
    assert exact.throughput_bound is not None
    assert naive.throughput_bound is not None
    assert exact.throughput_bound <= naive.throughput_bound
    horizon = naive.period * 60
    report = replay(naive.schedule, mode="asap", horizon=horizon)
    assert report.violations == ()
    assert 0 < report.completed <= exact.throughput_bound * horizon


def test_cli_planners_lists_lp_naive() -> None:
    result = CliRunner().invoke(main, ["planners"])
    assert result.exit_code == 0
    assert "lp-naive" in result.stdout


# -- reduce ----------------------------------------------------------------------------------

TRIANGLE = [("P1", "P0", 1), ("P2", "P0", 1), ("P2", "P1", "1/2")]
"""Reduce to P0 of v0, v1, v2 (non-commutative), every node unidirectional, compute 1.

By hand.  Two useful reduction trees: A sends v2 over P2->P1 (busy 1/2),
P1 computes v[1,2] and sends it over P1->P0 (busy 1), P0 computes v[0,2];
B sends v1 over P1->P0 and v2 over P2->P0 (busy 1 each), P0 computes twice.
Weights a, b.  Naive port sums: P0 receives a + 2b <= 1 (its CPU: a + 2b <= 1
too); P1 sends and receives a + a/2 + b <= 1; P2 sends a/2 + b <= 1.  The
vertex a + 2b = 1, 3a/2 + b = 1 gives a = 1/2, b = 1/4: naive bound 3/4.
Real model: any two of the three links share a node, so no two transfers
overlap and a/2 + (a + b) + b = 3a/2 + 2b <= 1: the optimum is a = 2/3,
b = 0, TP = 2/3 < 3/4.
"""


def test_naive_reduce_bound_on_the_triangle() -> None:
    platform = Platform.build(["P0", "P1", "P2"], TRIANGLE, "unidirectional")
    op = Operation(OperationKind.REDUCE, target="P0")
    naive = naive_steady_state(platform, op)
    exact = steady_state(platform, op)
    assert naive.status == "ok", naive.message
    assert naive.planner == "lp-naive"
    assert naive.replay == "asap"
    assert naive.throughput_bound == F(3, 4)
    assert exact.throughput_bound == F(2, 3)
    bidirectional = naive_steady_state(platform.with_port_model("bidirectional"), op)
    assert bidirectional.throughput_bound == steady_state(
        platform.with_port_model("bidirectional"), op).throughput_bound
    assert naive.schedule is not None
    assert naive.period is not None
    horizon = naive.period * 60
    report = replay(naive.schedule, mode="asap", horizon=horizon)
    assert report.violations == ()
    assert 0 < report.completed <= exact.throughput_bound * horizon


@pytest.mark.parametrize("seed", [1, 7, 12])
def test_naive_reduce_never_beats_the_true_optimum(seed: int) -> None:
    platform = random_platform(4, 2, c=(1, 4), compute=(0, 2), seed=seed,
                               port_model="unidirectional")
    op = Operation(OperationKind.REDUCE, target=platform.processors[0])
    naive = naive_steady_state(platform, op)
    exact = steady_state(platform, op)
    assert naive.throughput_bound is not None
    assert exact.throughput_bound is not None
    assert exact.throughput_bound <= naive.throughput_bound
    assert naive.schedule is not None
    assert naive.period is not None
    horizon = naive.period * 40
    report = replay(naive.schedule, mode="asap", horizon=horizon)
    assert report.violations == ()
    assert 0 < report.completed <= exact.throughput_bound * horizon


def test_fig2_with_latency_keeps_the_paper_figures() -> None:
    """Fig. 2 in bandwidth and latency for messages of size 2: 1->2 and 1->3 of
    latency 1/2 and bandwidth 4, 2->3 of latency 1/4 and bandwidth 8, so whole
    messages take 1, 1 and 1/2, the paper's costs.  The naive bound is the paper's
    3/4 and lp's 2/3 (lp-naive priced a link at size x its unit cost, latency + 1 /
    bandwidth, paying the latency twice: 1/2); bidirectional, both are 1."""
    links = [Link.of_bandwidth("P1", "P2", 4, latency=F(1, 2)),
             Link.of_bandwidth("P1", "P3", 4, latency=F(1, 2)),
             Link.of_bandwidth("P2", "P3", 8, latency=F(1, 4))]
    nodes = [Node(v) for v in ("P1", "P2", "P3")]
    op = Operation(OperationKind.BROADCAST, source="P1", size=2)
    for model, naive, exact in (("unidirectional", F(3, 4), F(2, 3)),
                                ("bidirectional", F(1), F(1))):
        platform = Platform(nodes, links, model)
        result = naive_steady_state(platform, op)
        assert result.status == "ok", result.message
        assert result.throughput_bound == naive
        assert steady_state(platform, op).throughput_bound == exact
        # every transfer of its schedule carries a whole message
        assert result.schedule is not None
        assert all(e.part == 1 for e in result.schedule.events if hasattr(e, "part"))


# -- links with latency (red team) ------------------------------------------------------------


@pytest.mark.parametrize(("size", "bound"), [(2, F(2, 5)), (F(1, 2), F(1))])
def test_latency_link_costs_its_duration_as_in_lp(size: Fraction, bound: Fraction) -> None:
    """One link S -> A of bandwidth 1 and latency 1/2: a message of size ``s``
    lasts ``1/2 + s`` (Link.duration), so one scatter per ``1/2 + s``: 2/5 for
    s = 2, 1 for s = 1/2, as ``lp`` says.  ``lp-naive`` took ``c·s`` with
    ``c = 3/2`` (1/3 and 4/3) and said of it "the exact lp optimum"."""
    platform = Platform((Node("S"), Node("A")), (Link.of_bandwidth("S", "A", 1, "1/2"),))
    op = Operation(OperationKind.SCATTER, source="S", size=size)
    assert steady_state(platform, op).throughput_bound == bound
    naive = naive_steady_state(platform, op)
    assert naive.throughput_bound == bound
    assert naive.schedule is not None
    assert all(e.part == 1 for e in naive.schedule.events)  # whole messages, as lp
    measured = replay(naive.schedule, mode="asap", horizon=naive.schedule.period * 20)
    assert measured.completed == bound * naive.schedule.period * 20


def _spy_strict_horizons(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Fraction], Any]:
    """The horizons of the strict replays the runner makes from now on (a list it
    fills), and the real ``replay`` for the test's own whole-horizon replay.

    Every strict replay of a horizon goes through the engine's ``_play``, the
    closed form's short replays too (``replay_periodic``, in the engine), so the
    spy sits there; the test's own replay is not recorded."""
    import portsim.simulator.engine as engine
    horizons: list[Fraction] = []
    plain = engine._play
    recording = [True]

    def spy(schedule, mode, exact, h, *args, **kw):  # type: ignore[no-untyped-def]
        if recording[0] and mode == "strict" and kw.get("explicit_horizon"):
            horizons.append(Fraction(h))
        return plain(schedule, mode, exact, h, *args, **kw)

    def real(schedule, **kw):  # type: ignore[no-untyped-def]
        recording[0] = False
        try:
            return engine.replay(schedule, **kw)
        finally:
            recording[0] = True

    monkeypatch.setattr(engine, "_play", spy)
    return horizons, real


def test_strict_check_of_planned_times_is_not_replayed_over_the_whole_horizon(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``lp-naive``'s planned times repeat every period, so their strict check
    stops at the steady state (``replay_periodic``): every strict replay the
    run makes is shorter than the horizon (at 100 nodes the whole horizon took
    half the run), and the run says what a strict replay of the whole horizon
    says (its verdict and the throughput it proves, the bound 1 on the
    bidirectional Fig. 2)."""
    from portsim.scenarios import runner
    horizons, real = _spy_strict_horizons(monkeypatch)
    scenario = load_scenario(EXAMPLES / "broadcast-bidir.yaml")
    horizon = F(100_000)
    run = runner.run_planner(scenario, PlannerSpec("lp-naive"), horizon=horizon)
    assert run.plan is not None
    assert run.plan.schedule is not None
    whole = real(run.plan.schedule, horizon=horizon)
    assert whole.violations == ()
    assert whole.throughput == 1
    assert horizons
    assert max(horizons) < horizon / 100
    assert run.feasible
    assert run.achieved_throughput in (None, whole.throughput)
    assert any(n.endswith("a strict replay of the planned times finds 0 violation(s)")
               for n in run.notes)


@pytest.mark.parametrize("seed", [0, 4])
def test_asap_count_of_a_prefix_equals_the_full_replay(monkeypatch: pytest.MonkeyPatch,
                                                       seed: int) -> None:
    """``run`` replays lp-naive's periodic schedule as soon as possible over
    (largest lag + 100) periods: every period was replayed (12.6 s and 750 MiB
    of a run of 18 s on 100 random nodes).  Once the replay of a prefix repeats
    (every play ``delta`` after its play ``c`` periods before), the count is
    extrapolated: on seed 0 from 722 plays of the 6455, and the same count as
    the full replay (here the independent count) for every horizon; on seed 4
    the prefixes do not repeat, and the full replay is the answer."""
    import portsim.simulator.engine as engine
    from portsim.simulator.engine import replay_asap_periodic

    p = random_platform(8, 2, c=(1, 9), compute=(1, 4), seed=seed)
    op = Operation(OperationKind.BROADCAST, source="P0").resolve(p)
    schedule = get_planner("lp-naive").plan(p, op).schedule
    assert schedule is not None
    assert schedule.period is not None
    max_lag = max(e.lag for e in schedule.events)
    plays: list[int] = []
    original = engine._Asap.go

    def counted(self: engine._Asap) -> None:
        plays.append(len(self.events))
        original(self)

    for extra in (Fraction(100), Fraction(250, 3), Fraction(4001, 7)):
        horizon = schedule.period * (max_lag + extra)
        full = replay(schedule, mode="asap", horizon=horizon)
        monkeypatch.setattr(engine._Asap, "go", counted)
        plays.clear()
        got = replay_asap_periodic(schedule, horizon)
        monkeypatch.undo()
        assert (got.completed, got.measured_throughput, got.violations, got.horizon) == (
            full.completed, full.measured_throughput, full.violations, full.horizon)
        if seed == 0:
            assert len(plays) == 1
            assert 5 * plays[0] < len(schedule.events) * (max_lag + extra)


@pytest.mark.parametrize("example", ["broadcast-unidir.yaml", "random"])
def test_strict_check_with_violations_is_not_replayed_over_the_whole_horizon(
        monkeypatch: pytest.MonkeyPatch, example: str) -> None:
    """On a unidirectional platform ``lp-naive``'s planned times have port
    conflicts, and their strict check was then replayed over every period of
    the horizon for the count in its note (24 random nodes: 2.1 million
    plays, 45 s and 2 GiB of a 50 s run).  Each conflict is folded with its
    repeats by its events, so the steady state's replay counts them all: the
    note gives the count of the whole horizon's strict replay (made here),
    from replays shorter than the horizon."""
    from portsim.scenarios import runner
    horizons, real = _spy_strict_horizons(monkeypatch)
    if example == "random":
        scenario = load_scenario(EXAMPLES / "broadcast-unidir.yaml")
        platform = random_platform(7, 3, c=(1, 9), compute=(1, 4), seed=5,
                                   port_model="unidirectional")
        scenario = dataclasses.replace(
            scenario, platform=platform,
            operation=Operation(OperationKind.BROADCAST, source="P0").resolve(platform))
    else:
        scenario = load_scenario(EXAMPLES / example)
    run = runner.run_planner(scenario, PlannerSpec("lp-naive"))
    assert run.plan is not None
    schedule = run.plan.schedule
    assert schedule is not None
    assert schedule.period is not None
    assert run.horizon is not None
    whole = real(schedule, horizon=run.horizon)
    assert whole.violations  # port conflicts of P2 (Fig. 2) or of random nodes
    assert horizons
    assert max(horizons) < run.horizon
    assert any(n.endswith(f"a strict replay of the planned times finds "
                          f"{len(whole.violations)} violation(s)") for n in run.notes)


def test_asap_count_of_a_periodic_schedule_without_events() -> None:
    """A periodic schedule of no event (``lp``'s or ``lp-naive``'s when HiGHS's
    answer rounds to no instance) made the prefix count index its first play:
    ``IndexError`` and a traceback from ``portsim run``.  Nothing completes:
    the count is the full replay's, 0 of the 1000 expected instances."""
    from portsim.simulator.engine import replay_asap_periodic

    p = Platform.build(["S", "A"], [("S", "A", 1)])
    op = Operation(OperationKind.SCATTER, source="S").resolve(p)
    empty = Schedule(p, op, (), period=Fraction(1), instances_per_period=1)
    got = replay_asap_periodic(empty, Fraction(1000))
    full = replay(empty, mode="asap", horizon=Fraction(1000))
    assert (got.completed, got.incomplete, got.violations) == (0, 1000, ())
    assert (got.completed, got.incomplete) == (full.completed, full.incomplete)


def test_bound_exact_tells_the_naive_bound_from_the_optimum() -> None:
    """Fig. 2 (RR-2004-32): the port-sum bound 3/4 is above the true optimum
    2/3, so lp-naive's bound is not proven optimal (``bound_exact`` false) where
    lp's 2/3 is; on bidirectional nodes the naive program is lp's own, exact."""
    naive = naive_steady_state(fig2(), BROADCAST)
    exact = steady_state(fig2(), BROADCAST)
    assert (naive.throughput_bound, naive.bound_exact) == (F(3, 4), False)
    assert (exact.throughput_bound, exact.bound_exact) == (F(2, 3), True)
    bidirectional = fig2("bidirectional")
    both = naive_steady_state(bidirectional, BROADCAST)
    assert both.bound_exact is True
    assert both.throughput_bound == steady_state(bidirectional, BROADCAST).throughput_bound
