"""MSCCL import, part two (issue 16): pipelined throughput of multi-chunk
algorithms against an independent cut bound, ``portsim msccl-import``, the
``msccl`` planner entry, ``assert_msccl_correct`` and the generators against
closed forms.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction as F
from pathlib import Path

import networkx as nx
import pytest
import yaml
from click.testing import CliRunner

from portsim.planners.registry import get_planner
from portsim.scenarios.cli import main
from portsim.scenarios.generators import complete_platform, dgx_a100_platform
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.msccl import (
    MscclFile,
    allpairs_alltoall_xml,
    read_msccl,
    ring_allgather_xml,
    ring_allreduce_xml,
    ring_reduce_scatter_xml,
    time_msccl,
    tree_broadcast_xml,
    tree_reduce_xml,
    validate_msccl,
)
from portsim.scenarios.pytest_plugin import assert_msccl_correct
from portsim.scenarios.runner import foreign_schedule, run_scenario
from portsim.scenarios.testing import ScheduleAssertionError
from portsim.simulator.errors import ScheduleError
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform

pytest_plugins = ["pytester"]

DATA = Path(__file__).parent / "data" / "msccl"
ALLGATHER = DATA / "allgather_ring_8_1_1.xml"
ALLTOALL = DATA / "alltoall_allpairs_8_1.xml"
NVLINK = 300  # GB/s each way, GPU <-> NVSwitch (dgx_a100_platform's figure)


def nvswitch_server() -> Platform:
    """The NVSwitch domain of one DGX A100: 8 GPUs cabled to one NVSwitch (a
    router) at 300 each way, multiport; ``dgx_a100_platform(1)`` without its
    NICs and InfiniBand switches."""
    gpus = [f"P{i}" for i in range(8)]
    links = [(g, "nvswitch0", F(1, NVLINK)) for g in gpus] + [
        ("nvswitch0", g, F(1, NVLINK)) for g in gpus]
    return Platform.build([*gpus, "nvswitch0"], links, "multiport", routers=["nvswitch0"])


def directed_ring(n: int, c: int | F = 1, compute: int | F = 1) -> Platform:
    return Platform.build({f"P{i}": compute for i in range(n)},
                          [(f"P{i}", f"P{(i + 1) % n}", c) for i in range(n)])


def _graph(platform: Platform, chunk: F) -> nx.DiGraph:
    """Link bandwidths in chunks per time unit."""
    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in platform.nodes)
    for link in platform.links:
        g.add_edge(link.src, link.dst, capacity=1 / platform.duration(link.src, link.dst,
                                                                       chunk))
    return g


def cut_bound(platform: Platform, participants: list[str], chunk: F, *,
              alltoall: bool = False) -> F:
    """The cut bound on the throughput (instances of one chunk per time unit),
    by brute force over the node sets ``S`` that hold a participant and miss
    another: every instance must move ``|S ∩ P| * chunk`` out of ``S``
    (allgather: each block inside to each rank outside, which may copy it on;
    all-to-all: ``|S ∩ P| * |P - S|`` distinct messages), over the capacity
    ``B+(S)`` of the links leaving ``S`` (``networkx.edge_boundary``)."""
    g = _graph(platform, chunk)
    nodes = list(g.nodes)
    best = F(0)
    for size in range(1, len(nodes)):
        for s in itertools.combinations(nodes, size):
            inside = [p for p in participants if p in s]
            outside = len(participants) - len(inside)
            if not inside or not outside:
                continue
            need = len(inside) * (outside if alltoall else 1)
            rest = [v for v in nodes if v not in s]
            out = sum((F(d) for _, _, d in nx.edge_boundary(g, s, rest, data="capacity")),
                      F(0))
            best = max(best, F(need) / out)
    return 1 / best


GPUS = [f"P{i}" for i in range(8)]


# -- pipelined throughput against the cut bound --------------------------------------------


def test_ring_allgather_of_two_chunks_reaches_the_bound_on_an_nvswitch() -> None:
    """Two chunk indexes per rank (one ring per channel): 14 chunk crossings of
    each GPU's NVLink per run, and the series keeps the links busy: within 1%
    of the cut bound (exactly 1 / (7 * 2) runs per hop time asymptotically;
    the count over 100 makespans loses the first run's fill)."""
    p = nvswitch_server()
    v = validate_msccl(ring_allgather_xml(8, chunks=2), p, size=16)
    assert v.correct
    chunk = F(1)
    bound = cut_bound(p, GPUS, chunk) / 2  # runs of 2 chunk instances
    assert bound == F(NVLINK, 14)
    assert v.throughput is not None
    assert F(99, 100) * bound <= v.throughput <= bound
    assert v.lp_bound == bound
    assert v.ratio_to_lp_bound == F(749, 750)  # 107 runs of 14/300 within 1500/300


def test_one_chunk_ring_sample_waits_two_hops_a_step() -> None:
    """msccl-tools' ring (one chunk per rank): each forward waits for its chunk
    two hops (GPU -> switch -> GPU, the switch forwarding no copy of its own),
    so a run's 7 sends are two hops apart and the next run's first send,
    one hop after its last: a run every 13 hops (it was 8 when the series let
    the switch forward its copy: 7/8).  Run t ends after 14 + 13 t hops:
    107 runs within 100 makespans of 14 hops, 107/200 of the bound 300/7."""
    p = nvswitch_server()
    v = validate_msccl(ALLGATHER, p, size=8)
    assert v.throughput == F(107) / (100 * F(14, NVLINK))
    assert v.lp_bound == cut_bound(p, GPUS, F(1)) == F(NVLINK, 7)
    assert v.ratio_to_lp_bound == F(107, 200)


def test_ordered_allpairs_alltoall_within_one_percent_on_an_nvswitch() -> None:
    p = nvswitch_server()
    v = validate_msccl(allpairs_alltoall_xml(8, ordered=True), p, size=8)
    assert v.correct
    bound = cut_bound(p, GPUS, F(1), alltoall=True)
    assert bound == F(NVLINK, 7)
    assert v.throughput is not None
    assert F(99, 100) * bound <= v.throughput <= bound
    assert v.lp_bound == bound


def test_msccl_tools_allpairs_order_pipelines_to_the_bound() -> None:
    """The sample sends in rank order, not in rotation: one run takes 14 hops
    (every rank's first chunk queues at P0's link), but the series keeps the
    order per link, so later runs fill the gaps.  By hand, with h one hop:
    each GPU's NVLink carries 7 chunks a run, so run t's last chunk leaves
    its GPU at 7 (t + 1) h at the earliest and arrives a hop later; within
    100 makespans (1400 h), 7 (t + 1) + 1 <= 1400 gives at most 199 runs,
    and the series completes them all (127 when the switch's port kept one
    order across its eight links)."""
    v = validate_msccl(ALLTOALL, nvswitch_server(), size=8)
    assert v.makespan == 14 * F(1, NVLINK)
    assert v.ratio_to_lp_bound == F(199, 200)


@pytest.mark.slow
def test_ring_ratio_on_a_whole_dgx_a100_server() -> None:
    """dgx_a100_platform(1) also cables each GPU to a NIC and the NICs to two IB
    switches: 25 more into each GPU, so the cut bound is 325/7 per chunk and a
    ring on the NVLinks alone reaches at most 300/325 = 12/13 of it."""
    p = dgx_a100_platform(1)
    v = validate_msccl(ring_allgather_xml(8, chunks=2), p, size=16)
    bound = cut_bound(p, GPUS, F(1)) / 2
    assert bound == F(325, 14)
    assert v.lp_bound == bound
    assert v.ratio_to_lp_bound is not None
    assert F(99, 100) * F(12, 13) <= v.ratio_to_lp_bound <= F(12, 13)


# -- generators against closed forms ------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16])
def test_ring_allreduce_closed_form(n: int) -> None:
    """Directed ring, link cost c, compute w, chunk x = size / n: the chunks move
    in lockstep, n - 1 reduce-scatter steps of (c x + w) then n - 1 allgather
    hops of c x."""
    c, w, size = F(3, 2), F(2), F(n)
    v = validate_msccl(ring_allreduce_xml(n), directed_ring(n, c, w), size=size, lp=False)
    assert v.correct, v.problems
    x = size / n
    assert v.makespan == (n - 1) * (c * x + w) + (n - 1) * c * x


def switched(n: int, c: F, compute: F = F(1)) -> Platform:
    """n GPUs cabled to one switch (a router), link cost c each way, multiport."""
    gpus = [f"P{i}" for i in range(n)]
    links = [(g, "sw", c) for g in gpus] + [("sw", g, c) for g in gpus]
    return Platform.build({**dict.fromkeys(gpus, compute), "sw": 0}, links, "multiport",
                          routers=["sw"])


@pytest.mark.parametrize("n", [3, 4, 8])
def test_ring_through_a_switch_closed_form(n: int) -> None:
    """Each ring step crosses GPU -> switch -> GPU, 2 c x store and forward:
    the allgather takes (n - 1) 2 c x, the allreduce (n - 1) (2 c x + w) +
    (n - 1) 2 c x.  A rank forwards the copy it received: the switch, which
    holds the chunk from the previous step's transfer, does not forward it
    ahead of the rank (it did: (n - 1) c x + c x for the allgather)."""
    c, w, size = F(3, 2), F(2), F(n)
    x = size / n
    gather = validate_msccl(ring_allgather_xml(n), switched(n, c), size=size, lp=False)
    assert gather.correct, gather.problems
    assert gather.makespan == (n - 1) * 2 * c * x
    reduce = validate_msccl(ring_allreduce_xml(n), switched(n, c, w), size=size, lp=False)
    assert reduce.correct, reduce.problems
    assert reduce.makespan == (n - 1) * (2 * c * x + w) + (n - 1) * 2 * c * x


@pytest.mark.parametrize("n", [2, 3, 4, 7, 16])
def test_allpairs_on_a_complete_multiport_platform_is_one_hop(n: int) -> None:
    v = validate_msccl(allpairs_alltoall_xml(n), complete_platform(n, 2, port_model="multiport"),
                       size=n, lp=False)
    assert v.correct, v.problems
    assert v.makespan == 2  # chunk 1, every pair at once
    assert v.throughput == F(1, 2)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
def test_tree_broadcast_closed_form(n: int) -> None:
    """Multiport, complete: every level in one hop, floor(log2 n) hops."""
    v = validate_msccl(tree_broadcast_xml(n), complete_platform(n, 3, port_model="multiport"),
                       size=1, lp=False)
    assert v.correct, v.problems
    assert v.makespan == 3 * math.floor(math.log2(n))


def _tree_reduce_ready(v: int, n: int, hop: F, w: F) -> F:
    """When rank v's partial is ready: a leaf at once; an inner rank reduces its
    children's partials in child order, each after it arrives (one hop) and
    after the previous reduction (one CPU)."""
    kids = [k for k in (2 * v + 1, 2 * v + 2) if k < n]
    end = F(0)
    for k in kids:
        end = max(end, _tree_reduce_ready(k, n, hop, w) + hop) + w
    return end


@pytest.mark.parametrize(("n", "by_hand"), [(2, 2), (4, 5), (7, 6)])
def test_tree_reduce_by_hand(n: int, by_hand: int) -> None:
    """Hop 1, reduction 1.  n = 4: rank 3 -> 1 (1), 1 reduces (2) and sends (3);
    rank 0 reduces 1's (4), then 2's, which waited (5).  n = 7: ranks 1 and 2
    both ready at 3 (two leaves each), rank 0 reduces at [4, 5] and [5, 6]."""
    v = validate_msccl(tree_reduce_xml(n), complete_platform(n, 1, port_model="multiport"),
                       size=1, lp=False)
    assert v.correct, v.problems
    assert v.makespan == by_hand == _tree_reduce_ready(0, n, F(1), F(1))


@pytest.mark.parametrize("n", [3, 6, 9, 13])
def test_tree_reduce_recursion(n: int) -> None:
    v = validate_msccl(tree_reduce_xml(n, chunks=1),
                       complete_platform(n, 2, 3, port_model="multiport"), size=1, lp=False)
    assert v.correct
    assert v.makespan == _tree_reduce_ready(0, n, F(2), F(3))


@pytest.mark.parametrize("make", [ring_allgather_xml, ring_allreduce_xml, ring_reduce_scatter_xml,
                                  allpairs_alltoall_xml, tree_broadcast_xml, tree_reduce_xml])
def test_generators_need_two_ranks(make: object) -> None:
    with pytest.raises(ScheduleError, match="at least 2 ranks"):
        make(1)  # type: ignore[operator]


# -- msccl-import --------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "algos").mkdir()
    (tmp_path / "algos" / "ring3.xml").write_text(ring_allgather_xml(3), encoding="utf-8")
    (tmp_path / "algos" / "ring3c2.xml").write_text(ring_allgather_xml(3, chunks=2),
                                                    encoding="utf-8")
    (tmp_path / "algos" / "a2a.xml").write_text(allpairs_alltoall_xml(3), encoding="utf-8")
    (tmp_path / "platform.yaml").write_text(
        "platform:\n  nodes: [{id: P0}, {id: P1}, {id: P2}]\n  links:\n"
        "    - {src: P0, dst: P1, c: 2}\n    - {src: P1, dst: P2, c: 2}\n"
        "    - {src: P2, dst: P0, c: 2}\n", encoding="utf-8")
    return tmp_path


def test_msccl_import_round_trip(files: Path) -> None:
    out = files / "ring.yaml"
    runner = CliRunner()
    r = runner.invoke(main, ["msccl-import", str(files / "algos" / "ring3c2.xml"),
                             "--platform", str(files / "platform.yaml"), "--size", "6",
                             "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "wrote one-shot schedule of 12 events" in r.stderr + r.stdout
    r = runner.invoke(main, ["validate", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["ok"] is True
    # chunk 1, hop 2: two rings side by side, 2 hops each, one link each way
    assert report["makespan"] == "8"
    assert report["instances"] == 2
    # the same as validate on the XML
    v = validate_msccl(files / "algos" / "ring3c2.xml", directed_ring(3, 2), size=6, lp=False)
    assert v.makespan == 8
    # standard output
    r = runner.invoke(main, ["msccl-import", str(files / "algos" / "ring3.xml"),
                             "--platform", str(files / "platform.yaml"), "-o", "-"])
    assert r.exit_code == 0, r.output
    written = yaml.safe_load(r.stdout)
    assert len(written["events"]) == 6
    assert "MSCCL allgather" in written["description"]


def test_msccl_import_refuses_a_malformed_file(files: Path) -> None:
    """A dropped receive: rank 0's last receive turned into a nop."""
    bad = files / "bad.xml"
    bad.write_text(ring_allgather_xml(3).replace('type="r"', 'type="nop"', 1),
                   encoding="utf-8")
    out = files / "out.yaml"
    r = CliRunner().invoke(main, ["msccl-import", str(bad), "--platform",
                                  str(files / "platform.yaml"), "-o", str(out)])
    assert r.exit_code == 2, r.output
    assert not out.exists()
    assert r.stderr == (f"portsim: error: {bad}: gpu[2].tb[0].step[1].type: a send with no "
                        "matching receive (rank 0 receives only 1 time(s) from rank 2 on "
                        "channel 0) (got 'rcs')\n")


def test_msccl_import_incorrect_exit_1(files: Path) -> None:
    """A chunk never received (the last receive of rank 0 turned into a nop, and
    rank 2's forward of it into a plain send... of its own chunk again)."""
    algo = ring_allgather_xml(3)
    gpu2 = algo.index('<gpu id="2"')
    head, tail = algo[:gpu2], algo[gpu2:]
    head = head.replace('<step s="2" type="r"', '<step s="2" type="nop"', 1)
    tail = tail.replace('<step s="1" type="rcs"', '<step s="1" type="r"', 1)
    bad = files / "lost.xml"
    bad.write_text(head + tail, encoding="utf-8")
    out = files / "out.yaml"
    r = CliRunner().invoke(main, ["msccl-import", str(bad), "--platform",
                                  str(files / "platform.yaml"), "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert not out.exists()
    assert r.stderr.strip() == (f"portsim: error: {bad}: incorrect, nothing written: rank 0 "
                                "(P0) buffer o[1] never receives chunk m[P1]")


# -- the msccl planner entry ---------------------------------------------------------------


def _scenario(files: Path, planners: list[object]) -> Path:
    doc = yaml.safe_load((files / "platform.yaml").read_text(encoding="utf-8"))
    doc.update(name="msccl-ring", operation={"type": "allgather", "size": 1},
               planners=planners)
    path = files / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_planner_entry_compares_with_ring_and_lp(files: Path, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    path = _scenario(files, [{"name": "msccl", "file": "algos/ring3.xml"},
                             {"name": "msccl", "file": "algos/ring3c2.xml"},
                             {"name": "msccl", "file": "algos/a2a.xml"}, "ring", "lp"])
    monkeypatch.chdir(files.parent)  # the file is relative to the scenario, not the cwd
    scenario = load_scenario(path)
    option = scenario.planners[0].options["file"]
    assert isinstance(option, MscclFile)
    assert str(option) == "algos/ring3.xml"
    assert option.path == files / "algos" / "ring3.xml"
    rows = {r.label: r for r in run_scenario(scenario).results}
    assert list(rows) == ["msccl (file: algos/ring3.xml)", "msccl (file: algos/ring3c2.xml)",
                          "msccl (file: algos/a2a.xml)", "ring", "lp"]
    one, two = rows["msccl (file: algos/ring3.xml)"], rows["msccl (file: algos/ring3c2.xml)"]
    # size 1, hop 2: the one-chunk ring takes 2 hops of 2; the two-chunk ring
    # 2 hops of chunks 1/2 per ring, one ring after the other on each link
    assert (one.status, one.makespan, one.feasible) == ("ok", 4, True)
    assert (two.status, two.makespan, two.feasible) == ("ok", 4, True)
    # one operation every 4 (the lp bound, 1/4), counted in operations
    assert one.measured_throughput == two.measured_throughput == 0.25
    assert rows["lp"].throughput_bound == F(1, 4)
    assert two.completed == 2 * one.completed  # instances: two chunks per operation
    # --asymptotic counts operations too: the two-chunk ring completes two
    # instances per operation, it does not beat the bound (it was said to)
    from portsim.scenarios.asymptotic import asymptotic_study
    study = asymptotic_study(scenario, periods=(10, 100))
    assert study.problems == ()
    ratios = {(r.planner, r.periods): r.ratio for r in study.rows}
    for k in (10, 100):
        assert ratios[("msccl (file: algos/ring3c2.xml)", k)] == \
            ratios[("msccl (file: algos/ring3.xml)", k)] == ratios[("ring", k)]
    bad = rows["msccl (file: algos/a2a.xml)"]
    assert bad.status == "unsupported"
    assert bad.message == ("a2a.xml is an MSCCL alltoall; the scenario's operation is "
                           "allgather")


def test_planner_entry_through_the_cli(files: Path) -> None:
    path = _scenario(files, [{"name": "msccl", "file": "algos/ring3c2.xml"}, "ring"])
    r = CliRunner().invoke(main, ["run", str(path), "--json", "-"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["results"]
    assert [(x["label"], x["status"], x["makespan"], x["measured_throughput"])
            for x in rows] == [("msccl (file: algos/ring3c2.xml)", "ok", "4", 0.25),
                               ("ring", "ok", "4", 0.25)]
    # The exact figure counts operations too (it counted the two chunks of
    # each: 1/2, while the float and the note said 1/4), and the table shows it.
    assert [x["measured_throughput_exact"] for x in rows] == ["1/4", "1/4"]
    assert rows[0]["completed"] == 2 * rows[1]["completed"]
    table = CliRunner().invoke(main, ["run", str(path)]).stdout
    assert [line.split("│")[6].strip() for line in table.splitlines()
            if line.startswith("│ ")] == ["1/4", "1/4"]


@pytest.mark.parametrize(("entry", "pattern"), [
    ({"name": "msccl"}, r"^portsim: error: {scenario}: planners\[0\]\.file: the msccl "
                        r"planner needs file: ALGO\.xml \(a path relative to the scenario file\)$"),
    # the scenario and the entry's key path first, then the algorithm's own line
    ({"name": "msccl", "file": "algos/missing.xml"},
     r"^portsim: error: {scenario}: planners\[0\]\.file: {files}/algos/missing\.xml: "
     r"cannot read the file"),
    ({"name": "msccl", "file": "algos/broken.xml"},
     r"^portsim: error: {scenario}: planners\[0\]\.file: {files}/algos/broken\.xml: "
     r"gpu\[0\]\.tb\[0\]\.step\[1\]\.type: unknown step type"),
])
def test_planner_entry_bad_file_exit_2(files: Path, entry: dict[str, str],
                                       pattern: str) -> None:
    (files / "algos" / "broken.xml").write_text(
        ring_allgather_xml(3).replace('type="rcs"', 'type="zz"', 1), encoding="utf-8")
    path = _scenario(files, [entry])
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1
    import re
    assert re.search(pattern.format(scenario=re.escape(str(path)),
                                    files=re.escape(str(files))), r.stderr.strip()), r.stderr


def test_planner_is_listed() -> None:
    planner = get_planner("msccl")
    assert planner.name == "msccl"
    r = CliRunner().invoke(main, ["planners"])
    assert "msccl" in r.stdout


# -- the pytest helper ---------------------------------------------------------------------


def test_assert_msccl_correct_passes_and_returns_the_verdict() -> None:
    v = assert_msccl_correct(ring_allgather_xml(5), directed_ring(5, 1), size=5, min_ratio=1)
    assert v.makespan == 4
    assert v.ratio_to_lp_bound == 1


def test_assert_msccl_correct_names_the_missing_chunk() -> None:
    algo = ring_allgather_xml(3)
    gpu2 = algo.index('<gpu id="2"')
    head, tail = algo[:gpu2], algo[gpu2:]
    head = head.replace('<step s="2" type="r"', '<step s="2" type="nop"', 1)
    tail = tail.replace('<step s="1" type="rcs"', '<step s="1" type="r"', 1)
    with pytest.raises(ScheduleAssertionError) as err:
        assert_msccl_correct(head + tail, directed_ring(3))
    assert str(err.value).splitlines() == [
        "MSCCL algorithm <string> is incorrect (strict replay, bidirectional):",
        "  rank 0 (P0) buffer o[1] never receives chunk m[P1]"]


def test_assert_msccl_correct_min_ratio() -> None:
    with pytest.raises(ScheduleAssertionError, match=r"reaches 107/200 = 0\.535 of the lp "
                                                     r"bound 300/7, below 9/10"):
        assert_msccl_correct(ALGO_TEXT, nvswitch_server(), size=8, min_ratio="9/10")
    assert assert_msccl_correct(ALGO_TEXT, nvswitch_server(), size=8,
                                min_ratio="107/200").ratio_to_lp_bound == F(107, 200)


ALGO_TEXT = ALLGATHER.read_text(encoding="utf-8")


def test_assert_msccl_correct_in_a_pytester_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        from portsim.scenarios.msccl import ring_allgather_xml
        from portsim.simulator.platform import Platform

        P = Platform.build(["A", "B"], [("A", "B", 1), ("B", "A", 1)])

        def test_good():
            assert_msccl_correct = __import__(
                "portsim.scenarios.pytest_plugin", fromlist=["x"]).assert_msccl_correct
            assert assert_msccl_correct(ring_allgather_xml(2), P, size=2).makespan == 1

        def test_bad():
            from portsim.scenarios.pytest_plugin import assert_msccl_correct
            xml = ring_allgather_xml(2).replace('type="r"', 'type="nop"')
            xml = xml.replace('type="s"', 'type="nop"')
            assert_msccl_correct(xml, P)
    """)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*MSCCL algorithm <string> is incorrect*",
                                 "*rank 0 (A) buffer o[[]1[]] never receives chunk m[[]B[]]*"])
    assert "scenarios/testing.py" not in result.stdout.str()  # the helper's frame is hidden


# -- reduce_scatter (MSCCL path only) ------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16])
def test_ring_reduce_scatter_closed_form(n: int) -> None:
    """Directed ring, link cost c, compute w, chunk x = size / n: n - 1 steps of
    one hop and one reduction, the blocks in lockstep."""
    c, w = F(3, 2), F(2)
    v = validate_msccl(ring_reduce_scatter_xml(n), directed_ring(n, c, w), size=n)
    assert v.correct, v.problems
    assert v.feasible
    assert v.violations == ()  # the stand-in allreduce's incomplete instances are not kept
    assert v.makespan == (n - 1) * (c + w)
    assert v.throughput is None
    assert v.lp_bound is None
    assert v.lp_note == "no lp bound: portsim has no reduce_scatter operation"


def test_reduce_scatter_a_block_left_partial_is_named() -> None:
    """Rank 0's last step receives block 0 without reducing it: it ends with the
    partial of ranks 1 and 2."""
    text = ring_reduce_scatter_xml(3).replace('type="rrc"', 'type="r"', 1)
    v = validate_msccl(text, directed_ring(3), size=3)
    assert not v.correct
    assert v.problems == ("rank 0 (P0) buffer i[0] ends with v{1,2}, expected chunk "
                          "v{0,1,2}",)


def test_reduce_scatter_in_the_cli(files: Path) -> None:
    xml = files / "rs.xml"
    xml.write_text(ring_reduce_scatter_xml(3), encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["validate", str(xml), "--platform", str(files / "platform.yaml"),
                             "--size", "3", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["collective"], out["correct"], out["makespan"], out["violations"]) == (
        "reduce_scatter", True, "6", [])  # 2 steps of hop 2 and reduction 1
    r = runner.invoke(main, ["msccl-import", str(xml), "--platform",
                             str(files / "platform.yaml"), "-o", str(files / "rs.yaml")])
    assert r.exit_code == 2
    assert r.stderr == (f"portsim: error: {xml}: algo.coll: a reduce_scatter cannot be "
                        "written as a schedule file: portsim has no reduce_scatter operation "
                        "(portsim validate checks it) (got 'reduce_scatter')\n")
    assert get_planner("msccl").plan(directed_ring(3), _allgather(), file=xml).message == (
        "rs.xml is an MSCCL reduce_scatter, which no portsim operation expresses")


def _allgather() -> Operation:
    return Operation(OperationKind.ALLGATHER).resolve(directed_ring(3))


def test_planner_maps_broadcast_and_reduce_roots(tmp_path: Path) -> None:
    p = complete_platform(5, 3, port_model="multiport")
    bcast = tmp_path / "bcast.xml"
    bcast.write_text(tree_broadcast_xml(5), encoding="utf-8")
    red = tmp_path / "reduce.xml"
    red.write_text(tree_reduce_xml(5), encoding="utf-8")
    planner = get_planner("msccl")
    op = Operation(OperationKind.BROADCAST, source="P0", size=2).resolve(p)
    result = planner.plan(p, op, file=bcast)
    assert result.status == "ok"
    assert result.makespan == 2 * 3 * 2  # two levels of hop 3, chunk 2
    to_p0 = Operation(OperationKind.REDUCE, target="P0", commutative=True).resolve(p)
    assert planner.plan(p, to_p0, file=red).status == "ok"
    to_p2 = Operation(OperationKind.REDUCE, target="P2", commutative=True).resolve(p)
    result = planner.plan(p, to_p2, file=red)
    assert (result.status, result.message) == (
        "unsupported", "reduce.xml: the algorithm reduces to rank 0 (P0), the operation to P2")
    assert planner.plan(p, to_p0).message == (
        "the msccl planner needs the option file: ALGO.xml (an MSCCL algorithm)")


def test_planner_takes_alltoall_targets_in_any_order() -> None:
    """An all-to-all's targets listed in another order than its sources are the same
    operation (its items name their nodes); the sources' order gives the ranks.
    They were an ``unsupported`` row saying the sources must equal the targets."""
    from portsim.scenarios.msccl import allpairs_alltoall_xml

    p = complete_platform(4, 3, port_model="multiport")
    xml = allpairs_alltoall_xml(4)
    planner = get_planner("msccl")
    sources = ("P2", "P0", "P3", "P1")
    for targets in (sources, ("P0", "P1", "P2", "P3")):
        op = Operation(OperationKind.ALLTOALL, sources=sources, targets=targets,
                       size=2).resolve(p)
        result = planner.plan(p, op, file=xml)
        # every link carries one chunk of size 2 at c = 3, all at once (multiport)
        assert (result.status, result.makespan) == ("ok", 6), result.message
        assert foreign_schedule(result.schedule, p, op) is None
    fewer = Operation(OperationKind.ALLTOALL, sources=sources, targets=("P0", "P1"),
                      size=2).resolve(p)
    assert planner.plan(p, fewer, file=xml).message == (
        "<string>: an MSCCL alltoall needs the operation's targets to be its sources "
        "(in any order)")


# -- studies -------------------------------------------------------------------------------


def test_study_runs_an_msccl_entry_relative_to_the_study_file(files: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The file is relative to the study file (anchored in each run's document, as
    a SimGrid platform file is), and its content is part of the run key."""
    from portsim.scenarios.study.execute import execute_run
    from portsim.scenarios.study.spec import load_study

    platform = yaml.safe_load((files / "platform.yaml").read_text(encoding="utf-8"))
    study_file = files / "study.yaml"
    study_file.write_text(yaml.safe_dump({
        "name": "msccl-study",
        "base": {**platform, "operation": {"type": "allgather"},
                 "planners": [{"name": "msccl", "file": "algos/ring3c2.xml"}, "ring"]},
        "grid": {"operation.size": [1, 2]}}), encoding="utf-8")
    monkeypatch.chdir(files.parent)
    study = load_study(study_file)
    rows = [row for run in study.runs for row in execute_run(run, "msccl-study")]
    got = sorted((row["grid.operation.size"], row["planner"], row["status"], row["makespan"])
                 for row in rows)
    # two rings of chunk size/2 side by side: 2 hops of 2 * size / 2 each
    assert got == [(1, "msccl", "ok", "4"), (1, "ring", "ok", "4"),
                   (2, "msccl", "ok", "8"), (2, "ring", "ok", "8")]
    key = study.runs[0].key
    (files / "algos" / "ring3c2.xml").write_text(ring_allgather_xml(3, chunks=2, name="x"),
                                                 encoding="utf-8")
    assert load_study(study_file).runs[0].key != key


def test_study_labels_an_msccl_entry_as_run_does(files: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user's trial: ``run`` labelled the row ``msccl (file: algos/ring3.xml)``,
    the study ``msccl (file: /tmp/.../algos/ring3.xml)``.  Both label the file as
    written (the one :func:`~portsim.scenarios.runner.planner_label`), the
    study's document still holds the absolute path that opens it."""
    from portsim.reports.studies.report import row_labels
    from portsim.scenarios.study.store import load_results

    scenario = _scenario(files, [{"name": "msccl", "file": "algos/ring3.xml"}, "ring"])
    document = yaml.safe_load(scenario.read_text(encoding="utf-8"))
    (files / "study.yaml").write_text(yaml.safe_dump({"name": "msccl-label", "base": document}),
                                      encoding="utf-8")
    monkeypatch.chdir(files.parent)  # relative to the files' folder, not the cwd
    ran = CliRunner().invoke(main, ["run", str(scenario), "--json", "-"])
    assert ran.exit_code == 0, ran.output
    out = files / "out"
    studied = CliRunner().invoke(main, ["study", str(files / "study.yaml"), "--out", str(out),
                                        "--workers", "1"])
    assert studied.exit_code == 0, studied.output
    frame = load_results(out).sort_values("planner_index")
    expected = ["msccl (file: algos/ring3.xml)", "ring"]
    assert [r["label"] for r in json.loads(ran.stdout)["results"]] == expected
    assert list(frame["label"]) == expected
    assert list(row_labels(frame)) == expected  # the report's, from planner_options
    assert list(frame["status"]) == ["ok", "ok"]
    stored = json.loads(frame["scenario_document"].iloc[0])["planners"][0]
    assert stored == {"name": "msccl", "file": str(files / "algos" / "ring3.xml")}


@pytest.mark.parametrize(("options", "expected"), [
    (["--size", "abc"], "--size: expected a number"),
    (["--size", "0"], "--size: must be > 0 (got '0')"),
    (["--size", "-2"], "--size: must be > 0 (got '-2')"),
    (["--port-model", "bogus"], "--port-model: expected bidirectional, unidirectional"),
])
@pytest.mark.parametrize("command", ["validate", "msccl-import"])
def test_a_bad_size_or_port_model_names_the_option(files: Path, command: str,
                                                   options: list[str], expected: str) -> None:
    args = [command, str(files / "algos" / "ring3.xml"), "--platform",
            str(files / "platform.yaml"), *options]
    if command == "msccl-import":
        args += ["-o", str(files / "out.yaml")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"portsim: error: {expected}"), r.stderr
    assert r.stderr.count("\n") == 1
    assert not (files / "out.yaml").exists()


def test_planner_entry_refuses_a_non_commutative_reduction(tmp_path: Path) -> None:
    """Red-team pass: MSCCL's ring allreduce combines each block from another
    rank on; its schedule carries a commutative allreduce, and was replayed as
    feasible for a scenario whose operator is not commutative (the default).
    The planner now says it does not apply; with ``commutative: true`` it runs."""
    algo = tmp_path / "ring.xml"
    algo.write_text(ring_allreduce_xml(3), encoding="utf-8")
    ring = directed_ring(3)
    planner = get_planner("msccl")
    ordered = Operation(OperationKind.ALLREDUCE).resolve(ring)
    refused = planner.plan(ring, ordered, file=str(algo))
    assert (refused.status, refused.message) == (
        "unsupported", "ring.xml is an MSCCL allreduce, whose reductions combine in any order; "
        "the scenario's operator is not commutative (commutative: true if it is)")
    commutative = Operation(OperationKind.ALLREDUCE, commutative=True).resolve(ring)
    result = planner.plan(ring, commutative, file=str(algo))
    assert result.status == "ok"
    assert result.schedule is not None
    assert foreign_schedule(result.schedule, ring, commutative) is None
    assert foreign_schedule(result.schedule, ring, ordered) == (
        "its reduction is commutative, the scenario's operator is not")


# -- files as msccl-tools and the MSCCL runtime write them ----------------------------------


def _direct_allgather_with_nop(nop_dep: bool = True) -> str:
    """3 ranks, in place: tb 0 and tb 1 each send the rank's block to one peer
    and receive the other peer's; tb 2 copies the whole output to scratch
    once both receives are done: one dependency on its step, the other on a
    ``nop`` before it, written as msccl-tools' ``ir_to_xml`` writes a nop
    (``srcoff="-1"``, ``dstoff="-1"``, ``cnt="0"``)."""
    dep = 'depid="0" deps="1"' if nop_dep else 'depid="-1" deps="-1"'
    gpus = []
    for r in range(3):
        a, b = (r + 1) % 3, (r + 2) % 3
        step = ('<step s="{s}" type="{t}" srcbuf="o" srcoff="{o}" dstbuf="o" dstoff="{o}" '
                'cnt="1" depid="-1" deps="-1" hasdep="{h}"/>')
        gpus.append(
            f'<gpu id="{r}" i_chunks="0" o_chunks="3" s_chunks="3">'
            f'<tb id="0" send="{a}" recv="{b}" chan="0">{step.format(s=0, t="s", o=r, h=0)}'
            f'{step.format(s=1, t="r", o=b, h=1)}</tb>'
            f'<tb id="1" send="{b}" recv="{a}" chan="0">{step.format(s=0, t="s", o=r, h=0)}'
            f'{step.format(s=1, t="r", o=a, h=1)}</tb>'
            '<tb id="2" send="-1" recv="-1" chan="0">'
            f'<step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" '
            f'{dep} hasdep="0"/>'
            '<step s="1" type="cpy" srcbuf="o" srcoff="0" dstbuf="s" dstoff="0" cnt="3" '
            'depid="1" deps="1" hasdep="0"/></tb></gpu>')
    return ('<algo name="ag3" proto="Simple" nchannels="1" nchunksperloop="3" ngpus="3" '
            'coll="allgather" inplace="1">' + "".join(gpus) + "</algo>")


def test_a_nop_as_msccl_tools_writes_it_is_read() -> None:
    """A nop's unused offsets are -1 in msccl-tools' files (the runtime takes
    offsets from -1 up); the file was refused (`srcoff: must be >= 0`).
    Complete platform, c = 1, chunk 1/3: every block one hop at once."""
    v = validate_msccl(_direct_allgather_with_nop(), complete_platform(3, 1,
                       port_model="multiport"), size=1, lp=False)
    assert v.correct, v.problems
    assert v.makespan == F(1, 3)
    # the nop's dependency still orders the copy after tb 0's receive
    raced = validate_msccl(_direct_allgather_with_nop(nop_dep=False),
                           complete_platform(3, 1, port_model="multiport"), size=1, lp=False)
    assert len(raced.problems) == 3
    assert all("a race" in p for p in raced.problems)


def test_an_offset_of_minus_one_that_a_step_uses_is_refused() -> None:
    text = _direct_allgather_with_nop().replace(
        'type="s" srcbuf="o" srcoff="0"', 'type="s" srcbuf="o" srcoff="-1"', 1)
    with pytest.raises(ScheduleError, match=r"gpu\[0\]\.tb\[0\]\.step\[0\]\.srcoff: must be >= "
                       r"0: a 's' step reads it .* \(got -1\)"):
        validate_msccl(text, complete_platform(3, 1, port_model="multiport"), size=1)


def test_reducescatter_the_runtime_spelling_is_read() -> None:
    """The MSCCL runtime knows coll="reducescatter" only (msccl-tools writes it
    since 2023); it was "unknown collective".  Both spellings give the same
    verdict: 2 steps of hop 1 and reduction 1 on the directed ring (c = 1)."""
    text = ring_reduce_scatter_xml(3)
    assert 'coll="reducescatter"' in text
    for spelling in (text, text.replace('coll="reducescatter"', 'coll="reduce_scatter"')):
        v = validate_msccl(spelling, directed_ring(3), size=3)
        assert v.timing.algorithm.collective == "reduce_scatter"
        assert v.correct, v.problems
        assert v.makespan == 4


@pytest.mark.parametrize("seed", range(12))
def test_races_found_as_by_a_search_of_the_whole_step_graph(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Race detection searches back from a reader only through the steps placed
    after the writer (all of a step's ancestors took 36 of the 42 s of timing a
    128-rank hierarchical allreduce).  Binary-tree broadcasts and reduces of 3
    chunks with dependencies dropped at random (each drop a race or none) get
    the problems a plain reachability test on the whole graph gives."""
    import random
    import xml.etree.ElementTree as ET

    from portsim.planners.msccl.algorithm import _ListScheduler

    rng = random.Random(seed)
    base = (tree_broadcast_xml if seed % 2 else tree_reduce_xml)(11, chunks=3)
    root = ET.fromstring(base)
    with_deps = [s for s in root.iter("step") if s.get("depid") != "-1"]
    for step in rng.sample(with_deps, k=rng.randint(1, len(with_deps))):
        step.set("depid", "-1")
        step.set("deps", "-1")
    algo = read_msccl(ET.tostring(root, encoding="unicode"))
    platform = complete_platform(11, 1, port_model="multiport")
    found = time_msccl(algo, platform).problems

    def reachable(self: _ListScheduler, writer: object, reader: object) -> bool:
        return nx.has_path(self.graph, ("end", writer), ("start", reader))

    monkeypatch.setattr(_ListScheduler, "_after", reachable)
    assert found == time_msccl(algo, platform).problems
    assert any("a race" in p for p in found)
