"""The ``portsim`` command line: parse, call library functions, format.

Exit status (SPEC.md): 0 ok, 1 a schedule failed validation, 2 bad input,
3 a planner failed (``status: error``).  Bad input is one line on standard
error naming the file, the key path and the value, never a traceback.

Standard output carries nothing but portsim's own output (the table, or the
JSON or schedule written to ``-``); progress and warnings go to standard
error, one line each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import os
import stat
import sys
import warnings
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from portsim.simulator.errors import PlannerError, PortsimError, ScheduleError
from portsim.simulator.numbers import (
    counted,
    format_rational,
    parse_rational,
    readable,
    short,
    with_decimal,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from portsim.reports.gantt import GanttWindow
    from portsim.scenarios.loader import PlannerSpec, Scenario
    from portsim.scenarios.runner import ScenarioResult
    from portsim.simulator.platform import Platform
    from portsim.simulator.report import Report
    from portsim.simulator.schedule import Schedule

# Imports are made inside the commands: `portsim --help` and `portsim planners`
# must not pay for pydantic, networkx, SimPy or scipy (benchmarks/startup.py).

__all__ = ["main"]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_BAD_INPUT = 2
EXIT_PLANNER_ERROR = 3

T = TypeVar("T")


def _console(*, stderr: bool = False, soft_wrap: bool = False) -> Console:
    from rich.console import Console

    # A pipe or a file gets wide tables rather than columns cut to 80 characters.
    # No console markup: items such as ``v[k,l]`` or ``m[gpu0]`` in a message
    # would be read as style tags and vanish; colours are given as ``style=``.
    # ``soft_wrap``: each printed line stays one line in a pipe or a file (tables
    # keep the width), so that a note is not broken at 160 characters.
    stream = sys.stderr if stderr else sys.stdout
    return Console(highlight=False, markup=False, stderr=stderr, soft_wrap=soft_wrap,
                   width=None if stream.isatty() else 160)


_STREAM_NAMES = {"stdout": "standard output", "stderr": "standard error"}
"""The standard streams as an error names them (``portsim: error: standard output:
No space left on device``)."""


class _StandardWriter(io.RawIOBase):
    """The raw writer of standard output or standard error, which may fail.

    A reader that leaves (``| head -1``): once a write meets the closed pipe, the
    stream's descriptor is pointed at the null device, so that this write and every
    later one (of any object writing to that descriptor) is dropped, and the
    command ends its work and its exit status as if read to the end, with no
    traceback and no ``Exception ignored`` line at exit.  Any other failure (a full
    disk, ``>/dev/full``; a stream closed with ``>&-``, ``closed``) is an
    :class:`OSError` naming the stream, after which the stream writes to the null
    device too: :class:`_Commands` makes it one line and exit status 2.
    """

    def __init__(self, fd: int, name: str, closed: bool = False, owned: bool = False) -> None:
        super().__init__()
        self._fd = fd
        self._name = name
        self._failed = closed
        self._owned = owned  # the null device opened for a missing stream: closed with it

    def close(self) -> None:
        if self._owned and not self.closed:
            os.close(self._fd)
        super().close()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        if self._failed:  # `>&-`: the first write says so, once
            self._failed = False
            raise OSError(errno.EBADF, "the stream is closed", self._name)
        try:
            return os.write(self._fd, data)
        except OSError as err:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._fd)
            finally:
                os.close(null)
            if isinstance(err, BrokenPipeError):
                return len(memoryview(data))
            raise OSError(err.errno, err.strerror, self._name) from None


def _guard_standard_streams() -> None:
    """Standard output and standard error through a :class:`_StandardWriter`, and a
    closed standard input (``<&-``) read as empty (``-`` is then an empty file, exit 2).

    click's own answer to a closed pipe is exit status 1, which here means "a
    schedule failed validation", ``--json -`` met it as bad input (exit 2,
    ``portsim: error: Broken pipe``), and a full disk or a closed stream was a
    traceback.  A stream with no descriptor (a test's capture), or one that is not
    a :class:`io.TextIOWrapper` (an embedder's own writer, such as a notebook's,
    whose ``fileno()`` may name its terminal), is left as it is.
    """
    if sys.stdin is None:
        sys.stdin = io.StringIO()
    for name, words in _STREAM_NAMES.items():
        stream = getattr(sys, name)
        if stream is None:  # `>&-`, `2>&-`: Python gives no stream at all
            null = os.open(os.devnull, os.O_WRONLY)
            writer = _StandardWriter(null, words, closed=name == "stdout", owned=True)
            setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(writer), encoding="utf-8",
                                                line_buffering=True))
            continue
        if not isinstance(stream, io.TextIOWrapper):
            # an embedder's own writer (a notebook's, with the descriptor of its
            # terminal as fileno()): its writes go where it sends them, not to the fd
            continue
        try:
            fd = stream.fileno()
            stream.flush()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            continue
        if isinstance(getattr(stream, "buffer", None), io.BufferedWriter) and isinstance(
                getattr(stream.buffer, "raw", None), _StandardWriter):
            continue  # already guarded (main called twice in one process)
        guarded = io.TextIOWrapper(io.BufferedWriter(_StandardWriter(fd, words)),
                                   encoding=stream.encoding, errors=stream.errors,
                                   line_buffering=stream.line_buffering,
                                   write_through=getattr(stream, "write_through", False))
        setattr(sys, name, guarded)


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """Print a warning as one line on standard error (no source line)."""
    text = " ".join(str(message).split())
    click.echo(f"portsim: warning: {text}", err=True)


@contextlib.contextmanager
def _activity() -> Iterator[Callable[[str], None]]:
    """A function showing what runs now: a spinner on a terminal's stderr, with the
    seconds the step has run once it passes one (:func:`_every`); elsewhere
    (a CI log, a pipe) a line for a step still running after
    :data:`QUIET_SECONDS`, then every :data:`STILL_SECONDS` (:func:`_heartbeat`)."""
    console = _console(stderr=True)
    if not console.is_terminal:
        with _heartbeat() as show:
            yield show
        return
    from rich.text import Text

    step = ["starting"]

    def tick(age: float) -> None:  # a step of minutes (the lp bound) counts its seconds
        status.update(Text(f"{step[0]}... {age:.0f} s", style="dim"))

    with console.status("starting...") as status, _every(tick, 1.0, 1.0) as restart:
        def show(text: str) -> None:
            step[0] = text
            status.update(Text(f"{text}...", style="dim"))
            restart()

        yield show


QUIET_SECONDS = 10.0
"""Off a terminal, a step that ends sooner prints nothing (quick runs keep clean logs)."""

STILL_SECONDS = 60.0
"""Off a terminal, a step still running repeats its line this often."""


@contextlib.contextmanager
def _every(line: Callable[[float], str | None], quiet: float | None = None,
           still: float | None = None) -> Iterator[Callable[[], None]]:
    """Off a terminal, what runs as lines: a thread prints ``line(age)`` (when not
    ``None``) on standard error once ``quiet`` seconds (default
    :data:`QUIET_SECONDS`) have passed since the start or the last call of the
    function it yields, then every ``still`` seconds (:data:`STILL_SECONDS`).
    The one mechanism of :func:`_heartbeat` and :func:`_study_heartbeat`."""
    import threading
    import time

    first = QUIET_SECONDS if quiet is None else quiet
    every = STILL_SECONDS if still is None else still
    lock = threading.Lock()
    clock = [time.monotonic(), first]  # since, the next line's age
    done = threading.Event()

    def restart() -> None:
        with lock:
            clock[:] = [time.monotonic(), first]

    def beat() -> None:
        while not done.wait(0.2):
            with lock:
                since, due = clock
                age = time.monotonic() - since
                if age < due:
                    continue
                clock[1] = due + every
            text = line(age)
            if text is not None:
                click.echo(text, err=True)

    thread = threading.Thread(target=beat, name="portsim-heartbeat", daemon=True)
    thread.start()
    try:
        yield restart
    finally:
        done.set()
        thread.join()


@contextlib.contextmanager
def _heartbeat(quiet: float | None = None, still: float | None = None
               ) -> Iterator[Callable[[str], None]]:
    """A function naming the current step; ``portsim: STEP: 12 s so far`` is printed
    on standard error once the step has run ``quiet`` seconds, then every ``still``
    seconds (:func:`_every`), so that a long ``lp`` in a CI log is not silence."""
    step = ["starting"]
    with _every(lambda age: f"portsim: {step[0]}: {age:.0f} s so far", quiet,
                still) as restart:

        def show(text: str) -> None:
            step[0] = text
            restart()

        yield show


def _write_text(destination: Path, text: str) -> None:
    """Write ``text`` to the file ``destination``, or to standard output for ``-``."""
    from portsim.scenarios.loader import STDIN
    from portsim.scenarios.output import write_text

    if str(destination) == STDIN:
        click.echo(text, nl=False)
        sys.stdout.flush()
    else:
        write_text(destination, text)


def _check_destination(destination: Path | None, option: str = "",
                       inputs: tuple[tuple[str, Path | None], ...] = ()) -> None:
    """Fail (exit 2) before any work when an output file cannot be written: its folder
    does not exist or takes no new file, the file is read-only, or it is an input.

    Without this, ``run --json missing/x.json`` planned and replayed every
    planner (minutes for a large ``lp``) and only then failed to write.

    ``inputs``: the files the command reads, each with what it is (``"scenario
    file"``), which ``destination`` (given to ``option``) may not be: ``plan S.yaml
    -o S.yaml`` replaced the scenario with its schedule.
    """
    from portsim.scenarios.loader import STDIN

    if destination is None or str(destination) == STDIN:
        return
    if not destination.parent.is_dir():
        _fail(f"{destination}: cannot write it: the folder {destination.parent} does not exist")
    for what, source in inputs:
        if (source is not None and str(source) != STDIN and source.exists()
                and destination.exists() and os.path.samefile(source, destination)):
            _fail(f"{option}: {destination} is the {what} this command reads: writing it "
                  f"would replace it (got {str(destination)!r})")
    # Nor when the folder or the file cannot be written (`run --json` into a read-only
    # folder also failed only at the end); a probe, as permission bits do not say it
    # (root, ACLs, a read-only mount).  An existing file is not touched before the end.
    if destination.exists():
        if not os.access(destination, os.W_OK):
            _fail(f"{destination}: cannot write it: permission denied")
        return
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=destination.parent):
            pass
    except OSError as err:
        _fail(f"{destination}: cannot write it: cannot create a file in the folder "
              f"{destination.parent}: {err.strerror or err}")


def _is_regular_file(path: Path) -> bool:
    """Whether ``path`` names a regular file (through links), not a pipe or a device."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _got(value: object) -> str:
    """`` (got 'VALUE')`` for an option given a value; nothing for a flag (``True``)."""
    return "" if value is True else f" (got {str(value)!r})"


def _fail(message: str) -> None:
    # one line, as PortsimError writes one: a file name may hold a line break
    click.echo(f"portsim: error: {PortsimError(message)}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _guarded(action: Callable[[], T], writing: Path | None = None) -> T:
    """Run ``action``; bad input becomes one line on stderr and exit status 2.

    ``writing``: the file ``action`` writes, named by an error of the write itself
    (a full disk), which names no file."""
    try:
        return action()
    except PortsimError as err:
        _fail(str(err).replace("\n", " "))
    except OSError as err:
        named = getattr(err, "filename", None) or writing
        where = f"{named}: " if named else ""
        _fail(f"{where}{err.strerror or err}")
    raise AssertionError("unreachable")  # pragma: no cover


def _positive(value: str | None, option: str) -> Fraction | None:
    """An exact number > 0 given to ``option`` (``None`` when absent); a bad value names
    the option."""
    if value is None:
        return None
    number = _guarded(lambda: parse_rational(value, path=option))
    if number <= 0:
        _fail(f"{option}: must be > 0 (got {value!r})")
    return number


_LP_TIME_LIMIT_HELP = ("Seconds the lp bound may take (the lp's time_limit; default "
                       "300). Cut short, it is a certified interval (the bound is its "
                       "upper end, and the output says so) or none, the output naming "
                       "where it stopped.")


def _lp_time_limit(value: str | None, no_bound: bool = False) -> float | None:
    """``--lp-time-limit``'s seconds (``None`` when absent); refused with ``--no-lp-bound``,
    which computes no bound to limit."""
    if value is not None and no_bound:
        _fail(f"--lp-time-limit: no lp bound is computed with --no-lp-bound (got {value!r})")
    seconds = _positive(value, "--lp-time-limit")
    return None if seconds is None else float(seconds)


def _lp_limit_words(text: str) -> str:
    """An ``lp`` message about its ``time_limit`` option in the command's words: the
    option that sets it here is ``--lp-time-limit``."""
    from portsim.scenarios.bounds import time_limit_words

    return time_limit_words(text, "--lp-time-limit")


_GANTT_WINDOW_HELP = ("Draw only this part of the time axis in the Gantt chart: START:END, "
                      "START: (to the end) or :END, exact numbers (e.g. 12/5:40); the "
                      "event cap applies inside it.")


def _gantt_window(value: str | None) -> GanttWindow | None:
    """``--gantt-window`` read before any work: a bad value names the option (exit 2)."""
    if value is None:
        return None
    from portsim.reports.gantt import parse_gantt_window

    return _guarded(lambda: parse_gantt_window(value, path="--gantt-window"))


def _port_model_option(value: str | None) -> str | None:
    """Check ``--port-model`` before any file is read: a bad value names the option."""
    if value is not None:
        from portsim.simulator.platform import PortModel

        _guarded(lambda: PortModel.parse(value, path="--port-model"))
    return value


def _warn_kept_port_models(platform: Platform, port_model: str | None) -> None:
    """Warn when ``--port-model`` leaves nodes of ``platform`` on their own port model
    (:func:`~portsim.simulator.validation.kept_port_models`)."""
    if port_model is None:
        return
    from portsim.simulator.validation import kept_port_models

    kept = kept_port_models(platform, port_model, f"--port-model {port_model}")
    if kept is not None:
        warnings.warn(kept, stacklevel=2)


def _text_readable(value: Fraction | float | None) -> str:
    """``value`` as :func:`_text` writes it, its decimal value beside a long fraction."""
    return readable(value) if isinstance(value, Fraction) else _text(value)


def _text(value: Fraction | float | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, Fraction):
        return format_rational(value)
    return f"{value:.{digits}g}"


def _cell(value: Fraction | float | None) -> str:
    """A table cell: ``value`` as :func:`_text` writes it, but a fraction longer than
    ``EXACT_TEXT_CHARS`` as its decimal value (``~0.123077``), which a narrow column
    would otherwise cut to its first digits (``1219326311370217892…``)."""
    return short(value) if isinstance(value, Fraction) else _text(value)


def _print_table(console: Console, table: Table) -> None:
    """Print ``table`` whole, or, on a console too narrow for it (a terminal of 80
    columns or fewer), its rows as lines: rich would cut its cells to ``…``, an exact
    figure to its first digits (``249/5…`` for 249/500) and a header to a few letters.

    Each row is then ``FIRST: HEADER VALUE; HEADER VALUE; ...`` (``flat: status ok;
    bound -; ...``), wrapped at spaces, under the title and above the caption.
    """
    from rich.text import Text

    def plain(cell: object) -> str:
        return cell.plain if isinstance(cell, Text) else str(cell)

    rendered = console.render_lines(table, console.options, pad=False)
    if not any("…" in segment.text for line in rendered for segment in line):
        console.print(table)
        return
    if table.title:
        console.print(plain(table.title), style="italic")
    headers = [plain(column.header) for column in table.columns]
    for cells in zip(*(column.cells for column in table.columns), strict=True):
        first, *rest = (plain(cell) for cell in cells)
        console.print(f"{first}: " + "; ".join(f"{header} {value}" for header, value
                                               in zip(headers[1:], rest, strict=True)))
    if table.caption:
        console.print(plain(table.caption), style="dim")


_APPROXIMATED_CELLS = "~: a longer exact rational, to 6 significant digits"
"""The words under a table where a cell is written as ``~`` and a decimal."""


def _usage_error(err: click.UsageError, command: str = "portsim") -> NoReturn:
    """click's usage error (unknown command or option, missing argument, a value outside
    a choice or range) as portsim's one line and exit status 2, not click's usage block.

    The option or argument comes first, as in portsim's other errors, and the line
    ends with where the help is: ``--workers: 0 is not in the range x>=1 (see
    `portsim study --help`)``; ``command`` when click gives the error no context.
    """
    if isinstance(err, click.exceptions.NoArgsIsHelpError):
        raise err  # `portsim` alone: the help, as before

    def sentence(text: str) -> str:  # "File '/tmp' is a directory." -> "file '/tmp' is ..."
        text = " ".join(text.splitlines()).strip().removesuffix(".")
        text = text.replace(". Did you mean", "; did you mean")  # NoSuchOption's hint
        lower = text[:1].isupper() and not text[1:2].isupper()  # not "SCENARIO"
        return text[0].lower() + text[1:] if lower else text

    text = sentence(err.format_message())
    if isinstance(err, click.BadParameter) and not isinstance(err, click.MissingParameter):
        hint = err.param_hint
        if hint is None and err.param is not None and err.ctx is not None:
            hint = err.param.get_error_hint(err.ctx)
        if hint is not None:  # "'--workers'" or ["'-o'", "'--output'"], quoted by click
            names = hint if isinstance(hint, str) else " / ".join(hint)
            text = f"{names.replace(chr(39), '')}: {sentence(err.message)}"
    if err.ctx is not None:
        command = err.ctx.command_path
    _fail(f"{text} (see `{command} --help`)")
    raise AssertionError("unreachable")  # pragma: no cover


class _FilePath(click.Path):
    """A file or folder name, never empty: ``--out "$OUT"`` with ``OUT`` unset wrote the
    study into the current folder, ``--json ""`` failed only after every planner had
    run, and ``run ""`` named ``.``."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value:
            self.fail("the name is empty (got '')", param, ctx)
        return super().convert(value, param, ctx)


class _Command(click.Command):
    """A command whose usage errors name it (see :class:`_Commands`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            if err.ctx is None:  # click's "Option '--mode' requires an argument"
                err.ctx = ctx
            raise


class _Commands(click.Group):
    """The command group: a usage error is one line and exit status 2 (:func:`_usage_error`);
    Ctrl-C ends any command with one line and exit status 130."""

    command_class = _Command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        streams = sys.stdin, sys.stdout, sys.stderr  # given back at the end (an embedder's)
        try:
            _guard_standard_streams()  # before click, whose own answer to a closed pipe is exit 1
            return super().main(*args, **kwargs)
        except KeyboardInterrupt:  # before click's main (whose answer is "Aborted!", exit 1)
            _stopped_by_sigint()
        except OSError as err:  # also from --help and --version, before any command
            if err.filename not in _STREAM_NAMES.values():
                raise
            # standard output or error failed (_StandardWriter): the stream now
            # writes to the null device, so this line shows when stderr still works
            _fail(f"{err.filename}: {err.strerror}")
        finally:
            for stream in (sys.stdout, sys.stderr):  # empty by now (see invoke)
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = streams

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:  # the group's own options: `portsim --bogus`
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as err:
            _usage_error(err, info_name or "portsim")
        except KeyboardInterrupt:  # click's answer here: "Aborted!" and exit status 1
            _stopped_by_sigint()

    def invoke(self, ctx: click.Context) -> Any:
        try:  # the command's name, its options and arguments, its ctx.fail
            try:
                return super().invoke(ctx)
            finally:  # a write that fails does so here, not in the flush at exit
                sys.stdout.flush()
                sys.stderr.flush()
        except click.UsageError as err:
            _usage_error(err)
        except KeyboardInterrupt:
            # click's default is "Aborted!" and exit status 1, which here means
            # "a schedule failed validation".
            _stopped_by_sigint()


def _stopped_by_sigint() -> NoReturn:
    """Ctrl-C's answer, in every command and at any moment: one line and exit status
    130 (``portsim.__main__`` answers one during the import of this module so)."""
    import signal

    click.echo("portsim: stopped by SIGINT", err=True)
    sys.exit(EXIT_SIGNAL_BASE + signal.SIGINT)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="portsim")
def main() -> None:
    """portsim: simulate and validate collective communications on one-port platforms.

    Exit status: 0 ok, 1 a schedule failed validation, 2 bad input, 3 a planner
    failed, 130 stopped by Ctrl-C. A file name `-` is standard input (SCENARIO,
    SCHEDULE, STUDY.yaml) or standard output (--json, --report, -o).
    """
    warnings.showwarning = _show_warning
    warnings.simplefilter("once")


# -- run ---------------------------------------------------------------------------------


@main.command()
@click.argument("scenario", type=_FilePath(dir_okay=False, path_type=Path))
@click.option("--json", "json_out", type=_FilePath(dir_okay=False, path_type=Path),
              help="Write the results as JSON (SPEC.md format); - for standard output "
                   "(the table then goes to standard error).")
@click.option("--report", "report_out", type=_FilePath(dir_okay=False, path_type=Path),
              help="Write a self-contained HTML report; - for standard output.")
@click.option("--gantt-window", metavar="START:END",
              help=_GANTT_WINDOW_HELP + " Needs --report.")
@click.option("--horizon", help="Time span of the throughput replay (e.g. 1000 or 2/3).")
@click.option("--float", "float_time", is_flag=True,
              help="Replay in float time (faster on huge denominators) instead of exact.")
@click.option("--asymptotic", is_flag=True,
              help="Print completed(K)/(TP*K) for K = 10, 100, 1000 lp periods for every "
                   "planner; exit 1 if a replay beats the bound, or if the lp ratio does "
                   "not approach 1 (below 0.9 at the longest horizon, decreasing, or not "
                   "measured). Prints that table only: no --json, --report, --horizon or "
                   "--float with it.")
@click.option("--lp-time-limit", "lp_time_limit", metavar="SECONDS",
              help="Seconds the lp bound of the --report's convergence chart may take, "
                   "when the scenario lists no lp planner (default 300; a listed lp "
                   "gives its own result). Cut short, the chart's bound is the upper end "
                   "of the lp's certified interval, or the page says why there is no "
                   "chart. Needs --report.")
def run(scenario: Path, json_out: Path | None, report_out: Path | None,
        gantt_window: str | None, horizon: str | None, float_time: bool,
        asymptotic: bool, lp_time_limit: str | None) -> None:
    """Run every planner of SCENARIO, replay each schedule, print a table.

    Exit status: 0 ok, 1 a schedule failed validation, 2 bad input, 3 a planner
    failed (its row says status error; every other planner still runs).
    """
    from portsim.scenarios.loader import STDIN, load_scenario
    from portsim.scenarios.runner import planner_label, run_scenario

    if asymptotic:  # its own replays and one table: these options would be ignored
        for name, unused in (("--json", json_out), ("--report", report_out),
                             ("--gantt-window", gantt_window),
                             ("--horizon", horizon), ("--float", float_time or None)):
            if unused is not None:
                _fail(f"{name}: does not apply with --asymptotic, which prints its table "
                      f"only{_got(unused)}")
    if json_out is not None and str(json_out) == STDIN == str(report_out):
        _fail("--report: standard output (-) already carries the --json document "
              "(got '-')")
    if gantt_window is not None and report_out is None:
        _fail(f"--gantt-window: draws in the --report page, and there is none "
              f"(got {gantt_window!r})")
    if lp_time_limit is not None and report_out is None:
        _fail(f"--lp-time-limit: limits the lp bound of the --report page's convergence "
              f"chart, and there is none (got {lp_time_limit!r})")
    window = _gantt_window(gantt_window)
    limit = _lp_time_limit(lp_time_limit)
    h = _positive(horizon, "--horizon")
    if (json_out is not None and report_out is not None and str(json_out) != STDIN
            and json_out.resolve() == report_out.resolve()):
        _fail(f"--report: {report_out} is the --json file too: one would replace the other "
              f"(got {str(report_out)!r})")
    _check_destination(json_out, "--json", (("scenario file", scenario),))
    _check_destination(report_out, "--report", (("scenario file", scenario),))
    loaded = _guarded(lambda: load_scenario(scenario))
    if limit is not None and any(s.name == "lp" and s.options.get("restrict", "graph") == "graph"
                                 for s in loaded.planners):
        _fail(f"--lp-time-limit: the scenario's lp planner gives the convergence chart its "
              f"bound; set its time_limit option instead (got {lp_time_limit!r})")
    to_stdout = STDIN in (str(json_out), str(report_out))
    console = _console(stderr=to_stdout)
    if asymptotic:
        _run_asymptotic(console, loaded)

    with _activity() as show:
        def progress(spec: PlannerSpec) -> None:
            show(f"{planner_label(spec.name, spec.options)}: planning and replaying")

        outcome = _guarded(lambda: run_scenario(
            loaded, horizon=h, exact=not float_time, progress=progress,
            horizon_key=None if h is None else "--horizon"))
    _print_results(console, outcome)
    if json_out is not None:
        text = json.dumps(outcome.to_dict(), indent=2) + "\n"
        _guarded(lambda: _write_text(json_out, text), writing=json_out)
    if report_out is not None:
        from portsim.reports.html import write_run_report

        with _activity() as show:
            if str(report_out) == STDIN:
                import tempfile

                with tempfile.TemporaryDirectory(prefix="portsim-") as folder:
                    page = Path(folder) / "report.html"
                    _guarded(lambda: write_run_report(outcome, page, progress=show,
                                                      gantt_window=window,
                                                      lp_time_limit=limit))
                    _write_text(report_out, page.read_text(encoding="utf-8"))
            else:
                _guarded(lambda: write_run_report(outcome, report_out, progress=show,
                                                  gantt_window=window, lp_time_limit=limit),
                         writing=report_out)
        if str(report_out) != STDIN:
            console.print(f"report written to {report_out}")
    sys.exit(_run_status(outcome))


def _run_status(outcome: ScenarioResult) -> int:
    """1 if a schedule failed validation, else 3 if a planner failed, else 0."""
    if outcome.any_failed_validation:
        return EXIT_INVALID
    return EXIT_PLANNER_ERROR if outcome.any_planner_error else EXIT_OK


def _run_asymptotic(console: Console, loaded: Scenario) -> None:
    """``run --asymptotic``: print the table and exit (1 on a problem)."""
    from rich.table import Table

    from portsim.scenarios.asymptotic import asymptotic_study

    with _activity() as show:
        study = _guarded(lambda: asymptotic_study(loaded, progress=show))
    figures = [study.bound, study.period]
    for row in study.rows:
        figures += [row.horizon, row.bound_times_horizon, row.constant]
    long = any(_cell(v) != _text(v) for v in figures)
    table = Table(title=f"{loaded.name}: completed(K) / (TP*K), TP = "
                        f"{_cell(study.bound)}, lp period {_cell(study.period)}",
                  caption="C = TP*K - completed, the start-up and wind-down loss "
                          "(constant in K when the ratio tends to 1)"
                          + (f"; {_APPROXIMATED_CELLS}" if long else ""))
    for column in ("planner", "K (periods)", "horizon", "completed", "TP*K", "ratio",
                   "C", "note"):
        table.add_column(column, justify="left" if column in ("planner", "note")
                         else "right")
    for row in study.rows:
        table.add_row(row.planner, str(row.periods), _cell(row.horizon),
                      "-" if row.completed is None else str(row.completed),
                      _cell(row.bound_times_horizon),
                      "-" if row.ratio is None else with_decimal(row.ratio, _cell(row.ratio)),
                      _cell(row.constant), row.note)
    _print_table(console, table)
    for problem in study.problems:
        console.print(problem, style="red")
    sys.exit(EXIT_OK if study.ok else EXIT_INVALID)


def _platform_summary(platform: Platform) -> str:
    """``36 nodes (20 routers), multiport``: routers (switches, NICs) counted apart, and
    every port model a node follows (``mixed: ...``), not only the platform's default."""
    routers = len(platform.routers)
    nodes = f"{len(platform.nodes)} nodes"
    if routers:
        nodes += f" ({routers} router{'s' if routers != 1 else ''})"
    return f"{nodes}, {_port_models(platform)}"


def _port_model_words(platform: Platform) -> str:
    """``port model multiport``, or ``port models mixed: ...`` (:func:`_port_models`)."""
    models = _port_models(platform)
    return f"port model{'s' if models.startswith('mixed') else ''} {models}"


def _port_models(platform: Platform) -> str:
    """``unidirectional``, or ``mixed: bidirectional, unidirectional`` when the
    nodes follow several port models."""
    models = sorted({str(platform.port_model_of(n)) for n in platform.node_ids})
    return models[0] if len(models) == 1 else "mixed: " + ", ".join(models)


def _print_results(console: Console, outcome: ScenarioResult) -> None:
    from rich.table import Table
    from rich.text import Text

    from portsim.simulator.validation import describe_violation_events

    scenario = outcome.scenario
    table = Table(title=f"{scenario.name}: {scenario.operation.kind.value} on "
                        f"{_platform_summary(scenario.platform)}")
    for column in ("planner", "status", "bound", "period", "makespan", "measured TP",
                   "completed", "horizon", "feasible"):
        table.add_column(column, justify="left" if column in ("planner", "status") else "right")
    long = False
    for r in outcome.results:
        feasible = Text("-" if r.feasible is None else "yes" if r.feasible else "NO",
                        style="red" if r.feasible is False else "")
        figures = (r.throughput_bound, r.achieved_throughput, r.period, r.makespan,
                   r.measured_throughput_exact, r.horizon)
        long = long or any(_cell(v) != _text(v) for v in figures)
        bound = Text(_cell(r.throughput_bound))
        if r.bound_reached is False:
            # The schedule falls short of the bound (e.g. a certified interval).
            bound.append(f" (not reached: {_cell(r.achieved_throughput)})", style="yellow")
        table.add_row(r.label, r.status, bound, _cell(r.period),
                      _cell(r.makespan), _cell(r.measured_throughput_exact),
                      "cut" if r.replay_cut else "-" if r.completed is None else str(r.completed),
                      _cell(r.horizon),
                      feasible)
    _print_table(console, table)
    if long:
        console.print(f"{_APPROXIMATED_CELLS} (--json gives every figure exactly)",
                      soft_wrap=True)
    # One line per message, however long: rich would otherwise break it at the
    # console width (160 in a pipe) and `grep LABEL:` would miss the rest.
    for r in outcome.results:
        if r.message and r.status != "ok":
            console.print(f"{r.label}: {r.status}: {r.message}", soft_wrap=True)
        for note in r.notes:
            console.print(f"{r.label}: note: {note}", soft_wrap=True)
        schedule = r.plan.schedule if r.plan is not None else None
        for v in r.violations[:20]:
            # the events described, as validate's table gives them
            described = "; ".join(describe_violation_events(v, schedule))
            console.print(f"{r.label}: {v}" + (f" [{described}]" if described else ""),
                          style="red", soft_wrap=True)
        if len(r.violations) > 20:
            console.print(f"{r.label}: ... {len(r.violations) - 20} more violations", style="red",
                          soft_wrap=True)


# -- validate ----------------------------------------------------------------------------


@main.command()
@click.argument("schedule", type=_FilePath(dir_okay=False, path_type=Path))
@click.option("--horizon", help="Time span of a periodic replay (default: 10 periods "
                                "past the largest lag); for a one-shot schedule, the span "
                                "over which its pipelined series is measured, as `run` "
                                "does (the schedule itself is checked whole).")
@click.option("--mode", type=click.Choice(["strict", "asap"]), default="strict",
              show_default=True, help="strict checks stated times; asap keeps per-port "
                                      "order and computes achieved times.")
@click.option("--float", "float_time", is_flag=True, help="Replay in float time.")
@click.option("--tolerance", help="An event may start this long before the port, link, "
                                  "CPU or item it needs is free (exact time; e.g. 1e-9 for "
                                  "start times computed in floats), and parts summing to "
                                  "just under 1 make the item when the fraction missing "
                                  "takes at most this long to send; a stated duration may "
                                  "differ this much.  [default: 0]")
@click.option("--port-model", help="Replace the platform-wide port model (a node whose "
                                   "file gives its own keeps it: a warning names them).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--platform", "platform_file", type=_FilePath(dir_okay=False, path_type=Path),
              help="MSCCL .xml only: a YAML file with a platform: key (a scenario serves).")
@click.option("--size", help="MSCCL .xml only: the message size (a chunk is size / "
                             "nchunksperloop).  [default: 1]")
@click.option("--ranks", help="MSCCL .xml only: platform node of each rank, comma-separated "
                              "(default: the processors in order).")
@click.option("--no-lp-bound", "no_bound", is_flag=True,
              help="Do not compute the lp bound (on large reductions it can take minutes).")
@click.option("--lp-time-limit", "lp_time_limit", metavar="SECONDS",
              help=_LP_TIME_LIMIT_HELP)
def validate(schedule: Path, horizon: str | None, mode: str, float_time: bool,
             tolerance: str | None, port_model: str | None, fmt: str,
             platform_file: Path | None, size: str | None, ranks: str | None,
             no_bound: bool, lp_time_limit: str | None) -> None:
    """Replay SCHEDULE (strictly, or --mode asap) and report every violation.

    Exit status: 0 feasible and complete, 1 violations (or, --mode asap,
    feasible but incomplete: some expected instance never completes), 2 bad
    input.  A feasible schedule is also compared with the optimal throughput of the
    `lp` planner, when one is registered and handles the operation (not
    with --no-lp-bound).

    An MSCCL algorithm (a `.xml` file) needs `--platform`: it is
    list-scheduled on the platform, replayed strictly and checked for
    correctness (exit 1 if incorrect or infeasible).
    """
    from portsim.planners.lp import LpOptions
    from portsim.scenarios.bounds import compare_to_bound, lp_bound
    from portsim.scenarios.runner import series_cut
    from portsim.simulator.engine import (
        default_horizon,
        parse_tolerance,
        replay,
        replay_one_shot,
    )
    from portsim.simulator.validation import describe_violation_events, schedule_throughput

    port_model = _port_model_option(port_model)
    limit = _lp_time_limit(lp_time_limit, no_bound)
    if schedule.suffix.lower() == ".xml":
        for name, unused in (("--horizon", horizon), ("--float", float_time or None),
                             ("--tolerance", tolerance),
                             ("--mode", None if mode == "strict" else mode)):
            if unused is not None:
                _fail(f"{name}: does not apply to an MSCCL .xml file, replayed "
                      f"strictly{_got(unused)}")
        _validate_msccl(schedule, platform_file, size, ranks, port_model, fmt, not no_bound,
                        limit)
    for name, given in (("--platform", platform_file), ("--size", size), ("--ranks", ranks)):
        if given is not None:
            _fail(f"{name}: applies to MSCCL .xml files only (got {str(given)!r})")
    h = _positive(horizon, "--horizon")
    slack = _guarded(lambda: parse_tolerance(tolerance, exact=not float_time,
                                                    path="--tolerance"))
    # 100,000 events of YAML take about 10 s to read; no spinner over what a user types
    typed = str(schedule) == "-" and sys.stdin.isatty()
    with contextlib.nullcontext(lambda _: None) if typed else _activity() as show:
        show(f"reading {schedule}")
        loaded = _guarded(lambda: _load_schedule(schedule))
    _warn_kept_port_models(loaded.platform, port_model)

    def replayed() -> Report:
        try:
            if loaded.period is None and h is not None:
                # the schedule checked whole, its pipelined series measured over
                # the horizon: the figures `run` gives for a one-shot planner
                return replay_one_shot(loaded, h, mode=mode, exact=not float_time,
                                       port_model=port_model, tolerance=slack)
            return replay(loaded, mode=mode, exact=not float_time, horizon=h,
                          port_model=port_model, tolerance=slack)
        except PortsimError as err:  # a horizon or lag too large: name the file
            raise (err if err.source else err.with_source(str(schedule))) from None

    with _activity() as show:
        show(f"replaying {len(loaded.events)} events ({mode})")
        report = _guarded(replayed)
    asked = h if h is not None else default_horizon(loaded)
    if isinstance(report.horizon, float) and asked is not None and report.horizon == float(asked):
        # --float times the events in floats, but the horizon is what was asked,
        # exactly (as `run --float` gives it): completed / horizon stays exact
        report = dataclasses.replace(report, horizon=asked)
    ok = report.feasible and report.complete
    # One-shot over --horizon: how the series was measured, or why it was not.
    series_note = ""
    cut = False
    if loaded.period is None and h is not None:
        if report.horizon is None:
            why = ("the operation needs no communication or computation"
                   if not loaded.events else f"{len(report.violations)} violation(s)")
            series_note = (f"horizon {_text(h)}: not measured: {why} (the pipelined series "
                           f"of a one-shot schedule is measured only when the schedule is "
                           f"feasible, as in run)")
        elif series_cut(report, h):
            cut = True
            series_note = (f"replay cut: the pipelined series did not settle into a repeating "
                           f"pattern within the replay cap; completed counts up to "
                           f"{_text(report.horizon)}, not the horizon {_text(h)}")
    # A periodic schedule with violations: what its replay completed despite
    # them is no throughput (as in run, and as for a one-shot schedule's series).
    unmeasured = loaded.period is not None and bool(report.violations) and (
        report.horizon is not None)
    if unmeasured:
        series_note = (f"not measured: {counted(len(report.violations), 'violation')} (the "
                       f"throughput of a periodic schedule is measured only when its replay "
                       f"is feasible, as in run)")
    # Throughput as written (strict replay): n / period, or instances / makespan.
    throughput = schedule_throughput(loaded, report) if ok and mode == "strict" else None
    bound_note = ""
    comparison = None
    if throughput is not None and no_bound:
        bound_note = "lp bound not asked (--no-lp-bound)"
    elif throughput is not None:
        platform = loaded.platform if port_model is None else loaded.platform.with_port_model(
            port_model)
        with _activity() as show:
            show(f"the lp bound of the {loaded.operation.kind.value} (lp planner, time limit "
                 f"{LpOptions(time_limit=limit).seconds:g} s)")
            found = lp_bound(platform, loaded.operation, time_limit=limit)
        if found.bound is not None and found.bound > 0:
            comparison = compare_to_bound(throughput, found.bound)
            if found.caveat:
                bound_note = (f"lp bound not proven optimal, the lp says: "
                              f"{_lp_limit_words(found.caveat)}")
            if comparison.ratio > 1 and slack:
                # no schedule passes the bound: the tolerance let its events start early
                bound_note = "; ".join(filter(None, (bound_note, (
                    f"above the lp bound, which no schedule passes: only --tolerance "
                    f"{_text(slack)} (events may start that much early, and parts short "
                    f"of a whole item by that much sending time count as whole) lets "
                    f"it replay without violation"))))
        else:
            bound_note = f"no lp bound available ({_lp_limit_words(found.reason)})"
    else:
        # Why there is no throughput as written to compare (the JSON's null
        # throughput and lp_bound said nothing).
        if not report.feasible:
            why = counted(len(report.violations), "violation")
        elif not report.complete:
            why = "an instance does not complete"
        elif mode != "strict":
            why = ("the as-soon-as-possible replay times the events anew; the strict "
                   "replay measures the schedule as written")
        elif not loaded.events:
            why = "the operation needs no communication or computation"
        elif loaded.period is not None and h is not None:
            why = (f"the horizon {_text(h)} is too short to see every instance slot "
                   f"complete past the start-up (a longer one, or none, does)")
        else:
            why = "the strict replay did not see every instance complete"
        bound_note = f"no throughput as written, so no comparison with the lp bound: {why}"
    if fmt == "json":
        extra = {
            "throughput": None if throughput is None else format_rational(throughput),
            "lp_bound": None if comparison is None else format_rational(comparison.bound),
            "ratio_to_lp_bound": None if comparison is None else format_rational(
                comparison.ratio),
            "lp_note": bound_note,
            "replay_cut": cut,
            "series_note": series_note,
        }
        document = {"schedule": str(schedule), "ok": ok, **report.to_dict(), **extra}
        if unmeasured:
            document["measured_throughput"] = document["measured_throughput_exact"] = None
        for record, v in zip(document["violations"], report.violations, strict=True):
            record["described"] = describe_violation_events(v, loaded)  # as the text table
        click.echo(json.dumps(document, indent=2))
    else:
        console = _console(soft_wrap=True)
        replayed_on = (loaded.platform if port_model is None
                       else loaded.platform.with_port_model(port_model))
        _print_validation(console, schedule, report, loaded, _port_models(replayed_on),
                          series=loaded.period is None and report.horizon is not None,
                          figures=not unmeasured)
        if series_note:
            console.print(series_note)
        if throughput is not None:
            # a one-shot schedule's own instances (report.instances counts the
            # series' over a horizon)
            own = len(loaded.instances())
            if loaded.period is not None:
                how = (f"{loaded.instances_per_period} instance(s) per period "
                       f"{_text(loaded.period)}")
            elif report.end_time != report.makespan:
                # events after the completion hold their ports and links: a
                # copy of the schedule can start only once they have ended
                how = (f"{own} instance(s) every {_text(report.end_time)}, "
                       f"when its last event ends, back to back")
            else:
                how = f"{own} instance(s) per makespan, back to back"
            console.print(f"throughput: {_text_readable(throughput)} ({how})")
            if comparison is not None:
                # its decimal value too, unless it is a whole number; "=" only where that
                # value is exact (3/4 = 0.75), else "~": 6400013/6400026 was "= 1", the
                # ratio of a schedule that does not reach the bound
                console.print(f"lp bound: {readable(comparison.bound)}, ratio to the bound: "
                              f"{with_decimal(comparison.ratio)}")
            if bound_note:
                console.print(bound_note)
        elif ok:  # feasible and complete, and yet no figure: say why
            console.print(bound_note)
    sys.exit(EXIT_OK if ok else EXIT_INVALID)


_SHOWN = 20
"""Problems and violations of an MSCCL verdict printed as text (JSON has them all)."""


def _validate_msccl(algorithm: Path, platform_file: Path | None, size: str | None,
                    ranks: str | None, port_model: str | None, fmt: str, lp: bool,
                    lp_time_limit: float | None = None) -> None:
    """``portsim validate ALGO.xml --platform FILE.yaml``: print the verdict and exit."""
    from portsim.scenarios.msccl import load_platform_file, validate_msccl

    chunk_size = _positive(size, "--size") or Fraction(1)
    if platform_file is None:
        _fail(f"{algorithm}: --platform FILE.yaml is required for an MSCCL algorithm")
    assert platform_file is not None
    platform = _guarded(lambda: load_platform_file(platform_file))
    _warn_kept_port_models(platform, port_model)
    rank_list = None if ranks is None else [r.strip() for r in ranks.split(",")]
    with _activity() as show:
        verdict = _guarded(lambda: validate_msccl(algorithm, platform, size=chunk_size,
                                                  ranks=rank_list, port_model=port_model,
                                                  lp=lp, lp_time_limit=lp_time_limit,
                                                  progress=show))
    # the lp's "raise time_limit" in this command's words (--lp-time-limit)
    verdict = dataclasses.replace(verdict, lp_note=_lp_limit_words(verdict.lp_note))
    if fmt == "json":
        click.echo(json.dumps({"algorithm_file": str(algorithm), **verdict.to_dict()},
                              indent=2))
    else:
        console = _console(soft_wrap=True)
        console.print(f"{algorithm}: {verdict.timing.algorithm.collective} on "
                      f"{len(verdict.timing.ranks)} ranks ({', '.join(verdict.timing.ranks)}), "
                      f"{_port_model_words(verdict.timing.schedule.platform)}")
        console.print(f"feasible: {'yes' if verdict.feasible else 'NO'}, correct: "
                      f"{'yes' if verdict.correct else 'NO'}, makespan: "
                      f"{_text_readable(verdict.makespan)}")
        for note in verdict.timing.algorithm.runtime_limits():
            console.print(f"note: {note}", style="yellow")
        # The first 20 of each, as `run` shows a row's violations: a 64-rank
        # file without its dependencies printed 13,000 lines of races.
        for problem in verdict.problems[:_SHOWN]:
            console.print(f"incorrect: {problem}", style="red")
        if len(verdict.problems) > _SHOWN:
            console.print(f"incorrect: ... {len(verdict.problems) - _SHOWN} more problems "
                          "(--format json lists them all)", style="red")
        for v in verdict.violations[:_SHOWN]:
            console.print(str(v), style="red")
        if len(verdict.violations) > _SHOWN:
            console.print(f"... {len(verdict.violations) - _SHOWN} more violations "
                          "(--format json lists them all)", style="red")
        console.print(f"throughput: {_text_readable(verdict.throughput)} "
                      f"({verdict.throughput_note})")
        if not lp:  # the words of a schedule file's validate
            console.print("lp bound not asked (--no-lp-bound)")
        else:
            console.print(f"lp bound: {_text_readable(verdict.lp_bound)}"
                          + (f" ({verdict.lp_note})" if verdict.lp_note else "")
                          + f", ratio to the bound: {_text(verdict.ratio_to_lp_bound)}")
    sys.exit(EXIT_OK if verdict.correct else EXIT_INVALID)


@main.command(name="msccl-import")
@click.argument("algorithm", type=_FilePath(dir_okay=False, path_type=Path))
@click.option("--platform", "platform_file", required=True,
              type=_FilePath(dir_okay=False, path_type=Path),
              help="A YAML file with a platform: key (a scenario serves).")
@click.option("--size", default="1", show_default=True,
              help="The message size (a chunk is size / nchunksperloop).")
@click.option("--ranks", help="Platform node of each rank, comma-separated (default: the "
                              "processors in order).")
@click.option("--port-model", help="Replace the platform-wide port model (a node whose "
                                   "file gives its own keeps it: a warning names them).")
@click.option("-o", "--output", type=_FilePath(dir_okay=False, path_type=Path),
              required=True, help="Schedule file to write; - for standard output.")
def msccl_import(algorithm: Path, platform_file: Path, size: str, ranks: str | None,
                 port_model: str | None, output: Path) -> None:
    """Write the timed one-shot schedule of the MSCCL ALGORITHM as a schedule file.

    The algorithm is list-scheduled on the platform as `validate` does and
    its schedule written in the format `portsim plan -o` writes (chunk
    index `j` is instance `#j`), for `portsim validate` and the other
    tools.  Exit status: 0 written, 1 the algorithm is incorrect (nothing
    written), 2 bad input.
    """
    from portsim.planners.msccl.algorithm import read_msccl, time_msccl
    from portsim.scenarios.loader import STDIN
    from portsim.scenarios.msccl import load_platform_file
    from portsim.scenarios.schedule_file import dump_schedule

    _check_destination(output, "-o / --output", (("MSCCL algorithm file", algorithm),
                                                  ("platform file", platform_file)))
    port_model = _port_model_option(port_model)
    message_size = _positive(size, "--size")
    platform = _guarded(lambda: load_platform_file(platform_file))
    _warn_kept_port_models(platform, port_model)
    if port_model is not None:
        model = port_model
        platform = _guarded(lambda: platform.with_port_model(model))
    rank_list = None if ranks is None else [r.strip() for r in ranks.split(",")]
    algo = _guarded(lambda: read_msccl(algorithm))
    if algo.collective == "reduce_scatter":
        _fail(f"{algorithm}: algo.coll: a reduce_scatter cannot be written as a schedule "
              "file: portsim has no reduce_scatter operation (portsim validate checks it) "
              "(got 'reduce_scatter')")
    timing = _guarded(lambda: time_msccl(algo, platform, size=message_size or 1, ranks=rank_list))
    if not timing.correct:
        click.echo(f"portsim: error: {algorithm}: incorrect, nothing written: "
                   f"{timing.problems[0]}", err=True)
        sys.exit(EXIT_INVALID)
    schedule = timing.schedule
    description = (f"MSCCL {algo.collective} {algo.name!r} from {algorithm.name}: "
                   f"{algo.ngpus} ranks on {', '.join(timing.ranks)}, "
                   f"{algo.chunks_per_rank} chunk index(es) = instances #0..#"
                   f"{algo.chunks_per_rank - 1}, makespan {format_rational(timing.makespan)}")
    if str(output) == STDIN:
        dump_schedule(schedule, sys.stdout, description=description)
        sys.stdout.flush()  # before saying it is written
    else:
        _guarded(lambda: dump_schedule(schedule, output, description=description),
                 writing=output)
    click.echo(f"wrote one-shot schedule of {len(schedule.events)} events to {output}",
               err=str(output) == STDIN)


def _load_schedule(path: Path) -> Schedule:
    """Read a schedule file (``.jsonl``: JSON Lines; ``-``: standard input, YAML or
    JSON Lines, told apart by :func:`~portsim.scenarios.schedule_file.is_jsonl`).

    A scenario file is pointed to ``run``.
    """
    import stat

    from portsim.scenarios.loader import STDIN, read_document, read_once
    from portsim.scenarios.schedule_file import (
        JSONL_SUFFIX,
        is_jsonl,
        load_schedule,
        load_schedule_text,
        schedule_from_dict,
    )

    if str(path).endswith(JSONL_SUFFIX):  # the JSON Lines form, read line by line
        return load_schedule(path)
    # standard input or a pipe (`validate <(zcat s.jsonl.gz)`): read once, its form
    # told from its text
    once = str(path) == STDIN or stat.S_ISFIFO(_stat_mode(path))
    text = read_once(path, error=ScheduleError) if once else None
    if text is not None and is_jsonl(text):
        stdin = str(path) == STDIN
        return load_schedule_text(text, source="<stdin>" if stdin else str(path),
                                  base_dir=Path.cwd() if stdin else path.parent)
    data, source, base_dir = read_document(path, error=ScheduleError, text=text)
    if isinstance(data, dict) and "events" not in data and "planners" in data:
        raise ScheduleError("this is a scenario file (it has planners and no events): run "
                            "it with `portsim run`, or write a planner's schedule with "
                            "`portsim plan`", source=source)
    return schedule_from_dict(data, source=source, base_dir=base_dir)


def _stat_mode(path: Path) -> int:
    """``path``'s file type and mode bits, 0 when it cannot be read (the reader says why)."""
    try:
        return path.stat().st_mode
    except (OSError, ValueError):
        return 0


def _print_validation(console: Console, path: Path, report: Report, schedule: Schedule,
                      models: str, *, series: bool = False, figures: bool = True) -> None:
    """``schedule``: the one replayed, whose events the violations name;
    ``models``: the port models the nodes followed (see :func:`_port_models`);
    ``series``: the figures over the horizon are those of a one-shot schedule's
    pipelined series; ``figures``: False when they are no throughput (the
    replay of a periodic schedule has violations): the horizon and the count
    alone, the caller saying why."""
    from portsim.simulator.validation import violation_table

    verdict = "feasible and complete" if report.feasible and report.complete else (
        "feasible but incomplete" if report.feasible else
        f"{len(report.violations)} violation(s)")
    console.print(f"{path}: {verdict} ({report.mode} replay, {models})")
    if report.makespan is not None:
        console.print(f"makespan: {_text_readable(report.makespan)}")
    if report.horizon is not None and not figures:
        console.print(f"horizon: {_text_readable(report.horizon)}, completed despite the "
                      f"violations: {report.completed}")
    elif report.horizon is not None:
        # completed / horizon, exact like every other figure (the float
        # ``measured_throughput`` only in float mode)
        measured = (Fraction(report.completed) / report.horizon
                    if isinstance(report.horizon, Fraction) and report.completed is not None
                    else report.measured_throughput)
        what = ("of the pipelined series of operations reusing the schedule, as run "
                "measures it" if series else "start-up included")
        console.print(f"horizon: {_text_readable(report.horizon)}, completed: {report.completed}, "
                      f"measured throughput: {_text_readable(measured)} (completed / horizon, "
                      f"{what})")
    if report.incomplete:
        # an asap replay over a horizon measures: its incomplete instances are
        # not violations, but they are not complete either (and say so here)
        console.print(f"incomplete: {report.incomplete} of the {report.instances} expected "
                      f"instance(s) never complete")
    if report.violations:
        # the table a failing test shows (violation_table), every event described
        console.print("violations:")
        console.print(violation_table(report, schedule, limit=None), markup=False,
                      highlight=False)


# -- plan -------------------------------------------------------------------------------


@main.command()
@click.argument("scenario", type=_FilePath(dir_okay=False, path_type=Path))
@click.option("--planner", "planner_name", required=True,
              help="Planner name (see `portsim planners`), or the label of one of the "
                   "scenario's planners ('greedy (reducers: 2)') to take that entry's "
                   "options.")
@click.option("-o", "--output", type=_FilePath(dir_okay=False, path_type=Path),
              required=True, help="Schedule file to write; - for standard output.")
def plan(scenario: Path, planner_name: str, output: Path) -> None:
    """Write PLANNER's schedule for SCENARIO as a schedule file.

    PLANNER is a name, with the options of the scenario's first entry of
    that name (none if it lists none), or the label of an entry
    ('greedy (reducers: 2)', as `portsim run` prints it), with its options.

    Exit status: 0 written, 2 bad input or no schedule (unsupported,
    infeasible), 3 the planner failed.
    """
    from portsim.planners.base import Planner
    from portsim.planners.registry import get_planner
    from portsim.scenarios.loader import STDIN, load_scenario
    from portsim.scenarios.runner import as_label, guarded_plan, planner_label
    from portsim.scenarios.schedule_file import dump_schedule

    _check_destination(output, "-o / --output", (("scenario file", scenario),))
    loaded = _guarded(lambda: load_scenario(scenario))
    options: dict[str, Any] = {}
    # A planner listed twice with other options is told apart by its label.
    # (typed as in the scenario file, `split: false`, or as printed, `split: False`)
    by_label = [spec for spec in loaded.planners
                if planner_label(spec.name, spec.options) == as_label(planner_name)]
    for spec in by_label or [s for s in loaded.planners if s.name == planner_name]:
        planner_name, options = spec.name, dict(spec.options)
        break

    def chosen() -> Planner:
        try:
            return get_planner(planner_name)
        except PlannerError as err:  # the option, the scenario and the labels it accepts
            labels = ", ".join(repr(planner_label(s.name, s.options)) for s in loaded.planners)
            raise PlannerError(f"{err.message}; labels of the scenario's planners: "
                               f"{labels}", path="--planner", value=planner_name,
                               source=loaded.source) from None

    planner = _guarded(chosen)
    result = _guarded(lambda: guarded_plan(planner, loaded.platform, loaded.operation, options))
    if not result.is_ok or result.schedule is None:
        click.echo(f"portsim: error: {loaded.source}: planner {planner_name} returned "
                   f"{result.status}: {result.message or 'no schedule'}", err=True)
        sys.exit(EXIT_PLANNER_ERROR if result.status == "error" else EXIT_BAD_INPUT)
    schedule = result.schedule
    if str(output) == STDIN:
        dump_schedule(schedule, sys.stdout)
        sys.stdout.flush()  # before saying it is written
    else:
        _guarded(lambda: dump_schedule(schedule, output), writing=output)
    kind = "periodic" if schedule.period is not None else "one-shot"
    # a pipe or a device by name (-o /dev/stdout): not read back (from the pipe it
    # fills: forever), and the line goes where "-" sends it, not into the schedule
    regular = str(output) != STDIN and _is_regular_file(output)
    click.echo(f"wrote {kind} schedule of {len(schedule.events)} events to {output}",
               err=not regular)
    if regular:
        # Read back as validate reads it: a planner's exact time may hold more
        # digits than a file's number may (SPEC, bounds; an lp period on links of
        # cost 1/p for large primes p).
        try:
            _load_schedule(output)
        except PortsimError as err:
            click.echo(f"portsim: warning: `portsim validate` cannot read {output} back: "
                       f"{' '.join(str(err).split())}; for lp, the option 'period:' with a "
                       f"round value gives a readable schedule", err=True)
    if result.replay == "asap":
        # The stated times are the planner's port-sum timing, not achievable:
        # a strict validate would list violations the planner never claimed.
        click.echo(f"note: {planner_name} claims only the order of events, not their "
                   f"times: check it with `portsim validate {output} --mode asap`", err=True)


# -- planners ----------------------------------------------------------------------------


@main.command(name="planners")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the same list as one JSON document on "
                                      "standard output.")
def planners_command(fmt: str) -> None:
    """List the planners, the operations and port models each supports."""
    from portsim.planners.registry import planner_infos

    infos = sorted(planner_infos(), key=lambda info: info.name)
    if fmt == "json":
        click.echo(json.dumps({"planners": [
            {"name": info.name, "operations": sorted(info.operations),
             "port_models": sorted(info.port_models), "description": info.description}
            for info in infos]}, indent=2))
        return
    from rich.table import Table

    table = Table(title="planners")
    for column in ("name", "operations", "port models", "description"):
        table.add_column(column)
    for info in infos:
        table.add_row(info.name, ", ".join(sorted(info.operations)),
                      ", ".join(sorted(info.port_models)), info.description)
    _print_table(_console(), table)


# -- study, report -----------------------------------------------------------------------


class _RateMeter:
    """Runs per second over the last :attr:`WINDOW` seconds, and the time left.

    A moving window over the completion times of computed runs (stored runs
    skipped on ``--resume`` are not counted): batches that finish together
    move the rate by their share of the window, not by orders of magnitude.
    Before the first run ends there is no rate (``None``).
    """

    WINDOW = 30.0

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._start = clock()
        self._done = 0
        self._samples: list[tuple[float, int]] = []  # (time, runs computed by then)

    def add(self, computed: int) -> None:
        """Record that ``computed`` runs have been computed by now."""
        if computed > self._done:
            self._done = computed
            self._samples.append((self._clock(), computed))

    def rate(self) -> float | None:
        """Smoothed runs per second, or ``None`` before the first run ends."""
        if not self._samples:
            return None
        now = self._clock()
        since = max(self._start, now - self.WINDOW)
        before = 0
        for when, count in self._samples:
            if when <= since:
                before = count
        self._samples = [(w, c) for w, c in self._samples if w > since - self.WINDOW]
        return (self._done - before) / max(now - since, 1e-9)

    def left(self, remaining: int) -> float | None:
        """Seconds for ``remaining`` runs at :meth:`rate`, or ``None`` without a rate."""
        rate = self.rate()
        return remaining / rate if rate else None


def _study_columns(meter: _RateMeter) -> tuple[Any, ...]:
    """The progress bar's columns: runs done, failures, smoothed rate, time left."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        max_refresh = 1.0

        def render(self, task: Any) -> Text:
            rate = meter.rate()
            return Text("- runs/s" if rate is None else f"{rate:.2f} runs/s")

    class Left(ProgressColumn):
        max_refresh = 1.0

        def render(self, task: Any) -> Text:
            return Text(_time_left(meter.left(int((task.total or 0) - task.completed))))

    return (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"), Rate(),
            TimeElapsedColumn(), Left())


def _time_left(seconds: float | None) -> str:
    """``0:01:05 left``, or ``-:--:-- left`` without a rate."""
    if seconds is None:
        return "-:--:-- left"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{rest:02d} left"


@contextlib.contextmanager
def _study_heartbeat(name: str, meter: _RateMeter, quiet: float | None = None,
                     still: float | None = None) -> Iterator[Callable[[int, int, int], None]]:
    """Off a terminal, the study's progress as lines: ``progress(done, failed, total)``
    records the counts, and ``portsim: NAME: 12 of 30 run(s) done, 0 failed, 0.40
    runs/s, 0:00:45 left`` is printed on standard error once the study has run
    ``quiet`` seconds, then every ``still`` seconds (:func:`_every`): a study in a
    log file is not silence for hours (a progress bar draws only its last frame
    there)."""
    counts: list[tuple[int, int, int]] = []  # done, failed, total; none before the first call

    def line(age: float) -> str | None:
        if not counts:
            return None
        done, failed, total = counts[-1]
        rate = meter.rate()
        return (f"portsim: {name}: {done} of {total} run(s) done, {failed} failed, "
                f"{'-' if rate is None else f'{rate:.2f}'} runs/s, "
                f"{_time_left(meter.left(total - done))}")

    def progress(done: int, failed: int, total: int) -> None:
        counts[:] = [(done, failed, total)]

    with _every(line, quiet, still):
        yield progress


EXIT_SIGNAL_BASE = 128
"""A study stopped by a signal exits 128 + the signal number (130 SIGINT, 143 SIGTERM)."""


@main.command()
@click.argument("study_file", metavar="STUDY.yaml",
                type=_FilePath(dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=_FilePath(file_okay=False, path_type=Path),
              help="Output folder; rows go to OUT/results.parquet/.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
              show_default=True, help="Local process pool or Dask distributed.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes (local default: CPU count; dask LocalCluster: 2).")
@click.option("--scheduler", help="Address of an existing Dask scheduler (tcp://HOST:PORT).")
@click.option("--resume", is_flag=True, help="Continue a stored study, skipping done runs.")
@click.option("--batch-size", type=click.IntRange(min=1), default=50, show_default=True,
              help="Store finished runs once this many are pending (or every 2 s).")
@click.option("--max-runs", type=click.IntRange(min=1), default=None,
              help="Largest number of runs (grid points x replicates) accepted "
                   "[default: 100000].")
def study(study_file: Path, out: Path, executor: str, workers: int | None,
          scheduler: str | None, resume: bool, batch_size: int, max_runs: int | None) -> None:
    """Run the comparative study STUDY.yaml; exit 1 if a run failed or was invalid.

    SIGINT (Ctrl-C) or SIGTERM stops the workers, keeps every finished run in
    the store (continue with --resume) and exits 130 or 143.
    """
    import signal
    import threading
    import time

    from rich.console import Console
    from rich.progress import Progress

    from portsim.scenarios.study import load_study, run_study
    from portsim.scenarios.study.spec import DEFAULT_MAX_RUNS

    try:
        loaded = _guarded(lambda: load_study(study_file, max_runs=max_runs or DEFAULT_MAX_RUNS))
    except KeyboardInterrupt:
        click.echo(f"portsim: {study_file}: interrupted while loading; nothing ran", err=True)
        sys.exit(EXIT_SIGNAL_BASE + signal.SIGINT)
    console = Console(stderr=True)
    meter = _RateMeter(time.monotonic)
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        if received:  # a second signal: stop waiting for a clean end
            raise KeyboardInterrupt
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    # The bar starts with the first progress call, once the store is checked and
    # locked: a refusal before it is the error line alone.  Off a terminal the bar
    # would draw its last frame only: lines say how far the study is instead.
    bar = Progress(*_study_columns(meter), console=console, transient=False)
    task = bar.add_task(loaded.name, total=len(loaded.runs), failed=0)
    stored: list[int] = []  # runs already in the store, from the first call
    lines = (contextlib.nullcontext(None) if console.is_terminal
             else _study_heartbeat(loaded.name, meter))

    def progress(done: int, failed: int, total: int) -> None:
        if not stored:
            stored.append(done)
            if line is None:
                bar.start()
        meter.add(done - stored[0])
        if line is None:
            bar.update(task, completed=done, total=total, failed=failed)
        else:
            line(done, failed, total)

    def run_then_stop_the_bar() -> Any:
        # The bar's last frame goes before any error line, not after it.
        try:
            return run_study(
                loaded, out, executor=executor,  # type: ignore[arg-type]
                workers=workers, scheduler=scheduler, resume=resume, batch_size=batch_size,
                progress=progress, stop=stop)
        finally:
            if stored and line is None:
                bar.stop()

    try:
        with lines as line:
            outcome = _guarded(run_then_stop_the_bar)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _print_study_outcome(loaded.name, outcome, out)
    if outcome.interrupted:
        signum = received[0] if received else signal.SIGINT
        click.echo(f"{loaded.name}: stopped by {signal.Signals(signum).name}: "
                   f"{outcome.skipped + outcome.computed} of {outcome.total} run(s) stored; "
                   f"continue with --resume", err=True)
        sys.exit(EXIT_SIGNAL_BASE + signum)
    sys.exit(EXIT_INVALID if outcome.failed or outcome.invalid or outcome.stored_failed
             or outcome.stored_invalid else EXIT_OK)


def _print_study_outcome(name: str, outcome: Any, out: Path) -> None:
    """The closing lines of a study: counts, then the first failures and warnings."""
    from portsim.scenarios.study.store import study_folder

    earlier = ""
    if outcome.stored_failed or outcome.stored_invalid:
        earlier = (f" (and, among the runs already stored, {outcome.stored_failed} failed, "
                   f"{outcome.stored_invalid} with an invalid schedule)")
    click.echo(f"{name}: {outcome.total} run(s), {outcome.skipped} already stored, "
               f"{outcome.computed} computed in {outcome.elapsed:.1f} s "
               f"({outcome.rate:.2f} runs/s), {outcome.failed} failed, "
               f"{outcome.invalid} with an invalid schedule{earlier}; results in "
               f"{study_folder(out) / 'results.parquet'}")
    if outcome.failures:
        bad = outcome.failed + outcome.invalid
        click.echo(f"{bad} run(s) failed or invalid; the first:")
        for line in outcome.failures:
            click.echo(f"  {line}")
    if outcome.warnings:
        click.echo(f"{outcome.warned} run(s) with warnings (in the rows' notes); the first:")
        for line in outcome.warnings:
            click.echo(f"  {line}")


@main.command()
@click.argument("directory", type=_FilePath(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=_FilePath(dir_okay=False, path_type=Path),
              help="The HTML file (default DIRECTORY/report.html); - for standard output.")
@click.option("--run", "run_index", type=int,
              help="Run drawn in detail (default: among the runs where every planner ran, "
                   "the first where they differ most; the page says which).")
@click.option("--planner", help="Planner of the Gantt chart, by label ('lp (split: False)') "
                                "or name (default: the first with a schedule).")
@click.option("--gantt-window", metavar="START:END", help=_GANTT_WINDOW_HELP)
def report(directory: Path, output: Path | None, run_index: int | None,
           planner: str | None, gantt_window: str | None) -> None:
    """Write the self-contained HTML report of the study stored in DIRECTORY.

    A --run or --planner not in the study is bad input (exit 2, the valid
    choices named); failed rows are listed in the report.
    """
    from portsim.reports.studies import write_study_report
    from portsim.scenarios.loader import STDIN
    from portsim.scenarios.study.store import study_folder

    window = _gantt_window(gantt_window)
    # the default page too, in a study folder that exists (else: "no study results")
    default = study_folder(directory) / "report.html"
    _check_destination(default if output is None and default.parent.is_dir() else output)
    with _activity() as show:
        if output is not None and str(output) == STDIN:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="portsim-") as folder:
                page = Path(folder) / "report.html"
                _guarded(lambda: write_study_report(directory, page, run_index=run_index,
                                                    planner=planner, progress=show,
                                                    gantt_window=window))
                _write_text(output, page.read_text(encoding="utf-8"))
            return
        written = _guarded(lambda: write_study_report(directory, output, run_index=run_index,
                                                      planner=planner, progress=show,
                                                      gantt_window=window),
                           writing=output)
    click.echo(f"report written to {written}")


if __name__ == "__main__":  # pragma: no cover
    main()
