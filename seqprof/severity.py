"""Finding severities, lowest first: settings, rules and lint's exit code all order them by this list."""

from __future__ import annotations

SEVERITIES = ("info", "warning", "error")


def severity_rank(severity: str) -> int:
    """Order severities so `--fail-on warning` can compare them (info < warning < error)."""
    try:
        return SEVERITIES.index(severity)
    except ValueError:
        raise ValueError(f"unknown severity {severity!r} (expected one of {', '.join(SEVERITIES)})") from None
