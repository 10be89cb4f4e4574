"""Batching-strategy simulation: what each way of forming batches pays in padding, from the histogram.

Every strategy is a plain function over a length array that returns an epoch as (order, starts):
a permutation of row indices and the offsets where its batches begin. Padding then follows from
one rule shared by all (each batch is padded to its own longest row, as DataCollatorWithPadding
does), so the strategies differ only in how they order and cut, exactly as the trainers do.
Strategies whose order is random are run for several seeded epochs and report mean and spread.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from seqprof.dataset.histogram import LengthHistogram

FIXED = "fixed_padding"
RANDOM = "random_shuffle"
SORTED = "sorted_static"
GROUP_BY_LENGTH = "group_by_length"
BUCKETED = "bucketed_shuffle"
PACKING = "packing_bfd"
STRATEGIES = (FIXED, RANDOM, SORTED, GROUP_BY_LENGTH, BUCKETED, PACKING)

DESCRIPTIONS = {
    FIXED: "every row padded to max_seq_length (padding='max_length')",
    RANDOM: "full shuffle, each batch padded to its longest row",
    SORTED: "sorted by length once, cut into fixed batches: the same batches every epoch",
    GROUP_BY_LENGTH: "HF Trainer group_by_length: shuffled megabatches of 50 batches, sorted inside",
    BUCKETED: "rows shuffled within length buckets, batches shuffled across buckets, each epoch anew",
    PACKING: "best-fit-decreasing packing into max_seq_length rows (TRL packing_strategy='bfd')",
}
HF_MEGABATCH_MULT = 50
MAX_SIMULATED_ROWS = 1_000_000


# ---- batching primitives -------------------------------------------------------------------------

def batch_starts(lengths: np.ndarray, *, batch_size: int | None = None,
                 token_budget: int | None = None) -> np.ndarray:
    """Offsets where batches begin: every `batch_size` rows, or greedily while (n+1)*longest <= budget."""
    n = len(lengths)
    if batch_size is not None:
        return np.arange(0, n, batch_size, dtype=np.int64)
    if token_budget is None:
        raise ValueError("give batch_size or token_budget")
    starts = [0] if n else []
    longest = 0
    size = 0
    for i, length in enumerate(np.asarray(lengths).tolist()):
        top = length if length > longest else longest
        if size and (size + 1) * top > token_budget:
            starts.append(i)
            longest, size = length, 1
        else:
            longest, size = top, size + 1
    return np.asarray(starts, dtype=np.int64)


def computed_tokens(lengths_in_order: np.ndarray, starts: np.ndarray) -> int:
    """Tokens the model computes when each batch is padded to its own longest row."""
    if not len(lengths_in_order):
        return 0
    sizes = np.diff(np.append(starts, len(lengths_in_order)))
    return int(np.dot(np.maximum.reduceat(lengths_in_order, starts).astype(np.int64), sizes))


def padded_tokens_in_order(lengths: Sequence[int] | np.ndarray, *, batch_size: int | None = None,
                           token_budget: int | None = None) -> int:
    """Pad tokens a pad-to-longest collator adds to `lengths` batched in the given order."""
    arr = np.asarray(lengths, dtype=np.int64)
    starts = batch_starts(arr, batch_size=batch_size, token_budget=token_budget)
    return computed_tokens(arr, starts) - int(arr.sum())


# ---- epoch orders ----------------------------------------------------------------------------------

def length_grouped_order(lengths: np.ndarray, batch_size: int, permutation: np.ndarray,
                         mega_batch_mult: int | None = None) -> np.ndarray:
    """transformers' get_length_grouped_indices, given the random permutation it would draw."""
    n = len(lengths)
    if mega_batch_mult is None:
        mega_batch_mult = min(n // (batch_size * 4), HF_MEGABATCH_MULT) or 1
    size = mega_batch_mult * batch_size
    perm = np.asarray(permutation, dtype=np.int64)
    mega = np.arange(n) // size
    # sorted(..., reverse=True) is stable: equal lengths keep their permuted order
    order = perm[np.lexsort((np.arange(n), -lengths[perm], mega))]
    if n:
        firsts = np.arange(0, n, size)
        max_idx = int(np.argmax(lengths[order[firsts]]))
        order[0], order[firsts[max_idx]] = order[firsts[max_idx]], order[0]
    return order


def bucketed_shuffle_epoch(lengths: np.ndarray, boundaries: Sequence[int], rng: np.random.Generator, *,
                           batch_size: int | None = None, token_budget: int | None = None,
                           drop_last: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One epoch of the bucketed shuffle: shuffle inside each bucket, cut batches, shuffle the batches."""
    bounds = np.asarray(sorted(boundaries), dtype=np.int64)
    capped = np.minimum(lengths, bounds[-1])
    bucket = np.searchsorted(bounds, capped, side="left")
    grouped = np.lexsort((rng.random(len(lengths)), bucket))
    edges = np.searchsorted(bucket[grouped], np.arange(len(bounds) + 1), side="left")
    pieces, piece_starts, offset = [], [], 0
    for lo, hi in itertools.pairwise(edges):
        if lo == hi:
            continue
        idx = grouped[lo:hi]
        starts = batch_starts(capped[idx], batch_size=batch_size, token_budget=token_budget)
        if drop_last and _last_is_underfull(capped[idx], starts, batch_size, token_budget):
            idx, starts = idx[: starts[-1]], starts[:-1]
        pieces.append(idx)
        piece_starts.append(starts + offset)
        offset += len(idx)
    if not pieces:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.concatenate(pieces)
    starts = np.concatenate(piece_starts)
    return shuffle_batches(order, starts, rng)


def _last_is_underfull(lengths: np.ndarray, starts: np.ndarray, batch_size: int | None,
                       token_budget: int | None) -> bool:
    size = len(lengths) - int(starts[-1])
    if batch_size is not None:
        return size < batch_size
    return (size + 1) * int(lengths[starts[-1]:].max()) <= token_budget


def shuffle_batches(order: np.ndarray, starts: np.ndarray, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The same batches in a random order."""
    if not len(starts):
        return order, starts
    sizes = np.diff(np.append(starts, len(order)))
    perm = rng.permutation(len(starts))
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))
    batch_of_row = np.repeat(np.arange(len(starts)), sizes)
    new_order = order[np.argsort(rank[batch_of_row], kind="stable")]
    new_sizes = sizes[perm]
    return new_order, np.concatenate(([0], np.cumsum(new_sizes)[:-1])).astype(np.int64)


