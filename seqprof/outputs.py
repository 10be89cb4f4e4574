"""Writing what seqprof makes (profiles, HTML reports) without ever destroying a file it did not make.

- An output that resolves to an input (data, config, profile, tokenizer, template, settings) or to the
  other output is refused before any work, as is a directory, a FIFO, a socket or a symbolic link.
- A regular file is written to a fresh temp file created with O_EXCL in the target's own directory
  (`tempfile.mkstemp`: never a predictable name, never through a planted link) and renamed over the
  target; the temp file is removed on every way out, an interrupt included.
- A character device (`-o /dev/null`) is written through, never replaced by a regular file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from seqprof.errors import SeqprofError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def check_output(path: str | os.PathLike, option: str, *, inputs: Iterable[str | os.PathLike | None] = (),
                 others: Iterable[tuple[str | os.PathLike | None, str]] = ()) -> Path:
    """Refuse, before the work, an output that would destroy an input or that cannot be written safely."""
    target = Path(path)
    for given in inputs:
        if given and _same_file(target, Path(given)):
            raise SeqprofError(f"the {option} file is an input of this run ({given}); it would be overwritten",
                               path=str(target), fix=f"choose another {option} path")
    for other, other_option in others:
        if other and _same_file(target, Path(other)):
            raise SeqprofError(f"{option} and {other_option} name the same file", path=str(target),
                               fix="give each output its own path")
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise SeqprofError(f"cannot use the {option} path ({exc.strerror})", path=str(target)) from None
    if mode is not None:
        if stat.S_ISLNK(mode):
            raise SeqprofError(f"the {option} path is a symbolic link; seqprof does not write through links",
                               path=str(target), fix="name the file itself, or another path")
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            kind = "directory" if stat.S_ISDIR(mode) else "FIFO" if stat.S_ISFIFO(mode) else "special file"
            raise SeqprofError(f"the {option} path is a {kind}", path=str(target), fix=f"choose a file path for {option}")
    if not target.parent.is_dir():
        raise SeqprofError(f"directory for the {option} file does not exist", path=str(target),
                           fix=f"create {target.parent} first or choose another {option} path")
    return target


def write_output(path: str | os.PathLike, text: str, option: str) -> Path:
    """Write `text` as the output at `path` (checked again: the file system may have changed meanwhile)."""
    target = check_output(path, option)
    if target.exists() and stat.S_ISCHR(os.stat(target).st_mode):
        try:
            with open(target, "w", encoding="utf-8") as fh:  # a device: written through, never replaced
                fh.write(text)
        except OSError as exc:
            raise SeqprofError(f"cannot write the {option} file ({exc.strerror})", path=str(target)) from None
        return target
    try:
        replace_atomically(target, text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        raise SeqprofError(f"cannot write the {option} file ({exc.strerror})", path=str(target),
                           fix=f"choose a writable {option} path") from None
    return target


def replace_atomically(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """`data` into a fresh O_EXCL temp file beside `target`, renamed over it; the temp file never outlives
    the call, whatever ends it. Raises OSError (callers decide whether that is an error)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
