"""Shared test helper: the allreduce relaxation of a platform, solved once a session.

The relaxation (``N`` per-destination SSR(G) copies,
:func:`~portsim.planners.lp._allreduce_bound.allreduce_bound`) is the
independent value the ``lp`` allreduce tests check the planner against
(``test_lp_allreduce_rooted.py``, ``test_lp_allreduce_restricted.py``,
``test_lp_allreduce_dual_check.py``), often on the same random platforms: the
nine-node one of the budget tests takes 7 s a solve.  It is a function of the
platform and the operation alone (the deadline only stops it), so it is solved
once and every test asserts against that same exact solution.  Imported as a
plain module (pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

import portsim.planners.lp._allreduce as allreduce_module
from portsim.planners.lp._allreduce_bound import allreduce_bound
from portsim.planners.lp._driver import LpOptions
from portsim.planners.lp._exact import ExactSolution
from portsim.planners.lp._solve import Deadline
from portsim.simulator import Operation, Platform


@cache
def relaxation_solution(platform: Platform, operation: Operation) -> ExactSolution:
    """The relaxation of ``operation`` (resolved) on ``platform``, solved and recovered
    exactly (asserted), with the default options and no deadline."""
    bound = allreduce_bound(platform, operation, LpOptions(), deadline=Deadline.after(None))
    assert isinstance(bound, ExactSolution), bound
    assert bound.exact
    return bound


def solved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Answer the planner's own relaxation (``allreduce_bound`` as ``_allreduce.py``
    calls it) with :func:`relaxation_solution` where it asks for the same program (the
    whole model, the default HiGHS method): for tests whose planner call and check
    solve the same relaxation, on a platform where it solves exactly well within
    the call's time limit (the deadline it is given is not looked at)."""
    plain = allreduce_module.allreduce_bound

    def once(platform: Platform, operation: Operation, options: LpOptions,
             **kwargs: Any) -> Any:
        if kwargs.get("method", "whole") == "whole" and options.method == "auto":
            return relaxation_solution(platform, operation)
        return plain(platform, operation, options, **kwargs)

    monkeypatch.setattr(allreduce_module, "allreduce_bound", once)
