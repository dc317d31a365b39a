"""MSCCL XML algorithms (issue 16): reading, meaning, timing, verdicts, CLI.

The samples in ``tests/data/msccl/`` were generated with the public
msccl-tools (MIT) for 8 GPUs (copies of ``../shared/msccl/``).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner
from route_platforms import two_routes

from portsim.scenarios.cli import main
from portsim.scenarios.generators import dgx_a100_platform
from portsim.scenarios.msccl import (
    STEP_TYPES,
    read_msccl,
    ring_allgather_xml,
    time_msccl,
    validate_msccl,
)
from portsim.simulator.errors import ScheduleError
from portsim.simulator.platform import Platform

DATA = Path(__file__).parent / "data" / "msccl"
ALLGATHER = DATA / "allgather_ring_8_1_1.xml"
ALLREDUCE = DATA / "allreduce_a100_ring_8_1_1.xml"
ALLTOALL = DATA / "alltoall_allpairs_8_1.xml"
SAMPLES = [ALLGATHER, ALLREDUCE, ALLTOALL]


def ring_platform(n: int, c: int | F = 1) -> Platform:
    """A directed ring P0 -> P1 -> ... -> P0 of links of cost ``c``."""
    return Platform.build([f"P{i}" for i in range(n)],
                          [(f"P{i}", f"P{(i + 1) % n}", c) for i in range(n)])


@pytest.fixture(scope="module")
def dgx() -> Platform:
    return dgx_a100_platform(1)


# -- reading ----------------------------------------------------------------------------


def test_samples_read() -> None:
    ag, ar, a2a = (read_msccl(p) for p in SAMPLES)
    assert (ag.collective, ag.ngpus, ag.nchunksperloop, ag.inplace) == ("allgather", 8, 8, True)
    assert [s.type for s in ag.gpus[0].threadblocks[0].steps] == ["s"] + ["rcs"] * 6 + ["r"]
    assert ar.collective == "allreduce"
    assert ar.chunks_per_rank == 8
    assert {s.type for g in ar.gpus for t in g.threadblocks for s in t.steps} == {
        "s", "rrs", "rrcs", "rcs", "r"}
    assert a2a.collective == "alltoall"
    assert not a2a.inplace
    assert len(a2a.gpus[3].threadblocks) == 14  # 7 receive + 7 send threadblocks
    assert {"s", "r", "cpy"} <= {s.type for g in a2a.gpus for t in g.threadblocks
                                 for s in t.steps} <= STEP_TYPES


def _broken(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) >= count, old
    return text.replace(old, new, count)


AG_TEXT = ALLGATHER.read_text(encoding="utf-8")
# gpu 0's last step: a receive of chunk 1 from rank 7
LAST_R = '<step s="7" type="r" srcbuf="o" srcoff="1"'


@pytest.mark.parametrize(("text", "pattern"), [
    (_broken(AG_TEXT, LAST_R, LAST_R.replace('"r"', '"nop"')),
     r"gpu\[7\]\.tb\[0\]\.step\[6\]\.type: a send with no matching receive .*\(got 'rcs'\)"),
    (_broken(AG_TEXT, LAST_R, LAST_R.replace('"r"', '"xx"')),
     r"gpu\[0\]\.tb\[0\]\.step\[7\]\.type: unknown step type .*\(got 'xx'\)"),
    # (step 7, the last of the threadblock, signals: hasdep="1")
    (_broken(_broken(AG_TEXT, '<step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" '
                     'dstoff="0" cnt="1" depid="-1" deps="-1"',
                     '<step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" '
                     'cnt="1" depid="0" deps="7"'),
             LAST_R + ' dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"',
             LAST_R + ' dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"'),
     r"gpu\[0\]\.tb\[0\]\.step\[0\]\.depid: a cycle of dependencies \(through "
     r"gpu\[0\]\.tb\[0\]\.step\[0\] -> .*\(got 0\)"),
    (_broken(AG_TEXT, 'depid="-1" deps="-1"', 'depid="3" deps="0"'),
     r"gpu\[0\]\.tb\[0\]\.step\[0\]\.depid: dependency on a missing step "
     r"\(got 'tb 3 step 0'\)"),
    (_broken(AG_TEXT, 'type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1"',
             'type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="7" cnt="2"'),
     r"gpu\[0\]\.tb\[0\]\.step\[7\]\.cnt: cnt out of the buffer: dstoff 7 \+ cnt 2 > 8 "
     r"chunks of buffer 'o' \(got 2\)"),
    (re.sub(r'<gpu id="5".*?</gpu>', "", AG_TEXT, flags=re.S),
     r"gpu\[5\]: rank missing: ngpus = 8 but no <gpu id=5> \(got 5\)"),
    # a rank listed twice is named as such, before its threadblocks are read (gpu 7's
    # block renumbered 6 receives from rank 6, itself: that was the message)
    (_broken(AG_TEXT, '<gpu id="7"', '<gpu id="6"'),
     r"gpu\[6\]: rank listed twice \(got 6\)"),
    (_broken(AG_TEXT, 'ngpus="8"', 'ngpus="9"'),
     r"algo\.nchunksperloop: an allgather needs nchunksperloop to be a multiple of ngpus "
     r"\(9\) \(got 8\)"),
    (_broken(AG_TEXT, 'coll="allgather"', 'coll="allscatter"'),
     r"algo\.coll: unknown collective \(expected allgather, allreduce, alltoall, broadcast, "
     r"reduce, reduce_scatter, reducescatter\) \(got 'allscatter'\)"),
])
def test_malformed_files_fail_in_one_line(tmp_path: Path, text: str, pattern: str) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ScheduleError) as err:
        read_msccl(bad)
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith(f"{bad}: ")
    assert re.search(pattern, line), line
    # the CLI: exit 2, the same one line
    plat = tmp_path / "p.yaml"
    plat.write_text("platform:\n  generator: {type: complete, n: 8}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(bad), "--platform", str(plat)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"portsim: error: {line}"


_GPU3 = '<gpu id="3" i_chunks="0" o_chunks="8" s_chunks="0">'
_TB3 = '<tb id="0" send="4" recv="2" chan="0">'
_STEP3 = ('<step s="2" type="rcs" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" '
          'depid="-1" deps="-1" hasdep="0"/>')


def _without(element: str, key: str) -> str:
    return _broken(AG_TEXT, element, re.sub(rf' {key}="[^"]*"', "", element))


@pytest.mark.parametrize(("element", "key", "where"), [
    *[(_GPU3, key, "gpu[3]") for key in ("i_chunks", "o_chunks", "s_chunks")],
    *[(_TB3, key, "gpu[3].tb[0]") for key in ("send", "recv", "chan")],
    *[(_STEP3, key, "gpu[3].tb[0].step[2]")
      for key in ("type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps",
                  "hasdep")],
])
def test_an_attribute_the_runtime_requires_is_not_guessed(
        tmp_path: Path, element: str, key: str, where: str) -> None:
    # The MSCCL runtime's parser refuses a <gpu>, <tb> or <step> missing any of these
    # (NCCLCHECK on each attribute); portsim once read srcoff as 0, srcbuf as i, send
    # and recv as -1..., and so judged a file the runtime never loads.
    bad = tmp_path / "bad.xml"
    bad.write_text(_without(element, key), encoding="utf-8")
    with pytest.raises(ScheduleError) as err:
        read_msccl(bad)
    assert str(err.value) == f"{bad}: {where}.{key}: missing attribute"


def test_hasdep_is_0_or_1() -> None:
    with pytest.raises(ScheduleError) as err:
        read_msccl(_broken(AG_TEXT, _STEP3, _STEP3.replace('hasdep="0"', 'hasdep="2"')))
    assert str(err.value) == "<string>: gpu[3].tb[0].step[2].hasdep: must be <= 1 (got 2)"


# -- the samples on one DGX A100 ---------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_samples_feasible_and_correct_on_a_dgx_a100(dgx: Platform, path: Path) -> None:
    v = validate_msccl(path, dgx, size=8, lp=False)
    assert v.feasible, v.report.violations[:3]
    assert v.correct, v.problems
    assert v.report.completed == v.report.instances == read_msccl(path).chunks_per_rank
    assert v.makespan == v.timing.makespan  # the strict replay agrees with the importer


def test_ring_allgather_on_the_nvswitch_by_hand(dgx: Platform) -> None:
    """Chunk 1 (size 8 / 8), NVLink 300 each way: a hop lasts 1/300.  Each of
    the 7 ring steps crosses GPU -> switch -> GPU (2 hops, store and forward):
    14/300.  A rank's forward carries the copy it received; the switch does
    not forward the one it held from the previous step's transfer (it did:
    8/300, a forward reaching the next GPU as the sender finished sending).
    The series obeys the same rule (it did not: a run every 8/300, 300/8
    runs per unit).  By hand, with d = 1/300: a run's k-th uplink send waits
    for the (k-1)-th ring step to reach its GPU, so the steps of a run are
    2d apart; run t + 1's first send follows run t's last one on the uplink
    (d later) and reaches the next GPU as run t's last step does, d after
    it; so run t ends at 14d + 13d t.  Within 100 makespans (1400d): runs
    0..106, 107 runs in 14/3."""
    v = validate_msccl(ALLGATHER, dgx, size=8, lp=False)
    assert v.makespan == F(14, 300)
    assert v.throughput == F(107) / F(14, 3) == F(321, 14)
    # and never above one run per 13 hops once the series has filled
    assert v.throughput <= F(300, 13) + F(1) / F(14, 3)


@pytest.mark.slow
def test_ring_allgather_ratio_to_the_lp_bound_on_a_dgx_a100(dgx: Platform) -> None:
    """The lp allgather bound there is 325/7 (300 of NVLink plus 25 of NIC per
    GPU, 7 chunks to receive); the ring reaches 321/14 (107 runs in 100
    makespans, see above): ratio 321/650."""
    v = validate_msccl(ALLGATHER, dgx, size=8)
    assert v.lp_bound == F(325, 7)
    assert v.ratio_to_lp_bound == F(321, 14) / F(325, 7) == F(321, 650)


def test_ring_allgather_unidirectional_is_correct_and_slower_by_hand(dgx: Platform) -> None:
    """Unidirectional: the NVSwitch has one port for every send and receive;
    the 8 * 7 chunk deliveries cross it twice each: 112 transfers of 1/300 in
    a row, 112/300, against 14/300 under multiport: 8 times slower."""
    multi = validate_msccl(ALLGATHER, dgx, size=8, lp=False)
    uni = validate_msccl(ALLGATHER, dgx, size=8, lp=False, port_model="unidirectional")
    assert uni.correct
    assert uni.feasible
    assert uni.report.port_model == "unidirectional"
    assert uni.makespan == F(112, 300)
    assert uni.makespan / multi.makespan == 8


# -- the generator against closed forms ---------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 7, 16])
def test_generated_ring_allgather_closed_form(n: int) -> None:
    """Ring allgather on n ranks, link cost c, one chunk per rank: (n - 1) c chunk."""
    c, size = F(3, 2), F(5)
    v = validate_msccl(ring_allgather_xml(n), ring_platform(n, c), size=size, lp=False)
    assert v.correct
    assert v.feasible
    chunk = size / n
    assert v.makespan == (n - 1) * c * chunk
    assert v.throughput == 1 / ((n - 1) * c * chunk)  # one receive port per rank


def test_progress_names_each_phase_in_order() -> None:
    """``validate`` shows these on a terminal: a 64-rank validation takes seconds."""
    phases: list[str] = []
    v = validate_msccl(ring_allgather_xml(3), ring_platform(3, 2), size=3,
                       progress=phases.append)
    assert v.ratio_to_lp_bound == 1
    assert phases == ["reading and timing the algorithm", "replaying 6 events strictly",
                      "replaying a series over 100 makespans",
                      "the lp bound of the allgather (lp planner, time limit 300 s)"]
    quiet: list[str] = []
    validate_msccl(ring_allgather_xml(3), ring_platform(3, 2), size=3, lp=False,
                   progress=quiet.append)
    assert quiet == phases[:3]


@pytest.mark.parametrize("n", [2, 3])
def test_generated_ring_reaches_the_lp_bound(n: int) -> None:
    """On a directed ring the ring allgather is optimal: its series equals the lp bound."""
    v = validate_msccl(ring_allgather_xml(n), ring_platform(n, 2), size=n)
    assert v.lp_bound == F(1, 2 * (n - 1))
    assert v.ratio_to_lp_bound == 1


@pytest.mark.parametrize(("n", "rounds"), [(2, 2), (3, 3), (5, 3)])
def test_ring_unidirectional_factor_by_hand(n: int, rounds: int) -> None:
    """Unidirectional: the ring's n transfers of one step share ports pairwise;
    they need as many rounds as the cycle's edge colouring (2 for the 2-ring,
    3 for an odd cycle): makespan (n - 1) * rounds * c."""
    xml = ring_allgather_xml(n)
    bi = validate_msccl(xml, ring_platform(n, 2), size=n, lp=False)
    uni = validate_msccl(xml, ring_platform(n, 2), size=n, lp=False,
                         port_model="unidirectional")
    assert uni.correct
    assert uni.makespan == (n - 1) * rounds * 2
    assert uni.makespan / bi.makespan == rounds


# -- incorrect algorithms -----------------------------------------------------------------


def test_a_chunk_never_sent_is_named(tmp_path: Path, dgx: Platform) -> None:
    """All-to-all with rank 0's send to rank 1 and rank 1's receive turned into nops."""
    text = ALLTOALL.read_text(encoding="utf-8")
    text = _broken(text, '<step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0"',
                   '<step s="0" type="nop" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0"')
    gpu1 = text.index('<gpu id="1"')
    head, tail = text[:gpu1], text[gpu1:]
    tail = _broken(tail, '<step s="0" type="r" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0"',
                   '<step s="0" type="nop" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0"')
    v = validate_msccl(head + tail, dgx, size=8, lp=False)
    assert not v.correct
    assert v.problems == ("rank 1 (P1) buffer o[0] never receives chunk m[P0,P1]",)
    assert not v.report.complete  # the engine agrees: P1 misses m[P0,P1]
    bad = tmp_path / "never_sent.xml"
    bad.write_text(head + tail, encoding="utf-8")
    plat = tmp_path / "dgx.yaml"
    plat.write_text("platform:\n  port_model: multiport\n  generator: {type: dgx_a100}\n",
                    encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(bad), "--platform", str(plat),
                                       "--size", "8", "--format", "json"])
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["correct"] is False
    assert [(x["node"], x["detail"]) for x in out["violations"]] == [
        (x.node, x.detail) for x in v.report.violations]
    # the keys of `validate SCHEDULE.yaml`'s violations, `described` included
    assert [len(x["described"]) for x in out["violations"]] == [
        len(x.events) for x in v.report.violations]
    assert any(x.node == "P1" and "m[P0,P1]" in x.detail for x in v.report.violations)
    assert out["problems"] == ["rank 1 (P1) buffer o[0] never receives chunk m[P0,P1]"]


TWO_RANK_ALLREDUCE = """<algo name="ar2" coll="allreduce" ngpus="2" nchunksperloop="1"
 inplace="1" proto="Simple" nchannels="1">
 <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0"><tb id="0" send="1" recv="1" chan="0">
  <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0"
   cnt="1" depid="-1" deps="-1" hasdep="0"/>
  <step s="1" type="{last}" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0"
   cnt="1" depid="-1" deps="-1" hasdep="0"/>
 </tb></gpu>
 <gpu id="1" i_chunks="1" o_chunks="0" s_chunks="0"><tb id="0" send="0" recv="0" chan="0">
  <step s="0" type="rrcs" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0"
   cnt="1" depid="-1" deps="-1" hasdep="0"/>
 </tb></gpu>
