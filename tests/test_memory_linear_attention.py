"""The Gated DeltaNet layer of the memory model against the real transformers module.

What autograd keeps for backward is read off the real Qwen3_5GatedDeltaNet (transformers' torch path: no fla,
no causal-conv1d) with torch.autograd.graph.saved_tensors_hooks, deduplicated by storage, parameters and the
layer's input left out, and compared with seqprof's count. The CI venv has no torch, so that part skips there;
it runs in a venv with torch (CPU) and transformers >= 5.17:

    PYTHONPATH=. /tmp/trlvenv/bin/python -m pytest tests/test_memory_linear_attention.py -q

The rest (reference counts, gradients left) needs no torch.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from seqprof.predict.architecture import architecture_from_config, read_architecture
from seqprof.predict.memory import TrainingSetup, estimate_memory
from seqprof.predict.memory.activations import ACT, layer_backward, layer_forward, step_context
from seqprof.predict.memory.allocator import Allocator
from seqprof.predict.memory.linear_attention import gdn_saved_bytes

CONFIGS = Path(__file__).resolve().parents[1] / "benchmarks" / "memory" / "configs"
LORA = dict(adapter="lora", lora_targets=("q_proj",))  # adapters on the attention layers: the GDN layer is frozen


def _config(nk: int, nv: int) -> dict:
    """Qwen3.5's head sizes (128, conv kernel 4) on a narrow model: nv / nk = 2 as in Qwen3.5-9B, or 1."""
    return dict(model_type="qwen3_5_text", hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
                layer_types=["linear_attention"] * 3 + ["full_attention"], num_attention_heads=4,
                num_key_value_heads=2, head_dim=128, linear_num_key_heads=nk, linear_num_value_heads=nv,
                linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4, vocab_size=1000)


def _measured_saved_bytes(cfg: dict, batch: int, seq: int, trainable: bool) -> int:
    """Bytes the real module's forward hands autograd to keep (bf16 on CPU), each storage once."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import AutoConfig
    from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen3_5

    if importlib.util.find_spec("fla") or importlib.util.find_spec("causal_conv1d"):
        pytest.skip("fla / causal-conv1d installed: transformers would not take the torch path")
    torch.manual_seed(0)
    module = qwen3_5.Qwen3_5GatedDeltaNet(AutoConfig.for_model(**cfg), 0).to(torch.bfloat16)
    module.requires_grad_(trainable)
    x = torch.randn(batch, seq, cfg["hidden_size"], dtype=torch.bfloat16, requires_grad=True)
    skip = {p.untyped_storage().data_ptr() for p in module.parameters()} | {x.untyped_storage().data_ptr()}
    kept: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in skip:
            kept[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        module(x)
    return sum(kept.values())


@pytest.mark.parametrize(("nk", "nv", "batch", "seq", "setup"), [
    (4, 8, 2, 200, {}),  # full fine-tune, q/k repeated to the value heads, the sequence padded to 4 chunks
    (4, 8, 2, 200, LORA),  # frozen weights: no weight-gradient inputs kept
    (4, 4, 1, 256, {}),  # no repeat, whole chunks
], ids=["full-repeat-padded", "frozen", "full-whole-chunks"])
def test_saved_bytes_match_the_transformers_module(nk, nv, batch, seq, setup):
    cfg = _config(nk, nv)
    measured = _measured_saved_bytes(cfg, batch, seq, trainable=not setup)
    cx = step_context(architecture_from_config(cfg), TrainingSetup(micro_batch_size=batch, seq_len=seq, **setup))
    predicted = gdn_saved_bytes(cx, with_input=False)
    # seqprof leaves out the few tensors of a head count's size (A_log.exp(), the causal mask: < 5 KB here)
    # and rounds each block to 512 bytes
    assert predicted == pytest.approx(measured, rel=2e-3), (predicted, measured)


def _measured_layer_saved_bytes(cfg: dict, index: int, batch: int, seq: int, trainable: bool) -> int:
    """The same for a whole Qwen3_5DecoderLayer (eager attention: the kernel torch runs on any device), its
    rotary cos/sin left out with the parameters and the input."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import AutoConfig
    from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen3_5

    config = AutoConfig.for_model(**cfg)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    layer = qwen3_5.Qwen3_5DecoderLayer(config, index).to(torch.bfloat16)
    layer.requires_grad_(trainable)
    x = torch.randn(batch, seq, cfg["hidden_size"], dtype=torch.bfloat16, requires_grad=True)
    cos, sin = qwen3_5.Qwen3_5TextRotaryEmbedding(config)(x, torch.arange(seq)[None].expand(3, batch, seq))
    skip = {t.untyped_storage().data_ptr() for t in (*layer.parameters(), x, cos, sin)}
    kept: dict[int, int] = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in skip:
            kept[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x, position_embeddings=(cos, sin))
    return sum(kept.values())


