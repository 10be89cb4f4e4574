"""The lm_head and the loss: logits, their fp32 upcasts and gradients, as each loss implementation allocates them.

transformers' ForCausalLMLoss (logits.float(), log_softmax, nll_loss), a chunked CE, Liger's fused linear CE,
Cut Cross-Entropy, and the materialised-logits preference loss (row-wise log_softmax; the reference forward's
logits); TRL 1.16's DPOTrainer scores through a fused lm_head instead (seqprof.predict.memory.trl_head).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from seqprof.predict.memory.activations import ACT, LOG, StepContext
from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward
from seqprof.predict.memory import trl_head

# TRL's ORPOTrainer and CPOTrainer (cpo_alpha 1.0 by default) add the chosen rows' NLL on the materialised logits
# (concatenated_forward: cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen]))
CHOSEN_NLL = ("orpo", "cpo")


def cast_head(cx: StepContext) -> bool:
    """A prepared k-bit model (fp32 lm_head, peft's prepare_model_for_kbit_training) under the Trainer's autocast:
    the lm_head's matmul runs in bf16 on a bf16 copy of its weight, and its logits come out in bf16 (measured:
    Qwen3-4B QLoRA and Qwen3-1.7B 8-bit LoRA, each about vocab x hidden x 2 bytes over the fp32 walk)."""
    return cx.s.trainer_autocast and cx.mm != cx.c and cx.s.loss in ("hf", "chunked") and not cx.s.is_preference


def rows_upcast(cx: StepContext) -> bool:
    """Under the Trainer's autocast, log_softmax and cross_entropy are on CUDA autocast's float32 list: a
    preference trainer's row-wise log_softmax of bf16 logits (selective_log_softmax) casts each row to fp32 and keeps
    an fp32 result."""
    return cx.s.trainer_autocast and cx.c == 2


def loss_forward(sim: Allocator, cx: StepContext, head: SavedForBackward, y: Block | None,
                 lm_head_grad: Callable[[], None], reference_hidden: Callable[[], Block | None]) -> Block | None:
    """Forward of the lm_head and the loss on the final hidden state `y` (consumed).

    Returns the hidden-state gradient when the loss fills it during the forward (Liger), else None;
    `reference_hidden` runs the preference reference's forward and returns its final hidden state.
    """
    s, c, n = cx.s, cx.c, cx.n
    if trl_head.fused_head(s):  # TRL 1.16's DPOTrainer: no logits at all
        trl_head.head_forward(sim, cx, head, y, lm_head_grad, reference_hidden)
        return None
    h, V = cx.arch.hidden_size, cx.arch.vocab_size
    autocast = cx.autocast
    lm_trainable = cx.full
    if cast_head(cx):
        head.save_new("lm_head", ACT, cx.mm * V * h)  # the bf16 copy of the fp32 weight, for the input gradient
    if autocast:
        head.save_new("lm_head", ACT, c * V * h)  # bf16 copy of the lm_head weight
        yc = sim.new(ACT, c * h * n)
        sim.drop(y)
        y = yc
    gy: Block | None = None
    if s.loss == "liger":
        chunk = min(n, 2 ** math.ceil(math.log2(max(1, math.ceil(n / math.ceil(V / h))))))
        if lm_trainable:
            lm_head_grad()  # grad_weight, filled during the forward
        gy = sim.new(LOG, c * h * n)  # grad_input, filled during the forward
        head.save_new("loss", LOG, 4 * n)
        sim.spike(LOG, c * chunk * V)  # one chunk of logits; its gradient is written in place
        sim.drop(y)
    elif s.loss == "cut_cross_entropy":
        head.save("loss", y)
        head.save_new("loss", LOG, 4 * n)
        sim.drop(y)
    elif s.loss == "chunked":
        k = min(n, s.loss_chunk_size)
        head.save("loss", y)
        sim.spike(LOG, max(c + 4, 8) * k * V)  # one chunk: logits.float() then log-softmax; recomputed later
        sim.drop(y)
    elif s.is_preference:
        # TRL-style: materialised logits, selective_log_softmax one sequence at a time
        logits = sim.new(LOG, c * V * n)
        if lm_trainable:
            head.save("lm_head", y)
        sim.drop(y)
        row = s.seq_len * V
        up = rows_upcast(cx)
        if s.trainer in CHOSEN_NLL:  # nn.CrossEntropyLoss on logits[:chosen, :-1].contiguous(): a copy of the
            half = V * n // 2        # chosen half, its log_softmax (fp32 under autocast) kept for backward
            copy = sim.new(LOG, c * half)
            cast = sim.new(LOG, 4 * half) if up else None
            head.save_new("nll", LOG, (4 if up else c) * half)
            sim.drop(copy, cast)
        if c == 4:
            sim.spike(LOG, 4 * row)  # logsumexp of one row
            head.save("loss", logits)
        else:
            for _ in range(cx.seqs):
                cast = sim.new(LOG, 4 * row) if up else None  # autocast's fp32 copy of the row, for log_softmax
                head.save_new("loss", LOG, (4 if up else c) * row)  # log_softmax of one row, kept for backward
                sim.drop(cast)
        sim.drop(logits)  # the logits die when the forward function returns (logsumexp keeps them in fp32)
        if s.reference in ("model", "lora_base"):
            ry = reference_hidden()
            sim.phase = "reference forward: logits"
            if autocast:
                ryc = sim.new(ACT, c * h * n)
                sim.drop(ry)
                ry = ryc
            rlog = sim.new(LOG, c * V * n)
            sim.drop(ry)
            # the next row's log_softmax (and its fp32 input under autocast) before the last one dies
            sim.spike(LOG, 4 * row if c == 4 else 12 * row if up else 2 * c * row)
            sim.drop(rlog)
    else:  # transformers' ForCausalLMLoss: logits.float(), log_softmax, nll_loss
        lc = cx.mm if cast_head(cx) else c
        logits = sim.new(LOG, lc * V * n)
        if lm_trainable:
            head.save("lm_head", y)
        sim.drop(y)
        lf = sim.new(LOG, 4 * V * n) if lc != 4 else sim.ref(logits)
        lsm = sim.new(LOG, 4 * V * n)
        head.save("loss", lsm)
        sim.drop(lf, logits, lsm)
    return gy


def loss_backward(sim: Allocator, cx: StepContext, head: SavedForBackward, gy: Block | None,
                  lm_head_grad: Callable[[], None]) -> Block | None:
    """Backward of the loss and the lm_head; returns the gradient of the final hidden state."""
    s, c, pc, n = cx.s, cx.c, cx.pc, cx.n
    if trl_head.fused_head(s):
        return trl_head.head_backward(sim, cx, head, lm_head_grad)
    h, V = cx.arch.hidden_size, cx.arch.vocab_size
    autocast, lm_trainable = cx.autocast, cx.full
    xb = 4 if autocast else c
    if s.loss == "liger":
        head.release_all()
    elif s.loss == "cut_cross_entropy":
        sim.spike(LOG, 4 * n * 64)
        gy = sim.new(ACT, c * h * n)
        if lm_trainable:
            lm_head_grad()
        head.release_all()
    elif s.loss == "chunked":
        k = min(n, s.loss_chunk_size)
        gy = sim.new(ACT, c * h * n)
        several = n > k
        if lm_trainable and several:
            lm_head_grad()  # the first chunk's weight gradient waits while the next chunks run
        sim.spike(LOG, (4 + 4 + 4) * k * V)  # recomputed chunk's log-softmax and its two fp32 gradients
        if lm_trainable and several:
            sim.spike("gradients", 2 * pc * V * h)  # a later chunk's weight gradient and the out-of-place sum
        elif lm_trainable:
            lm_head_grad()
        head.release_all()
    elif s.is_preference:
        row = s.seq_len * V
        grads = []
        if c == 4:
            grads.append(sim.new(LOG, 4 * V * n))
            head.release("loss")
        else:
            up = rows_upcast(cx)
            for _ in range(cx.seqs):
                gz = sim.new(LOG, (4 if up else c) * row)  # gather backward
                g = sim.new(LOG, (4 if up else c) * row)  # log_softmax backward
                sim.drop(gz)
                if head.groups and head.groups[-1][1]:
                    sim.drop(head.groups[-1][1].pop())
                if up:  # the autocast cast's backward: back to the logits' dtype
                    g32, g = g, sim.new(LOG, c * row)
                    sim.drop(g32)
                grads.append(g)
        stacked = sim.new(LOG, c * V * n)  # unbind backward stacks the row gradients
        sim.drop(*grads)
        full_g = sim.new(LOG, c * V * n)  # slice backward ([:, :-1]) writes into a full-size zero tensor
        sim.drop(stacked)
        head.release("loss")
        if s.trainer in CHOSEN_NLL:  # the chosen NLL's backward, before the logits' gradient reaches the lm_head
            half, nb = V * n // 2, 4 if rows_upcast(cx) else c
            g_nll = sim.new(LOG, nb * half)  # nll_loss backward
            g_lsm = sim.new(LOG, nb * half)  # log_softmax backward
            sim.drop(g_nll)
            head.release("nll")
            if nb != c:  # the autocast cast's backward
                g32, g_lsm = g_lsm, sim.new(LOG, c * half)
                sim.drop(g32)
            g_shift = sim.new(LOG, c * half)  # [..., :-1, :] slice backward: the chosen half's shape
            sim.drop(g_lsm)
            g_rows = sim.new(LOG, c * V * n)  # [:chosen] slice backward: the logits' shape
            sim.drop(g_shift)
            summed = sim.new(LOG, c * V * n)  # autograd sums the logits' two gradients out of place
            sim.drop(g_rows, full_g)
            full_g = summed
        gy = sim.new(ACT, c * h * n)
        if lm_trainable:
            if autocast:
                sim.spike("gradients", c * V * h)
            lm_head_grad()
        sim.drop(full_g)
        head.release_all()
    else:
        g1 = sim.new(LOG, 4 * V * n)  # nll_loss backward
        g2 = sim.new(LOG, 4 * V * n)  # log_softmax backward
        sim.drop(g1)
        head.release("loss")
        lc = cx.mm if cast_head(cx) else c
        g3 = sim.new(LOG, lc * V * n) if lc != 4 else None  # .float() backward
        sim.drop(g2)
        if lc != c:
            sim.spike(ACT, lc * h * n)  # the bf16 matmul's input gradient, then cast to the fp32 hidden state
        gy = sim.new(ACT, xb * h * n)
        if lm_trainable:
            if autocast:
                sim.spike("gradients", c * V * h)
            lm_head_grad()
        sim.drop(g3)
        head.release_all()
    return gy
