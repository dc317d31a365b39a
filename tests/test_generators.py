"""Tests of the platform generators."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import networkx as nx
import pytest

from portsim.scenarios import (
    complete_platform,
    draw_rational,
    random_platform,
    random_state,
    sender_times_platform,
)
from portsim.simulator.errors import PlatformError
from portsim.simulator.platform import Platform, PortKind


def digraph(platform: Platform) -> nx.DiGraph:
    """The platform's links as a fresh DiGraph, independent of ``Platform.graph``."""
    g = nx.DiGraph()
    g.add_nodes_from(platform.node_ids)
    g.add_edges_from((x.src, x.dst) for x in platform.links)
    return g


# -- seeds ----------------------------------------------------------------------------


def test_random_state_normalises_seeds() -> None:
    rng = random.Random(4)
    assert random_state(rng) is rng
    assert random_state(11).random() == random.Random(11).random()
    assert isinstance(random_state(None), random.Random)
    with pytest.raises(PlatformError, match="seed"):
        random_state("11")  # type: ignore[arg-type]
    with pytest.raises(PlatformError, match="seed"):
        random_state(True)  # type: ignore[arg-type]
    # random.Random seeds with abs(seed), so -1 would silently be the run of seed 1.
    assert random.Random(-1).random() == random.Random(1).random()
    with pytest.raises(PlatformError, match="non-negative"):
        random_state(-1)


def test_draw_rational_stays_on_its_grid() -> None:
    rng = random_state(0)
    draws = {draw_rational(rng, Fraction(1, 2), Fraction(3, 2)) for _ in range(300)}
    assert draws == {Fraction(1, 2), Fraction(1), Fraction(3, 2)}
    integers = {draw_rational(rng, Fraction(2), Fraction(5)) for _ in range(300)}
    assert integers == {2, 3, 4, 5}
    assert draw_rational(rng, Fraction(2, 3), Fraction(2, 3)) == Fraction(2, 3)


# -- complete ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_complete_platform_links_every_ordered_pair(n: int) -> None:
    platform = complete_platform(n, c="2/3", compute=3)
    assert platform.node_ids == tuple(f"P{i}" for i in range(n))
    assert len(platform.links) == n * (n - 1)
    assert {(x.src, x.dst) for x in platform.links} == {
        (f"P{i}", f"P{j}") for i in range(n) for j in range(n) if i != j
    }
    assert {x.c for x in platform.links} <= {Fraction(2, 3)}
    assert all(node.compute == 3 for node in platform.nodes)


def test_complete_platform_port_model() -> None:
    assert complete_platform(3, port_model="unidirectional").port_model.kind is (
        PortKind.UNIDIRECTIONAL)


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"n": 0}, "n"),
    ({"n": 2.5}, "n"),
    ({"n": 3, "c": 0}, "c"),
    ({"n": 3, "compute": -1}, "compute"),
])
def test_complete_platform_rejects_bad_parameters(kwargs: dict, path: str) -> None:
    with pytest.raises(PlatformError) as info:
        complete_platform(**kwargs)
    assert info.value.path == path


# -- sender times -------------------------------------------------------------------------


def test_sender_times_platform_costs_are_the_senders_times() -> None:
    times = {"A": 10, "B": 5, "C": "3/2"}
    platform = sender_times_platform(times)
    assert platform.node_ids == ("A", "B", "C")
    expected = {
        ("A", "B"): 10, ("A", "C"): 10,
        ("B", "A"): 5, ("B", "C"): 5,
        ("C", "A"): Fraction(3, 2), ("C", "B"): Fraction(3, 2),
    }
    assert {(x.src, x.dst): x.c for x in platform.links} == expected
    assert all(node.compute == 0 for node in platform.nodes)


@pytest.mark.parametrize(("times", "path"), [
    ({}, "times"),
    ({"A": 1, "B": 0}, "times.B"),
    ({"A": "x"}, "times.A"),
])
def test_sender_times_platform_rejects_bad_times(times: dict, path: str) -> None:
    with pytest.raises(PlatformError) as info:
        sender_times_platform(times)
    assert info.value.path == path


# -- random ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "degree"), [(2, 1), (3, 1), (5, 2), (10, 3), (20, 3), (12, 11)])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_platform_is_strongly_connected_with_the_given_degree(
    n: int, degree: int, seed: int
) -> None:
    platform = random_platform(n, degree, c=(1, 10), compute=(1, 5), seed=seed)
    g = digraph(platform)
    assert platform.node_ids == tuple(f"P{i}" for i in range(n))
    assert nx.is_strongly_connected(g)
    assert all(g.out_degree(v) == degree for v in g)
    assert nx.number_of_selfloops(g) == 0


