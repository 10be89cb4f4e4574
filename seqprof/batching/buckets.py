"""Bucket boundaries: the exact padding-optimal solver, the fairseq/Lhotse heuristics, and the report.

Padding a row of length l to its bucket's upper bound b costs (b - l) tokens, so boundaries
B_1 < ... < B_K cost sum(count(l) * (bound(l) - l)). Over the n distinct lengths v_1 < ... < v_n
a bucket is a run (i, j] of them and costs w(i, j) = v_j * (C_j - C_i) - (T_j - T_i) with C, T
the prefix counts and tokens. w is Monge: w(a,d) + w(b,c) - w(a,c) - w(b,d) = (v_d - v_c)(C_b - C_a)
>= 0 for a <= b <= c <= d, so the leftmost optimal split point is monotone in j and the
divide-and-conquer optimisation gives the exact optimum in O(K n log n); here every recursion
level of every layer runs as one vectorised numpy step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from seqprof.batching.simulate import BUCKETED, BatchTimer, Simulation, StrategyResult, simulate
from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.errors import SeqprofError


def _distinct(counts: Mapping[int, int] | LengthHistogram, max_len: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct lengths (ascending) and their counts, rows above `max_len` truncated onto it."""
    if isinstance(counts, LengthHistogram):
        dense = counts.counts
        values = np.flatnonzero(dense).astype(np.int64)
        weights = dense[values].astype(np.int64)
    else:
        items = sorted((int(k), int(v)) for k, v in counts.items() if int(v) != 0)
        if any(k < 0 or v < 0 for k, v in items):
            raise ValueError("lengths and counts must be non-negative")
        values = np.array([k for k, _ in items], dtype=np.int64)
        weights = np.array([v for _, v in items], dtype=np.int64)
    if max_len is not None and values.size and values[-1] > max_len:
        keep = values < max_len
        over = int(weights[~keep].sum())
        values = np.append(values[keep], max_len)
        weights = np.append(weights[keep], over)
    return values, weights


def padding_cost(counts: Mapping[int, int] | LengthHistogram, boundaries: Sequence[int],
                 max_len: int | None = None) -> int:
    """Padded tokens when every row is padded to the smallest boundary >= its length."""
    values, weights = _distinct(counts, max_len)
    if not values.size:
        return 0
    bounds = np.asarray(sorted(boundaries), dtype=np.int64)
    if not bounds.size or bounds[-1] < values[-1]:
        raise ValueError(f"boundaries must reach the longest kept length {int(values[-1])}")
    padded = bounds[np.searchsorted(bounds, values, side="left")]
    return int(np.dot(padded - values, weights))


def optimal_boundaries(counts: Mapping[int, int] | LengthHistogram, num_buckets: int,
                       max_len: int | None = None) -> list[int]:
    """The at most `num_buckets` ascending upper bounds minimising padded tokens, exactly."""
    if num_buckets < 1:
        raise ValueError("num_buckets must be >= 1")
    values, weights = _distinct(counts, max_len)
    n = values.size
    if n == 0:
        return []
    if num_buckets >= n:
        return [int(v) for v in values]
    if num_buckets == 1:
        return [int(values[-1])]
    cum_c = np.concatenate(([0], np.cumsum(weights)))
    cum_t = np.concatenate(([0], np.cumsum(weights * values)))
    v_of = np.concatenate(([0], values))  # v_of[j] = v_j, 1-based
    prev = v_of * cum_c - cum_t  # one bucket: every prefix padded to its own longest length
    choices = [np.zeros(n + 1, dtype=np.int64)]
    for _ in range(num_buckets - 2):
        prev, opt = _layer(prev, v_of, cum_c, cum_t)
        choices.append(opt)
    # the last layer is needed at j = n only: one vectorised minimum over every split point
    last = prev + v_of[n] * (cum_c[n] - cum_c) - (cum_t[n] - cum_t)
    final = np.zeros(n + 1, dtype=np.int64)
    final[n] = int(np.argmin(last))
    choices.append(final)
    bounds = []
    j = n
    for opt in reversed(choices):
        i = int(opt[j])
        if i < j:
            bounds.append(int(v_of[j]))
        j = i
    return sorted(bounds)


