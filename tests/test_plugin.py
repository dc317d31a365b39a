"""The validator as a library and as a pytest plugin.

``simulator.validate``, the ``portsim_validate`` fixture and the assertion
helpers, their failure messages (a table, not a repr), the ``lp`` bound
lookup, the entry point, and a user's test file run by pytest itself.
Every expected figure is computed by hand from the link costs.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.metadata
import os
import tomllib
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import portsim.scenarios.bounds
from portsim.scenarios import schedule_from_dict
from portsim.scenarios.pytest_plugin import PortsimValidator
from portsim.scenarios.testing import (
    ScheduleAssertionError,
    assert_feasible,
    assert_msccl_correct,
    assert_throughput_at_least,
)
from portsim.simulator import (
    Compute,
    Item,
    Operation,
    OperationError,
    OperationKind,
    PlannerError,
    Platform,
    Schedule,
    ScheduleError,
    Send,
    validate,
    violation_table,
)

pytest_plugins = ["pytester"]

F = Fraction
ROOT = Path(__file__).resolve().parent.parent


def relay() -> Platform:
    """A -> B cost 1, B -> C cost 1/2."""
    return Platform.build(["A", "B", "C"], [("A", "B", 1), ("B", "C", "1/2")])


def relay_broadcast(events: list[dict[str, Any]], **kw: Any) -> Schedule:
    p = relay()
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, events, **kw)


def send(src: str, dst: str, item: str, start: object, **extra: object) -> dict[str, object]:
    return {"kind": "send", "src": src, "dst": dst, "item": item, "start": start, **extra}


# -- building schedules in Python ----------------------------------------------------


def test_dataclasses_dicts_and_documents_build_the_same_schedule() -> None:
    p = Platform.build({"P0": "1/2", "P1": 1}, [("P1", "P0", 2)])
    op = Operation(OperationKind.REDUCE, participants=("P0", "P1"), target="P0").resolve(p)
    from_classes = Schedule(p, op, (
        Send("P1", "P0", Item.interval(1, 1), F(0)),
        Compute("P0", (Item.interval(0, 0), Item.interval(1, 1)), Item.interval(0, 1), F(2)),
    ))
    dicts = [send("P1", "P0", "v[1,1]", 0),
             {"kind": "compute", "node": "P0", "inputs": ["v[0,0]", "v[1,1]"],
              "output": "v[0,1]", "start": 2}]
    from_dicts = Schedule.from_dicts(p, op, dicts)
    from_document = schedule_from_dict({
        "platform": {"nodes": [{"id": "P0", "compute": "1/2"}, {"id": "P1"}],
                     "links": [{"src": "P1", "dst": "P0", "c": 2}]},
        "operation": {"type": "reduce", "participants": ["P0", "P1"], "target": "P0"},
        "events": dicts,
    })
    assert from_classes.events == from_dicts.events == from_document.events
    # The send lasts c = 2, then P0 computes for 1/2: makespan 5/2.
    for schedule in (from_classes, from_dicts, from_document):
        assert validate(schedule).makespan == F(5, 2)


def test_from_dicts_resolves_the_operation() -> None:
    # Without .resolve(platform) a scatter had no targets: S held no message and
    # both sends were reported as "S sends m[A] at t=0 but it never received it".
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    events = [send("S", "A", "m[A]", 0), send("S", "B", "m[B]", 1)]
    schedule = Schedule.from_dicts(p, Operation(OperationKind.SCATTER, source="S"), events)
    assert schedule.operation.targets == ("A", "B")
    report = assert_feasible(schedule)
    assert (report.makespan, report.completed) == (F(2), 1)
    with pytest.raises(OperationError, match=r"operation\.source: unknown node id"):
        Schedule.from_dicts(p, Operation(OperationKind.SCATTER, source="Z"), events)


def test_the_constructor_resolves_an_unresolved_operation_too() -> None:
    """Schedule(...) and replay/validate on it, without .resolve(platform)."""
    p = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    events = [send("S", "A", "m[A]", 0), send("S", "B", "m[B]", 1)]
    bare = Operation(OperationKind.SCATTER, source="S")
    assert not bare.resolved
    schedule = Schedule(p, bare, tuple(Schedule.from_dicts(p, bare, events).events))
    assert schedule.operation.resolved
    assert schedule.operation.targets == ("A", "B")
    report = assert_feasible(schedule)
    assert (report.makespan, report.completed) == (F(2), 1)
    resolved = bare.resolve(p)
    assert Schedule(p, resolved, schedule.events).operation is resolved   # left as given


def test_validate_is_a_strict_exact_replay() -> None:
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", "1/2")])
    report = validate(s)
    assert report.mode == "strict"
    assert report.exact
    (v,) = report.violations
    # B forwards at 1/2 what it fully holds only at 1.
    assert (v.kind, v.node, v.time, v.resource, v.events) == (
        "item_not_held", "B", F(1, 2), "b", (1,))


def test_validate_port_model_and_horizon() -> None:
    # B receives instance 1 while forwarding instance 0: fine bidirectional only.
    s = relay_broadcast([send("A", "B", "b#0", 0), send("B", "C", "b#0", 1),
                         send("A", "B", "b#1", 1), send("B", "C", "b#1", 2)])
    assert validate(s).feasible
    assert validate(s).makespan == F(5, 2)
    uni = validate(s, port_model="unidirectional")
    assert [(v.kind, v.node, v.resource) for v in uni.violations] == [
        ("port_conflict", "B", "port of B")]
    # Over a horizon of 2, instance 1 (done at 5/2) does not count; it used to be
    # an `incomplete` violation, a feasible schedule rejected for a short horizon.
    # The series reusing the schedule (A sends one instance per time unit, B
    # relays it in 1/2) completes instance k at k + 3/2: only instance 0 by 2.
    short = validate(s, horizon=2)
    assert (short.feasible, short.violations, short.completed) == (True, (), 1)


# -- the failure message ----------------------------------------------------------------


def test_assert_feasible_message_is_a_table_of_violations() -> None:
    s = relay_broadcast([send("A", "B", "b", 0), send("A", "C", "b", "1/2"),
                         send("B", "C", "b", "1/2")])
    with pytest.raises(ScheduleAssertionError) as caught:
        assert_feasible(s)
    message = str(caught.value)
    lines = message.splitlines()
    assert lines[0] == ("schedule is not feasible (strict replay, bidirectional): "
                        "2 violation(s)")
    assert lines[1].split() == ["time", "node", "resource", "kind", "events", "detail"]
    assert set(lines[2]) == {"-", " "}
    rows = lines[3:]
    assert len(rows) == 2
    # Event 1 sends over a link A -> C that does not exist (it is not played,
    # so C's receive port stays free); event 2 forwards at 1/2 what B holds at 1.
    assert any("no_link" in r and "link A -> C" in r and "#1 send b A->C @1/2" in r
               for r in rows)
    assert any("item_not_held" in r and "#2 send b B->C @1/2" in r for r in rows)
    assert "Violation(" not in message
    assert "Report(" not in message
    assert caught.value.report is not None
    assert len(caught.value.report.violations) == 2


def test_violation_table_limit_counts_the_rest() -> None:
    events = [send("A", "B", f"b#{i}", 0) for i in range(6)]
    s = relay_broadcast(events)
    report = validate(s)
    conflicts = [v for v in report.violations if v.kind == "port_conflict"]
    # Six sends at once on A's send port and B's receive port: 5 + 5 conflicts.
    assert len(conflicts) == 10
    table = violation_table(report, s, limit=4)
    assert table.splitlines()[-1] == f"... and {len(report.violations) - 4} more violations"
    assert violation_table([]) == "no violations"


def test_incomplete_but_feasible_is_reported_when_asked() -> None:
    # No event at all: C never receives b, a violation in strict replay.
    s = relay_broadcast([])
    with pytest.raises(AssertionError, match="incomplete"):
        assert_feasible(s)


def test_complete_false_accepts_a_partial_schedule_that_breaks_no_rule() -> None:
    # A -> B only, over [0, 1]: C never receives b, and nothing else is wrong.
    partial = relay_broadcast([send("A", "B", "b", 0)])
    with pytest.raises(ScheduleAssertionError, match="C never holds b"):
        assert_feasible(partial)
    report = assert_feasible(partial, complete=False)
    assert (report.completed, report.end_time) == (0, F(1))
    # A rule broken beside the missing part still fails, its table without the part:
    # B forwards what it never received (and B itself never holds b).
    bogus = relay_broadcast([send("B", "C", "b", 0)])
    assert sorted(v.kind for v in validate(bogus).violations) == ["incomplete",
                                                                  "item_not_held"]
    with pytest.raises(ScheduleAssertionError) as err:
        assert_feasible(bogus, complete=False)
    lines = str(err.value).splitlines()
    assert lines[0] == "schedule is not feasible (strict replay, bidirectional): 1 violation(s)"
    assert "item_not_held" in lines[-1]
    assert len(lines) == 4  # the verdict, the header, its rule, one violation


# -- throughput -------------------------------------------------------------------------


def test_throughput_of_a_periodic_schedule() -> None:
    # One broadcast per period 2: A -> B during [0, 1), B -> C (lag 1) during
    # [1, 3/2) of the next period: throughput 1/2.
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1, lag=1)], period=2)
    assert assert_throughput_at_least(s, 1, bound="1/2") == 1
    assert assert_throughput_at_least(s, "1/2", bound=1) == F(1, 2)
    with pytest.raises(ScheduleAssertionError) as caught:
        assert_throughput_at_least(s, "3/4", bound=1)
    assert str(caught.value) == ("throughput 1/2 (1 instance(s) per period 2) is 1/2 = 0.5 "
                                 "of the bound 1, below the required 3/4")


def test_throughput_of_a_one_shot_schedule() -> None:
    # Two instances pipelined: the last ends at 5/2, so 2 / (5/2) = 4/5.
    s = relay_broadcast([send("A", "B", "b#0", 0), send("B", "C", "b#0", 1),
                         send("A", "B", "b#1", 1), send("B", "C", "b#1", 2)])
    assert assert_throughput_at_least(s, "4/5", bound=1) == F(4, 5)
    with pytest.raises(AssertionError, match=r"2 instance\(s\) in 5/2, the end of the last "):
        assert_throughput_at_least(s, "9/10", bound=1)


def test_one_shot_message_names_the_time_its_figure_divides_by() -> None:
    # B is served at 2 (c = 2); a send to C, outside the operation, ends at
    # 3: the figure is 1 / 3, not 1 / makespan = 1/2, and the message says so.
    p = Platform.build(["A", "B", "C"], [("A", "B", 2), ("A", "C", 1)])
    op = Operation(OperationKind.BROADCAST, source="A", targets=("B",)).resolve(p)
    s = Schedule.from_dicts(p, op, [send("A", "B", "b", 0), send("A", "C", "b", 2)])
    with pytest.raises(AssertionError) as caught:
        assert_throughput_at_least(s, 1, bound=1)
    assert str(caught.value) == (
        "throughput 1/3 (1 instance(s) in 3, the end of the last event (makespan 2)) "
        "is 1/3 = 0.3333 of the bound 1, below the required 1")
    report = validate(s)
    assert report.throughput == F(report.instances) / report.end_time == F(1, 3)
    assert report.makespan == 2


def test_throughput_requires_feasibility_first() -> None:
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 0)], period=2)
    with pytest.raises(ScheduleAssertionError, match="item_not_held"):
        assert_throughput_at_least(s, "1/10", bound=1)


def test_an_idle_instance_slot_fails_both_helpers(
        portsim_validate: PortsimValidator) -> None:
    # Issue 13: claiming two instances per period but serving only #0 passed
    # assert_feasible and was measured at 2 / period.
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1, lag=1)], period=2,
                        instances_per_period=2)
    with pytest.raises(ScheduleAssertionError) as caught:
        assert_feasible(s)
    violations = caught.value.report.violations  # type: ignore[union-attr]
    assert [(v.kind, v.node, v.resource) for v in violations] == [
        ("incomplete", "B", "b#1"), ("incomplete", "C", "b#1")]
    assert "instance slot #1 (1 of 2) never completes; slot #1 has no event" in (
        violations[0].detail)
    with pytest.raises(ScheduleAssertionError, match="incomplete"):
        assert_throughput_at_least(s, "1/10", bound=1)
    with pytest.raises(ScheduleAssertionError, match="incomplete"):
        portsim_validate.assert_throughput_at_least(s, "1/10", bound=1)


def test_a_horizon_that_sees_no_period_proves_no_throughput() -> None:
    # Slot #0's instance needs [0, 7/2): a horizon of 3 expects no instance, so
    # the replay is vacuously complete but proves nothing.
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1, lag=1)], period=2)
    assert validate(s, horizon=3).throughput is None
    assert validate(s).throughput == F(1, 2)
    with pytest.raises(ScheduleAssertionError, match=r"proves no throughput: its horizon 3 "
                                                     r"does not see every one of the 1"):
        assert_throughput_at_least(s, "1/10", bound=1, horizon=3)


class _FakeLp:
    def __init__(self, bound: Fraction | None, message: str = "") -> None:
        self.bound = bound
        self.message = message
        self.seen: list[str] = []

    def plan(self, platform: Platform, operation: Operation) -> SimpleNamespace:
        self.seen.append(str(platform.port_model))
        return SimpleNamespace(status="ok" if self.bound else "unsupported",
                               throughput_bound=self.bound, message=self.message)


def test_default_bound_comes_from_the_lp_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1, lag=1)], period=2)
    fake = _FakeLp(F(2, 3))
    monkeypatch.setattr(portsim.scenarios.bounds, "available_planners", lambda: {"lp": fake})
    # (1/2) / (2/3) = 3/4.
    assert assert_throughput_at_least(s, "3/4") == F(3, 4)
    assert assert_throughput_at_least(s, "3/4", port_model="unidirectional") == F(3, 4)
    assert fake.seen == ["bidirectional", "unidirectional"]


def test_no_lp_bound_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    s = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1, lag=1)], period=2)
    monkeypatch.setattr(portsim.scenarios.bounds, "available_planners", dict)
    with pytest.raises(PlannerError, match=r"no lp bound available \(no lp planner"):
        assert_throughput_at_least(s, "1/2")
    fake = _FakeLp(None, "lp does not handle broadcast")
    monkeypatch.setattr(portsim.scenarios.bounds, "available_planners", lambda: {"lp": fake})
    with pytest.raises(PlannerError, match="lp does not handle broadcast"):
        assert_throughput_at_least(s, "1/2")


# -- the fixture --------------------------------------------------------------------------


def test_fixture_validates_and_remembers(portsim_validate: PortsimValidator) -> None:
    good = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 1)])
    assert portsim_validate(good).makespan == F(3, 2)
    assert portsim_validate.assert_feasible(good, port_model="unidirectional").makespan == F(
        3, 2)
    bad = relay_broadcast([send("A", "B", "b", 0), send("B", "C", "b", 0)])
    with pytest.raises(ScheduleAssertionError):
        portsim_validate.assert_feasible(bad)
    assert len(portsim_validate.checked) == 3
    assert "item_not_held" in portsim_validate.summary()
    assert "schedule 3 (2 events, bidirectional)" in portsim_validate.summary()


def test_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["pytest11"] == {
        "portsim": "portsim.scenarios.pytest_plugin"}
    assert importlib.import_module("portsim.scenarios.pytest_plugin").portsim_validate


def test_plugin_is_loaded_in_this_session(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("portsim")


USER_TEST = '''
from portsim.simulator import Operation, OperationKind, Platform, Schedule
from portsim.scenarios.pytest_plugin import assert_feasible

P = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
OP = Operation(OperationKind.SCATTER, source="A").resolve(P)

def schedule(second_start):
    return Schedule.from_dicts(P, OP, [
        {"kind": "send", "src": "A", "dst": "B", "item": "m[B]", "start": 0},
        {"kind": "send", "src": "A", "dst": "C", "item": "m[C]", "start": second_start}])

def test_good(portsim_validate):
    assert portsim_validate.assert_feasible(schedule(1)).makespan == 2

def test_clash_helper():
    assert_feasible(schedule("1/2"))

def test_clash_fixture(portsim_validate):
    portsim_validate(schedule("1/2"))
    assert False, "the test fails on its own"
'''


def _plugin_args() -> list[str]:
    """Load the plugin explicitly only when no entry point will (bare checkout)."""
    installed = any(ep.name == "portsim" and ep.value == "portsim.scenarios.pytest_plugin"
                    for ep in importlib.metadata.entry_points(group="pytest11"))
    autoload = not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    return [] if installed and autoload else ["-p", "portsim.scenarios.pytest_plugin"]


def test_a_users_test_file_under_pytest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", *_plugin_args())
    result.assert_outcomes(passed=1, failed=2)
    text = result.stdout.str()
    # The helper's message: a verdict line and a table, pointing at the user's line.
    lines = [line.strip() for line in text.splitlines()]
    assert ("E       portsim.scenarios.testing.ScheduleAssertionError: schedule is not feasible "
            "(strict replay, bidirectional): 1 violation(s)") in text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[1:] == [
        "time", "node", "resource", "kind", "events", "detail"])
    assert lines[header + 2].split()[1:8] == [
        "1/2", "A", "send", "port", "of", "A", "port_conflict"]
    assert "#1 send m[C] A->C @1/2; #0 send m[B] A->B @0" in lines[header + 2]
    assert "test_user.py:16: ScheduleAssertionError" in text
    assert "scenarios/testing.py" not in text  # helper frames are hidden
    # The fixture adds a section to a test that failed for another reason.
    section = lines.index("schedule 1 (2 events, bidirectional):")
    assert "portsim violations" in lines[section - 1]
    assert "port_conflict" in lines[section + 3]


FAILING_ASSERTIONS = '''
from portsim.simulator import Operation, OperationKind, Platform, Schedule
from portsim.scenarios.pytest_plugin import assert_feasible

P = Platform.build(["A", "B", "C"], [("A", "B", 1), ("A", "C", 1)])
OP = Operation(OperationKind.SCATTER, source="A").resolve(P)

def schedule(second_start, item="m[C]"):
    return Schedule.from_dicts(P, OP, [
        {"kind": "send", "src": "A", "dst": "B", "item": "m[B]", "start": 0},
        {"kind": "send", "src": "A", "dst": "C", "item": item, "start": second_start}])

def test_fixture_method(portsim_validate):
    portsim_validate.assert_feasible(schedule("1/2"))

def test_helper_after_the_fixture(portsim_validate):
    portsim_validate(schedule("1/2"))
    assert_feasible(schedule("1/2"))

def test_two_schedules(portsim_validate):
    portsim_validate(schedule(1, item="m[B]"))  # validated, not asserted: the section
    portsim_validate.assert_feasible(schedule("1/2"))  # the message
'''


@pytest.mark.parametrize(("test", "tables"), [
    ("test_fixture_method", 1), ("test_helper_after_the_fixture", 1),
    ("test_two_schedules", 2)])
def test_a_failed_assertion_shows_its_table_once(pytester: pytest.Pytester, test: str,
                                                 tables: int) -> None:
    """A new user's trial: a test failed by ``portsim_validate.assert_feasible``
    printed the violation table twice, in the assertion message and again in the
    "portsim violations" section.  The message keeps it (the line that failed,
    any runner); the section lists only the schedules the message does not."""
    pytester.makepyfile(test_user=FAILING_ASSERTIONS)
    # -rN: no short test summary, which pytest prints untruncated under CI (the
    # message, table and all, once more: pytest's, not the plugin's)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rN", *_plugin_args(),
                                f"test_user.py::{test}")
    result.assert_outcomes(failed=1)
    lines = result.stdout.str().splitlines()
    headers = [line for line in lines if line.lstrip("E ").split() == [
        "time", "node", "resource", "kind", "events", "detail"]]
    assert len(headers) == tables, "\n".join(lines)
    assert ("E       portsim.scenarios.testing.ScheduleAssertionError: schedule is not feasible "
            "(strict replay, bidirectional): 1 violation(s)") in lines
    sections = [line for line in lines if "portsim violations" in line]
    if tables == 1:
        assert sections == []
    else:  # the first schedule, never asserted on, with its own number
        assert len(sections) == 1
        assert lines[lines.index(sections[0]) + 1] == "schedule 1 (2 events, bidirectional):"
        assert "schedule 2" not in "\n".join(lines)


# -- the runnable examples ----------------------------------------------------------------


@pytest.mark.parametrize("module", ["portsim.simulator.validation", "portsim.scenarios.testing",
                                    "portsim.scenarios.pytest_plugin", "portsim.scenarios.bounds"])
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0
    assert result.failed == 0


def test_the_readme_example_passes(pytester: pytest.Pytester) -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("A user's test:\n\n```python\n") + len("A user's test:\n\n```python\n")
    code = readme[start:readme.index("```", start)]
    pytester.makepyfile(test_readme_example=code)
    result = pytester.runpytest("-p", "no:cacheprovider", *_plugin_args())
    result.assert_outcomes(passed=1)


# -- start times computed in floats ---------------------------------------------------


def _float_chain(third: float | None = None) -> Schedule:
    """A broadcast A -> B -> C -> D whose starts are float sums of the link
    costs 0.1, 0.7 and 0.2, as a user's generator computes them: 0.1 + 0.7
    is 0.7999999999999999, 10^-16 before B's transfer to C ends at 4/5."""
    p = Platform.build(["A", "B", "C", "D"], [("A", "B", 0.1), ("B", "C", 0.7),
                                              ("C", "D", 0.2)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    starts = [0.0, 0.1, 0.1 + 0.7 if third is None else third]
    hops = [("A", "B"), ("B", "C"), ("C", "D")]
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": a, "dst": b, "item": "b", "start": t}
        for (a, b), t in zip(hops, starts, strict=True)])


