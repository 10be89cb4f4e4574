"""Readings settled in stop 53, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from seqprof.lint.run import LintOptions, lint_paths

MANU = "MLAI-Yonsei__ManuExtract"
STRUCT = "TIGER-AI-Lab__StructLM"
HICUPID = "anonymsubmission-arr__HiCUPID"


def test_a_readme_reset_to_a_commit_makes_a_duplicate_key_a_warning(tmp_path):
    """MLAI-Yonsei/ManuExtract's README clones hiyouga/LLaMA-Factory, then `git reset --hard 18e455c...` and
    `pip install -e '.[metrics]'`: a commit seqprof cannot place, where releases before 0.9.4 keep a duplicate's
    last value (yaml.safe_load) and later ones refuse the file (OmegaConf). max_samples is written twice with
    different values (1000, then 181877): either way the first is lost, a warning (SP433) naming both outcomes;
    plot_loss twice with the same value loses nothing under the one and is refused under the other, so it raises
    nothing. Without the reset line the clone is the main branch, newer than 0.9.4: both are SP404 errors."""
    from corpus_layout import lay_out

    config = f"{MANU}/Model__llama3_lora_sft.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=MANU) / config], LintOptions()).files[0].findings
    loud = [(f.code, f.key) for f in found if f.severity in ("warning", "error")]
    assert loud == [("SP433", "max_samples")]
    message = next(f.message for f in found if f.code == "SP433")
    assert "README.md:16: a commit seqprof cannot place" in message and "either keeps line 39's" in message
    tree = lay_out(tmp_path / "head", only=MANU)
    readme = tree.root / MANU / "README.md"
    readme.write_text(readme.read_text().replace("git reset --hard", "git log --oneline"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert {(f.code, f.key) for f in found if f.severity == "error"} == {("SP404", "max_samples"),
                                                                          ("SP404", "plot_loss")}


def test_a_bracketed_name_is_a_placeholder(tmp_path):
    """TIGER-AI-Lab/StructLM's LLaMA-Factory template writes `per_device_train_batch_size: [BSIZE]` and
    `gradient_accumulation_steps: [GRAD_ACC]`, which its README asks the user to replace (YAML reads each as a
    one-item list). They are placeholders, notes as `[MODEL_PATH]` is, not unusable values. A real list there,
    `[4]`, is still an SP406 error."""
    from corpus_layout import lay_out

    config = f"{STRUCT}/StructLM_finetuning.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=STRUCT) / config], LintOptions()).files[0].findings
    by_key = {f.key: f for f in found}
    assert (by_key["per_device_train_batch_size"].code, by_key["per_device_train_batch_size"].severity) == (
        "SP407", "info")
    assert "'per_device_train_batch_size: [BSIZE]' is a template placeholder" in \
        by_key["per_device_train_batch_size"].message
    assert by_key["gradient_accumulation_steps"].severity == "info"
    tree = lay_out(tmp_path / "listed", only=STRUCT)
    path = tree / config
    path.write_text(path.read_text().replace("[BSIZE]", "[4]"))
    found = lint_paths([path], LintOptions()).files[0].findings
    assert [(f.code, f.severity) for f in found if f.key == "per_device_train_batch_size"] == [("SP406", "error")]


def test_a_key_added_after_the_pin_is_not_said_to_be_removed(tmp_path):
    """anonymsubmission-arr/HiCUPID's train_dpo.yaml sets use_logits_to_keep under trl==0.14.0, whose DPOConfig
    calls it use_num_logits_to_keep: trl 0.15 added the new name and 0.29 removes it. The error says the pinned
    release has no such key yet, not that it was removed from it. With trl==0.16.0, which has it, the same key is a
    warning about the 0.29 upgrade."""
    from corpus_layout import lay_out

    config = f"{HICUPID}/configs__train_dpo.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=HICUPID) / config], LintOptions()).files[0].findings
    keep = next(f for f in found if f.key == "use_logits_to_keep")
    assert (keep.code, keep.severity) == ("SP408", "error")
    assert "has no 'use_logits_to_keep' yet: trl 0.15 added it, and trl 0.29 removes it again" in keep.message
    assert "every release" not in keep.message
    tree = lay_out(tmp_path / "newer", only=HICUPID)
    requirements = tree.root / HICUPID / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("trl==0.14.0", "trl==0.16.0"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    keep = next(f for f in found if f.key == "use_logits_to_keep")
    assert keep.severity == "warning" and "it breaks on that upgrade" in keep.message


COLLECT = "hunwenpinghao__agent_data_collect"
CATALOG = "basalam__product-catalog-generator"
TUCANO = "Nkluge-correa__Tucano"
DFT = "PenGuln__DFT"


def test_keys_a_script_strips_by_prefix_never_reach_the_parser(tmp_path):
    """hunwenpinghao/agent_data_collect's fine_tune_qwen.py drops every key starting with '_' (`{k: v for k, v in
    config.items() if not k.startswith('_')}`) before parser.parse_dict, so the JSON's _description / _usage notes
    are no SP438. Its CustomTrainingArguments re-declares overwrite_output_dir, which neither the Trainer nor the
    project reads: a note, not an upgrade warning. Without the filter, the '_' keys are SP438 warnings again."""
    from corpus_layout import lay_out

    config = f"{COLLECT}/configs__train_config_deepspeed.json"
    found = lint_paths([lay_out(tmp_path / "published", only=COLLECT) / config], LintOptions()).files[0].findings
    assert not [f for f in found if f.severity in ("warning", "error")]
    overwrite = next(f for f in found if f.key == "overwrite_output_dir")
    assert overwrite.code == "SP407" and "neither the Trainer nor the project's code reads it" in overwrite.message
    tree = lay_out(tmp_path / "unfiltered", only=COLLECT)
    script = tree.root / COLLECT / "fine_tune_qwen.py"
    script.write_text(script.read_text().replace(" if not k.startswith('_')}", "}"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert {f.key for f in found if f.code == "SP438"} >= {"_description", "_usage"}


def test_a_training_arguments_subclass_init_declares_its_own_keys(tmp_path):
    """basalam/product-catalog-generator's SFTTrainArguments(TrainingArguments) takes project_name, padding_side
    and max_seq_length as __init__ parameters and hands TrainingArguments only the rest, so they are the project's
    keys (notes), while evaluation_strategy, which goes on to TrainingArguments, stays an SP402 warning. With the
    parameter gone from __init__, project_name is an unknown key again."""
    from corpus_layout import lay_out

    config = f"{CATALOG}/src__train__v1.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=CATALOG) / config], LintOptions()).files[0].findings
    assert [(f.code, f.key) for f in found if f.severity in ("warning", "error")] == [("SP402", "evaluation_strategy")]
    assert next(f for f in found if f.key == "project_name").severity == "info"
    tree = lay_out(tmp_path / "plain", only=CATALOG)
    arguments = tree.root / CATALOG / "src" / "train" / "arguments" / "sft_arguments.py"
    arguments.write_text(arguments.read_text().replace('project_name: str = "Llama2-7b-entity-attr",', ""))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert "project_name" in {f.key for f in found if f.severity == "warning"}


def test_a_parser_over_other_classes_leaves_an_own_dataclass_schema_alone(tmp_path):
    """Nkluge-correa/Tucano's specs-tucano-sft.yml fills the project's own plain dataclass, specifications.
    TrainingArguments(**kwargs), for a hand-written torch loop. dpo-tucano.py's TrlParser parses (ScriptArguments,
    DPOConfig, ModelConfig), none of them that class, so the file is the project's own schema, not TRL. Given a
    parser over the project's class, it is TRL's again."""
    from corpus_layout import lay_out

    config = f"{TUCANO}/specs-tucano-sft.yml"
    report = lint_paths([lay_out(tmp_path / "published", only=TUCANO) / config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    tree = lay_out(tmp_path / "parsed", only=TUCANO)
    script = tree.root / TUCANO / "dpo-tucano.py"
    script.write_text(script.read_text().replace("TrlParser((ScriptArguments, DPOConfig, ModelConfig))",
                                                 "TrlParser((ScriptArguments, DPOConfig, TrainingArguments))"))
    assert lint_paths([tree / config], LintOptions()).files[0].dialect == "trl"


def test_handbook_model_arguments_and_a_conda_file_of_its_own_name(tmp_path):
    """PenGuln/DFT pins trl==0.11.4 and transformers==4.45.2 in dft.yml, a conda environment file under its own
    name, and run_dft.py parses the recipe with H4ArgumentParser((ModelArguments, DataArguments, DFTConfig)),
    ModelArguments being the installed alignment-handbook's. torch_dtype is that class's field, a note. With
    dft.yml gone (nothing pinned), the handbook's ModelArguments still keeps TRL's ModelConfig rename away."""
    from corpus_layout import lay_out

    config = f"{DFT}/recipes__dft__mistral_base_dft.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=DFT) / config], LintOptions()).files[0]
    assert "dft.yml:137" in next(f for f in report.findings if f.key == "warmup_ratio").message
    assert next(f for f in report.findings if f.key == "torch_dtype").severity == "info"
    tree = lay_out(tmp_path / "unpinned", only=DFT)
    (tree.root / DFT / "dft.yml").unlink()
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    dtype = next(f for f in found if f.key == "torch_dtype")
    # the handbook before its rewrite, which run_dft.py's H4ArgumentParser import needs, declares it
    assert dtype.severity == "info" and "alignment-handbook's own" in dtype.message
    assert "H4ArgumentParser" in dtype.message
