"""Tests of schedule files: exact round trips and one-line errors."""

from __future__ import annotations

import io
import json
import re
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from portsim.scenarios import (
    dump_schedule,
    load_schedule,
    platform_to_dict,
    schedule_from_dict,
    schedule_to_dict,
)
from portsim.simulator.errors import ScheduleError
from portsim.simulator.items import Item
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import Link, Node, Platform, PortKind, PortModel
from portsim.simulator.schedule import Compute, Schedule, Send


def write(tmp_path: Path, text: str, name: str = "schedule.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def reduce_platform() -> Platform:
    """Three processors and a router, with exact costs and a per-node port model."""
    nodes = (
        Node("P0", Fraction(1, 2)),
        Node("P1", Fraction(1), PortModel(PortKind.UNIDIRECTIONAL)),
        Node("P2", Fraction(3, 4)),
        Node("R", Fraction(0), router=True),
    )
    links = (
        Link("P1", "P0", Fraction(2, 3)),
        Link("P2", "R", Fraction(1, 3)),
        Link("R", "P0", Fraction(1, 6)),
        Link("P2", "P1", Fraction(5)),
    )
    return Platform(nodes, links, PortModel(PortKind.MULTIPORT, 2))


def _periodic_reduce(reduce_platform: Platform) -> Schedule:
    """A hand-made periodic reduce using every event field (parts, lags, durations)."""
    operation = Operation(OperationKind.REDUCE, participants=("P0", "P1", "P2"),
                          target="P0").resolve(reduce_platform)
    v = Item.interval
    events = (
        Send("P2", "R", v(2, 2), Fraction(0), part=Fraction(1, 4)),
        Send("P2", "R", v(2, 2), Fraction(1, 2), part=Fraction(3, 4)),
        Send("R", "P0", v(2, 2, instance=1), Fraction(1, 3), lag=1),
        Send("P1", "P0", v(1, 1), Fraction(2, 3), duration=Fraction(2, 3)),
        Compute("P0", (v(1, 1), v(2, 2)), v(1, 2), Fraction(5, 3), lag=1),
        Compute("P0", (v(0, 0, 1), v(1, 2, 1)), v(0, 2, 1), Fraction(13, 6), lag=2),
    )
    return Schedule(reduce_platform, operation, events, period=Fraction(7, 3),
                        instances_per_period=2)


def test_periodic_round_trip_is_exact(tmp_path: Path, reduce_platform: Platform) -> None:
    schedule = _periodic_reduce(reduce_platform)
    operation, events = schedule.operation, schedule.events
    path = tmp_path / "periodic.yaml"
    dump_schedule(schedule, path, description="hand-made")

    loaded = load_schedule(path)
    assert loaded.platform == reduce_platform
    assert loaded.platform.port_model_of("P1") == PortModel(PortKind.UNIDIRECTIONAL)
    assert loaded.platform.node("R").router
    assert loaded.operation == operation
    assert loaded.events == events
    assert loaded.period == Fraction(7, 3)
    assert loaded.instances_per_period == 2

    text = path.read_text(encoding="utf-8")
    assert 'c: "2/3"' in text
    assert 'period: "7/3"' in text
    assert text.startswith("description: hand-made\n")
    event_lines = [line for line in text.splitlines() if line.startswith("- {kind: ")]
    assert len(event_lines) == len(events)
    assert 'part: "1/4"' in event_lines[0]
    assert "lag: 2" in event_lines[5]


def test_one_shot_round_trip_through_a_stream() -> None:
    platform = Platform.build({"A": 1, "B": 2, "C": "1/3"},
                              [("A", "B", "1/2"), ("B", "C", 3), ("A", "C", "7/5"),
                               ("C", "A", 1)], "unidirectional")
    operation = Operation(OperationKind.ALLREDUCE, participants=("C", "A"),
                          commutative=True).resolve(platform)
    s = Item.subset
    events = (
        Send("A", "C", s([1]), Fraction(0)),
        Compute("C", (s([0]), s([1])), s([0, 1]), Fraction(7, 5)),
        Send("C", "A", s([0, 1]), Fraction(26, 15)),
        Send("A", "B", Item.message("A", "B", instance=3), Fraction(100)),
    )
    schedule = Schedule(platform, operation, events)
    stream = io.StringIO()
    dump_schedule(schedule, stream)
    loaded = schedule_from_dict(yaml.safe_load(stream.getvalue()))
    assert loaded.platform == platform
    assert str(loaded.platform.port_model) == "unidirectional"
    assert loaded.operation == operation
    assert loaded.events == events
    assert loaded.period is None
    assert "period" not in stream.getvalue()


def test_dump_schedule_names_a_plan_or_a_destination_given_in_their_place(
        tmp_path: Path) -> None:
    """``dump_schedule(plan, path)`` raised ``AttributeError: 'PlanResult' object
    has no attribute 'platform'`` and ``dump_schedule(schedule, None)``
    ``'NoneType' object has no attribute 'write'``."""
    from portsim.planners.registry import get_planner

    platform = Platform.build(["S", "A", "B"], [("S", "A", 1), ("S", "B", "2/3")])
    plan = get_planner("flat").plan(platform, Operation(OperationKind.SCATTER, source="S"))
    for name in ("p.yaml", "p.json", "p.jsonl"):
        with pytest.raises(ScheduleError, match=r"^schedule: expected a Schedule \(a PlanResult: "
                                                r"pass its \.schedule\)"):
            dump_schedule(plan, tmp_path / name)  # type: ignore[arg-type]
        assert not (tmp_path / name).exists()
    schedule = plan.schedule
    assert schedule is not None
    for bad in (None, 3):
        with pytest.raises(ScheduleError, match=r"^destination: expected a file name or an "
                                                r"open text stream"):
            dump_schedule(schedule, bad)  # type: ignore[arg-type]
    dump_schedule(schedule, tmp_path / "p.yaml")
    # flat: A's message at 0, B's at 1, makespan 1 + 2/3
    assert load_schedule(tmp_path / "p.yaml").events == schedule.events


def test_schedule_to_dict_writes_numbers_as_strings() -> None:
    platform = Platform.build({"A": "1/2", "B": 1}, [("A", "B", "2/3")])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)
    schedule = Schedule(platform, operation, (Send("A", "B", Item.broadcast(), Fraction(1, 3)),))
    document = schedule_to_dict(schedule)
    assert document == {
        "platform": {
            "port_model": "bidirectional",
            "nodes": [{"id": "A", "compute": "1/2"}, {"id": "B", "compute": "1"}],
            "links": [{"src": "A", "dst": "B", "c": "2/3"}],
        },
        "operation": {"type": "broadcast", "source": "A", "targets": ["B"]},
        "events": [{"kind": "send", "src": "A", "dst": "B", "item": "b", "start": "1/3"}],
    }
    assert platform_to_dict(platform) == document["platform"]


