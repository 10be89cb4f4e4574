"""Activations of the decoder layers: what each op allocates in forward, keeps for backward and frees.

RMSNorm, the linears (frozen, trainable, 4-bit, with peft's LoRA branch), attention by kernel, the SwiGLU MLP,
and each layer's backward, as transformers 5 and torch run them (checked on an H200: benchmarks/memory/).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import Architecture, Layer, Linear
from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward
from seqprof.predict.memory.moe import EXPERT_LORA_TYPES, EXPERT_TARGETS, expert_lora, moe_backward, moe_forward
from seqprof.predict.memory.setup import _TARGET_ALIASES, ALL_LINEAR, PRECISIONS, TrainingSetup


@dataclass(frozen=True)
class StepContext:
    arch: Architecture
    s: TrainingSetup
    n: int  # tokens in the micro batch
    seqs: int
    c: int  # activation (compute) dtype bytes
    pc: int  # param dtype bytes (unquantised parameters)
    autocast: bool
    full: bool  # base weights trainable
    targets: frozenset[str]
    lb: int  # LoRA adapter bytes
    backend: str  # flash | efficient | math | eager
    mm: int = 2  # bytes of a quantised matmul's compute dtype (bitsandbytes casts its input to it and back)
    la: int = 0  # bytes of the LoRA branch's activations (0: the adapter dtype lb; autocast: the compute dtype)
    # bytes of the attention kernel's inputs and output when the Trainer's autocast runs sdpa below the activation
    # dtype (a prepared k-bit model: fp32 activations, bf16 attention); 0: the activation dtype c
    ac: int = 0


ACT, LOG = "activations", "logits"
# RMSNorm as (x.float() * rsqrt(...)) * (1 + weight.float()), cast last (Qwen3_5RMSNorm, Qwen3NextRMSNorm in 5.17):
# the fp32 normed tensor, not a bf16 one, is what the weight's gradient keeps.
ZERO_CENTERED_NORM_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text",
                                      "gemma", "gemma2", "gemma3", "gemma3_text"})  # Gemma3RMSNorm: (1 + w) in fp32
# A norm after each sub-block too (Gemma2/3DecoderLayer post_attention_layernorm, post_feedforward_layernorm;
# Glm4DecoderLayer post_self_attn_layernorm, post_mlp_layernorm): four norms a layer
SANDWICH_NORM_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4"})


def lora_targets(setup: TrainingSetup, arch: Architecture) -> frozenset[str]:
    names: set[str] = set()
    for t in setup.lora_targets:
        key = str(t).strip()
        names.update(_TARGET_ALIASES.get(key.lower(), (key.split(".")[-1],)))
    every = any(_TARGET_ALIASES.get(str(t).strip().lower()) is ALL_LINEAR for t in setup.lora_targets)
    if every:
        names.add("gate")  # peft's all-linear reaches every nn.Linear, and a MoE router too
    found = {lin.name for layer in dict.fromkeys(arch.layers()) for lin in lora_targetable(arch, layer)
             if every or lin.name.split(".")[-1] in names}
    if arch.is_moe and arch.model_type in EXPERT_LORA_TYPES:  # peft maps v4 names onto fused expert parameters
        found |= {EXPERT_TARGETS[name] for name in names if name in EXPERT_TARGETS}
    return frozenset(found)


def lora_targetable(arch: Architecture, layer: Layer | None = None) -> tuple[Linear, ...]:
    """The nn.Linear modules of a layer (default: the typical one), which peft's LoRA can wrap: not transformers 5's
    fused experts (3-D parameters) nor a MoE router (a parameter of its own module), both of which its linears list."""
    lins = layer.linears if layer is not None else arch.layer_linears()
    if not arch.is_moe:
        return lins
    return tuple(lin for lin in lins if lin.count == 1 and lin.name != "gate")


def attention_backend(arch: Architecture, setup: TrainingSetup, compute_bytes: int) -> str:
    """The kernel torch's scaled_dot_product_attention picks for HF's call (no padding mask, causal).

    "flash" stands for flash and cuDNN alike (on the H200, torch 2.11 picks cuDNN for bf16): both keep q, k, v,
    the output and a logsumexp. fp32 has no flash kernel; the memory-efficient one has no GQA, and HF passes
    enable_gqa=True when there is no mask, so GQA models in fp32 fall to the math kernel and its s x s matrices.
    """
    impl = setup.attn_implementation
    if impl == "sdpa" and setup.sdpa_kernel:
        return setup.sdpa_kernel
    if impl == "eager":
        return "eager"
    if impl.startswith("flash_attention"):
        return "flash"
    if compute_bytes == 2 and arch.head_dim <= 256:
        return "flash"
    return "math" if arch.num_kv_heads != arch.num_heads else "efficient"


def rmsnorm(sim: Allocator, g: SavedForBackward, name: str, x: Block | None, cx: StepContext, dim: int, rows: int, x_rg: bool,
             w_train: bool, x_bytes: int) -> Block | None:
    """HF RMSNorm: x.to(fp32), pow, mean, rsqrt, mul, .to(input dtype), weight * (...)."""
    n = cx.n
    t1 = sim.ref(x) if x_bytes == 4 else sim.new(ACT, 4 * dim * n)
    sim.spike(ACT, 4 * dim * n)  # pow(2) before the mean
    r = sim.new(ACT, 4 * rows * n)  # rsqrt(variance + eps)
    t2 = sim.new(ACT, 4 * dim * n)  # x * rsqrt
    if cx.arch.model_type in ZERO_CENTERED_NORM_TYPES:  # (x * rsqrt) * (1 + w.float()), then .type_as(x)
        t4 = sim.new(ACT, 4 * dim * n)
        y = sim.ref(t4) if x_bytes == 4 else sim.new(ACT, x_bytes * dim * n)
        if x_rg:
            g.save(name, t1, r)
        if w_train:
            g.save(name, t2)
        sim.drop(t1, r, t2, t4)
        return y
    if x_bytes == 4:
        t3 = t2
    else:
        t3 = sim.new(ACT, x_bytes * dim * n)  # .to(input dtype)
        sim.drop(t2)
    w_bytes = 4 if cx.autocast else cx.pc
    y = sim.new(ACT, max(w_bytes, x_bytes) * dim * n)  # weight * x (fp32 weight promotes under autocast)
    if x_rg:
        g.save(name, t1, r)
    if w_train:
        g.save(name, t3)
    sim.drop(t1, r, t3)
    return y


def linear(sim: Allocator, g: SavedForBackward, x: Block | None, cx: StepContext, lin: Linear, x_bytes: int) -> Block | None:
    """nn.Linear (trainable, frozen or 4-bit) plus peft's LoRA branch when targeted; returns the output."""
    n, c = cx.n, cx.c
    d_in, d_out = lin.d_in, lin.d_out
    xin = x
    if cx.autocast and x_bytes != c:
        xin = sim.new(ACT, c * d_in * n)  # autocast casts the activation for every matmul
    quant = cx.s.load_in_4bit or cx.s.load_in_8bit
    if cx.s.load_in_8bit:  # LLM.int8 (bitsandbytes' MatMul8bitLt): the input cast to fp16 and quantised to int8
        tmp = sim.new(ACT, 3 * d_in * n)  # by rows, an int32 product, the output in the input's own dtype
        acc = sim.new(ACT, 4 * d_out * n)
        out = sim.new(ACT, x_bytes * d_out * n)
        sim.drop(tmp, acc)
        # ctx.tensors = (CAt, subA, A): the input kept on the context itself, not through save_for_backward, so
        # a non-reentrant checkpoint cannot drop it, and it lives until the whole graph is freed after backward
        # (probe_int8.py: Qwen3-1.7B, 5.4 GB more than with use_reentrant=True); a recomputed layer's is freed
        # with that layer's graph
        keeper = g.held if g.held is not None else (g if g.keep else None)
        if keeper is not None:
            keeper.save(lin.name, xin)
    elif quant and cx.mm != c:  # fp32 activations (prepare_model_for_kbit_training): x.to(compute dtype),
        xc = sim.new(ACT, cx.mm * d_in * n)  # the matmul in it, and the output cast back
        sim.spike(ACT, cx.mm * d_in * d_out * lin.count)
        oc = sim.new(ACT, cx.mm * d_out * n)
        sim.drop(xc)
        out = sim.new(ACT, c * d_out * n)
        sim.drop(oc)
    else:
        if quant:
            sim.spike(ACT, c * d_in * d_out * lin.count)  # the dequantised weight of the 4-bit/8-bit matmul
        out = sim.new(ACT, c * d_out * n)
    if cx.full:
        g.save(lin.name, xin)  # kept for the weight's gradient
    if lin.name in cx.targets and not cx.full:
        if quant:
            clone = sim.new(ACT, c * d_out * n)  # peft's defensive result.clone() for 4-bit layers
            sim.drop(out)
            out = clone
        lb = cx.lb
        la = cx.la or lb  # under the Trainer's autocast an fp32 adapter's matmuls run in the compute dtype
        xf = sim.new(ACT, lb * d_in * n) if lb != x_bytes else sim.ref(xin)  # cast to the adapter dtype
        xd = xf
        if cx.s.lora_dropout > 0:
            xd = sim.new(ACT, lb * d_in * n)
            g.save_new(lin.name, ACT, 1 * d_in * n)  # the dropout mask (bool)
        xm = xd if la == lb else sim.new(ACT, la * d_in * n)  # autocast's copy for lora_A's matmul
        a = sim.new(ACT, la * cx.s.lora_r * n)
        g.save(lin.name, xm)  # lora_A keeps its input for its weight gradient
        if xm is not xd:
            sim.drop(xm)
        b = sim.new(ACT, la * d_out * n)
        g.save(lin.name, a)  # lora_B keeps lora_A's output
        bs = sim.new(ACT, la * d_out * n)  # * scaling
        sim.drop(b, a)
        lb = la  # what the branch's output is from here on
        if quant:
            conv = sim.new(ACT, c * d_out * n) if lb != c else sim.ref(bs)  # output.to(expected dtype), then
            sim.drop(bs)  # result + output
            res = sim.new(ACT, c * d_out * n)
            sim.drop(conv, out)
            out = res
        else:
            res = sim.new(ACT, max(lb, c) * d_out * n)  # result + lora output (type promotion)
            sim.drop(bs, out)
            out = res
            if max(lb, c) != c:
                fin = sim.new(ACT, c * d_out * n)  # result.to(result dtype)
                sim.drop(out)
                out = fin
        if xd is not xf:
            sim.drop(xd)
        sim.drop(xf)
    if xin is not x:
        sim.drop(xin)
    return out


