"""Comparative studies: study files, execution on local processes or Dask, results.

A study file (SPEC.md, "Study file (YAML) and its outputs") is a base
scenario, a grid over dotted paths into it and a number of replicate seeds.
:func:`load_study` checks and expands it; :func:`run_study` runs it on a
local process pool or a Dask cluster and appends rows to
``DIR/results.parquet`` (one study per folder at a time: :class:`StoreLock`);
:func:`load_results` reads them back as a tidy :class:`pandas.DataFrame`, and
:func:`write_study_report` draws them in one self-contained HTML file.
"""

from portsim.reports.studies.execute import StudyOutcome, execute_run, run_study
from portsim.reports.studies.report import render_study_report, write_study_report
from portsim.reports.studies.spec import (
    DEFAULT_MAX_RUNS,
    GRID_PREFIX,
    Study,
    StudyRun,
    StudySpec,
    load_study,
    study_from_dict,
)
from portsim.reports.studies.store import (
    RESULT_COLUMNS,
    RESULTS_NAME,
    ResultStore,
    StoreLock,
    load_results,
)

__all__ = [
    "DEFAULT_MAX_RUNS",
    "GRID_PREFIX",
    "RESULTS_NAME",
    "RESULT_COLUMNS",
    "ResultStore",
    "StoreLock",
    "Study",
    "StudyOutcome",
    "StudyRun",
    "StudySpec",
    "execute_run",
    "load_results",
    "load_study",
    "render_study_report",
    "run_study",
    "study_from_dict",
    "write_study_report",
]
