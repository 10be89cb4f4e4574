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
Modelled from the libraries' code but not measured: ZeRO/FSDP sharding, 8-bit weights and optimizers,
Cut Cross-Entropy, MoE routing (the estimate says so in its notes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from seqprof.predict.architecture import Architecture, Linear
from seqprof.errors import SeqprofError

GiB = 2**30
# Measured on the H200 (benchmarks/memory/measured_h200.json, `context_bytes`): what the driver holds for the
# process beyond PyTorch's allocator (CUDA context, cuBLAS/cuDNN handles, kernels loaded lazily).
CUDA_CONTEXT_BYTES = 804_061_184
# cuBLAS/cuBLASLt workspaces come from the caching allocator after the first matmul and stay (64 MiB measured:
# allocated_steady minus weights and optimizer states, every scenario).
CUBLAS_WORKSPACE_BYTES = 64 * 2**20
# The caching allocator reserves more than it hands out (block rounding, fragmentation across sizes).
ALLOCATOR_OVERHEAD_FRACTION = 0.03

# The components of a MemoryEstimate, in the order they are printed, with the words people read
# (`seqprof memory`, lint findings and the HTML report all label them from this one table).
COMPONENT_LABELS: Mapping[str, str] = {
    "weights": "weights", "reference_model": "reference model", "gradients": "gradients",
    "optimizer_states": "optimizer states", "optimizer_workspace": "optimizer step temporaries",
    "activations": "activations", "logits": "logits and loss buffers", "workspace": "cuBLAS workspace",
    "cuda_context": "CUDA context", "allocator_overhead": "allocator overhead"}
PRECISIONS = {"bf16": 2, "fp16": 2, "fp32": 4}
PAIRED_TRAINERS = ("dpo", "orpo", "ftpo", "simpo", "cpo", "ipo")  # chosen + rejected in every batch
REFERENCE_FREE = ("orpo", "simpo", "cpo")  # paired, but no reference model
ATTENTION = ("sdpa", "flash_attention_2", "flash_attention_3", "eager", "flex_attention")
LOSSES = ("hf", "chunked", "liger", "cut_cross_entropy")
OPTIMIZERS = {  # config name -> the state layout _optimizer() prices
    "adamw_torch": "adam_foreach", "adamw": "adam_foreach", "adam": "adam_foreach", "adamw_hf": "adam_foreach",
    "adamw_torch_fused": "adam_fused", "adamw_fused": "adam_fused", "adamw_apex_fused": "adam_fused",
    "adamw_8bit": "adam_8bit", "adamw_bnb_8bit": "adam_8bit", "bnb_adamw_8bit": "adam_8bit", "adam8bit": "adam_8bit",
    "paged_adamw_8bit": "paged_adam_8bit", "paged_adamw_32bit": "paged_adam_32bit", "paged_adamw": "paged_adam_32bit",
    "sgd": "sgd", "sgd_momentum": "sgd_momentum", "adafactor": "adafactor", "lion": "lion", "lion_8bit": "lion_8bit",
    "paged_lion_8bit": "lion_8bit",
}
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_TARGET_ALIASES = {"all-linear": ALL_LINEAR, "all_linear": ALL_LINEAR, "all": ALL_LINEAR,
                   "attention": ("q_proj", "k_proj", "v_proj", "o_proj"), "mlp": ("gate_proj", "up_proj", "down_proj"),
                   "qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj"),
                   "c_attn": ("q_proj", "k_proj", "v_proj"), "c_proj": ("o_proj",), "w1": ("gate_proj",),
                   "w2": ("down_proj",), "w3": ("up_proj",), "wq": ("q_proj",), "wk": ("k_proj",), "wv": ("v_proj",),
                   "wo": ("o_proj",)}


