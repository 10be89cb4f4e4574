"""Dialects: every real config read and recognised, canonical settings at the right key and line.

Expected values and lines come from the files themselves (PyYAML's safe_load and a text scan),
not from the reader; framework defaults are checked to carry their documented source.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from seqprof.config import dialects
from seqprof.config.read import detect_dialect, read_plan
from seqprof.errors import SeqprofError

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "tests" / "data" / "configs"  # the real configs these tests read, copied exactly (README there)
CORPUS = REPO.parent / "shared" / "configs"  # every shared config: corpus-wide tests skip without it
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/configs (the whole corpus) not beside the checkout")
STORY = CONFIGS / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def key_line(text: str, key: str, after: int = 0) -> int:
    """1-based line of the first ``key:`` after line *after* (a plain text scan)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*:")
    for i, line in enumerate(text.splitlines(), 1):
        if i > after and pattern.match(line):
            return i
    raise AssertionError(f"{key} not found")


def nested_line(text: str, dotted: str) -> int:
    line = 0
    for part in dotted.split("."):
        line = key_line(text, part, line)
    return line


def expected_dialect(rel: str) -> str:
    """The framework each folder of shared/configs holds (its README), and the odd files out."""
    if rel.startswith("auto-antislop/"):
        return "auto_antislop"
    if rel.startswith("axolotl/examples/cloud/"):
        return "unknown"  # axolotl's cloud launcher settings (provider, gpu_count), not a training config
    if rel.startswith("axolotl/"):
        return "axolotl"
    if rel.startswith("llamafactory/examples/v1/"):
        return "llamafactory_v1"
    if "/accelerate/" in rel:
        return "accelerate"
    if rel.startswith("llamafactory/examples/deepspeed/"):
        return "deepspeed"
    if rel == "llamafactory/examples/extras/multi_tokens/tokens_cfg.yaml":
        return "unknown"  # a token -> description table for new_special_tokens_config
    if rel.startswith("llamafactory/"):
        return "llamafactory"
    if rel.startswith("specforge/"):
        return "specforge"
    if rel.startswith("trl/"):
        return "trl"
    raise AssertionError(rel)


# unknown keys the real configs do contain, each checked by hand against the framework's schema
KNOWN_UNKNOWN = {
    ("axolotl/examples/archived/cerebras/btlm-ft.yml", "adam_eps", "adam_epsilon"),  # schema: adam_epsilon
    ("axolotl/examples/llama-2/gptq-lora.yml", "adam_eps", "adam_epsilon"),
    ("axolotl/examples/falcon-h1/falcon-h1-1b-qlora-cp.yaml", "context_parapllel_size", "context_parallel_size"),
    ("axolotl/examples/llama-3/lora-1b-sample-packing-sequentially.yml", "test_value", None),
    # fsdp_config keys FSDPConfig (utils/schemas/fsdp.py, axolotl 0.13+) lacks: pydantic drops them
    ("axolotl/examples/archived/dbrx/16bit-lora.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/archived/dbrx/8bit-lora.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/deepseek-v2/fft-fsdp-16b.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/deepseek-v2/fft-fsdp-16b.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/deepseek-v2/qlora-fsdp-2_5.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/deepseek-v2/qlora-fsdp-2_5.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/expert_parallel/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/glm47-flash/lora_fsdp.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/glm47-flash/qlora_fsdp.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/jamba/qlora_fsdp_large.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/jamba/qlora_fsdp_large.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-2/qlora-fsdp.yml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-3/3b-fp8-fsdp2.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/llama-3/3b-qat-fsdp2.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-3/fft-8b-liger-fsdp.yaml", "fsdp_config.fsdp_backward_prefetch", None),
    ("axolotl/examples/llama-3/fft-8b-liger-fsdp.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-3/fft-8b-liger-fsdp.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-3/qlora-fsdp-405b.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-3/qlora-fsdp-405b.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-3/qlora-fsdp-70b.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-3/qlora-fsdp-70b.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/maverick-qlora-fsdp1.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/maverick-qlora-fsdp1.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/scout-qlora-fsdp1.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/scout-qlora-fsdp1.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/scout-vision-qlora-fsdp.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/llama-4/do-no-use-fa2/scout-vision-qlora-fsdp.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-4/scout-qlora-flexattn-fsdp2.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/llama-4/scout-vision-qlora-fsdp2-flex.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/mistral/mistral-qlora-fsdp.yml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/mistral/mixtral/mixtral-8x22b-qlora-fsdp.yml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/mistral/mixtral/mixtral-qlora-fsdp.yml", "fsdp_config.fsdp_backward_prefetch", None),
    ("axolotl/examples/mistral/mixtral/mixtral-qlora-fsdp.yml", "fsdp_config.fsdp_forward_prefetch", None),
    ("axolotl/examples/mistral/mixtral/mixtral-qlora-fsdp.yml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/mistral/mixtral/mixtral-qlora-fsdp.yml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/phi/phi3-ft-fsdp.yml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/phi/phi3-ft-fsdp.yml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Gemma3-12B_baseline.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Gemma3-12B_qat.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Gemma3-12B_baseline.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Gemma3-12B_qat.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Gemma3-27B_baseline.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Gemma3-27B_qat.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Qwen2.5-72B_baseline.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Math-Qwen2.5-72B_qat.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Qwen2.5-72B_baseline.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qat_nvfp4/Qwen2.5-72B_qat.yml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qwen2/qlora-fsdp.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/qwen2/qlora-fsdp.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/qwen3.5/122b-a10b-moe-qlora-fsdp.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qwen3.5/27b-fft.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qwen3.5/27b-qlora-fsdp.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qwen3.5/35b-a3b-moe-qlora-fsdp.yaml", "fsdp_config.sharding_strategy", None),
    ("axolotl/examples/qwen3/8b-qat-fsdp2.yml", "fsdp_config.fsdp_sharding_strategy", None),
    ("axolotl/examples/qwen3/qlora-fsdp.yaml", "fsdp_config.fsdp_limit_all_gathers", None),
    ("axolotl/examples/qwen3/qlora-fsdp.yaml", "fsdp_config.fsdp_sharding_strategy", None),
    # no schema field: normalize_config sets the dtype from bf16 / fp16 (here `bf16: auto`, so no flag to suggest)
    ("axolotl/examples/ebft/llama-3b-ebft-strided-fft.yaml", "torch_dtype", None),
    # DeepSpeedConfig attribute names, not JSON keys it reads (those are comms_logger, tensorboard/wandb/...)
    ("llamafactory/examples/deepspeed/ds_z3_fp8_config.json", "comms_config", None),
    ("llamafactory/examples/deepspeed/ds_z3_fp8_config.json", "monitor_config", None),
}


def real_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


@pytest.fixture(scope="module")
def real_plans() -> dict[str, Any]:
    if not CORPUS.is_dir():
        pytest.skip("../shared/configs (the whole corpus) not beside the checkout")
    return {str(p.relative_to(CORPUS)): read_plan(p) for p in real_files()}


@needs_corpus
def test_every_real_config_is_read_and_its_dialect_detected(real_plans: dict[str, Any]) -> None:
    assert len(real_plans) > 400
    wrong = {rel: p.dialect for rel, p in real_plans.items() if p.dialect != expected_dialect(rel)}
    assert not wrong
    unknown = {(rel, d.key, d.suggestion) for rel, p in real_plans.items() for d in p.diagnostics
               if d.kind == "unknown_key"}
    assert unknown == KNOWN_UNKNOWN
    for plan in real_plans.values():
        if plan.dialect == "unknown":
            assert not plan.settings
        for d in plan.diagnostics:
            assert d.line >= 1 and d.file and d.message


def test_the_story_config() -> None:
    plan = read_plan(STORY)
    text = STORY.read_text()
    assert plan.dialect == "auto_antislop"
    s = plan.setting("max_seq_length")
    assert (s.value, s.key, s.line, s.stated) == (4000, "finetune_max_seq_length",
                                                 key_line(text, "finetune_max_seq_length"), True)
    assert s.file == str(STORY)
    assert plan.get("padding") == "max_length"
    assert "ftpo_collator" in plan.setting("padding").source
    assert plan.get("trainer") == "ftpo" and plan.setting("trainer").line == key_line(text, "finetune_mode")
    assert plan.setting("load_in_4bit").value is True and plan.setting("load_in_4bit").stated
    assert plan.get("micro_batch_size") == 1 and plan.get("gradient_accumulation_steps") == 16
    assert plan.setting("gradient_accumulation_steps").line == key_line(text, "finetune_gradient_accumulation_steps")
    assert plan.get("adapter") == "qlora" and plan.get("max_train_examples") == 12000
    assert not [d for d in plan.diagnostics if d.kind == "unknown_key"]


# config key -> canonical setting, per dialect; checked on every real file that states the key
MAPPINGS = {
    "axolotl": {"sequence_len": "max_seq_length", "micro_batch_size": "micro_batch_size",
                "gradient_accumulation_steps": "gradient_accumulation_steps", "num_epochs": "num_epochs",
                "lora_r": "lora_r", "base_model": "model", "excess_length_strategy": "overflow",
                "lora_dropout": "lora_dropout"},
    "llamafactory": {"cutoff_len": "max_seq_length", "per_device_train_batch_size": "micro_batch_size",
                     "gradient_accumulation_steps": "gradient_accumulation_steps",
                     "num_train_epochs": "num_epochs", "lora_rank": "lora_r", "model_name_or_path": "model",
                     "lora_dropout": "lora_dropout"},
    "llamafactory_v1": {"cutoff_len": "max_seq_length", "micro_batch_size": "micro_batch_size", "model": "model",
                        "peft_config.lora_dropout": "lora_dropout"},
    "specforge": {"data.max_length": "max_seq_length", "training.batch_size": "micro_batch_size",
                  "training.accumulation_steps": "gradient_accumulation_steps",
                  "training.num_epochs": "num_epochs", "model.target_model_path": "model",
                  "training.save_interval": "save_steps", "training.num_anchors": "num_anchors"},
    "auto_antislop": {"finetune_max_seq_length": "max_seq_length", "finetune_batch_size": "micro_batch_size",
                      "finetune_gradient_accumulation_steps": "gradient_accumulation_steps",
                      "finetune_lora_dropout": "lora_dropout"},
    "accelerate": {"num_processes": "world_size"},
}