def masked_sdpa_saved(cx: StepContext) -> int:
    """Bytes an attention layer keeps beyond the unmasked walk: keys and values repeated to every query head
    (repeat_kv, since use_gqa_in_sdpa is False with a mask) and the additive mask torch made from the bool one
    (b x 1 x s x s in the query dtype, its last dim padded to 16 for the memory-efficient kernel)."""
    a, s, kc = cx.arch, cx.s.seq_len, cx.ac or cx.c
    repeated = 2 * kc * (a.q_dim - a.kv_dim) * cx.n
    return repeated + kc * cx.seqs * s * (math.ceil(s / 16) * 16)


def attention(sim: Allocator, g: SavedForBackward, cx: StepContext, q: Block | None, k: Block | None, v: Block | None) -> Block | None:
    """The attention kernel: what it keeps for backward, and the s x s matrices of eager / math."""
    a, n, c = cx.arch, cx.n, cx.c
    qd = a.q_dim
    s, seqs, heads = cx.s.seq_len, cx.seqs, a.num_heads
    sq = seqs * heads * s * s  # elements of the s x s score matrices of all heads and sequences
    gqa = a.num_kv_heads != a.num_heads
    if cx.backend in ("flash", "efficient"):
        out = sim.new(ACT, (cx.ac or c) * qd * n)
        lse_len = n if cx.backend == "flash" else seqs * math.ceil(s / 32) * 32
        g.save("attn", q, k, v, out)
        g.save_new("attn", ACT, 4 * heads * lse_len)  # logsumexp
        return out
    if cx.backend == "math":
        qs = sim.new(ACT, c * qd * n)  # q * sqrt(scale)
        mask_b = sim.new(ACT, s * s)
        mask = sim.new(ACT, c * s * s)  # boolean causal mask -> additive float mask
        sim.drop(mask_b)
        ke = sim.new(ACT, c * qd * n) if gqa else sim.ref(k)
        ve = sim.new(ACT, c * qd * n) if gqa else sim.ref(v)
        ks = sim.new(ACT, c * qd * n)  # k^T * sqrt(scale)
        sim.drop(ke)
        att = sim.new(ACT, c * sq)
        sim.spike(ACT, c * sq + sq)  # _safe_softmax: softmax out + all-masked-row test
        sm = sim.new(ACT, c * sq)
        sim.drop(att)
        out = sim.new(ACT, c * qd * n)
        g.save("attn", qs, ks, sm, ve)
        sim.drop(qs, ks, sm, ve, mask)
        return out
    # eager (HF eager_attention_forward): repeat_kv, q @ k^T * scale + mask, softmax in fp32, .to(dtype), @ v
    kr = sim.new(ACT, c * qd * n) if gqa else sim.ref(k)
    vr = sim.new(ACT, c * qd * n) if gqa else sim.ref(v)
    w1 = sim.new(ACT, c * sq)
    w2 = sim.new(ACT, c * sq)  # * scaling
    sim.drop(w1)
    w3 = sim.new(ACT, c * sq)  # + causal mask
    sim.drop(w2)
    if c != 4:
        sim.spike(ACT, 4 * sq)  # softmax(dtype=float32) converts its input first
    sm = sim.new(ACT, 4 * sq)
    smc = sim.new(ACT, c * sq) if c != 4 else sim.ref(sm)
    sim.drop(w3)
    out = sim.new(ACT, c * qd * n)
    g.save("attn", q, kr, sm, smc, vr)
    sim.drop(kr, sm, smc, vr)
    return out


