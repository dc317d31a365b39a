"""Studies that fail loudly and stop cleanly (issue 12, item 7; issue 13, items 2 and 6).

Every grid point is checked before any run; the number of runs, integers
stored and the expanded size of the study file are bounded before anything
is expanded; one study owns a store at a time; a stop (SIGTERM, SIGINT)
ends the workers and keeps the finished runs; what workers warn is in the
rows' notes; Dask missing is one line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
import yaml
from click.testing import CliRunner

import portsim.scenarios.study.execute as execute_module
import portsim.scenarios.study.spec as spec_module
from portsim.reports.studies import load_results, run_study, study_from_dict
from portsim.scenarios.cli import _RateMeter, main
from portsim.scenarios.study.spec import DEFAULT_MAX_RUNS, MAX_DOCUMENT_VALUES, document_values
from portsim.scenarios.study.store import (
    ResultStore,
    StoreLock,
    grid_column_type,
    study_writer,
)
from portsim.simulator.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent


def flat_study(**extra: Any) -> dict[str, Any]:
    """A study of quick runs: flat broadcasts on a complete platform of n nodes."""
    return {
        "name": "quick",
        "base": {"platform": {"generator": {"type": "complete", "n": 3}},
                 "operation": {"type": "broadcast", "source": "P0"},
                 "planners": ["flat"]},
        "grid": {"platform.generator.n": [2, 3, 4]},
        **extra,
    }


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def one_error_line(output: str) -> str:
    """The single ``portsim: error:`` line of ``output`` (and nothing like a traceback)."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("portsim: error: "), output
    assert "Traceback" not in output
    return lines[0]


# -- every grid point checked before any run (issue 12, item 7) --------------------------


def test_a_planner_typo_in_base_is_bad_input_before_any_run(tmp_path: Path) -> None:
    data = flat_study()
    data["base"]["planners"] = ["flat", "lpp"]
    study_file = write(tmp_path / "typo.yaml", data)
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    line = one_error_line(result.output)
    assert line.startswith(f"portsim: error: {study_file}: grid point 0 "
                           f"(platform.generator.n=2): base.planners[1]: unknown planner")
    assert "(got 'lpp')" in line
    assert not (tmp_path / "o" / "results.parquet").exists()  # nothing ran


def test_a_grid_point_that_does_not_load_is_named(tmp_path: Path) -> None:
    data = flat_study()
    data["grid"]["platform.generator.n"] = [2, 3, 0]
    with pytest.raises(ScenarioError) as caught:
        study_from_dict(data, source="s.yaml")
    text = str(caught.value)
    assert text.startswith("s.yaml: grid point 2 (platform.generator.n=0): "
                           "base.platform.generator.n: ")
    assert text.endswith(" (got 0)")


def test_an_unknown_planner_option_is_named_with_its_grid_point() -> None:
    data = flat_study()
    data["grid"] = {"planners": [["flat"], [{"name": "greedy", "depth": 2}]]}
    data["base"]["operation"] = {"type": "reduce", "target": "P0"}
    with pytest.raises(ScenarioError, match=r"^s\.yaml: grid point 1 \(planners=\[\{'depth': "
                                            r"2, 'name': 'greedy'\}\]\): base\.planners\[0\]"
                                            r"\.depth: unknown option 'depth' for planner "
                                            r"'greedy'"):
        study_from_dict(data, source="s.yaml")


# -- numbers, sizes and counts bounded before anything is expanded (issue 13, item 2) ------


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30])
def test_an_integer_grid_value_outside_int64_is_bad_input(tmp_path: Path, value: int) -> None:
    data = flat_study()
    data["grid"] = {"operation.size": [1, value]}
    study_file = write(tmp_path / "big.yaml", data)
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert one_error_line(result.output) == (
        f"portsim: error: {study_file}: grid.operation.size[1]: an integer grid value must "
        f"fit in int64 (it is stored as one) (got {value})")


