"""Dump the bound, period and schedule of every bundled example, to compare two versions.

For every scenario of ``scenarios/examples/*.yaml`` (through the library
API: :func:`portsim.load_scenario`, :func:`portsim.get_planner`), every
planner the scenario lists and ``lp`` under a few option sets that take the
other paths of the periodic builder (whole messages ``split: false``, a
fixed ``period``, a small ``max_events`` cap that falls back on a fixed
period) are run; the status, throughput bound, period, makespan and the
schedule (as :func:`portsim.dump_schedule` writes it) go to one text file.
Run it on two versions and compare the files byte for byte; the version
before in a worktree and venv of its own (the examples and the code are the
imported ``portsim``'s, so this file may come from either checkout), which
leaves uncommitted work alone, unlike ``git stash``:

    git worktree add /tmp/before main
    python -m venv /tmp/venv-before && /tmp/venv-before/bin/pip install -q -e /tmp/before
    /tmp/venv-before/bin/python benchmarks/compare_examples.py --out before.txt
    python benchmarks/compare_examples.py --out after.txt
    cmp before.txt after.txt

Planners with a time limit can end differently on a loaded machine; the
script runs them with their defaults, so a difference in a time-limited
status is worth a second run before it is worth a look.

Run:  python benchmarks/compare_examples.py [--out examples.txt] [--skip NAME ...]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import portsim
from portsim.simulator.numbers import format_rational

EXAMPLES = Path(portsim.__file__).resolve().parent / "scenarios" / "examples"

LP_VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"split": False},
    {"period": 7},
    {"max_events": 200},
)
"""Option sets of ``lp`` run on every example besides the scenario's own planners."""


def _figure(value: Any) -> str:
    return "-" if value is None else format_rational(value)


def dump_example(path: Path, out: io.TextIOBase) -> None:
    """Write every planner's result on the scenario ``path`` to ``out``."""
    scenario = portsim.load_scenario(path)
    runs: list[tuple[str, dict[str, Any]]] = [(s.name, dict(s.options)) for s in scenario.planners]
    runs += [("lp", dict(v)) for v in LP_VARIANTS if ("lp", dict(v)) not in runs]
    for name, options in runs:
        planner = portsim.get_planner(name)
        out.write(f"== {path.name} {name} {sorted(options.items())}\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = planner.plan(scenario.platform, scenario.operation, **options)
            except portsim.PortsimError as err:
                out.write(f"raised {type(err).__name__}: {err}\n")
                continue
        out.write(f"status {result.status}\n")
        out.write(f"bound {_figure(result.throughput_bound)} period {_figure(result.period)} "
                  f"makespan {_figure(result.makespan)}\n")
        if result.schedule is not None:
            text = io.StringIO()
            portsim.dump_schedule(result.schedule, text)
            out.write(text.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="examples.txt")
    parser.add_argument("--skip", nargs="*", default=[], help="example file names to skip")
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8") as out:
        for path in sorted(EXAMPLES.glob("*.yaml")):
            if path.name in args.skip:
                continue
            start = time.perf_counter()
            dump_example(path, out)
            print(f"{path.name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
