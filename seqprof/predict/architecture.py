"""A model's architecture from its config.json (local file, directory or HF cache, never the network)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, not_a_regular_file, read_input_text

MAX_MODEL_CONFIG_BYTES = 8 * MiB  # config.json files are a few KB (a VLM's with its processor, tens of KB)
# Model types whose q/k/v projections carry a bias although their config has no `attention_bias` key.
_QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
# Model types with an RMSNorm over head_dim on q and k (Qwen3 family, OLMo2-style per-head norms, Gemma 3).
_QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text",
                            "qwen3_5_moe_text", "gemma3", "gemma3_text", "olmo2", "olmoe"})
# transformers' own default for tie_word_embeddings when the config leaves it out.
_TIE_DEFAULTS = {"llama": False, "mistral": False, "mixtral": False, "qwen2": False, "qwen3": False,
                 "qwen2_moe": False, "qwen3_moe": False, "phi3": False, "gemma": True, "gemma2": True,
                 "gemma3": True, "gemma3_text": True}


@dataclass(frozen=True)
class Linear:
    """One weight matrix of a decoder layer: its name (as LoRA targets it), shape and count per layer."""

    name: str
    d_in: int
    d_out: int
    bias: bool = False
    count: int = 1  # experts: how many copies each layer holds

    @property
    def params(self) -> int:
        return self.count * (self.d_in * self.d_out + (self.d_out if self.bias else 0))


@dataclass(frozen=True)
class Layer:
    """One decoder layer as transformers builds it: its mixer kind, its weight matrices and everything else."""

    kind: str  # the config's layer_types name: "full_attention", "sliding_attention", "linear_attention", ...
    linears: tuple[Linear, ...]
    other_params: int = 0  # norms, convolutions, per-head scalars, router score biases: what no LoRA targets
    num_experts: int = 0  # 0: a dense MLP
    num_experts_per_tok: int = 0

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def params(self) -> int:
        return sum(lin.params for lin in self.linears) + self.other_params

    @property
    def active_params(self) -> int:
        """What one token passes through: of the expert matrices (count == num_experts), only its top-k."""
        idle = self.num_experts - self.num_experts_per_tok
        return self.params - sum(idle * lin.params // lin.count for lin in self.linears
                                 if self.is_moe and lin.count == self.num_experts)


VISION_PARTS = ("visual.", "vision_tower.", "multi_modal_projector")
ATTENTION_KINDS = frozenset({"full_attention", "sliding_attention", "chunked_attention", "attention"})


@dataclass(frozen=True)
class Architecture:
    """The shape facts the memory model needs, read from config.json.

    `layer_specs`/`layer_pattern` describe every layer as transformers builds it (hybrid linear/full
    attention, dense first layers of DeepSeek-style MoE); an Architecture built from the scalar fields
    alone (no specs) has `num_layers` copies of `layer_linears()`. `unmodelled` names, in one line, what
    seqprof cannot count exactly for this config ("" when the count is exact); `notes` say what
    transformers does not build although config.json mentions it (an MTP layer) or what was left out."""

    model_type: str
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    qkv_bias: bool = False
    qk_norm: bool = False
    gated_mlp: bool = True
    num_experts: int = 0  # 0: dense
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    source: str = ""
    layer_specs: tuple[Layer, ...] = ()  # the distinct layers
    layer_pattern: tuple[int, ...] = ()  # layer i is layer_specs[layer_pattern[i]]
    other_params: tuple[tuple[str, int], ...] = ()  # outside the layers: ("norm", h), ("vision", n), ...
    unmodelled: str = ""
    notes: tuple[str, ...] = ()
    # Gated DeltaNet layers (linear_attention): key heads, value heads, key head dim, value head dim, conv kernel
    linear_attention_dims: tuple[int, int, int, int, int] = ()
    partial_rotary_factor: float = 1.0  # the share of head_dim that rotary embeddings rotate
    max_position_embeddings: int = 0  # config.json's; 0 when it gives none (Unsloth sizes its RoPE cache by it)

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    def layers(self) -> tuple[Layer, ...]:
        """Every decoder layer in order, each with its own Linear tuple."""
        if self.layer_specs:
            return tuple(self.layer_specs[i] for i in self.layer_pattern)
        return (Layer("full_attention", self._scalar_linears(), self._scalar_norm_params(), self.num_experts,
                      self.num_experts_per_tok),) * self.num_layers

    def typical_layer(self) -> Layer:
        """The most common attention layer (ties: the first): what per-layer callers size with."""
        if not self.layer_specs:
            return self.layers()[0] if self.num_layers else Layer("full_attention", self._scalar_linears())
        attn = [i for i in self.layer_pattern if self.layer_specs[i].kind in ATTENTION_KINDS] or list(self.layer_pattern)
        return self.layer_specs[max(dict.fromkeys(attn), key=attn.count)]

    def layer_linears(self) -> tuple[Linear, ...]:
        """Every weight matrix of one (typical, attention) decoder layer, named as peft's target_modules names them."""
        return self.typical_layer().linears if self.layer_specs else self._scalar_linears()

    def _scalar_linears(self) -> tuple[Linear, ...]:
        h, f = self.hidden_size, self.intermediate_size
        out = [Linear("q_proj", h, self.q_dim, self.qkv_bias), Linear("k_proj", h, self.kv_dim, self.qkv_bias),
               Linear("v_proj", h, self.kv_dim, self.qkv_bias), Linear("o_proj", self.q_dim, h)]
        if self.is_moe:
            fe = self.moe_intermediate_size or f
            e = self.num_experts
            out += [Linear("gate", h, e), Linear("gate_proj", h, fe, count=e), Linear("up_proj", h, fe, count=e),
                    Linear("down_proj", fe, h, count=e)]
            if self.shared_expert_intermediate_size:
                fs = self.shared_expert_intermediate_size
                out += [Linear("shared_expert.gate_proj", h, fs), Linear("shared_expert.up_proj", h, fs),
                        Linear("shared_expert.down_proj", fs, h), Linear("shared_expert_gate", h, 1)]
        elif self.gated_mlp:
            out += [Linear("gate_proj", h, f), Linear("up_proj", h, f), Linear("down_proj", f, h)]
        else:
            out += [Linear("up_proj", h, f, True), Linear("down_proj", f, h, True)]
        return tuple(out)

    def _scalar_norm_params(self) -> int:
        return 2 * self.hidden_size + (2 * self.head_dim if self.qk_norm else 0)

    def layer_norm_params(self) -> int:
        """Non-matrix weights of one typical layer (its norms, and convolutions or scalars where it has them)."""
        return self.typical_layer().other_params if self.layer_specs else self._scalar_norm_params()

    def layer_params(self) -> int:
        return sum(lin.params for lin in self.layer_linears()) + self.layer_norm_params()

    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    def lm_head_params(self) -> int:
        """0 when tied: the output projection reuses the embedding matrix."""
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    def outside_layer_params(self) -> int:
        """Final norm, vision tower, projector and the like (without a spec: the final RMSNorm)."""
        return sum(n for _, n in self.other_params) if self.layer_specs else self.hidden_size

    def vision_param_count(self) -> int:
        """The vision tower and its projector (0 when config.json has none, or seqprof does not model it)."""
        return sum(n for name, n in self.other_params if name.startswith(VISION_PARTS))

    def param_count(self, *, vision: bool = True) -> int:
        """All parameters, tied embeddings counted once (what `sum(p.numel() for p in model.parameters())` gives);
        vision=False: the language model alone (what AutoModelForCausalLM builds for Qwen3.5 or Llama 4)."""
        return (sum(layer.params for layer in self.layers()) + self.embedding_params() + self.lm_head_params()
                + self.outside_layer_params() - (0 if vision else self.vision_param_count()))

    def active_param_count(self) -> int:
        """Parameters a token passes through (MoE: only its top-k experts)."""
        return self.param_count() - sum(layer.params - layer.active_params for layer in self.layers())


