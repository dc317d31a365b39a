"""Schedule-file loading: events per second and peak memory, YAML and JSON Lines.

For each size (default 10^4, 10^5 and 10^6 events) a feasible broadcast
series (the workload of ``benchmarks/engine.py``) is written once as a JSON
Lines schedule file (``.jsonl``) and, up to ``--yaml-up-to`` events, as a
YAML one; each file is then loaded by :func:`scenarios.load_schedule` in a
fresh Python process, which reports

- the load time, wall-clock and CPU, and the rate in events per CPU second
  (the figure that does not depend on how busy a shared machine is);
- the peak resident memory of that process (Linux's ``VmHWM``, else
  ``ru_maxrss``: interpreter and imports included) and, in brackets, the
  part the load added to what the process held before it.

Run:  python benchmarks/load.py [--sizes 10000 100000 1000000] [--yaml-up-to 100000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import broadcast_series  # benchmarks/engine.py, next to this file

from portsim.scenarios.schedule_file import dump_schedule

# Peak memory: Linux's VmHWM of this process image (ru_maxrss would carry the
# parent's peak over fork and exec); ru_maxrss elsewhere.
_CHILD = """
import json, resource, sys, time
from portsim.scenarios.schedule_file import load_schedule

def peak_kib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

before = peak_kib()
began, cpu = time.perf_counter(), time.process_time()
schedule = load_schedule(sys.argv[1])
seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
peak = peak_kib()
print(json.dumps({"events": len(schedule.events), "seconds": seconds, "cpu": cpu,
                  "peak_kib": peak, "before_kib": before}))
"""


def measure(path: Path) -> dict[str, float]:
    """Load ``path`` in a fresh process; its figures."""
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], check=True,
                         capture_output=True, text=True, cwd=root,
                         env={"PYTHONPATH": str(root), "PATH": ""})
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--yaml-up-to", type=int, default=100_000,
                        help="largest size also written and loaded as YAML (slow to write)")
    parser.add_argument("--nodes", type=int, default=20)
    args = parser.parse_args()
    print(f"{'events':>9}  {'form':5}  {'file MB':>8}  {'wall s':>7}  {'CPU s':>7}  "
          f"{'events/CPU s':>12}  {'peak RSS MB (load)':>19}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            began = time.perf_counter()
            schedule = broadcast_series(args.nodes, size)
            forms = ["jsonl"] + (["yaml"] if size <= args.yaml_up_to else [])
            for form in forms:
                path = Path(tmp) / f"series-{size}.{form}"
                dump_schedule(schedule, path)
                figures = measure(path)
                assert figures["events"] == len(schedule.events)
                rate = figures["events"] / figures["cpu"]
                peak = figures["peak_kib"] / 1024
                added = (figures["peak_kib"] - figures["before_kib"]) / 1024
                print(f"{len(schedule.events):>9}  {form:5}  "
                      f"{path.stat().st_size / 1e6:>8.1f}  {figures['seconds']:>7.2f}  "
                      f"{figures['cpu']:>7.2f}  {rate:>12,.0f}  {peak:>10,.0f} ({added:,.0f})",
                      flush=True)
                path.unlink()
            del schedule
            print(f"  (generating and writing took {time.perf_counter() - began:.0f} s)",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
