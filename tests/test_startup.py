"""Start-up: what a command imports (the CPU figures are in benchmarks/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
HEAVY = ("networkx", "scipy", "numpy", "highspy", "pandas", "plotly", "pydantic", "simpy")

# Runs the command line in a fresh interpreter, then prints which of HEAVY it loaded.
PROBE = """\
import json, sys
from portsim.scenarios.cli import main
try:
    main(sys.argv[2:], prog_name="portsim")
except SystemExit:
    pass
heavy = json.loads(sys.argv[1])
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


def loaded_by(*args: str) -> set[str]:
    """The heavy top-level modules a fresh ``portsim ARGS`` has imported when it ends."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(HEAVY), *args],
                          capture_output=True, text=True, check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["planners"], ["planners", "--format", "json"]])
def test_help_and_planners_import_no_heavy_library(args: list[str]) -> None:
    assert loaded_by(*args) == set()


def test_a_trivial_run_imports_no_solver_nor_data_library(tmp_path: Path) -> None:
    scenario = yaml.safe_load((EXAMPLES / "scatter-toy.yaml").read_text())
    scenario["planners"] = ["flat"]
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(scenario))
    # networkx stays: the flat planner routes along cheapest paths (Dijkstra)
    # and the loader checks the targets are reachable; pydantic checks the
    # file and SimPy replays the schedule.
    assert loaded_by("run", str(path)) == {"networkx", "pydantic", "simpy"}


def test_platforms_and_operations_import_networkx_on_first_use() -> None:
    code = """\
import sys
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Platform
import portsim.scenarios.loader
p = Platform.build(["A", "B"], [("A", "B", 1)])
before = "networkx" in sys.modules
op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
print(before, "networkx" in sys.modules, sorted(p.graph.successors("A")))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "True", "['B']"]
