"""A model's architecture from its config.json (local file, directory or HF cache, never the network)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, not_a_regular_file, read_input_text

MAX_MODEL_CONFIG_BYTES = 8 * MiB  # config.json files are a few KB (a VLM's with its processor, tens of KB)
# Model types whose q/k/v projections carry a bias although their config has no `attention_bias` key.
_QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
# Model types with an RMSNorm over head_dim on q and k (Qwen3 family, OLMo2-style per-head norms, Gemma 3).
_QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe", "gemma3", "gemma3_text",
                            "olmo2", "olmoe"})
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
class Architecture:
    """The shape facts the memory model needs, read from config.json."""

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

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    def layer_linears(self) -> tuple[Linear, ...]:
        """Every weight matrix of one decoder layer, named as peft's target_modules names them."""
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

    def layer_norm_params(self) -> int:
        """RMSNorm weights of one layer: two over hidden, plus q/k norms over head_dim where the model has them."""
        return 2 * self.hidden_size + (2 * self.head_dim if self.qk_norm else 0)

    def layer_params(self) -> int:
        return sum(lin.params for lin in self.layer_linears()) + self.layer_norm_params()

    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    def lm_head_params(self) -> int:
        """0 when tied: the output projection reuses the embedding matrix."""
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    def param_count(self) -> int:
        """All parameters, tied embeddings counted once (what `sum(p.numel() for p in model.parameters())` gives)."""
        return (self.num_layers * self.layer_params() + self.embedding_params() + self.lm_head_params()
                + self.hidden_size)

    def active_param_count(self) -> int:
        """Parameters a token passes through (MoE: only its top-k experts)."""
        if not self.is_moe:
            return self.param_count()
        per_expert = sum(lin.params // lin.count for lin in self.layer_linears() if lin.count > 1)
        idle = (self.num_experts - self.num_experts_per_tok) * per_expert
        return self.param_count() - self.num_layers * idle


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
    """The language model's part of a config.json: a multimodal config's text_config (with the top level's
    tie_word_embeddings), else the config itself."""
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), Mapping):
        text = {**cfg["text_config"]}
        text.setdefault("tie_word_embeddings", cfg.get("tie_word_embeddings"))
        return text
    return cfg


def architecture_from_config(cfg: Mapping[str, Any], source: str = "") -> Architecture:
    """A parsed config.json (dict) -> Architecture; multimodal configs are read from their text_config."""
    top = cfg
    cfg = text_model_config(cfg)
    model_type = str(cfg.get("model_type") or top.get("model_type") or "unknown")
    required = {"num_hidden_layers": ("num_hidden_layers", "n_layer", "num_layers"),
                "hidden_size": ("hidden_size", "n_embd", "d_model"),
                "num_attention_heads": ("num_attention_heads", "n_head"),
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
    experts = size("num_experts", "num_local_experts", "n_routed_experts", default=0)
    inter = size("intermediate_size", "n_inner", "ffn_dim", default=4 * h)
    tie = cfg.get("tie_word_embeddings")
    if tie is None:
        tie = _TIE_DEFAULTS.get(model_type, True)
    act = str(_first(cfg, "hidden_act", "hidden_activation", "activation_function", default="silu"))
    gated = model_type not in {"gpt2", "gpt_neox", "opt", "bloom", "falcon"} or "glu" in act
    return Architecture(
        model_type=model_type, num_layers=got["num_hidden_layers"], hidden_size=h, num_heads=heads,
        num_kv_heads=kv_heads, head_dim=head_dim, intermediate_size=inter, vocab_size=got["vocab_size"],
        tie_word_embeddings=bool(tie),
        qkv_bias=bool(cfg.get("attention_bias", model_type in _QKV_BIAS_TYPES)),
        qk_norm=model_type in _QK_NORM_TYPES, gated_mlp=gated, num_experts=experts,
        num_experts_per_tok=size("num_experts_per_tok", "moe_topk", default=0) if experts else 0,
        moe_intermediate_size=size("moe_intermediate_size", default=0) if experts else 0,
        shared_expert_intermediate_size=size("shared_expert_intermediate_size", default=0),
        source=source)


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
