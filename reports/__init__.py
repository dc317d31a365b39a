"""portsim's reports: plotly figures and the self-contained HTML page of a run.

:func:`write_run_report` writes the report of ``portsim run SCENARIO --report
OUT.html``; the figure functions return :class:`plotly.graph_objects.Figure`
objects for use elsewhere (notebooks, study reports); :func:`convergence_figure`
draws completed(K) / (TP · K) in both reports, and :func:`run_labels` gives
the one label of each planner row; :func:`write_study_report` draws a study's
results (:mod:`portsim.reports.studies`).  The reports only render: studies are
loaded, run and stored by :mod:`portsim.scenarios.study`, whose
:func:`load_study`, :func:`run_study` and :func:`load_results` are re-exported
here.
"""

from portsim.reports.figures import (
    GANTT_EVENT_CAP,
    THROUGHPUT_UNIT,
    TIME_UNIT,
    convergence_figure,
    gantt_figure,
    makespan_figure,
    platform_figure,
    run_labels,
    throughput_figure,
)
from portsim.reports.html import (
    MAX_VIOLATION_ROWS,
    ReportScenario,
    render_run_report,
    write_run_report,
)
from portsim.reports.studies import write_study_report
from portsim.scenarios.study import load_results, load_study, run_study

__all__ = [
    "GANTT_EVENT_CAP",
    "MAX_VIOLATION_ROWS",
    "THROUGHPUT_UNIT",
    "TIME_UNIT",
    "ReportScenario",
    "convergence_figure",
    "gantt_figure",
    "load_results",
    "load_study",
    "makespan_figure",
    "platform_figure",
    "render_run_report",
    "run_labels",
    "run_study",
    "throughput_figure",
    "write_run_report",
    "write_study_report",
]
