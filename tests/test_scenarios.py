"""Tests of scenario loading: the schema, the loader, its error messages, the examples."""

from __future__ import annotations

import re
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from portsim.scenarios import PlannerSpec, Scenario, load_scenario, scenario_from_dict
from portsim.scenarios.runner import run_scenario
from portsim.simulator.errors import ScenarioError
from portsim.simulator.operations import OperationKind
from portsim.simulator.platform import PortKind, PortModel

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"

TRIANGLE = """\
name: triangle
platform:
  nodes: [{id: A}, {id: B}, {id: C}]
  links:
    - {src: A, dst: B, c: 1}
    - {src: B, dst: C, c: "2/3"}
    - {src: A, dst: C, c: 0.25}
operation: {type: scatter, source: A}
"""


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_pattern(path: Path, key_path: str, value: str) -> str:
    """The one-line message: ``FILE: KEY.PATH: ... VALUE ...``."""
    return re.escape(f"{path}: {key_path}: ") + r"[^\n]*" + re.escape(value) + r"[^\n]*\Z"


# -- valid scenarios --------------------------------------------------------------


def test_minimal_scenario_gets_its_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, TRIANGLE)
    scenario = load_scenario(path)
    assert isinstance(scenario, Scenario)
    assert scenario.name == "triangle"
    assert scenario.description == ""
    assert scenario.seed is None
    assert scenario.horizon is None
    assert scenario.planners == ()
    assert scenario.source == str(path)
    platform = scenario.platform
    assert platform.port_model == PortModel(PortKind.BIDIRECTIONAL)
    assert [n.compute for n in platform.nodes] == [1, 1, 1]
    assert [n.router for n in platform.nodes] == [False, False, False]
    assert platform.cost("B", "C") == Fraction(2, 3)
    assert platform.cost("A", "C") == Fraction(1, 4)
    assert not platform.has_link("B", "A")
    operation = scenario.operation
    assert operation.kind is OperationKind.SCATTER
    assert operation.targets == ("B", "C")  # every other non-router node
    assert operation.size == 1


