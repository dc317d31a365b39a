"""Time and memory of ``portsim validate`` of a greedy reduce on 100 to 500 random nodes.

The user's case of the ``lp`` bound beside ``validate``: a schedule of their
own (here ``portsim plan ... --planner greedy -o FILE``) on a
``random_platform(n, 3, c=(1, 10), compute=(1, 5))`` of the scenario's
default seed (:data:`~portsim.scenarios.loader.DEFAULT_SEED`), reduced onto
``P0``, then ``portsim validate FILE [--lp-time-limit T]``, each in its own
process (the command line itself).  Printed per row: CPU seconds (user +
system), wall seconds, the peak resident memory of the ``validate`` process,
its exit status, and its ``lp bound`` line or its note on the bound (a
certified interval, or where the ``lp`` stopped).  CPU and memory are per
process, so a loaded machine changes them little; the time limit is wall time.

Run:  python benchmarks/reduce_bound.py [--nodes 100 200 500] [--lp-time-limit 60]

Measured (shared 2-core machine, other jobs beside it, 0.3.0 after ``b140cb9``)::

    nodes  limit  cpu_s  wall_s  peak_MiB  exit  lp bound
      100      -   46.9    47.4       310     0  exact (~0.0898403)
      200      -  265.7   268.6       707     0  upper end (~0.0737), interval 3.51% wide
      500    120   93.1   121.8      1170     0  none: time limit of 120.0 s reached
      500      -  251.4   303.6      1170     0  none: time limit of 300.0 s reached

Before one table of holding prices replaced five (``b140cb9``), on the
platforms of ``seed: n`` (the scenario's key): 100 nodes 62.5 s and 368 MiB
(52.1 s and 266 MiB after, run one after the other, the same bound), 200
nodes 282.6 s and 1223 MiB, an interval 75% wide (268.5 s and 662 MiB
after, 6.3% wide, the machine less loaded), 500 nodes past 300 s and 5 GiB
(the scale trial of the 21st session).  At 500 nodes the first pricing
program alone takes about 100 s: no bound comes within minutes there.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
name: reduce{n}
platform:
  generator: {{type: random, n: {n}, degree: 3, c: [1, 10], compute: [1, 5]}}
operation: {{type: reduce, target: P0}}
planners: [greedy]
"""


def measure(n: int, limit: float | None, folder: Path) -> tuple[float, float, float, int, str]:
    """CPU and wall seconds, peak MiB, exit status and the lp line of one validation."""
    scenario = folder / f"reduce{n}.yaml"
    scenario.write_text(SCENARIO.format(n=n), encoding="utf-8")
    schedule = folder / f"greedy{n}.json"
    subprocess.run([sys.executable, "-m", "portsim", "plan", str(scenario), "--planner",
                    "greedy", "-o", str(schedule)], check=True, stdout=subprocess.DEVNULL)
    output = folder / "stdout.txt"
    command = [sys.executable, "-m", "portsim", "validate", str(schedule)]
    if limit is not None:
        command += ["--lp-time-limit", str(limit)]
    started = time.perf_counter()
    with output.open("w", encoding="utf-8") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own usage and peak
    wall = time.perf_counter() - started
    text = output.read_text(encoding="utf-8").splitlines()
    line = next((x for x in text if x.startswith(("lp bound:", "no lp bound"))), "")
    if line.startswith("lp bound:"):  # its decimal value, and how wide the interval is
        bound = line.split(",")[0]
        value = re.search(r"\(~[\d.e-]+\)", bound)
        caveat = next((x for x in text if x.startswith("lp bound not proven")), "")
        width = re.search(r"([\d.]+)% of the lower end", caveat)
        line = (f"{'exact' if not caveat else 'upper end'} "
                f"{value[0] if value else bound.removeprefix('lp bound: ')}"
                + (f", interval {width[1]}% wide" if width else ""))
    return (usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status), line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--lp-time-limit", type=float, default=None,
                        help="passed to validate (default: the lp's own, 300 s)")
    args = parser.parse_args()
    print("nodes  limit  cpu_s  wall_s  peak_MiB  exit  lp bound")
    limit = "-" if args.lp_time_limit is None else f"{args.lp_time_limit:g}"
    with tempfile.TemporaryDirectory(prefix="portsim-reduce-bound-") as tmp:
        for n in args.nodes:
            cpu, wall, peak, status, line = measure(n, args.lp_time_limit, Path(tmp))
            print(f"{n:5d}  {limit:>5}  {cpu:5.1f}  {wall:6.1f}  {peak:8.0f}  {status:4d}  "
                  f"{line[:100]}", flush=True)


if __name__ == "__main__":
    main()
