"""SimGrid platform XML import: units, routes, routers, errors."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from portsim.scenarios.simgrid import simgrid_platform
from portsim.simulator.errors import ScenarioError

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <zone id="lan" routing="Full">
      <host id="A" speed="2Gf,1Gf"/>
      <host id="B" speed="500Mf"/>
      <host id="C" speed="1e9"/>
      <router id="R"/>
      <link id="ab" bandwidth="1Gbps" latency="10us"/>
      <link id="ar" bandwidth="100MBps" latency="1ms"/>
      <link id="rc" bandwidth="50MBps" latency="2ms"/>
      <route src="A" dst="B"><link_ctn id="ab"/></route>
      <route src="A" dst="R"><link_ctn id="ar"/></route>
      <route src="A" dst="C" symmetrical="NO"><link_ctn id="ar"/><link_ctn id="rc"/></route>
    </zone>
  </zone>
</platform>
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform.xml"
    path.write_text(text)
    return path


def test_conversion_to_costs_and_compute_times(tmp_path: Path) -> None:
    platform = simgrid_platform(write(tmp_path, PLATFORM), message_size=10**6,
                                task_flops=10**9, port_model="unidirectional")
    # 1 Gbps = 125e6 bytes/s: 1e6 bytes take 8 ms, plus 10 us of latency.
    assert platform.cost("A", "B") == Fraction(8, 1000) + Fraction(10, 10**6)
    assert platform.cost("B", "A") == platform.cost("A", "B")  # symmetrical by default
    # Two hops: latencies add, the 50 MB/s link limits: 3 ms + 20 ms.
    assert platform.cost("A", "C") == Fraction(23, 1000)
    assert not platform.has_link("C", "A")  # symmetrical="NO"
    assert platform.cost("R", "A") == Fraction(1, 1000) + Fraction(1, 100)
    # Compute time = task flops / first power state.
    assert platform.node("A").compute == Fraction(1, 2)
    assert platform.node("B").compute == 2
    assert platform.node("C").compute == 1
    assert platform.node("R").router
    assert str(platform.port_model) == "unidirectional"


@pytest.mark.parametrize(("text", "match"), [
    (PLATFORM.replace('speed="500Mf"', 'speed="fast"'), r"host\[id=B\]\.speed: not a SimGrid"),
    (PLATFORM.replace("1Gbps", "1Gbananas"), r"link\[id=ab\]\.bandwidth: unknown bandwidth"),
    (PLATFORM.replace('<link_ctn id="ab"/>', '<link_ctn id="zz"/>'), r"route\[0\]\.link_ctn: "
                                                                     r"unknown link"),
    (PLATFORM.replace('dst="B"', 'dst="Q"'), r"route\[0\]\.dst: unknown host"),
    (PLATFORM.replace('<router id="R"/>', '<cluster id="c"/>'), r"<cluster> is not supported"),
    (PLATFORM.replace("</platform>", ""), r"invalid XML"),
    (PLATFORM.replace('id="C"', 'id="A"'), r"duplicate host"),
    # found by a new user: numbers beyond portsim's bounds (the first hung:
    # a ten-million-digit integer), an id and a route named by their element
    (PLATFORM.replace('"1Gbps"', '"1e99999999Bps"'),
     r"link\[id=ab\]\.bandwidth: number is out of range \(exponent beyond .*"
     r"\(got '1e99999999Bps'\)"),
    (PLATFORM.replace('"1Gbps"', '"1e400Bps"'),
     r"link\[id=ab\]\.bandwidth: number is out of range \(beyond \+-10\^18\)"),
    (PLATFORM.replace('<host id="B"', '<host id="B 2"'),
     r"host\[id=B 2\]: a host or router id must match .*\(got 'B 2'\)"),
    (PLATFORM.replace('<route src="A" dst="B">', '<route src="B" dst="B">'),
     r"route\[0\]: a route joins two distinct ends \(got 'B -> B'\)"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        simgrid_platform(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="file not found"):
        simgrid_platform(tmp_path / "nothing.xml")


def test_docstring_example_runs() -> None:
    import doctest

    import portsim.scenarios.simgrid
    result = doctest.testmod(portsim.scenarios.simgrid)
    assert result.attempted > 0
    assert result.failed == 0


# -- the scenario file: platform.simgrid ------------------------------------------------

EXAMPLES = Path(__file__).resolve().parent.parent / "scenarios" / "examples"


def scenario_text(simgrid: str) -> str:
    return (f"name: sg\nplatform:\n  port_model: unidirectional\n  simgrid: {simgrid}\n"
            "operation: {type: broadcast, source: A}\nplanners: [flat]\n")


def test_a_scenario_names_its_xml_relative_to_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from portsim.scenarios.loader import load_scenario

    folder = tmp_path / "study" / "platforms"
    folder.mkdir(parents=True)
    (folder / "p.xml").write_text(PLATFORM)
    path = tmp_path / "study" / "s.yaml"
    path.write_text(scenario_text(
        "{file: platforms/p.xml, message_size: 1000000, task_flops: \"1e9\"}"))
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    platform = load_scenario(path).platform
    # As test_conversion_to_costs_and_compute_times: 8 ms + 10 us; 3 ms + 20 ms.
    assert platform.cost("A", "B") == Fraction(8, 1000) + Fraction(10, 10**6)
    assert platform.cost("A", "C") == Fraction(23, 1000)
    assert platform.node("B").compute == 2
    assert str(platform.port_model) == "unidirectional"


def test_a_missing_xml_names_where_it_was_looked_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error said only ``platforms/p.xml: file not found``: read from standard
    input, a scenario's relative names are relative to the current folder, and
    nothing said so.  It names the path looked for."""
    from click.testing import CliRunner

    from portsim.scenarios.cli import main

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    result = CliRunner().invoke(main, ["run", "-"], input=scenario_text("platforms/p.xml"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"portsim: error: <stdin>: platform.simgrid: platforms/p.xml: file not found at "
        f"{tmp_path / 'elsewhere' / 'platforms' / 'p.xml'}")


def test_shorthand_and_documented_defaults(tmp_path: Path) -> None:
    from portsim.scenarios.loader import load_scenario

    write(tmp_path, PLATFORM)
    path = tmp_path / "s.yaml"
    path.write_text(scenario_text("platform.xml"))
    platform = load_scenario(path).platform
    # Defaults: messages of 10^6 bytes, tasks of 10^9 flops (one Gf host: 1 s).
    assert platform.cost("A", "B") == Fraction(8, 1000) + Fraction(10, 10**6)
    assert platform.node("C").compute == 1
    assert platform.node("A").compute == Fraction(1, 2)
    assert platform == simgrid_platform(tmp_path / "platform.xml",
                                        port_model="unidirectional")


def test_the_bundled_example_and_its_figures() -> None:
    from portsim.scenarios.loader import load_scenario
    from portsim.scenarios.runner import run_scenario

    scenario = load_scenario(EXAMPLES / "simgrid-cluster.yaml")
    platform = scenario.platform
    fast, slow = Fraction(1, 100), Fraction(1, 20)  # 2 ms + 8 ms; 10 ms + 40 ms
    for a in ("node0", "node1", "node2"):
        for b in ("node0", "node1", "node2"):
            if a != b:
                assert platform.cost(a, b) == fast
        assert platform.cost(a, "node3") == platform.cost("node3", a) == slow
    assert [platform.node(f"node{i}").compute for i in range(4)] == [
        Fraction(1, 20), Fraction(1, 10), Fraction(1, 10), Fraction(1, 5)]
    outcome = {r.planner: r for r in run_scenario(scenario).results}
    assert outcome["flat"].plan is not None
    assert outcome["flat"].plan.makespan == 2 * fast + slow == Fraction(7, 100)
    assert outcome["lp"].plan is not None
    assert outcome["lp"].plan.throughput_bound == 1 / slow == 20
    for text in ("1/100", "1/20", "7/100", "TP = 20"):
        assert text in scenario.description


def test_a_study_reads_its_xml_relative_to_the_study_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from portsim.scenarios.study.execute import execute_run
    from portsim.scenarios.study.spec import load_study

    (tmp_path / "p.xml").write_text(PLATFORM)
    study = tmp_path / "study.yaml"
    study.write_text(
        "name: sg\nbase:\n  platform: {simgrid: {file: p.xml}}\n"
        "  operation: {type: broadcast, source: A}\n  planners: [flat]\n"
        "grid:\n  platform.simgrid.message_size: [1000000, 2000000]\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    runs = load_study(study).runs
    assert len(runs) == 2
    rows = [execute_run(run, "sg")[0] for run in runs]
    assert [row["status"] for row in rows] == ["ok", "ok"]
    assert all(Path(run.scenario["platform"]["simgrid"]["file"]).is_absolute() for run in runs)
    # flat broadcast from A to B, then C (A -> C: 3 ms + size / 50 MB/s), one at a time;
    # R is a router, not a target.  B: 10 us + size / 125 MB/s.
    for row, size in zip(rows, (10**6, 2 * 10**6), strict=True):
        a_b = Fraction(10, 10**6) + Fraction(size, 125 * 10**6)
        a_c = Fraction(3, 1000) + Fraction(size, 50 * 10**6)
        assert row["makespan"] == str(a_b + a_c)
