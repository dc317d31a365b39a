"""Port-sum ``lp`` programs on platforms without unidirectional nodes (issue 14, item 3).

- (a) the port-sum optimum equals the matching column generation's
  (:func:`plan_matchings`, the exact reference) on small random platforms
  mixing bidirectional, ``multiport:k`` and ``multiport`` nodes;
- (b) :func:`peel_b_matchings` checked piece by piece on random loads;
- (c) allgather on all-``multiport`` fabrics whose compute nodes all take
  part: the ``lp`` bound equals ``min_S B⁺(S) / (|S ∩ P| · size)`` over node
  sets ``S`` missing a participant, computed here by max-flow (networkx);
- (d) the ``lp`` schedules on these fabrics replay feasibly in strict mode.
"""

from __future__ import annotations

import itertools
import math
import random
import warnings
from collections import defaultdict
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_cases import mixed_platform, operation_for

from portsim.planners.lp import steady_state
from portsim.planners.lp._bmatching import peel_b_matchings
from portsim.planners.lp._capacity import PortCapacity
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._matchings import plan_matchings
from portsim.planners.lp._periodic import peel_matchings
from portsim.scenarios import generators
from portsim.simulator import Operation, OperationKind, Platform, replay

F = Fraction

# -- (a) port sums = matchings -------------------------------------------------------------

_KINDS = [OperationKind.SCATTER, OperationKind.GATHER, OperationKind.BROADCAST,
          OperationKind.ALLGATHER, OperationKind.REDUCE, OperationKind.ALLTOALL]


def _random_mix(seed: int) -> Platform:
    rng = random.Random(seed)
    n = rng.randint(4, 6)
    base = generators.random_platform(n, rng.randint(1, min(3, n - 1)), c=(F(1, 2), F(3)),
                                      compute=(F(0), F(1)), seed=seed)
    models = [rng.choice(["bidirectional", "multiport:2", "multiport:3", "multiport"])
              for _ in range(n)]
    return mixed_platform(base, seed, models)


@pytest.mark.parametrize("kind", _KINDS, ids=str)
@pytest.mark.parametrize("seed", range(6))
def test_port_sums_equal_the_matching_program(kind: OperationKind, seed: int) -> None:
    platform = _random_mix(seed * 7 + 1)
    op = operation_for(kind, platform, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        port_sum = steady_state(platform, op)
        matchings = plan_matchings(platform, op, LpOptions())
    assert port_sum.status == matchings.status == "ok", (port_sum.message, matchings.message)
    assert port_sum.throughput_bound == matchings.throughput_bound
    # The port-sum path, not the matching column generation, answered.
    assert not any("matchings of the port graph" in note for note in port_sum.notes)
    assert port_sum.schedule is not None
    assert replay(port_sum.schedule, horizon=port_sum.schedule.period * 3).violations == ()


def test_multiport_needs_no_port_copies() -> None:
    """40 nodes around a ``multiport:64`` hub: no copy limit on port sums (matchings refuse)."""
    names = [f"N{i}" for i in range(40)]
    links = [("N0", n, 1) for n in names[1:]] + [(n, "N0", 1) for n in names[1:]]
    p = Platform.build(names, links, "multiport:64")
    result = steady_state(p, Operation(OperationKind.GATHER, target="N0"))
    assert result.status == "ok"
    assert result.throughput_bound == 1  # each leaf's one link of cost 1, all at once


def test_capacities_and_link_rows() -> None:
    p = Platform.build(["A", "B", "C", "D"],
                       [("A", "B", 1), ("A", "C", 1), ("A", "D", 1), ("B", "A", 1),
                        ("C", "A", 1), ("D", "A", 1)], "multiport:2")
    cap = PortCapacity.of(p)
    assert cap.send == {"A": 2, "B": 1, "C": 1, "D": 1}
    assert cap.receive == {"A": 2, "B": 1, "C": 1, "D": 1}
    assert cap.links == ()  # the leaves' single ports already bound each link
    hub = Platform.build(["A", "B"], [("A", "B", 1)], "multiport")
    assert PortCapacity.of(hub).links == ()  # one link per side: capacity 1
    two = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1), ("B", "A", 1),
                                           ("C", "A", 1), ("B", "C", 1), ("C", "B", 1)],
                         "multiport")
    assert PortCapacity.of(two).links == (("A", "B"), ("A", "C"), ("B", "A"), ("C", "A"),
                                          ("B", "C"), ("C", "B"))  # the platform's order


def test_a_link_runs_one_transfer_at_a_time_under_port_sums() -> None:
    """Two ``multiport:2`` nodes joined by one link of cost 1 and a slow detour.

    Scatter A -> B: node rows alone would allow 2 messages per time unit on
    A -> B; the link row keeps it to 1, plus 1/2 through C (cost 1 then 1):
    the optimum is 1 + 1/2... capped by the one link into B from C (cost 2).
    """
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1), ("C", "B", 2)],
                       "multiport:2")
    result = steady_state(p, Operation(OperationKind.SCATTER, source="A", targets=("B",)))
    assert result.throughput_bound == F(3, 2)
    assert result.throughput_bound == plan_matchings(
        p, Operation(OperationKind.SCATTER, source="A", targets=("B",)).resolve(p),
        LpOptions()).throughput_bound