def _dig(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


@needs_corpus
def test_key_settings_equal_what_each_file_says_at_its_line(real_plans: dict[str, Any]) -> None:
    checked = 0
    for rel, plan in real_plans.items():
        mapping = MAPPINGS.get(plan.dialect)
        if not mapping or plan.get("task") not in (None, "train", "launch"):
            continue
        text = (CORPUS / rel).read_text()
        raw = yaml.load(text, Loader=LOADER)
        for key, name in mapping.items():
            value = _dig(raw, key)
            if value is None:
                continue
            s = plan.setting(name)
            assert s is not None and s.stated, (rel, key)
            assert s.key == key and s.line == nested_line(text, key), (rel, key, s)
            assert s.value == value or (isinstance(value, str) and s.value == float(value)), (rel, key)
            checked += 1
    assert checked > 1000


@needs_corpus
def test_defaults_name_their_source_when_a_key_is_absent(real_plans: dict[str, Any]) -> None:
    for plan in real_plans.values():
        raw = plan.raw
        if plan.dialect == "axolotl":
            if raw.get("gradient_accumulation_steps") is None:
                s = plan.setting("gradient_accumulation_steps")
                assert (s.value, s.stated) == (1, False) and "training.py" in s.source
            if not raw.get("sample_packing") and not raw.get("pad_to_sequence_len") and not raw.get("batch_flattening"):
                assert plan.get("padding") == "longest" and "sample_packing" in plan.setting("padding").source
            if raw.get("save_steps") is None and raw.get("saves_per_epoch") is None and not raw.get("save_strategy"):
                assert plan.get("save_strategy") == "epoch"
        if plan.dialect == "llamafactory" and plan.get("task") == "train" and "per_device_train_batch_size" not in raw:
            assert plan.get("micro_batch_size") == 8 and "TrainingArguments" in plan.setting("micro_batch_size").source
        if plan.dialect == "specforge" and "save_interval" not in raw.get("training", {}):
            assert plan.get("save_steps") == 0 and not plan.setting("save_steps").stated


def _copy_with(tmp_path: Path, src: Path, old: str, new: str, name: str | None = None) -> Path:
    text = src.read_text()
    assert text.count(old) >= 1, old
    dst = tmp_path / (name or src.name)
    dst.write_text(text.replace(old, new, 1))
    return dst


@pytest.mark.parametrize("rel, old, new, key, suggestion", [
    ("axolotl/examples/llama-3/qlora-1b.yml", "sequence_len:", "sequence_lenght:", "sequence_lenght", "sequence_len"),
    ("llamafactory/examples/train_lora/qwen3_lora_sft.yaml", "cutoff_len:", "cuttoff_len:", "cuttoff_len",
     "cutoff_len"),
    ("auto-antislop/configs/gemma-3-4b-it.yaml", "finetune_batch_size:", "finetune_batchsize:",
     "finetune_batchsize", "finetune_batch_size"),
    ("specforge/examples/configs/qwen3-8b-dflash-online.yaml", "  batch_size: 4", "  bacth_size: 4",
     "training.bacth_size", "batch_size"),
    ("trl/examples/cli_configs/example_config.yaml", "learning_rate:", "learnig_rate:", "learnig_rate",
     "learning_rate"),
    ("llamafactory/examples/v1/train_lora/train_lora_sft.yaml", "micro_batch_size:", "micro_bach_size:",
     "micro_bach_size", "micro_batch_size"),
])
def test_misspelled_key_in_a_real_config_is_unknown_with_did_you_mean(
        tmp_path: Path, rel: str, old: str, new: str, key: str, suggestion: str) -> None:
    src = CONFIGS / rel
    original = read_plan(src)
    copy = _copy_with(tmp_path, src, old, new)
    plan = read_plan(copy)
    assert plan.dialect == original.dialect
    unknown = [d for d in plan.diagnostics if d.kind == "unknown_key"]
    assert [(d.key, d.suggestion) for d in unknown] == [(key, suggestion)]
    text = copy.read_text()
    assert unknown[0].line == nested_line(text, key) and unknown[0].file == str(copy)
    assert f"did you mean '{suggestion}'" in unknown[0].message
    # the misspelled key no longer sets its canonical value
    canonical = {"sequence_len": "max_seq_length", "cutoff_len": "max_seq_length", "micro_batch_size":
                 "micro_batch_size", "finetune_batch_size": "micro_batch_size", "batch_size": "micro_batch_size",
                 "learning_rate": "learning_rate"}[suggestion]
    before, after = original.setting(canonical), plan.setting(canonical)
    assert before.stated and (after is None or not after.stated)


def test_duplicate_key_in_a_real_config(tmp_path: Path) -> None:
    copy = tmp_path / "story.yaml"
    copy.write_text(STORY.read_text().rstrip("\n") + "\nfinetune_batch_size: 4\n")
    plan = read_plan(copy)
    text = copy.read_text()
    dup = [d for d in plan.diagnostics if d.kind == "duplicate_key"]
    first = key_line(text, "finetune_batch_size")
    last = len(text.splitlines())
    assert [(d.key, d.line, d.other_line) for d in dup] == [("finetune_batch_size", last, first)]
    assert plan.get("micro_batch_size") == 4 and plan.setting("micro_batch_size").line == last


def test_deepspeed_json_linked_from_a_config_gives_the_zero_stage_at_its_line(tmp_path: Path) -> None:
    rel = "llamafactory/examples/train_lora/qwen3_lora_sft_ds3.yaml"
    plan = read_plan(CONFIGS / rel)
    ds = CONFIGS / "llamafactory/examples/deepspeed/ds_z3_config.json"
    s = plan.setting("zero_stage")
    assert (s.value, s.file, s.line, s.stated) == (
        json.loads(ds.read_text())["zero_optimization"]["stage"], str(ds),
        key_line(ds.read_text(), '"stage"'.strip('"')), True)
    assert plan.setting("deepspeed").value == "examples/deepspeed/ds_z3_config.json"
    # moved away from the repository the path is relative to, the stage comes from the file name
    copy = _copy_with(tmp_path, CONFIGS / rel, "lora_rank: 8", "lora_rank: 8")
    s = read_plan(copy).setting("zero_stage")
    assert (s.value, s.stated) == (3, False) and "file name" in s.source


def test_launcher_configs_give_world_size_and_sharding() -> None:
    acc = read_plan(CONFIGS / "llamafactory/examples/accelerate/fsdp_config.yaml")
    raw = yaml.load((CONFIGS / "llamafactory/examples/accelerate/fsdp_config.yaml").read_text(), Loader=LOADER)
    assert acc.get("world_size") == raw["num_processes"] and acc.get("fsdp") == raw["fsdp_config"]
    ds = read_plan(CONFIGS / "llamafactory/examples/deepspeed/ds_z3_offload_config.json")
    assert ds.get("zero_stage") == 3 and ds.get("offload_optimizer") == "cpu"
    assert "micro_batch_size" not in ds.settings  # "auto": the trainer decides


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_lora_dropout_is_read_from_every_dialect_that_has_the_key(tmp_path: Path) -> None:
    # the real files: each dialect with such a key, value and line from a text scan
    for rel, key in (("axolotl/examples/llama-3/lora-1b.yml", "lora_dropout"),
                     ("llamafactory/examples/v1/train_lora/train_lora_sft.yaml", "peft_config.lora_dropout"),
                     ("auto-antislop/configs/GLM-4-32B-0414.yaml", "finetune_lora_dropout")):
        text = (CONFIGS / rel).read_text()
        s = read_plan(CONFIGS / rel).setting("lora_dropout")
        assert s is not None and s.stated and s.key == key, rel
        assert (s.value, s.line) == (_dig(yaml.load(text, Loader=LOADER), key), nested_line(text, key)), rel
    # the dialects the shared configs have no example of (strings become numbers as the frameworks parse them)
    cases = {
        "trl.yaml": ("model_name_or_path: m\ndataset_name: d\nuse_peft: true\nlora_dropout: '0.1'\n", "lora_dropout"),
        "lf.yaml": (("stage: sft\nfinetuning_type: lora\ncutoff_len: 1024\nlora_rank: 8\nlora_dropout: 0.1\n"
                     "template: llama3\n"), "lora_dropout"),
        "u.yaml": (("model_name: unsloth/llama-3-8b\nmax_seq_length: 8192\nr: 64\nlora_dropout: 0.1\n"
                    "use_rslora: false\n"), "lora_dropout"),
        "tt.yaml": (("output_dir: /tmp/out\nmodel:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n"
                     "  lora_rank: 8\n  lora_dropout: 0.1\ntokenizer:\n  max_seq_len: 1024\n"), "model.lora_dropout"),
    }
    for name, (text, key) in cases.items():
        plan = read_plan(_write(tmp_path, name, text))
        s = plan.setting("lora_dropout")
        assert s is not None and s.stated and (s.key, s.value) == (key, 0.1), (name, plan.dialect, s)
        assert s.line == nested_line(text, key), name


def test_trl_sft_rename_max_seq_length(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "sft.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\n"
                                       "dataset_text_field: text\nmax_seq_length: 2048\npacking: true\n")
    plan = read_plan(cfg)
    assert plan.dialect == "trl" and plan.get("trainer") == "sft"
    renamed = [d for d in plan.diagnostics if d.kind == "renamed_key"]
    assert [(d.key, d.suggestion, d.line) for d in renamed] == [("max_seq_length", "max_length", 4)]
    assert "0.20" in renamed[0].message
    s = plan.setting("max_seq_length")
    assert (s.value, s.key, s.line) == (2048, "max_seq_length", 4)
    assert plan.get("padding") == "packed"
    gc = plan.setting("gradient_checkpointing")
    assert gc.value is True and not gc.stated and "sft_config.py" in gc.source
    both = _write(tmp_path, "both.yaml", "dataset_name: x\nmax_seq_length: 2048\nmax_length: 512\n")
    assert read_plan(both).setting("max_seq_length").key == "max_length"


def test_trl_dpo_inferred_and_its_deprecations(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "dpo.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/ultrafeedback\n"
                                       "beta: 0.1\nmax_length: 1024\nmax_prompt_length: 256\n"
                                       "per_device_train_batch_size: 4\n")
    plan = read_plan(cfg)
    assert plan.get("trainer") == "dpo"
    dep = {d.key: d for d in plan.diagnostics if d.kind == "deprecated_key"}
    assert set(dep) == {"max_prompt_length"} and "0.28" in dep["max_prompt_length"].message
    assert plan.get("max_prompt_length") == 256 and plan.get("micro_batch_size") == 4
    assert plan.get("learning_rate") == 1e-6 and "dpo_config.py" in plan.setting("learning_rate").source
    # the same keys read as KTO: KTOConfig had max_prompt_length in 0.28 and TRL 1.16's has not (keys regenerated
    # from trl 1.16.0): a removal named with both versions, not an unknown key
    kto = read_plan(cfg, dialect="trl_kto")
    assert kto.get("trainer") == "kto"
    assert [(d.kind, d.key) for d in kto.diagnostics] == [("deprecated_key", "max_prompt_length")]
    # the release comes from the wheels' sources (keys/key_history.json): trl 0.27.0's KTOConfig has no such field
    assert "trl 0.27" in kto.diagnostics[0].message and "1.16" in kto.diagnostics[0].message


def test_trl_peft_and_quantization(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "q.yaml", "model_name_or_path: m\ndataset_name: d\nuse_peft: true\nload_in_4bit: true\n"
                                     "lora_r: 64\n")
    plan = read_plan(cfg)
    assert plan.get("adapter") == "qlora" and plan.get("lora_r") == 64 and plan.get("lora_alpha") == 32
    assert not plan.setting("lora_alpha").stated


def test_dialect_override_and_unknown_dialect(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "t.yaml", "model_name_or_path: m\ndataset_name: d\n")
    assert read_plan(cfg).get("trainer") == "sft"
    assert read_plan(cfg, dialect="trl_dpo").get("trainer") == "dpo"
    assert read_plan(cfg, dialect="hf").dialect == "hf"
    with pytest.raises(SeqprofError, match="unknown dialect") as err:
        read_plan(cfg, dialect="megatron")
    assert "axolotl" in (err.value.fix or "")


def test_hf_training_arguments_and_transformers_5_renames(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "hf.yaml", "output_dir: out\nper_device_train_batch_size: 4\nnum_train_epochs: 2\n"
                                      "group_by_length: true\nwarmup_ratio: 0.1\nbf16: true\nsave_strategy: epoch\n")
    plan = read_plan(cfg)
    assert plan.dialect == "hf"
    renamed = {d.key: d.suggestion for d in plan.diagnostics if d.kind == "renamed_key"}
    assert renamed == {"group_by_length": "train_sampling_strategy", "warmup_ratio": "warmup_steps"}
    assert plan.get("group_by_length") is True and plan.get("precision") == "bf16"
    assert plan.get("save_strategy") == "epoch" and "save_steps" not in plan.settings
    assert plan.get("padding") == "longest" and plan.get("gradient_checkpointing") is False
    v5 = _write(tmp_path, "hf5.yaml", "output_dir: out\ntrain_sampling_strategy: sequential\nmax_steps: -1\n")
    p5 = read_plan(v5)
    assert p5.get("shuffle") is False and "max_steps" not in p5.settings
    assert p5.get("save_steps") == 500 and "training_args.py" in p5.setting("save_steps").source


def test_torchtune_recipe(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "tt.yaml", """\
output_dir: /tmp/out
model:
  _component_: torchtune.models.llama3_2.qlora_llama3_2_1b
  lora_attn_modules: ['q_proj', 'v_proj']
  apply_lora_to_mlp: True
  lora_rank: 16
  lora_alpha: 32
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/tokenizer.model
  max_seq_len: 4096
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
shuffle: True
batch_size: 4
gradient_accumulation_steps: 8
epochs: 2
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
dtype: bf16
enable_activation_checkpointing: True
log_dir: ${output_dir}/logs
""")
    plan = read_plan(cfg)
    assert plan.dialect == "torchtune" and detect_dialect(cfg) == "torchtune"
    got = {n: plan.get(n) for n in ("adapter", "load_in_4bit", "lora_r", "lora_alpha", "lora_targets",
                                    "max_seq_length", "padding", "micro_batch_size", "gradient_accumulation_steps",
                                    "num_epochs", "learning_rate", "fused_loss", "precision",
                                    "gradient_checkpointing", "trainer")}
    assert got == {"adapter": "qlora", "load_in_4bit": True, "lora_r": 16, "lora_alpha": 32,
                   "lora_targets": ["q_proj", "v_proj", "mlp"], "max_seq_length": 4096, "padding": "packed",
                   "micro_batch_size": 4, "gradient_accumulation_steps": 8, "num_epochs": 2,
                   "learning_rate": 3e-4, "fused_loss": "chunked", "precision": "bf16",
                   "gradient_checkpointing": True, "trainer": "sft"}
    assert plan.setting("max_seq_length").key == "tokenizer.max_seq_len"
    assert plan.setting("max_seq_length").line == 11
    # torchtune's recipes read log_dir under metric_logger, not at the top level; a custom recipe may: a note
    assert [(d.kind, d.key, d.suggestion) for d in plan.diagnostics] == [("unread_key", "log_dir", None)]


def test_unsloth_cli_options(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "u.yaml", "model_name: unsloth/llama-3-8b\nmax_seq_length: 8192\nload_in_4bit: true\n"
                                     "r: 64\nuse_gradient_checkpointing: unsloth\nrandom_state: 3407\n"
                                     "per_device_train_batch_size: 4\n")
    plan = read_plan(cfg)
    assert plan.dialect == "unsloth"
    assert (plan.get("max_seq_length"), plan.get("lora_r"), plan.get("adapter")) == (8192, 64, "qlora")
    assert plan.get("micro_batch_size") == 4 and plan.get("gradient_accumulation_steps") == 4
    assert plan.get("gradient_checkpointing") == "unsloth" and plan.setting("gradient_checkpointing").stated
    assert "unsloth-cli.py" in plan.setting("gradient_accumulation_steps").source


def test_speculators_arguments_with_dashes(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "s.yaml", "verifier-name-or-path: meta-llama/Llama-3.1-8B\nspeculator-type: dflash\n"
                                     "total-seq-len: 16384\nblock-size: 16\nepochs: 5\ncheckpoint-freq: 0.25\n"
                                     "max-anchor: 1024\n")
    plan = read_plan(cfg)
    assert plan.dialect == "speculators"
    assert plan.get("token_budget") == 16384 and plan.setting("token_budget").key == "total-seq-len"
    assert (plan.get("block_size"), plan.get("num_epochs"), plan.get("padding")) == (16, 5, "packed")
    assert plan.get("num_anchors") == 3072 and not plan.setting("num_anchors").stated
    assert plan.get("saves_per_epoch") == 4 and plan.get("save_strategy") == "steps"
    assert [(d.key, d.suggestion) for d in plan.diagnostics] == [("max-anchor", "max-anchors")]


def test_axolotl_legacy_attention_flag_and_deepspeed_name(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "a.yaml", "base_model: m\nsequence_len: 4096\nsample_packing: false\n"
                                     "pad_to_sequence_len: true\nflash_attention: true\nmicro_batch_size: 2\n"
                                     "deepspeed: deepspeed_configs/zero3_bf16.json\nrl: dpo\ndatasets:\n"
                                     "  - path: org/prefs\n    type: chatml.intel\n")
    plan = read_plan(cfg)
    assert plan.get("padding") == "max_length" and plan.setting("padding").key == "pad_to_sequence_len"
    assert plan.get("attn_implementation") == "flash_attention_2" and plan.get("trainer") == "dpo"
    assert plan.get("zero_stage") == 3 and not plan.setting("zero_stage").stated
    assert plan.get("datasets") == ["org/prefs"]
    assert [(d.kind, d.key, d.suggestion) for d in plan.diagnostics] == [
        ("renamed_key", "flash_attention", "attn_implementation: flash_attention_2")]  # the fix says the value


def test_detection_scores_pick_the_specific_framework() -> None:
    lf = {"model_name_or_path": "m", "stage": "sft", "template": "qwen", "cutoff_len": 1024,
          "per_device_train_batch_size": 1, "learning_rate": 1e-4}
    assert dialects.detect(lf) == "llamafactory"
    assert dialects.detect({"output_dir": "o", "per_device_train_batch_size": 1}) == "hf"
    assert dialects.detect({"tokens": "x"}) == "unknown"
    assert dialects.detect({"compute_environment": "LOCAL_MACHINE", "distributed_type": "FSDP"}) == "accelerate"


def test_read_plan_does_not_import_transformers(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "t.yaml", "model_name_or_path: m\ndataset_name: d\noutput_dir: o\n"
                                     "per_device_train_batch_size: 2\n")
    code = ("import sys; from seqprof.config.read import read_plan; "
            f"p = read_plan({str(cfg)!r}); assert p.dialect == 'trl', p.dialect; "
            "assert 'transformers' not in sys.modules; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_committed_training_arguments_list_matches_installed_transformers() -> None:
    transformers = pytest.importorskip("transformers")
    from seqprof.config.dialects.common import load_keys_file

    committed = load_keys_file("hf_training_arguments")
    if committed["version"] != transformers.__version__:
        pytest.skip(f"list made from transformers {committed['version']}; run scripts/gen_dialect_keys.py")
    fields = dataclasses.fields(transformers.TrainingArguments)
    assert committed["fields"] == sorted(f.name for f in fields if f.init)
    for old, new in committed["deprecated_aliases"].items():
        help_text = next(f for f in fields if f.name == old).metadata["help"]
        assert f"`{new}`" in help_text and "eprecated" in help_text


def test_committed_trl_lists_match_installed_trl() -> None:
    trl = pytest.importorskip("trl")
    transformers = pytest.importorskip("transformers")
    from seqprof.config.dialects.common import load_keys_file

    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    committed = load_keys_file("trl_configs")["classes"]
    for name in ("SFTConfig", "DPOConfig", "KTOConfig", "ModelConfig"):
        cls = getattr(trl, name)
        assert set(committed[name]) == {f.name for f in dataclasses.fields(cls)} - base, name


def _osa_reference(a: str, b: str) -> int:
    """Optimal string alignment distance, the textbook full table (no early exit)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def test_levenshtein_with_cutoff_matches_the_full_table() -> None:
    import random

    from seqprof.config.dialects.common import levenshtein

    rng = random.Random(7)
    for _ in range(3000):
        a = "".join(rng.choice("abc_") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abc_") for _ in range(rng.randint(0, 9)))
        limit = rng.randint(0, 4)
        ref = _osa_reference(a, b)
        got = levenshtein(a, b, limit)
        assert got == ref if ref <= limit else got == limit + 1, (a, b, limit)


def test_did_you_mean() -> None:
    from seqprof.config.dialects.common import did_you_mean

    known = {"sequence_len", "micro_batch_size", "lora_r", "gradient_accumulation_steps", "max-anchors"}
    assert did_you_mean("sequnce_len", known) == "sequence_len"  # a dropped letter
    assert did_you_mean("micro_batch_szie", known) == "micro_batch_size"  # a transposition
    assert did_you_mean("lora_rank", known) == "lora_r"  # a longer spelling of the same key
    assert did_you_mean("gradient-accumulation-steps", known) == "gradient_accumulation_steps"
    assert did_you_mean("max_anchor", known) == "max-anchors"
    assert did_you_mean("wandb_project", known) is None
    # a four-letter name one edit from another is another setting (Abhilash-003's `lora:` section is no `mora`)
    assert did_you_mean("lora", known | {"mora", "dora"}) is None
    assert did_you_mean("LoRA", known | {"lora"}) == "lora"  # the same name in other case still is


def _another_word_reference(key: str, guess: str, known) -> bool:
    """One whole word swapped for another word the known keys use (not a plural, not a short word)."""
    words = {w for k in known for w in k.lower().replace("-", "_").split("_") if len(w) >= 3}
    a, b = key.split("_"), guess.lower().replace("-", "_").split("_")
    diff = [(x, y) for x, y in zip(a, b) if x != y] if len(a) == len(b) >= 2 else []
    return len(diff) == 1 and diff[0][0].rstrip("s") != diff[0][1].rstrip("s") and \
        min(map(len, diff[0])) >= 3 and diff[0][0] in words and diff[0][1] in words


def test_a_different_word_is_no_typo() -> None:
    """`dataset_path` is not `dataset_name` misspelt, nor `use_lora` `use_dora` (batch 8 of the corpus: projects'
    own keys flagged as typos); a letter slip, a plural, a dropped underscore still are."""
    from seqprof.config.dialects import hf, trl
    from seqprof.config.dialects.common import did_you_mean

    known = trl.trl_fields() | hf.keyspace().known
    for own in ("dataset_path", "use_lora", "dataset_size"):
        assert did_you_mean(own, known) is None, own
    for typo, meant in (("learning_rat", "learning_rate"), ("warmup_step", "warmup_steps"),
                        ("lora_dropuot", "lora_dropout"), ("per_device_train_batchsize", "per_device_train_batch_size")):
        assert did_you_mean(typo, known) == meant


def test_the_indexed_typo_search_answers_as_a_scan_of_every_known_key() -> None:
    """did_you_mean filters candidates by length and shared bigrams; a full scan (the definition) must agree."""
    from seqprof.config.dialects.common import did_you_mean, levenshtein, load_keys_file

    def scan(key, known):
        norm = key.lower().replace("-", "_")
        if norm != key and norm in known:
            return norm
        if len(norm) < 5:
            return None
        limit = max(1, min(3, len(norm) // 4))
        best, best_rank = None, (limit + 1, 0)
        for cand in sorted(known):
            d = _osa_reference(norm, cand.lower().replace("-", "_"))
            rank = (d, int(("-" in cand) != ("-" in key)))
            if d <= limit and rank < best_rank:
                best, best_rank = cand, rank
        if best is not None:
            return None if _another_word_reference(norm, best, known) else best
        prefixed = [c for c in known if len(norm) >= 6 and (c.startswith(norm) or norm.startswith(c))
                    and abs(len(c) - len(norm)) <= 5 and len(c) >= 6]
        return min(prefixed, key=lambda c: (abs(len(c) - len(norm)), c)) if prefixed else None

    assert levenshtein  # the search's own distance is checked against _osa_reference above
    keys = load_keys_file("axolotl")
    known = frozenset(keys["schema_and_plugins"]) | frozenset(keys["from_examples"])
    rng = random.Random(11)
    words = sorted(known)
    for _ in range(400):
        key = list(rng.choice(words))
        for _ in range(rng.randint(0, 4)):  # random edits, some past the limit
            i = rng.randrange(len(key) + 1)
            op = rng.choice("ids t")
            if op == "i":
                key.insert(i, rng.choice("abcde_-"))
            elif op == "d" and i < len(key):
                del key[i]
            elif op == "s" and i < len(key):
                key[i] = rng.choice("abcde_")
            elif op == "t" and i + 1 < len(key):
                key[i], key[i + 1] = key[i + 1], key[i]
        key = "".join(key) or "x"
        assert did_you_mean(key, known) == scan(key, known), key


def test_drafter_model_config_json_is_loaded_relative_to_the_yaml(tmp_path: Path) -> None:
    src = CONFIGS / "specforge/examples/configs/qwen3-8b-dflash-online.yaml"
    run = tmp_path / "examples" / "configs"
    run.mkdir(parents=True)
    (run / "run.yaml").write_text(src.read_text())
    draft = {"architectures": ["DFlashDraftModel"], "hidden_size": 4096, "vocab_size": 151936, "block_size": 16}
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "qwen3-8b-dflash.json").write_text(json.dumps(draft))  # SpecForge's repo layout
    plan = read_plan(run / "run.yaml")
    assert plan.get("model_config_path") == "configs/qwen3-8b-dflash.json"
    assert plan.get("model_config") == draft
    assert plan.setting("model_config").line == key_line(src.read_text(), "draft_model_config")
    assert read_plan(src).setting("model_config") is None  # not shipped with the examples


def test_detect_dialect_takes_a_path_a_mapping_or_a_loaded_config(tmp_path: Path) -> None:
    from seqprof.config.loader import load_config

    cfg = _write(tmp_path, "a.yaml", "base_model: m\nsequence_len: 1024\nmicro_batch_size: 2\n")
    assert detect_dialect(cfg) == detect_dialect(str(cfg)) == "axolotl"
    assert detect_dialect(load_config(cfg)) == detect_dialect(load_config(cfg).data) == "axolotl"


def test_trl_read_by_evidence_and_its_recipes_keys_are_notes_not_typos(tmp_path: Path) -> None:
    """Issue 13: a TRL config without dataset_name is TRL; GRPO keys name GRPO (not DPO, whose deprecations
    would then be false); keys alignment-handbook/open-r1 read are SP407 notes; a near miss stays SP401."""
    plain = read_plan(_write(tmp_path, "plain.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\nmax_length: 2048\n"
                                                     "per_device_train_batch_size: 4\nbf16: true\n"))
    assert plain.dialect == "trl" and plain.get("max_seq_length") == 2048
    grpo = read_plan(_write(tmp_path, "grpo.yaml", "model_name_or_path: m\ndataset_name: d\nnum_generations: 8\n"
                                                   "beta: 0.0\nmax_completion_length: 1024\nuse_vllm: true\n"
                                                   "num_processes: 7\n"))
    assert grpo.get("trainer") == "grpo" and grpo.diagnostics == ()
    recipe = read_plan(_write(tmp_path, "r.yaml", "model_name_or_path: m\ndataset_name: d\nmax_length: 512\n"
                                                  "chat_template: '{{ messages }}'\ndataset_configs: [all]\n"
                                                  "learnig_rate: 2e-5\nmy_flag: 1\ntorch_dtype: bfloat16\n"))
    kinds = {d.key: (d.kind, d.suggestion) for d in recipe.diagnostics}
    assert kinds == {"chat_template": ("unread_key", None), "dataset_configs": ("unread_key", None),
                     "learnig_rate": ("unknown_key", "learning_rate"), "my_flag": ("unread_key", None),
                     "torch_dtype": ("deprecated_key", "dtype")}


@pytest.mark.parametrize("folder, keys, trainer", [
    ("grpo", "beta: 0.04\nmax_prompt_length: 512\nmax_completion_length: 1024\n", "grpo"),  # GRPOConfig has all three
    ("dpo", "beta: 0.1\nmax_prompt_length: 512\nlog_completions: true\n", "dpo"),  # log_completions alone: shared
    ("recipes", "beta: 0.1\nmax_prompt_length: 512\n", "dpo"),  # no path evidence: the keys decide
    ("dpo", "num_generations: 8\nbeta: 0.04\n", "grpo"),  # a GRPO-only key outweighs the path
])
def test_the_path_decides_a_trl_trainer_only_when_the_keys_are_shared(tmp_path, folder, keys, trainer):
    from seqprof.config.read import read_plan

    config = tmp_path / folder / "config.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: Qwen/Qwen3-1.7B\ndataset_name: trl-lib/ultrafeedback_binarized\n" + keys)
    plan = read_plan(config)
    assert plan.dialect == "trl" and plan.get("trainer") == trainer


def test_a_torchtune_fork_s_own_builder_is_not_judged_as_upstream_s(tmp_path: Path) -> None:
    """MinghaoYan/torchtune's concurrent_lora_llama3_8b takes a rank per adapter (lora_rank: List[int]): no torchtune
    release has the builder, so its arguments are the fork's; an upstream builder's list is still refused."""
    body = "model:\n  _component_: torchtune.models.llama3.{}\n  lora_attn_modules: ['q_proj']\n" \
           "  lora_rank: [8, 8]\n  lora_alpha: [16, 16]\ntokenizer:\n  max_seq_len: 1024\nbatch_size: 2\n"
    fork = read_plan(_write(tmp_path, "fork.yaml", body.format("concurrent_lora_llama3_8b")))
    upstream = read_plan(_write(tmp_path, "upstream.yaml", body.format("lora_llama3_8b")))
    assert not [d for d in fork.diagnostics if d.kind == "invalid_value"] and fork.get("lora_r") is None
    assert {d.key for d in upstream.diagnostics if d.kind == "invalid_value"} == {"model.lora_rank", "model.lora_alpha"}


def test_a_trl_file_with_no_trainer_keys_follows_a_path_that_names_one(tmp_path: Path) -> None:
    """taishan1994/DPO-Finetuning's train_config/qwen2_dpo_config.yaml sets no beta (DPOConfig's defaults) and
    finetune_dpo.py runs DPOTrainer on it: with no trainer's own keys, the path decides; SFT keys still win."""
    body = "model_name_or_path: Qwen/Qwen2-7B\ndataset_mixer:\n  x: 1.0\nmax_length: 4096\nbf16: true\n" \
           "per_device_train_batch_size: 1\nlearning_rate: 1.0e-5\n"
    (tmp_path / "dpo").mkdir()
    assert read_plan(_write(tmp_path / "dpo", "config.yaml", body)).get("trainer") == "dpo"
    assert read_plan(_write(tmp_path / "dpo", "packed.yaml", body + "packing: true\n")).get("trainer") == "sft"


def test_reward_and_rloo_recipes_are_read_as_their_trainers(tmp_path: Path) -> None:
    """raghavc/LLM-RLHF-Tuning-with-PPO-and-DPO: configs/reward.yaml sets RewardConfig's own
    center_rewards_coefficient; configs/rloo.yaml only keys RLOOConfig shares with GRPOConfig, and its path names
    rloo (the repository's own name, which names ppo and dpo, does not count). A grpo/ path over RLOO's
    normalize_advantages (luckeciano's actor-critic GRPO variant) stays GRPO."""
    repo = tmp_path / "LLM-RLHF-Tuning-with-PPO-and-DPO"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs").mkdir()
    head = "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: trl-lib/tldr\n"
    reward = read_plan(_write(repo / "configs", "reward.yaml", head + "max_length: 2048\ncenter_rewards_coefficient: 0.01\n"))
    rloo = read_plan(_write(repo / "configs", "rloo.yaml", head + "num_generations: 4\nepsilon_high: 0.28\n"
                                                                  "mask_truncated_completions: true\n"))
    (repo / "grpo").mkdir()
    variant = read_plan(_write(repo / "grpo", "actor_critic.yaml", head + "num_generations: 4\nnormalize_advantages: true\n"))
    assert (reward.get("trainer"), rloo.get("trainer"), variant.get("trainer")) == ("reward", "rloo", "grpo")
    # the repository's name decides only when nothing below it names a trainer (Foo1szz/SFT_project)
    from seqprof.config.dialects.recipes import path_trainer

    assert path_trainer(str(repo / "configs" / "train.yaml")) is None
    (tmp_path / "SFT_project" / ".git").mkdir(parents=True)
    assert path_trainer(str(tmp_path / "SFT_project" / "configs" / "train_lora.yaml")) == "sft"


def test_cpo_and_simpo_recipes_are_read_as_cpo_unless_the_project_declares_the_loss(tmp_path: Path) -> None:
    """UzombieAI's simpo.yaml goes whole into CPOConfig(**yaml): cpo_alpha and simpo_gamma are fields only
    CPOConfig has, and loss_type simpo/alphapo losses only CPOConfig takes (DPOConfig never had them). The SimPO
    repository's own SimPOConfig(TrainingArguments) declares loss_type itself, and takes alphapo: it stays dpo, the
    corpus's label for the SimPO family."""
    head = "model_name_or_path: m\nbeta: 2.0\nmax_prompt_length: 1024\nmax_length: 2048\n"
    (tmp_path / "a").mkdir()
    assert read_plan(_write(tmp_path / "a", "simpo.yaml", head + "cpo_alpha: 0.0\nsimpo_gamma: 1.4\n")).get("trainer") \
        == "cpo"
    assert read_plan(_write(tmp_path / "a", "alpha.yaml", head + "loss_type: alphapo\n")).get("trainer") == "cpo"
    assert read_plan(_write(tmp_path / "a", "sigmoid.yaml", head + "loss_type: sigmoid\n")).get("trainer") == "dpo"
    repo = tmp_path / "SimPO"
    (repo / ".git").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "simpo_config.py").write_text(
        "from dataclasses import dataclass\n\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
        "class SimPOConfig(TrainingArguments):\n    loss_type: str = 'sigmoid'\n    alpha: float = 0.0\n")
    assert read_plan(_write(repo, "alphapo.yaml", head + "loss_type: alphapo\nalpha: 0.99\n")).get("trainer") == "dpo"


