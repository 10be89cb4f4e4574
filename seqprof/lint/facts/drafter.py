"""Drafter facts: the logits a speculative-decoding drafter computes over its token budget, against the GPU."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seqprof.config.plan import Plan, Setting
from seqprof.lint.facts.common import GIB, positive_int
from seqprof.lint.facts.gpu import GpuFacts

DRAFTER_LOGITS_LIMIT = 0.25  # a logits tensor over a quarter of the GPU: its loss needs three quarters more


@dataclass(frozen=True)
class DrafterFacts:
    """A drafter run's full-vocabulary logits over its token budget: b·s·V·bytes (DESIGN.md, third story)."""

    tokens: int  # tokens per step on one GPU: token_budget, else micro batch x max length
    micro_batch_size: int
    max_length: int | None
    vocab_size: int  # the target's vocabulary (its lm_head sizes the logits)
    precision: str
    dtype_bytes: int
    at: Setting | None  # the key that sets the budget
    gpu_bytes: int | None
    positions: int | None  # DFlash family: micro batch x num_anchors x block_size positions need logits
    source: str
    from_budget: bool = False  # the plan states a token budget (else micro batch x max length)

    @property
    def logits_bytes(self) -> int:
        return self.tokens * self.vocab_size * self.dtype_bytes

    @property
    def logits_gib(self) -> float:
        return self.logits_bytes / GIB

    @property
    def loss_gib(self) -> float:
        """The tensor, its log-softmax and its gradient, as large each: what a cross-entropy over it holds."""
        return 3 * self.logits_bytes / GIB

    @property
    def share(self) -> float | None:
        """The logits tensor's share of the GPU (None without a GPU)."""
        return self.logits_bytes / self.gpu_bytes if self.gpu_bytes else None

    @property
    def gpu_gib(self) -> float | None:
        return self.gpu_bytes / GIB if self.gpu_bytes else None

    @property
    def limit_share(self) -> float:
        """The share of the GPU one logits tensor may take (DRAFTER_LOGITS_LIMIT)."""
        return DRAFTER_LOGITS_LIMIT

    @property
    def budget_limit(self) -> int | None:
        """The largest token budget whose logits stay within DRAFTER_LOGITS_LIMIT of the GPU."""
        if not self.gpu_bytes:
            return None
        return int(DRAFTER_LOGITS_LIMIT * self.gpu_bytes) // (self.vocab_size * self.dtype_bytes)

    @property
    def positions_gib(self) -> float | None:
        """The logits at only the positions the loss reads (DFlash anchors x block), in GiB."""
        return self.positions * self.vocab_size * self.dtype_bytes / GIB if self.positions else None


def drafter_facts(plan: Plan, arch: Any, gpu: GpuFacts | None) -> DrafterFacts | None:
    """b·s·V·bytes for a drafter plan: its token budget (or micro batch x max length) x the target's vocabulary."""
    from seqprof.predict.memory import PRECISIONS

    precision = str(plan.get("precision") or "bf16").lower()
    if precision not in PRECISIONS:
        precision = "bf16"
    micro = positive_int(plan.get("micro_batch_size")) or 1
    length = positive_int(plan.get("max_seq_length"))
    budget = positive_int(plan.get("token_budget"))
    if budget is not None:
        tokens, at = budget, plan.setting("token_budget")
    elif length is not None:
        tokens, at = micro * length, plan.setting("max_seq_length")
    else:
        return None
    anchors, block = positive_int(plan.get("num_anchors")), positive_int(plan.get("block_size"))
    positions = micro * anchors * block if anchors and block and budget is None else None
    return DrafterFacts(tokens=tokens, micro_batch_size=micro, max_length=length, vocab_size=arch.vocab_size,
                        precision=precision, dtype_bytes=PRECISIONS[precision], at=at,
                        gpu_bytes=gpu.memory_bytes if gpu else None,
                        positions=positions if positions and positions < tokens else None, source=arch.source,
                        from_budget=budget is not None)
