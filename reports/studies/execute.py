"""Run a study: every run on a local process pool or a Dask cluster, stored as it ends.

:func:`execute_run` is the unit of work (a plain, picklable function of one
:class:`~reports.studies.spec.StudyRun`); it never raises: a scenario that
does not load, a planner that crashes, are rows with ``status: error`` and the
error in ``message``.  :func:`run_study` skips the runs already in the store
(``resume``), computes each distinct run key once, and appends finished runs
to the store in batches (see :mod:`reports.studies.store`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from reports.studies.model import model_results
from reports.studies.spec import GRID_PREFIX, Study, StudyRun
from reports.studies.store import ResultStore, grid_column_type
from scenarios.loader import PlannerSpec, scenario_from_dict
from scenarios.runner import run_planner
from simulator.errors import ScenarioError
from simulator.numbers import format_rational, parse_rational

__all__ = ["Executor", "StudyOutcome", "execute_run", "run_study"]

Executor = Literal["local", "dask"]

ProgressCallback = Callable[[int, int, int], None]
"""Called as ``progress(done, failed, total)`` after each finished run."""

_FLUSH_SECONDS = 2.0


@dataclass(frozen=True)
class StudyOutcome:
    """What :func:`run_study` did.

    Attributes
    ----------
    total:
        Distinct runs of the study.
    skipped:
        Runs already in the store (resumed), not recomputed.
    computed:
        Runs computed now.
    failed:
        Computed runs with at least one ``error`` row.
    invalid:
        Computed runs with a schedule the engine rejected.
    elapsed:
        Wall-clock seconds.
    """

    total: int
    skipped: int
    computed: int
    failed: int
    invalid: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Computed runs per second."""
        return self.computed / self.elapsed if self.elapsed > 0 else 0.0