def test_a_ppo_recipe_is_ppo_and_gets_no_rename_to_a_max_length_ppo_never_had(tmp_path: Path) -> None:
    """jianzhnie/Open-R1's recipes/.../ppo/config_demo.yaml sets OnPolicyConfig's total_episodes and num_ppo_epochs
    beside max_seq_length: read as SFT, it was told to rename max_seq_length to max_length, a field PPOConfig (and
    GRPOConfig) never had; it is a key to remove."""
    folder = tmp_path / "recipes" / "ppo"
    folder.mkdir(parents=True)
    plan = read_plan(_write(folder, "config_demo.yaml", "model_name_or_path: m\nsft_model_path: m\n"
                            "reward_model_path: r\nmax_seq_length: 4096\ntotal_episodes: 10000\nnum_ppo_epochs: 1\n"))
    assert plan.dialect == "trl" and plan.get("trainer") == "ppo"
    kinds = {d.key: (d.kind, d.suggestion) for d in plan.diagnostics}
    assert kinds["max_seq_length"][0] != "renamed_key" and kinds["max_seq_length"][1] is None
    sft = read_plan(_write(tmp_path, "sft.yaml", "model_name_or_path: m\ndataset_name: d\nmax_seq_length: 4096\n"
                                                 "packing: true\n"))
    assert {d.key: d.suggestion for d in sft.diagnostics}["max_seq_length"] == "max_length"