def _first(cfg: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return default


MAX_DIMENSION = 1 << 32  # far past any real width, vocabulary or depth; larger is a damaged config


def _count(value: Any, key: str, source: str, *, zero_ok: bool = False) -> int:
    """A size from config.json as transformers would use it (an int; 4096.0 is read as 4096), or one error."""
    ok = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if ok and (0 if zero_ok else 1) <= value <= MAX_DIMENSION:
        return int(value)
    shown = repr(value) if len(repr(value)) <= 24 else f"a {len(repr(value))}-character value"
    raise SeqprofError(f"config.json's {key} is {shown}, not a {'size' if zero_ok else 'positive size'}",
                       path=source or None, fix="pass the model's own config.json with --model-config")


def text_model_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's part of a config.json: a multimodal config's text_config (the top level's
    tie_word_embeddings, where it has one, overriding the text_config's), else the config itself."""
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), Mapping):
        text = {**cfg["text_config"]}
        if cfg.get("tie_word_embeddings") is not None:  # the top level's wins (PreTrainedModel.tie_weights in 5.x
            text["tie_word_embeddings"] = cfg["tie_word_embeddings"]  # reads the composite config's flag)
        return text
    return cfg


# --- layers as transformers builds them -----------------------------------------------------------------
# Each rule below cites the transformers 5.24 module whose __init__ it mirrors; tests/test_param_counts.py
# checks every model_type in MODELLED against `from_config` on the meta device (tests/data/param_counts.json).

