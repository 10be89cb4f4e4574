"""The architecture reader: real config.json files give the real models' parameter counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import (
    architecture_from_config,
    find_model_config,
    read_architecture,
    resolve_architecture,
)
from seqprof.predict.gpus import gpu_memory_bytes, parse_memory_size

CONFIGS = Path(__file__).resolve().parents[1] / "benchmarks" / "memory" / "configs"

# Published parameter counts (model cards / safetensors metadata), independent of any formula here.
PUBLISHED_EXACT = {
    "llama3.1-8b": 8_030_261_248,
    "llama3.2-1b": 1_235_814_400,
    "llama3.2-3b": 3_212_749_824,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-1.5b": 1_543_714_304,
    "qwen2.5-7b": 7_615_616_512,
}
# Qwen3 cards give counts rounded to 0.1B / 0.01B: "0.6B", "1.7B", "4.0B", "8.2B".
PUBLISHED_ROUNDED = {"qwen3-0.6b": (0.6, 1), "qwen3-1.7b": (1.7, 1), "qwen3-4b": (4.0, 1), "qwen3-8b": (8.2, 1)}


@pytest.mark.parametrize("name,count", sorted(PUBLISHED_EXACT.items()))
def test_param_count_equals_published(name, count):
    assert read_architecture(CONFIGS / f"{name}.json").param_count() == count


@pytest.mark.parametrize("name,rounded", sorted(PUBLISHED_ROUNDED.items()))
def test_qwen3_param_count_rounds_to_published(name, rounded):
    value, digits = rounded
    assert round(read_architecture(CONFIGS / f"{name}.json").param_count() / 1e9, digits) == value


def _brute_force_count(cfg: dict) -> int:
    """Count parameters by listing every tensor a Llama/Qwen checkpoint stores, name by name."""
    h, L, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    hd = cfg.get("head_dim") or h // cfg["num_attention_heads"]
    q, kv, f = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd, cfg["intermediate_size"]
    tensors = {"model.embed_tokens.weight": (V, h), "model.norm.weight": (h,)}
    if not cfg["tie_word_embeddings"]:
        tensors["lm_head.weight"] = (V, h)
    for i in range(L):
        p = f"model.layers.{i}."
        tensors.update({p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
                        p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, q),
                        p + "mlp.gate_proj.weight": (f, h), p + "mlp.up_proj.weight": (f, h),
                        p + "mlp.down_proj.weight": (h, f), p + "input_layernorm.weight": (h,),
                        p + "post_attention_layernorm.weight": (h,)})
        if cfg["model_type"] == "qwen2":
            tensors.update({p + "self_attn.q_proj.bias": (q,), p + "self_attn.k_proj.bias": (kv,),
                            p + "self_attn.v_proj.bias": (kv,)})
        if cfg["model_type"] == "qwen3":
            tensors.update({p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,)})
    total = 0
    for shape in tensors.values():
        n = 1
        for d in shape:
            n *= d
        total += n
    return total


# the listing above is a Llama / Qwen2 / Qwen3 checkpoint's; Gemma 3 and Qwen3.5 (hybrid) are counted against
# transformers' own builds in tests/test_param_counts.py and against the GPU's in test_memory_hybrid_measured.py
DENSE = sorted(p for p in CONFIGS.glob("*.json")
               if json.loads(p.read_text())["model_type"] in ("llama", "qwen2", "qwen3"))


@pytest.mark.parametrize("path", DENSE, ids=lambda p: p.stem)
def test_param_count_equals_tensor_listing(path):
    cfg = json.loads(path.read_text())
    assert read_architecture(path).param_count() == _brute_force_count(cfg)


def test_shape_facts_of_a_real_config():
    a = read_architecture(CONFIGS / "qwen3-8b.json")
    assert (a.num_layers, a.hidden_size, a.num_heads, a.num_kv_heads, a.head_dim) == (36, 4096, 32, 8, 128)
    assert (a.intermediate_size, a.vocab_size, a.tie_word_embeddings, a.qk_norm) == (12288, 151936, False, True)
    # head_dim is not hidden/heads for Qwen3-0.6B (1024 / 16 = 64, but 128)
    small = read_architecture(CONFIGS / "qwen3-0.6b.json")
    assert small.head_dim == 128 and small.q_dim == 2048 != small.hidden_size


def test_nested_text_config_and_defaults(tmp_path):
    cfg = {"model_type": "some_vlm", "tie_word_embeddings": False,
           "text_config": {"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2,
                           "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128}}
    a = architecture_from_config(cfg)
    assert (a.model_type, a.num_kv_heads, a.head_dim, a.tie_word_embeddings) == ("qwen3", 4, 16, False)


def test_moe_counts_experts_and_active_share():
    cfg = {"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "intermediate_size": 256,
           "moe_intermediate_size": 32, "num_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": False}
    a = architecture_from_config(cfg)
    attn = 64 * 64 + 2 * 64 * 32 + 64 * 64
    experts = 8 * 3 * 64 * 32
    router = 64 * 8
    norms = 2 * 64 + 2 * 16
    assert a.param_count() == 2 * (attn + experts + router + norms) + 2 * 100 * 64 + 64
    assert a.active_param_count() == a.param_count() - 2 * 6 * 3 * 64 * 32


def test_missing_fields_and_bad_json_are_input_errors(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{"hidden_size": 8,\n "oops" }')
    with pytest.raises(SeqprofError) as err:
        read_architecture(tmp_path)
    assert err.value.line == 2 and err.value.path == str(bad)
    bad.write_text(json.dumps({"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 10}))
    with pytest.raises(SeqprofError, match="num_hidden_layers"):
        read_architecture(bad)


def test_hf_cache_lookup_and_skip_note(tmp_path, monkeypatch):
    snap = tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text((CONFIGS / "qwen3-8b.json").read_text())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert find_model_config("Qwen/Qwen3-8B") == snap / "config.json"
    arch, why = resolve_architecture("Qwen/Qwen3-8B")
    assert arch is not None and arch.num_layers == 36 and "abc123" in why
    arch, why = resolve_architecture("Nobody/Nothing-1B")
    assert arch is None and why.startswith("skipped") and "--model-config" in why
    arch, why = resolve_architecture(None)
    assert arch is None and "no model" in why


def test_gpu_sizes():
    assert parse_memory_size("80GB") == 80 * 10**9
    assert parse_memory_size("80GiB") == 80 * 2**30
    assert parse_memory_size("96 gib") == 96 * 2**30
    assert parse_memory_size("81559MiB") == 81559 * 2**20
    name, size = gpu_memory_bytes("h200")
    assert name == "H200 141GB" and size == 143771 * 2**20  # what nvidia-smi reported on the measuring H200
    assert gpu_memory_bytes("NVIDIA A100 40GB")[1] == 40960 * 2**20
    assert gpu_memory_bytes("RTX PRO 6000")[0] == "RTX PRO 6000 96GB"
    assert gpu_memory_bytes("L40S")[1] < gpu_memory_bytes("H100")[1]
    with pytest.raises(SeqprofError, match="unknown GPU"):
        gpu_memory_bytes("Voodoo 5")
    with pytest.raises(SeqprofError):
        parse_memory_size("lots")


def _measured_counts():
    tables = sorted((CONFIGS.parent).glob("measured_h200*.json"))
    for table in tables:
        for r in json.loads(table.read_text())["results"]:
            if isinstance(r.get("params_counted"), int) and "lora" not in r["name"]:
                yield r


@pytest.mark.parametrize("result", list(_measured_counts()), ids=lambda r: r["name"])
def test_param_count_equals_the_model_built_on_the_h200(result):
    """sum(p.numel()) of the model transformers built on the GPU (benchmarks/memory/harness.py), MoE included."""
    import sys
    sys.path.insert(0, str(CONFIGS.parent))
    from scenarios import by_name
    assert by_name(result["name"]).architecture().param_count() == result["params_counted"]
