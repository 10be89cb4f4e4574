"""LLaMA-Factory v1 YAML (the plugin-based trainer under src/llamafactory/v1/).

Keys: the v1 dataclasses (v1/config/model_args.py, data_args.py, training_args.py,
sample_args.py) and the top-level keys of LLaMA-Factory's examples/v1/. Distribution, PEFT,
kernels, quantization, initialization and optimizer are plugin configs, each a mapping whose
``name`` picks the plugin (``dist_config: {name: fsdp2}``, ``peft_config: {name: lora, r: 16}``).

Mapping and defaults (v1/config/*.py):
- micro_batch_size (default 1), global_batch_size (accumulation follows from it);
- cutoff_len 2048; batching_strategy: normal pads each batch to its longest row,
  padding_free / dynamic_padding_free concatenate without padding, dynamic_batching fills
  batches to a token budget;
- peft_config name lora -> r, lora_alpha, target_modules; quant_config quantization_bit;
- kernel_config name liger_kernel -> the Liger fused loss; dist_config fsdp2/deepspeed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    as_bool,
    as_number,
    check_keys,
    link_deepspeed,
    positive_or_missing,
    split_list,
)
from seqprof.config.loader import LoadedConfig

NAME = "llamafactory_v1"
LABEL = "LLaMA-Factory v1"
SRC = "LLaMA-Factory v1 default (src/llamafactory/v1/config/{})"

# every field v1/config/{model,data,training,sample}_args.py had at any commit from 10146029b (2025-10-07) to
# ff6d4d1 (2026-08-18): v1 has no release to pin, and a fork of any date may run it (coinmini's save_total_limit,
# added 2026-04-20); plus the top-level keys of examples/v1/
KNOWN = frozenset("""
auto_class auto_model_class batching_strategy batching_workers bf16 cp_mode cp_size custom_chat_template
cutoff_len dataset dataset_dir dist_config dist_timeout dp_size dpo_label_smoothing
enable_activation_checkpointing eval_dataset flash_attn full_determinism global_batch_size init_config
kernel_config ld_alpha learning_rate logging_steps lr_scheduler_config max_grad_norm max_new_tokens max_steps
micro_batch_size model model_class mp_replicate_size mp_shard_size num_train_epochs optim_config output_dir
peft_config pref_beta pref_ftx pref_loss quant_config resume_from_checkpoint sample_backend save_ckpt_as_hf
save_epochs save_steps save_total_limit seed simpo_gamma template train_dataset trust_remote_code
use_fast_processor
""".split())
PLUGIN_KEYS = ("init_config", "peft_config", "kernel_config", "quant_config", "dist_config", "optim_config")
BATCHING = {"normal": "longest", "padding_free": "padding_free", "dynamic_batching": "longest",
            "dynamic_padding_free": "padding_free"}


def detect(data: Mapping[str, Any]) -> int:
    if not isinstance(data.get("model"), str):
        return 0
    hits = sum(1 for k in ("model_class", "train_dataset", "batching_strategy", "sample_backend",
                           "global_batch_size", "cp_size", *PLUGIN_KEYS) if k in data)
    if sum(1 for k in data if k not in KNOWN) > sum(1 for k in data if k in KNOWN):
        return 0  # v1 would refuse most of its keys: a `model:` + `train_dataset:` of some script's own arguments
    return 15 + 2 * hits if hits else 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of a LLaMA-Factory v1 config."""
    b = Builder(cfg)
    b.stated("model", "model")
    peft = b.raw("peft_config") if isinstance(b.raw("peft_config"), Mapping) else {}
    if peft.get("export_dir"):
        b.derived("task", "export", "peft_config.export_dir")
        b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
        return b.result()
    b.default("task", "train", "a v1 config with no export_dir trains")
    b.default("trainer", "dpo" if "dpo" in str(b.raw("train_dataset", "")).lower() else "sft",
              "inferred from the train_dataset name (v1 configs do not name the trainer)")
    b.first("datasets", ["train_dataset", "dataset"], split_list)
    b.stated("max_seq_length", "cutoff_len", as_number)
    b.default("max_seq_length", 2048, SRC.format("data_args.py: cutoff_len=2048"))
    b.default("overflow", "truncate", "cutoff_len truncates")
    b.stated("micro_batch_size", "micro_batch_size", as_number)
    b.default("micro_batch_size", 1, SRC.format("training_args.py: micro_batch_size=1"))
    b.stated("global_batch_size", "global_batch_size", as_number)
    b.stated("learning_rate", "learning_rate", as_number)
    b.stated("max_steps", "max_steps", positive_or_missing)
    b.stated("num_epochs", "num_train_epochs", as_number)
    b.stated("save_steps", "save_steps", as_number)
    if as_bool(b.raw("bf16")) is True:
        b.derived("precision", "bf16", "bf16")
    b.stated("attn_implementation", "flash_attn")
    b.stated("context_parallel_size", "cp_size", as_number)
    strategy = b.raw("batching_strategy")
    if strategy is not None:
        b.derived("padding", BATCHING.get(str(strategy), str(strategy)), "batching_strategy")
        if str(strategy).startswith("dynamic"):
            b.derived("batching", "token_budget", "batching_strategy")
    b.default("padding", "longest", SRC.format("training_args.py: batching_strategy='normal' pads to the "
                                               "longest row"))
    b.default("batching", "fixed", "batching_strategy 'normal' uses fixed micro batches")
    if peft.get("name") == "lora":
        b.derived("adapter", "lora", "peft_config.name")
        if "r" in peft:
            b.derived("lora_r", peft["r"], "peft_config.r")
        if "lora_alpha" in peft:
            b.derived("lora_alpha", peft["lora_alpha"], "peft_config.lora_alpha")
        b.stated("lora_dropout", "peft_config.lora_dropout", as_number)
        if "target_modules" in peft:
            b.derived("lora_targets", split_list(peft["target_modules"]), "peft_config.target_modules")
    elif peft.get("name"):
        b.derived("adapter", None, "peft_config.name")
    quant = b.raw("quant_config") if isinstance(b.raw("quant_config"), Mapping) else {}
    bits = as_number(quant.get("quantization_bit"))
    if bits == 4:
        b.derived("load_in_4bit", True, "quant_config.quantization_bit")
        if b.value("adapter") == "lora":
            b.derived("adapter", "qlora", "quant_config.quantization_bit", overwrite=True)
    elif bits == 8:
        b.derived("load_in_8bit", True, "quant_config.quantization_bit")
    kernel = b.raw("kernel_config") if isinstance(b.raw("kernel_config"), Mapping) else {}
    if "liger" in str(kernel.get("name", "")):
        b.derived("fused_loss", "liger", "kernel_config.name")
    dist = b.raw("dist_config") if isinstance(b.raw("dist_config"), Mapping) else {}
    name = str(dist.get("name", ""))
    if name.startswith("fsdp"):
        b.derived("fsdp", name, "dist_config.name")
    elif name == "deepspeed":
        link_deepspeed(b, "dist_config.config_file")
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
    return b.result()