def test_a_tolerance_accepts_start_times_computed_in_floats(
        portsim_validate: PortsimValidator) -> None:
    s = _float_chain()
    gap = Fraction(4, 5) - s.events[2].start
    assert gap == Fraction(1, 10**16)
    [v] = validate(s).violations
    assert (v.kind, v.time, v.events) == ("item_not_held", Fraction(4, 5) - gap, (2,))
    # the gap and no less: every time is a multiple of 10^-16
    assert validate(s, tolerance=gap).feasible
    assert not validate(s, tolerance=gap / 2).feasible
    report = assert_feasible(s, tolerance=1e-9)
    assert report.makespan == Fraction(4, 5) - gap + Fraction(1, 5)
    assert portsim_validate.assert_feasible(s, tolerance="1/1000000000").feasible
    assert portsim_validate(s, tolerance=1e-9).feasible
    # the throughput as written: one instance over the end of the last event
    assert assert_throughput_at_least(s, 1, bound=1, tolerance=1e-9) == 1 / report.makespan


def test_a_tolerance_still_catches_a_real_early_start() -> None:
    s = _float_chain(third=0.7)   # a tenth before the message reaches C
    [v] = validate(s, tolerance=1e-9).violations
    assert (v.kind, v.time, v.node) == ("item_not_held", Fraction(7, 10), "C")
    with pytest.raises(ScheduleAssertionError):
        assert_feasible(s, tolerance=1e-9)


