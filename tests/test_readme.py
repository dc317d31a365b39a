"""The README runs: every fenced block of ``README.md`` is executed or checked.

So is every block of the tutorial, ``docs/tutorial.md``, and of the page on
reproducing the papers, ``docs/papers.md``. An example that
drifts from the code fails here (as SimPy runs its docs). Each fenced block is
handled by its language tag:

- ``yaml``: a whole scenario (keys ``platform`` and ``operation``) is written
  to a file and run with ``portsim run``, exit status 0; a study (key
  ``base``) is run with ``portsim study`` then ``portsim report``. A file is
  written to a directory holding the entries of
  ``scenarios/examples/`` (``platforms/``, ``schedules/``), so relative paths
  resolve as they do for the bundled examples.
- ``python``: executed in a fresh namespace. A ``print(...)  # VALUE`` line
  announces its output: the printed lines must equal the announced values,
  in order. A block that defines ``test_*`` functions is a user's test file:
  each test is called with the fixtures it names (the ``portsim`` pytest
  plugin's, resolved by this session's pytest).
- ``bash``: every command (a line, or a part of a ``&&`` chain) runs.
  ``portsim ARGS`` (or ``python -m portsim ARGS``) runs in process from the
  repository's top level, and exits 0, or N when the line ends with the
  comment ``# exit N``. ``python PATH ...`` needs PATH to exist. ``pip``,
  ``pytest``, ``ruff``, ``mypy`` and ``sphinx-build`` are CI's own commands
  (``.ci/run``) and are not run here.
- ``toml``: parsed with :mod:`tomllib`.
- ``{directive}`` (MyST, in ``docs/``: ``{literalinclude}``, ``{toctree}``):
  not an example; Sphinx renders it (the docs build checks it).

A block that is not whole needs a marker, an HTML comment on the line just
above its fence, visible in the README's source:

- ``<!-- readme-test: skip REASON -->``: not run (REASON is required: an
  output sample, for instance). An untagged block without it fails.
- ``<!-- readme-test: slow REASON -->``: run as its tag says, in the ``slow``
  tests only (``pytest -m slow``).
- ``<!-- readme-test: each line completes YAML -->``: every line of the
  block is a YAML fragment (``platform: {...}``); merged into the mapping
  YAML, it must make a scenario that runs as above.
- ``<!-- readme-test: output of portsim ARGS (exit N), FILE: BASE with KEY.PATH = VALUE -->``:
  the block is the output of ``portsim ARGS`` (both streams, exact lines; exit
  status N, 0 when ``(exit N)`` is left out) where
  FILE is the YAML file BASE (a path from the top level) with one value
  replaced (``KEY.PATH`` as in error messages: ``platform.links[1].c``).

The command is the ``portsim`` console script named in ``pyproject.toml``,
so this file names no module of portsim. Besides the blocks, every path of
the repository that the documents quote in inline code must exist.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import itertools
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = (README, ROOT / "docs" / "tutorial.md", ROOT / "docs" / "papers.md")
EXAMPLES = ROOT / "scenarios" / "examples"
MARKER = re.compile(r"^<!--\s*readme-test:\s*(?P<body>.*?)\s*-->$")
EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")
CI_COMMANDS = ("pip", "pytest", "ruff", "mypy", "sphinx-build")


@dataclass(frozen=True)
class Block:
    """One fenced block: its document, language tag, marker, text and fence line."""

    document: str
    lang: str
    marker: str
    text: str
    line: int

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}-{self.lang or 'plain'}"

    @property
    def slow(self) -> bool:
        return self.marker.startswith("slow")


def blocks(text: str, document: str = "README.md") -> list[Block]:
    """Every fenced block of a markdown text, with the marker just above it."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(`{3,})\s*(\{[\w-]+\}|[\w+-]*)", lines[i])
        if not fence:
            i += 1
            continue
        close = next(j for j in range(i + 1, len(lines))
                     if lines[j].strip() == fence.group(1))
        above = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(above)
        found.append(Block(document, fence.group(2).lower(),
                           marker.group("body") if marker else "",
                           "\n".join(lines[i + 1:close]) + "\n", i + 1))
        i = close + 1
    return found


