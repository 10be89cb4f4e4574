"""The Finding value object: one rule verdict on one config, with where it points and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    """What a rule found in one config file: code, how bad, what and where, and how to fix it."""

    code: str  # SPxxx
    severity: str  # info | warning | error
    message: str
    file: str
    line: int | None  # 1-based; None when the finding is about the file as a whole (a missing key)
    key: str | None  # the config's own key the finding points at
    fix: str | None = None
    rule: str = ""  # the rule's slug, e.g. fixed-padding-waste
    column: int = 1  # 1-based column of the key on its line

    def to_dict(self) -> dict[str, Any]:
        """The DESIGN.md JSON contract (code, severity, message, file, line, key) plus fix and rule."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "fix": self.fix,
            "rule": self.rule,
        }

    def sort_key(self) -> tuple:
        return (self.file, self.line or 0, self.column, self.code, self.message)
