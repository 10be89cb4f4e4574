"""GRPO's step as TRL 1.16's GRPOTrainer runs it without vLLM: generation, the log-prob passes, the fused-head loss.

Read from trl 1.16.0 (trainer/grpo_trainer.py, grpo_config.py, trainer/utils.py add_fused_lm_head, kernels/
chunked_logprob.py ChunkedLogProbFunction) and transformers 5.17 (generation/utils.py _sample, cache_utils.py
DynamicLayer.update, integrations/sdpa_attention.py):

- The generation batch is per_device_train_batch_size x steps_per_generation completions (GRPOConfig.__post_init__),
  num_generations of each prompt (RepeatSampler), generated at once by `model.generate` under no_grad on left-padded
  prompts (`_generate_single_turn`); DynamicCache concatenates each layer's keys and values every token, so the last
  decode step holds (prompt + completion - 1) tokens of every attention layer, and sdpa with a padding mask repeats
  the cached keys/values to all query heads (`use_gqa_in_sdpa` is False with a mask).
- Old log-probs run only when gradient_accumulation_steps % (steps_per_generation x num_iterations) != 0, reference
  log-probs only when beta != 0 (1.16 defaults: num_iterations 1, beta 0.0: neither); both are no_grad forwards over
  the generation batch in chunks of per_device_train_batch_size (`_get_per_token_logps_and_entropies`).
- No logits are materialised: `add_fused_lm_head` scores only the completion positions (hidden_states[mask]) through
  ChunkedLogProbFunction, tiles of 4,096 tokens x 32,768 vocabulary in the compute dtype, fp32 running statistics,
  log-probs and entropy; its backward accumulates the hidden and lm_head gradients in fp32, then casts them.
- The padding mask reaches every layer's sdpa: torch converts the bool mask to an additive one in the query dtype
  and the memory-efficient kernel keeps it, with the repeated keys and values, for the backward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import Layer
from seqprof.predict.memory.activations import ACT, LOG, StepContext, layer_forward, rmsnorm
from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward

KV = "kv_cache"
TOKEN_TILE = 4096  # trl/kernels/chunked_logprob.py TOKEN_CHUNK_SIZE
VOCAB_TILE = 32768  # trl/trainer/utils.py _CHUNKED_LOGPROB_CHUNK_SIZE


@dataclass(frozen=True)
class Rollout:
    """What one generation round of GRPOTrainer holds on one GPU."""

    rows: int  # completions generated at once: per_device_train_batch_size x steps_per_generation
    prompts: int  # distinct prompts among them (rows / num_generations)
    prompt_len: int  # the longest prompt: every prompt is left-padded to it
    completion_len: int  # max_completion_length: the longest completion, the others right-padded to it
    chunk_rows: int  # rows per log-prob forward (per_device_train_batch_size)
    old_logps: bool
    ref_logps: bool

    @property
    def cached_tokens(self) -> int:
        """Tokens in every layer's cache at the last decode step (the last sampled token is never fed back)."""
        return self.prompt_len + self.completion_len - 1


def rollout(s) -> Rollout:
    steps = s.steps_per_generation or s.gradient_accumulation_steps
    rows = s.micro_batch_size * steps
    return Rollout(rows=rows, prompts=rows // s.num_generations, prompt_len=s.seq_len - s.max_completion_length,
                   completion_len=s.max_completion_length, chunk_rows=s.micro_batch_size,
                   old_logps=s.gradient_accumulation_steps % (steps * s.num_iterations) != 0, ref_logps=s.beta != 0)


def check_grpo_setup(s) -> None:
    """The checks GRPOConfig.__post_init__ makes, and seqprof's reading of seq_len (prompt + completion)."""
    if s.seq_len <= s.max_completion_length:
        raise SeqprofError(f"GRPO: seq_len {s.seq_len} must be the longest prompt plus max_completion_length "
                           f"{s.max_completion_length}", fix="set seq_len to prompt tokens + max_completion_length")
    if s.num_generations < 2:
        raise SeqprofError("GRPO needs num_generations >= 2 (TRL computes advantages within each group)",
                           fix="set num_generations to 2 or more")
    rows = s.micro_batch_size * (s.steps_per_generation or s.gradient_accumulation_steps)
    if (rows * max(1, s.world_size)) % s.num_generations:  # GRPOConfig checks the batch of all processes
        raise SeqprofError(f"GRPO: the generation batch ({rows} completions x {max(1, s.world_size)} GPUs) is not "
                           f"divisible by num_generations {s.num_generations}",
                           fix="make per_device_train_batch_size x steps_per_generation x GPUs a multiple of "
                               "num_generations")


