"""The public API given plain Python values: read exactly, or one error of portsim's family.

A user builds platforms and schedules by hand (``import portsim``): a cost
from NumPy, a start written ``0.1`` or ``"1/2"``, an item written as its
name, a ``PlanResult`` passed where its schedule belongs.  Each is either read
as :meth:`Schedule.from_dicts` and :meth:`Platform.build` read their input
(the figures below are computed by hand) or refused by a
:class:`~portsim.simulator.errors.PortsimError` naming the value, never an
``AttributeError`` or ``TypeError`` from deep inside the engine.
"""

# These tests give the API the values a user writes, not the declared types.
# mypy: disable-error-code="arg-type, list-item, union-attr"

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import portsim
from portsim import (
    Compute,
    Item,
    Link,
    Node,
    Operation,
    OperationKind,
    Platform,
    Schedule,
    Send,
    get_planner,
    parse_rational,
    replay,
    validate,
)
from portsim.simulator.errors import (
    OperationError,
    PlannerError,
    PlatformError,
    ScenarioError,
    ScheduleError,
)
from portsim.simulator.items import parse_item

EXAMPLES = Path(portsim.__file__).parent / "scenarios" / "examples"


@pytest.fixture
def scatter() -> tuple[Platform, Operation]:
    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", "2/3")])
    return platform, Operation(OperationKind.SCATTER, source="S").resolve(platform)


# -- schedules built from Send and Compute ----------------------------------------------


def test_hand_built_sends_with_float_and_text_starts_replay_exactly(scatter) -> None:
    platform, operation = scatter
    # S -> A from 1/10 to 11/10, S -> B (c = 2/3) from 11/10 to 11/10 + 2/3 = 53/30
    schedule = Schedule(platform, operation, (
        Send("S", "A", parse_item("m[A]"), 0.1),
        Send("S", "B", parse_item("m[B]"), "11/10")))
    assert [e.start for e in schedule.events] == [Fraction(1, 10), Fraction(11, 10)]
    assert all(type(e.start) is Fraction for e in schedule.events)
    report = validate(schedule)
    assert report.feasible
    assert report.makespan == Fraction(53, 30)
    assert replay(schedule, exact=False).makespan == pytest.approx(53 / 30)


def test_hand_built_events_take_item_names_and_lists(scatter) -> None:
    platform = Platform.build(["A", "B", "C"], [("B", "A", 1), ("C", "A", 1)])
    operation = Operation(OperationKind.REDUCE, participants=["A", "B", "C"], target="A")
    # B -> A [0, 1], C -> A [1, 2], v[1,2] on A [2, 3], v[0,2] on A [3, 4]
    schedule = Schedule(platform, operation, [
        Send("B", "A", "v[1,1]", 0), Send("C", "A", "v[2,2]", 1),
        Compute("A", ["v[1,1]", "v[2,2]"], "v[1,2]", 2),
        Compute("A", ("v[0,0]", "v[1,2]"), "v[0,2]", 3)])
    assert isinstance(schedule.events, tuple)
    assert schedule.events[2].inputs == (parse_item("v[1,1]"), parse_item("v[2,2]"))
    report = validate(schedule)
    assert report.feasible
    assert report.makespan == 4
    swapped = Schedule(platform, operation, [
        Send("B", "A", "v[1,1]", 0), Send("C", "A", "v[2,2]", 1),
        Compute("A", ["v[2,2]", "v[1,1]"], "v[1,2]", 2),
        Compute("A", ("v[0,0]", "v[1,2]"), "v[0,2]", 3)])
    assert [v.kind for v in validate(swapped).violations] == ["reduction_order"]


def test_periodic_schedule_takes_a_text_period(scatter) -> None:
    platform, operation = scatter
    schedule = Schedule(platform, operation, (
        Send("S", "A", parse_item("m[A]"), 0), Send("S", "B", parse_item("m[B]"), 1)),
        period="5/3")
    assert schedule.period == Fraction(5, 3)
    assert validate(schedule).throughput == Fraction(3, 5)


