"""The Parquet result store of a study: ``DIR/results.parquet/``, a dataset directory.

Appending without losing or duplicating rows
--------------------------------------------
Parquet files cannot be appended to, so the store is a *directory* of part
files, which pyarrow and pandas read as one table
(``pandas.read_parquet("DIR/results.parquet")``).  Each batch of finished
runs is written to a hidden temporary file (``.part-*.tmp``, ignored by
readers) and then renamed to ``part-<time>-<uuid>.parquet`` with
:func:`os.replace`, which is atomic: a killed study leaves every part either
complete or absent, never half-written.  All rows of one run go into the same
part, so a run is either fully stored or not at all; ``--resume`` recomputes
exactly the runs whose key is absent.  :func:`load_results` also drops any
repeated ``(run_key, planner_index)`` pair (possible only when two studies
write into one directory concurrently) so a row is never counted twice.

One writer at a time
--------------------
A study owns its output folder while it runs: :class:`StoreLock` takes an
advisory lock (:func:`fcntl.flock`) on ``DIR/.lock`` and writes its process
id there, with the process's start time (an id may be reused, not both); a
second study on the same folder is refused, naming the holder.  The lock goes
with the process (a killed study leaves no stale lock, only its id and start
time in the file, which :func:`study_writer` tells from a live study).  Each
temporary part carries its writer's process id (``.part-...parquet.<pid>.tmp``):
start-up removes only the leftovers of writers that are no longer running,
never the in-flight part of a live one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from portsim.scenarios.loader import file_name
from portsim.simulator.errors import ScenarioError

__all__ = [
    "LOCK_NAME",
    "RESULTS_NAME",
    "RESULT_COLUMNS",
    "ResultStore",
    "StoreLock",
    "StoredRun",
    "exact_makespan_ratios",
    "grid_column_type",
    "load_results",
    "study_folder",
    "study_writer",
    "valid_rows",
]

RESULTS_NAME = "results.parquet"
"""Name of the dataset directory inside a study's output folder."""

LOCK_NAME = ".lock"
"""The lock file inside a study's output folder (holds the writer's process id and
its start time, ``PID START``)."""

RESULT_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("study", pa.string()),
    ("run_key", pa.string()),
    ("run_index", pa.int64()),
    ("seed", pa.int64()),
    ("scenario", pa.string()),
    ("planner_index", pa.int64()),
    ("planner", pa.string()),
    ("planner_options", pa.string()),
    ("operation", pa.string()),
    ("port_model", pa.string()),
    ("status", pa.string()),
    ("message", pa.string()),
    ("throughput_bound", pa.string()),
    ("period", pa.string()),
    ("makespan", pa.string()),
    ("measured_throughput", pa.float64()),
    ("completed", pa.int64()),
    ("horizon", pa.string()),
    ("feasible", pa.bool_()),
    ("violations", pa.string()),
    ("notes", pa.string()),
    ("violation_count", pa.int64()),
    ("reference_bound", pa.string()),
    ("efficiency", pa.float64()),
    ("elapsed", pa.float64()),
    ("scenario_document", pa.string()),
    ("label", pa.string()),
    ("replay", pa.string()),
    ("replay_cut", pa.bool_()),
    ("achieved_throughput", pa.string()),
    ("bound_reached", pa.bool_()),
    ("measured_throughput_exact", pa.string()),
    ("node_port_models", pa.string()),
    ("bound_exact", pa.bool_()),
    ("reference_bound_exact", pa.bool_()),
)
"""Every column but the grid ones, with its Arrow type.

The SPEC.md JSON result fields keep their names; exact figures
(``throughput_bound``, ``period``, ``makespan``, ``horizon``) are exact
rational strings such as ``"2/9"``; ``violations`` and ``notes`` are JSON
text.  Added: ``violation_count``; ``reference_bound``, the ``lp`` bound of
the run (else the largest bound any planner of the run gave);
``efficiency = measured_throughput / reference_bound``; ``elapsed``, seconds
spent planning and replaying; ``scenario_document``, the resolved scenario as
JSON (enough to rerun it).  Since 0.3.0 also the JSON result's ``label``,
``replay``, ``replay_cut``, ``achieved_throughput``, ``bound_reached`` and
``measured_throughput_exact`` (a store written by 0.2.0 reads back with these
columns empty), and ``node_port_models`` as JSON text (``{}`` when every node
follows ``port_model``; empty in a store written before it); also the JSON
result's ``bound_exact`` and ``reference_bound_exact``, whether
``reference_bound`` is proven optimal (the ``bound_exact`` of the row it comes
from: where it is ``false``, ``efficiency`` is only a lower end); both empty in
a store written before them.
"""


