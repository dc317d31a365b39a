"""The bad-input corpus under ``tests/data/bad/``: one clean line each, exit 2.

Each ``*.yaml`` has a ``*.expected`` sidecar holding the exact line ``portsim``
prints on standard error (see ``tests/data/bad/README.md``).  The command runs
in the corpus directory, so file names in messages are the bare names.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from portsim.scenarios.cli import main

BAD = Path(__file__).resolve().parent / "data" / "bad"
COMMANDS = {"schedules": "validate", "scenarios": "run"}
CASES = sorted((folder, path.name) for folder in COMMANDS
               for path in (BAD / folder).glob("*.yaml"))


def test_corpus_is_complete() -> None:
    assert len(CASES) >= 100
    for folder in COMMANDS:
        stems = {p.stem for p in (BAD / folder).glob("*.yaml")}
        expected = {p.stem for p in (BAD / folder).glob("*.expected")}
        assert stems == expected, "every case needs its .expected line, and only cases"


@pytest.mark.parametrize(("folder", "name"), CASES, ids=[f"{f}/{n}" for f, n in CASES])
def test_bad_input_is_one_clean_line(folder: str, name: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BAD / folder)
    result = CliRunner().invoke(main, [COMMANDS[folder], name])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a crash: show its traceback
    expected = (BAD / folder / name).with_suffix(".expected").read_text().strip()
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [expected]


# Run as a real process: the interpreter itself must not crash (a C-level
# stack overflow in a YAML parser would kill it with a signal).
PROCESS_CASES = [("schedules", "deeply-nested-brackets.yaml"),
                 ("schedules", "binary-garbage.yaml"),
                 ("schedules", "billion-laughs.yaml"),
                 ("scenarios", "deeply-nested.yaml")]


def test_bad_inputs_in_a_real_process() -> None:
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), os.environ.get("PYTHONPATH", "")])}
    code = ("import sys; from portsim.scenarios.cli import main; "
            "main(sys.argv[1:], prog_name='portsim')")
    for folder, name in PROCESS_CASES:
        done = subprocess.run([sys.executable, "-c", code, COMMANDS[folder], name],
                              cwd=BAD / folder, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        expected = (BAD / folder / name).with_suffix(".expected").read_text().strip()
        assert (done.returncode, done.stdout, done.stderr.splitlines()) == (
            2, "", [expected]), name