def gpus_for_generation_batch(rows: int, num_generations: int, stated: int | None) -> tuple[int, str | None]:
    """The world size the GRPO walk uses: the stated one, else the fewest GPUs whose generation batch (*rows*
    completions per GPU: per_device_train_batch_size x steps_per_generation; GRPOConfig.__post_init__ checks
    rows x GPUs) num_generations divides, with a note. A recipe rarely states its GPU count (the launcher does)."""
    if stated:
        return stated, None
    gpus = next(w for w in range(1, num_generations + 1) if (rows * w) % num_generations == 0)
    if gpus == 1:
        return 1, None
    return gpus, (f"GRPO: {rows} completions per GPU; TRL needs the generation batch of all GPUs to be a multiple of "
                  f"num_generations {num_generations}, so at least {gpus} GPUs are assumed (the launcher decides)")


def reference_copy(s, full: bool) -> bool:
    """beta != 0 with full fine-tuning loads a second model (GRPOTrainer.__init__); LoRA disables its adapters."""
    return s.beta != 0 and full


def generation(sim: Allocator, cx: StepContext, layers: list[Layer], ro: Rollout) -> None:
    """model.generate under no_grad: the prefill of every prompt row, then the last decode step, its cache full."""
    a, s, c = cx.arch, cx.s, cx.c
    h, V, G, P = a.hidden_size, a.vocab_size, ro.rows, ro.prompt_len
    gcx = replace(cx, n=G * P, seqs=G, s=replace(s, trainer="sft", seq_len=P, micro_batch_size=G), backend="efficient")
    gqa = a.q_dim != a.kv_dim
    sim.phase = "generation: prefill"
    mask = sim.new(ACT, G * P * P)  # create_causal_mask: bool b x 1 x q x kv
    x = sim.new(ACT, c * h * G * P)
    cache: list[Block | None] = []
    for layer in layers:
        if layer.kind != "linear_attention":
            sim.spike(ACT, c * G * P * P + (2 * c * a.q_dim * G * P if gqa else 0))  # additive mask, repeat_kv
        xo, _ = layer_forward(sim, gcx, layer, x, False, keep=False)
        sim.drop(x)
        x = xo
        if layer.kind != "linear_attention":
            cache.append(sim.new(KV, 2 * c * a.kv_dim * G * P))
    y = rmsnorm(sim, SavedForBackward(sim, False), "final_norm", x, gcx, h, 1, False, False, c)
    sim.drop(x, mask, y)
    _sample(sim, c, G, V)
    sim.phase = "generation: last decode step"
    sim.drop(*cache)
    T = ro.cached_tokens
    attn = [layer for layer in layers if layer.kind != "linear_attention"]
    cache = [sim.new(KV, c * a.kv_dim * G * (T - 1)) for _ in range(2 * len(attn))]  # keys, values per layer
    for i in range(0, len(cache), 2):  # DynamicLayer.update: torch.cat keys, then values, one token longer
        for j in (i, i + 1):
            old = cache[j]
            cache[j] = sim.new(KV, c * a.kv_dim * G * T)
            sim.drop(old)
        if gqa:
            sim.spike(ACT, 2 * c * a.q_dim * G * T)  # repeat_kv of the whole cache for the masked sdpa
    _sample(sim, c, G, V)
    sim.drop(*cache)  # generate returns; the DynamicCache dies with its model_kwargs


def _sample(sim: Allocator, c: int, rows: int, V: int) -> None:
    """_sample: the last position's logits (logits_to_keep=1), their fp32 copy, softmax, multinomial (TRL's
    temperature 1.0, top_k 0, top_p 1.0 add no logits processors)."""
    logits = sim.new(LOG, c * rows * V)
    scores = sim.new(LOG, 4 * rows * V)
    sim.drop(logits)
    sim.spike(LOG, 4 * rows * V)
    sim.drop(scores)


