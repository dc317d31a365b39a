"""The ``lp`` allreduce at scale: the split of step 2's dual is sized before it runs.

From ``ROOTED_FROM`` participants the upper bound that certifies step 2 may
come from the split of its exact dual among the destinations
(``split_bound``), whose price arrays hold one cell per destination and shared
operation: 2.1 billion at 64 ranks on a complete platform.  Above
``SPLIT_MAX_CELLS`` (``SPLIT_MAX_CELLS_WITH_TIME_LIMIT`` with a ``time_limit``)
it is not attempted; the result must say so and stay a certified interval:
its upper end at least what a feasible schedule achieves.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

import portsim.planners.lp._allreduce as allreduce_module
from portsim.planners.lp import steady_state
from portsim.planners.lp._allreduce_columns import _Operations
from portsim.planners.lp._driver import DEFAULT_TIME_LIMIT
from portsim.planners.lp._tree_pricing import TreeSpace
from portsim.planners.msccl.generators import ring_allreduce_xml
from portsim.planners.ring import ring_collective
from portsim.scenarios.bounds import lp_bound
from portsim.scenarios.generators import (
    complete_platform,
    dgx_a100_platform,
    mi250_platform,
    random_platform,
)
from portsim.scenarios.msccl import validate_msccl
from portsim.simulator import Operation, OperationKind, Platform, replay
from portsim.simulator.engine import replay_series
from portsim.simulator.numbers import format_rational

ALLREDUCE = OperationKind.ALLREDUCE


@pytest.mark.parametrize("platform", [
    complete_platform(5),
    random_platform(6, 3, c=(1, 10), compute=(0, 3), seed=1),
    dgx_a100_platform(1),   # routers (the NVSwitch, the NICs) hold tasks' cells too
], ids=["complete", "random", "dgx"])
def test_the_size_is_that_of_the_split_s_own_arrays(platform: Platform) -> None:
    """The count made before allocating equals the split's own indexing (``_Operations``)."""
    op = Operation(ALLREDUCE).resolve(platform)
    space = TreeSpace.of(platform, replace(op, target=op.participants[0]))
    n = len(op.participants)
    ops = _Operations(space, n).n_ops
    assert allreduce_module._split_cells(platform, op) == (ops, n * ops)


def test_the_limits_keep_32_ranks_and_skip_40_and_64_by_default() -> None:
    """The measured sizes of the module notes: N = 32 (1.2 GiB, 46 s) runs, N = 40 (2.7
    GiB, 138 s) and N = 64 (15 GiB) do not without a time_limit; 40 does with one."""
    def cells(n: int) -> int:
        p = complete_platform(n)
        return allreduce_module._split_cells(p, Operation(ALLREDUCE).resolve(p))[1]

    assert cells(32) == 32 * (32 * 32 * 32 * 31 + 32 ** 4) == 66_060_288
    assert cells(32) <= allreduce_module.SPLIT_MAX_CELLS < cells(40) == 202_240_000
    assert cells(40) <= allreduce_module.SPLIT_MAX_CELLS_WITH_TIME_LIMIT < cells(64)


def _ring_throughput(platform: Platform, op: Operation) -> Any:
    """The rate of the ring planner's allreduce run back to back (engine replay)."""
    ring = ring_collective(platform, op)
    assert ring.status == "ok", ring.message
    report = replay(ring.schedule)
    assert report.feasible
    assert report.complete
    series = replay_series(ring.schedule, report.makespan * 20)
    return series.completed / series.horizon


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize(("n", "degree", "seed"), [(6, 3, 0), (7, 6, 1), (9, 8, 0)])
def test_above_the_limit_the_split_is_skipped_and_said(
        monkeypatch: pytest.MonkeyPatch, n: int, degree: int, seed: int) -> None:
    """Above the limit (here 0 cells) ``split_bound`` is never called, a note gives the size
    and the way to get it, and the upper end still bounds feasible schedules: the ``lp``'s
    own, replayed clean, and the ring's, measured by the engine."""
    platform = random_platform(n, degree, c=(1, 10), compute=(0, 3), seed=seed)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)  # cheap bounds only
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS", 0)

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("split_bound called above SPLIT_MAX_CELLS")

    monkeypatch.setattr(allreduce_module, "split_bound", refused)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    _, cells = allreduce_module._split_cells(platform, op)
    assert result.achieved_throughput is not None
    # on these platforms the cheap caps alone leave an interval (measured)
    assert result.throughput_bound > result.achieved_throughput
    assert "certified interval" in result.message
    skipped = [note for note in result.notes if note.startswith("split bound")]
    assert len(skipped) == 1
    assert f"{cells:,} price cells" in skipped[0]
    assert "not attempted" in skipped[0]
    assert "with one, it runs up to" in skipped[0]
    upper = result.throughput_bound
    assert upper >= result.achieved_throughput
    report = replay(result.schedule, horizon=result.period * 20)
    assert report.violations == (), [str(v) for v in report.violations[:3]]
    assert upper >= _ring_throughput(platform, op)