@dataclass(frozen=True)
class TrainingSetup:
    """What the memory of a step depends on besides the architecture (one GPU's share of it)."""

    micro_batch_size: int = 1
    seq_len: int = 2048  # worst case: every sequence padded or packed to this length
    precision: str = "bf16"  # compute dtype: bf16 | fp16 | fp32
    master_weights_fp32: bool = False  # params kept in fp32, forward under autocast in `precision`
    adapter: str | None = None  # None: full fine-tune; "lora" (qlora = lora + load_in_4bit)
    lora_r: int = 16
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")  # peft's default for Llama/Qwen
    lora_dropout: float = 0.0
    lora_fp32: bool = True  # peft's autocast_adapter_dtype=True keeps adapters (and their inputs) in fp32
    load_in_4bit: bool = False
    load_in_8bit: bool = False
    double_quant: bool = True
    optimizer: str = "adamw_torch_fused"  # transformers' default with torch >= 2.8
    gradient_checkpointing: bool = False
    attn_implementation: str = "sdpa"
    loss: str = "hf"  # hf (logits materialised, fp32 upcast) | chunked | liger | cut_cross_entropy
    loss_chunk_size: int = 4096
    trainer: str = "sft"  # sft | dpo (chosen+rejected in one batch, reference forward) | ...
    reference: str = "model"  # dpo: "model" (a second copy), "lora_base" (adapters off), "precomputed", "none"
    zero_stage: int = 0
    fsdp: bool = False
    world_size: int = 1
    gradient_accumulation_steps: int = 1
    token_budget: int | None = None  # tokens per micro batch (packed / token-budget batching) instead of b x s
    sdpa_kernel: str | None = None  # force flash | efficient | math (default: what torch picks on a CUDA GPU)

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise SeqprofError(f"unknown precision {self.precision!r}", fix="use bf16, fp16 or fp32")
        if self.micro_batch_size < 1 or self.seq_len < 1:
            raise SeqprofError("micro batch size and sequence length must be positive")
        if self.loss not in LOSSES:
            raise SeqprofError(f"unknown loss implementation {self.loss!r}", fix=f"use one of {', '.join(LOSSES)}")
        if self.optimizer.lower() not in OPTIMIZERS:
            raise SeqprofError(f"unknown optimizer {self.optimizer!r}",
                               fix=f"use one of {', '.join(sorted(OPTIMIZERS))}")

    @property
    def sequences(self) -> int:
        """Sequences in one forward: preference trainers put chosen and rejected in the same batch."""
        n = self.micro_batch_size if self.token_budget is None else max(1, self.token_budget // self.seq_len)
        return 2 * n if self.is_preference else n

    @property
    def tokens(self) -> int:
        per = self.micro_batch_size * self.seq_len if self.token_budget is None else self.token_budget
        return 2 * per if self.is_preference else per

    @property
    def is_preference(self) -> bool:
        return self.trainer in PAIRED_TRAINERS


@dataclass(frozen=True)
class MemoryEstimate:
    """Predicted peak of one step: components live at the peak (they sum to peak_bytes), and full sizes."""

    peak_bytes: int
    components: Mapping[str, int]
    notes: tuple[str, ...] = ()
    peak_phase: str = ""
    totals: Mapping[str, int] = field(default_factory=dict)
    stage_peaks: Mapping[str, int] = field(default_factory=dict)  # allocated peak per stage of the step

    @property
    def allocated_bytes(self) -> int:
        """The peak PyTorch's allocator reports (max_memory_allocated): no context, no allocator slack."""
        return self.peak_bytes - self.components.get("cuda_context", 0) - self.components.get("allocator_overhead", 0)

    def share(self, component: str) -> float:
        return self.components.get(component, 0) / self.peak_bytes if self.peak_bytes else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"peak_bytes": self.peak_bytes, "peak_gib": round(self.peak_bytes / GiB, 3),
                "allocated_bytes": self.allocated_bytes, "peak_phase": self.peak_phase,
                "components": dict(self.components), "totals": dict(self.totals), "notes": list(self.notes)}


# --- the allocator walk ----------------------------------------------------------------------------------


class _T:
    __slots__ = ("comp", "n", "refs")

    def __init__(self, comp: str, n: int) -> None:
        self.comp, self.n, self.refs = comp, n, 1


class _Sim:
    """Live bytes per component, with the maximum and what was live at it."""

    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.total = 0
        self.peak = -1
        self.peak_live: dict[str, int] = {}
        self.phase = ""
        self.peak_phase = ""
        self.phase_peaks: dict[str, int] = {}

    def new(self, comp: str, nbytes: float) -> _T | None:
        n = int(math.ceil(nbytes / 512.0)) * 512 if nbytes > 0 else 0
        if n == 0:
            return None
        self.live[comp] = self.live.get(comp, 0) + n
        self.total += n
        stage = _stage(self.phase)
        if self.total > self.phase_peaks.get(stage, -1):
            self.phase_peaks[stage] = self.total
        if self.total > self.peak:
            self.peak, self.peak_live, self.peak_phase = self.total, dict(self.live), self.phase
        return _T(comp, n)

    def ref(self, t: _T | None) -> _T | None:
        if t is not None:
            t.refs += 1
        return t

    def drop(self, *ts: _T | None) -> None:
        for t in ts:
            if t is None:
                continue
            t.refs -= 1
            if t.refs == 0:
                self.live[t.comp] -= t.n
                self.total -= t.n

    def mark(self) -> None:
        """Record the current total as a candidate peak of the current stage (nothing allocated)."""
        stage = _stage(self.phase)
        self.phase_peaks[stage] = max(self.phase_peaks.get(stage, -1), self.total)

    def spike(self, comp: str, nbytes: float) -> None:
        """A temporary that lives only inside one kernel call."""
        self.drop(self.new(comp, nbytes))


def _stage(phase: str) -> str:
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


@dataclass(frozen=True)
class _Ctx:
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


_ACT, _LOG = "activations", "logits"


def _lora_targets(setup: TrainingSetup, arch: Architecture) -> frozenset[str]:
    names: set[str] = set()
    for t in setup.lora_targets:
        key = str(t).strip()
        names.update(_TARGET_ALIASES.get(key.lower(), (key.split(".")[-1],)))
    known = {lin.name for lin in arch.layer_linears()}
    return frozenset(names & known)


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


class _Graph:
    """What autograd keeps for backward, in named groups (one per op), in forward order."""

    def __init__(self, sim: _Sim, keep: bool) -> None:
        self.sim, self.keep = sim, keep
        self.groups: list[tuple[str, list[_T]]] = []

    def save(self, name: str, *ts: _T | None) -> None:
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