def test_an_unpinned_llamafactory_is_the_newest_release_the_transformers_pin_admits(tmp_path: Path) -> None:
    """lijiazheng99's environment.yml pins transformers==4.38.0 and no LLaMA-Factory: 0.8.0 requires
    transformers>=4.41.2, so pip can only install a 0.7 release, whose finetuning_args.py still has dpo_ftx and
    whose transformers takes evaluation_strategy. Judged as 0.9.5 (the newest), both were called removed."""
    body = "model_name_or_path: m\nstage: dpo\ndo_train: true\nfinetuning_type: lora\ndataset: d\n" \
           "template: llama3\ndpo_ftx: 1.0\nevaluation_strategy: steps\noutput_dir: out\n"
    (tmp_path / "pinned" / ".git").mkdir(parents=True)
    (tmp_path / "pinned" / "environment.yml").write_text("dependencies:\n  - pip:\n    - transformers==4.38.0\n")
    pinned = read_plan(_write(tmp_path / "pinned", "lora_dpo.yaml", body), dialect="llamafactory")
    (tmp_path / "bare" / ".git").mkdir(parents=True)
    bare = read_plan(_write(tmp_path / "bare", "lora_dpo.yaml", body), dialect="llamafactory")
    assert {d.key for d in bare.diagnostics} >= {"dpo_ftx", "evaluation_strategy"}
    found = {d.key: d for d in pinned.diagnostics}
    assert "evaluation_strategy" not in found
    assert "llamafactory<0.8.0" in found["dpo_ftx"].message and "0.8.0 removes" in found["dpo_ftx"].message


