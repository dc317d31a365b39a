"""Mutation testing of the validator against an independent oracle.

Take feasible schedules (several collectives; bidirectional, unidirectional
and multi-port platforms; one-shot, multi-instance, split into parts, and
periodic with lags), shift one event or drop it, and ask two judges whether
the mutant is feasible:

- the engine (:func:`simulator.validate`, a strict SimPy replay);
- :func:`oracle_violations`, written here from SPEC.md alone with none of the
  engine's machinery: unroll the events, compute every interval with exact
  fractions, count overlaps per port and CPU, compute when every node holds
  every item (parts summed in arrival order), check every reduction by
  interval arithmetic, and check the operation completes.

Every mutant the oracle finds infeasible must be caught by the engine (the
detection rate, which must be 100%), and every mutant it finds feasible must
pass (no false alarm).  The default run checks more than 1,000 infeasible
mutants in a few seconds; ``pytest -m slow`` runs a larger variant.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_cases import operation_for

from portsim.planners.flat import FLAT_PLANNER
from portsim.planners.registry import available_planners
from portsim.scenarios.bounds import lp_bound
from portsim.scenarios.generators import complete_platform, random_platform
from portsim.simulator import (
    Compute,
    Item,
    Operation,
    OperationKind,
    Platform,
    Schedule,
    Send,
    validate,
)
from portsim.simulator.validation import schedule_throughput

F = Fraction
K = OperationKind

# ---------------------------------------------------------------------------
# the oracle
# ---------------------------------------------------------------------------

Key = tuple  # an item as the oracle sees it: ("m", nodes) | ("b",) | ("vi", lo, hi) | ("vs", set)


def item_key(item: Item, commutative: bool) -> Key:
    """The oracle's own reading of an item name (instance apart)."""
    if item.kind == "v":
        if item.ordered and not commutative:
            return ("vi", item.args[0], item.args[1])
        members = (range(item.args[0], item.args[1] + 1) if item.ordered else item.args)
        return ("vs", frozenset(members))
    if item.kind == "b":
        return ("b",)
    return ("m", tuple(item.args))


def initial_and_required(op: Operation) -> tuple[dict[str, set[Key]], dict[str, set[Key]]]:
    """SPEC.md's table: what each node holds at the start, what it must end with."""
    held: dict[str, set[Key]] = defaultdict(set)
    need: dict[str, set[Key]] = defaultdict(set)
    parts = op.participants
    full: Key = (("vs", frozenset(range(len(parts)))) if op.commutative
                 else ("vi", 0, len(parts) - 1))
    if op.kind is K.SCATTER:
        assert op.source is not None
        for t in op.targets:
            held[op.source].add(("m", (t,)))
            need[t].add(("m", (t,)))
    elif op.kind is K.BROADCAST:
        assert op.source is not None
        held[op.source].add(("b",))
        for t in op.targets:
            need[t].add(("b",))
    elif op.kind in (K.GATHER, K.ALLGATHER):
        for p in parts:
            held[p].add(("m", (p,)))
        for who in ([op.target] if op.kind is K.GATHER else parts):
            assert who is not None
            need[who].update(("m", (p,)) for p in parts)
    elif op.kind in (K.REDUCE, K.ALLREDUCE):
        for i, p in enumerate(parts):
            held[p].add(("vs", frozenset({i})) if op.commutative else ("vi", i, i))
        for who in ([op.target] if op.kind is K.REDUCE else parts):
            assert who is not None
            need[who].add(full)
    else:
        for j in op.sources:
            held[j].update(("m", (j, k)) for k in op.targets if k != j)
        for k in op.targets:
            need[k].update(("m", (j, k)) for j in op.sources if j != k)
    return held, need


def reduce_once(inputs: list[Key], commutative: bool) -> Key | None:
    """What one reduction task makes of ``inputs``, or None if it may not combine them."""
    if commutative:
        union: frozenset[int] = frozenset()
        for x in inputs:
            if x[0] != "vs" or union & x[1]:
                return None
            union |= x[1]
        return ("vs", union)
    if any(x[0] != "vi" for x in inputs):
        return None
    for left, right in itertools.pairwise(inputs):
        if left[2] + 1 != right[1]:
            return None
    return ("vi", inputs[0][1], inputs[-1][2])


@dataclass(frozen=True)
class Play:
    """One concrete play of a schedule event."""

    index: int
    instance: int
    start: Fraction
    end: Fraction


