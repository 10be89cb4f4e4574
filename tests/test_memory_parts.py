"""Each model of predict/memory on its own: states, activations, logits, and the allocator they share.

The whole walk is held to H200 measurements in test_memory.py; here each part meets arithmetic done
independently of it (bitsandbytes' block layout, AdamW's state count, b x s x V x bytes, reference counts).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from seqprof.predict.architecture import read_architecture
from seqprof.predict.memory import TrainingSetup
from seqprof.predict.memory.activations import ACT, LOG, layer_backward, layer_forward, step_context
from seqprof.predict.memory.allocator import Allocator, SavedForBackward
from seqprof.predict.memory.logits import loss_backward, loss_forward
from seqprof.predict.memory.states import optimizer_bytes, weight_bytes

CONFIGS = Path(__file__).resolve().parents[1] / "benchmarks" / "memory" / "configs"


@pytest.fixture(scope="module")
def qwen():
    return read_architecture(CONFIGS / "qwen2.5-7b.json")


def _linears(arch):
    """(d_in, d_out) of every decoder linear, counted from the config by hand (q, k, v, o, gate, up, down)."""
    h, f, q, kv = arch.hidden_size, arch.intermediate_size, arch.num_heads * arch.head_dim, \
        arch.num_kv_heads * arch.head_dim
    return [(h, q), (h, kv), (h, kv), (q, h), (h, f), (h, f), (f, h)] * arch.num_layers


# --- states --------------------------------------------------------------------------------------------------


def test_bf16_weights_are_two_bytes_per_parameter(qwen):
    cx = step_context(qwen, TrainingSetup())
    assert weight_bytes(qwen, cx)["base"] == 2 * qwen.param_count()


def test_nf4_weights_follow_bitsandbytes_block_layout(qwen):
    """bitsandbytes NF4: half a byte per weight, one absmax per 64 weights; double quant stores each absmax in
    8 bits plus one fp32 per 256 absmax blocks. Counted per linear with whole blocks, then the rest in bf16."""
    cx = step_context(qwen, TrainingSetup(load_in_4bit=True, lora_targets=("all-linear",)))
    quantised = 0
    for d_in, d_out in _linears(qwen):
        n = d_in * d_out
        blocks = math.ceil(n / 64)
        quantised += n / 2 + blocks + 4 * math.ceil(blocks / 256)
    linear_params = sum(a * b for a, b in _linears(qwen))
    rest = 2 * (qwen.param_count() - linear_params)  # embeddings, norms, biases stay bf16
    assert weight_bytes(qwen, cx)["base"] == pytest.approx(quantised + rest, rel=1e-4)


def test_lora_adapters_are_r_times_in_plus_out_in_fp32(qwen):
    setup = TrainingSetup(adapter="lora", lora_r=8, lora_targets=("q_proj", "v_proj"))
    h, q, kv = qwen.hidden_size, qwen.num_heads * qwen.head_dim, qwen.num_kv_heads * qwen.head_dim
    expected = qwen.num_layers * 8 * ((h + q) + (h + kv))
    parts = weight_bytes(qwen, step_context(qwen, setup))
    assert parts["lora_params"] == expected and parts["lora"] == 4 * expected


@pytest.mark.parametrize(("optimizer", "states", "workspace"), [
    ("adamw_torch", 2, 1),  # exp_avg, exp_avg_sq; foreach allocates sqrt(exp_avg_sq) for all params at once
    ("adamw_torch_fused", 2, 0),
    ("sgd", 0, 0),
    ("lion", 1, 0),
])
def test_optimizer_states_count_the_tensors_each_optimizer_keeps(optimizer, states, workspace):
    trainable, nbytes = 1_000_000, 2_000_000
    got_states, got_workspace, _ = optimizer_bytes(TrainingSetup(optimizer=optimizer), trainable, nbytes)
    assert (got_states, got_workspace) == (states * nbytes, workspace * nbytes)


# --- activations ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("setup", [
    TrainingSetup(micro_batch_size=2, seq_len=512),
    TrainingSetup(micro_batch_size=2, seq_len=512, adapter="lora", lora_targets=("all-linear",), lora_dropout=0.1),
    TrainingSetup(micro_batch_size=1, seq_len=1024, load_in_4bit=True, lora_targets=("all-linear",)),
], ids=["full", "lora-dropout", "qlora"])
def test_a_layer_frees_everything_it_kept_once_its_backward_ran(qwen, setup):
    """Reference counts balance: forward + backward of one layer leaves only its output and gradients."""
    cx = step_context(qwen, setup)
    sim = Allocator()
    x = sim.new(ACT, 2 * qwen.hidden_size * cx.n)
    out, saved = layer_forward(sim, cx, qwen.typical_layer(), x, True, keep=True)
    kept = sim.total
    sim.drop(out, x)
    layer_backward(sim, cx, qwen.typical_layer(), saved, persistent_grads=False)
    left = {k: v for k, v in sim.live.items() if v}
    assert kept > 0 and set(left) <= {"gradients"}
    if setup.adapter is None and not setup.load_in_4bit:
        # a full fine-tune's layer leaves exactly its weight gradients (bf16), biases included
        assert left["gradients"] == pytest.approx(2 * qwen.layer_params(), rel=1e-3)


def test_no_grad_forward_keeps_nothing(qwen):
    cx = step_context(qwen, TrainingSetup(micro_batch_size=1, seq_len=2048))
    sim = Allocator()
    x = sim.new(ACT, 2 * qwen.hidden_size * cx.n)
    out, saved = layer_forward(sim, cx, qwen.typical_layer(), x, False, keep=False)
    assert saved.groups == [] and sim.total == 2 * (2 * qwen.hidden_size * cx.n)


def test_flash_activations_are_linear_in_tokens(qwen):
    """With a flash kernel nothing is s x s: a layer's saved bytes per token do not depend on the length."""
    def kept(b, s):
        cx = step_context(qwen, TrainingSetup(micro_batch_size=b, seq_len=s))
        assert cx.backend == "flash"
        sim = Allocator()
        x = sim.new(ACT, 2 * qwen.hidden_size * cx.n)
        layer_forward(sim, cx, qwen.typical_layer(), x, True, keep=True)
        return sim.total
    assert kept(1, 4096) == kept(4, 1024) == 4 * kept(1, 1024)


