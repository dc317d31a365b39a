"""The bundled examples as pytest parameters, the slow ones marked ``slow``.

Tests that run every planner on every bundled example take them from here, so
an example whose ``lp`` takes more than a few seconds (the fabric examples:
column generation on 30+ nodes) leaves the default suite but stays in the
slow one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "scenarios" / "examples"

SLOW_EXAMPLES = frozenset({"allgather-dgx-a100", "broadcast-mi250"})
"""Examples whose ``lp`` run takes well over 5 s (see benchmarks/fabrics.py)."""


def example_params(paths: list[Path] | None = None) -> list[Any]:
    """One ``pytest.param`` per example (id = its stem), slow ones marked."""
    if paths is None:
        paths = sorted(EXAMPLES_DIR.glob("*.yaml"))
    return [pytest.param(p, id=p.stem,
                         marks=pytest.mark.slow if p.stem in SLOW_EXAMPLES else ())
            for p in paths]