def oracle_violations(schedule: Schedule, port_model: str | None = None,
                      horizon: Fraction | None = None) -> list[str]:
    """Every rule of SPEC.md the schedule breaks, as short sentences (empty: feasible)."""
    platform = schedule.platform if port_model is None else schedule.platform.with_port_model(
        port_model)
    op = schedule.operation
    commutative = op.commutative
    problems: list[str] = []

    def duration(i: int) -> Fraction:
        e = schedule.events[i]
        if isinstance(e, Send):
            return op.size * platform.cost(e.src, e.dst) * e.part
        return platform.node(e.node).compute

    # Static rules: links exist, routers do not compute, reductions combine.
    for i, e in enumerate(schedule.events):
        if isinstance(e, Send):
            if not platform.has_link(e.src, e.dst):
                problems.append(f"event {i}: no link")
        else:
            if platform.node(e.node).router:
                problems.append(f"event {i}: a router computes")
            if len({x.instance for x in (*e.inputs, e.output)}) != 1:
                problems.append(f"event {i}: instances mixed")
            made = reduce_once([item_key(x, commutative) for x in e.inputs], commutative)
            if made is None or made != item_key(e.output, commutative):
                problems.append(f"event {i}: bad reduction")
    if problems:
        return problems
    for i in range(len(schedule.events)):
        assert duration(i) > 0, "the oracle handles positive durations only"

    # Unroll.
    plays: list[Play] = []
    if schedule.period is None:
        for i, e in enumerate(schedule.events):
            instance = e.item.instance if isinstance(e, Send) else e.output.instance
            plays.append(Play(i, instance, e.start, e.start + duration(i)))
        expected = set(schedule.instances())
    else:
        assert horizon is not None
        period, n = schedule.period, schedule.instances_per_period
        for p in range(math.ceil(horizon / period)):
            for i, e in enumerate(schedule.events):
                slot = e.item.instance if isinstance(e, Send) else e.output.instance
                instance = (p - e.lag) * n + slot
                start = p * period + e.start
                if instance >= 0 and start < horizon:
                    plays.append(Play(i, instance, start, start + duration(i)))
        # The schedule claims n instances every period: instance q*n + j of
        # every slot j < n counts when every event of its slot ends by the
        # horizon; a slot with no event, when the slowest slot's would (and
        # no earlier than the end of its period).
        ends: dict[int, Fraction] = {}
        for i, e in enumerate(schedule.events):
            slot = e.item.instance if isinstance(e, Send) else e.output.instance
            end = e.lag * period + e.start + duration(i)
            ends[slot] = max(ends.get(slot, end), end)
        slowest = max([period, *ends.values()])
        expected = {q * n + j for q in range(math.ceil(horizon / period) + 1)
                    for j in range(n) if q * period + ends.get(j, slowest) <= horizon}

    # Ports, links and CPUs: at most `capacity` intervals [start, end) at any instant.
    usage: dict[tuple[str, str], list[Play]] = defaultdict(list)
    capacity: dict[tuple[str, str], int] = {}
    for play in plays:
        e = schedule.events[play.index]
        if isinstance(e, Send):
            for node, direction in ((e.src, "out"), (e.dst, "in")):
                model = platform.port_model_of(node)
                name = "port" if model.kind.value == "unidirectional" else direction
                usage[node, name].append(play)
                # multiport without k: no limit but the links (below)
                capacity[node, name] = model.k if model.k is not None else len(plays)
            usage[e.src, f"link to {e.dst}"].append(play)  # one transfer per link
            capacity[e.src, f"link to {e.dst}"] = 1
        else:
            usage[e.node, "cpu"].append(play)
            capacity[e.node, "cpu"] = 1
    for resource, uses in usage.items():
        moments = sorted([(p.start, 1) for p in uses] + [(p.end, -1) for p in uses])
        busy = 0
        for _, change in moments:  # at equal times, ends (-1) sort before starts (+1)
            busy += change
            if busy > capacity[resource]:
                problems.append(f"{resource} over capacity")
                break

    # Items: arrivals (with parts), then each play's needs at its start.
    arrivals: dict[tuple[str, Key, int], list[tuple[Fraction, Fraction]]] = defaultdict(list)
    held0, need = initial_and_required(op)
    for instance in {play.instance for play in plays} | expected:
        for node, keys in held0.items():
            for key in keys:
                arrivals[node, key, instance].append((F(0), F(1)))
    for play in plays:
        e = schedule.events[play.index]
        if isinstance(e, Send):
            arrivals[e.dst, item_key(e.item, commutative), play.instance].append(
                (play.end, e.part))
        else:
            arrivals[e.node, item_key(e.output, commutative), play.instance].append(
                (play.end, F(1)))

    def held_from(node: str, key: Key, instance: int) -> Fraction | None:
        total = F(0)
        for when, amount in sorted(arrivals.get((node, key, instance), [])):
            total += amount
            if total >= 1:
                return when
        return None

    for play in plays:
        e = schedule.events[play.index]
        needs = ([(e.src, e.item)] if isinstance(e, Send)
                 else [(e.node, x) for x in e.inputs])
        for node, item in needs:
            since = held_from(node, item_key(item, commutative), play.instance)
            if since is None or since > play.start:
                problems.append(f"event {play.index} (instance {play.instance}): "
                                f"{node} lacks {item}")

    # Completion.
    deadline = horizon if schedule.period is not None else None
    for instance in expected:
        for node, keys in need.items():
            for key in keys:
                since = held_from(node, key, instance)
                if since is None or (deadline is not None and since > deadline):
                    problems.append(f"instance {instance}: {node} never holds {key}")
    return problems


