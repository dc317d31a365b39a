"""``bound_reached`` and ``achieved_throughput`` (issue 14, item 4).

Whenever a schedule does not reach ``throughput_bound``, the JSON result says
so in fields, not only in a note, and ``portsim run`` marks it in its table.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

from click.testing import CliRunner

from portsim.planners.lp import steady_state
from portsim.scenarios.cli import main
from portsim.scenarios.loader import load_scenario, scenario_from_dict
from portsim.scenarios.runner import run_scenario
from portsim.simulator import replay

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"

RELAY = {
    # The relay case of issue 14: S broadcasts to A only (R is a router, not a
    # destination).  The bound is 1 (S -> A, c = 1, once per time unit); with
    # spanning trees lp also fed R over S -> R (c = 5) and its schedule sent
    # once per 1 + 5 = 6 time units (1/6); Steiner trees skip R and reach 1.
    "name": "relay",
    "platform": {
        "port_model": "bidirectional",
        "nodes": [{"id": "S"}, {"id": "A"}, {"id": "R", "router": True}],
        "links": [{"src": "S", "dst": "A", "c": 1}, {"src": "S", "dst": "R", "c": 5},
                  {"src": "A", "dst": "S", "c": 1}],
    },
    "operation": {"type": "broadcast", "source": "S"},
    "planners": ["lp", "flat"],
}


# The scatter toy (RR-4872, Fig. 2: TP = 1/2) under the fixed period 5, which
# holds floor(5/2) = 2 instances: the schedule reaches 2/5 < 1/2.
FIXED_PERIOD = {
    "name": "scatter-fixed-period",
    "platform": {
        "port_model": "bidirectional",
        "nodes": [{"id": n} for n in ("Ps", "Pa", "Pb", "P0", "P1")],
        "links": [{"src": "Ps", "dst": "Pa", "c": 1}, {"src": "Ps", "dst": "Pb", "c": 1},
                  {"src": "Pa", "dst": "P0", "c": "2/3"}, {"src": "Pb", "dst": "P0", "c": "4/3"},
                  {"src": "Pb", "dst": "P1", "c": "4/3"}],
    },
    "operation": {"type": "scatter", "source": "Ps", "targets": ["P0", "P1"]},
    "planners": [{"name": "lp", "period": 5}, "flat"],
}


def test_relay_broadcast_reaches_its_bound_with_steiner_trees() -> None:
    outcome = run_scenario(scenario_from_dict(RELAY))
    lp, flat = outcome.results
    row = lp.to_dict()
    assert row["throughput_bound"] == "1"
    assert row["achieved_throughput"] == "1"
    assert row["bound_reached"] is True
    # The replay measures what the field states: 100 operations in 100.
    assert (lp.completed, lp.horizon) == (100, 100)
    # flat states no bound: nothing to compare.
    assert (flat.to_dict()["achieved_throughput"], flat.to_dict()["bound_reached"]) == (
        None, None)


def test_an_exact_lp_optimum_is_reached() -> None:
    scenario = load_scenario(EXAMPLES / "broadcast-bidir.yaml")
    (lp,) = [r for r in run_scenario(scenario).results if r.planner == "lp"]
    # RR-2004-32, Fig. 2: TP = 1 in the bidirectional model.
    assert (lp.throughput_bound, lp.achieved_throughput, lp.bound_reached) == (1, 1, True)
    assert lp.to_dict()["bound_reached"] is True


def test_a_fixed_period_loss_is_not_reached() -> None:
    # scatter-toy: TP = 1/2; the fixed period 5 holds floor(5/2) = 2 instances: 2/5.
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    result = steady_state(scenario.platform, scenario.operation, period=5)
    assert (result.throughput_bound, result.achieved_throughput) == (F(1, 2), F(2, 5))
    assert result.bound_reached is False
    assert result.to_dict()["achieved_throughput"] == "2/5"
    assert result.schedule is not None
    report = replay(result.schedule, horizon=100)
    assert report.throughput == F(2, 5)


def test_run_table_marks_a_bound_not_reached(tmp_path: Path) -> None:
    path = tmp_path / "fixed.yaml"
    path.write_text(json.dumps(FIXED_PERIOD))
    out = tmp_path / "fixed.json"
    result = CliRunner().invoke(main, ["run", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "1/2 (not reached: 2/5)" in result.output
    (lp, _flat) = json.loads(out.read_text())["results"]
    assert (lp["achieved_throughput"], lp["bound_reached"]) == ("2/5", False)


def test_run_table_has_no_marker_when_the_bound_is_reached() -> None:
    result = CliRunner().invoke(main, ["run", str(EXAMPLES / "broadcast-bidir.yaml")])
    assert result.exit_code == 0, result.output
    assert "not reached" not in result.output