@pytest.mark.parametrize(("index", "setup"), [(0, {}), (0, LORA), (3, {})],
                         ids=["gated-deltanet", "gated-deltanet-frozen", "gated-attention"])
def test_decoder_layer_saved_bytes_match_transformers(index, setup):
    """Both kinds of Qwen3.5 decoder layer: zero-centred RMSNorms (fp32 kept), the attention's output gate, q/k
    norms and partial rotary, the MLP, and the Gated DeltaNet inside its layer."""
    cfg, batch, seq = _config(4, 8), 2, 200
    measured = _measured_layer_saved_bytes(cfg, index, batch, seq, trainable=not setup)
    arch = architecture_from_config(cfg)
    cx = step_context(arch, TrainingSetup(micro_batch_size=batch, seq_len=seq, attn_implementation="eager", **setup))
    sim = Allocator()
    x = sim.new(ACT, 2 * arch.hidden_size * cx.n)
    out, _ = layer_forward(sim, cx, arch.layers()[index], x, True, keep=True)
    sim.drop(out, x)
    predicted = sim.total - (x.n if x.refs else 0)
    assert predicted == pytest.approx(measured, rel=2e-3), (predicted, measured)


@pytest.fixture(scope="module")
def qwen35():
    return read_architecture(CONFIGS / "qwen3.5-9b.json")


@pytest.mark.parametrize("setup", [
    TrainingSetup(micro_batch_size=1, seq_len=4096),
    TrainingSetup(micro_batch_size=2, seq_len=1000, adapter="lora", lora_targets=("all-linear",)),
], ids=["full", "lora"])
def test_every_layer_kind_frees_what_it_kept(qwen35, setup):
    """Forward + backward of a Gated DeltaNet and of a gated-attention layer leave only their gradients; a full
    fine-tune's are exactly the layer's parameters in bf16 (conv, A_log, dt_bias and norms included)."""
    cx = step_context(qwen35, setup)
    for layer in dict.fromkeys(qwen35.layers()):
        sim = Allocator()
        x = sim.new(ACT, 2 * qwen35.hidden_size * cx.n)
        out, saved = layer_forward(sim, cx, layer, x, True, keep=True)
        sim.drop(out, x)
        layer_backward(sim, cx, layer, saved, persistent_grads=False)
        left = {k: v for k, v in sim.live.items() if v}
        assert set(left) <= {"gradients"}, (layer.kind, left)
        if setup.adapter is None:
            assert left["gradients"] == pytest.approx(2 * layer.params, rel=1e-4), layer.kind


def test_the_estimate_names_the_path_it_assumes(qwen35):
    est = estimate_memory(qwen35, TrainingSetup(micro_batch_size=1, seq_len=2048, gradient_checkpointing=True))
    note = next(n for n in est.notes if n.startswith("hybrid"))
    assert "24 of 32" in note and "torch path" in note and "not measured" not in note
