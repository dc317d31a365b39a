"""The Tiers-like WAN/MAN/LAN generator."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import pytest

from portsim.planners.registry import get_planner
from portsim.scenarios.tiers import tiers_platform
from portsim.simulator.engine import replay
from portsim.simulator.errors import PlatformError
from portsim.simulator.operations import Operation, OperationKind


def test_shape_costs_and_routers() -> None:
    p = tiers_platform(3, 2, 2, 4, wan_redundancy=0, seed=7)
    hosts = [n for n in p.nodes if not n.router]
    routers = [n for n in p.nodes if n.router]
    assert len(hosts) == 3 * 2 * 2 * 4
    assert len(routers) == 3 + 3 * 2 + 3 * 2 * 2
    assert [n.id for n in hosts] == [f"P{i}" for i in range(48)]
    # ring of 3 WAN links + 6 WAN-MAN + 12 MAN-LAN + 48 LAN-host, each both ways
    assert len(p.links) == 2 * (3 + 6 + 12 + 48)
    assert all(n.compute == 0 for n in routers)
    assert all(1 <= n.compute <= 5 for n in hosts)
    assert 5 <= p.cost("W0", "W1") <= 10
    assert 2 <= p.cost("W0", "M0") <= 5
    assert 2 <= p.cost("M0", "L0") <= 5
    assert Fraction(1, 2) <= p.cost("L0", "P0") <= 2
    assert p.cost("P0", "L0") == p.cost("L0", "P0")
    assert nx.is_strongly_connected(p.graph)
    # P0..P3 sit on LAN L0; P4 is on L1
    assert set(p.graph.successors("P0")) == {"L0"}
    assert set(p.graph.successors("P4")) == {"L1"}


def test_redundancy_and_seed() -> None:
    plain = tiers_platform(5, 1, 1, 1, wan_redundancy=0, seed=1)
    extra = tiers_platform(5, 1, 1, 1, wan_redundancy=2, seed=1)
    assert len(extra.links) - len(plain.links) == 2 * 2
    assert tiers_platform(seed=3) == tiers_platform(seed=3)
    assert tiers_platform(seed=3) != tiers_platform(seed=4)


def test_a_reduction_over_the_hierarchy_replays_clean() -> None:
    platform = tiers_platform(2, 1, 2, 2, seed=0)
    hosts = tuple(n.id for n in platform.nodes if not n.router)
    operation = Operation(OperationKind.REDUCE, participants=hosts,
                          target=hosts[0]).resolve(platform)
    result = get_planner("flat").plan(platform, operation)
    assert result.is_ok
    assert result.schedule is not None
    report = replay(result.schedule)
    assert report.feasible
    assert report.complete


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"wan": 0}, "wan"), ({"hosts": 0}, "hosts"), ({"c_lan": (2, 1)}, "c_lan"),
    ({"c_wan": (0, 1)}, "c_wan"), ({"wan_redundancy": -1}, "wan_redundancy"),
])
def test_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(PlatformError, match=match):
        tiers_platform(**kwargs)  # type: ignore[arg-type]


def test_docstring_example_runs() -> None:
    import doctest

    import portsim.scenarios.tiers
    result = doctest.testmod(portsim.scenarios.tiers)
    assert result.attempted > 0
    assert result.failed == 0


# -- the scenario file: platform.generator.type tiers ------------------------------------


def test_the_scenario_generator_is_the_python_function() -> None:
    from portsim.scenarios.loader import scenario_from_dict

    document = {
        "name": "t", "seed": 5,
        "platform": {"port_model": "unidirectional", "generator": {
            "type": "tiers", "wan": 4, "man": 2, "lan": 1, "hosts": 3, "c_wan": [4, 8],
            "c_lan": "1/2", "compute": [0, 3], "wan_redundancy": 2}},
        "operation": {"type": "broadcast", "source": "P0"},
    }
    platform = scenario_from_dict(document).platform
    assert platform == tiers_platform(4, 2, 1, 3, c_wan=(4, 8), c_lan=Fraction(1, 2),
                                      compute=(0, 3), wan_redundancy=2, seed=5,
                                      port_model="unidirectional")
    assert {platform.cost("L0", f"P{i}") for i in range(3)} == {Fraction(1, 2)}
    # Defaults: those of tiers_platform; the scenario's seed (0 when absent).
    default = scenario_from_dict({"name": "t", "platform": {"generator": {"type": "tiers"}},
                                  "operation": {"type": "broadcast", "source": "P0"}})
    assert default.platform == tiers_platform(seed=0)
    assert len(default.operation.targets) == 3 * 2 * 2 * 4 - 1  # hosts only, not routers


def test_the_generated_tiers_example_and_its_figure() -> None:
    from pathlib import Path

    from portsim.scenarios.loader import load_scenario
    from portsim.scenarios.runner import run_scenario

    path = Path(__file__).resolve().parent.parent / "scenarios/examples/broadcast-tiers.yaml"
    scenario = load_scenario(path)
    p = scenario.platform
    assert [p.cost(f"W{i}", f"W{(i + 1) % 3}") for i in range(3)] == [2, 2, 2]
    assert p.cost("W1", "M1") == p.cost("M1", "L1") == 1
    assert p.cost("L2", "P5") == Fraction(1, 2)
    assert sum(not n.router for n in p.nodes) == 6
    lp = next(r for r in run_scenario(scenario).results if r.planner == "lp")
    assert lp.plan is not None
    # W1 receives each message over a WAN link of cost 2 (hand bound, reached).
    assert lp.plan.throughput_bound == Fraction(1, 2)
    assert "TP = 1/2" in scenario.description


@pytest.mark.parametrize(("generator", "match"), [
    ({"hosts": 0}, r"platform\.generator\.hosts: input should be greater than or equal to 1"),
    ({"c_lan": [2, 1]}, r"platform\.generator\.c_lan: a range \[lo, hi\] needs lo <= hi"),
    ({"c_wan": -3}, r"platform\.generator\.c_wan: must be > 0"),
    ({"wan": 100, "man": 10, "lan": 10, "hosts": 10}, r"platform\.generator\.hosts: .*cap"),
    ({"routers": 3}, r"platform\.generator\.routers: unknown key"),
])
def test_bad_scenario_parameters(generator: dict[str, object], match: str) -> None:
    from portsim.scenarios.loader import scenario_from_dict
    from portsim.simulator.errors import ScenarioError

    with pytest.raises(ScenarioError, match=match):
        scenario_from_dict({"name": "t", "platform": {"generator": {"type": "tiers", **generator}},
                            "operation": {"type": "broadcast", "source": "P0"}}, source="t.yaml")


def test_tiers_in_a_study_grid() -> None:
    from portsim.scenarios.study.execute import execute_run
    from portsim.scenarios.study.spec import study_from_dict

    study = study_from_dict({
        "name": "tiers", "replicates": 2,
        "base": {"platform": {"generator": {"type": "tiers", "wan": 2, "man": 1, "lan": 1}},
                 "operation": {"type": "broadcast", "source": "P0"}, "planners": ["flat"]},
        "grid": {"platform.generator.hosts": [1, 2]}})
    assert [(r.grid["platform.generator.hosts"], r.seed) for r in study.runs] == [
        (1, 0), (1, 1), (2, 0), (2, 1)]
    rows = [execute_run(run, "tiers")[0] for run in study.runs]
    assert [row["status"] for row in rows] == ["ok"] * 4
    assert all(row["feasible"] for row in rows)
