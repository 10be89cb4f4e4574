"""Edits that turn a real config into the variant a test needs (shared by the rule tests on real configs)."""

from __future__ import annotations

from collections.abc import Callable

Edit = Callable[[str], str]


def replace_once(old: str, new: str) -> Edit:
    """Replace the first `old` (which must be there, so a changed fixture fails loudly)."""
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)
    return edit


def append_lines(extra: str) -> Edit:
    return lambda text: text.rstrip("\n") + "\n" + extra


def chain(*edits: Edit) -> Edit:
    def edit(text: str) -> str:
        for e in edits:
            text = e(text)
        return text
    return edit
