"""The tiktoken fast path counts exactly what the HF tokenizer counts, or is not used."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from seqprof.dataset.analyze import AnalyzeOptions, build_profile
from seqprof.dataset.fast_bpe import FastCounter, fast_counter
from seqprof.dataset.lengths import LengthCounter
from seqprof.dataset.tokenizers import load_tokenizer

pytest.importorskip("tiktoken")

# byte-level BPE families the fast path takes, and ones it must refuse (several Split regexes, other regexes)
FAST = ["qwen-2.5", "qwen-3", "qwen-3.6", "deepseek-r1-distill-llama-8b", "glm-4-32b-0414", "qwq-32b"]
REFUSED = ["deepseek-v3", "minimax-m1-40k"]


def _hard_texts() -> list[str]:
    """Real code and prose of several scripts, plus the cases where tokenizers disagree if anything does."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code = [(stdlib / name).read_text(encoding="utf-8")[:6000] for name in ("json/encoder.py", "textwrap.py", "csv.py")]
    docs = [p.read_text(encoding="utf-8")[:3000] for p in sorted((stdlib / "email").glob("*.py"))[:8]]
    scripts = [
        "汉字的分词与标点：你好，世界！日本語のひらがなとカタカナ、한국어 문장입니다.",
        "Emoji 👩‍👩‍👧‍👦 families, flags 🇯🇵🇫🇷, skin tones 👍🏽 and ZWJ sequences 🧑‍💻",
        "Combining marks: e\u0301 vs \u00e9, a\u030a vs \u00e5, Hangul jamo \u1100\u1161 vs \uac00, \u212b",
        "Arabic: مرحبا بالعالم. Hebrew: שלום עולם. Devanagari: नमस्ते दुनिया. Thai: สวัสดีชาวโลก",
        "Special strings in user text: <|im_start|>user\nhi<|im_end|> <|endoftext|> <think>x</think> "
        "<|begin_of_text|><|eot_id|><|start_header_id|>",
        "   leading spaces, trailing tabs\t\t\n\n\n  \r\n mixed\u00a0nbsp\u2009thin\u3000ideographic  ",
        "numbers 1234567890 3.14159e-10 0xDEADBEEF 1,000,000 ١٢٣٤ ๑๒๓",
        "'s 't 're 've 'm 'll 'd 'S 'T 'RE  ’s isn't WE'LL",
        "",
    ]
    return code + docs + scripts


@pytest.mark.parametrize("family", FAST)
def test_fast_counts_equal_hf_on_code_scripts_emoji_and_special_strings(family):
    tok = load_tokenizer(family)
    fast = fast_counter(tok.tokenizer_json, tok.tokenizer)
    assert isinstance(fast, FastCounter), f"{family} should have a fast path"
    texts = _hard_texts()
    for special in (True, False):
        expected = [len(e) for e in tok.tokenizer.encode_batch(texts, add_special_tokens=special)]
        assert fast.count(texts, special).tolist() == expected, (family, special)


@pytest.mark.parametrize("family", REFUSED)
def test_tokenizers_it_cannot_reproduce_get_no_fast_path(family):
    tok = load_tokenizer(family)
    assert fast_counter(tok.tokenizer_json, tok.tokenizer) is None


def test_a_profile_with_and_without_the_fast_path_is_identical(conversations, tmp_path):
    data = tmp_path / "mixed.jsonl"
    rows = [{"messages": c} for c in conversations[:200]]
    rows += [{"messages": [{"role": "user", "content": t or "empty"}, {"role": "assistant", "content": t[::-1] or "x"}]}
             for t in _hard_texts()]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for family in ("qwen-2.5", "deepseek-r1-distill-llama-8b"):
        fast = build_profile(data, AnalyzeOptions(tokenizer=family, cache=False))
        slow = build_profile(data, AnalyzeOptions(tokenizer=family, cache=False, fast_path=False))
        assert fast.to_dict() == slow.to_dict(), family


def test_the_fast_path_is_used_and_sampled_against_hf(conversations):
    counter = LengthCounter(load_tokenizer("qwen-2.5"), "messages")
    assert counter.fast is not None
    counter.count([{"messages": c} for c in conversations[:100]], [f"r{i}" for i in range(100)])
    assert counter.fast_check.checked == 64  # the first 64 of the run, then one in 499


def test_a_mismatch_counts_the_run_again_with_hf_and_says_so(monkeypatch, conversations, tmp_path):
    data = tmp_path / "text.jsonl"
    data.write_text("".join(json.dumps({"text": c[-1]["content"]}) + "\n" for c in conversations[:50]))
    original = FastCounter.count
    monkeypatch.setattr(FastCounter, "count", lambda self, texts, special: original(self, texts, special) + 1)
    notes: list[str] = []
    got = build_profile(data, AnalyzeOptions(cache=False), on_note=notes.append)
    exact = build_profile(data, AnalyzeOptions(cache=False, fast_path=False))
    assert got.to_dict() == exact.to_dict()
    assert len(notes) == 1 and "counting again with HF" in notes[0]