def _rmsnorm(sim: _Sim, g: _Graph, name: str, x: _T | None, cx: _Ctx, dim: int, rows: int, x_rg: bool,
             w_train: bool, x_bytes: int) -> _T | None:
    """HF RMSNorm: x.to(fp32), pow, mean, rsqrt, mul, .to(input dtype), weight * (...)."""
    n = cx.n
    t1 = sim.ref(x) if x_bytes == 4 else sim.new(_ACT, 4 * dim * n)
    sim.spike(_ACT, 4 * dim * n)  # pow(2) before the mean
    r = sim.new(_ACT, 4 * rows * n)  # rsqrt(variance + eps)
    t2 = sim.new(_ACT, 4 * dim * n)  # x * rsqrt
    if x_bytes == 4:
        t3 = t2
    else:
        t3 = sim.new(_ACT, x_bytes * dim * n)  # .to(input dtype)
        sim.drop(t2)
    w_bytes = 4 if cx.autocast else cx.pc
    y = sim.new(_ACT, max(w_bytes, x_bytes) * dim * n)  # weight * x (fp32 weight promotes under autocast)
    if x_rg:
        g.save(name, t1, r)
    if w_train:
        g.save(name, t3)
    sim.drop(t1, r, t3)
    return y


def _linear(sim: _Sim, g: _Graph, x: _T | None, cx: _Ctx, lin: Linear, x_bytes: int) -> _T | None:
    """nn.Linear (trainable, frozen or 4-bit) plus peft's LoRA branch when targeted; returns the output."""
    n, c = cx.n, cx.c
    d_in, d_out = lin.d_in, lin.d_out
    xin = x
    if cx.autocast and x_bytes != c:
        xin = sim.new(_ACT, c * d_in * n)  # autocast casts the activation for every matmul
    quant = cx.s.load_in_4bit or cx.s.load_in_8bit
    if quant:
        sim.spike(_ACT, c * d_in * d_out * lin.count)  # the dequantised weight of the 4-bit/8-bit matmul
    out = sim.new(_ACT, c * d_out * n)
    if cx.full:
        g.save(lin.name, xin)  # kept for the weight's gradient
    if lin.name in cx.targets and not cx.full:
        if quant:
            clone = sim.new(_ACT, c * d_out * n)  # peft's defensive result.clone() for 4-bit layers
            sim.drop(out)
            out = clone
        lb = cx.lb
        xf = sim.new(_ACT, lb * d_in * n) if lb != x_bytes else sim.ref(xin)  # cast to the adapter dtype
        xd = xf
        if cx.s.lora_dropout > 0:
            xd = sim.new(_ACT, lb * d_in * n)
            g.save_new(lin.name, _ACT, 1 * d_in * n)  # the dropout mask (bool)
        a = sim.new(_ACT, lb * cx.s.lora_r * n)
        g.save(lin.name, xd)  # lora_A keeps its input for its weight gradient
        b = sim.new(_ACT, lb * d_out * n)
        g.save(lin.name, a)  # lora_B keeps lora_A's output
        bs = sim.new(_ACT, lb * d_out * n)  # * scaling
        sim.drop(b, a)
        if quant:
            conv = sim.new(_ACT, c * d_out * n)  # output.to(expected dtype), then result + output
            sim.drop(bs)
            res = sim.new(_ACT, c * d_out * n)
            sim.drop(conv, out)
            out = res
        else:
            res = sim.new(_ACT, max(lb, c) * d_out * n)  # result + lora output (type promotion)
            sim.drop(bs, out)
            out = res
            if max(lb, c) != c:
                fin = sim.new(_ACT, c * d_out * n)  # result.to(result dtype)
                sim.drop(out)
                out = fin
        if xd is not xf:
            sim.drop(xd)
        sim.drop(xf)
    if xin is not x:
        sim.drop(xin)
    return out


def _attention(sim: _Sim, g: _Graph, cx: _Ctx, q: _T | None, k: _T | None, v: _T | None) -> _T | None:
    """The attention kernel: what it keeps for backward, and the s x s matrices of eager / math."""
    a, n, c = cx.arch, cx.n, cx.c
    qd = a.q_dim
    s, seqs, heads = cx.s.seq_len, cx.seqs, a.num_heads
    sq = seqs * heads * s * s  # elements of the s x s score matrices of all heads and sequences
    gqa = a.num_kv_heads != a.num_heads
    if cx.backend in ("flash", "efficient"):
        out = sim.new(_ACT, c * qd * n)
        lse_len = n if cx.backend == "flash" else seqs * math.ceil(s / 32) * 32
        g.save("attn", q, k, v, out)
        g.save_new("attn", _ACT, 4 * heads * lse_len)  # logsumexp
        return out
    if cx.backend == "math":
        qs = sim.new(_ACT, c * qd * n)  # q * sqrt(scale)
        mask_b = sim.new(_ACT, s * s)
        mask = sim.new(_ACT, c * s * s)  # boolean causal mask -> additive float mask
        sim.drop(mask_b)
        ke = sim.new(_ACT, c * qd * n) if gqa else sim.ref(k)
        ve = sim.new(_ACT, c * qd * n) if gqa else sim.ref(v)
        ks = sim.new(_ACT, c * qd * n)  # k^T * sqrt(scale)
        sim.drop(ke)
        att = sim.new(_ACT, c * sq)
        sim.spike(_ACT, c * sq + sq)  # _safe_softmax: softmax out + all-masked-row test
        sm = sim.new(_ACT, c * sq)
        sim.drop(att)
        out = sim.new(_ACT, c * qd * n)
        g.save("attn", qs, ks, sm, ve)
        sim.drop(qs, ks, sm, ve, mask)
        return out
    # eager (HF eager_attention_forward): repeat_kv, q @ k^T * scale + mask, softmax in fp32, .to(dtype), @ v
    kr = sim.new(_ACT, c * qd * n) if gqa else sim.ref(k)
    vr = sim.new(_ACT, c * qd * n) if gqa else sim.ref(v)
    w1 = sim.new(_ACT, c * sq)
    w2 = sim.new(_ACT, c * sq)  # * scaling
    sim.drop(w1)
    w3 = sim.new(_ACT, c * sq)  # + causal mask
    sim.drop(w2)
    if c != 4:
        sim.spike(_ACT, 4 * sq)  # softmax(dtype=float32) converts its input first
    sm = sim.new(_ACT, 4 * sq)
    smc = sim.new(_ACT, c * sq) if c != 4 else sim.ref(sm)
    sim.drop(w3)
    out = sim.new(_ACT, c * qd * n)
    g.save("attn", q, kr, sm, smc, vr)
    sim.drop(kr, sm, smc, vr)
    return out


