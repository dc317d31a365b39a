"""The fixed period ``max_events`` forces does not depend on the time unit.

Scaling every time of a scenario by ``10^k`` (link costs, latencies and
compute times by ``10^k``, bandwidths by ``10^-k``) scales the steady state's
weights by ``10^-k``; the fixed period must then scale by ``10^k`` and carry
the same instances, so the throughput per scaled unit is the same.  The
candidates used to be whole multiples of the number 1 (refined by tenths), so
the same platform in seconds and in nanoseconds got grids ``10^9`` apart
relative to the period, and different throughputs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction as F
from typing import Any

import pytest

from portsim.planners.lp import _periodic, steady_state
from portsim.scenarios.generators import random_platform
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Link, Node, Platform


def _scaled(platform: Platform, k: int) -> Platform:
    """``platform`` with every time multiplied by ``10^k``."""
    s = F(10) ** k
    return Platform(tuple(replace(n, compute=n.compute * s) for n in platform.nodes),
                    tuple(replace(e, c=e.c * s, latency=e.latency * s) for e in platform.links),
                    platform.port_model)


# Six nodes in seconds, bandwidths in bytes per second (5 to 56 GB/s), compute
# times of microseconds; a broadcast of 1 MiB from P0.
_GBS = [("P0", "P1", 29), ("P0", "P3", 6), ("P0", "P5", 43), ("P1", "P2", 33),
        ("P1", "P3", 56), ("P1", "P4", 11), ("P2", "P0", 6), ("P2", "P1", 5),
        ("P2", "P4", 18), ("P3", "P1", 53), ("P3", "P2", 36), ("P3", "P4", 27),
        ("P3", "P5", 19), ("P4", "P3", 40), ("P5", "P0", 45), ("P5", "P3", 26)]
_MICROSECONDS = {"P0": 3, "P1": 2, "P2": 5, "P3": 2, "P4": 8, "P5": 8}


def _six_nodes(k: int) -> Platform:
    """The platform above in units of ``10^-k`` seconds (k = 3: ms, k = 9: ns)."""
    s = F(10) ** k
    nodes = tuple(Node(i, F(t, 10**6) * s) for i, t in _MICROSECONDS.items())
    links = tuple(Link.of_bandwidth(a, b, F(gb * 10**9) / s) for a, b, gb in _GBS)
    return Platform(nodes, links, "bidirectional")


@pytest.mark.parametrize("k", [0, 3, 9])
def test_a_broadcast_in_seconds_milliseconds_and_nanoseconds_gets_one_fixed_period(
        k: int) -> None:
    """At ``max_events: 1000`` the exact period and the shortest whole one are over the
    cap, so the period is a fixed one.  Before, it was 29696/3515625 s (s), 103/20 ms
    and 8317567 ns, carrying 87890625/3712, 2440000/103 and 197000000000/8317567
    broadcasts a second.  Now the grid is 10^-5 s in every unit (the power of ten
    below the 4.2·10^-5 s an instance takes at the bound): 26/3125 s, 8320000 ns,
    197 instances, 197 / (26/3125) = 615625/26 a second in all three."""
    s = F(10) ** k
    operation = Operation(OperationKind.BROADCAST, source="P0", size=F(2**20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = steady_state(_six_nodes(k), operation, max_events=1000)
    assert result.status == "ok"
    assert result.throughput_bound * s == F(35525390625, 1498624)
    assert any(n.startswith("fixed period") for n in result.notes)
    assert result.period is not None
    assert result.schedule is not None
    assert result.period / s == F(26, 3125)
    assert result.schedule.instances_per_period == 197
    assert result.achieved_throughput is not None
    assert result.achieved_throughput * s == F(197) / F(26, 3125) == F(615625, 26)


_PLATFORMS = [(seed, model) for seed in (1, 2, 3) for model in ("bidirectional", "multiport:2")]
_OPERATIONS = [
    Operation(OperationKind.BROADCAST, source="P0"),
    Operation(OperationKind.SCATTER, source="P0"),
    Operation(OperationKind.REDUCE, target="P0"),
    Operation(OperationKind.ALLGATHER),
]


def _weighted_units(platform: Platform, operation: Operation, cap: int,
                    monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """The arguments ``lp`` hands to the period's choice (its weighted paths and trees)."""
    seen: list[tuple[Any, ...]] = []
    original = _periodic._choose_period

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((args, kwargs))
        return original(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(_periodic, "_choose_period", spy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            steady_state(platform, operation.resolve(platform), max_events=cap)
    assert seen
    return seen[0]


def _choice(platform: Platform, groups: Sequence[Sequence[_periodic.Unit]],
            throughput: F, size: F, cap: int, kwargs: dict[str, Any],
            k: int) -> tuple[bool, F, int, F, tuple[tuple[int, ...], ...]]:
    """The period chosen for the units with every time scaled by ``10^k``, back in the
    unscaled unit: exact or not, period, instances, throughput, counts."""
    s = F(10) ** k
    scaled_groups = [[replace(u, weight=u.weight / s) for u in group] for group in groups]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = _periodic._choose_period(_scaled(platform, k), scaled_groups, throughput / s,
                                          size, None, cap, **kwargs)
    return (chosen.exact, chosen.period / s, chosen.instances, chosen.throughput * s,
            chosen.counts)


@pytest.mark.parametrize(("seed", "model"), _PLATFORMS)
@pytest.mark.parametrize("operation", _OPERATIONS, ids=lambda o: str(o.kind))
def test_the_fixed_period_scales_with_the_time_unit(
        seed: int, model: str, operation: Operation, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small random platforms (5 nodes, costs 1/7 to 9), ``max_events: 60``: the units
    ``lp`` weighs, held fixed, and every time scaled by 10^k for k in -6, -3, 3, 9:
    wherever the period is a fixed one, it is 10^k times the unscaled one, with the
    same instances of every path and tree (so the same throughput per unit); where
    the exact one fits the cap, every scale carries the exact throughput."""
    platform = random_platform(5, 2, c=(F(1, 7), 9), compute=(F(1, 3), 2), seed=seed,
                               port_model=model)
    cap = 60
    (plat, groups, throughput, size, fixed, _), kwargs = _weighted_units(
        platform, operation, cap, monkeypatch)
    assert fixed is None
    kwargs = {key: v for key, v in kwargs.items() if key == "round_up"}
    base = _choice(plat, groups, throughput, size, cap, kwargs, 0)
    for k in (-6, -3, 3, 9):
        got = _choice(plat, groups, throughput, size, cap, kwargs, k)
        if base[0]:
            # The exact period is an lcm of whole time units: in a coarser
            # unit it is longer and may be over the cap, where the shortest
            # period of whole instances replaces it, with no loss.
            assert got[3] == base[3] == throughput, k
        else:
            assert got == base, k
