"""The look every figure of the reports shares: label escaping, titles, template, palette.

:mod:`portsim.reports.figures` and :mod:`portsim.reports.gantt` both draw
with these; the public ones (:func:`set_title`, :data:`TIME_UNIT`,
:data:`MODEBAR_SPACE`) are re-exported by :mod:`portsim.reports.figures`,
where users import them.
"""

from __future__ import annotations

import html
import textwrap
from fractions import Fraction
from typing import Final

import plotly.graph_objects as go
from plotly.colors import qualitative

from portsim.simulator import numbers
from portsim.simulator.numbers import approximate, format_rational

__all__ = [
    "EXACT_TEXT_CHARS",
    "MODEBAR_SPACE",
    "TEMPLATE",
    "TIME_UNIT",
    "escape_label",
    "palette",
    "readable_rational",
    "set_title",
]

TIME_UNIT: Final = "time units"
"""Unit of every time axis."""

MODEBAR_SPACE: Final = 36
"""Pixels kept free above every title for plotly's toolbar (the modebar), so it never
covers the title, whatever the width of the page."""

TEMPLATE: Final = "plotly_white"
"""The plotly template of every figure."""

_TITLE_WIDTH: Final = 90
"""Characters per title line: longer plain lines are broken (plotly does not wrap)."""
_TITLE_LINE: Final = 24
"""Pixels per line of a title (plotly's default 17 px font, with line spacing)."""
_LEGEND_ROW: Final = 34
"""Pixels of a horizontal legend placed between the title and the plot."""


def escape_label(text: object) -> str:
    """``text`` made safe for a plotly label (which renders a subset of HTML).

    Examples
    --------
    >>> escape_label("a<b> & c")
    'a&lt;b&gt; &amp; c'
    """
    return html.escape(str(text), quote=False)


EXACT_TEXT_CHARS: Final = numbers.EXACT_TEXT_CHARS
"""Longest exact rational a chart's title or note writes: a longer one (an ``lp``
bound of 70 digits over 70 digits) is one unbreakable word that runs past the chart's
right edge, and is written as a decimal instead (the limit of
:data:`portsim.simulator.numbers.EXACT_TEXT_CHARS`)."""


def readable_rational(value: Fraction | int) -> str:
    """``value`` as an exact rational when at most :data:`EXACT_TEXT_CHARS` long, else
    to 6 significant digits, with the length of the exact text it stands for.

    Computed in decimal arithmetic: no float overflows, however large the terms.

    Examples
    --------
    >>> readable_rational(Fraction(2, 9))
    '2/9'
    >>> readable_rational(Fraction(10**50 + 1, 3 * 10**50))
    '~0.333333 (exact: a rational of 103 characters)'
    """
    text = format_rational(value)
    if len(text) <= EXACT_TEXT_CHARS:
        return text
    return f"{approximate(Fraction(value), 6, 'g')} (exact: a rational of {len(text)} characters)"


def palette(count: int) -> list[str]:
    """Plotly's qualitative colours for ``count`` series (24 of them past 10)."""
    base = list(qualitative.Plotly)
    return base if count <= len(base) else list(qualitative.Dark24)


def _wrapped(title: str) -> str:
    """``title`` with its long plain lines broken at spaces (lines with markup are kept).

    Examples
    --------
    >>> _wrapped("a " * 50 + "<br><sup>b</sup>").count("<br>")
    2
    """
    lines = []
    for line in title.split("<br>"):
        if len(line) > _TITLE_WIDTH and "<" not in line:
            lines.extend(textwrap.wrap(line, _TITLE_WIDTH, break_long_words=False))
        else:
            lines.append(line)
    return "<br>".join(lines)


def set_title(figure: go.Figure, title: str, *, legend_on_top: bool = False) -> go.Figure:
    """Put ``title`` at the top left, below a strip kept free for plotly's toolbar.

    Parameters
    ----------
    figure:
        The figure (changed in place).
    title:
        Its title, already escaped; ``<br>`` starts a new line.
    legend_on_top:
        Also place a horizontal legend between the title and the plot.

    Returns
    -------
    plotly.graph_objects.Figure
        ``figure``: its title starts :data:`MODEBAR_SPACE` pixels below the top
        of the figure, where the toolbar sits (at the top right, shown on
        hover), and the top margin is large enough for every title line (and
        the legend), so neither the toolbar nor the legend covers the title.
    """
    title = _wrapped(title)
    lines = title.count("<br>") + 1
    top = MODEBAR_SPACE + _TITLE_LINE * lines + (_LEGEND_ROW if legend_on_top else 14)
    figure.update_layout(
        title={"text": title, "x": 0, "xref": "container", "xanchor": "left", "y": 1,
               "yref": "container", "yanchor": "top",
               "pad": {"t": MODEBAR_SPACE, "l": 20}},
        margin_t=top,
    )
    if legend_on_top:
        figure.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02,
                                     "x": 0, "xanchor": "left"})
    return figure