# ---------------------------------------------------------------------------
# feasible schedules to mutate
# ---------------------------------------------------------------------------


def horizon_of(schedule: Schedule) -> Fraction | None:
    if schedule.period is None:
        return None
    return schedule.period * (max(e.lag for e in schedule.events) + 5)


def makespan_of(schedule: Schedule) -> Fraction:
    report = validate(schedule)
    assert isinstance(report.makespan, Fraction)
    return report.makespan


def split_sends(schedule: Schedule) -> Schedule:
    """Every send becomes two halves, back to back: same times, same holdings."""
    out: list[Send | Compute] = []
    for e in schedule.events:
        if isinstance(e, Send):
            d = schedule.operation.size * schedule.platform.cost(e.src, e.dst)
            half = e.part / 2
            out += [replace(e, part=half), replace(e, part=half, start=e.start + d * half)]
        else:
            out.append(e)
    return replace(schedule, events=tuple(out))


def fold(schedule: Schedule, period: Fraction, copies: int = 1,
         spacing: Fraction | None = None) -> Schedule:
    """A periodic schedule from a one-shot one of instance 0: ``copies`` copies
    ``spacing`` apart, every start folded into ``[0, period)`` with a lag."""
    out: list[Send | Compute] = []
    for j in range(copies):
        for e in schedule.events:
            lag, start = divmod(e.start + j * (spacing or 0), period)
            if isinstance(e, Send):
                out.append(replace(e, item=e.item.with_instance(j), start=start,
                                   lag=int(lag)))
            else:
                out.append(replace(e, inputs=tuple(x.with_instance(j) for x in e.inputs),
                                   output=e.output.with_instance(j), start=start,
                                   lag=int(lag)))
    return replace(schedule, events=tuple(out), period=period, instances_per_period=copies)


def tightest_fold(schedule: Schedule, copies: int = 1) -> Schedule | None:
    """The shortest period (in steps of makespan / 8) whose fold stays feasible."""
    span = makespan_of(schedule)
    for step in range(1, 8 * copies + 1):
        period = span * step / 8
        candidate = fold(schedule, period, copies, spacing=span / 2)
        if not oracle_violations(candidate, horizon=horizon_of(candidate)):
            return candidate
    return None


def commutative_tree() -> Schedule:
    """A hand-made commutative reduce of four participants on a binary tree."""
    p = complete_platform(4, c=2, compute=1, port_model="unidirectional")
    op = Operation(K.REDUCE, participants=("P0", "P1", "P2", "P3"), target="P0",
                   commutative=True).resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "P1", "dst": "P0", "item": "v{1}", "start": 0},
        {"kind": "send", "src": "P3", "dst": "P2", "item": "v{3}", "start": 0},
        {"kind": "compute", "node": "P0", "inputs": ["v{0}", "v{1}"], "output": "v{0,1}",
         "start": 2},
        {"kind": "compute", "node": "P2", "inputs": ["v{3}", "v{2}"], "output": "v{2,3}",
         "start": 2},
        {"kind": "send", "src": "P2", "dst": "P0", "item": "v{2,3}", "start": 3},
        {"kind": "compute", "node": "P0", "inputs": ["v{0,1}", "v{2,3}"],
         "output": "v{0,1,2,3}", "start": 5},
    ])


