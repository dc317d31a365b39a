"""All-reduce structures (``planners/lp/_allreduce_packing.py``): canonical form, packing, proof.

The optimum itself is recomputed independently in
``tests/test_lp_allreduce_independent.py``; here the parts are checked on
cases small enough to work by hand.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from portsim.planners.lp._allreduce_packing import (
    _milp_price,
    build_master,
    build_pricing_model,
    canonical,
    certify,
    dual_bound,
    pack_structures,
    structure_unit,
)
from portsim.planners.lp._driver import LpOptions, solve_exactly
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._solve import Deadline, TimeLimitReached
from portsim.scenarios.generators import random_platform
from portsim.simulator import Operation, OperationKind, Platform
from portsim.simulator.items import Item

F = Fraction
ALLREDUCE = OperationKind.ALLREDUCE
NO_LIMIT = Deadline.after(None)


def _two(compute: int) -> tuple[Platform, Operation]:
    platform = Platform.build({"A": compute, "B": compute}, [("A", "B", 1), ("B", "A", 1)])
    return platform, Operation(ALLREDUCE).resolve(platform)


def _reduce_at(root: str, other: str, n_first: int) -> list[tuple]:  # type: ignore[type-arg]
    """Two participants: the other node's value to ``root``, reduce, send the result back."""
    k = 1 if root == "A" else 0  # index of the value that travels
    return [("send", other, root, k, k), ("cons", root, 0, 0, 1),
            ("send", root, other, 0, n_first)]


# -- canonical form -----------------------------------------------------------------------

def test_canonical_keeps_one_producer_and_drops_what_is_unused() -> None:
    _, op = _two(1)
    tasks = [*_reduce_at("B", "A", 1),
             ("cons", "A", 0, 0, 1),            # A never holds v_1: never runs
             ("send", "B", "A", 0, 0),          # v_0 back into A: A holds it already
             ("send", "A", "B", 0, 1)]          # a second producer of B's result: dropped
    assert canonical(op, tasks) == (("send", "A", "B", 0, 0), ("cons", "B", 0, 0, 1),
                                    ("send", "B", "A", 0, 1))


def test_canonical_ignores_a_cycle_with_no_source() -> None:
    """A and B passing the result to each other, with nobody computing it: no structure."""
    _, op = _two(1)
    assert canonical(op, [("send", "A", "B", 0, 1), ("send", "B", "A", 0, 1)]) is None


def test_canonical_butterfly_keeps_both_computations() -> None:
    _, op = _two(0)
    butterfly = [("send", "A", "B", 0, 0), ("send", "B", "A", 1, 1),
                 ("cons", "A", 0, 0, 1), ("cons", "B", 0, 0, 1)]
    assert set(canonical(op, butterfly) or ()) == set(butterfly)


def test_structure_unit_depths_follow_the_dependencies() -> None:
    _, op = _two(1)
    structure = canonical(op, _reduce_at("B", "A", 1))
    assert structure is not None
    unit = structure_unit(F(1, 2), structure)
    assert unit.weight == F(1, 2)
    assert [(s.src, s.dst, s.item, s.depth) for s in unit.sends] == [
        ("A", "B", Item.interval(0, 0), 0), ("B", "A", Item.interval(0, 1), 2)]
    assert [(c.node, c.output, c.depth) for c in unit.computes] == [
        ("B", Item.interval(0, 1), 1)]


# -- packing and certificate --------------------------------------------------------------

def test_two_nodes_packing_is_exactly_one() -> None:
    """Compute time 2: one root alone does 1/2; alternating roots reach 1 (each port 1/1)."""
    platform, op = _two(2)
    start = [canonical(op, _reduce_at("B", "A", 1))]
    packing = pack_structures(platform, op, [s for s in start if s is not None], LpOptions(),
                              deadline=NO_LIMIT)
    assert not isinstance(packing, type(None))
    assert packing.lower == 1  # type: ignore[union-attr]
    assert packing.upper == 1  # type: ignore[union-attr]
    roots = {next(t[1] for t in s if t[0] == "cons") for _, s in packing.weights}  # type: ignore[union-attr]
    assert roots == {"A", "B"}


