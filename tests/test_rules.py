"""The rule pack and the rule engine: every rule against its own examples, and the engine's guarantees."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from seqprof.config.plan import ConfigDiagnostic, Plan, Setting
from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, Profile, TokenizerInfo
from seqprof.dataset.recommend import Recommendation, recommend_max_seq_length
from seqprof.errors import SeqprofError
from seqprof.lint.facts import build_facts
from seqprof.lint.rules import builtin_rules_dir, find_rule, load_rule_file, load_rules
from seqprof.lint.run import lint_plan

RULES = load_rules()


def example_profile(data: dict[int, int], recommended: int | None = None) -> Profile:
    """A profile holding exactly the example's length histogram (recommendation computed from it)."""
    hist = LengthHistogram.from_mapping(data)
    rec = recommend_max_seq_length(hist)
    if recommended is not None:
        rec = Recommendation(max_seq_length=recommended, coverage=(hist.count - hist.count_above(recommended))
                             / hist.count, truncated_rows=hist.count_above(recommended))
    return Profile(dataset=DatasetInfo(path="example.jsonl", format="jsonl", rows=hist.count, skipped_rows=0,
                                       schema="text"),
                   tokenizer=TokenizerInfo(name="example", vocab_size=0), sequence=hist, fields={},
                   recommendation=rec)


def run_example(rule, example, tmp_path: Path):
    """Read the example snippet with the real config reader, build facts, run this one rule."""
    from seqprof.config.read import read_plan

    path = tmp_path / example.filename
    path.write_text(example.config)
    for name, text in example.files.items():  # a registry beside the config, read as lint reads it
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    plan = read_plan(str(path), dialect=example.dialect, versions=example.versions)
    profile = example_profile(example.data, example.recommended) if example.data else None
    from seqprof.lint.config_data import dataset_registry
    from seqprof.lint.facts import gpu_facts

    facts = build_facts(plan, profile, gpu=gpu_facts(example.gpu) if example.gpu else None,
                        world_size=example.world_size, model_config=example.model_config,
                        registry=dataset_registry(plan, cwd=tmp_path) if plan.dialect == "llamafactory" else None)
    report = lint_plan(plan, facts, [rule], text=example.config)
    return report


CASES = [(rule, kind, i) for rule in RULES for kind, examples in (("pass", rule.passing), ("fail", rule.failing))
         for i in range(len(examples))]


@pytest.mark.parametrize("rule,kind,index", CASES,
                         ids=[f"{r.code}-{k}{i}" for r, k, i in CASES])
def test_every_rule_passes_and_fails_its_own_examples(rule, kind, index, tmp_path):
    example = (rule.passing if kind == "pass" else rule.failing)[index]
    report = run_example(rule, example, tmp_path)
    skipped = [c for codes in report.skipped.values() for c in codes]
    assert rule.code not in skipped, f"{rule.code} was skipped on its own example: {report.skipped}"
    codes = [f.code for f in report.findings]
    if kind == "pass":
        assert codes == [], f"{rule.code} fired on a passing example: {[f.message for f in report.findings]}"
        return
    assert codes and set(codes) == {rule.code}, f"{rule.code} did not fire on its failing example"
    for finding in report.findings:
        # a failing example points at a line of the snippet that names the finding's key
        assert finding.line is not None, f"{rule.code} found no line"
        text = example.config if finding.file == str(tmp_path / example.filename) else \
            example.files[Path(finding.file).relative_to(tmp_path).as_posix()]  # a project file's own line
        line_text = text.splitlines()[finding.line - 1]
        assert finding.key.split(".")[-1] in line_text
        assert finding.message and "{{" not in finding.message and "{%" not in finding.message
        assert finding.fix and "{{" not in finding.fix


def test_every_rule_has_docs_and_a_file_named_after_it():
    assert len(RULES) >= 12
    for rule in RULES:
        assert Path(rule.source).name == f"{rule.code}-{rule.slug}.yaml"
        assert len(rule.why) > 80 and len(rule.how_to_fix) > 20
        assert rule.passing and rule.failing


def test_builtin_rules_dir_is_the_packaged_or_checkout_rules_folder():
    directory = builtin_rules_dir()
    assert directory.name == "rules" and sorted(p.name for p in directory.glob("SP*.yaml"))
    assert {Path(r.source).parent for r in RULES} == {directory}


def test_find_rule_by_code_or_slug_and_did_you_mean():
    assert find_rule(RULES, "sp101").slug == "fixed-padding-waste"
    assert find_rule(RULES, "fixed-padding-waste").code == "SP101"
    with pytest.raises(SeqprofError) as err:
        find_rule(RULES, "fixed-paddin-waste")
    assert "fixed-padding-waste" in str(err.value)


# --- engine guarantees on hand-written rule files ---------------------------------------------------

MINIMAL = """\
code: SP901
slug: custom-check
severity: warning
category: config
condition: {condition}
at: [setting.max_seq_length]
message: "cap is {{{{ cfg.max_seq_length }}}}"
fix: "lower it"
docs:
  why: because
  how_to_fix: lower it
examples:
  pass: [{{dialect: trl, config: "max_length: 10"}}]
  fail: [{{dialect: trl, config: "max_length: 10000"}}]
"""


def plan_with(**settings) -> Plan:
    lines = {name: i + 1 for i, name in enumerate(settings)}
    return Plan(path="c.yaml", dialect="trl",
                settings={name: Setting(value, name, "c.yaml", lines[name]) for name, value in settings.items()})


def write_rule(directory: Path, condition: str, code: str = "SP901") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{code}-custom-check.yaml"
    path.write_text(MINIMAL.format(condition=condition).replace("SP901", code))
    return path


