"""A DeepSpeed JSON config read on its own (the file a trainer's ``deepspeed:`` key names).

Keys: DeepSpeed's config reference (deepspeed/runtime/config.py, constants.py). Values of
"auto" are filled in by the HF Trainer integration from TrainingArguments, so they are not
settings here. Mapping: zero_stage <- zero_optimization.stage; micro_batch_size <-
train_micro_batch_size_per_gpu; gradient_accumulation_steps; global_batch_size <-
train_batch_size (world size follows when all three are numbers: global = micro x accum x
world); precision <- bf16.enabled / fp16.enabled; offload targets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    apply_deepspeed_json,
    check_keys,
)
from seqprof.config.loader import LoadedConfig

NAME = "deepspeed"
LABEL = "DeepSpeed"

KNOWN = frozenset("""
train_batch_size train_micro_batch_size_per_gpu gradient_accumulation_steps gradient_clipping
prescale_gradients gradient_predivide_factor sparse_gradients steps_per_print wall_clock_breakdown dump_state
optimizer scheduler fp16 bf16 bfloat16 amp zero_optimization zero_allow_untested_optimizer zero_force_ds_cpu_optimizer
activation_checkpointing flops_profiler comms_logger aio data_efficiency curriculum_learning data_types
tensorboard wandb csv_monitor comet elasticity autotuning compression_training checkpoint pipeline
communication_data_type seq_parallel_communication_data_type memory_breakdown disable_allgather
tensor_parallel nebula weight_quantization sparse_attention torch_autocast compile graph_harvesting
use_data_before_expert_parallel_ timers zero_optimization_stage _comment
hybrid_engine eigenvalue progressive_layer_drop quantize_training dataloader_drop_last vocabulary_size expert_parallel
gradient_allreduce_op log_level disable_python_gc managed_gradient_accumulation use_data_before_expert_parallelism
seq_parallel_comm_data_type allgather_size datastates_ckpt dynamic_batching
""".split())  # the last three lines: read by 0.12-0.19.8 (runtime/config.py, its get_* readers and constants)


def detect(data: Mapping[str, Any]) -> int:
    """DeepSpeed by its own keys, when they are most of the file: a TRL recipe with two stray DeepSpeed batch keys
    beside a dozen of its own (samuelzxu's dpo.yaml: train_batch_size, train_micro_batch_size_per_gpu) is TRL's."""
    hits = sum(1 for k in ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size",
                           "zero_allow_untested_optimizer", "gradient_clipping", "steps_per_print") if k in data)
    if sum(1 for k in data if k in KNOWN) * 2 < len(data):
        return 0
    return 20 + hits if hits >= 1 and ("zero_optimization" in data or hits >= 2) else 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Settings a DeepSpeed JSON pins on its own."""
    b = Builder(cfg)
    b.default("task", "launch", "a DeepSpeed config: it shapes a run that a trainer config describes")
    b.default("deepspeed", cfg.path, "this file is itself a DeepSpeed config")
    apply_deepspeed_json(b, cfg)
    g, m, a = (b.value(n) for n in ("global_batch_size", "micro_batch_size", "gradient_accumulation_steps"))
    if all(isinstance(v, int) and v > 0 for v in (g, m, a)) and g % (m * a) == 0:
        b.derived("world_size", g // (m * a), "train_batch_size")
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
    return b.result()
