"""Bucket boundaries: the solver against brute force, the heuristics against their sources' own
formulas, the expected batch padding against enumeration and Monte Carlo, and the CLI contract."""

from __future__ import annotations

import ast
import bisect
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from seqprof import LengthHistogram, Profile, SeqprofError, optimal_boundaries
from seqprof.batching.buckets import (
    build_bucket_report,
    equal_count_boundaries,
    equal_token_boundaries,
    expected_batch_max,
    expected_bucketed_computed,
    padding_cost,
)
from seqprof.batching.simulate import simulate
from seqprof.cli import main
from seqprof.dataset.profile import DatasetInfo, TokenizerInfo
from seqprof.dataset.recommend import recommend_max_seq_length


def plain_cost(hist: dict[int, int], bounds: list[int]) -> int:
    """Pad every length to the first bound that holds it, one length at a time."""
    return sum(count * (next(b for b in sorted(bounds) if b >= length) - length)
               for length, count in hist.items())


def naive_dp(values: list[int], counts: list[int], k: int) -> int:
    """Textbook O(K n^2) DP over the distinct lengths: best cost of <= k buckets."""
    n = len(values)
    inf = float("inf")
    best = [0] + [inf] * n
    for _ in range(k):
        nxt = [0] + [inf] * n
        for j in range(1, n + 1):
            pad = 0  # padding of lengths i+1..j (1-based) up to values[j-1], grown one length at a time
            for i in range(j - 1, -1, -1):
                pad += counts[i] * (values[j - 1] - values[i])
                nxt[j] = min(nxt[j], best[i] + pad)
        best = [min(a, b) for a, b in zip(best, nxt)]
    return best[n]


def random_histogram(rng: np.random.Generator, max_distinct: int, max_length: int) -> dict[int, int]:
    n = int(rng.integers(1, max_distinct + 1))
    values = rng.choice(np.arange(max_length + 1), size=min(n, max_length + 1), replace=False)
    heavy = rng.random() < 0.3  # some histograms with a few huge counts
    counts = rng.integers(1, 10_000 if heavy else 30, size=values.size)
    return {int(v): int(c) for v, c in zip(values, counts)}


def test_optimal_equals_exhaustive_search_over_every_boundary_set():
    rng = np.random.default_rng(11)
    for _ in range(150):
        hist = random_histogram(rng, 9, 60)
        values = sorted(hist)
        for k in (1, 2, 3, 4):
            got = optimal_boundaries(hist, k)
            assert got == sorted(set(got)) and len(got) <= k and got[-1] == max(values)
            # every set of <= k boundaries drawn from the lengths, the longest always included
            best = min(plain_cost(hist, list(extra) + [values[-1]])
                       for m in range(k) for extra in itertools.combinations(values[:-1], m))
            assert plain_cost(hist, got) == best


def test_optimal_equals_naive_dp_on_many_random_histograms():
    rng = np.random.default_rng(12)
    for _ in range(120):
        hist = random_histogram(rng, 45, 5000)
        values = sorted(hist)
        counts = [hist[v] for v in values]
        k = int(rng.integers(1, 12))
        got = optimal_boundaries(hist, k)
        assert padding_cost(hist, got) == naive_dp(values, counts, k)


def test_histogram_and_mapping_inputs_agree_and_edge_cases():
    rng = np.random.default_rng(13)
    lengths = rng.integers(0, 3000, size=2000)
    hist = LengthHistogram.from_lengths(lengths)
    assert optimal_boundaries(hist, 7) == optimal_boundaries(hist.to_mapping(), 7)
    assert optimal_boundaries({}, 3) == []
    assert optimal_boundaries({5: 2, 9: 1}, 8) == [5, 9]  # fewer lengths than buckets: one each
    assert optimal_boundaries({5: 2, 9: 1, 40: 3}, 1) == [40]
    with pytest.raises(ValueError):
        optimal_boundaries({5: 1}, 0)


def test_max_len_truncates_and_counts_rows_above_it():
    rng = np.random.default_rng(14)
    for _ in range(40):
        hist = random_histogram(rng, 30, 400)
        cap = int(rng.integers(1, 400))
        truncated: dict[int, int] = {}
        for v, c in hist.items():
            truncated[min(v, cap)] = truncated.get(min(v, cap), 0) + c
        k = int(rng.integers(1, 6))
        got = optimal_boundaries(hist, k, max_len=cap)
        assert got[-1] == max(truncated)
        values = sorted(truncated)
        assert padding_cost(hist, got, max_len=cap) == naive_dp(values, [truncated[v] for v in values], k)


