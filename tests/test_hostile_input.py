"""Hostile inputs get one error line naming the file and the fix, exit 2, never a traceback (issue 11)."""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

from seqprof.cli import main


def _chat(role):
    return json.dumps({"messages": [{"role": role, "content": "hi"}, {"role": "assistant", "content": "yo"}]}) + "\n"


@pytest.mark.parametrize(("name", "body", "template", "words"), [
    ("int_role.jsonl", _chat(1), None, ["messages[0]'s role must be a non-empty string", "int_role.jsonl:1"]),
    ("null_role.jsonl", _chat(None), None, ["role must be a non-empty string"]),
    ("dict_role.jsonl", _chat({"a": 1}), None, ["role must be a non-empty string"]),
    ("ok.jsonl", _chat("user"), "{{ 1/0 }}", ["ZeroDivisionError", "ok.jsonl:1"]),
    ("ok.jsonl", _chat("user"), "{{ 'a' + 1 }}", ["TypeError"]),
    ("ok.jsonl", _chat("user"), "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", ["RecursionError"]),
])
def test_one_error_line(tmp_path, name, body, template, words):
    data = tmp_path / name
    data.write_text(body)
    args = ["analyze", str(data), "--no-cache"]
    if template is not None:
        (tmp_path / "t.jinja").write_text(template)
        args += ["--chat-template", str(tmp_path / "t.jinja")]
    result = CliRunner().invoke(main, args)
    errors = [line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    for word in words:
        assert word in errors[0]


def test_a_role_that_looks_like_markup_is_printed_as_text(tmp_path):
    data = tmp_path / "markup.jsonl"
    data.write_text(_chat("[/x]") + _chat("[bold]user"))
    result = CliRunner().invoke(main, ["analyze", str(data), "--no-cache"])
    assert result.exit_code == 0 and "[/x]" in result.stdout and "[bold]user" in result.stdout


def test_a_non_utf8_tokenizer_file_is_an_input_error(tmp_path):
    data = tmp_path / "ok.jsonl"
    data.write_text(_chat("user"))
    bad = tmp_path / "tokenizer.json"
    bad.write_bytes(b"\xff\xfe{}")
    result = CliRunner().invoke(main, ["analyze", str(data), "-t", str(bad), "--no-cache"])
    assert result.exit_code == 2 and "not UTF-8" in result.stderr and "Traceback" not in result.output


def test_a_literal_name_with_brackets_is_that_file_not_a_glob(tmp_path):
    (tmp_path / "data1.jsonl").write_text(json.dumps({"text": "one"}) + "\n")
    (tmp_path / "data[1].jsonl").write_text(json.dumps({"text": "a b c d e f g"}) + "\n" * 1)
    result = CliRunner().invoke(main, ["analyze", str(tmp_path / "data[1].jsonl"), "--format", "json", "--no-cache"])
    assert json.loads(result.stdout)["sequence"]["total_tokens"] == 7


def test_control_characters_in_a_path_cannot_forge_a_second_error_line(tmp_path):
    result = CliRunner().invoke(main, ["analyze", str(tmp_path / "x\nseqprof: error: forged.jsonl")])
    assert result.exit_code == 2
    assert len([line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]) == 1
    assert "\\n" in result.stderr


@pytest.fixture(scope="module")
def saved_profile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile")
    data = folder / "ok.jsonl"
    data.write_text(_chat("user") * 5)
    out = folder / "p.json"
    assert CliRunner().invoke(main, ["analyze", str(data), "-o", str(out), "--no-cache"]).exit_code == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("damage", ["negative length", "huge length", "fields list", "zero recommendation",
                                    "string count", "histogram list"])
def test_a_hand_edited_profile_is_one_error_line(saved_profile, tmp_path, damage):
    edited = json.loads(json.dumps(saved_profile))
    if damage == "negative length":
        edited["sequence"]["histogram"] = {"-5": 1}
    elif damage == "huge length":
        edited["sequence"]["histogram"] = {str(10 ** 13): 1}
    elif damage == "fields list":
        edited["fields"] = []
    elif damage == "zero recommendation":
        edited["recommendation"]["max_seq_length"] = 0
    elif damage == "string count":
        edited["sequence"]["histogram"] = {"12": "many"}
    else:
        edited["sequence"]["histogram"] = [1, 2]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(edited))
    result = CliRunner().invoke(main, ["buckets", str(path), "-k", "4"])
    assert result.exit_code == 2 and "profile is damaged" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("option", [["--seed", "-5"], ["--epochs", "100000000"], ["-k", "1000000000"]])
