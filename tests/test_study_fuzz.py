"""Fuzzing study files (issue 13, item 2): YAML aliases, huge numbers, huge grids.

Every generated file either runs (exit 0 or 1) or is refused with exactly one
line ``portsim: error: ...`` and exit 2: never a traceback, never a hang.  The
huge cases (alias bombs of 10^8 values and more, grids of 40^6 points,
10^8 replicates, integers beyond int64) are refused before anything is
expanded, so the example count is bounded by the running cases, which are
kept to a few runs of ``flat`` on at most three nodes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portsim.scenarios.cli import main

BASE = """\
  platform: {generator: {type: complete, n: 3}}
  operation: {type: broadcast, source: P0}
"""

HUGE_INTEGERS = [2**62, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, 10**400]


@st.composite
def alias_block(draw: st.DrawFn) -> tuple[str, str]:
    """A chain of anchors, each level ``fanout`` aliases of the one below.

    Small (at most 2,000 values once expanded: cheap to run) or huge (at
    least 10^8: must be refused unexpanded), placed where the study checks
    reject it (an unknown key) or where it is valid YAML of a valid key.
    Returns the lines under ``base:`` and the name of the top anchor.
    """
    huge = draw(st.booleans())
    fanout = draw(st.integers(8, 12) if huge else st.integers(1, 4))
    depth = draw(st.integers(8, 10) if huge else st.integers(1, 5))
    lines = [f"  a0: &a0 [{', '.join(['lol'] * fanout)}]"]
    for level in range(1, depth):
        lines.append(f"  a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n", f"a{depth - 1}"


@st.composite
def study_text(draw: st.DrawFn) -> str:
    """A study file: a valid base, maybe an alias block, a grid, replicates."""
    text = "name: fuzz\nbase:\n" + BASE
    planners = "[flat]"
    grid: list[str] = []
    kind = draw(st.sampled_from(["aliases", "numbers", "grid", "plain"]))
    if kind == "aliases":
        where = draw(st.sampled_from(["reused", "unknown", "grid"]))
        if where == "reused":  # an anchor reused as grid values: a valid study
            text += "  planners: &p [flat]\n"
            grid.append("  planners: [*p, *p]")
            planners = ""
        else:  # a chain of anchors under a key the checks reject, or as a grid value
            block, top = draw(alias_block())
            text += block
            if where == "grid":
                grid.append(f"  operation.size: [*{top}]")
    elif kind == "numbers":
        values = draw(st.lists(st.one_of(
            st.sampled_from(HUGE_INTEGERS), st.integers(1, 5),
            st.sampled_from([".inf", "-.inf", ".nan", "1e400", "1/3", "0", "-1", "2.5"])),
            min_size=1, max_size=3))
        grid.append(f"  operation.size: [{', '.join(str(v) for v in values)}]")
    elif kind == "grid":
        keys = draw(st.integers(1, 6))
        length = draw(st.sampled_from([1, 2, 40, 1000]))
        for key in range(keys):
            # Long lists go to keys the grid point check rejects: a valid grid of
            # a thousand platforms of up to a thousand nodes is a long study, not a
            # bad file.
            path = ("platform.generator.n" if key == 0 and length <= 2
                    else f"operation.size{key}")
            points = [2, 3][:length] if length <= 2 else list(range(2, 2 + length))
            grid.append(f"  {path}: [{', '.join(map(str, points))}]")
    if planners:
        text += f"  planners: {planners}\n"
    if grid:
        text += "grid:\n" + "\n".join(grid) + "\n"
    replicates = draw(st.sampled_from([1, 2, 10**8, 10**30, 0]))
    text += f"replicates: {replicates}\n"
    return text


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(study_text())
def test_a_study_file_runs_or_is_one_error_line(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        study_file = Path(folder) / "study.yaml"
        study_file.write_text(text)
        result = CliRunner().invoke(main, ["study", str(study_file), "--out",
                                           str(Path(folder) / "out"), "--workers", "1"])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        text, result.exception)
    assert "Traceback" not in result.output, text
    assert result.exit_code in (0, 1, 2), (text, result.output)
    if result.exit_code == 2:
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, (text, result.output)
        assert lines[0].startswith(f"portsim: error: {study_file}"), (text, result.output)
    else:
        assert "run(s)" in result.output, (text, result.output)
