"""Render and tokenize normalised rows into trainer-faithful lengths: one encoding per sequence.

Length semantics (DESIGN.md):
- text: the tokenizer's encoding with its default special tokens.
- prompt/completion (strings): TRL SFT — encode(prompt + completion + EOS) with default special tokens;
  the `prompt` field counts the tokens of that one encoding that start inside the prompt.
- messages / message-list prompt+completion / alpaca: the chat template's text, encoded without adding
  special tokens (as `apply_chat_template(tokenize=True)` does). Per-role fields split that one encoding
  at each turn's start (seqprof.dataset.turns): a role's count is the tokens whose first character lies in
  its turns. A token straddling a cut counts on the side where it starts; the fields always add up to the
  sequence. Where turns meet at a special token (every packaged template) this equals encoding each
  rendered prefix separately, as transformers' offsets and TRL's prompt masks see it.
- preference (TRL DPO `tokenize_row`): prompt, chosen and rejected encoded separately without special
  tokens, EOS appended to each completion; the example's length is the longer pair.

Only lengths leave the encoder: texts are encoded in chunks of bounded size and each chunk's encodings are
dropped once its counts are read, so memory is O(chunk), whatever the batch or row holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from seqprof.dataset.chat_template import ChatRenderer
from seqprof.dataset.reader import split_location
from seqprof.dataset.tokenizers import LoadedTokenizer
from seqprof.dataset.turns import TurnLocator
from seqprof.errors import SeqprofError

CHUNK_CHARS = 1 << 21  # characters per encode_batch call: ~2 MB of text keeps the encodings' memory bounded
# One training text: 16M characters is ~4M tokens, past every context window. HF's encoding of it with offsets
# takes ~2.5 GB; a longer text is refused (or skipped with --skip-bad-rows) rather than run out of memory.
MAX_TEXT_CHARS = 16 << 20
# The fast path's HF cross-check skips texts longer than this: their HF encoding alone would cost ~150 bytes
# a character; the shorter texts of the run are checked as usual.
CHECK_MAX_CHARS = 1 << 20


@dataclass(frozen=True)
class BatchLengths:
    """Lengths for one batch: the training sequence per row, and per-field token counts."""

    sequence: np.ndarray
    fields: dict[str, np.ndarray] = field(default_factory=dict)


def tokens_before(encoding, cut: int, text_length: int) -> int:
    """Tokens of `encoding` whose first character lies before character `cut` (added specials at the
    start count before any cut; a token straddling the cut counts before it)."""
    for char in range(cut, text_length):
        token = encoding.char_to_token(char)
        if token is not None:
            start = encoding.token_to_chars(token)[0]
            return token if start >= cut else token + 1
    return len(encoding)


class FastPathMismatch(Exception):
    """The fast counter disagreed with the HF tokenizer on a checked text: count the run again with HF."""


class _FastCheck:
    """Which fast-counted texts are checked against HF: the first FIRST of a run, then one in EVERY."""

    FIRST, EVERY = 64, 499

    def __init__(self) -> None:
        self.seen = 0
        self.checked = 0

    def wanted(self) -> bool:
        self.seen += 1
        return self.seen <= self.FIRST or self.seen % self.EVERY == 0


class _EncodeQueue:
    """Collects texts (with the cuts to count at) from all rows, counts them chunk by chunk, keeps counts.

    With a FastCounter, texts without cuts (and texts whose cuts all sit at an added token, where every
    tokenizer splits anyway) are counted by it, segment by segment; the rest by HF with offsets."""

    def __init__(self) -> None:
        self._jobs: dict[bool, list[tuple[str, Sequence[int]]]] = {True: [], False: []}
        self._counts: dict[bool, list[tuple[int, tuple[int, ...]]]] = {}
        self.location: str | None = None  # the row whose texts are being added, for the size error

    def add(self, text: str, special: bool, cuts: Sequence[int] = ()) -> tuple[bool, int]:
        if len(text) > MAX_TEXT_CHARS:
            path, line = split_location(self.location) if self.location else (None, None)
            raise SeqprofError(f"the row's text is {len(text):,} characters, more than seqprof counts "
                               f"({MAX_TEXT_CHARS:,}, about 4M tokens: past any context window)", path=path,
                               line=line, fix="split or drop the row, or pass --skip-bad-rows")
        self._jobs[special].append((text, cuts))
        return special, len(self._jobs[special]) - 1

    def run(self, tokenizer, fast=None, check: _FastCheck | None = None) -> None:
        for special, jobs in self._jobs.items():
            counts: list[tuple[int, tuple[int, ...]]] = [(0, ())] * len(jobs)
            for chunk in _chunks(jobs):
                fast_ok = [fast is not None and fast.cuts_exact(*jobs[i], special) for i in chunk]
                quick = [i for i, ok in zip(chunk, fast_ok) if ok]
                slow = [i for i, ok in zip(chunk, fast_ok) if not ok]
                if quick:
                    self._count_fast(fast, jobs, quick, special, counts)
                    if check is not None:
                        sample = [i for i in quick if len(jobs[i][0]) <= CHECK_MAX_CHARS and check.wanted()]
                        _check(tokenizer, jobs, sample, special, counts, check)
                if slow:
                    encodings = tokenizer.encode_batch([jobs[i][0] for i in slow], add_special_tokens=special)
                    for i, enc in zip(slow, encodings):
                        text, cuts = jobs[i]
                        counts[i] = (len(enc), tuple(tokens_before(enc, c, len(text)) for c in cuts))
                    del encodings
            self._counts[special] = counts
            jobs.clear()  # the texts are not needed once counted

    @staticmethod
    def _count_fast(fast, jobs, indices, special, counts) -> None:
        segments, sizes = [], []
        for i in indices:
            text, cuts = jobs[i]
            bounds = (0, *cuts, len(text))
            segments.extend(text[a:b] for a, b in zip(bounds, bounds[1:]))
            sizes.append(len(bounds) - 1)
        lengths = fast.count(segments, special)
        k = 0
        for i, n in zip(indices, sizes):
            running = np.cumsum(lengths[k:k + n])
            k += n
            counts[i] = (int(running[-1]), tuple(int(x) for x in running[:-1]))

    def length(self, ticket: tuple[bool, int]) -> int:
        return self._counts[ticket[0]][ticket[1]][0]

    def before(self, ticket: tuple[bool, int]) -> tuple[int, ...]:
        return self._counts[ticket[0]][ticket[1]][1]


def _chunks(jobs: Sequence[tuple[str, Sequence[int]]]):
    """Index ranges of about CHUNK_CHARS characters each (a longer text is a chunk of its own)."""
    start = 0
    while start < len(jobs):
        stop, size = start, 0
        while stop < len(jobs) and (stop == start or size + len(jobs[stop][0]) <= CHUNK_CHARS):
            size += len(jobs[stop][0])
            stop += 1
        yield range(start, stop)
        start = stop


def _check(tokenizer, jobs, indices, special, counts, check: _FastCheck) -> None:
    """Count the sampled texts with HF too; any difference ends the fast path for the run."""
    if not indices:
        return
    encodings = tokenizer.encode_batch([jobs[i][0] for i in indices], add_special_tokens=special)
    for i, enc in zip(indices, encodings):
        text, cuts = jobs[i]
        if counts[i] != (len(enc), tuple(tokens_before(enc, c, len(text)) for c in cuts)):
            raise FastPathMismatch(f"{counts[i][0]} vs {len(enc)} tokens on a text starting {text[:40]!r}")
        check.checked += 1


class LengthCounter:
    """Turns batches of normalised examples of one schema into lengths with one tokenizer."""

    def __init__(self, tok: LoadedTokenizer, schema: str, *, per_turn_fields: bool = True,
                 fast_path: bool = True) -> None:
        self.tok = tok
        self.schema = schema
        self.per_turn_fields = per_turn_fields
        self.fast = None
        if fast_path:
            from seqprof.dataset.fast_bpe import fast_counter

            self.fast = fast_counter(tok.tokenizer_json, tok.tokenizer, tok.file_hash)
        self.fast_check = _FastCheck()
        self._renderer: ChatRenderer | None = None
        if schema != "text" and tok.chat_template:
            self._renderer = ChatRenderer(tok.chat_template, tok.special_tokens)
            self._turns = TurnLocator(self._renderer)
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
        finishers = []
        for ex, loc in zip(examples, locations):
            queue.location = loc
            finishers.append(plan(ex, loc, queue))
        queue.run(self.tok.tokenizer, self.fast, self.fast_check)
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
        return lambda q: (q.length(t), {"text": q.length(t)})

    def _plan_prompt_completion(self, ex, loc, q):
        prompt, completion = ex["prompt"], ex["completion"]
        if isinstance(prompt, str):
            eos = self.tok.eos_token or ""
            full_text = prompt + completion + ("" if completion.endswith(eos) else eos)
            f = q.add(full_text, True, (len(prompt),))
        else:
            chat = self._chat()
            f = self._prompt_and_full(chat.render(prompt, add_generation_prompt=True, location=loc),
                                      chat.render(list(prompt) + list(completion), location=loc), q)
        return self._split_at_prompt(f)

    def _prompt_and_full(self, prompt_text: str, full_text: str, q):
        """One encoding of the full text, cut where the rendered prompt ends (its common prefix with the
        full text, as TRL's maybe_apply_chat_template takes it)."""
        cut = len(prompt_text) if full_text.startswith(prompt_text) else \
            len(os.path.commonprefix([prompt_text, full_text]))
        return q.add(full_text, False, (cut,))

    @staticmethod
    def _split_at_prompt(f):
        def finish(q):
            total, (prompt,) = q.length(f), q.before(f)
            return total, {"prompt": prompt, "completion": total - prompt}
        return finish

    def _plan_messages(self, ex, loc, q):
        msgs = ex["messages"]
        text = self._chat().render(msgs, location=loc)
        roles = [m["role"] for m in msgs]
        if not self.per_turn_fields or len(msgs) == 1:
            full = q.add(text, False)
            return lambda q: (q.length(full), {roles[-1]: q.length(full)} if self.per_turn_fields else {})
        starts = self._turns.turn_starts(msgs, text)
        if starts is None:
            return self._plan_prefixes(msgs, roles, text, q)
        full = q.add(text, False, starts[1:])

        def finish(q):
            total = q.length(full)
            fields: dict[str, int] = {}
            bounds = (0, *q.before(full), total)
            for role, a, b in zip(roles, bounds, bounds[1:]):
                fields[role] = fields.get(role, 0) + b - a
            return total, fields
        return finish

    def _plan_prefixes(self, msgs, roles, text, q):
        """The old exact way, for a conversation whose turns cannot be found in its text (a template that
        rewrites or reorders messages): each prefix rendered and encoded; role i-1 gets prefix i minus i-1."""
        full = q.add(text, False)
        try:
            prefixes = [q.add(self._chat().render(msgs[:i]), False) for i in range(1, len(msgs))]
        except SeqprofError:
            return lambda q: (q.length(full), {roles[-1]: q.length(full)})  # refuses partial chats

        def finish(q):
            fields: dict[str, int] = {}
            before = 0
            for role, now in zip(roles, [q.length(t) for t in prefixes] + [q.length(full)]):
                fields[role] = fields.get(role, 0) + now - before
                before = now
            return q.length(full), fields
        return finish

    def _plan_alpaca(self, ex, loc, q):
        user = ex["instruction"] + ("\n" + ex["input"] if ex["input"] else "")
        chat = self._chat()
        turn = [{"role": "user", "content": user}]
        f = self._prompt_and_full(chat.render(turn, add_generation_prompt=True, location=loc),
                                  chat.render(turn + [{"role": "assistant", "content": ex["output"]}], location=loc), q)
        return self._split_at_prompt(f)

    def _plan_preference(self, ex, loc, q):
        prompt, chosen, rejected = ex["prompt"], ex["chosen"], ex["rejected"]
        if not isinstance(chosen, str):
            prompt, chosen, rejected = self._render_preference(prompt, chosen, rejected, loc)
        p = q.add(prompt, False) if prompt else None
        c, r = q.add(chosen, False), q.add(rejected, False)
        eos = 1 if self._eos_id is not None else 0

        def finish(q):
            lp = q.length(p) if p is not None else 0
            lc, lr = q.length(c) + eos, q.length(r) + eos
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