def _mlp_width(a: Architecture) -> int:
    """Intermediate activations per token: dense FFN width, or top-k experts plus the shared expert."""
    if a.is_moe:
        return (a.moe_intermediate_size or a.intermediate_size) * a.num_experts_per_tok \
            + a.shared_expert_intermediate_size
    return a.intermediate_size


def _layer_forward(sim: _Sim, cx: _Ctx, x: _T | None, x_rg: bool, keep: bool) -> tuple[_T | None, _Graph]:
    """One decoder layer's forward; keep=False (no_grad, or a checkpoint's first pass) keeps nothing."""
    a, n, c = cx.arch, cx.n, cx.c
    h, f = a.hidden_size, _mlp_width(a)
    lins = {lin.name: lin for lin in a.layer_linears()}
    g = _Graph(sim, keep)
    xb = 4 if cx.autocast else c  # residual stream dtype (fp32 weights promote it under autocast)
    lora_any = bool(cx.targets) and not cx.full
    if cx.autocast:
        g.save_new("weight_casts", _ACT, c * sum(lin.params for lin in a.layer_linears()))
    y1 = _rmsnorm(sim, g, "norm1", x, cx, h, 1, x_rg, cx.full, xb)
    rg = x_rg or cx.full or lora_any
    q = _linear(sim, g, y1, cx, lins["q_proj"], xb)
    k = _linear(sim, g, y1, cx, lins["k_proj"], xb)
    v = _linear(sim, g, y1, cx, lins["v_proj"], xb)
    sim.drop(y1)
    qb = c
    if a.qk_norm:
        qn = _rmsnorm(sim, g, "q_norm", q, cx, a.q_dim, a.num_heads, rg, cx.full, c)
        kn = _rmsnorm(sim, g, "k_norm", k, cx, a.kv_dim, a.num_kv_heads, rg, cx.full, c)
        sim.drop(q, k)
        q, k = qn, kn
        qb = 4 if cx.autocast else c
    rb = 4 if cx.autocast else qb  # q * cos + rotate_half(q) * sin: keeps only cos/sin for backward
    rotated = []
    for t, d in ((q, a.q_dim), (k, a.kv_dim)):
        p1 = sim.new(_ACT, rb * d * n)
        neg = sim.new(_ACT, qb * d * n / 2)
        rot = sim.new(_ACT, qb * d * n)
        sim.drop(neg)
        p2 = sim.new(_ACT, rb * d * n)
        sim.drop(rot)
        e = sim.new(_ACT, rb * d * n)
        sim.drop(p1, p2, t)
        rotated.append(e)
    q, k = rotated
    if cx.autocast:  # sdpa runs in bf16: the fp32 rotary outputs are cast
        qc, kc = sim.new(_ACT, c * a.q_dim * n), sim.new(_ACT, c * a.kv_dim * n)
        sim.drop(q, k)
        q, k = qc, kc
    o = _attention(sim, g, cx, q, k, v)
    sim.drop(q, k, v)
    att_out = _linear(sim, g, o, cx, lins["o_proj"], c)
    sim.drop(o)
    x1 = sim.new(_ACT, xb * h * n)  # residual add
    sim.drop(att_out)
    y2 = _rmsnorm(sim, g, "norm2", x1, cx, h, 1, True, cx.full, xb)
    if a.is_moe:
        g.save_new("router", _ACT, (4 + c) * a.num_experts * n)
    gate = replace(lins.get("gate_proj", lins["up_proj"]), d_out=f, count=1)
    up = replace(lins["up_proj"], d_out=f, count=1)
    gt = _linear(sim, g, y2, cx, gate, xb)
    u = _linear(sim, g, y2, cx, up, xb)
    sim.drop(y2)
    sg = sim.new(_ACT, c * f * n)  # act_fn(gate)
    g.save("act", gt)
    pr = sim.new(_ACT, c * f * n)  # act * up
    g.save("mul", sg, u)
    sim.drop(gt, sg, u)
    dn = _linear(sim, g, pr, cx, replace(lins["down_proj"], d_in=f, count=1), c)
    sim.drop(pr)
    x2 = sim.new(_ACT, xb * h * n)  # residual add
    sim.drop(dn, x1)
    return x2, g


