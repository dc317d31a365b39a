"""The ``restrict: tree | dag | graph`` option of ``lp`` (broadcast report, section 2.3).

The figures of ``scenarios/examples/broadcast-restrict.yaml`` (our own
platform: the costs of the paper's Fig. 1 are not in its text) are checked
against an independent brute force: every spanning arborescence and every
set of simultaneously active links (matchings of the unidirectional model, or
of the bipartite send/receive graph of the bidirectional one) is enumerated
here, and the explicit linear program of section 2.2.2 (maximise the trees'
weights, each link's tree traffic covered by its matchings, the matchings'
weights summing to at most 1) is solved by ``scipy.optimize.linprog`` on every
spanning tree, every acyclic link set reaching all nodes, and the whole graph.
No code of ``portsim.planners.lp`` is involved in that computation.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner
from scipy.optimize import linprog

from portsim.planners.lp import LP_PLANNER, steady_state
from portsim.planners.lp._restrict import (
    MAX_CANDIDATES,
    candidate_dags,
    candidate_trees,
    plan_restricted,
    sub_platform,
)
from portsim.scenarios.cli import main
from portsim.scenarios.generators import complete_platform, random_platform
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.runner import run_scenario
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.errors import PlannerError

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
F = Fraction
NODES = ["Ps", "P1", "P2", "P3", "P4"]
LINKS = [("Ps", "P2", 2), ("Ps", "P3", 1), ("P1", "P4", "1/2"), ("P2", "P1", 3),
         ("P3", "P2", 1), ("P3", "P4", "1/2"), ("P4", "P1", "3/2"), ("P4", "P3", 2)]
COST = {(u, v): F(c) for u, v, c in LINKS}
BROADCAST = Operation(OperationKind.BROADCAST, source="Ps")


def platform(model: str = "unidirectional") -> Platform:
    return Platform.build(NODES, LINKS, model)


# -- the independent brute force ---------------------------------------------------------


def arborescences(links: list[tuple[str, str]], source: str,
                  nodes: list[str] = NODES) -> list[tuple[tuple[str, str], ...]]:
    """Every spanning arborescence of ``nodes`` rooted at ``source`` within ``links``."""
    others = [v for v in nodes if v != source]
    preds = {v: [u for u, w in links if w == v] for v in others}
    out = []
    for choice in itertools.product(*(preds[v] for v in others)):
        parent = dict(zip(others, choice, strict=True))
        g = nx.DiGraph([(parent[v], v) for v in others])
        if nx.is_arborescence(g):
            out.append(tuple(sorted(g.edges)))
    return out


def active_sets(links: list[tuple[str, str]], unidirectional: bool) -> list[tuple]:
    """Every set of links that may be active together under the port model."""
    out = []
    for r in range(1, len(links) + 1):
        for sub in itertools.combinations(links, r):
            if unidirectional:
                ends = [x for link in sub for x in link]
                ok = len(set(ends)) == len(ends)
            else:
                ok = len({u for u, _ in sub}) == r == len({v for _, v in sub})
            if ok:
                out.append(sub)
    return out


def brute_throughput(links: list[tuple[str, str]], unidirectional: bool, *,
                     nodes: list[str] = NODES, source: str = "Ps",
                     cost: dict[tuple[str, str], Fraction] = COST) -> float:
    trees = arborescences(links, source, nodes)
    if not trees:
        return 0.0
    sets = active_sets(links, unidirectional)
    nt, nm = len(trees), len(sets)
    rows, rhs = [], []
    for e in links:
        row = np.zeros(nt + nm)
        for i, t in enumerate(trees):
            row[i] = float(cost[e]) if e in t else 0.0
        for j, m in enumerate(sets):
            row[nt + j] = -1.0 if e in m else 0.0
        rows.append(row)
        rhs.append(0.0)
    rows.append(np.concatenate([np.zeros(nt), np.ones(nm)]))
    rhs.append(1.0)
    res = linprog(np.concatenate([-np.ones(nt), np.zeros(nm)]), A_ub=np.array(rows),
                  b_ub=np.array(rhs), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(-res.fun)


def brute_force(unidirectional: bool, *, nodes: list[str] = NODES, source: str = "Ps",
                cost: dict[tuple[str, str], Fraction] = COST) -> tuple[float, float, float]:
    """(best tree, best DAG, whole graph), every candidate enumerated."""
    links = sorted(cost)

    def tp(sub: list[tuple[str, str]]) -> float:
        return brute_throughput(sub, unidirectional, nodes=nodes, source=source, cost=cost)

    graph = tp(links)
    tree = max(tp(list(t)) for t in arborescences(links, source, nodes))
    dag = 0.0
    for r in range(len(nodes) - 1, len(links) + 1):
        for sub in itertools.combinations(links, r):
            if nx.is_directed_acyclic_graph(nx.DiGraph(list(sub))):
                dag = max(dag, tp(list(sub)))
    return tree, dag, graph


# -- the example: tree < DAG < graph ------------------------------------------------------------


def test_brute_force_confirms_the_example_figures() -> None:
    tree, dag, graph = brute_force(unidirectional=True)
    assert abs(tree - 2 / 5) < 1e-9
    assert abs(dag - 4 / 9) < 1e-9
    assert abs(graph - 14 / 31) < 1e-9
    # Under the bidirectional model the three coincide on this platform.
    for value in brute_force(unidirectional=False):
        assert abs(value - 2 / 3) < 1e-9


def test_example_file_tree_dag_graph_strictly_increasing() -> None:
    scenario = load_scenario(EXAMPLES / "broadcast-restrict.yaml")
    assert [(s.name, dict(s.options)) for s in scenario.planners] == [
        ("lp", {"restrict": "tree"}), ("lp", {"restrict": "dag"}), ("lp", {"restrict": "graph"})]
    tree, dag, graph = run_scenario(scenario).results
    assert (tree.throughput_bound, dag.throughput_bound, graph.throughput_bound) == (
        F(2, 5), F(4, 9), F(14, 31))
    assert tree.throughput_bound < dag.throughput_bound < graph.throughput_bound
    for run in (tree, dag, graph):
        assert run.status == "ok"
        assert run.feasible is True
        assert run.violations == ()
        assert run.measured_throughput is not None
        assert run.measured_throughput <= float(run.throughput_bound or 0)
    assert tree.label == "lp (restrict: tree)"
    assert any(n.startswith("restrict: tree: best spanning arborescence "
                            "{P3->P2, P3->P4, P4->P1, Ps->P3} with throughput 2/5")
               for n in tree.notes)
    assert any(n.startswith("restrict: dag: best acyclic sub-platform "
                            "{P2->P1, P3->P2, P3->P4, P4->P1, Ps->P2, Ps->P3} with throughput "
                            "4/9") for n in dag.notes)
    # The tree result uses one tree, on the whole platform's nodes and links.
    assert tree.plan is not None
    assert tree.plan.schedule is not None
    assert len(tree.plan.trees) == 1
    assert tree.plan.schedule.platform == scenario.platform


def test_bidirectional_restrictions_coincide_here() -> None:
    p = platform("bidirectional")
    bounds = [steady_state(p, BROADCAST, restrict=r).throughput_bound
              for r in ("tree", "dag", "graph")]
    assert bounds == [F(2, 3)] * 3


def test_fig2_of_the_report() -> None:
    """Section 2.2.2: the unidirectional optimum 2/3 uses one tree; bidirectional 1 too."""
    fig2 = Platform.build(["P1", "P2", "P3"],
                          [("P1", "P2", 1), ("P1", "P3", 1), ("P2", "P3", "1/2")])
    op = Operation(OperationKind.BROADCAST, source="P1")
    for model, value in (("unidirectional", F(2, 3)), ("bidirectional", F(1))):
        p = fig2.with_port_model(model)
        for restrict in ("tree", "dag", "graph"):
            result = steady_state(p, op, restrict=restrict)
            assert result.throughput_bound == value, (model, restrict)
            assert result.schedule is not None
            assert result.period is not None
            assert replay(result.schedule, horizon=result.period * 20).violations == ()


# -- candidates ------------------------------------------------------------------------------


def test_candidate_trees_are_the_pruned_arborescences() -> None:
    p = platform()
    trees = candidate_trees(p, "Ps", frozenset(NODES) - {"Ps"})
    assert sorted(trees) == sorted(arborescences(sorted(COST), "Ps"))
    # Steiner case: with target P1 only, every leaf is P1 (non-target leaves pruned).
    paths = candidate_trees(p, "Ps", frozenset({"P1"}))
    assert paths
    for links in paths:
        heads = {v for _, v in links}
        tails = {u for u, _ in links}
        assert heads - tails == {"P1"}


def test_every_acyclic_reaching_subgraph_lies_in_a_candidate_dag() -> None:
    p = platform()
    dags = [set(d) for d in candidate_dags(p, "Ps", frozenset(NODES) - {"Ps"})]
    links = sorted(COST)
    for r in range(len(NODES) - 1, len(links) + 1):
        for sub in itertools.combinations(links, r):
            g = nx.DiGraph(list(sub))
            if (nx.is_directed_acyclic_graph(g) and "Ps" in g
                    and set(NODES) <= {"Ps"} | nx.descendants(g, "Ps")):
                assert any(set(sub) <= d for d in dags), sub
    for d in dags:
        assert nx.is_directed_acyclic_graph(nx.DiGraph(list(d)))


def test_sub_platform_keeps_nodes_and_port_models() -> None:
    p = platform()
    sub = sub_platform(p, (("Ps", "P3"), ("P3", "P2")))
    assert sub.node_ids == p.node_ids
    assert sub.port_model == p.port_model
    assert [(link.src, link.dst, link.c) for link in sub.links] == [
        ("Ps", "P3", 1), ("P3", "P2", 1)]


# -- errors ----------------------------------------------------------------------------------


def test_bad_restrict_value() -> None:
    with pytest.raises(PlannerError, match=r"planners\.lp\.restrict: restrict must be one of "
                                           r"tree, dag, graph \(got 'forest'\)"):
        LP_PLANNER.plan(platform(), BROADCAST, restrict="forest")


def test_restrict_is_for_broadcast_only() -> None:
    result = steady_state(platform(), Operation(OperationKind.SCATTER, source="Ps"),
                          restrict="tree")
    assert result.status == "unsupported"
    assert "restrict: tree is defined for broadcast only" in result.message
    assert steady_state(platform(), Operation(OperationKind.SCATTER, source="Ps"),
                        restrict="graph").status == "ok"


def test_the_enumeration_cap() -> None:
    # A complete platform of 7 nodes: 7^5 = 16807 spanning arborescences per root
    # (Cayley's formula n^(n-2)), over the cap of 2000; stopped before any LP.
    big = complete_platform(7, c=1, compute=1)
    op = Operation(OperationKind.BROADCAST, source="P0")
    result = steady_state(big, op, restrict="tree")
    assert result.status == "error"
    assert f"more than {MAX_CANDIDATES} candidate trees" in result.message
    assert f"capped at {MAX_CANDIDATES} candidates" in result.message
    small_cap = plan_restricted(platform(), BROADCAST.resolve(platform()), "dag",
                                lambda sub: steady_state(sub, BROADCAST), cap=2)
    assert small_cap.status == "error"
    assert "more than 2 candidate DAGs" in small_cap.message


# -- the command line ---------------------------------------------------------------------------


def test_cli_run_example(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "broadcast-restrict.yaml"),
                                       "--json", str(out)])
    assert result.exit_code == 0, result.stdout
    records = json.loads(out.read_text())["results"]
    assert [(r["planner"], r["options"], r["throughput_bound"], r["feasible"])
            for r in records] == [
        ("lp", {"restrict": "tree"}, "2/5", True),
        ("lp", {"restrict": "dag"}, "4/9", True),
        ("lp", {"restrict": "graph"}, "14/31", True),
    ]
    assert "lp (restrict: dag)" in result.stdout


# -- restricted lp entries are never the reference bound ------------------------------------


def test_asymptotic_study_takes_the_whole_graph_bound() -> None:
    from portsim.scenarios.asymptotic import asymptotic_study

    study = asymptotic_study(load_scenario(EXAMPLES / "broadcast-restrict.yaml"),
                             periods=(10, 100))
    assert study.bound == F(14, 31)
    assert study.problems == ()


def test_study_efficiency_reference_ignores_restricted_lp() -> None:
    from portsim.scenarios.study.execute import _add_efficiency

    rows = [{"planner": "lp", "planner_options": json.dumps({"restrict": "tree"}),
             "throughput_bound": "2/5", "measured_throughput": 0.4},
            {"planner": "lp", "planner_options": json.dumps({"restrict": "graph"}),
             "throughput_bound": "14/31", "measured_throughput": 0.45}]
    _add_efficiency(rows)
    assert [r["reference_bound"] for r in rows] == ["14/31", "14/31"]
    assert rows[0]["efficiency"] == pytest.approx(0.4 / (14 / 31))


@pytest.mark.parametrize("model", ["unidirectional", "bidirectional"])
@pytest.mark.parametrize("seed", [2, 5, 9])
def test_random_platforms_against_brute_force(seed: int, model: str) -> None:
    """tree <= dag <= graph, each equal to the brute force (every sub-graph enumerated)."""
    p = random_platform(4, 2, c=(1, 4), compute=(0, 2), seed=seed, port_model=model)
    source = p.processors[0]
    cost = {(link.src, link.dst): link.c for link in p.links if link.dst != source}
    nodes = list(p.node_ids)
    op = Operation(OperationKind.BROADCAST, source=source)
    found = [steady_state(p, op, restrict=r).throughput_bound for r in ("tree", "dag", "graph")]
    assert all(b is not None for b in found)
    assert found[0] <= found[1] <= found[2]  # type: ignore[operator]
    brute = brute_force(model == "unidirectional", nodes=nodes, source=source, cost=cost)
    for value, expected in zip(found, brute, strict=True):
        assert abs(float(value or 0) - expected) < 1e-9, (found, brute)
