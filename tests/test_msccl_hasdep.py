"""MSCCL ``hasdep``: only a step with ``hasdep="1"`` releases the steps waiting on it.

The MSCCL runtime's interpreter (microsoft/msccl, ``msccl_interpreter.h``)
publishes a threadblock's flag, the index of the step just done, only at the
end of a step with ``hasdep="1"``; a step with ``depid=b deps=s`` spins until
threadblock ``b``'s flag reaches ``s``.  So it starts when the first step of
``b`` from ``s`` on with ``hasdep="1"`` ends, and never when there is none.
The figures below are worked out by hand from that rule.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from portsim.scenarios.cli import main
from portsim.scenarios.generators import complete_platform
from portsim.scenarios.msccl import (
    allpairs_alltoall_xml,
    read_msccl,
    ring_allgather_xml,
    ring_allreduce_xml,
    ring_reduce_scatter_xml,
    tree_broadcast_xml,
    tree_reduce_xml,
    validate_msccl,
)
from portsim.simulator.errors import ScheduleError

DATA = Path(__file__).parent / "data" / "msccl"  # the msccl-tools samples


def _step(s: int, kind: str, buf: str, off: int, dep: tuple[int, int] = (-1, -1),
          hasdep: int = 0) -> str:
    return (f'<step s="{s}" type="{kind}" srcbuf="{buf}" srcoff="{off}" dstbuf="{buf}" '
            f'dstoff="{off}" cnt="1" depid="{dep[0]}" deps="{dep[1]}" hasdep="{hasdep}"/>')


def chain_broadcast(first: int, second: int) -> str:
    """A broadcast of 2 chunks along P0 -> P1 -> P2.  Rank 1 receives both
    chunks in threadblock 0 (steps 0 and 1, with ``hasdep`` ``first`` and
    ``second``) and forwards them from threadblock 1, whose step ``j``
    depends on threadblock 0's step ``j``."""
    gpu = '<gpu id="{}" i_chunks="{}" o_chunks="{}" s_chunks="0">'
    return ('<algo name="chain" coll="broadcast" ngpus="3" nchunksperloop="2" inplace="0" '
            'root="0" proto="Simple" nchannels="1">'
            + gpu.format(0, 2, 0) + '<tb id="0" send="1" recv="-1" chan="0">'
            + _step(0, "s", "i", 0) + _step(1, "s", "i", 1) + "</tb></gpu>"
            + gpu.format(1, 0, 2) + '<tb id="0" send="-1" recv="0" chan="0">'
            + _step(0, "r", "o", 0, hasdep=first) + _step(1, "r", "o", 1, hasdep=second)
            + '</tb><tb id="1" send="2" recv="-1" chan="0">'
            + _step(0, "s", "o", 0, dep=(0, 0)) + _step(1, "s", "o", 1, dep=(0, 1))
            + "</tb></gpu>"
            + gpu.format(2, 0, 2) + '<tb id="0" send="-1" recv="1" chan="0">'
            + _step(0, "r", "o", 0) + _step(1, "r", "o", 1) + "</tb></gpu></algo>")


NEVER = ('gpu[1].tb[1].step[0]: waits on tb 0 step 0, which never signals: no step from 0 '
         'on has hasdep="1" (the MSCCL runtime would hang)')


