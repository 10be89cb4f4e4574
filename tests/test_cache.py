"""The profile cache: a re-run on unchanged input reads the same profile; any change or damage is a miss."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.dataset import cache
from seqprof.dataset.analyze import AnalyzeOptions, build_profile, default_dataset_path
from seqprof.dataset.lengths import LengthCounter


@pytest.fixture
def counted(monkeypatch):
    """How many batches were tokenized (0 on a cache hit)."""
    calls = []
    original = LengthCounter.count

    def count(self, examples, locations):
        calls.append(len(examples))
        return original(self, examples, locations)

    monkeypatch.setattr(LengthCounter, "count", count)
    return calls


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "chat.jsonl"
    shutil.copy(default_dataset_path(), path)
    return path


def _same(a, b):
    return json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


def test_a_rerun_reads_the_cache_and_gives_the_same_profile(data, counted):
    first = build_profile(data, AnalyzeOptions())
    assert counted and list(cache.cache_dir().glob("*.json"))
    counted.clear()
    again = build_profile(data, AnalyzeOptions())
    assert counted == [] and _same(first, again)
    fresh = build_profile(data, AnalyzeOptions(cache=False))
    assert counted and _same(first, fresh)


@pytest.mark.parametrize("change", ["data", "tokenizer", "template", "coverage", "schema"])
def test_anything_a_length_depends_on_is_part_of_the_key(data, counted, tmp_path, change):
    build_profile(data, AnalyzeOptions())
    counted.clear()
    options = AnalyzeOptions()
    if change == "data":
        data.write_text(data.read_text().replace("What does", "What did", 1))
    elif change == "tokenizer":
        options = AnalyzeOptions(tokenizer="qwen-3")
    elif change == "template":
        template = tmp_path / "t.jinja"
        template.write_text("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}")
        options = AnalyzeOptions(chat_template=str(template))
    elif change == "coverage":
        options = AnalyzeOptions(coverage=0.9)
    else:
        options = AnalyzeOptions(schema="messages", per_turn_fields=False)
    changed = build_profile(data, options)
    assert counted  # tokenized again
    assert _same(changed, build_profile(data, replace_cache(options, False)))


def replace_cache(options, on):
    from dataclasses import replace
    return replace(options, cache=on)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other key", "bad profile", "empty"])
def test_a_damaged_entry_is_ignored_and_rebuilt(data, counted, damage):
    good = build_profile(data, AnalyzeOptions())
    (entry,) = cache.cache_dir().glob("*.json")
    text = entry.read_text()
    entry.write_text({"truncated": text[: len(text) // 2], "garbage": "\x00\xff not json",
                      "other key": text.replace(entry.stem, "0" * 40), "empty": "",
                      "bad profile": json.dumps({"key": entry.stem, "profile": {"kind": "seqprof.profile"}})}[damage])
    counted.clear()
    rebuilt = build_profile(data, AnalyzeOptions())
    assert counted and _same(good, rebuilt)
    assert json.loads(entry.read_text())["key"] == entry.stem  # rewritten whole


def test_skipped_rows_are_reported_again_on_a_hit(tmp_path, counted):
    path = tmp_path / "bad.jsonl"
    lines = default_dataset_path().read_text().splitlines()[:20]
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n")
    seen: list[str] = []
    first = build_profile(path, AnalyzeOptions(skip_bad_rows=True), on_skip=lambda loc, why: seen.append(loc))
    counted.clear()
    again: list[str] = []
    second = build_profile(path, AnalyzeOptions(skip_bad_rows=True), on_skip=lambda loc, why: again.append(loc))
    assert counted == [] and seen == again == [f"{path}:4"] and _same(first, second)


def test_no_cache_flag_and_environment_write_nothing(data):
    def entries():
        return list(cache.cache_dir().glob("*.json")) if cache.cache_dir().exists() else []

    runner = CliRunner()
    assert runner.invoke(main, ["analyze", str(data), "--no-cache", "--format", "json"]).exit_code == 0
    assert entries() == []
    assert runner.invoke(main, ["analyze", str(data), "--format", "json"], env={"SEQPROF_NO_CACHE": "1"}).exit_code == 0
    assert entries() == []
    assert runner.invoke(main, ["analyze", str(data), "--format", "json"]).exit_code == 0
    assert len(entries()) == 1


def test_an_unwritable_cache_dir_does_not_fail_the_run(data, monkeypatch, tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert build_profile(data, AnalyzeOptions()).dataset.rows == 600


def test_worker_processes_give_the_identical_profile(data, tmp_path):
    """Batches counted in 2 worker processes, merged in input order: the same profile and the same skips,
    for rows the schema refuses (in this process) and rows the template refuses (in a worker)."""
    template = tmp_path / "no-tools.jinja"
    template.write_text("{% for m in messages %}{% if m['role'] == 'tool' %}{{ raise_exception('no tool turns') }}"
                        "{% endif %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
    lines = data.read_text().splitlines()
    lines.insert(10, '{"messages": [{"role": "user", "content": 3}]}')
    lines.insert(20, '{"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}]}')
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(lines * 3) + "\n")
    runs = {}
    for workers in (1, 2):
        skips: list[str] = []
        profile = build_profile(mixed, AnalyzeOptions(cache=False, skip_bad_rows=True, workers=workers,
                                                      chat_template=str(template)),
                                on_skip=lambda loc, why, skips=skips: skips.append(loc))
        runs[workers] = (profile, skips)
    assert _same(runs[1][0], runs[2][0]) and runs[1][1] == runs[2][1] and len(runs[1][1]) == 6
