"""A sparse MoE block as transformers 5 runs it: the top-k router and fused experts through grouped_mm.

transformers 5 stores each MoE layer's experts as two 3-D parameters (gate_up_proj [E, 2F, h], down_proj
[E, h, F]) and runs them with `grouped_mm_experts_forward` (integrations/moe.py; the default
`experts_implementation` on a GPU with grouped GEMMs): the token-expert pairs are sorted by expert, the
hidden states gathered once per pair (S = tokens x top-k rows), both projections run as one grouped GEMM each,
the routing weights multiply the rows, and an index plus a sum bring them back to the tokens. So the
activations scale with S rows of h and of F, and each weight gradient is the whole [E, ...] parameter.

peft's LoRA wraps nn.Linear modules, and fused experts are not nn.Linear: LoRA reaches the attention and the
shared experts only; bitsandbytes quantises nn.Linear only, so the experts stay in the model dtype under QLoRA.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seqprof.predict.memory.allocator import Allocator, Block, SavedForBackward

ACT = "activations"
# peft's LoRA targets (v4 module names) on transformers 5's fused experts (peft's _MOE_TARGET_MODULE_MAPPING):
# gate_proj and up_proj each add r x experts ranks to the one gate_up_proj wrapper; the router is "gate".
# peft does this only for the model types transformers 5 converts from v4 checkpoints (transformers'
# conversion_mapping._MODEL_TO_CONVERSION_PATTERN onto qwen2_moe or mixtral, 5.17; peft adds mixtral itself):
# qwen2_moe itself is the pattern, not a converted type, so its experts get no LoRA (checked with peft 0.21).
EXPERT_LORA_TYPES = frozenset({
    "mixtral", "minimax", "minimax_m2", "afmoe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "dots1",
    "ernie4_5_moe", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa", "glm4v_moe", "longcat_flash", "solar_open", "mellum",
    "qwen3_moe", "qwen3_omni_moe", "qwen3_omni_moe_thinker", "qwen3_next", "hunyuan_v1_moe", "flex_olmo", "olmoe",
    "exaone_moe", "cohere2_moe"})
EXPERT_TARGETS = {"gate_proj": "experts.gate_proj", "up_proj": "experts.up_proj", "down_proj": "experts.down_proj",
                  "gate": "router"}


def expert_lora(cx: Any) -> tuple[int, int]:
    """(LoRA parameters on one MoE layer's experts and router, bytes of the merged expert weights the forward
    builds): peft's ParamWrapper keeps A [r*E, in] and B [out, r*E] per targeted name and runs the experts with
    the base parameter plus B @ A folded in, a whole [E, out, in] tensor that autograd keeps for the backward."""
    a, r = cx.arch, cx.s.lora_r
    if not a.is_moe or cx.full:
        return 0, 0
    h, e, f = a.hidden_size, a.num_experts, a.moe_intermediate_size or a.intermediate_size
    gu = sum(1 for name in ("experts.gate_proj", "experts.up_proj") if name in cx.targets)
    down = "experts.down_proj" in cx.targets
    params = gu * r * e * (h + 2 * f) + (r * e * (f + h) if down else 0) \
        + (r * (h + e) if "router" in cx.targets else 0)
    elems = (e * 2 * f * h if gu else 0) + (e * h * f if down else 0)
    return params, elems * (4 if cx.c == 4 or cx.s.kbit_upcast else cx.c)


def moe_forward(sim: Allocator, g: SavedForBackward, n: int, c: int, h: int, experts: int, top_k: int,
                f: int, full: bool, x: Block | None, merged_bytes: int = 0) -> Block | None:
    """Router and experts on the normed hidden state `x` (not consumed); returns the block's n x h output.
    `merged_bytes`: LoRA on the experts (see expert_lora)."""
    s = n * top_k  # token-expert pairs
    if merged_bytes:
        g.save_new("lora_experts", ACT, merged_bytes)  # base + B @ A, kept by the grouped GEMMs
    logits = sim.new(ACT, c * experts * n)  # F.linear(hidden, router weight)
    if full:
        g.save("router", x)  # for the router weight's gradient
    probs = sim.new(ACT, 4 * experts * n)  # softmax(dtype=float32), kept by its backward
    g.save("router", probs)
    sim.drop(logits)
    g.save_new("router", ACT, (8 + 4 + 4) * top_k * n)  # topk indices, normalised weights, the cast
    sim.spike(ACT, 16 * s)  # sort: values and permutation (int64)
    g.save_new("experts", ACT, 3 * 8 * s)  # perm // k, the inverse permutation, the gathered weights' index
    xs = sim.new(ACT, c * h * s)  # hidden_states[perm // k]
    proj = sim.new(ACT, c * 2 * f * s)  # grouped_mm(x, gate_up_proj)
    if full:
        g.save("gate_up", xs)  # the grouped GEMM keeps its input for the weight gradient
    sim.drop(xs)
    masked = sim.new(ACT, c * 2 * f * s)  # masked_fill (out of place); silu and the product keep it (gate, up)
    sim.drop(proj)
    act = sim.new(ACT, c * f * s)
    prod = sim.new(ACT, c * f * s)
    g.save("gate", masked, act)
    sim.drop(masked, act)
    out = sim.new(ACT, c * h * s)  # grouped_mm(prod, down_proj)
    if full:
        g.save("down", prod)
    sim.drop(prod)
    om = sim.new(ACT, c * h * s)  # masked_fill
    sim.drop(out)
    weighted = sim.new(ACT, c * h * s)  # * routing weights: keeps om for the weights' gradient
    g.save("weights", om)
    sim.drop(om)
    back = sim.new(ACT, c * h * s)  # weighted[inv_perm]
    sim.drop(weighted)
    y = sim.new(ACT, c * h * n)  # view(n, k, h).sum(1)
    sim.drop(back)
    return y


def moe_backward(sim: Allocator, g: SavedForBackward, n: int, c: int, h: int, experts: int, top_k: int,
                 f: int, full: bool, param_grad: Callable[[float], None], grad_bytes: int,
                 merged_bytes: int = 0, lora_grad_bytes: int = 0) -> None:
    """The block's backward, from the output gradient (held by the caller) to the normed input's gradient
    (added into the caller's residual gradient, so freed here)."""
    s = n * top_k
    gb = sim.new(ACT, c * h * s)  # sum backward expands; index backward scatters into zeros
    gw = sim.new(ACT, c * h * s)  # d(om) = grad * weights
    sim.spike(ACT, c * h * s)  # d(weights) = (grad * om).sum(-1)
    sim.drop(gb)
    g.release("weights")
    gm = sim.new(ACT, c * h * s)  # masked_fill backward
    sim.drop(gw)
    gp = sim.new(ACT, c * f * s)  # d(prod) from the down grouped GEMM
    if full:
        param_grad(grad_bytes * experts * h * f)
        g.release("down")
    sim.drop(gm)
    ga, gu = sim.new(ACT, c * f * s), sim.new(ACT, c * f * s)  # the product's backward
    sim.drop(gp)
    gg = sim.new(ACT, c * f * s)  # silu backward
    sim.drop(ga)
    cat = sim.new(ACT, c * 2 * f * s)  # chunk backward concatenates d(gate), d(up)
    sim.drop(gg, gu)
    g.release("gate")
    gc = sim.new(ACT, c * 2 * f * s)  # masked_fill backward
    sim.drop(cat)
    gx = sim.new(ACT, c * h * s)  # d(x_sorted) from the gate_up grouped GEMM
    if full:
        param_grad(grad_bytes * experts * 2 * f * h)
        g.release("gate_up")
    sim.drop(gc)
    gxm = sim.new(ACT, c * h * s)  # the in-place masked_fill_'s backward
    sim.drop(gx)
    if merged_bytes:  # the merged weights' gradient, then through B @ A into the LoRA factors
        sim.spike(ACT, merged_bytes)
        param_grad(lora_grad_bytes)
        g.release("lora_experts")
    gh = sim.new(ACT, c * h * n)  # index backward: zeros(n, h).index_put_(accumulate)
    sim.drop(gxm)
    g.release("experts")
    sim.spike(ACT, 4 * experts * n * 2)  # softmax backward (fp32)
    if full:
        param_grad(grad_bytes * experts * h)
    g.release("router")
    sim.spike(ACT, c * h * n)  # the router's input gradient, added into gh
    sim.drop(gh)
