"""The HTML report of a study: ``portsim report DIR [-o DIR/report.html]``.

One self-contained file (plotly.js inlined once) with:

- a summary table: rows per planner and status, and a table of the failed
  rows (status other than ``ok``, or a schedule the engine rejected) with
  their messages;
- planners compared: mean ``efficiency`` (measured throughput / the run's
  reference bound, the ``lp`` bound), mean makespan and mean
  ``makespan_ratio`` (makespan / the run's best makespan: the curves of
  Canon–Antoniu's Fig. 2, SNF / optimal for Liu–Kuo–Wang), over the grid
  (log scale when it spans two decades or more), with whiskers from the
  smallest to the largest value across replicates (never past a bound the
  values respect, such as a ratio >= 1);
- convergence of completed(K) / (TP · K) over the horizon K for one chosen
  run (:func:`portsim.reports.figures.convergence_figure`, the same chart as the run
  report's);
- a Gantt chart of the chosen run's schedule, per port, and the platform graph.

A planner row has one label everywhere, in the tables and the charts: its
name with its options, ``lp (split: False)``, as ``portsim run`` prints it
(:func:`row_labels`).  Series with identical values stay visible
(:func:`portsim.reports.figures.keep_series_visible`).

The chosen run (default: of the runs where every planner ran, the one where
the planners differ the most, worst over best; the page says which and why)
is rebuilt from its stored ``scenario_document`` and replayed again: reports
need no schedule in the store.
"""

from __future__ import annotations

import html
import json
import os
import textwrap
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from portsim.reports._style import escape_label
from portsim.reports.figures import (
    CONVERGENCE_PERIODS,
    TIME_UNIT,
    convergence_figure,
    distinct_labels,
    keep_series_visible,
    platform_figure,
    series_colours,
    set_title,
)
from portsim.reports.gantt import GanttWindow, gantt_figure, gantt_note
from portsim.reports.html import PAGE_CSS, Cell, FigureEmbedder, convergence_study, html_table
from portsim.scenarios.loader import Scenario, scenario_from_dict
from portsim.scenarios.output import write_text
from portsim.scenarios.runner import PlannerRun, as_label, run_planner
from portsim.scenarios.study.spec import GRID_PREFIX
from portsim.scenarios.study.store import (
    exact_makespan_ratios,
    load_results,
    study_folder,
    study_writer,
    valid_rows,
)
from portsim.simulator.errors import PortsimError, ScenarioError
from portsim.simulator.numbers import format_rational

__all__ = ["CONVERGENCE_PERIODS", "MAX_FAILED_ROWS", "render_study_report", "row_labels",
           "write_study_report"]

MAX_FAILED_ROWS: Final = 200
"""At most this many failed rows are listed (the count is always given)."""

_TEMPLATE: Final = "plotly_white"
_LABEL: Final = "label"
_TICK_WIDTH: Final = 28
"""Characters per line of a grid point's label under a comparison chart."""
_MAX_GRID_TICKS: Final = 20
"""Up to this many grid values, a linear axis ticks at each of them."""
_TICK_LINE: Final = 15
"""Pixels per line of those labels."""


def write_study_report(directory: str | os.PathLike[str],
                       out: str | os.PathLike[str] | None = None, *,
                       run_index: int | None = None, planner: str | None = None,
                       progress: Callable[[str], None] | None = None,
                       gantt_window: GanttWindow | None = None) -> Path:
    """Write the HTML report of the study stored in ``directory``.

    Parameters
    ----------
    directory:
        The study's output folder, or its ``results.parquet`` dataset.
    out:
        The HTML file (default ``report.html`` in the study's output folder).
    run_index, planner:
        The run whose convergence, platform and schedule are drawn, and the
        planner of the Gantt chart, by label (``lp (split: False)``) or name
        (defaults: of the runs where every planner ran, the one where the
        planners differ the most, the largest makespan or measured throughput
        over the smallest, the first among equals; its first planner with a
        schedule).
    progress:
        Told each long step before it starts: the chosen run's planners are
        planned and replayed again for its convergence chart (as
        :func:`portsim.reports.html.convergence_study` tells them), and the
        Gantt chart's planner once more.
    gantt_window:
        Draw only this part of the time axis in the Gantt chart (``portsim
        report DIR --gantt-window START:END``); a line above the chart says
        how many of the schedule's events run in it, as in the run report
        (:func:`portsim.reports.gantt.gantt_note`).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    FileNotFoundError
        When ``directory`` holds no results.
    ScenarioError
        When ``run_index`` or ``planner`` is not in the study; the message
        lists the valid choices.
    """
    path = Path(out) if out is not None else study_folder(directory) / "report.html"
    frame = load_results(directory)
    writer = study_writer(study_folder(directory))
    if writer is not None:
        # a report of the runs stored so far, which the page and a warning say
        warnings.warn(f"{study_folder(directory)}: a study (process {writer}) is still "
                      f"writing into this folder: the report holds only the "
                      f"{frame['run_key'].nunique()} run(s) stored so far", stacklevel=2)
    try:
        text = render_study_report(frame, run_index=run_index, planner=planner,
                                   progress=progress, gantt_window=gantt_window,
                                   writer=writer)
    except ScenarioError as err:
        raise err.with_source(str(directory)) from None
    write_text(path, text)
    return path


