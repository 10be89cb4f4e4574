"""seqprof's per-row lengths equal transformers' own tokenizer/apply_chat_template on the same rows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from seqprof.dataset.analyze import AnalyzeOptions, build_profile
from seqprof.dataset.histogram import LengthHistogram

ROWS = 120  # enough real rows for a spread of lengths, small enough for a fast suite
FAMILIES = ["qwen-2.5", "deepseek-r1-distill-llama-8b", "qwen-3"]


@pytest.fixture(scope="module")
def hf(tokenizer_dirs):
    from transformers import AutoTokenizer
    return {name: AutoTokenizer.from_pretrained(str(path)) for name, path in tokenizer_dirs.items()}


def _ids(x):
    return x["input_ids"] if not isinstance(x, list) else x


def _chat_len(tok, messages, **kw) -> int:
    return len(_ids(tok.apply_chat_template(messages, tokenize=True, **kw)))


def _datasets(conversations):
    """Every schema, built from the same real conversations (docstrings as answers)."""
    convs = conversations[:ROWS]
    first = [(c[-2]["content"] if c[-2]["role"] == "user" else c[0]["content"], c[-1]["content"]) for c in convs]
    return {
        "text": [{"text": a} for _, a in first],
        "prompt_completion": [{"prompt": q, "completion": a} for q, a in first],
        "prompt_completion_chat": [{"prompt": [{"role": "user", "content": q}],
                                    "completion": [{"role": "assistant", "content": a}]} for q, a in first],
        "messages": [{"messages": c} for c in convs],
        "sharegpt": [{"conversations": [{"from": {"user": "human", "assistant": "gpt"}.get(m["role"], m["role"]),
                                         "value": m["content"]} for m in c]} for c in convs],
        "preference": [{"prompt": q, "chosen": a, "rejected": a.split("\n\n")[0]} for q, a in first],
        "preference_chat": [{"prompt": [{"role": "user", "content": q}],
                             "chosen": [{"role": "assistant", "content": a}],
                             "rejected": [{"role": "assistant", "content": a.split("\n\n")[0]}]} for q, a in first],
        "alpaca": [{"instruction": q, "input": a[:80] if i % 2 else "", "output": a} for i, (q, a) in enumerate(first)],
    }


def _reference_lengths(tok, kind: str, rows: list[dict]) -> list[int]:
    """Each length computed the way the trainer does it, with transformers alone."""
    eos = tok.eos_token
    out = []
    for r in rows:
        if kind == "text":
            out.append(len(tok(r["text"])["input_ids"]))
        elif kind == "prompt_completion":
            out.append(len(tok(r["prompt"] + r["completion"] + eos)["input_ids"]))
        elif kind == "prompt_completion_chat":
            out.append(_chat_len(tok, r["prompt"] + r["completion"]))
        elif kind == "messages":
            out.append(_chat_len(tok, r["messages"]))
        elif kind == "sharegpt":
            roles = {"human": "user", "gpt": "assistant"}
            out.append(_chat_len(tok, [{"role": roles.get(m["from"], m["from"]), "content": m["value"]}
                                       for m in r["conversations"]]))
        elif kind in ("preference", "preference_chat"):
            prompt, chosen, rejected = r["prompt"], r["chosen"], r["rejected"]
            if kind == "preference_chat":  # TRL maybe_apply_chat_template: prompt = common prefix
                p = tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
                pc = tok.apply_chat_template(prompt + chosen, tokenize=False)
                pr = tok.apply_chat_template(prompt + rejected, tokenize=False)
                k = 0
                while k < min(len(p), len(pc)) and p[k] == pc[k]:
                    k += 1
                prompt, chosen, rejected = pc[:k], pc[k:], pr[k:]
            n = lambda s: len(tok(s, add_special_tokens=False)["input_ids"])  # noqa: E731
            out.append(n(prompt) + max(n(chosen), n(rejected)) + 1)  # TRL DPO appends EOS to each completion
        elif kind == "alpaca":
            user = r["instruction"] + ("\n" + r["input"] if r["input"] else "")
            out.append(_chat_len(tok, [{"role": "user", "content": user},
                                       {"role": "assistant", "content": r["output"]}]))
    return out


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["text", "prompt_completion", "prompt_completion_chat", "messages", "sharegpt",
                                  "preference", "preference_chat", "alpaca"])
def test_lengths_equal_transformers(tmp_path, tokenizer_dirs, hf, conversations, family, kind):
    rows = _datasets(conversations)[kind]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    profile = build_profile(path, AnalyzeOptions(tokenizer=str(tokenizer_dirs[family])))
    expected = _reference_lengths(hf[family], kind, rows)
    assert profile.sequence == LengthHistogram.from_lengths(expected)
    assert profile.dataset.rows == len(rows)
    s = profile.sequence.stats()
    for p in (50, 90, 95, 99):
        assert getattr(s, f"p{p}") == np.percentile(expected, p)


def test_per_role_fields_match_prefix_rendering(tokenizer_dirs, hf, conversations, tmp_path):
    """Per-role token counts telescope over rendered prefixes and sum to the sequence length."""
    from seqprof.dataset.lengths import LengthCounter
    from seqprof.dataset.tokenizers import load_tokenizer

    tok = hf["qwen-3"]
    rows = conversations[:40]
    counter = LengthCounter(load_tokenizer(str(tokenizer_dirs["qwen-3"])), "messages")
    got = counter.count([{"messages": c} for c in rows], ["x"] * len(rows))
    for i, conv in enumerate(rows):
        expected: dict[str, int] = {}
        before = 0
        for j in range(1, len(conv) + 1):
            now = _chat_len(tok, conv[:j])
            expected[conv[j - 1]["role"]] = expected.get(conv[j - 1]["role"], 0) + now - before
            before = now
        assert sum(expected.values()) == got.sequence[i]
    assert int(got.fields["assistant"].sum()) + int(got.fields["user"].sum()) + \
        int(got.fields.get("system", np.zeros(0)).sum()) == int(got.sequence.sum())


def test_packaged_name_and_directory_agree(tokenizer_dirs, conversations, tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"messages": c}) + "\n" for c in conversations[:50]))
    by_name = build_profile(path, AnalyzeOptions(tokenizer="deepseek-r1-distill-llama-8b"))
    by_dir = build_profile(path, AnalyzeOptions(tokenizer=str(tokenizer_dirs["deepseek-r1-distill-llama-8b"])))
    assert by_name.sequence == by_dir.sequence
    assert by_name.tokenizer.vocab_size == 128256


def _write_formats(rows: list[dict], root: Path) -> dict[str, str]:
    """The same rows as JSONL, JSONL.gz, JSON array, Parquet, CSV, a shard directory and a glob."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    root.mkdir()
    jsonl = "".join(json.dumps(r) + "\n" for r in rows)
    (root / "d.jsonl").write_text(jsonl)
    with gzip.open(root / "d.jsonl.gz", "wt") as fh:
        fh.write(jsonl)
    (root / "d.json").write_text(json.dumps(rows))
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, root / "d.parquet")
    pacsv.write_csv(table, root / "d.csv")
    shards = root / "shards"
    shards.mkdir()
    half = len(rows) // 2
    pq.write_table(pa.Table.from_pylist(rows[:half]), shards / "train-00000.parquet")
    pq.write_table(pa.Table.from_pylist(rows[half:]), shards / "train-00001.parquet")
    return {"jsonl": str(root / "d.jsonl"), "jsonl.gz": str(root / "d.jsonl.gz"), "json": str(root / "d.json"),
            "parquet": str(root / "d.parquet"), "csv": str(root / "d.csv"), "dir": str(shards),
            "glob": str(shards / "train-*.parquet")}


