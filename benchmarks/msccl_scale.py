"""Time and memory of ``portsim validate ALGO.xml`` on MSCCL files of 8 to 128 ranks.

The files are written the way msccl-tools lowers an MSCCLang program: one
threadblock per (peer, channel) (one per channel where a rank has a single
send peer and a single receive peer, as in a ring), a receive followed by a
send of the same slot fused into ``rcs`` (``rrcs`` after a reduction), and a
dependency (``depid``/``deps``, extra ones on ``nop`` steps, ``hasdep`` on
the steps named) wherever a step touches a slot another threadblock of its
rank wrote or read last.  Programs: ring allreduce (``C`` chunks a block,
chunk ``j`` on channel ``j mod K``), ring allgather, all-pairs allgather and
all-to-all, and a two-level (Blue Connect style) allreduce over ``n / 8``
``dgx_a100`` servers: reduce-scatter within each server, reduce-scatter
then allgather across servers per local GPU, allgather within each server
(channels 0, 1-2, 3, with dependencies across them).  Each runs on
``dgx_a100`` servers (``multiport``, ``n / 8`` of them) in its own process,
the command line itself: wall and CPU seconds, peak resident memory, exit
status, makespan and throughput (``--lp`` adds the ``lp`` bound).

Run:  python benchmarks/msccl_scale.py [--ranks 8 16 32 64 128] [--cases rar rag a2a hier] [--lp]

Measured (shared 2-core machine, another job beside it; wall s / peak MiB,
``--no-lp-bound``; the same figures before and after, where not cut)::

    case  ranks:   64 before       after   128 before        after
    rar    22.7 / 1562   4.5 /  270   36.4 / 2058 cut  20.1 /  955
    rar2   30.6 / 1965   8.5 /  486   48.1 / 2182 cut  39.4 / 1842
    rag    24.8 / 1691   6.2 /  372   37.6 / 1852 cut  26.4 / 1342
    rag8   29.6 / 1728c 12.0 /  696   61.8 / 2112 cut  46.5 / 2139
    apag   28.3 / 1020   3.1 /  190   53.9 / 1684 cut  12.3 /  634
    a2a    20.2 / 1067   3.5 /  198   77.5 / 1705 cut  14.3 /  664
    a2a2   33.0 / 1688   6.8 /  346   66.9 / 1732 cut  28.5 / 1263
    hier   19.9 / 1374   3.4 /  222   39.8 / 2371 cut  12.9 /  747

Cases: ``rar`` ring allreduce, 1 chunk; ``rar2`` 2 chunks on 2 channels;
``rag`` ring allgather, 4 chunks on 4 channels; ``rag8`` 8 chunks on 2;
``apag`` all-pairs allgather; ``a2a`` all-pairs all-to-all, ``a2a2`` 2
chunks on 2 channels; ``hier`` two-level allreduce (8 and 16 servers).
``before``: commit 824945b, before the MSCCL scale fixes; ``cut`` (``c``):
its throughput was ``-``, "the series replay was cut
before the horizon" (the series on ``multiport`` platforms counted each
switch link as one more copy to see repeat).  At 32 ranks every file takes
1 to 3 s (2 to 13 s before).  ``--lp`` on ``rag`` at 64 ranks: the ``lp``
allgather bound takes 40 s of wall time (58 s before) on a loaded machine, 13 s of CPU,
nearly all of it the column generation of its Steiner trees (``validate`` builds no
periodic schedule for the bound: ``lp_throughput_bound``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

Op = tuple[str, int, str, int, int, str, int, int, int]
"""(copy|reduce, src rank, src buffer, src offset, dst rank, dst buffer, dst offset, cnt,
channel): ``reduce`` adds the source into the destination."""


class Program:
    """An MSCCLang-like program: operations in program order, lowered to MSCCL XML."""

    def __init__(self, name: str, coll: str, n: int, nchunks: int, inplace: bool,
                 buffers: dict[str, int]) -> None:
        self.name, self.coll, self.n, self.nchunks = name, coll, n, nchunks
        self.inplace, self.buffers = inplace, buffers
        self.ops: list[Op] = []

    def copy(self, sr: int, sb: str, so: int, dr: int, db: str, do: int, cnt: int = 1,
             ch: int = 0) -> None:
        self.ops.append(("copy", sr, sb, so, dr, db, do, cnt, ch))

    def reduce(self, sr: int, sb: str, so: int, dr: int, db: str, do: int, cnt: int = 1,
               ch: int = 0) -> None:
        self.ops.append(("reduce", sr, sb, so, dr, db, do, cnt, ch))

    def xml(self) -> str:
        """The MSCCL XML of the program (see the module docstring)."""
        send_peers: dict[tuple[int, int], set[int]] = defaultdict(set)
        recv_peers: dict[tuple[int, int], set[int]] = defaultdict(set)
        for _, sr, _, _, dr, _, _, _, ch in self.ops:
            if sr != dr:
                send_peers[sr, ch].add(dr)
                recv_peers[dr, ch].add(sr)
        tbs: dict[int, dict[tuple[Any, ...], dict[str, Any]]] = defaultdict(dict)

        def threadblock(rank: int, ch: int, send: int = -1, recv: int = -1) -> dict[str, Any]:
            sp, rp = send_peers[rank, ch], recv_peers[rank, ch]
            if len(sp) <= 1 and len(rp) <= 1:
                key: tuple[Any, ...] = ("ring", ch)
                send, recv = next(iter(sp), -1), next(iter(rp), -1)
            elif send >= 0:
                key, recv = ("send", send, ch), -1
            elif recv >= 0:
                key, send = ("recv", recv, ch), -1
            else:
                key = ("local", ch)
            own = tbs[rank]
            if key not in own:
                own[key] = {"id": len(own), "send": send, "recv": recv, "chan": ch,
                            "steps": []}
            return own[key]

        writer: dict[tuple[int, str, int], tuple[int, int]] = {}
        readers: dict[tuple[int, str, int], list[tuple[int, int]]] = defaultdict(list)

        def step(rank: int, tb: dict[str, Any], kind: str, src: tuple[str, int],
                 dst: tuple[str, int], cnt: int, reads: list[tuple[str, int]],
                 writes: list[tuple[str, int]]) -> None:
            after: dict[int, int] = {}
            for slots, also_readers in ((reads, False), (writes, True)):
                for buf, off in slots:
                    for c in range(cnt):
                        slot = (rank, buf, off + c)
                        found = [writer[slot]] if slot in writer else []
                        if also_readers:
                            found += readers[slot]
                        for t, s in found:
                            if t != tb["id"]:
                                after[t] = max(after.get(t, -1), s)
            deps = sorted(after.items())
            for t, s in deps[:-1]:  # msccl-tools' dependence nops
                tb["steps"].append({"type": "nop", "src": ("i", -1), "dst": ("o", -1),
                                    "cnt": 0, "dep": (t, s)})
            tb["steps"].append({"type": kind, "src": src, "dst": dst, "cnt": cnt,
                                "dep": deps[-1] if deps else (-1, -1)})
            me = (tb["id"], len(tb["steps"]) - 1)
            for buf, off in reads:
                for c in range(cnt):
                    readers[rank, buf, off + c].append(me)
            for buf, off in writes:
                for c in range(cnt):
                    writer[rank, buf, off + c] = me
                    readers[rank, buf, off + c] = []

        for kind, sr, sb, so, dr, db, do, cnt, ch in self.ops:
            if sr == dr:
                tb = threadblock(sr, ch)
                if kind == "copy":
                    step(sr, tb, "cpy", (sb, so), (db, do), cnt, [(sb, so)], [(db, do)])
                else:
                    step(sr, tb, "re", (sb, so), (db, do), cnt, [(sb, so), (db, do)],
                         [(db, do)])
                continue
            stb, rtb = threadblock(sr, ch, send=dr), threadblock(dr, ch, recv=sr)
            last = stb["steps"][-1] if stb["steps"] else None
            if (last is not None and last["type"] in ("r", "rrc") and last["dst"] == (sb, so)
                    and last["cnt"] == cnt and stb["send"] == dr):  # fuse into rcs / rrcs
                last["type"] = "rcs" if last["type"] == "r" else "rrcs"
                for c in range(cnt):
                    readers[sr, sb, so + c].append((stb["id"], len(stb["steps"]) - 1))
            else:
                step(sr, stb, "s", (sb, so), (sb, so), cnt, [(sb, so)], [])
            if kind == "copy":
                step(dr, rtb, "r", (db, do), (db, do), cnt, [], [(db, do)])
            else:
                step(dr, rtb, "rrc", (db, do), (db, do), cnt, [(db, do)], [(db, do)])
        channels = 1 + max(t["chan"] for own in tbs.values() for t in own.values())
        algo = ET.Element("algo", name=self.name, proto="Simple", nchannels=str(channels),
                          nchunksperloop=str(self.nchunks), ngpus=str(self.n), coll=self.coll,
                          inplace="1" if self.inplace else "0")
        for r in range(self.n):
            named = {st["dep"] for t in tbs[r].values() for st in t["steps"]}
            gpu = ET.SubElement(algo, "gpu", {"id": str(r), **{
                f"{b}_chunks": str(self.buffers[b]) for b in "ios"}})
            for t in sorted(tbs[r].values(), key=lambda t: t["id"]):
                te = ET.SubElement(gpu, "tb", id=str(t["id"]), send=str(t["send"]),
                                   recv=str(t["recv"]), chan=str(t["chan"]))
                for k, st in enumerate(t["steps"]):
                    ET.SubElement(te, "step", s=str(k), type=st["type"], srcbuf=st["src"][0],
                                  srcoff=str(st["src"][1]), dstbuf=st["dst"][0],
                                  dstoff=str(st["dst"][1]), cnt=str(st["cnt"]),
                                  depid=str(st["dep"][0]), deps=str(st["dep"][1]),
                                  hasdep="1" if (t["id"], k) in named else "0")
        return ET.tostring(algo, encoding="unicode")


def ring_allreduce(n: int, chunks: int = 1, channels: int = 1) -> str:
    p = Program("ring_allreduce", "allreduce", n, n * chunks, True,
                {"i": n * chunks, "o": 0, "s": 0})
    for j in range(chunks):
        for b in range(n):
            for s in range(n - 1):  # reduce-scatter: block b ends on rank b
                p.reduce((b + 1 + s) % n, "i", b * chunks + j, (b + 2 + s) % n, "i",
                         b * chunks + j, 1, j % channels)
        for b in range(n):
            for s in range(n - 1):
                p.copy((b + s) % n, "i", b * chunks + j, (b + s + 1) % n, "i",
                       b * chunks + j, 1, j % channels)
    return p.xml()


def ring_allgather(n: int, chunks: int = 1, channels: int = 1) -> str:
    p = Program("ring_allgather", "allgather", n, n * chunks, True,
                {"i": 0, "o": n * chunks, "s": 0})
    for j in range(chunks):
        for r in range(n):
            for s in range(n - 1):
                p.copy((r + s) % n, "o", r * chunks + j, (r + s + 1) % n, "o", r * chunks + j,
                       1, j % channels)
    return p.xml()


def allpairs_allgather(n: int, chunks: int = 1, channels: int = 1) -> str:
    p = Program("allpairs_allgather", "allgather", n, n * chunks, True,
                {"i": 0, "o": n * chunks, "s": 0})
    for r in range(n):
        for k in range(1, n):
            for j in range(chunks):
                p.copy(r, "o", r * chunks + j, (r + k) % n, "o", r * chunks + j, 1,
                       j % channels)
    return p.xml()


def allpairs_alltoall(n: int, chunks: int = 1, channels: int = 1) -> str:
    p = Program("alltoall_allpairs", "alltoall", n, n * chunks, False,
                {"i": n * chunks, "o": n * chunks, "s": 0})
    for r in range(n):
        for d in range(n):
            for j in range(chunks):
                p.copy(r, "i", d * chunks + j, d, "o", r * chunks + j, 1,
                       0 if r == d else j % channels)
    return p.xml()


def hierarchical_allreduce(local: int, nodes: int) -> str:
    n = local * nodes
    p = Program("hierarchical_allreduce", "allreduce", n, n, True, {"i": n, "o": 0, "s": 0})

    def ring(members: list[int], index: Any, cnt: int, ch: int, reduce: bool) -> None:
        size = len(members)
        for b in range(size):
            for s in range(size - 1):
                a, c = ((b + 1 + s) % size, (b + 2 + s) % size) if reduce else (
                    (b + s) % size, (b + s + 1) % size)
                (p.reduce if reduce else p.copy)(members[a], "i", index(b), members[c], "i",
                                                 index(b), cnt, ch)

    servers = [[m * local + g for g in range(local)] for m in range(nodes)]
    rails = [[m * local + g for m in range(nodes)] for g in range(local)]
    for members in servers:
        ring(members, lambda g: g * nodes, nodes, 0, True)
    for g, members in enumerate(rails):
        ring(members, lambda m, g=g: g * nodes + m, 1, 1 + g % 2, True)
    for g, members in enumerate(rails):
        ring(members, lambda m, g=g: g * nodes + m, 1, 1 + g % 2, False)
    for members in servers:
        ring(members, lambda g: g * nodes, nodes, 3, False)
    return p.xml()


CASES = {
    "rar": ("ring allreduce, 1 chunk", lambda n: ring_allreduce(n)),
    "rar2": ("ring allreduce, 2 chunks, 2 channels", lambda n: ring_allreduce(n, 2, 2)),
    "rag": ("ring allgather, 4 chunks, 4 channels", lambda n: ring_allgather(n, 4, 4)),
    "rag8": ("ring allgather, 8 chunks, 2 channels", lambda n: ring_allgather(n, 8, 2)),
    "apag": ("all-pairs allgather", lambda n: allpairs_allgather(n)),
    "a2a": ("all-pairs all-to-all", lambda n: allpairs_alltoall(n)),
    "a2a2": ("all-pairs all-to-all, 2 chunks, 2 channels", lambda n: allpairs_alltoall(n, 2, 2)),
    "hier": ("two-level allreduce", lambda n: hierarchical_allreduce(8, n // 8) if n > 8
             else hierarchical_allreduce(4, 2)),
}


def measure(xml: Path, platform: Path, lp: bool) -> tuple[float, float, float, int, dict[str, Any]]:
    """Wall s, CPU s, peak MiB, exit status and the JSON verdict of one validation."""
    command = [sys.executable, "-m", "portsim", "validate", str(xml), "--platform",
               str(platform), "--format", "json", *([] if lp else ["--no-lp-bound"])]
    out = xml.with_suffix(".json")
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as stdout:
        child = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    text = out.read_text(encoding="utf-8")
    verdict = json.loads(text) if text.strip() else {}
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status), verdict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--lp", action="store_true", help="also ask the lp bound")
    args = parser.parse_args()
    print(f"{'case':5} {'ranks':>5} {'wall_s':>7} {'cpu_s':>6} {'MiB':>6} exit  makespan  "
          "throughput", flush=True)
    with tempfile.TemporaryDirectory(prefix="portsim-msccl-") as tmp:
        folder = Path(tmp)
        for n in args.ranks:
            platform = folder / f"dgx{n}.yaml"
            platform.write_text("platform:\n  port_model: multiport\n  generator: {type: "
                                f"dgx_a100, servers: {max(1, n // 8)}}}\n", encoding="utf-8")
            for case in args.cases:
                xml = folder / f"{case}{n}.xml"
                xml.write_text(CASES[case][1](n), encoding="utf-8")
                wall, cpu, peak, status, v = measure(xml, platform, args.lp)
                print(f"{case:5} {n:5d} {wall:7.1f} {cpu:6.1f} {peak:6.0f} {status:4d}  "
                      f"{v.get('makespan')}  {v.get('throughput')}"
                      + (f"  lp {v.get('lp_bound')}" if args.lp else ""), flush=True)


if __name__ == "__main__":
    main()
