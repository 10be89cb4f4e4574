"""Benchmark: optimal_boundaries on 65,536 distinct lengths with K = 16 (target <= 1 s), against
baselines run in this same process: the textbook O(K n^2) DP (vectorised over the split point,
on a smaller n, where it is checked to give the same cost) and fairseq's equal-count heuristic.

    .venv/bin/python benchmarks/bench_buckets.py
"""

from __future__ import annotations

import os
import time

import numpy as np

from seqprof import LengthHistogram, optimal_boundaries
from seqprof.batching.buckets import equal_count_boundaries, padding_cost


def naive_dp_cost(values: np.ndarray, counts: np.ndarray, k: int) -> int:
    """O(K n^2): for every prefix end j, a numpy minimum over every split point i < j."""
    n = values.size
    cum_c = np.concatenate(([0], np.cumsum(counts)))
    cum_t = np.concatenate(([0], np.cumsum(counts * values)))
    best = np.full(n + 1, np.iinfo(np.int64).max // 4, dtype=np.int64)
    best[0] = 0
    for _ in range(k):
        nxt = best.copy()
        for j in range(1, n + 1):
            i = np.arange(j)
            cost = best[i] + values[j - 1] * (cum_c[j] - cum_c[i]) - (cum_t[j] - cum_t[i])
            nxt[j] = min(nxt[j], cost.min())
        best = nxt
    return int(best[n])


def timed(fn, *args, repeat: int = 3):
    """Best wall time of `repeat` runs, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t)
    return best, out


def cpu_time(fn, *args, repeat: int = 3) -> float:
    """Best CPU time of `repeat` runs: what the solver costs when the machine is shared."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    n, k = 65_536, 16
    counts = rng.integers(1, 5_000, size=n)  # every length 1..65,536 occurs: n distinct lengths
    hist = LengthHistogram(np.concatenate(([0], counts)))
    t_opt, bounds = timed(optimal_boundaries, hist, k)
    t_eq, eq_bounds = timed(equal_count_boundaries, hist, k)
    cpu = cpu_time(optimal_boundaries, hist, k)
    print(f"optimal_boundaries   n={n:,} K={k}: {t_opt:.3f} s wall, {cpu:.3f} s CPU "
          f"(target <= 1 s: {'ok' if t_opt <= 1 else 'MISSED'}; load average {os.getloadavg()[0]:.1f})")
    print(f"equal_count (fairseq) n={n:,} K={k}: {t_eq:.3f} s  -> optimal / equal-count time = {t_opt / t_eq:.1f}x")
    opt_cost, eq_cost = padding_cost(hist, bounds), padding_cost(hist, eq_bounds)
    print(f"  padded tokens: optimal {opt_cost:,} vs equal-count {eq_cost:,} ({eq_cost / opt_cost:.3f}x more)")

    small = 3_000
    values, sub = np.arange(1, small + 1), rng.integers(1, 5_000, size=small)
    small_hist = LengthHistogram(np.concatenate(([0], sub)))
    t_naive, naive = timed(naive_dp_cost, values, sub, k, repeat=1)
    t_fast, fast = timed(optimal_boundaries, small_hist, k)
    assert padding_cost(small_hist, fast) == naive, "solver and naive DP disagree"
    print(f"naive O(K n^2) DP    n={small:,} K={k}: {t_naive:.3f} s vs optimal_boundaries {t_fast:.4f} s "
          f"-> {t_naive / t_fast:.0f}x faster, same cost {naive:,}")
    per_cell = t_naive / (k * small * small / 2)
    print(f"  the naive DP at n={n:,} would take ~{per_cell * k * n * n / 2:,.0f} s "
          f"(~{per_cell * k * n * n / 2 / t_opt:,.0f}x the solver)")


if __name__ == "__main__":
    main()
