"""BucketedShuffleSampler: the bucketed shuffle that `seqprof buckets` simulates, ready for a DataLoader.

Torch-free: it yields lists of row indices, so it works as a PyTorch `batch_sampler`
(``DataLoader(ds, batch_sampler=sampler, collate_fn=collator)``) or with any loop of your own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from seqprof.batching.simulate import bucketed_shuffle_epoch


class BucketedShuffleSampler:
    """Rows shuffled within length buckets and batches shuffled across buckets, fresh every epoch.

    Each epoch draws from ``numpy.random.default_rng([seed, epoch])``, so every process that shares
    the seed sees the same batches. Iterating advances the epoch; ``set_epoch(e)`` jumps to epoch e
    (call it before each epoch under a trainer that does, e.g. accelerate, or to resume).
    Every rank yields the same batches: accelerate shards a `batch_sampler` across processes itself;
    under plain torch.distributed, take each rank's share (``sampler.batches(e)[rank::world_size]``).
    Rows longer than the last boundary join the last bucket and count as that long (the trainer
    truncates them). With a token budget a batch grows while (n + 1) * longest <= token_budget.
    ``drop_last`` drops each bucket's final batch when it is under-full.
    """

    def __init__(self, lengths: Sequence[int] | np.ndarray, boundaries: Sequence[int], *,
                 batch_size: int | None = None, token_budget: int | None = None, seed: int = 0,
                 drop_last: bool = False) -> None:
        if (batch_size is None) == (token_budget is None):
            raise ValueError("give exactly one of batch_size and token_budget")
        if (batch_size if batch_size is not None else token_budget) < 1:
            raise ValueError("batch_size / token_budget must be >= 1")
        if not len(boundaries):
            raise ValueError("boundaries must not be empty")
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.boundaries = sorted(int(b) for b in boundaries)
        self.batch_size = batch_size
        self.token_budget = token_budget
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        self._plan: tuple[int, list[list[int]]] | None = None

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration yield epoch `epoch`'s batches."""
        self.epoch = epoch

    def batches(self, epoch: int) -> list[list[int]]:
        """Epoch `epoch`'s batches, without advancing the sampler."""
        if self._plan is not None and self._plan[0] == epoch:
            return self._plan[1]
        rng = np.random.default_rng([self.seed, epoch])
        order, starts = bucketed_shuffle_epoch(self.lengths, self.boundaries, rng, batch_size=self.batch_size,
                                               token_budget=self.token_budget, drop_last=self.drop_last)
        plan = [part.tolist() for part in np.split(order, starts[1:])] if len(starts) else []
        self._plan = (epoch, plan)
        return plan

    def __iter__(self) -> Iterator[list[int]]:
        plan = self.batches(self.epoch)
        self.epoch += 1
        return iter(plan)

    def __len__(self) -> int:
        """Batches the next iteration yields (constant with a batch size; may vary with a token budget)."""
        return len(self.batches(self.epoch))
