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
    the mode a new file gets, or the mode, owner and group of the file it replaces); it is flushed
    to disk and moved in place by :func:`os.replace`, which is atomic.  On any
    exception (a write error, :class:`KeyboardInterrupt`) the temporary file is
    removed and the destination is left untouched.

    A destination that is a symbolic link is written at the file it points to.
    A destination that exists and is not a regular file (``/dev/null``, a
    named pipe, ``/dev/stdout`` of a pipe) cannot be replaced, nor can a file in
    a folder that takes no new file (a read-only folder holding a writable
    file), a file with another name (a hard link: the other name would keep the
    old content) or another user's file whose owner this process cannot give
    the new one: those are written in place, as before.

    Raises
    ------
    OSError
        When the file cannot be written (the destination is then unchanged).
    """
    try:  # through links, even those no path resolves to (/dev/stdout -> pipe:[N])
        status: os.stat_result | None = os.stat(destination)
    except FileNotFoundError:
        status = None
    # A device or a pipe (/dev/null, /dev/stdout) is written, not replaced; so is a
    # file with another name (a hard link, which a new file would leave on the old
    # content) and, where the owner cannot be kept, another user's file.
    if status is not None and (not stat.S_ISREG(status.st_mode) or status.st_nlink > 1):
        fd = -1
    else:
        target = Path(os.path.realpath(destination))
        temporary = temporary_name(target)
        fd = _temporary_file(temporary, status)
        if fd < 0 and status is None:  # no file to write in place: the error, naming it
            raise OSError(-fd, os.strerror(-fd), os.fspath(destination))
    if fd < 0:  # in place (also a file in a folder that takes no new file)
        with open(destination, "w", encoding="utf-8") as stream:
            yield stream
        return
    try:
        with open(fd, "w", encoding="utf-8") as stream:
            yield stream
            stream.flush()
            os.fsync(fd)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _temporary_file(temporary: Path, status: os.stat_result | None) -> int:
    """The descriptor of the new file ``temporary``, with the mode, owner and group of
    the file it will replace (``status``), or minus the error number where it cannot be
    made so (no file is then left)."""
    try:  # O_EXCL: never through a link, never over a file someone else made there
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as err:
        return -(err.errno or 1)
    if status is None:
        return fd
    try:
        made = os.fstat(fd)
        if (made.st_uid, made.st_gid) != (status.st_uid, status.st_gid):
            os.fchown(fd, status.st_uid, status.st_gid)  # before the mode: it clears set-id bits
        os.chmod(fd, stat.S_IMODE(status.st_mode))
    except OSError as err:
        os.close(fd)
        temporary.unlink(missing_ok=True)
        return -(err.errno or 1)
    return fd


def write_text(destination: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) as the whole content of the file ``destination``,
    atomically (:func:`replacing`)."""
    with replacing(destination) as stream:
        stream.write(text)