def mlp_forward(sim: Allocator, g: SavedForBackward, cx: StepContext, lins: dict[str, Linear], y: Block | None,
                xb: int, prefix: str, f: int) -> Block | None:
    """A gated MLP (act(gate(y)) * up(y), then down) on `y` (not consumed); `prefix` names a shared expert's."""
    n, c = cx.n, cx.c
    gate = replace(lins.get(prefix + "gate_proj", lins[prefix + "up_proj"]), d_out=f, count=1)
    up = replace(lins[prefix + "up_proj"], d_out=f, count=1)
    gt = linear(sim, g, y, cx, gate, xb)
    u = linear(sim, g, y, cx, up, xb)
    sg = sim.new(ACT, c * f * n)  # act_fn(gate)
    g.save(prefix + "act", gt)
    pr = sim.new(ACT, c * f * n)  # act * up
    g.save(prefix + "mul", sg, u)
    sim.drop(gt, sg, u)
    dn = linear(sim, g, pr, cx, replace(lins[prefix + "down_proj"], d_in=f, count=1), c)
    sim.drop(pr)
    return dn


def is_gated_attention(arch: Architecture, lins: dict[str, Linear]) -> bool:
    """Qwen3NextAttention / Qwen3_5Attention: q_proj yields q and an output gate (attn * sigmoid(gate))."""
    return "q_proj" in lins and lins["q_proj"].d_out == 2 * arch.q_dim and arch.model_type in ZERO_CENTERED_NORM_TYPES


