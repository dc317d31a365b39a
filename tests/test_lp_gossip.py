"""The gossip bound of the ``lp`` allreduce (``planners/lp/_gossip.py``).

Checked here: the combinatorial fact it rests on (one-way gossip among ``n``
people takes ``2n - 2`` calls), by a breadth-first search over who knows
what; its value against the independent packing optimum of
``test_lp_allreduce_independent.py`` on small platforms with a switch,
helpers and groups; and the fabrics where it turns the planner's interval
into an exact optimum that the engine's replay reaches.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction as F

import pytest
from bound_checks import assert_no_planner_beats
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lp_allreduce_independent import packing_optimum

from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import build_allreduce_bound_model
from portsim.planners.lp._gossip import gossip_cap, gossip_partitions
from portsim.planners.lp._solve import solve_float
from portsim.scenarios.generators import fat_tree_platform
from portsim.simulator import Operation, OperationKind, Platform, replay

ALLREDUCE = OperationKind.ALLREDUCE


def _fewest_calls(n: int) -> int:
    """Fewest one-way calls (the caller's knowledge joins the callee's) until all know all."""
    start = tuple(1 << i for i in range(n))
    everything = (1 << n) - 1
    seen = {start: 0}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if all(k == everything for k in state):
            return seen[state]
        for a in range(n):
            for b in range(n):
                if a != b and state[a] & ~state[b]:
                    nxt = list(state)
                    nxt[b] |= state[a]
                    key = tuple(nxt)
                    if key not in seen:
                        seen[key] = seen[state] + 1
                        queue.append(key)
    raise AssertionError("unreachable")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_one_way_gossip_takes_2n_minus_2_calls(n: int) -> None:
    assert _fewest_calls(n) == 2 * n - 2


def _switch_star(costs: list[int], *, helper: bool = False) -> Platform:
    """Processors ``P0..`` (and a helper ``H``) around a multiport switch, links both ways."""
    names = [f"P{i}" for i in range(len(costs))] + (["H"] if helper else [])
    cs = costs + ([1] if helper else [])
    links = [link for name, c in zip(names, cs, strict=True)
             for link in ((name, "sw", c), ("sw", name, c))]
    return Platform.build({**dict.fromkeys(names, 1), "sw": 0}, links,
                          node_port_models={"sw": "multiport"}, routers=["sw"])


def test_switch_star_reaches_the_gossip_bound() -> None:
    """Four processors behind a switch: 4 receptions per time unit, 6 an instance."""
    platform = _switch_star([1, 1, 1, 1])
    op = Operation(ALLREDUCE, participants=("P0", "P1", "P2", "P3")).resolve(platform)
    cap, how = gossip_cap(platform, op) or (None, "")
    assert cap == F(2, 3)
    assert "2g - 2 = 6 messages into its g = 4 groups" in how
    assert packing_optimum(platform, op.participants) == pytest.approx(2 / 3, rel=1e-7)


@pytest.mark.parametrize(("costs", "helper"), [
    ([1, 2, 3], False), ([1, 1, 2], True), ([2, 1, 1, 3], False)])
def test_no_structure_packing_beats_the_gossip_bound(costs: list[int], helper: bool) -> None:
    """The independent optimum stays below the cap and below the relaxation with its rows."""
    platform = _switch_star(costs, helper=helper)
    parts = tuple(f"P{i}" for i in range(len(costs)))
    op = Operation(ALLREDUCE, participants=parts).resolve(platform)
    found = gossip_cap(platform, op)
    assert found is not None
    ours = packing_optimum(platform, parts)
    assert ours <= float(found[0]) + 1e-9
    model = build_allreduce_bound_model(platform, op)
    assert any(row.name.startswith("gossip") for row in model.rows)
    assert ours <= solve_float(model).x[model.objective] + 1e-9


def test_islands_behind_slow_links() -> None:
    """Two islands of two processors, joined by one slow pair of links: the islands'
    partition gives 2 entries an instance over links carrying 1/4 each way."""
    links = [("A", "B", 1), ("B", "A", 1), ("C", "D", 1), ("D", "C", 1),
             ("B", "C", 4), ("C", "B", 4)]
    platform = Platform.build(["A", "B", "C", "D"], links)
    op = Operation(ALLREDUCE).resolve(platform)
    names = {p.name for p in gossip_partitions(platform, op)}
    assert names == {"every processor alone", "the islands joined by links of cost below 4"}
    cap, how = gossip_cap(platform, op) or (None, "")
    # alone: 1 + 1 + 1 + 1 received per time unit over 6; islands: 1/4 into each over 2
    assert cap == F(1, 4)
    assert "islands" in how


def _plan_and_replay(platform: Platform, periods: int) -> object:
    op = Operation(ALLREDUCE).resolve(platform)
    result = steady_state(platform, op, max_events=3_000)
    assert result.status == "ok", result.message
    horizon = result.period * periods
    report = replay(result.schedule, horizon=horizon)
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    assert report.completed <= result.throughput_bound * horizon
    assert_no_planner_beats(platform, op, result.throughput_bound, skip=("lp", "lp-naive"))
    return result


def test_fat_tree_is_exact_by_the_gossip_bound() -> None:
    """16 hosts, one link each: reduce then broadcast reaches 16/30 (it was [8/15, 15/22])."""
    result = _plan_and_replay(fat_tree_platform(4), periods=3)
    assert result.throughput_bound == F(8, 15)
    assert result.message == ""
    assert "optimal throughput 8/15 exact (gossip bound), certified by the gossip bound" \
        in result.notes


def test_fat_tree_with_slow_aggregation_links_is_exact_by_its_islands() -> None:
    """Edge switches and their two hosts behind two links of bandwidth 1/2: 8 islands,
    14 entries an instance, 8 per time unit: 4/7 (it was [4/7, 1])."""
    result = _plan_and_replay(fat_tree_platform(4, host=2, aggregation="1/2"), periods=3)
    assert result.throughput_bound == F(4, 7)
    assert result.message == ""
    assert any("the islands joined by links of cost below 1" in note for note in result.notes)


def test_one_port_fat_tree_rows_narrow_the_interval() -> None:
    """With one-port switches the cap does not meet the schedule; the rows in the
    restricted relaxation bring its upper end from 1/4 to 8/37."""
    platform = fat_tree_platform(4, port_model="bidirectional")
    result = steady_state(platform, Operation(ALLREDUCE).resolve(platform), max_events=3_000)
    assert result.status == "ok"
    assert result.throughput_bound == F(8, 37)
    assert "certified interval [4/19, 8/37]" in result.message


@st.composite
def _switched_platforms(draw: st.DrawFn) -> tuple[Platform, tuple[str, ...]]:
    """Three or four participants, maybe a helper processor, behind one or two switches
    (multiport or one-port), some direct links; costs 1..4 each way."""
    n = draw(st.integers(3, 4))
    names = [f"P{i}" for i in range(n)] + (["H"] if draw(st.booleans()) else [])
    switches = ["s0", "s1"][:draw(st.integers(1, 2))]
    cost = st.integers(1, 4)
    links = []
    for i, name in enumerate(names):
        sw = switches[i % len(switches)]
        links += [(name, sw, draw(cost)), (sw, name, draw(cost))]
    if len(switches) == 2:
        links += [("s0", "s1", draw(cost)), ("s1", "s0", draw(cost))]
    if draw(st.booleans()):
        links += [("P0", "P1", draw(cost)), ("P1", "P0", draw(cost))]
    port = draw(st.sampled_from(["multiport", "bidirectional"]))
    compute = {name: draw(st.integers(0, 2)) for name in names}
    platform = Platform.build({**compute, **dict.fromkeys(switches, 0)}, links,
                              node_port_models=dict.fromkeys(switches, port), routers=switches)
    return platform, tuple(names[:n])


@settings(max_examples=12, deadline=None, derandomize=True)
@given(_switched_platforms())
def test_no_packing_beats_the_gossip_bound_on_switched_platforms(
        case: tuple[Platform, tuple[str, ...]]) -> None:
    """The independent optimum (column generation over instance structures, MILP
    pricing, none of the planner's models) never exceeds the gossip cap."""
    platform, parts = case
    op = Operation(ALLREDUCE, participants=parts).resolve(platform)
    found = gossip_cap(platform, op)
    assert found is not None
    assert packing_optimum(platform, parts) <= float(found[0]) + 1e-9
