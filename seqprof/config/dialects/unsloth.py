"""Unsloth fine-tuning options as YAML: the arguments of unsloth-cli.py (unslothai/unsloth).

unsloth-cli.py passes model_name / max_seq_length / dtype / load_in_4bit to
``FastLanguageModel.from_pretrained``, r / lora_alpha / lora_dropout / bias /
use_gradient_checkpointing / random_state / use_rslora / loftq_config to ``get_peft_model``,
and the batch/schedule options to TrainingArguments for TRL's SFTTrainer (packing=False). A YAML
of those keys may also carry any TrainingArguments/SFTConfig key.

Defaults (unsloth-cli.py argparse): max_seq_length 2048; r 16; lora_alpha 16;
use_gradient_checkpointing "unsloth" (Unsloth's offloaded checkpointing); load_in_4bit off
(a flag); per_device_train_batch_size 2; gradient_accumulation_steps 4; max_steps 400;
learning_rate 2e-4; optim adamw_8bit; target modules q/k/v/o/gate/up/down. SFTTrainer is built
with packing=False, so each batch is padded to its longest row; longer rows are truncated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects import hf, trl
from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    as_bool,
    as_number,
    check_keys,
    split_list,
)
from seqprof.config.loader import LoadedConfig

NAME = "unsloth"
LABEL = "Unsloth"
SRC = "unsloth-cli.py default (--{})"

CLI_KEYS = frozenset("""
model_name max_seq_length dtype load_in_4bit load_in_8bit full_finetuning dataset r lora_alpha lora_dropout bias
use_gradient_checkpointing random_state use_rslora loftq_config target_modules per_device_train_batch_size
gradient_accumulation_steps warmup_steps max_steps learning_rate optim weight_decay lr_scheduler_type seed
report_to logging_steps adapter_file output_dir save_model save_method save_gguf save_path quantization push_model
push_gguf hub_path hub_token
""".split())
STRONG = frozenset({"use_gradient_checkpointing", "random_state", "loftq_config", "save_method", "save_gguf",
                    "push_model", "push_gguf", "hub_path", "adapter_file", "full_finetuning"})
# save_model is unsloth-cli's, but also any project's flag (locuslab/tofu's Hydra forget.yaml): no evidence alone
WEAK = frozenset({"model_name", "r", "max_seq_length", "load_in_4bit", "lora_alpha", "use_rslora", "bias", "save_model"})
# what unsloth's helpers take, which a project's script passes from its YAML: get_chat_template(tokenizer,
# chat_template="llama-3") and train_on_responses_only(trainer, instruction_part=..., response_part=...).
# chat_template is no typo of SFTConfig's chat_template_path: renaming it would break the script
HELPER_KEYS = frozenset({"chat_template", "instruction_part", "response_part"})
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def detect(data: Mapping[str, Any]) -> int:
    strong = sum(3 for k in data if k in STRONG)
    unsloth_model = "unsloth/" in str(data.get("model_name", ""))
    if not strong and not unsloth_model:
        return 0
    if not strong and _own_sections(data):
        return 0  # HarshilMaks/gemma3-peft's lora: / training: / memory: sections: the project's own schema
    return strong + 3 * unsloth_model + sum(1 for k in data if k in WEAK)


def _own_sections(data: Mapping[str, Any]) -> list[str]:
    """Top-level keys holding a mapping: unsloth-cli's options are flat, so a file of sections is a project's own
    schema, whatever model it names (an unsloth/ model id is evidence only beside the CLI's flat keys)."""
    return [k for k, v in data.items() if isinstance(v, Mapping) and k not in CLI_KEYS]


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of an Unsloth (unsloth-cli) options file."""
    b = Builder(cfg)
    b.default("trainer", "sft", "unsloth-cli.py trains with TRL's SFTTrainer")
    b.first("model", ["model_name", "model_name_or_path"])
    b.first("max_seq_length", ["max_seq_length", "max_length"], as_number)
    b.default("max_seq_length", 2048, SRC.format("max_seq_length"))
    b.stated("load_in_4bit", "load_in_4bit", as_bool)
    b.stated("load_in_8bit", "load_in_8bit", as_bool)
    b.default("load_in_4bit", False, "unsloth-cli.py --load_in_4bit is a flag, off unless given")
    if as_bool(b.raw("full_finetuning")) is True:
        b.derived("adapter", None, "full_finetuning")
    else:
        b.default("adapter", "qlora" if b.value("load_in_4bit") is True else "lora",
                  "unsloth-cli.py always adds LoRA adapters (get_peft_model)")
        b.first("lora_r", ["r", "lora_r"], as_number)
        b.default("lora_r", 16, SRC.format("r"))
        b.stated("lora_alpha", "lora_alpha", as_number)
        b.default("lora_alpha", 16, SRC.format("lora_alpha"))
        b.stated("lora_dropout", "lora_dropout", as_number)
        b.stated("lora_targets", "target_modules", split_list)
        b.default("lora_targets", TARGETS, "unsloth-cli.py passes q/k/v/o/gate/up/down_proj")
    b.stated("gradient_checkpointing", "use_gradient_checkpointing",
             lambda v: as_bool(v) if not isinstance(v, str) or v.lower() in ("true", "false") else v)
    b.default("gradient_checkpointing", "unsloth", SRC.format("use_gradient_checkpointing"))
    if as_bool(b.raw("packing")) is True:
        b.derived("padding", "packed", "packing")
    b.default("padding", "longest", "unsloth-cli.py builds SFTTrainer with packing=False; the collator pads "
                                    "each batch to its longest row")
    b.default("overflow", "truncate", "TRL's SFTTrainer truncates rows longer than max_seq_length")
    b.stated("datasets", "dataset", lambda v: [v])
    b.default("micro_batch_size", 2, SRC.format("per_device_train_batch_size"))
    b.default("gradient_accumulation_steps", 4, SRC.format("gradient_accumulation_steps"))
    b.default("max_steps", 400, SRC.format("max_steps"))
    b.default("learning_rate", 2e-4, SRC.format("learning_rate"))
    b.default("optimizer", "adamw_8bit", SRC.format("optim"))
    dtype = str(b.raw("dtype", "")).lower().removeprefix("torch.")
    if dtype in ("float16", "fp16", "bfloat16", "bf16"):
        b.derived("precision", "fp16" if "16" in dtype and "b" not in dtype else "bf16", "dtype")
    b.default("precision", "bf16", "unsloth-cli.py loads in dtype=None (bf16 where the GPU supports it) and passes "
                                   "bf16=is_bfloat16_supported() to TrainingArguments")
    hf.apply_training_arguments(b)
    space = Keyspace(known=frozenset(CLI_KEYS | HELPER_KEYS | hf.keyspace().known | trl.trl_fields()),
                     renamed=hf.LEGACY_RENAMED, deprecated=hf.LEGACY_DEPRECATED)
    # unsloth-cli.py takes no config file: a YAML of its keys is read by the project's own script, which may read
    # keys of its own (tinpro2k5/banking-intent-unsloth's batch_size, num_epochs, train_data)
    b.diagnostics.extend(check_keys(cfg, space, dialect_label=LABEL, scripts_read_extra=True))
    return b.result()
