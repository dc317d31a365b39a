"""The HTML report of a study: ``portsim report DIR [-o DIR/report.html]``.

One self-contained file (plotly.js inlined once) with:

- a summary table: rows per planner and status;
- planners compared: mean ``efficiency`` (measured throughput / the run's
  reference bound, the ``lp`` bound), mean makespan and mean
  ``makespan_ratio`` (makespan / the run's best makespan: the curves of
  Canon–Antoniu's Fig. 2, SNF / optimal for Liu–Kuo–Wang), over the grid
  (log scale when it spans two decades or more), with the standard
  deviation across replicates and other grid keys as error bars;
- convergence of completed(K) / (TP · K) over the horizon K for one chosen
  run (:func:`scenarios.asymptotic.asymptotic_study`, Lemma 1 and
  Proposition 1 of Legrand–Marchal–Robert);
- a Gantt chart of the chosen run's schedule, per port, and the platform graph.

The chosen run (default: the first run where every planner ran) is rebuilt
from its stored ``scenario_document`` and replayed again: reports need no
schedule in the store.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Final

import pandas as pd
import plotly.graph_objects as go

from reports.figures import THROUGHPUT_UNIT, TIME_UNIT, gantt_figure, platform_figure
from reports.html import _CSS, _FigureEmbedder
from reports.studies.spec import GRID_PREFIX
from reports.studies.store import load_results
from scenarios.asymptotic import asymptotic_study
from scenarios.loader import PlannerSpec, Scenario, scenario_from_dict
from scenarios.runner import run_planner
from simulator.numbers import parse_rational

__all__ = ["CONVERGENCE_PERIODS", "render_study_report", "write_study_report"]

CONVERGENCE_PERIODS: Final = (1, 2, 5, 10, 20, 50, 100)
"""Horizons K of the convergence figure, in periods of the ``lp`` schedule."""

_TEMPLATE: Final = "plotly_white"


def write_study_report(directory: str | os.PathLike[str],
                       out: str | os.PathLike[str] | None = None, *,
                       run_index: int | None = None, planner: str | None = None) -> Path:
    """Write the HTML report of the study stored in ``directory``.

    Parameters
    ----------
    directory:
        The study's output folder.
    out:
        The HTML file (default ``directory/report.html``).
    run_index, planner:
        The run whose convergence, platform and schedule are drawn, and the
        planner of the Gantt chart (defaults: the first run where every
        planner ran; its first planner with a schedule).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    FileNotFoundError
        When ``directory`` holds no results.
    """
    path = Path(out) if out is not None else Path(directory) / "report.html"
    frame = load_results(directory)
    path.write_text(render_study_report(frame, run_index=run_index, planner=planner),
                    encoding="utf-8")
    return path


def render_study_report(frame: pd.DataFrame, *, run_index: int | None = None,
                        planner: str | None = None) -> str:
    """The HTML text of :func:`write_study_report`, from :func:`load_results`' frame."""
    embed = _FigureEmbedder()
    study = str(frame["study"].iloc[0]) if len(frame) else "study"
    sections = [("summary", "Summary", _summary_table(frame))]
    unbounded = int((frame["status"].eq("ok") & frame["efficiency"].isna()).sum())
    caption = (f'<p class="hint">{unbounded} ok row(s) have no reference bound (no lp '
               f"bound for that run) and are left out.</p>" if unbounded else "")
    if frame["efficiency"].notna().any() or not frame["makespan"].notna().any():
        sections.append(("efficiency", "Planners compared: throughput",
                         embed(_comparison_figure(frame, "efficiency")) + caption))
    if frame["makespan"].notna().any():
        sections.append(("makespan", "Planners compared: makespan",
                         embed(_comparison_figure(frame, "makespan"))))
        sections.append(("ratio", "Planners compared: makespan over the best of the run",
                         embed(_comparison_figure(frame, "makespan_ratio"))))
    chosen = _chosen_run(frame, run_index)
    if chosen is not None:
        sections.extend(_run_sections(frame, chosen, planner, embed))
    nav = " · ".join(f'<a href="#{a}">{html.escape(t.lower())}</a>' for a, t, _ in sections)
    body = "".join(f'<section id="{a}"><h2>{html.escape(t)}</h2>{b}</section>'
                   for a, t, b in sections)
    runs = frame["run_key"].nunique()
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>portsim study: {html.escape(study)}</title><style>{_CSS}</style></head>"
        f"<body><header><h1>portsim study report: {html.escape(study)}</h1>"
        f'<p class="description">{runs} run(s), {len(frame)} row(s) '
        f"(one per run and planner).</p></header><nav>{nav}</nav>{body}"
        '<footer class="hint"><p>Generated by portsim.</p></footer></body></html>\n'
    )


