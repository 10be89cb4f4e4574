"""Time facts: the run's hours and money on the named GPU, from the plan's own strategy simulated on the data and
priced by seqprof.predict.runtime (so rules can speak in hours: SP101's padding cost, SP301's first checkpoint)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seqprof.lint.facts.run import RunFacts


@dataclass(frozen=True)
class TimeFacts:
    """Step and run time of the plan on `gpu`, and what a crash before the first checkpoint costs."""

    gpu: str
    calibration: str  # "measured ..." or "analytic ..."
    world_size: int
    step_seconds: float  # mean optimizer step of the plan's own strategy over an epoch
    steps: int
    total_seconds: float
    gpu_hours: float  # total_seconds x GPUs
    price_per_gpu_hour: float | None
    cost: float | None
    first_checkpoint_hours: float | None  # wall hours until the first save (None: never saves mid-run)
    hours_at_risk: float  # GPU-hours lost to a crash just before the first save (or the end, if none)
    fixed_padding_gpu_hours: float | None  # the whole run with every row padded to the plan's cap
    fixed_at_recommended_gpu_hours: float | None  # ... padded to the data's recommended cap instead
    strategy_tokens_per_second: dict[str, float]  # every simulated strategy, real tokens per second

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "calibration": self.calibration, "steps": self.steps,
                "step_seconds": self.step_seconds, "total_seconds": self.total_seconds, "gpu_hours": self.gpu_hours,
                "price_per_gpu_hour": self.price_per_gpu_hour, "cost": self.cost,
                "first_checkpoint_hours": self.first_checkpoint_hours, "gpu_hours_at_risk": self.hours_at_risk}


def time_facts(run: RunFacts | None, sim: Any, timer: Any, *, recommended: int | None,
               price: float | None) -> TimeFacts | None:
    """None unless the run length, a simulation with times and a timer are all known."""
    if run is None or sim is None or timer is None or sim.current.step_seconds is None:
        return None
    world = timer.world_size
    step = sim.current.step_seconds
    total = step * run.estimated_steps
    gpu_hours = total * world / 3600
    first = run.first_checkpoint if run.mid_run_checkpoint else None
    first_hours = first * step / 3600 if first else None
    at_risk = (first_hours if first_hours is not None else total / 3600) * world

    def padded_hours(length: int | None) -> float | None:
        if not length or sim.fixed.step_seconds is None:
            return None
        rows = sim.batch_size or max(1, (sim.token_budget or length) // length)
        return timer.step_seconds(rows, length) * run.estimated_steps * world / 3600

    return TimeFacts(gpu=timer.gpu, calibration=timer.calibration.source, world_size=world, step_seconds=step,
                     steps=run.estimated_steps, total_seconds=total, gpu_hours=gpu_hours, price_per_gpu_hour=price,
                     cost=gpu_hours * price if price is not None else None, first_checkpoint_hours=first_hours,
                     hours_at_risk=at_risk, fixed_padding_gpu_hours=padded_hours(sim.max_seq_length),
                     fixed_at_recommended_gpu_hours=padded_hours(recommended),
                     strategy_tokens_per_second={s.name: s.tokens_per_second for s in
                                                 (sim.fixed, sim.random, sim.sorted, sim.group_by_length,
                                                  sim.bucketed, sim.packing) if s.tokens_per_second})
