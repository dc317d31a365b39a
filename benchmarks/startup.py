"""Start-up cost of the command line: wall and CPU time, and the top importers.

Three commands, each run in a fresh interpreter (best of ``--repeat`` runs):

- ``portsim --help`` and ``portsim planners`` (targets: under 0.3 s);
- a trivial ``portsim run``: the ``flat`` planner alone on the scatter toy
  (``scenarios/examples/scatter-toy.yaml`` with ``planners: [flat]``; target:
  under 0.6 s).

The targets are judged on CPU time, the child's user + system time
(``resource.getrusage``): on a shared machine the wall time also counts the
time spent waiting for a core.  Then
each command runs once under ``python -X importtime`` and the modules with the
largest cumulative import time are listed, top-level importers first, so a
heavy import that a command does not need stands out.

Run:  python benchmarks/startup.py [--repeat 5] [--top 12]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "examples" / "scatter-toy.yaml"


def command_line(args: list[str]) -> list[str]:
    """``portsim ARGS`` as this interpreter runs it (the repository first on the path)."""
    return [sys.executable, "-m", "portsim.scenarios.cli", *args]


def environment() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``portsim ARGS`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command_line(args), env=environment(), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def importers(args: list[str], top: int) -> list[tuple[int, int, str]]:
    """``(cumulative us, self us, module)`` of the ``top`` slowest imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", *command_line(args)[1:]],
                          env=environment(), check=True, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, total, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(total), int(own), name))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (best kept)")
    parser.add_argument("--top", type=int, default=12, help="importers listed per command")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scenario = yaml.safe_load(EXAMPLE.read_text())
        scenario["planners"] = ["flat"]
        trivial = Path(folder) / "scatter-toy-flat.yaml"
        trivial.write_text(yaml.safe_dump(scenario))
        commands = {"portsim --help": (["--help"], 0.3),
                    "portsim planners": (["planners"], 0.3),
                    "portsim run (flat, scatter toy)": (["run", str(trivial)], 0.6)}
        print(f"{'command':34} {'wall s':>8} {'CPU s':>8}  target")
        for title, (args, target) in commands.items():
            runs = [timed(args) for _ in range(options.repeat)]
            wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
            verdict = "ok" if cpu < target else "OVER"
            print(f"{title:34} {wall:8.3f} {cpu:8.3f}  CPU < {target} s: {verdict}")
        for title, (args, _) in commands.items():
            print(f"\n{title}: top importers (cumulative / self, ms)")
            for total, own, name in importers(args, options.top):
                print(f"  {total / 1000:8.1f} {own / 1000:8.1f}  {name}")


if __name__ == "__main__":
    main()
