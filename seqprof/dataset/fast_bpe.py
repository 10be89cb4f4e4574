"""An exact, faster token counter for byte-level BPE tokenizers: tiktoken built from the same vocabulary.

Qwen, Llama 3, GLM and the GPT-2 family tokenize by one pre-tokenizer regex, then byte-level BPE whose
merge order is the vocabulary's rank order. tiktoken runs that algorithm in Rust without building HF's
`Encoding` objects (offsets, strings, masks) and counts 2-5x faster. It is used only where it reproduces the
tokenizer exactly:
- the tokenizer.json is BPE without byte fallback, one `Split` regex (Isolated) followed by `ByteLevel`
  without its own regex, no normalizer or NFC (applied here first), and added tokens that strip nothing;
- every merge `a b` yields a token whose rank orders the merges as the merge list does (so tiktoken's
  "lowest-ranked pair first" is HF's "earliest merge first"; merges yielding one token share its rank).
Each run still checks a sample of texts against the HF tokenizer (seqprof.dataset.lengths); one mismatch
and the whole run is counted again with HF, saying so on stderr.
"""

from __future__ import annotations

import json
import marshal
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

TABLE_FORMAT = 1  # the derived (regex, ranks, specials) table cached per tokenizer.json hash


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: the printable character ByteLevel writes for each byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = printable[:], 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


class FastCounter:
    """Token counts of texts, identical to the HF tokenizer it was built from (where `fast_counter` allows)."""

    def __init__(self, encoding: Any, nfc: bool, specials_added: int, added_tokens: Sequence[str]) -> None:
        self._encoding = encoding
        self._nfc = nfc
        self._specials_added = specials_added  # tokens the post-processor adds with add_special_tokens=True
        self._added = tuple(added_tokens)

    def cuts_exact(self, text: str, cuts: Sequence[int], add_special_tokens: bool) -> bool:
        """Counting the pieces between `cuts` separately gives the same tokens: every cut touches an added
        token (tokenizers split there before anything else). Cuts elsewhere need HF's offsets."""
        if not cuts:
            return True
        if add_special_tokens:
            return False
        return all(any(text.startswith(a, c) or text.endswith(a, 0, c) for a in self._added) for c in cuts)

    def count(self, texts: Sequence[str], add_special_tokens: bool) -> np.ndarray:
        if self._nfc:
            texts = [t if unicodedata.is_normalized("NFC", t) else unicodedata.normalize("NFC", t) for t in texts]
        extra = self._specials_added if add_special_tokens else 0
        chunks = [texts[i:i + _CHUNK_TEXTS] for i in range(0, len(texts), _CHUNK_TEXTS)]
        counts = list(_pool().map(self._count_chunk, chunks)) if len(chunks) > 1 else [self._count_chunk(texts)]
        return np.fromiter((n + extra for part in counts for n in part), dtype=np.int64, count=len(texts))

    def _count_chunk(self, texts: Sequence[str]) -> list[int]:
        encode = self._encoding.encode  # releases the GIL while it runs: one thread per core
        return [len(encode(t, allowed_special="all")) for t in texts]


_CHUNK_TEXTS = 256  # texts per thread task: tiktoken's own encode_batch makes one task per text, 2x slower here


