"""A fixed period's instances chosen by an integer program (HiGHS), not unit by unit.

When ``max_events`` forces a fixed period, each weighted path or tree (a
*unit*) of the steady state carries a whole number of instances per period.
Proposition 4 (RR-4872, section 4.6) rounds every unit down alone, and the
greedy of :mod:`portsim.planners.lp._periodic` raises them one instance a
round; with few instances per period against many units (an allgather over
8 DGX A100 servers: 124 trees, 3 instances a period within 20,000 events)
both lose much (there 90/29 of the bound 25/7, 0.87).  The best rounding for
``n`` instances a period is the integer program

    minimise T  subject to  Σ_u k_u = n  for every group,
                            Σ_u load_r(u) k_u <= capacity_r · T  for every resource r,
                            Σ_u operations(u) k_u <= max_events,   k_u >= 0 integer,

whose resources are the rows a period's b-matchings need (every node's sends
and receives within its ports, every link and CPU busy at most ``T``).  Its
linear relaxation is met by ``k_u = n · weight_u / throughput`` at ``T = n /
throughput``, so no rounding beats the steady state, and HiGHS's heuristics at
the root of its branch and bound close most of the gap (the allgather above:
75/22, 0.95).

Why a program of our own and not a library's rounding: none packs weighted
trees into integer counts under port rows; the program is four rows' kinds
over the units, solved by :func:`scipy.optimize.milp` (HiGHS), as the
allreduce structures' pricing is.

The work is bounded by branch-and-bound nodes (:data:`NODE_LIMIT`), not by a
clock, so a scenario gets the same schedule on every machine; the period is
then computed exactly from the integer counts.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from portsim.simulator.numbers import decimal_exponent

__all__ = ["MAX_NONZEROS", "NODE_LIMIT", "IntegerRounding", "shortest_period"]

NODE_LIMIT = 1
"""Branch-and-bound nodes HiGHS may spend on one program (the best solution found
within them is kept): the root alone.  Its heuristics do the work: on the
allgathers over 4, 8 and 16 DGX A100 servers, the broadcasts over 8 and 16
and the broadcast over an MI250 node, 1 and 10 nodes give the same roundings,
10 taking twice the time (12 s against 5.4 s for the broadcast over 16
servers, its three programs of 113 trees and 121-123 instances), 200 nodes
one rounding 0.2% better at five times the time."""

MAX_NONZEROS = 400_000
"""Programs with more unit-resource loads than this are not built (the greedy's
rounding stays)."""


@dataclass(frozen=True)
class IntegerRounding:
    """A fixed period and the instances each unit carries in it.

    Attributes
    ----------
    period:
        The shortest period holding ``counts`` (exact: the largest resource's
        load over its capacity).
    counts:
        Per group, per unit: instances per period; every group's sum is
        ``instances``.
    instances:
        Instances per period.
    events:
        Operations per period.
    """

    period: Fraction
    counts: tuple[tuple[int, ...], ...]
    instances: int
    events: int


def shortest_period(loads: Sequence[Sequence[Mapping[Any, int]]],
                    capacity: Mapping[Any, Fraction], scale: int,
                    operations: Sequence[Sequence[int]], instances: int,
                    max_events: int, *, time_limit: float | None = None
                    ) -> IntegerRounding | None:
    """The shortest fixed period in which the units carry ``instances`` per period.

    Parameters
    ----------
    loads:
        Per group, per unit: the busy time of one instance on each resource,
        in integer ticks of ``1 / scale``.
    capacity:
        Resources that run several operations at once (a node's send or
        receive ports): how many; every other resource runs one.
    scale:
        Ticks per time unit of ``loads``.
    operations:
        Per group, per unit: the operations of one instance.
    instances:
        Instances per period (each group's counts sum to it).
    max_events:
        Most operations in the period.
    time_limit:
        Seconds HiGHS may take at most (the planner's deadline); the nodes'
        limit :data:`NODE_LIMIT` binds first on every case measured.

    Returns
    -------
    IntegerRounding or None
        ``None`` when no rounding holds ``instances`` within ``max_events``,
        HiGHS found none within its limits, or the program would exceed
        :data:`MAX_NONZEROS`.
    """
    units = [(g, i) for g, row in enumerate(loads) for i in range(len(row))]
    nonzeros = sum(len(load) for row in loads for load in row)
    if not units or instances < 1 or nonzeros > MAX_NONZEROS:
        return None
    resources: dict[Hashable, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    # Busy times as floats in a time unit of their own: the power of ten at or
    # above the longest, so that it lies in (1/10, 1].  The ticks' scale may be
    # far beyond a float (costs 1/p for many primes p: a denominator of 1,200
    # bits), the times themselves are not; each is divided exactly and rounded
    # once.  Times near HiGHS's tolerances lost the rounding: messages of size
    # 10^-6 on an MI250's links (busy times of 5·10^-9 to 2.5·10^-7) got none
    # better than the greedy's, 0.993 of the bound, where size 1 gets 0.998.
    # A power of ten, not of two: the same platform in seconds and in
    # nanoseconds gives HiGHS the same floats, so the same counts (with a
    # power of two near the longest, an MI250 broadcast carried 1286
    # instances in its period in one unit and 1285 in units 10^9 times
    # longer).  The period is computed exactly from the counts below, whatever
    # the unit.  A time beyond a float leaves the greedy's rounding.
    longest = max((a for row in loads for load in row for a in load.values()), default=0)
    exponent = -decimal_exponent(Fraction(scale, longest)) if longest > 0 else 0
    over = scale * 10**max(exponent, 0)  # time / 10^exponent = a · times / over
    times = 10**max(-exponent, 0)
    try:
        for j, (g, i) in enumerate(units):
            for r, a in loads[g][i].items():
                rows.append(resources.setdefault(r, len(resources)))
                cols.append(j)
                values.append(a * times / over)  # int / int: rounded once, even beyond 2**1024
    except OverflowError:
        return None
    t = len(units)  # the column of the period
    for r, k in resources.items():
        rows.append(k)
        cols.append(t)
        values.append(-float(capacity.get(r, 1)))
    shape = (len(resources), t + 1)
    busy = sp.csr_array((values, (rows, cols)), shape=shape)
    groups = sp.csr_array((np.ones(t), ([g for g, _ in units], np.arange(t))),
                          shape=(len(loads), t + 1))
    ops = np.array([float(operations[g][i]) for g, i in units] + [0.0])
    cost = np.zeros(t + 1)
    cost[t] = 1.0
    integrality = np.ones(t + 1)
    integrality[t] = 0
    options: dict[str, float | int | bool] = {"node_limit": NODE_LIMIT, "disp": False}
    if time_limit is not None:
        options["time_limit"] = max(time_limit, 1e-3)
    res = milp(cost, integrality=integrality,
               constraints=[LinearConstraint(busy, -np.inf, 0.0),
                            LinearConstraint(groups, instances, instances),
                            LinearConstraint(ops[np.newaxis, :], -np.inf, max_events)],
               bounds=Bounds(np.zeros(t + 1), np.full(t + 1, np.inf)), options=options)
    if res.x is None:
        return None
    chosen = np.rint(res.x[:t]).astype(np.int64)
    counts = [[0] * len(row) for row in loads]
    used: dict[Hashable, int] = {}
    events = 0
    for j, (g, i) in enumerate(units):
        k = int(chosen[j])
        if k:
            counts[g][i] = k
            events += k * operations[g][i]
            for r, a in loads[g][i].items():
                used[r] = used.get(r, 0) + k * a
    # HiGHS's integers are floats within its tolerance: the rounding is
    # checked in integers before it is trusted.
    if events > max_events or any(sum(row) != instances for row in counts) or not used:
        return None
    period = max(Fraction(u, scale) / capacity.get(r, 1) for r, u in used.items())
    if period <= 0:
        return None
    return IntegerRounding(period, tuple(tuple(row) for row in counts), instances, events)
