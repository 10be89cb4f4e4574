"""Peak GPU memory of one training step, from the architecture and the config, before any GPU is rented.

The model walks one optimizer step of a Hugging Face causal LM (transformers 5, peft, torch AdamW) the way
the CUDA caching allocator sees it: every tensor the forward allocates, which ones autograd keeps for the
backward, the logits and the loss's fp32 buffers, the gradients as backward produces them, the optimizer's
states and its temporaries. The peak of that walk is what `torch.cuda.max_memory_allocated()` reports;
CUDA context and allocator slack are added on top for the card's budget. benchmarks/memory/ measures it on
an H200 (40 scenarios, median error under 0.1%) and tests/test_memory.py holds every prediction to it.

Measured on one GPU: full fine-tuning (bf16, fp32, fp32 master weights under autocast), LoRA, QLoRA (NF4),
checkpointing, sdpa (cuDNN/flash/math kernels) and eager attention, HF's loss, chunked CE, Liger's fused
linear CE, DPO with a reference copy or the adapters-off base, gradient accumulation, foreach/fused AdamW.
Also measured (issue 14): MoE with fused experts (full, LoRA on the experts, QLoRA with experts left in bf16) and
QLoRA prepared by peft's prepare_model_for_kbit_training (fp32 upcasts); hybrid Gated DeltaNet layers (Qwen3.5) on
transformers' torch path (no fla / causal-conv1d kernels), Gemma 3's sandwich norms, Liger at a 248k vocabulary.
GRPO through TRL's own GRPOTrainer, Cut Cross-Entropy, and Unsloth's own step (seqprof.predict.memory.unsloth).
Modelled from the libraries' code but not measured: ZeRO/FSDP sharding and CPU offload, 8-bit weights and optimizers,
the fla / causal-conv1d kernels, Qwen3-Next's fused projections.
"""

from __future__ import annotations

from dataclasses import replace

from seqprof.predict.architecture import Architecture
from seqprof.predict.memory.activations import (
    ACT,
    Block,
    layer_backward,
    layer_forward,
    masked_sdpa_saved,
    rmsnorm,
    saved_per_layer,
    step_context,
)
from seqprof.predict.memory.allocator import Allocator, SavedForBackward
from seqprof.predict.memory import grpo, trl_head
from seqprof.predict.memory.linear_attention import CHUNK, gdn_saved_bytes
from seqprof.predict.memory.logits import loss_backward, loss_forward
from seqprof.predict.memory.moe import expert_lora
from seqprof.predict.memory.setup import (
    ALLOCATOR_OVERHEAD_FRACTION,
    COMPONENT_LABELS,
    CUBLAS_WORKSPACE_BYTES,
    CUDA_CONTEXT_BYTES,
    OPTIMIZERS,
    GiB,
    MemoryEstimate,
    TrainingSetup,
)
from seqprof.predict.memory.states import optimizer_bytes, weight_bytes


