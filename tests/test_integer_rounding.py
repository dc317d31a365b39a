"""The fixed period's integer rounding (:mod:`portsim.planners.lp._integer_rounding`).

Checked against a brute force over every rounding of small random instances,
and end to end on a fabric whose greedy rounding falls short of the bound.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from random_cases import operation_for, random_multiport_platform

from portsim.planners.lp import steady_state
from portsim.planners.lp._integer_rounding import shortest_period
from portsim.scenarios.generators import dgx_a100_platform
from portsim.simulator import Operation, OperationKind, replay


def _compositions(n: int, parts: int):
    """Every way to write ``n`` as an ordered sum of ``parts`` integers >= 0."""
    for cuts in itertools.combinations(range(n + parts - 1), parts - 1):
        bounds = (-1, *cuts, n + parts - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(parts))


def _brute_force(loads, capacity, scale, operations, n, max_events):
    """The least period over every rounding (each group's counts summing to ``n``)."""
    best = None
    for choice in itertools.product(*(_compositions(n, len(row)) for row in loads)):
        events = sum(k * o for counts, ops in zip(choice, operations, strict=True)
                     for k, o in zip(counts, ops, strict=True))
        if events > max_events:
            continue
        used: dict[object, int] = {}
        for counts, row in zip(choice, loads, strict=True):
            for k, load in zip(counts, row, strict=True):
                for r, a in load.items():
                    used[r] = used.get(r, 0) + k * a
        period = max(Fraction(u, scale) / capacity.get(r, 1) for r, u in used.items())
        if best is None or period < best:
            best = period
    return best


def _instance(rng: random.Random):
    resources = [("send", "A"), ("send", "B"), ("receive", "C"), ("link", "AC"), ("link", "BC"),
                 ("cpu", "C")]
    capacity = {r: Fraction(rng.choice([1, 1, 2])) for r in resources[:3]}
    loads = []
    operations = []
    for _ in range(rng.randint(1, 3)):
        row, ops = [], []
        for _ in range(rng.randint(1, 3)):
            used = rng.sample(resources, rng.randint(1, 4))
            row.append({r: rng.randint(1, 9) for r in used})
            ops.append(rng.randint(1, 5))
        loads.append(row)
        operations.append(ops)
    return loads, capacity, rng.choice([1, 2, 3]), operations


@pytest.mark.parametrize("seed", range(60))
def test_the_integer_rounding_is_the_least_period_of_a_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    loads, capacity, scale, operations = _instance(rng)
    n = rng.randint(1, 4)
    max_events = rng.choice([10**6, n * sum(min(ops) for ops in operations) + rng.randint(0, 6)])
    best = _brute_force(loads, capacity, scale, operations, n, max_events)
    found = shortest_period(loads, capacity, scale, operations, n, max_events)
    assert best is not None  # the fewest operations of each group always fit
    assert found is not None
    assert found.period == best
    assert found.instances == n
    assert all(sum(row) == n for row in found.counts)
    assert found.events == sum(k * o for row, ops in zip(found.counts, operations, strict=True)
                               for k, o in zip(row, ops, strict=True)) <= max_events


@pytest.mark.parametrize("ticks", [1, 10**8, 10**9, Fraction(1, 10**8)])
def test_the_least_period_does_not_depend_on_the_time_unit(ticks: int | Fraction) -> None:
    """Three units of 1, 2 and 3 time units on links of their own, 11
    instances: by hand k = 6, 3, 2 in the period 6 (at 5 they carry 5 + 2 +
    1 = 8).  In units of 10^-8 (busy times of 10^-8 to 3·10^-8, messages of
    a few bytes on GB/s), HiGHS, near its tolerances, put all 11 on the
    slowest unit: the period 33 (times 10^-8) instead of 6."""
    loads = [[{("link", i): i + 1} for i in range(3)]]
    if isinstance(ticks, int):  # busy times i + 1 ticks of 1 / ticks
        found = shortest_period(loads, {}, ticks, [[1, 1, 1]], 11, 100)
        unit = Fraction(1, ticks)
    else:  # long times: i + 1 of 10^8 time units each
        loads = [[{r: a * ticks.denominator for r, a in load.items()} for load in loads[0]]]
        found = shortest_period(loads, {}, 1, [[1, 1, 1]], 11, 100)
        unit = Fraction(ticks.denominator)
    assert found is not None
    assert found.period == 6 * unit
    assert found.counts == ((6, 3, 2),)


@pytest.mark.parametrize("seed", range(20))
def test_tiny_busy_times_round_as_the_brute_force_does(seed: int) -> None:
    """The brute force's least period on random instances whose busy times are
    10^-8 of what they are in the test above (ticks of 10^-8 / scale)."""
    rng = random.Random(seed)
    loads, capacity, scale, operations = _instance(rng)
    scale *= 10**8
    n = rng.randint(1, 4)
    best = _brute_force(loads, capacity, scale, operations, n, 10**6)
    found = shortest_period(loads, capacity, scale, operations, n, 10**6)
    assert best is not None
    assert found is not None
    assert found.period == best


def test_no_rounding_within_the_cap_is_none() -> None:
    loads = [[{("link", "AB"): 1}], [{("link", "AB"): 1}]]
    assert shortest_period(loads, {}, 1, [[3], [3]], 2, 11) is None  # 12 operations
    found = shortest_period(loads, {}, 1, [[3], [3]], 2, 12)
    assert found is not None
    assert found.period == 4


def test_an_allgather_over_four_dgx_a100_servers_reaches_its_bound_in_a_fixed_period() -> None:
    # 32 GPUs, 64 trees; at the 20,000 events of the default cap the greedy
    # rounding carried 300/37 (period 37/20, 15 instances) of the bound 25/3
    # (each GPU receives 31 messages; a server's 8 NICs at 25 take 8 x 25 / 24
    # of the other servers' messages a time unit).  The integer program's 15
    # instances fit the period 9/5: 15 / (9/5) = 25/3, the bound itself.
    platform = dgx_a100_platform(4)
    operation = Operation(OperationKind.ALLGATHER).resolve(platform)
    with pytest.warns(UserWarning, match="chosen by an integer program"):
        result = steady_state(platform, operation)
    assert result.throughput_bound == Fraction(25, 3)
    assert result.period == Fraction(9, 5)
    assert result.achieved_throughput == Fraction(25, 3)
    assert result.schedule is not None
    assert result.schedule.instances_per_period == 15
    assert len(result.schedule.events) <= 20_000
    assert replay(result.schedule).feasible


_KINDS = (OperationKind.SCATTER, OperationKind.BROADCAST, OperationKind.ALLGATHER,
          OperationKind.REDUCE, OperationKind.ALLTOALL)


@pytest.mark.filterwarnings("ignore:the exact period")
@pytest.mark.filterwarnings("ignore:the fixed period")
@pytest.mark.parametrize("seed", range(24))
def test_cap_forced_fixed_periods_replay_feasible_and_never_beat_the_bound(seed: int) -> None:
    """Random platforms (bidirectional, ``multiport:2``, ``multiport``), five
    operations, a ``max_events`` low enough to force a fixed period: whichever
    rounding is chosen (the integer program's or the greedy's), the schedule
    replays without a violation, carries ``instances / period`` and never more
    than the exact throughput.  The integer program is chosen in some of them."""
    rng = random.Random(seed)
    kind = _KINDS[seed % len(_KINDS)]
    model = random_multiport_platform(rng.randint(4, 6), seed, compute=(0, 3))
    operation = operation_for(kind, model, seed)
    exact = steady_state(model, operation)
    assert exact.is_ok, exact.message
    assert exact.schedule is not None
    cap = max(2, len(exact.schedule.events) // rng.randint(3, 12))
    result = steady_state(model, operation, max_events=cap)
    assert result.is_ok, result.message
    assert result.throughput_bound == exact.throughput_bound
    assert result.schedule is not None
    assert result.period is not None
    n = result.schedule.instances_per_period
    assert result.achieved_throughput == Fraction(n) / result.period
    assert result.achieved_throughput <= exact.throughput_bound
    report = replay(result.schedule, horizon=result.period * 6)
    assert report.violations == ()


def test_the_integer_rounding_never_ends_the_call_at_the_deadline() -> None:
    """Two targets served by two paths each (direct, or through the other target),
    half of the instances each, 3 operations an instance, a cap of 10: the most
    instances a period holds is 3.  Without a deadline the integer program sends
    them all direct in the period 3 (each direct link busy 3 x 1: 1 a time unit,
    the weights' own throughput), where the greedy carried 4 in the period 5;
    with a deadline already past, or less than 5 s away, it is skipped, and
    nothing is raised."""
    from portsim.planners.lp._periodic import SendTask, Unit, _Rounding
    from portsim.planners.lp._solve import Deadline
    from portsim.simulator import Platform
    from portsim.simulator.items import Item

    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1), ("A", "B", 1),
                                                ("B", "A", 1)], port_model="multiport")
    a, b = Item.message("A"), Item.message("B")
    half = Fraction(1, 2)
    groups = [[Unit(half, (SendTask("S", "A", a, 0),)),
               Unit(half, (SendTask("S", "B", a, 0), SendTask("B", "A", a, 1)))],
              [Unit(half, (SendTask("S", "B", b, 0),)),
               Unit(half, (SendTask("S", "A", b, 0), SendTask("A", "B", b, 1)))]]
    rounding = _Rounding(platform, groups, Fraction(1))
    start = Fraction(5)
    assert rounding.counts(start, 10)[1] == 4  # the greedy's, to beat: 4 instances in 5
    found = rounding.integer(Fraction(1), 10, start, Deadline.after(None))
    assert found is not None
    assert (found.period, found.instances, found.events) == (Fraction(3), 3, 6)
    assert found.counts == ((3, 0), (3, 0))
    assert rounding.integer(Fraction(1), 10, start, Deadline.after(0)) is None
    # nor with less than INTEGER_MIN_SECONDS left (the schedule's build must fit)
    assert rounding.integer(Fraction(1), 10, start, Deadline.after(2)) is None
    assert rounding.integer(Fraction(1), 10, start, Deadline.after(600)) == found
