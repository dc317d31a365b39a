"""Tests of the platform generators."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import networkx as nx
import pytest

from scenarios import (
    complete_platform,
    draw_rational,
    random_platform,
    random_state,
    sender_times_platform,
)
from simulator.errors import PlatformError
from simulator.platform import Platform, PortKind


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
