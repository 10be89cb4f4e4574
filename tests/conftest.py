"""Shared fixtures: real packaged tokenizers laid out as HF model directories, real text."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from seqprof.dataset.analyze import default_dataset_path
from seqprof.dataset.tokenizers import _otc_data_dir

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
# tests/data holds copies of other projects' files (the lint corpus keeps their test_*.py scripts): never collected
collect_ignore_glob = ["data/*"]


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path, monkeypatch):
    """Each test gets an empty profile cache of its own, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def materialize_tokenizer(name: str, dest: Path) -> Path:
    """Unzip a packaged tokenizer (tokenizer.json + config + template) into an HF-style directory."""
    src = _otc_data_dir() / name
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src / "tokenizer.json.zip") as zf:
        (dest / "tokenizer.json").write_bytes(zf.read("tokenizer.json"))
    for extra in ("tokenizer_config.json", "chat_template.jinja"):
        if (src / extra).is_file():
            shutil.copy(src / extra, dest / extra)
    return dest


@pytest.fixture(scope="session")
def tokenizer_dirs(tmp_path_factory) -> dict[str, Path]:
    """Qwen 2.5, Qwen 3 and a Llama 3 tokenizer (DeepSeek-R1-Distill-Llama-8B) as model directories."""
    root = tmp_path_factory.mktemp("tokenizers")
    names = ["qwen-2.5", "qwen-3", "deepseek-r1-distill-llama-8b"]
    return {n: materialize_tokenizer(n, root / n) for n in names}


@pytest.fixture(scope="session")
def conversations() -> list[list[dict]]:
    """Real chat rows: the embedded dataset (CPython docstrings as assistant turns)."""
    lines = default_dataset_path().read_text().splitlines()
    return [json.loads(line)["messages"] for line in lines]