# -- (b) b-matching peel ---------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.data())
def test_b_matching_peel_is_exact(data: st.DataObject) -> None:
    n = data.draw(st.integers(2, 5))
    nodes = [f"v{i}" for i in range(n)]
    links = [(u, v) for u in nodes for v in nodes if u != v]
    chosen = data.draw(st.lists(st.sampled_from(links), min_size=1, max_size=len(links),
                                unique=True))
    loads = {e: F(data.draw(st.integers(1, 12)), data.draw(st.integers(1, 4))) for e in chosen}
    k_out = {u: data.draw(st.integers(1, 3)) for u in nodes}
    k_in = {v: data.draw(st.integers(1, 3)) for v in nodes}
    steps = peel_b_matchings(loads, k_out, k_in)
    out_load: dict[str, F] = defaultdict(F)
    in_load: dict[str, F] = defaultdict(F)
    for (u, v), w in loads.items():
        out_load[u] += w
        in_load[v] += w
    bound = max([*(w / k_out[u] for u, w in out_load.items()),
                 *(w / k_in[v] for v, w in in_load.items()), *loads.values()])
    assert sum(d for d, _ in steps) == bound
    got: dict[tuple[str, str], F] = defaultdict(F)
    for d, piece in steps:
        assert d > 0
        assert len(set(piece)) == len(piece)  # each link at most once
        for u in nodes:
            assert sum(1 for a, _ in piece if a == u) <= k_out[u]
            assert sum(1 for _, b in piece if b == u) <= k_in[u]
        for e in piece:
            got[e] += d
    assert dict(got) == loads
    assert len(steps) <= len(loads) + 2 * n + 1


def test_b_matching_peel_delegates_to_koenig_when_every_capacity_is_one() -> None:
    loads = {("a", "b"): F(2), ("a", "c"): F(1), ("d", "b"): F(1)}
    assert peel_b_matchings(loads, {}, {}) == peel_matchings(loads)


def test_b_matching_peel_needs_the_link_rows() -> None:
    """One link loaded 1 between two 2-port nodes: one step of length 1, not 1/2."""
    steps = peel_b_matchings({("a", "b"): F(1), ("a", "c"): F(1), ("d", "b"): F(1)},
                             {"a": 2, "d": 2}, {"b": 2, "c": 2})
    assert steps == [(F(1), [("a", "b"), ("a", "c"), ("d", "b")])]


# -- (c) allgather on multiport fabrics: the cut bound ---------------------------------------

def _cut_bound(platform: Platform, size: F) -> F:
    """``min_S B⁺(S) / (|S ∩ P| · size)`` over sets ``S`` missing a participant, by max-flow.

    For a missing participant ``t`` and a trial throughput ``tp``: a super
    source feeds every other participant ``tp · size``, links carry their
    bandwidth ``1/c``; a minimum cut ``S ∌ t`` below ``tp · size · (|P|-1)``
    is a set with ``B⁺(S) < tp · size · |S ∩ P|``: ``tp`` drops to
    ``B⁺(S) / (size · |S ∩ P|)`` (Dinkelbach's iteration, exact, finite).
    Capacities are scaled to integers (networkx computes on them exactly).
    """
    parts = list(platform.processors)
    bandwidth = {(x.src, x.dst): 1 / x.c for x in platform.links}
    tp = min(sum((b for (u, _), b in bandwidth.items() if u == p), F(0)) / size
             for p in parts)
    for t in parts:
        while True:
            values = [*bandwidth.values(), tp * size]
            scale = math.lcm(*(v.denominator for v in values))
            g = nx.DiGraph()
            for (u, v), b in bandwidth.items():
                g.add_edge(u, v, capacity=int(b * scale))
            for p in parts:
                if p != t:
                    g.add_edge("source*", p, capacity=int(tp * size * scale))
            cut, (side, _) = nx.minimum_cut(g, "source*", t)
            if cut >= tp * size * scale * (len(parts) - 1):
                break
            inside = side - {"source*"}
            out = sum((b for (u, v), b in bandwidth.items() if u in inside and v not in inside),
                      F(0))
            tp = out / (size * len(inside & set(parts)))
    return tp


def _fabrics() -> list[tuple[str, Platform]]:
    return [
        ("dgx1", generators.dgx1_platform()),
        ("dgx_a100:1", generators.dgx_a100_platform(1)),
        ("ring:5", generators.ring_platform(5)),
        ("torus:3x3", generators.torus_platform(3, 3)),
        ("torus:2x3", generators.torus_platform(2, 3, bandwidth=F(3, 2))),
        ("fat_tree:2", generators.fat_tree_platform(2, host=2, core=F(1, 2))),
    ]