def row_labels(frame: pd.DataFrame) -> pd.Series:
    """The label of each row of :func:`~portsim.scenarios.study.store.load_results`' frame.

    The planner's name with its options, as ``portsim run`` prints it
    (:attr:`portsim.scenarios.runner.PlannerRun.label`), e.g. ``lp (split: False)``;
    a planner listed twice in a run with the same options gets ``" #2"``
    (:func:`portsim.reports.figures.distinct_labels`).  It is the row's stored
    ``label`` (options in the study file's order, as ``portsim run`` and the
    study's closing lines print them); a store of portsim 0.2.0, without
    that column, gives the options in the order it keeps them (sorted by key).
    """
    pairs = list(zip(frame["planner"].astype(str), frame["planner_options"], strict=True))
    stored = frame["label"] if "label" in frame else pd.Series(pd.NA, index=frame.index)
    # one label per planner and options, also for a 0.2.0 store resumed by 0.3.0
    named = {pair: str(label) for pair, label in zip(pairs, stored, strict=True)
             if isinstance(label, str) and label}
    for pair in dict.fromkeys(pairs):
        named.setdefault(pair, _option_label(*pair))
    base = [named[pair] for pair in pairs]
    labels = list(base)
    for rows in frame.groupby("run_key", sort=False).indices.values():
        for row, label in zip(rows, distinct_labels([base[r] for r in rows]), strict=True):
            labels[row] = label
    return pd.Series(labels, index=frame.index, dtype=object)


def _option_label(name: str, options: object) -> str:
    """The label of a planner with its stored options (JSON text)."""
    parsed = json.loads(options) if isinstance(options, str) and options else {}
    return PlannerRun(name, "", "", "", options=tuple(parsed.items())).label


def render_study_report(frame: pd.DataFrame, *, run_index: int | None = None,
                        planner: str | None = None,
                        progress: Callable[[str], None] | None = None,
                        gantt_window: GanttWindow | None = None,
                        writer: int | None = None) -> str:
    """The HTML text of :func:`write_study_report`, from :func:`load_results`' frame.

    ``progress`` is told each long step, and ``gantt_window`` is the part of
    the time axis the Gantt chart draws, as for :func:`write_study_report`;
    ``writer``: the process id of a study still writing into the folder
    (:func:`~portsim.scenarios.study.store.study_writer`), which the page names
    beside the count of runs, as the runs stored so far.

    Raises
    ------
    ScenarioError
        When ``run_index`` or ``planner`` is not in the study (path
        ``--run`` or ``--planner``, the valid choices in the message).
    """
    frame = frame.copy()
    frame[_LABEL] = row_labels(frame)
    chosen, why = _chosen_run(frame, run_index, planner)
    embed = FigureEmbedder()
    colours = series_colours(list(dict.fromkeys(frame[_LABEL])))
    study = str(frame["study"].iloc[0]) if len(frame) else "study"
    sections = [("summary", "Summary", _summary_table(frame))]
    failed = _failed_table(frame)
    if failed:
        sections.append(("failed", "Failed runs", failed))
    caption = _efficiency_caption(frame)
    if frame["efficiency"].notna().any() or not frame["makespan"].notna().any():
        sections.append(("efficiency", "Planners compared: throughput",
                         embed(_comparison_figure(frame, "efficiency", colours)) + caption))
    if frame["makespan"].notna().any():
        sections.append(("makespan", "Planners compared: makespan",
                         embed(_comparison_figure(frame, "makespan", colours))))
        sections.append(("ratio", "Planners compared: makespan over the best of the run",
                         embed(_comparison_figure(frame, "makespan_ratio", colours))))
    if chosen is not None:
        sections.extend(_run_sections(frame, chosen, planner, embed, colours, progress, why,
                                      gantt_window))
    # lower-case the first letter only: a title may name a planner (`lp (split: False)`)
    # or a grid value (`target: "P0"`), which keep their case
    nav = " · ".join(f'<a href="#{a}">{html.escape(t[:1].lower() + t[1:])}</a>'
                     for a, t, _ in sections)
    body = "".join(f'<section id="{a}"><h2>{html.escape(t)}</h2>{b}</section>'
                   for a, t, b in sections)
    runs = frame["run_key"].nunique()
    still = ("" if writer is None else
             f' <span class="warn">A study (process {writer}) was still writing into its '
             f"folder: these are the runs stored by then, not the whole study.</span>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>portsim study: {html.escape(study)}</title><style>{PAGE_CSS}</style></head>"
        f"<body><header><h1>portsim study report: {html.escape(study)}</h1>"
        f'<p class="description">{runs} run(s), {len(frame)} row(s) '
        f"(one per run and planner).{still}</p></header><nav>{nav}</nav>{body}"
        '<footer class="hint"><p>Generated by portsim.</p></footer></body></html>\n'
    )


