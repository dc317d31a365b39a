"""Open a report in headless Chromium and read back what the browser drew.

The reports' layout (titles, axis titles, legends) is computed by plotly.js in
the browser: the figure objects only say what was asked for.  :func:`drawn`
appends a small script to a copy of the page that measures, once every
figure is drawn, the boxes plotly laid out, and reads them back from the DOM
that ``chromium --dump-dom`` prints.  Used by the slow tests only; skipped
where no Chromium binary exists.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if Path("/usr/bin/chromium").exists() else None)

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium (Debian package chromium) is not installed")

# Without these flags Chromium waits on network look-ups (the network is closed here).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=20000")

# First in <head>, so that it hears the errors of every script of the page.
_LISTEN = """
<script>
window.__portsimErrors = [];
window.addEventListener('error', e => window.__portsimErrors.push(String(e.message)));
</script>
"""

_PROBE = """
<script>
window.addEventListener('load', () => setTimeout(() => {
  const box = (root, css) => { const e = root.querySelector(css);
    if (!e) return null; const b = e.getBoundingClientRect(); return b.width ? b : null; };
  const meet = (a, b) => !!(a && b && a.left < b.right && b.left < a.right
                            && a.top < b.bottom && b.top < a.bottom);
  const inside = (a, b) => !a || !b || (a.top >= b.top - 1 && a.bottom <= b.bottom + 1
                                        && a.left >= b.left - 1 && a.right <= b.right + 1);
  const figures = [...document.querySelectorAll('.plotly-graph-div')].map(d => {
    const svg = box(d, '.main-svg'), title = box(d, '.gtitle'), y = box(d, '.ytitle');
    return {title: (d.querySelector('.gtitle') || {}).textContent || '',
            drawn: !!svg, traces: d.querySelectorAll('.trace').length,
            title_meets_ytitle: meet(title, y), ytitle_inside: inside(y, svg),
            title_meets_legend: meet(title, box(d, '.legend')),
            // plotly gives a legend taller than the plot area a scroll bar
            legend_scrolls: !!box(d, '.legend .scrollbar'),
            // the range plotly laid out on the first x axis
            x_range: d._fullLayout && d._fullLayout.xaxis ? d._fullLayout.xaxis.range : null,
            // texts written at scatter points (node names, link costs) drawn on each other
            text_overlaps: (() => {
              const t = [...d.querySelectorAll('.textpoint text')].filter(e => e.textContent)
                .map(e => e.getBoundingClientRect()).filter(b => b.width);
              let n = 0;
              t.forEach((a, i) => t.slice(i + 1).forEach(b => { n += meet(a, b); }));
              return n; })()};
  });
  const out = document.createElement('pre');
  out.id = 'portsim-probe';
  const page = document.documentElement;
  out.textContent = JSON.stringify({figures, errors: window.__portsimErrors,
                                    overflow: page.scrollWidth - page.clientWidth});
  document.body.appendChild(out);
}, 500));
</script>
"""


def drawn(page: Path, work: Path, *, width: int = 1400) -> dict[str, Any]:
    """What Chromium drew of ``page`` in a window ``width`` pixels wide.

    ``figures``: per figure whether plotly drew it, its trace count and its
    boxes' overlaps (``text_overlaps``: pairs of texts written at scatter
    points, such as node names and link costs, that overlap), ``x_range``:
    the range of its first x axis as plotly laid it out; ``errors``: the
    page's JavaScript errors; ``overflow``: the pixels the page runs past the
    window's right edge.
    """
    assert CHROMIUM is not None
    probed = work / f"probed-{page.name}"
    text = page.read_text(encoding="utf-8")
    assert "<head>" in text
    assert "</body>" in text
    probed.write_text(text.replace("<head>", "<head>" + _LISTEN, 1)
                      .replace("</body>", _PROBE + "</body>", 1), encoding="utf-8")
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--window-size={width},3000",
                          f"--user-data-dir={work / 'profile'}",
                          "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=180, check=True).stdout
    found = dom.split('<pre id="portsim-probe">', 1)
    assert len(found) == 2, "the probe did not run: the page did not finish loading"
    return json.loads(html.unescape(found[1].split("</pre>", 1)[0]))
