"""The ``lp`` allreduce on platforms without unidirectional nodes (issue 14, item 3).

- (a) on small random platforms mixing bidirectional, ``multiport:2`` and
  ``multiport`` nodes, every node a participant, the ``lp`` bound equals the
  best packing of allreduce structures under port sums and link rows,
  recomputed by ``tests/test_lp_allreduce_independent.py``'s own column
  generation (holding-based pricing, rows read off the port models there);
- (b) every schedule replays feasibly in strict mode and carries at least
  0.9 of its own throughput within 100 periods;
- (c) one ``dgx_a100`` server (8 GPUs, ``multiport``): the exact bound 8/7,
  that of the CPUs (seven reductions of compute time 1 per instance, eight
  GPUs), and no more (every instance needs N - 1 = 7 reductions);
- (d) the MSCCL ring allreduce gets a ratio to it.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import pytest
from random_cases import random_multiport_platform
from test_lp_allreduce_independent import packing_optimum

from portsim.planners.base import PlanResult
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_bound import build_allreduce_bound_model
from portsim.planners.lp._allreduce_packing import build_master, canonical
from portsim.planners.lp._capacity import link_row_name
from portsim.scenarios.generators import dgx_a100_platform
from portsim.scenarios.msccl import ring_allreduce_xml, validate_msccl
from portsim.simulator import Operation, OperationKind, Platform, replay

F = Fraction
ALLREDUCE = OperationKind.ALLREDUCE


def _mixed(n: int, seed: int) -> Platform:
    """A random platform with a random port model per node, at least one multi-port."""
    return random_multiport_platform(n, seed, compute=(0, 1))


def _plan(platform: Platform, max_events: int = 3_000) -> tuple[Operation, PlanResult]:
    op = Operation(ALLREDUCE).resolve(platform)
    with warnings.catch_warnings():  # the lp's notes on a fixed period
        warnings.simplefilter("ignore")
        result = steady_state(platform, op, max_events=max_events)
    assert result.status == "ok", result.message
    return op, result


def _check_replay(result: PlanResult) -> None:
    """(b): strict replay, no violation, 0.9 of the schedule's own rate at 100 periods."""
    schedule = result.schedule
    assert schedule is not None
    assert result.period is not None
    achieved = result.achieved_throughput
    assert achieved is not None
    assert achieved <= result.throughput_bound
    horizon = result.period * 100
    report = replay(schedule, horizon=horizon, mode="strict")
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    assert report.completed <= result.throughput_bound * horizon
    assert report.completed >= F(9, 10) * achieved * horizon


# -- (a) and (b): the bound against an independent packing, the schedule replayed ---------

@pytest.mark.parametrize(("n", "seed"), [
    *((3, seed) for seed in range(6)),
    *(pytest.param(4, seed, marks=pytest.mark.slow) for seed in range(4)),
    *(pytest.param(5, seed, marks=pytest.mark.slow) for seed in range(2))])
def test_bound_equals_the_independent_packing(n: int, seed: int) -> None:
    platform = _mixed(n, seed)
    op, result = _plan(platform)
    assert not any("matchings of the port graph" in note for note in result.notes)
    bound = result.throughput_bound
    assert isinstance(bound, F)
    assert result.message == "", result.message  # exact (no certified interval)
    assert packing_optimum(platform, op.participants, op.size) == pytest.approx(
        float(bound), rel=1e-7)
    _check_replay(result)


def test_a_multiport_hub_overlaps_what_one_port_serialises() -> None:
    """Three leaves around a hub H, links of cost 1, free computation.

    Each leaf receives one message per instance at least and its one link in
    is busy 1 per message: TP <= 1.  A ``multiport`` hub gathers v_0, v_1,
    v_2 on three links at once, reduces (free) and sends the result back on
    three links at once: every link busy 1 per instance, TP = 1.  A
    bidirectional hub receives three messages per instance (or a leaf
    receives two): 3/4 as the bidirectional triangle, recomputed here.
    """
    leaves = ["A", "B", "C"]
    links = [(x, "H", 1) for x in leaves] + [("H", x, 1) for x in leaves]
    one_port = Platform.build(dict.fromkeys([*leaves, "H"], 0), links)
    multi = one_port.with_port_model("multiport")
    for platform, expected in ((multi, F(1)), (multi.with_port_model("multiport:2"), None),
                               (one_port, None)):
        op, result = _plan(platform)
        independent = packing_optimum(platform, op.participants, op.size)
        if expected is not None:
            assert result.throughput_bound == expected
        assert independent == pytest.approx(float(result.throughput_bound), rel=1e-7)
        _check_replay(result)
    assert _plan(one_port)[1].throughput_bound < 1
    assert _plan(multi.with_port_model("multiport:2"))[1].throughput_bound < 1