def _random_fabric(seed: int) -> Platform:
    """Random hosts and switches, cables in both directions with random bandwidths."""
    rng = random.Random(seed)
    hosts = [f"P{i}" for i in range(rng.randint(3, 5))]
    switches = [f"sw{i}" for i in range(rng.randint(1, 3))]
    cables: set[tuple[str, str]] = set()
    for i, h in enumerate(hosts):  # every host on a switch: connected
        cables.add((h, switches[i % len(switches)]))
    for a, b in itertools.pairwise(switches):
        cables.add((a, b))
    everyone = hosts + switches
    for _ in range(rng.randint(0, 4)):
        a, b = rng.sample(everyone, 2)
        if (b, a) not in cables:
            cables.add((a, b))
    links = []
    for a, b in sorted(cables):
        c = F(1, rng.randint(1, 4))
        links += [(a, b, c), (b, a, c)]
    return Platform.build(hosts + switches, links, "multiport", routers=switches)


@pytest.mark.parametrize(("name", "platform"), _fabrics(), ids=[n for n, _ in _fabrics()])
def test_allgather_on_multiport_fabrics_meets_the_cut_bound(name: str, platform: Platform
                                                           ) -> None:
    op = Operation(OperationKind.ALLGATHER)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound == _cut_bound(platform, op.size)


@pytest.mark.parametrize("seed", range(8))
def test_allgather_on_random_multiport_fabrics_meets_the_cut_bound(seed: int) -> None:
    platform = _random_fabric(seed)
    op = Operation(OperationKind.ALLGATHER, size=F(2))
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound == _cut_bound(platform, op.size)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "platform"), [
    ("dgx_a100:2", generators.dgx_a100_platform(2)),
    ("mi250:1", generators.mi250_platform(1)),
    ("fat_tree:4", generators.fat_tree_platform(4)),
], ids=["dgx_a100:2", "mi250:1", "fat_tree:4"])
def test_allgather_on_larger_fabrics_meets_the_cut_bound(name: str, platform: Platform
                                                        ) -> None:
    op = Operation(OperationKind.ALLGATHER)
    result = steady_state(platform, op)
    assert result.throughput_bound == _cut_bound(platform, op.size)


# -- (d) replays ---------------------------------------------------------------------------

def _small_fabrics() -> list[tuple[str, Platform]]:
    return [(n, p) for n, p in _fabrics() if n in ("ring:5", "torus:2x3", "fat_tree:2")] + [
        (f"random:{seed}", _random_fabric(seed)) for seed in range(3)]


def _check_replay(platform: Platform, kind: OperationKind, periods: int) -> None:
    """Strict replay without violation; ``periods`` periods complete 0.9 of what they carry."""
    op = operation_for(kind, platform, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(platform, op)
    assert result.status == "ok", result.message
    schedule = result.schedule
    assert schedule is not None
    assert schedule.period is not None
    carried = F(schedule.instances_per_period) / schedule.period
    assert carried == result.achieved_throughput <= result.throughput_bound
    report = replay(schedule, horizon=schedule.period * periods)
    assert report.violations == ()
    assert report.completed >= 0.9 * carried * schedule.period * periods


_REPLAYED = [OperationKind.ALLGATHER, OperationKind.BROADCAST, OperationKind.REDUCE,
             OperationKind.SCATTER]


@pytest.mark.parametrize(("name", "platform"), _small_fabrics(),
                         ids=[n for n, _ in _small_fabrics()])
@pytest.mark.parametrize("kind", _REPLAYED, ids=str)
def test_fabric_schedules_replay_in_strict_mode(name: str, platform: Platform,
                                                kind: OperationKind) -> None:
    _check_replay(platform, kind, 100)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "platform"), [
    (n, p) for n, p in _fabrics() if n in ("dgx1", "dgx_a100:1", "torus:3x3")],
    ids=["dgx1", "dgx_a100:1", "torus:3x3"])
@pytest.mark.parametrize("kind", _REPLAYED, ids=str)
def test_larger_fabric_schedules_replay_in_strict_mode(name: str, platform: Platform,
                                                       kind: OperationKind) -> None:
    _check_replay(platform, kind, 100)


# -- the per-destination flow bound by cut generation ----------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_cut_generation_equals_the_whole_flow_program(seed: int) -> None:
    """:func:`multicast_flow_bound` against the whole program solved exactly."""
    from portsim.planners.lp._broadcast import multicast_flow_model
    from portsim.planners.lp._driver import solve_exactly
    from portsim.planners.lp._exact import ExactSolution
    from portsim.planners.lp._flow_cuts import FlowBound, multicast_flow_bound

    platform = _random_fabric(seed) if seed % 2 else _random_mix(seed)
    parts = list(platform.processors)
    sources = [(k, [p for p in parts if p != k]) for k in parts[: 1 + seed % 3]]
    options = LpOptions().started()
    whole = solve_exactly(multicast_flow_model(platform, sources, F(1)), options, what="flow")
    assert isinstance(whole, ExactSolution)
    assert whole.lower == whole.upper
    found = multicast_flow_bound(platform, sources, F(1), options, what="test")
    assert isinstance(found, FlowBound)
    assert found.exact
    assert found.upper == whole.upper
