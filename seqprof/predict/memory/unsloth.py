"""One SFT step as Unsloth (unsloth 2026.10, unsloth_zoo 2026.10) runs a dense Llama/Qwen model with LoRA.

Unsloth replaces transformers' path rather than tuning it, so the step is walked on its own:
- weights: frozen parameters stay in the load dtype (no fp32 upcast of norms, embeddings or lm_head, unlike peft's
  prepare_model_for_kbit_training; zoo training_utils.prepare_model_for_training casts only the trainable ones);
  4-bit linears are NF4 with double quant; LoRA A/B in fp32 (upcast=True).
- use_gradient_checkpointing="unsloth" (zoo gradient_checkpointing.py): each decoder layer's input goes to pinned
  host memory during the forward; the GPU keeps two staging buffers of one layer input each (A, and B once double
  buffering starts) and, from the second step on, the last layer's input. True: torch's reentrant checkpoint, every
  layer's input on the GPU. False: every layer keeps its saved set.
- the decoder layer's own kernels (fast_lora.py LoRA_QKV / LoRA_W / LoRA_MLP, Fast_RMS_Layernorm, fused QK-norm+RoPE
  for Qwen3) keep: the layer input, both norm outputs, q, k, v, the attention output, the MLP's gate and up
  projections (SwiGLU's product is recomputed in backward), fp32 rstd per norm and the attention kernel's fp32
  log-sum-exp; Qwen3 also its pre-norm q and k and their rstd.
- the loss (zoo fused_losses fused_linear_cross_entropy): no logits. The lm_head gradient is computed during the
  forward, chunk by chunk (a [rows, vocab] fp32 buffer: 4,096 rows x 16,384 columns on a card over 24.5 GiB when
  4,096+ tokens are labelled, else rows sized from tokens x hidden / vocab), into a bf16 [tokens, hidden] gradient
  held until backward.
Not modelled: the torch.compile'd decoder block (torch >= 2.11, padded batches) may keep a different saved set;
with "unsloth" checkpointing only one layer's set is live at a time, so that difference is one layer's.
"""

from __future__ import annotations

from dataclasses import dataclass

from seqprof.predict.architecture import Architecture
from seqprof.predict.memory.activations import ACT, StepContext
from seqprof.predict.memory.allocator import Allocator
from seqprof.predict.memory.setup import CUBLAS_WORKSPACE_BYTES, GiB, TrainingSetup

MIB = 2**20
STAGING_MIN = 2 * MIB  # MINIMUM_SIZE: a smaller layer input stays on the GPU, never offloaded
TILED_ROWS, TILED_COLUMNS = 4096, 16384  # fused_linear.py's tiled route (frozen head, vocab > 32,768)
CHUNK_BUDGET = 2 * GiB  # the untiled route's rows: at most min(2 GiB, half the free memory) of fp32 logits


@dataclass(frozen=True)
class UnslothStep:
    """What the walk needs beyond the architecture: the LoRA layout and the bytes the states take."""

    weights: int
    lora_params: int
    optimizer_states: int
    optimizer_workspace: int


def layer_saved_bytes(arch: Architecture, n: int, seqs: int, seq_len: int) -> int:
    """What one of Unsloth's decoder layers keeps for backward (bf16 activations), for n tokens."""
    h, q, k, i = arch.hidden_size, arch.num_heads * arch.head_dim, arch.num_kv_heads * arch.head_dim, \
        arch.intermediate_size
    saved = n * (2 * 4 * h + 2 * 2 * q + 2 * 2 * k + 2 * 2 * i)  # x, 2 norm outputs, o_proj input; q, o; k, v; e, g
    saved += 2 * 4 * n + 4 * seqs * arch.num_heads * seq_len  # rstd of both norms; the attention's log-sum-exp
    if arch.qk_norm:  # fused QK-norm + RoPE keeps the pre-norm q and k and their rstd
        saved += n * (2 * (q + k) + 4 * (arch.num_heads + arch.num_kv_heads))
    return saved


def layer_backward_transient(arch: Architecture, n: int, load_in_4bit: bool) -> int:
    """LoRA_MLP's backward, the widest moment of a layer's: DW [n, intermediate] and the incoming gradient's
    partner (dX written in place into the saved input), plus a dequantised [intermediate, hidden] weight (4-bit)."""
    h, i = arch.hidden_size, arch.intermediate_size
    return 2 * n * i + 2 * n * h + (2 * i * h if load_in_4bit else 0)


def layer_forward_transient(arch: Architecture, n: int) -> int:
    """A layer's forward under no_grad: the MLP's gate and up outputs and their SwiGLU product."""
    return 3 * 2 * n * arch.intermediate_size