@pytest.mark.filterwarnings("ignore:the exact period")
def test_a_time_limit_lifts_the_default_limit_not_the_memory_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a ``time_limit`` the split runs up to SPLIT_MAX_CELLS_WITH_TIME_LIMIT, and is
    skipped above it, the note saying that a time limit does not lift it."""
    platform = random_platform(6, 3, c=(1, 10), compute=(0, 3), seed=0)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_WITH_TIME_LIMIT", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_WITH_TIME_LIMIT", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_WORK", 1)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS", 0)
    calls: list[int] = []
    real = allreduce_module.split_bound

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(allreduce_module, "split_bound", counted)
    ran = steady_state(platform, op, time_limit=120)
    assert ran.status == "ok"
    assert calls == [1]
    assert not any(note.startswith("split bound") for note in ran.notes)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS_WITH_TIME_LIMIT", 0)
    skipped = steady_state(platform, op, time_limit=120)
    assert skipped.status == "ok"
    assert calls == [1]
    assert skipped.throughput_bound >= ran.throughput_bound >= ran.achieved_throughput
    assert skipped.throughput_bound > skipped.achieved_throughput
    assert any(note.startswith("split bound") and "even with a time_limit" in note
               for note in skipped.notes)


@pytest.mark.filterwarnings("ignore:the exact period")
def test_the_bound_others_read_says_it_is_an_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """``lp_bound`` (what ``validate`` compares with) carries the interval and the skipped
    split, and ``validate`` of an MSCCL ring allreduce says them; a proven optimum has none."""
    platform = random_platform(6, 5, c=(1, 10), compute=(0, 3), seed=4)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS", 0)
    found = lp_bound(platform, op)
    result = steady_state(platform, op)
    assert found.bound == result.throughput_bound > result.achieved_throughput
    assert found.caveat.startswith("certified interval [")
    assert "split bound" in found.caveat
    assert "not attempted" in found.caveat
    verdict = validate_msccl(ring_allreduce_xml(6), platform)
    assert verdict.correct
    assert "not proven optimal, the lp says: certified interval [" in verdict.lp_note
    assert verdict.ratio_to_lp_bound is not None
    assert verdict.ratio_to_lp_bound <= 1
    complete = complete_platform(6, c=1, compute=1)
    broadcast = Operation(OperationKind.BROADCAST, source="P0").resolve(complete)
    assert lp_bound(complete, broadcast).caveat == ""
    assert lp_bound(complete, broadcast).bound == Fraction(1)  # one message into each node


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.parametrize("seconds", [0.0, 0.5])
def test_a_relaxation_out_of_its_own_time_names_that_time(
        monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Without a ``time_limit`` the relaxation has RELAXATION_SECONDS (60 s) of wall
    clock; stopped there, its note said it stopped "at the time limit of 300.0 s (the
    default time_limit)", a limit the call never reached (a loaded machine: 64 s for
    the whole call on random_platform(10, 3, seed 2)).  It now names that time; the
    result stays the interval [step 2, the caps]."""
    platform = random_platform(6, 5, c=(1, 10), compute=(0, 3), seed=4)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS", 0)
    monkeypatch.setattr(allreduce_module, "RELAXATION_SECONDS", seconds)
    real = allreduce_module.allreduce_bound

    def slow(*args: Any, deadline: Any, **kwargs: Any) -> Any:
        while not deadline.expired:  # the relaxation outlasts its budget
            pass
        return real(*args, deadline=deadline, **kwargs)

    monkeypatch.setattr(allreduce_module, "allreduce_bound", slow)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    assert result.throughput_bound is not None
    assert result.achieved_throughput is not None
    assert result.throughput_bound > result.achieved_throughput  # the caps' interval
    [note] = [n for n in result.notes if n.startswith("relaxation (")]
    assert note.endswith(f"not finished: stopped after the {seconds:g} s it gets without "
                         f"a time_limit (set time_limit to allow longer)")
    assert f"{DEFAULT_TIME_LIMIT} s" not in note
    # what validate compares with says why the interval is wide
    assert note in lp_bound(platform, op).caveat