# ---- packing -----------------------------------------------------------------------------------------

def pack_bfd(hist: LengthHistogram, capacity: int) -> int:
    """Number of `capacity`-token rows best-fit-decreasing packing needs (rows longer are truncated).

    Runs on the histogram, not per row: a run of equal lengths is placed in bulk, exactly as the
    item-by-item BFD would place it (a bin keeps taking equal items while it is the best fit)."""
    counts = _capped_counts(hist, capacity)
    rooms = _OpenBins(capacity)
    bins = 0
    for length in np.flatnonzero(counts[1:])[::-1] + 1:
        length = int(length)
        left = int(counts[length])
        while left:
            room = rooms.best_fit(length)
            if room is not None:
                avail = rooms.count(room)
            else:
                room, avail = capacity, -1  # a fresh bin; as many as needed
            per_bin = room // length
            full = left // per_bin if avail < 0 else min(avail, left // per_bin)
            if full:
                rooms.add(room - per_bin * length, full)
                left -= full * per_bin
                if avail >= 0:
                    rooms.add(room, -full)
                else:
                    bins += full
            if left and left < per_bin and (avail < 0 or avail > full):
                rooms.add(room - left * length, 1)
                if avail >= 0:
                    rooms.add(room, -1)
                else:
                    bins += 1
                left = 0
    return bins