def test_option_ranges_are_checked_before_any_work(saved_profile, tmp_path, option):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(saved_profile))
    args = ["buckets", str(path)] + (["-k", "4"] if option[0] != "-k" else []) + option
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "is not in the range" in result.output


BOMB = "".join(f"{a}: &{a} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n"
               for p, a in zip([None, "a", "b", "c", "d", "e", "f"], "abcdefg")) + "select: [*g, *g]\n"


@pytest.mark.parametrize(("name", "body", "words"), [
    (".seqprof.yaml", BOMB.encode(), "alias bomb"),
    (".seqprof.yaml", b"\xff\xfeselect: [SP1]\n", "not UTF-8"),
    ("pyproject.toml", b"[tool.seqprof]\nselect = [\"\xff\"]\n", "not UTF-8"),
])
def test_a_hostile_settings_file_is_one_error_line_and_fast(tmp_path, name, body, words):
    config = tmp_path / "train.yaml"
    config.write_text("base_model: m\nsequence_len: 1024\nmicro_batch_size: 2\n")
    (tmp_path / name).write_bytes(body)
    result = CliRunner().invoke(main, ["lint", str(config)])
    errors = [line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]
    assert result.exit_code == 2 and errors and words in errors[0] and "Traceback" not in result.output


def _one_error(result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("seqprof: error")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


@pytest.fixture()
def odd_files(tmp_path):
    """A FIFO, a symlink loop and a character device: none is a file, none may hang or read forever."""
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    return {"fifo": (str(fifo), "FIFO"), "loop": (str(tmp_path / "loop1"), "symbolic link loop"),
            "device": ("/dev/zero", "character device")}


@pytest.mark.parametrize("kind", ["fifo", "loop", "device"])
@pytest.mark.parametrize("command", ["analyze DATA", "lint DATA", "memory DATA", "memory CONFIG --model-config DATA",
                                     "analyze OK -t DATA", "analyze OK --chat-template DATA",
                                     "lint CONFIG --profile DATA", "buckets DATA -k 2"])
def test_a_fifo_a_link_loop_or_a_device_is_named_as_such(tmp_path, odd_files, kind, command):
    path, words = odd_files[kind]
    (tmp_path / "ok.jsonl").write_text(_chat("user"))
    (tmp_path / "c.yaml").write_text("base_model: m\nsequence_len: 1024\nmicro_batch_size: 2\n")
    args = [a.replace("DATA", path).replace("OK", str(tmp_path / "ok.jsonl")).replace("CONFIG", str(tmp_path / "c.yaml"))
            for a in command.split()]
    assert words in _one_error(CliRunner().invoke(main, args + (["--no-cache"] if args[0] == "analyze" else [])))


def test_a_byte_order_mark_is_read_past_and_a_pretty_printed_file_gets_advice(tmp_path):
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "a b c"}).encode() + b"\n")
    result = CliRunner().invoke(main, ["analyze", str(bom), "--format", "json", "--no-cache"])
    assert result.exit_code == 0 and json.loads(result.stdout)["sequence"]["total_tokens"] == 3
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text(json.dumps([{"text": "a"}, {"text": "b"}], indent=2) + "\n")
    error = _one_error(CliRunner().invoke(main, ["analyze", str(pretty), "--no-cache", "--skip-bad-rows"]))
    assert "pretty-printed" in error and "rename it to .json" in error


def test_an_overlong_line_is_refused_without_being_read_whole(tmp_path, monkeypatch):
    from seqprof.dataset import reader

    monkeypatch.setattr(reader, "MAX_ROW_BYTES", 1000)
    data = tmp_path / "long.jsonl"
    data.write_text(json.dumps({"text": "word " * 1000}) + "\n" + json.dumps({"text": "a b"}) + "\n")
    assert "long.jsonl:1: row is longer than" in _one_error(CliRunner().invoke(main, ["analyze", str(data), "--no-cache"]))
    kept = CliRunner().invoke(main, ["analyze", str(data), "--no-cache", "--skip-bad-rows", "--format", "json"])
    assert kept.exit_code == 0 and json.loads(kept.stdout)["sequence"]["total_tokens"] == 2