HAND_WRITTEN = """\
platform:
  nodes: [{id: A}, {id: B}, {id: C}]
  links:
    - {src: A, dst: B, c: 1, both_ways: true}
    - {src: B, dst: C, c: "1/2"}
operation: {type: broadcast, source: A}
period: 2
events:
  - {kind: send, src: A, dst: B, item: b, start: 0}
  - {kind: send, src: B, dst: C, item: b, start: 0.5, lag: 1, part: "1/2"}
  - {kind: send, src: B, dst: C, item: b, start: 1.5, lag: 1, part: 0.5}
"""


def test_hand_written_schedule(tmp_path: Path) -> None:
    schedule = load_schedule(write(tmp_path, HAND_WRITTEN))
    assert schedule.platform.cost("B", "A") == 1  # both_ways
    assert schedule.operation.targets == ("B", "C")
    assert schedule.period == 2
    assert schedule.instances_per_period == 1
    assert schedule.events[1] == Send("B", "C", Item.broadcast(), Fraction(1, 2),
                                      part=Fraction(1, 2), lag=1)
    assert schedule.events[2].start == Fraction(3, 2)


def test_port_model_key_overrides_the_platform(tmp_path: Path) -> None:
    schedule = load_schedule(write(tmp_path, HAND_WRITTEN + "port_model: unidirectional\n"))
    assert schedule.platform.port_model == PortModel(PortKind.UNIDIRECTIONAL)


