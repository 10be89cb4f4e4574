"""Simulation facts: every batching strategy run on the data's lengths, and the plan's own strategy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seqprof.config.plan import Plan
from seqprof.dataset.profile import Profile
from seqprof.lint.facts.common import positive_int
from seqprof.lint.facts.data import DataFacts

DEFAULT_NUM_BUCKETS = 6  # the story's drafter run used six solved buckets
SIM_EPOCHS = 2  # seeded epochs per random strategy: the fewest that still measure batch repetition

# The key that switches packing on, per dialect (absent: the framework has no packing for this trainer).
PACKING_KEYS: Mapping[str, str] = {
    "axolotl": "sample_packing: true",
    "trl": "packing: true",
    "unsloth": "packing: true",
    "llamafactory": "packing: true (or neat_packing: true to keep examples from attending to each other)",
    "llamafactory_v1": "packing: true",
    "torchtune": "dataset.packed: true",
}
PACKING_TRAINERS = (None, "sft", "pretrain", "pt")


@dataclass(frozen=True)
class SimFacts:
    """Every batching strategy simulated on the data (seqprof.batching.simulate results), and the plan's own."""

    num_buckets: int
    batch_size: int | None
    token_budget: int | None
    max_seq_length: int
    boundaries: tuple[int, ...]  # padding-optimal bucket upper bounds (seqprof.batching.buckets)
    current_name: str  # the strategy the plan uses
    current: Any  # its StrategyResult
    fixed: Any
    random: Any
    sorted: Any
    group_by_length: Any
    bucketed: Any
    packing: Any
    packing_key: str | None  # how to switch packing on in this dialect, None when unsupported


def current_strategy(cfg: Mapping[str, Any]) -> str:
    """Which simulated strategy the plan's padding/shuffling settings amount to."""
    padding = cfg.get("padding")
    if padding == "max_length":
        return "fixed_padding"
    if padding in ("packed", "padding_free"):
        return "packing_bfd"
    if cfg.get("sort_by_length") and not cfg.get("shuffle"):
        return "sorted_static"
    if cfg.get("group_by_length"):
        return "group_by_length"
    return "random_shuffle"


def can_simulate(cfg: Mapping[str, Any], profile: Profile, data: DataFacts) -> bool:
    """False when there is nothing meaningful to simulate (no rows, or a token budget below the cap)."""
    token_budget = positive_int(cfg.get("token_budget"))
    return profile.sequence.count > 0 and not (token_budget is not None and token_budget < (data.cap or
                                                                                          data.recommended))


def simulation(plan: Plan, cfg: Mapping[str, Any], profile: Profile, data: DataFacts, *,
               timer: Any = None) -> SimFacts:
    """Solve bucket boundaries and simulate every strategy under the plan's batch and length cap."""
    from seqprof.batching.buckets import DEFAULT_BATCH_SIZE, optimal_boundaries
    from seqprof.batching.simulate import simulate as run_simulation

    token_budget = positive_int(cfg.get("token_budget"))
    batch_size = None if token_budget else (positive_int(cfg.get("micro_batch_size")) or DEFAULT_BATCH_SIZE)
    # transformers' Trainer: LengthGroupedSampler(train_batch_size * gradient_accumulation_steps, ...)
    accum = positive_int(cfg.get("gradient_accumulation_steps")) or 1
    mega_batch = batch_size * accum if batch_size is not None else None
    cap = data.cap or data.recommended
    boundaries = optimal_boundaries(profile.sequence, DEFAULT_NUM_BUCKETS, cap)
    simulation = run_simulation(profile.sequence, max_seq_length=cap, boundaries=boundaries, batch_size=batch_size,
                                token_budget=token_budget, epochs=SIM_EPOCHS, mega_batch_size=mega_batch,
                                timer=timer)
    packing_key = PACKING_KEYS.get(plan.dialect) if cfg.get("trainer") in PACKING_TRAINERS else None
    results = simulation.strategies
    current = current_strategy(cfg)
    return SimFacts(num_buckets=DEFAULT_NUM_BUCKETS, batch_size=batch_size, token_budget=token_budget,
                    max_seq_length=cap, boundaries=tuple(boundaries), current_name=current,
                    current=results[current], fixed=results["fixed_padding"], random=results["random_shuffle"],
                    sorted=results["sorted_static"], group_by_length=results["group_by_length"],
                    bucketed=results["bucketed_shuffle"], packing=results["packing_bfd"], packing_key=packing_key)
