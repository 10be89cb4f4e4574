"""Warmup beside a schedule that never warms up.

transformers' `get_scheduler` (optimization.py, 4.x to 5.25) builds "constant" as `get_constant_schedule(optimizer)`
and "reduce_lr_on_plateau" without a warmup either: the `num_warmup_steps` the Trainer derives from warmup_ratio or
warmup_steps is never handed on, so the run starts at the full learning rate. "constant_with_warmup" is the schedule
that warms up. TRL's trainers, LLaMA-Factory and axolotl (for these names) all build their schedule through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from seqprof.config.loader import LoadedConfig, load_config, resolve_linked_file
from seqprof.config.plan import ConfigDiagnostic
from seqprof.errors import SeqprofError

NO_WARMUP = ("constant", "reduce_lr_on_plateau")
WARMUP_KEYS = ("warmup_ratio", "warmup_steps")
# a project that builds its own schedule: a Trainer subclass's create_scheduler, or optimizers=(opt, sched)
OWN_SCHEDULE = re.compile(r"def\s+create_scheduler\b|\boptimizers\s*=\s*\(|\bget_constant_schedule_with_warmup\b")


def warmup_unread(cfg: LoadedConfig, scheduler_key: str = "lr_scheduler_type") -> list[ConfigDiagnostic]:
    """warmup_ratio / warmup_steps above 0 beside a constant (or plateau) schedule, which ignores them.

    Not judged where DeepSpeed's own scheduler section replaces the Trainer's schedule (or the DeepSpeed file
    cannot be read), the launch line sets the schedule or the warmup, or the project builds its own schedule."""
    data = cfg.data
    schedule = data.get(scheduler_key)
    if not isinstance(schedule, str) or schedule.strip().lower() not in NO_WARMUP:
        return []
    warmup = [(k, data[k]) for k in WARMUP_KEYS if _positive(data.get(k))]
    if not warmup or not _no_deepspeed_schedule(cfg):
        return []
    from seqprof.config.launches import set_outside_the_file
    from seqprof.config.project_fields import code_matches, project_root

    if set_outside_the_file(cfg.path, (scheduler_key,) + WARMUP_KEYS) or code_matches(project_root(cfg.path),
                                                                                      OWN_SCHEDULE):
        return []
    key, value = warmup[0]
    return [ConfigDiagnostic(
        kind="warmup_unread", key=key, file=cfg.path, line=cfg.line(key) or 1, suggestion="constant_with_warmup",
        message=(f"{key}: {value} beside {scheduler_key}: {schedule} (line {cfg.line(scheduler_key)}): transformers' "
                 f"get_scheduler builds the {schedule.strip().lower()} schedule without num_warmup_steps "
                 "(optimization.py), so the run starts at the full learning rate and never warms up"))]


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _no_deepspeed_schedule(cfg: LoadedConfig) -> bool:
    """No DeepSpeed config, or one that is read and has no `scheduler` section (which would replace the schedule)."""
    linked = cfg.data.get("deepspeed")
    if linked is None or linked == "":
        return True
    if isinstance(linked, Mapping):
        return "scheduler" not in linked
    if not isinstance(linked, str):
        return False
    path = resolve_linked_file(linked, cfg.path)
    if path is None:
        return False
    try:
        loaded = load_config(path)  # as link_deepspeed reads it: size-limited, a .conf read as JSON
    except SeqprofError:
        return False
    return isinstance(loaded.data, Mapping) and "scheduler" not in loaded.data