def _float_parts(parts: list[float] | list[str], c: object = 1,
                 latency: object = None) -> Schedule:
    """A broadcast A -> B -> C: A sends the message to B in ``parts`` back to
    back (starts summed in floats, as a user's script does; exactly for parts
    written as strings), then B forwards it whole (``c`` the cost of A -> B;
    with ``latency``: bandwidth 1 / c, each part paying the latency)."""
    if latency is None:
        p = Platform.build(["A", "B", "C"], [("A", "B", c), ("B", "C", 1)])
    else:
        p = schedule_from_dict({"platform": {"nodes": [{"id": n} for n in "ABC"], "links": [
            {"src": "A", "dst": "B", "bandwidth": f"1/{c}", "latency": latency},
            {"src": "B", "dst": "C", "c": 1}]}, "operation": {"type": "broadcast",
                                                                "source": "A"},
            "events": []}).platform
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    dicts: list[dict[str, object]] = []
    start: float | Fraction = Fraction(0) if isinstance(parts[0], str) else 0.0
    for part in parts:
        dicts.append({"kind": "send", "src": "A", "dst": "B", "item": "b", "part": part,
                      "start": start})
        duration = p.duration("A", "B", 1, Fraction(part))
        start = start + duration if isinstance(part, str) else start + float(duration)
    dicts.append({"kind": "send", "src": "B", "dst": "C", "item": "b", "start": start})
    return Schedule.from_dicts(p, op, dicts)


