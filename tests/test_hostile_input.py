"""Hostile inputs get one error line naming the file and the fix, exit 2, never a traceback (issue 11)."""

from __future__ import annotations

import json

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