def layer_forward(sim: Allocator, cx: StepContext, layer: Layer, x: Block | None, x_rg: bool,
                  keep: bool, held: SavedForBackward | None = None) -> tuple[Block | None, SavedForBackward]:
    """One decoder layer's forward (`layer`: its own linears and mixer kind, from Architecture.layers());
    keep=False (no_grad, or a checkpoint's first pass) keeps nothing but what `held` keeps to the step's end."""
    a, n, c = cx.arch, cx.n, cx.c
    h = a.hidden_size  # dense FFN width from the layer's up_proj (MoE blocks: seqprof.predict.memory.moe)
    lins = {lin.name: lin for lin in layer.linears}
    g = SavedForBackward(sim, keep)
    g.held = held
    xb = 4 if cx.autocast else c  # residual stream dtype (fp32 weights promote it under autocast)
    lora_any = bool(cx.targets) and not cx.full
    if cx.autocast:
        g.save_new("weight_casts", ACT, c * sum(lin.params for lin in layer.linears))
    y1 = rmsnorm(sim, g, "norm1", x, cx, h, 1, x_rg, cx.full, xb)
    rg = x_rg or cx.full or lora_any
    if layer.kind == "linear_attention" and a.linear_attention_dims:
        from seqprof.predict.memory.linear_attention import gdn_forward  # imports this module
        att_out = gdn_forward(sim, g, cx, lins, y1, xb)
        sim.drop(y1)  # the decoder layer's local held it through the mixer
    else:
        att_out = _attention_forward(sim, g, cx, lins, y1, xb, rg)
    sandwich = a.model_type in SANDWICH_NORM_TYPES
    if sandwich:
        post = rmsnorm(sim, g, "post_attn_norm", att_out, cx, h, 1, rg, cx.full, c)
        sim.drop(att_out)
        att_out = post
    x1 = sim.new(ACT, xb * h * n)  # residual add
    sim.drop(att_out)
    y2 = rmsnorm(sim, g, "norm2", x1, cx, h, 1, True, cx.full, xb)
    if layer.is_moe:
        dn = moe_forward(sim, g, n, c, h, layer.num_experts, layer.num_experts_per_tok, a.moe_intermediate_size
                         or a.intermediate_size, cx.full, y2, merged_bytes=expert_lora(cx)[1])
        if a.shared_expert_intermediate_size:
            shared = mlp_forward(sim, g, cx, lins, y2, xb, "shared_expert.", a.shared_expert_intermediate_size)
            if "shared_expert_gate" in lins:  # sigmoid(shared_expert_gate(x)) * shared: keeps both factors
                gated = sim.new(ACT, c * h * n)
                g.save("shared_gate", shared)
                g.save_new("shared_gate", ACT, 2 * c * n)
                sim.drop(shared)
                shared = gated
            total = sim.new(ACT, c * h * n)  # routed + shared
            sim.drop(dn, shared)
            dn = total
        sim.drop(y2)
    else:
        dn = mlp_forward(sim, g, cx, lins, y2, xb, "", lins["up_proj"].d_out)
        sim.drop(y2)
    if sandwich:
        post = rmsnorm(sim, g, "post_ff_norm", dn, cx, h, 1, True, cx.full, c)
        sim.drop(dn)
        dn = post
    x2 = sim.new(ACT, xb * h * n)  # residual add
    sim.drop(dn, x1)
    return x2, g