def test_a_tolerance_covers_parts_summed_in_floats() -> None:
    """Three parts of 0.3333333333333333 sum to 1 - 10^-16: B never held the
    message, even with the tolerance that accepts float start times.  The
    tolerance T now takes parts as whole when the fraction missing would take
    at most T to send on the link of the parts (here c = 1: 10^-16)."""
    third = 0.3333333333333333
    s = _float_parts([third] * 3)
    missing = 1 - 3 * s.events[0].part  # parts are read as written: 3333333333333333/10^16
    assert missing == Fraction(1, 10**16)
    assert [v.kind for v in validate(s).violations] == ["item_not_held", "incomplete"]
    report = assert_feasible(s, tolerance=1e-9)
    assert report.makespan == s.events[3].start + 1
    # the missing fraction's time and no less: missing * c
    assert validate(s, tolerance=missing).feasible
    assert not validate(s, tolerance=missing * Fraction(99, 100)).feasible
    slow = _float_parts([third] * 3, c=1000)   # the missing fraction takes 1000x longer
    assert validate(slow, tolerance=missing * 1000).feasible
    assert not validate(slow, tolerance=missing * 999).feasible
    # with latency: only the bandwidth's share counts (size / bandwidth = c per message)
    lat = _float_parts([third] * 3, c=4, latency="1/2")
    assert validate(lat, tolerance=missing * 4).feasible
    assert not validate(lat, tolerance=missing * 3).feasible


