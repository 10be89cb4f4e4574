"""Where each message's turn begins in a rendered conversation, found in one pass over the text.

A turn begins where the previous message's block ends: after that message's content and the text the
template closes its role with (`<|im_end|>\\n` for Qwen, `<|eot_id|>` for Llama 3, ...). That is the cut
rendering every prefix of the conversation gives (`len(render(messages[:i]))`), found without rendering
all of them: each content is located verbatim in order, and each role's closing text is learned once per
dataset from one prefix render. Rendering stays linear in the conversation's length.

Reasoning dropped from earlier turns (Qwen 3 and DeepSeek-R1 render only what follows `</think>`) and
trimmed contents are still found. When a content is not in the text at all (a template that rewrites or
reorders messages, such as DeepSeek V3 hoisting every system message to the front) there are no cuts to
find: the caller then encodes each prefix, the old exact way, for that conversation only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seqprof.dataset.chat_template import ChatRenderer
from seqprof.errors import SeqprofError


class TurnLocator:
    """Turn starts (character offsets) of conversations rendered by one chat template."""

    def __init__(self, renderer: ChatRenderer) -> None:
        self._renderer = renderer
        self._closing: dict[Any, str | None] = {}  # role -> text its blocks end with after the content
        self.not_located = 0  # conversations whose contents were not all found (the caller encodes prefixes)

    def turn_starts(self, messages: Sequence[Mapping[str, Any]], text: str) -> list[int] | None:
        """One start per message, the first 0, ascending; None when a content is not found in the text."""
        spans = _content_spans(messages, text)
        if spans is None:
            self.not_located += 1
            return None
        starts = [0]
        for i in range(1, len(messages)):
            end = spans[i - 1][1]
            closing = self._closing_at(messages, i, text, end)
            cut = end + len(closing) if closing else end
            starts.append(max(starts[-1], min(cut, spans[i][0])))
        return starts

    def _closing_at(self, messages: Sequence[Mapping[str, Any]], i: int, text: str, end: int) -> str:
        """The closing text of message i-1's role if the text has it at `end`, else ''.

        A role whose prefix render is not a prefix of the text (Qwen 3 gives the last assistant turn an
        empty think block) cannot teach its closing; it takes another role's closing where the text has it
        (ChatML and Llama 3 close every role alike)."""
        role = messages[i - 1].get("role")
        if role not in self._closing:
            self._closing[role] = self._learn_closing(messages, i, text, end)
        own = self._closing[role]
        candidates = [own] if own is not None else [c for c in self._closing.values() if c]
        return next((c for c in candidates if c and text.startswith(c, end)), "")

    def _learn_closing(self, messages: Sequence[Mapping[str, Any]], i: int, text: str, end: int) -> str | None:
        try:
            prefix = self._renderer.render(messages[:i])
        except SeqprofError:
            return ""  # a template that refuses partial chats: cut right after the content
        if len(prefix) >= end and text.startswith(prefix):
            return text[end:len(prefix)]
        return None


def _content_spans(messages: Sequence[Mapping[str, Any]], text: str) -> list[tuple[int, int]] | None:
    """(start, end) of each message's content in `text`, searched in order; None if one is not there."""
    spans, pos = [], 0
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            return None
        found = text.find(content, pos) if content else pos
        for variant in _rendered_variants(content):
            if found >= 0:
                break
            content = variant
            found = text.find(content, pos)
        if found < 0:
            return None
        pos = found + len(content)
        spans.append((found, pos))
    return spans


def _rendered_variants(content: str) -> list[str]:
    """What templates commonly render instead of the content: trimmed, or only what follows `</think>`."""
    variants = [content.strip()]
    if "</think>" in content:
        answer = content.split("</think>")[-1]
        variants += [answer.lstrip("\n"), answer.strip()]
    return [v for v in variants if v]