def test_generated_platform_uses_the_seed(tmp_path: Path) -> None:
    template = """\
        platform: {{generator: {{type: random, n: 6, degree: 2, c: [1, 50]}}}}
        operation: {{type: allgather}}
        seed: {seed}
        events: []
        """
    one = load_schedule(write(tmp_path, template.format(seed=1), "one.yaml")).platform
    again = load_schedule(write(tmp_path, template.format(seed=1), "again.yaml")).platform
    two = load_schedule(write(tmp_path, template.format(seed=2), "two.yaml")).platform
    assert one == again
    assert one != two


def test_platform_file_holding_a_scenario(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path, """\
        name: plat
        seed: 5
        platform: {generator: {type: random, n: 5, degree: 2, c: [1, 9]}}
        operation: {type: allgather}
        """, "sub/scenario.yaml")
    path = write(tmp_path, """\
        platform_file: sub/scenario.yaml
        operation: {type: allgather}
        events: []
        """)
    with_file_seed = load_schedule(path).platform
    path.write_text(path.read_text() + "seed: 6\n")
    with_own_seed = load_schedule(path).platform
    path.write_text(path.read_text().replace("seed: 6", "seed: 5"))
    assert with_file_seed != with_own_seed
    assert load_schedule(path).platform == with_file_seed


def test_bare_platform_file(tmp_path: Path) -> None:
    write(tmp_path, """\
        port_model: unidirectional
        nodes: [{id: A}, {id: B, compute: "1/2"}]
        links: [{src: A, dst: B, c: 3}]
        """, "plat.yaml")
    path = write(tmp_path, """\
        platform_file: plat.yaml
        operation: {type: scatter, source: A}
        events: [{kind: send, src: A, dst: B, item: "m[B]", start: 0}]
        """)
    schedule = load_schedule(path)
    assert schedule.platform.cost("A", "B") == 3
    assert schedule.platform.compute_time("B") == Fraction(1, 2)
    assert str(schedule.platform.port_model) == "unidirectional"


def test_bad_bare_platform_file_names_that_file(tmp_path: Path) -> None:
    plat = write(tmp_path, "nodes: [{id: A}, {id: B}]\nlinks: [{src: A, dst: C, c: 3}]\n",
                 "plat.yaml")
    path = write(tmp_path, "platform_file: plat.yaml\noperation: {type: gather}\nevents: []\n")
    with pytest.raises(ScheduleError,
                       match=re.escape(f"{plat}: links[0].dst: unknown node (got 'C')")):
        load_schedule(path)


# -- bad schedule files ----------------------------------------------------------------------

