"""Output files written whole or not at all (:func:`replacing`, :func:`write_text`).

Every file portsim writes for a user (``run --json``, ``run --report``, ``plan -o``,
``msccl-import -o``, ``report -o``, :func:`~portsim.scenarios.schedule_file.dump_schedule`)
goes through :func:`replacing`: the text is written to a hidden temporary file in the
destination's folder, which :func:`os.replace` puts in the destination's place only
once it is complete.  A crash, a Ctrl-C or a full disk while writing leaves the
destination as it was (absent, or its previous content) and no temporary file.

The study's Parquet store has its own discipline of the same kind (one part per
batch, :meth:`portsim.scenarios.study.store.ResultStore.append`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["replacing", "temporary_name", "write_text"]


def temporary_name(destination: Path) -> Path:
    """The hidden temporary file beside ``destination`` that :func:`replacing` writes:
    ``.NAME.PID.RANDOM.tmp``, the writer's process id inside, as the study store's
    parts carry theirs."""
    return destination.with_name(
        f".{destination.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@contextlib.contextmanager
def replacing(destination: str | os.PathLike[str]) -> Iterator[TextIO]:
    """A text stream (UTF-8) whose content replaces the file ``destination`` when
    the ``with`` block ends without an exception.

    The stream writes a temporary file in the destination's folder (created with
    the mode a new file gets, or the mode of the file it replaces); it is flushed
    to disk and moved in place by :func:`os.replace`, which is atomic.  On any
    exception (a write error, :class:`KeyboardInterrupt`) the temporary file is
    removed and the destination is left untouched.

    A destination that is a symbolic link is written at the file it points to.
    A destination that exists and is not a regular file (``/dev/null``, a
    named pipe) cannot be replaced, nor can a file in a folder that takes no
    new file (a read-only folder holding a writable file): those are written
    in place, as before.

    Raises
    ------
    OSError
        When the file cannot be written (the destination is then unchanged).
    """
    try:  # through links, even those no path resolves to (/dev/stdout -> pipe:[N])
        mode: int | None = os.stat(destination).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):  # a device, a pipe: in place
        with open(destination, "w", encoding="utf-8") as stream:
            yield stream
        return
    target = Path(os.path.realpath(destination))
    temporary = temporary_name(target)
    fd = -1
    try:  # O_EXCL: never through a link, never over a file someone else made there
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as err:
        if mode is None:  # no file to write in place: the error, naming the file
            raise OSError(err.errno, err.strerror, os.fspath(destination)) from None
    if fd < 0:  # a folder that takes no new file: in place
        with open(target, "w", encoding="utf-8") as stream:
            yield stream
        return
    try:
        with open(fd, "w", encoding="utf-8") as stream:
            if mode is not None:
                os.chmod(fd, stat.S_IMODE(mode))
            yield stream
            stream.flush()
            os.fsync(fd)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text(destination: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) as the whole content of the file ``destination``,
    atomically (:func:`replacing`)."""
    with replacing(destination) as stream:
        stream.write(text)