@pytest.mark.parametrize(("event", "where"), [
    (Send("S", "A", parse_item("m[A]"), float("nan")), "events[0].start"),
    (Send("S", "A", parse_item("m[A]"), float("inf")), "events[0].start"),
    (Send("S", "A", parse_item("m[A]"), "soon"), "events[0].start"),
    (Send("S", "A", parse_item("m[A]"), 0, part="half"), "events[0].part"),
    (Send("S", "A", parse_item("m[A]"), 0, duration=float("nan")), "events[0].duration"),
    (Send("S", "A", "q", 0), "events[0].item"),
    (Compute("S", "bb", parse_item("b"), 0), "events[0].inputs"),
])
def test_hand_built_event_with_a_bad_value_is_a_schedule_error(scatter, event, where) -> None:
    platform, operation = scatter
    with pytest.raises(ScheduleError) as err:
        Schedule(platform, operation, (event,))
    assert err.value.path == where


@pytest.mark.parametrize(("item", "message"), [
    # each is refused in a schedule file; built in Python it was replayed
    (Item.interval(2, 1), r"an interval v\[k,m\] needs k <= m \(got 'v\[2,1\]'\)"),
    (Item.interval(-1, 1), r"not an item name .* \(got 'v\[-1,1\]'\)"),
    (Item.subset([]), r"not an item name .* \(got 'v\{\}'\)"),
    (Item.interval(1, 1, instance=-2), r"instance must be an integer >= 0 \(got 'v\[1,1\]#-2'\)"),
])
def test_hand_built_item_outside_the_item_grammar_is_a_schedule_error(item, message) -> None:
    platform = Platform.build(["T", "A", "B"], [("A", "T", 1), ("B", "T", 1)])
    operation = Operation(OperationKind.REDUCE, participants=["T", "A", "B"], target="T",
                          commutative=item.kind == "v" and not item.ordered)
    with pytest.raises(ScheduleError, match=message) as err:
        Schedule(platform, operation, (Send("A", "T", item, 0),))
    assert err.value.path == "events[0].item"


@pytest.mark.parametrize(("kwargs", "where"), [
    ({"period": float("nan")}, "period"),
    ({"period": "x"}, "period"),
    ({"period": 2, "instances_per_period": "2"}, "instances_per_period"),
])
def test_schedule_with_a_bad_period_is_a_schedule_error(scatter, kwargs, where) -> None:
    platform, operation = scatter
    with pytest.raises(ScheduleError) as err:
        Schedule(platform, operation, (Send("S", "A", parse_item("m[A]"), 0),), **kwargs)
    assert err.value.path == where


def test_wrong_types_are_named(scatter) -> None:
    platform, operation = scatter
    plan = get_planner("flat").plan(platform, operation)
    with pytest.raises(ScheduleError, match=r"expected a Schedule \(a PlanResult: pass its"):
        validate(plan)
    from portsim.simulator.engine import replay_one_shot, replay_series

    for call in (lambda: replay([]), lambda: replay_series([], 10),
                 lambda: replay_one_shot([], 10)):
        with pytest.raises(ScheduleError, match="expected a Schedule"):
            call()
    with pytest.raises(ScheduleError, match="platform must be a Platform"):
        Schedule.from_dicts("P", operation, [])
    with pytest.raises(ScheduleError, match="operation must be an Operation"):
        Schedule(platform, "scatter", ())
    for name in ("flat", "lp"):
        with pytest.raises(PlannerError, match="platform must be a Platform"):
            get_planner(name).plan("P", operation)
        with pytest.raises(PlannerError, match="operation must be an Operation"):
            get_planner(name).plan(platform, "scatter")


# -- operations ---------------------------------------------------------------------------