def test_equal_count_is_fairseqs_get_buckets():
    rng = np.random.default_rng(15)
    for _ in range(200):
        sizes = rng.integers(0, int(rng.integers(2, 3000)), size=int(rng.integers(1, 500)))
        k = int(rng.integers(1, 12))
        # fairseq/data/data_utils.py get_buckets, as written there
        fairseq = np.unique(np.percentile(sizes, np.linspace(0, 100, k + 1), method="lower")[1:])
        assert equal_count_boundaries(LengthHistogram.from_lengths(sizes), k) == fairseq.tolist()


def test_equal_token_is_lhotses_estimate_duration_buckets():
    rng = np.random.default_rng(16)
    for _ in range(200):
        sizes = rng.integers(0, int(rng.integers(2, 3000)), size=int(rng.integers(2, 500)))
        k = int(rng.integers(2, 12))
        # lhotse/dataset/sampling/dynamic_bucketing.py estimate_duration_buckets, as written there
        durs = np.sort(sizes).astype(float)
        per_bucket, bins, tot = durs.sum() / k, [], 0.0
        for dur in durs:
            if tot > per_bucket:
                bins.append(dur)
                tot = 0.0
            tot += dur
        groups: dict[int, list[float]] = {}
        for dur in durs:  # Lhotse puts a row in bucket bisect_right(bins, length)
            groups.setdefault(bisect.bisect_right(bins, dur), []).append(dur)
        lhotse = sorted({int(max(g)) for g in groups.values()})
        assert equal_token_boundaries(LengthHistogram.from_lengths(sizes), k) == lhotse


def test_optimum_is_never_worse_than_either_heuristic():
    rng = np.random.default_rng(17)
    for _ in range(60):
        hist = LengthHistogram.from_lengths(rng.lognormal(5, 1.0, size=3000).astype(int) + 1)
        k = int(rng.integers(2, 10))
        best = padding_cost(hist, optimal_boundaries(hist, k))
        assert best <= padding_cost(hist, equal_count_boundaries(hist, k))
        assert best <= padding_cost(hist, equal_token_boundaries(hist, k))


def test_expected_batch_max_equals_enumeration_of_every_batch():
    hist = {3: 5, 10: 2, 7: 4, 1: 6, 22: 1}
    rows = [v for v, c in hist.items() for _ in range(c)]
    for b in (1, 2, 3, 4):
        subsets = [max(s) for s in itertools.combinations(rows, b)]
        assert expected_batch_max(hist, b) == pytest.approx(np.mean(subsets), rel=1e-12)
        draws = [max(s) for s in itertools.product(rows, repeat=b)]
        assert expected_batch_max(hist, b, replace=True) == pytest.approx(np.mean(draws), rel=1e-12)


def test_expected_batch_max_against_monte_carlo_on_a_large_bucket():
    rng = np.random.default_rng(18)
    rows = rng.integers(100, 2000, size=5000)
    hist = LengthHistogram.from_lengths(rows)
    b = 16
    draws = np.array([rng.choice(rows, size=b, replace=False).max() for _ in range(6000)])
    sem = draws.std() / np.sqrt(draws.size)
    assert abs(expected_batch_max(hist, b) - draws.mean()) < 4 * sem


def test_expected_bucketed_computed_against_shuffled_epochs():
    rng = np.random.default_rng(19)
    rows = np.concatenate([rng.integers(20, 200, 700), rng.integers(200, 1500, 300)])
    hist = LengthHistogram.from_lengths(rows)
    bounds = optimal_boundaries(hist, 4)
    b = 8
    exact = expected_bucketed_computed(hist, bounds, b)
    bucket = np.searchsorted(bounds, rows, side="left")
    members = [rows[bucket == i] for i in range(len(bounds))]
    epochs = []
    for _ in range(1500):  # shuffle each bucket, cut batches of b, pad each to its longest
        total = 0
        for member in members:
            shuffled = rng.permutation(member)
            full = len(shuffled) // b * b
            total += int(shuffled[:full].reshape(-1, b).max(axis=1).sum()) * b
            if full < len(shuffled):
                total += int(shuffled[full:].max()) * (len(shuffled) - full)
        epochs.append(total)
    epochs = np.array(epochs, dtype=float)
    assert abs(exact - epochs.mean()) < 4 * epochs.std() / np.sqrt(epochs.size)


def _profile(lengths: np.ndarray) -> Profile:
    hist = LengthHistogram.from_lengths(lengths)
    return Profile(dataset=DatasetInfo(path="synthetic.jsonl", format="jsonl", rows=hist.count, skipped_rows=0,
                                       schema="text"),
                   tokenizer=TokenizerInfo(name="qwen-2.5", vocab_size=151665), sequence=hist, fields={},
                   recommendation=recommend_max_seq_length(hist))