def test_master_rows_are_the_structure_loads() -> None:
    platform, op = _two(2)
    structure = canonical(op, _reduce_at("B", "A", 1))
    assert structure is not None
    model = build_master(platform, op, [structure])
    rows = {r.name: dict(r.coeffs) for r in model.rows if r.sense == "<="}
    w = model.index["w", 0]
    assert rows["send:A"] == {w: 1}
    assert rows["recv:B"] == {w: 1}
    assert rows["send:B"] == {w: 1}
    assert rows["recv:A"] == {w: 1}
    assert rows["cpu:B"] == {w: 2}
    assert rows["cpu:A"] == {}


def test_pricing_relaxation_at_zero_prices_costs_nothing() -> None:
    platform, op = _two(1)
    pricing = build_pricing_model(platform, op, {})
    assert pricing.total == 0
    assert pricing.priced == {}
    solved = solve_exactly(pricing.model, LpOptions(), what="test", deadline=NO_LIMIT)
    assert isinstance(solved, ExactSolution)
    assert solved.upper == 0


def _seed3() -> tuple[Platform, Operation, dict[tuple[str, str], Fraction], Fraction]:
    """The seed-3 platform, an optimal exact master dual and the master's value.

    Column generation driven by :func:`certify` alone (the exact search
    returns any structure priced below the threshold).
    """
    platform = random_platform(4, 2, c=(1, 5), compute=(0, 3), seed=3)
    op = Operation(ALLREDUCE).resolve(platform)
    _, first = _milp_price(platform, op, {("recv", v): F(1) for v in platform.node_ids},
                           NO_LIMIT)
    assert first is not None
    structures = [first]
    for _ in range(100):
        model = build_master(platform, op, structures)
        master = solve_exactly(model, LpOptions(), what="test", deadline=NO_LIMIT)
        assert isinstance(master, ExactSolution)
        y = {}
        for row, value in zip([r for r in model.rows if r.sense == "<="], master.y_ub,
                              strict=True):
            kind, node = row.name.split(":")
            if value:
                y[kind, node] = value
        cert = certify(platform, op, y, LpOptions(), deadline=NO_LIMIT,
                       threshold=min(F(1), master.y_eq[0]))
        if cert.found is None:
            return platform, op, y, master.lower
        assert cert.found not in structures
        structures.append(cert.found)
    raise AssertionError("no convergence in 100 rounds")


def test_certificate_closes_and_a_partial_one_still_bounds() -> None:
    """Four nodes, seed 3: the optimum 1/6 (the relaxation says 3/17)."""
    platform, op, y, value = _seed3()
    assert value == F(1, 6)
    full = certify(platform, op, y, LpOptions(), deadline=NO_LIMIT)
    assert full.least == 1
    assert full.found is None
    partial = certify(platform, op, y, LpOptions(), deadline=NO_LIMIT, node_limit=1)
    assert 0 < partial.least < 1
    master = ExactSolution([], value, value, [], [], "test")
    upper = dual_bound(platform, op, y, partial.least, master)
    assert upper > value  # an interval, still a valid upper end:
    assert upper >= F(1, 6)
    assert upper <= sum(y.values(), F(0)) / partial.least


def test_a_certificate_that_proved_nothing_bounds_by_the_cap() -> None:
    """Two nodes, links of cost 1, compute 1: the optimum is 1 (each node receives
    one message per instance through its one port: the cap, 1, is met by
    reducing on either node and sending the result back).  A branch and bound
    stopped before its first node proves no structure price (``least`` 0):
    over a master of value 1/2 the upper end is the cap, 1, not the master's
    own 1/2 (which no schedule was proven not to beat: 1 does)."""
    platform, op = _two(1)
    cert = certify(platform, op, {}, LpOptions(), deadline=NO_LIMIT, node_limit=0)
    assert cert.least == 0
    master = ExactSolution([], F(1, 2), F(1, 2), [], [], "test")
    assert dual_bound(platform, op, {}, cert.least, master) == 1


def test_an_expired_deadline_stops_the_column_generation() -> None:
    platform, op = _two(2)
    start = canonical(op, _reduce_at("B", "A", 1))
    assert start is not None
    with pytest.raises(TimeLimitReached):
        pack_structures(platform, op, [start], LpOptions(), deadline=Deadline.after(0.0))