def _attention_forward(sim: Allocator, g: SavedForBackward, cx: StepContext, lins: dict[str, Linear],
                       y1: Block | None, xb: int, rg: bool) -> Block | None:
    """q/k/v, their norms and rotary, the kernel, the output gate (Qwen3.5) and o_proj; consumes y1."""
    a, n, c = cx.arch, cx.n, cx.c
    gated = is_gated_attention(a, lins)
    gate = None
    if gated:  # q_proj(x).view(..., 2 * head_dim).chunk(2): the gate half is copied by .reshape, q_norm reads q
        qg = linear(sim, g, y1, cx, lins["q_proj"], xb)
        gate = sim.new(ACT, c * a.q_dim * n)
        q = sim.ref(qg)
        k = linear(sim, g, y1, cx, lins["k_proj"], xb)
        v = linear(sim, g, y1, cx, lins["v_proj"], xb)
        sim.drop(qg)
    else:
        q = linear(sim, g, y1, cx, lins["q_proj"], xb)
        k = linear(sim, g, y1, cx, lins["k_proj"], xb)
        v = linear(sim, g, y1, cx, lins["v_proj"], xb)
        sim.drop(y1)
        y1 = None
    qb = c
    if a.qk_norm:
        qn = rmsnorm(sim, g, "q_norm", q, cx, a.q_dim, a.num_heads, rg, cx.full, c)
        kn = rmsnorm(sim, g, "k_norm", k, cx, a.kv_dim, a.num_kv_heads, rg, cx.full, c)
        sim.drop(q, k)
        q, k = qn, kn
        qb = 4 if cx.autocast else c
    rb = 4 if cx.autocast else qb  # q * cos + rotate_half(q) * sin: keeps only cos/sin for backward
    part = a.partial_rotary_factor if gated else 1.0  # Qwen3.5: rotate the first quarter, cat the rest back
    rotated = []
    for t, d in ((q, a.q_dim), (k, a.kv_dim)):
        dr = d * part
        p1 = sim.new(ACT, rb * dr * n)
        neg = sim.new(ACT, qb * dr * n / 2)
        rot = sim.new(ACT, qb * dr * n)
        sim.drop(neg)
        p2 = sim.new(ACT, rb * dr * n)
        sim.drop(rot)
        e = sim.new(ACT, rb * dr * n)
        sim.drop(p1, p2)
        if gated:  # torch.cat([q_embed, q_pass])
            full = sim.new(ACT, rb * d * n)
            sim.drop(e)
            e = full
        sim.drop(t)
        rotated.append(e)
    q, k = rotated
    if cx.autocast:  # sdpa runs in bf16: the fp32 rotary outputs are cast
        qc, kc = sim.new(ACT, c * a.q_dim * n), sim.new(ACT, c * a.kv_dim * n)
        sim.drop(q, k)
        q, k = qc, kc
    elif cx.ac:  # a prepared k-bit model under the Trainer's autocast: q, k and v cast to bf16 for sdpa
        qc, kc, vc = (sim.new(ACT, cx.ac * d * n) for d in (a.q_dim, a.kv_dim, a.kv_dim))
        sim.drop(q, k, v)
        q, k, v = qc, kc, vc
    o = attention(sim, g, cx, q, k, v)
    sim.drop(q, k, v)
    if gated:  # attn_output * torch.sigmoid(gate): sigmoid keeps its output, the product both factors
        sg = sim.new(ACT, c * a.q_dim * n)
        og = sim.new(ACT, c * a.q_dim * n)
        g.save("out_gate", o, sg)
        sim.drop(o, sg)
        o = og
    att_out = linear(sim, g, o, cx, lins["o_proj"], cx.ac or c)
    sim.drop(o, gate, y1)
    return att_out