def grid_column_type(values: Sequence[Any]) -> pa.DataType:
    """The Arrow type of a grid column: native for uniform scalars, else text (a text
    value as it is, any other value as its JSON).

    Examples
    --------
    >>> grid_column_type([8, 16]), grid_column_type([1, 2.5]), grid_column_type(["a"])
    (DataType(int64), DataType(double), DataType(string))
    >>> grid_column_type([[1], [2]]), grid_column_type([2**60, 0.5])
    (DataType(string), DataType(string))
    """
    if all(isinstance(v, bool) for v in values):
        return pa.bool_()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    if all(isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)
                                    and abs(v) <= _EXACT_DOUBLE_INT) for v in values):
        return pa.float64()  # every integer among them is exactly a double
    return pa.string()


_EXACT_DOUBLE_INT = 2**53


#: The pandas dtype of each Arrow column type (nullable ones).
_PANDAS_TYPES: dict[pa.DataType, Any] = {
    pa.string(): pd.StringDtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
    pa.float64(): pd.Float64Dtype(),
}


class StoredRun(NamedTuple):
    """A run found in the store (:meth:`ResultStore.stored_runs`)."""

    study: str
    """The ``study`` name its rows were stored under."""
    run_index: int
    """Its ``run_index`` when it was stored."""
    error: bool
    """Some row of it is an ``error``."""
    invalid: bool
    """Some ``ok`` row of it has a schedule the strict replay rejected."""