BAD_SCHEDULES = [
    pytest.param(HAND_WRITTEN.replace("start: 0}", "start: 0, colour: red}"),
                 "events[0].colour", "'colour'", id="unknown-event-key"),
    pytest.param(HAND_WRITTEN.replace("start: 0}", "start: abc}"),
                 "events[0].start", "'abc'", id="garbage-time"),
    pytest.param(HAND_WRITTEN.replace("start: 0.5", "start: -1"),
                 "events[1].start", "-1", id="negative-start"),
    pytest.param(HAND_WRITTEN.replace("dst: B, item", "dst: Q, item"),
                 "events[0].dst", "'Q'", id="unknown-node"),
    pytest.param(HAND_WRITTEN.replace("start: 1.5", "start: 2"),
                 "events[2].start", "2", id="start-at-period"),
    pytest.param(HAND_WRITTEN.replace("start: 1.5", "start: \"7/3\""),
                 "events[2].start", "7/3", id="start-after-period"),
    pytest.param(HAND_WRITTEN.replace("item: b, start: 0}", "item: \"w[1]\", start: 0}"),
                 "events[0].item", "'w[1]'", id="bad-item"),
    pytest.param(HAND_WRITTEN.replace("kind: send, src: A", "kind: sned, src: A"),
                 "events[0].kind", "'sned'", id="bad-kind"),
    pytest.param(HAND_WRITTEN.replace("part: 0.5", "part: 2"),
                 "events[2].part", "2", id="part-above-one"),
    # every number of a file is bounded by 10^18 (SPEC, Numbers), an event's too: the
    # plain integers and "p/q" texts its reader takes without the general parser were not
    pytest.param(HAND_WRITTEN.replace("start: 0}", "start: 0, duration: 10000000000000000000000}"),
                 "events[0].duration", "(beyond +-10^18) (got 10000000000000000000000)",
                 id="integer-beyond-bound"),
    pytest.param(HAND_WRITTEN.replace("start: 0}", "start: \"99999999999999999999/3\"}"),
                 "events[0].start", "(beyond +-10^18) (got '99999999999999999999/3')",
                 id="fraction-beyond-bound"),
    # no `kind`: "kind must be send or compute" named no key the file holds
    pytest.param(HAND_WRITTEN.replace("kind: send, src: A", "Kind: send, src: A"),
                 "events[0].Kind", "unknown key (got 'Kind')", id="kind-misspelt"),
    pytest.param(HAND_WRITTEN.replace("kind: send, src: A", "src: A"),
                 "events[0].kind", "missing key (send or compute)", id="kind-missing"),
    pytest.param(HAND_WRITTEN.replace("part: \"1/2\"", "part: \"1/1000000000000000001\""),
                 "events[1].part", "too fine", id="denominator-beyond-bound"),
    pytest.param(HAND_WRITTEN + "horizon: 3\n", "horizon", "'horizon'", id="unknown-top-key"),
    pytest.param(HAND_WRITTEN.replace("period: 2", "period: 0"), "period", "0",
                 id="zero-period"),
    pytest.param(HAND_WRITTEN.replace("source: A", "source: Z"),
                 "operation.source", "'Z'", id="unknown-operation-node"),
    pytest.param(HAND_WRITTEN.replace("c: \"1/2\"", "c: 0"),
                 "platform.links[1].c", "0", id="zero-cost"),
    pytest.param(HAND_WRITTEN + "port_model: sideways\n", "port_model", "'sideways'",
                 id="bad-port-model"),
    pytest.param(HAND_WRITTEN + "platform_file: x.yaml\n", "platform_file", "'x.yaml'",
                 id="platform-and-file"),
    pytest.param(HAND_WRITTEN.replace("platform:", "platform_file: missing.yaml\nold:"),
                 "old", "'old'", id="unknown-key-first"),
]


@pytest.mark.parametrize(("text", "key_path", "value"), BAD_SCHEDULES)
def test_bad_schedule_is_a_one_line_error(
    tmp_path: Path, text: str, key_path: str, value: str
) -> None:
    path = write(tmp_path, text)
    pattern = re.escape(f"{path}: {key_path}: ") + r"[^\n]*" + re.escape(value) + r"[^\n]*\Z"
    with pytest.raises(ScheduleError, match=pattern) as info:
        load_schedule(path)
    assert "\n" not in str(info.value)


def test_missing_platform_file(tmp_path: Path) -> None:
    path = write(tmp_path, "platform_file: gone.yaml\noperation: {type: gather}\nevents: []\n")
    with pytest.raises(ScheduleError,
                       match=re.escape(f"{path}: platform_file: platform file not found at "
                                       f"{tmp_path / 'gone.yaml'} (got 'gone.yaml')")):
        load_schedule(path)