@pytest.mark.parametrize(("operation", "message"), [
    # a broadcast to "participants" would reach every node, not the two named
    (Operation(OperationKind.BROADCAST, source="S", participants=["A", "B"]),
     r"operation\.participants: participants does not apply to a broadcast \(it takes "
     r"source, targets and size\) \(got \['A', 'B'\]\)"),
    (Operation(OperationKind.SCATTER, source="S", target="A"),
     "operation.target: target does not apply to a scatter"),
    (Operation(OperationKind.GATHER, participants=["A", "S"], target="S", commutative=True),
     "operation.commutative: commutative does not apply to a gather"),
    (Operation(OperationKind.ALLGATHER, source="S"), "source does not apply to an allgather"),
])
def test_operation_field_of_another_kind_is_an_error(operation, message) -> None:
    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1), ("A", "S", 1),
                                                ("B", "S", 1)])
    with pytest.raises(OperationError, match=message):
        operation.resolve(platform)


def test_operation_fields_are_checked_as_in_a_scenario_file(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nplatform: {nodes: [{id: S}, {id: A}, {id: B}], links: "
                    "[{src: S, dst: A, c: 1}, {src: S, dst: B, c: 1}]}\n"
                    "operation: {type: broadcast, source: S, participants: [A, B]}\n"
                    "planners: [flat]\n")
    with pytest.raises(ScenarioError) as from_file:
        portsim.load_scenario(path)
    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    with pytest.raises(OperationError) as from_python:
        Operation(OperationKind.BROADCAST, source="S", participants=["A", "B"]).resolve(platform)
    assert from_file.value.message == from_python.value.message
    assert from_file.value.path == from_python.value.path == "operation.participants"


@pytest.mark.parametrize(("fields", "where"), [
    ({"targets": "AB"}, "operation.targets"),  # read as the nodes A and B before
    ({"targets": 3}, "operation.targets"),
    ({"commutative": "yes"}, "operation.commutative"),
])
def test_operation_with_a_bad_field_type_is_an_error(fields, where) -> None:
    with pytest.raises(OperationError) as err:
        Operation(OperationKind.SCATTER, source="S", **fields)
    assert err.value.path == where


# -- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "exact"), [
    (np.float64(0.1), Fraction(1, 10)),
    (np.float32(0.1), Fraction(1, 10)),
    (np.int64(3), Fraction(3)),
    (np.uint8(7), Fraction(7)),
    (Decimal("0.1"), Fraction(1, 10)),
])
def test_numpy_and_decimal_numbers_are_read_exactly(value, exact) -> None:
    assert parse_rational(value) == exact
    assert Platform.build(["A", "B"], [("A", "B", value)]).cost("A", "B") == exact


@pytest.mark.parametrize("value", [np.float64("nan"), np.float32("inf"), Decimal("NaN"),
                                   Decimal("1e400")])
def test_numpy_and_decimal_non_numbers_are_refused(value) -> None:
    with pytest.raises(PlatformError, match=r"links\.A->B"):
        Platform.build(["A", "B"], [("A", "B", value)])


# -- platforms ----------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Platform(["A", "B"], [Link("A", "B", 1)]),
     r"platform\.nodes\[0\]: expected a Node"),
    (lambda: Platform([Node("A"), Node("B")], [("A", "B", 1)]),
     r"platform\.links\[0\]: expected a Link"),
    (lambda: Platform.build(["A", "B"], [("A", "B")]), r"links\[0\]: a link is a \(src, dst"),
    (lambda: Platform.build(["A", "B", "A"], [("A", "B", 1)]), "nodes: duplicate node id"),
    (lambda: Platform.build("AB", [("A", "B", 1)]), "nodes must be a list"),
    (lambda: Platform.build(["A", "B"], [("A", "B", 1)], routers=["C"]),
     "routers: unknown node"),
    (lambda: Platform.build(["A", "B"], [("A", "B", 1)], node_port_models={"C": "multiport"}),
     "node_port_models: unknown node"),
])
def test_malformed_platform_is_a_platform_error(build, message) -> None:
    with pytest.raises(PlatformError, match=message):
        build()