BLOCKS = [block for path in DOCUMENTS
          for block in blocks(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())]


def _cli() -> click.Command:
    """The ``portsim`` console script of ``pyproject.toml``, imported from here: its
    target, ``portsim.__main__:main``, imports the command line and runs it (so that a
    Ctrl-C during that import is answered, test_cli.py)."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["portsim"].partition(":")
    target = getattr(importlib.import_module(module), attr)
    assert (module, attr) == ("portsim.__main__", "main")
    assert callable(target)
    from portsim.scenarios.cli import main as command

    assert isinstance(command, click.Command)
    return command


def run_portsim(args: list[str], cwd: Path) -> tuple[int, str]:
    """``portsim ARGS`` in process, from ``cwd``: exit status and output (both streams)."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(_cli(), args, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory that looks like ``scenarios/examples/`` (its entries, linked)."""
    for entry in EXAMPLES.iterdir():
        (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


def _run_scenario(document: dict[str, Any], workdir: Path, name: str) -> None:
    path = workdir / f"readme-{name.replace('/', '-').replace(':', '-')}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    status, output = run_portsim(["run", str(path)], workdir)
    assert status == 0, f"portsim run of the README's scenario: exit {status}\n{output}"


def _by_kind(kind: str) -> list[Any]:
    """The parameters of the test of one kind of block (slow ones marked)."""
    chosen = [b for b in BLOCKS if _kind(b) == kind]
    return [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if b.slow else [])
            for b in chosen]


def _kind(block: Block) -> str:
    if block.marker.startswith("skip"):
        return "skip"
    if block.marker.startswith("output of"):
        return "output"
    if block.marker.startswith("each line completes"):
        return "fragments"
    if block.lang.startswith("{"):
        return "directive"
    if block.lang == "yaml":
        document = yaml.safe_load(block.text)
        return "study" if isinstance(document, dict) and "base" in document else "scenario"
    return {"python": "python", "bash": "shell", "sh": "shell", "shell": "shell",
            "toml": "toml"}.get(block.lang, "unknown")


# -- the inventory ------------------------------------------------------------------------


def test_the_readme_has_blocks_of_every_kind() -> None:
    """The parser finds the blocks (a broken parser would make the tests below vacuous)."""
    kinds = {_kind(b) for b in BLOCKS}
    assert {"scenario", "study", "python", "shell", "toml", "fragments", "output", "skip"} <= kinds
    assert len(BLOCKS) >= 10


def test_blocks_are_read_with_their_markers() -> None:
    text = ("Text.\n\n<!-- readme-test: skip an output sample -->\n```\nout\n```\n"
            "```yaml\na: 1\n\nb: 2\n```\n\n````{literalinclude} x.yaml\n```\n````\n")
    assert blocks(text, "d.md") == [
        Block("d.md", "", "skip an output sample", "out\n", 4),
        Block("d.md", "yaml", "", "a: 1\n\nb: 2\n", 7),
        Block("d.md", "{literalinclude}", "", "```\n", 13),
    ]


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_every_block_is_run_or_explicitly_skipped(block: Block) -> None:
    kind = _kind(block)
    assert kind != "unknown", (
        f"{block.document} line {block.line}: a ```{block.lang} block is neither run nor marked; "
        "tag it (yaml, python, bash, toml) or put <!-- readme-test: skip REASON --> above it")
    if kind == "skip":
        assert block.marker.removeprefix("skip").strip(), "a skip marker needs a reason"
    if block.marker:
        assert kind in {"skip", "fragments", "output"} or block.slow, (
            f"unknown marker {block.marker!r}")
    if block.slow:
        assert block.marker.removeprefix("slow").strip(), "a slow marker needs a reason"


# -- YAML ---------------------------------------------------------------------------------


@pytest.mark.parametrize("block", _by_kind("scenario"))
def test_scenario_blocks_run(block: Block, workdir: Path) -> None:
    document = yaml.safe_load(block.text)
    assert {"platform", "operation"} <= set(document), "a scenario has a platform and an operation"
    _run_scenario(document, workdir, block.id)


