"""The caching allocator, as the memory walk sees it: blocks with reference counts, live bytes per component.

The walk allocates and frees in the order PyTorch does; the allocator records the peak and what was live at it,
and what autograd keeps for backward (SavedForBackward) is reference-counted blocks grouped per op.
"""

from __future__ import annotations

import math


class Block:
    __slots__ = ("comp", "n", "refs")

    def __init__(self, comp: str, n: int) -> None:
        self.comp, self.n, self.refs = comp, n, 1


class Allocator:
    """Live bytes per component, with the maximum and what was live at it."""

    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.total = 0
        self.peak = -1
        self.peak_live: dict[str, int] = {}
        self.phase = ""
        self.peak_phase = ""
        self.phase_peaks: dict[str, int] = {}

    def new(self, comp: str, nbytes: float) -> Block | None:
        n = int(math.ceil(nbytes / 512.0)) * 512 if nbytes > 0 else 0
        if n == 0:
            return None
        self.live[comp] = self.live.get(comp, 0) + n
        self.total += n
        stage = stage_of(self.phase)
        if self.total > self.phase_peaks.get(stage, -1):
            self.phase_peaks[stage] = self.total
        if self.total > self.peak:
            self.peak, self.peak_live, self.peak_phase = self.total, dict(self.live), self.phase
        return Block(comp, n)

    def ref(self, t: Block | None) -> Block | None:
        if t is not None:
            t.refs += 1
        return t

    def drop(self, *ts: Block | None) -> None:
        for t in ts:
            if t is None:
                continue
            t.refs -= 1
            if t.refs == 0:
                self.live[t.comp] -= t.n
                self.total -= t.n

    def mark(self) -> None:
        """Record the current total as a candidate peak of the current stage (nothing allocated)."""
        stage = stage_of(self.phase)
        self.phase_peaks[stage] = max(self.phase_peaks.get(stage, -1), self.total)

    def spike(self, comp: str, nbytes: float) -> None:
        """A temporary that lives only inside one kernel call."""
        self.drop(self.new(comp, nbytes))


def stage_of(phase: str) -> str:
    """Coarse stage of a phase, as the harness marks them: forward, bwd_head, bwd_layers, bwd_rest, optimizer."""
    if phase.startswith("backward: loss"):
        return "bwd_head"
    if phase.startswith(("backward: layer", "backward: recompute", "backward: final")):
        return "bwd_layers"
    if phase.startswith("backward"):
        return "bwd_rest"
    if phase.startswith("optimizer"):
        return "optimizer"
    return "forward"


class SavedForBackward:
    """What autograd keeps for backward, in named groups (one per op), in forward order."""

    def __init__(self, sim: Allocator, keep: bool) -> None:
        self.sim, self.keep = sim, keep
        self.groups: list[tuple[str, list[Block]]] = []
        # what outlives autograd's own saving (bitsandbytes' 8-bit contexts): kept even when `keep` is False,
        # freed with the whole graph after backward
        self.held: SavedForBackward | None = None

    def save(self, name: str, *ts: Block | None) -> None:
        """Autograd keeps a reference to these (no-op under no_grad or a checkpoint's first pass)."""
        if not self.keep:
            return
        kept = [self.sim.ref(t) for t in ts if t is not None]
        if self.groups and self.groups[-1][0] == name:
            self.groups[-1][1].extend(kept)
        else:
            self.groups.append((name, kept))

    def save_new(self, name: str, comp: str, nbytes: float) -> None:
        """A tensor created only to be kept for backward (an lse, a dropout mask)."""
        t = self.sim.new(comp, nbytes)
        self.save(name, t)
        self.sim.drop(t)

    def release(self, name: str | None = None) -> None:
        """Backward reached the op: its saved tensors are freed (the newest group, checked by name)."""
        while self.groups:
            gname, ts = self.groups[-1]
            if name is not None and gname != name:
                if not any(g == name for g, _ in self.groups):
                    return
            self.groups.pop()
            self.sim.drop(*ts)
            if name is None or gname == name:
                return

    def release_all(self) -> None:
        while self.groups:
            self.sim.drop(*self.groups.pop()[1])