def test_int64_bounds_are_stored_exactly(tmp_path: Path) -> None:
    """The largest int64 grid value loads and its column stores it exactly."""
    data = flat_study()
    data["grid"] = {"seed_note": [2**63 - 1, -(2**63)]}  # an unknown key: checked later
    with pytest.raises(ScenarioError, match="seed_note: unknown key"):
        study_from_dict(data)  # passes the int64 check, stops at the grid point check
    store = ResultStore(tmp_path, {"grid.x": grid_column_type([2**63 - 1, -(2**63)])})
    store.append([{"run_key": "a", "grid.x": 2**63 - 1}, {"run_key": "b", "grid.x": -(2**63)}])
    frame = pd.read_parquet(tmp_path / "results.parquet")
    assert sorted(frame["grid.x"].tolist()) == [-(2**63), 2**63 - 1]


def test_a_large_integer_among_floats_is_stored_as_text(tmp_path: Path) -> None:
    """2^60 is no double: a grid of [2^60, 0.5] is a text column, not an Arrow error."""
    assert grid_column_type([2**60, 0.5]) == pa.string()
    assert grid_column_type([2**53, 0.5]) == pa.float64()
    store = ResultStore(tmp_path, {"grid.x": grid_column_type([2**60, 0.5])})
    store.append([{"run_key": "a", "grid.x": 2**60}, {"run_key": "b", "grid.x": 0.5}])
    frame = pd.read_parquet(tmp_path / "results.parquet")
    assert sorted(frame["grid.x"].tolist()) == ["0.5", str(2**60)]


@pytest.mark.parametrize(("extra", "where", "runs"), [
    ({"replicates": 100_000_000}, "replicates", 3 * 100_000_000),
    ({"grid": {f"operation.k{i}": list(range(40)) for i in range(6)}}, "grid", 40**6),
])
def test_the_number_of_runs_is_capped_before_expansion(
        monkeypatch: pytest.MonkeyPatch, extra: dict[str, Any], where: str, runs: int) -> None:
    def never(*args: object, **kwargs: object) -> str:
        raise AssertionError("a run was expanded")

    monkeypatch.setattr(spec_module, "run_key", never)
    with pytest.raises(ScenarioError) as caught:
        study_from_dict(flat_study(**extra), source="s.yaml")
    text = str(caught.value)
    assert text.startswith(f"s.yaml: {where}: the study has {runs} runs")
    assert f"more than the cap of {DEFAULT_MAX_RUNS}; raise it with --max-runs" in text


def test_max_runs_raises_the_cap(tmp_path: Path) -> None:
    data = flat_study(replicates=2)  # 3 grid points x 2 seeds
    with pytest.raises(ScenarioError, match=r"has 6 runs .* cap of 5"):
        study_from_dict(data, max_runs=5)
    assert len(study_from_dict(data, max_runs=6).runs) == 6
    study_file = write(tmp_path / "s.yaml", data)
    runner = CliRunner()
    refused = runner.invoke(main, ["study", str(study_file), "--out", str(tmp_path / "a"),
                                   "--max-runs", "5"])
    assert refused.exit_code == 2
    assert "cap of 5" in one_error_line(refused.output)
    accepted = runner.invoke(main, ["study", str(study_file), "--out", str(tmp_path / "b"),
                                    "--max-runs", "6", "--workers", "1"])
    assert accepted.exit_code == 0, accepted.output
    assert len(load_results(tmp_path / "b")) == 6


def test_document_values_counts_shared_parts_without_expanding_them() -> None:
    # A billion-laughs structure: 10 levels of 10 references to the level below.
    bomb: Any = "lol"
    expanded = 1
    for _ in range(10):
        bomb = [bomb] * 10
        expanded = 1 + 10 * expanded
    assert document_values(bomb, limit=10**12) == expanded  # 1,111,111,111 values
    assert document_values(bomb, limit=1000) == 1001
    assert document_values({"a": [1, 2], "b": {"c": [3]}}, limit=100) == 7  # independent count
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(ScenarioError, match="contains itself"):
        document_values({"a": loop}, limit=100, path="base")