def test_every_file_format_gives_the_same_profile(tmp_path, tokenizer_dirs, hf, conversations):
    rows = _datasets(conversations)["alpaca"]
    paths = _write_formats(rows, tmp_path / "formats")
    expected = LengthHistogram.from_lengths(_reference_lengths(hf["qwen-2.5"], "alpaca", rows))
    for fmt, path in paths.items():
        profile = build_profile(path, AnalyzeOptions(tokenizer=str(tokenizer_dirs["qwen-2.5"])))
        assert profile.sequence == expected, fmt
        assert profile.dataset.schema == "alpaca"


def test_ragged_message_content_in_jsonl(tmp_path, tokenizer_dirs, hf, conversations):
    """Content as a string in one row and a list of parts in the next (what pyarrow's JSON reader
    rejects and polars turns into a JSON string): parts are joined as text."""
    rows = []
    for i, conv in enumerate(conversations[:30]):
        if i % 2:
            conv = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]} for m in conv]
        rows.append({"messages": conv})
    path = tmp_path / "ragged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    profile = build_profile(path, AnalyzeOptions(tokenizer=str(tokenizer_dirs["qwen-2.5"])))
    expected = [_chat_len(hf["qwen-2.5"], c) for c in conversations[:30]]
    assert profile.sequence == LengthHistogram.from_lengths(expected)