def two_slot_broadcast() -> Schedule:
    """A periodic broadcast A -> B of two instances per period, one send per slot."""
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(K.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b#1", "start": 1},
    ], period=2, instances_per_period=2)


def base_schedules(seeds: range) -> Iterator[tuple[str, Schedule]]:
    yield "commutative-tree", commutative_tree()
    yield "two-slot-broadcast", two_slot_broadcast()
    models = ["bidirectional", "unidirectional", "multiport:2"]
    for seed in seeds:
        model = models[seed % 3]
        platform = random_platform(4 + seed % 3, 2, c=(1, 4), compute=(1, 3), seed=seed,
                                   port_model=model)
        nodes = platform.processors
        for kind in (K.SCATTER, K.GATHER, K.BROADCAST, K.REDUCE):
            root = nodes[seed % len(nodes)]
            if kind in (K.SCATTER, K.BROADCAST):
                op = Operation(kind, source=root)
            else:
                op = Operation(kind, target=root)
            one_shot = FLAT_PLANNER.plan(platform, op.resolve(platform)).schedule
            assert one_shot is not None
            name = f"{kind.value}-{model}-seed{seed}"
            variant = (seed + len(kind.value)) % 4
            if variant == 0:
                yield name, one_shot
            elif variant == 1:
                yield f"{name}-parts", split_sends(one_shot)
            elif variant == 2:
                yield f"{name}-series", one_shot.repeat(2, makespan_of(one_shot))
            periodic = tightest_fold(one_shot, copies=1 + seed % 2)
            if periodic is not None:
                yield f"{name}-periodic", periodic


# ---------------------------------------------------------------------------
# mutants
# ---------------------------------------------------------------------------


def slot_of(event: Send | Compute) -> int:
    return event.item.instance if isinstance(event, Send) else event.output.instance


def mutants(schedule: Schedule) -> Iterator[tuple[str, Schedule]]:
    """Drop each event; shift each by a few amounts (keeping the schedule well formed);
    periodic: claim one more instance per period, drop every event of one slot."""
    events = schedule.events
    if schedule.period is not None:
        n = schedule.instances_per_period
        yield "one more instance per period", replace(schedule, instances_per_period=n + 1)
        for j in range(n):
            yield f"drop slot #{j}", replace(
                schedule, events=tuple(e for e in events if slot_of(e) != j))
    for i, e in enumerate(events):
        alone = [slot_of(x) for x in events].count(slot_of(e)) == 1
        how = f"drop {i} (slot #{slot_of(e)}'s only event)" if alone else f"drop {i}"
        yield how, replace(schedule, events=events[:i] + events[i + 1:])
        d = (schedule.operation.size * schedule.platform.cost(e.src, e.dst) * e.part
             if isinstance(e, Send) else schedule.platform.compute_time(e.node))
        for delta in (-d, -d / 2, F(-1, 3), F(1, 7), d / 2, d, 2 * d):
            start, lag = e.start + delta, e.lag
            if schedule.period is not None:
                shift, start = divmod(start, schedule.period)
                lag += int(shift)
            if start < 0 or lag < 0:
                continue
            moved = replace(e, start=start, lag=lag)
            yield f"shift {i} by {delta}", replace(
                schedule, events=(*events[:i], moved, *events[i + 1:]))


@dataclass
class Tally:
    infeasible: int = 0
    caught: int = 0
    feasible: int = 0
    false_alarms: int = 0


def run_campaign(seeds: range) -> tuple[Tally, list[str]]:
    tally = Tally()
    misses: list[str] = []
    bases = 0
    for name, base in base_schedules(seeds):
        bases += 1
        horizon = horizon_of(base)
        assert oracle_violations(base, horizon=horizon) == [], name
        assert validate(base, horizon=horizon).feasible, name
        for how, mutant in mutants(base):
            truth = oracle_violations(mutant, horizon=horizon)
            report = validate(mutant, horizon=horizon)
            if truth:
                tally.infeasible += 1
                tally.caught += not report.feasible
                if report.feasible:
                    misses.append(f"{name}: {how}: missed {truth[:2]}")
            else:
                tally.feasible += 1
                tally.false_alarms += not report.feasible
                if not report.feasible:
                    misses.append(f"{name}: {how}: false alarm {report.violations[0]}")
    assert bases >= 10
    return tally, misses


