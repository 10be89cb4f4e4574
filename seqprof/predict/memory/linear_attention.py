"""A Gated DeltaNet layer (Qwen3.5, Qwen3.6, Qwen3-Next) as transformers runs it without fla or causal-conv1d.

Without the flash-linear-attention and causal-conv1d kernels (and offline, where the hub's kernels cannot be
fetched), transformers falls back to its reference code (transformers 5.17, models/qwen3_5/modeling_qwen3_5.py):
`causal_conv1d_fn` is a depthwise F.conv1d + silu, and `torch_chunk_gated_delta_rule` casts q, k, v, beta and
the decay to fp32, l2-normalises q and k, pads the sequence to chunks of 64 and keeps, for the backward, every
per-chunk tensor of fp32: the 64 x 64 decay, UT-system and intra-chunk matrices per head and chunk, the solved
values and decayed keys, and one [k_head_dim, v_head_dim] recurrent state per chunk. That is several times the
activations of an attention layer; the fla kernels recompute most of it instead (not modelled here).

Counted op by op with the allocator, like seqprof.predict.memory.activations, in 5.17's order: q and k repeated
to the value heads (repeat_interleave) are the module's locals, alive until its forward returns. transformers 5.24
repeats them inside the kernel instead, so they die at its return: the same saved tensors, a forward peak lower by
the two repeats. The saved bytes are checked against the real module under torch.autograd.graph.saved_tensors_hooks
(tests/test_memory_linear_attention.py). Qwen3-Next's fused in_proj_qkvz / in_proj_ba are counted as one
projection each and the torch.cat that re-assembles q, k, v (its re-ordering views are not told apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from seqprof.predict.architecture import Linear
from seqprof.predict.memory.activations import ACT, StepContext, linear
from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward

CHUNK = 64  # torch_chunk_gated_delta_rule's chunk_size as Qwen3_5GatedDeltaNet calls it


class _Dims:
    """The layer's sizes: tokens, padded tokens, heads and widths (q/k repeated to the value heads)."""

    def __init__(self, cx: StepContext) -> None:
        nk, nv, dk, dv, kernel = cx.arch.linear_attention_dims
        self.nk, self.nv, self.dk, self.dv, self.kernel = nk, nv, dk, dv, kernel
        self.n, self.seqs = cx.n, max(1, cx.seqs)
        per_seq = math.ceil(self.n / self.seqs)
        self.chunks = math.ceil(per_seq / CHUNK)  # per sequence
        self.np = self.seqs * self.chunks * CHUNK  # tokens after padding to whole chunks
        self.key, self.value = nk * dk, nv * dv
        self.conv = 2 * self.key + self.value
        self.qk = nv * dk  # q or k after repeat_interleave to the value heads
        self.conv_len = self.seqs * (per_seq + kernel - 1)  # F.conv1d(padding=kernel-1) output, before [:seq_len]
        self.state = 4 * self.seqs * nv * dk * dv  # one recurrent state in fp32
        self.step = 4 * self.seqs * nv * CHUNK * dv  # one chunk's [C, dv] tensors of every head


