"""Run time of a plan on a GPU: an EpochTimer that prices micro batches for the batching simulation, built from
the config (setup), the model's config.json (architecture) and a calibration (seqprof.predict.steptime)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from seqprof.errors import SeqprofError
from seqprof.predict.memory.setup import TrainingSetup
from seqprof.predict.steptime import Calibration, ModelCosts, calibration_for, model_costs


@dataclass(frozen=True)
class EpochTimer:
    """Seconds of an epoch's micro batches on `world_size` data-parallel GPUs (the batches are split over them;
    gradient all-reduce is not priced), optimizer steps every `accumulation` micro batches."""

    calibration: Calibration
    costs: ModelCosts
    setup: TrainingSetup
    accumulation: int = 1
    world_size: int = 1
    sequences_per_row: int = 1  # 2 for preference trainers: chosen and rejected rows of a pair share a batch

    def epoch_seconds(self, rows: np.ndarray, padded: np.ndarray) -> float:
        micro = float(np.sum(self.calibration.micro_batch_seconds(
            self.costs, np.asarray(rows) * self.sequences_per_row, padded)))
        return micro / self.world_size + self.optimizer_steps(len(rows)) * self.calibration.optimizer_seconds(self.costs)

    def optimizer_steps(self, micro_batches: float) -> float:
        return micro_batches / (self.accumulation * self.world_size)

    def step_seconds(self, rows: int, padded: int) -> float:
        """One optimizer step of `accumulation` micro batches of this shape on one GPU."""
        return self.accumulation * float(self.calibration.micro_batch_seconds(
            self.costs, rows * self.sequences_per_row, padded)) + self.calibration.optimizer_seconds(self.costs)

    @property
    def gpu(self) -> str:
        return self.calibration.gpu

    def describe(self) -> str:
        s = self.setup
        mode = "LoRA" if s.adapter else "full fine-tune"
        extra = ", gradient checkpointing" if s.gradient_checkpointing else ""
        return (f"{mode}{extra}, {s.trainer}, accumulation {self.accumulation}, {self.world_size} GPU(s); "
                f"{'measured' if self.calibration.measured else 'analytic'} calibration for {self.gpu}")


def epoch_timer(plan: Any, *, gpu: str, model_config: str | None = None, calibration: str | None = None,
                micro_batch_size: int | None = None, max_seq_length: int | None = None) -> EpochTimer:
    """The timer for `plan` (a normalised config) on the named GPU, or a SeqprofError saying what is missing.

    The micro batch and maximum length given on the command line win over the config's."""
    from seqprof.predict.architecture import resolve_architecture
    from seqprof.predict.gpus import gpu_memory_bytes
    from seqprof.predict.memory_plan import NO_CONFIG_FIX, setup_from_plan

    label, _ = gpu_memory_bytes(gpu)
    arch, why = resolve_architecture(plan.get("model"), model_config or plan.get("model_config_path"))
    if arch is None:
        raise SeqprofError(f"no run time: {why.removeprefix('skipped: ')}", path=plan.path, fix=NO_CONFIG_FIX)
    try:
        setup, _ = setup_from_plan(plan)
    except SeqprofError:
        if max_seq_length is None:
            raise
        setup, _ = setup_from_plan(_with_length(plan, max_seq_length))
    if micro_batch_size is not None:
        setup = replace(setup, micro_batch_size=micro_batch_size)
    if max_seq_length is not None:
        setup = replace(setup, seq_len=max_seq_length)
    return EpochTimer(calibration=calibration_for(label, calibration), costs=model_costs(arch, setup), setup=setup,
                      accumulation=max(1, setup.gradient_accumulation_steps), world_size=max(1, setup.world_size),
                      sequences_per_row=2 if setup.is_paired else 1)


def _with_length(plan: Any, length: int) -> Any:
    """The plan with a stated max_seq_length (the command line's), for a config that states none."""
    from seqprof.config.plan import Setting

    settings = dict(plan.settings)
    settings["max_seq_length"] = Setting(value=length, key=None, file=None, line=None, source="command line")
    return replace(plan, settings=settings)


def format_duration(seconds: float | None) -> str:
    """5.1 d, 23.6 h, 34 min, 45 s: the unit a person plans in."""
    if seconds is None:
        return "n/a"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"