def loss_chunk_bytes(arch: Architecture, labelled: int) -> int:
    """The fused cross-entropy's working set for one chunk: fp32 logits of a row block and its [rows, hidden] fp32
    gradient (fused_linear.py: the tiled route on a card over 24.5 GiB, else rows from tokens x hidden / vocab)."""
    h, V = arch.hidden_size, arch.vocab_size
    if labelled >= TILED_ROWS and V > 32768:
        rows = min(TILED_ROWS, labelled)
        return 4 * rows * TILED_COLUMNS + 4 * rows * h
    floor = min(4096, max(512, _pow2_at_most(512 * 151936 // V)))
    rows = min(4096, max(floor, _pow2_at_most(max(1, labelled * h // V))))
    rows = min(rows, CHUNK_BUDGET // (4 * V), labelled)
    return 4 * rows * (-(-V // 8) * 8) + 4 * rows * h


def _pow2_at_most(x: int) -> int:
    return 1 << (max(1, x).bit_length() - 1)


def walk(sim: Allocator, arch: Architecture, cx: StepContext, states: UnslothStep) -> None:
    """The step's allocations in order, into *sim* (whose peak the estimate reads)."""
    s: TrainingSetup = cx.s
    h, n, layers = arch.hidden_size, cx.n, arch.layers()
    x_bytes = 2 * n * h
    offload = s.gradient_checkpointing and s.checkpoint_offload and x_bytes > STAGING_MIN
    sim.phase = "model and optimizer states"
    sim.new("weights", states.weights)
    rope_rows = max(s.seq_len, arch.max_position_embeddings or 0)
    rope_rows = -(-rope_rows // 8192) * 8192 if rope_rows > 32768 else rope_rows
    sim.new("weights", 2 * 2 * rope_rows * arch.head_dim)  # the model-wide cos/sin cache (position_ids given)
    if s.load_in_4bit:  # the dequantisation scratch: the widest weight in bf16 and its absmax in fp32
        widest = h * arch.intermediate_size
        sim.new("weights", 2 * widest + 4 * widest // 64)
    sim.new("optimizer_states", states.optimizer_states)
    sim.new("workspace", CUBLAS_WORKSPACE_BYTES)
    if offload:
        sim.new(ACT, 2 * max(STAGING_MIN, x_bytes))  # staging buffers A and B, kept across steps
    saved = layer_saved_bytes(arch, n, cx.seqs, s.seq_len)
    kept: list = []
    sim.phase = "forward: embedding"
    x = sim.new(ACT, x_bytes)
    for idx in range(len(layers)):
        sim.phase = f"forward: layer {idx}"
        last = idx == len(layers) - 1
        sim.spike(ACT, layer_forward_transient(arch, n))
        if not s.gradient_checkpointing:
            kept.append(sim.new(ACT, saved))
        elif offload and not last:
            kept.append(None)  # on the host
        else:
            kept.append(sim.ref(x))  # the checkpoint's input, on the GPU
        out = sim.new(ACT, x_bytes)
        sim.drop(x)
        x = out
    sim.phase = "forward: final norm"
    norm_saved = sim.new(ACT, 4 * n)  # its input (x, kept) and rstd
    y = sim.new(ACT, x_bytes)
    sim.phase = "forward: lm_head and loss"
    grad_h = sim.new(ACT, x_bytes)  # dL/dy, written chunk by chunk during the forward
    sim.spike("logits", loss_chunk_bytes(arch, n))
    sim.drop(y)
    sim.phase = "backward: final norm"
    sim.drop(norm_saved, x)  # its gradient written into grad_h
    grad = grad_h
    per_layer_lora = states.lora_params // max(1, len(layers))
    for idx in reversed(range(len(layers))):
        if s.gradient_checkpointing:
            sim.phase = f"backward: recompute layer {idx}"
            g = sim.new(ACT, saved)
            sim.spike(ACT, x_bytes)  # the recomputed output, handed to backward
        else:
            g = kept[idx]
        sim.phase = f"backward: layer {idx}"
        sim.new("gradients", 4 * per_layer_lora)
        sim.spike(ACT, layer_backward_transient(arch, n, s.load_in_4bit))
        sim.drop(g)
        if s.gradient_checkpointing:
            sim.drop(kept[idx])
        dx = sim.new(ACT, x_bytes)
        sim.drop(grad)
        grad = dx
    sim.phase = "backward: embedding"
    sim.drop(grad)
    sim.phase = "optimizer step"
    sim.mark()
    sim.spike("optimizer_workspace", states.optimizer_workspace)


def notes(arch: Architecture, s: TrainingSetup) -> list[str]:
    gc = ("Unsloth's offloaded checkpointing ('unsloth'): layer inputs in pinned host memory, two staging buffers "
          "on the GPU" if s.gradient_checkpointing and s.checkpoint_offload else
          "torch's reentrant checkpoint: every layer input on the GPU" if s.gradient_checkpointing else
          "no checkpointing: every layer keeps Unsloth's saved set")
    return [f"Unsloth's path (FastLanguageModel + get_peft_model): frozen weights in {s.precision}, LoRA in fp32, "
            f"its fused LoRA and RMSNorm kernels; {gc}; the fused cross-entropy computes the lm_head gradient in the "
            "forward, chunk by chunk, so no logits exist (torch.compile'd blocks on torch >= 2.11 may keep a little "
            "more per layer)"]
