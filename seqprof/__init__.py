"""seqprof: exact length profiles, bucket boundaries, memory estimates and config lint for LLM fine-tuning."""

from __future__ import annotations

from .errors import SeqprofError
from .histogram import LengthHistogram, LengthStats
from .profile import Profile
from .recommend import Recommendation, recommend_max_seq_length

__all__ = [
    "LengthHistogram", "LengthStats", "Profile", "Recommendation", "SeqprofError",
    "recommend_max_seq_length",
]