def _efficiency_caption(frame: pd.DataFrame) -> str:
    """Why valid rows are missing from the efficiency chart (a rejected schedule is
    in Failed runs): no reference bound in their run, or no measured throughput (a
    series replay cut before the horizon, ``replay_cut``, or not measured);
    whether the planners of a run were measured over different horizons; and
    how many rows compare with a bound not proven optimal."""
    missing = frame["efficiency"].isna() & valid_rows(frame)
    bounded = frame["reference_bound"].notna()
    cut = missing & bounded & (frame["replay_cut"].eq(True).fillna(False)
                               if "replay_cut" in frame else False)
    causes = (
        (missing & ~bounded, "have no reference bound (no lp bound for that run)"),
        (cut, "have no measured throughput: the replay of their series was cut before "
              "the horizon (replay_cut; see their notes)"),
        (missing & bounded & ~cut, "have no measured throughput (see their notes)"),
    )
    lines = []
    for rows, why in causes:
        if rows.any():
            labels = ", ".join(dict.fromkeys(frame.loc[rows, _LABEL].astype(str)))
            lines.append(f"{int(rows.sum())} ok row(s) ({labels}) {why} and are left out.")
    # Each planner's default horizon is its own (100 makespans, 100 periods): a
    # start-up weighs more over a shorter one, and the chart would not show why.
    drawn = frame[frame["efficiency"].notna() & valid_rows(frame)]
    mixed = [rows for _, rows in drawn.groupby("run_index", sort=True)
             if rows["horizon"].nunique() > 1]
    if mixed:
        first = mixed[0]
        horizons = ", ".join(f"{label} {horizon}" for label, horizon in
                             zip(first[_LABEL].astype(str), first["horizon"], strict=True))
        lines.append(f"{len(mixed)} run(s) measure their planners over different horizons "
                     f"(run {int(first['run_index'].iloc[0])}: {horizons}): by default each "
                     f"planner's own, 100 makespans or at least 100 periods, over which a "
                     f"start-up weighs more or less. A horizon in the study's base measures "
                     f"them all over one.")
    # A reference bound that is only the upper end of a certified interval makes
    # every efficiency of its run a lower end (older stores lack the column).
    if "reference_bound_exact" in frame:
        loose = drawn[drawn["reference_bound_exact"].eq(False).fillna(False)]
        if not loose.empty:
            runs = loose["run_index"].nunique()
            lines.append(f"{runs} run(s) ({len(loose)} row(s)) compare with a reference bound "
                         f"that is only the upper end of a certified interval "
                         f"(reference_bound_exact false): their efficiencies are lower ends.")
    return "".join(f'<p class="hint">{html.escape(line)}</p>' for line in lines)


# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------


def _summary_table(frame: pd.DataFrame) -> str:
    """Rows per planner label and status, labels in the order of the study."""
    counts = frame.groupby([_LABEL, "status"], sort=False).size().unstack(fill_value=0)
    columns = [str(c) for c in counts.columns]
    rows = ([Cell(str(label), "name"), *(Cell(str(int(v)), "num") for v in counts.loc[label])]
            for label in counts.index)
    return html_table(["planner", *columns], rows, "summary")


HEADING_VALUE_WIDTH = 80
"""Characters of one grid value in a run's headings and links (a grid over whole
platforms wrote about 1,300 characters of JSON into each); the failed-runs table
keeps the whole value."""


