"""Parameter counts from config.json alone equal what transformers builds (`from_config` on the meta device).

tests/data/param_counts.json holds, for every causal-LM model_type of transformers 5.24 (and the
image-text-to-text types people fine-tune), a real-shaped config and `sum(p.numel())` of the model built
from it (scripts/gen_param_counts.py): the independent figure. Types seqprof cannot count exactly yet are
listed in NOT_EXACT with the reason; for those seqprof must say so (Architecture.unmodelled), never give
a silently wrong figure.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import architecture_from_config, read_architecture

ROOT = Path(__file__).resolve().parents[1]
RECORD = json.loads((ROOT / "tests" / "data" / "param_counts.json").read_text())
BUILT = {key: entry for key, entry in RECORD["models"].items() if "params" in entry}

_ENCODER = "a BERT-style or encoder-decoder layout (learned positions, LayerNorm biases, cross-attention)"
_GPT2 = "a GPT-2/NeoX-style layout (fused or biased projections, LayerNorm with bias, learned positions)"
_RECURRENT = "state-space, recurrent or hybrid mixer layers (Mamba, RWKV, xLSTM, linear attention) not modelled"
_VISION = "a vision or audio tower seqprof does not count (only Qwen3-VL/3.5 and Gemma 3 towers are modelled)"
_OTHER = "a layer layout (extra norms, MoE variant, attention variant) not modelled yet"
NOT_EXACT = {
    **dict.fromkeys(('bert', 'bert-generation', 'big_bird', 'bigbird_pegasus', 'camembert', 'data2vec-text', 'electra', 'ernie', 'megatron-bert', 'rembert', 'roberta', 'roberta-prelayernorm', 'roc_bert', 'roformer', 'xlm', 'xlm-roberta', 'xlm-roberta-xl', 'xmod', 'bart', 'blenderbot', 'blenderbot-small', 'marian', 'mbart', 'mvp', 'pegasus', 'plbart', 'trocr', 'whisper', 'xglm', 'xlnet', 'cpmant', 'git', 'biogpt'), _ENCODER),
    **dict.fromkeys(('gpt2', 'gpt-sw3', 'gpt_bigcode', 'gpt_neo', 'gpt_neox', 'gpt_neox_japanese', 'gptj', 'codegen', 'openai-gpt', 'opt', 'bloom', 'falcon', 'mpt', 'phi', 'persimmon', 'stablelm', 'ctrl', 'jais2', 'nanochat', 'olmo', 'modernbert-decoder'), _GPT2),
    **dict.fromkeys(('bamba', 'falcon_h1', 'falcon_mamba', 'granitemoehybrid', 'jamba', 'kimi_linear', 'lfm2', 'lfm3', 'mamba', 'mamba2', 'nemotron_h', 'olmo_hybrid', 'recurrent_gemma', 'rwkv', 'xlstm', 'zamba2', 'bailing_hybrid', 'minimax', 'blt', 'hrm_text', 'zaya', 'doge'), _RECURRENT),
    **dict.fromkeys(('qwen2_vl+vlm', 'qwen2_5_vl+vlm', 'llama4', 'llama4+vlm', 'mistral3+vlm', 'llava+vlm', 'paligemma+vlm', 'idefics3+vlm', 'smolvlm+vlm', 'internvl+vlm', 'mllama', 'phi4_multimodal', 'got_ocr2', 'emu3', 'fuyu', 'moss_transcribe_diarize', 'moshi'), _VISION),
    **dict.fromkeys(('afmoe', 'apertus1p5_text', 'aria_text', 'axk1', 'axk2', 'beam', 'bitnet', 'cohere2_moe', 'cwm', 'deepseek_v32', 'deepseek_v4', 'diffllama', 'dory', 'dots3_note_text', 'exaone', 'exaone_moe', 'flex_olmo', 'flint', 'gemma4_text', 'gemma4_unified_text', 'glm_moe_dsa', 'granite_swa', 'granitemoe_swa', 'hy_v3', 'hy_v4', 'hyperclovax', 'inkling2_loop_text', 'inkling2_text', 'inkling_text', 'iquestcoder', 'jetmoe', 'kolibri1', 'laguna', 'lara_mini', 'longcat_flash', 'mellum', 'mimo_v2_flash', 'minicpm3', 'minimax_m2', 'minimax_m3_vl_text', 'sarvam_mla', 'sarvam_moe', 'solar_open', 'vaultgemma', 'youtu'), _OTHER),
}

# Five families the live check rebuilds with transformers: dense, MoE with shared experts and dense first
# layers, hybrid linear attention, a vision tower, sliding/full attention with per-head norms.
LIVE = ("llama", "deepseek_v3", "qwen3_next", "qwen3_5+vlm", "gemma3_text")


def _vision_built(entry: dict) -> bool:
    """Whether the recorded model class built the config's vision tower (AutoModelForCausalLM on Qwen3.5 does not)."""
    return any("visual" in name or "vision_tower" in name for name in entry["modules"])