def gdn_forward(sim: Allocator, g: SavedForBackward, cx: StepContext, lins: dict[str, Linear], y: Block | None,
                xb: int) -> Block | None:
    """Qwen3_5GatedDeltaNet.forward on the normed hidden state `y` (not consumed); returns out_proj's output."""
    d, n, c = _Dims(cx), cx.n, cx.c
    if "in_proj_qkvz" in lins:  # Qwen3NextGatedDeltaNet: fused projections, q/k/v re-ordered and concatenated
        qkvz = linear(sim, g, y, cx, lins["in_proj_qkvz"], xb)
        ba = linear(sim, g, y, cx, lins["in_proj_ba"], xb)
        qkv = sim.new(ACT, c * d.conv * n)  # torch.cat((query, key, value), -1)
        z, b, a = sim.ref(qkvz), sim.ref(ba), sim.ref(ba)
        sim.drop(qkvz, ba)
    else:
        qkv = linear(sim, g, y, cx, lins["in_proj_qkv"], xb)
        z = linear(sim, g, y, cx, lins["in_proj_z"], xb)
        b = linear(sim, g, y, cx, lins["in_proj_b"], xb)
        a = linear(sim, g, y, cx, lins["in_proj_a"], xb)
    g.save("conv", qkv)  # F.conv1d keeps its input (and the weight)
    conv = sim.new(ACT, c * d.conv * d.conv_len)
    mixed = sim.new(ACT, c * d.conv * n)  # silu of conv[..., :seq_len], which keeps the whole conv output
    g.save("silu", conv)
    sim.drop(conv)
    beta = sim.new(ACT, c * d.nv * n)  # b.sigmoid(): kept (its output)
    g.save("beta", beta)
    af = sim.new(ACT, 4 * d.nv * n)  # a.float()
    pre = sim.new(ACT, 4 * d.nv * n)  # + dt_bias: softplus keeps its input
    sim.drop(af)
    g.save("decay", pre)
    sp = sim.new(ACT, 4 * d.nv * n)
    decay = sim.new(ACT, 4 * d.nv * n)  # -A_log.exp() * softplus: keeps softplus when A_log trains
    if cx.full:
        g.save("decay", sp)
    sim.drop(pre, sp)
    repeat = d.nv != d.nk
    q = sim.new(ACT, c * d.qk * n) if repeat else sim.ref(mixed)  # repeat_interleave to the value heads
    k = sim.new(ACT, c * d.qk * n) if repeat else sim.ref(mixed)
    core = _chunk_rule(sim, g, cx, d)
    out = _gated_norm(sim, g, cx, d, core)
    sim.drop(core)
    o = linear(sim, g, out, cx, lins["out_proj"], c)
    sim.drop(out, qkv, z, b, a, mixed, beta, decay, q, k)  # the forward's locals, freed when it returns
    return o


