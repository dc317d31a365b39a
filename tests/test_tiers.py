"""The Tiers-like WAN/MAN/LAN generator."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import pytest

from planners.registry import get_planner
from scenarios.tiers import tiers_platform
from simulator.engine import replay
from simulator.errors import PlatformError
from simulator.operations import Operation, OperationKind


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

    import scenarios.tiers

    result = doctest.testmod(scenarios.tiers)
    assert result.attempted > 0
    assert result.failed == 0
