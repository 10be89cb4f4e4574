"""The one error type the CLI turns into a single line and exit code 2."""

from __future__ import annotations


class SeqprofError(Exception):
    """Bad input or usage: says where (file, line) and what to do, never a traceback."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.fix = fix

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        fix = f" ({self.fix})" if self.fix else ""
        return f"{where}{self.message}{fix}"


class NoRowsError(SeqprofError):
    """A source with nothing to profile (empty, blank lines, or every row skipped as bad)."""

    def __init__(self, path: str, skipped: int = 0) -> None:
        super().__init__("no rows to profile" + (f" ({skipped} skipped as bad)" if skipped else ""), path=path,
                         fix="check the file is not empty")