def test_bidirectional_models_have_no_link_rows_and_multiport_ones_do() -> None:
    """The models of a bidirectional platform are the papers' (no link row, right-hand
    sides 1); on a multiport triangle, a link row per link and k = 2 on each side."""
    nodes = ["A", "B", "C"]
    one_port = Platform.build(dict.fromkeys(nodes, 1),
                              [(a, b, 1) for a in nodes for b in nodes if a != b])
    multi = one_port.with_port_model("multiport")
    for platform, link_rows in ((one_port, 0), (multi, 6)):
        op = Operation(ALLREDUCE).resolve(platform)
        structure = canonical(op, [("send", "A", "C", 0, 0), ("send", "B", "C", 1, 1),
                                   ("cons", "C", 0, 0, 1), ("cons", "C", 0, 1, 2),
                                   ("send", "C", "A", 0, 2), ("send", "C", "B", 0, 2)])
        assert structure is not None
        for model in (build_allreduce_bound_model(platform, op),
                      build_master(platform, op, [structure])):
            names = [r.name for r in model.rows if r.name.startswith("link:")]
            assert len(names) == link_rows
            ports = {r.rhs for r in model.rows if r.name in (
                "one-port send of C", "one-port receive of C", "send:C", "recv:C")}
            assert ports == ({F(1)} if link_rows == 0 else {F(2)})
            if link_rows:
                assert link_row_name(("C", "A")) in names


# -- (c) one DGX A100 server ------------------------------------------------------------

@pytest.mark.slow
def test_one_dgx_a100_server() -> None:
    """8 GPUs (compute time 1), NVSwitch, NICs and IB switches, multiport: 8/7, exact.

    Independent check: an instance needs at least N - 1 = 7 reductions of
    time 1 and only the eight GPUs compute, so TP <= 8/7 under every port
    model; 8/7 is reached (the links are far from busy at 300 and 25).
    About 20 s here.

    The exact period (2100) is over the cap of ``max_events``: the fixed
    period 7 carries 8 instances, no loss, and no shorter period holds a
    whole number of instances at 8/7.  Its replay over 100 periods is
    tests/test_lp_pipelining.py's.
    """
    platform = dgx_a100_platform(1)
    op, result = _plan(platform, max_events=20_000)
    assert op.participants == tuple(f"P{i}" for i in range(8))
    assert result.throughput_bound == F(8, 7)
    assert result.message == ""
    assert result.achieved_throughput == F(8, 7)
    assert result.period == 7


# -- (d) the MSCCL ring allreduce's ratio to it ------------------------------------------

@pytest.mark.slow
def test_msccl_ring_allreduce_has_a_ratio_to_the_lp_bound() -> None:
    """The 8-GPU NVSwitch domain of one DGX A100 (multiport, compute 1).

    The lp allreduce bound is 8/7 instances of one chunk per time unit, 1/7
    runs of the ring's 8 chunks: the CPU bound of the test above, which holds
    for commutative reductions too.  The ring takes 532/75 per run (7
    reductions of 1 and 14 ring steps GPU -> switch -> GPU of 2/300 each) and
    its series one run per 532/75: 75/76 of the bound.  About 10 s.
    """
    gpus = [f"P{i}" for i in range(8)]
    links = [(g, "nvswitch0", F(1, 300)) for g in gpus] + [
        ("nvswitch0", g, F(1, 300)) for g in gpus]
    platform = Platform.build([*gpus, "nvswitch0"], links, "multiport", routers=["nvswitch0"])
    v = validate_msccl(ring_allreduce_xml(8), platform, size=8)
    assert v.correct
    assert v.lp_bound == F(1, 7)
    assert isinstance(v.ratio_to_lp_bound, F)
    assert v.makespan == 7 + F(14 * 2, 300) == F(532, 75)
    assert v.ratio_to_lp_bound == F(75, 76) <= 1
    assert "non-commutative" in v.lp_note
