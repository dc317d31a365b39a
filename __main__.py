"""``python -m portsim``: the command line, as the ``portsim`` script (whose target,
in ``pyproject.toml``, is :func:`main` here).

The command line's modules (click, rich, portsim's own) take a tenth of a second
or more to import; a Ctrl-C meanwhile raised :class:`KeyboardInterrupt` before
:func:`portsim.scenarios.cli.main` could answer it, and Python printed a traceback.
The import is made here, where that interruption is answered as a later one is:
one line on standard error and exit status 130.
"""

import sys
from typing import NoReturn


def main() -> None:
    """Import the command line and run it (:func:`portsim.scenarios.cli.main`)."""
    try:
        from portsim.scenarios.cli import main as command_line
    except KeyboardInterrupt:
        _stopped_by_sigint()
    command_line()


def _stopped_by_sigint() -> NoReturn:
    """End the process as the command line ends on Ctrl-C (``_stopped_by_sigint`` of
    :mod:`portsim.scenarios.cli`, not imported yet): ``portsim: stopped by SIGINT`` on
    standard error (when it can be written) and exit status 130 (128 + SIGINT)."""
    stream = sys.stderr
    if stream is not None:
        try:
            stream.write("portsim: stopped by SIGINT\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or failing standard error: the status says it
            pass
    sys.exit(130)


if __name__ == "__main__":
    main()
