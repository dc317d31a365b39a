"""Comparative studies: study files, their execution, and the results store.

A study file (SPEC.md, "Study file (YAML) and its outputs") is a base
scenario, a grid over dotted paths into it and a number of replicate seeds.
:func:`load_study` checks and expands it (:mod:`~portsim.scenarios.study.spec`);
:func:`run_study` runs it on a local process pool or a Dask cluster and appends
rows to ``DIR/results.parquet`` (:mod:`~portsim.scenarios.study.execute`; one
study per folder at a time: :class:`StoreLock`); :func:`load_results` reads
them back as a tidy :class:`pandas.DataFrame`
(:mod:`~portsim.scenarios.study.store`).  ``evaluation: model`` rows come from
:mod:`~portsim.scenarios.study.model`.  Drawing the results is the reports'
job: :func:`portsim.reports.studies.write_study_report`.

The names below are imported on first use, like the other packages' names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from portsim.simulator.lazy import lazy_exports

if TYPE_CHECKING:
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

_HOMES = {
    "portsim.scenarios.study.execute": ("StudyOutcome", "execute_run", "run_study"),
    "portsim.scenarios.study.spec": ("DEFAULT_MAX_RUNS", "GRID_PREFIX", "Study", "StudyRun",
                                     "StudySpec", "load_study", "study_from_dict"),
    "portsim.scenarios.study.store": ("RESULT_COLUMNS", "RESULTS_NAME", "ResultStore",
                                      "StoreLock", "load_results"),
}

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
    "run_study",
    "study_from_dict",
]
assert sorted(__all__) == sorted(n for names in _HOMES.values() for n in names)


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