def test_an_alias_bomb_in_a_study_file_is_bad_input(tmp_path: Path) -> None:
    """A 600-byte billion-laughs file: exit 2, one line, without expanding it.

    (The YAML reader of scenarios/loader.py bounds alias expansion too; this
    test holds with or without that bound: the study checks the size of what
    it would hash and store in every run.)
    """
    levels = "\n".join(f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9))
    text = (f"name: bomb\nbase:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            f"{levels}\n  platform: {{generator: {{type: complete, n: 3}}}}\n"
            f"  operation: {{type: broadcast, source: P0}}\n  planners: [flat]\n")
    assert len(text) < 800
    study_file = tmp_path / "bomb.yaml"
    study_file.write_text(text)
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    line = one_error_line(result.output)
    assert line.startswith(f"portsim: error: {study_file}: ")
    assert str(MAX_DOCUMENT_VALUES) in line or "alias" in line


# -- one study per store (issue 13, item 6) -------------------------------------------------


def test_a_second_study_on_a_held_store_names_the_holder(tmp_path: Path) -> None:
    study_file = write(tmp_path / "s.yaml", flat_study())
    with StoreLock(tmp_path / "o"):
        pid, start = (tmp_path / "o" / ".lock").read_text().split()
        assert pid == str(os.getpid())
        assert start == _proc_start(os.getpid())
        with pytest.raises(ScenarioError, match=rf"another study \(process {os.getpid()}\)"):
            run_study(study_from_dict(flat_study()), tmp_path / "o", resume=True)
        result = CliRunner().invoke(main, ["study", str(study_file), "--out",
                                           str(tmp_path / "o"), "--resume"])
        assert result.exit_code == 2
        assert f"another study (process {os.getpid()})" in one_error_line(result.output)
    outcome = run_study(study_from_dict(flat_study()), tmp_path / "o", workers=1)
    assert outcome.computed == 3  # the lock went with its holder


