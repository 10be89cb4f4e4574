"""Readings settled in stop 52, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from seqprof.lint.run import LintOptions, lint_paths

AGENT = "open-thoughts__OpenThoughts-Agent"
THINKER = "zjunlp__LightThinker"
QAT = "Stanleytowne__pissaquant-qat"
MOLGEN = "bisect-group__NovoMolGen"
SELF = "wj210__Self-Training-LLM"


def test_a_submodule_of_a_framework_fork_is_that_fork(tmp_path):
    """open-thoughts/OpenThoughts-Agent keeps mlfoundations/llama-factory as the git submodule sft/llamafactory
    (.gitmodules). That fork's finetuning_args.py declares include_mfu, and its requirements cap transformers at
    4.56.1, which still has group_by_length. So include_mfu is a note naming the fork, and group_by_length's
    transformers 5 rename is a note too. With the submodule pointing at hiyouga/LLaMA-Factory, both are
    warnings."""
    from corpus_layout import lay_out

    config = f"{AGENT}/sft__lf_configs__qwen2_5__extra__qwen2_5_full_sft_deepspeed.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=AGENT) / config], LintOptions()).files[0].findings
    by_key = {f.key: f for f in found}
    assert (by_key["include_mfu"].code, by_key["include_mfu"].severity) == ("SP407", "info")
    assert "mlfoundations/llama-factory (.gitmodules:3)" in by_key["include_mfu"].message
    assert by_key["group_by_length"].severity == "info"
    assert "whose own requirements bound transformers" in by_key["group_by_length"].message
    tree = lay_out(tmp_path / "upstream", only=AGENT)
    modules = tree.root / AGENT / ".gitmodules"
    modules.write_text(modules.read_text().replace("mlfoundations/llama-factory", "hiyouga/LLaMA-Factory"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert {(f.key, f.code) for f in found if f.severity == "warning"} >= {
        ("include_mfu", "SP401"), ("group_by_length", "SP402")}


def test_a_key_deprecated_long_before_stays_a_finding_under_a_fork_submodule(tmp_path):
    """fsdp_transformer_layer_cls_to_wrap warns on every transformers a fork of 2025 could run (deprecated in favour
    of fsdp_config long before 4.56), so the unseen fork's transformers cap does not make it a note."""
    from corpus_layout import lay_out

    config = f"{AGENT}/sft__lf_configs__qwen3__extra__32k_base_30b_coder_fsdp2.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=AGENT) / config], LintOptions()).files[0].findings
    assert [(f.code, f.severity) for f in found if f.key == "fsdp_transformer_layer_cls_to_wrap"] == [
        ("SP403", "warning")]


def test_a_template_mapping_is_not_llamafactory(tmp_path):
    """zjunlp/LightThinker's compression configs have top-level template:, prompt: and output: sections, which its
    Config.from_file reads. LLaMA-Factory's template is a name (a string), so the mapping is no evidence of
    LLaMA-Factory and the file is the project's own. With template: qwen, a string, the same keys read as
    LLaMA-Factory and prompt / output are unknown keys."""
    import json

    from corpus_layout import lay_out

    config = f"{THINKER}/configs__LightThinker__qwen__v1.json"
    report = lint_paths([lay_out(tmp_path / "published", only=THINKER) / config], LintOptions()).files[0]
    assert report.dialect == "unknown" and not [f for f in report.findings if f.severity == "warning"]
    tree = lay_out(tmp_path / "named", only=THINKER)
    path = tree / config
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "template": "qwen"}, indent=1))
    report = lint_paths([path], LintOptions()).files[0]
    assert report.dialect == "llamafactory"
    assert {"prompt", "output"} <= {f.key for f in report.findings if f.code == "SP401"}


def test_a_torchtune_quantize_config_trains_nothing(tmp_path):
    """Stanleytowne/pissaquant-qat's convert_qat.yaml is torchtune's quantize recipe config: a QAT quantizer and a
    checkpointer, no loss, optimizer or dataset (recipes/quantize.py calls quantizer.convert() alone). It names no
    trainer. Given an optimizer, the same file is a fine-tuning config, sft."""
    from corpus_layout import lay_out

    config = f"{QAT}/llama__convert_qat.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=QAT) / config], LintOptions()).files[0]
    assert report.dialect == "torchtune" and report.facts.plan.setting("trainer") is None
    tree = lay_out(tmp_path / "trained", only=QAT)
    path = tree / config
    path.write_text(path.read_text() + "\noptimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n")
    plan = lint_paths([path], LintOptions()).files[0].facts.plan
    assert plan.setting("trainer").value == "sft"


def test_keys_all_declared_by_the_projects_plain_dataclasses_are_its_own_schema(tmp_path):
    """bisect-group/NovoMolGen's sft_trainer_pmo.yaml fills the project's SFTConfig(PolicyTrainerConfig), plain
    dataclasses that declare learning_rate, max_length, dataset_name and every other key of the file: not TRL's
    SFTConfig, whose names they repeat. When PolicyTrainerConfig extends transformers' TrainingArguments, the file
    is a TrainingArguments file of the project's subclass (hf)."""
    from corpus_layout import lay_out

    config = f"{MOLGEN}/configs__finetune__sft_trainer_pmo.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=MOLGEN) / config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    tree = lay_out(tmp_path / "extended", only=MOLGEN)
    utils = tree.root / MOLGEN / "src/trainer/utils.py"
    text = utils.read_text()
    assert "class PolicyTrainerConfig:" in text
    utils.write_text("from transformers import TrainingArguments\n" + text.replace(
        "class PolicyTrainerConfig:", "class PolicyTrainerConfig(TrainingArguments):"))
    assert lint_paths([tree / config], LintOptions()).files[0].dialect == "hf"


def test_what_the_loading_scripts_imported_module_filters_and_sets(tmp_path):
    """wj210/Self-Training-LLM's train.py loads configs/training/sft_trainer.yaml and hands it to do_train in
    self_learning_training.py, which keeps only TrainingArguments' parameters (inspect.signature) and then sets
    evaluation_strategy itself in every branch. So the file's evaluation_strategy never runs (a note), and its
    overwrite_output_dir, which neither the Trainer nor the project reads, is dropped on the transformers 5 upgrade
    with nothing lost (a note). Without the import, both are warnings."""
    from corpus_layout import lay_out

    config = f"{SELF}/configs__training__sft_trainer.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=SELF) / config], LintOptions()).files[0].findings
    by_key = {f.key: f for f in found}
    assert by_key["evaluation_strategy"].severity == "info"
    assert "sets 'evaluation_strategy' itself (uncertainty/self_learning_training.py:" in \
        by_key["evaluation_strategy"].message
    assert by_key["overwrite_output_dir"].severity == "info"
    tree = lay_out(tmp_path / "apart", only=SELF)
    script = tree.root / SELF / "uncertainty/train.py"
    text = script.read_text()
    assert "from self_learning_training import do_train" in text
    script.write_text(text.replace("from self_learning_training import do_train", "from trainer_lib import do_train"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert {(f.key, f.severity) for f in found} >= {("evaluation_strategy", "warning"),
                                                    ("overwrite_output_dir", "warning")}