def _chunk_rule(sim: Allocator, g: SavedForBackward, cx: StepContext, d: _Dims) -> Block | None:
    """torch_chunk_gated_delta_rule(use_qk_l2norm_in_kernel=True): returns core_attn_out in the compute dtype."""
    n, c, C = d.n, cx.c, CHUNK
    qk, v, nv, np_ = d.qk, d.value, d.nv, d.np
    mat = 4 * nv * np_ * C  # one [chunk, chunk] matrix per head and chunk, fp32
    qf, kf, vf = sim.new(ACT, 4 * qk * n), sim.new(ACT, 4 * qk * n), sim.new(ACT, 4 * v * n)  # .to(fp32)
    bf, df = sim.new(ACT, 4 * nv * n), sim.new(ACT, 4 * nv * n)
    normed = []
    for name, t in (("l2norm_q", qf), ("l2norm_k", kf)):  # x * rsqrt((x * x).sum(-1) + eps)
        sim.spike(ACT, 4 * qk * n)
        inv = sim.new(ACT, 4 * nv * n)
        out = sim.new(ACT, 4 * qk * n)
        g.save(name, t, inv)
        sim.drop(t, inv)
        normed.append(out)
    qn, kn = normed
    qs = sim.new(ACT, 4 * qk * n)  # query * head_dim ** -0.5
    sim.drop(qn)
    qp, kp, vp = sim.new(ACT, 4 * qk * np_), sim.new(ACT, 4 * qk * np_), sim.new(ACT, 4 * v * np_)  # F.pad: copies
    sim.drop(qs, kn, vf)
    bp, dp = sim.new(ACT, 4 * nv * np_), sim.new(ACT, 4 * nv * np_)
    sim.drop(bf, df)
    vb = sim.new(ACT, 4 * v * np_)  # value * beta
    kb = sim.new(ACT, 4 * qk * np_)  # key * beta
    g.save("beta_mul", vp, bp, kp)
    cum = sim.new(ACT, 4 * nv * np_)  # decay.cumsum within the chunk
    pw1 = sim.new(ACT, mat)  # cum_i - cum_j
    pw2 = sim.new(ACT, mat)  # masked_fill(upper, -inf)
    sim.drop(pw1)
    pw = sim.new(ACT, mat)  # .exp(): kept
    sim.drop(pw2)
    g.save("pairwise", pw)
    m1 = sim.new(ACT, mat)  # k_beta @ key^T
    ut = sim.new(ACT, mat)  # * pairwise
    g.save("ut", kb, kp, m1)
    sim.drop(m1)
    m2 = sim.new(ACT, mat)  # query @ key^T
    intra = sim.new(ACT, mat)
    g.save("intra", qp, m2)
    sim.drop(m2)
    e1 = sim.new(ACT, 4 * nv * np_)
    dkb = sim.new(ACT, 4 * qk * np_)  # k_beta * cum.exp()
    g.save("decayed_k_beta", e1)
    sim.drop(e1)
    new_values = sim.new(ACT, 4 * v * np_)  # solve_triangular keeps the matrix and its result
    k_cumdecay = sim.new(ACT, 4 * qk * np_)
    g.save("solve", ut, new_values, k_cumdecay)
    state = sim.new(ACT, d.state)  # zeros: the initial recurrent state
    core = sim.new(ACT, 4 * v * np_)  # zeros_like(new_values), written chunk by chunk
    e2 = sim.new(ACT, 4 * nv * np_)
    qd = sim.new(ACT, 4 * qk * np_)  # query * cum.exp()
    g.save("query_decay", e2)
    sim.drop(e2, qp)
    e3 = sim.new(ACT, 4 * nv * np_)  # (cum[-1] - cum).exp()
    sim.spike(ACT, 4 * nv * np_)
    kd = sim.new(ACT, 4 * qk * np_)
    g.save("key_decay", e3)
    sim.drop(e3, kp)
    g.save_new("chunk_decay", ACT, 4 * nv * d.seqs * d.chunks)
    g.save("scan", qd, kd, intra)  # the scan's matmuls read their chunks
    for _ in range(d.chunks):  # the sequential scan: per chunk, v_new and the state it read are kept
        t = sim.new(ACT, d.step)  # k_cumdecay[i] @ state
        vn = sim.new(ACT, d.step)  # new_values[i] - ...
        sim.drop(t)
        inter = sim.new(ACT, d.step)  # query[i] @ state
        iv = sim.new(ACT, d.step)  # intra[i] @ v_new
        g.save("scan", state, vn)
        total = sim.new(ACT, d.step)
        sim.drop(inter, iv, total)  # copied into core[:, :, i]
        sd = sim.new(ACT, d.state)  # state * chunk_decay[i]
        kv = sim.new(ACT, d.state)  # key[i]^T @ v_new
        nxt = sim.new(ACT, d.state)
        sim.drop(sd, kv, vn, state)
        state = nxt
    out = sim.new(ACT, c * v * n)  # [:, :, :seq_len].transpose(1, 2).to(input dtype)
    sim.drop(state, core, cum, vp, bp, dp, vb, kb, pw, ut, intra, dkb, new_values, k_cumdecay, qd, kd)
    return out


def _gated_norm(sim: Allocator, g: SavedForBackward, cx: StepContext, d: _Dims, x: Block | None) -> Block | None:
    """Qwen3_5RMSNormGated over each value head: weight * norm(x).to(dtype) * silu(z.float()), then .to(dtype)."""
    n, c, v = d.n, cx.c, d.value
    h = sim.ref(x) if c == 4 else sim.new(ACT, 4 * v * n)
    sim.spike(ACT, 4 * v * n)  # pow(2)
    r = sim.new(ACT, 4 * d.nv * n)
    t = sim.new(ACT, 4 * v * n)  # h * rsqrt
    g.save("gated_norm", h, r)
    tc = sim.ref(t) if c == 4 else sim.new(ACT, c * v * n)
    sim.drop(t)
    w = sim.new(ACT, c * v * n)  # weight * ...: keeps its input when the weight trains
    if cx.full:
        g.save("gated_norm", tc)
    sim.drop(tc, h, r)
    zf = sim.new(ACT, 4 * v * n)  # gate.to(fp32)
    zs = sim.new(ACT, 4 * v * n)  # silu: keeps its input
    prod = sim.new(ACT, 4 * v * n)  # keeps both factors
    g.save("gated_norm", zf, w, zs)
    sim.drop(zf, zs, w)
    out = sim.ref(prod) if c == 4 else sim.new(ACT, c * v * n)
    sim.drop(prod)
    return out


