"""Restricted topologies for a series of broadcasts: best tree, best DAG, whole graph.

Beaumont and Marchal (LIP RR-2004-32, section 2.3) compare the throughput
of a series of broadcasts when the messages may only follow a single
spanning tree, a directed acyclic sub-graph (DAG), or the whole platform,
and show that ``tree < DAG < graph`` can hold strictly.  The ``lp`` option
``restrict: tree | dag`` computes the first two by enumeration: the best
candidate sub-platform (the platform's nodes, only the candidate's links),
each solved by the ``lp`` facade itself (so under any port model it
supports: the column generation over matchings for unidirectional and mixed
platforms).

Candidates
----------
Only the nodes reachable from the source matter (no other node can ever
hold the message), and the ``lp`` optimum is monotone in the link set: a
schedule of a sub-platform is a schedule of any larger one.

- **tree**: the spanning arborescences of the reachable nodes rooted at the
  source, each pruned of its links to leaves that are not targets (repeated),
  and de-duplicated.  Pruning loses nothing: the transfers to a non-target
  leaf are useless, so the pruned tree carries the same throughput; the
  minimal trees (every leaf a target) therefore suffice.
- **dag**: by monotonicity the best DAG is a *maximal* acyclic sub-graph, and
  every acyclic sub-graph lies in the one of a linear order of the nodes
  (extend its topological order) that keeps every link going forward.  The
  candidates are the distinct forward-link sets of the orders starting at
  the source (no link may enter the source usefully) in which every target
  is reachable.  (Minimal reaching sub-graphs would not do: they are the
  trees, and a DAG beats every tree precisely by its extra links.)

The paper's own figures (Fig. 1, whose costs are not in the text) cannot be
reproduced, and they are inconsistent as printed: best tree 4/7 (T2), best
DAG 8/13, and a whole graph "slightly better" at 2/5, which is below both.
``scenarios/examples/broadcast-restrict.yaml`` is a platform of our own where
tree 2/5 < DAG 4/9 < graph 14/31 (unidirectional), checked by brute force in
``tests/test_restrict.py``.

The enumeration is exponential; it stops with an ``error`` result naming the
cap when there are more than :data:`MAX_CANDIDATES` candidates.  Pruning:
``tree <= dag <= graph``, so the whole platform's optimum is computed first
and the search stops as soon as a candidate reaches it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from fractions import Fraction

import networkx as nx

from portsim.planners.base import PlanResult
from portsim.planners.lp._arborescence import prune
from portsim.planners.lp._driver import NAME
from portsim.simulator.numbers import format_rational
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform

__all__ = ["MAX_CANDIDATES", "candidate_dags", "candidate_trees", "plan_restricted",
           "sub_platform"]

MAX_CANDIDATES = 2_000
"""Cap on the candidate trees or DAGs of ``restrict: tree | dag``."""

Links = tuple[tuple[NodeId, NodeId], ...]
Solve = Callable[[Platform], PlanResult]


class TooManyCandidates(Exception):
    """More candidates than the cap."""


def sub_platform(platform: Platform, links: Links) -> Platform:
    """``platform`` with every node but only ``links`` (same costs and port models).

    Examples
    --------
    >>> p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 2), ("A", "C", 3)])
    >>> [(l.src, l.dst) for l in sub_platform(p, (("A", "B"), ("B", "C"))).links]
    [('A', 'B'), ('B', 'C')]
    """
    keep = set(links)
    return Platform(platform.nodes, tuple(link for link in platform.links
                                          if (link.src, link.dst) in keep),
                    platform.port_model)


def _reachable(platform: Platform, source: NodeId) -> nx.DiGraph:
    """The links among nodes reachable from ``source``, none entering it."""
    g = platform.graph
    nodes = {source} | nx.descendants(g, source)
    sub = nx.DiGraph()
    sub.add_nodes_from(sorted(nodes))
    sub.add_edges_from((u, v) for u, v in g.edges if u in nodes and v in nodes and v != source)
    return sub


def candidate_trees(platform: Platform, source: NodeId, targets: frozenset[NodeId],
                    cap: int = MAX_CANDIDATES) -> list[Links]:
    """The minimal arborescences rooted at ``source`` that reach every target.

    Every spanning arborescence of the reachable nodes (parent choices by
    backtracking, rejecting cycles), pruned of non-target leaves.

    Raises
    ------
    TooManyCandidates
        Past ``cap`` distinct candidates (or ``cap`` times 50 spanning ones).

    Examples
    --------
    The platform of the broadcast report's Fig. 2 has two trees:

    >>> p = Platform.build(["1", "2", "3"], [("1", "2", 1), ("1", "3", 1), ("2", "3", "1/2")])
    >>> candidate_trees(p, "1", frozenset({"2", "3"}))
    [(('1', '2'), ('1', '3')), (('1', '2'), ('2', '3'))]
    """
    g = _reachable(platform, source)
    order = [v for v in g.nodes if v != source]
    choices = {v: sorted(g.predecessors(v)) for v in order}
    found: dict[Links, None] = {}
    parent: dict[NodeId, NodeId] = {}

    def creates_cycle(v: NodeId) -> bool:
        # The other parents form no cycle, so a new one would pass through v.
        u = parent[v]
        while u in parent:
            if u == v:
                return True
            u = parent[u]
        return False

    def walk(i: int) -> Iterator[None]:
        if i == len(order):
            yield None
            return
        v = order[i]
        for u in choices[v]:
            parent[v] = u
            if not creates_cycle(v):
                yield from walk(i + 1)
            del parent[v]

    for spanning, _ in enumerate(walk(0), start=1):
        found.setdefault(prune(((p, v) for v, p in parent.items()), targets))
        if len(found) > cap or spanning > 50 * cap:
            raise TooManyCandidates(f"more than {cap} candidate trees")
    return sorted(found)


def candidate_dags(platform: Platform, source: NodeId, targets: frozenset[NodeId],
                   cap: int = MAX_CANDIDATES) -> list[Links]:
    """The maximal acyclic sub-graphs (forward links of a linear order) reaching every target.

    Raises
    ------
    TooManyCandidates
        When there are more than ``cap`` linear orders to scan and more than
        ``cap`` distinct candidates could result, or past ``cap`` candidates.

    Examples
    --------
    On the broadcast report's Fig. 2 the whole platform is acyclic:

    >>> p = Platform.build(["1", "2", "3"], [("1", "2", 1), ("1", "3", 1), ("2", "3", "1/2")])
    >>> candidate_dags(p, "1", frozenset({"2", "3"}))
    [(('1', '2'), ('1', '3'), ('2', '3'))]
    """
    g = _reachable(platform, source)
    if nx.is_directed_acyclic_graph(g):
        return [tuple(sorted(g.edges))]
    others = [v for v in g.nodes if v != source]
    # Only the nodes on a cycle need ordering; the condensation fixes the rest
    # but for simplicity every order is scanned, with a guard on its count.
    if math.factorial(len(others)) > 50 * cap:
        raise TooManyCandidates(f"more than {cap} candidate DAGs "
                                f"({math.factorial(len(others))} node orders)")
    found: dict[Links, None] = {}
    for perm in itertools.permutations(others):
        rank = {source: 0} | {v: i + 1 for i, v in enumerate(perm)}
        links = tuple(sorted((u, v) for u, v in g.edges if rank[u] < rank[v]))
        if links in found:
            continue
        dag = nx.DiGraph(links)
        dag.add_node(source)
        if not targets <= ({source} | nx.descendants(dag, source)):
            continue
        found[links] = None
        if len(found) > cap:
            raise TooManyCandidates(f"more than {cap} candidate DAGs")
    # Keep only the maximal sets (a subset of another candidate cannot win).
    sets = [frozenset(c) for c in found]
    return sorted(c for c, s in zip(found, sets, strict=True)
                  if not any(s < other for other in sets))


def plan_restricted(platform: Platform, operation: Operation, restrict: str, solve: Solve,
                    *, cap: int = MAX_CANDIDATES) -> PlanResult:
    """The best tree or DAG sub-platform of a broadcast, by enumeration.

    Parameters
    ----------
    platform, operation:
        The broadcast (resolved against ``platform``).
    restrict:
        ``"tree"`` or ``"dag"``.
    solve:
        The ``lp`` planner on a sub-platform (``restrict: graph``).
    cap:
        Cap on the candidates (:data:`MAX_CANDIDATES`).

    Returns
    -------
    PlanResult
        The winning sub-platform's result (its schedule rebound to
        ``platform``), with a note naming the restriction and the chosen
        links; ``error`` naming the cap when there are too many candidates;
        ``unsupported`` for another collective.

    Notes
    -----
    Beaumont and Marchal, LIP RR-2004-32, section 2.3 (see the module notes
    for the candidates and why they suffice).  Ties keep the first candidate
    in sorted order of links.

    Examples
    --------
    On the broadcast report's Fig. 2 (bidirectional) the best tree is
    {1→2, 2→3}, at the whole graph's optimum 1:

    >>> from portsim.planners.lp import steady_state
    >>> p = Platform.build(["1", "2", "3"], [("1", "2", 1), ("1", "3", 1), ("2", "3", "1/2")])
    >>> op = Operation(OperationKind.BROADCAST, source="1").resolve(p)
    >>> r = plan_restricted(p, op, "tree", lambda sub: steady_state(sub, op))
    >>> r.throughput_bound, r.trees[0].edges
    (Fraction(1, 1), (('1', '2'), ('2', '3')))
    """
    if operation.kind is not OperationKind.BROADCAST:
        return PlanResult.unsupported(
            NAME, f"restrict: {restrict} is defined for broadcast only (section 2.3 of the "
                  f"broadcast report), not {operation.kind}; use restrict: graph")
    source = operation.source
    assert source is not None
    targets = frozenset(t for t in operation.targets if t != source)
    enumerate_candidates = candidate_trees if restrict == "tree" else candidate_dags
    try:
        candidates = enumerate_candidates(platform, source, targets, cap)
    except TooManyCandidates as err:
        return PlanResult.error(NAME, f"restrict: {restrict}: {err}; the enumeration is "
                                      f"exponential and capped at {cap} candidates; use "
                                      f"restrict: graph")
    whole = solve(platform)
    if not whole.is_ok or whole.throughput_bound is None:
        return whole
    ceiling = whole.throughput_bound
    best: tuple[Fraction, PlanResult, Links] | None = None
    solved = 0
    for links in candidates:
        if tuple(sorted(platform.graph.edges)) == links:
            result = whole
        else:
            result = solve(sub_platform(platform, links))
            solved += 1
        if result.status == "error":
            return replace(result, message=f"restrict: {restrict}, candidate "
                                           f"{_text(links)}: {result.message}")
        if not result.is_ok or result.throughput_bound is None:
            continue
        if best is None or result.throughput_bound > best[0]:
            best = (result.throughput_bound, result, links)
            if result.throughput_bound >= ceiling:
                break  # tree <= dag <= graph: nothing can do better
    assert best is not None, "the reachable targets always have a candidate"
    bound, result, links = best
    schedule = result.schedule
    if schedule is not None:
        schedule = replace(schedule, platform=platform)
    kind = "spanning arborescence" if restrict == "tree" else "acyclic sub-platform"
    note = (f"restrict: {restrict}: best {kind} {_text(links)} with throughput "
            f"{format_rational(bound)} ({len(candidates)} candidate(s), {solved} solved; "
            f"the whole platform reaches {format_rational(ceiling)})")
    return replace(result, schedule=schedule, notes=(note, *result.notes))


def _text(links: Links) -> str:
    return "{" + ", ".join(f"{u}->{v}" for u, v in links) + "}"