def test_a_link_built_by_hand_reads_its_cost_exactly() -> None:
    """``Link("A", "B", "1/3").duration(2)`` returned the text repeated,
    ``'1/31/3'``, and ``Link("A", "B", 0.1).duration(3)`` the float
    ``0.30000000000000004``: only a Platform read the cost.  Read when the
    link is made, as Platform.build reads a triple."""
    assert Link("A", "B", "1/3").duration(2) == Fraction(2, 3)
    assert Link("A", "B", 0.1).duration(3) == Fraction(3, 10)
    text = Link("A", "B", "3/4", latency="1/2")          # bandwidth 1 / (3/4 - 1/2) = 4
    assert (text.bandwidth, text.duration(2)) == (4, 1)  # 1/2 + 2/4
    assert text == Link.of_bandwidth("A", "B", 4, latency="1/2")
    for bad, key in (("abc", "c"), (float("nan"), "c")):
        with pytest.raises(PlatformError, match=rf"^links\.A->B\.{key}: expected a"):
            Link("A", "B", bad)
    with pytest.raises(PlatformError, match=r"^links\.A->B\.latency: expected a"):
        Link("A", "B", 1, latency="soon")


def test_a_bad_port_model_argument_names_its_key(scatter) -> None:
    """``port_model="oneport"`` given to a replay or a builder is named as the
    argument (it was an error with no key path from Python)."""
    platform, operation = scatter
    schedule = portsim.Schedule(platform, operation, ())
    message = r"^port_model: expected bidirectional, unidirectional, multiport"
    for call in (lambda: portsim.validate(schedule, port_model="oneport"),
                 lambda: portsim.replay(schedule, port_model="oneport"),
                 lambda: Platform.build(["A", "B"], [("A", "B", 1)], "oneport")):
        with pytest.raises(PlatformError, match=message):
            call()


def test_reachability_of_an_unknown_node_is_a_platform_error(scatter) -> None:
    platform, _ = scatter
    assert platform.is_reachable("S", "B")
    assert not platform.is_reachable("A", "S")
    with pytest.raises(PlatformError, match="unknown node"):
        platform.is_reachable("S", "Z")


# -- runs ---------------------------------------------------------------------------------


def test_run_scenario_reads_a_horizon_as_the_command_line_does() -> None:
    scenario = portsim.load_scenario(EXAMPLES / "scatter-toy.yaml")
    flat = [spec for spec in scenario.planners if spec.name == "flat"]
    exact = portsim.run_scenario(scenario, horizon=Fraction(100), planners=flat)
    text = portsim.run_scenario(scenario, horizon="100", planners=flat)
    # flat's scatter of makespan 10/3, pipelined (S sends 2 time units an operation)
    assert exact.results[0].completed == text.results[0].completed == 49
    for bad in (float("nan"), "soon"):
        with pytest.raises(ScenarioError, match=r"scatter-toy\.yaml: horizon"):
            portsim.run_scenario(scenario, horizon=bad, planners=flat)
    with pytest.raises(ScenarioError, match="expected a Scenario"):
        portsim.run_scenario(str(EXAMPLES / "scatter-toy.yaml"))



def test_run_scenario_takes_planner_names_as_the_scenario_file_does() -> None:
    scenario = portsim.load_scenario(EXAMPLES / "scatter-toy.yaml")
    flat = [spec for spec in scenario.planners if spec.name == "flat"]
    by_spec = portsim.run_scenario(scenario, horizon=100, planners=flat).results[0]
    for given in (["flat"], "flat"):
        by_name = portsim.run_scenario(scenario, horizon=100, planners=given).results
        assert [r.planner for r in by_name] == ["flat"]
        # the figures of the same run given as a PlannerSpec: 49 done, makespan 10/3
        assert by_name[0].completed == by_spec.completed == 49
        assert by_name[0].makespan == by_spec.makespan == Fraction(10, 3)
    with pytest.raises(PlannerError, match=r"planners\[1\]: expected a planner name .*'int'"):
        portsim.run_scenario(scenario, planners=["flat", 3])
    with pytest.raises(PlannerError, match=r"planners\[0\]: unknown planner.*'flt'"):
        portsim.run_scenario(scenario, planners=["flt"])