</algo>"""


def test_a_chunk_reduced_twice_is_named() -> None:
    p = Platform.build({"A": 1, "B": 1}, [("A", "B", 1), ("B", "A", 1)])
    good = validate_msccl(TWO_RANK_ALLREDUCE.format(last="r"), p, lp=False)
    assert good.correct
    # send 1, reduce 1 (compute time 1), send back 1
    assert good.makespan == 3
    bad = validate_msccl(TWO_RANK_ALLREDUCE.format(last="rrc"), p, lp=False)
    assert not bad.correct
    assert bad.problems[0] == (
        "rank 0 (A) chunk 0: gpu[0].tb[0].step[1] reduces v{0,1} with v{0}: inputs "
        "overlap on participants [0] (a chunk reduced twice)")


@pytest.mark.parametrize(("size", "makespan"), [(2, 2), (200, 12)])
def test_transfers_route_by_the_chunk_s_duration(size: int, makespan: int) -> None:
    """Links with latency: A -> B direct (latency 10, bandwidth 100) or through the
    router R (bandwidth 1 a hop); B -> A through R or through Q (latency 5,
    bandwidth 100 a hop).  A 2-rank ring allgather of chunks of size/2: chunk 1
    goes through R both ways, 2; chunk 100 goes direct (11) and through Q (2 (5 +
    1) = 12), where the paths chosen for a message of size 1 sent it through R both
    ways (200)."""
    v = validate_msccl(ring_allgather_xml(2), two_routes("multiport"),
                       size=size, lp=False, ranks=["A", "B"])
    assert (v.correct, v.feasible) == (True, True)
    assert v.makespan == makespan


def test_an_all_to_all_searches_paths_once_per_sending_rank(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The timing of an all-to-all of n ranks searches the paths from each rank
    once (n searches), not once per pair (n (n - 1): 25 of the 26 s of timing
    a 128-rank all-pairs all-to-all on 16 dgx_a100 servers), with the same
    makespan as the routes found one pair at a time: 7/150 on one NVSwitch, as
    README's table (benchmarks/msccl.py) gives for this algorithm."""
    import portsim.planners.msccl.algorithm as msccl_algorithm
    from portsim.scenarios.msccl import allpairs_alltoall_xml

    searches: list[object] = []
    for name in ("cheapest_path", "cheapest_paths_from"):
        original = getattr(msccl_algorithm, name)

        def counted(*args: object, _original: object = original, **kwargs: object) -> object:
            searches.append(args[1])
            return _original(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(msccl_algorithm, name, counted)
    gpus = [f"P{i}" for i in range(8)]
    hop = F(1, 300)
    p = Platform.build([*gpus, "sw"], [(g, "sw", hop) for g in gpus]
                       + [("sw", g, hop) for g in gpus], "multiport", routers=["sw"])
    timing = time_msccl(read_msccl(allpairs_alltoall_xml(8)), p, size=8)
    assert timing.correct
    assert sorted(searches) == gpus  # type: ignore[type-var]
    assert timing.makespan == F(7, 150)


def test_ranks_map_onto_named_nodes() -> None:
    p = ring_platform(3, 1)
    xml = ring_allgather_xml(3)
    # ranks 0, 1, 2 on P0, P2, P1: the ring runs against the links and needs two hops
    timing = time_msccl(read_msccl(xml), p, size=3, ranks=["P0", "P2", "P1"])
    assert timing.ranks == ("P0", "P2", "P1")
    assert timing.correct
    assert timing.makespan > time_msccl(read_msccl(xml), p, size=3).makespan
    with pytest.raises(ScheduleError, match=r"ranks\[1\]: not a processor"):
        time_msccl(read_msccl(xml), p, ranks=["P0", "X", "P1"])
    # one name or a number for the list: "P0" was read as the ranks "P" and "0"
    # ("ranks must list 3 nodes ... (got ['P', '0'])"), 3 raised TypeError
    for bad in ("P0", "P01", 3):
        with pytest.raises(ScheduleError, match=r"ranks: ranks must be a list of node ids"):
            time_msccl(read_msccl(xml), p, ranks=bad)  # type: ignore[arg-type]


def test_cli_json_fields(tmp_path: Path) -> None:
    xml = tmp_path / "ring.xml"
    xml.write_text(ring_allgather_xml(3), encoding="utf-8")
    plat = tmp_path / "scenario.yaml"
    plat.write_text("platform:\n  nodes: [{id: P0}, {id: P1}, {id: P2}]\n  links:\n"
                    "    - {src: P0, dst: P1, c: 2}\n    - {src: P1, dst: P2, c: 2}\n"
                    "    - {src: P2, dst: P0, c: 2}\noperation: {type: allgather}\n",
                    encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(xml), "--platform", str(plat),
                                       "--size", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["feasible"] is True
    assert out["correct"] is True
    assert out["makespan"] == "4"
    assert out["throughput"] == "1/4"
    assert out["lp_bound"] == "1/4"
    assert out["ratio_to_lp_bound"] == "1"
    assert out["violations"] == []
    assert out["runtime_notes"] == []


def test_what_the_msccl_runtime_would_refuse_is_noted(tmp_path: Path) -> None:
    """microsoft/msccl's msccl.h loads at most 256 steps a threadblock
    (MSCCL_MAX_NUM_STEPS), 32 threadblocks with a send peer a channel and 32
    with a receive peer (MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL, as its XML
    parser counts them) and a cnt below 72 (MSCCL_MAX_COUNT); a file past one
    was "correct: yes" with no word (found by a trial at 128 ranks).  The
    counts here come from the XML itself, read with ElementTree."""
    import xml.etree.ElementTree as ET

    from portsim.scenarios.msccl import allpairs_alltoall_xml, ring_allreduce_xml

    ring = ring_allreduce_xml(129)  # 2 n - 1 = 257 steps a threadblock, one past the limit
    steps = max(len(tb.findall("step")) for tb in ET.fromstring(ring).iter("tb"))
    assert steps > 256
    assert read_msccl(ring).runtime_limits() == (
        f"gpu[0].tb[0] has {steps} steps: the MSCCL runtime loads at most 256 a "
        f"threadblock (MSCCL_MAX_NUM_STEPS in microsoft/msccl's msccl.h)",)
    # The runtime's parser counts, per channel, the threadblocks with a send
    # peer and those with a receive peer apart (a copy-only one in neither):
    # all on channel 0, as portsim's generator once wrote them, 17 ranks have
    # 33 threadblocks there but 16 sending and 16 receiving, which it loads
    # (they were noted); 34 ranks have 33 sending.
    for n, over in ((17, False), (33, False), (34, True)):
        xml = re.sub(r'chan="\d+"', 'chan="0"', allpairs_alltoall_xml(n))
        gpu0 = next(ET.fromstring(xml).iter("gpu"))
        sending = sum(1 for tb in gpu0.iter("tb") if tb.get("send") != "-1")
        assert (sending > 32) is over
        notes = read_msccl(xml).runtime_limits()
        assert notes == ((f"gpu[0] has {sending} threadblocks sending on channel 0: the "
                          f"MSCCL runtime loads at most 32 a channel "
                          f"(MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL in msccl.h)",)
                         if over else ())
    # a step of 72 chunks or more (MSCCL_MAX_COUNT: the runtime takes cnt < 72)
    assert read_msccl(allpairs_alltoall_xml(2, chunks=71)).runtime_limits() == ()
    assert read_msccl(allpairs_alltoall_xml(2, chunks=72)).runtime_limits() == (
        "gpu[0].tb[0].step[0] has cnt 72: the MSCCL runtime takes a count below 72 a "
        "step (MSCCL_MAX_COUNT in msccl.h)",)
    path = tmp_path / "a2a.xml"
    path.write_text(xml, encoding="utf-8")
    plat = tmp_path / "complete.yaml"
    plat.write_text("platform:\n  generator: {type: complete, n: 34}\n"
                    "operation: {type: alltoall}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path), "--platform", str(plat),
                                       "--no-lp-bound"])
    assert result.exit_code == 0, result.output
    assert "correct: yes" in result.stdout
    assert f"note: gpu[0] has {sending} threadblocks sending on channel 0" in result.stdout


@pytest.mark.parametrize("n", [16, 17, 33, 64])
def test_generated_allpairs_alltoall_fits_the_runtime_channels(n: int) -> None:
    """``allpairs_alltoall_xml`` put its 2n - 1 threadblocks a rank on channel 0:
    from 17 ranks, past the runtime's 32 a channel.  Counted from the XML with
    ElementTree: at most 32 a channel, ceil((2n - 1) / 32) channels, every
    channel below ``nchannels``, and each send on the channel of its receive."""
    import xml.etree.ElementTree as ET

    from portsim.scenarios.msccl import allpairs_alltoall_xml

    root = ET.fromstring(allpairs_alltoall_xml(n))
    assert int(root.get("nchannels", "0")) == -(-(2 * n - 1) // 32)
    channel_of: dict[tuple[int, int, str], str] = {}
    for gpu in root.iter("gpu"):
        chans = [int(tb.get("chan", "-1")) for tb in gpu.iter("tb")]
        assert len(chans) == 2 * n - 1
        assert max(chans.count(c) for c in set(chans)) <= 32
        assert max(chans) < int(root.get("nchannels", "0"))
        for tb in gpu.iter("tb"):
            rank = int(gpu.get("id", "-1"))
            if tb.get("send") != "-1":
                channel_of[rank, int(tb.get("send", "-1")), "send"] = tb.get("chan", "")
            if tb.get("recv") != "-1":
                channel_of[int(tb.get("recv", "-1")), rank, "recv"] = tb.get("chan", "")
    assert all(channel_of[a, b, "send"] == channel_of[a, b, "recv"]
               for a in range(n) for b in range(n) if a != b)
    assert read_msccl(allpairs_alltoall_xml(n)).runtime_limits() == ()


def test_generated_allpairs_alltoall_on_four_channels_is_correct() -> None:
    """64 ranks on four channels: still a correct all-to-all; a chunk of size 1
    (64 / 64) crosses one link of cost 1, and under the one-port model each
    rank sends its 63 chunks one after the other, a permutation each step of
    the rotation: makespan 63."""
    from portsim.scenarios.generators import complete_platform
    from portsim.scenarios.msccl import allpairs_alltoall_xml

    p = complete_platform(64, 1, port_model="bidirectional")
    v = validate_msccl(allpairs_alltoall_xml(64, ordered=True), p, size=64, lp=False)
    assert v.correct
    assert v.makespan == 63
    assert v.to_dict()["runtime_notes"] == []


def test_cli_text_shows_the_first_20_problems_and_counts_the_rest(tmp_path: Path) -> None:
    """A binary-tree reduce of 15 ranks and 4 chunks whose dependencies are all
    dropped races 28 times; the text printed every race (13,000 lines for a
    64-rank hierarchical allreduce), it now prints 20 and counts the rest, as
    `run` does with a row's violations; JSON lists all 28."""
    from portsim.scenarios.msccl import tree_reduce_xml

    xml = tmp_path / "racy.xml"
    xml.write_text(re.sub(r'depid="\d+" deps="\d+"', 'depid="-1" deps="-1"',
                          tree_reduce_xml(15, chunks=4)), encoding="utf-8")
    plat = tmp_path / "p.yaml"
    plat.write_text("platform:\n  port_model: multiport\n"
                    "  generator: {type: complete, n: 15, c: 1}\n", encoding="utf-8")
    args = ["validate", str(xml), "--platform", str(plat), "--no-lp-bound"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1, text.output
    lines = [x for x in text.stdout.splitlines() if x.startswith("incorrect: ")]
    assert len(lines) == 21
    assert lines[-1] == ("incorrect: ... 8 more problems (--format json lists them all)")
    assert all("a race" in x for x in lines[:20])
    full = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    assert len(full["problems"]) == 28
    assert [f"incorrect: {p}" for p in full["problems"][:20]] == lines[:20]


def test_cli_options_of_the_two_kinds_do_not_mix(tmp_path: Path) -> None:
    plat = tmp_path / "p.yaml"
    plat.write_text("platform:\n  generator: {type: complete, n: 3}\n", encoding="utf-8")
    xml = tmp_path / "ring.xml"
    xml.write_text(ring_allgather_xml(3), encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["validate", str(xml)])
    assert r.exit_code == 2
    assert "--platform FILE.yaml is required" in r.stderr
    r = runner.invoke(main, ["validate", str(xml), "--platform", str(plat), "--mode", "asap"])
    assert r.exit_code == 2
    assert "--mode: does not apply" in r.stderr
    # a flag is named alone: it once said "(got 'True')" of --float
    r = runner.invoke(main, ["validate", str(xml), "--platform", str(plat), "--float"])
    assert r.exit_code == 2
    assert r.stderr == ("portsim: error: --float: does not apply to an MSCCL .xml file, "
                        "replayed strictly\n")
    r = runner.invoke(main, ["validate", str(xml), "--platform", str(plat), "--horizon", "5"])
    assert r.stderr == ("portsim: error: --horizon: does not apply to an MSCCL .xml file, "
                        "replayed strictly (got '5')\n")
    r = runner.invoke(main, ["validate", str(xml), "--platform", str(plat)])
    assert r.exit_code == 0, r.output
    assert "correct: yes" in r.stdout


def test_the_readme_block_prints_what_validate_prints(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's MSCCL block gives a command, the platform file it reads (a
    comment) and the output: run as written, the command prints those lines (the
    figures are checked by hand above: makespan 7/150, 107 runs in 14/3, the
    bound 325/7)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- readme-test: skip command and output;[^\n]*-->\n```\n(.*?)```",
                      readme, re.S)
    assert found is not None
    command, comment, *output = found.group(1).splitlines()
    name, platform = re.fullmatch(r"# (\S+): (.*)", comment).groups()  # type: ignore[union-attr]
    (tmp_path / name).write_text(platform + "\n", encoding="utf-8")
    (tmp_path / "tests").symlink_to(Path(__file__).resolve().parent)
    monkeypatch.chdir(tmp_path)
    args = command.split()
    assert args[0] == "portsim"
    result = CliRunner().invoke(main, args[1:])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == output


# -- a GPU on another transfer's path forwards, it does not hold ---------------------------

# A broadcast on the chain P0 - P1 - P2 (no link P0 - P2): rank 0 sends to rank 2
# (through P1) first, and to rank 1 only once that transfer is delivered (depid).
BROADCAST_THROUGH_A_RANK = """\
<algo name="through" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="3"
      coll="broadcast" inplace="1" outofplace="0" minBytes="0" maxBytes="0">
  <gpu id="0" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="2" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
            depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
            depid="0" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
            depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="2" i_chunks="1" o_chunks="1" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1"
            depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"""


def test_a_rank_a_transfer_passes_through_gets_the_chunk_from_its_own_receive() -> None:
    """By hand (c = 1): P0 -> P1 -> P2 in [0, 2]; the dependency holds the send to
    rank 1 until 2, so rank 1's receive ends at 3, the algorithm's end.  P1 relays
    the chunk at time 1 (as a GPU relays NCCL's PXN traffic), but not into its
    buffer: the makespan is 3, not 2."""
    chain = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P0", 1),
                                                ("P1", "P2", 1), ("P2", "P1", 1)])
    v = validate_msccl(BROADCAST_THROUGH_A_RANK, chain, lp=False)
    assert (v.correct, v.feasible) == (True, True)
    assert v.makespan == 3
    assert v.to_dict()["makespan"] == "3"
    # the series: link P0 -> P1 carries two transfers of one unit per run
    assert v.throughput == F(1, 2)


