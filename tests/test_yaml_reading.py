"""Reading YAML: libyaml's parser where present, duplicate keys refused, and
alias expansion bounded before anything is built (issue 13, "hostile inputs").

A "billion laughs" file of a few hundred bytes names one list of nine
strings, then nine lists of nine aliases to it, and so on: nine levels make
9**9 strings.  Building it is cheap (the aliases share one object), but
anything that walks it (pydantic, ``json.dumps`` of a study's run key) runs
for ever; it is refused as soon as it is parsed.
"""

from __future__ import annotations

import itertools
import tracemalloc
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from portsim.scenarios.cli import main
from portsim.scenarios.loader import YAML_ALIAS_BUDGET, YAML_MAX_DEPTH, load_scenario, read_yaml
from portsim.simulator.errors import ScenarioError

LEVELS = "abcdefghi"


def alias_bomb(indent: str = "  ") -> str:
    """Nine levels of nine aliases: 9**9 = 387,420,489 strings once expanded."""
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for below, level in itertools.pairwise(LEVELS):
        lines.append(f"{indent}{level}: &{level} [{','.join(['*' + below] * 9)}]")
    return "\n".join(lines) + "\n"


def expanded_nodes() -> int:
    """The bomb's size with every alias expanded, computed independently: level
    k (k = 0 for a) is a list of 9 copies of level k - 1, plus the mapping of
    the nine levels and their keys."""
    sizes = [1 + 9]  # the list a and its nine strings
    for _ in LEVELS[1:]:
        sizes.append(1 + 9 * sizes[-1])
    return 1 + len(LEVELS) + sum(sizes)  # the mapping, its keys, its values


STUDY = """\
name: bomb
base:
  platform: {generator: {type: complete, n: 3}}
  operation: {type: broadcast, source: P0}
  planners: [flat]
  extra:
BOMB
grid:
  platform.generator.n: [3]
"""

SCENARIO = """\
name: bomb
platform:
  nodes: [{id: A}, {id: B}]
  links: [{src: A, dst: B, c: 1}]
operation: {type: broadcast, source: A}
planners: [flat]
description:
BOMB
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_the_bomb_is_small_and_huge() -> None:
    text = alias_bomb()
    assert len(text) < 700
    assert expanded_nodes() > 400_000_000 > YAML_ALIAS_BUDGET


def test_an_alias_bomb_in_a_study_base_is_bad_input(tmp_path: Path) -> None:
    # It hung `portsim study` in json.dumps of the run key, memory growing.
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace("BOMB\n", alias_bomb("    ")))
    code, out, err = run("study", str(path), "--out", str(tmp_path / "out"))
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith(f"portsim: error: {path}: base: YAML aliases expand this to ")
    assert "an alias bomb?" in line
    assert not (tmp_path / "out" / "results.parquet").exists()


def test_an_alias_bomb_in_a_scenario_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.replace("BOMB\n", alias_bomb()))
    code, out, err = run("run", str(path))
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith(f"portsim: error: {path}: description: YAML aliases expand ")


def test_the_expanded_size_is_counted_exactly(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(""))
    with pytest.raises(ScenarioError) as caught:
        read_yaml(path, error=ScenarioError)
    # The document: one mapping of nine keys; the walk counts every node once
    # per expansion.
    size = expanded_nodes()
    distinct = 1 + 2 * len(LEVELS) + 9  # the mapping, keys, lists, and a's nine strings
    assert f"expand this to {size:,} nodes, {size - distinct:,} more than the file" in (
        caught.value.message)
    assert caught.value.path == "i"  # the heaviest top-level key


def test_a_recursive_alias_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("name: x\nplatform: &p {nodes: [*p]}\n")
    with pytest.raises(ScenarioError, match="a YAML alias refers to a node that contains it"
                       ) as caught:
        read_yaml(path, error=ScenarioError)
    assert caught.value.path == "platform"


def test_honest_anchors_still_load(tmp_path: Path) -> None:
    path = tmp_path / "anchors.yaml"
    path.write_text("""\
name: anchors
platform:
  nodes: [{id: A}, {id: B}, {id: C}]
  links:
    - {src: A, dst: B, c: &cheap "1/3"}
    - {src: A, dst: C, c: *cheap}
operation: {type: broadcast, source: A}
planners: [flat]
""")
    scenario = load_scenario(path)
    assert scenario.platform.cost("A", "C") == scenario.platform.cost("A", "B") == Fraction(1, 3)


def test_duplicate_keys_and_syntax_errors_read_the_same_with_libyaml(tmp_path: Path) -> None:
    # The C parser's messages differ; the pure-Python parser's are reported.
    path = tmp_path / "bad.yaml"
    path.write_text("name: a\nname: b\n")
    with pytest.raises(ScenarioError, match="duplicate key 'name'"):
        read_yaml(path, error=ScenarioError)
    path.write_text("name: [a, b\n")
    with pytest.raises(ScenarioError) as caught:
        read_yaml(path, error=ScenarioError)
    with pytest.raises(yaml.YAMLError) as python:
        yaml.load("name: [a, b\n", Loader=yaml.SafeLoader)
    problem = python.value.problem  # type: ignore[attr-defined]
    assert caught.value.message == f"invalid YAML: {problem}"


@pytest.mark.parametrize("anchor", ["", "&deep "])
def test_nesting_deeper_than_the_limit_is_bad_input(tmp_path: Path, anchor: str) -> None:
    # libyaml's parser has no recursion limit of its own: the depth is checked
    # on the parsed nodes, with or without anchors (two walks).
    path = tmp_path / "deep.yaml"
    for depth, ok in ((YAML_MAX_DEPTH, True), (YAML_MAX_DEPTH + 1, False)):
        # The top-level mapping is one level; then depth - 1 nested lists.
        path.write_text(f"name: {anchor}" + "[" * (depth - 1) + "]" * (depth - 1) + "\n")
        if ok:
            value, levels = read_yaml(path, error=ScenarioError)["name"], 2
            while value:
                (value,), levels = value, levels + 1
            assert (value, levels) == ([], depth)
        else:
            with pytest.raises(ScenarioError, match="invalid YAML: nested too deeply"):
                read_yaml(path, error=ScenarioError)


MERGED = """\
name: merged
platform:
  nodes: [{id: S}, {id: A}, {id: B}]
  links:
    - &link {src: S, dst: A, c: "1/2"}
    - {<<: *link, dst: B}