# --- logits and loss -----------------------------------------------------------------------------------------


def _head(arch, setup):
    cx = step_context(arch, setup)
    sim = Allocator()
    y = sim.new(ACT, 2 * arch.hidden_size * cx.n)
    head = SavedForBackward(sim, True)
    return cx, sim, y, head


def test_hf_loss_keeps_the_fp32_log_softmax_and_peaks_at_three_fp32_logits(qwen):
    """transformers' ForCausalLMLoss: bf16 logits, .float(), log_softmax (kept), nll; backward holds the saved
    log_softmax and two fp32 gradients at once: 3 x b x s x V x 4 bytes."""
    setup = TrainingSetup(micro_batch_size=2, seq_len=1024, adapter="lora")
    cx, sim, y, head = _head(qwen, setup)
    b_s_v = 2 * 1024 * qwen.vocab_size
    loss_forward(sim, cx, head, y, lambda: None, lambda: None)
    assert sim.live[LOG] == 4 * b_s_v
    assert sim.peak_live[LOG] == 2 * b_s_v + 4 * b_s_v + 4 * b_s_v  # bf16 logits, their fp32 copy, log_softmax
    loss_backward(sim, cx, head, None, lambda: None)
    assert sim.peak_live[LOG] == 3 * 4 * b_s_v
    assert sim.live[LOG] == 0


def test_chunked_loss_never_holds_more_than_one_chunk(qwen):
    setup = TrainingSetup(micro_batch_size=4, seq_len=4096, adapter="lora", loss="chunked", loss_chunk_size=2048)
    cx, sim, y, head = _head(qwen, setup)
    loss_forward(sim, cx, head, y, lambda: None, lambda: None)
    gy = loss_backward(sim, cx, head, None, lambda: None)
    assert sim.peak_live.get(LOG, 0) <= 12 * 2048 * qwen.vocab_size  # fp32 log-softmax + two fp32 gradients
    assert gy is not None and sim.live[ACT] == 2 * qwen.hidden_size * cx.n  # only the hidden-state gradient


def test_preference_loss_runs_the_reference_forward_once(qwen):
    setup = TrainingSetup(micro_batch_size=1, seq_len=512, adapter="lora", trainer="dpo", reference="lora_base")
    cx, sim, y, head = _head(qwen, setup)
    calls = []

    def reference():
        calls.append(1)
        return sim.new(ACT, 2 * qwen.hidden_size * cx.n)

    loss_forward(sim, cx, head, y, lambda: None, reference)
    assert calls == [1] and cx.seqs == 2  # chosen and rejected in one forward