def _relay_files(tmp_path: Path, platform: str, targets: str) -> tuple[Path, Path]:
    """BROADCAST_THROUGH_A_RANK as a file, and a scenario running it as the ``msccl``
    planner on ``platform`` (a YAML mapping), a broadcast from P0 to ``targets``."""
    (tmp_path / "through.xml").write_text(BROADCAST_THROUGH_A_RANK, encoding="utf-8")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"name: relay\nplatform: {platform}\n"
                        f"operation: {{type: broadcast, source: P0, targets: {targets}}}\n"
                        "planners: [{name: msccl, file: through.xml}]\n", encoding="utf-8")
    return tmp_path / "through.xml", scenario


CHAIN = ("{port_model: bidirectional, nodes: [{id: P0}, {id: P1}, {id: P2}], links: ["
         "{src: P0, dst: P1, c: 1}, {src: P1, dst: P0, c: 1}, {src: P1, dst: P2, c: 1}, "
         "{src: P2, dst: P1, c: 1}]}")


def _import_run_validate(xml: Path, scenario: Path,
                         *args: str) -> tuple[str, str, dict[str, object]]:
    """The makespans of ``msccl-import`` then ``validate`` and of ``run``, and
    ``run``'s row."""
    runner = CliRunner()
    out = scenario.parent / "imported.yaml"
    r = runner.invoke(main, ["msccl-import", str(xml), "--platform", str(scenario),
                             *args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["validate", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    imported = json.loads(r.stdout)["makespan"]
    r = runner.invoke(main, ["run", str(scenario), "--json", "-"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)["results"][0]
    return imported, row["makespan"], row


def test_an_imported_relay_keeps_no_copy(tmp_path: Path) -> None:
    """The algorithm above on the chain: its schedule file and the ``msccl``
    planner give the makespan ``validate ALGO.xml`` gives, 3 by hand (they gave
    2, P1 taken to hold the chunk it relays from time 1); the hop P0 -> P1 of
    the transfer to rank 2 is the transit send."""
    xml, scenario = _relay_files(tmp_path, CHAIN, "[P1, P2]")
    imported, ran, row = _import_run_validate(xml, scenario)
    assert (imported, ran) == ("3", "3")
    assert not [n for n in row["notes"] if "announced" in n]  # type: ignore[attr-defined]
    chain = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P0", 1),
                                                ("P1", "P2", 1), ("P2", "P1", 1)])
    events = time_msccl(read_msccl(BROADCAST_THROUGH_A_RANK), chain).schedule.events
    assert [(e.src, e.dst, e.start, e.transit) for e in events] == [  # type: ignore[union-attr]
        ("P0", "P1", 0, True), ("P1", "P2", 1, False), ("P0", "P1", 2, False)]


def test_a_pxn_relay_between_two_dgx_a100_servers(tmp_path: Path) -> None:
    """The same algorithm on two ``dgx_a100`` servers, ranks P0, P1, P9: P0 -> P9
    takes P0 -> nvswitch0 -> P1 -> nic0_1 -> ib1 -> nic1_1 -> P9 (rail 1, as
    NCCL's PXN relays: two NVLink hops of 1/300, four of 1/25), 1/150 + 4/25 =
    1/6; then P0 -> nvswitch0 -> P1, 1/150 more: P1 holds the chunk at 13/75.
    By hand 13/75 everywhere (1/6 in the schedule file and ``run``, which took
    P1 to hold the chunk it relays from 1/150)."""
    dgx2 = "{port_model: multiport, generator: {type: dgx_a100, servers: 2}}"
    xml, scenario = _relay_files(tmp_path, dgx2, "[P1, P9]")
    v = validate_msccl(BROADCAST_THROUGH_A_RANK, dgx_a100_platform(2), ranks=["P0", "P1", "P9"],
                       lp=False)
    assert (v.correct, v.feasible, v.makespan) == (True, True, F(13, 75))
    imported, ran, row = _import_run_validate(xml, scenario, "--ranks", "P0,P1,P9")
    assert (imported, ran) == ("13/75", "13/75")
    assert not [n for n in row["notes"] if "announced" in n]  # type: ignore[attr-defined]
    events = v.timing.schedule.events
    assert [(e.src, e.dst) for e in events[:6] if e.transit] == [  # type: ignore[union-attr]
        ("P0", "nvswitch0"), ("nvswitch0", "P1"), ("P1", "nic0_1"), ("nic0_1", "ib1"),
        ("ib1", "nic1_1")]


def _two_rank_allgather_with(tbs_on_rank_0: int) -> str:
    """A 2-rank in-place allgather (one threadblock each way) whose rank 0 has
    ``tbs_on_rank_0`` threadblocks in all, the others idle (no peer, no step)."""
    idle = "".join(f'    <tb id="{k}" send="-1" recv="-1" chan="0"/>\n'
                   for k in range(1, tbs_on_rank_0))
    step = ('<step s="{s}" type="{t}" srcbuf="o" srcoff="{o}" dstbuf="o" dstoff="{o}" '
            'cnt="1" depid="-1" deps="-1" hasdep="0"/>')
    return (
        '<algo name="idle" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" '
        'coll="allgather" inplace="1" outofplace="0" minBytes="0" maxBytes="0">\n'
        '  <gpu id="0" i_chunks="0" o_chunks="2" s_chunks="0">\n'
        '    <tb id="0" send="1" recv="1" chan="0">'
        + step.format(s=0, t="s", o=0) + step.format(s=1, t="r", o=1) + "</tb>\n"
        + idle + "  </gpu>\n"
        '  <gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0">\n'
        '    <tb id="0" send="0" recv="0" chan="0">'
        + step.format(s=0, t="s", o=1) + step.format(s=1, t="r", o=0) + "</tb>\n"
        "  </gpu>\n</algo>\n")


def test_more_threadblocks_on_a_rank_than_the_runtime_loads_is_noted() -> None:
    """microsoft/msccl's parser refuses a threadblock id of MSCCL_MAX_NUM_THREAD_BLOCKS
    (108 * 2 = 216 in its msccl.h) or more: 216 threadblocks on a rank load, 217 do
    not (ns3-msccl-data's 16-rank all-pairs allgather of 16 instances has 240 a
    rank, and said nothing)."""
    note = ("gpu[0].tb[{}]: the MSCCL runtime loads at most 216 threadblocks a rank, "
            "ids 0 to 215 (MSCCL_MAX_NUM_THREAD_BLOCKS in microsoft/msccl's msccl.h)")
    assert read_msccl(_two_rank_allgather_with(216)).runtime_limits() == ()
    assert read_msccl(_two_rank_allgather_with(217)).runtime_limits() == (note.format(216),)
    # the parser reads the id: two threadblocks, numbered 0 and 300
    gap = re.sub(r'    <tb id="\d+" send="-1" recv="-1" chan="0"/>\n', "",
                 _two_rank_allgather_with(3)).replace(
        "</tb>\n  </gpu>", '</tb>\n    <tb id="300" send="-1" recv="-1" chan="0"/>\n  </gpu>', 1)
    assert read_msccl(gap).runtime_limits()[0] == note.format(300)
    v = validate_msccl(_two_rank_allgather_with(217), ring_platform(2), lp=False)
    assert (v.correct, v.feasible, v.makespan) == (True, True, F(1, 2))


def test_a_gap_among_a_ranks_threadblock_ids_is_noted() -> None:
    """msccl-executor-nccl's parser wants a rank's threadblock ids 0, 1, 2, ...: it
    scans them upward and stops on the first present id whose predecessor is
    absent ("thread block 2 is missing" for ids 0, 2 and 3; ``msccl_parser.cc``)."""
    def renumbered(ids: list[int]) -> str:
        xml = _two_rank_allgather_with(len(ids))
        for k, new in reversed(list(enumerate(ids))):
            if k:
                xml = xml.replace(f'<tb id="{k}" send="-1"', f'<tb id="{new}" send="-1"')
        return xml
    note = ("gpu[0].tb[2] without tb[1]: the MSCCL runtime takes a rank's threadblock "
            "ids 0, 1, 2, ... without a gap (its parser refuses it: 'thread block 2 is "
            "missing')")
    assert read_msccl(renumbered([0, 1, 2])).runtime_limits() == ()
    assert read_msccl(renumbered([0, 2, 3])).runtime_limits() == (note,)
    # the two ids 0 and 300 of the test above: one note each
    assert len(read_msccl(renumbered([0, 300])).runtime_limits()) == 2
