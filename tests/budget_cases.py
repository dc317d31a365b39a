"""Shared test helper: a generation's budget passing at a chosen call, without a clock.

Used by the tests of the ``lp`` generations that stop at their budget
(:data:`~portsim.planners.lp._incremental.GENERATION_SHARE`): step 2 of the
allreduce (``test_lp_allreduce_rooted.py``) and the tree packings of broadcast
and allgather (``test_fabrics.py``).  Imported as a plain module (pytest puts
``tests/`` on the path).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest


def budget_passing_at(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str,
                      call: int) -> None:
    """Wrap ``module.name`` (called with the budget as its ``deadline`` keyword) so that
    the budget passes at its ``call``-th call: the generation stops where it checks
    next, deterministically, whatever the machine's speed."""
    plain = getattr(module, name)
    calls = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == call:
            object.__setattr__(kwargs["deadline"], "at", 0.0)  # the budget, not the call's
        return plain(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
