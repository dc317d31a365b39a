"""Fuzzing the loader and the engine with hypothesis: a clean error or a report, nothing else.

Random schedule documents, from nearly valid (a real platform and operation,
events with one odd field) to pure junk, go through
:func:`scenarios.schedule_from_dict` and, when they load, through the engine
in both modes, several port models and horizons.  Random YAML text, and valid
schedule files with a few characters mangled, go through
:func:`scenarios.load_schedule`.  The only acceptable outcomes are a
:class:`~portsim.simulator.errors.PortsimError` (bad input, one line) and a
:class:`~portsim.simulator.report.Report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portsim.scenarios import load_schedule, schedule_from_dict
from portsim.simulator import PortsimError, Report, Schedule, replay

NODES = ["A", "B", "C", "D"]
PLATFORM: dict[str, Any] = {
    "nodes": [{"id": "A"}, {"id": "B", "compute": "1/2"}, {"id": "C", "compute": 0},
              {"id": "D", "router": True}],
    "links": [{"src": "A", "dst": "B", "c": 1, "both_ways": True},
              {"src": "B", "dst": "C", "c": "2/3", "both_ways": True},
              {"src": "A", "dst": "D", "c": "1/3"}, {"src": "D", "dst": "C", "c": 1}],
}
OPERATIONS: list[dict[str, Any]] = [
    {"type": "broadcast", "source": "A"},
    {"type": "scatter", "source": "A", "targets": ["B", "C"]},
    {"type": "gather", "participants": ["A", "B", "C"], "target": "A"},
    {"type": "reduce", "participants": ["A", "B", "C"], "target": "A"},
    {"type": "reduce", "participants": ["C", "B", "A"], "target": "B", "commutative": True},
    {"type": "allreduce", "participants": ["A", "B", "C"]},
    {"type": "alltoall", "sources": ["A", "B"], "targets": ["A", "B", "C"]},
    {"type": "allgather", "participants": ["A", "B", "C"]},
]

def mostly(valid: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``valid`` 29 times in 30, else ``odd``: a document has dozens of fields, and
    a good share of documents must load to reach the engine."""
    # hypothesis favours the first elements: "odd" is drawn from the END of the list.
    return st.sampled_from([False] * 29 + [True]).flatmap(lambda o: odd if o else valid)


rarely = st.sampled_from([False] * 11 + [True])

junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12,
)
numbers = st.one_of(
    st.integers(-2, 12),
    st.sampled_from(["1/2", "2/3", "5/3", "0", "-1", "1e400", "1e-400", "1e99999999", "abc",
                     "1/0", ".5", "10**100", "nan", "inf", "", "9" * 250]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(), st.text(max_size=4),
)
small_numbers = st.one_of(st.integers(0, 8), st.sampled_from(["1/2", "2/3", "4/3", "1/3"]))
node_ids = mostly(st.sampled_from(NODES),
                  st.one_of(st.sampled_from(["Z", "", "A B"]), junk))
items = mostly(
    st.sampled_from(["b", "m[B]", "m[C]", "m[A]", "m[A,B]", "m[B,C]", "m[B,A]", "v[0,0]",
                     "v[1,1]", "v[2,2]", "v[0,1]", "v[1,2]", "v[0,2]", "v{0,2}", "v{1}",
                     "v{0,1,2}", "b#1", "v[0,1]#1", "m[B]#1"]),
    st.one_of(st.sampled_from(["m[Z]", "v[2,1]", "v{1,1}", "x", "b#99999999999"]),
              st.text(max_size=6), st.integers()),
)
lags = mostly(st.integers(0, 3), st.sampled_from([-1, 10**12, "1", 1.5, True, None]))
parts = mostly(st.sampled_from(["1/2", "1/3", "2/3", 1]), st.sampled_from([0, "3/2", -1, "abc"]))
extra_key = st.sampled_from(["part", "lag", "duration", "colour"])


@st.composite
def send_events(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {"kind": "send", "src": draw(node_ids), "dst": draw(node_ids),
                             "item": draw(items)}
    event["start"] = draw(mostly(small_numbers, numbers))
    for key in draw(mostly(st.lists(extra_key.filter(lambda k: k != "colour"), max_size=2,
                                    unique=True),
                           st.lists(extra_key, max_size=2, unique=True))):
        event[key] = draw({"part": parts, "lag": lags, "duration": numbers,
                           "colour": junk}[key])
    return event


@st.composite
def compute_events(draw: st.DrawFn) -> dict[str, Any]:
    inputs = draw(mostly(st.lists(items, min_size=2, max_size=3), junk))
    event: dict[str, Any] = {"kind": "compute", "node": draw(node_ids), "inputs": inputs,
                             "output": draw(items),
                             "start": draw(mostly(small_numbers, numbers))}
    if draw(st.booleans()):
        event["lag"] = draw(lags)
    return event


events = mostly(st.one_of(send_events(), send_events(), compute_events()),
                st.one_of(st.fixed_dictionaries({"kind": st.sampled_from(
                    ["send", "compute", "x"])}), junk))


@st.composite
def documents(draw: st.DrawFn) -> object:
    """A schedule document: mostly well-formed, with odd values anywhere."""
    if draw(rarely):
        return draw(junk)
    document: dict[str, Any] = {
        "platform": draw(rarely.flatmap(lambda odd: junk if odd else st.just(PLATFORM))),
        "operation": draw(mostly(st.sampled_from(OPERATIONS), junk)),
        "events": draw(mostly(st.lists(events, min_size=1, max_size=8), junk)),
    }
    if draw(st.booleans()):
        document["period"] = draw(mostly(st.sampled_from([9, 10, "21/2", 12]), numbers))
        if draw(st.booleans()):
            document["instances_per_period"] = draw(
                st.one_of(st.integers(1, 3), st.sampled_from([0, -1, 10**9, "2", None])))
    if draw(rarely):
        document["port_model"] = draw(st.sampled_from(
            ["unidirectional", "multiport:2", "multiport:0", "multiport:99999999999", "x"]))
    if draw(rarely):
        document[draw(st.text(max_size=5))] = draw(junk)
    return document


def check_replays(schedule: Schedule, mode: str, port_model: str | None,
                  horizon: object) -> None:
    outcome: Report | PortsimError
    try:
        outcome = replay(schedule, mode=mode, port_model=port_model,
                         horizon=horizon)  # type: ignore[arg-type]
    except PortsimError as err:
        outcome = err
    if isinstance(outcome, PortsimError):
        assert "\n" not in str(outcome)
        return
    report = outcome
    assert isinstance(report, Report)
    assert report.feasible == (not report.violations)
    for violation in report.violations:
        assert violation.kind
        assert all(0 <= i < len(schedule.events) for i in violation.events)


def check_document(document: object, mode: str, port_model: str | None,
                   horizon: object) -> None:
    loaded: Schedule | PortsimError
    try:
        loaded = schedule_from_dict(document, source="fuzz.yaml")
    except PortsimError as err:
        loaded = err
    if isinstance(loaded, PortsimError):
        assert "\n" not in str(loaded)
        assert str(loaded).startswith("fuzz.yaml")
        return
    check_replays(loaded, mode, port_model, horizon)


modes = st.sampled_from(["strict", "asap"])
port_models = st.sampled_from([None, "unidirectional", "multiport:2"])
horizons = st.sampled_from([None, 1, "7/2", 40, 0, "x"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents(), mode=modes, port_model=port_models, horizon=horizons)
def test_documents_give_an_error_or_a_report(document: object, mode: str,
                                             port_model: str | None, horizon: object) -> None:
    check_document(document, mode, port_model, horizon)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents(), mode=modes, port_model=port_models, horizon=horizons)
def test_documents_give_an_error_or_a_report_large(document: object, mode: str,
                                                   port_model: str | None,
                                                   horizon: object) -> None:
    check_document(document, mode, port_model, horizon)


VALID = """\
platform:
  nodes: [{id: A}, {id: B, compute: "1/2"}, {id: C}]
  links: [{src: A, dst: B, c: 1, both_ways: true}, {src: B, dst: C, c: "2/3"}]
operation: {type: reduce, participants: [A, B], target: A}
period: 3
events:
  - {kind: send, src: B, dst: A, item: "v[1,1]", start: 0}
  - {kind: compute, node: A, inputs: ["v[0,0]", "v[1,1]"], output: "v[0,1]", start: 1}
"""


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "schedule.yaml"


def load_text(path: Path, text: str | bytes) -> None:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    loaded: Schedule | PortsimError
    try:
        loaded = load_schedule(path)
    except PortsimError as err:
        loaded = err
    if isinstance(loaded, PortsimError):
        assert "\n" not in str(loaded)
        return
    check_replays(loaded, "strict", None, None)


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_random_text_gives_an_error_or_a_report(scratch: Path, text: str | bytes) -> None:
    try:
        text.encode("utf-8") if isinstance(text, str) else None
    except UnicodeEncodeError:
        text = text.encode("utf-8", errors="surrogatepass")  # type: ignore[union-attr]
    load_text(scratch, text)


@settings(max_examples=200, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, len(VALID)), st.integers(0, 3),
                                st.sampled_from(list("{}[]:,-\"'#&*!|>%@`\t\n 0123456789/.e"))),
                      min_size=1, max_size=4))
def test_mangled_schedule_files_give_an_error_or_a_report(
        scratch: Path, edits: list[tuple[int, int, str]]) -> None:
    text = VALID
    for position, deleted, inserted in edits:
        position = min(position, len(text))
        text = text[:position] + inserted + text[position + deleted:]
    load_text(scratch, text)


def test_the_unmangled_file_is_feasible(scratch: Path) -> None:
    scratch.write_text(VALID)
    # B sends v[1,1] during [0, 1); A computes [1, 2): one reduce per period 3.
    report = replay(load_schedule(scratch))
    assert report.feasible
    assert report.completed == 10
