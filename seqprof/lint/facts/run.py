"""Run facts: how many optimizer steps the run takes and when it writes its first checkpoint."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seqprof.config.plan import Plan
from seqprof.lint.facts.common import positive_int, positive_number
from seqprof.lint.facts.data import DataFacts


@dataclass(frozen=True)
class RunFacts:
    """How long the run is in optimizer steps and when it first writes a checkpoint."""

    rows: int | None  # examples per epoch (after drops and example caps)
    micro_batch_size: int
    gradient_accumulation_steps: int
    world_size: int
    examples_per_step: int
    steps_per_epoch: int | None
    epochs: float | None
    estimated_steps: int | None  # None: the config alone (no data, no max_steps) says saving is off
    steps_source: str  # max_steps | data | config
    save_strategy: str | None
    checkpoint_every: int | None  # optimizer steps between saves; None when it never saves mid-run
    first_checkpoint: int | None
    mid_run_checkpoint: bool | None  # None when the config and its dialect leave saving unknown


def run_facts(plan: Plan, cfg: Mapping[str, Any], data: DataFacts | None) -> RunFacts | None:
    """Estimated optimizer steps (stated max_steps, else rows / examples per step * epochs)."""
    micro = positive_int(cfg.get("micro_batch_size")) or 1
    accum = positive_int(cfg.get("gradient_accumulation_steps")) or 1
    world = positive_int(cfg.get("world_size")) or 1
    max_steps = positive_int(cfg.get("max_steps"))
    epochs = positive_number(cfg.get("num_epochs"))
    rows = None
    steps_per_epoch = None
    if data is not None:
        rows = data.rows - data.rows_over_cap if data.overflow == "drop" else data.rows
        cap_rows = positive_int(cfg.get("max_train_examples"))
        if cap_rows is not None:
            rows = min(rows, cap_rows)
        steps_per_epoch = optimizer_steps_per_epoch(rows, micro, accum, world)
    if max_steps is not None:
        estimated, source = max_steps, "max_steps"
    elif steps_per_epoch is not None and epochs is not None:
        estimated, source = max(1, math.ceil(steps_per_epoch * epochs)), "data"
    elif checkpoint_interval(cfg, None, 0)[0] == "no" and epochs is not None and epochs >= 2 \
            and cfg.get("total_episodes") is None:  # PPO's total_episodes, when set, replaces the epochs
        # no length, but the config alone shows no checkpoint is written during several epochs
        return RunFacts(rows=None, micro_batch_size=micro, gradient_accumulation_steps=accum, world_size=world,
                        examples_per_step=micro * accum * world, steps_per_epoch=None, epochs=epochs,
                        estimated_steps=None, steps_source="config", save_strategy="no", checkpoint_every=None,
                        first_checkpoint=None, mid_run_checkpoint=False)
    else:
        return None
    strategy, every, known = checkpoint_interval(cfg, steps_per_epoch, estimated)
    first = every
    mid = (first is not None and first < estimated) if known else None
    return RunFacts(rows=rows, micro_batch_size=micro, gradient_accumulation_steps=accum, world_size=world,
                    examples_per_step=micro * accum * world, steps_per_epoch=steps_per_epoch, epochs=epochs,
                    estimated_steps=estimated, steps_source=source, save_strategy=strategy,
                    checkpoint_every=every, first_checkpoint=first, mid_run_checkpoint=mid)


def optimizer_steps_per_epoch(rows: int, micro_batch_size: int, accumulation: int, world_size: int) -> int:
    """HF Trainer: each rank sees ceil(rows / (micro * world)) batches; a step every `accumulation`
    of them, the last partial accumulation included (transformers >= 4.46)."""
    batches = math.ceil(rows / (micro_batch_size * world_size))
    return max(1, math.ceil(batches / accumulation)) if rows else 0


def checkpoint_interval(cfg: Mapping[str, Any], steps_per_epoch: int | None,
                         total: int) -> tuple[str | None, int | None, bool]:
    """(save strategy, optimizer steps between saves, whether that is known).

    Unknown (the rule stays silent) when neither config nor dialect says how it saves, when saving
    depends on evaluation (best), or when saves are per epoch and the epoch length is not known
    (no data)."""
    strategy = cfg.get("save_strategy")
    strategy = str(strategy).lower() if strategy is not None else None
    saves_per_epoch = positive_number(cfg.get("saves_per_epoch"))
    if strategy in ("no", "none", "false"):
        return "no", None, True
    if strategy == "epoch" or saves_per_epoch is not None:
        if steps_per_epoch is None:
            return "epoch", None, False
        return "epoch", max(1, math.floor(steps_per_epoch / (saves_per_epoch or 1.0))), True
    if strategy in ("steps", None):
        number = positive_number(cfg.get("save_steps"))
        if number is None and _not_positive(cfg.get("save_steps")):
            return "steps", None, True  # transformers saves only at the end (state.save_steps > 0 guards step saves)
        if number is None:
            return strategy, None, False
        every = math.ceil(number * total) if number < 1 else int(number)  # HF: a float < 1 is a ratio
        return "steps", every, True
    return strategy, None, False


def _not_positive(value: Any) -> bool:
    """A save_steps of 0 or below (as a number or numeric text)."""
    if isinstance(value, bool) or value is None:
        return False
    try:
        return float(value) <= 0
    except (TypeError, ValueError):
        return False