def report_rate(tally: Tally) -> str:
    rate = tally.caught / tally.infeasible
    return (f"mutation detection rate: {tally.caught}/{tally.infeasible} = {rate:.1%} "
            f"of infeasible mutants caught; {tally.feasible - tally.false_alarms}/"
            f"{tally.feasible} feasible mutants passed")


def test_every_infeasible_mutant_is_caught(capsys: pytest.CaptureFixture[str]) -> None:
    tally, misses = run_campaign(range(5))
    with capsys.disabled():
        print(f"\n{report_rate(tally)}")  # noqa: T201 - the figure the issue asks for
    assert misses == []
    assert tally.infeasible >= 1000
    assert tally.caught == tally.infeasible
    assert tally.false_alarms == 0


@pytest.mark.slow
def test_every_infeasible_mutant_is_caught_large(capsys: pytest.CaptureFixture[str]) -> None:
    tally, misses = run_campaign(range(5, 60))
    with capsys.disabled():
        print(f"\n{report_rate(tally)}")  # noqa: T201
    assert misses == []
    assert tally.caught == tally.infeasible
    assert tally.false_alarms == 0


# ---------------------------------------------------------------------------
# no mutant of a planner's schedule is certified above the lp bound
# ---------------------------------------------------------------------------

STRUCTURAL = ("one more instance per period", "drop slot #")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(2, 4),
       kind=st.sampled_from([K.SCATTER, K.GATHER, K.BROADCAST, K.REDUCE, K.ALLGATHER]),
       name=st.sampled_from(sorted(available_planners())),
       picks=st.lists(st.integers(0, 10**6), min_size=3, max_size=3))
def test_no_mutant_is_certified_above_the_lp_bound(seed: int, n: int, kind: OperationKind,
                                                   name: str, picks: list[int]) -> None:
    """Every registered planner's schedule, mutated (claiming more instances per
    period, losing a slot's events, or one event dropped or shifted), is either
    rejected or certified at a throughput no higher than the lp optimum."""
    platform = random_platform(n, min(2, n - 1), c=(1, 4), compute=(1, 3), seed=seed)
    operation = operation_for(kind, platform, seed)
    result = available_planners()[name].plan(platform, operation)
    bound = lp_bound(platform, operation).bound
    if result.schedule is None or bound is None:
        return
    every = [(how, m) for how, m in mutants(result.schedule)]
    chosen = [(how, m) for how, m in every if how.startswith(STRUCTURAL)]
    chosen += [every[k % len(every)] for k in picks] if every else []
    doubled = (replace(result.schedule,
                       instances_per_period=2 * result.schedule.instances_per_period)
               if result.schedule.period is not None else result.schedule)
    for how, mutant in [("as planned", result.schedule), ("doubled", doubled), *chosen]:
        throughput = schedule_throughput(mutant, validate(mutant))
        assert throughput is None or throughput <= bound, (name, how, throughput, bound)


# ---------------------------------------------------------------------------
# the oracle itself, on cases worked by hand
# ---------------------------------------------------------------------------


def test_oracle_on_hand_worked_cases() -> None:
    p = Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", 1), ("A", "C", 2)])
    op = Operation(K.BROADCAST, source="A").resolve(p)

    def s(*events: tuple[str, str, str, object]) -> Schedule:
        return Schedule.from_dicts(p, op, [
            {"kind": "send", "src": a, "dst": b, "item": i, "start": t} for a, b, i, t in events])

    assert oracle_violations(s(("A", "B", "b", 0), ("B", "C", "b", 1))) == []
    # B forwards at 1/2 what it holds at 1.
    assert oracle_violations(s(("A", "B", "b", 0), ("B", "C", "b", "1/2"))) == [
        "event 1 (instance 0): B lacks b"]
    # A sends to B during [0, 1) and to C during [1/2, 5/2).
    assert oracle_violations(s(("A", "B", "b", 0), ("A", "C", "b", "1/2"))) == [
        "('A', 'out') over capacity"]
    assert oracle_violations(s(("A", "B", "b", 0), ("A", "C", "b", "1/2")),
                             port_model="multiport:2") == []
    # B relays while receiving: fine bidirectional, not unidirectional.
    relay = s(("A", "B", "b#0", 0), ("B", "C", "b#0", 1), ("A", "B", "b#1", 1),
              ("B", "C", "b#1", 2))
    assert oracle_violations(relay) == []
    assert oracle_violations(relay, port_model="unidirectional") == [
        "('B', 'port') over capacity"]
    assert oracle_violations(s(("A", "B", "b", 0))) == ["instance 0: C never holds ('b',)"]