def test_random_platform_costs_respect_their_ranges() -> None:
    platform = random_platform(15, 4, c=(2, 9), compute=(0, 3), seed=5)
    costs = [x.c for x in platform.links]
    computes = [node.compute for node in platform.nodes]
    assert all(isinstance(c, Fraction) and c.denominator == 1 and 2 <= c <= 9 for c in costs)
    assert all(c.denominator == 1 and 0 <= c <= 3 for c in computes)
    # 60 draws from 8 values: more than one value shows up
    assert len(set(costs)) > 1


def test_random_platform_rational_ranges_are_exact() -> None:
    lo, hi = Fraction(1, 3), Fraction(5, 2)
    platform = random_platform(10, 3, c=("1/3", "5/2"), compute=0.5, seed=9)
    q = math.lcm(lo.denominator, hi.denominator)
    for link in platform.links:
        assert lo <= link.c <= hi
        assert q % link.c.denominator == 0
    assert {node.compute for node in platform.nodes} == {Fraction(1, 2)}


def test_random_platform_is_reproducible_for_a_seed() -> None:
    first = random_platform(12, 3, c=(1, 100), compute=(1, 100), seed=42)
    again = random_platform(12, 3, c=(1, 100), compute=(1, 100), seed=42)
    other = random_platform(12, 3, c=(1, 100), compute=(1, 100), seed=43)
    assert first == again
    assert first != other
    assert {(x.src, x.dst) for x in first.links} != {(x.src, x.dst) for x in other.links}


def test_random_platform_accepts_a_generator_and_leaves_global_state_alone() -> None:
    random.seed(123)
    expected = random.random()
    random.seed(123)
    from_int = random_platform(6, 2, c=(1, 9), seed=8)
    from_rng = random_platform(6, 2, c=(1, 9), seed=random.Random(8))
    assert random.random() == expected
    assert from_int == from_rng


@pytest.mark.parametrize(("kwargs", "path"), [
    ({"n": 1, "degree": 1}, "n"),
    ({"n": 4, "degree": 0}, "degree"),
    ({"n": 4, "degree": 4}, "degree"),
    ({"n": 4, "degree": 2, "c": (3, 2)}, "c"),
    ({"n": 4, "degree": 2, "c": (0, 2)}, "c[0]"),
    ({"n": 4, "degree": 2, "compute": (1, 2, 3)}, "compute"),
])
def test_random_platform_rejects_bad_parameters(kwargs: dict, path: str) -> None:
    with pytest.raises(PlatformError) as info:
        random_platform(**kwargs)
    assert info.value.path == path


# -- three_class (Liu–Kuo–Wang, section 6.2) -----------------------------------------------


def sender_time(platform: Platform, node: str) -> Fraction:
    """t(node): the cost of its out-links (checked equal on two of them)."""
    others = [v for v in platform.node_ids if v != node]
    assert platform.cost(node, others[0]) == platform.cost(node, others[-1])
    return platform.cost(node, others[0])


def test_three_class_counts_give_exact_class_sizes() -> None:
    from portsim.scenarios.generators import three_class_platform

    platform = three_class_platform(12, (1, "3/2", 4), counts=(5, 4, 3), seed=2)
    assert platform.node_ids == tuple(f"P{i}" for i in range(12))
    times = [sender_time(platform, v) for v in platform.node_ids]
    assert sorted(times) == [1] * 5 + [Fraction(3, 2)] * 4 + [4] * 3
    assert all(platform.compute_time(v) == 0 for v in platform.node_ids)
    assert len(platform.links) == 12 * 11  # complete
    # counts shuffle the classes: other seeds, other orders, same multiset
    orders = {tuple(sender_time(three_class_platform(12, (1, "3/2", 4), counts=(5, 4, 3),
                                                     seed=s), v) for v in platform.node_ids)
              for s in range(5)}
    assert len(orders) > 1


def test_three_class_is_seeded_and_deterministic() -> None:
    from portsim.scenarios.generators import three_class_platform

    assert three_class_platform(20, seed=7) == three_class_platform(20, seed=7)
    assert three_class_platform(20, seed=7) != three_class_platform(20, seed=8)


def test_three_class_default_draws_uniform_classes_and_times_in_1_to_10() -> None:
    from portsim.scenarios.generators import three_class_platform

    n = 300
    platform = three_class_platform(n, seed=3)
    times = [sender_time(platform, v) for v in platform.node_ids]
    classes = sorted(set(times))
    assert len(classes) == 3
    assert all(t.denominator == 1 and 1 <= t <= 10 for t in classes)
    # Each class has probability 1/3: a count off by more than 5 standard deviations
    # (sqrt(300 * 1/3 * 2/3) ~ 8.2) would be a bug, not bad luck (p < 1e-6).
    for t in classes:
        assert abs(times.count(t) - n / 3) < 5 * math.sqrt(n * (1 / 3) * (2 / 3))
    # Over seeds, the class times vary and cover 1..10.
    drawn = {sender_time(three_class_platform(3, seed=s, counts=(1, 1, 1)), f"P{i}")
             for s in range(40) for i in range(3)}
    assert drawn == {Fraction(k) for k in range(1, 11)}


