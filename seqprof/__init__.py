"""seqprof: exact length profiles, bucket boundaries, memory estimates and config lint for LLM fine-tuning."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from seqprof.dataset.histogram import LengthHistogram, LengthStats
from seqprof.dataset.profile import Profile
from seqprof.dataset.recommend import Recommendation, recommend_max_seq_length
from seqprof.errors import SeqprofError

if TYPE_CHECKING:
    from seqprof.batching.buckets import optimal_boundaries
    from seqprof.batching.sampler import BucketedShuffleSampler

_LAZY = {"optimal_boundaries": "seqprof.batching.buckets", "BucketedShuffleSampler": "seqprof.batching.sampler"}


def __getattr__(name: str) -> Any:
    """Load the bucket solver and sampler on first use, so `seqprof lint` starts without them."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def profile(data: str, *, tokenizer: str | None = None, schema: str | None = None,
            columns: dict[str, str] | None = None, chat_template: str | None = None,
            skip_bad_rows: bool = False, coverage: float = 0.999, multiple: int = 64) -> Profile:
    """Profile a dataset from Python: the same Profile value object `seqprof analyze` prints."""
    from seqprof.dataset.analyze import AnalyzeOptions, build_profile

    return build_profile(data, AnalyzeOptions(tokenizer=tokenizer, chat_template=chat_template, schema=schema,
                                              columns=columns, skip_bad_rows=skip_bad_rows, coverage=coverage,
                                              multiple=multiple))


__all__ = [
    "BucketedShuffleSampler", "LengthHistogram", "LengthStats", "Profile", "Recommendation", "SeqprofError",
    "optimal_boundaries", "profile", "recommend_max_seq_length",
]