def _grid_text(frame: pd.DataFrame, row: pd.Series, *, width: int | None = None) -> str:
    """``key=value, ...`` of ``row``'s grid point, each value cut to ``width``
    characters (an ellipsis ending it) when given."""
    def shown(value: object) -> str:
        text = str(value)
        return text if width is None or len(text) <= width else text[:width - 1] + "…"
    return ", ".join(f"{c.removeprefix(GRID_PREFIX)}={shown(row[c])}" for c in frame.columns
                     if c.startswith(GRID_PREFIX))


def _failed_table(frame: pd.DataFrame) -> str:
    """The rows that failed (status not ``ok``, or a rejected schedule), with messages."""
    failed = frame[~valid_rows(frame)]
    if failed.empty:
        return ""
    shown = failed.head(MAX_FAILED_ROWS)

    def status(row: pd.Series) -> Cell:
        if row["status"] == "ok":
            return Cell(f"ok, schedule rejected ({int(row['violation_count'])} violation(s))",
                        "bad")
        return Cell(str(row["status"]), "bad" if row["status"] == "error" else "warn")

    rows = ([Cell(str(row["run_index"]), "num"), Cell(_grid_text(frame, row)),
             Cell(str(row["seed"]), "num"), Cell(str(row[_LABEL]), "name"), status(row),
             Cell("" if pd.isna(row["message"]) else str(row["message"]), "message")]
            for _, row in shown.iterrows())
    runs = failed["run_key"].nunique()
    head = (f"<p>{len(failed)} row(s) of {runs} run(s) did not give a valid result; "
            "they are left out of the charts.</p>")
    more = len(failed) - len(shown)
    tail = (f'<p class="warn">… and {more:,} more failed row(s), not listed (all are in '
            "results.parquet).</p>" if more > 0 else "")
    return head + html_table(("run", "grid point", "seed", "planner", "status", "message"),
                             rows, "failed") + tail


# ---------------------------------------------------------------------------
# comparison charts
# ---------------------------------------------------------------------------


def _grid_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith(GRID_PREFIX) and frame[c].nunique() > 1]