class ResultStore:
    """Append-only rows of one study under ``directory/results.parquet/``.

    Parameters
    ----------
    directory:
        The study's output folder (created if missing).
    grid_types:
        Arrow type of each grid column, by column name (``grid.<path>``).
    """

    def __init__(self, directory: str | os.PathLike[str],
                 grid_types: Mapping[str, pa.DataType]) -> None:
        self.path = Path(directory) / RESULTS_NAME
        schema = pa.schema([*RESULT_COLUMNS, *grid_types.items()])
        # pandas metadata naming the nullable dtypes, so that a plain
        # ``pandas.read_parquet`` gives Int64 (not float64) where a column has nulls.
        empty = pd.DataFrame({f.name: pd.Series([], dtype=_PANDAS_TYPES[f.type])
                              for f in schema})
        self.schema = schema.with_metadata(
            pa.Schema.from_pandas(empty, preserve_index=False).metadata)

    def parts(self) -> list[Path]:
        """The complete part files, oldest first."""
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.glob("part-*.parquet") if p.is_file())

    def stored_types(self) -> dict[str, pa.DataType]:
        """The Arrow type of each grid column in the stored parts, by column name (the
        first part giving it; :meth:`append` writes every part with :attr:`schema`)."""
        found: dict[str, pa.DataType] = {}
        for part in self.parts():
            for column in pq.read_schema(part):
                if column.name.startswith("grid."):
                    found.setdefault(column.name, column.type)
        return found

    def stored_verdicts(self) -> dict[str, tuple[bool, bool]]:
        """The runs already stored: per run key, (some row is an ``error``, some ``ok``
        row's schedule was rejected), as :func:`~portsim.scenarios.study.execute.run_study`
        counts them."""
        return {key: (run.error, run.invalid) for key, run in self.stored_runs().items()}

    def stored_runs(self) -> dict[str, StoredRun]:
        """The runs already stored, per run key: the study and run index they were
        stored under, and their verdicts (:meth:`stored_verdicts`); one read of the
        parts' few columns."""
        names = ("run_key", "study", "run_index", "status", "feasible")
        found: dict[str, StoredRun] = {}
        for part in self.parts():
            table = pq.read_table(part, columns=list(names))
            columns = [table.column(c).to_pylist() for c in names]
            for key, study, index, status, feasible in zip(*columns, strict=True):
                run = found.get(str(key)) or StoredRun(str(study), int(index), False, False)
                found[str(key)] = run._replace(
                    error=run.error or status == "error",
                    invalid=run.invalid or (status == "ok" and feasible is False))
        return found

    def append(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write ``rows`` as one new part, atomically; return how many were written."""
        rows = list(rows)
        if not rows:
            return 0
        self.path.mkdir(parents=True, exist_ok=True)
        text = {f.name for f in self.schema if f.type == pa.string()}
        table = pa.Table.from_pylist(
            [{name: _as_text(row.get(name)) if name in text else row.get(name)
              for name in self.schema.names} for row in rows],
            schema=self.schema)
        name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        temporary = self.path / f".{name}.{os.getpid()}.tmp"
        try:
            pq.write_table(table, temporary)
            os.replace(temporary, self.path / name)
        finally:
            temporary.unlink(missing_ok=True)  # gone already unless the write failed
        return len(rows)

    def discard_temporary(self) -> list[Path]:
        """Remove the hidden leftovers of writers that no longer run; return them.

        A temporary part is named ``.part-...parquet.<pid>.tmp`` by the
        process writing it: a part of this process or of a process that no
        longer exists is a leftover; a part of a live process is in flight
        and stays, as does a name without a process id.
        """
        removed: list[Path] = []
        if not self.path.is_dir():
            return removed
        for leftover in self.path.glob(".part-*.tmp"):
            pid = leftover.name.removesuffix(".tmp").rsplit(".", 1)[-1]
            if pid.isdigit() and (int(pid) == os.getpid() or not _running(int(pid))):
                leftover.unlink(missing_ok=True)
                removed.append(leftover)
        return removed


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OverflowError:  # not a process id at all
        return False
    return True


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot (field 22 of
    ``/proc/PID/stat``), or ``None`` where that cannot be read (no ``/proc``, no
    such process).  With the process id it names one process: an id is reused, a
    start time with it is not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except (OSError, ValueError):
        return None
    # field 2, the command name in parentheses, may hold spaces and parentheses
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 and fields[19].isdigit() else None


def _lock_text(pid: int) -> str:
    """What :class:`StoreLock` writes in the lock file: ``PID START`` (the process id
    and its start time, :func:`_start_time`), ``PID`` alone where the start time
    cannot be read."""
    start = _start_time(pid)
    return f"{pid}\n" if start is None else f"{pid} {start}\n"


def _lock_holder(text: str) -> int | None:
    """The process id in the text of a lock file when that process still runs, else
    ``None``: a process of that id that started at another time than the lock file
    says is another process that reused the id (the lock's is gone)."""
    words = text.split()
    if not words or not words[0].isdigit() or not _running(int(words[0])):
        return None
    pid = int(words[0])
    if len(words) > 1:
        start = _start_time(pid)
        if start is not None and start != words[1]:
            return None
    return pid


def study_writer(directory: str | os.PathLike[str]) -> int | None:
    """The process id of the study writing into the output folder ``directory`` now
    (the id its :class:`StoreLock` wrote), or ``None`` when no study does.

    Read from the lock file without taking the lock, so that a reader never makes a
    study starting at the same moment refuse the folder; a study that ended
    emptied the file, one that was killed left the id of a process no longer
    running, or of a process that reused the id: the file also holds the
    study's start time (:func:`_lock_holder`), which that process does not share.
    """
    try:
        text = (Path(directory) / LOCK_NAME).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    pid = _lock_holder(text)
    return None if pid is None or pid == os.getpid() else pid


_HELD: set[int] = set()
"""Descriptors of the lock files this process holds (:class:`StoreLock`)."""


def _close_held_in_child() -> None:
    """In a process just forked (a study's pool worker): close its copies of the held
    lock files' descriptors.  :func:`fcntl.flock`'s lock belongs to the open file,
    which every copy shares: a worker left behind by a study killed with SIGKILL
    kept the folder locked, and a new study there was refused, naming the dead
    process.  Closing a copy leaves the parent's lock as it is (no ``LOCK_UN``)."""
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


class StoreLock:
    """Exclusive ownership of a study's output folder, as a context manager.

    ``with StoreLock(directory):`` creates the folder if needed, takes an
    advisory :func:`fcntl.flock` on ``directory/.lock`` without waiting, and
    writes this process's id and start time in it; the lock is released on exit
    (and by the system when the process dies).

    Raises
    ------
    ScenarioError
        (on entering) when another process holds the lock, naming its id.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> StoreLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            words = os.pread(fd, 64, 0).decode("ascii", "replace").split()
            holder = words[0] if words else "unknown"
            os.close(fd)
            raise ScenarioError(
                f"another study (process {holder}) is writing into this folder; wait for it "
                f"to end or choose another --out", source=str(self.path.parent)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, _lock_text(os.getpid()).encode("ascii"), 0)
        self._fd = fd
        _HELD.add(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        # not in a forked child, which closed its copy (and must not unlock the parent's)
        if self._fd is not None and self._fd in _HELD:
            _HELD.discard(self._fd)
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
        self._fd = None


def _as_text(value: Any) -> str | None:
    """Text columns hold text; a list or mapping grid value becomes its JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def study_folder(directory: str | os.PathLike[str]) -> Path:
    """The study's output folder named by ``directory``: itself, or its parent when
    ``directory`` is the folder's ``results.parquet`` dataset (what ``pandas.read_parquet``
    takes, and so what a user may well give).

    Examples
    --------
    >>> str(study_folder("out")), str(study_folder("/nowhere/results.parquet"))
    ('out', '/nowhere/results.parquet')
    """
    path = Path(directory)
    if (path.name == RESULTS_NAME and path.is_dir() and not (path / RESULTS_NAME).exists()
            and any(path.glob("part-*.parquet"))):
        return path.parent
    return path


def load_results(directory: str | os.PathLike[str]) -> pd.DataFrame:
    """The tidy results of a study: one row per run and planner.

    Parameters
    ----------
    directory:
        The study's output folder (holding ``results.parquet``), or that
        ``results.parquet`` dataset itself.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`RESULT_COLUMNS` then one ``grid.<path>`` column
        per grid key, sorted by ``run_index`` then ``planner_index``.  Dtypes
        are pandas' nullable ones: text ``string``, integers ``Int64``,
        ``feasible`` ``boolean``, floats ``Float64`` (missing values are
        ``<NA>``).  Grid columns are ``Int64``/``Float64``/``boolean`` for
        uniform scalar values, else ``string`` (a text value as it is, any other
        as its JSON text: ``[1, "1/2"]`` is stored ``"1"``, ``"1/2"``).  Last, the
        derived column ``makespan_ratio`` (``Float64``, not stored): the
        row's makespan over the smallest makespan among the run's ``ok``
        rows whose schedule is not rejected (``feasible`` not false; a
        rejected row has none), 1 for the best planner of the run; the ratio to the optimum
        when an exact planner such as ``optimal`` or ``greedy`` on the
        homogeneous model is in the run), empty without a makespan.

    Raises
    ------
    FileNotFoundError
        When the folder holds no result store.
    ScenarioError
        When ``directory`` is not a folder name (a ``str`` or a path).
    """
    path = study_folder(file_name(directory, error=ScenarioError)) / RESULTS_NAME
    parts = sorted(path.glob("part-*.parquet")) if path.is_dir() else []
    if not parts:
        raise FileNotFoundError(f"{path}: no study results")
    table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="default")
    frame = table.to_pandas(types_mapper=_PANDAS_TYPES.get)
    frame = frame.drop_duplicates(subset=["run_key", "planner_index"], keep="first")
    frame = frame.sort_values(["run_index", "planner_index"], kind="stable").reset_index(
        drop=True)
    frame["makespan_ratio"] = _makespan_ratios(frame)
    return frame


def valid_rows(frame: pd.DataFrame) -> pd.Series:
    """The rows whose figures stand: ``ok``, and a schedule the strict replay did not
    reject (``feasible`` not false; a rejected row's figures are the planner's word)."""
    return frame["status"].eq("ok") & ~frame["feasible"].eq(False).fillna(False)


def exact_makespan_ratios(frame: pd.DataFrame) -> pd.Series:
    """makespan / the smallest makespan of the run's :func:`valid_rows`, as exact
    ``Fraction`` objects (``None`` for the other rows and those without a makespan)."""
    lengths = [Fraction(str(v)) if isinstance(v, str) and ok else None
               for v, ok in zip(frame["makespan"], valid_rows(frame), strict=True)]
    best: dict[str, Fraction] = {}
    for key, length in zip(frame["run_key"], lengths, strict=True):
        if length is not None and (str(key) not in best or length < best[str(key)]):
            best[str(key)] = length
    ratios = [length / best[str(key)] if length is not None and best[str(key)] > 0
              else None for key, length in zip(frame["run_key"], lengths, strict=True)]
    return pd.Series(ratios, index=frame.index, dtype=object)


def _makespan_ratios(frame: pd.DataFrame) -> pd.Series:
    """:func:`exact_makespan_ratios` as nullable floats (the stored frame's column)."""
    ratios = [None if r is None else float(r) for r in exact_makespan_ratios(frame)]
    return pd.Series(ratios, index=frame.index, dtype=pd.Float64Dtype())
