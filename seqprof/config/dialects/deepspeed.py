"""A DeepSpeed JSON config read on its own (the file a trainer's ``deepspeed:`` key names).

Keys: DeepSpeed's config reference (deepspeed/runtime/config.py, constants.py). Values of
"auto" are filled in by the HF Trainer integration from TrainingArguments, so they are not
settings here. Mapping: zero_stage <- zero_optimization.stage; micro_batch_size <-
train_micro_batch_size_per_gpu; gradient_accumulation_steps; global_batch_size <-
train_batch_size (world size follows when all three are numbers: global = micro x accum x
world); precision <- bf16.enabled / fp16.enabled; offload targets.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    apply_deepspeed_json,
    check_keys,
    did_you_mean,
)
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic

NAME = "deepspeed"
LABEL = "DeepSpeed"

# a section a DeepSpeed extension reads from the same file: MS-AMP's msamp (msamp/deepspeed/runtime/config.py), which
# its DeepSpeed engine applies and accelerate's fp8 backend hands on
EXTENSION_SECTIONS = frozenset({"msamp"})
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
data_parallel_size sequence_parallel_size
""".split()) | EXTENSION_SECTIONS  # the last lines: read by 0.12-0.19.8 (runtime/config.py, its get_* readers and
# constants; the last, deepspeed/__init__.py initialize's data/sequence-parallel mesh, from 0.15)


def detect(data: Mapping[str, Any]) -> int:
    """DeepSpeed by its own keys, when they are most of the file: a TRL recipe with two stray DeepSpeed batch keys
    beside a dozen of its own (samuelzxu's dpo.yaml: train_batch_size, train_micro_batch_size_per_gpu) is TRL's."""
    hits = sum(1 for k in ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size",
                           "zero_allow_untested_optimizer", "gradient_clipping", "steps_per_print") if k in data)
    if sum(1 for k in data if k in KNOWN) * 2 < len(data):
        return 0
    return 20 + hits if hits >= 1 and ("zero_optimization" in data or hits >= 2) else 0


# The fields of DeepSpeed's precision sections (runtime/precision_config.py DeepSpeedBF16Config / DeepSpeedFP16Config,
# 0.17.1 to 0.19.8): from 0.17.1 they are pydantic models with extra="forbid" (runtime/config_utils.py), so a key
# they lack stops deepspeed.initialize ("Extra inputs are not permitted"); before, only the keys read were read
PRECISION_FIELDS = {
    "bf16": frozenset({"enabled", "immediate_grad_update", "check_grad_overflow", "bf16_master_weights_and_grads",
                       "bf16_optimizer_states"}),
    "fp16": frozenset({"enabled", "auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis",
                       "consecutive_hysteresis", "min_loss_scale", "fp16_master_weights_and_grads"}),
}
PRECISION_FIELDS["bfloat16"] = PRECISION_FIELDS["bf16"]  # the old name, read when bf16 is absent