def test_an_overlong_text_is_refused_in_any_format(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from seqprof.dataset import lengths

    monkeypatch.setattr(lengths, "MAX_TEXT_CHARS", 1000)
    data = tmp_path / "long.parquet"
    pq.write_table(pa.table({"text": ["a b", "word " * 1000]}), data)
    error = _one_error(CliRunner().invoke(main, ["analyze", str(data), "--no-cache"]))
    assert "long.parquet#2" in error and "5,000 characters" in error


@pytest.mark.parametrize(("template", "words"), [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "operations"),
    ("{{ 'x' * 1000000000 }}", "repetition"),
    ("{% set n = 100000000 %}{{ 2 ** n }}", "exponent"),
    ("{% for i in range(100000) %}{% for j in range(1000) %}{{ 'x' * 1000 }}{% endfor %}{% endfor %}", "output"),
])
def test_a_runaway_chat_template_stops_on_a_bound_even_when_skipping_rows(tmp_path, template, words):
    data = tmp_path / "chat.jsonl"
    data.write_text(_chat("user") * 3)
    (tmp_path / "t.jinja").write_text(template)
    started = time.monotonic()
    error = _one_error(CliRunner().invoke(main, ["analyze", str(data), "--no-cache", "--skip-bad-rows",
                                                 "--chat-template", str(tmp_path / "t.jinja")]))
    assert "chat.jsonl:1" in error and "ran past its bound" in error and words in error
    assert time.monotonic() - started < 30


def test_range_in_a_template_still_behaves_as_a_range(tmp_path):
    data = tmp_path / "chat.jsonl"
    data.write_text(_chat("user"))
    (tmp_path / "t.jinja").write_text("{{ range(5)|length }}{{ range(5)[2] }}{% for i in range(3)|reverse %}{{ i }}"
                                      "{% endfor %}{{ 2 in range(3) }}")
    from seqprof.dataset.chat_template import ChatRenderer

    assert ChatRenderer((tmp_path / "t.jinja").read_text(), {}).render([]) == "52210True"


@pytest.mark.parametrize(("body", "words"), [
    (b"text,text\na,b\n", "column 'text' more than once"),
    (b"text\ncaf\xe9\n", "not UTF-8"),
])
def test_a_csv_that_a_trainer_could_not_read_is_refused(tmp_path, body, words):
    data = tmp_path / "d.csv"
    data.write_bytes(body)
    assert words in _one_error(CliRunner().invoke(main, ["analyze", str(data), "--no-cache"]))


def test_csv_cells_are_the_text_they_are(tmp_path):
    from seqprof.dataset.reader import read_rows, resolve_source

    data = tmp_path / "d.csv"
    data.write_text("prompt,completion\n1,2.50\n007,x\n")
    rows = [row.record for batch in read_rows(resolve_source(str(data))) for row in batch]
    assert rows == [{"prompt": "1", "completion": "2.50"}, {"prompt": "007", "completion": "x"}]


