"""BucketedShuffleSampler: every row once per epoch, fresh batches each epoch, bucket-pure batches,
and the padding the exact expectation in seqprof.batching.buckets predicts."""

from __future__ import annotations

import numpy as np
import pytest

from seqprof import BucketedShuffleSampler, LengthHistogram, optimal_boundaries
from seqprof.batching.buckets import expected_bucketed_computed


@pytest.fixture(scope="module")
def lengths() -> np.ndarray:
    rng = np.random.default_rng(40)
    return np.concatenate([rng.lognormal(4.5, 0.9, 3000).astype(int) + 3, [5000, 7000]])  # two over the cap


@pytest.fixture(scope="module")
def bounds(lengths) -> list[int]:
    return optimal_boundaries(LengthHistogram.from_lengths(lengths), 5, max_len=2048)


def bucket_of(length: int, bounds: list[int]) -> int:
    return next((i for i, b in enumerate(bounds) if length <= b), len(bounds) - 1)


@pytest.mark.parametrize("kwargs", [dict(batch_size=8), dict(batch_size=1), dict(token_budget=8192)])
def test_every_row_exactly_once_per_epoch_in_bucket_pure_batches(lengths, bounds, kwargs):
    sampler = BucketedShuffleSampler(lengths, bounds, seed=1, **kwargs)
    for _ in range(3):
        expected_len = len(sampler)
        batches = list(sampler)
        assert len(batches) == expected_len
        flat = sorted(i for batch in batches for i in batch)
        assert flat == list(range(len(lengths)))
        for batch in batches:
            assert len({bucket_of(int(lengths[i]), bounds) for i in batch}) == 1
            if "batch_size" in kwargs:
                assert len(batch) <= kwargs["batch_size"]
            else:
                longest = min(int(max(lengths[i] for i in batch)), bounds[-1])
                assert len(batch) == 1 or len(batch) * longest <= kwargs["token_budget"]


def test_batches_are_fresh_each_epoch_and_reproducible_per_seed(lengths, bounds):
    sampler = BucketedShuffleSampler(lengths, bounds, batch_size=8, seed=2)
    first, second = list(sampler), list(sampler)  # iterating advances the epoch
    assert {frozenset(b) for b in first}.isdisjoint({frozenset(b) for b in second if len(b) > 2})
    assert [b[0] for b in first] != [b[0] for b in second]
    again = BucketedShuffleSampler(lengths, bounds, batch_size=8, seed=2)
    assert list(again) == first
    again.set_epoch(1)
    assert list(again) == second
    other_seed = BucketedShuffleSampler(lengths, bounds, batch_size=8, seed=3)
    assert list(other_seed) != first


def test_drop_last_keeps_only_full_batches(lengths, bounds):
    sampler = BucketedShuffleSampler(lengths, bounds, batch_size=16, drop_last=True)
    batches = list(sampler)
    assert batches and all(len(b) == 16 for b in batches)
    sizes = np.bincount([bucket_of(int(x), bounds) for x in lengths], minlength=len(bounds))
    assert len(batches) == int((sizes // 16).sum())


def test_drop_last_with_no_full_batch_yields_nothing():
    sampler = BucketedShuffleSampler([5, 6, 7, 50], [10, 50], batch_size=8, drop_last=True)
    assert list(sampler) == [] and len(sampler) == 0


def test_token_budget_drop_last_drops_only_each_buckets_underfull_last_batch(lengths, bounds):
    budget = 8192
    capped = np.minimum(lengths, bounds[-1])
    kept = {frozenset(b) for b in BucketedShuffleSampler(lengths, bounds, token_budget=budget, drop_last=True,
                                                         seed=4)}
    every = {frozenset(b) for b in BucketedShuffleSampler(lengths, bounds, token_budget=budget, seed=4)}
    dropped = every - kept
    assert kept <= every and dropped
    for batch in dropped:  # could have taken one more row of its own longest length
        assert (len(batch) + 1) * int(capped[list(batch)].max()) <= budget
    assert len({bucket_of(int(lengths[next(iter(b))]), bounds) for b in dropped}) == len(dropped)


def test_padding_matches_the_exact_expectation(lengths, bounds):
    capped = np.minimum(lengths, bounds[-1])
    exact = expected_bucketed_computed(LengthHistogram.from_lengths(capped), bounds, 8)
    sampler = BucketedShuffleSampler(lengths, bounds, batch_size=8, seed=5)
    epochs = []
    for _ in range(300):
        batches = list(sampler)
        ordered = capped[np.concatenate(batches)]
        starts = np.cumsum([0] + [len(b) for b in batches[:-1]])
        epochs.append(int(np.dot(np.maximum.reduceat(ordered, starts), [len(b) for b in batches])))
    epochs = np.array(epochs, dtype=float)
    sem = epochs.std() / np.sqrt(epochs.size)
    assert abs(epochs.mean() - exact) < 4 * sem


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=8, token_budget=100), dict(batch_size=0)])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        BucketedShuffleSampler([1, 2, 3], [3], **kwargs)
    with pytest.raises(ValueError):
        BucketedShuffleSampler([1, 2, 3], [], batch_size=2)
