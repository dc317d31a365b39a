"""Adversarial, independent checks of the ``lp`` planner (review session).

The reference optimum is an explicit LP written here from scratch with
``scipy.optimize.linprog``: every multiset of simultaneously active links
allowed by each node's port model is enumerated (unidirectional: a node in at
most one transfer; bidirectional: one send and one receive; multiport:k: k
sends and k receives, and a link may carry up to min(k_src, k_dst) transfers
at once, as the engine allows), the period is a convex combination of these
configurations, and per-destination flows (broadcast: link load = max flow;
scatter: sum of flows) ship one instance per time unit scaled by TP.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from scipy.optimize import linprog

from portsim.planners.lp import steady_state
from portsim.simulator import Operation, OperationKind, Platform, Schedule, replay

F = Fraction
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"


def _caps(platform: Platform, node: str) -> tuple[int, int, int]:
    """(sends, receives, total) allowed at once at ``node``."""
    pm = platform.port_model_of(node)
    kind = str(pm.kind)
    if kind.endswith("unidirectional"):
        return 1, 1, 1
    if kind.endswith("bidirectional"):
        return 1, 1, 2
    k = pm.k if pm.k is not None else len(platform.links)  # multiport: one port per link
    return k, k, 2 * k


def _configs(platform: Platform, links: list[tuple[str, str]]) -> list[tuple[int, ...]]:
    """Every maximal-or-not vector of link multiplicities obeying the ports (a
    link carries at most one transfer at a time, issue 14)."""
    ranges = []
    for s, d in links:
        ranges.append(range(min(1, _caps(platform, s)[0], _caps(platform, d)[1]) + 1))
    out = []
    for mult in itertools.product(*ranges):
        send: dict[str, int] = {}
        recv: dict[str, int] = {}
        for (s, d), m in zip(links, mult, strict=True):
            send[s] = send.get(s, 0) + m
            recv[d] = recv.get(d, 0) + m
        ok = True
        for n in {*send, *recv}:
            cs, cr, ct = _caps(platform, n)
            a, b = send.get(n, 0), recv.get(n, 0)
            if a > cs or b > cr or a + b > ct:
                ok = False
                break
        if ok and any(mult):
            out.append(mult)
    return out


def brute_force(platform: Platform, kind: str, source: str, targets: list[str]) -> float:
    """Optimal steady-state throughput by an explicit LP (broadcast/scatter)."""
    links = [(lk.src, lk.dst) for lk in platform.links]
    cost = {(lk.src, lk.dst): float(lk.c) for lk in platform.links}
    nodes = [n.id for n in platform.nodes]
    cfgs = _configs(platform, links)
    L, K, D = len(links), len(cfgs), len(targets)
    # variables: TP, flow[d][l] (D*L), w[k] (K)
    nv = 1 + D * L + K

    def fv(d: int, li: int) -> int:
        return 1 + d * L + li

    def wv(k: int) -> int:
        return 1 + D * L + k

    a_eq, b_eq, a_ub, b_ub = [], [], [], []
    for d, t in enumerate(targets):
        for n in nodes:
            if n == t:
                continue
            row = [0.0] * nv
            for li, (s, e) in enumerate(links):
                if e == n:
                    row[fv(d, li)] += 1
                if s == n:
                    row[fv(d, li)] -= 1
            if n == source:
                row[0] = 1.0  # out - in = TP
            a_eq.append(row)
            b_eq.append(0.0)
    for li, link in enumerate(links):
        if kind == "broadcast":
            for d in range(D):
                row = [0.0] * nv
                row[fv(d, li)] = cost[link]
                for k, m in enumerate(cfgs):
                    row[wv(k)] -= m[li]
                a_ub.append(row)
                b_ub.append(0.0)
        else:
            row = [0.0] * nv
            for d in range(D):
                row[fv(d, li)] = cost[link]
            for k, m in enumerate(cfgs):
                row[wv(k)] -= m[li]
            a_ub.append(row)
            b_ub.append(0.0)
    row = [0.0] * nv
    for k in range(K):
        row[wv(k)] = 1.0
    a_ub.append(row)
    b_ub.append(1.0)
    c = [0.0] * nv
    c[0] = -1.0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq or None, b_eq=b_eq or None,
                  bounds=[(0, None)] * nv, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def _strict_ok(result: object, periods: int) -> None:
    """Strict replay of a planned periodic schedule over ``periods`` periods."""
    schedule = getattr(result, "schedule", None)
    period = getattr(result, "period", None)
    assert schedule is not None
    assert period is not None
    assert replay(schedule, horizon=period * periods).violations == ()


FIG2 = [("P1", "P2", 1), ("P1", "P3", 1), ("P2", "P3", "1/2")]


def _random_platform(rng: random.Random, n: int, model: str) -> Platform:
    names = [f"N{i}" for i in range(n)]
    links = []
    for i in range(1, n):  # a spanning structure from N0
        links.append((names[rng.randrange(i)], names[i], rng.choice(["1/2", 1, "3/2", 2])))
    have = {(s, d) for s, d, _ in links}
    for s, d in itertools.permutations(names, 2):
        if (s, d) not in have and rng.random() < 0.3:
            links.append((s, d, rng.choice(["1/2", 1, "3/2", 2])))
    return Platform.build(names, links, model)


def test_brute_force_reproduces_fig2() -> None:
    uni = Platform.build(["P1", "P2", "P3"], FIG2, "unidirectional")
    assert brute_force(uni, "broadcast", "P1", ["P2", "P3"]) == pytest.approx(2 / 3)
    bi = uni.with_port_model("bidirectional")
    assert brute_force(bi, "broadcast", "P1", ["P2", "P3"]) == pytest.approx(1)


MODELS = ["unidirectional", "bidirectional", "multiport:2", "multiport"]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", ["broadcast", "scatter"])
@pytest.mark.parametrize("seed", range(6))
def test_bound_equals_brute_force(model: str, kind: str, seed: int) -> None:
    rng = random.Random(seed * 7 + len(model))
    platform = _random_platform(rng, 3 + seed % 2, model)
    names = [n.id for n in platform.nodes]
    targets = names[1:]
    op = (Operation(OperationKind.BROADCAST, source="N0") if kind == "broadcast"
          else Operation(OperationKind.SCATTER, source="N0", targets=tuple(targets)))
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    expected = brute_force(platform, kind, "N0", targets)
    assert result.throughput_bound is not None
    assert float(result.throughput_bound) == pytest.approx(expected, abs=1e-9)
    assert result.schedule is not None
    assert result.period is not None
    report = replay(result.schedule, horizon=result.period * 30)
    assert report.violations == ()
    # measured never beats the bound (exact), and the schedule nearly reaches it
    assert F(report.completed) <= result.throughput_bound * result.period * 30
    assert report.completed >= 0.8 * float(result.throughput_bound * result.period * 30)


def test_multiport1_equals_bidirectional() -> None:
    rng = random.Random(5)
    for _ in range(4):
        p = _random_platform(rng, 4, "bidirectional")
        op = Operation(OperationKind.BROADCAST, source="N0")
        a = steady_state(p, op).throughput_bound
        b = steady_state(p.with_port_model("multiport:1"), op).throughput_bound
        assert a == b


def test_mixed_one_unidirectional_node() -> None:
    p = Platform.build(["P1", "P2", "P3"], FIG2, "bidirectional",
                       node_port_models={"P2": "unidirectional"})
    op = Operation(OperationKind.BROADCAST, source="P1")
    res = steady_state(p, op)
    assert res.status == "ok"
    assert res.throughput_bound is not None
    assert float(res.throughput_bound) == pytest.approx(
        brute_force(p, "broadcast", "P1", ["P2", "P3"]), abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_cli_json_sane(example: str, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "portsim.scenarios.cli", "run",
                           str(EXAMPLES / example), "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    records = doc["results"]
    lp_bounds = [F(r["throughput_bound"]) for r in records
                 if r["planner"] == "lp" and r["status"] == "ok"
                 and not (r.get("options") or {}).get("restrict")]
    for rec in records:
        for key in ("throughput_bound", "period", "makespan", "horizon"):
            if rec.get(key) is not None:
                assert isinstance(rec[key], str), (key, rec[key])
                F(rec[key])  # an exact rational string
        if rec["status"] != "ok":
            continue
        assert rec["feasible"] is True, rec["planner"]
        measured = F(rec["completed"]) / F(rec["horizon"])
        assert rec["measured_throughput"] == pytest.approx(float(measured), rel=1e-9)
        if rec.get("throughput_bound") is not None and rec["planner"] != "lp-naive":
            assert measured <= F(rec["throughput_bound"]), rec["planner"]
        for bound in lp_bounds:  # no planner beats the exact lp bound
            assert measured <= bound, rec["planner"]


def _reversed(platform: Platform) -> Platform:
    return Platform.build({n.id: n.compute for n in platform.nodes},
                          [(lk.dst, lk.src, lk.c) for lk in platform.links],
                          platform.port_model,
                          node_port_models={n.id: n.port_model for n in platform.nodes
                                            if n.port_model is not None})


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("seed", range(4))
def test_gather_equals_reversed_scatter_brute_force(model: str, seed: int) -> None:
    rng = random.Random(100 + seed)
    platform = _reversed(_random_platform(rng, 3 + seed % 2, model))
    names = [n.id for n in platform.nodes]
    op = Operation(OperationKind.GATHER, target="N0", participants=tuple(names[1:]))
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    expected = brute_force(_reversed(platform), "scatter", "N0", names[1:])
    assert result.throughput_bound is not None
    assert float(result.throughput_bound) == pytest.approx(expected, abs=1e-9)
    _strict_ok(result, 30)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("seed", range(4))
def test_router_broadcast_brute_force(model: str, seed: int) -> None:
    rng = random.Random(200 + seed)
    base = _random_platform(rng, 4, model)
    platform = Platform.build({n.id: n.compute for n in base.nodes},
                              [(lk.src, lk.dst, lk.c) for lk in base.links], model,
                              routers=["N1"])
    op = Operation(OperationKind.BROADCAST, source="N0")
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    expected = brute_force(platform, "broadcast", "N0", ["N2", "N3"])
    assert result.throughput_bound is not None
    assert float(result.throughput_bound) == pytest.approx(expected, abs=1e-9)
    _strict_ok(result, 30)


@pytest.mark.parametrize("kind", ["broadcast", "scatter"])
@pytest.mark.parametrize("seed", range(6))
def test_mixed_platform_brute_force(kind: str, seed: int) -> None:
    rng = random.Random(300 + seed)
    base = _random_platform(rng, 4, "unidirectional")
    models = ["unidirectional", "bidirectional", "multiport:2"]
    overrides = {n.id: rng.choice(models) for n in base.nodes}
    platform = Platform.build({n.id: n.compute for n in base.nodes},
                              [(lk.src, lk.dst, lk.c) for lk in base.links],
                              rng.choice(models), node_port_models=overrides)
    targets = ["N1", "N2", "N3"]
    op = (Operation(OperationKind.BROADCAST, source="N0") if kind == "broadcast"
          else Operation(OperationKind.SCATTER, source="N0", targets=tuple(targets)))
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    expected = brute_force(platform, kind, "N0", targets)
    assert result.throughput_bound is not None
    assert float(result.throughput_bound) == pytest.approx(expected, abs=1e-9)
    _strict_ok(result, 30)


# -- allreduce: hand-made schedules never beat the bound -------------------------------

def test_butterfly_two_nodes_does_not_beat_bound() -> None:
    p = Platform.build({"A": "1/2", "B": 3}, [("A", "B", 1), ("B", "A", 2)])
    op = Operation(OperationKind.ALLREDUCE, participants=("A", "B")).resolve(p)
    events = [
        {"kind": "send", "src": "A", "dst": "B", "item": "v[0,0]", "start": 0},
        {"kind": "send", "src": "B", "dst": "A", "item": "v[1,1]", "start": 0},
        {"kind": "compute", "node": "A", "inputs": ["v[0,0]", "v[1,1]"],
         "output": "v[0,1]", "start": 2},
        {"kind": "compute", "node": "B", "inputs": ["v[0,0]", "v[1,1]"],
         "output": "v[0,1]", "start": 1},
    ]
    s = Schedule.from_dicts(p, op, events, period=3)
    assert replay(s, horizon=300).violations == ()
    res = steady_state(p, op)
    # By hand: A must receive one message from B per instance (B->A costs 2).
    assert res.throughput_bound == F(1, 2)
    assert F(1, 3) <= res.throughput_bound


def test_recursive_doubling_four_nodes_does_not_beat_bound() -> None:
    names = ["P0", "P1", "P2", "P3"]

    def cost(a: str, b: str) -> str | int:
        return "1/2" if {a, b} in ({"P0", "P1"}, {"P2", "P3"}) else 1

    p = Platform.build(dict.fromkeys(names, 0),
                       [(a, b, cost(a, b)) for a in names for b in names if a != b])
    op = Operation(OperationKind.ALLREDUCE, participants=tuple(names)).resolve(p)
    ev: list[dict[str, object]] = []
    for a, b in [(0, 1), (1, 0), (2, 3), (3, 2)]:
        ev.append({"kind": "send", "src": names[a], "dst": names[b],
                   "item": f"v[{a},{a}]", "start": 0})
    for i in range(4):
        lo = i - i % 2
        ev.append({"kind": "compute", "node": names[i],
                   "inputs": [f"v[{lo},{lo}]", f"v[{lo + 1},{lo + 1}]"],
                   "output": f"v[{lo},{lo + 1}]", "start": "1/2"})
    for a, b in [(0, 2), (2, 0), (1, 3), (3, 1)]:
        lo = a - a % 2
        ev.append({"kind": "send", "src": names[a], "dst": names[b],
                   "item": f"v[{lo},{lo + 1}]", "start": "1/2"})
    for i in range(4):
        ev.append({"kind": "compute", "node": names[i], "inputs": ["v[0,1]", "v[2,3]"],
                   "output": "v[0,3]", "start": 0, "lag": 1})
    s = Schedule.from_dicts(p, op, ev, period=F(3, 2))
    report = replay(s, horizon=150)
    assert report.violations == ()
    assert report.completed >= 95  # 2/3 per time unit
    res = steady_state(p, op)
    assert res.throughput_bound is not None
    assert res.throughput_bound >= F(2, 3)


def brute_force_all(platform: Platform, kind: str) -> float:
    """Allgather (sum over sources of the max flow) or alltoall (sum of all flows)."""
    links = [(lk.src, lk.dst) for lk in platform.links]
    cost = {(lk.src, lk.dst): float(lk.c) for lk in platform.links}
    nodes = [n.id for n in platform.nodes]
    pairs = [(s, t) for s in nodes for t in nodes if s != t]
    cfgs = _configs(platform, links)
    L, P, K, S = len(links), len(pairs), len(cfgs), len(nodes)
    # TP, flow[pair][link], load[source][link] (allgather), w[k]
    nv = 1 + P * L + S * L + K

    def fv(p: int, li: int) -> int:
        return 1 + p * L + li

    def lv(s: int, li: int) -> int:
        return 1 + P * L + s * L + li

    def wv(k: int) -> int:
        return 1 + P * L + S * L + k

    a_eq, b_eq, a_ub, b_ub = [], [], [], []
    for p, (src, dst) in enumerate(pairs):
        for n in nodes:
            if n == dst:
                continue
            row = [0.0] * nv
            for li, (s, e) in enumerate(links):
                if e == n:
                    row[fv(p, li)] += 1
                if s == n:
                    row[fv(p, li)] -= 1
            if n == src:
                row[0] = 1.0
            a_eq.append(row)
            b_eq.append(0.0)
        for li in range(L):
            row = [0.0] * nv
            row[fv(p, li)] = 1.0
            row[lv(nodes.index(src), li)] = -1.0  # load >= every flow of src
            if kind == "allgather":
                a_ub.append(row)
                b_ub.append(0.0)
    if kind != "allgather":
        for si in range(S):
            for li in range(L):
                row = [0.0] * nv
                row[lv(si, li)] = 1.0
                for p, (src, _dst) in enumerate(pairs):
                    if src == nodes[si]:
                        row[fv(p, li)] = -1.0
                a_eq.append(row)
                b_eq.append(0.0)
    for li, link in enumerate(links):
        row = [0.0] * nv
        for si in range(S):
            row[lv(si, li)] = cost[link]
        for k, m in enumerate(cfgs):
            row[wv(k)] -= m[li]
        a_ub.append(row)
        b_ub.append(0.0)
    row = [0.0] * nv
    for k in range(K):
        row[wv(k)] = 1.0
    a_ub.append(row)
    b_ub.append(1.0)
    c = [0.0] * nv
    c[0] = -1.0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq,
                  bounds=[(0, None)] * nv, method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def _strongly_connected(rng: random.Random, n: int, model: str) -> Platform:
    names = [f"N{i}" for i in range(n)]
    links = [(names[i], names[(i + 1) % n], rng.choice(["1/2", 1, 2])) for i in range(n)]
    have = {(s, d) for s, d, _ in links}
    for s, d in itertools.permutations(names, 2):
        if (s, d) not in have and rng.random() < 0.3:
            links.append((s, d, rng.choice(["1/2", 1, "3/2", 2])))
    return Platform.build(names, links, model)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", ["allgather", "alltoall"])
@pytest.mark.parametrize("seed", range(3))
def test_allgather_alltoall_brute_force(model: str, kind: str, seed: int) -> None:
    platform = _strongly_connected(random.Random(400 + seed), 3, model)
    op = Operation(OperationKind.ALLGATHER if kind == "allgather" else OperationKind.ALLTOALL)
    result = steady_state(platform, op)
    assert result.status == "ok", result.message
    expected = brute_force_all(platform, kind)
    assert result.throughput_bound is not None
    assert float(result.throughput_bound) == pytest.approx(expected, abs=1e-9)
    _strict_ok(result, 30)


@pytest.mark.parametrize("model", MODELS)
def test_size_scales_bound(model: str) -> None:
    platform = _random_platform(random.Random(7), 4, model)
    one = steady_state(platform, Operation(OperationKind.BROADCAST, source="N0"))
    three = steady_state(platform, Operation(OperationKind.BROADCAST, source="N0",
                                             size=F(3, 2)))
    assert one.throughput_bound is not None
    assert three.throughput_bound == one.throughput_bound / F(3, 2)
    _strict_ok(three, 20)


def test_multiport_same_link_once_at_a_time() -> None:
    """Engine and LP agree: multiport:2 at both ends still runs one transfer at a
    time on one link (issue 14; it ran two before): by hand, a link of cost 2
    carries one message every 2 time units."""
    p = Platform.build(["A", "B"], [("A", "B", 2)], "multiport:2")
    res = steady_state(p, Operation(OperationKind.BROADCAST, source="A"))
    assert res.throughput_bound == Fraction(1, 2)
    _strict_ok(res, 20)


# -- no registered planner's replay beats the lp bound -------------------------------

def _other_planners_vs_lp(seed: int) -> None:
    from portsim.planners.registry import available_planners
    from portsim.simulator.engine import replay_series

    rng = random.Random(5000 + seed)
    n = rng.choice([3, 4])
    names = [f"N{i}" for i in range(n)]
    comp: dict[str, object] = {x: rng.choice([0, "1/2", 1, 2]) for x in names}
    links = [(a, b, rng.choice(["1/2", 1, 2])) for a in names for b in names
             if a != b and rng.random() < 0.8]
    have = {(a, b) for a, b, _ in links}
    for i in range(n - 1):
        for a, b in ((names[i], names[i + 1]), (names[i + 1], names[i])):
            if (a, b) not in have:
                links.append((a, b, 1))
    platform = Platform.build(comp, links, rng.choice(MODELS))
    for kind in (OperationKind.BROADCAST, OperationKind.SCATTER, OperationKind.GATHER,
                 OperationKind.REDUCE, OperationKind.ALLREDUCE):
        if kind in (OperationKind.BROADCAST, OperationKind.SCATTER):
            op = Operation(kind, source="N0")
        elif kind in (OperationKind.GATHER, OperationKind.REDUCE):
            op = Operation(kind, target="N0")
        else:
            op = Operation(kind)
        op = op.resolve(platform)
        lp = steady_state(platform, op)
        if lp.status != "ok":
            continue
        assert lp.throughput_bound is not None
        for name, planner in available_planners().items():
            if name == "lp":
                continue
            res = planner.plan(platform, op)
            if res.status != "ok" or res.schedule is None:
                continue
            asap = res.replay == "asap"
            if res.schedule.period is None:
                horizon = F(res.makespan or 1) * 60
                report = replay_series(res.schedule, horizon)
            else:
                horizon = res.schedule.period * 60
                report = replay(res.schedule, horizon=horizon,
                                mode="asap" if asap else "strict")
            if not asap:
                assert report.violations == (), (name, kind)
            # start-up slack: two instances over the horizon
            assert F(report.completed) <= lp.throughput_bound * horizon + 2, (name, kind)


@pytest.mark.parametrize("seed", range(6))
def test_other_planners_never_beat_lp(seed: int) -> None:
    _other_planners_vs_lp(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 60))
def test_other_planners_never_beat_lp_many(seed: int) -> None:
    _other_planners_vs_lp(seed)


# -- reduce of two participants: an independent closed LP -------------------------------

def _two_node_reduce_optimum(c_ab: float, c_ba: float, comp_a: float, comp_b: float,
                             uni: bool) -> float:
    """Reduce v0 (A), v1 (B) onto B: a share x computed on B (A sends v0), 1 - x on A
    (B sends v1, A computes, A sends v[0,1]); variables (TP, y = TP * x)."""
    a_ub = [
        [c_ab, 0.0],                 # link A->B carries one message per instance
        [c_ba, -c_ba],               # link B->A: TP (1 - x) c_ba
        [comp_a, -comp_a],           # CPU of A
        [0.0, comp_b],               # CPU of B
        [-1.0, 1.0],                 # y <= TP
    ]
    b_ub = [1.0, 1.0, 1.0, 1.0, 0.0]
    if uni:
        a_ub.append([c_ab + c_ba, -c_ba])  # each port: both directions add up
        b_ub.append(1.0)
    res = linprog([-1.0, 0.0], A_ub=a_ub, b_ub=b_ub, bounds=[(0, None)] * 2,
                  method="highs")
    assert res.status == 0
    return -float(res.fun)


@pytest.mark.parametrize("model", ["bidirectional", "unidirectional", "multiport:1"])
@pytest.mark.parametrize(("c_ab", "c_ba", "comp_a", "comp_b"), [
    (1, 1, 1, 1), (1, "1/2", "1/2", 3), ("1/2", 2, 1, 2), (2, 1, 0, 5), (1, 1, 3, 3),
])
def test_two_node_reduce(model: str, c_ab: object, c_ba: object, comp_a: object,
                         comp_b: object) -> None:
    p = Platform.build({"A": comp_a, "B": comp_b}, [("A", "B", c_ab), ("B", "A", c_ba)],
                       model)
    op = Operation(OperationKind.REDUCE, participants=("A", "B"), target="B").resolve(p)
    res = steady_state(p, op)
    assert res.status == "ok", res.message
    assert res.throughput_bound is not None
    expected = _two_node_reduce_optimum(float(F(str(c_ab))), float(F(str(c_ba))),
                                        float(F(str(comp_a))), float(F(str(comp_b))),
                                        model == "unidirectional")
    assert float(res.throughput_bound) == pytest.approx(expected, abs=1e-9)
    _strict_ok(res, 20)


@pytest.mark.parametrize("seed", range(4))
def test_multiport1_bidirectional_unidirectional_all_ops(seed: int) -> None:
    rng = random.Random(seed)
    base = _strongly_connected(rng, 3 + seed % 2, "bidirectional")
    p = Platform.build({n.id: rng.choice([0, "1/2", 1]) for n in base.nodes},
                       [(lk.src, lk.dst, lk.c) for lk in base.links])
    for kind in (OperationKind.REDUCE, OperationKind.ALLGATHER, OperationKind.ALLTOALL,
                 OperationKind.GATHER):
        op = (Operation(kind, target="N0")
              if kind in (OperationKind.REDUCE, OperationKind.GATHER) else Operation(kind))
        bi = steady_state(p, op).throughput_bound
        m1 = steady_state(p.with_port_model("multiport:1"), op).throughput_bound
        uni = steady_state(p.with_port_model("unidirectional"), op).throughput_bound
        assert bi is not None
        assert uni is not None
        assert m1 == bi
        assert uni <= bi


# -- time limit: an `error` result naming the phase, never an exception ---------------

@pytest.mark.parametrize("model", ["bidirectional", "unidirectional", "multiport:2"])
@pytest.mark.parametrize("kind", ["broadcast", "scatter", "gather", "allgather", "alltoall"])
def test_time_limit_is_an_error_result(model: str, kind: str) -> None:
    p = _strongly_connected(random.Random(1), 4, model)
    k = OperationKind(kind)
    op = (Operation(k, source="N0") if kind in ("broadcast", "scatter")
          else Operation(k, target="N0") if kind == "gather" else Operation(k))
    res = steady_state(p, op, time_limit=1e-9)
    assert res.status == "error"
    assert "time limit" in res.message


@pytest.mark.parametrize("model", ["unidirectional", "multiport:2", "bidirectional"])
def test_time_limit_reduce_is_an_error_result(model: str) -> None:
    p = _strongly_connected(random.Random(1), 4, model)
    op = Operation(OperationKind.REDUCE, target="N0")
    res = steady_state(p, op, time_limit=1e-9)
    assert res.status == "error"
    assert "time limit" in res.message