# q/k/v carry a bias (o_proj does not) whatever attention_bias says: Qwen2Attention (bias=True on q/k/v).
_QKV_BIAS_ALWAYS = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_5_vl_text", "qwen2_vl_text"})
# attention_bias puts a bias on q/k/v only (GlmAttention, Glm4Attention, SeedOssAttention: o_proj bias=False
# or its own key).
_QKV_BIAS_ONLY = frozenset({"glm", "glm4", "seed_oss", "glm4_moe", "ernie4_5", "ernie4_5_moe"})
# RMSNorm over head_dim on q and k (Qwen3Attention.q_norm = Qwen3RMSNorm(head_dim), and the like).
_QK_NORM_HEAD = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                           "qwen3_5_moe_text", "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text",
                           "gemma3", "gemma3_text", "exaone4", "apertus", "smollm3_qk"})
# RMSNorm over the whole q and k width (Olmo2Attention.q_norm = Olmo2RMSNorm(num_heads * head_dim)).
_QK_NORM_FULL = frozenset({"olmo2", "olmo3", "olmoe"})
# Hidden-width norms per layer besides input/post-attention: Gemma2DecoderLayer adds pre/post feed-forward,
# Glm4DecoderLayer post_self_attn/post_mlp; CohereDecoderLayer has one (attention and MLP in parallel);
# Olmo2/Olmo3/Exaone4 move both norms after their sub-blocks (still two).
_NORMS_PER_LAYER = {"gemma2": 4, "gemma3": 4, "gemma3_text": 4, "glm4": 4, "vaultgemma": 2,
                    "cohere": 1, "cohere2": 1}
# LayerNorm with a bias instead of RMSNorm (Starcoder2DecoderLayer, PhimoeDecoderLayer nn.LayerNorm).
_LAYERNORM_BIAS = frozenset({"starcoder2", "phimoe"})
# Fused projections (Phi3Attention.qkv_proj, Phi3MLP.gate_up_proj, GlmMLP/Glm4MLP.gate_up_proj).
_FUSED_QKV = frozenset({"phi3"})
_FUSED_GATE_UP = frozenset({"phi3", "glm", "glm4"})
# An MLP of up and down only (Starcoder2MLP c_fc/c_proj with use_bias; ArceeMLP up/down, no bias).
_PLAIN_MLP = frozenset({"starcoder2", "arcee", "nemotron"})
# Router module name (the attribute peft would target), when not `gate`.
_ROUTER_NAME = {"gpt_oss": "router", "phimoe": "router", "granitemoe": "router", "granitemoeshared": "router",
                "llama4": "router", "llama4_text": "router"}
# Types whose every layer this module builds as transformers does (the rest get an `unmodelled` note).
MODELLED = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "qwen3_5",
    "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3",
    "olmo2", "olmo3", "olmoe", "deepseek_v2", "deepseek_v3", "glm", "glm4", "glm4_moe", "glm4_moe_lite",
    "granite", "granitemoe", "granitemoeshared", "starcoder2", "cohere", "cohere2", "gpt_oss", "llama4",
    "llama4_text", "smollm3", "ernie4_5", "ernie4_5_moe", "phimoe", "seed_oss", "helium", "internlm3",
    "ministral3", "arcee", "exaone4", "apertus", "qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text",
    "qwen3_vl_moe_text"})


class _Reader:
    """Typed look-ups into one (text) config dict, each a SeqprofError on a damaged value."""

    def __init__(self, cfg: Mapping[str, Any], source: str) -> None:
        self.cfg, self.source = cfg, source

    def size(self, *keys: str, default: int = 0) -> int:
        return _count(_first(self.cfg, *keys, default=default), keys[0], self.source, zero_ok=True)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.cfg.get(key)
        return default if value is None else bool(value)

    def indices(self, key: str) -> frozenset[int]:
        value = self.cfg.get(key)
        return frozenset(i for i in value if isinstance(i, int)) if isinstance(value, list) else frozenset()


