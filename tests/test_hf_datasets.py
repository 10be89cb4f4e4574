"""Hugging Face datasets on disk, written by the real `datasets` library, profiled offline with pyarrow."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.dataset.analyze import AnalyzeOptions, build_profile
from seqprof.errors import SeqprofError

datasets = pytest.importorskip("datasets")


@pytest.fixture
def rows(conversations):
    return [{"messages": c} for c in conversations[:120]]


@pytest.fixture
def jsonl_profile(rows, tmp_path):
    """The reference: the same rows as JSONL."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return build_profile(path, AnalyzeOptions(cache=False))


def _same(a, b):
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d["dataset"].pop("path"), d["dataset"].pop("format"), d.pop("longest")
    return da == db


def test_save_to_disk_directory(rows, jsonl_profile, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder), num_shards=3)
    profile = build_profile(folder, AnalyzeOptions(cache=False))
    assert profile.dataset.format == "arrow" and profile.dataset.rows == len(rows)
    assert _same(profile, jsonl_profile)


def test_dataset_dict_picks_the_split(rows, jsonl_profile, tmp_path):
    folder = tmp_path / "dict"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows),
                          "test": datasets.Dataset.from_list(rows[:7])}).save_to_disk(str(folder))
    assert _same(build_profile(folder, AnalyzeOptions(cache=False)), jsonl_profile)  # train by default
    assert build_profile(folder, AnalyzeOptions(cache=False, split="test")).dataset.rows == 7
    with pytest.raises(SeqprofError, match="no split 'dev'"):
        build_profile(folder, AnalyzeOptions(cache=False, split="dev"))


def test_loose_arrow_files(rows, jsonl_profile, tmp_path):
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder), num_shards=2)
    loose = tmp_path / "loose"
    loose.mkdir()
    for shard in folder.glob("*.arrow"):
        shutil.copy(shard, loose / shard.name)
    assert _same(build_profile(loose, AnalyzeOptions(cache=False)), jsonl_profile)
    one = next(iter(sorted(loose.glob("*.arrow"))))
    assert build_profile(one, AnalyzeOptions(cache=False)).dataset.rows < len(rows)


def test_a_hub_id_found_in_the_datasets_cache(rows, jsonl_profile, tmp_path, monkeypatch):
    """load_dataset caches a dataset as org___name/<config>/<version>/<hash>/<name>-<split>.arrow."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    built = datasets.load_dataset("json", data_files={"train": str(src / "train.jsonl")},
                                  cache_dir=str(home / "datasets"))
    arrow = next((home / "datasets").rglob("*-train.arrow"))
    # lay it out under the hub id, as load_dataset("acme/chats") names its cache folder
    target = home / "datasets" / "acme___chats" / "default" / "0.0.0" / "abc123"
    target.mkdir(parents=True)
    shutil.copy(arrow, target / "chats-train.arrow")
    del built
    profile = build_profile("acme/chats", AnalyzeOptions(cache=False))
    assert _same(profile, jsonl_profile)


def test_a_hub_id_found_in_the_hub_cache_with_subset_and_split(rows, jsonl_profile, tmp_path, monkeypatch):
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    snap = home / "hub" / "datasets--acme--chats" / "snapshots" / "0123abc"
    (snap / "chat" / "").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(str(snap / "chat" / "train-00000-of-00001.parquet"))
    datasets.Dataset.from_list(rows[:5]).to_parquet(str(snap / "chat" / "test-00000-of-00001.parquet"))
    (home / "hub" / "datasets--acme--chats" / "refs").mkdir()
    (home / "hub" / "datasets--acme--chats" / "refs" / "main").write_text("0123abc")
    assert _same(build_profile("acme/chats", AnalyzeOptions(cache=False, subset="chat")), jsonl_profile)
    assert build_profile("acme/chats", AnalyzeOptions(cache=False, split="test")).dataset.rows == 5


def test_a_missing_hub_id_is_one_error_line_saying_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty"))
    result = CliRunner().invoke(main, ["analyze", "acme/nothing-here"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]
    assert len(lines) == 1 and "datasets cache" in lines[0] and "hub cache" in lines[0]
    assert "Traceback" not in result.output