def test_loaders_given_no_file_name_say_so_in_portsims_family() -> None:
    from portsim.scenarios.msccl import load_platform_file
    from portsim.scenarios.study import load_study

    loaders = [(portsim.load_scenario, ScenarioError, "scenario_from_dict"),
               (portsim.load_schedule, ScheduleError, "schedule_from_dict"),
               (load_study, ScenarioError, "study_from_dict"),
               (portsim.load_results, ScenarioError, None),
               (load_platform_file, ScheduleError, None)]
    for load, error, from_dict in loaders:
        for given, type_name in ((3, "int"), (None, "NoneType"), ({"name": "x"}, "dict")):
            with pytest.raises(error, match=rf"expected a file name .*'{type_name}'\)$") as info:
                load(given)
            hint = from_dict is not None and type_name == "dict"
            assert (f"goes to {from_dict}" in str(info.value)) is hint
    # a path still reads: the figure of the scenario file, scatter-toy's 5 nodes
    assert len(portsim.load_scenario(EXAMPLES / "scatter-toy.yaml").platform.nodes) == 5


def test_validate_msccl_names_a_platform_given_as_a_file_name() -> None:
    from portsim.scenarios.msccl import ring_allgather_xml

    with pytest.raises(ScheduleError, match="platform must be a Platform"):
        portsim.validate_msccl(ring_allgather_xml(3), "dgx.yaml")


# -- records ------------------------------------------------------------------------------


def test_records_print_in_a_notebook_cell_without_their_long_tuples() -> None:
    """``repr`` of a plan of the ``lp`` on 20 random nodes was 3 MB (every
    event, every link, every completion time), what a notebook prints when a
    cell ends with ``plan``.  A tuple of more than 10 items now shows its
    first 3 and a count; a small record prints as before, in full."""
    from portsim.scenarios.generators import complete_platform

    n = 200
    platform = complete_platform(n)
    plan = get_planner("flat").plan(platform, Operation(OperationKind.SCATTER, source="P0"))
    schedule = plan.schedule
    assert len(schedule.events) == n - 1                       # one send per target
    star = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", 1)])
    periodic = get_planner("lp").plan(star, Operation(OperationKind.SCATTER, source="S"))
    report = replay(periodic.schedule, horizon=100)
    assert len(report.completion_times) == report.completed > 10    # 1/2 a time unit
    for record, more in ((platform, f"... {n - 3} more"),                  # nodes
                         (platform, f"... {n * (n - 1) - 3} more"),        # links
                         (schedule.operation, f"... {n - 1 - 3} more"),    # targets
                         (schedule, f"... {n - 1 - 3} more"),              # events
                         (report, f"... {len(report.completion_times) - 3} more")):
        assert more in repr(record)
    assert len(repr(plan)) < 4000 < len(repr(schedule.events))
    # a small record: every field in full, each item as its own repr
    small = Platform.build(["S", "A"], [("S", "A", "2/3")])
    one = Schedule.from_dicts(small, Operation(OperationKind.SCATTER, source="S").resolve(small),
                              [{"kind": "send", "src": "S", "dst": "A", "item": "m[A]",
                                "start": 0}])
    assert repr(small) == (f"Platform(nodes={small.nodes!r}, links={small.links!r}, "
                           f"port_model={small.port_model!r})")
    assert repr(one) == (f"Schedule(platform={small!r}, operation={one.operation!r}, "
                         f"events={one.events!r}, period=None, instances_per_period=1, "
                         f"follows=())")


def test_the_platform_graph_cannot_be_changed_behind_the_planners() -> None:
    """``platform.graph`` is the graph the planners search, cached: a user's
    ``platform.graph.add_edge("S", "B", ...)`` made ``flat`` route over a link
    the platform does not have (``PlannerError: no link (got 'S -> B')``), and
    a removed link made the schedules of a frozen platform change."""
    import networkx as nx

    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("A", "B", 1)])
    broadcast = Operation(OperationKind.BROADCAST, source="S")
    assert get_planner("flat").plan(platform, broadcast).makespan == 2   # S -> A -> B
    for change in (lambda g: g.add_edge("S", "B", c=1, ticks=1),
                   lambda g: g.remove_edge("A", "B"), lambda g: g.remove_node("A")):
        with pytest.raises(nx.NetworkXError, match="Frozen graph"):
            change(platform.graph)
    assert get_planner("flat").plan(platform, broadcast).makespan == 2
    assert platform.graph.number_of_edges() == 2
    mine = platform.graph.copy()
    mine.add_edge("S", "B")                  # a copy is the user's to change
    assert (mine.number_of_edges(), platform.graph.number_of_edges()) == (3, 2)


