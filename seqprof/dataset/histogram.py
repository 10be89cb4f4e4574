"""Exact length histograms: integer counts per length, so stats are exact and mergeable."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True)
class LengthStats:
    """Summary of one histogram, as the DESIGN.md JSON contract names it."""

    count: int
    mean: float
    min: int
    p50: float
    p90: float
    p95: float
    p99: float
    max: int
    total_tokens: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class LengthHistogram:
    """counts[L] = number of sequences of exactly L tokens; memory O(max length), not O(rows)."""

    __slots__ = ("_counts",)

    def __init__(self, counts: np.ndarray | None = None) -> None:
        self._counts = np.zeros(0, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)

    @classmethod
    def from_lengths(cls, lengths: Iterable[int] | np.ndarray) -> LengthHistogram:
        arr = np.asarray(list(lengths) if not isinstance(lengths, np.ndarray) else lengths, dtype=np.int64)
        if arr.size and arr.min() < 0:
            raise ValueError("lengths must be non-negative")
        return cls(np.bincount(arr) if arr.size else None)

    @classmethod
    def from_mapping(cls, counts: Mapping[int | str, int]) -> LengthHistogram:
        if not counts:
            return cls()
        items = {int(k): int(v) for k, v in counts.items()}
        arr = np.zeros(max(items) + 1, dtype=np.int64)
        for length, n in items.items():
            arr[length] += n
        return cls(arr)

    def add(self, lengths: np.ndarray | Iterable[int]) -> None:
        """Count a batch of lengths in place."""
        arr = np.asarray(lengths if isinstance(lengths, np.ndarray) else list(lengths), dtype=np.int64)
        if not arr.size:
            return
        binc = np.bincount(arr)
        if binc.size > self._counts.size:
            binc[: self._counts.size] += self._counts
            self._counts = binc
        else:
            self._counts[: binc.size] += binc

    def merge(self, other: LengthHistogram) -> LengthHistogram:
        size = max(self._counts.size, other._counts.size)
        out = np.zeros(size, dtype=np.int64)
        out[: self._counts.size] += self._counts
        out[: other._counts.size] += other._counts
        return LengthHistogram(out)

    @property
    def counts(self) -> np.ndarray:
        """Dense counts indexed by length (read-only view)."""
        view = self._counts.view()
        view.flags.writeable = False
        return view

    def items(self) -> list[tuple[int, int]]:
        """(length, count) for every length that occurs, ascending."""
        nz = np.flatnonzero(self._counts)
        return [(int(i), int(self._counts[i])) for i in nz]

    def to_mapping(self) -> dict[int, int]:
        return dict(self.items())

    @property
    def count(self) -> int:
        return int(self._counts.sum())

    @property
    def total_tokens(self) -> int:
        return int(np.dot(np.arange(self._counts.size, dtype=np.int64), self._counts))

    @property
    def min(self) -> int:
        nz = np.flatnonzero(self._counts)
        return int(nz[0]) if nz.size else 0

    @property
    def max(self) -> int:
        nz = np.flatnonzero(self._counts)
        return int(nz[-1]) if nz.size else 0

    def count_above(self, length: int) -> int:
        """Sequences strictly longer than `length` (the rows a cap would truncate)."""
        return int(self._counts[length + 1:].sum()) if length + 1 < self._counts.size else 0

    def _value_at_rank(self, rank: int) -> int:
        """The rank-th smallest length (0-based), as if the raw lengths were sorted."""
        cum = np.cumsum(self._counts)
        return int(np.searchsorted(cum, rank, side="right"))

    def percentile(self, p: float) -> float:
        """Equal to numpy.percentile(raw_lengths, p) with the default 'linear' method."""
        n = self.count
        if n == 0:
            return 0.0
        q = np.true_divide(p, 100)
        virtual = (n - 1) * q
        lo = int(math.floor(virtual))
        gamma = np.float64(virtual - lo)
        a = np.float64(self._value_at_rank(lo))
        b = np.float64(self._value_at_rank(min(lo + 1, n - 1)))
        diff = b - a
        # numpy's _lerp: switches formula at gamma >= 0.5 for monotonicity; replicate it bit for bit
        return float(b - diff * (1 - gamma)) if gamma >= 0.5 else float(a + diff * gamma)

    def quantile_length(self, coverage: float) -> int:
        """Smallest length L with at least `coverage` of sequences <= L."""
        n = self.count
        if n == 0:
            return 0
        need = math.ceil(coverage * n - 1e-9)
        cum = np.cumsum(self._counts)
        return int(np.searchsorted(cum, max(need, 1), side="left"))

    def stats(self) -> LengthStats:
        n = self.count
        return LengthStats(
            count=n,
            mean=(self.total_tokens / n) if n else 0.0,
            min=self.min,
            p50=self.percentile(50),
            p90=self.percentile(90),
            p95=self.percentile(95),
            p99=self.percentile(99),
            max=self.max,
            total_tokens=self.total_tokens,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LengthHistogram) and self.items() == other.items()

    def __repr__(self) -> str:
        return f"LengthHistogram(count={self.count}, min={self.min}, max={self.max})"
