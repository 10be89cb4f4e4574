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
    Moved,
    as_number,
    check_keys,
    link_deepspeed,
    premature_key,
)
from seqprof.config.key_history import KeyHistory, assumed, describe_versions
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.pins import Pins

NAME = "accelerate"
LABEL = "accelerate's config"
USES_PINS = True  # the pinned accelerate decides which top-level keys its config class takes

# keys process_config converts to the new format before the class is built (fp16 -> mixed_precision,
# dynamo_backend -> dynamo_config), in every release keys/key_history.json holds
CONVERTED = frozenset({"fp16", "dynamo_backend"})
SAGEMAKER = "AMAZON_SAGEMAKER"

# every release from 0.18 (0.28 on: from_yaml_file's "had unknown keys" ValueError; before it, cls(**config_dict)'s
# TypeError) refuses a top-level key its config class lacks, so `accelerate launch --config_file` stops there
REFUSAL = ("`accelerate launch --config_file` refuses a key the config class lacks (ValueError \"had unknown keys\" "
           "from 0.28, TypeError before)")


# accelerate's DistributedType values (utils/dataclasses.py): a `distributed_type:` of one is accelerate's own key, even
# alone beside mixed_precision (ClusterConfig.from_yaml_file fills compute_environment in when it is missing)
DISTRIBUTED_TYPES = frozenset({"NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA",
                               "MULTI_HPU", "MULTI_XPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "TPU",
                               "MEGATRON_LM"})


# what torchrun's --nproc_per_node takes besides a number (torch/distributed/run.py determine_local_world_size)
TORCHRUN_WORDS = frozenset({"gpu", "cpu", "xpu", "auto"})
# distributed types accelerate starts through torchrun on one machine (commands/launch.py multi_gpu_launcher and
# deepspeed_launcher, utils/launch.py: nproc_per_node = str(num_processes))
TORCHRUN_TYPES = frozenset({"MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_HPU", "MULTI_XPU",
                            "MULTI_NEURON", "FSDP", "DEEPSPEED"})


def _torchrun_word(processes: Any, distributed_type: Any, machines: Any) -> bool:
    """`num_processes: gpu` on one machine: accelerate copies the config's value onto its arguments unchecked and
    hands it to torchrun as --nproc_per_node, which starts one process per GPU (NVIDIA's TensorRT-Model-Optimizer
    llm_qat fsdp1.yaml). Across machines accelerate divides it by num_machines, which a word cannot survive."""
    return isinstance(processes, str) and processes.strip().lower() in TORCHRUN_WORDS and \
        str(distributed_type).upper() in TORCHRUN_TYPES and (machines is None or as_number(machines) == 1)


def distributed_type_of(value: Any) -> str:
    """The DistributedType a `distributed_type:` value names, upper-cased: an unquoted `NO` is YAML 1.1's false,
    which accelerate's launcher takes as no distributed type (ALIRE-HES-SO's accelerate_single.yaml)."""
    return "NO" if value is False else str(value if value is not None else "").upper()


def detect(data: Mapping[str, Any]) -> int:
    hits = sum(1 for k in ("compute_environment", "distributed_type", "num_machines", "machine_rank",
                           "main_training_function", "rdzv_backend") if k in data)
    if distributed_type_of(data.get("distributed_type")) in DISTRIBUTED_TYPES and \
            ("mixed_precision" in data or "num_processes" in data):
        hits += 1
    return 20 + hits if hits >= 2 else 0