def _comparison_figure(frame: pd.DataFrame, measure: str,
                       colours: dict[str, str]) -> go.Figure:
    """Mean of ``measure`` per planner over the grid, min-max whiskers across replicates."""
    # The rows the Failed runs table does not list: ok, and not rejected by
    # the strict replay (a rejected schedule's makespan is the planner's word).
    valid = valid_rows(frame)
    data = frame[valid].copy()
    data["exact"] = _exact_values(frame, data, measure)
    if measure == "makespan":
        data["value"] = [float(Fraction(v)) if isinstance(v, str) else None
                         for v in data["makespan"]]
        title, axis = "Makespan of one operation", f"makespan ({TIME_UNIT})"
    elif measure == "makespan_ratio":
        data["value"] = data["makespan_ratio"].astype("float64")
        title = "Makespan / best makespan of the run (1 = the run's best planner)"
        axis = "makespan / best makespan of the run (ratio)"
    else:
        data["value"] = data["efficiency"].astype("float64")
        title = "Measured throughput / bound (1 = optimal steady state)"
        axis = "measured throughput / bound (ratio)"
    data = data[data["value"].notna()]
    grid = _grid_columns(frame)
    # a boolean key (operation.commutative) is two categories, not an axis from 0 to 1
    numeric = [c for c in grid if pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])]
    x_col = numeric[0] if numeric else None
    others = [c for c in grid if c != x_col]
    figure = go.Figure()
    categories: list[str] = []
    if x_col is None:
        data["x"] = ([", ".join(f"{c.removeprefix(GRID_PREFIX)}={v}" for c, v in zip(
            others, values, strict=True)) for values in data[others].itertuples(index=False)]
            if others else "all runs")
        x_title = "grid point"
        # The grid's order (runs are numbered grid point by grid point), not the
        # alphabetical order of the labels.
        categories = list(dict.fromkeys(data.sort_values("run_index", kind="stable")["x"]))
    else:
        data["x"] = data[x_col].astype("float64")
        x_title = x_col.removeprefix(GRID_PREFIX)
    series = data[_LABEL].astype(str)
    if x_col is not None and others:
        labels = [", ".join(f"{c.removeprefix(GRID_PREFIX).rsplit('.', 1)[-1]}={v}"
                            for c, v in zip(others, values, strict=True))
                  for values in data[others].itertuples(index=False)]
        series = series + " [" + pd.Series(labels, index=data.index) + "]"
    data["series"] = series
    trace_colours: dict[str, str] = {}
    order = {label: i for i, label in enumerate(dict.fromkeys(frame[_LABEL]))}
    groups = sorted(data.groupby([_LABEL, "series"], sort=False),
                    key=lambda item: (order[item[0][0]], str(item[0][1])))
    for (label, name), group in groups:
        stats = group.groupby("x", sort=True)["value"].agg(["mean", "min", "max", "count"])
        if categories:
            stats = stats.reindex([c for c in categories if c in stats.index])
        mean = stats["mean"].to_numpy(dtype=float)
        # whiskers from the smallest to the largest value: a ratio >= 1 stays >= 1
        above = np.maximum(stats["max"].to_numpy(dtype=float) - mean, 0.0)
        below = np.maximum(mean - stats["min"].to_numpy(dtype=float), 0.0)
        escaped = escape_label(name)
        trace_colours[escaped] = colours.get(str(label), "#444")
        exact = group.groupby("x", sort=True)["exact"].agg(list).reindex(stats.index)
        figure.add_trace(go.Scatter(
            x=list(stats.index), y=list(mean), name=escaped,
            mode="lines+markers" if x_col is not None else "markers",
            error_y={"type": "data", "symmetric": False, "array": list(above),
                     "arrayminus": list(below)},
            # the exact mean, min and max where every value is an exact rational,
            # the float beside (plotly would only write the floats)
            customdata=[[*_stats_texts(values, row), int(row["count"])]
                        for values, (_, row) in zip(exact, stats.iterrows(), strict=True)],
            hovertemplate=(f"{escaped}<br>{escape_label(x_title)}=%{{x}}"
                           "<br>mean=%{customdata[0]}<br>min=%{customdata[1]}, "
                           "max=%{customdata[2]}<br>%{customdata[3]} run(s)<extra></extra>")))
    figure.update_layout(template=_TEMPLATE, xaxis_title=x_title,
                         yaxis_title=axis, legend_title="planner", height=480,
                         margin={"l": 70, "r": 20, "b": 60})
    if x_col is None:
        figure.update_layout(scattermode="group")  # side by side at each grid point
        # Long grid points (a generator's JSON) written on a slant take the height of
        # the plot area, and the y-axis title then runs over the chart's title: write
        # them level, on several lines, and give those lines room below the chart.
        ticks = [_tick_label(c) for c in categories]
        extra = _TICK_LINE * max((t.count("<br>") for t in ticks), default=0)
        figure.update_layout(height=480 + extra, margin_b=60 + extra)
        figure.update_xaxes(categoryorder="array", categoryarray=categories, tickangle=0,
                            tickmode="array", tickvals=categories, ticktext=ticks)
    if x_col is not None and len(data) and data["x"].min() > 0 and (
            data["x"].max() >= 100 * data["x"].min()):
        figure.update_xaxes(type="log", title_text=f"{x_title} (log scale)")
    elif x_col is not None and len(data):
        # A linear axis ticks at plotly's round numbers (10.5 nodes for n in 10..14):
        # tick at the grid's own values when they are few.
        points = sorted(set(data["x"]))
        if len(points) <= _MAX_GRID_TICKS:
            figure.update_xaxes(tickmode="array", tickvals=points,
                                ticktext=[f"{v:g}" for v in points])
    if measure == "efficiency":
        figure.add_hline(y=1.0, line_dash="dot", line_color="#888",
                         annotation_text="bound")
    if measure == "makespan_ratio":
        figure.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="best")
    set_title(figure, f"{title}<br><sup>mean over the replicates (seeds); whiskers from the "
                      "smallest to the largest value</sup>")
    never = [str(label) for label in dict.fromkeys(frame[_LABEL])
             if not valid[frame[_LABEL] == label].any()]
    notes = ([f"not drawn, no valid row: {escape_label(', '.join(never))} (see Failed runs)"]
             if never else [])
    # Valid rows without the figure (a periodic schedule has no makespan; no
    # bound, no efficiency): say so rather than leave the planner out silently.
    drawn = set(data[_LABEL].astype(str))
    blank = [str(label) for label in dict.fromkeys(frame[_LABEL])
             if str(label) not in drawn and str(label) not in never]
    if blank and measure != "efficiency":  # the efficiency chart's caption counts those
        notes.append(f"not drawn, no makespan: {escape_label(', '.join(blank))}")
    keep_series_visible(figure, trace_colours, notes=notes)
    return figure


