"""How a file's reader decides its dialect, on real files gathered in stop 46: an ms-swift argument file, a JSON
that HfArgumentParser parses into TRL's DPOConfig, one a script spreads whole into TRL's SFTConfig, a DeepSpeed
file's mesh keys, an accelerate file of two keys, and torchtune's generate config. Each test also shows the
reading the file would get without the evidence that decides it."""

from __future__ import annotations

import json
from pathlib import Path

from seqprof.config import dialects
from seqprof.config.read import read_plan


def _kinds(config: Path) -> dict[str, str]:
    return {d.key: d.kind for d in read_plan(config).diagnostics}


def test_an_ms_swift_argument_file_is_no_framework_seqprof_checks(tmp_path):
    """fanqiNO1/mllm-defake's sft config holds ms-swift 3.2.1's arguments (train_type, model, freeze_vit ...), which
    its sft.py hands to SwiftSft; LLaMA-Factory's key list (dataset, lora_rank) would call eight of them unknown."""
    import yaml
    from corpus_layout import lay_out

    folder = "fanqiNO1__mllm-defake"
    config = lay_out(tmp_path, only=folder) / f"{folder}/mllm_defake__finetune__configs__sft_qwen2_5_vl_3b_lora.yml"
    data = yaml.safe_load(config.read_text())
    assert dialects.ms_swift_keys(data) == ["train_type", "model"]
    plan = read_plan(config)
    assert plan.dialect == "unknown" and not plan.diagnostics
    without = {k: v for k, v in data.items() if k != "train_type"}
    assert dialects.ms_swift_keys(without) == [] and dialects.detect(without) == "llamafactory"
    assert dialects.ms_swift_keys({**data, "stage": "sft"}) == []  # a LLaMA-Factory stage is LLaMA-Factory's


def test_ms_swift_caps_the_trl_and_transformers_it_is_installed_beside(tmp_path):
    """mllm-defake's pyproject extra pins ms-swift==3.2.1, whose metadata requires trl<0.17 and transformers<4.51:
    its GRPO recipe's torch_dtype and warmup_ratio still work there, and break only on an upgrade."""
    from corpus_layout import lay_out

    folder = "fanqiNO1__mllm-defake"
    config = lay_out(tmp_path, only=folder) / f"{folder}/mllm_defake__finetune__configs__grpo_qwen2_5_vl_3b_lora.yml"
    found = {d.key: d for d in read_plan(config).diagnostics if d.key in ("torch_dtype", "warmup_ratio")}
    assert {k: d.kind for k, d in found.items()} == {"torch_dtype": "deprecated_key", "warmup_ratio": "renamed_key"}
    assert all("what ms-swift 3.2.1 requires" in d.message and "breaks on that upgrade" in d.message
               for d in found.values())
    assert {d.key: d.kind for d in read_plan(config, versions="trl==1.16.0,transformers==5.25.0").diagnostics
            if d.key == "torch_dtype"} == {"torch_dtype": "removed_key"}


def test_a_json_parsed_into_trl_s_dpo_config_is_a_trl_file(tmp_path):
    """MangoFF/ACT's dpo_train.py parses config/dpo.json with HfArgumentParser((Arguments, DPOConfig)), DPOConfig
    imported from trl.trainer.dpo_config: gradient_checkpointing is TRL's own field there, and max_prompt_length,
    which TRL 0.29 removed, is reported (parse_json_file refuses it there)."""
    from corpus_layout import lay_out

    folder = "MangoFF__ACT"
    config = lay_out(tmp_path, only=folder) / f"{folder}/config__dpo.json"
    plan = read_plan(config)
    assert plan.dialect == "trl" and "act/dpo_train.py:73" in plan.dialect_source
    kinds = _kinds(config)
    assert kinds["max_prompt_length"] == "deprecated_key" and "gradient_checkpointing" not in kinds  # SP403
    assert read_plan(config, dialect="hf").dialect == "hf"
    assert "gradient_checkpointing" in _kinds_as(config, "hf")


def _kinds_as(config: Path, dialect: str) -> dict[str, str]:
    return {d.key: d.kind for d in read_plan(config, dialect=dialect).diagnostics}


def test_a_json_spread_whole_into_trl_s_sft_config_is_a_trl_file(tmp_path):
    """prakashchhipa/AskAnythingInCharts' train_vlm_sft.py does `sft_dict = json.load(f)` and
    `SFTConfig(**sft_dict, ...)`; its launch line runs it with configs/sft_config.json, and sft_config_best.json,
    which no launch line names, is the same script's (a sibling of the same kind)."""
    from corpus_layout import lay_out

    folder = "prakashchhipa__AskAnythingInCharts-Qwen2.5-7B"
    tree = lay_out(tmp_path, only=folder)
    for name in ("configs__sft_config.json", "configs__sft_config_best.json"):
        plan = read_plan(tree / f"{folder}/{name}")
        assert plan.dialect == "trl" and "SFTConfig at src/train_vlm_sft.py:334" in plan.dialect_source
    script = tree / f"{folder}/src__train_vlm_sft.py"
    script.write_text(script.read_text().replace("SFTConfig(**sft_dict,", "SFTConfig(**{},"))
    from seqprof.config.project_calls import _spread_in

    _spread_in.cache_clear()
    assert read_plan(tree / f"{folder}/configs__sft_config_best.json").dialect == "hf"


def test_deepspeed_s_mesh_keys_are_known(tmp_path):
    """sudy-super/coencoder_utils' ds_config_mn.json sets data_parallel_size, which deepspeed.initialize reads
    beside sequence_parallel_size for its data/sequence-parallel mesh (deepspeed/__init__.py, 0.15 to 0.19.8)."""
    from corpus_layout import lay_out

    folder = "sudy-super__coencoder_utils"
    tree = lay_out(tmp_path, only=folder)
    config = next(p for p in (tree.root / folder).rglob("ds_config_mn.json"))
    assert "data_parallel_size" in json.loads(config.read_text())
    kinds = _kinds(config)
    assert "data_parallel_size" not in kinds and kinds.get("communication_options") == "unknown_key"


def test_an_accelerate_file_of_two_keys_is_accelerate_s(tmp_path):
    """davmels/ActiveUltraFeedback's multi_node.yaml holds only distributed_type: MULTI_GPU and mixed_precision: bf16
    (accelerate fills compute_environment in); a distributed_type no accelerate release has is not enough."""
    from corpus_layout import lay_out

    folder = "davmels__ActiveUltraFeedback"
    config = lay_out(tmp_path, only=folder) / f"{folder}/configs__accelerate__multi_node.yaml"
    assert read_plan(config).dialect == "accelerate"
    assert dialects.detect({"distributed_type": "ring", "mixed_precision": "bf16"}) != "accelerate"


def test_torchtune_s_generate_config_trains_nothing(tmp_path):
    """myeongkyunkang/medcap's custom_generation_config.yaml (prompt, max_new_tokens; no optimizer, no loss) runs
    recipes/generate.py; its full fine-tune configs stay sft."""
    from corpus_layout import lay_out

    folder = "myeongkyunkang__medcap"
    tree = lay_out(tmp_path, only=folder)
    generate = read_plan(tree / f"{folder}/recipes__configs__custom_generation_config.yaml")
    assert generate.settings.get("trainer") is None
    assert read_plan(tree / f"{folder}/recipes__configs__llama3_1__8B_full.yaml").settings["trainer"].value == "sft"