def _layer(prev: np.ndarray, v_of: np.ndarray, cum_c: np.ndarray, cum_t: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """cur[j] = min over i <= j of prev[i] + w(i, j); all segments of one recursion depth at once."""
    n = prev.size - 1
    # prev[i] + w(i, j) = (prev[i] + T_i) - v_j * C_i + (v_j * C_j - T_j): the last term is per j
    base = prev + cum_t
    cur = np.zeros(n + 1, dtype=np.int64)
    opt = np.zeros(n + 1, dtype=np.int64)
    positions = np.arange(2 * (n + 1), dtype=np.int64)  # candidates per depth never exceed 2(n + 1)
    lo = np.array([1], dtype=np.int64)
    hi = np.array([n], dtype=np.int64)
    olo = np.array([0], dtype=np.int64)
    ohi = np.array([n], dtype=np.int64)
    while lo.size:
        mid = (lo + hi) // 2
        sizes = np.minimum(mid, ohi) - olo + 1
        ends = np.cumsum(sizes)
        starts = ends - sizes
        cand = positions[: ends[-1]] - np.repeat(starts - olo, sizes)
        cost = base[cand] - np.repeat(v_of[mid], sizes) * cum_c[cand]
        best = np.minimum.reduceat(cost, starts)
        hits = np.flatnonzero(cost == np.repeat(best, sizes))  # the leftmost hit of each segment wins
        arg = cand[hits[np.searchsorted(hits, starts)]]
        cur[mid] = best + v_of[mid] * cum_c[mid] - cum_t[mid]
        opt[mid] = arg
        left = lo < mid
        right = mid < hi
        lo = np.concatenate((lo[left], mid[right] + 1))
        hi = np.concatenate((mid[left] - 1, hi[right]))
        olo, ohi = (np.concatenate((olo[left], arg[right])),
                    np.concatenate((arg[left], ohi[right])))
    return cur, opt


# ---- heuristics beside the optimum -----------------------------------------------------------------

def equal_count_boundaries(counts: Mapping[int, int] | LengthHistogram, num_buckets: int,
                           max_len: int | None = None) -> list[int]:
    """fairseq's get_buckets: unique 'lower' percentiles at 100/K, 200/K, ..., 100 of the lengths."""
    values, weights = _distinct(counts, max_len)
    if not values.size:
        return []
    n = int(weights.sum())
    quantiles = np.true_divide(np.linspace(0, 100, num_buckets + 1), 100)[1:]
    ranks = np.floor((n - 1) * quantiles).astype(np.int64)  # numpy's method='lower'
    return sorted({int(v) for v in values[np.searchsorted(np.cumsum(weights), ranks, side="right")]})


def equal_token_boundaries(counts: Mapping[int, int] | LengthHistogram, num_buckets: int,
                           max_len: int | None = None) -> list[int]:
    """Lhotse/NeMo estimate_duration_buckets (equal total tokens per bucket), as upper bounds."""
    values, weights = _distinct(counts, max_len)
    if not values.size:
        return []
    tokens = weights * values
    before_t = np.concatenate(([0], np.cumsum(tokens)[:-1]))  # tokens in rows of shorter lengths
    before_c = np.concatenate(([0], np.cumsum(weights)[:-1]))
    n, per_bucket = int(weights.sum()), float(tokens.sum()) / num_buckets
    edges, start = [], 0  # Lhotse: a new bucket starts at row m once rows [start, m) exceed per_bucket
    while True:
        target = _tokens_before(start, values, weights, before_t, before_c) + per_bucket
        run = int(np.searchsorted(before_t + tokens, target, side="right"))
        if run >= values.size:
            break
        m = int(before_c[run]) + math.floor((target - before_t[run]) / values[run]) + 1
        if m >= n:
            break
        edges.append(int(values[np.searchsorted(np.cumsum(weights), m, side="right")]))
        start = m
    # Lhotse's bucket i holds edges[i-1] <= length < edges[i]; name each by its longest length
    bucket = np.searchsorted(np.asarray(edges, dtype=np.int64), values, side="right")
    return sorted({int(values[bucket == b].max()) for b in np.unique(bucket)})


def _tokens_before(row: int, values: np.ndarray, weights: np.ndarray, before_t: np.ndarray,
                   before_c: np.ndarray) -> int:
    """Tokens in the `row` shortest rows."""
    run = int(np.searchsorted(before_c + weights, row, side="right"))
    if run >= values.size:
        return int(before_t[-1] + weights[-1] * values[-1])
    return int(before_t[run] + (row - before_c[run]) * values[run])


# ---- expected batch-level padding of a bucketed shuffle ----------------------------------------

def expected_batch_max(counts: Mapping[int, int] | LengthHistogram, batch_size: int, *,
                       replace: bool = False) -> float:
    """E[longest of `batch_size` rows drawn from the histogram]: what a shuffled batch pads to.

    P(max <= v) is C(N_v, B) / C(N, B) without replacement (a shuffled bucket's batches are
    uniform B-subsets), or (N_v / N)^B with replacement; E[max] = sum v * (P(<= v) - P(< v))."""
    values, weights = _distinct(counts, None)
    n = int(weights.sum())
    if not n or batch_size < 1:
        return 0.0
    if not replace and batch_size > n:
        raise ValueError(f"cannot draw {batch_size} rows without replacement from {n}")
    below = np.cumsum(weights).astype(np.float64)
    if replace:
        cdf = (below / n) ** batch_size
    else:
        from scipy.special import gammaln

        b = batch_size
        ok = below >= b
        log_ratio = np.where(ok, gammaln(below + 1) - gammaln(np.maximum(below - b, 0) + 1), 0.0)
        cdf = np.where(ok, np.exp(log_ratio - (gammaln(n + 1.0) - gammaln(n - b + 1.0))), 0.0)
        cdf[-1] = 1.0
    pmf = np.diff(np.concatenate(([0.0], cdf)))
    return float(np.dot(pmf, values))


def expected_bucketed_computed(counts: Mapping[int, int] | LengthHistogram, boundaries: Sequence[int],
                               batch_size: int, *, drop_last: bool = False) -> float:
    """Expected tokens computed per epoch by a bucketed shuffle that pads each batch to its longest."""
    values, weights = _distinct(counts, None)
    bounds = np.asarray(sorted(boundaries), dtype=np.int64)
    capped = np.minimum(values, bounds[-1]) if bounds.size else values
    bucket = np.searchsorted(bounds, capped, side="left")
    total = 0.0
    for b in np.unique(bucket):
        member = bucket == b
        hist = dict(zip(capped[member].tolist(), weights[member].tolist()))
        size = int(weights[member].sum())
        full, rest = divmod(size, batch_size)
        if full:
            total += full * batch_size * expected_batch_max(hist, batch_size)
        if rest and not drop_last:
            total += rest * expected_batch_max(hist, rest)
    return total


# ---- the report: solved boundaries, heuristics and every strategy, as one value object ------------

DEFAULT_BATCH_SIZE = 8  # transformers' per_device_train_batch_size default
BOUNDARY_METHODS = ("optimal", "equal_count", "equal_token")


@dataclass(frozen=True)
class BucketStats:
    """One bucket of the solved boundaries."""

    upper: int
    rows: int
    real_tokens: int
    pad_to_bound: int  # pad tokens if every row is padded to `upper`
    expected_batch_padding: float | None  # pad tokens with pad-to-longest batches (batch-size mode)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class BoundaryChoice:
    """Boundaries from one method, scored by padding every row to its bucket's upper bound."""

    method: str
    boundaries: tuple[int, ...]
    padded_tokens: int
    padding_efficiency: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "boundaries": list(self.boundaries)}