def layer_backward(sim: Allocator, cx: StepContext, layer: Layer, g: SavedForBackward, persistent_grads: bool) -> None:
    """One decoder layer's backward (the residual gradient is held by the caller)."""
    a, n, c = cx.arch, cx.n, cx.c
    h = a.hidden_size  # dense FFN width from the layer's up_proj (MoE blocks: seqprof.predict.memory.moe)
    xb = 4 if cx.autocast else c
    gb = 4 if cx.autocast else cx.pc
    lins = {lin.name: lin for lin in layer.linears}

    def param_grad(nbytes: float) -> None:
        if persistent_grads:
            sim.spike("gradients", nbytes)  # added in place into the accumulated .grad
        else:
            sim.new("gradients", nbytes)  # lives until zero_grad(set_to_none=True) after the step

    def linear_back(name: str, d_in: int, d_out: int) -> None:
        if cx.full:  # a dense or shared-expert linear (fused experts: seqprof.predict.memory.moe)
            if cx.autocast:
                sim.spike("gradients", c * d_in * d_out)  # bf16 grad of the cast weight
            param_grad(gb * (d_in * d_out + (d_out if lins.get(name) and lins[name].bias else 0)))
        elif name in cx.targets:
            sim.spike(ACT, (cx.la or cx.lb) * (d_in + d_out) * n)  # through lora_B, lora_A and the cast back
            param_grad(cx.lb * cx.s.lora_r * (d_in + d_out))
        if cx.s.load_in_4bit or cx.s.load_in_8bit:
            sim.spike(ACT, cx.mm * d_in * d_out)  # dequantised weight for the input gradient
            if cx.mm != c:
                sim.spike(ACT, cx.mm * (d_in + d_out) * n)  # the gradient cast to the compute dtype and back
        g.release(name)

    def norm_back(name: str, dim: int) -> None:
        sim.spike(ACT, 3 * 4 * dim * n)  # RMSNorm backward runs in fp32
        if cx.full:
            param_grad(gb * dim)
        g.release(name)

    def mlp_back(prefix: str, width: int) -> Block | None:
        """The gated MLP's backward; returns its input gradient (summed into the residual's by the caller)."""
        gp = sim.new(ACT, c * width * n)
        linear_back(prefix + "down_proj", width, h)
        gs, gu = sim.new(ACT, c * width * n), sim.new(ACT, c * width * n)
        sim.drop(gp)
        g.release(prefix + "mul")
        gg = sim.new(ACT, c * width * n)
        sim.drop(gs)
        g.release(prefix + "act")
        gy_u = sim.new(ACT, xb * h * n)
        linear_back(prefix + "up_proj", h, width)
        sim.drop(gu)
        gy_g = sim.new(ACT, xb * h * n)
        linear_back(prefix + "gate_proj", h, width)
        sim.drop(gg, gy_u)
        return gy_g

    sandwich = a.model_type in SANDWICH_NORM_TYPES
    if sandwich:
        norm_back("post_ff_norm", h)
    if layer.is_moe:
        gy_g = None
        if a.shared_expert_intermediate_size:
            gsh = None
            if "shared_expert_gate" in lins:
                gsh = sim.new(ACT, c * h * n)  # d(shared) = grad * sigmoid(gate)
                sim.spike(ACT, c * h * n)  # d(gate) = (grad * shared).sum(-1)
                g.release("shared_gate")
            gy_g = mlp_back("shared_expert.", a.shared_expert_intermediate_size)
            sim.drop(gsh)
        lora_params, merged = expert_lora(cx)
        moe_backward(sim, g, n, c, h, layer.num_experts, layer.num_experts_per_tok,
                     a.moe_intermediate_size or a.intermediate_size, cx.full, param_grad, gb,
                     merged_bytes=merged, lora_grad_bytes=cx.lb * lora_params)
    else:
        gy_g = mlp_back("", lins["up_proj"].d_out)
    norm_back("norm2", h)
    gx1 = sim.new(ACT, xb * h * n)
    sim.drop(gy_g, gx1)  # added into the residual gradient
    if layer.kind == "linear_attention" and a.linear_attention_dims:
        from seqprof.predict.memory.linear_attention import gdn_backward  # imports this module
        gy = gdn_backward(sim, g, cx, lins, linear_back, param_grad)
        norm_back("norm1", h)
        sim.drop(gy)
        g.release_all()  # autocast weight casts
        return
    if sandwich:
        norm_back("post_attn_norm", h)
    gated = is_gated_attention(a, lins)
    go = sim.new(ACT, c * a.q_dim * n)
    linear_back("o_proj", a.q_dim, h)
    ggate = None
    if gated:  # the output gate: d(attn) = grad * sigmoid(gate), d(sigmoid) = grad * attn, then sigmoid backward
        ga, gs = sim.new(ACT, c * a.q_dim * n), sim.new(ACT, c * a.q_dim * n)
        sim.drop(go)
        g.release("out_gate")
        ggate = sim.new(ACT, c * a.q_dim * n)
        sim.drop(gs)
        go = ga
    ws = 4 * a.q_dim * n + 4 * a.num_heads * n  # dq accumulator + softmax_d
    if a.num_kv_heads != a.num_heads:
        ws += 2 * c * a.q_dim * n  # dk, dv for all heads before the group sum
    sq = cx.seqs * a.num_heads * cx.s.seq_len ** 2
    if cx.backend == "eager":
        ws = (c + 4 + 4) * sq
    elif cx.backend == "math":
        ws = 3 * c * sq  # grad of the probabilities, of the safe-softmax's where(), of the scores
    gq, gk, gv = (sim.new(ACT, c * a.q_dim * n), sim.new(ACT, c * a.kv_dim * n),
                  sim.new(ACT, c * a.kv_dim * n))
    sim.spike(ACT, ws)
    sim.drop(go)
    g.release("attn")
    sim.spike(ACT, 3 * c * a.q_dim * n)  # rotary backward
    if a.qk_norm:
        norm_back("k_norm", a.kv_dim)
        norm_back("q_norm", a.q_dim)
    if gated:  # chunk backward: d(q) and d(gate) concatenated into q_proj's output gradient
        gqg = sim.new(ACT, c * 2 * a.q_dim * n)
        sim.drop(gq, ggate)
        gq = gqg
    gy = sim.new(ACT, xb * h * n)
    for name, d_out, t in (("v_proj", a.kv_dim, gv), ("k_proj", a.kv_dim, gk), ("q_proj", lins["q_proj"].d_out, gq)):
        linear_back(name, h, d_out)
        sim.drop(t)
    norm_back("norm1", h)
    sim.drop(gy)
    g.release_all()  # autocast weight casts