def gdn_backward(sim: Allocator, g: SavedForBackward, cx: StepContext, lins: dict[str, Linear],
                 linear_back: Callable[[str, int, int], None], param_grad: Callable[[float], None]) -> Block | None:
    """The layer's backward, from out_proj to the in-projections; returns the normed input's gradient (the caller
    runs the input norm's backward, then frees it)."""
    d, n, c, C = _Dims(cx), cx.n, cx.c, CHUNK
    h, v, qk, nv, np_ = cx.arch.hidden_size, d.value, d.qk, d.nv, d.np
    mat = 4 * nv * np_ * C
    gb = 4 if cx.autocast else cx.pc
    go = sim.new(ACT, c * v * n)
    linear_back("out_proj", v, h)
    # the gated norm: the product's and silu's backward give z's gradient; the norm's, the kernel output's
    g5 = sim.new(ACT, 4 * v * n)
    sim.drop(go)
    gw = sim.new(ACT, c * v * n)  # d(weight * norm), cast from fp32
    sim.spike(ACT, 4 * v * n)
    gzs = sim.new(ACT, 4 * v * n)
    sim.drop(g5)
    gzf = sim.new(ACT, 4 * v * n)
    sim.drop(gzs)
    gz = sim.new(ACT, c * v * n)  # waits for in_proj_z
    sim.drop(gzf)
    gt = sim.new(ACT, 4 * v * n)  # d(norm) in fp32
    sim.drop(gw)
    sim.spike(ACT, 3 * 4 * v * n)  # the RMSNorm's own backward in fp32
    if cx.full:
        param_grad(gb * d.dv)
    g.release("gated_norm")
    gcore = sim.new(ACT, c * v * n)
    sim.drop(gt)
    # the scan: select/slice backward allocate zero-filled full-size gradients, accumulated across the chunks
    g32 = sim.new(ACT, 4 * v * n)
    gpad = sim.new(ACT, 4 * v * np_)  # slice backward: zeros of the padded length
    sim.drop(gcore, g32)
    copy = sim.new(ACT, 4 * v * np_)  # CopySlices: a full copy per chunk, the previous one freed
    sim.drop(gpad)
    bufs = [sim.new(ACT, size) for size in (mat, 4 * qk * np_, 4 * qk * np_, 4 * qk * np_, 4 * v * np_)]
    g_intra, g_qd, g_kd, g_kcd, g_nv = bufs
    sim.spike(ACT, mat)  # one chunk's select_backward before it is added into the buffer
    sim.drop(copy)
    g.release("scan")
    g.release("chunk_decay")
    g_kp = sim.new(ACT, 4 * qk * np_)  # key_decay: d(key)
    sim.spike(ACT, 4 * qk * np_)  # d(exp) = (grad * key).sum(-1)
    sim.drop(g_kd)
    g.release("key_decay")
    g_qp = sim.new(ACT, 4 * qk * np_)
    sim.spike(ACT, 4 * qk * np_)
    sim.drop(g_qd)
    g.release("query_decay")
    g_dkb = sim.new(ACT, 4 * qk * np_)  # solve_triangular backward: d(B), then d(A) = -(dB @ X^T).tril(-1)
    g_ut = sim.new(ACT, mat)
    sim.spike(ACT, mat)
    sim.drop(g_kcd)
    g_vb = sim.new(ACT, 4 * v * np_)
    sim.spike(ACT, 2 * mat)
    sim.drop(g_nv)
    g.release("solve")
    g_kb = sim.new(ACT, 4 * qk * np_)  # decayed_k_beta = k_beta * exp
    sim.spike(ACT, 4 * qk * np_)
    sim.drop(g_dkb)
    g.release("decayed_k_beta")
    g_m2, g_pw = sim.new(ACT, mat), sim.new(ACT, mat)  # intra = (q @ k^T) * pairwise
    sim.drop(g_intra)
    sim.spike(ACT, 4 * qk * np_)  # q @ k^T backward, added into the q and k gradients
    sim.spike(ACT, 4 * qk * np_)
    sim.drop(g_m2)
    g.release("intra")
    g_m1 = sim.new(ACT, mat)  # ut = (k_beta @ k^T) * pairwise
    sim.spike(ACT, mat)
    sim.drop(g_ut)
    sim.spike(ACT, 4 * qk * np_)
    sim.spike(ACT, 4 * qk * np_)
    sim.drop(g_m1)
    g.release("ut")
    gx = sim.new(ACT, mat)  # exp, masked_fill backward
    sim.drop(g_pw)
    g.release("pairwise")
    sim.spike(ACT, mat)
    sim.drop(gx)
    sim.spike(ACT, 4 * qk * np_)  # key * beta
    sim.spike(ACT, 4 * qk * np_)
    sim.drop(g_kb)
    g_vp = sim.new(ACT, 4 * v * np_)  # value * beta
    sim.spike(ACT, 4 * v * np_)
    sim.drop(g_vb)
    g.release("beta_mul")
    grads = []
    for t, width in ((g_qp, qk), (g_kp, qk), (g_vp, v)):  # F.pad backward (a copy)
        grads.append(sim.new(ACT, 4 * width * n))
        sim.drop(t)
    g_q, g_k, g_v = grads
    g_qs = sim.new(ACT, 4 * qk * n)  # the scaling
    sim.drop(g_q)
    casts = []
    for t, name in ((g_qs, "l2norm_q"), (g_k, "l2norm_k")):
        sim.spike(ACT, 3 * 4 * qk * n)  # l2norm backward
        gf = sim.new(ACT, 4 * qk * n)
        sim.drop(t)
        g.release(name)
        casts.append(sim.new(ACT, c * qk * n))  # .to(fp32) backward: back to the compute dtype
        sim.drop(gf)
    g_v16 = sim.new(ACT, c * v * n)
    sim.drop(g_v)
    if nv != d.nk:  # repeat_interleave backward: summed over the repeats
        reps = [sim.new(ACT, c * d.key * n) for _ in casts]
        sim.drop(*casts)
        casts = reps
    g_mixed = sim.new(ACT, c * d.conv * n)  # split backward: one [tokens, conv_dim] gradient
    sim.drop(*casts, g_v16)
    g.release("decay")
    g.release("beta")
    if cx.full:
        param_grad(gb * 2 * nv)  # A_log, dt_bias
    g_silu = sim.new(ACT, c * d.conv * n)
    sim.drop(g_mixed)
    g.release("silu")
    g_conv = sim.new(ACT, c * d.conv * d.conv_len)  # slice backward: zeros of the padded conv output
    sim.drop(g_silu)
    g_qkv = sim.new(ACT, c * d.conv * n)
    if cx.full:
        param_grad(gb * d.conv * d.kernel)
    sim.drop(g_conv)
    g.release("conv")
    gy = sim.new(ACT, (4 if cx.autocast else c) * h * n)
    for name, t in (("in_proj_a", None), ("in_proj_b", None), ("in_proj_z", gz), ("in_proj_qkv", g_qkv),
                    ("in_proj_ba", None), ("in_proj_qkvz", None)):
        if name in lins:
            linear_back(name, lins[name].d_in, lins[name].d_out)
        sim.drop(t)
    return gy


def gdn_saved_bytes(cx: StepContext, *, with_input: bool = True) -> int:
    """Bytes one Gated DeltaNet layer keeps for its backward (with_input=False: not counting its input)."""
    layer = next((lay for lay in cx.arch.layers() if lay.kind == "linear_attention"), None)
    if layer is None or not cx.arch.linear_attention_dims:
        return 0
    probe = Allocator()
    xb = 4 if cx.autocast else cx.c
    y = probe.new(ACT, xb * cx.arch.hidden_size * cx.n)
    g = SavedForBackward(probe, True)
    out = gdn_forward(probe, g, cx, {lin.name: lin for lin in layer.linears}, y, xb)
    probe.drop(out)
    held = y is not None and y.refs > 1
    probe.drop(y)
    return probe.total - (y.n if held and not with_input else 0)