def estimate_memory(arch: Architecture, setup: TrainingSetup) -> MemoryEstimate:
    """Walk one optimizer step of `setup` on `arch`; return the peak and what is live at it."""
    s = setup
    cx = step_context(arch, s)
    c, pc, full, autocast = cx.c, cx.pc, cx.full, cx.autocast
    h, V, n = arch.hidden_size, arch.vocab_size, cx.n
    gc = s.gradient_checkpointing
    notes: list[str] = []
    world = max(1, s.world_size)
    zero = s.zero_stage if s.zero_stage else (3 if s.fsdp else 0)

    if s.unsloth and not full:
        return _unsloth_estimate(arch, cx)
    pb = weight_bytes(arch, cx)
    total_params = arch.param_count()
    trainable = total_params if full else pb["lora_params"]
    trainable_bytes = trainable * pc if full else pb["lora"]
    weights_bytes = pb["base"] + pb["lora"]
    state_bytes, opt_ws, opt_note = optimizer_bytes(s, trainable, trainable_bytes,
                                                    embedding_params=V * h if full else 0)
    notes.append(opt_note)
    master_bytes = 0
    if zero and full and pc == 2 and OPTIMIZERS[s.optimizer.lower()].startswith("adam"):
        master_bytes, state_bytes = 4 * trainable, 8 * trainable
        notes.append("ZeRO/FSDP mixed precision: fp32 master weights and fp32 Adam states")
    if zero >= 1:
        state_bytes, master_bytes, opt_ws = state_bytes // world, master_bytes // world, opt_ws // world
    grad_shard = world if zero >= 2 else 1
    weight_shard = world if zero >= 3 else 1
    # CPU offload: DeepSpeed's CPU Adam keeps the states and fp32 master weights on the host; from ZeRO-2 on each
    # gradient bucket goes to the host as it is reduced; offload_param (ZeRO-3, FSDP) keeps only the gathered layers
    offload_opt = zero >= 1 and s.offload_optimizer
    grads_offloaded = zero >= 2 and (s.offload_optimizer or (s.fsdp and s.offload_params))
    params_offloaded = zero >= 3 and s.offload_params
    if offload_opt or (s.fsdp and s.offload_params):
        state_bytes = master_bytes = opt_ws = 0
    if zero:
        notes.append(f"ZeRO stage {zero} over {world} GPUs (not validated on hardware: single-GPU measurements only)"
                     + ("; optimizer states and fp32 master weights offloaded to the host" if not state_bytes else "")
                     + ("; gradients to the host bucket by bucket" if grads_offloaded else "")
                     + ("; parameters on the host, only the gathered layers on the GPU" if params_offloaded else ""))

    sim = Allocator()
    sim.phase = "model and optimizer states"
    sim.new("weights", 0 if params_offloaded else weights_bytes // weight_shard)
    layers = arch.layers()
    if zero >= 3:  # the layer being computed and the prefetched one
        sim.new("weights", 2 * max((layer.params for layer in layers), default=0) * pc)
    ref_bytes = 0
    if (s.is_preference and s.reference == "model") or (s.trainer == "grpo" and grpo.reference_copy(s, full)):
        ref_bytes = pb["base"] if not full else total_params * (c if autocast else pc)
        sim.new("reference_model", ref_bytes // weight_shard)
    sim.new("optimizer_states", state_bytes + master_bytes)
    sim.new("workspace", CUBLAS_WORKSPACE_BYTES)
    persistent_grads = s.gradient_accumulation_steps > 1
    is_grpo = s.trainer == "grpo"
    # GRPO's left-padded prompts, DPO's right-padded chosen/rejected rows: sdpa gets a mask (flash unpads)
    masked = (is_grpo or trl_head.padded(s)) and s.attn_implementation == "sdpa"
    if persistent_grads and not is_grpo and not grads_offloaded:  # GRPO: generated at the first micro step
        sim.new("gradients", trainable_bytes // grad_shard)
    xb = 4 if autocast else c

    def param_grad(nbytes: float) -> None:
        if persistent_grads or grads_offloaded:  # added into the held buffer, or copied to the host
            sim.spike("gradients", nbytes)
        else:
            sim.new("gradients", nbytes / grad_shard)

    held: list[Block | None] = []

    def lm_head_grad() -> None:
        """The output projection's weight gradient; a tied one waits in autograd's input buffer for the
        embedding's share, until the very end of the backward (measured: an extra V x h held, then summed)."""
        if arch.tie_word_embeddings:
            held.append(sim.new("gradients", pc * V * h / grad_shard))
        else:
            param_grad(pc * V * h)

    ref_cx = replace(cx, full=False, targets=frozenset())  # adapters off / a frozen copy, under no_grad

    def run_model(training: bool, ref: bool) -> tuple[list[SavedForBackward], SavedForBackward, Block | None, list[Block | None]]:
        """Embedding, decoder layers, final norm: (layer graphs, final-norm graph, hidden state, checkpoints)."""
        mcx = ref_cx if ref else cx
        emb = sim.new(ACT, xb * h * n)
        eager_mask = sim.new(ACT, c * cx.seqs * s.seq_len ** 2) if cx.backend == "eager" else None
        graphs: list[SavedForBackward] = []
        ckpts: list[Block | None] = []
        x = sim.ref(emb)
        x_rg = training and (full or gc)  # peft + checkpointing: enable_input_require_grads
        for i, layer in enumerate(layers):
            sim.phase = ("reference " if ref else "") + f"forward: layer {i}"
            if training and gc:
                ckpts.append(sim.ref(x))  # the checkpoint keeps the layer's input
            xo, g = layer_forward(sim, mcx, layer, x, x_rg, keep=training and not gc,
                                  held=int8_held if training else None)
            if masked and layer.kind != "linear_attention":
                g.save_new("masked_sdpa", ACT, masked_sdpa_saved(cx))
            graphs.append(g)
            sim.drop(x)
            x, x_rg = xo, training
        sim.phase = ("reference " if ref else "") + "forward: final norm"
        fg = SavedForBackward(sim, training)
        y = rmsnorm(sim, fg, "final_norm", x, mcx, h, 1, training, training and full, xb)
        sim.drop(x, emb, eager_mask)
        return graphs, fg, y, ckpts

    # bitsandbytes' 8-bit linears keep their inputs on their contexts until the graph dies after backward, unless
    # a reentrant checkpoint ran the layer under no_grad
    int8_held = SavedForBackward(sim, True) if s.load_in_8bit and not (gc and s.checkpoint_reentrant) else None
    # autocast: the weight cache holds bf16 copies of every matmul weight until the autocast block ends
    cache = sim.new(ACT, c * sum(lin.params for layer in layers for lin in layer.linears)) \
        if autocast and gc else None
    if is_grpo:  # generation, the old / reference log-probs, then the buffered batch's first micro batch
        ro = grpo.rollout(s)
        grpo.generation(sim, cx, layers, ro)
        grpo.generation_batch(sim, ro)  # held, with the log-probs: the buffered batch outlives the step
        grpo.logprob_passes(sim, cx, ro, lambda ref: run_model(False, ref)[2])
        sim.phase = "model and optimizer states"
        if persistent_grads:
            sim.new("gradients", trainable_bytes // grad_shard)
    graphs, final_graph, y, ckpts = run_model(True, False)
    sim.phase = "forward: lm_head and loss"
    head = SavedForBackward(sim, True)
    if is_grpo:
        grpo.head_forward(sim, cx, head, y, lm_head_grad)
        gy = None
    else:
        gy = loss_forward(sim, cx, head, y, lm_head_grad, lambda: run_model(False, True)[2])
    sim.drop(cache)

    # ---- backward ----
    sim.phase = "backward: loss and lm_head"
    gy = grpo.head_backward(sim, cx, head, lm_head_grad) if is_grpo else loss_backward(sim, cx, head, gy, lm_head_grad)
    sim.phase = "backward: final norm"
    sim.spike(ACT, 3 * 4 * h * n)
    final_graph.release_all()
    if full:
        param_grad(pc * h)
    for i in reversed(range(len(layers))):
        g = graphs[i]
        if gc:
            sim.phase = f"backward: recompute layer {i}"
            out, g = layer_forward(sim, cx, layers[i], ckpts[i], True, keep=True)
            if masked and layers[i].kind != "linear_attention":
                g.save_new("masked_sdpa", ACT, masked_sdpa_saved(cx))
            sim.drop(out, ckpts[i])
        sim.phase = f"backward: layer {i}"
        layer_backward(sim, cx, layers[i], g, persistent_grads or grads_offloaded)
    sim.phase = "backward: embedding"
    sim.drop(gy)
    if full:
        sim.spike(ACT, 8 * 4 * n)  # index sort buffers
        if arch.tie_word_embeddings:
            emb = sim.new("gradients", pc * V * h)
            if autocast:  # the lm_head's share came through a cast (a fresh fp32 tensor): summed in place
                sim.drop(emb)
                if persistent_grads:
                    sim.drop(*held)
            else:  # the matmul's gradient is not reused: lm_head's share + embedding's, out of place
                total = sim.new("gradients", pc * V * h / grad_shard)
                sim.drop(emb, *held)
                if persistent_grads:
                    sim.drop(total)  # then added in place into the accumulated .grad
        else:
            param_grad(pc * V * h)
    if int8_held is not None:
        int8_held.release_all()  # the graph dies when the training step returns
    sim.phase = "optimizer step"
    sim.mark()
    sim.spike("optimizer_workspace", opt_ws)

    components = _components_at_peak(sim)
    totals = {"params": total_params, "trainable_params": trainable, "weights": weights_bytes,
              "gradients": trainable_bytes // grad_shard, "optimizer_states": state_bytes + master_bytes,
              "reference_model": ref_bytes, "logits": c * V * n, "logits_fp32": 4 * V * n, "tokens": n,
              "activations_per_layer": saved_per_layer(cx)}
    if cx.backend in ("math", "eager"):
        notes.append(f"attention: the {cx.backend} kernel keeps s x s score matrices "
                     f"({_gib(4 * cx.seqs * arch.num_heads * s.seq_len ** 2)} per layer in fp32)")
    linear_layers = sum(1 for layer in layers if layer.kind == "linear_attention")
    if linear_layers and arch.linear_attention_dims:
        notes.append(f"hybrid: {linear_layers} of {len(layers)} layers are Gated DeltaNet linear attention, counted as "
                     "transformers' torch path (no fla / causal-conv1d kernels) runs them: fp32 chunks of "
                     f"{CHUNK} tokens, {_gib(gdn_saved_bytes(cx))} kept per layer; with fla installed they keep less")
    elif linear_layers:
        notes.append(f"hybrid: {linear_layers} of {len(layers)} layers are linear attention without the head sizes "
                     "seqprof reads (linear_num_value_heads, ...): counted as attention layers (not measured)")
    if is_grpo:
        ro = grpo.rollout(s)
        notes.append(f"GRPO (TRL 1.16 without vLLM): {ro.rows} completions generated at once ({ro.rows / s.num_generations:g} prompts x "
                     f"{s.num_generations}), {ro.prompt_len} prompt + {ro.completion_len} completion tokens, KV cache "
                     f"{_gib(grpo.kv_cache_bytes(arch, cx, ro))} at the last decode step; "
                     f"old log-probs {'yes' if ro.old_logps else 'no'}, reference log-probs "
                     f"{'yes' if ro.ref_logps else 'no'}; fused lm_head: no logits materialised (measured with sdpa on an "
                     "H200: benchmarks/memory/measured_h200_issue14_grpo.json)")
    elif s.loss == "hf" and not s.is_preference and not trl_head.fused_head(s):
        notes.append(f"logits: {n:,} tokens x {V:,} vocab = {_gib(c * V * n)} in {'fp32' if c == 4 else s.precision}, "
                     f"{_gib(4 * V * n)} again in fp32 inside the loss, twice more for its gradients")
    if s.is_paired:
        notes.append(f"preference training: chosen and rejected in one batch ({cx.seqs} sequences); "
                     f"reference: {s.reference}")
    elif s.is_preference:
        notes.append(f"KTO: {cx.seqs} completions, each scored against the reference ({s.reference}), and as many "
                     "KL rows (prompt i with completion i+1) scored under no_grad")
    if trl_head.fused_head(s):
        notes.append(f"{s.trainer.upper()} as TRL >= {trl_head.FUSED_FROM}'s trainer runs it: fused lm_head (no "
                     "logits materialised)" + (", the padding mask through sdpa, the reference log-probs "
                     + ("precomputed before training" if s.reference in ("precomputed", "none") else
                        "from a no_grad forward after the policy's") if s.is_preference else ""))
    if masked and not is_grpo and not (trl_head.fused_head(s) and s.is_preference):
        notes.append("rows padded to the longest of each batch: sdpa gets the padding mask and keeps it, with the "
                     "keys and values repeated to every query head, in each layer")
    if arch.is_moe:
        notes.append("MoE: router and fused experts as transformers 5's grouped_mm path runs them (tokens x top-k "
                     "rows; measured on an H200, benchmarks/memory/measured_h200_issue14*.json)")
        if not full and expert_lora(cx)[0]:
            notes.append("LoRA reaches the fused experts (peft maps gate_proj/up_proj/down_proj onto gate_up_proj and "
                         "down_proj): r x experts ranks each, and the merged expert weights are kept for backward")
    if cx.la:
        notes.append("LoRA under the Trainer's bf16 autocast (accelerate): the fp32 adapters' matmuls run in bf16 and "
                     "keep bf16 inputs (measured through TRL's DPOTrainer: benchmarks/memory/measured_h200_issue14_dpo*"
                     ".json)")
    if s.load_in_8bit:
        notes.append("8-bit weights: 1 byte per weight plus fp32 row scales; LLM.int8's outlier columns of each "
                     "input are left out (a trained model has a handful; measured on random-init models, where "
                     "they made the walk up to 13% short: benchmarks/memory/int8_outliers.py)")
    if s.loss == "cut_cross_entropy":
        notes.append("Cut Cross-Entropy: no logits materialised, hidden-size gradients only (measured on an H200: "
                     "benchmarks/memory/measured_h200_issue14_cce.json)")
    return MemoryEstimate(peak_bytes=sum(components.values()), components=components, notes=tuple(notes),
                          peak_phase=sim.peak_phase, totals=totals, stage_peaks=dict(sim.phase_peaks))


def _unsloth_estimate(arch: Architecture, cx) -> MemoryEstimate:
    """Unsloth's own step (seqprof.predict.memory.unsloth), with the weights and optimizer states priced as here."""
    from seqprof.predict.memory import unsloth

    s = cx.s
    pb = weight_bytes(arch, cx)
    state_bytes, opt_ws, opt_note = optimizer_bytes(s, pb["lora_params"], pb["lora"])
    sim = Allocator()
    unsloth.walk(sim, arch, cx, unsloth.UnslothStep(weights=pb["base"] + pb["lora"], lora_params=pb["lora_params"],
                                                     optimizer_states=state_bytes, optimizer_workspace=opt_ws))
    components = _components_at_peak(sim)
    totals = {"params": arch.param_count(), "trainable_params": pb["lora_params"], "weights": pb["base"] + pb["lora"],
              "gradients": pb["lora"], "optimizer_states": state_bytes, "reference_model": 0, "logits": 0,
              "logits_fp32": 0, "tokens": cx.n,
              "activations_per_layer": unsloth.layer_saved_bytes(arch, cx.n, cx.seqs, s.seq_len)}
    return MemoryEstimate(peak_bytes=sum(components.values()), components=components,
                          notes=(opt_note, *unsloth.notes(arch, s)), peak_phase=sim.peak_phase, totals=totals,
                          stage_peaks=dict(sim.phase_peaks))


def _components_at_peak(sim: Allocator) -> dict[str, int]:
    """What was live at the walk's peak, by component, with the CUDA context and the allocator's slack on top."""
    live = {k: v for k, v in sim.peak_live.items() if v > 0}
    components = {k: live.get(k, 0) for k in COMPONENT_LABELS if k not in ("cuda_context", "allocator_overhead")}
    if live.get(grpo.KV):  # GRPO's generation peak
        components[grpo.KV] = live[grpo.KV]
    components["cuda_context"] = CUDA_CONTEXT_BYTES
    components["allocator_overhead"] = int(sum(live.values()) * ALLOCATOR_OVERHEAD_FRACTION)
    return components


def _gib(nbytes: float) -> str:
    return f"{nbytes / GiB:.2f} GiB"
