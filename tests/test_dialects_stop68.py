"""Readings settled in stop 68, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _lint(config: Path):
    return lint_paths([config], LintOptions()).files[0]


def _findings(config: Path, key: str, code: str):
    return [f for f in _lint(config).findings if f.key == key and f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


LINALG = "atomwalk12__linalg-zero"


def test_uv_groups_declared_conflicting_are_separate_environments(tmp_path):
    """pyproject.toml declares its data-gen, grpo and sft groups conflicting ([tool.uv] conflicts): each is its own
    environment, installed by `uv sync --group X` (transformers 4.55.2, >=4.53.2, 4.56.2). The SFT recipes under
    config/sft/ run in the sft group, whose transformers 4.56.2 still has overwrite_output_dir: an upgrade warning,
    not an error. Merged into one set of pins, the groups contradict each other and every release is possible."""
    name = f"{LINALG}/linalg_zero__config__sft__qwen2.5-3B__instruct.yaml"
    found = _findings(_fresh(tmp_path, LINALG) / name, "overwrite_output_dir", "SP403")
    assert [(f.severity, f.line) for f in found] == [("warning", 66)]
    assert "transformers==4.56.2 (pyproject.toml:" in found[0].message and "4.55.2" not in found[0].message

    # a command line naming the config with another group runs it there
    tree = _fresh(tmp_path, LINALG)
    _edit(tree / f"{LINALG}/Makefile", "@uv run python linalg_zero/sft.py --config $(SFT_CONFIG)",
          "@uv run --group data-gen python linalg_zero/sft_train.py --config "
          "linalg_zero/config/sft/qwen2.5-3B/instruct.yaml")
    found = _findings(tree / name, "overwrite_output_dir", "SP403")
    assert found and "transformers==4.55.2" in found[0].message and "4.56.2" not in found[0].message

    # groups that do not conflict are one environment: their pins are merged as before
    tree = _fresh(tmp_path, LINALG)
    _edit(tree / f"{LINALG}/pyproject.toml", '{ group = "sft" },', "")
    assert not _findings(tree / name, "overwrite_output_dir", "SP403")
    assert _findings(tree / name, "overwrite_output_dir", "SP408")


SHIFT = "Meaquadddd__DPO-Shift"


def test_a_project_importing_the_old_handbook_parser_runs_the_old_handbook(tmp_path):
    """The SFT recipe (dataset_mixer) runs under the alignment-handbook that run_dposhift.py imports
    H4ArgumentParser from, which only the handbook before its rewrite onto TRL's classes has: its own
    ModelArguments declares torch_dtype, so TRL's rename of ModelConfig.torch_dtype does not reach the file."""
    name = f"{SHIFT}/recipes__llama-3-8b__sft__config_full.yaml"
    found = _findings(_fresh(tmp_path, SHIFT) / name, "torch_dtype", "SP407")
    assert found and "run_dposhift.py:27" in found[0].message

    tree = _fresh(tmp_path, SHIFT)
    _edit(tree / f"{SHIFT}/scripts__run_dposhift.py", "    H4ArgumentParser,\n", "")
    assert _findings(tree / name, "torch_dtype", "SP403")


R1 = "tienanh28122000__R1"


def test_grpo_eval_batch_against_the_processes_the_launcher_starts(tmp_path):
    """train.sh runs config_r1.yaml on 6 processes; it evaluates (eval_strategy: steps), and its eval batch 8 x 6 =
    48 holds three groups of num_generations 16. At 4 per device (the repository's other recipes) it is 24, which
    GRPO's eval check refuses before the run starts."""
    name = f"{R1}/recipes__config_r1.yaml"
    assert not _findings(_fresh(tmp_path, R1) / name, "per_device_eval_batch_size", "SP460")

    tree = _fresh(tmp_path, R1)
    _edit(tree / name, "per_device_eval_batch_size: 8", "per_device_eval_batch_size: 4")
    found = _findings(tree / name, "per_device_eval_batch_size", "SP460")
    assert [(f.severity, f.line) for f in found] == [("error", 24)]
    assert "= 24" in found[0].message and "train.sh:3" in found[0].message

    # a run that never evaluates has no eval batch to check
    _edit(tree / name, "eval_strategy: steps", "eval_strategy: 'no'")
    assert not _findings(tree / name, "per_device_eval_batch_size", "SP460")


REDESIGNED = "nbroad1881__redesigned-train"


