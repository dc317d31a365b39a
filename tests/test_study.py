"""Study files, grid expansion, execution (local pool, Dask), the result store, reports."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from browser import CHROMIUM, FLAGS, drawn, needs_chromium
from click.testing import CliRunner

from portsim.reports.studies import (
    RESULT_COLUMNS,
    execute_run,
    load_results,
    load_study,
    run_study,
    study_from_dict,
    write_study_report,
)
from portsim.scenarios.cli import main
from portsim.simulator.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "scenarios" / "studies"

# Fields of SPEC.md's JSON result, every one a column.
SPEC_FIELDS = ("planner", "operation", "port_model", "status", "message", "throughput_bound",
               "period", "makespan", "measured_throughput", "completed", "horizon",
               "feasible", "violations")


def trees_study(n_values: list[int], replicates: int = 1, **extra: Any) -> dict[str, Any]:
    """Canon–Antoniu homogeneous reduce, d = c = 1, unidirectional one-port."""
    return {
        "name": "trees",
        "base": {
            "platform": {"port_model": "unidirectional",
                         "generator": {"type": "complete", "n": 8, "c": 1, "compute": 1}},
            "operation": {"type": "reduce", "target": "P0"},
            "planners": ["binomial", "fibonacci"],
            "horizon": 50,
        },
        "grid": {"platform.generator.n": n_values},
        "replicates": replicates,
        **extra,
    }


# -- grid expansion ----------------------------------------------------------------------


def test_grid_is_the_cartesian_product_with_seeds() -> None:
    study = study_from_dict({
        "name": "g",
        "base": {"platform": {"generator": {"type": "random", "n": 4, "degree": 2}},
                 "operation": {"type": "broadcast", "source": "P0"}},
        "grid": {"platform.generator.n": [4, 6, 8], "platform.port_model":
                 ["bidirectional", "unidirectional"], "operation.size": [1]},
        "replicates": 3,
    })
    assert len(study.runs) == 3 * 2 * 1 * 3
    points = [(r.grid["platform.generator.n"], r.grid["platform.port_model"], r.seed)
              for r in study.runs]
    assert points[:4] == [(4, "bidirectional", 0), (4, "bidirectional", 1),
                          (4, "bidirectional", 2), (4, "unidirectional", 0)]
    last = study.runs[-1].scenario
    assert last["platform"]["generator"] == {"type": "random", "n": 8, "degree": 2}
    assert last["platform"]["port_model"] == "unidirectional"
    assert last["operation"] == {"type": "broadcast", "source": "P0", "size": 1}
    assert last["seed"] == 2
    assert last["name"] == "g"
    assert len({r.key for r in study.runs}) == len(study.runs)
    assert [r.index for r in study.runs] == list(range(18))


def test_run_key_depends_on_inputs_only() -> None:
    a = study_from_dict(trees_study([4, 8]))
    b = study_from_dict({**trees_study([8]), "name": "trees"})
    assert a.runs[1].key == b.runs[0].key
    assert a.runs[0].key != a.runs[1].key


@pytest.mark.parametrize(("data", "match"), [
    ({"name": "x", "base": {}, "grids": {}}, r"grids"),
    ({"name": "x", "base": {}, "grid": {"a.b": []}}, r"grid\.a\.b: a grid list must not"),
    ({"name": "x", "base": {}, "replicates": 0}, r"replicates"),
    ({"name": "X!", "base": {}}, r"name"),
    ({"name": "x", "base": {"a": 3}, "grid": {"a.b": [1]}}, r"base\.a: .*not a mapping"),
    ({"name": "x", "base": {}, "grid": {"a..b": [1]}}, r"dotted path"),
    ({**trees_study([4, 8]), "base": {**trees_study([4])["base"], "planers": ["flat"]}},
     r"^s\.yaml: grid point 0 \(platform\.generator\.n=4\): base\.planers: unknown key"),
])
def test_bad_study_files_are_one_line_errors(data: dict[str, Any], match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        study_from_dict(data, source="s.yaml")


# -- results: one row per run and planner, typed ----------------------------------------


def test_results_frame_columns_types_and_published_makespans(tmp_path: Path) -> None:
    study = study_from_dict(trees_study([4, 8], replicates=2))
    outcome = run_study(study, tmp_path, workers=2)
    assert (outcome.total, outcome.computed, outcome.skipped, outcome.failed) == (4, 4, 0, 0)
    frame = load_results(tmp_path)
    assert len(frame) == 4 * 2
    assert not frame.duplicated(["run_key", "planner"]).any()
    for name in (*SPEC_FIELDS, "grid.platform.generator.n", "seed", "run_key"):
        assert name in frame.columns
    assert [c for c, _ in RESULT_COLUMNS] == list(frame.columns[:len(RESULT_COLUMNS)])
    assert frame["completed"].dtype == pd.Int64Dtype()
    assert frame["feasible"].dtype == pd.BooleanDtype()
    assert frame["measured_throughput"].dtype == pd.Float64Dtype()
    assert frame["makespan"].dtype == pd.StringDtype()
    assert frame["grid.platform.generator.n"].dtype == pd.Int64Dtype()
    assert sorted(frame["seed"].unique()) == [0, 1]
    # Canon–Antoniu: binomial of order k reduces 2^k in k (d + c); Fibonacci of order
    # k reduces F(k+2) = 8 (k = 4) in d + (k - 1) max(d, c) + c = 5.
    by = frame.set_index(["grid.platform.generator.n", "seed", "planner"])["makespan"]
    assert by[(4, 0, "binomial")] == "4"
    assert by[(8, 1, "binomial")] == "6"
    assert by[(8, 0, "fibonacci")] == "5"
    assert (frame["status"] == "ok").all()
    assert frame["feasible"].all()
    assert (frame["horizon"] == "50").all()
    assert json.loads(frame["violations"].iloc[0]) == []
    # A pipelined series does at least as well as back-to-back operations (50 // 6).
    row = frame[(frame["grid.platform.generator.n"] == 8) & (frame["planner"] == "binomial")]
    assert (row["completed"] >= 50 // 6).all()
    assert (row["measured_throughput"] == row["completed"] / 50).all()


def test_run_study_names_a_bad_argument_before_anything_runs(tmp_path: Path) -> None:
    """``run_study(study, out, workers="2")`` raised ``TypeError: '<' not
    supported``, ``batch_size=0`` a ``ZeroDivisionError`` once the first run
    finished, and the study file's mapping in place of the study an
    ``AttributeError``.  Each is one ScenarioError, and nothing is stored."""
    document = trees_study([4])
    study = study_from_dict(document)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"workers": "2"}, r"^--workers: must be an integer >= 1 \(got '2'\)"),
        ({"workers": 1.5}, r"^--workers: must be an integer >= 1"),
        ({"batch_size": 0}, r"^--batch-size: must be an integer >= 1 \(got 0\)"),
        ({"batch_size": None}, r"^--batch-size: must be an integer >= 1")]
    for options, message in bad:
        with pytest.raises(ScenarioError, match=message):
            run_study(study, tmp_path / "out", **options)
    with pytest.raises(ScenarioError, match=r"^study: expected a Study: .*study_from_dict"):
        run_study(document, tmp_path / "out")  # type: ignore[arg-type]
    assert not (tmp_path / "out" / "results.parquet").exists()
    # the same study with good values: binomial of order 2 reduces 4 nodes in 2 (d + c) = 4
    outcome = run_study(study, tmp_path / "out", workers=1, batch_size=1)
    assert (outcome.computed, outcome.failed) == (1, 0)
    frame = load_results(tmp_path / "out")
    assert frame.set_index("planner")["makespan"]["binomial"] == "4"


def test_store_rows_carry_every_json_result_field(tmp_path: Path) -> None:
    """Each stored row holds the JSON result of ``portsim run`` on the same scenario
    (computed independently, through the runner), including the 0.3.0 fields."""
    from fractions import Fraction

    from portsim.scenarios.loader import scenario_from_dict
    from portsim.scenarios.runner import run_scenario

    base = yaml.safe_load((ROOT / "scenarios" / "examples" / "scatter-toy.yaml").read_text())
    base.update(planners=["lp", "flat"], horizon=40)
    study = study_from_dict({"name": "fields", "base": base,
                             "grid": {"horizon": [40]}, "replicates": 1})
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    expected = [r.to_dict() for r in run_scenario(scenario_from_dict(dict(base))).results]
    assert list(frame["planner"]) == ["lp", "flat"]
    for (_, row), want in zip(frame.iterrows(), expected, strict=True):
        for name in ("status", "throughput_bound", "period", "makespan", "completed",
                     "horizon", "feasible", "label", "replay", "replay_cut",
                     "achieved_throughput", "bound_reached", "bound_exact",
                     "measured_throughput_exact"):
            got = row[name]
            assert (None if pd.isna(got) else got) == want[name], name
        exact = Fraction(row["measured_throughput_exact"])
        assert exact == Fraction(int(row["completed"])) / Fraction(row["horizon"])
        assert float(exact) == row["measured_throughput"]
    # The scatter toy's optimum, TP = 1/2 (RR-4872, section 3.2), reached by lp's
    # periodic schedule by construction.
    lp = frame.iloc[0]
    assert (lp["throughput_bound"], lp["achieved_throughput"]) == ("1/2", "1/2")
    assert bool(lp["bound_reached"])
    # proven optimal, and the reference of both rows; flat gives no bound
    assert bool(lp["bound_exact"])
    assert pd.isna(frame.iloc[1]["bound_exact"])
    assert frame["reference_bound_exact"].tolist() == [True, True]


def test_an_interval_bound_is_marked_as_not_proven_optimal(tmp_path: Path) -> None:
    """The all-to-all of ``test_lp``'s flows far from one (optimum 1 / (4 * 10^7 +
    10^-6) by hand): lp gives the certified interval whose upper end is 1/2 *
    10^-7, twice the optimum.  The row and every row of its run say the
    reference bound is not proven optimal, so each efficiency is a lower end (lp's
    own is 1/2 where its schedule is within 10^-5 of the optimum), and the
    report says so below the efficiency chart (flat does no all-to-all: one
    row drawn)."""
    study = study_from_dict({
        "name": "interval",
        "base": {"platform": {"nodes": [{"id": f"N{k}"} for k in range(4)], "links": [
            {"src": a, "dst": b, "c": c} for a, b, c in (
                ("N0", "N3", "8000000"), ("N1", "N0", "40"), ("N1", "N2", "3/1000000"),
                ("N1", "N3", "1/1000000"), ("N2", "N0", "4/5"), ("N3", "N1", "7000"))]},
                 "operation": {"type": "alltoall"}, "planners": ["lp", "flat"]},
        "replicates": 1,
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path).set_index("planner")
    assert frame.loc["lp", "throughput_bound"] == "1/20000000"
    assert Fraction(frame.loc["lp", "achieved_throughput"]) < Fraction(1, 4 * 10**7)
    assert not frame.loc["lp", "bound_exact"]
    assert frame["reference_bound_exact"].tolist() == [False, False]
    page = write_study_report(tmp_path).read_text()
    assert ("1 run(s) (1 row(s)) compare with a reference bound that is only the upper end "
            "of a certified interval") in page


def test_a_store_written_without_the_new_columns_resumes_and_loads(tmp_path: Path) -> None:
    """A 0.2.0 store (no ``label`` ... ``measured_throughput_exact`` columns) resumes:
    its runs are skipped, the new runs store every column, the old rows read back
    with those columns empty."""
    import pyarrow.parquet as pq

    added = ("label", "replay", "replay_cut", "achieved_throughput", "bound_reached",
             "measured_throughput_exact", "node_port_models")
    run_study(study_from_dict(trees_study([4])), tmp_path, workers=1)
    for part in (tmp_path / "results.parquet").glob("part-*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(list(added)), part)
    outcome = run_study(study_from_dict(trees_study([4, 8])), tmp_path, workers=1,
                        resume=True)
    assert (outcome.computed, outcome.skipped) == (1, 1)
    frame = load_results(tmp_path)
    old = frame[frame["grid.platform.generator.n"] == 4]
    new = frame[frame["grid.platform.generator.n"] == 8]
    assert old["label"].isna().all()
    assert old["replay"].isna().all()
    assert old["node_port_models"].isna().all()
    assert (new["node_port_models"] == "{}").all()  # every node follows the platform's
    assert list(new["label"]) == ["binomial", "fibonacci"]
    assert (new["replay"] == "strict").all()
    assert list(old["makespan"]) == ["4", "4"]  # binomial and Fibonacci, d = c = 1, n = 4


# A planner option with a bad value loads (option values are the planner's to
# check when it runs): the run fails at run time, the way a planner crash does.
FAILING_PLANNER = {"name": "greedy", "reducers": 0}


def test_failing_run_is_a_row_and_the_study_goes_on(tmp_path: Path) -> None:
    data = trees_study([4, 8])
    data["grid"]["planners"] = [["binomial", FAILING_PLANNER]]
    study = study_from_dict(data)
    outcome = run_study(study, tmp_path, workers=2)
    assert (outcome.computed, outcome.failed) == (2, 2)
    frame = load_results(tmp_path)
    good = frame[frame["grid.platform.generator.n"] == 8].set_index("planner")
    assert good.loc["binomial", "makespan"] == "6"
    assert good.loc["greedy", "status"] == "error"
    assert "reducers" in good.loc["greedy", "message"]
    assert frame["grid.planners"].iloc[0] == json.dumps(["binomial", FAILING_PLANNER])
    # The outcome names the first failures: run, grid point, planner, message.
    assert len(outcome.failures) == 2
    assert outcome.failures[0].startswith("run 0 (platform.generator.n=4, planners=")
    # ... by its label, which tells apart a planner listed twice (and the row has it)
    assert ": greedy (reducers: 0): PlannerError: " in outcome.failures[0]
    assert good.loc["greedy", "label"] == "greedy (reducers: 0)"
    # A plain pandas.read_parquet of the store (as its docstring shows) keeps the
    # nullable dtypes: the error rows' empty counts do not turn the column to float64.
    raw = pd.read_parquet(tmp_path / "results.parquet")
    assert raw["completed"].isna().sum() == 2
    assert raw["completed"].dtype == pd.Int64Dtype()
    assert raw["feasible"].dtype == pd.BooleanDtype()
    assert raw["grid.platform.generator.n"].dtype == pd.Int64Dtype()


def test_execute_run_never_raises() -> None:
    run = study_from_dict(trees_study([4])).runs[0]
    broken = dataclasses.replace(run, scenario={**run.scenario, "platform": {
        "generator": {"type": "complete", "n": 0}}})  # n = 0: the loader rejects it
    rows = execute_run(broken, "trees")
    assert [r["planner"] for r in rows] == ["binomial", "fibonacci"]
    assert [r["status"] for r in rows] == ["error", "error"]
    assert rows[0]["message"].startswith("ScenarioError: ")


# -- resume: nothing lost, nothing duplicated ------------------------------------------


def test_resume_counts_the_failures_already_stored(tmp_path: Path) -> None:
    """A resumed study said "0 failed" and exited 0 while its store held failed runs:
    the runs already stored are counted apart, and the command line's status is 1."""
    data = trees_study([4, 5, 8])
    data["grid"]["planners"] = [["binomial", FAILING_PLANNER]]
    study = study_from_dict(data)
    first = run_study(study, tmp_path, batch_size=1)
    assert (first.computed, first.failed, first.stored_failed) == (3, 3, 0)
    parts = sorted((tmp_path / "results.parquet").glob("part-*.parquet"))
    parts[-1].unlink()  # as if the study had been killed before the last run was written
    again = run_study(study, tmp_path, resume=True)
    assert (again.skipped, again.computed, again.failed) == (2, 1, 1)
    assert (again.stored_failed, again.stored_invalid) == (2, 0)
    study_file = tmp_path / "s.yaml"
    study_file.write_text(yaml.safe_dump(data))
    result = subprocess.run(
        [sys.executable, "-m", "portsim.scenarios.cli", "study", str(study_file), "--out",
         str(tmp_path), "--resume"], env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("0 failed, 0 with an invalid schedule (and, among the runs already stored, "
            "3 failed, 0 with an invalid schedule)") in result.stdout


def test_resume_skips_stored_runs_and_recomputes_missing_ones(tmp_path: Path) -> None:
    study = study_from_dict(trees_study([2, 3, 4, 5, 6, 7], replicates=1))
    run_study(study, tmp_path, workers=2, batch_size=1)
    full = load_results(tmp_path)
    parts = sorted((tmp_path / "results.parquet").glob("part-*.parquet"))
    assert len(parts) == 6  # one part per run with batch_size=1
    for part in parts[:2]:  # as if the study had been killed before these were written
        part.unlink()
    # The leftover of a killed writer: a process id that no longer runs.
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    (tmp_path / "results.parquet" / f".part-x.parquet.{dead.pid}.tmp").write_bytes(b"half")
    with pytest.raises(ScenarioError, match="--resume"):
        run_study(study, tmp_path)
    outcome = run_study(study, tmp_path, workers=2, resume=True)
    assert (outcome.skipped, outcome.computed) == (4, 2)
    again = load_results(tmp_path)
    columns = ["run_key", "planner", "makespan", "completed"]
    assert again[columns].equals(full[columns])
    assert not list((tmp_path / "results.parquet").glob(".*.tmp"))
    repeated = run_study(study, tmp_path, resume=True)  # a repeated run is not recomputed
    assert (repeated.skipped, repeated.computed) == (6, 0)


@pytest.mark.slow
def test_resume_after_a_killed_study(tmp_path: Path) -> None:
    study_file = tmp_path / "s.yaml"
    data = trees_study(list(range(2, 32)))
    data["base"]["horizon"] = 300
    study_file.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "portsim.scenarios.cli", "study", str(study_file), "--out",
               str(out), "--workers", "1", "--batch-size", "1"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    store = out / "results.parquet"
    while time.monotonic() < deadline and process.poll() is None:
        if store.is_dir() and len(list(store.glob("part-*.parquet"))) >= 3:
            break
        time.sleep(0.05)
    killed = process.poll() is None
    if killed:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    partial = load_results(out)
    assert 0 < partial["run_key"].nunique() <= 30
    resume = [*command[:-4], "--workers", "2", "--resume"]
    result = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr
    frame = load_results(out)
    assert frame["run_key"].nunique() == 30
    assert len(frame) == 60
    raw = pd.concat(pd.read_parquet(p) for p in store.glob("part-*.parquet"))
    assert len(raw) == 60  # no duplicate row in the store itself
    if killed:
        assert f"{partial['run_key'].nunique()} already stored" in result.stdout


# -- Dask ------------------------------------------------------------------------------------


def test_dask_local_cluster_gives_the_local_results(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    study = study_from_dict(trees_study([4, 8], replicates=2))
    outcome = run_study(study, tmp_path / "dask", executor="dask", workers=2)
    assert (outcome.computed, outcome.failed) == (4, 0)
    run_study(study, tmp_path / "local", workers=2)
    columns = ["run_key", "planner", "status", "makespan", "completed", "feasible"]
    dask_frame = load_results(tmp_path / "dask")[columns]
    local_frame = load_results(tmp_path / "local")[columns]
    assert dask_frame.equals(local_frame)


def test_dask_existing_scheduler_address(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    study = study_from_dict(trees_study([4, 8]))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        outcome = run_study(study, tmp_path, executor="dask",
                            scheduler=cluster.scheduler_address)
    assert (outcome.computed, outcome.failed) == (2, 0)
    frame = load_results(tmp_path).set_index(["grid.platform.generator.n", "planner"])
    assert frame.loc[(8, "binomial"), "makespan"] == "6"
    assert frame.loc[(8, "fibonacci"), "makespan"] == "5"


def test_an_unreachable_scheduler_is_one_error_naming_the_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens on port 1, and ``nonsense://`` is no scheme: each is one
    ScenarioError naming ``--scheduler`` (it was distributed's own OSError, after
    30 s, and a ValueError), and nothing is stored."""
    pytest.importorskip("distributed")
    import portsim.scenarios.study.execute as execute

    monkeypatch.setattr(execute, "_CONNECT_SECONDS", 1)
    study = study_from_dict(trees_study([4]))
    for address, why in (("tcp://127.0.0.1:1", "Timed out trying to connect"),
                         ("nonsense://", "unknown address scheme")):
        with pytest.raises(ScenarioError) as caught:
            run_study(study, tmp_path, executor="dask", scheduler=address)
        assert str(caught.value).startswith(
            f"--scheduler: cannot reach the Dask scheduler: {why}")
    assert not list(tmp_path.glob("**/*.parquet"))


def test_executor_options_are_checked(tmp_path: Path) -> None:
    study = study_from_dict(trees_study([4]))
    with pytest.raises(ScenarioError, match=r"^--scheduler: needs --executor dask"):
        run_study(study, tmp_path, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ScenarioError, match="--workers"):
        run_study(study, tmp_path, workers=0)


# -- command line ------------------------------------------------------------------------


def test_cli_study_and_report(tmp_path: Path) -> None:
    study_file = tmp_path / "s.yaml"
    study_file.write_text(yaml.safe_dump(trees_study([4, 8])))
    runner = CliRunner()
    result = runner.invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                  "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "2 computed" in result.output
    again = runner.invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert again.exit_code == 2
    assert "--resume" in again.output
    resumed = runner.invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                   "--resume"])
    assert resumed.exit_code == 0
    assert "2 already stored, 0 computed" in resumed.output
    report = runner.invoke(main, ["report", str(tmp_path / "o")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "o" / "report.html").read_text()
    assert text.count('class="plotly-graph-div"') >= 3
    assert "Schedule of binomial" in text
    assert "Makespan of one operation" in text


def test_cli_study_exit_statuses(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nbase: {}\nunknown: 1\n")
    result = runner.invoke(main, ["study", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "unknown" in result.output
    failing = tmp_path / "failing.yaml"
    failing.write_text(yaml.safe_dump({**trees_study([4]), "grid": {
        "planners": [["binomial"], [FAILING_PLANNER]]}}))
    result = runner.invoke(main, ["study", str(failing), "--out", str(tmp_path / "f")])
    assert result.exit_code == 1
    assert "2 computed" in result.output
    assert "1 failed" in result.output
    missing = runner.invoke(main, ["report", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "no study results" in missing.output


def test_report_with_convergence(tmp_path: Path) -> None:
    study = study_from_dict({
        "name": "conv",
        "base": {"platform": {"generator": {"type": "random", "n": 5, "degree": 2,
                                            "c": [1, 4], "compute": [1, 2]}},
                 "operation": {"type": "reduce", "participants": ["P0", "P1", "P2"],
                               "target": "P0"},
                 "planners": ["lp", "flat"]},
        "replicates": 1,
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    lp = frame[frame["planner"] == "lp"].iloc[0]
    assert lp["reference_bound"] == lp["throughput_bound"]
    assert lp["efficiency"] == pytest.approx(
        lp["measured_throughput"] / float(Fraction(lp["throughput_bound"])))
    path = write_study_report(tmp_path)
    text = path.read_text()
    assert "Convergence to the bound" in text
    assert "Schedule of lp" in text
    title = f"completed(K) / (TP·K) over horizon K, TP = {lp['throughput_bound']}"
    # plotly's JSON encoder (json or orjson, by what is installed) may or may
    # not escape "/" and "·": compare on the unescaped text.
    plain = text.replace("\\u002f", "/").replace("\\u00b7", "·")
    assert title in plain


# -- paper studies -------------------------------------------------------------------------


SLOW_STUDIES = frozenset({"fabrics"})
"""Studies whose smallest runs take over 5 s (fabrics: lp's long exact periods to replay)."""


@pytest.mark.parametrize("path", [
    pytest.param(p, id=p.stem, marks=pytest.mark.slow if p.stem in SLOW_STUDIES else ())
    for p in sorted(STUDIES.glob("*.yaml"))])
def test_paper_studies_load_and_a_slice_runs(path: Path, tmp_path: Path) -> None:
    study = load_study(path)
    assert study.runs
    assert study.description
    small = sorted(study.runs, key=lambda r: len(json.dumps(r.scenario)))[:2]
    for run in small:
        rows = execute_run(run, study.name)
        assert len(rows) == len(run.scenario["planners"])
        assert all(r["status"] != "error" for r in rows), rows


def test_canon_antoniu_study_slice_published_lengths() -> None:
    study = load_study(STUDIES / "canon-antoniu-fig2.yaml")
    run = next(r for r in study.runs if r.grid == {"platform.generator.n": 8,
                                                     "platform.generator.compute": 1})
    rows = {r["planner"]: r for r in execute_run(run, study.name)}
    # d = c = 1, n = 8 = F(6): optimal (Algorithm 1) = Fibonacci = 5; binomial = 3 (d + c)
    assert (rows["greedy"]["makespan"], rows["fibonacci"]["makespan"],
            rows["binomial"]["makespan"]) == ("5", "5", "6")


def test_canon_antoniu_study_reaches_10000_with_the_papers_worst_ratios(tmp_path: Path) -> None:
    study = load_study(STUDIES / "canon-antoniu-fig2.yaml")
    assert study.evaluation == "model"
    sizes = {r.grid["platform.generator.n"] for r in study.runs}
    assert set(range(2, 65)) <= sizes
    assert max(sizes) == 10000
    assert {1536, 4096} <= sizes  # where binomial/optimal first reaches 21/16 and 4/3
    run_study(study, tmp_path, workers=2)
    frame = load_results(tmp_path)
    assert (frame["status"] == "ok").all()
    greedy = frame[frame["planner"] == "greedy"].set_index("run_key")["makespan"]

    def worst(planner: str, compute: int, largest: int = 10000) -> Fraction:
        rows = frame[(frame["planner"] == planner)
                     & (frame["grid.platform.generator.compute"] == compute)
                     & (frame["grid.platform.generator.n"] <= largest)]
        return max(Fraction(m) / Fraction(greedy[k])
                   for m, k in zip(rows["makespan"], rows["run_key"], strict=True))

    # Section 7.3, Fig. 2 (and every n <= 2000 measured by benchmarks/trees.py): the
    # binomial strategy is at worst 21/16 of the optimum when d = c, and the Fibonacci
    # strategy at worst 3/2 when c = 0 (n = 4: 3 against 2).  Up to 10000, 4/3 (n = 4096).
    assert worst("binomial", 1, 2000) == Fraction(21, 16)
    assert worst("binomial", 1) == Fraction(4, 3)
    assert worst("fibonacci", 0) == Fraction(3, 2)
    assert worst("fibonacci", 1) == worst("binomial", 0) == 1  # each optimal in its regime
    assert frame["makespan_ratio"].max() == 1.5


# -- the report in a real browser ------------------------------------------------------------

@pytest.mark.slow
@needs_chromium
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    study = study_from_dict({**trees_study([4, 8]), "grid": {
        "platform.generator.n": [4, 8], "platform.generator.compute": [0, 1]}})
    run_study(study, tmp_path, workers=2)
    report = write_study_report(tmp_path)
    seen = drawn(report, tmp_path)
    assert seen["errors"] == []
    figures = report.read_text().count('class="plotly-graph-div"')
    assert len(seen["figures"]) == figures >= 4
    for figure in seen["figures"]:
        # plotly draws each figure into an SVG of class main-svg once its JavaScript ran
        assert figure["drawn"], figure["title"]
        assert figure["traces"] >= 1, figure["title"]
        assert not figure["title_meets_ytitle"], figure["title"]
        assert figure["ytitle_inside"], figure["title"]
    assert any(f["title"].startswith("Makespan of one operation") for f in seen["figures"])
    shot = tmp_path / "report.png"
    assert CHROMIUM is not None
    subprocess.run([CHROMIUM, *FLAGS, "--window-size=1400,3000",
                    f"--user-data-dir={tmp_path / 'profile'}",
                    f"--screenshot={shot}", report.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 50_000  # drawn figures, not a blank page


@pytest.mark.parametrize("module", ["portsim.scenarios.study.spec",
                                    "portsim.scenarios.study.store"])
def test_docstring_examples_run(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0
    assert result.failed == 0


# -- evaluation: model (Canon–Antoniu tree lengths without a platform) -----------------


@pytest.fixture(scope="module")
def complete_reduces() -> dict[tuple[int, int], tuple[Any, Any]]:
    """Unidirectional complete platforms and their reduce onto ``P0`` by ``(n, compute)``,
    built once for the three planners below (4,032 links at 64 nodes) and dropped with
    the module."""
    return {}


@pytest.mark.parametrize("compute", [1, 0], ids=["d=c", "c=0"])
@pytest.mark.parametrize("planner", ["greedy", "binomial", "fibonacci"])
def test_model_lengths_equal_the_replayed_makespans(
        planner: str, compute: int,
        complete_reduces: dict[tuple[int, int], tuple[Any, Any]]) -> None:
    from portsim.planners.registry import get_planner
    from portsim.scenarios.generators import complete_platform
    from portsim.scenarios.study.model import model_length
    from portsim.simulator.engine import replay
    from portsim.simulator.operations import Operation, OperationKind

    for n in range(2, 65):
        if (n, compute) not in complete_reduces:
            built = complete_platform(n, c=1, compute=compute, port_model="unidirectional")
            complete_reduces[n, compute] = (
                built, Operation(OperationKind.REDUCE, target="P0").resolve(built))
        platform, operation = complete_reduces[n, compute]
        result = get_planner(planner).plan(platform, operation)
        assert result.schedule is not None
        report = replay(result.schedule)
        assert report.feasible, (planner, n)
        assert report.makespan == result.makespan == model_length(
            planner, n, Fraction(1), Fraction(compute)), (planner, n)


def test_model_study_rows_match_the_replayed_study(tmp_path: Path) -> None:
    from portsim.scenarios.study.spec import study_from_dict

    def study(evaluation: str) -> Any:
        return study_from_dict({
            "name": "fig2", "evaluation": evaluation,
            "base": {"platform": {"port_model": "unidirectional",
                                  "generator": {"type": "complete", "n": 2, "c": 2}},
                     "operation": {"type": "reduce", "target": "P0"},
                     "planners": ["greedy", "binomial", "fibonacci"]},
            "grid": {"platform.generator.n": [2, 5, 8, 13, 16],
                     "platform.generator.compute": [2, 0]}})

    model, replayed = study("model"), study("replay")
    assert {r.key for r in model.runs}.isdisjoint(r.key for r in replayed.runs)
    run_study(model, tmp_path / "model", workers=1)
    run_study(replayed, tmp_path / "replay", workers=1)
    columns = ["run_index", "planner", "status", "makespan", "makespan_ratio"]
    fast, slow = load_results(tmp_path / "model"), load_results(tmp_path / "replay")
    assert fast[columns].equals(slow[columns])
    assert fast["feasible"].isna().all()
    assert slow["feasible"].all()
    assert fast["notes"].str.contains("model evaluation").all()
    # Published: binomial of order k, n = 2^k, k (d + c); Fibonacci of order k,
    # n = F(k+2), d + (k - 1) max(d, c) + c (Propositions 13 and 16), d = 2.
    row = fast.set_index(["grid.platform.generator.n", "grid.platform.generator.compute",
                          "planner"])["makespan"]
    assert row[(16, 2, "binomial")] == "16"  # k = 4: 4 (2 + 2)
    assert row[(13, 0, "fibonacci")] == "10"  # k = 5: 2 + 4 * 2 + 0
    assert row[(8, 2, "fibonacci")] == "10"  # n = 8 = F(6), k = 4: 2 + 3 * 2 + 2


@pytest.mark.parametrize(("change", "match"), [
    ({"platform": {"generator": {"type": "random", "n": 4, "degree": 2}}},
     r"base\.platform\.generator\.type: evaluation: model needs a complete generator"),
    # a random generator without its degree: the model's refusal first (it was
    # the missing degree's, then the model's once the user had added it)
    ({"platform": {"generator": {"type": "random", "n": 4}}},
     r"base\.platform\.generator\.type: evaluation: model needs a complete generator"),
    ({"platform": {"port_model": "multiport:2", "generator": {"type": "complete", "n": 4}}},
     r"base\.platform\.port_model: evaluation: model needs a one-port model"),
    ({"operation": {"type": "allreduce"}}, r"base\.operation\.type: .*needs a reduce"),
    ({"planners": ["greedy", "snf"]}, r"base\.planners\[1\]: .*planners among"),
    ({"operation": {"type": "reduce", "target": "P9"}},
     r"base\.operation\.target: .*target among the participants"),
])
def test_model_study_rejects_what_the_model_cannot_evaluate(change: dict[str, Any],
                                                            match: str) -> None:
    from portsim.scenarios.study.spec import study_from_dict

    base = {"platform": {"generator": {"type": "complete", "n": 4}},
            "operation": {"type": "reduce", "target": "P0"}, "planners": ["greedy"], **change}
    with pytest.raises(ScenarioError, match=match):
        study_from_dict({"name": "s", "evaluation": "model", "base": base}, source="s.yaml")


def test_model_evaluation_reaches_n_10000_fast() -> None:
    import time

    from portsim.scenarios.study.execute import execute_run
    from portsim.scenarios.study.spec import study_from_dict

    study = study_from_dict({
        "name": "big", "evaluation": "model",
        "base": {"platform": {"port_model": "unidirectional",
                              "generator": {"type": "complete", "n": 10000, "c": 1}},
                 "operation": {"type": "reduce", "target": "P0"},
                 "planners": ["greedy", "binomial", "fibonacci"]},
        "grid": {"platform.generator.compute": [1, 0]}})
    started = time.perf_counter()
    rows = [row for run in study.runs for row in execute_run(run, "big")]
    assert time.perf_counter() - started < 10
    length = {(r["grid.platform.generator.compute"], r["planner"]): r["makespan"]
              for r in rows}
    # d = c = 1: Algorithm 1 builds the Fibonacci tree; F(k+2) >= 10000 first for k = 19
    # (F(21) = 10946), length d + (k - 1) max(d, c) + c = 20 (Proposition 16).
    assert length[(1, "greedy")] == length[(1, "fibonacci")] == "20"
    assert 20 < int(length[(1, "binomial")]) <= 28  # below 14 (d + c), 2^14 >= 10000
    # c = 0: the binomial tree is optimal; order k = 14 (2^14 >= 10000), k (d + c) = 14.
    assert length[(0, "greedy")] == length[(0, "binomial")] == "14"


def test_run_key_covers_the_simgrid_file_content(tmp_path: Path) -> None:
    """Editing a SimGrid XML changes the key of the runs that import it, so a
    resumed study recomputes them; other runs keep their keys."""
    from portsim.scenarios.study.spec import run_key

    xml = tmp_path / "cluster.xml"
    xml.write_text("<platform version='4.1'/>", encoding="utf-8")
    doc = {"platform": {"simgrid": {"file": str(xml)}}, "seed": 0}
    before = run_key(doc)
    assert run_key(doc) == before
    xml.write_text("<platform version='4.1'><zone/></platform>", encoding="utf-8")
    assert run_key(doc) != before
    plain = {"platform": {"generator": {"type": "complete", "n": 3}}, "seed": 0}
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"))
    assert run_key(plain) == hashlib.sha256(text.encode()).hexdigest()[:32]


def test_a_bound_of_more_than_18_digits_is_stored_and_reported(tmp_path: Path) -> None:
    """portsim's own exact figures are not inputs: the 10^18 cap on numbers
    read from files does not apply to them.  A scatter over links of costs
    1/p (three primes near 10^9) has the bound 1 / (1/p1 + 1/p2 + 1/p3), 27
    digits over 19; it made every row of the run an error (``number is out
    of range``), and a report of such a store failed the same way."""
    primes = (999999937, 999999929, 999999893)
    study = study_from_dict({
        "name": "big-bound",
        "base": {"platform": {"nodes": [{"id": "S"}, {"id": "A"}, {"id": "B"}, {"id": "C"}],
                              "links": [{"src": "S", "dst": t, "c": f"1/{p}"}
                                        for t, p in zip("ABC", primes, strict=True)]},
                 "operation": {"type": "scatter", "source": "S"},
                 "planners": ["lp", "flat"]},
        "replicates": 1,
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    bound = 1 / sum((Fraction(1, p) for p in primes), Fraction(0))
    assert bound.numerator > 10**18
    assert list(frame["status"]) == ["ok", "ok"]
    assert list(frame["reference_bound"]) == [str(bound), str(bound)]
    # flat serves the three targets back to back: one scatter every 1/p1 + 1/p2 + 1/p3
    assert Fraction(frame["measured_throughput_exact"].iloc[1]) <= bound
    assert "Convergence to the bound" in write_study_report(tmp_path).read_text()


def test_report_labels_a_row_as_portsim_run_and_the_study_print_it(tmp_path: Path) -> None:
    """An entry ``{name: lp, time_limit: 100, split: false}`` is ``lp (time_limit: 100,
    split: False)`` in ``portsim run``, in the study's closing lines and in the stored
    ``label``; the report called it ``lp (split: False, time_limit: 100)`` (the
    options sorted), and ``report --planner`` given the printed label exited 2."""
    from portsim.reports.studies.report import render_study_report, row_labels
    from portsim.scenarios.runner import planner_label

    entry = {"name": "lp", "time_limit": 100, "split": False}
    study = study_from_dict({
        "name": "labels",
        "base": {"platform": {"generator": {"type": "random", "n": 5, "degree": 2}},
                 "operation": {"type": "broadcast", "source": "P0"},
                 "planners": [entry, "flat"]},
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    printed = planner_label("lp", {k: v for k, v in entry.items() if k != "name"})
    assert printed == "lp (time_limit: 100, split: False)"  # the study file's order
    assert list(frame["label"]) == [printed, "flat"]
    assert list(row_labels(frame)) == [printed, "flat"]
    page = render_study_report(frame, planner=printed)
    assert f"Schedule of {printed}" in page
    assert "split: False, time_limit" not in page
    # as the study file writes the option (it was an unknown planner)
    typed = render_study_report(frame, planner="lp (time_limit: 100, split: false)")
    assert f"Schedule of {printed}" in typed


def test_resume_refuses_a_store_of_other_runs(tmp_path: Path) -> None:
    """``--resume`` appended to any store: another study's rows, or rows of an edited
    study file, stayed beside the new ones, and ``load_results`` returned both (two
    runs numbered 1 after a grid value was inserted, averaged as replicates by the
    report).  A resume now continues only the study that wrote the store."""
    run_study(study_from_dict(trees_study([4, 8])), tmp_path, workers=1)
    before = load_results(tmp_path)
    assert list(before["run_index"].unique()) == [0, 1]

    def refused(document: dict[str, Any], match: str) -> None:
        with pytest.raises(ScenarioError, match=match):
            run_study(study_from_dict(document), tmp_path, workers=1, resume=True)
        pd.testing.assert_frame_equal(load_results(tmp_path), before)  # nothing written

    refused({**trees_study([4, 8]), "name": "other"}, "holds the study 'trees', not 'other'")
    # n = 6 inserted: n = 8 would be run 2, stored as run 1
    refused(trees_study([4, 6, 8]), r"under another run index \(the first: run 1, now run 2")
    edited = trees_study([4, 8])
    edited["base"]["platform"]["generator"]["compute"] = 2  # every run's inputs change
    refused(edited, r"holds 2 run\(s\) that this study file no longer makes")
    # a value appended: the stored runs keep their numbers, one run is computed
    outcome = run_study(study_from_dict(trees_study([4, 8, 16])), tmp_path, workers=1,
                        resume=True)
    assert (outcome.skipped, outcome.computed) == (2, 1)
    frame = load_results(tmp_path)
    points = frame[["run_index", "grid.platform.generator.n"]].drop_duplicates()
    assert [tuple(map(int, p)) for p in points.itertuples(index=False)] == [
        (0, 4), (1, 8), (2, 16)]


def test_a_study_off_a_terminal_prints_how_far_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off a terminal (a log file, nohup, a batch job) the progress bar drew only its
    last frame, at the end: a study of hours wrote nothing for hours.  It now prints a
    line with the counts, the rate and the time left once the study has run
    ``QUIET_SECONDS``, then every ``STILL_SECONDS`` (shortened here)."""
    import re

    from portsim.scenarios import cli

    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.05)
    monkeypatch.setattr(cli, "STILL_SECONDS", 0.05)
    study_file = tmp_path / "s.yaml"
    n_values = list(range(4, 24))
    study_file.write_text(yaml.safe_dump(trees_study(n_values)))
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                       "--workers", "1"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("portsim: trees:")]
    assert lines, result.output
    pattern = (r"portsim: trees: (\d+) of 20 run\(s\) done, 0 failed, "
               r"(-|\d+\.\d\d) runs/s, (-:--:--|\d+:\d\d:\d\d) left")
    done = [int(re.fullmatch(pattern, line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert done == sorted(done)
    assert all(0 <= d <= len(n_values) for d in done)
    assert "━" not in result.output  # no bar frame in a log


def test_efficiency_is_the_exact_ratio_rounded_once(tmp_path: Path) -> None:
    """``efficiency`` was the quotient of two floats, off by an ulp in a third of the
    rows of ``lp-vs-trees`` (0.9600000000000001 for 24/25): a filter such as
    ``efficiency >= 0.981`` missed rows at exactly 0.981.  It is now completed /
    horizon / reference bound, exactly, rounded once (the tutorial's study)."""
    study = study_from_dict({
        "name": "tutorial",
        "base": {"platform": {"generator": {"type": "random", "n": 6, "degree": 3,
                                            "c": [1, 4]}},
                 "operation": {"type": "broadcast", "source": "P0"},
                 "planners": ["lp", "flat"]},
        "grid": {"platform.port_model": ["bidirectional", "unidirectional"]},
        "replicates": 2,
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    assert len(frame) == 8
    for row in frame.itertuples():
        exact = Fraction(int(row.completed)) / Fraction(row.horizon) / Fraction(
            row.reference_bound)
        assert row.efficiency == float(exact), (row.label, row.run_index)


def test_the_tutorial_states_the_efficiencies_of_its_study(tmp_path: Path) -> None:
    """docs/tutorial.md runs its study (the YAML block it says to save as
    ``study.yaml``) and states what comes out: "`lp` reaches 0.98 to 0.99 of its
    own bound ..., `flat` 0.44 to 0.83 of it".  Those figures are the least and
    largest ``efficiency`` of each planner, to two decimals, checked here so that
    the page cannot drift from the study (a change of the random generator, say)."""
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    block = re.search(r"Save\s+this as `study.yaml`:\s*```yaml\n(.*?)```", text, re.S)
    stated = re.search(r"`lp` reaches (\d\.\d\d) to (\d\.\d\d) of its own bound.*?"
                       r"`flat` (\d\.\d\d) to\s+(\d\.\d\d) of it", text, re.S)
    assert block is not None
    assert stated is not None
    run_study(study_from_dict(yaml.safe_load(block.group(1))), tmp_path, workers=1)
    frame = load_results(tmp_path)
    assert frame.run_index.nunique() == 4  # "Four runs"
    found = []
    for planner in ("lp", "flat"):
        efficiency = frame[frame.planner == planner].efficiency
        found += [f"{efficiency.min():.2f}", f"{efficiency.max():.2f}"]
    assert found == list(stated.groups())


def test_the_results_dataset_itself_names_its_study(tmp_path: Path) -> None:
    """``pandas.read_parquet("out/results.parquet")`` is how the store reads; given that
    path, ``load_results`` and ``portsim report`` said ``out/results.parquet/
    results.parquet: no study results``.  They now read the study it belongs to, and
    the report goes to the study's folder (not into the dataset, where a reader of
    the parquet files would meet it)."""
    run_study(study_from_dict(trees_study([4, 8])), tmp_path / "out", workers=1)
    dataset = tmp_path / "out" / "results.parquet"
    pd.testing.assert_frame_equal(load_results(dataset), load_results(tmp_path / "out"))
    result = CliRunner().invoke(main, ["report", str(dataset)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "report.html").is_file()
    assert sorted(p.suffix for p in dataset.iterdir()) == [".parquet"]
    assert len(pd.read_parquet(dataset)) == 4  # two runs, two planners


def test_the_efficiency_chart_says_why_a_cut_row_is_missing(tmp_path: Path) -> None:
    """A row whose series replay was cut (``replay_cut``, no measured throughput: flat
    and ring broadcasting over S -> A (c = 1) -> B (c = 2) with ``horizon:
    100000000``, 80 s) was counted under "ok row(s) have no reference bound (no lp
    bound for that run)" though its run's lp bound is 1/2.  Such a row is made here
    from a flat row as the store holds it after a cut."""
    from portsim.reports.studies.report import render_study_report

    study = study_from_dict({
        "name": "cut",
        "base": {"platform": {"nodes": [{"id": "S"}, {"id": "A"}, {"id": "B"}],
                              "links": [{"src": "S", "dst": "A", "c": 1},
                                        {"src": "A", "dst": "B", "c": 2}]},
                 "operation": {"type": "broadcast", "source": "S"},
                 "planners": ["lp", "flat"]},
    })
    run_study(study, tmp_path, workers=1)
    frame = load_results(tmp_path)
    assert list(frame["reference_bound"]) == ["1/2", "1/2"]
    flat = frame["planner"] == "flat"
    for column in ("measured_throughput", "measured_throughput_exact", "efficiency"):
        frame.loc[flat, column] = pd.NA
    frame.loc[flat, "replay_cut"] = True
    page = render_study_report(frame)
    assert "no reference bound" not in page
    assert "1 ok row(s) (flat) have no measured throughput: the replay of their series " \
           "was cut" in page


def _relay_study(own_model_of_a: bool) -> dict[str, Any]:
    a = {"id": "A", "port_model": "bidirectional"} if own_model_of_a else {"id": "A"}
    return {"name": "relay", "base": {
        "platform": {"nodes": [{"id": "S", "port_model": "bidirectional"}, a,
                               {"id": "B", "port_model": "bidirectional"}],
                     "links": [{"src": "S", "dst": "A", "c": 1},
                               {"src": "A", "dst": "B", "c": 1}]},
        "operation": {"type": "broadcast", "source": "S"}, "planners": ["lp"]},
        "grid": {"platform.port_model": ["bidirectional", "unidirectional"]}}


def test_a_port_model_sweep_no_node_follows_is_refused() -> None:
    """A grid over ``platform.port_model`` whose base gives every node its own
    model ran each point on the same platform: the relay's ``lp`` bound was 1
    in the row labelled ``unidirectional`` too.  With A on the platform-wide
    model, A relays every message, received then sent on its one port under
    the unidirectional model: 1/2 there, 1 under the bidirectional one."""
    with pytest.raises(ScenarioError, match=(
            r"^s\.yaml: grid point 0 \(platform\.port_model='bidirectional'\): "
            r"grid\.platform\.port_model: a port model no node follows: every node ")):
        study_from_dict(_relay_study(True), source="s.yaml")
    study = study_from_dict(_relay_study(False), source="s.yaml")
    bounds = {run.grid["platform.port_model"]: execute_run(run, study.name)[0]
              for run in study.runs}
    assert {model: Fraction(row["throughput_bound"]) for model, row in bounds.items()} == {
        "bidirectional": 1, "unidirectional": Fraction(1, 2)}


def test_a_report_of_a_study_still_running_says_so(tmp_path: Path) -> None:
    """`portsim report DIR` while a study writes into DIR gave the runs stored so
    far as the study (`11 run(s)` of 20, nothing saying more were coming); it now
    warns, and the page says so beside the count."""
    import os
    import subprocess
    import sys

    study_file = tmp_path / "s.yaml"
    study_file.write_text(yaml.safe_dump(trees_study([4, 8])))
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["study", str(study_file), "--out", str(out)]).exit_code == 0
    holder = subprocess.Popen(  # a study's process, holding the folder's lock
        [sys.executable, "-c", "import sys, time\n"
         "from portsim.scenarios.study.store import StoreLock\n"
         "StoreLock(sys.argv[1]).__enter__()\nprint('locked', flush=True)\ntime.sleep(120)",
         str(out)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])})
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        report = CliRunner().invoke(main, ["report", str(out)])
    finally:
        holder.kill()
        holder.wait()
    assert report.exit_code == 0, report.output
    assert report.stderr.splitlines() == [
        f"portsim: warning: {out}: a study (process {holder.pid}) is still writing into "
        f"this folder: the report holds only the 2 run(s) stored so far"]
    text = (out / "report.html").read_text()
    assert (f"2 run(s), 4 row(s) (one per run and planner). <span class=\"warn\">A study "
            f"(process {holder.pid}) was still writing into its folder") in text
    # that process gone (killed: its id is still in the lock file), no such words
    again = CliRunner().invoke(main, ["report", str(out)])
    assert again.exit_code == 0
    assert again.stderr == ""
    assert "still writing" not in (out / "report.html").read_text()


def test_report_into_a_study_folder_that_takes_no_file_fails_before_rendering(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`portsim report DIR` (the page DIR/report.html) into a folder where no file can
    be created rendered the whole page (re-planning the chosen run) and only then
    failed to write it; it now fails first, as `-o` into such a folder does."""
    import errno
    import tempfile

    study_file = tmp_path / "s.yaml"
    study_file.write_text(yaml.safe_dump(trees_study([4])))
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["study", str(study_file), "--out", str(out)]).exit_code == 0

    def refused(*args: object, dir: object = None, **kwargs: object) -> object:
        if dir is not None and Path(str(dir)) == out:  # the folder refuses a new file
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    real = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    monkeypatch.setattr("portsim.reports.studies.write_study_report",
                        lambda *a, **k: pytest.fail("rendered before checking the output"))
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"portsim: error: {out / 'report.html'}: cannot write it: cannot create a file in "
        f"the folder {out}: Permission denied"]


def test_a_study_file_on_standard_input(tmp_path: Path) -> None:
    """`portsim study - --out DIR` was `-: file not found`; `-` is standard input, as
    for `run` and `validate`."""
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["study", "-", "--out", str(out)],
                                input=yaml.safe_dump(trees_study([4, 8])))
    assert result.exit_code == 0, result.output
    by = load_results(out).set_index(["grid.platform.generator.n", "planner"])["makespan"]
    # Canon–Antoniu: a binomial tree of order k reduces 2^k in k (d + c) (d = c = 1)
    assert (by[(4, "binomial")], by[(8, "binomial")]) == ("4", "6")
    bad = CliRunner().invoke(main, ["study", "-", "--out", str(tmp_path / "p")],
                             input="name: [\n")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("portsim: error: <stdin>: line 2, column 1: invalid YAML")


@pytest.mark.parametrize(("appended", "now"), [("1/2", "string"), (2.5, "double")])
def test_resume_refuses_grid_values_that_change_a_columns_type(
        tmp_path: Path, appended: Any, now: str) -> None:
    """A value appended to the first grid key is a resume the README allows; one of
    another type (``"1/2"`` or ``2.5`` after the integers 1, 2) wrote its part with a
    ``string`` or ``double`` column beside the stored ``int64`` ones, and the store no
    longer loaded (``ArrowTypeError: Unable to merge: Field grid.platform.generator.c
    has incompatible types``, a traceback from ``portsim report`` too)."""
    def study(values: list[Any]) -> dict[str, Any]:
        document = trees_study([8])
        document["grid"] = {"platform.generator.c": values}
        return document

    run_study(study_from_dict(study([1, 2])), tmp_path, workers=1)
    before = load_results(tmp_path)
    with pytest.raises(ScenarioError, match=(
            rf"grid.platform.generator.c: the store holds this column as int64, the study "
            rf"file's values make it {now}; rerun the study into another --out")):
        run_study(study_from_dict(study([1, 2, appended])), tmp_path, workers=1, resume=True)
    after = load_results(tmp_path)
    pd.testing.assert_frame_equal(after, before)  # nothing written, still readable
    assert [int(c) for c in after["grid.platform.generator.c"]] == [1, 1, 2, 2]


def test_a_mixed_grid_column_holds_text_as_it_is_and_numbers_as_json(tmp_path: Path) -> None:
    """README said such a column held JSON text: ``"1/2"`` is stored as it is (so
    ``Fraction`` reads every value of a column of sizes), ``1`` as its JSON."""
    document = trees_study([4])
    document["grid"] = {"operation.size": [1, "1/2"]}
    run_study(study_from_dict(document), tmp_path, workers=1)
    sizes = load_results(tmp_path)["grid.operation.size"]
    assert str(sizes.dtype) == "string"
    assert list(sizes.unique()) == ["1", "1/2"]
    assert [Fraction(v) for v in sizes.unique()] == [1, Fraction(1, 2)]


def test_resume_into_the_results_dataset_itself_continues_its_study(tmp_path: Path) -> None:
    """``--out out/results.parquet --resume`` (the path ``report`` and ``pandas`` take)
    found no store there, ran every run again and wrote a dataset inside the
    dataset: ``pandas.read_parquet("out/results.parquet")`` then read each row twice
    (8 rows for 2 runs x 2 planners).  The study now continues the store it names."""
    run_study(study_from_dict(trees_study([4, 8])), tmp_path / "out", workers=1)
    dataset = tmp_path / "out" / "results.parquet"
    outcome = run_study(study_from_dict(trees_study([4, 8])), dataset, workers=1,
                        resume=True)
    assert (outcome.skipped, outcome.computed) == (2, 0)
    assert sorted(p.suffix for p in dataset.iterdir()) == [".parquet"]
    assert len(pd.read_parquet(dataset)) == 4  # two runs, two planners, once each
    study_file = tmp_path / "s.yaml"
    study_file.write_text(yaml.safe_dump(trees_study([4, 8])))
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(dataset),
                                       "--resume"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith(
        f"2 already stored, 0 computed in 0.0 s (0.00 runs/s), 0 failed, 0 with an invalid "
        f"schedule; results in {dataset}")


def test_the_efficiency_chart_says_when_a_runs_horizons_differ(tmp_path: Path) -> None:
    """Each planner is measured over its own default horizon: on S -> A (c = 1) -> B
    (c = 2), lp (period 2) over 100 periods = 200 completes 99, flat (makespan 3,
    a copy every 2) over 100 makespans = 300 completes 149: 0.99 against 149/150,
    flat drawn above the optimal lp with nothing said.  Over one horizon (300)
    both complete 149.  The chart now says when a run's horizons differ."""
    from portsim.reports.studies.report import render_study_report

    def study(**extra: Any) -> dict[str, Any]:
        return {"name": "chain", "base": {
            "platform": {"nodes": [{"id": "S"}, {"id": "A"}, {"id": "B"}],
                         "links": [{"src": "S", "dst": "A", "c": 1},
                                   {"src": "A", "dst": "B", "c": 2}]},
            "operation": {"type": "broadcast", "source": "S"},
            "planners": ["lp", "flat"], **extra}}

    run_study(study_from_dict(study()), tmp_path / "own", workers=1)
    frame = load_results(tmp_path / "own")
    assert list(frame["horizon"]) == ["200", "300"]
    assert list(frame["measured_throughput_exact"]) == ["99/200", "149/300"]
    page = render_study_report(frame)
    assert ("1 run(s) measure their planners over different horizons (run 0: lp 200, "
            "flat 300)") in page
    run_study(study_from_dict(study(horizon=300)), tmp_path / "one", workers=1)
    frame = load_results(tmp_path / "one")
    assert list(frame["measured_throughput_exact"]) == ["149/300", "149/300"]
    assert "over different horizons" not in render_study_report(frame)


def test_replicates_that_are_the_same_run_are_warned_about() -> None:
    """The seed only draws random platforms: ``replicates: 3`` over complete
    platforms ran each grid point's one run three times, and means counted it
    three times (the sty trial).  A grid over the generator warns for the
    complete point only; random points draw another platform per seed."""
    base = {"operation": {"type": "reduce", "target": "P0"}, "planners": ["flat"]}
    grid = {"platform.generator": [{"type": "random", "n": 5, "degree": 2},
                                   {"type": "complete", "n": 5}]}
    with pytest.warns(UserWarning, match="the seed changes nothing") as caught:
        study = study_from_dict({"name": "same", "base": base, "grid": grid, "replicates": 3})
    assert len(study.runs) == 6
    (warning,) = [str(w.message) for w in caught]
    assert warning.startswith("<string>: replicates: 3, but the seed changes nothing in 1 of "
                              "2 grid point(s) (grid point 1 (platform.generator=")
    random_only = {"platform.generator": grid["platform.generator"][:1]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        study_from_dict({"name": "drawn", "base": base, "grid": random_only, "replicates": 3})
