"""torchtune recipe config (``tune run <recipe> --config x.yaml``): components named by ``_component_``.

Keys: the top-level keys torchtune's recipes read (recipes/*.py, recipes/configs/); every
``_component_`` table is passed to that component, so its own keys are not checked here.

Mapping (recipes/configs/*, torchtune/data/_collate.py):
- model <- model._component_ (the builder names the architecture, e.g. lora_llama3_2_1b);
  ``qlora_*`` builders quantize the base weights to NF4 (adapter qlora, 4-bit), ``lora_*``
  ones are LoRA; lora_r/alpha <- model.lora_rank/lora_alpha; targets <- lora_attn_modules
  plus mlp/output when apply_lora_to_mlp/apply_lora_to_output;
- max_seq_length <- tokenizer.max_seq_len (null: no truncation); padding: dataset.packed
  packs to max_seq_len, otherwise padded_collate_sft pads each batch to its longest sequence;
- micro batch <- batch_size, gradient_accumulation_steps, epochs, max_steps_per_epoch,
  shuffle, dtype, enable_activation_checkpointing, optimizer._component_ and lr;
- fused_loss: CEWithChunkedOutputLoss / LinearCrossEntropyLoss compute the loss in chunks;
- checkpoints: recipes save at the end of every epoch.
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
    split_list,
)
from seqprof.config.loader import LoadedConfig

NAME = "torchtune"
LABEL = "torchtune's recipes"

KNOWN = frozenset("""
output_dir model tokenizer checkpointer resume_from_checkpoint save_adapter_weights_only dataset dataset_val seed
shuffle batch_size batch_size_val optimizer lr_scheduler loss epochs max_steps_per_epoch gradient_accumulation_steps
compile metric_logger log_every_n_steps log_peak_memory_stats log_level device dtype enable_activation_checkpointing
enable_activation_offloading activation_offloading_use_streams profiler low_cpu_ram optimizer_in_bwd clip_grad_norm
fsdp_cpu_offload fsdp_reshard_after_forward custom_sharded_layers tensor_parallel_dim tensor_parallel_plan
data_parallel_shard_dim data_parallel_replicate_dim context_parallel_dim context_parallel_rotate_method ac_mode
ac_option memory_efficient_fsdp_wrap ref_checkpointer collate_fn run_val_every_n_steps quantizer
fake_quant_after_n_steps teacher_model teacher_checkpointer kd_loss kd_ratio generation keep_last_n_checkpoints
enable_async_checkpointing parallelize_plan save_last_epoch_only cudnn_deterministic_mode enable_fp8_training
fp8_recipe_name cpu_offload seed_everything
""".split())

CHUNKED_LOSSES = ("CEWithChunkedOutputLoss", "LinearCrossEntropyLoss", "ChunkedCrossEntropy")
PREFERENCE_LOSSES = ("DPOLoss", "RSOLoss", "SimPOLoss", "IPOLoss")


def _component(data: Mapping[str, Any], key: str) -> str:
    section = data.get(key)
    return str(section.get("_component_", "")) if isinstance(section, Mapping) else ""


def detect(data: Mapping[str, Any]) -> int:
    components = sum(1 for v in data.values() if isinstance(v, Mapping) and "_component_" in v)
    if not components:
        return 0
    tune = sum(1 for v in data.values() if isinstance(v, Mapping) and "torchtune" in str(v.get("_component_", "")))
    return 10 + 2 * components + 3 * tune


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of a torchtune recipe config."""
    b = Builder(cfg)
    data = cfg.data
    model = _component(data, "model")
    loss = _component(data, "loss")
    if any(name in loss for name in PREFERENCE_LOSSES):
        b.derived("trainer", "dpo", "loss._component_")
    elif data.get("kd_loss") is not None:
        b.derived("trainer", "distill", "kd_loss")
    b.default("trainer", "sft", "a torchtune fine-tuning recipe with a cross-entropy loss")
    b.stated("model", "model._component_")
    b.stated("model_config_path", "checkpointer.checkpoint_dir")
    leaf = model.rsplit(".", 1)[-1]
    if leaf.startswith("qlora_"):
        b.derived("adapter", "qlora", "model._component_")
        b.derived("load_in_4bit", True, "model._component_")
    elif leaf.startswith("lora_"):
        b.derived("adapter", "lora", "model._component_")
    b.stated("lora_r", "model.lora_rank", as_number)
    b.stated("lora_alpha", "model.lora_alpha", as_number)
    b.stated("lora_dropout", "model.lora_dropout", as_number)
    if b.present("model.lora_attn_modules"):
        targets = split_list(b.raw("model.lora_attn_modules"))
        if as_bool(b.raw("model.apply_lora_to_mlp")) is True:
            targets.append("mlp")
        if as_bool(b.raw("model.apply_lora_to_output")) is True:
            targets.append("output")
        b.derived("lora_targets", targets, "model.lora_attn_modules")
    b.stated("max_seq_length", "tokenizer.max_seq_len", as_number)
    if b.value("max_seq_length") is not None:
        b.default("overflow", "truncate", "the model tokenizer truncates to max_seq_len")
    if as_bool(b.raw("dataset.packed")) is True:
        b.derived("padding", "packed", "dataset.packed")
    b.default("padding", "longest", "padded_collate_sft pads each batch to its longest sequence "
                                    "(torchtune/data/_collate.py)")
    b.stated("micro_batch_size", "batch_size", as_number)
    b.stated("gradient_accumulation_steps", "gradient_accumulation_steps", as_number)
    b.stated("num_epochs", "epochs", as_number)
    b.stated("max_steps_per_epoch", "max_steps_per_epoch", as_number)
    b.stated("shuffle", "shuffle", as_bool)
    b.stated("gradient_checkpointing", "enable_activation_checkpointing", as_bool)
    b.stated("precision", "dtype", lambda v: {"bfloat16": "bf16", "float32": "fp32"}.get(str(v), str(v)))
    b.stated("optimizer", "optimizer._component_")
    b.stated("learning_rate", "optimizer.lr", as_number)
    if any(name in loss for name in CHUNKED_LOSSES):
        b.derived("fused_loss", "chunked", "loss._component_")
    b.stated("datasets", "dataset._component_", lambda v: [v])
    b.default("save_strategy", "epoch", "torchtune recipes save a checkpoint at the end of every epoch")
    b.stated("offload_params", "fsdp_cpu_offload", as_bool)
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
    return b.result()