def _proc_start(pid: int) -> str:
    """Field 22 of ``/proc/PID/stat`` (the start time), read as proc(5) describes it."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split(" ")[22 - 3]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_stale_lock_whose_process_id_was_reused_is_not_a_study(tmp_path: Path) -> None:
    """A study killed leaves its id in ``.lock``; once an unrelated process has that id,
    `report DIR` warned that a study (that process) was still writing, forever."""
    out = tmp_path / "o"
    run_study(study_from_dict(flat_study()), out, workers=1)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        started = _proc_start(other.pid)
        lock = out / ".lock"
        # a study of that id that started one tick before this process: not this one
        lock.write_text(f"{other.pid} {int(started) - 1}\n")
        assert study_writer(out) is None  # before: other.pid
        report = CliRunner().invoke(main, ["report", str(out)])
        assert report.exit_code == 0, report.output
        assert report.stderr == ""  # before: "a study (process N) is still writing ..."
        lock.write_text(f"{other.pid} {started}\n")  # the very process: a study writing
        assert study_writer(out) == other.pid
        lock.write_text(f"{other.pid}\n")  # a lock of 0.2.0, the id alone: as before
        assert study_writer(out) == other.pid
    finally:
        other.kill()
        other.wait()
    assert study_writer(out) is None  # gone


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (field 4 of ``/proc/PID/stat``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2:].split(" ")[4 - 3]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_killed_study_leaves_neither_its_lock_nor_its_workers(tmp_path: Path) -> None:
    """`kill -9` of a study: its pool workers, forked with the descriptor of the
    folder's lock, kept the lock (a new study on the folder was refused, naming the
    dead process) and ran on, blocked, until killed by hand."""
    import fcntl

    study_file = write(tmp_path / "s.yaml", flat_study(replicates=2000))
    out = tmp_path / "o"
    study = subprocess.Popen([sys.executable, "-m", "portsim", "study", str(study_file),
                              "--out", str(out), "--workers", "2", "--batch-size", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not list((out / "results.parquet").glob("part-*")):
            assert time.monotonic() < deadline, "the study stored nothing in 60 s"
            time.sleep(0.1)
        workers = _children(study.pid)
        assert len(workers) >= 2  # the pool's two workers, at least
        study.kill()
        study.wait()
        deadline = time.monotonic() + 15
        while [w for w in workers if Path(f"/proc/{w}").exists()]:
            assert time.monotonic() < deadline, "a worker outlived its study by 15 s"
            time.sleep(0.2)
        with open(out / ".lock", "rb") as lock:  # before: BlockingIOError, held by them
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert study_writer(out) is None
    finally:
        study.kill()
        study.wait()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_forked_child_does_not_keep_the_lock_of_a_killed_study(tmp_path: Path) -> None:
    """A process forked while a study holds its folder (a pool worker, a Dask nanny)
    shared the lock file's open file, hence the lock: the study killed, the folder
    stayed locked as long as the child lived."""
    import fcntl

    holder = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time\n"
         "from portsim.scenarios.study.store import StoreLock\n"
         "StoreLock(sys.argv[1]).__enter__()\n"
         "child = os.fork()\n"
         "if child == 0:\n    os.write(1, b'ready\\n')\n    time.sleep(60)\n"
         "    os._exit(0)\n"
         "os.write(1, b'%d\\n' % child)\ntime.sleep(60)", str(tmp_path / "o")],
        stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert holder.stdout is not None
        # the child's line comes after its fork handlers ran (a loaded machine may
        # run the parent's line, and the kill below, first); one write() each, so
        # the two lines never interleave
        lines = {holder.stdout.readline().strip(), holder.stdout.readline().strip()}
        assert "ready" in lines
        child = int(next(line for line in lines if line != "ready"))
        holder.kill()
        holder.wait()
        assert Path(f"/proc/{child}").exists()  # the child lives on
        with open(tmp_path / "o" / ".lock", "rb") as lock:  # before: BlockingIOError
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        holder.kill()
        holder.wait()
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


def test_concurrent_studies_on_one_store_store_each_run_once(tmp_path: Path) -> None:
    """The reproducer of issue 13: two studies at once on one folder (here two threads)."""
    study = study_from_dict(flat_study(replicates=4))
    outcomes: list[object] = []

    def one() -> None:
        try:
            outcomes.append(run_study(study, tmp_path, workers=1, resume=True))
        except ScenarioError as err:
            outcomes.append(err)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw = pd.concat(pd.read_parquet(p) for p in (tmp_path / "results.parquet").glob("part-*"))
    assert len(raw) == 12  # 3 grid points x 4 seeds x 1 planner, never twice
    refused = [o for o in outcomes if isinstance(o, ScenarioError)]
    assert all("another study" in str(err) for err in refused)


def test_start_up_removes_only_the_temporary_parts_of_dead_writers(tmp_path: Path) -> None:
    store = tmp_path / "results.parquet"
    store.mkdir()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    try:
        in_flight = store / f".part-1-a.parquet.{live.pid}.tmp"
        leftover = store / f".part-1-b.parquet.{dead.pid}.tmp"
        unnamed = store / ".part-1-c.parquet.tmp"
        for path in (in_flight, leftover, unnamed):
            path.write_bytes(b"partial")
        run_study(study_from_dict(flat_study()), tmp_path, workers=1, resume=True)
        assert in_flight.exists()  # a live writer's part is left alone
        assert unnamed.exists()  # and so is a part whose writer is unknown
        assert not leftover.exists()
        assert len(load_results(tmp_path)) == 3
    finally:
        live.kill()
        live.wait()


# -- stopping cleanly ----------------------------------------------------------------------


def test_a_stop_ends_the_workers_and_keeps_the_finished_runs(tmp_path: Path) -> None:
    study = study_from_dict(flat_study(replicates=200))  # 600 runs
    stop = threading.Event()
    seen: list[int] = []

    def progress(done: int, failed: int, total: int) -> None:
        seen.append(done)
        if done >= 5:
            stop.set()

    outcome = run_study(study, tmp_path, workers=2, batch_size=1000, progress=progress,
                        stop=stop)
    assert outcome.interrupted
    assert 5 <= outcome.computed < 600
    assert not multiprocessing.active_children()  # no worker left behind
    stored = load_results(tmp_path)
    assert stored["run_key"].nunique() == outcome.computed  # every finished run kept
    resumed = run_study(study, tmp_path, workers=2, resume=True)
    assert (resumed.skipped, resumed.computed, resumed.interrupted) == (
        outcome.computed, 600 - outcome.computed, False)
    raw = pd.concat(pd.read_parquet(p) for p in (tmp_path / "results.parquet").glob("part-*"))
    assert len(raw) == 600


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_study_without_orphans(tmp_path: Path, signum: int,
                                                  status: int) -> None:
    data = flat_study(replicates=300)
    data["base"]["planners"] = ["flat", "greedy"]
    data["base"]["operation"] = {"type": "reduce", "target": "P0"}
    data["grid"]["platform.generator.n"] = [6, 7, 8]
    study_file = write(tmp_path / "s.yaml", data)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "portsim.scenarios.cli", "study", str(study_file), "--out",
               str(out), "--workers", "2", "--batch-size", "1"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    store = out / "results.parquet"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if store.is_dir() and len(list(store.glob("part-*.parquet"))) >= 3:
            break
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()
    os.kill(process.pid, signum)
    _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == status, stderr
    assert f"stopped by {signal.Signals(signum).name}" in stderr
    assert "Traceback" not in stderr
    deadline = time.monotonic() + 10
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group_alive(process.pid)  # no worker left running
    stored = load_results(out)["run_key"].nunique()
    assert 0 < stored < 900
    assert f"{stored} of 900 run(s) stored" in stderr


# -- failures and warnings summarised, nothing written over the bar -------------------------


def test_the_cli_ends_with_a_summary_of_failed_runs(tmp_path: Path) -> None:
    data = flat_study()
    data["base"]["operation"] = {"type": "reduce", "target": "P0"}
    data["base"]["planners"] = ["flat", {"name": "greedy", "reducers": 0}]
    study_file = write(tmp_path / "s.yaml", data)
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                       "--workers", "1"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    at = lines.index("3 run(s) failed or invalid; the first:")
    assert lines[at + 1].startswith("  run 0 (platform.generator.n=2, seed 0): "
                                    "greedy (reducers: 0): PlannerError: ")
    assert "reducers" in lines[at + 1]
    assert len([line for line in lines[at + 1:] if line.startswith("  run ")]) == 3


def _warning_planner(original: Any) -> Any:
    def run_planner(scenario: Any, spec: Any, **kwargs: Any) -> Any:
        warnings.warn("solver says hello\nsecond line", UserWarning, stacklevel=1)
        return original(scenario, spec, **kwargs)
    return run_planner


def test_worker_warnings_go_to_the_rows_notes_and_the_summary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Local workers are forked: they run the patched function.
    monkeypatch.setattr(execute_module, "run_planner",
                        _warning_planner(execute_module.run_planner))
    outcome = run_study(study_from_dict(flat_study()), tmp_path, workers=2)
    captured = capfd.readouterr()
    assert "solver says hello" not in captured.err + captured.out  # nothing printed
    assert outcome.warned == 3
    assert outcome.warnings == ("warning: UserWarning: solver says hello",)
    frame = load_results(tmp_path)
    for notes in frame["notes"]:
        assert "warning: UserWarning: solver says hello" in json.loads(notes)
    assert (frame["status"] == "ok").all()


def test_summary_lines_are_those_of_the_lowest_runs_whatever_order_workers_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs n = 2..9 (run indexes 0..7) each warn a line of their own and fail (greedy
    # without reducers); the results arrive last run first, as workers finishing out
    # of order may deliver them.  Both summaries keep 5 lines: runs 0..4, in order.
    def warning_planner(scenario: Any, spec: Any, **kwargs: Any) -> Any:
        warnings.warn(f"hello from n={len(scenario.platform.nodes)}", UserWarning,
                      stacklevel=1)
        return original(scenario, spec, **kwargs)

    def last_first(runs: Any, study: str, workers: Any, stop: Any) -> Any:
        rows, _ = execute_module.execute_runs(runs, study)
        yield from reversed(list(zip(runs, rows, strict=True)))

    original = execute_module.run_planner
    monkeypatch.setattr(execute_module, "run_planner", warning_planner)
    monkeypatch.setattr(execute_module, "_local_results", last_first)
    data = flat_study(grid={"platform.generator.n": list(range(2, 10))})
    data["base"]["operation"] = {"type": "reduce", "target": "P0"}
    data["base"]["planners"] = ["flat", {"name": "greedy", "reducers": 0}]
    outcome = run_study(study_from_dict(data), tmp_path, workers=1)
    assert outcome.warned == 8
    assert outcome.warnings == tuple(f"warning: UserWarning: hello from n={n}"
                                     for n in range(2, 7))
    assert [line.split(":")[0] for line in outcome.failures] == [
        f"run {i} (platform.generator.n={i + 2}, seed 0)" for i in range(5)]


def test_cli_prints_the_warnings_summary(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_module, "run_planner",
                        _warning_planner(execute_module.run_planner))
    study_file = write(tmp_path / "s.yaml", flat_study())
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                       "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert ("3 run(s) with warnings (in the rows' notes); the first:\n"
            "  warning: UserWarning: solver says hello\n") in result.output


# -- Dask ------------------------------------------------------------------------------------


def test_dask_missing_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    study_file = write(tmp_path / "s.yaml", flat_study())
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o"),
                                       "--executor", "dask"])
    assert result.exit_code == 2
    assert one_error_line(result.output) == (
        "portsim: error: --executor: Dask is not installed; install it with "
        "pip install 'portsim[dask]' (got 'dask')")


def test_an_error_after_the_bar_started_is_the_last_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. --scheduler tcp://HOST:PORT that never answers: the bar has drawn
    # 0/3, then the error; the bar's last frame used to follow the error line.
    def failing(*args: Any, progress: Any, **kwargs: Any) -> None:
        progress(0, 0, 3)
        raise ScenarioError("Timed out trying to connect to tcp://127.0.0.1:1 after 30 s")

    monkeypatch.setattr("portsim.scenarios.study.run_study", failing)
    # the bar is drawn on a terminal only (elsewhere progress lines): rich takes
    # FORCE_COLOR as one
    monkeypatch.setenv("FORCE_COLOR", "1")
    study_file = write(tmp_path / "s.yaml", flat_study())
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.output)  # a terminal's escapes
    lines = [line for line in plain.splitlines() if line.strip()]
    assert "0/3" in lines[0]
    assert lines[-1] == ("portsim: error: Timed out trying to connect to tcp://127.0.0.1:1 "
                         "after 30 s")


def test_batches_grow_to_the_measured_run_time(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """After the first batches (one run each), a batch holds about BATCH_SECONDS of work."""
    sizes: list[int] = []
    original = execute_module.execute_runs

    def timed(runs: Any, study: str) -> Any:
        sizes.append(len(runs))
        rows, _ = original(runs, study)
        return rows, 0.01 * len(runs)  # as if each run took 10 ms

    monkeypatch.setattr(execute_module, "execute_runs", timed)
    monkeypatch.setattr(execute_module, "ProcessPoolExecutor",
                        _InlineExecutor)  # batches observable in this process
    study = study_from_dict(flat_study(replicates=100))
    outcome = run_study(study, tmp_path, workers=2)
    assert outcome.computed == 300
    assert sizes[0] == 1
    expected = min(execute_module.MAX_BATCH_RUNS,
                   round(execute_module.BATCH_SECONDS / 0.01))  # runs of 10 ms
    assert max(sizes) == expected
    assert sum(sizes) == 300


class _InlineExecutor:
    """A ProcessPoolExecutor stand-in that runs each task when submitted."""

    def __init__(self, max_workers: int, initializer: Any = None) -> None:
        self.max_workers = max_workers

    def submit(self, fn: Any, *args: Any) -> Any:
        from concurrent.futures import Future

        future: Future[Any] = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


# -- the smoothed rate -----------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_meter_is_a_moving_average_that_bursts_barely_move() -> None:
    clock = _Clock()
    meter = _RateMeter(clock)
    assert meter.rate() is None
    assert meter.left(10) is None
    # 10 runs/s, in bursts of 20 runs every 2 s (batches finishing together), for 60 s.
    for step in range(1, 31):
        clock.now = 2.0 * step
        meter.add(20 * step)
        after = meter.rate()
        clock.now += 1.9  # just before the next burst
        before_next = meter.rate()
        assert after is not None
        assert before_next is not None
        if clock.now >= meter.WINDOW:  # a full window: 300 runs in the last 30 s
            assert after == pytest.approx(10.0)
            assert before_next == pytest.approx(10.0)
        else:  # the first window: runs since the start over the time since the start
            assert after == pytest.approx(20 * step / (2.0 * step))
            assert before_next == pytest.approx(20 * step / clock.now)
            assert 5.0 < before_next <= 10.0
    assert meter.left(600) == pytest.approx(60.0)


def test_rate_meter_ignores_nothing_done_and_counts_from_its_start() -> None:
    clock = _Clock()
    clock.now = 100.0
    meter = _RateMeter(clock)
    clock.now = 104.0
    meter.add(0)
    assert meter.rate() is None
    meter.add(8)
    assert meter.rate() == pytest.approx(2.0)  # 8 runs in the 4 s since the start
    assert meter.left(4) == pytest.approx(2.0)


def test_dataclass_outcome_fields_default() -> None:
    """An outcome built by older callers (six fields) reads as not interrupted."""
    outcome = execute_module.StudyOutcome(1, 0, 1, 0, 0, 1.0)
    assert dataclasses.astuple(outcome)[6:] == (False, (), 0, (), 0, 0)


_HALF_WRITTEN = '''
import os, struct, sys, threading, time
import portsim.scenarios.study.execute as ex
from portsim.scenarios.study.spec import study_from_dict

POOLS = []
class Remembered(ex.ProcessPoolExecutor):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        POOLS.append(self)

def half_written(batch, study):
    # what a worker ended in the middle of writing its result leaves: a length
    # header and part of the message, in the pool's result pipe
    writer = POOLS[0]._result_queue._writer
    os.write(writer.fileno(), struct.pack("!i", 1000) + b"abc")
    time.sleep(60)

ex.ProcessPoolExecutor = Remembered
ex.execute_runs = half_written
study = study_from_dict({STUDY!r})
runs = list(study.runs)
stop = threading.Event()
threading.Timer(1.0, stop.set).start()
assert list(ex._local_results(runs, study.name, 1, stop)) == []
print("stopped", flush=True)
'''


def test_a_stop_with_a_half_written_result_still_exits(tmp_path: Path) -> None:
    """A worker ended while it wrote its result left part of a message in the pool's
    pipe: the pool's manager thread waited for the rest forever, and Python's exit
    joined it (a CI run hung so after its last test).  The stop closes the parent's
    end of that pipe: the process ends, well within the timeout."""
    script = tmp_path / "half_written.py"
    script.write_text(_HALF_WRITTEN.replace("{STUDY!r}", repr(flat_study(replicates=3))))
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "stopped\n"
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(("where", "path"), [("base", "base.seed"), ("grid", "grid.seed")])
def test_a_seed_in_base_or_grid_is_bad_input(tmp_path: Path, where: str, path: str) -> None:
    """Each run's seed is its replicate number: a ``seed`` in ``base`` or a grid over
    ``seed`` was silently replaced by 0 .. replicates-1, so a grid over three seeds
    ran one platform (seed 0) once, stored as ``grid.seed`` = 100."""
    data = flat_study()
    data["base"]["platform"]["generator"] = {"type": "random", "n": 6, "degree": 3,
                                             "c": [1, 10], "compute": [1, 5]}
    data["grid"] = {"seed": [100, 200, 300]} if where == "grid" else {}
    if where == "base":
        data["base"]["seed"] = 42
    study_file = write(tmp_path / "seeds.yaml", data)
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert one_error_line(result.output).startswith(
        f"portsim: error: {study_file}: {path}: a study sets each run's seed")
    assert not (tmp_path / "o" / "results.parquet").exists()


@pytest.mark.parametrize(("grid", "first", "second"), [
    ({"platform.generator.n": [3, 3]},  # a value listed twice
     "platform.generator.n=3", "platform.generator.n=3"),
    # n refines each generator: both points are complete graphs of 5 nodes
    ({"platform.generator": [{"type": "complete", "n": 3}, {"type": "complete", "n": 4}],
      "platform.generator.n": [5]},
     "platform.generator={'n': 3, 'type': 'complete'}, platform.generator.n=5",
     "platform.generator={'n': 4, 'type': 'complete'}, platform.generator.n=5"),
])
def test_two_grid_points_making_one_scenario_are_bad_input(
        tmp_path: Path, grid: dict[str, list[Any]], first: str, second: str) -> None:
    """Two grid points whose runs are the same scenario were stored once, under the
    first point's grid values: the second point vanished from the store (the study
    said 1 run(s) for 2 points) and its values appeared in no row."""
    study_file = tmp_path / "dup.yaml"  # the grid keys in this order, not sorted
    study_file.write_text(yaml.safe_dump(flat_study(grid=grid), sort_keys=False))
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert one_error_line(result.output) == (
        f"portsim: error: {study_file}: grid: grid point 1 ({second}) makes "
        f"the same scenario as grid point 0 ({first}); each would be stored as the other")
    assert not (tmp_path / "o" / "results.parquet").exists()


def test_a_grid_key_replaced_by_a_later_one_is_bad_input(tmp_path: Path) -> None:
    """``platform.generator.n: [4]`` listed before ``platform.generator``: each point's
    whole generator replaced the n, and every row said n = 4 for complete graphs
    of 3 and 5 nodes (no two points alike, so nothing else caught it)."""
    grid = {"platform.generator.n": [4],
            "platform.generator": [{"type": "complete", "n": 3},
                                   {"type": "complete", "n": 5, "c": 2}]}
    study_file = tmp_path / "over.yaml"  # the grid keys in this order, not sorted
    study_file.write_text(yaml.safe_dump(flat_study(grid=grid), sort_keys=False))
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert one_error_line(result.output) == (
        f"portsim: error: {study_file}: grid.platform.generator: replaces the value of "
        f"grid.platform.generator.n, listed before it; list platform.generator first")
    # listed the other way round, n refines each generator: 4 nodes, the source
    # sends to 3 others one at a time, each send lasting c: makespans 3 * 1 and 3 * 2
    study_file.write_text(yaml.safe_dump(flat_study(grid=dict(reversed(grid.items()))),
                                         sort_keys=False))
    result = CliRunner().invoke(main, ["study", str(study_file), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    frame = load_results(tmp_path / "o")
    assert frame["makespan"].tolist() == ["3", "6"]


_ORPHAN_WORKER = """
import multiprocessing, os, sys, time
from portsim.scenarios.study import execute

def work():
    null = os.open(os.devnull, os.O_WRONLY)  # not the pipe the test reads to its end
    os.dup2(null, 1)
    os.dup2(null, 2)
    study = multiprocessing.parent_process().pid
    while os.getppid() == study:  # set up only once the study is gone
        time.sleep(0.01)
    execute._worker_setup()
    time.sleep(60)

if __name__ == "__main__":
    worker = multiprocessing.get_context("fork").Process(target=work)
    worker.start()
    print(worker.pid, flush=True)
    os._exit(0)  # the study ends at once, as under kill -9
"""


def _alive(pid: int) -> bool:
    try:  # a zombie (nobody reaps it here) has ended
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_worker_set_up_after_its_study_died_ends(tmp_path: Path) -> None:
    """A worker forked just before its study is killed, and set up after: it watched
    ``os.getppid()`` at set-up, already init's (or a subreaper's) id, which never
    changes, and ran on forever.  It watches the study's own id now
    (:func:`multiprocessing.parent_process`), and ends within a second."""
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN_WORKER, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, check=True)
    pid = int(done.stdout)
    try:
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
