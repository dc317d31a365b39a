"""Output files are written whole or not at all (:mod:`portsim.scenarios.output`).

A crash, a Ctrl-C or a full disk while ``run --json F``, ``plan -o F``,
``run --report F`` or ``msccl-import -o F`` writes ``F`` left a truncated
``F``, its previous content gone.  Here a file size limit of 1024 bytes
(``ulimit -f 1``: the write fails with ``File too large``, as on a full disk)
and an interruption in the middle of a schedule being written.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from portsim.scenarios import load_scenario
from portsim.scenarios import schedule_file as schedule_file_module
from portsim.scenarios.output import replacing, write_text
from portsim.scenarios.schedule_file import dump_schedule, load_schedule

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"
MSCCL = Path(__file__).resolve().parent / "data" / "msccl"
OLD = "the previous content, which a failed write must leave as it is\n"


def _limit_file_size() -> None:
    # 1024 bytes: every output below is larger; Python ignores SIGXFSZ, so the
    # write fails with EFBIG, as a full disk fails with ENOSPC
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def _portsim_limited(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "portsim", *args], capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_file_size, check=False)


@pytest.mark.parametrize(("command", "name"), [
    (("run", str(EXAMPLES / "scatter-toy.yaml"), "--json"), "out.json"),
    (("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "lp", "-o"), "s.yaml"),
    (("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "lp", "-o"), "s.json"),
    (("plan", str(EXAMPLES / "scatter-toy.yaml"), "--planner", "lp", "-o"), "s.jsonl"),
    (("msccl-import", str(MSCCL / "allgather_ring_8_1_1.xml"), "--platform", "PLATFORM",
      "-o"), "m.yaml"),
    (("run", str(EXAMPLES / "reduce-toy.yaml"), "--report"), "r.html"),
], ids=["run-json", "plan-yaml", "plan-json", "plan-jsonl", "msccl-import", "run-report"])
def test_a_failed_write_keeps_the_previous_file(command: tuple[str, ...], name: str,
                                                tmp_path: Path) -> None:
    platform = tmp_path / "platform.yaml"
    platform.write_text("platform:\n  port_model: multiport\n"
                        "  generator: {type: complete, n: 8, c: 1}\n", encoding="utf-8")
    out = tmp_path / name
    out.write_text(OLD, encoding="utf-8")
    args = [str(platform) if a == "PLATFORM" else a for a in command]
    done = _portsim_limited(*args, str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"portsim: error: {out}: File too large"
    # before: 1024 bytes of the new output, the previous content gone
    assert out.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"platform.yaml", name})


def test_a_failed_study_report_keeps_the_previous_file(tmp_path: Path) -> None:
    """`portsim report DIR -o F` (:func:`~portsim.reports.studies.write_study_report`)."""
    from portsim.reports.studies import run_study, study_from_dict

    run_study(study_from_dict({
        "name": "quick", "base": {"platform": {"generator": {"type": "complete", "n": 3}},
                                  "operation": {"type": "broadcast", "source": "P0"},
                                  "planners": ["flat"]}}), tmp_path / "o", workers=1)
    out = tmp_path / "o" / "page.html"
    out.write_text(OLD, encoding="utf-8")
    done = _portsim_limited("report", str(tmp_path / "o"), "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"portsim: error: {out}: File too large"
    assert out.read_text(encoding="utf-8") == OLD  # before: 1024 bytes of the page
    assert sorted(p.name for p in out.parent.iterdir()) == [".lock", "page.html",
                                                            "results.parquet"]


def test_a_failed_write_of_a_new_file_leaves_none(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = _portsim_limited("run", str(EXAMPLES / "scatter-toy.yaml"), "--json", str(out))
    assert done.returncode == 2
    assert list(tmp_path.iterdir()) == []  # before: a truncated out.json of 1024 bytes


def test_an_interrupted_schedule_keeps_the_previous_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Ctrl-C after 5 of the 12 events of the scatter toy's lp schedule are written."""
    from portsim.planners import plan

    scenario = load_scenario(EXAMPLES / "scatter-toy.yaml")
    schedule = plan("lp", scenario.platform, scenario.operation).schedule
    assert schedule is not None
    assert len(schedule.events) == 12
    out = tmp_path / "s.jsonl"
    out.write_text(OLD, encoding="utf-8")
    written = [0]
    real = schedule_file_module.event_to_dict

    def interrupted(event: object) -> object:
        written[0] += 1
        if written[0] > 5:
            raise KeyboardInterrupt
        return real(event)  # type: ignore[arg-type]

    monkeypatch.setattr(schedule_file_module, "event_to_dict", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dump_schedule(schedule, out)
    assert out.read_text(encoding="utf-8") == OLD  # before: the header and 5 events
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]
    monkeypatch.undo()
    dump_schedule(schedule, out)
    assert len(load_schedule(out).events) == 12