def test_resolve_and_validate_msccl_name_a_wrong_argument() -> None:
    """``operation.resolve("P")`` raised ``AttributeError: 'str' object has no
    attribute 'processors'`` and ``validate_msccl(3, platform)`` ``os.fspath``'s
    ``TypeError``."""
    from portsim.scenarios.msccl import ring_allgather_xml, validate_msccl

    platform = Platform.build(["P0", "P1", "P2"], [("P0", "P1", 1), ("P1", "P2", 1),
                                                    ("P2", "P0", 1)])
    scatter = Operation(OperationKind.SCATTER, source="P0")
    with pytest.raises(OperationError, match=r"^platform: expected a Platform .*'str'"):
        scatter.resolve("P")  # type: ignore[arg-type]
    assert scatter.resolve(platform).targets == ("P1", "P2")
    with pytest.raises(ScheduleError, match=r"^algorithm: expected a file name or the XML text"):
        validate_msccl(3, platform)  # type: ignore[arg-type]
    # the ring allgather of 3 chunks over links of cost 1: 2 steps, one chunk each
    assert validate_msccl(ring_allgather_xml(3), platform, size=3, lp=False).makespan == 2


def test_asymptotic_study_names_a_wrong_argument() -> None:
    """``asymptotic_study(run_scenario(s))`` raised ``AttributeError:
    'ScenarioResult' object has no attribute 'platform'``, and ``plans`` of
    the wrong length a ``ValueError`` outside portsim's family."""
    from portsim.scenarios.asymptotic import asymptotic_study

    scenario = portsim.load_scenario(EXAMPLES / "scatter-toy.yaml")
    result = portsim.run_scenario(scenario, horizon=100)
    with pytest.raises(ScenarioError, match=r"^scenario: expected a Scenario \(a run_scenario "
                                            r"result: pass its \.scenario\)"):
        asymptotic_study(result)  # type: ignore[arg-type]
    for periods, where in (("10", "periods"), ((10, 0), r"periods\[1\]"),
                           ((2.5,), r"periods\[0\]")):
        with pytest.raises(ScenarioError, match=rf"^{where}: "):
            asymptotic_study(scenario, periods)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match=r"^plans: 1 plans for 2 planners"):
        asymptotic_study(scenario, (10,), plans=[None])
    # lp's period 6 holds 3 scatters, TP = 1/2: 10 periods (60) complete 29, one in start-up
    (lp,) = [row for row in asymptotic_study(scenario, (10,)).rows if row.planner == "lp"]
    assert (lp.horizon, lp.completed) == (60, 29)


def test_a_report_gives_its_measured_throughput_exactly_as_its_json_does() -> None:
    """``Report.to_dict()`` had ``measured_throughput_exact`` ("249/500") but
    the report had no such attribute: from Python only the float 0.498."""
    scenario = portsim.load_scenario(EXAMPLES / "scatter-toy.yaml")
    plan = get_planner("flat").plan(scenario.platform, scenario.operation)
    report = validate(plan.schedule, horizon="1000/3")
    run = portsim.run_scenario(scenario, planners=["flat"]).results[0]
    # flat's pipelined series: 166 scatters by 1000/3, as `portsim run` prints it
    assert report.completed == run.completed == 166
    assert report.measured_throughput_exact == run.measured_throughput_exact == Fraction(249, 500)
    assert report.to_dict()["measured_throughput_exact"] == "249/500"
    assert validate(plan.schedule).measured_throughput_exact is None    # no horizon