def _planner_names(document: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Best-effort planner list of a document that may not load."""
    entries = document.get("planners")
    named: list[tuple[str, dict[str, Any]]] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str):
            named.append((entry, {}))
        elif isinstance(entry, dict):
            options = {k: v for k, v in entry.items() if k != "name"}
            named.append((str(entry.get("name", "")), options))
    return named or [("", {})]


def _base_row(run: StudyRun, study: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "study": study,
        "run_key": run.key,
        "run_index": run.index,
        "seed": run.seed,
        "scenario": str(run.scenario.get("name", study)),
        "scenario_document": json.dumps(run.scenario, sort_keys=True, default=str),
    }
    for key, value in run.grid.items():
        row[GRID_PREFIX + key] = value
    return row


def _error_row(base: Mapping[str, Any], index: int, name: str, options: Mapping[str, Any],
               err: BaseException, elapsed: float) -> dict[str, Any]:
    message = str(err).replace("\n", " ") or type(err).__name__
    return {**base, "planner_index": index, "planner": name,
            "planner_options": json.dumps(dict(options), sort_keys=True, default=str),
            "status": "error", "message": f"{type(err).__name__}: {message}",
            "violations": "[]", "notes": "[]", "violation_count": 0, "elapsed": elapsed}


def execute_run(run: StudyRun, study: str) -> list[dict[str, Any]]:
    """Load and run one study run; one row per planner, never an exception.

    Parameters
    ----------
    run:
        The run (its scenario document, seed, grid values).
    study:
        The study name, copied into every row.

    Returns
    -------
    list of dict
        Rows in the columns of :data:`reports.studies.store.RESULT_COLUMNS`
        plus the run's grid columns.
    """
    base = _base_row(run, study)
    if run.evaluation == "model":
        return _model_rows(base, run, study)
    started = time.perf_counter()
    try:
        scenario = scenario_from_dict(dict(run.scenario), source=f"{study}[run {run.index}]")
    except Exception as err:  # a run that fails is a row, never the end of the study
        elapsed = time.perf_counter() - started
        return [_error_row(base, i, name, options, err, elapsed)
                for i, (name, options) in enumerate(_planner_names(run.scenario))]
    rows: list[dict[str, Any]] = []
    for index, spec in enumerate(scenario.planners):
        started = time.perf_counter()
        try:
            result = run_planner(scenario, spec).to_dict()
        except Exception as err:  # idem: one planner's crash is its row
            rows.append(_error_row(base, index, spec.name, spec.options, err,
                                   time.perf_counter() - started))
            continue
        rows.append(_result_row(base, index, spec, result, time.perf_counter() - started))
    _add_efficiency(rows)
    return rows


def _model_rows(base: Mapping[str, Any], run: StudyRun, study: str) -> list[dict[str, Any]]:
    """The rows of a run evaluated on the Canon–Antoniu model (no platform, no replay)."""
    started = time.perf_counter()
    try:
        results = model_results(run.scenario, source=f"{study}[run {run.index}]")
    except Exception as err:  # a run that fails is a row
        elapsed = time.perf_counter() - started
        return [_error_row(base, i, name, options, err, elapsed)
                for i, (name, options) in enumerate(_planner_names(run.scenario))]
    elapsed = (time.perf_counter() - started) / max(len(results), 1)
    options = _planner_names(run.scenario)
    return [_result_row(base, index, PlannerSpec(*options[index]), result, elapsed)
            for index, result in enumerate(results)]


def _result_row(base: Mapping[str, Any], index: int, spec: PlannerSpec,
                result: Mapping[str, Any], elapsed: float) -> dict[str, Any]:
    row = {**base, **result, "planner_index": index,
           "planner_options": json.dumps(dict(spec.options), sort_keys=True, default=str),
           "elapsed": elapsed}
    row["violation_count"] = len(result["violations"])
    row["violations"] = json.dumps(result["violations"], default=str)
    row["notes"] = json.dumps(result.get("notes", []))
    return row


def _add_efficiency(rows: list[dict[str, Any]]) -> None:
    """Set ``reference_bound`` (lp's bound, else the largest) and ``efficiency``."""
    # An lp entry restricted to a tree or a DAG (option restrict) bounds only
    # that sub-platform: never a reference for the others.
    bounds = [(r["planner"], parse_rational(r["throughput_bound"])) for r in rows
              if r.get("throughput_bound") and json.loads(r.get("planner_options") or "{}")
              .get("restrict", "graph") == "graph"]
    lp = [b for name, b in bounds if name == "lp"]
    reference: Fraction | None = lp[0] if lp else max((b for _, b in bounds), default=None)
    for row in rows:
        if reference is None or reference <= 0:
            continue
        row["reference_bound"] = format_rational(reference)
        measured = row.get("measured_throughput")
        if measured is not None:
            row["efficiency"] = float(measured) / float(reference)


def run_study(
    study: Study,
    out: str | os.PathLike[str],
    *,
    executor: Executor = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    batch_size: int = 50,
    progress: ProgressCallback | None = None,
) -> StudyOutcome:
    """Run every run of ``study`` not yet stored in ``out`` and store its rows.

    Parameters
    ----------
    study:
        From :func:`~reports.studies.spec.load_study`.
    out:
        The output folder; rows go to ``out/results.parquet/``.
    executor:
        ``"local"``: a process pool of ``workers`` processes (default: the
        CPU count).  ``"dask"``: ``dask.distributed``, on a ``LocalCluster``
        of ``workers`` single-threaded worker processes (default 2), or on
        the existing cluster at ``scheduler``.
    workers, scheduler:
        See ``executor``.  ``scheduler`` only with ``"dask"``.
    resume:
        Continue a study whose store already holds rows, skipping the stored
        runs.  Without it, a non-empty store is an error.
    batch_size:
        Finished runs are written once this many are pending, or every two
        seconds, and at the end (also when interrupted).
    progress:
        ``progress(done, failed, total)`` after each finished run (``done``
        counts skipped runs too).

    Returns
    -------
    StudyOutcome

    Raises
    ------
    ScenarioError
        The store holds rows and ``resume`` is false; a bad executor option.
    """
    if executor not in ("local", "dask"):
        raise ScenarioError("unknown executor (expected local or dask)", path="--executor",
                            value=executor)
    if scheduler is not None and executor != "dask":
        raise ScenarioError("--scheduler needs --executor dask", path="--scheduler",
                            value=scheduler)
    if workers is not None and workers < 1:
        raise ScenarioError("must be >= 1", path="--workers", value=workers)
    started = time.perf_counter()
    grid_types = {GRID_PREFIX + key: grid_column_type([r.grid[key] for r in study.runs])
                  for key in study.grid_keys}
    store = ResultStore(out, grid_types)
    store.discard_temporary()
    done = store.done_keys()
    if done and not resume:
        raise ScenarioError("the result store already holds runs; pass --resume to "
                            "continue it, or choose another --out",
                            source=str(store.path))
    distinct: dict[str, StudyRun] = {}
    for run in study.runs:
        distinct.setdefault(run.key, run)
    pending = [run for key, run in distinct.items() if key not in done]
    skipped = len(distinct) - len(pending)
    finished = failed = invalid = 0
    batch: list[dict[str, Any]] = []
    last_flush = time.monotonic()
    if progress is not None:
        progress(skipped, 0, len(distinct))
    results = (_local_results(pending, study.name, workers) if executor == "local"
               else _dask_results(pending, study.name, workers, scheduler))
    try:
        for rows in results:
            finished += 1
            failed += any(r.get("status") == "error" for r in rows)
            invalid += any(r.get("status") == "ok" and r.get("feasible") is False
                           for r in rows)
            batch.extend(rows)
            if progress is not None:
                progress(skipped + finished, failed, len(distinct))
            if finished % batch_size == 0 or time.monotonic() - last_flush > _FLUSH_SECONDS:
                store.append(batch)
                batch, last_flush = [], time.monotonic()
    finally:
        store.append(batch)
        if hasattr(results, "close"):
            results.close()
    return StudyOutcome(len(distinct), skipped, finished, failed, invalid,
                        time.perf_counter() - started)


def _local_results(runs: Sequence[StudyRun], study: str,
                   workers: int | None) -> Iterator[list[dict[str, Any]]]:
    """Rows of each run as it finishes, on a local process pool."""
    if not runs:
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(execute_run, run, study): run for run in runs}
        try:
            for future in as_completed(futures):
                yield _collected(future.result, futures[future], study)
        finally:
            for future in futures:
                future.cancel()


def _dask_results(runs: Sequence[StudyRun], study: str, workers: int | None,
                  scheduler: str | None) -> Iterator[list[dict[str, Any]]]:
    """Rows of each run as it finishes, on Dask distributed."""
    if not runs:
        return
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = client.map(execute_run, list(runs), study=study, pure=False)
        by_key = {f.key: run for f, run in zip(futures, runs, strict=True)}
        for future in dask_completed(futures):
            yield _collected(future.result, by_key[future.key], study)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _collected(result: Callable[[], list[dict[str, Any]]], run: StudyRun,
               study: str) -> list[dict[str, Any]]:
    """The rows of a finished future; a worker that died is an error row per planner."""
    try:
        return result()
    except Exception as err:
        base = _base_row(run, study)
        return [_error_row(base, i, name, options, err, 0.0)
                for i, (name, options) in enumerate(_planner_names(run.scenario))]