def test_a_near_miss_is_only_advised_toward_the_trainer_s_own_fields(tmp_path: Path) -> None:
    """Zityuen/open-r1-coderm's GRPO recipe sets adv_alpha: DPOConfig's ld_alpha is one edit away, but a GRPO run
    has no ld_alpha to rename it to; a GRPOConfig near miss is still advised."""
    plan = read_plan(_write(tmp_path, "grpo.yaml", "model_name_or_path: m\nnum_generations: 8\nadv_alpha: 0.5\n"
                                                   "num_iteration: 2\n"))
    found = {d.key: (d.kind, d.suggestion) for d in plan.diagnostics}
    assert found["adv_alpha"] == ("unread_key", None)
    assert found["num_iteration"] == ("unknown_key", "num_iterations")


def test_an_axolotl_shaped_file_its_own_script_runs_is_the_script_s(tmp_path: Path) -> None:
    """PrasannS/corpus-reasoning: a job script runs train_chunked_fast.py, which reads most keys with cfg.get() and
    builds its own TrainingArguments, on one axolotl-shaped config; a sibling run by `axolotl.cli.train` is axolotl's."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "scripts").mkdir()
    body = ("base_model: Qwen/Qwen3-4B\nsequence_len: 8192\nadapter: lora\nlora_r: 32\nlora_alpha: 64\n"
            "micro_batch_size: 1\ngradient_accumulation_steps: 8\nlearning_rate: 1.0e-4\nnum_epochs: 1\n"
            "datasets:\n  - path: data.jsonl\n    type: alpaca\n")
    reads = "\n".join(f"    x = cfg.get({k!r})" for k in ("base_model", "sequence_len", "adapter", "lora_r", "lora_alpha",
                                                           "micro_batch_size", "gradient_accumulation_steps",
                                                           "learning_rate", "num_epochs"))
    (tmp_path / "scripts" / "train_own.py").write_text(f"import yaml\n\ndef main(cfg):\n{reads}\n")
    (tmp_path / "scripts" / "run.sh").write_text("python scripts/train_own.py \\\n    configs/own.yml\n"
                                                 "accelerate launch -m axolotl.cli.train configs/upstream.yml\n")
    own = read_plan(_write(tmp_path / "configs", "own.yml", body))
    upstream = read_plan(_write(tmp_path / "configs", "upstream.yml", body))
    assert (own.dialect, upstream.dialect) == ("unknown", "axolotl")


def test_axolotl_datasets_of_type_pretrain_are_continued_pretraining(tmp_path: Path) -> None:
    """cl4wb0rg/knowledge-lora's cpt_config.yaml: every dataset is `type: pretrain` (axolotl's
    prompt_strategies/pretrain.py tokenizes raw text in strides, no prompt): pre-training, as pretraining_dataset is."""
    body = "base_model: Qwen/Qwen3-4B\nsequence_len: 2048\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\n"
    cpt = read_plan(_write(tmp_path, "cpt.yaml", body + "datasets:\n  - path: data/tok\n    type: pretrain\n"))
    mixed = read_plan(_write(tmp_path, "mixed.yaml", body + "datasets:\n  - path: a\n    type: pretrain\n"
                                                            "  - path: b\n    type: alpaca\n"))
    assert (cpt.get("trainer"), mixed.get("trainer")) == ("pretrain", "sft")


def test_online_dpo_recipes_are_read_as_online_dpo(tmp_path: Path) -> None:
    """mnoukhov/async_rlhf's configs/onlinedpo_pythia1b_tldr.yml: online_dpo.py parses it with OnlineDPOConfig; its
    path says onlinedpo, and its only DPO key (loss_type) is one several trainers share."""
    from seqprof.config.dialects.recipes import path_trainer

    assert [path_trainer(p) for p in ("configs/onlinedpo_pythia1b.yml", "recipes/online_dpo/config.yaml",
                                      "recipes/dpo/config.yaml")] == ["online_dpo", "online_dpo", "dpo"]
    (tmp_path / "configs").mkdir()
    plan = read_plan(_write(tmp_path / "configs", "onlinedpo_pythia410m_tldr.yml",
                            "model_name_or_path: EleutherAI/pythia-410m\ndataset_name: trl-lib/tldr\n"
                            "loss_type: sigmoid\nlearning_rate: 3.0e-6\nper_device_train_batch_size: 16\n"))
    assert (plan.dialect, plan.get("trainer")) == ("trl", "online_dpo")


def test_an_axolotl_special_token_at_the_top_level_belongs_under_special_tokens(tmp_path):
    """axolotl reads bos/eos/pad/unk only through SpecialTokensConfig (utils/schemas/model.py): a top-level eos_token
    is ignored, and the fix is to nest it, not the nearest name (eot_tokens is another feature)."""
    config = tmp_path / "axolotl.yml"
    config.write_text("base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                      "datasets:\n  - path: a.jsonl\n    type: alpaca\neos_token: '<|im_end|>'\neot_tokenz: []\n")
    found = {d.key: d for d in read_plan(config).diagnostics if d.kind == "unknown_key"}
    assert found["eos_token"].suggestion == "special_tokens.eos_token"
    assert found["eot_tokenz"].suggestion == "eot_tokens"  # a near miss of a top-level key stays one


def test_an_outer_loop_count_does_not_outweigh_the_path(tmp_path):
    """philschmid/handbook recipes/iterative_dpo/dev.yaml: num_iterations counts its outer DPO rounds; alone beside
    DPO keys it does not make the file GRPO's when the path names dpo. A grpo/ recipe with it stays GRPO's."""
    folder = tmp_path / "recipes" / "iterative_dpo"
    folder.mkdir(parents=True)
    (folder / "dev.yaml").write_text("model_name_or_path: m\nbeta: 0.1\nnum_iterations: 3\nlearning_rate: 5.0e-7\n")
    assert read_plan(folder / "dev.yaml").get("trainer") == "dpo"
    other = tmp_path / "recipes" / "grpo"
    other.mkdir(parents=True)
    (other / "config.yaml").write_text("model_name_or_path: m\nnum_iterations: 2\nlearning_rate: 1.0e-6\n")
    assert read_plan(other / "config.yaml").get("trainer") == "grpo"


def test_an_unpinned_rename_says_from_which_release_the_new_name_reads_the_value(tmp_path):
    """warmup_steps reads a ratio only from transformers 5.0 (4.x's is an int): with no pins, the rename is no fix
    on an older install, and the message says so (fe1ixxu/CPO_SIMPO runs on SimPO's transformers 4.44.2)."""
    config = tmp_path / "config.yaml"
    config.write_text("model_name_or_path: m\nlearning_rate: 1.0e-5\nwarmup_ratio: 0.1\nbeta: 0.1\n")
    found = next(d for d in read_plan(config).diagnostics if d.key == "warmup_ratio")
    assert "'warmup_steps' reads this value only from 5.0.0 on: on an older release keep 'warmup_ratio'" in found.message


def test_a_simpo_recipe_is_a_dpo_style_run_even_in_a_repository_named_for_cpo(tmp_path):
    """fe1ixxu/CPO_SIMPO: training_configs/llama-3-8b-instruct-simpo.yaml was read as CPO from the repository's
    name; its file name says SimPO, a DPO-style preference run (as the corpus labels princeton-nlp/SimPO's)."""
    root = tmp_path / "CPO_SIMPO"
    (root / ".git").mkdir(parents=True)
    (root / "training_configs").mkdir()
    body = "model_name_or_path: m\nbeta: 2.5\nlearning_rate: 1.0e-6\n"
    (root / "training_configs" / "llama-3-8b-instruct-simpo.yaml").write_text(body)
    (root / "training_configs" / "llama-3-8b-instruct-cpo.yaml").write_text(body)
    assert read_plan(root / "training_configs" / "llama-3-8b-instruct-simpo.yaml").get("trainer") == "dpo"
    assert read_plan(root / "training_configs" / "llama-3-8b-instruct-cpo.yaml").get("trainer") == "cpo"


@pytest.mark.parametrize("max_steps, reported", [(500, False), (-1, True), (None, True)])
def test_num_train_epochs_minus_one_is_unused_when_max_steps_runs_the_schedule(tmp_path, max_steps, reported):
    """transformers' Trainer derives the epochs from max_steps > 0 (trainer.py set_initial_training_values: `if
    args.max_steps > 0: max_steps = args.max_steps; num_train_epochs = max_steps // num_update_steps_per_epoch
    ...`), so open-r1's `num_train_epochs: -1` beside `max_steps: 500` is never read; without it, -1 epochs is
    an unusable value (SP406)."""
    config = tmp_path / "grpo.yaml"
    config.write_text("model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ndataset_name: open-r1/OpenR1-Math-220k\n"
                      "num_generations: 8\nnum_train_epochs: -1\n"
                      + (f"max_steps: {max_steps}\n" if max_steps is not None else ""))
    plan = read_plan(str(config))
    found = [d for d in plan.diagnostics if d.kind == "invalid_value" and d.key == "num_train_epochs"]
    assert bool(found) == reported


@pytest.mark.parametrize("stage, reported", [("grpo", True), ("kto", False), ("pt", False)])
def test_a_stage_llamafactory_has_not_is_an_unusable_value(tmp_path, stage, reported):
    """thirtycents/qwen-finetune-project runs `llamafactory-cli train configs/qwen3_grpo.yaml` with `stage: grpo`:
    llamafactory 0.9.5 declares stage: Literal["pt", "sft", "rm", "ppo", "dpo", "kto"] (hparams/finetuning_args.py)
    and train/tuner.py raises "Unknown task: grpo." (parse_dict does not check the Literal, the dispatch does)."""
    config = tmp_path / "train.yaml"
    config.write_text(f"model_name_or_path: Qwen/Qwen3-4B\nstage: {stage}\ndo_train: true\nfinetuning_type: lora\n"
                      "dataset: identity\ntemplate: qwen3\ncutoff_len: 2048\n")
    found = [d for d in read_plan(str(config)).diagnostics if d.kind == "invalid_value" and d.key == "stage"]
    assert bool(found) == reported


def test_a_v1_key_any_v1_commit_declared_is_known_and_one_none_did_is_not(tmp_path: Path) -> None:
    """coinmini's LLaMA-Factory v1 fork (upstream of 2026-04-22) sets save_total_limit, which v1's TrainingArguments
    gained on 2026-04-20; v1 has no release to pin, so a field of any v1 commit is known. warmup_ratio never was
    one, and v1's parse_dict refuses it."""
    config = _write(tmp_path, "train_lora.yaml", "model: Qwen/Qwen3.5-0.8B\nmodel_class: llm\ntrain_dataset: d.yaml\n"
                                                  "micro_batch_size: 1\nglobal_batch_size: 8\nsave_total_limit: 2\n"
                                                  "warmup_ratio: 0.1\npeft_config:\n  name: lora\n  r: 16\n")
    plan = read_plan(config)
    assert plan.dialect == "llamafactory_v1"
    assert {d.key for d in plan.diagnostics if d.kind == "unknown_key"} == {"warmup_ratio"}


LLAMABOARD = REPO / "tests" / "data" / "corpus" / "Flamelunar__memory_dep" / \
    "LLaMA-Factory__llamaboard_config__2026-04-14-20-44-44.yaml"


def test_llama_board_saved_arguments_are_read_as_the_run_the_web_ui_starts(tmp_path: Path) -> None:
    """LLaMA-Factory's web UI saves its form as element ids (Flamelunar/memory_dep's llamaboard_config): the run is
    what webui/runner.py _parse_train_args builds from them (train.cutoff_len -> cutoff_len, train.batch_size ->
    per_device_train_batch_size), located at the element's line; the ids are not keys to flag."""
    text = LLAMABOARD.read_text()
    lines = {row.split(":", 1)[0]: i for i, row in enumerate(text.splitlines(), 1) if not row.startswith((" ", "-"))}
    saved = yaml.safe_load(text)
    (tmp_path / ".git").mkdir()
    config = tmp_path / "llamaboard_config" / "saved.yaml"
    config.parent.mkdir()
    config.write_text(text)
    plan = read_plan(config)
    assert (plan.dialect, plan.setting("trainer").value) == ("llamafactory", "sft")
    cutoff = plan.setting("max_seq_length")
    assert (cutoff.value, cutoff.line) == (saved["train.cutoff_len"], lines["train.cutoff_len"])
    batch = plan.setting("micro_batch_size")
    assert (batch.value, batch.line) == (saved["train.batch_size"], lines["train.batch_size"])
    assert plan.setting("lora_r").value == saved["train.lora_rank"]
    assert [d for d in plan.diagnostics if d.kind in ("unknown_key", "unread_key")] == []
    config.write_text(text.replace("train.training_stage: Supervised Fine-Tuning", "train.training_stage: DPO"))
    assert read_plan(config).setting("trainer").value == "dpo"
    config.write_text(text + "max_steps: 10\n")  # not the UI's form any more
    assert read_plan(config).dialect != "llamafactory"


ENTROPY = REPO / "tests" / "data" / "corpus" / "hecunjie__LlamaFactory" / \
    "examples__train_full__qwen2.5_gsm8k_entropy_analysis.yaml"


def test_a_llamafactory_file_with_do_train_false_trains_nothing(tmp_path: Path) -> None:
    """hecunjie/LlamaFactory's entropy analysis sets `stage: sft` and `do_train: false`: LLaMA-Factory's sft
    workflow (train/sft/workflow.py) trains only under `if training_args.do_train`, so no trainer runs."""
    text = ENTROPY.read_text()
    assert re.search(r"^do_train: false", text, re.M) and re.search(r"^stage: sft", text, re.M)
    config = tmp_path / "entropy.yaml"
    config.write_text(text)
    plan = read_plan(config, "llamafactory")
    assert (plan.get("task"), plan.setting("trainer")) == ("no_training", None)
    config.write_text(re.sub(r"^do_train: false", "do_train: true", text, flags=re.M))
    assert read_plan(config, "llamafactory").get("trainer") == "sft"


def _corpus_repo(tmp_path: Path, folder: str) -> Path:
    """A corpus repository laid out at its own paths under *tmp_path* (a .git folder marks its root)."""
    import shutil

    corpus = REPO / "tests" / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir(parents=True)
    for name, source in sources.items():
        if name.startswith(folder + "/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    return tmp_path


def test_a_key_a_llamafactory_fork_takes_out_before_parsing_is_read(tmp_path: Path) -> None:
    """nilsblank/LLaMA-Factory-RoboG-v2 carries its own LLaMA-Factory, whose train/tuner.py pops `evaluators` from
    the arguments before get_train_args parses the rest: a note naming that read, not an unknown key."""
    root = _corpus_repo(tmp_path / "fork", "nilsblank__LLaMA-Factory-RoboG-v2")
    tuner = root / "src" / "llamafactory" / "train" / "tuner.py"
    line = next(i for i, row in enumerate(tuner.read_text().splitlines(), 1) if 'args.pop("evaluators"' in row)
    plan = read_plan(root / "examples" / "train_full" / "eval_qwen2_5vl_roboG_poc_box.yaml")
    found = [d for d in plan.diagnostics if d.key == "evaluators"]
    assert [d.kind for d in found] == ["unread_key"] and f"src/llamafactory/train/tuner.py:{line}" in found[0].message
    bare = tmp_path / "plain" / "run.yaml"  # the same file outside the fork: LLaMA-Factory's parser refuses the key
    (bare.parent / ".git").mkdir(parents=True)
    bare.write_text((root / "examples" / "train_full" / "eval_qwen2_5vl_roboG_poc_box.yaml").read_text())
    assert [d.kind for d in read_plan(bare).diagnostics if d.key == "evaluators"] == ["unknown_key"]


def test_a_llamafactory_file_s_renamed_training_argument_is_renamed_not_removed(tmp_path: Path) -> None:
    """nemoramo/LLaMA-Factory pins transformers>=4.49,<=4.57.1 (requirements.txt): pip installs a release without
    evaluation_strategy (transformers 4.51 removed it), and the fix is its new name, eval_strategy, not removing it
    (which would switch evaluation off)."""
    root = _corpus_repo(tmp_path, "nemoramo__LLaMA-Factory")
    plan = read_plan(root / "examples" / "gemma3n" / "gemma3n_e2b_asr_nemo_debug_lora.yaml")
    found = [d for d in plan.diagnostics if d.key == "evaluation_strategy"]
    assert [(d.kind, d.suggestion) for d in found] == [("removed_key", "eval_strategy")]
    assert "pip installs transformers 4.5" in found[0].message and "setup.py" not in found[0].message
    assert [d for d in plan.diagnostics if d.key == "warmup_ratio"] == []  # every allowed 4.x takes it as it is


def test_a_hydra_config_group_is_the_project_s_own_schema(tmp_path: Path) -> None:
    """ContextualAI/HALOs composes config/ with `@hydra.main(config_path="config", config_name="config")`
    (launch.py) and picks its own KTOTrainer; config/loss/kto.yaml shares KTOConfig's desirable_weight and
    undesirable_weight, but no TRL parser reads it. With the entry point aimed elsewhere it reads as TRL's KTO."""
    root = _corpus_repo(tmp_path / "halos", "ContextualAI__HALOs")
    launch = root / "launch.py"
    assert '@hydra.main(version_base=None, config_path="config", config_name="config")' in launch.read_text()
    assert read_plan(root / "config" / "loss" / "kto.yaml").dialect == "unknown"
    other = _corpus_repo(tmp_path / "elsewhere", "ContextualAI__HALOs")
    (other / "launch.py").write_text((other / "launch.py").read_text().replace('config_path="config"',
                                                                               'config_path="conf"'))
    plan = read_plan(other / "config" / "loss" / "kto.yaml")
    assert (plan.dialect, plan.get("trainer")) == ("trl", "kto")
    merged = _corpus_repo(tmp_path / "global", "ContextualAI__HALOs")  # a group option merged at the top level
    group = merged / "config" / "loss" / "kto.yaml"
    group.write_text("# @package _global_\n" + group.read_text())
    assert read_plan(group).dialect == "trl"


def test_a_hydra_group_handed_whole_to_hfargumentparser_is_read_as_its_classes(tmp_path: Path) -> None:
    """thiomajid/distil_xlstm composes configs/ with Hydra, then hands the whole `trainer` group to
    `HfArgumentParser(KDArguments).parse_dict(OmegaConf.to_container(cfg["trainer"]))` (KDArguments subclasses
    TrainingArguments): configs/trainer/base.yaml is that parser's file, not the project's own schema."""
    root = _corpus_repo(tmp_path / "kd", "thiomajid__distil_xlstm")
    script = (root / "train_distil_xlstm.py").read_text()
    assert 'parse_dict(OmegaConf.to_container(cfg["trainer"]' in script
    assert read_plan(root / "configs" / "trainer" / "base.yaml").dialect == "hf"
    other = _corpus_repo(tmp_path / "own", "thiomajid__distil_xlstm")
    (other / "train_distil_xlstm.py").write_text(script.replace('cfg["trainer"]', 'cfg["trainer_args"]'))
    assert read_plan(other / "configs" / "trainer" / "base.yaml").dialect == "unknown"


def test_a_llama_board_evaluate_form_is_a_prediction_run(tmp_path: Path) -> None:
    """AnthonyTang7/LLM-Assisted-RL keeps LLaMA Board's Evaluate & Predict form (eval.* and top.* ids, eval.predict:
    true): webui/runner.py _parse_eval_args starts an SFT-stage do_predict run on eval.dataset, which trains nothing."""
    text = (REPO / "tests" / "data" / "corpus" / "AnthonyTang7__LLM-Assisted-RL" / "llamaboard_config.yaml").read_text()
    (tmp_path / ".git").mkdir()
    config = tmp_path / "llamaboard_config.yaml"
    config.write_text(text)
    plan = read_plan(config)
    assert (plan.dialect, plan.get("task"), plan.setting("trainer")) == ("llamafactory", "eval", None)
    assert plan.setting("max_seq_length").value == yaml.safe_load(text)["eval.cutoff_len"]


def test_an_axolotl_checkout_older_than_every_known_release_is_judged_as_itself(tmp_path: Path) -> None:
    """unknown-submitter-000/axolotl_softprompt carries axolotl itself at setup.py version="0.3.0-dev", older than
    the key history's oldest release: lint once crashed there (an empty list of allowed releases). Its
    flash_attention is a plain field of that copy, so the rename is a note for the upgrade, not a warning."""
    root = _corpus_repo(tmp_path, "unknown-submitter-000__axolotl_softprompt")
    assert 'version="0.3.0-dev"' in (root / "setup.py").read_text()
    plan = read_plan(root / "examples" / "llama-2" / "lp-soft.yml")
    assert (plan.dialect, plan.get("trainer")) == ("axolotl", "sft")
    assert [d.kind for d in plan.diagnostics if d.key == "flash_attention"] == ["upcoming_deprecation"]


def test_an_empty_placeholder_filled_later_loses_nothing(tmp_path: Path) -> None:
    """Mikeriess/Synth_data's 8-GPU axolotl config leaves `fsdp:` and `fsdp_config:` empty in its template block and
    sets them further down: YAML keeps the last, so nothing is lost (a note, not SP433's warning); an unknown key
    left empty sets nothing either (adithya-s-k's eval_table_max_new_tokens:)."""
    corpus = REPO / "tests" / "data" / "corpus"
    (tmp_path / ".git").mkdir()
    config = tmp_path / "train_config_8gpu.yml"
    config.write_text((corpus / "Mikeriess__Synth_data" / "train_config_8gpu.yml").read_text())
    kinds = {d.key: d.kind for d in read_plan(config).diagnostics
             if d.key in ("fsdp", "fsdp_config") and d.kind in ("repeated_key", "duplicate_key")}
    assert kinds == {"fsdp": "repeated_key", "fsdp_config": "repeated_key"}
    dolphin = tmp_path / "dolphin.yml"
    text = (corpus / "adithya-s-k__AI-Engineering.academy" /
            "archives__Finetuning__Archives__Axolotl__dolphin-mistral-7b.yml").read_text()
    assert re.search(r"^eval_table_max_new_tokens:\s*$", text, re.M)
    dolphin.write_text(text)
    assert [d for d in read_plan(dolphin).diagnostics if d.key == "eval_table_max_new_tokens"] == []
    dolphin.write_text(re.sub(r"^eval_table_max_new_tokens:\s*$", "eval_table_max_new_tokens: 128", text, flags=re.M))
    assert [d.kind for d in read_plan(dolphin).diagnostics if d.key == "eval_table_max_new_tokens"] == ["unknown_key"]


def test_an_axolotl_dataset_entry_key_no_dataset_model_has_is_ignored(tmp_path):
    """validate_config builds each `datasets:` entry as SFTDataset (DPODataset for rl: dpo, KTODataset for kto), and
    pydantic drops a key the model lacks: jbremz's `dset_type: json` (a typo of ds_type) and sarpsl's `field_map:`
    never reach the loader. The fields come from each release's utils/schemas/datasets.py (key_history.json)."""
    config = tmp_path / "axolotl.yml"
    config.write_text(
        "base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
        "datasets:\n  - path: a.jsonl\n    type: chat_template\n    ds_type: json\n    split: train\n"
        "    field_messages: conversations\n    message_property_mappings: {role: from, content: value}\n"
        "    roles_to_train: [assistant]\n    train_on_eos: turn\n    conversation: null\n"
        "  - path: b.jsonl\n    type: alpaca\n    dset_type: json\n    field_map: {q: instruction}\n"
        "test_datasets:\n  - path: c.jsonl\n    type: alpaca\n    split: test\n    validation_path: d.jsonl\n")
    found = {d.key: d for d in read_plan(config).diagnostics if d.kind == "unknown_key"}
    assert set(found) == {"datasets.1.dset_type", "datasets.1.field_map", "test_datasets.0.validation_path"}
    assert found["datasets.1.dset_type"].suggestion == "datasets.1.ds_type"
    assert found["datasets.1.dset_type"].line == 16 and "pydantic drops it" in found["datasets.1.dset_type"].message
    preference = tmp_path / "dpo.yml"  # DPODataset's own fields are no finding under rl: dpo
    preference.write_text("base_model: m\nrl: dpo\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                          "datasets:\n  - path: p.jsonl\n    type: chatml.intel\n    field_chosen: chosen\n"
                          "    field_rejected: rejected\n")
    assert not [d for d in read_plan(preference).diagnostics if d.kind == "unknown_key"]


def test_a_short_word_swapped_whole_is_another_setting_and_a_swapped_pair_a_slip() -> None:
    """TunePPO's `kl_scheduler` (a KL-coefficient schedule) is no misspelt `lr_scheduler`: 'kl' and 'lr' differ in
    every position. `rl_scheduler` has lr's letters swapped: a slip of the fingers."""
    from seqprof.config.dialects.common import did_you_mean

    known = {"lr_scheduler", "do_train", "optimizer"}
    assert did_you_mean("kl_scheduler", known) is None
    assert did_you_mean("if_train", known) is None
    assert did_you_mean("rl_scheduler", known) == "lr_scheduler"
    assert did_you_mean("lr_schedular", known) == "lr_scheduler"


def test_an_axolotl_deprecation_is_judged_at_the_pinned_release_or_noted_for_a_commit(tmp_path):
    """bvanasse/Weatherman-LoRA runs axolotl==0.5.2, where s2_attention is a live field (0.17 moved it to
    deprecated.py): a note for the upgrade, not a warning. truefoundry's fork at a commit may not deprecate
    flash_attn_rms_norm at all: a note that says the commit cannot be placed."""
    def found(files: dict[str, str], body: str):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        (root / ".git").mkdir(parents=True)
        for name, text in files.items():
            (root / name).write_text(text)
        config = root / "config.yml"
        config.write_text("base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n" + body)
        return {d.key: d for d in read_plan(config).diagnostics}

    pinned = found({"requirements.txt": "axolotl==0.5.2\n"}, "s2_attention: false\n")["s2_attention"]
    assert pinned.kind == "upcoming_deprecation" and "0.17" in pinned.message
    fresh = found({}, "s2_attention: false\n")["s2_attention"]
    assert fresh.kind == "deprecated_key"  # the newest release, which a fresh install gets, deprecates it
    commit = found({"requirements.txt": "axolotl @ git+https://github.com/truefoundry/axolotl@30c52ec\n"},
                   "flash_attn_rms_norm: true\n")["flash_attn_rms_norm"]
    assert commit.kind == "upcoming_deprecation" and "cannot place" in commit.message


def test_an_axolotl_field_is_read_by_its_own_name_beside_its_alias(tmp_path):
    """AxolotlInputConfig sets populate_by_name, so deprecated.py's `type_of_model` (alias model_type) is read under
    either name (truefoundry's config-base.yaml writes type_of_model)."""
    config = tmp_path / "axolotl.yml"
    config.write_text("base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                      "type_of_model: AutoModelForCausalLM\n")
    assert not [d for d in read_plan(config).diagnostics if d.key == "type_of_model" and d.kind == "unknown_key"]


def test_an_axolotl_dataset_type_the_project_routes_itself_is_not_judged(tmp_path):
    """PhungVanDuy/openchai's finetune.py sends `type: chatml` entries to its own loader before axolotl's sees
    them; the same type in a project without that code is no type axolotl handles (SP406)."""
    def invalid(name: str, code: str | None):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        if code:
            (root / "finetune.py").write_text(code)
        config = root / "examples" / "chatml.yaml"
        config.parent.mkdir()
        config.write_text("base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                          "datasets:\n  - path: a.jsonl\n    type: chatml\n")
        return [d.key for d in read_plan(config).diagnostics if d.kind == "invalid_value"]

    assert invalid("plain", None) == ["datasets.0.type"]
    assert invalid("routed", "for item in cfg['datasets']:\n"
                             "    if item['type'] == 'chatml' or item['type'] == 'input_output':\n"
                             "        mine.append(item)\n") == []


def test_a_project_flag_named_like_an_unsloth_option_and_a_quinine_inherit_are_no_framework(tmp_path):
    """locuslab/tofu's Hydra forget.yaml sets `save_model: true` (its own flag, forget.py:101) among its own keys: no
    Unsloth file. stanford-crfm/mistral's configs `inherit:` trainer and model YAMLs that Quinine merges before its
    train.py reads them: no TrainingArguments file, though one of them holds such keys."""
    from seqprof.config.read import detect_dialect

    tofu = tmp_path / "forget.yaml"
    tofu.write_text("model_family: llama2-7b\nlr: 1e-5\nbatch_size: 16\ngradient_accumulation_steps: 4\n"
                    "num_epochs: 5\nforget_loss: grad_ascent\nsave_dir: out\nweight_decay: 0.01\nsave_model: true\n"
                    "seed: 42\n")
    assert detect_dialect(tofu) != "unsloth"
    mistral = tmp_path / "mistral-small.yaml"
    mistral.write_text("inherit:\n  - datasets/wikitext103.yaml\n  - trainers/gpt2-small.yaml\nrun_id: null\n"
                       "effective_bsz: 512\nresume: false\nseed: 21\noutput_dir: out\nlogging_steps: 10\n")
    assert detect_dialect(mistral) not in ("hf", "trl")
    unsloth = tmp_path / "unsloth.yaml"
    unsloth.write_text("model_name: unsloth/Qwen2.5-0.5B\nr: 16\nuse_gradient_checkpointing: unsloth\nsave_model: true\n")
    assert detect_dialect(unsloth) == "unsloth"


def test_accelerate_refuses_mixed_precision_beside_a_deepspeed_file_unless_the_launch_line_passes_it(tmp_path):
    """SP449 on a real accelerate config (DelosIndustry/Bayesian-teaching-Gemma-4-E4B, batch 85's miss):
    mixed_precision: bf16 beside deepspeed_config_file makes `accelerate launch` list it in
    ACCELERATE_CONFIG_DS_FIELDS and DeepSpeedPlugin raise; a launch line giving --mixed_precision itself takes
    it from the command line, and nothing is refused."""
    from seqprof.lint.facts import build_facts
    from seqprof.lint.rules import find_rule, load_rules
    from seqprof.lint.run import lint_plan

    real = REPO / "tests/data/corpus/DelosIndustry__Bayesian-teaching-Gemma-4-E4B/configs__accelerate_zero3.yaml"
    text = real.read_text()
    raw = yaml.load(text, Loader=LOADER)
    assert raw["mixed_precision"] == "bf16" and "deepspeed_config_file" in raw["deepspeed_config"]
    rule = find_rule(load_rules(), "SP449")

    def hits(config: Path) -> list:
        plan = read_plan(config)
        assert plan.dialect == "accelerate"
        return list(lint_plan(plan, build_facts(plan), [rule]).findings)

    (tmp_path / ".git").mkdir()
    config = tmp_path / "configs" / "accelerate_zero3.yaml"
    config.parent.mkdir()
    config.write_text(text)
    found = hits(config)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith("mixed_precision:"))
    assert len(found) == 1 and f"mixed_precision: bf16 (line {line})" in found[0].message
    (tmp_path / "train.sh").write_text("accelerate launch --config_file configs/accelerate_zero3.yaml "
                                       "--mixed_precision bf16 train.py\n")
    assert hits(config) == []
    config.write_text(text.replace("mixed_precision: bf16\n", ""))
    assert hits(config) == []


def test_a_json_only_hfargumentparser_reads_is_hf_whatever_keys_no_class_declares(tmp_path):
    """groxaxo/finetune-hf-vits parses its JSON with HfArgumentParser((ModelArguments, DataTrainingArguments,
    VITSTrainingArguments)).parse_json_file, and no file of the project imports trl: the JSON is transformers', even
    with dataset_name and model_name_or_path and 28 keys none of its classes declares (so that they do not declare
    most of its keys beyond TrainingArguments')."""
    from corpus_layout import lay_out

    folder = "groxaxo__finetune-hf-vits"
    config = lay_out(tmp_path, only=folder) / f"{folder}/training_config_examples__finetune_english_enhanced.json"
    data = json.loads(config.read_text())
    assert {"dataset_name", "model_name_or_path"} <= set(data) and sum(k.startswith("_comment") for k in data) == 9
    script = config.parents[1] / "run_vits_finetuning.py"
    assert "import trl" not in script.read_text() and "from trl" not in script.read_text()
    plan = read_plan(config)
    assert plan.dialect == "hf"
    assert plan.dialect_source == ("parsed by HfArgumentParser in run_vits_finetuning.py, with no TRL config, parser "
                                   "or trainer")


def test_a_trl_data_helper_does_not_make_a_transformers_script_trl_s(tmp_path):
    """sign/image-latent-transformer's training/train.py parses its YAMLs with HfArgumentParser((ModelArguments,
    DataTrainingArguments, TrainingArguments)) and trains with transformers' Trainer; from trl it takes only
    pack_dataset. The file (dataset_name, model keys) is transformers', and its TrainingArguments keys are judged as
    such; a script that parses it into trl's SFTConfig instead is TRL's."""
    from corpus_layout import lay_out

    from seqprof.config.project_scripts import uses_trl

    assert not uses_trl("from trl import pack_dataset\nfrom trl.trainer.utils import (truncate_dataset,  # SFTConfig\n)\n")
    assert uses_trl("from trl import (\n    pack_dataset,\n    SFTConfig,\n)\n") and uses_trl("import trl\n")
    folder = "sign__image-latent-transformer"
    name = "training__experiments__easy-tasks__string-repetition.yaml"
    plan = read_plan(lay_out(tmp_path / "helper", only=folder) / f"{folder}/{name}")
    assert (plan.dialect, plan.dialect_source) == (
        "hf", "parsed by HfArgumentParser in training/train.py, with no TRL config, parser or trainer")
    tree = lay_out(tmp_path / "config", only=folder)
    script = tree.root / folder / "training" / "train.py"
    script.write_text(script.read_text().replace("from trl import pack_dataset", "from trl import SFTConfig, pack_dataset")
                      .replace("DataTrainingArguments, TrainingArguments))", "DataTrainingArguments, SFTConfig))"))
    assert read_plan(tree / f"{folder}/{name}").dialect == "trl"


def test_sections_the_project_s_parser_classes_declare_leave_the_file_transformers(tmp_path):
    """Hon-Wong/VoRA's configs set TrainingArguments keys beside `model:` and `data:` mappings, which look like a
    schema of the project's own; but train/train.py declares them as ModelArguments.model and DataArguments.data and
    parses the file with HfArgumentParser((ModelArguments, DataArguments, TrainingArguments)).parse_dict, so its
    evaluation_strategy meets transformers 4.50.3's deprecation. Without those fields the file is the project's."""
    from corpus_layout import lay_out

    folder = "Hon-Wong__VoRA"
    plan = read_plan(lay_out(tmp_path / "declared", only=folder) / f"{folder}/configs__finetuning.yaml")
    assert plan.dialect == "hf" and "(ModelArguments.model, DataArguments.data, train/train.py)" in plan.dialect_source
    [renamed] = [d for d in plan.diagnostics if d.key == "evaluation_strategy"]
    assert renamed.kind == "renamed_key" and "transformers 4.51 removes it" in renamed.message
    tree = lay_out(tmp_path / "undeclared", only=folder)
    script = tree.root / folder / "train" / "train.py"
    text = script.read_text()
    assert "    model: Optional[dict] = field(default_factory=dict)\n" in text
    script.write_text(text.replace("    model: Optional[dict] = field(default_factory=dict)\n", "    pass\n"))
    assert read_plan(tree / f"{folder}/configs__finetuning.yaml").dialect == "unknown"


def test_masked_lm_runs_are_pretraining_by_their_folder_or_by_their_name_and_masking_probability(tmp_path):
    """llm2vec's MNTP configs (train_configs/mntp/MetaLlama3.json) and IandRover/BioLLM-MLM's args.json for
    run_mlm.py train masked (next) token prediction: hf pretraining. A file named after an MNTP-trained model that
    it fine-tunes on a word task (train_configs/word-task/Llama2-bi-mntp.json) sets no mlm_probability and names
    no trainer; omriel1's nlp_course/dictalm2_mntp.json, named so and setting it, is pretraining."""
    from corpus_layout import lay_out

    tree = lay_out(tmp_path / "a", only="McGill-NLP__llm2vec")
    assert read_plan(tree / "McGill-NLP__llm2vec/train_configs__mntp__MetaLlama3.json").get("trainer") == "pretrain"
    word_task = tree / "McGill-NLP__llm2vec/train_configs__word-task__Llama2-bi-mntp.json"
    assert "mlm_probability" not in word_task.read_text() and read_plan(word_task).get("trainer") is None
    course = lay_out(tmp_path / "b", only="omriel1__llm2vec") / "omriel1__llm2vec/nlp_course__dictalm2_mntp.json"
    assert read_plan(course).get("trainer") == "pretrain"
    data = json.loads(course.read_text())
    data.pop("mlm_probability")
    course.write_text(json.dumps(data))
    assert read_plan(course).get("trainer") is None
    bio = lay_out(tmp_path / "c", only="IandRover__BioLLM-MLM") / "IandRover__BioLLM-MLM/args.json"
    assert read_plan(bio).get("trainer") == "pretrain"


def test_a_long_file_of_another_tool_s_keys_is_no_framework_s(tmp_path):
    """JanusL/nlp-project's training.yaml is OpenNMT-py's (`onmt_train -config`): 50 keys, of which seed, optim,
    learning_rate, warmup_steps, adam_beta2 and max_grad_norm are TrainingArguments fields and label_smoothing a
    DPOConfig one. Under a fifth of its keys known, it is neither TRL's nor transformers'; the same keys with only a
    handful of the tool's own beside them are read as one of the two."""
    from corpus_layout import lay_out

    folder = "JanusL__nlp-project"
    config = lay_out(tmp_path, only=folder) / f"{folder}/training.yaml"
    data = yaml.safe_load(config.read_text())
    assert len(data) >= 20 and "label_smoothing" in data
    assert read_plan(config).dialect == "unknown"
    known = ("seed", "optim", "learning_rate", "warmup_steps", "adam_beta2", "max_grad_norm", "label_smoothing")
    short = {k: data[k] for k in known} | {k: data[k] for k in [k for k in data if k not in known][:3]}
    assert detect_dialect(short) in ("hf", "trl")


def test_a_saved_training_arguments_dump_nothing_reads_is_no_config(tmp_path):
    """adityaxdubey/grpo-accounting-finetune commits model_file/training_args.json, GRPOConfig.to_dict of a finished
    run (hub_token masked as '<HUB_TOKEN>'), which no file of the project names: it is read as no framework's, and
    its 25 keys later releases dropped are no findings. vkk1710/Automotive_NER's configs/config.json names its own
    dump, which train.py parses back with parse_json_file: that one is transformers'."""
    from corpus_layout import lay_out

    folder = "adityaxdubey__grpo-accounting-finetune"
    config = lay_out(tmp_path / "dump", only=folder) / f"{folder}/model_file__training_args.json"
    assert json.loads(config.read_text())["hub_token"] == "<HUB_TOKEN>"
    plan = read_plan(config)
    assert plan.dialect == "unknown" and not plan.diagnostics
    (config.parent / "train.py").write_text(f"args = json.load(open('model_file/{config.name}'))\n")
    assert read_plan(config).dialect == "trl"
    folder = "vkk1710__Automotive_NER"
    assert read_plan(lay_out(tmp_path / "read", only=folder) / f"{folder}/configs__training_args.json").dialect == "hf"


def test_hfargumentparser_over_trainingarguments_and_own_classes_reads_a_file_whatever_keys_look_like(tmp_path):
    """yshihao-ai/HyCoRA pins trl==0.7.11 and its train.py builds DPOTrainer for train_mode dpo, but it parses its
    JSONs with HfArgumentParser((CustomizedArguments, TrainingArguments)): TRL's classes take none of their keys, so
    the files are transformers' (their `alpha`, `max_seq_length` are CustomizedArguments fields). Its evaluate.py
    fills EvaluateArguments alone: that file is the project's own. 61peng/matmech's `dataset` and `lora_rank` look
    like LLaMA-Factory's, yet its HfArgumentParser((CustomizedArguments, TrainingArguments)).parse_dict reads them,
    with no LLaMA-Factory installed. With TRL's SFTConfig in the call instead, the files are TRL's again."""
    from corpus_layout import lay_out

    folder = "yshihao-ai__HyCoRA"
    tree = lay_out(tmp_path / "hycora", only=folder)
    train = read_plan(tree / f"{folder}/train_args__sft__hyperlora__qwen2.5-7b-sft-hyperlora.json")
    assert train.dialect == "hf" and "train.py:56" in train.dialect_source
    assert read_plan(tree / f"{folder}/eval_args__sft__hyperlora__qwen2.5-7b-sft-hyperlora.json").dialect == "unknown"
    tree = lay_out(tmp_path / "hycora_sft_config", only=folder)
    script = tree.root / folder / "train.py"
    text = script.read_text()
    assert "parser = HfArgumentParser((CustomizedArguments, TrainingArguments))" in text
    script.write_text(text.replace("parser = HfArgumentParser((CustomizedArguments, TrainingArguments))",
                                   "parser = HfArgumentParser((CustomizedArguments, SFTConfig))")
                      .replace("from transformers import (", "from trl import SFTConfig\nfrom transformers import ("))
    assert read_plan(tree / f"{folder}/train_args__sft__hyperlora__qwen2.5-7b-sft-hyperlora.json").dialect == "trl"

    folder = "61peng__matmech"
    tree = lay_out(tmp_path / "matmech", only=folder)
    plan = read_plan(tree / f"{folder}/config__training_config.json")
    assert plan.dialect == "hf" and not any(d.key == "num_train_epochs" for d in plan.diagnostics)
    tree = lay_out(tmp_path / "matmech_variable", only=folder)
    script = tree.root / folder / "train.py"
    script.write_text(script.read_text().replace("HfArgumentParser((CustomizedArguments, TrainingArguments))",
                                                 "HfArgumentParser(PARSED)"))
    assert read_plan(tree / f"{folder}/config__training_config.json").dialect == "llamafactory"


def test_a_file_whose_keys_the_project_hands_on_by_keyword_alone_is_the_project_s(tmp_path):
    """junqiangchen/qwen3_Lora_sft_medicalQA's model/__init__.py loads config/sft_config.yaml with yaml.safe_load
    and builds TrainingArguments(output_dir=self.sft_cfg["output_dir"], ...) from six of its 26 keys; nothing spreads
    it or parses it, so its warmup_ratio and evaluation_strategy never reach transformers and are no findings. A
    `TrainingArguments(**self.sft_cfg)` in the project makes the file transformers' again."""
    from corpus_layout import lay_out

    folder = "junqiangchen__qwen3_Lora_sft_medicalQA"
    tree = lay_out(tmp_path / "by_keyword", only=folder)
    plan = read_plan(tree / f"{folder}/config__sft_config.yaml")
    assert plan.dialect == "unknown" and not [d for d in plan.diagnostics if d.severity in ("warning", "error")]
    tree = lay_out(tmp_path / "spread", only=folder)
    (tree.root / folder / "train_all.py").write_text("args = TrainingArguments(**cfg)\n")
    assert read_plan(tree / f"{folder}/config__sft_config.yaml").dialect == "hf"



def test_deepspeed_s_own_top_level_sections_are_known_and_a_stray_floor_is_not(tmp_path):
    """PKU-Alignment/align-anything's ds_z3_config.json has a `hybrid_engine:` section, which DeepSpeed reads
    (0.19.8 runtime/config.py get_hybrid_engine_config: param_dict.get("hybrid_engine")); datawhalechina/self-llm's
    top-level `min_lr` is read by nothing (DeepSpeed's floor is scheduler.params.warmup_min_lr)."""
    from corpus_layout import lay_out

    folder = "PKU-Alignment__align-anything"
    config = lay_out(tmp_path / "a", only=folder) / f"{folder}/align_anything__configs__deepspeed__ds_z3_config.json"
    plan = read_plan(config)
    assert plan.dialect == "deepspeed" and "hybrid_engine" in json.loads(config.read_text())
    assert not [d for d in plan.diagnostics if d.kind == "unknown_key"]
    folder = "datawhalechina__self-llm"
    tree = lay_out(tmp_path / "b", only=folder)
    [config] = [p for p in (tree.root / folder).rglob("*.json") if '"min_lr"' in p.read_text()]
    assert [d.key for d in read_plan(config).diagnostics if d.kind == "unknown_key"] == ["min_lr"]


def test_a_file_one_plain_dataclass_of_the_project_is_built_from_is_the_project_s(tmp_path):
    """codefuse-ai/MFTCoder's dpo_train_config.json is loaded with json.load and built as XXPOTrainArgs(**config), a
    plain @dataclass declaring all 32 keys; its output_dir and learning_rate look like TrainingArguments', yet no
    framework parses the file. With the class deriving from transformers' TrainingArguments it is transformers'."""
    from corpus_layout import lay_out

    folder = "codefuse-ai__MFTCoder"
    name = "mftcoder_accelerate__src__configs__dpo_train_config.json"
    assert read_plan(lay_out(tmp_path / "plain", only=folder) / f"{folder}/{name}").dialect == "unknown"
    tree = lay_out(tmp_path / "derived", only=folder)
    args = tree.root / folder / "mftcoder_accelerate" / "src" / "xxpo" / "xxpo_arguments.py"
    text = args.read_text()
    assert "class XXPOTrainArgs:" in text
    args.write_text("from transformers import TrainingArguments\n" +
                    text.replace("class XXPOTrainArgs:", "class XXPOTrainArgs(TrainingArguments):"))
    assert read_plan(tree / f"{folder}/{name}").dialect == "hf"


def test_deepspeed_precision_sections_and_parameter_offload_below_stage_3(tmp_path):
    """dvlab-research/LongLoRA's stage2.json copies fp16's loss-scaling keys under bf16: DeepSpeedBF16Config has no
    such fields, and DeepSpeed 0.17.1 on refuses them (extra="forbid"). CarperAI/trlx's ds_config_gptj.json offloads
    parameters to cpu at ZeRO stage 2, where DeepSpeed keeps them on the GPU (SP456's fact); at stage 3 it would not
    be reported."""
    from corpus_layout import lay_out

    folder = "dvlab-research__LongLoRA"
    plan = read_plan(lay_out(tmp_path / "a", only=folder) / f"{folder}/ds_configs__stage2.json")
    assert sorted(d.key for d in plan.diagnostics if d.kind == "unknown_key") == [
        "bf16.hysteresis", "bf16.initial_scale_power", "bf16.loss_scale", "bf16.loss_scale_window",
        "bf16.min_loss_scale"]
    folder = "CarperAI__trlx"
    config = lay_out(tmp_path / "b", only=folder) / f"{folder}/examples__summarize_rlhf__sft__ds_config_gptj.json"
    assert read_plan(config).get("param_offload_below_stage_3") == 2
    data = json.loads(config.read_text())
    data["zero_optimization"]["stage"] = 3
    config.write_text(json.dumps(data))
    assert read_plan(config).get("param_offload_below_stage_3") is None


def test_a_llamafactory_submodule_at_an_unplaced_commit_leaves_duplicate_keys_unjudged(tmp_path: Path) -> None:
    """TIGER-AI-Lab/AceCoder pins LLaMA-Factory as a git submodule at a417bcf (0.9.2.dev0, which reads the file with
    yaml.safe_load and keeps a duplicate's last value); a commit seqprof cannot place could be either loader, so
    `stage: rm` written twice is no SP404 error. Pinned to 0.9.4 (OmegaConf.load) it is."""
    from corpus_layout import lay_out

    from seqprof.lint.run import LintOptions, lint_paths

    folder = "TIGER-AI-Lab__AceCoder"
    name = f"{folder}/train__train_rm__configs__train_qwen_coder_ins_2.5_7b.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    codes = {f.code for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "stage"}
    assert "SP404" not in codes

    config = lay_out(tmp_path / "released", only=folder) / name
    (config.parents[3] / "requirements.txt").write_text("llamafactory==0.9.4\n")
    codes = {f.code for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "stage"}
    assert "SP404" in codes
