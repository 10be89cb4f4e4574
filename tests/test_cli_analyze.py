"""analyze as a user runs it: JSON contract, saved profiles, and one clear line for every bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.dataset.profile import Profile

CONTRACT = {
    "dataset": {"path", "format", "rows", "skipped_rows", "schema"},
    "tokenizer": {"name", "vocab_size"},
    "sequence": {"count", "mean", "min", "p50", "p90", "p95", "p99", "max", "total_tokens", "histogram"},
    "recommendation": {"max_seq_length", "coverage", "truncated_rows"},
}


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "seqprof", *args], capture_output=True, text=True, env=env)


def test_default_run_and_json_contract(tmp_path):
    """The README's first command: no arguments, the embedded dataset and tokenizer, offline."""
    out = tmp_path / "profile.json"
    proc = run("analyze", "--format", "json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key, fields in CONTRACT.items():
        assert fields <= set(data[key]), key
    assert data["dataset"]["rows"] == 600 and data["dataset"]["schema"] == "messages"
    assert set(data["fields"]) >= {"user", "assistant"}
    assert "embedded default" in proc.stderr
    saved = Profile.load(out)
    assert saved.to_dict() == data
    assert sum(int(v) for v in data["sequence"]["histogram"].values()) == data["sequence"]["count"]


def test_text_output_is_a_table():
    result = CliRunner().invoke(main, ["analyze"])
    assert result.exit_code == 0
    assert "recommended max_seq_length" in result.output and "p99" in result.output


def _bad(tmp_path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


@pytest.mark.parametrize("name,content,expect", [
    ("malformed.jsonl", '{"text": "ok"}\n{"text": "ok"}\n{"text": broken}\n', ":3: malformed JSON"),
    ("nofield.jsonl", '{"text": "ok"}\n{"body": "no text field"}\n', ":2: missing field 'text'"),
    ("wrongtype.jsonl", '{"text": "ok"}\n{"text": 42}\n', ":2: field 'text' must be a string, got a number"),
    ("unknown.jsonl", '{"body": "x", "title": "y"}\n', ":1: no recognised text field"),
    ("empty.jsonl", "", "no rows to profile"),
    ("badmsg.jsonl", '{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": "hello"}\n',
     ":2: field 'messages' must be a list of messages"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, name, content, expect):
    data = _bad(tmp_path, name, content)
    out = tmp_path / "profile.json"
    result = CliRunner().invoke(main, ["analyze", data, "--output", str(out)])
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("seqprof: error:")]
    assert len(lines) == 1 and expect in lines[0] and name in lines[0]
    assert "Traceback" not in result.output + result.stderr
    assert not out.exists() and not list(tmp_path.glob("profile.json*"))


def test_skip_bad_rows_counts_them(tmp_path):
    data = _bad(tmp_path, "mixed.jsonl", '{"text": "a b c"}\n{"text": }\n{"text": 7}\n{"text": "d e"}\n')
    result = CliRunner().invoke(main, ["analyze", data, "--skip-bad-rows", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["dataset"]["rows"] == 2 and payload["dataset"]["skipped_rows"] == 2


def test_missing_file_and_missing_tokenizer_subprocess(tmp_path):
    proc = run("analyze", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 2 and "nope.jsonl: no such file" in proc.stderr and "Traceback" not in proc.stderr
    data = _bad(tmp_path, "d.jsonl", '{"text": "hello"}\n')
    proc = run("analyze", data, "--tokenizer", "acme/not-a-model")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert "not found offline" in line and "HF cache" in line and "packaged" in line


def test_profile_is_accepted_back_and_damaged_profile_is_an_error(tmp_path):
    out = tmp_path / "p.json"
    assert CliRunner().invoke(main, ["analyze", "--output", str(out)]).exit_code == 0
    loaded = Profile.load(out)
    assert loaded.dataset.rows == 600
    out.write_text('{"kind": "seqprof.profile", "dataset": {}}')
    with pytest.raises(Exception) as err:
        Profile.load(out)
    assert "damaged" in str(err.value)


def test_python_api_returns_the_same_profile_as_the_cli(tmp_path):
    import seqprof
    import seqprof.dataset.profile  # noqa: F401  (the module of the same name must not shadow the function)

    api = seqprof.profile(_default(), tokenizer="qwen-2.5")
    cli = json.loads(CliRunner().invoke(main, ["analyze", "--format", "json"]).stdout)
    assert api.to_dict()["sequence"] == cli["sequence"]
    assert api.recommendation.max_seq_length == cli["recommendation"]["max_seq_length"]


def _default() -> str:
    from seqprof.dataset.analyze import default_dataset_path
    return str(default_dataset_path())


def test_num_buckets_adds_the_buckets_section():
    from seqprof.batching.buckets import optimal_boundaries

    result = CliRunner().invoke(main, ["analyze", "--num-buckets", "4", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    hist = Profile.from_dict(payload).sequence
    cap = payload["recommendation"]["max_seq_length"]
    assert payload["buckets"]["boundaries"] == optimal_boundaries(hist, 4, max_len=cap)
    assert {"fixed_padding", "bucketed_shuffle", "packing_bfd"} <= set(payload["buckets"]["strategies"])


def test_output_into_a_missing_directory_fails_before_tokenizing(tmp_path):
    out = tmp_path / "missing" / "profile.json"
    result = CliRunner().invoke(main, ["analyze", "--output", str(out)])
    assert result.exit_code == 2 and "does not exist" in result.stderr and "Traceback" not in result.output
    assert not out.parent.exists()
