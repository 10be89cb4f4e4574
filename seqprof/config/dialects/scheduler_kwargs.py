"""lr_scheduler_kwargs that transformers' get_scheduler never reads, or hands on to a function that refuses them.

The Trainer passes TrainingArguments.lr_scheduler_kwargs to transformers.optimization.get_scheduler. It builds
`constant` and `constant_with_warmup` (and, before 5.x, `inverse_sqrt`) without them, so a recipe's min_lr_rate or
num_warmup_steps there changes nothing; every other schedule function gets them beside the num_warmup_steps /
num_training_steps get_scheduler passes itself, so a keyword the function does not take, one of those two again, or
a missing one it needs (warmup_stable_decay's num_decay_steps) is a TypeError when the Trainer creates the scheduler,
before the first step; cosine_with_min_lr raises ValueError itself without one of min_lr and min_lr_rate, or with
both. What each release does comes from its optimization.py (keys/scheduler_kwargs.json,
scripts/gen_scheduler_kwargs.py); judged at the transformers release the pins install.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.dialects.common import load_keys_file
from seqprof.config.key_history import KeyHistory, run_release_said
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

DEFAULT_TYPE = "linear"  # TrainingArguments.lr_scheduler_type


@cache
def scheduler_use() -> dict[str, dict[str, dict]]:
    """transformers release -> lr_scheduler_type -> {reads, passed, takes, needs}."""
    return load_keys_file("scheduler_kwargs")["versions"]


def scheduler_kwargs_problems(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """The lr_scheduler_kwargs problems of a TrainingArguments file at the transformers release the pins install;
    none where DeepSpeed may bring its own scheduler, or the project builds the scheduler or its arguments itself."""
    stated = cfg.data.get("lr_scheduler_kwargs")
    kwargs = {} if stated is None else _mapping(stated)
    kind = cfg.data.get("lr_scheduler_type", DEFAULT_TYPE)
    if kwargs is None or not isinstance(kind, str) or cfg.data.get("deepspeed"):
        return []
    release = _release(pins, history)
    use = scheduler_use().get(release or "", {}).get(kind)
    if use is None or _set_elsewhere(cfg.path):
        return []
    said = run_release_said("transformers", pins, release)
    keys = ", ".join(sorted(kwargs)) or "none"
    key = "lr_scheduler_kwargs" if "lr_scheduler_kwargs" in cfg.data else "lr_scheduler_type"
    line = cfg.line(key) or 1
    if not kwargs and not (use["reads"] and (use["needs"] or use["one_of"])):
        return []
    if not use["reads"]:
        return [ConfigDiagnostic(
            kind="scheduler_kwargs_unread", key="lr_scheduler_kwargs", file=cfg.path, line=line,
            message=f"lr_scheduler_kwargs ({keys}) is never read: get_scheduler builds {kind} from "
                    f"{' and '.join(use['passed']) or 'the optimizer'} alone and hands it no scheduler-specific "
                    f"arguments ({said}; optimization.py), so the run schedules as if the kwargs were not there")]
    again = sorted(k for k in kwargs if k in use["passed"])
    unknown = sorted(k for k in kwargs if use["takes"] is not None and k not in use["takes"] and k not in again)
    missing = [k for k in use["needs"] if k not in kwargs]
    neither = next((pair for pair in use["one_of"] if not any(kwargs.get(k) is not None for k in pair)), None)
    both = next((pair for pair in use["not_both"] if all(kwargs.get(k) is not None for k in pair)), None)
    error = "TypeError"
    if again:
        why = (f"get_scheduler passes {', '.join(again)} itself, so the call gets "
               f"{'it' if len(again) == 1 else 'them'} twice (\"got multiple values for keyword argument\")")
    elif unknown:
        why = f"the {kind} schedule takes no {', '.join(unknown)} (it takes {', '.join(use['takes'])})"
    elif missing:
        why = f"the {kind} schedule needs {', '.join(missing)}, which only lr_scheduler_kwargs can give"
    elif neither:
        why, error = f"the {kind} schedule needs one of {' or '.join(neither)} (\"One of {neither[0]} or " \
                     f"{neither[1]} should be set through the `lr_scheduler_kwargs`\")", "ValueError"
    elif both:
        why, error = f"the {kind} schedule takes only one of {' and '.join(both)} (\"Only one of {both[0]} or " \
                     f"{both[1]} should be set\")", "ValueError"
    else:
        return []
    return [ConfigDiagnostic(
        kind="scheduler_kwargs_refused", key=key, file=cfg.path, line=line,
        message=f"lr_scheduler_kwargs ({keys}) with lr_scheduler_type {kind}: {why}; the Trainer raises {error} "
                f"when it creates the scheduler, before the first step ({said})")]


def _mapping(value: Any) -> dict | None:
    """A mapping, or the JSON text of one (TrainingArguments parses a dict field given as a string)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) and all(isinstance(k, str) for k in value) else None


def _release(pins: Pins, history: KeyHistory) -> str | None:
    """The generated transformers release the pins install; the newest when nothing pins it; None for a commit
    or a pin older than every release seqprof has read."""
    if pins.vcs("transformers") is not None or history.older_than_known("transformers", pins):
        return None
    return history.run_release("transformers", pins)


_BUILDS_SCHEDULER = re.compile(r"\bdef\s+create_scheduler\b|\bget_scheduler\s*\(|\blr_scheduler_kwargs\s*\[")


def _set_elsewhere(config_path: str) -> bool:
    """A launch line or the project's code sets the scheduler's type or arguments, or the project builds the
    scheduler itself (a create_scheduler of its own Trainer, its own get_scheduler call)."""
    from seqprof.config.launches import set_outside_the_file
    from seqprof.config.project_fields import code_matches, project_root

    path = Path(config_path)
    return set_outside_the_file(config_path, ("lr_scheduler_type", "lr_scheduler_kwargs")) or \
        path.is_file() and code_matches(project_root(path), _BUILDS_SCHEDULER)
