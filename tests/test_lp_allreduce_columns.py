"""The allreduce bound by per-destination column generation (``_allreduce_columns.py``).

The reference is the whole program (``build_allreduce_bound_model``: N copies
of SSR(G) over shared operations, without the gossip rows the tree packing
does not hold, solved by HiGHS and recovered exactly),
an independent computation of the same optimum: the column generation must
give the same exact value with ``lower == upper`` (its own certificate).
The interval pricing is checked against the reduce's pricing
(``cheapest_tree``), an independent dynamic program, where every interval
has the same prices.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from random_cases import random_multiport_platform

from portsim.planners.base import PlanResult
from portsim.planners.lp._allreduce_bound import allreduce_bound, build_allreduce_bound_model
from portsim.planners.lp._allreduce_columns import allreduce_trees
from portsim.planners.lp._driver import LpOptions, solve_exactly
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._incremental import IncrementalMaster
from portsim.planners.lp._tree_pricing import TreeSpace, cheapest_interval_tree, cheapest_tree
from portsim.scenarios.generators import random_platform
from portsim.simulator import Operation, OperationKind, Platform

F = Fraction
ALLREDUCE = OperationKind.ALLREDUCE


def _mixed(n: int, seed: int) -> Platform:
    """A random platform with a random port model per node, at least one multi-port."""
    return random_multiport_platform(n, seed, compute=(0, 2))


def _same_bound(platform: Platform, participants: tuple[str, ...] = ()) -> Fraction:
    op = Operation(ALLREDUCE, participants=participants).resolve(platform)
    model = build_allreduce_bound_model(platform, op, gossip=False)  # the same program
    whole = solve_exactly(model, LpOptions(), what="allreduce bound",
                          repair=lambda _: [F(0)] * model.n_variables)
    assert isinstance(whole, ExactSolution)
    assert whole.exact, whole.method
    trees = allreduce_trees(platform, op)
    assert isinstance(trees, ExactSolution), trees
    assert trees.lower == trees.upper == whole.upper, (trees.lower, trees.upper, whole.upper)
    assert trees.method != "interval"
    return trees.upper


# -- the bound equals the whole program's ------------------------------------------------

@pytest.mark.parametrize(("n", "seed"), [(n, s) for n in (3, 4, 5) for s in range(4)])
def test_equals_the_whole_program_on_bidirectional_platforms(n: int, seed: int) -> None:
    _same_bound(random_platform(n, min(3, n - 1), c=(1, 5), compute=(0, 3), seed=seed))


@pytest.mark.parametrize(("n", "seed"), [(n, s) for n in (3, 4, 5) for s in range(3)])
def test_equals_the_whole_program_on_mixed_port_models(n: int, seed: int) -> None:
    _same_bound(_mixed(n, seed))


def test_equals_the_whole_program_with_routers_and_a_subset() -> None:
    """A router in the middle (no computation there) and a participant subset."""
    platform = Platform.build(
        {"A": 1, "B": 2, "C": 1, "R": 1},
        [("A", "R", 1), ("R", "A", 1), ("B", "R", 2), ("R", "B", 2), ("C", "R", 1),
         ("R", "C", 1), ("A", "C", 3)], routers=["R"])
    _same_bound(platform, ("A", "B", "C"))
    _same_bound(platform, ("C", "A"))


def test_hand_computed_value() -> None:
    """Three nodes fully linked, links 1, free computation: 3/4 (``test_lp_allreduce.py``)."""
    nodes = ["A", "B", "C"]
    platform = Platform.build(dict.fromkeys(nodes, 0),
                              [(a, b, 1) for a in nodes for b in nodes if a != b])
    assert _same_bound(platform) == F(3, 4)


def test_the_relaxation_above_the_optimum() -> None:
    """Four nodes where no schedule reaches the relaxation (13/80 against 3/20)."""
    assert _same_bound(random_platform(4, 2, c=(1, 5), compute=(0, 3), seed=2)) == F(13, 80)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "seed"), [(6, 0), (6, 1), (7, 0)])
def test_equals_the_whole_program_on_larger_platforms(n: int, seed: int) -> None:
    _same_bound(random_platform(n, 3, c=(1, 5), compute=(0, 3), seed=seed))


def test_allreduce_bound_dispatches_on_method() -> None:
    platform = random_platform(4, 2, c=(1, 5), compute=(0, 3), seed=3)
    op = Operation(ALLREDUCE).resolve(platform)
    found = allreduce_bound(platform, op, LpOptions(), method="columns")
    assert isinstance(found, ExactSolution)
    assert found.upper == F(3, 17)  # test_lp_allreduce.py's relaxation of this platform
    with pytest.raises(ValueError, match="allreduce bound method 'cuts'"):
        allreduce_bound(platform, op, LpOptions(), method="cuts")


def test_time_limit_is_an_error_result() -> None:
    platform = random_platform(5, 3, c=(1, 5), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    found = allreduce_bound(platform, op, LpOptions(time_limit=1e-6), method="columns")
    assert isinstance(found, PlanResult)
    assert found.status == "error"
    assert "time limit" in found.message


# -- the interval pricing ----------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("exact", [False, True])
def test_interval_pricing_equals_the_reduce_pricing_on_shared_prices(seed: int,
                                                                     exact: bool) -> None:
    """Every interval priced alike: the same least price as ``cheapest_tree``, and the
    returned tree costs that price."""
    rng = np.random.default_rng(seed)
    n = 3 + seed % 4
    platform = random_platform(n, min(2, n - 1), c=(1, 5), compute=(0, 3), seed=seed)
    op = Operation(OperationKind.REDUCE, target=platform.processors[seed % n]).resolve(platform)
    space = TreeSpace.of(platform, op)
    parts = len(space.owners)
    link = rng.integers(0, 20, len(space.links))
    cpu = rng.integers(0, 20, len(space.nodes))
    if exact:
        link = np.array([int(v) for v in link], dtype=object)
        cpu = np.array([int(v) for v in cpu], dtype=object)
    else:
        link = link.astype(float)
        cpu = cpu.astype(float)
    send = np.empty((parts, parts, len(link)), dtype=link.dtype)
    send[...] = link
    task = np.empty((parts, parts, parts, len(cpu)), dtype=cpu.dtype)
    task[...] = cpu
    expected, _ = cheapest_tree(space, link, cpu)
    price, tasks = cheapest_interval_tree(space, space.target, send, task)
    assert tasks is not None
    assert price == expected
    index = {e: i for i, e in enumerate(space.links)}
    total = sum(link[index[space.index[t[1]], space.index[t[2]]]] if t[0] == "send"
                else cpu[space.index[t[1]]] for t in tasks)
    assert total == price


def test_interval_pricing_follows_interval_prices() -> None:
    """Two routes to the target; the cheap one for v_0 is dear for v_1: each takes its own."""
    platform = Platform.build(dict.fromkeys("ABCT", 0),
                              [("A", "B", 1), ("A", "C", 1), ("B", "T", 1), ("C", "T", 1),
                               ("T", "A", 1)])
    op = Operation(OperationKind.REDUCE, participants=("A", "T"), target="T").resolve(platform)
    space = TreeSpace.of(platform, op)
    links = {(space.nodes[u], space.nodes[v]): e for e, (u, v) in enumerate(space.links)}
    send = np.ones((2, 2, len(space.links)))
    send[0, 0, links["A", "B"]] = 5.0   # v_0 via C
    send[0, 1, links["A", "C"]] = 5.0   # v[0,1] (made on A from v_1 sent there) via B
    task = np.zeros((2, 2, 2, len(space.nodes)))
    task[0, 1, 0, space.index["T"]] = 10.0  # making the result on T is dear
    price, tasks = cheapest_interval_tree(space, space.index["T"], send, task)
    assert tasks is not None
    # Made on A (v_1 over T -> A, price 1) then v[0,1] over A -> B -> T (2): 3, against
    # v_0 over A -> C -> T (2) and the dear task (10) on T.
    assert price == 3.0
    assert sorted(t for t in tasks if t[0] == "send") == [
        ("send", "A", "B", 0, 1), ("send", "B", "T", 0, 1), ("send", "T", "A", 1, 1)]


# -- the incremental master's new rows ---------------------------------------------------

def test_incremental_master_add_rows_keeps_solving() -> None:
    """``max x0 + x1`` under ``x0 + 2 x1 <= 4``, ``3 x0 + x1 <= 6``; then ``x1 <= 1``."""
    m = IncrementalMaster([-np.inf, -np.inf], [4.0, 6.0], {"solver": "simplex"})
    m.add_column(1.0, [0, 1], [1.0, 3.0])
    m.add_column(1.0, [0, 1], [2.0, 1.0])
    assert m.solve(None).value == pytest.approx(2.8)
    assert m.add_rows([-np.inf], [1.0], [([1], [1.0])]) == 2
    assert m.add_rows([], [], []) == 3
    point = m.solve(None)
    # x1 = 1, x0 = 5/3 (3 x0 + 1 <= 6): 8/3, the new row's dual 1 - 1/3 = 2/3.
    assert point.value == pytest.approx(8 / 3)
    assert point.duals == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert len(m.basis()[0]) + len(m.basis()[1]) == 3