_MAX_EXACT_CHARS: Final = 40
"""Longest exact rational a hover writes (a mean over many replicates can have a huge
denominator); a longer one is replaced by a note giving its length."""


def _exact_values(frame: pd.DataFrame, data: pd.DataFrame, measure: str
                  ) -> list[Fraction | None]:
    """The exact value of ``measure`` of each row of ``data`` (``frame``'s valid rows),
    ``None`` where it is not exact.

    A makespan is stored exact; ``makespan_ratio`` is the store's own ratio,
    exact (:func:`~portsim.scenarios.study.store.exact_makespan_ratios`);
    ``efficiency`` is the exact measured throughput over the exact reference
    bound, where the store has both (a store of portsim 0.2.0 has no exact
    measured throughput).
    """
    def parsed(column: str) -> list[Fraction | None]:
        if column not in data:
            return [None] * len(data)
        # the store's exact strings, written by portsim: not capped at 10^18 as inputs are
        return [Fraction(v) if isinstance(v, str) and v else None for v in data[column]]

    if measure == "makespan":
        return parsed("makespan")
    if measure == "makespan_ratio":
        return list(exact_makespan_ratios(frame).loc[data.index])
    return [m / b if m is not None and b is not None and b > 0 else None
            for m, b in zip(parsed("measured_throughput_exact"), parsed("reference_bound"),
                            strict=True)]


def _value_text(exact: Fraction | None, value: float) -> str:
    """``"3/2 (1.5)"``: the exact value and its float, or the float alone when not exact.

    Examples
    --------
    >>> _value_text(Fraction(9, 8), 1.125), _value_text(Fraction(4), 4.0)
    ('9/8 (1.125)', '4')
    >>> _value_text(None, 0.123456)
    '0.1235'
    """
    shown = f"{value:.4g}"
    if exact is None:
        return shown
    text = format_rational(exact)
    if len(text) > _MAX_EXACT_CHARS:
        return f"{shown} (exact rational of {len(text)} characters, not written)"
    return text if text == shown else f"{text} ({shown})"


def _stats_texts(values: Sequence[Fraction | None], row: pd.Series) -> list[str]:
    """The hover texts of the mean, min and max of one point, exact where all ``values`` are."""
    floats = [float(row["mean"]), float(row["min"]), float(row["max"])]
    if not values or any(v is None for v in values):
        return [_value_text(None, f) for f in floats]
    exact = [v for v in values if v is not None]
    figures = (sum(exact, Fraction(0)) / len(exact), min(exact), max(exact))
    return [_value_text(e, f) for e, f in zip(figures, floats, strict=True)]


# ---------------------------------------------------------------------------
# the chosen run
# ---------------------------------------------------------------------------


def _tick_label(category: str) -> str:
    """A grid point's label on lines of at most :data:`_TICK_WIDTH` characters (escaped)."""
    lines = textwrap.wrap(category, _TICK_WIDTH, break_long_words=False) or [category]
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def _index_ranges(values: Sequence[int]) -> str:
    """``0-3, 7, 9-12``: sorted integers as ranges.

    Examples
    --------
    >>> _index_ranges([9, 0, 1, 2, 3, 7, 10, 11, 12])
    '0-3, 7, 9-12'
    """
    spans: list[list[int]] = []
    for value in sorted(set(values)):
        if spans and value == spans[-1][1] + 1:
            spans[-1][1] = value
        else:
            spans.append([value, value])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _planner_rows(rows: pd.DataFrame, planner: str) -> pd.DataFrame:
    """The rows of ``planner``, by label (``split: false`` as the scenario file
    writes it, or ``split: False`` as the label prints it), else by name."""
    exact = rows[rows[_LABEL] == as_label(planner)]
    return exact if len(exact) else rows[rows["planner"] == planner]


def _spread(rows: pd.DataFrame) -> tuple[Fraction, str] | None:
    """How far apart a run's planners are, worst over best (exact), and of what.

    The largest makespan over the smallest (the run's largest
    ``makespan_ratio``) when two valid rows have a makespan, else the largest
    exact measured throughput over the smallest; ``None`` with fewer than
    two positive values.
    """
    valid = rows[valid_rows(rows)]
    for column, what in (("makespan", "makespan, longest over shortest"),
                         ("measured_throughput_exact",
                          "measured throughput, highest over lowest")):
        if column not in valid:
            continue
        values = [Fraction(v) for v in valid[column] if isinstance(v, str) and v]
        if len(values) >= 2 and min(values) > 0:
            return max(values) / min(values), what
    return None


