"""SimGrid platform XML import: units, routes, routers, errors."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from scenarios.simgrid import simgrid_platform
from simulator.errors import ScenarioError

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
])
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        simgrid_platform(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="file not found"):
        simgrid_platform(tmp_path / "nothing.xml")


def test_docstring_example_runs() -> None:
    import doctest

    import scenarios.simgrid

    result = doctest.testmod(scenarios.simgrid)
    assert result.attempted > 0
    assert result.failed == 0
