"""The portsim pytest plugin: validate schedules inside anyone's test suite.

Installed with portsim through the ``pytest11`` entry point ``portsim``, so
pytest loads it by itself (disable with ``-p no:portsim``).  It offers:

- the fixture ``portsim_validate``: a :class:`PortsimValidator`, callable like
  :func:`simulator.validate`, with the assertion helpers as methods; when a
  test fails, the violations of every schedule it validated are added to the
  failure report as a section "portsim violations", but for those the
  failure's own message already lists (the table appears once);
- the assertion helpers :func:`assert_feasible` and
  :func:`assert_throughput_at_least` (from :mod:`portsim.scenarios.testing`, which
  needs no pytest), whose failure message is a readable table of violations
  (time, node, port or resource, kind, events involved, detail).

The helpers raise a plain :class:`AssertionError` with that message, so they
need no assertion rewriting; their frames are hidden from pytest tracebacks.

Examples
--------
A user's test::

    from portsim.scenarios.pytest_plugin import assert_feasible

    def test_my_broadcast_tree(portsim_validate):
        schedule = my_algorithm(platform, operation)     # a simulator.Schedule
        report = portsim_validate.assert_feasible(schedule, port_model="unidirectional")
        assert report.makespan <= 12
        portsim_validate.assert_throughput_at_least(schedule, "9/10", bound="1/2")
"""

from __future__ import annotations

from collections.abc import Generator
from fractions import Fraction

import pytest

from portsim.scenarios.testing import (
    ScheduleAssertionError,
    assert_feasible,
    assert_msccl_correct,
    assert_throughput_at_least,
)
from portsim.simulator.platform import PortModel
from portsim.simulator.report import Report
from portsim.simulator.schedule import Schedule
from portsim.simulator.validation import validate, violation_table

__all__ = [
    "PortsimValidator",
    "ScheduleAssertionError",
    "assert_feasible",
    "assert_msccl_correct",
    "assert_throughput_at_least",
    "portsim_validate",
]


class PortsimValidator:
    """What the ``portsim_validate`` fixture gives a test.

    Call it like :func:`simulator.validate`; use :meth:`assert_feasible` and
    :meth:`assert_throughput_at_least` like the module-level helpers.  Every
    schedule checked is remembered, so that a failing test reports their
    violations.

    Examples
    --------
    >>> from portsim.simulator import Operation, OperationKind, Platform, Schedule
    >>> p = Platform.build(["A", "B"], [("A", "B", 1)])
    >>> op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    >>> s = Schedule.from_dicts(p, op, [
    ...     {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}])
    >>> check = PortsimValidator()
    >>> check(s).feasible, check.assert_feasible(s).makespan, len(check.checked)
    (True, Fraction(1, 1), 2)
    """

    def __init__(self) -> None:
        self.checked: list[tuple[Schedule, Report]] = []

    def __call__(
        self,
        schedule: Schedule,
        *,
        port_model: PortModel | str | None = None,
        horizon: Fraction | int | str | None = None,
        tolerance: Fraction | int | float | str | None = None,
    ) -> Report:
        """Validate ``schedule`` (strict replay) and return the report."""
        report = validate(schedule, port_model=port_model, horizon=horizon, tolerance=tolerance)
        self.checked.append((schedule, report))
        return report

    def assert_feasible(
        self,
        schedule: Schedule,
        *,
        port_model: PortModel | str | None = None,
        horizon: Fraction | int | str | None = None,
        complete: bool = True,
        tolerance: Fraction | int | float | str | None = None,
    ) -> Report:
        """:func:`portsim.scenarios.testing.assert_feasible`, remembered for the failure report."""
        __tracebackhide__ = True
        try:
            report = assert_feasible(schedule, port_model=port_model, horizon=horizon,
                                     complete=complete, tolerance=tolerance)
        except ScheduleAssertionError as err:
            if err.report is not None:
                self.checked.append((schedule, err.report))
            raise
        self.checked.append((schedule, report))
        return report

    def assert_throughput_at_least(
        self,
        schedule: Schedule,
        fraction_of_bound: Fraction | int | float | str,
        *,
        bound: Fraction | int | str | None = None,
        horizon: Fraction | int | str | None = None,
        port_model: PortModel | str | None = None,
        tolerance: Fraction | int | float | str | None = None,
    ) -> Fraction:
        """:func:`portsim.scenarios.testing.assert_throughput_at_least`, remembered likewise."""
        __tracebackhide__ = True
        try:
            return assert_throughput_at_least(schedule, fraction_of_bound, bound=bound,
                                              horizon=horizon, port_model=port_model,
                                              tolerance=tolerance)
        except ScheduleAssertionError as err:
            if err.report is not None:
                self.checked.append((schedule, err.report))
            raise

    def summary(self, shown: Report | None = None) -> str:
        """The violations of every infeasible schedule checked, as tables.

        A schedule whose replay is ``shown`` (the report of the assertion
        that failed the test, whose message lists its violations) is left
        out; the others keep their numbers.
        """
        parts = []
        for number, (schedule, report) in enumerate(self.checked, start=1):
            if report.violations and not (shown is not None
                                          and (report is shown or report == shown)):
                parts.append(f"schedule {number} ({len(schedule.events)} events, "
                             f"{report.port_model}):\n{violation_table(report, schedule)}")
        return "\n\n".join(parts)


@pytest.fixture
def portsim_validate() -> PortsimValidator:
    """A :class:`PortsimValidator`: validate schedules, assert on them."""
    return PortsimValidator()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, object, None]:
    """Add the violations seen by ``portsim_validate`` to a failing test's report,
    but for those the failure's message already lists: a test failed by an
    assertion helper shows its table there, in any runner (and at the line
    that failed), so the section holds only what the message does not."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    validator = funcargs.get("portsim_validate")
    if isinstance(validator, PortsimValidator):
        error = call.excinfo.value if call.excinfo is not None else None
        text = validator.summary(error.report if isinstance(error, ScheduleAssertionError)
                                 else None)
        if text:
            report.sections.append(("portsim violations", text))