operation: {type: scatter, source: S}
planners: [flat]
"""


def test_merge_keys_read_as_yaml_reads_them(tmp_path: Path) -> None:
    """``<<: *anchor`` was an error (`could not determine a constructor for
    the tag 'tag:yaml.org,2002:merge'`): the duplicate-key check built the
    merge key itself.  It now merges, the mapping's own keys first, exactly
    as PyYAML's safe loader does; a key given twice beside it is still refused."""
    path = tmp_path / "merged.yaml"
    path.write_text(MERGED)
    assert read_yaml(path, error=ScenarioError) == yaml.load(MERGED, Loader=yaml.SafeLoader)
    platform = load_scenario(path).platform
    assert platform.cost("S", "B") == Fraction(1, 2)
    assert platform.cost("S", "A") == Fraction(1, 2)
    path.write_text(MERGED.replace("{<<: *link, dst: B}", "{<<: *link, dst: B, dst: A}"))
    with pytest.raises(ScenarioError, match="duplicate key 'dst'"):
        read_yaml(path, error=ScenarioError)


# -- the items of a top-level list, built one by one -----------------------------------

_SCALARS = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
            | st.floats(allow_nan=False) | st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(document=st.dictionaries(st.text(max_size=6), st.lists(_VALUES, max_size=6)
                                | _VALUES, min_size=1, max_size=5),
       flow=st.sampled_from([None, True, False]))
def test_a_document_reads_as_pyyaml_reads_it(tmp_path_factory: pytest.TempPathFactory,
                                             document: dict[str, object],
                                             flow: bool | None) -> None:
    # Each item of a top-level list is built as soon as it is parsed (without
    # anchors): the data must be what PyYAML's own pure-Python safe loader builds.
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    path = tmp_path_factory.mktemp("doc") / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    assert read_yaml(path, error=ScenarioError) == yaml.load(text, Loader=yaml.SafeLoader)


@pytest.mark.parametrize("text", [
    "<<: [{a: 1}, {b: 2}]\nc: 3\nl: [1, [2, 3], {x: [4]}]\n",  # mappings merged at the top
    "events:\n  - {<<: {k: 1}, j: 2}\n  - {<<: [{k: 2}, {m: 3}]}\n",
    "o: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}, {a: 2}]\ns: !!set {a, b}\n",
    "l: [!!str 1, !!binary aGVsbG8=, 2001-12-14t21:59:43.10-05:00, -.inf, ~, 0x1F, 1_000]\n",
    "events:\n  -\n  - []\n  - {}\n  - ''\n  - [[[[1]]]]\n",
])
def test_typed_and_merged_lists_read_as_pyyaml_reads_them(tmp_path: Path, text: str) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(text)
    assert read_yaml(path, error=ScenarioError) == yaml.load(text, Loader=yaml.SafeLoader)


def test_a_long_list_is_read_in_little_memory(tmp_path: Path) -> None:
    # The document's node graph (a tag and two marks a scalar) was kept whole
    # until the data was built: 5,175 bytes of peak an event of this file,
    # for the 600 the data keeps.  Built item by item, about 1,050.
    n = 5000
    path = tmp_path / "long.yaml"
    path.write_text("operation: {type: broadcast, source: S}\nevents:\n" + "".join(
        f'  - {{kind: send, src: S, dst: A, item: "b#{i}", start: {i}}}\n' for i in range(n)))
    tracemalloc.start()
    try:
        data = read_yaml(path, error=ScenarioError)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data["events"][n - 1] == {"kind": "send", "src": "S", "dst": "A",
                                     "item": f"b#{n - 1}", "start": n - 1}
    assert peak / n < 2000


@pytest.mark.parametrize(("text", "expected"), [
    ("events:\n  - {a: " + "9" * 5000 + "}\n  - {b: 1}\n  - [unclosed\n",
     "line 5, column 1: invalid YAML: expected ',' or ']', but got '<stream end>' "
     "(got '- [unclosed')"),
    ("events:\n  - {a: 2001-02-30}\n  - b: c: d\n",
     "line 3, column 9: invalid YAML: mapping values are not allowed here (got '- b: c: d')"),
    ("events:\n  - {a: 2001-02-30}\nlinks: 1\nlinks: 2\n",
     "line 4, column 1: invalid YAML: duplicate key 'links' (got 'links: 2')"),
    ("events:\n  - {a: 2001-02-30}\n  - " + "[" * (YAML_MAX_DEPTH + 1)
     + "]" * (YAML_MAX_DEPTH + 1) + "\n", "invalid YAML: nested too deeply")])
def test_a_bad_value_early_in_a_list_does_not_hide_a_later_error(tmp_path: Path, text: str,
                                                                 expected: str) -> None:
    """Reading a list item by item built an early item (an integer of 5,000 digits, the
    date 2001-02-30) before the rest was parsed, and its error hid the syntax error,
    duplicate key or depth after it that the file gave before (the messages here are
    those of commit 311b3c3, which read the document whole)."""
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        read_yaml(path, error=ScenarioError)
    assert str(raised.value) == f"{path}: {expected}"
