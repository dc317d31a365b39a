"""Run a study: every run on a local process pool or a Dask cluster, stored as it ends.

:func:`execute_run` is the unit of work (a plain, picklable function of one
:class:`~portsim.scenarios.study.spec.StudyRun`); it never raises: a scenario that
does not load, a planner that crashes, are rows with ``status: error`` and the
error in ``message``.  :func:`run_study` skips the runs already in the store
(``resume``), computes each distinct run key once, and appends finished runs
to the store in batches (see :mod:`portsim.scenarios.study.store`).

Runs travel to the workers in batches sized from the measured CPU time per
run (about :data:`BATCH_SECONDS` of work each, at most :data:`MAX_BATCH_RUNS`
runs), on either executor: the per-task overhead of Dask then stays a small
fraction of a 15 ms run.  A ``stop`` event ends a study cleanly: nothing
new is submitted, the workers are ended, finished runs are stored.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from portsim.scenarios.loader import PlannerSpec
from portsim.scenarios.runner import planner_label, run_planner
from portsim.scenarios.study.model import model_results
from portsim.scenarios.study.spec import GRID_PREFIX, Study, StudyRun, grid_point_label
from portsim.scenarios.study.store import (
    ResultStore,
    StoredRun,
    StoreLock,
    grid_column_type,
    study_folder,
)
from portsim.simulator.errors import ScenarioError
from portsim.simulator.numbers import format_rational

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["BATCH_SECONDS", "MAX_BATCH_RUNS", "Executor", "StudyOutcome", "execute_run",
           "execute_runs", "run_study"]

Executor = Literal["local", "dask"]

ProgressCallback = Callable[[int, int, int], None]
"""Called as ``progress(done, failed, total)`` after each finished run."""

_FLUSH_SECONDS = 2.0
_POLL_SECONDS = 0.2  # how often a waiting study looks at its stop event
_SUMMARY_LINES = 5

BATCH_SECONDS = 1.0
"""Work per batch sent to a worker (CPU seconds), estimated from the runs finished so far.

A second of work makes the scheduler's share small on a two-core machine (at
0.25 s, Dask's main process took three times the CPU); a stopped study loses
at most one batch per worker, recomputed by ``--resume``."""

MAX_BATCH_RUNS = 64
"""The most runs in one batch (the first batches hold one run each)."""


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
    interrupted:
        The study was stopped (its ``stop`` event set) before every run was
        computed; the runs computed are stored, the others are not.
    failures:
        One line for each of the failed or invalid runs of lowest index
        (whatever order the workers finished in): run index, grid point,
        planner and message.
    warned:
        Computed runs whose rows carry a warning note.
    warnings:
        The distinct warnings (as in the rows' notes) of the lowest run
        indexes, each at the lowest run that gave it, in run order (whatever
        order the workers finished in).
    stored_failed, stored_invalid:
        Among the ``skipped`` runs (stored by an earlier, resumed call), those
        with an ``error`` row, and those with a schedule the engine rejected.
    """

    total: int
    skipped: int
    computed: int
    failed: int
    invalid: int
    elapsed: float
    interrupted: bool = False
    failures: tuple[str, ...] = ()
    warned: int = 0
    warnings: tuple[str, ...] = ()
    stored_failed: int = 0
    stored_invalid: int = 0

    @property
    def rate(self) -> float:
        """Computed runs per second."""
        return self.computed / self.elapsed if self.elapsed > 0 else 0.0