@dataclass(frozen=True)
class BucketReport:
    """What `seqprof buckets` reports; the HTML report and lint rules read the same object."""

    num_buckets: int
    batch_size: int | None
    token_budget: int | None
    max_seq_length: int
    boundaries: tuple[int, ...]
    padding_efficiency: float  # expected, bucketed shuffle with `boundaries`, batches padded to longest
    padding_efficiency_method: str  # "exact" (batch size) or "monte_carlo" (token budget)
    buckets: tuple[BucketStats, ...]
    methods: tuple[BoundaryChoice, ...]
    simulation: Simulation
    timing: str | None = None  # what the strategies' seconds assume (setup, GPU, calibration), when timed

    def to_dict(self) -> dict[str, Any]:
        sim = self.simulation.to_dict()
        strategies = sim.pop("strategies")
        return {
            "num_buckets": self.num_buckets,
            "batch_size": self.batch_size,
            "token_budget": self.token_budget,
            "max_seq_length": self.max_seq_length,
            "rows": sim["rows"],
            "simulated_rows": sim["simulated_rows"],
            "real_tokens": sim["real_tokens"],
            "truncated_rows": sim["truncated_rows"],
            "seed": sim["seed"],
            "epochs": sim["epochs"],
            "boundaries": list(self.boundaries),
            "padding_efficiency": self.padding_efficiency,
            "padding_efficiency_method": self.padding_efficiency_method,
            "buckets": [b.to_dict() for b in self.buckets],
            "boundary_methods": {m.method: m.to_dict() for m in self.methods},
            "strategies": strategies,
            "timing": self.timing,
        }