def build(cfg: LoadedConfig, variant: str | None = None, pins: Pins | None = None) -> DialectResult:
    """World size, precision and sharding of an accelerate launch config; keys judged against *pins* (default: the
    files beside it)."""
    from seqprof.config.versions import pins_beside

    b = Builder(cfg)
    history = KeyHistory.load()
    pins = pins if pins is not None else pins_beside(cfg.path)
    b.default("task", "launch", "an accelerate launch config: it configures processes, not training")
    if not _torchrun_word(b.raw("num_processes"), b.raw("distributed_type"), b.raw("num_machines")):
        b.stated("world_size", "num_processes", as_number)
    b.stated("precision", "mixed_precision", lambda v: {"no": "fp32"}.get(str(v), str(v)))
    dist = distributed_type_of(b.raw("distributed_type"))
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
                device = ds.get("offload_param_device")  # DeepSpeedPlugin writes zero_optimization.offload_param
                if not isinstance(ds["zero_stage"], bool) and ds["zero_stage"] < 3 and isinstance(device, str) \
                        and device.lower() in ("cpu", "nvme"):
                    b.derived("param_offload_below_stage_3", ds["zero_stage"], "deepspeed_config.offload_param_device")
                    b.derived("param_offload_device", device, "deepspeed_config.offload_param_device")
    b.default("framework_versions", describe_versions(["accelerate"], pins, history),
              "the accelerate version keys were judged against (seqprof.config.versions)")
    cls = config_class(cfg.data)
    found = check_keys(cfg, keyspace(history, cls), dialect_label=LABEL,
                       removal=lambda key: history.removal(NAME, key, [cls], pins),
                       assumption=assumed([NAME], pins, history))
    b.diagnostics.extend(found + premature_keys(cfg, cls, pins, history, {d.key for d in found}))
    if cls == "ClusterConfig":
        b.diagnostics.extend(launch_table_keys(cfg, dist, history, pins))
    return b.result()


# the table launch copies entry by entry onto its arguments for each distributed type, and the prefix it gives them
LAUNCH_TABLES = {"DEEPSPEED": ("deepspeed_config", ""), "FSDP": ("fsdp_config", "fsdp_")}


def launch_table_keys(cfg: LoadedConfig, distributed_type: str, history: KeyHistory,
                      pins: Pins) -> list[ConfigDiagnostic]:
    """Entries of the deepspeed_config / fsdp_config table the run uses that the release it runs does not take. On
    a local machine `accelerate launch` copies each entry onto its own launch arguments (setattr, fsdp_config's with
    an fsdp_ prefix; commands/launch.py, 0.20 to 1.16) and passes on only the arguments it defines, so any other
    entry is dropped without a word: a DeepSpeed JSON's zero_optimization or bf16 written inline (accelerate reads
    those only from the file deepspeed_config_file names), llm-test2's hf_ds_config, and an argument every release
    the pins allow has dropped (fsdp_backward_prefetch_policy)."""
    from seqprof.config.dialects.common import did_you_mean

    table, prefix = LAUNCH_TABLES.get(distributed_type, (None, ""))
    entries = cfg.get(table) if table else None
    if not isinstance(entries, Mapping):
        return []
    taken = history.ever(NAME, ["LaunchArguments"])
    if prefix:  # a near miss of an fsdp option, written with its prefix or without
        names = {k for k in taken if k.startswith(prefix)}
        names |= {k[len(prefix):] for k in names}
    else:
        names = {k for k in taken if k.startswith("deepspeed") or k in DEEPSPEED_ARGUMENTS}
    out = []
    for key in entries:
        if not isinstance(key, str):
            continue
        argument = key if key in taken else prefix + key
        if argument in taken:  # an argument some release had: dropped only where the release run lacks it
            gone = history.removal(NAME, argument, ["LaunchArguments"], pins)
            if gone is None or gone.verdict not in ("error", "assumed"):
                continue
            detail = gone.detail if gone.verdict == "error" else \
                f"{gone.detail}; {assumed([NAME], pins, history)}, which lack it"
            reason = (f"accelerate launch copies each {table} entry onto its own launch arguments "
                      f"(commands/launch.py), and '{argument}' is no longer one: {detail}, so the value is dropped "
                      "without a word")
            suggestion = _new_name_as_written(argument, key, prefix)
        else:
            inline = " (DeepSpeed's own settings belong in the JSON deepspeed_config_file names)" \
                if table == "deepspeed_config" and key in DEEPSPEED_SECTIONS else ""
            if table == "deepspeed_config" and key.endswith(".json"):  # `deepspeed_config: {ds.json}`: flow mapping
                inline = f" (a DeepSpeed file is named as `deepspeed_config_file: {key}`)"
            reason = (f"accelerate launch copies each {table} entry onto its own launch arguments (commands/launch.py) "
                      f"and no release has one named '{prefix if not key.startswith(prefix) else ''}{key}', so the "
                      f"value is dropped without a word{inline}")
            suggestion = PLUGIN_NAMES.get(key) or did_you_mean(key, names)
        dotted = f"{table}.{key}"
        out.append(ConfigDiagnostic(kind="unknown_key", key=dotted, file=cfg.path, line=cfg.line(dotted) or 1,
                                    message=f"'{dotted}' is not a key accelerate reads: {reason}",
                                    suggestion=suggestion, reason=reason))
    return out


