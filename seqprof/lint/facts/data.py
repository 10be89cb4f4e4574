"""Data facts: what the exact length distribution says about the plan's length cap (padding, rows over it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from seqprof.config.plan import Plan
from seqprof.dataset.profile import Profile
from seqprof.lint.facts.common import positive_int

# What a framework does with a row longer than its max_seq_length when the config does not say
# (the config reader may state it as the setting `overflow`; this table is the fallback).
OVERFLOW_DEFAULTS: Mapping[str, tuple[str, str]] = {
    "axolotl": ("drop", "axolotl: excess_length_strategy defaults to 'drop' "
                        "(utils/data/utils.py drop_long_seq_in_dataset)"),
    "auto_antislop": ("drop", "auto-antislop: rows with prompt + 1 > finetune_max_seq_length are filtered out "
                              "(utils/dataset_helpers.py load_ftpo_multi_dataset; the DPO path filters the same way)"),
    "trl": ("truncate", "TRL: SFT/DPO truncate to max_length (truncation_mode keep_start / keep_end)"),
    "unsloth": ("truncate", "Unsloth trains through TRL's SFTTrainer, which truncates to max_seq_length"),
    "llamafactory": ("truncate", "LLaMA-Factory: cutoff_len truncates source and target (data/processor infer_seqlen)"),
    "llamafactory_v1": ("truncate", "LLaMA-Factory v1: cutoff_len truncates"),
    "torchtune": ("truncate", "torchtune: the model tokenizer truncates to max_seq_len"),
}


@dataclass(frozen=True)
class DataFacts:
    """What the data's exact length distribution says about this plan's length cap."""

    source: str
    tokenizer: str
    rows: int
    mean: float
    min: int
    p50: float
    p90: float
    p95: float
    p99: float
    max: int
    total_tokens: int
    recommended: int  # the profile's recommended max_seq_length
    recommended_coverage: float
    recommended_truncated_rows: int
    cap: int | None  # the plan's max_seq_length
    rows_over_cap: int
    share_over_cap: float
    tokens_over_cap: int  # tokens cut off (truncate) or never trained on (drop)
    fixed_use: float | None  # content share of a batch padded to the cap
    cap_over_recommended: float | None  # tokens per padded example, cap vs recommended
    padding_free_bound: float | None  # cap / mean kept length: the most any padding fix can save
    overflow: str  # drop | truncate | raise | unknown
    overflow_source: str


def data_facts(plan: Plan, profile: Profile) -> DataFacts:
    hist = profile.sequence
    stats = hist.stats()
    rec = profile.recommendation
    cap = positive_int(plan.get("max_seq_length"))
    overflow, overflow_source = overflow_default(plan)
    rows_over = tokens_over = 0
    fixed_use = cap_over_rec = bound = None
    if cap is not None and stats.count:
        counts = hist.counts.astype(np.int64)
        lengths = np.arange(counts.size, dtype=np.int64)
        over = lengths > cap
        rows_over = int(counts[over].sum())
        tokens_over = int(np.dot(lengths[over] - cap, counts[over]))
        if overflow == "drop":
            kept_rows = stats.count - rows_over
            kept_tokens = int(np.dot(lengths[~over], counts[~over]))
        else:
            kept_rows = stats.count
            kept_tokens = stats.total_tokens - tokens_over
        if kept_rows:
            fixed_use = kept_tokens / (kept_rows * cap)
            bound = cap * kept_rows / kept_tokens if kept_tokens else None
        cap_over_rec = cap / rec.max_seq_length
    return DataFacts(
        source=profile.dataset.path, tokenizer=profile.tokenizer.name, rows=stats.count,
        mean=stats.mean, min=stats.min, p50=stats.p50, p90=stats.p90, p95=stats.p95, p99=stats.p99,
        max=stats.max, total_tokens=stats.total_tokens, recommended=rec.max_seq_length,
        recommended_coverage=rec.coverage, recommended_truncated_rows=rec.truncated_rows, cap=cap,
        rows_over_cap=rows_over, share_over_cap=(rows_over / stats.count) if stats.count else 0.0,
        tokens_over_cap=tokens_over, fixed_use=fixed_use, cap_over_recommended=cap_over_rec,
        padding_free_bound=bound, overflow=overflow, overflow_source=overflow_source,
    )


def overflow_default(plan: Plan) -> tuple[str, str]:
    """drop/truncate/raise for over-long rows: stated in the config, else the dialect's default."""
    for name in ("overflow", "excess_length_strategy"):
        s = plan.settings.get(name)
        if s is not None and s.value:
            return str(s.value), (f"{s.key} in the config" if s.stated else s.source)
    raw = plan.raw.get("excess_length_strategy")
    if plan.dialect == "axolotl" and raw:
        return str(raw), "excess_length_strategy in the config"
    return OVERFLOW_DEFAULTS.get(plan.dialect, ("unknown", f"{plan.dialect}: not documented"))
