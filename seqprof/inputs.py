"""Reading the small files seqprof is given (configs, settings, model configs, tokenizers, templates, profiles)
bounded and as UTF-8, so a FIFO, a device, a symlink loop or a huge file is one error line, never a hang.

Each kind of file has its own size limit, far above any real one: a training config is a few KB, a
tokenizer.json tens of MB. The limit is checked while reading (at most limit + 1 bytes are read), so
`/dev/zero` or a 5 GB file costs nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from seqprof.errors import SeqprofError

MiB = 1 << 20


def not_a_regular_file(path: str | os.PathLike) -> str | None:
    """Why `path` cannot be read as a data file (a FIFO, a device, a symlink loop...), or None when it can
    (or does not exist: the caller says "not found" in its own words)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if exc.errno == errno.ENAMETOOLONG:
            return "has a name too long for this filesystem"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return "cannot be read (permission denied)"
        return None
    if stat.S_ISREG(mode):
        return None
    for test, what in ((stat.S_ISDIR, "is a directory"), (stat.S_ISFIFO, "is a FIFO (named pipe)"),
                       (stat.S_ISCHR, "is a character device"), (stat.S_ISBLK, "is a block device"),
                       (stat.S_ISSOCK, "is a socket")):
        if test(mode):
            return what
    return "is not a regular file"


def read_input_bytes(path: str | os.PathLike, *, what: str, limit: int, fix: str | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or a SeqprofError naming it and `what` it is."""
    p = Path(path)
    problem = not_a_regular_file(p)
    if problem:
        raise SeqprofError(f"{what} {problem}, not a file seqprof can read", path=str(p),
                           fix=fix or f"pass the {what} as a regular file")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(limit + 1)
    except FileNotFoundError:
        raise SeqprofError(f"{what} not found", path=str(p), fix=fix or "check the path") from None
    except OSError as exc:
        raise SeqprofError(f"cannot read {what} ({exc.strerror or exc})", path=str(p)) from None
    if len(raw) > limit:
        raise SeqprofError(f"{what} is larger than {limit // MiB} MB, more than any real one", path=str(p),
                           fix=fix or f"pass the {what} itself")
    return raw


def read_input_text(path: str | os.PathLike, *, what: str, limit: int, fix: str | None = None) -> str:
    """As read_input_bytes, decoded as UTF-8 (a leading byte-order mark is dropped, as editors write one)."""
    raw = read_input_bytes(path, what=what, limit=limit, fix=fix)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SeqprofError(f"{what} is not UTF-8 text (byte {exc.start})", path=str(path),
                           fix=fix or "save the file as UTF-8") from None