@pytest.mark.parametrize("block", _by_kind("fragments"))
def test_fragment_blocks_complete_into_scenarios(block: Block, workdir: Path) -> None:
    base = yaml.safe_load(block.marker.removeprefix("each line completes"))
    assert isinstance(base, dict), f"the marker's YAML is not a mapping: {block.marker!r}"
    lines = [line for line in block.text.splitlines() if line.strip()]
    assert lines
    for number, line in enumerate(lines):
        fragment = yaml.safe_load(line)
        assert isinstance(fragment, dict), f"not a mapping: {line!r}"
        _run_scenario({**base, **fragment}, workdir, f"{block.id}-{number}")


OUTPUT = re.compile(r"output of portsim (?P<args>[^,(]+?)(?: \(exit (?P<exit>\d+)\))?, "
                    r"(?P<file>[^:]+): (?P<base>\S+) with (?P<path>\S+) = (?P<value>.+)")


def replace(document: Any, path: str, value: Any) -> None:
    """Set ``document[KEY.PATH]``, a path as in error messages (``a.b[1].c``)."""
    keys: list[str | int] = [int(k) if k.isdigit() else k
                             for k in re.findall(r"[^.\[\]]+", path)]
    for key in keys[:-1]:
        document = document[key]
    document[keys[-1]] = value


def test_replace_follows_error_paths() -> None:
    document = {"platform": {"links": [{"c": 1}, {"c": 2}]}}
    replace(document, "platform.links[1].c", 0)
    assert document == {"platform": {"links": [{"c": 1}, {"c": 0}]}}


@pytest.mark.parametrize("block", _by_kind("output"))
def test_output_blocks_are_what_the_command_prints(block: Block, workdir: Path) -> None:
    spec = OUTPUT.fullmatch(block.marker)
    assert spec, ("an output marker reads "
                  "'output of portsim ARGS [(exit N)], FILE: BASE with PATH = VALUE'")
    document = yaml.safe_load((ROOT / spec["base"]).read_text())
    replace(document, spec["path"], yaml.safe_load(spec["value"]))
    (workdir / spec["file"]).write_text(yaml.safe_dump(document, sort_keys=False))
    status, output = run_portsim(shlex.split(spec["args"]), workdir)
    assert output.splitlines() == block.text.splitlines()
    assert status == int(spec["exit"] or 0)


@pytest.mark.parametrize("block", _by_kind("study"))
def test_study_blocks_run_and_report(block: Block, workdir: Path) -> None:
    study = workdir / "readme-study.yaml"
    study.write_text(block.text)
    out = workdir / "readme-study-out"
    status, output = run_portsim(["study", str(study), "--out", str(out)], workdir)
    assert status == 0, output  # 1 would be a failed run or an invalid schedule
    status, output = run_portsim(["report", str(out)], workdir)
    assert status == 0, output
    assert (out / "report.html").stat().st_size > 0


# -- Python -------------------------------------------------------------------------------


