"""Readings settled in stop 63, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

LAB = "AntonioGr7__post-training-lab"
MINI_R1 = "uukuguy__Replicate-R1"


def _fresh(tmp_path: Path, folder: str) -> Path:
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config: Path, key: str):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == key]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_a_field_of_a_sibling_stages_class_of_the_same_name_is_no_field_of_this_one(tmp_path):
    """Each stage of AntonioGr7/post-training-lab defines its own LabArguments in its train.py and runs
    `train.py --config configs/default.yaml`. 04-dpo sets max_prompt_length, which only 03-ppo's LabArguments
    declares: 04-dpo/train.py's TrlParser((LabArguments, DPOConfig, ModelConfig)) fills its own LabArguments and
    trl 1.7's DPOConfig, neither of which has it (removed in trl 0.29), so TrlParser refuses the file."""
    tree = _fresh(tmp_path, LAB)
    dpo = tree / f"{LAB}/04-dpo__configs__default.yaml"
    found = _findings(dpo, "max_prompt_length")
    assert [(f.code, f.severity, f.line) for f in found] == [("SP408", "error", 50)]
    assert "trl==1.7.0 (uv.lock:1233)" in found[0].message

    # 03-ppo's own config: its script's LabArguments declares the key, so it stays the project's (a note)
    ppo = tree / f"{LAB}/03-ppo__configs__default.yaml"
    found = _findings(ppo, "max_prompt_length")
    assert [(f.code, f.severity) for f in found] == [("SP407", "info")]
    assert "LabArguments (03-ppo/train.py:41)" in found[0].message

    # and where 04-dpo's own LabArguments declares it too, the project reads it there
    tree = _fresh(tmp_path, LAB)
    dpo = tree / f"{LAB}/04-dpo__configs__default.yaml"
    script = dpo.parents[1] / "train.py"
    text = script.read_text()
    at = text.index("class LabArguments:") + len("class LabArguments:")
    script.write_text(text[:at] + "\n    max_prompt_length: int = 512" + text[at:])
    found = _findings(dpo, "max_prompt_length")
    assert [(f.code, f.severity) for f in found] == [("SP407", "info")]
    assert "04-dpo/train.py" in found[0].message


def test_a_readme_that_lists_its_versions_as_comments_pins_them(tmp_path):
    """uukuguy/Replicate-R1's README opens its setup block with `# torch==2.5.1`, `# transformers==4.48.1`,
    `# trl==0.14.0`: the environment the mini-r1 task ran, and its only statement of versions. At trl 0.14
    ModelConfig has torch_dtype (trl 0.27 removes it), so the warning is about that upgrade, not an assumed
    newest release. One commented line alone may be an alternative the author left out: no pin."""
    config = _fresh(tmp_path, MINI_R1) / f"{MINI_R1}/tasks__mini-r1__grpo-qwen-2.5-3b-deepseek-r1-countdown.yaml"
    found = _findings(config, "torch_dtype")
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "trl==0.14.0 (README.md:6) still has it, trl 0.27 removes it" in found[0].message

    config = _fresh(tmp_path, MINI_R1) / f"{MINI_R1}/tasks__mini-r1__grpo-qwen-2.5-3b-deepseek-r1-countdown.yaml"
    readme = config.parents[2] / "README.md"
    listed = "# torch==2.5.1\n# transformers==4.48.1\n# trl==0.14.0\n# vllm==0.7.2\n# flashinfer-python==0.2.1.post1\n"
    _edit(readme, listed, "# trl==0.14.0\n")
    found = _findings(config, "torch_dtype")
    assert "assuming trl 1.16 / transformers 5.25 (no pins found beside the config)" in found[0].message


TINY_THINK = "Shekswess__tiny-think"
TRAVEL = "0kun1__Travel_Agentic_RL"
GO_BROWSE = "TBKiet__go-browse"


