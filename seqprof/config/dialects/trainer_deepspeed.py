"""What transformers' Trainer does with the DeepSpeed file a training config names: the values it refuses, the
scheduler it hands over.

With `deepspeed: ds.json`, TrainingArguments builds HfTrainerDeepSpeedConfig (transformers
integrations/deepspeed.py, deepspeed.py before 4.34): each DeepSpeed value that has a TrainingArguments
counterpart is filled in where it is "auto" and compared where it is not (`fill_match`). Every mismatch is
collected and `trainer_config_finalize` raises one ValueError ("Please correct the following DeepSpeed config
values that mismatch TrainingArguments values") as training starts, after the model is loaded. And when the
file has a `scheduler` section, `deepspeed_optim_sched` lets DeepSpeed build that scheduler, so the
config's lr_scheduler_type never runs; an `optimizer` section likewise replaces `optim`.

Only values both files state are compared: a default of the trainer's class may be the project's or TRL's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic

SOURCE = "transformers integrations/deepspeed.py, HfTrainerDeepSpeedConfig.fill_match"


@dataclass(frozen=True)
class Counterpart:
    """A DeepSpeed value and the TrainingArguments value fill_match compares it with."""

    deepspeed_key: str  # dotted, in the DeepSpeed file
    field: str  # the TrainingArguments field, as fill_match's message names it
    config_keys: tuple[str, ...]  # the keys of the training config that give it, first one stated wins


# fill_match calls that compare with a field a config states (train_batch_size needs the world size; the
# scheduler's step counts need the dataset's length)
COUNTERPARTS = (
    Counterpart("train_micro_batch_size_per_gpu", "per_device_train_batch_size", ("per_device_train_batch_size",)),
    Counterpart("gradient_accumulation_steps", "gradient_accumulation_steps", ("gradient_accumulation_steps",)),
    Counterpart("gradient_clipping", "max_grad_norm", ("max_grad_norm",)),
    Counterpart("optimizer.params.lr", "learning_rate", ("learning_rate",)),
    Counterpart("optimizer.params.eps", "adam_epsilon", ("adam_epsilon",)),
    Counterpart("optimizer.params.weight_decay", "weight_decay", ("weight_decay",)),
    Counterpart("scheduler.params.warmup_max_lr", "learning_rate", ("learning_rate",)),
)

# the lr_scheduler_type each DeepSpeed scheduler behaves like (deepspeed/runtime/lr_schedules.py): WarmupLR holds
# the peak after warming up, WarmupDecayLR decays linearly to 0, WarmupCosineLR (0.12+) follows a cosine
SCHEDULER_SHAPES = {"WarmupLR": "constant_with_warmup", "WarmupDecayLR": "linear", "WarmupCosineLR": "cosine"}
SHAPE_WORDS = {"constant_with_warmup": "which holds the peak rate after warming up", "linear": "a linear decay",
               "cosine": "a cosine decay"}


def refused_values(cfg: LoadedConfig, ds: LoadedConfig) -> list[ConfigDiagnostic]:
    """DeepSpeed values that differ from what *cfg*, a TrainingArguments file, states for the same field."""
    stated = {k: (k, v) for k, v in cfg.data.items() if isinstance(k, str)}
    found = []
    for c in COUNTERPARTS:
        ds_value = ds.get(c.deepspeed_key)
        if ds_value is None or ds_value == "auto" or c.field not in stated:
            continue
        if c.field == "per_device_train_batch_size" and cfg.data.get("auto_find_batch_size") is True:
            continue  # fill_match(..., must_match=not auto_find_batch_size)
        key, value = stated[c.field]
        if not _comparable(ds_value) or not _comparable(value) or ds_value == value:
            continue
        found.append(_mismatch(cfg, ds, c.deepspeed_key, ds_value, key, value))
    for prec in ("bf16", "fp16"):
        ds_value = ds.get(f"{prec}.enabled")
        key_value = stated.get(prec)
        if not isinstance(ds_value, bool) or key_value is None or not isinstance(key_value[1], bool):
            continue
        if prec == "fp16" and str(cfg.data.get("fp16_backend", "auto")) == "apex":
            continue  # apex fills amp.enabled instead
        full_eval = cfg.data.get(f"{prec}_full_eval") is True
        if ds_value != (key_value[1] or full_eval):
            found.append(_mismatch(cfg, ds, f"{prec}.enabled", ds_value, key_value[0], key_value[1]))
    return found


def replaced_by_deepspeed(cfg: LoadedConfig, ds: LoadedConfig, scheduler_key: str = "lr_scheduler_type",
                          optimizer_key: str = "optim") -> list[ConfigDiagnostic]:
    """The config's scheduler and optimizer, where the DeepSpeed file's own section runs instead with another shape
    (*scheduler_key*, *optimizer_key*: the dialect's names for lr_scheduler_type and optim)."""
    return _scheduler_replaced(cfg, ds, scheduler_key) + _optimizer_replaced(cfg, ds, optimizer_key)


def _scheduler_replaced(cfg: LoadedConfig, ds: LoadedConfig, key: str) -> list[ConfigDiagnostic]:
    stated = cfg.data.get(key)
    scheduler = ds.get("scheduler")
    if not isinstance(stated, str) or not isinstance(scheduler, Mapping):
        return []
    kind = scheduler.get("type")
    shape = SCHEDULER_SHAPES.get(kind) if isinstance(kind, str) else None
    if shape == stated.lower():
        return []
    like = f", {SHAPE_WORDS[shape]}" if shape else ""
    return [_replaced(cfg, key, stated, f"{_where(cfg, ds)} has a scheduler section ({kind}{like})",
                      "deepspeed_optim_sched: `if \"scheduler\" in config`", "scheduler")]


def _optimizer_replaced(cfg: LoadedConfig, ds: LoadedConfig, key: str) -> list[ConfigDiagnostic]:
    stated = cfg.data.get(key)
    optimizer = ds.get("optimizer")
    if not isinstance(stated, str) or not isinstance(optimizer, Mapping) or stated.lower() == "adafactor":
        return []  # adafactor beside a DeepSpeed optimizer is refused outright ("Only one optimizer can be configured")
    kind = optimizer.get("type")
    kind_text = kind.lower() if isinstance(kind, str) else ""
    if stated.lower() in FULL_PRECISION_ADAMW and kind_text in DEEPSPEED_ADAM or stated.lower() == kind_text:
        return []
    return [_replaced(cfg, key, stated, f"{_where(cfg, ds)} has an optimizer section ({kind})",
                      "deepspeed_optim_sched: `if \"optimizer\" in config`", "optimizer")]


# TrainingArguments.optim values that are the same AdamW as DeepSpeed's Adam/AdamW (adam_w_mode on by default)
FULL_PRECISION_ADAMW = frozenset({"adamw_hf", "adamw_torch", "adamw_torch_fused", "adamw_apex_fused",
                                  "adamw_torch_xla", "adamw_torch_npu_fused", "adamw_anyprecision"})
DEEPSPEED_ADAM = frozenset({"adam", "adamw", "fusedadam", "cpuadam", "deepspeedcpuadam"})


def _replaced(cfg: LoadedConfig, key: str, stated: str, section: str, where: str, suggestion: str
              ) -> ConfigDiagnostic:
    return ConfigDiagnostic(
        kind="replaced_by_deepspeed", key=key, file=cfg.path, line=cfg.line(key) or 1,
        message=(f"'{key}: {stated}' has no effect: {section}, and with one the Trainer lets DeepSpeed build its "
                 f"own instead (transformers integrations/deepspeed.py, {where})"),
        suggestion=suggestion)


def _comparable(value: Any) -> bool:
    """A number fill_match compares as the run has it (a YAML '2e-5' is a str, which another rule reports)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _where(cfg: LoadedConfig, ds: LoadedConfig) -> str:
    return "its deepspeed section" if ds.path == cfg.path else f"the DeepSpeed file {ds.path.rsplit('/', 1)[-1]}"


def _mismatch(cfg: LoadedConfig, ds: LoadedConfig, ds_key: str, ds_value: Any, key: str, value: Any
              ) -> ConfigDiagnostic:
    where = _where(cfg, ds)
    at = f"line {ds.line(ds_key)}" if ds.line(ds_key) else ds_key
    return ConfigDiagnostic(
        kind="deepspeed_mismatch", key=key, file=cfg.path, line=cfg.line(key) or 1,
        message=(f"'{key}: {_json(value)}' differs from {ds_key}: {_json(ds_value)} in {where} ({at}): the Trainer "
                 "stops as training starts (\"Please correct the following DeepSpeed config values that mismatch "
                 f"TrainingArguments values\", {SOURCE})"),
        suggestion=ds_key)


def _json(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else repr(value)
