"""Render and tokenize normalised rows into trainer-faithful lengths, one batched encode per batch.

Length semantics (DESIGN.md):
- text: the tokenizer's encoding with its default special tokens.
- prompt/completion (strings): TRL SFT — encode(prompt + completion + EOS) with default special tokens;
  the `prompt` field is encode(prompt), `completion` the rest.
- messages / message-list prompt+completion / alpaca: the chat template's text, encoded without adding
  special tokens (as `apply_chat_template(tokenize=True)` does); per-role fields by prefix rendering.
- preference (TRL DPO `tokenize_row`): prompt, chosen and rejected encoded separately without special
  tokens, EOS appended to each completion; the example's length is the longer pair.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from seqprof.dataset.chat_template import ChatRenderer
from seqprof.dataset.tokenizers import LoadedTokenizer
from seqprof.errors import SeqprofError


@dataclass(frozen=True)
class BatchLengths:
    """Lengths for one batch: the training sequence per row, and per-field token counts."""

    sequence: np.ndarray
    fields: dict[str, np.ndarray] = field(default_factory=dict)


class _EncodeQueue:
    """Collects texts from all rows, encodes them in two batched calls, hands back lengths by ticket."""

    def __init__(self) -> None:
        self._texts: dict[bool, list[str]] = {True: [], False: []}
        self._lengths: dict[bool, np.ndarray] = {}

    def add(self, text: str, special: bool) -> tuple[bool, int]:
        self._texts[special].append(text)
        return special, len(self._texts[special]) - 1

    def run(self, tokenizer) -> None:
        for special, texts in self._texts.items():
            if texts:
                encs = tokenizer.encode_batch(texts, add_special_tokens=special)
                self._lengths[special] = np.fromiter((len(e) for e in encs), dtype=np.int64, count=len(encs))

    def __getitem__(self, ticket: tuple[bool, int]) -> int:
        return int(self._lengths[ticket[0]][ticket[1]])


class LengthCounter:
    """Turns batches of normalised examples of one schema into lengths with one tokenizer."""

    def __init__(self, tok: LoadedTokenizer, schema: str, *, per_turn_fields: bool = True) -> None:
        self.tok = tok
        self.schema = schema
        self.per_turn_fields = per_turn_fields
        self._renderer: ChatRenderer | None = None
        if schema != "text" and tok.chat_template:
            self._renderer = ChatRenderer(tok.chat_template, tok.special_tokens)
        if schema in ("messages", "alpaca") and self._renderer is None:
            raise SeqprofError(f"tokenizer {tok.name} has no chat template, needed for the {schema} schema",
                               fix="pass a tokenizer that has one, or --chat-template FILE")
        self._eos_id = tok.tokenizer.token_to_id(tok.eos_token) if tok.eos_token else None

    def _chat(self) -> ChatRenderer:
        if self._renderer is None:
            raise SeqprofError(f"tokenizer {self.tok.name} has no chat template, needed for conversational rows",
                               fix="pass a tokenizer that has one, or --chat-template FILE")
        return self._renderer

    def count(self, examples: Sequence[dict], locations: Sequence[str]) -> BatchLengths:
        plan = getattr(self, f"_plan_{self.schema}")
        queue = _EncodeQueue()
        finishers = [plan(ex, loc, queue) for ex, loc in zip(examples, locations)]
        queue.run(self.tok.tokenizer)
        seq = np.empty(len(examples), dtype=np.int64)
        fields: dict[str, list[int]] = {}
        for i, finish in enumerate(finishers):
            seq[i], row_fields = finish(queue)
            for name, value in row_fields.items():
                fields.setdefault(name, []).append(value)
        return BatchLengths(seq, {k: np.asarray(v, dtype=np.int64) for k, v in fields.items()})

    # --- one planner per schema: queue the texts, return a function that reads the lengths back ---

    def _plan_text(self, ex, loc, q):
        t = q.add(ex["text"], True)
        return lambda q: (q[t], {"text": q[t]})

    def _plan_prompt_completion(self, ex, loc, q):
        prompt, completion = ex["prompt"], ex["completion"]
        if isinstance(prompt, str):
            eos = self.tok.eos_token or ""
            full_text = prompt + completion + ("" if completion.endswith(eos) else eos)
            p, f = q.add(prompt, True), q.add(full_text, True)
        else:
            chat = self._chat()
            p = q.add(chat.render(prompt, add_generation_prompt=True, location=loc), False)
            f = q.add(chat.render(list(prompt) + list(completion), location=loc), False)
        return lambda q: (q[f], {"prompt": q[p], "completion": q[f] - q[p]})

    def _plan_messages(self, ex, loc, q):
        msgs = ex["messages"]
        chat = self._chat()
        full = q.add(chat.render(msgs, location=loc), False)
        prefixes: list[tuple[str, tuple[bool, int] | None]] = []
        if self.per_turn_fields:
            try:
                for i in range(1, len(msgs)):
                    prefixes.append((msgs[i - 1]["role"], q.add(chat.render(msgs[:i]), False)))
            except SeqprofError:
                prefixes = []  # a template that refuses partial chats: no per-role split for this row
            prefixes.append((msgs[-1]["role"], full))

        def finish(q):
            fields: dict[str, int] = {}
            before = 0
            for role, ticket in prefixes:
                now = q[ticket]
                fields[role] = fields.get(role, 0) + now - before
                before = now
            return q[full], fields
        return finish

    def _plan_alpaca(self, ex, loc, q):
        user = ex["instruction"] + ("\n" + ex["input"] if ex["input"] else "")
        chat = self._chat()
        turn = [{"role": "user", "content": user}]
        p = q.add(chat.render(turn, add_generation_prompt=True, location=loc), False)
        f = q.add(chat.render(turn + [{"role": "assistant", "content": ex["output"]}], location=loc), False)
        return lambda q: (q[f], {"prompt": q[p], "completion": q[f] - q[p]})

    def _plan_preference(self, ex, loc, q):
        prompt, chosen, rejected = ex["prompt"], ex["chosen"], ex["rejected"]
        if not isinstance(chosen, str):
            prompt, chosen, rejected = self._render_preference(prompt, chosen, rejected, loc)
        p = q.add(prompt, False) if prompt else None
        c, r = q.add(chosen, False), q.add(rejected, False)
        eos = 1 if self._eos_id is not None else 0

        def finish(q):
            lp = q[p] if p is not None else 0
            lc, lr = q[c] + eos, q[r] + eos
            return lp + max(lc, lr), {"prompt": lp, "chosen": lc, "rejected": lr}
        return finish

    def _render_preference(self, prompt, chosen, rejected, loc):
        """TRL's maybe_apply_chat_template: the prompt is the common prefix of the prompt rendered with a
        generation prompt and the rendered prompt+chosen (DeepSeek-R1 templates differ there); completions
        are what follows it."""
        chat = self._chat()
        if not prompt:
            return "", chat.render(chosen, location=loc), chat.render(rejected, location=loc)
        prompt_text = chat.render(prompt, add_generation_prompt=True, location=loc)
        prompt_chosen = chat.render(list(prompt) + list(chosen), location=loc)
        prompt_rejected = chat.render(list(prompt) + list(rejected), location=loc)
        common = len(os.path.commonprefix([prompt_text, prompt_chosen]))
        return prompt_chosen[:common], prompt_chosen[common:], prompt_rejected[common:]
