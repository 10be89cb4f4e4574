"""max_seq_length recommendation: cover every row when that is cheap, else a coverage quantile."""

from __future__ import annotations

from dataclasses import dataclass

from seqprof.dataset.histogram import LengthHistogram

DEFAULT_MULTIPLE = 64
DEFAULT_COVERAGE = 0.999
MAX_COST_OF_FULL_COVERAGE = 0.10  # cover the longest row if it costs at most 10% over the quantile


@dataclass(frozen=True)
class Recommendation:
    max_seq_length: int
    coverage: float  # share of rows that fit without truncation
    truncated_rows: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def round_up(length: int, multiple: int) -> int:
    return max(multiple, -(-length // multiple) * multiple)


def recommend_max_seq_length(hist: LengthHistogram, *, multiple: int = DEFAULT_MULTIPLE,
                             coverage: float = DEFAULT_COVERAGE) -> Recommendation:
    """Smallest multiple of `multiple` covering the longest row when that costs <= ~10% more
    than covering the `coverage` quantile; otherwise the quantile's multiple."""
    n = hist.count
    if n == 0:
        return Recommendation(max_seq_length=multiple, coverage=1.0, truncated_rows=0)
    full = round_up(hist.max, multiple)
    quantile = round_up(hist.quantile_length(coverage), multiple)
    chosen = full if full <= quantile * (1 + MAX_COST_OF_FULL_COVERAGE) else quantile
    truncated = hist.count_above(chosen)
    return Recommendation(max_seq_length=chosen, coverage=(n - truncated) / n, truncated_rows=truncated)
