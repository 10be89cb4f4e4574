"""seqprof: exact length profiles, bucket boundaries, memory estimates and config lint for LLM fine-tuning."""

from __future__ import annotations

from .buckets import optimal_boundaries
from .errors import SeqprofError
from .histogram import LengthHistogram, LengthStats
from .profile import Profile
from .recommend import Recommendation, recommend_max_seq_length
from .sampler import BucketedShuffleSampler

__all__ = [
    "BucketedShuffleSampler", "LengthHistogram", "LengthStats", "Profile", "Recommendation", "SeqprofError",
    "optimal_boundaries", "recommend_max_seq_length",
]
