"""Time and memory of ``portsim validate`` on generated MSCCL rings, 16 to 128 ranks.

Each size runs in its own process (the command line itself, as a user runs
it): ``ring_allreduce_xml(n)`` (or ``ring_allgather_xml``,
``tree_broadcast_xml``) on a complete platform of ``n`` nodes (``c = 1``,
compute 1, bidirectional one-port).  Printed per row: CPU seconds (user +
system) and the peak resident memory of that process, its exit status, and
the ``lp bound`` line.  Both figures are per process, so a loaded machine
changes them little (wall time would); the ``lp``'s default ``time_limit``
is wall time, though: at 128 ranks it ends the allreduce bound after 300 s.

Run:  python benchmarks/scale.py [--ranks 16 32 48 64] [--collective allreduce]

Measured (shared 2-core machine, ``--collective allreduce``)::

    ranks  cpu_s  peak_MiB  exit
       16    1.3       122     0   (7.9 s, 168 MiB before the port-aware caps)
       32    2.6       131     0   (39-50 s, 1.4 GiB before: the split bound ran)
       48    5.8       142     0   (above 80 million cells: not attempted)
       64   12.6       176     0   (before 0.3.0: 349 s and 15 GiB)
      128  162.3       629     0   (the lp bound stops at its 300 s time limit)

From 16 to 64 ranks a single-node cap (port-aware: one message an instance
through a one-port node) meets the ``lp`` schedule, so the split bound does
not run.  The 128-rank row was measured before those caps, with
``/usr/bin/time -v`` on a loaded machine (5.5 minutes of wall time).

Sixteenth session (27 November 2026, step 2 of the ``lp`` allreduce with one
dynamic program a round for every root, partial pricing and the chains as
first columns, arborescences priced a few roots a round; ``--ranks 64 128``,
another job beside it): 64 ranks 4.8 s and 202 MiB (12.6 s before), 128 ranks
23.1 s and 766 MiB, exit 0, with the ``lp`` bound 1/127 (it stopped at the 300
s time limit before); 22.6 s and 756 MiB after ``09c719c``.

``--collective allgather``, 64 ranks: 14.4 s, 205 MiB (66 s before the
integer arborescence pricing); ``broadcast``, 64 ranks: 3.5 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from portsim.planners.msccl.generators import (
    ring_allgather_xml,
    ring_allreduce_xml,
    tree_broadcast_xml,
)

GENERATORS = {"allreduce": ring_allreduce_xml, "allgather": ring_allgather_xml,
              "broadcast": tree_broadcast_xml}


def measure(n: int, collective: str, folder: Path) -> tuple[float, float, int, str]:
    """CPU seconds, peak MiB, exit status and the ``lp bound`` line of one validation."""
    algorithm = folder / f"{collective}{n}.xml"
    algorithm.write_text(GENERATORS[collective](n), encoding="utf-8")
    platform = folder / f"complete{n}.yaml"
    platform.write_text("platform:\n  port_model: bidirectional\n"
                        f"  generator: {{type: complete, n: {n}, c: 1, compute: 1}}\n",
                        encoding="utf-8")
    output = folder / "stdout.txt"
    with output.open("w", encoding="utf-8") as out:
        child = subprocess.Popen([sys.executable, "-m", "portsim", "validate", str(algorithm),
                                  "--platform", str(platform)], stdout=out,
                                 stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own usage and peak
    cpu = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss / 1024
    text = output.read_text(encoding="utf-8")
    line = next((x for x in text.splitlines() if x.startswith("lp bound")), "")
    return cpu, peak, os.waitstatus_to_exitcode(status), line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[16, 32, 48, 64])
    parser.add_argument("--collective", choices=sorted(GENERATORS), default="allreduce")
    args = parser.parse_args()
    print("ranks  cpu_s  peak_MiB  exit  lp bound")
    with tempfile.TemporaryDirectory(prefix="portsim-scale-") as tmp:
        for n in args.ranks:
            cpu, peak, status, line = measure(n, args.collective, Path(tmp))
            print(f"{n:5d}  {cpu:5.1f}  {peak:8.0f}  {status:4d}  {line[:90]}", flush=True)


if __name__ == "__main__":
    main()