def _layer_kinds(r: _Reader, n: int) -> list[str]:
    """Each layer's mixer: the config's layer_types, else what full_attention_interval implies, else full."""
    kinds = r.cfg.get("layer_types")
    if isinstance(kinds, list) and len(kinds) == n and all(isinstance(k, str) for k in kinds):
        return list(kinds)
    # Qwen3_5TextConfig / Qwen3NextConfig.__post_init__: no layer_types means one full-attention layer in 4
    hybrid = str(r.cfg.get("model_type", "")).startswith(("qwen3_5", "qwen3_next"))
    every = r.size("full_attention_interval", default=4 if hybrid else 0)
    if every:
        return ["full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(n)]
    return ["full_attention"] * n


def _attention(a: Architecture, r: _Reader) -> tuple[list[Linear], int]:
    """The attention block's matrices and other weights (LlamaAttention and its variants)."""
    t, h = a.model_type, a.hidden_size
    if r.cfg.get("kv_lora_rank"):  # DeepseekV2Attention / DeepseekV3Attention: multi-head latent attention
        qk_nope, qk_rope = r.size("qk_nope_head_dim"), r.size("qk_rope_head_dim")
        qk_head, v_head, kv_rank = qk_nope + qk_rope, r.size("v_head_dim"), r.size("kv_lora_rank")
        q_rank, bias = r.size("q_lora_rank"), r.flag("attention_bias")
        out = ([Linear("q_a_proj", h, q_rank, bias), Linear("q_b_proj", q_rank, a.num_heads * qk_head)] if q_rank
               else [Linear("q_proj", h, a.num_heads * qk_head)])
        out += [Linear("kv_a_proj_with_mqa", h, kv_rank + qk_rope, bias),
                Linear("kv_b_proj", kv_rank, a.num_heads * (qk_nope + v_head)),
                Linear("o_proj", a.num_heads * v_head, h, bias)]
        return out, q_rank + kv_rank
    gated = r.flag("attn_output_gate", t in {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})
    q_out = a.q_dim * (2 if gated else 1)  # Qwen3NextAttention: q_proj also yields the output gate
    bias = r.flag("attention_bias") or r.flag("use_bias")
    qkv_bias = a.qkv_bias or t in _QKV_BIAS_ALWAYS or (t == "starcoder2" and r.flag("use_bias", True))
    o_bias = bias and t not in _QKV_BIAS_ONLY and t not in _QKV_BIAS_ALWAYS
    if t == "seed_oss":
        o_bias = r.flag("attention_out_bias")
    if t in _FUSED_QKV:
        out = [Linear("qkv_proj", h, q_out + 2 * a.kv_dim, qkv_bias)]
    else:
        out = [Linear("q_proj", h, q_out, qkv_bias), Linear("k_proj", h, a.kv_dim, qkv_bias),
               Linear("v_proj", h, a.kv_dim, qkv_bias)]
    out.append(Linear("o_proj", a.q_dim, h, o_bias))
    other = 0
    if t in _QK_NORM_HEAD or (t in {"glm4_moe", "ernie4_5_moe"} and r.flag("use_qk_norm")):
        other += 2 * a.head_dim
    elif t in _QK_NORM_FULL:
        other += a.q_dim + a.kv_dim
    elif t in {"cohere", "cohere2"} and r.flag("use_qk_norm"):  # CohereLayerNorm((heads, head_dim))
        other += a.q_dim + a.kv_dim
    if t == "gpt_oss":  # GptOssAttention.sinks: one learned logit per head
        other += a.num_heads
    return out, other


def _linear_attention(a: Architecture, r: _Reader) -> tuple[list[Linear], int]:
    """Qwen3NextGatedDeltaNet / Qwen3_5GatedDeltaNet: fused or split input projections, a depthwise conv,
    per-value-head A_log and dt_bias, an RMSNorm over the value head."""
    h = a.hidden_size
    nk, nv = r.size("linear_num_key_heads"), r.size("linear_num_value_heads")
    dk, dv = r.size("linear_key_head_dim"), r.size("linear_value_head_dim")
    key_dim, value_dim = nk * dk, nv * dv
    conv_dim = 2 * key_dim + value_dim
    if a.model_type == "qwen3_next":
        out = [Linear("in_proj_qkvz", h, 2 * key_dim + 2 * value_dim), Linear("in_proj_ba", h, 2 * nv)]
    else:
        out = [Linear("in_proj_qkv", h, conv_dim), Linear("in_proj_z", h, value_dim), Linear("in_proj_b", h, nv),
               Linear("in_proj_a", h, nv)]
    out.append(Linear("out_proj", value_dim, h))
    return out, conv_dim * r.size("linear_conv_kernel_dim", default=4) + 2 * nv + dv


def _is_moe_layer(a: Architecture, r: _Reader, i: int) -> bool:
    """Which layers hold experts (Qwen3MoeDecoderLayer, DeepseekV3DecoderLayer, Llama4TextDecoderLayer, ...)."""
    if not a.num_experts:
        return False
    t = a.model_type
    kinds = r.cfg.get("mlp_layer_types")  # Glm4MoeLiteConfig, DeepseekV32Config: "dense" / "sparse" per layer
    if isinstance(kinds, list) and len(kinds) == a.num_layers:
        return kinds[i] in {"sparse", "moe"}
    if t in {"llama4", "llama4_text"}:
        return i in r.indices("moe_layers") if isinstance(r.cfg.get("moe_layers"), list) else \
            (i + 1) % max(r.size("interleave_moe_layer_step", default=1), 1) == 0
    if t == "ernie4_5_moe":
        end = r.size("moe_layer_end_index", default=a.num_layers - 1)
        end = a.num_layers - 1 if end < 0 else end
        return ((i + 1) % max(r.size("moe_layer_interval", default=1), 1) == 0
                and r.size("moe_layer_start_index") <= i <= end)
    if "first_k_dense_replace" in r.cfg:
        freq = max(r.size("moe_layer_freq", default=1), 1)
        return i >= r.size("first_k_dense_replace") and (t != "deepseek_v2" or i % freq == 0)
    if i in r.indices("mlp_only_layers"):
        return False
    return (i + 1) % max(r.size("decoder_sparse_step", default=1), 1) == 0


def _mlp(a: Architecture, r: _Reader, moe: bool) -> list[Linear]:
    """The feed-forward block: dense (gated, fused or plain) or experts with their router and shared experts."""
    t, h = a.model_type, a.hidden_size
    bias = r.flag("mlp_bias") or (t == "starcoder2" and r.flag("use_bias", True))
    if not moe:
        f = a.intermediate_size
        if t in {"llama4", "llama4_text"}:
            f = r.size("intermediate_size_mlp", default=f)
        if t == "apertus":  # ApertusMLP: up/down with a xIELU activation holding alpha_p and alpha_n
            return [Linear("up_proj", h, f, bias), Linear("down_proj", f, h, bias)]
        if t in _PLAIN_MLP:
            return [Linear("c_fc" if t == "starcoder2" else "up_proj", h, f, bias),
                    Linear("c_proj" if t == "starcoder2" else "down_proj", f, h, bias)]
        if t in _FUSED_GATE_UP:
            return [Linear("gate_up_proj", h, 2 * f, bias), Linear("down_proj", f, h, bias)]
        return [Linear("gate_proj", h, f, bias), Linear("up_proj", h, f, bias), Linear("down_proj", f, h, bias)]
    e, fe = a.num_experts, a.moe_intermediate_size or a.intermediate_size
    expert_bias = t == "gpt_oss"  # GptOssExperts: gate_up_proj_bias, down_proj_bias
    out = [Linear(_ROUTER_NAME.get(t, "gate"), h, e, t == "gpt_oss"),
           Linear("gate_proj", h, fe, expert_bias, count=e), Linear("up_proj", h, fe, expert_bias, count=e),
           Linear("down_proj", fe, h, expert_bias, count=e)]
    if t in {"llama4", "llama4_text"}:  # Llama4TextMoe.shared_expert, intermediate_size wide
        fs, prefix = a.intermediate_size, "shared_expert."
    elif a.shared_expert_intermediate_size:  # Qwen2MoeSparseMoeBlock: shared_expert and its sigmoid gate
        fs, prefix = a.shared_expert_intermediate_size, "shared_expert."
    elif t == "granitemoeshared":
        fs = r.size("shared_intermediate_size")
        if fs:
            out += [Linear("shared_mlp.input_linear", h, 2 * fs), Linear("shared_mlp.output_linear", fs, h)]
        return out
    else:  # DeepseekV3MoE / Glm4MoeMoE / Ernie4_5_MoeSparseMoeBlock: n shared experts fused into one MLP
        fs = r.size("n_shared_experts", "moe_num_shared_experts") * fe
        prefix = "shared_experts."
    if fs:
        out += [Linear(prefix + "gate_proj", h, fs), Linear(prefix + "up_proj", h, fs),
                Linear(prefix + "down_proj", fs, h)]
    if a.shared_expert_intermediate_size and t not in {"llama4", "llama4_text"}:
        out.append(Linear("shared_expert_gate", h, 1))
    return out


def _norm_params(a: Architecture) -> int:
    per = _NORMS_PER_LAYER.get(a.model_type, 2) * a.hidden_size
    return per * 2 if a.model_type in _LAYERNORM_BIAS else per


def _build_layers(a: Architecture, r: _Reader) -> tuple[tuple[Layer, ...], tuple[int, ...]]:
    specs: dict[Layer, int] = {}
    pattern = []
    kinds = _layer_kinds(r, a.num_layers)
    for i, kind in enumerate(kinds):
        if kind == "linear_attention" and a.model_type in {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                                                            "qwen3_5_moe_text"}:
            mixer, other = _linear_attention(a, r)
        else:
            mixer, other = _attention(a, r)
        moe = _is_moe_layer(a, r, i)
        extra = a.num_experts if moe and a.model_type == "ernie4_5_moe" else 0  # moe_statics.e_score_correction_bias
        extra += 2 if a.model_type == "apertus" else 0  # XIELUActivation.alpha_p, alpha_n
        layer = Layer(kind, tuple(mixer + _mlp(a, r, moe)), other + extra + _norm_params(a),
                      a.num_experts if moe else 0, a.num_experts_per_tok if moe else 0)
        pattern.append(specs.setdefault(layer, len(specs)))
    return tuple(specs), tuple(pattern)


def architecture_from_config(cfg: Mapping[str, Any], source: str = "") -> Architecture:
    """A parsed config.json (dict) -> Architecture; multimodal configs are read from their text_config."""
    top = cfg
    cfg = text_model_config(cfg)
    model_type = str(cfg.get("model_type") or top.get("model_type") or "unknown")
    required = {"num_hidden_layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "decoder_layers"),
                "hidden_size": ("hidden_size", "n_embd", "d_model", "dim"),
                "num_attention_heads": ("num_attention_heads", "n_head", "n_heads", "decoder_attention_heads"),
                "vocab_size": ("vocab_size",)}
    got = {}
    for name, keys in required.items():
        value = _first(cfg, *keys)
        if value is None:
            raise SeqprofError(f"config has no {name}", path=source or None,
                               fix="pass the model's own config.json with --model-config")
        got[name] = _count(value, name, source)

    def size(*keys: str, default: int, zero_ok: bool = True) -> int:
        return _count(_first(cfg, *keys, default=default), keys[0], source, zero_ok=zero_ok)

    h, heads = got["hidden_size"], got["num_attention_heads"]
    head_dim = size("head_dim", default=0) or h // heads
    kv_heads = size("num_key_value_heads", "num_kv_heads", default=heads, zero_ok=False)
    experts = size("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", default=0)
    inter = size("intermediate_size", "n_inner", "ffn_dim", default=4 * h)
    tie = cfg.get("tie_word_embeddings")
    if tie is None:
        tie = _TIE_DEFAULTS.get(model_type, True)
    act = str(_first(cfg, "hidden_act", "hidden_activation", "activation_function", default="silu"))
    gated = model_type not in {"gpt2", "gpt_neox", "opt", "bloom", "falcon"} or "glu" in act
    arch = Architecture(
        model_type=model_type, num_layers=got["num_hidden_layers"], hidden_size=h, num_heads=heads,
        num_kv_heads=kv_heads, head_dim=head_dim, intermediate_size=inter, vocab_size=got["vocab_size"],
        tie_word_embeddings=bool(tie),
        qkv_bias=bool(cfg.get("attention_bias", model_type in _QKV_BIAS_TYPES)) or model_type in _QKV_BIAS_ALWAYS,
        qk_norm=model_type in _QK_NORM_TYPES, gated_mlp=gated, num_experts=experts,
        num_experts_per_tok=size("num_experts_per_tok", "moe_topk", "moe_k", default=0) if experts else 0,
        moe_intermediate_size=size("moe_intermediate_size", default=0) if experts else 0,
        shared_expert_intermediate_size=size("shared_expert_intermediate_size", default=0),
        source=source)
    return _with_layers(arch, _Reader(cfg, source), top)


def _with_layers(a: Architecture, r: _Reader, top: Mapping[str, Any]) -> Architecture:
    """`a` with every layer, the parts outside the layers, and notes on what is not (or cannot be) counted."""
    specs, pattern = _build_layers(a, r)
    final_norm = a.hidden_size * (2 if a.model_type in _LAYERNORM_BIAS else 1)
    other: list[tuple[str, int]] = [("norm", final_norm)]
    if r.flag("lm_head_bias"):  # PhimoeForCausalLM: lm_head = nn.Linear(..., bias=config.lm_head_bias)
        other.append(("lm_head.bias", a.vocab_size))
    unmodelled, notes = [], []
    if a.model_type not in MODELLED:
        unmodelled.append(f"seqprof does not model {a.model_type}'s layers exactly (counted as a Llama-style "
                          "decoder), so parameter counts and memory are approximate")
    mtp = r.size("mtp_num_hidden_layers", "num_nextn_predict_layers", default=0)
    if mtp:
        notes.append(f"the {mtp} multi-token-prediction layer{'s' if mtp > 1 else ''} config.json names "
                     "(checkpoint weights) are not built by transformers' model class, so not counted")
    for key, sub in top.items() if top is not r.cfg else ():
        if key.endswith("_config") and key not in {"text_config", "vision_config"} and isinstance(sub, Mapping) \
                and sub.get("model_type"):
            unmodelled.append(f"the {key.removesuffix('_config')} tower ({sub['model_type']}) is not counted")
    vision = top.get("vision_config") if top is not r.cfg else None
    if isinstance(vision, Mapping):
        counted = vision_params(vision, top, a)
        if counted is None:
            unmodelled.append(f"the vision tower ({vision.get('model_type') or 'vision_config'}) is not counted "
                              "(a tower seqprof does not model, or a vision_config without its sizes)")
        else:
            other += counted
    elif top is not r.cfg:
        notes.append("config.json has no vision_config: the vision tower, if the model has one, is not counted")
    gdn = (r.size("linear_num_key_heads"), r.size("linear_num_value_heads"), r.size("linear_key_head_dim"),
           r.size("linear_value_head_dim"), r.size("linear_conv_kernel_dim", default=4))
    rope = r.cfg.get("rope_parameters") if isinstance(r.cfg.get("rope_parameters"), Mapping) else {}
    rotary = rope.get("partial_rotary_factor", r.cfg.get("partial_rotary_factor"))
    if not isinstance(rotary, (int, float)) or isinstance(rotary, bool) or not 0 < rotary <= 1:
        rotary = 0.25 if a.model_type.startswith(("qwen3_5", "qwen3_next")) else 1.0  # Qwen3_5TextConfig's default
    return replace(a, layer_specs=specs, layer_pattern=pattern, other_params=tuple(other),
                   unmodelled="; ".join(unmodelled), notes=tuple(notes),
                   linear_attention_dims=gdn if all(gdn[:4]) else (), partial_rotary_factor=float(rotary),
                   max_position_embeddings=_positive_int(r.cfg.get("max_position_embeddings")))


def _positive_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _dense(d_in: int, d_out: int, bias: bool = True) -> int:
    return d_in * d_out + (d_out if bias else 0)


def vision_params(vision: Mapping[str, Any], top: Mapping[str, Any], a: Architecture) -> list[tuple[str, int]] | None:
    """The vision tower and its projector into the text model, for the towers modelled here; None otherwise."""
    r = _Reader(vision, a.source)
    kind = str(vision.get("model_type") or "")
    needed = {"qwen": ("hidden_size", "intermediate_size", "depth", "num_position_embeddings", "patch_size"),
              "siglip": ("hidden_size", "intermediate_size", "num_hidden_layers", "patch_size", "image_size")}
    if any(vision.get(k) is None for k in needed["siglip" if kind.startswith("siglip") else "qwen"]):
        return None  # a reduced vision_config: transformers would fill class defaults seqprof does not guess
    if kind in {"qwen3_vl_vision", "qwen3_vl_moe_vision", "qwen3_5_vision", "qwen3_5_moe_vision"}:
        # Qwen3VLVisionModel: Conv3d patch embedding, learned positions, pre-norm blocks (LayerNorm, fused qkv),
        # a patch merger over spatial_merge_size**2 patches, and one more merger per deepstack layer.
        h, f, depth = r.size("hidden_size"), r.size("intermediate_size"), r.size("depth")
        merged = h * r.size("spatial_merge_size", default=2) ** 2
        out = r.size("out_hidden_size", default=a.hidden_size)
        patch = r.size("in_channels", default=3) * r.size("temporal_patch_size", default=2) \
            * r.size("patch_size", default=16) ** 2
        block = 4 * h + _dense(h, 3 * h) + _dense(h, h) + _dense(h, f) + _dense(f, h)
        merger = _dense(merged, merged) + _dense(merged, out)
        stack = vision.get("deepstack_visual_indexes") or []
        return [("visual.patch_embed", _dense(patch, h)), ("visual.pos_embed", r.size("num_position_embeddings") * h),
                ("visual.blocks", depth * block), ("visual.merger", 2 * h + merger),
                ("visual.deepstack_merger_list", len(stack) * (2 * merged + merger))]
    if kind == "siglip_vision_model" and str(top.get("model_type")) == "gemma3":
        # SiglipVisionTransformer (patch and position embeddings, post-norm encoder, attention-pooling head)
        # and Gemma3MultiModalProjector (a bias-free projection after an RMSNorm over the vision width).
        h, f, n = r.size("hidden_size"), r.size("intermediate_size"), r.size("num_hidden_layers")
        c, p = r.size("num_channels", default=3), r.size("patch_size")
        positions = (r.size("image_size", default=224) // p) ** 2
        layer = 4 * h + 4 * _dense(h, h) + _dense(h, f) + _dense(f, h)
        head = h + _dense(h, 3 * h) + _dense(h, h) + 2 * h + _dense(h, f) + _dense(f, h) \
            if r.flag("vision_use_head", True) else 0
        return [("vision_tower.embeddings", _dense(c * p * p, h) + positions * h),
                ("vision_tower.encoder", n * layer), ("vision_tower.post_layernorm", 2 * h),
                ("vision_tower.head", head), ("multi_modal_projector", h * a.hidden_size + h)]
    return None


def read_architecture(path: str | os.PathLike[str]) -> Architecture:
    """Read config.json (a file, or a directory holding one) into an Architecture."""
    cfg, source = read_model_config(path)
    return architecture_from_config(cfg, source=source)


def read_model_config(path: str | os.PathLike[str]) -> tuple[Mapping[str, Any], str]:
    """config.json (a file, or a directory holding one) as a dict, bounded and validated, and its path."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    if not p.exists() and not not_a_regular_file(p):
        raise SeqprofError("no config.json here", path=str(p), fix="pass the model's config.json with --model-config")
    text = read_input_text(p, what="model config.json", limit=MAX_MODEL_CONFIG_BYTES,
                           fix="pass the model's own config.json")
    try:
        cfg = json.loads(text)
    except RecursionError:
        raise SeqprofError("config.json nests too deeply to be a model config", path=str(p),
                           fix="pass the model's own config.json") from None
    except json.JSONDecodeError as exc:
        raise SeqprofError(f"not valid JSON: {exc.msg}", path=str(p), line=exc.lineno,
                           fix="pass the model's own config.json") from None
    if not isinstance(cfg, Mapping):
        raise SeqprofError("config.json is not a JSON object", path=str(p), fix="pass the model's own config.json")
    return cfg, str(p)


def _hub_cache_dirs() -> list[Path]:
    dirs = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]) / "hub")
    dirs.append(Path.home() / ".cache" / "huggingface" / "hub")
    return dirs


def find_model_config(model: str | None) -> Path | None:
    """The config.json for a model name or path, found locally (a directory, or the HF cache), else None."""
    if not model:
        return None
    p = Path(os.path.expanduser(str(model)))
    if p.is_file() and p.suffix == ".json":
        return p
    if (p / "config.json").is_file():
        return p / "config.json"
    if "/" not in str(model) or str(model).startswith((".", "/")):
        return None
    folder = "models--" + str(model).strip("/").replace("/", "--")
    for cache in _hub_cache_dirs():
        snaps = cache / folder / "snapshots"
        if snaps.is_dir():
            found = sorted(snaps.glob("*/config.json"), key=lambda q: q.stat().st_mtime, reverse=True)
            if found:
                return found[0]
    return None


def resolve_architecture(model: str | None, model_config: str | None = None) -> tuple[Architecture | None, str]:
    """--model-config wins, else the plan's model looked up locally; (None, why) when nothing local describes it."""
    if model_config:
        return read_architecture(model_config), f"architecture from {model_config}"
    path = find_model_config(model)
    if path is None:
        if not model:
            return None, "skipped: the config names no model and no --model-config was given"
        return None, (f"skipped: no local config.json for {model!r} (not a directory, not in the HF cache); "
                      "pass --model-config PATH/config.json")
    return read_architecture(path), f"architecture from {path}"