def test_report_carries_the_solved_boundaries_and_exact_expectation():
    rng = np.random.default_rng(20)
    rows = rng.lognormal(5.5, 0.8, 4000).astype(int) + 8
    hist = LengthHistogram.from_lengths(rows)
    report = build_bucket_report(hist, 6, batch_size=8, max_seq_length=2048, seed=3)
    assert list(report.boundaries) == optimal_boundaries(hist, 6, max_len=2048)
    methods = {m.method: m for m in report.methods}
    assert set(methods) == {"optimal", "equal_count", "equal_token"}
    assert methods["optimal"].padded_tokens == padding_cost(hist, list(report.boundaries), max_len=2048)
    kept = np.minimum(rows, 2048)
    expected = expected_bucketed_computed(LengthHistogram.from_lengths(kept), list(report.boundaries), 8)
    assert report.padding_efficiency == pytest.approx(kept.sum() / expected, rel=1e-12)
    assert report.padding_efficiency_method == "exact"
    bucketed = report.simulation.strategies["bucketed_shuffle"]
    assert bucketed.padding_efficiency == report.padding_efficiency  # one figure, wherever it is printed
    assert bucketed.computed_tokens == pytest.approx(expected, rel=1e-12)
    assert bucketed.padded_tokens == pytest.approx(expected - kept.sum(), rel=1e-12)
    assert bucketed.speedup_vs_fixed == pytest.approx(kept.size * 2048 / expected, rel=1e-12)
    mc = simulate(hist, max_seq_length=2048, boundaries=list(report.boundaries), batch_size=8, seed=3,
                  strategies=["bucketed_shuffle"]).strategies["bucketed_shuffle"]
    assert bucketed.padding_efficiency_simulated == mc.padding_efficiency  # the Monte Carlo mean, kept beside it
    assert bucketed.padding_efficiency_std == mc.padding_efficiency_std
    assert abs(mc.padding_efficiency - report.padding_efficiency) < 5 * mc.padding_efficiency_std + 1e-3
    as_dict = report.to_dict()
    assert as_dict["strategies"]["bucketed_shuffle"]["padding_efficiency"] == as_dict["padding_efficiency"]
    assert sum(b.rows for b in report.buckets) == hist.count


@pytest.mark.parametrize("kwargs, message", [
    (dict(batch_size=4, token_budget=4096), "not both"),
    (dict(token_budget=100, max_seq_length=512), "below max_seq_length"),
    (dict(batch_size=0), "positive"),
])
def test_bad_settings_raise_seqprof_error(kwargs, message):
    hist = LengthHistogram.from_lengths([10, 20, 300])
    with pytest.raises(SeqprofError, match=message):
        build_bucket_report(hist, 3, **kwargs)
    with pytest.raises(SeqprofError, match="no sequences"):
        build_bucket_report(LengthHistogram(), 3)


def test_cli_json_contract_and_pasteable_text(tmp_path):
    rng = np.random.default_rng(21)
    path = tmp_path / "profile.json"
    _profile(rng.lognormal(5.5, 0.9, 3000).astype(int) + 5).save(path)
    runner = CliRunner()
    result = runner.invoke(main, ["buckets", str(path), "--num-buckets", "6", "--batch-size", "8",
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["boundaries"] == sorted(data["boundaries"]) and len(data["boundaries"]) == 6
    assert 0 < data["padding_efficiency"] <= 1
    names = list(data["strategies"])
    for part in ("fixed", "random", "sorted", "group_by_length", "bucket", "pack"):
        assert any(part in name for name in names), part
    for s in data["strategies"].values():
        assert {"padding_efficiency", "padded_tokens", "batches", "speedup_bound"} <= set(s)
        assert s["speedup_bound"] == pytest.approx(1 / s["padding_efficiency"])

    text = runner.invoke(main, ["buckets", str(path), "-k", "6", "-b", "8"])
    assert text.exit_code == 0, text.output
    line = next(ln for ln in text.output.splitlines() if ln.startswith("boundaries = "))
    assert ast.literal_eval(line.removeprefix("boundaries = ")) == data["boundaries"]
    for name in names:
        assert name in text.output


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "profile.json"
    _profile(np.arange(10, 500)).save(path)
    runner = CliRunner()
    both = runner.invoke(main, ["buckets", str(path), "-k", "4", "-b", "8", "-n", "4096"])
    assert both.exit_code == 2 and "not both" in both.output and "Traceback" not in both.output
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"kind": "seqprof.profile", "version": 1}')
    bad = runner.invoke(main, ["buckets", str(damaged), "-k", "4"])
    assert bad.exit_code == 2 and "damaged" in bad.output


def test_cli_on_raw_data_goes_through_analyze(tmp_path):
    from seqprof.dataset.analyze import build_profile, default_dataset_path

    data = str(default_dataset_path())
    result = CliRunner().invoke(main, ["buckets", data, "-k", "5", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    hist = build_profile(data).sequence
    assert out["rows"] == hist.count and out["real_tokens"] == hist.total_tokens
    assert out["boundaries"] == optimal_boundaries(hist, 5, max_len=out["max_seq_length"])
