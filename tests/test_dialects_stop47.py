"""How a file's reader decides its dialect, on real files gathered in stop 47: a Hydra primary config whose keys
the project composes and reads itself, and an ms-swift argument file that names no run kind. Each test also shows
the reading the file would get without the evidence that decides it."""

from __future__ import annotations

from seqprof.config import dialects
from seqprof.config.read import read_plan

ATLAS = "Arc-Computer__ATLAS"
MEDICAL = "maitagorri__medical-modality-expert"


def test_a_hydra_primary_config_is_read_by_the_project(tmp_path):
    """Arc-Computer/ATLAS's configs/train.yaml opens with a defaults list (model/data/trainer/run groups) under
    `@hydra.main(config_path="configs", config_name="train")`; its top-level keys (save_strategy, output_dir,
    report_to) reach the project's own GRPOConfig through `${...}` interpolations in configs/trainer/base.yaml."""
    from corpus_layout import lay_out

    tree = lay_out(tmp_path, only=ATLAS)
    config = tree / f"{ATLAS}/configs__train.yaml"
    plan = read_plan(config)
    assert plan.dialect == "unknown"
    # a project that spreads the whole composed config into a TRL class hands the top-level keys to TRL
    script = tree / f"{ATLAS}/train.py"
    script.write_text(script.read_text() + "\nargs = GRPOConfig(**OmegaConf.to_container(cfg))\n")
    assert read_plan(config).dialect == "trl"


def test_a_group_option_beside_the_primary_config_is_left_to_the_group_rule(tmp_path):
    """configs/trainer/base.yaml is a group option (no defaults list of its own that makes it primary): the older
    rule for group options (seqprof.config.dialects.own_schema.hydra_config) reads it, as before."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=ATLAS) / f"{ATLAS}/configs__trainer__base.yaml"
    assert read_plan(config).dialect == "unknown"


def test_ms_swift_model_and_lower_case_model_type_make_an_ms_swift_file(tmp_path):
    """maitagorri/medical-modality-expert's QLoRA config is `swift sft`'s (model, model_type: qwen3_vl,
    val_dataset, target_modules) and names no train_type (ms-swift's default is lora). LLaMA-Factory's key list
    (dataset, output_dir, lora_rank) would call four of its keys unknown."""
    import yaml
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=MEDICAL) / f"{MEDICAL}/configs__sft_qwen3_vl_2b.yaml"
    data = yaml.safe_load(config.read_text())
    assert dialects.ms_swift_keys(data) == ["model", "model_type"]
    plan = read_plan(config)
    assert plan.dialect == "unknown" and not plan.diagnostics
    # axolotl names a transformers class as model_type: no ms-swift sign
    data["model_type"] = "AutoModelForCausalLM"
    assert dialects.ms_swift_keys(data) == []
    config.write_text(config.read_text().replace("model_type: qwen3_vl", "model_type: AutoModelForCausalLM", 1))
    assert read_plan(config).dialect == "llamafactory"


def test_axolotl_s_kd_plugin_with_kd_trainer_trains_a_distillation(tmp_path):
    """alan-turing-institute/model-merging's crime_gemma_kd.yaml loads `axolotl.integrations.kd.KDPlugin` and sets
    kd_trainer: true, so KDPlugin.get_trainer_cls hands axolotl AxolotlKDTrainer (integrations/kd/__init__.py);
    without the plugin nothing reads kd_trainer and the run is plain SFT."""
    from corpus_layout import lay_out

    folder = "alan-turing-institute__model-merging"
    config = lay_out(tmp_path, only=folder) / f"{folder}/train__crime_gemma_kd.yaml"
    assert read_plan(config).setting("trainer").value == "distill"
    text = config.read_text()
    config.write_text(text.replace("axolotl.integrations.kd.KDPlugin", "axolotl.integrations.liger.LigerPlugin", 1))
    assert "KDPlugin" not in config.read_text()
    assert read_plan(config).setting("trainer").value == "sft"


def test_a_drafter_config_of_the_project_s_own_schema_is_not_specforge_s(tmp_path):
    """deepinfra/TorchSpec's DFlash config shares SpecForge's model.target_model_path, but TorchSpec merges it into
    its own `OmegaConf.structured(Config)` (torchspec/config/train_config.py declares target_model_path,
    micro_batch_size, prefetch_depth ...). Read as SpecForge's, 24 of its keys were called unknown."""
    from corpus_layout import lay_out

    folder = "deepinfra__TorchSpec"
    name = f"{folder}/configs__sglang_qwen36_35b_dflash.yaml"
    assert read_plan(lay_out(tmp_path / "whole", only=folder) / name).dialect == "unknown"
    without = lay_out(tmp_path / "without_schema", only=folder)  # a fresh root: declarations are cached per root
    (without / f"{folder}/torchspec__config__train_config.py").unlink()
    assert read_plan(without / name).dialect == "specforge"


def test_a_trl_parser_in_the_config_s_own_branch_decides_its_dialect(tmp_path):
    """aws-samples' HyperPod option-3-dpo/args.yaml holds TrainingArguments keys and the project's own, and its folder's
    scripts/train.py parses it with `TrlParser((ScriptArguments, DPOConfig))`; option-2's sibling train.py parses
    its own args.yaml with `TrlParser((ScriptArguments, TrainingArguments))`. The script in the config's own branch
    is the one that reads it, and DPOConfig makes it a trl file."""
    from corpus_layout import lay_out

    folder = "aws-samples__generative-ai-on-amazon-sagemaker"
    option = ("workshops__distributed-training-deployment-on-sagemaker-ai__solution-3-sagemaker-hyperpod-k8"
              "__option-3-dpo")
    tree = lay_out(tmp_path / "whole", only=folder)
    assert read_plan(tree / f"{folder}/{option}__args.yaml").dialect == "trl"
    without = lay_out(tmp_path / "without_own_script", only=folder)
    (without / f"{folder}/{option}__scripts__train.py").unlink()
    assert read_plan(without / f"{folder}/{option}__args.yaml").dialect == "hf"