def test_a_hydra_group_spread_whole_into_training_arguments(tmp_path):
    """conf/training_args/default.yaml is the `training_args` group of run.py's Hydra config, and run.py spreads it
    whole: `TrainingArguments(**(dict(cfg.training_args)))`. Each key reaches TrainingArguments under its own name,
    so evaluation_strategy (removed in transformers 4.51; transformers is unpinned) breaks the run."""
    name = f"{REDESIGNED}/conf__training_args__default.yaml"
    found = _findings(_fresh(tmp_path, REDESIGNED) / name, "evaluation_strategy", "SP408")
    assert [(f.severity, f.line) for f in found] == [("error", 64)]
    assert "run.py:39" in found[0].message
    assert _lint(_fresh(tmp_path, REDESIGNED) / name).dialect == "unknown"

    # a script that builds TrainingArguments from its own fields never hands the group on
    tree = _fresh(tmp_path, REDESIGNED)
    _edit(tree / f"{REDESIGNED}/run.py", "TrainingArguments(**(dict(cfg.training_args)))",
          "TrainingArguments(output_dir=cfg.training_args.output_dir)")
    assert not _findings(tree / name, "evaluation_strategy", "SP408")


MASHUP = "2son1a__mashup-learning"


def test_an_axolotl_fragment_without_base_model(tmp_path):
    """configs/train/lora_default.yaml holds no base_model: src/mashup/pipeline.py merges it with a task and a model
    file and scripts/train.py runs the result through axolotl (axolotl==0.9.1). Its keys are axolotl's alone
    (sequence_len, sample_packing, lora_model_dir ...), so it is read as axolotl, and main_process_port, which no
    axolotl 0.9.1 field declares, is reported."""
    name = f"{MASHUP}/configs__train__lora_default.yaml"
    result = _lint(_fresh(tmp_path, MASHUP) / name)
    assert result.dialect == "axolotl"
    assert [f.line for f in result.findings if f.key == "main_process_port" and f.code == "SP401"] == [23]

    # keys axolotl does not know make it some other tool's file
    tree = _fresh(tmp_path, MASHUP)
    _edit(tree / name, "adapter: lora\n", "adapter: lora\nmerge_recipe: ties\nrouter_temperature: 0.5\n")
    assert _lint(tree / name).dialect != "axolotl"


SECALIGN = "0315jaewon__SecAlign_cont"


def test_torchtune_async_grpo_keys_are_no_near_miss_for_dpo(tmp_path):
    """helpers/llama3.1_8B_lora.yaml (a DPO recipe's config) keeps a leftover `training_mode:`. Only torchtune's
    async GRPO workers read a `training` section, so it is no misspelling of one: a note, not a did-you-mean."""
    name = f"{SECALIGN}/helpers__llama3.1_8B_lora.yaml"
    found = [f for f in _lint(_fresh(tmp_path, SECALIGN) / name).findings if f.key == "training_mode"]
    assert [(f.code, f.severity) for f in found] == [("SP407", "info")]

    # a misspelling of a key DPO recipes read stays a warning
    tree = _fresh(tmp_path, SECALIGN)
    _edit(tree / name, "training_mode:", "epochz: 1\ntraining_mode:")
    found = [f for f in _lint(tree / name).findings if f.key == "epochz" and f.code == "SP401"]
    assert [f.severity for f in found] == ["warning"] and "'epochs'" in found[0].message


EFTIMIOS = "eftimios__gradients-text-repo"


def test_pins_in_a_dockerfiles_folder(tmp_path):
    """dockerfiles/standalone-text-trainer.dockerfile installs axolotl==0.9.1, whose schema still reads
    flash_attention as a plain field: not the rename of axolotl 0.17 on, which seqprof would assume unpinned."""
    name = f"{EFTIMIOS}/scripts__core__config__base.yml"
    tree = _fresh(tmp_path, EFTIMIOS)
    assert not _findings(tree / name, "flash_attention", "SP402")
    assert _findings(tree / name, "flash_attention", "SP429")

    # the same Dockerfile in a folder that is no environment folder pins nothing for the configs
    tree = _fresh(tmp_path, EFTIMIOS)
    docker = (tree / f"{EFTIMIOS}/dockerfiles__standalone-text-trainer.dockerfile").parent
    docker.rename(docker.with_name("misc"))
    assert _findings(tree / name, "flash_attention", "SP402")


SURVEY = "skrsteski__survey-simulations"


def test_axolotl_legacy_message_field_beside_the_same_mapping(tmp_path):
    """A dataset entry sets message_field_content: content and message_property_mappings: {content: content}:
    axolotl's handle_legacy_message_fields_logic still logs the deprecation and drops the legacy field, which adds
    nothing. A mapping that differs is a ValueError instead, which is not a deprecation."""
    name = f"{SURVEY}/datasets__atp2__configs__finetune_qwen.yaml"
    found = _findings(_fresh(tmp_path, SURVEY) / name, "datasets.0.message_field_content", "SP403")
    assert [(f.severity, f.line) for f in found] == [("warning", 18)]
    assert "already maps content" in found[0].message and "remove" in found[0].fix

    tree = _fresh(tmp_path, SURVEY)
    _edit(tree / name, "      content: content", "      content: text")
    assert not _findings(tree / name, "datasets.0.message_field_content", "SP403")


UTENSIL = "utensil__llm-playground"