def test_a_damaged_parquet_page_is_one_error_line(tmp_path):
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"text": [f"row number {i} " * 20 for i in range(20000)]}), good, row_group_size=5000)
    damaged = bytearray(good.read_bytes())
    rng = random.Random(1)
    for i in range(len(damaged) // 3, len(damaged) // 3 + 2000):
        damaged[i] = rng.randrange(256)
    (tmp_path / "bad.parquet").write_bytes(bytes(damaged))
    assert "Parquet file is damaged" in _one_error(CliRunner().invoke(main, ["analyze", str(tmp_path / "bad.parquet"),
                                                                             "--no-cache"]))


def test_unusable_values_are_errors_on_their_lines(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text("base_model: BaseModel\n"                # 1
                      "sequence_len: \"abc\"\n"              # 2
                      "micro_batch_size: true\n"             # 3
                      "adapter: lora\n"                      # 4
                      "lora_r: -16\n"                        # 5
                      "learning_rate: 1e309\n"               # 6
                      "lora_dropout: .nan\n"                 # 7
                      f"gradient_accumulation_steps: {'9' * 5000}\n"  # 8
                      "num_epochs: 3\n"                      # 9
                      "lora_alpha: 32\n")                    # 10
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--select", "SP406"])
    found = sorted((f["line"], f["code"]) for f in json.loads(result.stdout)["findings"])
    assert found == [(2, "SP406"), (3, "SP406"), (5, "SP406"), (6, "SP406"), (7, "SP406"), (8, "SP406")]
    assert result.exit_code == 1
    memory = CliRunner().invoke(main, ["memory", str(config)])
    assert "train.yaml:2: no memory estimate: 'sequence_len' must be a positive integer" in _one_error(memory)


@pytest.mark.parametrize(("body", "line", "tag"), [("base_model: !Ref BaseModel\n", 1, "!Ref"),
                                                   ("base_model: m\nnum_epochs: !!python/int 3\n", 2, "!!python/int"),
                                                   ("base_model: m\nx: !!python/object/apply:os.system [ls]\n", 2,
                                                    "!!python/object/apply:os.system")])
def test_a_tag_the_trainers_loader_cannot_build_is_one_error_line(tmp_path, body, line, tag):
    config = tmp_path / "train.yaml"
    config.write_text(body)
    for command in (["lint", str(config)], ["memory", str(config)]):
        error = _one_error(CliRunner().invoke(main, command))
        assert f"train.yaml:{line}:" in error and tag in error and "yaml.safe_load" in error


@pytest.mark.parametrize(("value", "words"), [('"abc"', "'abc'"), ("1e309", "inf"), ("-4096", "-4096"),
                                              ("true", "True"), ("[1]", "[1]")])
def test_a_model_config_with_an_unusable_size_is_one_error_line(tmp_path, value, words):
    from pathlib import Path

    model = json.loads((Path(__file__).parent / "data" / "model_configs" / "Qwen3-8B" / "config.json").read_text())
    model["hidden_size"] = json.loads(value)
    (tmp_path / "config.json").write_text(json.dumps(model))
    config = tmp_path / "train.yaml"
    config.write_text("base_model: m\nsequence_len: 1024\nmicro_batch_size: 2\n")
    error = _one_error(CliRunner().invoke(main, ["memory", str(config), "--model-config", str(tmp_path)]))
    assert "hidden_size is " + words in error


def test_ten_thousand_unknown_keys_lint_in_seconds(tmp_path):
    import random
    import string

    rng = random.Random(0)
    keys = {"".join(rng.choice(string.ascii_lowercase + "_") for _ in range(rng.randint(5, 25))) for _ in range(10_000)}
    config = tmp_path / "train.yaml"
    config.write_text("base_model: m\nsequence_len: 1024\nmicro_batch_size: 2\nlearning_rat: 0.1\n"
                      + "".join(f"{k}: 1\n" for k in sorted(keys)))
    started = time.monotonic()
    # --dialect: by detection a file of mostly unknown keys is no framework's (axolotl.detect)
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--select", "SP401",
                                       "--dialect", "axolotl"])
    elapsed = time.monotonic() - started
    findings = json.loads(result.stdout)["findings"]
    assert len(findings) >= len(keys) - 50  # a few random names are real keys
    assert any(f["key"] == "learning_rat" and "learning_rate" in f["message"] for f in findings)
    assert elapsed < 30, elapsed  # 60 s before the bigram index (2 s on 2 cores); the bound leaves room for CI


@pytest.mark.parametrize("command", ["analyze LONG.jsonl", "buckets LONG.json -k 2", "analyze OK -t LONG",
                                     "lint LONG.yaml", "memory LONG.yaml", "analyze OK -o LONG.json"])
def test_a_name_too_long_for_the_filesystem_is_one_error_line(tmp_path, command):
    (tmp_path / "ok.jsonl").write_text(_chat("user"))
    long = str(tmp_path / ("a" * 300))
    args = [a.replace("LONG", long).replace("OK", str(tmp_path / "ok.jsonl")) for a in command.split()]
    assert "too long" in _one_error(CliRunner().invoke(main, args + (["--no-cache"] if args[0] == "analyze" else [])))


def test_save_steps_of_zero_or_below_is_saving_only_at_the_end(tmp_path):
    """transformers sets state.save_steps from it and saves a step only when state.save_steps > 0
    (trainer_callback.py, 4.35 to 5.25): 0 and -1 turn step saves off, nothing refuses them (AlignSFT, ElegantLin)."""
    from seqprof.lint.facts.run import checkpoint_interval

    for value in (0, -1, "0"):
        config = tmp_path / f"save_{value}.yaml"
        config.write_text(f"base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nsave_steps: {value}\n")
        result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--select", "SP406"])
        assert json.loads(result.stdout)["findings"] == []
        assert checkpoint_interval({"save_steps": value}, None, 1000) == ("steps", None, True)
    assert checkpoint_interval({"save_steps": 200}, None, 1000) == ("steps", 200, True)
    assert checkpoint_interval({"save_steps": 0.25}, None, 1000) == ("steps", 250, True)  # a ratio of the run