def _chosen_run(frame: pd.DataFrame, run_index: int | None,
                planner: str | None) -> tuple[int | None, str]:
    """The run drawn in detail, and why it (a run or planner not in the study is an error).

    By default, of the runs where every planner ran (with ``planner``, the
    runs that have it), the one where the planners differ the most
    (:func:`_spread`), the first among equals: where the study's comparison
    says the most, at the smallest grid point that shows it.  Not the
    study's first run (``n = 2``: trivial), nor its largest grid point,
    which may not even rebuild (canon-antoniu-fig2's complete platform of
    10,000 nodes has more links than a generator makes) and takes long to
    replay and draw.  Without such a run, the first where every planner ran.
    A planner that ran in no run of the study (``binomial`` listed for a
    broadcast) is left aside: with it, no run would have every planner.
    """
    if run_index is not None and not (frame["run_index"] == run_index).any():
        raise ScenarioError(f"no such run in the study; valid runs: "
                            f"{_index_ranges([int(i) for i in frame['run_index'].unique()])}",
                            path="--run", value=run_index)
    rows = frame if run_index is None else frame[frame["run_index"] == run_index]
    if planner is not None and _planner_rows(rows, planner).empty:
        where = "the study" if run_index is None else f"run {run_index}"
        valid = list(dict.fromkeys(rows[_LABEL].astype(str)))
        raise ScenarioError(f"no such planner in {where}; valid planners: "
                            f"{', '.join(valid)}", path="--planner", value=planner)
    if run_index is not None:
        return run_index, "chosen with --run"
    wanted = frame if planner is None else _planner_rows(frame, planner)
    wanted_runs = set(wanted["run_index"])
    ran = set(frame.loc[frame["status"] == "ok", _LABEL])
    never = list(dict.fromkeys(label for label in frame[_LABEL] if label not in ran))
    aside = f" ({', '.join(map(str, never))} ran in no run)" if never and ran else ""
    complete: list[int] = []
    spreads: list[tuple[Fraction, int, str]] = []
    for index, group in frame[frame[_LABEL].isin(ran)].groupby("run_index", sort=True):
        if index in wanted_runs and (group["status"] == "ok").all():
            complete.append(int(str(index)))
            found = _spread(group)
            if found is not None:
                spreads.append((found[0], -int(str(index)), found[1]))
    if spreads:
        spread, minus_index, what = max(spreads)
        if spread == 1:
            return -minus_index, (f"by default, the first run where every planner ran{aside}: "
                                  f"the planners agree on every run ({what}: 1)")
        return -minus_index, (f"by default, the run where the planners differ the most "
                              f"({what}: {format_rational(spread)}; the first such run){aside}")
    if complete:
        return complete[0], f"by default, the first run where every planner ran{aside}"
    ok = wanted[wanted["status"] == "ok"]
    if len(ok):
        return int(ok["run_index"].iloc[0]), "by default, the first run where a planner ran"
    if planner is not None and len(wanted):
        return int(wanted["run_index"].iloc[0]), f"the first run of {planner}"
    return None, ""