def _layer_backward(sim: _Sim, cx: _Ctx, g: _Graph, persistent_grads: bool) -> None:
    """One decoder layer's backward (the residual gradient is held by the caller)."""
    a, n, c = cx.arch, cx.n, cx.c
    h, f = a.hidden_size, _mlp_width(a)
    xb = 4 if cx.autocast else c
    gb = 4 if cx.autocast else cx.pc
    lins = {lin.name: lin for lin in a.layer_linears()}

    def param_grad(nbytes: float) -> None:
        if persistent_grads:
            sim.spike("gradients", nbytes)  # added in place into the accumulated .grad
        else:
            sim.new("gradients", nbytes)  # lives until zero_grad(set_to_none=True) after the step

    def linear_back(name: str, d_in: int, d_out: int) -> None:
        count = lins[name].count if name in lins else 1
        if cx.full:
            if cx.autocast:
                sim.spike("gradients", c * d_in * d_out * count)  # bf16 grad of the cast weight
            param_grad(gb * (d_in * d_out + (d_out if lins.get(name) and lins[name].bias else 0)) * count)
        elif name in cx.targets:
            sim.spike(_ACT, cx.lb * (d_in + d_out) * n)  # through lora_B, lora_A and the cast back
            param_grad(cx.lb * cx.s.lora_r * (d_in + d_out))
        if cx.s.load_in_4bit or cx.s.load_in_8bit:
            sim.spike(_ACT, c * d_in * d_out * count)  # dequantised weight for the input gradient
        g.release(name)

    def norm_back(name: str, dim: int) -> None:
        sim.spike(_ACT, 3 * 4 * dim * n)  # RMSNorm backward runs in fp32
        if cx.full:
            param_grad(gb * dim)
        g.release(name)

    gp = sim.new(_ACT, c * f * n)
    linear_back("down_proj", f, h)
    gs, gu = sim.new(_ACT, c * f * n), sim.new(_ACT, c * f * n)
    sim.drop(gp)
    g.release("mul")
    gg = sim.new(_ACT, c * f * n)
    sim.drop(gs)
    g.release("act")
    gy_u = sim.new(_ACT, xb * h * n)
    linear_back("up_proj", h, f)
    sim.drop(gu)
    gy_g = sim.new(_ACT, xb * h * n)
    linear_back("gate_proj", h, f)
    sim.drop(gg, gy_u)
    if a.is_moe:
        g.release("router")
    norm_back("norm2", h)
    gx1 = sim.new(_ACT, xb * h * n)
    sim.drop(gy_g, gx1)  # added into the residual gradient
    go = sim.new(_ACT, c * a.q_dim * n)
    linear_back("o_proj", a.q_dim, h)
    ws = 4 * a.q_dim * n + 4 * a.num_heads * n  # dq accumulator + softmax_d
    if a.num_kv_heads != a.num_heads:
        ws += 2 * c * a.q_dim * n  # dk, dv for all heads before the group sum
    sq = cx.seqs * a.num_heads * cx.s.seq_len ** 2
    if cx.backend == "eager":
        ws = (c + 4 + 4) * sq
    elif cx.backend == "math":
        ws = 3 * c * sq  # grad of the probabilities, of the safe-softmax's where(), of the scores
    gq, gk, gv = (sim.new(_ACT, c * a.q_dim * n), sim.new(_ACT, c * a.kv_dim * n),
                  sim.new(_ACT, c * a.kv_dim * n))
    sim.spike(_ACT, ws)
    sim.drop(go)
    g.release("attn")
    sim.spike(_ACT, 3 * c * a.q_dim * n)  # rotary backward
    if a.qk_norm:
        norm_back("k_norm", a.kv_dim)
        norm_back("q_norm", a.q_dim)
    gy = sim.new(_ACT, xb * h * n)
    for name, d_out, t in (("v_proj", a.kv_dim, gv), ("k_proj", a.kv_dim, gk), ("q_proj", a.q_dim, gq)):
        linear_back(name, h, d_out)
        sim.drop(t)
    norm_back("norm1", h)
    sim.drop(gy)
    g.release_all()  # autocast weight casts


def _param_bytes(arch: Architecture, cx: _Ctx) -> dict[str, int]:
    """Bytes of the weights as loaded (quantised linears, embeddings, norms, LoRA adapters)."""
    s = cx.s
    pc = cx.pc
    lin_params = arch.num_layers * sum(lin.d_in * lin.d_out * lin.count for lin in arch.layer_linears())
    bias_params = arch.num_layers * sum(lin.d_out * lin.count for lin in arch.layer_linears() if lin.bias)
    other = arch.param_count() - lin_params - bias_params
    if s.load_in_4bit:
        consts = (1 / 64 + 4 / (64 * 256)) if s.double_quant else 4 / 64
        lin_bytes = lin_params * (0.5 + consts)
    elif s.load_in_8bit:
        lin_bytes = lin_params * 1 + arch.num_layers * sum(4 * lin.d_out * lin.count for lin in arch.layer_linears())
    else:
        lin_bytes = lin_params * pc
    lora = 0
    if s.adapter and not cx.full:
        lora = arch.num_layers * sum(s.lora_r * (lin.d_in + lin.d_out) * lin.count
                                     for lin in arch.layer_linears() if lin.name in cx.targets)
    other_bytes = cx.c if (s.load_in_4bit or s.load_in_8bit) else pc  # embeddings, norms, biases stay unquantised
    return {"base": int(lin_bytes + (bias_params + other) * other_bytes), "lora_params": lora, "lora": lora * cx.lb}