def test_three_class_probabilities() -> None:
    from portsim.scenarios.generators import three_class_platform

    n = 300
    platform = three_class_platform(n, (1, 2, 3), probabilities=("1/2", "3/10", "1/5"), seed=1)
    times = [sender_time(platform, v) for v in platform.node_ids]
    for t, p in ((1, 0.5), (2, 0.3), (3, 0.2)):
        assert abs(times.count(Fraction(t)) - n * p) < 5 * math.sqrt(n * p * (1 - p))
    only_slow = three_class_platform(10, (1, 2, 3), probabilities=(0, 0, 1), seed=1)
    assert {sender_time(only_slow, v) for v in only_slow.node_ids} == {3}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n": 1}, r"^n: must be >= 2"),
    ({"n": 4, "times": (1, 2)}, r"^times: expected a list of three values"),
    ({"n": 4, "times": (1, 0, 2)}, r"^times\[1\]: must be > 0"),
    ({"n": 4, "counts": (1, 1, 1)}, r"^counts: the counts must sum to n = 4"),
    ({"n": 4, "counts": (5, -1, 0)}, r"^counts\[1\]: must be >= 0"),
    ({"n": 4, "probabilities": (1, 1, -1)}, r"^probabilities\[2\]: must be >= 0"),
    ({"n": 4, "probabilities": ("1/2", "1/2", "1/2")}, r"^probabilities: .*sum to 1"),
    ({"n": 4, "probabilities": (1, 0, 0), "counts": (4, 0, 0)}, r"^counts: give either"),
    ({"n": 2000}, r"^n: would generate"),
])
def test_three_class_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    from portsim.scenarios.generators import three_class_platform

    with pytest.raises(PlatformError, match=match):
        three_class_platform(**kwargs)  # type: ignore[arg-type]


def test_three_class_in_a_scenario_and_a_study() -> None:
    from portsim.scenarios.generators import three_class_platform
    from portsim.scenarios.loader import scenario_from_dict
    from portsim.scenarios.study.execute import execute_run
    from portsim.scenarios.study.spec import study_from_dict

    generator = {"type": "three_class", "n": 8, "times": [1, 2, "5/2"],
                 "probabilities": ["1/4", "1/4", "1/2"]}
    scenario = scenario_from_dict({
        "name": "t", "seed": 4, "platform": {"generator": generator},
        "operation": {"type": "reduce", "target": "P0", "commutative": True}})
    assert scenario.platform == three_class_platform(
        8, (1, 2, Fraction(5, 2)), probabilities=(Fraction(1, 4), Fraction(1, 4),
                                                  Fraction(1, 2)), seed=4)
    study = study_from_dict({
        "name": "s", "replicates": 2,
        "base": {"platform": {"generator": {"type": "three_class", "n": 4}},
                 "operation": {"type": "reduce", "target": "P0", "commutative": True},
                 "planners": ["snf", "optimal"]},
        "grid": {"platform.generator.n": [4, 6]}})
    rows = [row for run in study.runs for row in execute_run(run, "s")]
    assert len(rows) == 2 * 2 * 2
    assert {row["status"] for row in rows} == {"ok"}
    for snf, optimal in zip(rows[::2], rows[1::2], strict=True):
        ratio = Fraction(snf["makespan"]) / Fraction(optimal["makespan"])
        assert 1 <= ratio <= 2  # Theorem 2: SNF is a 2-approximation


@pytest.mark.parametrize(("generator", "match"), [
    ({"n": 6, "times": [1, 2]}, r"platform\.generator\.times: expected a list of three"),
    ({"n": 6, "times": [1, 0, 4]}, r"platform\.generator\.times: item 1 must be > 0"),
    ({"n": 6, "probabilities": ["1/2", "1/2", "1/2"]}, r"probabilities: .*sum to 1"),
    ({"n": 6, "counts": [3, 2, 2]}, r"platform\.generator\.counts: the counts must sum"),
    ({"n": 6, "counts": [3, 2]}, r"platform\.generator\.counts: list should have at least 3"),
    ({"times": [1, 2, 3]}, r"platform\.generator\.n: missing required key"),
    ({"n": 6, "classes": 3}, r"platform\.generator\.classes: unknown key"),
    ({"n": "6"}, r"platform\.generator\.n: input should be a valid integer"),
])
def test_three_class_schema_errors(generator: dict[str, object], match: str) -> None:
    from portsim.scenarios.loader import scenario_from_dict
    from portsim.simulator.errors import ScenarioError

    with pytest.raises(ScenarioError, match=match):
        scenario_from_dict({"name": "t",
                            "platform": {"generator": {"type": "three_class", **generator}},
                            "operation": {"type": "reduce", "target": "P0"}}, source="t.yaml")