def config_class(data: Mapping[str, Any]) -> str:
    """The class load_config_from_file builds: SageMakerConfig for compute_environment AMAZON_SAGEMAKER, else
    ClusterConfig."""
    return "SageMakerConfig" if str(data.get("compute_environment", "")).upper() == SAGEMAKER else "ClusterConfig"


def keyspace(history: KeyHistory, cls: str) -> Keyspace:
    """The newest release's fields of *cls* (with the keys process_config converts); a field only older releases
    had is deprecated, judged against the pins."""
    newest = history.fields_in(NAME, history.newest(NAME), [cls])
    older = history.ever(NAME, [cls]) - newest
    return Keyspace(known=frozenset(newest) | CONVERTED,
                    deprecated={k: Moved(None, f"a {cls} field of earlier accelerate releases") for k in sorted(older)})


def premature_keys(cfg: LoadedConfig, cls: str, pins: Pins, history: KeyHistory,
                   judged: set[str]) -> list[ConfigDiagnostic]:
    """Fields of *cls* only from a release later than every one the pins allow (enable_cpu_affinity, 0.29, in a
    project pinned to accelerate<0.23): launch refuses the file before any process starts."""
    ever = history.ever(NAME, [cls])
    out: list[ConfigDiagnostic] = []
    for key in cfg.data:
        if not isinstance(key, str) or key in judged or key not in ever:
            continue
        early = history.premature(NAME, key, [cls], pins)
        if early is not None:
            out.append(premature_key(cfg, key, f"accelerate's {cls}", early.detail, REFUSAL, early.removed_in))
    return out


# launch arguments a deepspeed_config table sets besides the deepspeed_* ones (commands/launch.py's DeepSpeed group)
DEEPSPEED_ARGUMENTS = frozenset({"zero_stage", "offload_optimizer_device", "offload_param_device",
                                 "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
                                 "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model"})
# DeepSpeedPlugin's parameter names (utils/dataclasses.py) for what the config file's table calls otherwise
PLUGIN_NAMES = {"hf_ds_config": "deepspeed_config_file"}
# launch arguments a release dropped for a new name: 0.30's utils/launch.py still copied fsdp_backward_prefetch_policy
# onto fsdp_backward_prefetch with a deprecation warning; from 1.0 nothing reads it
RENAMED_LAUNCH_ARGUMENTS = {"fsdp_backward_prefetch_policy": "fsdp_backward_prefetch"}


def _new_name_as_written(argument: str, key: str, prefix: str) -> str | None:
    """The new name of a dropped launch argument, with the table's prefix only where the entry wrote it."""
    new = RENAMED_LAUNCH_ARGUMENTS.get(argument)
    return new if new is None or key.startswith(prefix) else new[len(prefix):]


# top-level sections of a DeepSpeed JSON (runtime/config.py), which accelerate takes only from deepspeed_config_file
DEEPSPEED_SECTIONS = frozenset({"zero_optimization", "bf16", "fp16", "optimizer", "scheduler", "activation_checkpointing",
                                "train_batch_size", "train_micro_batch_size_per_gpu", "steps_per_print",
                                "wall_clock_breakdown", "gradient_checkpointing"})


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