def _optimizer(setup: TrainingSetup, trainable: int, trainable_bytes: int) -> tuple[int, int, str]:
    """(state bytes, step workspace bytes, description) for the trainable parameters."""
    kind = OPTIMIZERS[setup.optimizer.lower()]
    if kind == "adam_foreach":
        return 2 * trainable_bytes, trainable_bytes, "AdamW (foreach): exp_avg, exp_avg_sq in the param dtype; " \
                                                     "the step allocates sqrt(exp_avg_sq) for all params at once"
    if kind == "adam_fused":
        return 2 * trainable_bytes, 0, "AdamW (fused): two states in the param dtype, no step temporaries"
    if kind in ("adam_8bit", "paged_adam_8bit"):
        paged = "; paged: can spill to host" if "paged" in kind else ""
        return int(trainable * (2 + 2 * 4 / 256)), 0, f"8-bit AdamW (bitsandbytes): 1 byte per state + absmax{paged}"
    if kind == "paged_adam_32bit":
        return 8 * trainable, 0, "paged AdamW 32-bit: fp32 states in unified memory (can spill to host)"
    if kind == "sgd":
        return 0, 0, "SGD without momentum: no states"
    if kind == "sgd_momentum":
        return trainable_bytes, 0, "SGD with momentum: one state"
    if kind == "lion":
        return trainable_bytes, 0, "Lion: one momentum state"
    if kind == "lion_8bit":
        return int(trainable * (1 + 4 / 256)), 0, "8-bit Lion: one 8-bit state"
    return int(trainable_bytes * 0.05), 0, "Adafactor: factored second moments (rows + columns)"


def _setup_context(arch: Architecture, s: TrainingSetup) -> _Ctx:
    c = PRECISIONS[s.precision]
    quant = s.load_in_4bit or s.load_in_8bit
    adapter = s.adapter or ("lora" if quant else None)
    if adapter and adapter.lower() not in ("lora", "qlora", "dora"):
        raise SeqprofError(f"unknown adapter {adapter!r}",
                           fix="use lora or qlora, or leave it empty for full fine-tuning")
    full = adapter is None  # a 4-bit/8-bit model always trains adapters (QLoRA)
    targets = _lora_targets(s, arch) if not full else frozenset()
    if not full and not targets:
        raise SeqprofError(f"LoRA targets {list(s.lora_targets)} match no linear layer of {arch.model_type}",
                           fix="name the modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj "
                               "or all-linear")
    autocast = full and s.master_weights_fp32 and c == 2  # (LoRA over fp32 weights: weights in fp32, the
    pc = 4 if (s.master_weights_fp32 or c == 4) else c     # activations counted as plain bf16; not measured)
    return _Ctx(arch=arch, s=s, n=s.tokens, seqs=s.sequences, c=c, pc=pc, autocast=autocast, full=full,
                targets=targets, lb=4 if (s.lora_fp32 or c == 4) else c, backend=attention_backend(arch, s, c))


