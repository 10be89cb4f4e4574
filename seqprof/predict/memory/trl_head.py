"""The lm_head and loss as TRL >= 1.15's trainers run them: the fused lm_head, no logits, a no_grad reference pass.

TRL 1.15 added `add_fused_lm_head` to SFTTrainer, DPOTrainer, KTOTrainer and GRPOTrainer at once (no release before
it has the name: trl-1.14.2's trainer/*.py never mention it). SFT scores its labelled positions through it and
computes entropy and token accuracy from the same kernel (sft_trainer.py compute_loss); KTO scores each row's
completion, then, under no_grad, the KL rows (prompt i with completion i+1) and the reference's completion and KL
rows (kto_trainer.py _compute_loss, _compute_kl_logps): b rows, not 2b. The no_grad KL pass before the policy
forward holds no graph, so it never sets the peak; the reference's two passes run one after the other, each as
DPO's one. Read from trl 1.16.0 (trainer/dpo_trainer.py: DataCollatorForPreference.torch_call, DPOTrainer.__init__ and
_compute_loss; trainer/utils.py add_fused_lm_head; kernels/chunked_logprob.py ChunkedLogProbFunction):

- The collator stacks the b prompt+chosen rows, then the b prompt+rejected rows: one batch of 2b, right-padded to
  the longest (a real padding mask whenever lengths differ, so sdpa gets a mask as in GRPO); labels are the input
  ids with the prompt set to -100.
- `add_fused_lm_head` patches the policy (outputs log_probs, entropy, mean_logits, is_top1) and a reference copy;
  `model(..., fused_lm_head=True)` scores only labelled positions (hidden_states[:, :-1][mask]) in tiles of 4,096
  tokens x 32,768 vocabulary: the (2b, s, V) logits never exist. seqprof counts every position after the first
  (a one-token prompt, the worst case); the head is seqprof.predict.memory.grpo's, which GRPO measured.
- The reference log-probs come after the policy forward (its graph held), under no_grad: a copy (`ref_model`, or
  loaded by create_model_from_path for full fine-tuning), the policy with its adapters off (peft, `use_adapter`),
  or nothing during the step (precompute_ref_log_probs: a pass over the dataset before training, and no copy is
  loaded when ref_model is None).
- Every loss_type (sigmoid, ipo, hinge, ..., a list) works on per-sequence sums, so it adds nothing measurable;
  padding_free is switched off with a warning in 1.16, use_logits_to_keep is gone, and Liger's fused linear CE is
  refused (the fused head takes its place), so `TrainingSetup.loss` does not apply.
- ORPO and CPO/SimPO (trl/experimental) still take outputs.logits: they keep seqprof.predict.memory.logits' path,
  as do SFT, DPO and KTO under TRL before 1.15 (model(...).logits, selective_log_softmax).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from seqprof.predict.memory import grpo
from seqprof.predict.memory.activations import StepContext
from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward

FUSED_TRAINERS = ("sft", "dpo", "ipo", "kto")  # IPO is DPOTrainer's loss_type "ipo"
FUSED_FROM = "1.15.0"  # the first trl release whose trainers call add_fused_lm_head


def fused_head(s) -> bool:
    """Whether the step runs TRL's fused lm_head rather than the materialised-logits walk."""
    return s.fused_lm_head and s.trainer in FUSED_TRAINERS


def padded(s) -> bool:
    """The batch carries a padding mask, so sdpa gets one: stated (dynamic padding), or DPO/KTO under TRL, whose
    rows differ in length (chosen and rejected; completions) in any real data."""
    return s.padding_mask or (fused_head(s) and s.trainer != "sft")


def scored(cx: StepContext) -> StepContext:
    """The context grpo's fused head reads: every position after the first of each row is scored (all labelled:
    the worst case; a prompt masked out of the loss is skipped by the kernel)."""
    return replace(cx, s=replace(cx.s, max_completion_length=cx.s.seq_len - 1))


def head_forward(sim: Allocator, cx: StepContext, head: SavedForBackward, y: Block | None,
                 lm_head_grad: Callable[[], None], reference_hidden: Callable[[], Block | None]) -> None:
    """The policy's fused head on `y` (consumed), then (DPO, KTO) the reference forward and its fused head, under
    no_grad."""
    grpo.head_forward(sim, scored(cx), head, y, lm_head_grad)
    if not cx.s.is_preference or cx.s.reference not in ("model", "lora_base"):
        return
    ry = reference_hidden()
    sim.phase = "reference forward: lm_head"
    ref_cx = replace(cx, full=False, targets=frozenset())
    grpo.head_forward(sim, scored(ref_cx), SavedForBackward(sim, False), ry, lambda: None, training=False)


def head_backward(sim: Allocator, cx: StepContext, head: SavedForBackward,
                  lm_head_grad: Callable[[], None]) -> Block | None:
    """ChunkedLogProbFunction.backward over the scored rows; returns the final hidden state's gradient."""
    return grpo.head_backward(sim, scored(cx), head, lm_head_grad)
