"""Minimum spanning arborescences (``planners/lp/_arborescence.py``).

From ``VECTORISED_FROM`` float edges each contraction level runs on numpy
arrays; it must choose exactly the arcs the plain loops choose (the column
generations, and the bundled examples' schedules, depend on the tie
breaking), and both must cost what networkx's Edmonds finds.
"""

from __future__ import annotations

import math
import random

import networkx as nx
import pytest

import portsim.planners.lp._arborescence as arborescence_module
from portsim.planners.lp._arborescence import _vectorised, min_arborescence


def _instance(seed: int) -> tuple[int, int, list[tuple[int, int, float]]]:
    """A random digraph, dense or sparse, with many ties (small integer weights as
    floats) or none (random floats), and some parallel arcs and self-loops."""
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    density = rng.choice([0.1, 0.3, 1.0])
    ties = rng.random() < 0.6
    edges = []
    for u in range(n):
        for v in range(n):
            if (u != v or rng.random() < 0.05) and rng.random() < density:
                w = float(rng.randint(0, 3)) if ties else rng.uniform(-1.0, 5.0)
                edges.append((u, v, w))
    if rng.random() < 0.3 and edges:
        edges.append(edges[rng.randrange(len(edges))])  # a parallel arc, same weight
    return n, rng.randrange(n), edges


def _plain(n: int, root: int, edges: list[tuple[int, int, float]],
           monkeypatch: pytest.MonkeyPatch) -> list[int] | None:
    monkeypatch.setattr(arborescence_module, "VECTORISED_FROM", math.inf)
    try:
        return min_arborescence(n, root, edges)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(300))
def test_vectorised_chooses_the_plain_arcs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    n, root, edges = _instance(seed)
    plain = _plain(n, root, edges, monkeypatch)
    assert _vectorised(n, root, edges) == plain
    if plain is None:
        return
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    for u, v, w in edges:
        if v != root and u != v:
            g.add_edge(u, v, weight=w)
    best = nx.minimum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
    expected = sum(d["weight"] for _, _, d in best.edges(data=True))
    assert sum(edges[i][2] for i in plain) == pytest.approx(expected, abs=1e-9)
    assert sorted(edges[i][1] for i in plain) == sorted(set(range(n)) - {root})


def test_an_infinite_weight_leaves_it_to_the_plain_loops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    n, root, edges = 30, 0, [(u, v, 1.0) for u in range(30) for v in range(30) if u != v]
    edges[5] = (edges[5][0], edges[5][1], math.inf)
    assert len(edges) >= arborescence_module.VECTORISED_FROM
    assert _vectorised(n, root, edges) is arborescence_module._NON_FINITE
    assert min_arborescence(n, root, edges) == _plain(n, root, edges, monkeypatch)


@pytest.mark.parametrize("seed", range(200))
def test_free_first_is_a_minimum_arborescence(seed: int) -> None:
    """``free_first`` (the zero-weight reach of the root joined first) may break ties
    otherwise, but its arcs form a spanning arborescence of ``root`` of the least
    weight, that of the plain algorithm; ``None`` exactly when the plain one is."""
    n, root, edges = _instance(seed)
    edges = [(u, v, max(w, 0.0)) for u, v, w in edges]  # non-negative, many zeros
    plain = min_arborescence(n, root, edges)
    free = min_arborescence(n, root, edges, free_first=True)
    if plain is None:
        assert free is None
        return
    assert free is not None
    assert sum(edges[i][2] for i in free) == pytest.approx(sum(edges[i][2] for i in plain),
                                                           abs=1e-9)
    parent = {edges[i][1]: edges[i][0] for i in free}
    assert len(free) == n - 1
    assert sorted(parent) == sorted(set(range(n)) - {root})
    for v in parent:  # every node climbs to the root without a cycle
        seen = {v}
        while v != root:
            v = parent[v]
            assert v not in seen
            seen.add(v)
