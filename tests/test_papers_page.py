"""``docs/papers.md``: every figure its table and its "next steps" quote is what portsim prints.

The table (between the ``papers-table`` markers) names a bundled scenario, a
row label, a field and the figure; each row is run here through the library
(the records ``portsim run --json`` writes) and compared exactly.  The
figures are the papers' (the last column says which), or, on the platforms
of our own, those of the examples' descriptions.  The variants of the
"What the examples do not show" section are checked below against the
independent reasons the page gives.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
import yaml

from portsim.scenarios.loader import load_scenario, scenario_from_dict
from portsim.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "papers.md"
FIELDS = {"bound": "throughput_bound", "period": "period", "makespan": "makespan",
          "measured": "measured_throughput_exact"}


def _rows() -> list[tuple[str, str, str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- papers-table: start -->")[1].split("<!-- papers-table: end -->")[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        scenario = re.fullmatch(r"`([^`]+)`", cells[1])
        assert scenario, line
        rows.append((scenario.group(1), cells[2], cells[3], cells[4]))
    return rows


ROWS = _rows()


@functools.cache
def _records(path: str) -> dict[str, dict[str, Any]]:
    result = run_scenario(load_scenario(ROOT / path))
    return {record["label"]: record for record in result.to_dict()["results"]}


def test_the_table_covers_every_paper() -> None:
    assert len(ROWS) >= 17
    files = {row[0] for row in ROWS}
    for name in ("scatter-toy", "reduce-toy", "broadcast-bidir", "broadcast-unidir",
                 "reduce-fibonacci", "reduce-sender-times"):
        assert f"scenarios/examples/{name}.yaml" in files


@pytest.mark.parametrize(("path", "label", "field", "figure"), ROWS,
                         ids=[f"{Path(r[0]).stem}-{r[1]}-{r[2]}" for r in ROWS])
def test_table_row(path: str, label: str, field: str, figure: str) -> None:
    record = _records(path)[label]
    assert record["status"] == "ok"
    assert record["feasible"] is True
    value = record[FIELDS[field]]
    assert value is not None
    assert F(value) == F(figure)


def _variant(path: str, planners: list[Any], **changes: Any) -> dict[str, dict[str, Any]]:
    """The example at ``path`` with some platform/operation keys changed, run."""
    document = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        document[section][key] = value
    document["planners"] = planners
    result = run_scenario(scenario_from_dict(document, path, base_dir=(ROOT / path).parent))
    records = {r["label"]: r for r in result.to_dict()["results"]}
    for record in records.values():
        assert record["status"] == "ok"
        assert record["feasible"] is True
    return records


def test_reduce_toy_onto_p1_and_unidirectional() -> None:
    # Onto P1: one receive port takes >= 1 unit message per reduction, so TP <= 1.
    records = _variant("scenarios/examples/reduce-toy.yaml", ["lp"], operation__target="P1")
    assert records["lp"]["throughput_bound"] == "1"
    # Unidirectional: a transfer takes two of the three single ports, so one
    # message at a time; a reduction needs two messages: TP <= 1/2.
    records = _variant("scenarios/examples/reduce-toy.yaml", ["lp"],
                       platform__port_model="unidirectional")
    assert records["lp"]["throughput_bound"] == "1/2"


def test_broadcast_under_other_port_models() -> None:
    records = _variant("scenarios/examples/broadcast-bidir.yaml", ["lp", "ring"],
                       platform__port_model="unidirectional")
    assert records["lp"]["throughput_bound"] == "2/3"  # BM section 2.2.2
    # ring: N1 -> N2 over [0, 1], N2 -> N3 over [1, 3/2].
    assert records["ring"]["makespan"] == "3/2"
    records = _variant("scenarios/examples/broadcast-bidir.yaml", ["lp"],
                       platform__port_model="multiport")
    # One port per link: N1 feeds N2 and N3 at once, each link busy 1 per message.
    assert (records["lp"]["throughput_bound"], records["lp"]["period"]) == ("1", "1")


@pytest.mark.parametrize(("period", "achieved"), [(5, "2/5"), (7, "3/7")])
def test_scatter_toy_fixed_period(period: int, achieved: str) -> None:
    # Ps sends two unit messages per scatter: floor(T / 2) scatters per period T.
    records = _variant("scenarios/examples/scatter-toy.yaml", [{"name": "lp", "period": period}])
    record = records[f"lp (period: {period})"]
    assert F(record["achieved_throughput"]) == F(period // 2, period) == F(achieved)
    assert record["bound_reached"] is False


@pytest.mark.parametrize(("x", "optimum"), [
    (F(11, 10), F(4)), (F(5, 4), F(4)), (F(7, 4), F(9, 2)), (F(19, 10), F(24, 5))])
def test_fig8_cluster_for_other_x(x: F, optimum: F) -> None:
    # LKW section 5.2: SNF takes x + 3, the alternative max(4, 2x + 1).
    assert optimum == max(F(4), 2 * x + 1)
    times = {f"S{i}": str(x) for i in range(4)} | {f"F{i}": 1 for i in range(8)}
    records = _variant("scenarios/examples/reduce-sender-times.yaml", ["snf", "optimal"],
                       platform__generator={"type": "sender_times", "times": times})
    assert F(records["snf"]["makespan"]) == x + 3
    assert F(records["optimal"]["makespan"]) == optimum


@pytest.mark.parametrize(("path", "period", "per_period", "tp"), [
    ("scenarios/examples/scatter-toy.yaml", 12, 6, "1/2"),  # LMR Fig. 4(a)
    ("scenarios/examples/reduce-toy.yaml", 3, 3, "1")])     # LMR Fig. 6(b)
def test_the_papers_periods_as_fixed_periods(path: str, period: int, per_period: int,
                                            tp: str) -> None:
    records = _variant(path, [{"name": "lp", "period": period}])
    record = records[f"lp (period: {period})"]
    assert record["period"] == str(period)
    assert record["achieved_throughput"] == tp
    assert F(tp) * period == per_period
    assert record["bound_reached"] is True
