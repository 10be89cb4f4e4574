"""Hugging Face accelerate launch config (``accelerate launch --config_file x.yaml``).

Not a training config on its own: it fixes the world size, mixed precision and the FSDP or
DeepSpeed plugin that the training script then runs under (LLaMA-Factory ships them under
examples/accelerate/). Keys: accelerate's ClusterConfig (accelerate/commands/config/
config_args.py) with its fsdp_config / deepspeed_config / megatron_lm_config tables.

Mapping: world_size <- num_processes (the total over all machines); precision <-
mixed_precision (no -> fp32); fsdp <- fsdp_config when distributed_type is FSDP; deepspeed and
zero_stage <- deepspeed_config (an inline table or deepspeed_config_file).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    as_number,
    check_keys,
    link_deepspeed,
)
from seqprof.config.loader import LoadedConfig

NAME = "accelerate"
LABEL = "accelerate's config"

KNOWN = frozenset("""
compute_environment distributed_type mixed_precision use_cpu debug num_processes num_machines machine_rank
main_process_ip main_process_port rdzv_backend same_network main_training_function enable_cpu_affinity
downcast_bf16 gpu_ids tpu_name tpu_zone tpu_use_cluster tpu_use_sudo tpu_env commands command_file
dynamo_config deepspeed_config fsdp_config megatron_lm_config ipex_config mpirun_config fp8_config
parallelism_config dynamo_backend num_cpu_threads_per_process
""".split())


# accelerate's DistributedType values (utils/dataclasses.py): a `distributed_type:` of one is accelerate's own key, even
# alone beside mixed_precision (ClusterConfig.from_yaml_file fills compute_environment in when it is missing)
DISTRIBUTED_TYPES = frozenset({"NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA",
                               "MULTI_HPU", "MULTI_XPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "TPU",
                               "MEGATRON_LM"})


def detect(data: Mapping[str, Any]) -> int:
    hits = sum(1 for k in ("compute_environment", "distributed_type", "num_machines", "machine_rank",
                           "main_training_function", "rdzv_backend") if k in data)
    if str(data.get("distributed_type", "")).upper() in DISTRIBUTED_TYPES and \
            ("mixed_precision" in data or "num_processes" in data):
        hits += 1
    return 20 + hits if hits >= 2 else 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """World size, precision and sharding of an accelerate launch config."""
    b = Builder(cfg)
    b.default("task", "launch", "an accelerate launch config: it configures processes, not training")
    b.stated("world_size", "num_processes", as_number)
    b.stated("precision", "mixed_precision", lambda v: {"no": "fp32"}.get(str(v), str(v)))
    dist = str(b.raw("distributed_type", "")).upper()
    if dist == "FSDP":
        b.derived("fsdp", b.raw("fsdp_config") or "FSDP", "fsdp_config" if b.present("fsdp_config")
                  else "distributed_type")
        version = as_number(b.raw("fsdp_config.fsdp_version"))
        if isinstance(version, int):
            b.derived("fsdp_version", version, "fsdp_config.fsdp_version")
    elif dist == "DEEPSPEED":
        ds = b.raw("deepspeed_config")
        if isinstance(ds, Mapping):
            if b.present("deepspeed_config.deepspeed_config_file"):
                link_deepspeed(b, "deepspeed_config.deepspeed_config_file")
                refused = _refused_beside_file(cfg, ds)
                if refused:
                    b.derived("deepspeed_file_refuses", refused, "deepspeed_config.deepspeed_config_file")
            elif isinstance(ds.get("zero_stage"), int):
                b.derived("deepspeed", dict(ds), "deepspeed_config")
                b.derived("zero_stage", ds["zero_stage"], "deepspeed_config.zero_stage")
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
    return b.result()


# what DeepSpeedPlugin._deepspeed_config_checks refuses from the accelerate config beside a deepspeed_config_file
# (accelerate/utils/dataclasses.py, 0.18 to 1.16): the DeepSpeed JSON states these itself
REFUSED_BESIDE_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                       "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                       "zero3_save_16bit_model")


def _refused_beside_file(cfg: LoadedConfig, ds: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The settings `accelerate launch` passes on as taken from this file (ACCELERATE_CONFIG_DS_FIELDS) that
    DeepSpeedPlugin refuses beside a deepspeed_config_file: deepspeed_config entries of its list, and
    mixed_precision, which launch counts whenever the file states it ('no' too; `accelerate config` leaves it out
    when asked for a DeepSpeed file) and the launch line does not pass --mixed_precision itself."""
    from seqprof.config.launches import launch_overrides

    keys = [f"deepspeed_config.{name}" for name in REFUSED_BESIDE_FILE if name in ds]
    if cfg.data.get("mixed_precision") is not None and \
            not (cfg.path and Path(cfg.path).is_file() and "mixed_precision" in launch_overrides(cfg.path)):
        keys.append("mixed_precision")
    return [{"key": key, "line": cfg.line(key), "value": cfg.get(key)} for key in keys]
