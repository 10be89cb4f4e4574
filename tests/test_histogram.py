import numpy as np
import pytest

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.recommend import recommend_max_seq_length, round_up


def test_percentiles_equal_numpy_linear_on_raw_lengths():
    rng = np.random.default_rng(7)
    for _ in range(500):
        raw = rng.integers(0, rng.integers(1, 5000), size=rng.integers(1, 800))
        hist = LengthHistogram.from_lengths(raw)
        for p in (0, 1, 33.3, 50, 90, 95, 99, 99.9, 100):
            assert hist.percentile(p) == np.percentile(raw, p)
        s = hist.stats()
        assert (s.count, s.min, s.max, s.total_tokens) == (raw.size, raw.min(), raw.max(), raw.sum())
        assert s.mean == pytest.approx(raw.mean())


def test_merge_equals_histogram_of_concatenation():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 300, 1000), rng.integers(100, 900, 500)
    merged = LengthHistogram.from_lengths(a).merge(LengthHistogram.from_lengths(b))
    assert merged == LengthHistogram.from_lengths(np.concatenate([a, b]))
    inplace = LengthHistogram.from_lengths(a)
    inplace.add(b)
    assert inplace == merged


def _brute_recommendation(raw, multiple, coverage):
    """The rule as the issue words it, computed on the sorted raw lengths."""
    srt = sorted(raw)
    full = max(multiple, -(-srt[-1] // multiple) * multiple)
    k = int(np.ceil(coverage * len(srt) - 1e-9))
    q = srt[max(k, 1) - 1]
    quant = max(multiple, -(-q // multiple) * multiple)
    chosen = full if full <= 1.1 * quant else quant
    return chosen, sum(1 for x in srt if x > chosen)


def test_recommendation_matches_rule_on_random_data():
    rng = np.random.default_rng(11)
    for _ in range(300):
        raw = rng.integers(1, rng.integers(2, 6000), size=rng.integers(1, 3000))
        if rng.random() < 0.3:  # a long tail: a few huge rows
            raw = np.concatenate([raw, rng.integers(20000, 40000, size=rng.integers(1, 4))])
        rec = recommend_max_seq_length(LengthHistogram.from_lengths(raw), multiple=64, coverage=0.999)
        chosen, truncated = _brute_recommendation(raw.tolist(), 64, 0.999)
        assert (rec.max_seq_length, rec.truncated_rows) == (chosen, truncated)
        assert rec.coverage == pytest.approx(1 - truncated / raw.size)


def test_ftpo_story_gives_1152_with_no_row_truncated():
    """DESIGN.md story 1: p99 1080, max 1126 -> 1152 covers every row (the issue's own figure)."""
    rng = np.random.default_rng(0)
    body = rng.integers(100, 1081, size=11_990)
    tail = np.array([1080] * 8 + [1100, 1126])
    raw = np.concatenate([body, tail])
    hist = LengthHistogram.from_lengths(raw)
    assert hist.max == 1126 and hist.percentile(99) <= 1080
    rec = recommend_max_seq_length(hist)
    assert rec.max_seq_length == 1152 == round_up(1126, 64)
    assert rec.truncated_rows == 0 and rec.coverage == 1.0
