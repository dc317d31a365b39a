"""The study report: a study's results drawn in one self-contained HTML file.

:func:`write_study_report` (and :func:`render_study_report`) draw the rows of
``DIR/results.parquet``.  Running a study is not the reports' job: study
files, their execution and the store live in :mod:`portsim.scenarios.study`;
the names that the 0.2.0 layout exported from here (:func:`load_study`,
:func:`run_study`, :func:`load_results`, ...) are re-exported unchanged so
that code written against it keeps working.
"""

from portsim.reports.studies.report import render_study_report, write_study_report
from portsim.scenarios.study.execute import StudyOutcome, execute_run, run_study
from portsim.scenarios.study.spec import (
    DEFAULT_MAX_RUNS,
    GRID_PREFIX,
    Study,
    StudyRun,
    StudySpec,
    load_study,
    study_from_dict,
)
from portsim.scenarios.study.store import (
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