def test_axolotl_runpod_images_are_axolotl_images(tmp_path):
    """The project runs its configs in winglian/axolotl-runpod:main-py3.10-cu118-2.0.1 (scripts/entry/prepare_ax.sh,
    helper/setup-runner.py), a main build of mid-2023 that seqprof cannot date: no release's rename or removal is
    claimed (xformers_attention was the live key then, not axolotl 0.17's deprecated alias)."""
    name = f"{UTENSIL}/notebooks__axolotl__config__falcon__ft.yml"
    assert not [f for f in _lint(_fresh(tmp_path, UTENSIL) / name).findings
                if f.key == "xformers_attention" and f.severity != "info"]

    # an image name seqprof does not know leaves axolotl unpinned: the newest release is assumed
    tree = _fresh(tmp_path, UTENSIL)
    for flat in ("helper__setup-runner.py", "scripts__entry__ax.sh", "scripts__entry__ax_lite.sh",
                 "scripts__entry__ax_lite_train.sh", "scripts__entry__prepare_ax.sh"):
        path = tree / f"{UTENSIL}/{flat}"
        path.write_text(path.read_text().replace("axolotl-runpod", "trainer-runpod"))
    assert _findings(tree / name, "xformers_attention", "SP402")


RIYAAAP = "riyaaap__patient-friendly-pathology-reports"


def test_half_a_file_unknown_to_axolotl_is_not_axolotl(tmp_path):
    """configs/lora_phase_a.yaml sets base_model and output_dir beside its own lora: and training: sections, which
    scripts/train_phase_a.py reads with yaml.safe_load: two of its four keys axolotl does not know."""
    name = f"{RIYAAAP}/configs__lora_phase_a.yaml"
    assert _lint(_fresh(tmp_path, RIYAAAP) / name).dialect == "unknown"


DIWOP = "diwop__begleit-app-training"


def test_an_axolotl_fragment_beside_the_configs_merged_over_it(tmp_path):
    """config/base.yml (no base_model) is merged under config/train-gemma4.yml by src-train/train.py and run through
    axolotl: read as axolotl because axolotl configs sit beside it. Its `adapter: qlora` without load_in_4bit is no
    finding: train-gemma4.yml, merged over it, says adapter: lora. A fragment's settings are not judged alone."""
    name = f"{DIWOP}/config__base.yml"
    result = _lint(_fresh(tmp_path, DIWOP) / name)
    assert result.dialect == "axolotl"
    assert not [f for f in result.findings if f.code == "SP411"]

    # the same keys with a base_model are a whole config, judged as one
    tree = _fresh(tmp_path, DIWOP)
    _edit(tree / name, "adapter: qlora", "base_model: google/gemma-2-2b\nadapter: qlora")
    assert [f.code for f in _lint(tree / name).findings if f.code == "SP411"] == ["SP411"]


KNIGHT = "KnightZhang625__llm_relevant_study"


def test_the_script_whose_framework_classes_take_the_keys_parses_them(tmp_path):
    """rl/grpo/grpo-qwen-2.5-3b-deepseek-r1-countdown.yaml is parsed by rl/grpo/grpo_distributed.py's
    TrlParser((ModelConfig, ScriptArguments, GRPOConfig)), not by LoRA/.../config.py, whose own ModelConfigSelf
    declares more of its keys (torch_dtype, model_name_or_path) but whose SFTConfig has no beta or num_generations.
    TRL's ModelConfig reads torch_dtype, which TRL 0.27 removed (nothing pins trl)."""
    name = f"{KNIGHT}/rl__grpo__grpo-qwen-2.5-3b-deepseek-r1-countdown.yaml"
    tree = _fresh(tmp_path, KNIGHT)
    found = _findings(tree / name, "torch_dtype", "SP403")
    assert [(f.severity, f.line) for f in found] == [("warning", 5)]
    # the DPO recipe beside rl/dpo/dpo_distributed/config.py's HfArgumentParser((DatasetArgs, ModelConfig, DPOConfig)):
    # the classes that script fills are chosen by all the file's keys, not only the ones a finding is on
    dpo = f"{KNIGHT}/rl__dpo__dpo_distributed__configs__dpo_qwen_2.5_0.5b_instruct_lora_train.yaml"
    assert [f.line for f in _findings(tree / dpo, "torch_dtype", "SP403")] == [9]

    # the same calls over classes of a local module say nothing of their fields: the LoRA script's class wins
    tree = _fresh(tmp_path, KNIGHT)
    _edit(tree / f"{KNIGHT}/rl__grpo__grpo_distributed.py",
          "from trl import GRPOConfig, GRPOTrainer, get_peft_config, ModelConfig, TrlParser",
          "from trl import GRPOTrainer, get_peft_config, TrlParser\nfrom local_args import GRPOConfig, ModelConfig")
    _edit(tree / f"{KNIGHT}/rl__dpo__dpo_distributed__config.py", "from trl import DPOConfig, ModelConfig",
          "from local_args import DPOConfig, ModelConfig")
    assert not _findings(tree / name, "torch_dtype", "SP403")
    assert _findings(tree / name, "torch_dtype", "SP407")