def logprob_passes(sim: Allocator, cx: StepContext, ro: Rollout, forward: Callable[[bool], Block | None]) -> list[Block | None]:
    """The old and reference per-token log-probs (no_grad, chunk_rows rows per forward); returns what is kept."""
    kept: list[Block | None] = []
    for name, on, ref in (("old", ro.old_logps, False), ("reference", ro.ref_logps, True)):
        if not on:
            continue
        sim.phase = f"{name} log-probs"
        y = forward(ref)
        head_forward(sim, cx, SavedForBackward(sim, False), y, lambda: None, training=False)
        kept.append(sim.new(ACT, 4 * ro.rows * ro.completion_len))
    return kept


def generation_batch(sim: Allocator, ro: Rollout) -> Block | None:
    """The buffered generation batch (_prepare_inputs): prompt and completion ids and masks, int64."""
    return sim.new(ACT, 2 * 8 * ro.rows * (ro.prompt_len + ro.completion_len) + 4 * ro.rows)


def head_forward(sim: Allocator, cx: StepContext, head: SavedForBackward, y: Block | None,
                 lm_head_grad: Callable[[], None], training: bool = True) -> None:
    """add_fused_lm_head's forward on the final hidden state `y` (consumed): completion positions only."""
    a, s, c = cx.arch, cx.s, cx.c
    h = a.hidden_size
    xb = 4 if cx.autocast else c
    N = cx.seqs * s.max_completion_length
    sel = sim.new(ACT, xb * h * N)  # hidden_states[:, :-1][mask]
    targets = sim.new(ACT, 8 * N)
    sim.drop(y)
    stats = sim.new(LOG, 7 * 4 * N)  # running max, sums, target logit (fp32)
    tile_rows = min(N, TOKEN_TILE)
    buf = sim.new(LOG, c * tile_rows * VOCAB_TILE)
    if xb != c:  # hidden_chunk.to(compute dtype) and each weight slice cast under autocast
        sim.spike(ACT, c * h * tile_rows + c * h * min(a.vocab_size, VOCAB_TILE))
    sim.drop(buf)
    log_z, entropy = sim.new(LOG, 4 * N), sim.new(LOG, 4 * N)
    sim.spike(LOG, 2 * 4 * N)  # log-probs, x_sum_exp / sum_exp
    head.save("lm_head", sel, targets, log_z, entropy)
    sim.drop(stats, sel, targets, log_z, entropy)
    sim.spike(LOG, 2 * 4 * cx.seqs * s.seq_len)  # masked_scatter into (b, s - 1) fp32 log-probs and entropies


def head_backward(sim: Allocator, cx: StepContext, head: SavedForBackward, lm_head_grad: Callable[[], None]) -> Block | None:
    """ChunkedLogProbFunction.backward: fp32 accumulators, tiles recomputed, then the index and slice backward."""
    a, s, c, pc = cx.arch, cx.s, cx.c, cx.pc
    h, V = a.hidden_size, a.vocab_size
    xb = 4 if cx.autocast else c
    N = cx.seqs * s.max_completion_length
    gh32 = sim.new(LOG, 4 * h * N)
    gw32 = None
    if cx.full and pc == 4:
        lm_head_grad()  # grad_weight.to(fp32) is the accumulator itself
    elif cx.full:
        gw32 = sim.new(LOG, 4 * V * h)
    buf = sim.new(LOG, c * min(N, TOKEN_TILE) * VOCAB_TILE)
    gh = sim.new(ACT, xb * h * N) if xb != 4 else sim.ref(gh32)
    if gw32 is not None:
        lm_head_grad()  # grad_weight.to(weight.dtype)
    sim.drop(gh32, gw32, buf)
    head.release_all()
    rows = cx.seqs * (s.seq_len - 1)
    gi = sim.new(ACT, xb * h * rows)  # index backward: zeros (b, s - 1, h), index_put
    sim.drop(gh)
    gy = sim.new(ACT, xb * h * cx.n)  # slice backward [:, :-1] into (b, s, h)
    sim.drop(gi)
    return gy


def kv_cache_bytes(arch, cx: StepContext, ro: Rollout) -> int:
    """Keys and values of every attention layer at the last decode step, for the report."""
    layers = sum(1 for layer in arch.layers() if layer.kind != "linear_attention")
    return 2 * layers * cx.c * arch.kv_dim * ro.rows * ro.cached_tokens