def announced(code: str) -> list[str]:
    """The values announced by ``print(...)  # VALUE`` lines, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*print\(.*\)\s*#\s*(.+)$", code, re.M)]


def test_announced_values_are_read() -> None:
    code = 'print(1)   # 1\nx = 2  # not a print\nprint(x, "a # b")  # 2 a # b\n'
    assert announced(code) == ["1", "2 a # b"]


@pytest.mark.parametrize("block", _by_kind("python"))
def test_python_blocks_run(block: Block, request: pytest.FixtureRequest) -> None:
    namespace: dict[str, Any] = {"__name__": f"readme_block_{block.line}"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.text, f"{block.document}:{block.line}", "exec"), namespace)
        tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
        for test in tests:
            test(**{name: request.getfixturevalue(name)
                    for name in inspect.signature(test).parameters})
    expected = announced(block.text)
    if expected:
        assert printed.getvalue().splitlines() == expected


# -- shell --------------------------------------------------------------------------------


def commands(text: str) -> Iterator[tuple[list[str], int]]:
    """Each command of a shell block, with its expected exit status (``# exit N``)."""
    for line in text.splitlines():
        status = EXIT.search(line)
        line = EXIT.sub("", line)
        words = shlex.split(line, comments=True)
        parts = [list(group) for is_and, group in itertools.groupby(words, lambda w: w == "&&")
                 if not is_and]
        for part in parts:
            yield part, int(status.group(1)) if status and part is parts[-1] else 0


def test_commands_are_split() -> None:
    text = "pip install . && portsim run a.yaml   # exit 1\nruff check . && mypy  # lint\n"
    assert list(commands(text)) == [(["pip", "install", "."], 0),
                                    (["portsim", "run", "a.yaml"], 1),
                                    (["ruff", "check", "."], 0), (["mypy"], 0)]


def _portsim_args(words: list[str]) -> list[str] | None:
    if words[:1] == ["portsim"]:
        return words[1:]
    if words[:3] == ["python", "-m", "portsim"]:
        return words[3:]
    return None


@pytest.mark.parametrize("block", _by_kind("shell"))
def test_shell_blocks_run(block: Block, tmp_path: Path) -> None:
    # The commands run from the top level (their paths are relative to it) with a
    # copy-free view of it, so that an output file lands in tmp_path.
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    ci_script = (ROOT / ".ci" / "run").read_text()
    for words, status in commands(block.text):
        args = _portsim_args(words)
        if args is not None:
            got, output = run_portsim(args, tmp_path)
            assert got == status, f"{shlex.join(words)}: exit {got}, not {status}\n{output}"
        elif words[0] == "python":
            assert (ROOT / words[1]).is_file(), f"{shlex.join(words)}: no such script"
        else:
            assert words[0] in CI_COMMANDS, f"{shlex.join(words)}: not run by this test"
            assert words[0] in ci_script, f"{shlex.join(words)}: .ci/run never runs {words[0]}"


# -- TOML ---------------------------------------------------------------------------------


@pytest.mark.parametrize("block", _by_kind("toml"))
def test_toml_blocks_parse(block: Block) -> None:
    assert tomllib.loads(block.text)


# -- paths quoted in the prose --------------------------------------------------------------

TOP = ("simulator", "planners", "scenarios", "reports", "docs", "benchmarks", "tests")


def _expand(path: str) -> list[str]:
    """``a-{x,y}.yaml`` -> ``a-x.yaml``, ``a-y.yaml`` (one brace group)."""
    group = re.search(r"\{([^}]*)\}", path)
    if not group:
        return [path]
    return [path[:group.start()] + choice + path[group.end():]
            for choice in group.group(1).split(",")]


def quoted_paths(text: str) -> list[str]:
    """Repository paths in the README's inline code (outside fenced blocks)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    spans = re.findall(r"`([^`\n]+)`", prose)
    words = [w.rstrip(".,;:)") for span in spans for w in span.split()]
    return sorted({p for w in words if w.split("/")[0] in TOP and "/" in w for p in _expand(w)})


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_quoted_paths_exist(path: Path) -> None:
    paths = quoted_paths(path.read_text(encoding="utf-8"))
    assert paths, "no quoted path found: the parser is broken"
    # build outputs (.gitignore: docs/_build/ ...) exist only once built
    ignored = [line.strip().rstrip("/") for line in
               (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
               if "/" in line.strip().rstrip("/") and not line.startswith("#")]
    missing = [p for p in paths if not (ROOT / p).exists()
               and not any(p.rstrip("/") == g or p.startswith(g + "/") for g in ignored)]
    assert missing == []


def test_quoted_paths_are_read() -> None:
    text = ("see `docs/SPEC.md`, `python benchmarks/x.py` and `tests/{a,b}.yaml`\n"
            "```\nplanners/q.py\n```\n`DIR/x.parquet` `planners`\n")
    assert quoted_paths(text) == [
        "benchmarks/x.py", "docs/SPEC.md", "tests/a.yaml", "tests/b.yaml"]