def test_the_series_of_float_parts_counts_as_that_of_exact_ones() -> None:
    """Over a horizon, the pipelined series of the float parts completed
    nothing (its replay had no tolerance: B never held a message) while the
    schedule itself passed.  B forwards for 1 a message: instance t ends at
    t + 2, 19 of them by 20, as with parts of exactly 1/3."""
    floats = validate(_float_parts([0.3333333333333333] * 3), horizon=20, tolerance=1e-9)
    exact = validate(_float_parts(["1/3"] * 3), horizon=20)
    assert (floats.feasible, floats.completed) == (True, 19)
    assert exact.completed == 19


def test_the_series_does_not_gain_the_missing_parts_instance_after_instance() -> None:
    """The tolerance takes parts short of 1 by at most its time as the whole
    message in the check, and the series took every copy so: a message sent
    as one part of 1 - 10^-9 on a link of cost 1 was a whole message every
    1 - 10^-9, 1,000,001,000 instances over 10^12 (above the bound, one a
    time unit; 10^-9 of a message missing in each).  The series now sends
    each such item whole: copy t ends at t + 1, 10^12 of them by 10^12, as
    for a part of exactly 1; with 1/2 + (1/2 - 10^-9) likewise."""
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    short = Fraction(1, 10**9)

    def parts(*given: Fraction) -> Schedule:
        events, start = [], Fraction(0)
        for part in given:
            events.append({"kind": "send", "src": "A", "dst": "B", "item": "b",
                           "part": part, "start": start})
            start += part
        return Schedule.from_dicts(p, op, events)

    horizon = 10**12
    for s in (parts(1 - short), parts(Fraction(1, 2), Fraction(1, 2) - short)):
        report = validate(s, horizon=horizon, tolerance=short)
        assert report.feasible
        assert report.completed == horizon  # one a time unit: instance t ends at t + 1
        assert report.measured_throughput == 1.0
    assert validate(parts(Fraction(1)), horizon=horizon).completed == horizon