def test_no_platform_at_all(tmp_path: Path) -> None:
    path = write(tmp_path, "operation: {type: gather}\nevents: []\n")
    with pytest.raises(ScheduleError, match=re.escape(f"{path}: platform: missing")):
        load_schedule(path)


def test_schedule_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "none.yaml"
    with pytest.raises(ScheduleError, match=re.escape(f"{path}: file not found")):
        load_schedule(path)


def test_simgrid_platform_is_relative_to_the_schedule_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``platform.simgrid`` file in a schedule file (inline or through
    ``platform_file``) is read relative to the file that names it, whatever
    the current directory."""
    examples = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
    (tmp_path / "xml").mkdir()
    (tmp_path / "xml" / "cluster.xml").write_bytes(
        (examples / "platforms" / "small-cluster.xml").read_bytes())
    simgrid = "{file: xml/cluster.xml, message_size: 1000000, task_flops: 100000000}"
    events = """\
        operation: {type: broadcast, source: node0, targets: [node1]}
        events:
          - {kind: send, src: node0, dst: node1, item: b, start: 0}
        """
    inline = write(tmp_path, f"platform: {{simgrid: {simgrid}}}\n" + textwrap.dedent(events))
    write(tmp_path, f"platform: {{simgrid: {simgrid}}}\n", name="platform.yaml")
    by_file = write(tmp_path, "platform_file: platform.yaml\n" + textwrap.dedent(events),
                    name="by-file.yaml")
    monkeypatch.chdir(examples)  # somewhere without xml/cluster.xml
    for path in (inline, by_file):
        schedule = load_schedule(path)
        # c = 2 ms of latency + 10^6 bytes at 125 MBps (simgrid-cluster.yaml, by hand)
        assert schedule.platform.cost("node0", "node1") == Fraction(1, 100)


# -- the JSON Lines form ---------------------------------------------------------------


def as_jsonl(text: str) -> str:
    """A YAML schedule document in the JSON Lines form: header, then one event per line."""
    document = yaml.safe_load(textwrap.dedent(text))
    events = document.pop("events")
    return "\n".join(json.dumps(x) for x in [document, *events]) + "\n"


def test_jsonl_round_trip_is_exact(tmp_path: Path, reduce_platform: Platform) -> None:
    schedule = _periodic_reduce(reduce_platform)
    events = schedule.events
    path = tmp_path / "periodic.jsonl"
    dump_schedule(schedule, path, description="hand-made")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(events)
    header = json.loads(lines[0])
    assert (header["description"], header["period"], "events" in header) == (
        "hand-made", "7/3", False)
    assert json.loads(lines[1]) == {"kind": "send", "src": "P2", "dst": "R", "item": "v[2,2]",
                                    "start": "0", "part": "1/4"}
    loaded = load_schedule(path)
    assert loaded == schedule
    # The same file as YAML gives the same schedule.
    dump_schedule(schedule, tmp_path / "periodic.yaml")
    assert load_schedule(tmp_path / "periodic.yaml") == loaded
    # A stream gets the form it is asked for.
    stream = io.StringIO()
    dump_schedule(schedule, stream, jsonl=True)
    assert stream.getvalue() == path.read_text(encoding="utf-8").replace(
        '"description":"hand-made",', "")


@pytest.mark.parametrize(("text", "key_path", "value"), BAD_SCHEDULES)
def test_bad_jsonl_schedule_is_the_same_one_line_error(
    tmp_path: Path, text: str, key_path: str, value: str
) -> None:
    path = write(tmp_path, as_jsonl(text), "schedule.jsonl")
    pattern = re.escape(f"{path}: {key_path}: ") + r"[^\n]*" + re.escape(value) + r"[^\n]*\Z"
    with pytest.raises(ScheduleError, match=pattern):
        load_schedule(path)


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("", "schedule.jsonl: empty file", id="empty"),
    pytest.param('[1, 2]\n', "schedule.jsonl: line 1: the first line must be a JSON object",
                 id="header-not-an-object"),
    pytest.param('{"operation": {"type": "gather"}, "events": []}\n',
                 "schedule.jsonl: events: in a .jsonl schedule the events follow",
                 id="events-in-the-header"),
    pytest.param("HEADER\n{\"kind\": \"send\", \"src\": \"A\"\n",
                 "schedule.jsonl: line 2, column 29: invalid JSON: Expecting ',' delimiter",
                 id="broken-line"),
    pytest.param("HEADER\n\n{\"kind\": \"send\", \"src\": \"A\", \"dst\": \"B\", \"item\": \"b\", "
                 "\"start\": 0}\n\n\"text\"\n",
                 "schedule.jsonl: events[1]: an event must be a mapping (got 'text')",
                 id="blank-lines-are-skipped"),
])
def test_jsonl_errors_name_the_line_or_the_event(tmp_path: Path, text: str,
                                                 message: str) -> None:
    header = json.dumps({"platform": {"nodes": [{"id": "A"}, {"id": "B"}],
                                      "links": [{"src": "A", "dst": "B", "c": 1}]},
                         "operation": {"type": "broadcast", "source": "A"}})
    path = write(tmp_path, text.replace("HEADER", header), "schedule.jsonl")
    with pytest.raises(ScheduleError) as caught:
        load_schedule(path)
    assert str(caught.value).startswith(str(tmp_path / message))


def test_plan_writes_the_jsonl_form_that_validate_reads(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from portsim.scenarios.cli import main

    scenario = Path(__file__).resolve().parent.parent / "scenarios/examples/scatter-toy.yaml"
    out = tmp_path / "flat.jsonl"
    runner = CliRunner()
    result = runner.invoke(main, ["plan", str(scenario), "--planner", "flat", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["kind"] == "send" for line in lines[1:])
    result = runner.invoke(main, ["validate", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    assert report["feasible"] is True
    assert len(load_schedule(out).events) == len(lines) - 1



def test_a_json_file_name_gets_json_that_reads_back(tmp_path: Path,
                                                    reduce_platform: Platform) -> None:
    """``dump_schedule(s, "x.json")`` and ``plan -o x.json`` wrote YAML, which
    ``json.load`` and ``jq`` refuse; the document is the YAML one, as JSON."""
    from click.testing import CliRunner

    from portsim.scenarios.cli import main

    schedule = _periodic_reduce(reduce_platform)
    path = tmp_path / "periodic.json"
    dump_schedule(schedule, path, description="hand-made")
    document = json.loads(path.read_text(encoding="utf-8"))
    dump_schedule(schedule, tmp_path / "periodic.yaml", description="hand-made")
    assert document == yaml.safe_load((tmp_path / "periodic.yaml").read_text(encoding="utf-8"))
    assert load_schedule(path) == schedule
    scenario = Path(__file__).resolve().parent.parent / "scenarios/examples/scatter-toy.yaml"
    runner = CliRunner()
    for name in ("flat.json", "flat.yaml"):
        result = runner.invoke(main, ["plan", str(scenario), "--planner", "flat",
                                      "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "flat.json").read_text(encoding="utf-8"))
    # the flat scatter: four sends from the source Ps, every message once
    assert sorted(e["item"] for e in written["events"]) == [
        "m[P0]", "m[P0]", "m[P1]", "m[P1]"]
    assert load_schedule(tmp_path / "flat.json") == load_schedule(tmp_path / "flat.yaml")


@pytest.mark.parametrize(("text", "message"), [
    # json.load keeps the last of two keys silently; the YAML reader said "invalid YAML"
    ('{"events": [{"kind": "send", "start": 0, "start": 1}]}',
     "invalid JSON: duplicate key 'start'"),
    # a trailing comma: no JSON (the YAML reader took it)
    ('{"events": [],\n "period": 1,\n}', "line 3, column 1: invalid JSON: "
                                          "Expecting property name enclosed in double quotes"),
    ("", "invalid JSON: Expecting value"),
])
def test_a_json_schedule_is_read_as_json(tmp_path: Path, text: str, message: str) -> None:
    """A ``.json`` file is read by the JSON reader, its errors saying JSON (line and
    column from ``json``'s own message, by hand: the closing brace of line 3)."""
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScheduleError) as caught:
        load_schedule(path)
    assert message in str(caught.value)