def _summary_table(frame: pd.DataFrame) -> str:
    counts = frame.groupby(["planner", "status"]).size().unstack(fill_value=0)
    columns = [str(c) for c in counts.columns]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["planner", *columns])
    rows = "".join(
        f'<tr><td class="name">{html.escape(str(name))}</td>'
        + "".join(f'<td class="num">{int(v)}</td>' for v in counts.loc[name]) + "</tr>"
        for name in counts.index)
    errors = frame[frame["status"] == "error"]["message"].dropna().unique()[:10]
    listed = "".join(f"<li>{html.escape(str(m))}</li>" for m in errors)
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            + (f"<p>Errors (first {len(errors)} distinct):</p><ul>{listed}</ul>"
               if listed else ""))


def _grid_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(GRID_PREFIX) and frame[c].nunique() > 1]


def _comparison_figure(frame: pd.DataFrame, measure: str) -> go.Figure:
    """Mean of ``measure`` per planner over the grid, std as error bars."""
    data = frame[frame["status"] == "ok"].copy()
    if measure == "makespan":
        data["value"] = [float(parse_rational(v)) if isinstance(v, str) else None
                         for v in data["makespan"]]
        title, axis = "Makespan of one operation", f"makespan ({TIME_UNIT})"
    elif measure == "makespan_ratio":
        data["value"] = data["makespan_ratio"].astype("float64")
        title = "Makespan / best makespan of the run (1 = the run's best planner)"
        axis = "makespan / best makespan of the run (ratio)"
    else:
        data["value"] = data["efficiency"].astype("float64")
        title = "Measured throughput / bound (1 = optimal steady state)"
        axis = f"measured throughput / bound (ratio of {THROUGHPUT_UNIT})"
    data = data[data["value"].notna()]
    grid = _grid_columns(frame)
    numeric = [c for c in grid if pd.api.types.is_numeric_dtype(frame[c])]
    x_col = numeric[0] if numeric else None
    others = [c for c in grid if c != x_col]
    figure = go.Figure()
    if x_col is None:
        data["x"] = ([", ".join(f"{c.removeprefix(GRID_PREFIX)}={v}" for c, v in zip(
            others, values, strict=True)) for values in data[others].itertuples(index=False)]
            if others else "all runs")
        x_title = "grid point"
    else:
        data["x"] = data[x_col].astype("float64")
        x_title = x_col.removeprefix(GRID_PREFIX)
    series = data["planner"].astype(str)
    if x_col is not None and others:
        labels = [", ".join(f"{c.removeprefix(GRID_PREFIX).rsplit('.', 1)[-1]}={v}"
                            for c, v in zip(others, values, strict=True))
                  for values in data[others].itertuples(index=False)]
        series = series + " (" + pd.Series(labels, index=data.index) + ")"
    data["series"] = series
    for name, group in data.groupby("series", sort=True):
        stats = group.groupby("x", sort=True)["value"].agg(["mean", "std", "count"])
        figure.add_trace(go.Scatter(
            x=list(stats.index), y=list(stats["mean"]), name=str(name),
            mode="lines+markers" if x_col is not None else "markers",
            error_y={"type": "data", "array": list(stats["std"].fillna(0.0))},
            hovertemplate=f"{html.escape(str(name))}<br>{x_title}=%{{x}}<br>mean=%{{y:.4g}}"
                          "<extra></extra>"))
    figure.update_layout(template=_TEMPLATE, title=title, xaxis_title=x_title,
                         yaxis_title=axis, legend_title="planner", height=460,
                         margin={"t": 60, "l": 70, "r": 20, "b": 60})
    if x_col is not None and len(data) and data["x"].min() > 0 and (
            data["x"].max() >= 100 * data["x"].min()):
        figure.update_xaxes(type="log", title_text=f"{x_title} (log scale)")
    if measure == "efficiency":
        figure.add_hline(y=1.0, line_dash="dot", line_color="#888",
                         annotation_text="bound")
    if measure == "makespan_ratio":
        figure.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="best")
    return figure