@lru_cache(maxsize=1)
def _pool():
    """One thread per core (SEQPROF_THREADS overrides: worker processes use 1 each)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    threads = int(os.environ.get("SEQPROF_THREADS") or cores)
    return ThreadPoolExecutor(max(1, threads), thread_name_prefix="seqprof-bpe")


def reset_threads() -> None:
    """Forget the thread pool (after a fork, or a change of SEQPROF_THREADS)."""
    _pool.cache_clear()


def fast_counter(tokenizer_json: str, hf_tokenizer: Any, file_hash: str = "") -> FastCounter | None:
    """A FastCounter for this tokenizer.json, or None when tiktoken is absent or cannot reproduce it."""
    try:
        import tiktoken
    except ImportError:
        return None
    table = _cached_table(file_hash) if file_hash else None
    if table is None:
        table = _table(tokenizer_json)
        if file_hash:
            _store_table(file_hash, table)
    if not table:
        return None
    pattern, ranks, specials, added_tokens, nfc = table
    try:
        encoding = tiktoken.Encoding("seqprof", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    except Exception:  # noqa: BLE001 - a regex or table tiktoken does not take: no fast path
        return None
    probe = "probe"
    specials_added = len(hf_tokenizer.encode(probe, add_special_tokens=True).ids) - \
        len(hf_tokenizer.encode(probe, add_special_tokens=False).ids)
    return FastCounter(encoding, nfc, specials_added, added_tokens)


def _table(tokenizer_json: str) -> tuple | None:
    """(regex, ranks, special tokens, added token strings, NFC?) or None when tiktoken cannot reproduce it."""
    spec = json.loads(tokenizer_json)
    pattern = _single_regex(spec)
    model = spec.get("model") or {}
    normalizer = (spec.get("normalizer") or {}).get("type")
    if pattern is None or model.get("type") != "BPE" or model.get("byte_fallback") or \
            normalizer not in (None, "NFC") or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return None
    ranks = _ranks(model)
    if ranks is None:
        return None
    specials: dict[str, int] = {}
    added_tokens = []
    for added in spec.get("added_tokens") or []:
        if added.get("lstrip") or added.get("rstrip") or added.get("single_word"):
            return None
        content, idx = added.get("content"), added.get("id")
        if not isinstance(content, str) or not isinstance(idx, int):
            return None
        added_tokens.append(content)
        if content.encode("utf-8") not in ranks:  # else already a vocabulary entry
            specials[content] = idx
    return pattern, ranks, specials, added_tokens, normalizer == "NFC"


def _table_path(file_hash: str):
    from seqprof.dataset.cache import cache_dir

    return cache_dir().parent / "fast_bpe" / f"{file_hash}-{TABLE_FORMAT}.marshal"


def _cached_table(file_hash: str) -> tuple | None:
    """The table derived before for this tokenizer.json (by its hash); a damaged file is a miss."""
    try:
        data = marshal.loads(_table_path(file_hash).read_bytes())
        if data == ():
            return ()  # known not to be reproducible
        pattern, ranks, specials, added, nfc = data
        if isinstance(pattern, str) and isinstance(ranks, dict) and isinstance(specials, dict):
            return pattern, ranks, specials, list(added), bool(nfc)
    except Exception:  # noqa: BLE001 - missing or damaged: derive it again
        return None
    return None


def _store_table(file_hash: str, table: tuple | None) -> None:
    from seqprof.outputs import replace_atomically

    path = _table_path(file_hash)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, marshal.dumps(table if table else ()))
    except OSError:
        return


def _single_regex(spec: dict) -> str | None:
    """The one Split regex of a `Sequence[Split(Isolated), ByteLevel(use_regex=False)]` pre-tokenizer."""
    pre = spec.get("pre_tokenizer") or {}
    if pre.get("type") != "Sequence" or len(pre.get("pretokenizers") or []) != 2:
        return None
    split, byte_level = pre["pretokenizers"]
    if split.get("type") != "Split" or split.get("behavior") != "Isolated" or split.get("invert"):
        return None
    if byte_level.get("type") != "ByteLevel" or byte_level.get("use_regex", True) or byte_level.get("add_prefix_space"):
        return None
    regex = (split.get("pattern") or {}).get("Regex")
    return regex if isinstance(regex, str) else None


def _ranks(model: dict) -> dict[bytes, int] | None:
    """Vocabulary as byte strings -> id, if the merges are in rank order (else tiktoken would differ).

    Converted vocabularies list every split of a token as a merge (Llama 3: 280k merges for 128k tokens);
    those merges share the token's rank, so ranks must not decrease along the merge list."""
    vocab = model.get("vocab") or {}
    table = {ord(ch): chr(b) for ch, b in _byte_decoder().items()}
    try:
        ranks = {token.translate(table).encode("latin-1"): idx for token, idx in vocab.items()}
    except UnicodeEncodeError:
        return None  # a token with a character ByteLevel never writes
    if len(ranks) != len(vocab) or len(set(ranks.values())) != len(ranks):
        return None
    last = -1
    for merge in model.get("merges") or []:
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        merged = vocab.get(left + right)
        if merged is None or merged < last:
            return None
        last = merged
    return ranks