class _OpenBins:
    """Open bins by free room, with the best-fit query (the smallest room >= a length) in O(sqrt(capacity))
    numpy work: a scan of one block and of a per-block summary, not of every room (which took minutes on
    300k distinct lengths)."""

    BLOCK = 1024

    def __init__(self, capacity: int) -> None:
        self._bins = np.zeros(capacity + 1, dtype=np.int64)  # _bins[r]: open bins with r tokens free
        self._rooms_in_block = np.zeros(capacity // self.BLOCK + 1, dtype=np.int64)

    def count(self, room: int) -> int:
        return int(self._bins[room])

    def add(self, room: int, n: int) -> None:
        before = int(self._bins[room])
        self._bins[room] = before + n
        if before == 0 and n > 0:
            self._rooms_in_block[room // self.BLOCK] += 1
        elif before + n == 0 and before > 0:
            self._rooms_in_block[room // self.BLOCK] -= 1

    def best_fit(self, length: int) -> int | None:
        """The smallest room >= length that some open bin has, or None."""
        block = length // self.BLOCK
        hit = np.flatnonzero(self._bins[length:(block + 1) * self.BLOCK])
        if hit.size:
            return length + int(hit[0])
        later = np.flatnonzero(self._rooms_in_block[block + 1:])
        if not later.size:
            return None
        start = (block + 1 + int(later[0])) * self.BLOCK
        return start + int(np.flatnonzero(self._bins[start:start + self.BLOCK])[0])


def _capped_counts(hist: LengthHistogram, cap: int) -> np.ndarray:
    raw = hist.counts
    out = np.zeros(cap + 1, dtype=np.int64)
    out[: min(raw.size, cap + 1)] = raw[: cap + 1]
    out[cap] += int(raw[cap + 1:].sum())
    return out


# ---- the simulation ----------------------------------------------------------------------------------

class BatchTimer(Protocol):
    """Prices an epoch's micro batches (seqprof.predict.runtime.EpochTimer; batching knows no model)."""

    def epoch_seconds(self, rows: np.ndarray, padded: np.ndarray) -> float:
        """Wall seconds of micro batches of rows[i] x padded[i] tokens, optimizer steps included."""

    def optimizer_steps(self, micro_batches: float) -> float:
        """Optimizer steps (per GPU) those micro batches make."""

    def describe(self) -> str:
        """What the seconds assume, in words (setup, GPU, calibration)."""

@dataclass(frozen=True)
class StrategyResult:
    """One strategy's cost per epoch; figures are means over seeded epochs where order is random."""

    name: str
    description: str
    padding_efficiency: float  # real tokens / mean computed tokens
    padding_efficiency_std: float
    real_tokens: int
    computed_tokens: float
    padded_tokens: float
    padded_tokens_std: float
    batches: float  # per epoch
    speedup_bound: float  # 1 / (1 - padding fraction): what removing all padding would gain
    speedup_vs_fixed: float  # fixed padding's computed tokens / this strategy's
    consecutive_similarity: float | None  # lag-1 correlation of batch mean lengths (1 = sorted)
    repeated_batches: float | None  # share of epoch-2 batches identical to an epoch-1 batch
    epochs: int
    # set when the figures above are an exact expectation: the Monte Carlo mean they replaced
    padding_efficiency_simulated: float | None = None
    # with a BatchTimer (a model, a setup and a GPU): the epoch's wall time and what follows from it
    epoch_seconds: float | None = None
    step_seconds: float | None = None  # mean seconds per optimizer step over the epoch
    tokens_per_second: float | None = None  # real (unpadded) tokens per second

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Simulation:
    """Every strategy under one batch setting, for one (truncated) length distribution."""

    rows: int
    simulated_rows: int  # rows the order-dependent strategies ran on (a uniform sample past max_rows)
    real_tokens: int
    truncated_rows: int
    max_seq_length: int
    batch_size: int | None
    token_budget: int | None
    seed: int
    epochs: int
    strategies: dict[str, StrategyResult]

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "strategies"}
        out["strategies"] = {k: v.to_dict() for k, v in self.strategies.items()}
        return out


def simulate(hist: LengthHistogram, *, max_seq_length: int, boundaries: Sequence[int],
             batch_size: int | None = None, token_budget: int | None = None,
             seed: int = 0, epochs: int = 4, strategies: Sequence[str] = STRATEGIES,
             max_rows: int = MAX_SIMULATED_ROWS, mega_batch_size: int | None = None,
             timer: BatchTimer | None = None) -> Simulation:
    """Run the strategies on the histogram's rows (truncated to max_seq_length) for seeded epochs.

    `mega_batch_size` is the batch group_by_length groups megabatches by (transformers' Trainer passes
    train_batch_size * gradient_accumulation_steps); it defaults to the batch size. Batches are still
    cut every `batch_size` rows.

    Fixed padding and packing are exact from the histogram. Order-dependent strategies run on the
    rows themselves, or, past `max_rows`, on a seeded uniform sample of `max_rows` rows drawn
    without replacement (batches are local, so their padding share is unbiased; totals are scaled)."""
    if (batch_size is None) == (token_budget is None):
        raise ValueError("give exactly one of batch_size and token_budget")
    if epochs < 2:
        raise ValueError("epochs must be >= 2 (batch repetition compares two epochs)")
    unknown = set(strategies) - set(STRATEGIES)
    if unknown:
        raise ValueError(f"unknown strategies {sorted(unknown)}; known: {', '.join(STRATEGIES)}")
    counts = _capped_counts(hist, max_seq_length)
    rows = int(counts.sum())
    real = int(np.dot(np.arange(counts.size, dtype=np.int64), counts))
    if rows > max_rows:
        counts = np.random.default_rng([seed, len(STRATEGIES)]).multivariate_hypergeometric(counts, max_rows)
    lengths = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    scale = Scale(tokens=real / max(1, int(lengths.sum())), rows=rows / max(1, len(lengths)))
    cut = {"batch_size": batch_size, "token_budget": token_budget}
    fixed_rows = batch_size if batch_size is not None else max(1, token_budget // max_seq_length)
    if mega_batch_size is not None:
        mega_batch = mega_batch_size
    elif batch_size is not None:
        mega_batch = batch_size
    else:
        mega_batch = max(1, round(token_budget / max(1.0, lengths.mean())))

    def fixed(rng):
        order = rng.permutation(len(lengths))
        return order, batch_starts(order, batch_size=fixed_rows), None  # tokens: exact, rows * max_seq_length

    def random_shuffle(rng):
        return _padded_epoch(lengths, rng.permutation(len(lengths)), cut)

    sorted_run: list = []

    def sorted_static(rng):  # no randomness: the same order, hence the same batches, every epoch
        if not sorted_run:
            sorted_run.append(_padded_epoch(lengths, np.argsort(-lengths, kind="stable"), cut))
        return sorted_run[0]

    def group_by_length(rng):
        return _padded_epoch(lengths, length_grouped_order(lengths, mega_batch, rng.permutation(len(lengths))), cut)

    def bucketed(rng):
        order, starts = bucketed_shuffle_epoch(lengths, boundaries, rng, **cut)
        return order, starts, computed_tokens(lengths[order], starts)

    runners = {FIXED: fixed, RANDOM: random_shuffle, SORTED: sorted_static,
               GROUP_BY_LENGTH: group_by_length, BUCKETED: bucketed}
    results: dict[str, StrategyResult] = {}
    fixed_computed = float(rows * max_seq_length)
    for name in (s for s in STRATEGIES if s in strategies):
        stream = STRATEGIES.index(name)
        if name == PACKING:
            results[name] = _packing_result(hist, max_seq_length, real, fixed_rows, fixed_computed,
                                            np.random.default_rng([seed, stream]), epochs, max_rows)
            packs = round(results[name].computed_tokens / max_seq_length)
            results[name] = _timed(results[name], timer, *_full_batches(packs, fixed_rows, max_seq_length))
            continue
        runs = [runners[name](np.random.default_rng([seed, stream, epoch])) for epoch in range(epochs)]
        results[name] = _summarise(name, lengths, real, runs, fixed_computed, scale)
        if timer is not None:
            if name == FIXED:
                shapes = _full_batches(rows, fixed_rows, max_seq_length)
            else:
                shapes = _batch_shapes(lengths, runs, scale.rows)
            results[name] = _timed(results[name], timer, *shapes)
    return Simulation(rows=rows, simulated_rows=len(lengths), real_tokens=real,
                      truncated_rows=hist.count_above(max_seq_length), max_seq_length=max_seq_length,
                      batch_size=batch_size, token_budget=token_budget, seed=seed, epochs=epochs,
                      strategies=results)


def _full_batches(sequences: int, per_batch: int, length: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Every batch `per_batch` sequences of `length` tokens (the last one short)."""
    full, last = divmod(sequences, per_batch)
    rows = np.full(full + (1 if last else 0), per_batch, dtype=np.int64)
    if last:
        rows[-1] = last
    return rows, np.full(rows.size, length, dtype=np.int64), 1.0


def _batch_shapes(lengths: np.ndarray, runs: list, row_scale: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Rows and padded length (the batch's longest row) of every batch of every simulated epoch, and the
    factor from those epochs to one epoch of the whole dataset."""
    rows, padded = [], []
    for order, starts, _ in runs:
        ordered = lengths[order]
        rows.append(np.diff(np.append(starts, len(ordered))))
        padded.append(np.maximum.reduceat(ordered, starts))
    return np.concatenate(rows), np.concatenate(padded), row_scale / len(runs)


def _timed(result: StrategyResult, timer: BatchTimer | None, rows: np.ndarray, padded: np.ndarray,
           factor: float) -> StrategyResult:
    if timer is None or not rows.size:
        return result
    seconds = timer.epoch_seconds(rows, padded) * factor
    steps = timer.optimizer_steps(rows.size * factor)
    return replace(result, epoch_seconds=seconds, step_seconds=seconds / steps if steps else None,
                   tokens_per_second=result.real_tokens / seconds if seconds else None)


@dataclass(frozen=True)
class Scale:
    """From the simulated sample to the whole dataset (1.0 and 1.0 when every row is simulated)."""

    tokens: float
    rows: float


def _padded_epoch(lengths: np.ndarray, order: np.ndarray, cut: dict) -> tuple[np.ndarray, np.ndarray, int]:
    ordered = lengths[order]
    starts = batch_starts(ordered, **cut)
    return order, starts, computed_tokens(ordered, starts)


def _summarise(name: str, lengths: np.ndarray, real: int, runs: list, fixed_computed: float,
               scale: Scale) -> StrategyResult:
    computed = np.array([fixed_computed if c is None else c * scale.tokens for _, _, c in runs], dtype=np.float64)
    eff = real / computed if real else np.ones_like(computed)
    order0, starts0, _ = runs[0]
    order1, starts1, _ = runs[1]
    mean_computed = float(computed.mean())
    return StrategyResult(
        name=name, description=DESCRIPTIONS[name],
        padding_efficiency=real / mean_computed if mean_computed else 1.0,
        padding_efficiency_std=float(eff.std()),
        real_tokens=real, computed_tokens=mean_computed,
        padded_tokens=mean_computed - real, padded_tokens_std=float(computed.std()),
        batches=round(float(np.mean([len(s) for _, s, _ in runs])) * scale.rows, 2),
        speedup_bound=mean_computed / real if real else 1.0,
        speedup_vs_fixed=fixed_computed / mean_computed if mean_computed else 1.0,
        consecutive_similarity=_lag1_correlation(lengths[order0], starts0),
        repeated_batches=_repeated_share(order0, starts0, order1, starts1),
        epochs=len(runs),
    )


def _packing_result(hist: LengthHistogram, max_seq_length: int, real: int, rows_per_batch: int,
                    fixed_computed: float, rng: np.random.Generator, epochs: int, max_rows: int
                    ) -> StrategyResult:
    packs = pack_bfd(hist, max_seq_length)
    computed = packs * max_seq_length
    # packs are formed once; only their order is reshuffled, so compare batches of pack ids
    ids = np.arange(min(packs, max_rows))
    first, second = rng.permutation(ids), rng.permutation(ids)
    starts = batch_starts(ids, batch_size=rows_per_batch)
    return StrategyResult(
        name=PACKING, description=DESCRIPTIONS[PACKING],
        padding_efficiency=real / computed if computed else 1.0, padding_efficiency_std=0.0,
        real_tokens=real, computed_tokens=float(computed), padded_tokens=float(computed - real),
        padded_tokens_std=0.0, batches=float(math.ceil(packs / rows_per_batch)),
        speedup_bound=computed / real if real else 1.0,
        speedup_vs_fixed=fixed_computed / computed if computed else 1.0,
        consecutive_similarity=None,
        repeated_batches=_repeated_share(first, starts, second, starts),
        epochs=epochs,
    )


def _lag1_correlation(lengths_in_order: np.ndarray, starts: np.ndarray) -> float | None:
    """Pearson correlation of consecutive batches' mean lengths: ~1 sorted, ~0 shuffled."""
    if len(starts) < 3:
        return None
    sizes = np.diff(np.append(starts, len(lengths_in_order)))
    means = np.add.reduceat(lengths_in_order.astype(np.float64), starts) / sizes
    a, b = means[:-1], means[1:]
    if a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _repeated_share(order0: np.ndarray, starts0: np.ndarray, order1: np.ndarray, starts1: np.ndarray
                    ) -> float | None:
    """Share of the second epoch's batches whose row set is exactly a batch of the first.

    A batch's row set is fingerprinted by a sum of random 64-bit row keys (collisions ~ 2**-64)."""
    if not len(starts1):
        return None
    keys = np.random.default_rng(0x5EED).integers(0, 2**63, size=int(max(order0.max(), order1.max())) + 1,
                                                  dtype=np.uint64)

    def fingerprints(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
        return np.add.reduceat(keys[order], starts) if len(starts) else np.zeros(0, np.uint64)

    return float(np.isin(fingerprints(order1, starts1), fingerprints(order0, starts0)).mean())