@pytest.mark.filterwarnings("ignore:the exact period")
def test_past_the_time_limit_no_bound_starts_and_the_error_keeps_the_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """From 9 participants with a ``time_limit``, step 2's dual check and the
    relaxation started after the deadline had passed (random_platform(12, 3, c=(1,
    10), compute=(1, 5), seed=1), time_limit 3: the relaxation's model took 1 s to
    build, the call 4.6 s), and the error said nothing of the bounds found.  Here the
    cheap bounds end past the deadline: neither runs, and the error still certifies
    what was found."""
    platform = random_platform(6, 5, c=(1, 10), compute=(0, 3), seed=4)
    op = Operation(ALLREDUCE).resolve(platform)
    monkeypatch.setattr(allreduce_module, "ROOTED_FROM", 2)
    monkeypatch.setattr(allreduce_module, "RELAXATION_MAX_VARIABLES", 0)  # big: with a limit
    monkeypatch.setattr(allreduce_module, "RESTRICTED_MAX_VARIABLES", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS", 0)
    monkeypatch.setattr(allreduce_module, "SPLIT_MAX_CELLS_WITH_TIME_LIMIT", 0)
    real = allreduce_module._cheap_upper
    found: list[Any] = []

    def slow(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        found.append((args[2].lower, result[0]))  # step 2's value, the least upper bound
        while not args[5].expired:  # the call's deadline passes meanwhile
            pass
        return result

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("started after the deadline")

    monkeypatch.setattr(allreduce_module, "_cheap_upper", slow)
    monkeypatch.setattr(allreduce_module, "_dual_check", refused)
    monkeypatch.setattr(allreduce_module, "allreduce_bound", refused)
    result = steady_state(platform, op, time_limit=1)
    assert result.status == "error"
    [(lower, upper)] = found
    assert lower < upper
    assert result.message.startswith("time limit of 1.0 s reached during the allreduce bound, "
                                     "before the periodic schedule (certified all the same: "
                                     f"no schedule beats {format_rational(upper)} (")
    assert f"reduce-then-broadcast carries {format_rational(lower)})" in result.message


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the exact period")  # a fixed period: in the notes
def test_an_mi250_allreduce_in_nanoseconds_is_no_solver_error() -> None:
    """One MI250 server in bytes and nanoseconds (xGMI links of 50 bytes per ns,
    IB ports of 16, reductions of 1000 ns), messages of 2^20 bytes: busy
    times of 2 * 10^4 a message beside rates of 10^-4, and the float master of
    the reduce-then-broadcast columns ended in HiGHS's "Unknown", an `error`
    row, where the same server in GB/s and seconds was `ok`.  The bound, by
    hand: every package (two GCDs joined by 4 xGMI links) is entered by 6
    xGMI links (the matrix of `MI250_XGMI`) and 2 IB ports, 6 * 50 + 2 * 16 =
    332 bytes per ns; an instance moves 2g - 2 = 14 messages into the g = 8
    packages, so at most 8 * 332 / (14 * 2^20) = 83/458752 allreduces per ns
    (the gossip bound; 162109375/896 per second, as in GB/s)."""
    platform = mi250_platform(xgmi=50, ib=16, compute=1000)
    op = Operation(OperationKind.ALLREDUCE, size=2**20).resolve(platform)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    bound = Fraction(8 * (6 * 50 + 2 * 16), 14 * 2**20)
    assert bound == Fraction(83, 458752)
    assert result.throughput_bound == bound
    assert result.achieved_throughput is not None
    assert 0 < result.achieved_throughput <= bound
    assert result.schedule is not None
    assert result.period is not None
    assert replay(result.schedule, horizon=result.period * 3).violations == ()