# The fields (and aliases) of DeepSpeed's ZeRO section and its offload blocks in any release from 0.7.0, when they
# became pydantic models with extra="forbid", to 0.19.8 (runtime/zero/config.py DeepSpeedZeroConfig,
# runtime/zero/offload_config.py): a key none of them has stops deepspeed.initialize ("Extra inputs are not
# permitted"), and releases before 0.7 never read it. A field some release dropped (0.19.8's mics_shard_size) stays.
ZERO_FIELDS = frozenset("""
allgather_bucket_size allgather_partitions allgather_sequential compute_grad_norm contiguous_gradients cpu_offload
cpu_offload_param cpu_offload_use_pin_memory elastic_checkpoint enable_sanity_checks
gather_16bit_weights_on_model_save ignore_unused_parameters leaf_module legacy_stage1 load_from_fp32_weights
log_trace_cache_warnings max_live_parameters max_reuse_distance memory_efficient_linear
mics_hierarchical_params_gather mics_shard_size model_persistence_threshold module_granularity_threshold
offload_optimizer offload_param overlap_comm override_module_apply param_persistence_threshold parameter_alignment
pipeline_loading_checkpoint prefetch_bucket_size reduce_bucket_size reduce_scatter round_robin_gradients
save_muon_momentum_buffer_in_memory stage stage3_allgather_sequential stage3_gather_16bit_weights_on_model_save
stage3_gather_fp16_weights_on_model_save stage3_max_live_parameters stage3_max_reuse_distance
stage3_model_persistence_threshold stage3_module_granularity_threshold stage3_param_persistence_threshold
stage3_prefetch_bucket_size stage3_use_all_reduce_for_fetch_params sub_group_size use_all_reduce_for_fetch_params
use_multi_rank_bucket_allreduce zenflow zero_hpz_partition_size zero_quantized_gradients
zero_quantized_nontrainable_weights zero_quantized_weights zeropp_loco_param
""".split())
OFFLOAD_FIELDS = {
    "offload_param": ("DeepSpeedZeroOffloadParamConfig", frozenset(
        {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"})),
    "offload_optimizer": ("DeepSpeedZeroOffloadOptimizerConfig", frozenset(
        {"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read", "pipeline_write", "fast_init",
         "ratio", "super_offload", "cpuadam_cores_perc"})),
}


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Settings a DeepSpeed JSON pins on its own."""
    b = Builder(cfg)
    b.default("task", "launch", "a DeepSpeed config: it shapes a run that a trainer config describes")
    b.default("deepspeed", cfg.path, "this file is itself a DeepSpeed config")
    apply_deepspeed_json(b, cfg)
    g, m, a = (b.value(n) for n in ("global_batch_size", "micro_batch_size", "gradient_accumulation_steps"))
    if all(isinstance(v, int) and v > 0 for v in (g, m, a)) and g % (m * a) == 0:
        b.derived("world_size", g // (m * a), "train_batch_size")
    stage, device = cfg.get("zero_optimization.stage"), cfg.get("zero_optimization.offload_param.device")
    if isinstance(stage, int) and not isinstance(stage, bool) and stage < 3 and \
            isinstance(device, str) and device.lower() in ("cpu", "nvme"):
        b.derived("param_offload_below_stage_3", stage, "zero_optimization.offload_param")
        b.derived("param_offload_device", device, "zero_optimization.offload_param.device")
    default_lr = _optimizer_default_lr(cfg)
    if default_lr is not None:
        b.derived("optimizer_default_lr", default_lr, "optimizer")
    for key in COMMUNICATION_TYPE_KEYS:  # the first one DeepSpeedConfig refuses
        value = cfg.get(key)
        if isinstance(value, str) and value.lower() not in COMMUNICATION_TYPES:
            b.derived("communication_type_refused", key, key)
            break
    unknown = check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL)
    b.diagnostics.extend(_comments(_switched_off(unknown, cfg), cfg))
    b.diagnostics.extend(_precision_section_keys(cfg))
    b.diagnostics.extend(_zero_section_keys(cfg))
    b.diagnostics.extend(_against_launch_lines(cfg))
    return b.result()


# what DeepSpeedConfig reads these as (runtime/config.py get_communication_data_type, lowered first): fp32, fp16, bf16
# (0.19.8), and bfp16 in releases before bf16 was the name; any other text raises ValueError in deepspeed.initialize
COMMUNICATION_TYPE_KEYS = ("communication_data_type", "seq_parallel_communication_data_type")
COMMUNICATION_TYPES = frozenset({"fp32", "fp16", "bf16", "bfp16"})


# the learning rate DeepSpeed's own optimizers start from when the optimizer section gives none: runtime/engine.py
# _configure_basic_optimizer passes `params` as written (0.10 to 0.19.8), to FusedAdam / DeepSpeedCPUAdam / torch
# AdamW, FusedLamb, FusedLion (lr=1e-3) or DeepSpeedCPUAdagrad / torch Adagrad (lr=1e-2); the type is matched
# without case (runtime/config.py lowers it)
OPTIMIZER_DEFAULT_LR = {"adam": 1e-3, "adamw": 1e-3, "lamb": 1e-3, "lion": 1e-3, "adagrad": 1e-2}
# a DeepSpeed scheduler that scales the optimizer's own lr (the others write theirs: WarmupLR's warmup_max_lr,
# OneCycle's cycle_max_lr), as transformers' schedulers do when the file has no scheduler section
SCALES_THE_OPTIMIZER_LR = frozenset({"warmupcosinelr"})


# WarmupLR and WarmupDecayLR write warmup_max_lr into the optimizer, 0.001 when their params leave it out
# (runtime/lr_schedules.py, 0.10 to 0.19.8): the same default rate as the optimizer's own
WARMUP_SCHEDULERS = frozenset({"warmuplr", "warmupdecaylr"})


def _default_peak(scheduler: Mapping) -> bool:
    """A warmup scheduler with no warmup_max_lr (Eedi 8th place's stage3.json: WarmupDecayLR with only
    warmup_num_steps), which warms up to DeepSpeed's default 0.001, not to the run's learning_rate."""
    params = scheduler.get("params")
    return str(scheduler.get("type", "")).lower() in WARMUP_SCHEDULERS and not (
        isinstance(params, Mapping) and "warmup_max_lr" in params)


def _optimizer_default_lr(cfg: LoadedConfig) -> float | None:
    """The default lr DeepSpeed builds the file's optimizer with when its section sets none, and no DeepSpeed
    scheduler writes one: transformers' Trainer fills optimizer.params.lr from its learning_rate only where the file
    writes "auto" (integrations/deepspeed.py fill_match returns on a missing key), so the run's learning_rate is never
    applied (bugdaryan/translation-en-ru's `"optimizer": {"type": "AdamW"}`: 1e-3 for a 5e-5 run)."""
    optimizer, scheduler = cfg.get("optimizer"), cfg.get("scheduler")
    if not isinstance(optimizer, Mapping) or not isinstance(optimizer.get("type"), str):
        return None
    params = optimizer.get("params")
    if isinstance(params, Mapping) and "lr" in params:
        return None
    if isinstance(scheduler, Mapping) and str(scheduler.get("type", "")).lower() not in SCALES_THE_OPTIMIZER_LR \
            and not _default_peak(scheduler):
        return None
    return OPTIMIZER_DEFAULT_LR.get(optimizer["type"].lower())


# a script that hands its options to transformers' TrainingArguments (directly, through HfArgumentParser or TRL's
# configs), where HfTrainerDeepSpeedConfig compares them with the DeepSpeed file
HF_TRAINER = re.compile(r"\b(?:Seq2Seq)?TrainingArguments\b|\bHfArgumentParser\b|\bTrlParser\b|\bfrom trl\b")


def _against_launch_lines(cfg: LoadedConfig) -> list:
    """What the launch lines that run a training script with this file pass beside it (Qwen-VL's finetune_ds.sh:
    `--deepspeed finetune/ds_config_zero3.json --lr_scheduler_type "cosine"`), checked as the Trainer checks it."""
    from seqprof.config.dialects.trainer_deepspeed import FIELDS, Stated, refused_values, replaced_by_deepspeed
    from seqprof.config.launches import command_line_values, launched_scripts
    from seqprof.config.project_fields import project_root

    given = command_line_values(cfg.path, FIELDS) if isinstance(cfg.data, dict) else {}
    if not given:
        return []
    root = project_root(cfg.path)
    scripts = launched_scripts(cfg.path)
    if not scripts or not all(_runs_hf_trainer(root, script) for script in scripts):
        return []  # a script of its own that calls deepspeed.initialize takes its options for itself
    run = Stated.from_launch(given)
    return refused_values(run, cfg, cfg) + replaced_by_deepspeed(run, cfg, cfg)


def _runs_hf_trainer(root: Path, script: str) -> bool:
    """*script* hands its options to transformers' Trainer, itself or through the project module it imports its
    entry point from (LLaVA's train_mem.py: `from llava.train.train import train`, then `train()`; one level)."""
    from seqprof.config.project_fields import parsed_module, python_files, source_text

    if HF_TRAINER.search(source_text(root / script)):
        return True
    tree = parsed_module(root / script)
    modules = {node.module.replace(".", "/") for node in (tree.body if tree is not None else ())
               if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    return any(HF_TRAINER.search(source_text(file)) for file in python_files(root)
               if any(file.as_posix().endswith(f"/{module}.py") for module in modules))


# the schedulers DeepSpeed builds by name: its own (runtime/lr_schedules.py VALID_LR_SCHEDULES, 0.19.8) and, failing
# that, torch.optim.lr_scheduler's classes (engine.py _scheduler_from_config); any other type stops initialize
DEEPSPEED_SCHEDULERS = frozenset({
    "LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR",
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "SequentialLR",
    "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
    "OneCycleLR", "PolynomialLR", "LRScheduler"})


# a top-level key JSON's lack of comments makes a comment of ("//", "//2", "#", "_comment2", "__notes")
COMMENT_KEY = re.compile(r"^(?://|#)|^_*(?:comments?|notes?|description)_?\d*$", re.I)


def _comments(found: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A comment written as a top-level key holding text (aiiseverything/Qwen-VL2-postrain's ds_zero2.json: "//",
    "//2", "//3") is no misspelt setting: DeepSpeedConfig reads the top-level keys it knows by name
    (runtime/config.py _initialize_params) and never looks at the others. A note, not a warning."""
    out = []
    for d in found:
        value = cfg.data.get(d.key) if isinstance(cfg.data, dict) and d.kind == "unknown_key" else None
        text = isinstance(value, str) or isinstance(value, list) and all(isinstance(v, str) for v in value)
        if text and COMMENT_KEY.search(d.key):
            d = replace(d, kind="unread_key", suggestion=None,
                        message=f"'{d.key}' holds text DeepSpeed never reads: a comment (DeepSpeed reads only the "
                                "top-level keys it knows), so removing it changes nothing")
        out.append(d)
    return out


def _switched_off(found: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """An unknown key that resembles `scheduler` but holds a type DeepSpeed cannot build (nkkbr/241121_qwerty's
    `"lr_scheduler": {"type": "constant"}`) is a block switched off by its name, not a typo: renamed back, it would
    stop deepspeed.initialize ("DeepSpeed does not recognize LR scheduler constant"), and as it is DeepSpeed ignores
    it, leaving the schedule to the Trainer's options or the script. A note, with no rename to follow."""
    out = []
    for d in found:
        block = cfg.data.get(d.key) if isinstance(cfg.data, dict) and d.kind == "unknown_key" else None
        kind = block.get("type") if isinstance(block, dict) and d.suggestion == "scheduler" else None
        if isinstance(kind, str) and kind not in DEEPSPEED_SCHEDULERS:
            d = replace(d, kind="unread_key", suggestion=None,
                        message=f"'{d.key}' is not a key DeepSpeed reads, so it ignores this block; its type '{kind}' "
                                "is no scheduler DeepSpeed builds (runtime/lr_schedules.py, torch.optim.lr_scheduler), "
                                "so renaming it 'scheduler' would stop deepspeed.initialize: a block switched off by "
                                "its name (with no scheduler section, the Trainer or the script schedules the rate)")
        out.append(d)
    return out


def _precision_section_keys(cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """Keys of a bf16 / fp16 section that DeepSpeed's precision model lacks: an fp16 block copied under bf16
    (DAMO's LongLoRA stage2.json: loss_scale, hysteresis ... under bf16), or apex's fp16_opt_level under fp16."""
    out = []
    for section, fields in PRECISION_FIELDS.items():
        block = cfg.get(section)
        if not isinstance(block, dict):
            continue
        model = "DeepSpeedFP16Config" if section == "fp16" else "DeepSpeedBF16Config"
        for key in block:
            if not isinstance(key, str) or key in fields:
                continue
            reason = (f"DeepSpeed's {model} (runtime/precision_config.py) has no field '{key}': from 0.17.1 it "
                      "refuses the config (extra=\"forbid\", \"Extra inputs are not permitted\") when "
                      "deepspeed.initialize reads it, and earlier releases never read the key")
            out.append(_unknown_section_key(cfg, f"{section}.{key}", f"DeepSpeed {section}", reason))
    return out


def _zero_section_keys(cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """Keys of zero_optimization (and of its offload_param / offload_optimizer blocks) that no DeepSpeed release's
    ZeRO model has: llm_post_train's `"device": "none"` written straight under zero_optimization."""
    zero = cfg.get("zero_optimization")
    if not isinstance(zero, dict):
        return []  # `zero_optimization: true` is the pre-0.3 form DeepSpeed still reads
    blocks = [("zero_optimization", "DeepSpeedZeroConfig", "runtime/zero/config.py", zero, ZERO_FIELDS)]
    for name, (model, fields) in OFFLOAD_FIELDS.items():
        if isinstance(zero.get(name), dict):
            blocks.append((f"zero_optimization.{name}", model, "runtime/zero/offload_config.py", zero[name], fields))
    out = []
    for prefix, model, source, block, fields in blocks:
        for key in block:
            if not isinstance(key, str) or key in fields or key.startswith("_"):
                continue
            reason = (f"DeepSpeed's {model} ({source}) has no field '{key}' in any release: from 0.7 it refuses the "
                      "config (extra=\"forbid\", \"Extra inputs are not permitted\") when deepspeed.initialize "
                      "reads it, and earlier releases never read the key")
            out.append(_unknown_section_key(cfg, f"{prefix}.{key}", "DeepSpeed ZeRO", reason,
                                            did_you_mean(key, fields)))
    return out


def _unknown_section_key(cfg: LoadedConfig, dotted: str, what: str, reason: str,
                         near: str | None = None) -> ConfigDiagnostic:
    """The unknown_key diagnostic of a key one of DeepSpeed's pydantic sections lacks (*near*: its did-you-mean)."""
    prefix = dotted.rpartition(".")[0]
    return ConfigDiagnostic(
        kind="unknown_key", key=dotted, file=cfg.path, line=cfg.line(dotted) or 1, reason=reason,
        suggestion=f"{prefix}.{near}" if near else None,
        message=f"'{dotted}' is not a {what} setting: {reason}" + (f"; did you mean '{near}'?" if near else ""))