def test_a_dependency_no_step_signals_is_refused(tmp_path: Path) -> None:
    # Neither receive of rank 1 has hasdep="1": its threadblock 0 never publishes
    # a flag, so threadblock 1's first send spins for ever on hardware.
    bad = tmp_path / "hang.xml"
    bad.write_text(chain_broadcast(0, 0), encoding="utf-8")
    with pytest.raises(ScheduleError) as err:
        read_msccl(bad)
    assert str(err.value) == f"{bad}: {NEVER}"
    plat = tmp_path / "p.yaml"
    plat.write_text("platform:\n  generator: {type: complete, n: 3}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(bad), "--platform", str(plat)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"portsim: error: {bad}: {NEVER}"
    assert "correct" not in result.stdout


def test_only_an_earlier_step_signalling_does_not_release_a_later_deps() -> None:
    # Step 0 signals (flag 0), step 1 does not: threadblock 1's step 1 waits for
    # a flag >= 1, which never comes.
    with pytest.raises(ScheduleError) as err:
        read_msccl(chain_broadcast(1, 0))
    assert str(err.value) == (
        '<string>: gpu[1].tb[1].step[1]: waits on tb 0 step 1, which never signals: no '
        'step from 1 on has hasdep="1" (the MSCCL runtime would hang)')


def test_a_nop_signals_nothing() -> None:
    # The runtime makes no transfer of a nop (its dependency goes to the next
    # step): its hasdep is never read, and it publishes no flag.
    xml = chain_broadcast(0, 0).replace(
        "</tb><tb id=\"1\" send=\"2\"",
        '<step s="2" type="nop" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="0" '
        'depid="-1" deps="-1" hasdep="1"/></tb><tb id="1" send="2"', 1)
    with pytest.raises(ScheduleError) as err:
        read_msccl(xml)
    assert str(err.value) == (
        '<string>: gpu[1].tb[1].step[0]: waits on tb 0 step 0, which never signals: only '
        'nops from 0 on have hasdep="1", and a nop signals nothing (the MSCCL runtime '
        'would hang)')


def _forwards(xml: str) -> tuple[list[F], F, bool]:
    """Start times of rank 1's forwards P1 -> P2 (chunks 0, 1), the makespan, correct."""
    # bidirectional one-port, c = 1, a chunk is 2 / 2 = 1: a send lasts 1
    v = validate_msccl(xml, complete_platform(3, 1, 1), size=2, lp=False)
    assert v.feasible, v.report.violations[:3]
    starts = sorted(e.start for e in v.timing.schedule.events if (e.src, e.dst) == ("P1", "P2"))
    return starts, v.makespan, v.correct


def test_a_later_step_with_hasdep_releases_the_wait_when_it_ends() -> None:
    # P0 sends chunk 0 in [0, 1] and chunk 1 in [1, 2] (one send port): rank 1's
    # receives end at 1 and 2.  Step 0 has hasdep="0", step 1 hasdep="1": the
    # first flag rank 1's threadblock 0 publishes is 1, at 2; the forward of
    # chunk 0 (waiting for a flag >= 0) starts at 2, not at 1; the forward of
    # chunk 1 follows at 3 (P1's send port); P2 has chunk 1 at 4.
    starts, makespan, correct = _forwards(chain_broadcast(0, 1))
    assert starts == [2, 3]
    assert makespan == 4
    assert correct
    # Both steps signalling: the forward of chunk 0 starts when its receive ends.
    starts, makespan, correct = _forwards(chain_broadcast(1, 1))
    assert starts == [1, 2]
    assert makespan == 3
    assert correct


# -- portsim's own generators ---------------------------------------------------------------


GENERATED = {
    "ring_allgather(5, chunks=2)": ring_allgather_xml(5, chunks=2),
    "allpairs_alltoall(4)": allpairs_alltoall_xml(4),
    "allpairs_alltoall(5, ordered)": allpairs_alltoall_xml(5, ordered=True),
    "allpairs_alltoall(4, chunks=2, ordered)": allpairs_alltoall_xml(4, chunks=2, ordered=True),
    "ring_allreduce(4)": ring_allreduce_xml(4),
    "ring_reduce_scatter(4)": ring_reduce_scatter_xml(4),
    "tree_broadcast(7, chunks=3)": tree_broadcast_xml(7, chunks=3),
    "tree_reduce(7, chunks=2)": tree_reduce_xml(7, chunks=2),
    "tree_reduce(6, chunks=3)": tree_reduce_xml(6, chunks=3),
}


def _signalling_and_named(xml: str) -> tuple[set[tuple[int, int, int]], set[tuple[int, int, int]]]:
    """(gpu, tb, step) with hasdep="1"; (gpu, depid, deps) named by some step."""
    root = ET.fromstring(xml)
    signalling, named = set(), set()
    for gpu in root.iter("gpu"):
        g = int(gpu.attrib["id"])
        for tb in gpu.iter("tb"):
            for step in tb.iter("step"):
                assert step.attrib["hasdep"] in ("0", "1")
                if step.attrib["hasdep"] == "1":
                    signalling.add((g, int(tb.attrib["id"]), int(step.attrib["s"])))
                if step.attrib["depid"] != "-1":
                    named.add((g, int(step.attrib["depid"]), int(step.attrib["deps"])))
    return signalling, named


@pytest.mark.parametrize("xml", GENERATED.values(), ids=GENERATED.keys())
def test_generators_mark_exactly_the_steps_depended_on(xml: str) -> None:
    signalling, named = _signalling_and_named(xml)
    assert signalling == named
    read_msccl(xml)


def test_the_generators_with_dependencies_have_some() -> None:
    # the equality above is not vacuous where dependencies are written
    sizes = {k: len(_signalling_and_named(x)[1]) for k, x in GENERATED.items()}
    assert sizes["allpairs_alltoall(5, ordered)"] == 5 * 3  # sends 2..4 wait on 1..3
    assert sizes["allpairs_alltoall(4)"] == 0
    assert sizes["tree_broadcast(7, chunks=3)"] == 2 * 3  # ranks 1 and 2 forward 3 chunks
    assert sizes["tree_reduce(7, chunks=2)"] == 3 * 2  # ranks 0, 1, 2 have two children
    assert sizes["tree_reduce(6, chunks=3)"] == 2 * 3  # ranks 0, 1 (rank 2 has one child)


def test_the_old_generator_output_would_hang() -> None:
    # tree_broadcast_xml(4) as portsim wrote it before: every hasdep="0".  Rank 1
    # receives chunk 0 in threadblock 0 and forwards it to rank 3 from threadblock 1.
    xml = tree_broadcast_xml(4)
    assert xml.count('hasdep="1"') == 1
    with pytest.raises(ScheduleError) as err:
        read_msccl(xml.replace('hasdep="1"', 'hasdep="0"'))
    assert str(err.value) == (
        '<string>: gpu[1].tb[1].step[0]: waits on tb 0 step 0, which never signals: no '
        'step from 0 on has hasdep="1" (the MSCCL runtime would hang)')


# -- the msccl-tools samples: no dependencies, figures unchanged ------------------------------


@pytest.mark.parametrize(("name", "makespan", "throughput"), [
    # bidirectional one-port, c = 1, size 1, 8 ranks: a chunk of 1/8 crosses a link in 1/8.
    # Ring allgather: 7 steps of one chunk, 7/8; one receive a rank per 1/8 in the series.
    ("allgather_ring_8_1_1", F(7, 8), F(8, 7)),
    # Ring allreduce: 7 reduce-scatter and 7 allgather steps of 1/8 and 7 reductions of
    # compute 1 (the critical path of a ring: 14/8 + 7 = 35/4).
    ("allreduce_a100_ring_8_1_1", F(35, 4), F(4, 35)),
    # All-pairs in rank order: as `validate --format json` gave before hasdep was modelled.
    ("alltoall_allpairs_8_1", F(13, 8), F(322, 325)),
])
def test_samples_keep_their_figures(tmp_path: Path, name: str, makespan: F,
                                    throughput: F) -> None:
    path = DATA / f"{name}.xml"
    assert not [s for g in read_msccl(path).gpus for t in g.threadblocks for s in t.steps
                if s.depid != -1 or s.hasdep]
    plat = tmp_path / "p.yaml"
    plat.write_text("platform:\n  port_model: bidirectional\n"
                    "  generator: {type: complete, n: 8, c: 1, compute: 1}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path), "--platform", str(plat),
                                       "--format", "json", "--no-lp-bound"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["feasible"], out["correct"], out["problems"], out["violations"]) == (
        True, True, [], [])
    assert (F(out["makespan"]), F(out["throughput"])) == (makespan, throughput)


# -- the runtime's step counter: nops ---------------------------------------------------------


def test_a_nop_without_a_dependency_is_not_counted() -> None:
    """The runtime drops a nop without a dependency: rank 1's threadblock 0,
    ``nop, r, r`` (both receives with hasdep="1"), publishes flags 0 and 1,
    not 1 and 2.  Its step 2 was taken to release a wait on step 2 (judged
    correct); that wait never ends on hardware."""
    nop = ('<step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" '
           'depid="-1" deps="-1" hasdep="0"/>')
    xml = chain_broadcast(1, 1).replace(
        '<tb id="0" send="-1" recv="0" chan="0">' + _step(0, "r", "o", 0, hasdep=1)
        + _step(1, "r", "o", 1, hasdep=1),
        '<tb id="0" send="-1" recv="0" chan="0">' + nop + _step(1, "r", "o", 0, hasdep=1)
        + _step(2, "r", "o", 1, hasdep=1), 1).replace(
        _step(0, "s", "o", 0, dep=(0, 0)) + _step(1, "s", "o", 1, dep=(0, 1)),
        _step(0, "s", "o", 0, dep=(0, 1)) + _step(1, "s", "o", 1, dep=(0, 2)), 1)
    assert xml.count('type="nop"') == 1
    assert 'deps="2"' in xml
    with pytest.raises(ScheduleError) as err:
        read_msccl(xml)
    assert str(err.value) == (
        "<string>: gpu[1].tb[1].step[1]: waits on tb 0 step 2, which never signals: the "
        "runtime does not count a nop without a dependency, so tb 0's last step with "
        'hasdep="1", 2, signals 1, short of 2 (the MSCCL runtime would hang)')
    # The forward of chunk 0 (waiting for a flag >= 1) waits for the second receive.
    one = xml.replace(_step(1, "s", "o", 1, dep=(0, 2)), _step(1, "s", "o", 1, dep=(0, 1)))
    starts, makespan, correct = _forwards(one)
    assert starts == [2, 3]
    assert (makespan, correct) == (4, True)


def test_a_nop_dependency_handed_to_a_step_without_one_is_refused() -> None:
    """The runtime refuses a file where nops with dependencies precede a step
    with none ("the last reduction must be a part of the first immediate
    instruction"): rank 1's copy waits on both receives through two nops.
    It was judged correct."""
    def nop(s: int, tb: int) -> str:
        return (f'<step s="{s}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" '
                f'cnt="0" depid="{tb}" deps="0" hasdep="0"/>')
    gpu = '<gpu id="{}" i_chunks="1" o_chunks="2" s_chunks="{}">'
    send = '<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="{}" cnt="1" ' \
           'depid="-1" deps="-1" hasdep="0"/>'
    recv = '<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="o" dstoff="{}" cnt="1" ' \
           'depid="-1" deps="-1" hasdep="1"/>'
    # allgather of 2 ranks, out of place: each copies its own block and receives the other's
    def rank(r: int, last: str) -> str:
        other = 1 - r
        return (gpu.format(r, 2) + f'<tb id="0" send="{other}" recv="-1" chan="0">'
                + send.format(r) + f'</tb><tb id="1" send="-1" recv="{other}" chan="0">'
                + recv.format(other) + '</tb><tb id="2" send="-1" recv="-1" chan="0">'
                + '<step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" '
                f'dstoff="{r}" cnt="1" depid="-1" deps="-1" hasdep="1"/></tb>'
                + '<tb id="3" send="-1" recv="-1" chan="0">' + nop(0, 1) + nop(1, 2)
                + '<step s="2" type="cpy" srcbuf="o" srcoff="0" dstbuf="s" dstoff="0" '
                f'cnt="2" {last} hasdep="0"/></tb></gpu>')
    algo = ('<algo name="ag2" coll="allgather" ngpus="2" nchunksperloop="2" inplace="0" '
            'proto="Simple" nchannels="1">{}{}</algo>')
    good = algo.format(rank(0, 'depid="2" deps="0"'), rank(1, 'depid="2" deps="0"'))
    v = validate_msccl(good, complete_platform(2, 1, 1), size=2, lp=False)
    assert v.correct, v.problems
    assert v.makespan == 1
    bad = algo.format(rank(0, 'depid="-1" deps="-1"'), rank(1, 'depid="2" deps="0"'))
    with pytest.raises(ScheduleError) as err:
        read_msccl(bad)
    assert str(err.value) == (
        "<string>: gpu[0].tb[3].step[2].depid: a nop before this step has a dependency "
        "(depid/deps) and this step none: the MSCCL runtime refuses the file (a chain of "
        "nop dependencies ends with the step's own) (got -1)")


@pytest.mark.parametrize("seed", range(40))
def test_the_step_that_signals_is_found_from_a_table_per_threadblock(seed: int) -> None:
    """The step releasing ``depid=0 deps=s`` is the first step of tb 0 with
    ``hasdep="1"`` whose runtime counter reaches ``s`` (nops count as the
    runtime counts them, and signal nothing); found by a binary search in a
    table built once per threadblock, it is the one a scan of tb 0 finds, for
    every ``s`` (a scan per waiting step took 2 of the 5 s of reading a
    64-rank tree broadcast of 256 chunks)."""
    import random

    from portsim.planners.msccl.algorithm import (
        MscclAlgorithm,
        MscclGpu,
        MscclStep,
        MscclThreadblock,
        _counters,
        _signal,
    )

    rng = random.Random(seed)
    steps = []
    for i in range(rng.randint(1, 12)):
        nop = rng.random() < 0.3
        steps.append(MscclStep(index=i, type="nop" if nop else "s", srcbuf="i", srcoff=0,
                               dstbuf="o", dstoff=0, cnt=0 if nop else 1,
                               depid=1 if nop and rng.random() < 0.5 else -1,
                               deps=0, hasdep=rng.random() < 0.5))
    waited = MscclThreadblock(0, 1, -1, 0, tuple(steps))
    waiting = MscclThreadblock(1, -1, -1, 0, tuple(
        MscclStep(index=s, type="nop", srcbuf="i", srcoff=-1, dstbuf="o", dstoff=-1, cnt=0,
                  depid=0, deps=s) for s in range(len(steps))))
    gpu = MscclGpu(0, 1, 1, 0, (waited, waiting))
    algo = MscclAlgorithm(name="x", collective="allgather", ngpus=2, nchunksperloop=2,
                          inplace=True, proto="Simple", nchannels=1, gpus=(gpu, gpu))
    counters = _counters(waited)
    table: dict[int, tuple[list[int], list[int]]] = {}
    for step in waiting.steps:
        scan = next((c.index for c in waited.steps
                     if c.hasdep and counters.get(c.index, -1) >= step.deps), None)
        if scan is None:
            with pytest.raises(ScheduleError, match="never signals"):
                _signal(algo, gpu, waiting, step, table)
        else:
            assert _signal(algo, gpu, waiting, step, table) == scan