def build_bucket_report(hist: LengthHistogram, num_buckets: int, *, batch_size: int | None = None,
                        token_budget: int | None = None, max_seq_length: int | None = None,
                        seed: int = 0, epochs: int = 4, timer: BatchTimer | None = None) -> BucketReport:
    """Solve the boundaries, score the heuristics beside them, and simulate every strategy (timed, with a
    timer: seqprof.predict.runtime.EpochTimer)."""
    _check_settings(hist, num_buckets, batch_size, token_budget, max_seq_length)
    if batch_size is None and token_budget is None:
        batch_size = DEFAULT_BATCH_SIZE
    if max_seq_length is None:
        max_seq_length = recommend_max_seq_length(hist).max_seq_length
    if token_budget is not None and token_budget < max_seq_length:
        raise SeqprofError(f"token budget {token_budget} is below max_seq_length {max_seq_length}: "
                           "one long row would not fit a batch",
                           fix="raise --token-budget or pass a smaller --max-seq-length")
    solvers = {"optimal": optimal_boundaries, "equal_count": equal_count_boundaries,
               "equal_token": equal_token_boundaries}
    real = int(np.dot(*_distinct(hist, max_seq_length)))
    methods = []
    for method in BOUNDARY_METHODS:
        bounds = solvers[method](hist, num_buckets, max_seq_length)
        padded = padding_cost(hist, bounds, max_seq_length)
        methods.append(BoundaryChoice(method, tuple(bounds), padded, real / (real + padded) if real else 1.0))
    boundaries = list(methods[0].boundaries)
    sim = simulate(hist, max_seq_length=max_seq_length, boundaries=boundaries, batch_size=batch_size,
                   token_budget=token_budget, seed=seed, epochs=epochs, timer=timer)
    buckets = _bucket_stats(hist, boundaries, max_seq_length, batch_size)
    if batch_size is not None:
        expected = sum(b.real_tokens + b.expected_batch_padding for b in buckets)
        efficiency, how = (real / expected if expected else 1.0), "exact"
        strategies = dict(sim.strategies)
        if BUCKETED in strategies:  # one figure everywhere: the exact expectation, the Monte Carlo mean beside it
            strategies[BUCKETED] = _with_exact_cost(strategies[BUCKETED], expected, sim.rows * max_seq_length)
            sim = replace(sim, strategies=strategies)
    else:
        efficiency, how = sim.strategies[BUCKETED].padding_efficiency, "monte_carlo"
    return BucketReport(num_buckets=num_buckets, batch_size=batch_size, token_budget=token_budget,
                        max_seq_length=max_seq_length, boundaries=tuple(boundaries),
                        padding_efficiency=efficiency, padding_efficiency_method=how,
                        buckets=tuple(buckets), methods=tuple(methods), simulation=sim,
                        timing=timer.describe() if timer is not None else None)


def _with_exact_cost(result: StrategyResult, computed: float, fixed_computed: float) -> StrategyResult:
    """The bucketed shuffle's cost figures replaced by their exact expectation (spreads stay Monte Carlo)."""
    real = result.real_tokens
    return replace(result, padding_efficiency=real / computed if computed else 1.0, computed_tokens=float(computed),
                   padded_tokens=float(computed - real), speedup_bound=computed / real if real else 1.0,
                   speedup_vs_fixed=fixed_computed / computed if computed else 1.0,
                   padding_efficiency_simulated=result.padding_efficiency)


def _check_settings(hist: LengthHistogram, num_buckets: int, batch_size: int | None,
                    token_budget: int | None, max_seq_length: int | None) -> None:
    if hist.count == 0:
        raise SeqprofError("the dataset has no sequences to bucket", fix="check the data file and its schema")
    if batch_size is not None and token_budget is not None:
        raise SeqprofError("give a batch size or a token budget, not both",
                           fix="drop --batch-size or --token-budget")
    for name, value in (("--num-buckets", num_buckets), ("--batch-size", batch_size),
                        ("--token-budget", token_budget), ("--max-seq-length", max_seq_length)):
        if value is not None and value < 1:
            raise SeqprofError(f"{name} must be a positive integer, got {value}", fix=f"pass {name} 1 or more")


def _bucket_stats(hist: LengthHistogram, boundaries: list[int], max_len: int,
                  batch_size: int | None) -> list[BucketStats]:
    values, weights = _distinct(hist, max_len)
    bucket = np.searchsorted(np.asarray(boundaries, dtype=np.int64), values, side="left")
    out = []
    for index, upper in enumerate(boundaries):
        member = bucket == index
        rows, tokens = int(weights[member].sum()), int(np.dot(weights[member], values[member]))
        expected = None
        if batch_size is not None and rows:
            sub = dict(zip(values[member].tolist(), weights[member].tolist()))
            expected = expected_bucketed_computed(sub, [upper], batch_size) - tokens
        out.append(BucketStats(upper=upper, rows=rows, real_tokens=tokens,
                               pad_to_bound=upper * rows - tokens, expected_batch_padding=expected))
    return out


def histogram_from_source(path: str, *, tokenizer: str | None = None, workers: int = 1) -> LengthHistogram:
    """The sequence histogram of a saved profile, or of a dataset analysed on the spot."""
    from seqprof.dataset.profile import Profile, is_profile_file

    if is_profile_file(path):
        return Profile.load(path).sequence
    from seqprof.dataset.analyze import (  # tokenizing pipeline: imported only for raw data
        AnalyzeOptions,
        build_profile,
    )

    return build_profile(path, AnalyzeOptions(tokenizer=tokenizer, workers=workers)).sequence
