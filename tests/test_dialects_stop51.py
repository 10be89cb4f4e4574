"""Readings settled in stop 51, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from seqprof.lint.run import LintOptions, lint_paths

ARABIC = "artaasd95__arabic-qwen-base-finetuning"
KD = "claude9493__llm-kd"
RLKD = "xsc1234__RLKD"
QWERTY = "nkkbr__241121_qwerty"


def test_a_broken_pyproject_beside_the_config_does_not_stop_lint(tmp_path):
    """artaasd95/arabic-qwen-base-finetuning's pyproject.toml is not valid TOML (an unclosed array at line 453).
    It never names seqprof, so it cannot hold lint's settings: the config beside it is linted. A pyproject.toml that
    does name [tool.seqprof] and cannot be read is still one error line naming the file."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path / "published", only=ARABIC) / f"{ARABIC}/configs__qwen3_config.yaml"
    result = lint_paths([config], LintOptions())
    assert not result.errors and result.files[0].dialect == "unknown"
    tree = lay_out(tmp_path / "settings", only=ARABIC)
    pyproject = tree.root / ARABIC / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.seqprof]\nfail_on = \"warning\"\n")
    result = lint_paths([tree / f"{ARABIC}/configs__qwen3_config.yaml"], LintOptions())
    assert len(result.errors) == 1 and "pyproject.toml is not valid TOML" in str(result.errors[0])


def test_sections_declared_by_dataclasses_a_parsing_script_imports_are_fields(tmp_path):
    """claude9493/llm-kd's YAML has lora_config:, tokenizer_kwargs: and kd_args: mappings, dict fields of the
    ModelArguments / KDArguments in arguments.py, which kd.py imports and parses with HfArgumentParser(...,
    Seq2SeqTrainingArguments, KDArguments).parse_yaml_file: the file is transformers' TrainingArguments, and its
    evaluation_strategy (gone from 4.51) and a cosine schedule the DeepSpeed file replaces are found. When no parsing
    script names those classes, the mappings are the project's own schema."""
    from corpus_layout import lay_out

    config = f"{KD}/configs__dolly-tinyllama-kd-lora8.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=KD) / config], LintOptions()).files[0]
    assert report.dialect == "hf"
    assert {(f.code, f.key) for f in report.findings if f.severity == "warning"} >= {
        ("SP402", "evaluation_strategy"), ("SP458", "lr_scheduler_type")}
    tree = lay_out(tmp_path / "unnamed", only=KD)
    script = tree / f"{KD}/kd.py"
    text = script.read_text()
    assert "from arguments import ModelArguments, DataArguments, KDArguments" in text
    script.write_text(text.replace("ModelArguments", "ModelArgs").replace("KDArguments", "KDArgs"))
    assert lint_paths([tree / config], LintOptions()).files[0].dialect == "unknown"


def test_a_copy_of_trl_inside_the_project_is_trl(tmp_path):
    """xsc1234/RLKD keeps trl 0.16.0's source in src/open_r1/trl, which sft-GSRM.py imports ahead of any installed
    trl (the script's folder is first on sys.path): its SFTConfig is TRL's, so SFT_GSRM.yaml is a TRL recipe, not
    the project's own HfArgumentParser file, and ModelConfig.torch_dtype there is no trl upgrade hazard (a note).
    Without the copy, torch_dtype breaks on the trl 0.27 upgrade the pins allow."""
    from corpus_layout import lay_out

    config = f"{RLKD}/open-r1-main__recipes__GSRM-7B__sft__SFT_GSRM.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=RLKD) / config], LintOptions()).files[0]
    assert (report.dialect, report.facts.plan.setting("trainer").value) == ("trl", "sft")
    dtype = next(f for f in report.findings if f.key == "torch_dtype")
    assert (dtype.code, dtype.severity) == ("SP407", "info") and "copy of TRL" in dtype.message
    tree = lay_out(tmp_path / "installed", only=RLKD)
    for copied in (tree.root / RLKD / "open-r1-main/src/open_r1/trl").rglob("*.py"):
        copied.unlink()
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert ("SP403", "warning") in {(f.code, f.severity) for f in found if f.key == "torch_dtype"}


def test_a_deepspeed_block_deepspeed_could_not_build_is_switched_off_not_misspelt(tmp_path):
    """nkkbr/241121_qwerty's DeepSpeed file names its block `lr_scheduler` with type "constant": DeepSpeed ignores
    the key, and renamed `scheduler` the block would stop deepspeed.initialize ("DeepSpeed does not recognize LR
    scheduler constant"), so it is a note with nothing to rename. With a type DeepSpeed builds (WarmupLR), the name
    is a misspelling that loses the schedule: SP401, did you mean 'scheduler'."""
    from corpus_layout import lay_out

    config = f"{QWERTY}/script__default_offload_opt_param_finetune_deepspeed_zero_3_4gpu_plus_one.sh.json"
    found = lint_paths([lay_out(tmp_path / "published", only=QWERTY) / config], LintOptions()).files[0].findings
    assert [(f.code, f.severity) for f in found if f.key == "lr_scheduler"] == [("SP407", "info")]
    tree = lay_out(tmp_path / "warmup", only=QWERTY)
    path = tree / config
    text = path.read_text()
    assert '"type": "constant"' in text
    path.write_text(text.replace('"type": "constant"', '"type": "WarmupLR"'))
    found = lint_paths([path], LintOptions()).files[0].findings
    assert [(f.code, "did you mean 'scheduler'" in f.message) for f in found if f.key == "lr_scheduler"] == [
        ("SP401", True)]


SWE = "pclucas14__SWE-agent"


def test_a_fork_the_job_file_that_runs_the_config_clones_is_what_runs(tmp_path):
    """pclucas14/SWE-agent's Amulet job run_agent/amlt_config/run_1r1m_32B.yaml (a namesake of the config it runs)
    clones ShiZhengyan/LLaMA-Factory with `git clone --depth 1`, installs it with `pip install -e`, then runs
    `llamafactory-cli train run_agent/llama_factory_config/run_1r1m_32B.yaml`: compute_entropy and the other metric
    switches are that fork's arguments, notes naming it. Cloned from hiyouga/LLaMA-Factory, they are unknown keys."""
    from corpus_layout import lay_out

    config = f"{SWE}/run_agent__llama_factory_config__run_1r1m_32B.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=SWE) / config], LintOptions()).files[0].findings
    notes = {f.key: f for f in found if f.code == "SP407"}
    assert {"compute_entropy", "compute_perplexity", "compute_reasoning_metrics", "compute_tool_call_metrics"} <= set(
        notes)
    assert "ShiZhengyan/LLaMA-Factory (run_agent/amlt_config/run_1r1m_32B.yaml:34)" in notes["compute_entropy"].message
    tree = lay_out(tmp_path / "upstream", only=SWE)
    job = tree.root / SWE / "run_agent/amlt_config/run_1r1m_32B.yaml"
    job.write_text(job.read_text().replace("ShiZhengyan/LLaMA-Factory", "hiyouga/LLaMA-Factory"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert "compute_entropy" in {f.key for f in found if f.code == "SP401"}