def step_context(arch: Architecture, s: TrainingSetup) -> StepContext:
    c = PRECISIONS[s.precision]
    quant = s.load_in_4bit or s.load_in_8bit
    adapter = s.adapter or ("lora" if quant else None)
    if adapter and adapter.lower() not in ("lora", "qlora", "dora"):
        raise SeqprofError(f"unknown adapter {adapter!r}",
                           fix="use lora or qlora, or leave it empty for full fine-tuning")
    full = adapter is None  # a 4-bit/8-bit model always trains adapters (QLoRA)
    targets = lora_targets(s, arch) if not full else frozenset()
    if not full and not targets:
        raise SeqprofError(f"LoRA targets {list(s.lora_targets)} match no linear layer of {arch.model_type}",
                           fix="name the modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj "
                               "or all-linear")
    autocast = full and s.master_weights_fp32 and c == 2  # (LoRA over fp32 weights: weights in fp32, the
    pc = 4 if (s.master_weights_fp32 or c == 4) else c     # activations counted as plain bf16; not measured)
    mm = c
    if quant and s.kbit_upcast:  # peft's prepare_model_for_kbit_training: every unquantised parameter in fp32,
        c = pc = 4               # so the embedding output, norms, residual stream, attention and logits are fp32
    ac = mm if (quant and s.kbit_upcast and s.trainer_autocast) else 0  # sdpa is on autocast's bf16 list
    return StepContext(arch=arch, s=s, n=s.tokens, seqs=s.sequences, c=c, pc=pc, autocast=autocast, full=full,
                targets=targets, lb=4 if (s.lora_fp32 or c == 4) else c, backend=attention_backend(arch, s, ac or c),
                la=c if (s.trainer_autocast and c == 2 and not full) else 0,
                mm=mm, ac=ac)


def saved_per_layer(cx: StepContext) -> int:
    """Bytes one decoder layer keeps for its backward, for the report."""
    probe = Allocator()
    x = probe.new(ACT, (4 if cx.autocast else cx.c) * cx.arch.hidden_size * cx.n)
    out, g = layer_forward(probe, cx, cx.arch.typical_layer(), x, True, keep=True)
    probe.drop(out, x)
    return probe.total