def _run_sections(frame: pd.DataFrame, index: int, planner: str | None,
                  embed: FigureEmbedder, colours: dict[str, str],
                  progress: Callable[[str], None] | None = None,
                  why: str = "", gantt_window: GanttWindow | None = None,
                  ) -> list[tuple[str, str, str]]:
    rows = frame[frame["run_index"] == index].sort_values("planner_index")
    label = _grid_text(frame, rows.iloc[0], width=HEADING_VALUE_WIDTH)
    label = f"run {index} ({label}, seed {rows['seed'].iloc[0]})" if label else f"run {index}"
    usable = rows[rows["status"] != "error"]
    if usable.empty:
        return [("run", label.capitalize(), '<p class="hint">No planner of this run gave a '
                 'result (see <a href="#failed">failed runs</a>).</p>')]
    labels = [str(x) for x in usable[_LABEL]]
    document = json.loads(str(rows["scenario_document"].iloc[0]))
    # the run's planners that gave a result, in their order (one that failed may
    # not even load)
    entries = document.get("planners") if isinstance(document, dict) else None
    listed = entries if isinstance(entries, list) else []
    document = {**document, "planners": [
        listed[i] if 0 <= i < len(listed) else {"name": name} for i, name in
        zip(usable["planner_index"].astype(int), usable["planner"].astype(str), strict=True)]}
    try:
        scenario = scenario_from_dict(document, source=f"run {index}")
    except PortsimError as err:
        return [("run", label.capitalize(),
                 f'<p class="bad">The scenario of this run does not load: '
                 f"{html.escape(str(err))}</p>")]
    chosen = (f'<p class="hint" id="chosen-run">The charts below draw {html.escape(label)}'
              f"{', ' + html.escape(why) if why else ''}; <code>portsim report DIR --run I"
              "</code> draws run I.</p>")
    failed = _failed_bound(rows)
    convergence = (f'<p class="hint">No convergence chart for {html.escape(label)}: its lp '
                   f"bound failed in the study ({html.escape(failed)}); the chart does not "
                   "plan lp again with other options.</p>" if failed is not None else
                   _convergence_html(scenario, labels, label, embed, colours, progress))
    sections = [("convergence", "Convergence to the bound", chosen + convergence)]
    sections.append(_gantt_section(rows, scenario, planner, label, embed, progress,
                                   gantt_window))
    sections.append(("platform", f"Platform of {label}",
                     embed(platform_figure(scenario.platform, scenario.operation))))
    return sections


def _failed_bound(rows: pd.DataFrame) -> str | None:
    """The status and message of the run's ``lp`` row that would give the chart's bound
    (the first not restricted to a tree or a DAG, as
    :func:`~portsim.scenarios.asymptotic.bound_plan` picks), when it failed; else
    ``None``.  The chart draws the run's planners that gave a result: without this,
    the failed ``lp`` would be left out and a plain one planned in its place."""
    for _, row in rows.iterrows():
        options = json.loads(str(row["planner_options"]) or "{}")
        if row["planner"] == "lp" and options.get("restrict", "graph") == "graph":
            if row["status"] != "error":
                return None
            message = "" if pd.isna(row["message"]) else f": {row['message']}"
            return f"{row[_LABEL]}, {row['status']}{message}"
    return None


def _convergence_html(scenario: Scenario, labels: Sequence[str], run: str,
                      embed: FigureEmbedder, colours: dict[str, str],
                      progress: Callable[[str], None] | None = None) -> str:
    """The convergence chart of the chosen run, or why there is none."""
    try:
        study, note = convergence_study(scenario, progress=progress)
    except PortsimError as err:
        study, note = None, str(err)
    figure = None if study is None else convergence_figure(
        study, labels, subtitle=run, colours=colours, notes=[note] if note else [])
    if figure is not None:
        return embed(figure)
    why = note if study is None else "; ".join(study.problems) or "no lp bound"
    return f'<p class="hint">No convergence chart for {html.escape(run)}: {html.escape(why)}.</p>'


def _gantt_section(rows: pd.DataFrame, scenario: Scenario, planner: str | None, label: str,
                   embed: FigureEmbedder, progress: Callable[[str], None] | None = None,
                   window: GanttWindow | None = None) -> tuple[str, str, str]:
    """The schedule of the chosen planner (default: the first with one), of ``window`` only
    if given, below the line of :func:`~portsim.reports.gantt.gantt_note`, if any."""
    usable = list(rows.loc[rows["status"] != "error", _LABEL])
    candidates = rows if planner is None else _planner_rows(rows, planner)
    tried: list[str] = []
    for _, row in candidates.iterrows():
        name = str(row[_LABEL])
        if row["status"] != "ok":
            tried.append(f"{name}: {row['status']}")
            continue
        spec = scenario.planners[usable.index(name)]
        if progress is not None:
            progress(f"{name}: planning for the Gantt chart")
        try:
            outcome = run_planner(scenario, spec)
        except PortsimError as err:
            tried.append(f"{name}: {err}")
            continue
        if outcome.plan is not None and outcome.plan.schedule is not None:
            schedule = outcome.plan.schedule
            found = gantt_note(schedule, window)
            note = ("" if found is None else
                    f'<p class="{found[0]}">{html.escape(found[1])}</p>')
            figure = gantt_figure(schedule, title=f"{name}, {label}",
                                  violations=outcome.violations, window=window)
            return ("gantt", f"Schedule of {name}", note + embed(figure))
        tried.append(f"{name}: no schedule")
    why = "; ".join(tried) or "no planner"
    return ("gantt", "Schedule", f'<p class="hint">No schedule to draw for {html.escape(label)}'
                                 f" ({html.escape(why)}).</p>")
