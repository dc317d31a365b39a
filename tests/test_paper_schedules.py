"""The papers' published schedules, shipped as schedule files, replayed by ``portsim validate``.

The scatter toy's LP optimum is degenerate (``tests/test_lp.py``): HiGHS
returns another optimal vertex than the paper's, with a shorter period.  The
published solution is bundled as two schedule files so that its figures
(RR-4872 section 3.2, Fig. 4; slides 29-43) are checked by running files, not
by trusting the planner: TP = 1/2, period 12 with split messages (6 scatters
per period), 48 with whole messages (24 per period).

The reduce toy's published solution (RR-4872 section 4, Fig. 6(b): period 3,
three reductions) is bundled likewise, and the schedule of Fig. 6(d) as the
text copy of the report places it is checked to break the one-port model.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from portsim.scenarios.cli import main
from portsim.scenarios.loader import load_scenario
from portsim.scenarios.schedule_file import load_schedule
from portsim.simulator import validate
from portsim.simulator.schedule import Compute, Schedule, Send

SCHEDULES = Path(__file__).resolve().parent.parent / "scenarios" / "examples" / "schedules"


@pytest.mark.parametrize(("name", "period", "per_period"), [
    ("scatter-toy-paper-split", F(12), 6),
    ("scatter-toy-paper-whole", F(48), 24),
])
def test_scatter_toy_published_schedule(name: str, period: F, per_period: int) -> None:
    path = SCHEDULES / f"{name}.yaml"
    schedule = load_schedule(path)
    assert schedule.period == period
    assert schedule.instances_per_period == per_period
    if name.endswith("whole"):
        assert all(e.part == 1 for e in schedule.events)
    else:
        assert any(e.part != 1 for e in schedule.events)
    result = CliRunner().invoke(main, ["validate", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["feasible"] is True
    assert report["violations"] == []
    assert report["throughput"] == "1/2"  # published TP
    assert report["lp_bound"] == "1/2"
    # Lag 1: the first period's instances finish one period late, so over the
    # horizon every period but one completes all its instances.
    periods = F(report["horizon"]) / period
    assert report["completed"] >= per_period * (periods - 1)


def test_reduce_toy_published_schedule() -> None:
    path = SCHEDULES / "reduce-toy-paper.yaml"
    schedule = load_schedule(path)
    assert (schedule.period, schedule.instances_per_period) == (F(3), 3)
    # The task counts of Fig. 6(b), per period of 3.
    sends: dict[tuple[str, str, str], int] = {}
    computes: dict[tuple[str, str], int] = {}
    for event in schedule.events:
        if isinstance(event, Send):
            key = (event.src, event.dst, str(event.item).split("#")[0])
            sends[key] = sends.get(key, 0) + 1
        else:
            assert isinstance(event, Compute)
            ckey = (event.node, str(event.output).split("#")[0])
            computes[ckey] = computes.get(ckey, 0) + 1
    assert sends == {("P1", "P2", "v[1,1]"): 2, ("P2", "P1", "v[2,2]"): 1,
                     ("P1", "P0", "v[1,2]"): 1, ("P2", "P0", "v[1,2]"): 2}
    assert computes == {("P1", "v[1,2]"): 1, ("P2", "v[1,2]"): 2, ("P0", "v[0,2]"): 3}
    result = CliRunner().invoke(main, ["validate", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["feasible"] is True
    assert report["violations"] == []
    assert report["throughput"] == "1"  # published TP: three reductions every 3
    assert report["lp_bound"] == "1"


def test_reduce_toy_fig_6d_as_printed_breaks_the_receive_port() -> None:
    # Fig. 6(d) (text copy): P1 -> P0 carries v[1,2]^1 in column 2 and P2 -> P0
    # carries v[1,2]^0 in column 2 too; both are unit transfers into P0.
    scenario = load_scenario(SCHEDULES.parent / "reduce-toy.yaml")
    platform, operation = scenario.platform, scenario.operation.resolve(scenario.platform)
    schedule = Schedule.from_dicts(platform, operation, [
        {"kind": "send", "src": "P1", "dst": "P2", "item": "v[1,1]", "start": 0},
        {"kind": "send", "src": "P2", "dst": "P1", "item": "v[2,2]#1", "start": 0},
        {"kind": "send", "src": "P2", "dst": "P1", "item": "v[2,2]#2", "start": 1},
        {"kind": "compute", "node": "P2", "inputs": ["v[1,1]", "v[2,2]"], "output": "v[1,2]",
         "start": 1},
        {"kind": "compute", "node": "P1", "inputs": ["v[1,1]#1", "v[2,2]#1"],
         "output": "v[1,2]#1", "start": 1},
        {"kind": "compute", "node": "P1", "inputs": ["v[1,1]#2", "v[2,2]#2"],
         "output": "v[1,2]#2", "start": 2},
        {"kind": "send", "src": "P2", "dst": "P0", "item": "v[1,2]", "start": 2},
        {"kind": "send", "src": "P1", "dst": "P0", "item": "v[1,2]#1", "start": 2},
        {"kind": "send", "src": "P1", "dst": "P0", "item": "v[1,2]#2", "start": 3},
        {"kind": "compute", "node": "P0", "inputs": ["v[0,0]", "v[1,2]"], "output": "v[0,2]",
         "start": 3},
        {"kind": "compute", "node": "P0", "inputs": ["v[0,0]#1", "v[1,2]#1"],
         "output": "v[0,2]#1", "start": 4},
        {"kind": "compute", "node": "P0", "inputs": ["v[0,0]#2", "v[1,2]#2"],
         "output": "v[0,2]#2", "start": 5},
    ])
    report = validate(schedule)
    assert [(v.kind, v.node, v.time) for v in report.violations] == [
        ("port_conflict", "P0", 2)]