def test_replacing_keeps_mode_link_and_devices(tmp_path: Path) -> None:
    """The file replaced keeps its permission bits; a symbolic link stays a link to
    the file written; a device (``/dev/null``) is written, not replaced."""
    target = tmp_path / "t.txt"
    target.write_text(OLD, encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "l.txt"
    link.symlink_to(target.name)
    write_text(link, "new\n")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    write_text(os.devnull, "nothing\n")
    assert Path(os.devnull).is_char_device()

    def half_written() -> None:
        with replacing(target) as stream:
            stream.write("half")
            raise ValueError("stop")

    with pytest.raises(ValueError, match="stop"):
        half_written()
    assert target.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.txt", "t.txt"]


def test_a_folder_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        write_text(tmp_path / "missing" / "x.json", "{}")
    assert caught.value.filename == str(tmp_path / "missing" / "x.json")


def test_a_pipe_named_by_its_descriptor_is_written(tmp_path: Path) -> None:
    """``--json /dev/stdout`` into a pipe, or ``--json >(jq .)`` (``/dev/fd/63``): the
    name is a link to ``pipe:[N]``, which no path resolves to; the atomic writer
    resolved it and failed (``No such file or directory``, exit 2) where 0.2.0
    wrote the pipe.  It is written in place, as ``/dev/null`` is."""
    read, write = os.pipe()
    try:
        write_text(f"/proc/self/fd/{write}", "through the pipe\n")
    finally:
        os.close(write)
    with os.fdopen(read, encoding="utf-8") as stream:
        assert stream.read() == "through the pipe\n"
    done = subprocess.run(
        f"{sys.executable} -m portsim run {EXAMPLES / 'scatter-toy.yaml'} --json /dev/stdout"
        " 2>/dev/null | tail -c 200", shell=True, capture_output=True, text=True,
        timeout=300, check=False)
    assert '"node_port_models": {}' in done.stdout, done.stdout


def test_plan_into_a_pipe_by_name_ends(tmp_path: Path) -> None:
    """``plan -o /dev/stdout | ...``: ``plan`` read its output back to check it,
    from the pipe it had written, and waited forever (since before 0.3.0); the
    ``wrote ...`` line went into the schedule.  A file that is not a regular one
    is not read back, the line goes to standard error, and what the pipe carries
    is the schedule alone."""
    done = subprocess.run(  # standard output a pipe; on the time out, the child is killed
        [sys.executable, "-m", "portsim", "plan", str(EXAMPLES / "scatter-toy.yaml"),
         "--planner", "flat", "-o", "/dev/stdout"], capture_output=True, text=True,
        timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wrote one-shot schedule of 4 events to /dev/stdout" in done.stderr
    (tmp_path / "s.yaml").write_text(done.stdout, encoding="utf-8")
    assert len(load_schedule(tmp_path / "s.yaml").events) == 4


def test_a_file_with_another_name_or_owner_is_written_not_replaced(tmp_path: Path) -> None:
    """A file with a second hard link, or owned by another user: replacing it (a new
    file moved in its place) left the other name on the old content and made the
    writer the owner; 0.2.0 wrote the file itself.  It is written in place, both names
    see the new content, the owner stays."""
    first = tmp_path / "a.json"
    first.write_text(OLD, encoding="utf-8")
    second = tmp_path / "b.json"
    os.link(first, second)
    write_text(first, "new\n")
    assert second.read_text(encoding="utf-8") == "new\n"
    assert first.stat().st_ino == second.stat().st_ino
    if os.geteuid() != 0:  # only root can make a file another user's
        return
    other = tmp_path / "other.json"
    other.write_text(OLD, encoding="utf-8")
    os.chown(other, 65534, 65534)  # nobody
    write_text(other, "new\n")
    assert other.read_text(encoding="utf-8") == "new\n"
    assert (other.stat().st_uid, other.stat().st_gid) == (65534, 65534)