def test_a_rule_condition_is_a_jinja_expression_over_facts(tmp_path):
    rule = load_rule_file(write_rule(tmp_path, "cfg.max_seq_length > 4096"))
    plan = plan_with(max_seq_length=8192)
    report = lint_plan(plan, build_facts(plan), [rule])
    assert [(f.code, f.line, f.message) for f in report.findings] == [("SP901", 1, "cap is 8192")]
    plan = plan_with(max_seq_length=2048)
    assert lint_plan(plan, build_facts(plan), [rule]).findings == ()


@pytest.mark.parametrize("condition", [
    "cfg.__class__.__mro__[1].__subclasses__()",
    "plan.__class__.__init__.__globals__",
    "diagnostics.__class__.__base__.__subclasses__()",
])
def test_the_sandbox_refuses_code_execution(tmp_path, condition):
    rule = load_rule_file(write_rule(tmp_path, condition))
    plan = plan_with(max_seq_length=1)
    with pytest.raises(SeqprofError) as err:
        lint_plan(plan, build_facts(plan), [rule])
    assert "SP901" in str(err.value) and "SecurityError" in str(err.value)


def test_an_unknown_fact_in_a_condition_is_an_error_naming_the_rule_file(tmp_path):
    path = write_rule(tmp_path, "no_such_fact.value > 1")
    rule = load_rule_file(path)
    plan = plan_with(max_seq_length=1)
    with pytest.raises(SeqprofError) as err:
        lint_plan(plan, build_facts(plan), [rule])
    assert str(path) in str(err.value) and "SP901" in str(err.value)


@pytest.mark.parametrize("mutation,expected", [
    (lambda s: s.replace("severity: warning", "severity: fatal"), "severity"),
    (lambda s: s.replace("code: SP901", "code: X1"), "code"),
    (lambda s: s.replace("slug: custom-check", "slug: Custom Check"), "slug"),
    (lambda s: s.replace("category: config", "category: vibes"), "category"),
    (lambda s: s + "colour: red\n", "unknown field"),
    (lambda s: s.split("examples:")[0], "missing field"),
    (lambda s: s.replace("  fail: [", "  nope: ["), "passing and one failing"),
    (lambda s: s.replace("condition: cfg.x", "condition: cfg.x >"), "Jinja2 syntax"),
    (lambda s: s.replace("code: SP901", "code: [SP901"), "not valid YAML"),
])
def test_malformed_rule_files_are_errors_with_the_file(tmp_path, mutation, expected):
    path = write_rule(tmp_path, "cfg.x")
    path.write_text(mutation(path.read_text()))
    with pytest.raises(SeqprofError) as err:
        load_rule_file(path)
    assert expected in str(err.value) and str(path) in str(err.value)


def test_extra_rule_dirs_add_rules_and_duplicate_codes_are_refused(tmp_path):
    write_rule(tmp_path / "extra", "true")
    rules = load_rules([tmp_path / "extra"])
    assert [r.code for r in rules][-1] == "SP901" and len(rules) == len(RULES) + 1
    write_rule(tmp_path / "dupe", "true", code="SP101")
    with pytest.raises(SeqprofError) as err:
        load_rules([tmp_path / "dupe"])
    assert "SP101" in str(err.value) and "already defined" in str(err.value)
    with pytest.raises(SeqprofError):
        load_rules([tmp_path / "missing"])


def test_for_each_rules_fire_once_per_diagnostic_at_its_line():
    unknown = find_rule(RULES, "SP401")
    plan = Plan(path="c.yaml", dialect="axolotl", diagnostics=(
        ConfigDiagnostic("unknown_key", "lora_alhpa", "c.yaml", 7, "unknown", suggestion="lora_alpha"),
        ConfigDiagnostic("unknown_key", "wandb_projcet", "c.yaml", 9, "unknown"),
        ConfigDiagnostic("duplicate_key", "lr", "c.yaml", 12, "dup", other_line=3),
    ))
    report = lint_plan(plan, build_facts(plan), [unknown, find_rule(RULES, "SP404"), find_rule(RULES, "SP433")])
    got = [(f.code, f.line, f.key) for f in report.findings]
    assert got == [("SP401", 7, "lora_alhpa"), ("SP401", 9, "wandb_projcet"), ("SP433", 12, "lr")]
    assert "did you mean 'lora_alpha'" in report.findings[0].message
    assert "did you mean" not in report.findings[1].message
    assert "lines 3 and 12" in report.findings[2].message


def test_rules_that_need_data_are_skipped_without_it_and_say_why():
    plan = plan_with(max_seq_length=4000, padding="max_length")
    report = lint_plan(plan, build_facts(plan), RULES)
    skipped = {code for codes in report.skipped.values() for code in codes}
    assert {"SP101", "SP102", "SP103", "SP202", "SP301"} <= skipped
    assert any("--data" in reason for reason in report.skipped)
    assert not skipped & {"SP401", "SP410", "SP411"}


def test_messages_are_single_lines_without_template_residue():
    plan = plan_with(max_seq_length=4000, padding="max_length", micro_batch_size=1,
                     gradient_accumulation_steps=16, num_epochs=1, save_strategy="no")
    profile = example_profile({400: 3000, 530: 6000, 900: 2500, 1126: 500})
    report = lint_plan(plan, build_facts(plan, profile), RULES)
    assert {"SP101", "SP301"} <= {f.code for f in report.findings}
    for f in report.findings:
        assert "\n" not in f.message and "  " not in f.message
        assert not re.search(r"[{}%]{2}", f.message + (f.fix or ""))


def test_rule_source_is_kept_on_the_rule():
    for rule in RULES:
        assert Path(rule.source).is_file()
        assert textwrap.dedent(rule.condition).strip() == rule.condition