def test_a_section_the_script_copies_then_spreads_reaches_the_class(tmp_path):
    """Shekswess/tiny-think's dpo.py builds `trainer_cfg = dict(config.get("trainer") or {})` and then
    `DPOConfig(**trainer_cfg)` (train/dpo.py:229, 287): each key of the file's trainer section reaches DPOConfig under
    its own name, so trl 0.29's removal of max_prompt_length is a TypeError there: the README installs trl with no
    version (README.md:136), so a fresh install gets trl 1.16. Spread without the copy it is the same hand-off; read under another section, it is none."""
    config = _fresh(tmp_path, TINY_THINK) / f"{TINY_THINK}/configs__dpo__math_stem_dpo_beta1_lr3e_6_e1_bs8.yaml"
    found = _findings(config, "trainer.max_prompt_length")
    assert [(f.code, f.line) for f in found] == [("SP408", 14)]
    assert "spreads 'trainer' into DPOConfig (train/dpo.py:287)" in found[0].message

    script = config.parents[2] / "train" / "dpo.py"
    _edit(script, 'trainer_cfg = dict(config.get("trainer") or {})', 'trainer_cfg = config["trainer"]')
    assert [(f.code, f.line) for f in _findings(config, "trainer.max_prompt_length")] == [("SP408", 14)]

    config = _fresh(tmp_path, TINY_THINK) / f"{TINY_THINK}/configs__dpo__math_stem_dpo_beta1_lr3e_6_e1_bs8.yaml"
    script = config.parents[2] / "train" / "dpo.py"
    _edit(script, 'dict(config.get("trainer") or {})', 'dict(config.get("other") or {})')
    assert _findings(config, "trainer.max_prompt_length") == []


def test_ms_swift_4s_tuner_type_makes_the_file_ms_swifts(tmp_path):
    """0kun1/Travel_Agentic_RL's sft_lora.yaml is ms-swift's (`model:`, `tuner_type: lora`, `val_dataset`,
    `template: qwen3_nothinking`): ms-swift 4 renamed train_type to tuner_type, and its template is no LLaMA-Factory
    template. No framework seqprof checks reads it, so no LLaMA-Factory finding applies. With `model_name_or_path`
    beside `template` it is LLaMA-Factory's again."""
    config = _fresh(tmp_path, TRAVEL) / f"{TRAVEL}/configs__sft_lora.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    assert [f.code for f in report.findings if f.severity in ("warning", "error")] == []

    config = _fresh(tmp_path, TRAVEL) / f"{TRAVEL}/configs__sft_lora.yaml"
    _edit(config, "model: ./pretrained", "model_name_or_path: ./pretrained")
    assert lint_paths([config], LintOptions()).files[0].dialect == "llamafactory"


def test_a_torch_dtype_name_as_deepspeeds_communication_type_is_refused(tmp_path):
    """TBKiet/go-browse's zero2.json and zero3.json write `"communication_data_type": "torch.float16"`: DeepSpeed's
    get_communication_data_type takes fp16, bf16 or fp32 only and raises ValueError in deepspeed.initialize."""
    tree = _fresh(tmp_path, GO_BROWSE)
    for name, line in (("ds_configs__zero2.json", 16), ("ds_configs__zero3.json", 21)):
        found = _findings(tree / f"{GO_BROWSE}/{name}", "communication_data_type")
        assert [(f.code, f.severity, f.line) for f in found] == [("SP472", "error", line)]
    config = tree / f"{GO_BROWSE}/ds_configs__zero3.json"
    _edit(config, '"torch.float16"', '"fp16"')
    assert _findings(config, "communication_data_type") == []


def test_the_launching_script_in_the_configs_branch_is_found_from_a_relative_path(tmp_path, monkeypatch):
    """`seqprof lint 07-distillation/configs/default.yaml`, typed from the repository root: the script in the
    config's own folder (a GKDTrainer) names the trainer, as it does for the absolute path; before, a relative path
    was never inside the (absolute) project root, so every stage's train.py was kept and `beta` made it DPO."""
    config = _fresh(tmp_path, LAB) / f"{LAB}/07-distillation__configs__default.yaml"
    monkeypatch.chdir(config.parents[2])
    relative = config.relative_to(config.parents[2])
    for path in (relative, config):
        plan = lint_paths([path], LintOptions()).files[0].facts.plan
        assert plan.setting("trainer").value == "gkd", path