def _counted(entry: dict) -> tuple[int, str]:
    arch = architecture_from_config(entry["config"])
    return arch.param_count(vision=_vision_built(entry)), arch.unmodelled


def _cases():
    for key in sorted(BUILT):
        marks = [pytest.mark.xfail(reason=NOT_EXACT[key], strict=True)] if key in NOT_EXACT else []
        yield pytest.param(key, marks=marks, id=key)


@pytest.mark.parametrize("key", list(_cases()))
def test_count_equals_transformers(key):
    """Exact, and seqprof claims exactness (no `unmodelled` note)."""
    count, unmodelled = _counted(BUILT[key])
    assert (count, unmodelled) == (BUILT[key]["params"], "")


@pytest.mark.parametrize("key", sorted(NOT_EXACT))
def test_an_inexact_count_says_so(key):
    """Where seqprof is not exact it names what it cannot model, in one line, or the config is refused in one."""
    try:
        count, unmodelled = _counted(BUILT[key])
    except SeqprofError as exc:
        assert "\n" not in exc.message
        return
    assert count == BUILT[key]["params"] or (unmodelled and "\n" not in unmodelled)


def test_every_built_type_is_checked_and_the_list_is_current():
    assert set(NOT_EXACT) <= set(BUILT)
    assert len(BUILT) - len(NOT_EXACT) >= 50  # the families people fine-tune, exact
    for must in ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next",
                 "qwen3_5_text", "qwen3_5_moe_text", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3", "olmo2",
                 "olmoe", "deepseek_v2", "deepseek_v3", "glm4", "glm4_moe", "granite", "granitemoe", "starcoder2",
                 "cohere", "gpt_oss", "llama4_text", "smollm3", "ernie4_5", "ernie4_5_moe"):
        assert must in BUILT and must not in NOT_EXACT, must


def test_the_story_model_counts_hybrid_layers_and_says_what_is_not_built():
    """Qwen3.6-27B: 48 Gated DeltaNet + 16 gated-attention layers, as Qwen3_5ForCausalLM builds them.

    Independent figure: transformers 5.24 `Qwen3_5ForCausalLM` from this config's text_config on the meta
    device gives 26,895,998,464 (the language model; the file has no vision_config); the MTP layer
    (mtp_num_hidden_layers: 1) is not built by transformers, so it is named in a note, not counted."""
    arch = read_architecture(ROOT / "tests" / "data" / "model_configs" / "Qwen3.6-27B")
    assert arch.param_count() == 26_895_998_464
    kinds = [layer.kind for layer in arch.layers()]
    assert kinds.count("linear_attention") == 48 and kinds.count("full_attention") == 16
    assert {lin.name for lin in arch.layer_linears()} >= {"q_proj", "k_proj", "v_proj", "o_proj"}
    assert {lin.name for lin in arch.layers()[0].linears} >= {"in_proj_qkv", "in_proj_z", "out_proj"}
    assert any("multi-token-prediction" in n for n in arch.notes) and any("vision" in n for n in arch.notes)
    assert arch.unmodelled == ""


def test_active_params_of_a_moe_with_dense_first_layers():
    """DeepSeek-V3 shape: only the MoE layers' idle experts drop out of the active count."""
    entry = BUILT["deepseek_v3"]
    arch = architecture_from_config(entry["config"])
    cfg = entry["config"]
    moe_layers = cfg["num_hidden_layers"] - cfg["first_k_dense_replace"]
    expert = 3 * cfg["hidden_size"] * cfg["moe_intermediate_size"]
    idle = (cfg["n_routed_experts"] - cfg["num_experts_per_tok"]) * expert
    assert arch.active_param_count() == entry["params"] - moe_layers * idle
    assert sum(layer.is_moe for layer in arch.layers()) == moe_layers


def _generator():
    spec = importlib.util.spec_from_file_location("gen_param_counts", ROOT / "scripts" / "gen_param_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("key", LIVE)
def test_live_rebuild_matches_the_record(key):
    """With torch and transformers importable, rebuild from the same recipe: the record is not stale."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if transformers.__version__ != RECORD["transformers"]:
        pytest.skip(f"recorded with transformers {RECORD['transformers']}, {transformers.__version__} installed")
    model_type, _, vlm = key.partition("+")
    entry = _generator().record(model_type, bool(vlm))
    assert entry["params"] == BUILT[key]["params"] == _counted(entry)[0]
