"""The papers' published schedules, shipped as schedule files, replayed by ``portsim validate``.

The scatter toy's LP optimum is degenerate (``tests/test_lp.py``): HiGHS
returns another optimal vertex than the paper's, with a shorter period.  The
published solution is bundled as two schedule files so that its figures
(RR-4872 section 3.2, Fig. 4; slides 29-43) are checked by running files, not
by trusting the planner: TP = 1/2, period 12 with split messages (6 scatters
per period), 48 with whole messages (24 per period).
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from portsim.scenarios.cli import main
from portsim.scenarios.schedule_file import load_schedule

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