def estimate_memory(arch: Architecture, setup: TrainingSetup) -> MemoryEstimate:
    """Walk one optimizer step of `setup` on `arch`; return the peak and what is live at it."""
    s = setup
    cx = _setup_context(arch, s)
    c, pc, full, autocast = cx.c, cx.pc, cx.full, cx.autocast
    h, V, n = arch.hidden_size, arch.vocab_size, cx.n
    gc = s.gradient_checkpointing
    notes: list[str] = []
    world = max(1, s.world_size)
    zero = s.zero_stage if s.zero_stage else (3 if s.fsdp else 0)

    pb = _param_bytes(arch, cx)
    total_params = arch.param_count()
    trainable = total_params if full else pb["lora_params"]
    trainable_bytes = trainable * pc if full else pb["lora"]
    weights_bytes = pb["base"] + pb["lora"]
    state_bytes, opt_ws, opt_note = _optimizer(s, trainable, trainable_bytes)
    notes.append(opt_note)
    master_bytes = 0
    if zero and full and pc == 2 and OPTIMIZERS[s.optimizer.lower()].startswith("adam"):
        master_bytes, state_bytes = 4 * trainable, 8 * trainable
        notes.append("ZeRO/FSDP mixed precision: fp32 master weights and fp32 Adam states")
    if zero >= 1:
        state_bytes, master_bytes, opt_ws = state_bytes // world, master_bytes // world, opt_ws // world
    grad_shard = world if zero >= 2 else 1
    weight_shard = world if zero >= 3 else 1
    if zero:
        notes.append(f"ZeRO stage {zero} over {world} GPUs (not validated on hardware: single-GPU measurements only)")

    sim = _Sim()
    sim.phase = "model and optimizer states"
    sim.new("weights", weights_bytes // weight_shard)
    if zero >= 3:
        sim.new("weights", 2 * arch.layer_params() * pc)  # the layer being computed and the prefetched one
    ref_bytes = 0
    if s.is_preference and s.reference == "model":
        ref_bytes = pb["base"] if not full else total_params * (c if autocast else pc)
        sim.new("reference_model", ref_bytes // weight_shard)
    sim.new("optimizer_states", state_bytes + master_bytes)
    sim.new("workspace", CUBLAS_WORKSPACE_BYTES)
    persistent_grads = s.gradient_accumulation_steps > 1
    if persistent_grads:
        sim.new("gradients", trainable_bytes // grad_shard)
    xb = 4 if autocast else c

    def param_grad(nbytes: float) -> None:
        if persistent_grads:
            sim.spike("gradients", nbytes)
        else:
            sim.new("gradients", nbytes / grad_shard)

    held: list[_T | None] = []

    def lm_head_grad() -> None:
        """The output projection's weight gradient; a tied one waits in autograd's input buffer for the
        embedding's share, until the very end of the backward (measured: an extra V x h held, then summed)."""
        if arch.tie_word_embeddings:
            held.append(sim.new("gradients", pc * V * h / grad_shard))
        else:
            param_grad(pc * V * h)

    ref_cx = replace(cx, full=False, targets=frozenset())  # adapters off / a frozen copy, under no_grad

    def run_model(training: bool, ref: bool) -> tuple[list[_Graph], _Graph, _T | None, list[_T | None]]:
        """Embedding, decoder layers, final norm: (layer graphs, final-norm graph, hidden state, checkpoints)."""
        mcx = ref_cx if ref else cx
        emb = sim.new(_ACT, xb * h * n)
        eager_mask = sim.new(_ACT, c * cx.seqs * s.seq_len ** 2) if cx.backend == "eager" else None
        graphs: list[_Graph] = []
        ckpts: list[_T | None] = []
        x = sim.ref(emb)
        x_rg = training and (full or gc)  # peft + checkpointing: enable_input_require_grads
        for i in range(arch.num_layers):
            sim.phase = ("reference " if ref else "") + f"forward: layer {i}"
            if training and gc:
                ckpts.append(sim.ref(x))  # the checkpoint keeps the layer's input
            xo, g = _layer_forward(sim, mcx, x, x_rg, keep=training and not gc)
            graphs.append(g)
            sim.drop(x)
            x, x_rg = xo, training
        sim.phase = ("reference " if ref else "") + "forward: final norm"
        fg = _Graph(sim, training)
        y = _rmsnorm(sim, fg, "final_norm", x, mcx, h, 1, training, training and full, xb)
        sim.drop(x, emb, eager_mask)
        return graphs, fg, y, ckpts

    # autocast: the weight cache holds bf16 copies of every matmul weight until the autocast block ends
    cache = sim.new(_ACT, c * arch.num_layers * sum(lin.params for lin in arch.layer_linears())) \
        if autocast and gc else None
    graphs, final_graph, y, ckpts = run_model(True, False)
    sim.phase = "forward: lm_head and loss"
    head = _Graph(sim, True)
    lm_trainable = full
    if autocast:
        head.save_new("lm_head", _ACT, c * V * h)  # bf16 copy of the lm_head weight
        yc = sim.new(_ACT, c * h * n)
        sim.drop(y)
        y = yc
    gy: _T | None = None
    if s.loss == "liger":
        chunk = min(n, 2 ** math.ceil(math.log2(max(1, math.ceil(n / math.ceil(V / h))))))
        if lm_trainable:
            lm_head_grad()  # grad_weight, filled during the forward
        gy = sim.new(_LOG, c * h * n)  # grad_input, filled during the forward
        head.save_new("loss", _LOG, 4 * n)
        sim.spike(_LOG, c * chunk * V)  # one chunk of logits; its gradient is written in place
        sim.drop(y)
    elif s.loss == "cut_cross_entropy":
        head.save("loss", y)
        head.save_new("loss", _LOG, 4 * n)
        sim.drop(y)
    elif s.loss == "chunked":
        k = min(n, s.loss_chunk_size)
        head.save("loss", y)
        sim.spike(_LOG, max(c + 4, 8) * k * V)  # one chunk: logits.float() then log-softmax; recomputed later
        sim.drop(y)
    elif s.is_preference:
        # TRL-style: materialised logits, selective_log_softmax one sequence at a time
        logits = sim.new(_LOG, c * V * n)
        if lm_trainable:
            head.save("lm_head", y)
        sim.drop(y)
        row = s.seq_len * V
        if c == 4:
            sim.spike(_LOG, 4 * row)  # logsumexp of one row
            head.save("loss", logits)
        else:
            for _ in range(cx.seqs):
                head.save_new("loss", _LOG, c * row)  # log_softmax of one row, kept for backward
        sim.drop(logits)  # the logits die when the forward function returns (logsumexp keeps them in fp32)
        if s.reference in ("model", "lora_base"):
            _, rfg, ry, _ = run_model(False, True)
            sim.phase = "reference forward: logits"
            if autocast:
                ryc = sim.new(_ACT, c * h * n)
                sim.drop(ry)
                ry = ryc
            rlog = sim.new(_LOG, c * V * n)
            sim.drop(ry)
            sim.spike(_LOG, 4 * row if c == 4 else 2 * c * row)  # the next row's log_softmax before the last dies
            sim.drop(rlog)
    else:  # transformers' ForCausalLMLoss: logits.float(), log_softmax, nll_loss
        logits = sim.new(_LOG, c * V * n)
        if lm_trainable:
            head.save("lm_head", y)
        sim.drop(y)
        lf = sim.new(_LOG, 4 * V * n) if c != 4 else sim.ref(logits)
        lsm = sim.new(_LOG, 4 * V * n)
        head.save("loss", lsm)
        sim.drop(lf, logits, lsm)
    sim.drop(cache)

    # ---- backward ----
    sim.phase = "backward: loss and lm_head"
    if s.loss == "liger":
        head.release_all()
    elif s.loss == "cut_cross_entropy":
        sim.spike(_LOG, 4 * n * 64)
        gy = sim.new(_ACT, c * h * n)
        if lm_trainable:
            lm_head_grad()
        head.release_all()
    elif s.loss == "chunked":
        k = min(n, s.loss_chunk_size)
        gy = sim.new(_ACT, c * h * n)
        several = n > k
        if lm_trainable and several:
            lm_head_grad()  # the first chunk's weight gradient waits while the next chunks run
        sim.spike(_LOG, (4 + 4 + 4) * k * V)  # recomputed chunk's log-softmax and its two fp32 gradients
        if lm_trainable and several:
            sim.spike("gradients", 2 * pc * V * h)  # a later chunk's weight gradient and the out-of-place sum
        elif lm_trainable:
            lm_head_grad()
        head.release_all()
    elif s.is_preference:
        row = s.seq_len * V
        grads = []
        if c == 4:
            grads.append(sim.new(_LOG, 4 * V * n))
            head.release("loss")
        else:
            for _ in range(cx.seqs):
                gz = sim.new(_LOG, c * row)  # gather backward
                grads.append(sim.new(_LOG, c * row))  # log_softmax backward
                sim.drop(gz)
                if head.groups and head.groups[-1][1]:
                    sim.drop(head.groups[-1][1].pop())
        stacked = sim.new(_LOG, c * V * n)  # unbind backward stacks the row gradients
        sim.drop(*grads)
        full_g = sim.new(_LOG, c * V * n)  # slice backward ([:, :-1]) writes into a full-size zero tensor
        sim.drop(stacked)
        head.release("loss")
        gy = sim.new(_ACT, c * h * n)
        if lm_trainable:
            if autocast:
                sim.spike("gradients", c * V * h)
            lm_head_grad()
        sim.drop(full_g)
        head.release_all()
    else:
        g1 = sim.new(_LOG, 4 * V * n)  # nll_loss backward
        g2 = sim.new(_LOG, 4 * V * n)  # log_softmax backward
        sim.drop(g1)
        head.release("loss")
        g3 = sim.new(_LOG, c * V * n) if c != 4 else None  # .float() backward
        sim.drop(g2)
        gy = sim.new(_ACT, xb * h * n)
        if lm_trainable:
            if autocast:
                sim.spike("gradients", c * V * h)
            lm_head_grad()
        sim.drop(g3)
        head.release_all()
    sim.phase = "backward: final norm"
    sim.spike(_ACT, 3 * 4 * h * n)
    final_graph.release_all()
    if full:
        param_grad(pc * h)
    for i in reversed(range(arch.num_layers)):
        g = graphs[i]
        if gc:
            sim.phase = f"backward: recompute layer {i}"
            out, g = _layer_forward(sim, cx, ckpts[i], True, keep=True)
            sim.drop(out, ckpts[i])
        sim.phase = f"backward: layer {i}"
        _layer_backward(sim, cx, g, persistent_grads)
    sim.phase = "backward: embedding"
    sim.drop(gy)
    if full:
        sim.spike(_ACT, 8 * 4 * n)  # index sort buffers
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
    sim.phase = "optimizer step"
    sim.mark()
    sim.spike("optimizer_workspace", opt_ws)

    live = {k: v for k, v in sim.peak_live.items() if v > 0}
    allocated = sum(live.values())
    components = {k: live.get(k, 0) for k in COMPONENT_LABELS if k not in ("cuda_context", "allocator_overhead")}
    components["cuda_context"] = CUDA_CONTEXT_BYTES
    components["allocator_overhead"] = int(allocated * ALLOCATOR_OVERHEAD_FRACTION)
    totals = {"params": total_params, "trainable_params": trainable, "weights": weights_bytes,
              "gradients": trainable_bytes // grad_shard, "optimizer_states": state_bytes + master_bytes,
              "reference_model": ref_bytes, "logits": c * V * n, "logits_fp32": 4 * V * n, "tokens": n,
              "activations_per_layer": _saved_per_layer(cx)}
    if cx.backend in ("math", "eager"):
        notes.append(f"attention: the {cx.backend} kernel keeps s x s score matrices "
                     f"({_gib(4 * cx.seqs * arch.num_heads * s.seq_len ** 2)} per layer in fp32)")
    if s.loss == "hf" and not s.is_preference:
        notes.append(f"logits: {n:,} tokens x {V:,} vocab = {_gib(c * V * n)} in {s.precision}, "
                     f"{_gib(4 * V * n)} again in fp32 inside the loss, twice more for its gradients")
    if s.is_preference:
        notes.append(f"preference training: chosen and rejected in one batch ({cx.seqs} sequences); "
                     f"reference: {s.reference}")
    if arch.is_moe:
        notes.append("MoE: each token's top-k experts counted as one FFN of their total width (not measured)")
    if s.load_in_8bit:
        notes.append("8-bit weights: 1 byte per weight plus fp32 row scales (not measured)")
    if s.loss == "cut_cross_entropy":
        notes.append("Cut Cross-Entropy: no logits materialised, hidden-size gradients only (not measured)")
    return MemoryEstimate(peak_bytes=sum(components.values()), components=components, notes=tuple(notes),
                          peak_phase=sim.peak_phase, totals=totals, stage_peaks=dict(sim.phase_peaks))


def _saved_per_layer(cx: _Ctx) -> int:
    """Bytes one decoder layer keeps for its backward, for the report."""
    probe = _Sim()
    x = probe.new(_ACT, (4 if cx.autocast else cx.c) * cx.arch.hidden_size * cx.n)
    out, g = _layer_forward(probe, cx, x, True, keep=True)
    probe.drop(out, x)
    return probe.total


def _gib(nbytes: float) -> str:
    return f"{nbytes / GiB:.2f} GiB"