def _chosen_run(frame: pd.DataFrame, run_index: int | None) -> int | None:
    if run_index is not None:
        return run_index if (frame["run_index"] == run_index).any() else None
    for index, group in frame.groupby("run_index", sort=True):
        if (group["status"] == "ok").all():
            return int(str(index))
    ok = frame[frame["status"] == "ok"]
    return int(ok["run_index"].iloc[0]) if len(ok) else None


def _run_sections(frame: pd.DataFrame, index: int, planner: str | None,
                  embed: _FigureEmbedder) -> list[tuple[str, str, str]]:
    rows = frame[frame["run_index"] == index]
    document = json.loads(str(rows["scenario_document"].iloc[0]))
    scenario = scenario_from_dict(document, source=f"run {index}")
    grid = {c.removeprefix(GRID_PREFIX): rows[c].iloc[0] for c in frame.columns
            if c.startswith(GRID_PREFIX)}
    label = ", ".join(f"{k}={v}" for k, v in grid.items())
    label = f"run {index} ({label}, seed {rows['seed'].iloc[0]})" if label else f"run {index}"
    sections: list[tuple[str, str, str]] = []
    convergence = _convergence_figure(scenario, label)
    if convergence is not None:
        sections.append(("convergence", "Convergence to the bound", embed(convergence)))
    names = [p.name for p in scenario.planners]
    wanted = [planner] if planner is not None else names
    for name in wanted:
        spec = next((p for p in scenario.planners if p.name == name), PlannerSpec(name))
        try:
            outcome = run_planner(scenario, spec)
        except Exception:  # a planner that fails here already has its error row
            continue
        if outcome.plan is not None and outcome.plan.schedule is not None:
            figure = gantt_figure(outcome.plan.schedule, title=f"{name}, {label}")
            sections.append(("gantt", f"Schedule of {name}", embed(figure)))
            break
    sections.append(("platform", f"Platform of {label}",
                     embed(platform_figure(scenario.platform, scenario.operation))))
    return sections


def _convergence_figure(scenario: Scenario, label: str,
                        periods: Sequence[int] = CONVERGENCE_PERIODS) -> go.Figure | None:
    """completed(K) / (TP · K) over K, one line per planner, or None without an lp bound."""
    study = asymptotic_study(scenario, periods=periods)
    if study.bound is None or study.period is None:
        return None
    figure = go.Figure()
    for name in dict.fromkeys(r.planner for r in study.rows):
        rows = [r for r in study.rows if r.planner == name and r.ratio is not None]
        if rows:
            figure.add_trace(go.Scatter(
                x=[float(r.horizon) for r in rows], y=[float(r.ratio or 0) for r in rows],
                name=name, mode="lines+markers",
                customdata=[[r.completed, float(r.bound_times_horizon)] for r in rows],
                hovertemplate=(f"{name}<br>K=%{{x}}<br>ratio=%{{y:.4f}}<br>"
                               "completed=%{customdata[0]}<br>TP·K=%{customdata[1]:.4g}"
                               "<extra></extra>")))
    bound = Fraction(study.bound)
    figure.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="TP·K")
    figure.update_layout(
        template=_TEMPLATE, height=460, legend_title="planner",
        title=f"completed(K) / (TP·K) over horizon K, TP = {bound} — {label}",
        xaxis={"title": f"horizon K ({TIME_UNIT}, log scale)", "type": "log"},
        yaxis_title="completed(K) / (TP·K)",
        margin={"t": 60, "l": 70, "r": 20, "b": 60})
    return figure