def test_full_scenario(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: full-1
        description: all the keys
        seed: 7
        platform:
          port_model: multiport:3
          nodes:
            - {id: A, compute: "1/2"}
            - {id: R, router: true, port_model: unidirectional}
            - {id: B, compute: 0}
          links:
            - {src: A, dst: R, c: 2, both_ways: true}
            - {src: R, dst: B, c: "3/4", both_ways: true}
        operation: {type: reduce, participants: [B, A], target: A, commutative: true, size: 0.5}
        planners:
          - lp
          - {name: greedy, concurrent_transfers: 4, reducers: 2}
        horizon: "1000/3"
        """)
    scenario = load_scenario(path)
    assert scenario.description == "all the keys"
    assert scenario.seed == 7
    assert scenario.horizon == Fraction(1000, 3)
    assert scenario.planners == (
        PlannerSpec("lp", {}),
        PlannerSpec("greedy", {"concurrent_transfers": 4, "reducers": 2}),
    )
    platform = scenario.platform
    assert str(platform.port_model) == "multiport:3"
    assert platform.port_model_of("R") == PortModel(PortKind.UNIDIRECTIONAL)
    assert platform.port_model_of("A") == PortModel(PortKind.MULTIPORT, 3)
    assert platform.processors == ("A", "B")
    assert platform.compute_time("A") == Fraction(1, 2)
    assert platform.compute_time("B") == 0
    # both_ways adds the reverse link with the same cost
    assert {(x.src, x.dst): x.c for x in platform.links} == {
        ("A", "R"): 2, ("R", "A"): 2, ("R", "B"): Fraction(3, 4), ("B", "R"): Fraction(3, 4),
    }
    operation = scenario.operation
    assert operation.participants == ("B", "A")
    assert operation.target == "A"
    assert operation.commutative is True
    assert operation.size == Fraction(1, 2)


def test_loaded_scenario_is_immutable(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, TRIANGLE + "planners: [{name: lp, k: 1}]\n"))
    with pytest.raises(AttributeError):
        scenario.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        scenario.planners[0].options["k"] = 2  # type: ignore[index]


def test_scenario_from_dict_names_its_source() -> None:
    data = {
        "name": "d",
        "platform": {"generator": {"type": "complete", "n": 3}},
        "operation": {"type": "allgather"},
    }
    scenario = scenario_from_dict(data)
    assert scenario.source == "<string>"
    assert scenario.operation.participants == ("P0", "P1", "P2")
    data["operation"] = {"type": "allgather", "participants": ["P0", "P7"]}
    with pytest.raises(ScenarioError, match=r"^<string>: operation\.participants\[1\]: .*'P7'"):
        scenario_from_dict(data)
    with pytest.raises(ScenarioError, match=r"^mine: operation\.participants\[1\]"):
        scenario_from_dict(data, source="mine")


def test_random_generator_uses_the_scenario_seed() -> None:
    def platform(seed: int | None) -> object:
        data: dict[str, object] = {
            "name": "r",
            "platform": {"generator": {"type": "random", "n": 8, "degree": 2, "c": [1, 100]}},
            "operation": {"type": "allreduce"},
        }
        if seed is not None:
            data["seed"] = seed
        return scenario_from_dict(data).platform

    assert platform(1) == platform(1)
    assert platform(1) != platform(2)
    assert platform(None) == platform(0)


# -- examples -----------------------------------------------------------------------


EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))


def test_the_five_examples_are_there() -> None:
    assert {p.stem for p in EXAMPLE_FILES} >= {
        "scatter-toy", "reduce-toy", "broadcast-bidir", "gather-complete", "reduce-sender-times",
    }


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_loads(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert scenario.description, "an example states its source and published figure"
    assert scenario.planners


def test_scatter_toy_is_the_papers_platform() -> None:
    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    links = {(x.src, x.dst): x.c for x in scenario.platform.links}
    assert links == {
        ("Ps", "Pa"): 1, ("Ps", "Pb"): 1, ("Pa", "P0"): Fraction(2, 3),
        ("Pb", "P0"): Fraction(4, 3), ("Pb", "P1"): Fraction(4, 3),
    }
    assert scenario.operation.source == "Ps"
    assert scenario.operation.targets == ("P0", "P1")
    assert [p.name for p in scenario.planners] == ["flat", "lp"]
    for figure in ("1/2", "12", "48"):
        assert figure in scenario.description


def test_reduce_toy_is_the_papers_platform() -> None:
    scenario = load_scenario(EXAMPLES / "reduce-toy.yaml")
    platform = scenario.platform
    nodes = ("P0", "P1", "P2")
    assert {(x.src, x.dst) for x in platform.links} == {
        (i, j) for i in nodes for j in nodes if i != j
    }
    assert {x.c for x in platform.links} == {1}
    assert [platform.compute_time(n) for n in nodes] == [Fraction(1, 2), 1, 1]
    assert scenario.operation.kind is OperationKind.REDUCE
    assert scenario.operation.participants == nodes
    assert scenario.operation.target == "P0"
    assert not scenario.operation.commutative
    assert "TP = 1" in scenario.description


def test_broadcast_example_is_the_papers_platform() -> None:
    scenario = load_scenario(EXAMPLES / "broadcast-bidir.yaml")
    links = {(x.src, x.dst): x.c for x in scenario.platform.links}
    assert links == {("N1", "N2"): 1, ("N1", "N3"): 1, ("N2", "N3"): Fraction(1, 2)}
    assert str(scenario.platform.port_model) == "bidirectional"
    assert scenario.operation.source == "N1"
    assert scenario.operation.targets == ("N2", "N3")


def test_gather_example_is_complete() -> None:
    scenario = load_scenario(EXAMPLES / "gather-complete.yaml")
    assert len(scenario.platform.nodes) == 6
    assert len(scenario.platform.links) == 6 * 5
    assert scenario.operation.kind is OperationKind.GATHER
    assert scenario.operation.target == "P0"
    assert [p.name for p in scenario.planners] == ["flat", "lp"]
    # The one-port argument of its description: P0 receives 5 unit messages per
    # gather through one port, so TP = 1/5, and direct sends take 5 time units.
    outcome = run_scenario(scenario)
    by_name = {run.planner: run for run in outcome.results}
    assert by_name["lp"].throughput_bound == Fraction(1, 5)
    assert by_name["lp"].measured_throughput_exact == Fraction(1, 5)
    assert by_name["flat"].makespan == 5


def test_sender_times_example_is_the_papers_cluster() -> None:
    scenario = load_scenario(EXAMPLES / "reduce-sender-times.yaml")
    platform = scenario.platform
    slow = [n for n in platform.node_ids if n.startswith("S")]
    fast = [n for n in platform.node_ids if n.startswith("F")]
    assert (len(slow), len(fast)) == (4, 8)
    assert all(platform.compute_time(n) == 0 for n in platform.node_ids)
    assert platform.cost("S1", "F0") == Fraction(3, 2)
    assert platform.cost("F0", "S1") == 1
    assert scenario.operation.target in slow
    assert scenario.operation.commutative
    assert "x + 3 = 9/2" in scenario.description
    assert "2x + 1 = 4" in scenario.description


# -- bad inputs -----------------------------------------------------------------------

BAD_SCENARIOS = [
    pytest.param(TRIANGLE + "colour: red\n", "colour", "'colour'", id="unknown-top-key"),
    pytest.param(TRIANGLE.replace("{src: B, dst: C, c: \"2/3\"}", "{src: B, dst: C, cost: 1}"),
                 "platform.links[1].cost", "'cost'", id="unknown-link-key"),
    pytest.param(TRIANGLE.replace("{type: scatter, source: A}",
                                  "{type: scatter, source: A, root: A}"),
                 "operation.root", "'root'", id="unknown-operation-key"),
    pytest.param(TRIANGLE + "seed: abc\n", "seed", "'abc'", id="seed-not-int"),
    pytest.param(TRIANGLE.replace("{id: B}", "{id: B, router: maybe}"),
                 "platform.nodes[1].router", "'maybe'", id="router-not-bool"),
    pytest.param(TRIANGLE.replace("{id: C}", "{id: 7}"),
                 "platform.nodes[2].id", "7", id="node-id-not-string"),
    pytest.param(TRIANGLE.replace("name: triangle", "name: Tri Angle"),
                 "name", "'Tri Angle'", id="bad-name"),
    pytest.param(TRIANGLE.replace("dst: C, c: 0.25", "dst: D, c: 0.25"),
                 "platform.links[2].dst", "'D'", id="unknown-link-node"),
    pytest.param(TRIANGLE.replace("source: A", "source: Z"),
                 "operation.source", "'Z'", id="unknown-source"),
    pytest.param(TRIANGLE.replace("source: A", "source: A, targets: [B, Q]"),
                 "operation.targets[1]", "'Q'", id="unknown-target"),
    pytest.param(TRIANGLE.replace("c: 0.25", "c: 0"),
                 "platform.links[2].c", "0", id="zero-cost"),
    pytest.param(TRIANGLE.replace("c: 0.25", "c: \"-1/2\""),
                 "platform.links[2].c", "'-1/2'", id="negative-cost"),
    pytest.param(TRIANGLE.replace("c: 0.25", "c: abc"),
                 "platform.links[2].c", "'abc'", id="cost-not-a-number"),
    pytest.param(TRIANGLE.replace("{id: A}", "{id: A, compute: -1}"),
                 "platform.nodes[0].compute", "-1", id="negative-compute"),
    pytest.param(TRIANGLE.replace("{type: scatter, source: A}",
                                  "{type: scatter, source: B, targets: [C, A]}"),
                 "operation.targets[1]", "'A'", id="target-unreachable"),
    pytest.param(TRIANGLE.replace("{type: scatter, source: A}",
                                  "{type: gather, participants: [A, B, C], target: A}"),
                 "operation.participants[1]", "'B'", id="gather-target-unreachable"),
    pytest.param(TRIANGLE.replace("{type: scatter, source: A}",
                                  "{type: reduce, participants: [A, C, A], target: C}"),
                 "operation.participants[2]", "'A'", id="participant-twice"),
    pytest.param(TRIANGLE.replace("{type: scatter, source: A}",
                                  "{type: reduce, participants: [A, C], source: A}"),
                 "operation.source", "'A'", id="field-not-for-this-kind"),
    pytest.param(TRIANGLE.replace("type: scatter", "type: scan"),
                 "operation.type", "'scan'", id="unknown-operation"),
    pytest.param(TRIANGLE.replace("source: A", "source: A, size: 0"),
                 "operation.size", "0", id="zero-size"),
    pytest.param(TRIANGLE + "horizon: -5\n", "horizon", "-5", id="negative-horizon"),
    pytest.param(TRIANGLE.replace("platform:\n", "platform:\n  port_model: halfduplex\n"),
                 "platform.port_model", "'halfduplex'", id="bad-port-model"),
    pytest.param(TRIANGLE.replace("{id: B}", "{id: B, port_model: \"multiport:0\"}"),
                 "platform.nodes[1].port_model", "'multiport:0'", id="bad-node-port-model"),
    pytest.param(TRIANGLE.replace("{id: A}", "{id: B}"),
                 "platform.nodes[1].id", "'B'", id="duplicate-node"),
    pytest.param(TRIANGLE.replace("{src: A, dst: B, c: 1}",
                                  "{src: A, dst: B, c: 1, both_ways: true}\n"
                                  "    - {src: B, dst: A, c: 5}"),
                 "platform.links[1]", "'B -> A'", id="both-ways-duplicate"),
    pytest.param(TRIANGLE.replace("{src: A, dst: B, c: 1}",
                                  "{src: A, dst: B, c: 1, both_ways: true}\n"
                                  "    - {src: B, dst: X, c: 5}"),
                 "platform.links[1].dst", "'X'", id="both-ways-keeps-file-index"),
    pytest.param(TRIANGLE + "planners: [lp, {concurrent_transfers: 2}]\n",
                 "planners[1].name", "missing", id="planner-without-name"),
    pytest.param(TRIANGLE + "planners: [lp, 3]\n",
                 "planners[1]", "3", id="planner-not-a-name"),
]


@pytest.mark.parametrize(("text", "key_path", "value"), BAD_SCENARIOS)
def test_bad_scenario_is_a_one_line_error(
    tmp_path: Path, text: str, key_path: str, value: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError, match=error_pattern(path, key_path, value)) as info:
        load_scenario(path)
    assert "\n" not in str(info.value)
    assert info.value.source == str(path)
    assert info.value.path == key_path


GENERATOR = """\
name: gen
platform:
  generator: {generator}
operation: {{type: allreduce}}
"""

BAD_GENERATORS = [
    pytest.param("{type: rnd, n: 4}", "platform.generator.type", "'rnd'", id="unknown-type"),
    pytest.param("{n: 4}", "platform.generator.type", "missing", id="no-type"),
    pytest.param("{type: complete, n: 0}", "platform.generator.n", "0", id="complete-n"),
    pytest.param("{type: complete, n: 3, c: 0}", "platform.generator.c", "0", id="complete-c"),
    pytest.param("{type: complete, n: 3, colour: red}", "platform.generator.colour",
                 "'colour'", id="unknown-key"),
    pytest.param("{type: random, n: 4, degree: 5}", "platform.generator.degree", "5",
                 id="degree-too-large"),
    pytest.param("{type: random, n: 4, degree: 0}", "platform.generator.degree", "0",
                 id="degree-zero"),
    pytest.param("{type: random, n: 1, degree: 1}", "platform.generator.n", "1",
                 id="random-n"),
    pytest.param("{type: random, n: 4, degree: 2, c: [5, 2]}", "platform.generator.c",
                 "[5, 2]", id="reversed-range"),
    pytest.param("{type: random, n: 4, degree: 2, c: [0, 2]}", "platform.generator.c",
                 "[0, 2]", id="zero-cost-range"),
    pytest.param("{type: random, n: 4, degree: 2, compute: [1, 2, 3]}",
                 "platform.generator.compute", "[1, 2, 3]", id="range-of-three"),
    pytest.param("{type: sender_times, times: {A: 2, B: -1}}",
                 "platform.generator.times.B", "-1", id="negative-time"),
    pytest.param("{type: sender_times, times: {}}", "platform.generator.times", "{}",
                 id="no-times"),
]


@pytest.mark.parametrize(("generator", "key_path", "value"), BAD_GENERATORS)
def test_bad_generator_is_a_one_line_error(
    tmp_path: Path, generator: str, key_path: str, value: str
) -> None:
    path = write(tmp_path, GENERATOR.format(generator=generator))
    with pytest.raises(ScenarioError, match=error_pattern(path, key_path, value)) as info:
        load_scenario(path)
    assert "\n" not in str(info.value)


def test_generator_and_explicit_nodes_are_exclusive(tmp_path: Path) -> None:
    path = write(tmp_path, TRIANGLE.replace(
        "platform:\n", "platform:\n  generator: {type: complete, n: 3}\n"))
    with pytest.raises(ScenarioError, match=error_pattern(path, "platform.generator", "not both")):
        load_scenario(path)


def test_links_without_nodes(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: x
        platform: {links: [{src: A, dst: B, c: 1}]}
        operation: {type: broadcast, source: A}
        """)
    with pytest.raises(ScenarioError, match=error_pattern(path, "platform.nodes", "missing")):
        load_scenario(path)


def test_missing_operation(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nplatform: {generator: {type: complete, n: 2}}\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: operation: missing")):
        load_scenario(path)


def test_yaml_syntax_error_names_line_and_text(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nplatform: {nodes: [{id: A}\noperation: {type: gather}\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: line ")) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert "invalid YAML" in message
    assert "line 3, column 1" in message
    assert "'operation: {type: gather}'" in message


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path = write(tmp_path, TRIANGLE + "name: again\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: line 9, column 1: ") +
                       r".*duplicate key 'name'.*'name: again'"):
        load_scenario(path)


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "\n# nothing here\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: empty file") + r"\Z"):
        load_scenario(path)


def test_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: file not found")):
        load_scenario(path)


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "- name: x\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: expected a mapping")):
        load_scenario(path)


def test_very_long_value_is_shortened(tmp_path: Path) -> None:
    path = write(tmp_path, TRIANGLE + "planners: [lp, [" + ", ".join(["x"] * 200) + "]]\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: planners[1]: ")) as info:
        load_scenario(path)
    assert len(str(info.value)) < 250