def _planner_names(run: StudyRun) -> list[tuple[str, dict[str, Any]]]:
    """Best-effort planner list of a run whose document may not load (options as
    :meth:`StudyRun.planner_options` gives them)."""
    entries = run.scenario.get("planners")
    named: list[tuple[str, dict[str, Any]]] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, str):
            named.append((entry, {}))
        elif isinstance(entry, dict):
            options = {k: v for k, v in entry.items() if k != "name"}
            named.append((str(entry.get("name", "")), run.planner_options(index, options)))
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
            "label": planner_label(name, options), "status": "error",
            "message": f"{type(err).__name__}: {message}",
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
        Rows in the columns of :data:`portsim.scenarios.study.store.RESULT_COLUMNS`
        plus the run's grid columns.
    """
    base = _base_row(run, study)
    if run.evaluation == "model":
        return _model_rows(base, run, study)
    started = time.perf_counter()
    try:
        scenario = run.load_scenario(f"{study}[run {run.index}]")
    except Exception as err:  # a run that fails is a row, never the end of the study
        elapsed = time.perf_counter() - started
        return [_error_row(base, i, name, options, err, elapsed)
                for i, (name, options) in enumerate(_planner_names(run))]
    rows: list[dict[str, Any]] = []
    for index, spec in enumerate(scenario.planners):
        started = time.perf_counter()
        # A worker never prints: what a planner warns goes into its row's notes.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = run_planner(scenario, spec).to_dict()
            except Exception as err:  # idem: one planner's crash is its row
                row = _error_row(base, index, spec.name, spec.options, err,
                                 time.perf_counter() - started)
            else:
                row = _result_row(base, index, spec, result, time.perf_counter() - started)
        if caught:
            notes = json.loads(row["notes"])
            for note in (warning_note(w) for w in caught):
                if note not in notes:
                    notes.append(note)
            row["notes"] = json.dumps(notes)
        rows.append(row)
    _add_efficiency(rows)
    return rows


WARNING_PREFIX = "warning: "
"""Notes that hold a warning a planner emitted start with this."""


def warning_note(caught: warnings.WarningMessage) -> str:
    """One line for a caught warning: ``warning: Category: first line of the message``."""
    text = str(caught.message).strip().splitlines()
    return f"{WARNING_PREFIX}{caught.category.__name__}: {text[0] if text else ''}"


def execute_runs(runs: Sequence[StudyRun], study: str) -> tuple[list[list[dict[str, Any]]],
                                                                 float]:
    """:func:`execute_run` on each of ``runs`` (one batch); the rows and the CPU seconds spent.

    CPU time, not wall time: on a busy machine a run's wall time grows with
    the load while the executor's cost per batch does not, and batches sized
    by wall time would shrink just when they should not.
    """
    started = time.process_time()
    rows = [execute_run(run, study) for run in runs]
    return rows, time.process_time() - started


def _model_rows(base: Mapping[str, Any], run: StudyRun, study: str) -> list[dict[str, Any]]:
    """The rows of a run evaluated on the Canon–Antoniu model (no platform, no replay)."""
    started = time.perf_counter()
    try:
        results = model_results(run.scenario, source=f"{study}[run {run.index}]")
    except Exception as err:  # a run that fails is a row
        elapsed = time.perf_counter() - started
        return [_error_row(base, i, name, options, err, elapsed)
                for i, (name, options) in enumerate(_planner_names(run))]
    elapsed = (time.perf_counter() - started) / max(len(results), 1)
    options = _planner_names(run)
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
    """Set ``reference_bound`` (lp's bound, else the largest), whether it is proven
    optimal (``reference_bound_exact``) and ``efficiency``."""
    # An lp entry restricted to a tree or a DAG (option restrict) bounds only
    # that sub-platform: never a reference for the others.
    # portsim's own exact strings: no input's 10^18 cap (an lp bound on 50
    # random nodes holds 48 digits, and the cap made every row of the run an error)
    bounded = [r for r in rows
               if r.get("throughput_bound") and json.loads(r.get("planner_options") or "{}")
               .get("restrict", "graph") == "graph"]
    lp = [r for r in bounded if r["planner"] == "lp"]
    source = lp[0] if lp else max(bounded, key=lambda r: Fraction(r["throughput_bound"]),
                                  default=None)
    if source is None:
        return
    reference = Fraction(source["throughput_bound"])
    if reference <= 0:
        return
    for row in rows:
        row["reference_bound"] = format_rational(reference)
        row["reference_bound_exact"] = source.get("bound_exact")
        exact = row.get("measured_throughput_exact")
        measured = row.get("measured_throughput")
        # the exact ratio, rounded once (the two floats' quotient was off by an ulp
        # in a third of the rows: 0.9600000000000001 for 24/25)
        if exact:
            row["efficiency"] = float(Fraction(exact) / reference)
        elif measured is not None:
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
    stop: threading.Event | None = None,
) -> StudyOutcome:
    """Run every run of ``study`` not yet stored in ``out`` and store its rows.

    Parameters
    ----------
    study:
        From :func:`~portsim.scenarios.study.spec.load_study`.
    out:
        The output folder; rows go to ``out/results.parquet/``.  (That dataset
        itself names its folder, as for
        :func:`~portsim.scenarios.study.store.load_results`.)  The study
        holds the folder's lock (:class:`~portsim.scenarios.study.store.StoreLock`)
        while it runs.
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
    stop:
        When set (by a signal handler, another thread), the study submits
        nothing more, ends its workers (runs in flight are lost and left for
        ``--resume``), stores the finished runs and returns with
        ``interrupted`` true, within a fraction of a second.

    Returns
    -------
    StudyOutcome

    Raises
    ------
    ScenarioError
        The store holds rows and ``resume`` is false; another study holds
        the folder; a bad executor option; ``dask`` without Dask installed;
        ``study`` not a :class:`Study`, ``workers`` or ``batch_size`` not an
        integer >= 1.
    """
    if not isinstance(study, Study):
        raise ScenarioError("expected a Study: read the file with load_study(path) (a "
                            "mapping with study_from_dict)", path="study",
                            value=type(study).__name__)
    for value, key in ((1 if workers is None else workers, "--workers"),
                       (batch_size, "--batch-size")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScenarioError("must be an integer >= 1", path=key, value=value)
    if executor not in ("local", "dask"):
        raise ScenarioError("unknown executor (expected local or dask)", path="--executor",
                            value=executor)
    if scheduler is not None and executor != "dask":
        raise ScenarioError("needs --executor dask", path="--scheduler", value=scheduler)
    if executor == "dask":
        _require_dask()
    # ``out/results.parquet`` (what report and pandas take) names the study in ``out``:
    # taken as a folder, a dataset would be written inside the dataset
    out = study_folder(out)
    with StoreLock(out):
        return _run_locked(study, out, executor=executor, workers=workers,
                           scheduler=scheduler, resume=resume, batch_size=batch_size,
                           progress=progress, stop=stop or threading.Event())


def _require_dask() -> None:
    """Raise a one-line :class:`ScenarioError` when ``dask.distributed`` is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ScenarioError("Dask is not installed; install it with "
                            "pip install 'portsim[dask]'", path="--executor",
                            value="dask") from None


def _run_locked(study: Study, out: str | os.PathLike[str], *, executor: Executor,
                workers: int | None, scheduler: str | None, resume: bool, batch_size: int,
                progress: ProgressCallback | None, stop: threading.Event) -> StudyOutcome:
    """:func:`run_study` once the store's lock is held."""
    started = time.perf_counter()
    grid_types = {GRID_PREFIX + key: grid_column_type([r.grid[key] for r in study.runs])
                  for key in study.grid_keys}
    store = ResultStore(out, grid_types)
    store.discard_temporary()
    stored = store.stored_runs()  # one read of the stored parts
    done = stored.keys()
    if done and not resume:
        raise ScenarioError("the result store already holds runs; pass --resume to "
                            "continue it, or choose another --out",
                            source=str(store.path))
    distinct: dict[str, StudyRun] = {}
    for run in study.runs:
        distinct.setdefault(run.key, run)
    _check_resumed_store(study, distinct, stored, str(store.path))
    _check_grid_types(store, grid_types)
    pending = [run for key, run in distinct.items() if key not in done]
    skipped = len(distinct) - len(pending)
    earlier = [(stored[key].error, stored[key].invalid) for key in distinct if key in stored]
    summary = _Summary()
    batch: list[dict[str, Any]] = []
    last_flush = time.monotonic()
    if progress is not None:
        progress(skipped, 0, len(distinct))
    results = (_local_results(pending, study.name, workers, stop) if executor == "local"
               else _dask_results(pending, study.name, workers, scheduler, stop))
    try:
        for run, rows in results:
            summary.add(run, rows)
            batch.extend(rows)
            if progress is not None:
                progress(skipped + summary.computed, summary.failed, len(distinct))
            if (summary.computed % batch_size == 0
                    or time.monotonic() - last_flush > _FLUSH_SECONDS):
                store.append(batch)
                batch, last_flush = [], time.monotonic()
    finally:
        results.close()  # ends the workers first, then the finished runs are stored
        store.append(batch)
    return StudyOutcome(len(distinct), skipped, summary.computed, summary.failed,
                        summary.invalid, time.perf_counter() - started,
                        interrupted=summary.computed < len(pending),
                        failures=tuple(summary.failures), warned=summary.warned,
                        warnings=tuple(summary.warnings),
                        stored_failed=sum(error for error, _ in earlier),
                        stored_invalid=sum(invalid for _, invalid in earlier))


def _check_resumed_store(study: Study, distinct: Mapping[str, StudyRun],
                         stored: Mapping[str, StoredRun], source: str) -> None:
    """Refuse to resume a store that holds runs this study does not make, or holds
    them under another run index.

    Rows of another study, of a run whose inputs changed since (an edited grid
    value, base key or input file: another run key) or numbered otherwise (a
    grid value inserted before others) would stay in the store beside this
    study's: :func:`~portsim.scenarios.study.store.load_results` would return both,
    the report would average them together as replicates and draw two runs as
    one ``run_index``.

    Raises
    ------
    ScenarioError
        One line naming the first such stored run and what to do.
    """
    if not stored:
        return
    others = sorted({run.study for run in stored.values()} - {study.name})
    if others:
        raise ScenarioError(f"the result store holds the study {others[0]!r}, not "
                            f"{study.name!r}; choose another --out", source=source)
    foreign = sorted((run.run_index, key) for key, run in stored.items()
                     if key not in distinct)
    if foreign:
        raise ScenarioError(
            f"the result store holds {len(foreign)} run(s) that this study file no longer "
            f"makes (the first: run {foreign[0][0]}): the study file or an input file "
            f"changed since they were stored; rerun the study into another --out",
            source=source)
    moved = sorted((run.run_index, distinct[key].index) for key, run in stored.items()
                   if distinct[key].index != run.run_index)
    if moved:
        was, now = moved[0]
        raise ScenarioError(
            f"the result store holds {len(moved)} run(s) of this study under another run "
            f"index (the first: run {was}, now run {now}: grid values were added or "
            f"reordered); rerun the study into another --out", source=source)


def _check_grid_types(store: ResultStore, grid_types: Mapping[str, pa.DataType]) -> None:
    """Refuse to append parts whose grid column has another type than the stored parts'.

    A value appended to the first grid key keeps the stored runs, but one of
    another type (``"1/2"`` after integers) makes the column text in the new
    parts only: pyarrow cannot merge ``int64`` with ``string``, and the store
    would no longer load (:func:`~portsim.scenarios.study.store.load_results`,
    ``portsim report``, ``pandas.read_parquet``).

    Raises
    ------
    ScenarioError
        Naming the column, the stored type and the new one.
    """
    for name, stored in store.stored_types().items():
        now = grid_types.get(name)
        if now is not None and now != stored:
            raise ScenarioError(
                f"the store holds this column as {stored}, the study file's values make "
                f"it {now}; rerun the study into another --out", path=name,
                source=str(store.path))


class _Summary:
    """Counts of the computed runs and the first lines worth showing."""

    def __init__(self) -> None:
        self.computed = self.failed = self.invalid = self.warned = 0
        self.failures: list[str] = []
        self._failed: list[tuple[int, int, str]] = []  # (run index, arrival, line)
        self.warnings: list[str] = []
        self._warned: dict[str, tuple[int, int]] = {}  # note: (lowest run index, arrival)
        self._arrivals = 0

    def add(self, run: StudyRun, rows: Sequence[Mapping[str, Any]]) -> None:
        self.computed += 1
        errors = [r for r in rows if r.get("status") == "error"]
        invalid = [r for r in rows if r.get("status") == "ok" and r.get("feasible") is False]
        self.failed += bool(errors)
        self.invalid += bool(invalid)
        where = f"run {run.index}" + (f" ({grid_point_label(run.grid)}, seed {run.seed})"
                                      if run.grid else f" (seed {run.seed})")
        for row in [*errors, *invalid]:
            what = (row.get("message") if row.get("status") == "error" else
                    f"invalid schedule, {row.get('violation_count')} violation(s)")
            # the label tells apart a planner listed twice with other options
            who = row.get("label") or row.get("planner")
            self._failed.append((run.index, len(self._failed), f"{where}: {who}: {what}"))
        # The lowest run indexes, whatever order the workers finish in (same
        # study, same lines).
        self._failed = sorted(self._failed)[:_SUMMARY_LINES]
        self.failures = [line for _, _, line in self._failed]
        notes = [n for r in rows for n in json.loads(r.get("notes") or "[]")
                 if n.startswith(WARNING_PREFIX)]
        self.warned += bool(notes)
        for note in notes:
            self._arrivals += 1
            key = (run.index, self._arrivals)
            self._warned[note] = min(self._warned.get(note, key), key)
        # Each distinct note at the lowest run index that gave it, the lowest first,
        # whatever order the workers finish in (same study, same lines).  A note
        # dropped here comes back if a lower run gives it again.
        kept = sorted(self._warned.items(), key=lambda item: item[1])[:_SUMMARY_LINES]
        self._warned = dict(kept)
        self.warnings = [note for note, _ in kept]


_Batch = tuple[StudyRun, ...]
_Rows = Generator[tuple[StudyRun, list[dict[str, Any]]], None, None]


def _batched(runs: Sequence[StudyRun], study: str, workers: int,
             submit: Callable[[_Batch], Any],
             wait_first: Callable[[set[Any]], set[Any]],
             stop: threading.Event) -> Iterator[tuple[StudyRun, list[dict[str, Any]]]]:
    """Rows of each run as its batch finishes; one loop for every executor.

    ``submit(batch)`` starts :func:`execute_runs` on a worker and returns a
    future; ``wait_first(futures)`` returns those done within
    :data:`_POLL_SECONDS` (maybe none).  Twice ``workers`` batches are kept in
    flight; a batch holds about :data:`BATCH_SECONDS` of work at the mean run
    time measured so far (one run until a batch has finished), and no more
    than its share of the runs left.  Returns early,
    with batches still in flight, once ``stop`` is set.
    """
    queue = list(reversed(runs))
    in_flight: dict[Any, _Batch] = {}
    spent = 0.0
    measured = 0
    while (queue or in_flight) and not stop.is_set():
        while queue and len(in_flight) < 2 * workers:
            size = 1 if not measured else max(1, min(
                MAX_BATCH_RUNS, round(BATCH_SECONDS * measured / max(spent, 1e-9)),
                -(-len(queue) // (2 * workers))))  # the last runs spread over the workers
            batch = tuple(queue.pop() for _ in range(min(size, len(queue))))
            try:
                in_flight[submit(batch)] = batch
            except Exception as err:  # a broken pool: each run is an error row
                for run in batch:
                    yield run, _failed_rows(run, study, err)
        for future in wait_first(set(in_flight)):
            batch = in_flight.pop(future)
            try:
                rows, seconds = future.result()
            except Exception as err:  # a worker that died: an error row per planner
                for run in batch:
                    yield run, _failed_rows(run, study, err)
                continue
            spent, measured = spent + seconds, measured + len(batch)
            yield from zip(batch, rows, strict=True)


def _failed_rows(run: StudyRun, study: str, err: BaseException) -> list[dict[str, Any]]:
    """The rows of a run whose worker failed: an error row per planner."""
    base = _base_row(run, study)
    return [_error_row(base, i, name, options, err, 0.0)
            for i, (name, options) in enumerate(_planner_names(run))]


def _worker_setup() -> None:
    """In a local worker: a terminal's Ctrl-C is the parent's to handle, SIGTERM ends,
    and so does the study's end by SIGKILL (:func:`_end_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # The study's own id, recorded when it started this worker: os.getppid() here is
    # already init's (or a subreaper's) where the study died in between, and that
    # one never changes (the worker ran on forever).
    study = multiprocessing.parent_process()
    parent = study.pid if study is not None and study.pid is not None else os.getppid()
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True,
                     name="portsim-parent-watch").start()


ORPHAN_POLL_SECONDS = 0.5
"""How often a local worker checks that the study that started it still runs."""


def _end_with_parent(parent: int) -> None:
    """End this worker once its parent, the study, is gone (killed with SIGKILL, which
    it cannot answer by ending its workers): the worker, blocked on its task queue,
    ran on forever, and nothing would read what it computes."""
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)


def _local_results(runs: Sequence[StudyRun], study: str, workers: int | None,
                   stop: threading.Event) -> _Rows:
    """Rows of each run as it finishes, on a local process pool."""
    if not runs:
        return
    count = workers or os.cpu_count() or 1
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(max_workers=count, initializer=_worker_setup)
    # The parent's end of the pool's result pipe (a private attribute: None elsewhere).
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    finished = False
    try:
        yield from _batched(
            runs, study, count, lambda batch: pool.submit(execute_runs, batch, study),
            lambda futures: wait_futures(futures, timeout=_POLL_SECONDS,
                                         return_when=FIRST_COMPLETED).done, stop)
        finished = not stop.is_set()
    finally:
        if not finished:  # interrupted: runs in flight are dropped, their workers ended
            pool.shutdown(wait=False, cancel_futures=True)
            for child in set(multiprocessing.active_children()) - before:
                child.terminate()
            for child in set(multiprocessing.active_children()) - before:
                child.join(timeout=5)
                if child.is_alive():
                    child.kill()
            # A worker ended while it wrote a result leaves part of a message in the
            # pipe: the pool's manager thread waits in recv for the rest, forever, and
            # Python's exit joins that thread (CPython 3.11; a CI run hung so after its
            # last test).  With every writer closed, recv meets the end of the pipe and
            # the thread takes the pool as broken and ends.
            if writer is not None:
                writer.close()
        pool.shutdown(wait=True)


_LOCAL_CLUSTER_CONFIG: dict[str, object] = {
    # Forked workers start with portsim already imported (spawned ones import it
    # again: seconds per worker on a busy machine, more than a 1,000-run study).
    "distributed.worker.multiprocessing-method": "fork",
    # The statistical profiler samples the running task every 10 ms: off, it
    # costs pure-Python runs a good part of their speed.
    "distributed.worker.profile.enabled": False,
    # Housekeeping of an idle cluster (event-loop ticks every 20 ms, system and
    # memory monitors) took 9% of a core; 1.6% with these intervals.
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}
"""Dask settings of the ``LocalCluster`` a study starts (not of a given scheduler).

The workers' own logs are silenced too (heartbeats failing while the cluster
closes would write over the progress bar); a failed run is its rows' message.
"""


_CONNECT_SECONDS = 10
"""How long a study waits for a given Dask scheduler (``--scheduler``) to answer."""


def _dask_results(runs: Sequence[StudyRun], study: str, workers: int | None,
                  scheduler: str | None,
                  stop: threading.Event) -> _Rows:
    """Rows of each run as it finishes, on Dask distributed."""
    if not runs:
        return
    import dask.config
    from distributed import Client, LocalCluster
    from distributed import wait as dask_wait

    cluster = None
    if scheduler is None:
        with dask.config.set(_LOCAL_CLUSTER_CONFIG):
            cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1,
                                   processes=True, dashboard_address=None,
                                   silence_logs=logging.CRITICAL)
            client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=_CONNECT_SECONDS)
        except (OSError, TimeoutError, ValueError) as err:
            # distributed raises OSError ("Timed out trying to connect ...") for an
            # address nothing listens on, ValueError for one it cannot parse
            raise ScenarioError(f"cannot reach the Dask scheduler: {err}",
                                path="--scheduler", value=scheduler) from None
    in_flight: list[Any] = []

    def submit(batch: _Batch) -> Any:
        future = client.submit(execute_runs, batch, study, pure=False)
        in_flight.append(future)
        return future

    def wait_first(futures: set[Any]) -> set[Any]:
        try:
            return set(dask_wait(list(futures), timeout=_POLL_SECONDS,
                                 return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            return set()

    try:
        count = workers or len(client.scheduler_info().get("workers", {})) or 2
        yield from _batched(runs, study, count, submit, wait_first, stop)
    finally:
        client.cancel([f for f in in_flight if not f.done()])
        client.close()
        if cluster is not None:
            cluster.close()