def test_an_event_number_beyond_the_bound_from_python() -> None:
    """``Schedule.from_dicts`` reads an event's plain integer as a file's: 10^18 is the
    largest (``parse_rational`` refuses 10^18 + 1, and the event reader took it)."""
    platform = Platform.build(["A", "B"], [("A", "B", 1)])
    operation = Operation(OperationKind.BROADCAST, source="A").resolve(platform)

    def one(start: object) -> Schedule:
        return Schedule.from_dicts(platform, operation, [
            {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": start}])

    assert one(10**18).events[0].start == 10**18
    assert one("1000000000000000000/3").events[0].start == Fraction(10**18, 3)
    for start in (10**18 + 1, -(10**18) - 1, "1000000000000000001/1"):
        with pytest.raises(ScheduleError, match=r"^events\[0\]\.start: number is out of range"):
            one(start)


BOM = "\ufeff"
"""What Windows tools (PowerShell 5's ``Out-File -Encoding utf8``, Notepad) put first."""

SCATTER_LINES = [
    {"platform": {"nodes": [{"id": "S"}, {"id": "A"}, {"id": "B"}],
                  "links": [{"src": "S", "dst": "A", "c": 1},
                            {"src": "S", "dst": "B", "c": "2/3"}]},
     "operation": {"type": "scatter", "source": "S"}},
    {"kind": "send", "src": "S", "dst": "A", "item": "m[A]", "start": 0},
    {"kind": "send", "src": "S", "dst": "B", "item": "m[B]", "start": 1},
]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_byte_order_mark_is_read_in_every_form(tmp_path: Path, newline: str) -> None:
    """A UTF-8 byte order mark opens a YAML file with no harm; a ``.json`` or ``.jsonl``
    file (or JSON Lines on standard input) holding one was "invalid JSON: Unexpected UTF-8
    BOM". Each reads as without it: S sends m[A] over [0, 1], m[B] over [1, 5/3]."""
    from click.testing import CliRunner

    from portsim.scenarios.cli import main

    header, *events = SCATTER_LINES
    texts = {
        "s.json": json.dumps({**header, "events": events}, indent=1),
        "s.jsonl": "\n".join(json.dumps(line) for line in SCATTER_LINES) + "\n",
        "s.yaml": yaml.safe_dump({**header, "events": events}),
    }
    for name, text in texts.items():
        path = tmp_path / name
        path.write_bytes((BOM + text).replace("\n", newline).encode("utf-8"))
        schedule = load_schedule(path)
        assert [e.start for e in schedule.events] == [0, 1], name
        assert schedule.platform.cost("S", "B") == Fraction(2, 3)
        for args, stdin in (([str(path)], None), (["-"], BOM + text)):
            result = CliRunner().invoke(main, ["validate", *args, "--no-lp-bound",
                                               "--format", "json"], input=stdin)
            assert result.exit_code == 0, (name, args, result.output)
            report = json.loads(result.stdout)
            assert (report["feasible"], report["makespan"]) == (True, "5/3")


def test_a_json_scenario_may_open_with_a_byte_order_mark(tmp_path: Path) -> None:
    from portsim.scenarios import load_scenario

    header = SCATTER_LINES[0]
    path = tmp_path / "s.json"
    path.write_text(BOM + json.dumps({"name": "bom", **header, "planners": ["flat"]}),
                    encoding="utf-8")
    assert load_scenario(path).platform.cost("S", "B") == Fraction(2, 3)