def test_a_tolerance_covers_durations_computed_in_floats() -> None:
    """A script stating `duration: 0.1 * 3` (0.30000000000000004) for a link of
    cost 0.3 got `wrong_duration` under any tolerance: the stated duration is
    now the platform's when it lies within the tolerance of it."""
    p = Platform.build(["A", "B"], [("A", "B", 0.3)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)

    def stated(duration: float) -> Schedule:
        return Schedule.from_dicts(p, op, [{"kind": "send", "src": "A", "dst": "B", "item": "b",
                                            "start": 0, "duration": duration}])

    s = stated(0.1 * 3)
    gap = s.events[0].duration - Fraction(3, 10)  # type: ignore[operator]
    assert gap == Fraction(1, 25 * 10**15)
    assert [v.kind for v in validate(s).violations] == ["wrong_duration"]
    assert validate(s, tolerance=1e-9).feasible
    assert validate(s, tolerance=gap).feasible
    assert not validate(s, tolerance=gap / 2).feasible
    assert [v.kind for v in validate(stated(0.31), tolerance=1e-9).violations] == [
        "wrong_duration"]


def test_a_tolerance_still_catches_a_missing_part() -> None:
    """Two thirds of a message are not the message, whatever the tolerance
    for float rounding: 1/3 of it takes 1/3 to send."""
    s = _float_parts([1 / 3, 1 / 3])
    assert [v.kind for v in validate(s, tolerance=1e-9).violations] == [
        "item_not_held", "incomplete"]
    assert validate(s, tolerance="2/5").feasible  # a third (and float noise) missing
    with pytest.raises(ScheduleAssertionError, match="holds only"):
        assert_feasible(s, tolerance="1/4")


@pytest.mark.parametrize("tolerance", [-1e-9, "abc", float("nan")])
def test_a_bad_tolerance_is_refused(tolerance: object) -> None:
    with pytest.raises(ScheduleError, match=r"^tolerance: "):
        validate(_float_chain(), tolerance=tolerance)  # type: ignore[arg-type]


def test_a_tolerance_is_for_exact_time() -> None:
    from portsim.simulator import replay

    with pytest.raises(ScheduleError, match=r"^tolerance: applies to exact time only"):
        replay(_float_chain(), exact=False, tolerance=1e-9)


@pytest.mark.parametrize("fraction", [-1, "-1/2", "ninety percent"])
def test_a_fraction_of_the_bound_below_zero_or_not_a_number_is_refused(fraction: object) -> None:
    """``assert_throughput_at_least(s, -1)`` passed every schedule, even the
    slowest: an assertion that cannot fail.  Refused, as a ``PlannerError``
    like every other bad argument of the helpers."""
    s = relay_broadcast([{"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
                         {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}])
    assert assert_throughput_at_least(s, 0, bound=1) == F(2, 3)   # 1 broadcast in 3/2
    with pytest.raises(PlannerError, match=r"^fraction_of_bound: "):
        assert_throughput_at_least(s, fraction, bound=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("bound", ["fast", float("nan"), 0, "-1/2"])
def test_a_bound_not_a_positive_number_is_a_planner_error_too(bound: object) -> None:
    """``bound="fast"`` raised the family's bare base class (``PortsimError:
    bound: expected a number``), where ``bound=0`` and a bad
    ``fraction_of_bound`` raise ``PlannerError``, as documented."""
    s = relay_broadcast([{"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
                         {"kind": "send", "src": "B", "dst": "C", "item": "b", "start": 1}])
    assert assert_throughput_at_least(s, 1, bound="2/3") == 1   # 1 broadcast in 3/2
    with pytest.raises(PlannerError, match=r"^bound: "):
        assert_throughput_at_least(s, "1/2", bound=bound)  # type: ignore[arg-type]


def _two_overlapping_sends(start: object = "1/2") -> Schedule:
    """A -> B twice, overlapping by 1/2: A's send port and B's receive port
    (``start=1``: one after the other, feasible)."""
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": start}])


def test_the_violation_table_limit_is_checked() -> None:
    """``limit=0`` raised ``TypeError: 'int' object is not iterable`` (from
    ``violation_table`` and ``assert_feasible(limit=0)``); ``limit=-1``
    showed all rows but the last.  0 shows none and counts them; a negative
    limit is refused, naming ``limit``."""
    s = _two_overlapping_sends()
    report = validate(s)
    assert len(report.violations) == 2
    assert violation_table(report, s, limit=0) == "2 violations (none shown: limit 0)"
    table = violation_table(report, s, limit=1).splitlines()
    assert len(table) == 2 + 1 + 1
    assert table[-1] == "... and 1 more violation"
    with pytest.raises(ScheduleError, match=r"^limit: must be an integer >= 0 or None \(got -1\)"):
        violation_table(report, s, limit=-1)
    with pytest.raises(ScheduleAssertionError, match=r"none shown: limit 0"):
        assert_feasible(s, limit=0)


def test_a_limit_that_is_not_an_integer_is_refused() -> None:
    """``limit="3"`` raised ``TypeError: '<' not supported between instances of
    'str' and 'int'`` and ``limit=1.5`` ``slice indices must be integers``
    from deep in the table; and only on a failing schedule, so a bad limit
    passed unnoticed in a test suite until the day the schedule broke."""
    s = _two_overlapping_sends()
    feasible = _two_overlapping_sends(start=1)
    assert validate(feasible).feasible
    for bad in ("3", 1.5, True):
        with pytest.raises(ScheduleError, match=r"^limit: must be an integer >= 0 or None"):
            violation_table(validate(s), s, limit=bad)  # type: ignore[arg-type]
        for schedule in (s, feasible):
            with pytest.raises(ScheduleError, match=r"^limit: must be an integer"):
                assert_feasible(schedule, limit=bad)  # type: ignore[arg-type]
    # an integer still cuts the table: 2 violations, 1 shown
    with pytest.raises(ScheduleAssertionError, match=r"\.\.\. and 1 more violation$"):
        assert_feasible(s, limit=1)


def test_a_negative_min_ratio_is_refused() -> None:
    """``assert_msccl_correct(..., min_ratio=-1)`` passed every correct
    algorithm, however slow: an assertion that cannot fail, which
    ``assert_throughput_at_least`` already refuses for its fraction."""
    from portsim.scenarios.msccl import ring_allgather_xml

    p = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P2", 1), ("P2", "P0", 1)])
    with pytest.raises(PlannerError, match=r"^min_ratio: must be >= 0"):
        assert_msccl_correct(ring_allgather_xml(3), p, size=3, min_ratio=-1)
