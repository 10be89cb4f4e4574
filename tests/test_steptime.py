"""The step-time model (seqprof/predict/steptime.py), each figure checked against a computation of its own.

FLOP counts are rebuilt here from the config.json numbers alone (every decoder linear's d_in x d_out, counted
by hand), not from Architecture.layer_linears(); times are rebuilt from seconds-per-unit x units; the fit is
checked by recovering a calibration the test chose itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import architecture_from_config
from seqprof.predict.memory.setup import TrainingSetup
from seqprof.predict.steptime import (
    FEATURES,
    GEMM_FRACTION,
    LOGIT_BYTES,
    NAIVE_MFU,
    Calibration,
    calibration_for,
    fit_calibration,
    model_costs,
    naive_seconds,
    physical_bounds,
    shipped_calibration,
)

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "benchmarks" / "memory" / "configs"
SHIPPED_JSON = REPO / "seqprof" / "predict" / "calibrations" / "h200.json"
# dense models: the FLOP formulas below list a dense decoder's linears (MoE step time is not measured yet)
ALL_CONFIGS = sorted(p.stem for p in CONFIGS.glob("*.json") if "num_experts" not in json.loads(p.read_text()))

# Data-sheet figures (dense bf16 FLOP/s, memory bytes/s), written out here rather than read from GPU_SPEEDS.
H200_FLOPS, H200_BANDWIDTH = 989e12, 4.8e12
A100_80_FLOPS, A100_80_BANDWIDTH = 312e12, 2.039e12


def load_cfg(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def arch_of(name: str):
    return architecture_from_config(load_cfg(name))


def dims(cfg: dict) -> dict:
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = cfg.get("head_dim") or h // heads
    return {"h": h, "f": cfg["intermediate_size"], "q": heads * hd, "kv": cfg.get("num_key_value_heads", heads) * hd,
            "heads": heads, "hd": hd, "L": cfg["num_hidden_layers"], "V": cfg["vocab_size"]}


def hand_linears(cfg: dict) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of every linear of one dense gated decoder layer (Llama / Qwen), from the config alone."""
    d = dims(cfg)
    h, f, q, kv = d["h"], d["f"], d["q"], d["kv"]
    return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
            "gate_proj": (h, f), "up_proj": (h, f), "down_proj": (f, h)}


def hand_gated_deltanet(cfg: dict) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of a Qwen3.5 Gated DeltaNet layer's linears (in_proj_qkv, _z, _b, _a, out_proj) and its MLP,
    from the config's linear_* head counts and sizes."""
    h, f = cfg["hidden_size"], cfg["intermediate_size"]
    kh, vh = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    key, value = kh * cfg["linear_key_head_dim"], vh * cfg["linear_value_head_dim"]
    return {"in_proj_qkv": (h, 2 * key + value), "in_proj_z": (h, value), "in_proj_b": (h, vh), "in_proj_a": (h, vh),
            "out_proj": (value, h), "gate_proj": (h, f), "up_proj": (h, f), "down_proj": (f, h)}


def hand_matmul_params(cfg: dict) -> tuple[int, int]:
    """(decoder-body matmul weights over all layers, lm_head weights): the multiply-accumulates a token costs.
    A hybrid config (layer_types) counts its Gated DeltaNet layers and its gated attention (q_proj doubled)."""
    d = dims(cfg)
    kinds = cfg.get("layer_types") or ["full_attention"] * d["L"]
    attention = hand_linears(cfg)
    if cfg.get("attn_output_gate"):
        attention["q_proj"] = (d["h"], 2 * d["q"])
    per_kind = {"linear_attention": sum(a * b for a, b in hand_gated_deltanet(cfg).values())} \
        if "linear_attention" in kinds else {}
    dense = sum(a * b for a, b in attention.values())
    return sum(per_kind.get(k, dense) for k in kinds), d["V"] * d["h"]


# ----------------------------------------------------------------------------------------------------- FLOPs


@pytest.mark.parametrize("name", ALL_CONFIGS)
def test_full_finetune_matmul_flops_are_six_per_weight(name):
    """Forward 2 FLOPs a weight, input gradients 2, weight gradients 2: 6 x (body + lm_head) a token."""
    cfg = load_cfg(name)
    body, head = hand_matmul_params(cfg)
    costs = model_costs(architecture_from_config(cfg), TrainingSetup())
    assert costs.matmul_per_token == pytest.approx(6 * (body + head), rel=1e-12)
    # flops() of a batch is the per-token figure times the tokens (no attention asked for here)
    assert costs.flops(3 * 512, 0) == pytest.approx(3 * 512 * 6 * (body + head), rel=1e-12)


@pytest.mark.parametrize("name", ALL_CONFIGS)
def test_matmul_weights_match_the_parameter_count(name):
    """A second route to the same weights: every parameter, less the embedding lookup (no matmul), the norms and
    the biases (elementwise), plus the lm_head matmul a tied model still runs with the embedding matrix."""
    cfg = load_cfg(name)
    arch = architecture_from_config(cfg)
    d = dims(cfg)
    norms = sum(layer.other_params for layer in arch.layers()) + d["h"]  # norms (and a hybrid's convs, A, dt)
    biases = d["L"] * (d["q"] + 2 * d["kv"]) if arch.qkv_bias else 0
    matmul_weights = arch.param_count() - d["V"] * d["h"] - norms - biases
    if arch.tie_word_embeddings:
        matmul_weights += d["V"] * d["h"]
    costs = model_costs(arch, TrainingSetup())
    assert costs.matmul_per_token == pytest.approx(6 * matmul_weights, rel=1e-12)


# (setup, body multiplier, lm_head multiplier), from first principles: every matmul runs forward (2 FLOPs a weight)
# and backward for its input gradient (2); trained weights add their weight gradient (2); gradient checkpointing
# reruns the decoder layers' forward (2, not the lm_head: HF checkpoints layers only); a DPO reference model runs
# one more forward of everything (2).
MULTIPLIERS = [
    ("full", TrainingSetup(), 6, 6),
    ("full+gc", TrainingSetup(gradient_checkpointing=True), 8, 6),
    ("lora", TrainingSetup(adapter="lora"), 4, 4),
    ("lora+gc", TrainingSetup(adapter="lora", gradient_checkpointing=True), 6, 4),
    ("qlora", TrainingSetup(load_in_4bit=True), 4, 4),
    ("dpo full, reference model", TrainingSetup(trainer="dpo", reference="model"), 8, 8),
    ("dpo lora, adapters off as reference", TrainingSetup(trainer="dpo", adapter="lora", reference="lora_base"), 6, 6),
    ("dpo full, precomputed reference", TrainingSetup(trainer="dpo", reference="precomputed"), 6, 6),
]


@pytest.mark.parametrize("name", ["qwen3-0.6b", "llama3.1-8b", "qwen3-4b"])
@pytest.mark.parametrize(("label", "setup", "body_x", "head_x"), MULTIPLIERS, ids=[m[0] for m in MULTIPLIERS])
def test_matmul_flops_per_training_setup(name, label, setup, body_x, head_x):
    cfg = load_cfg(name)
    body, head = hand_matmul_params(cfg)
    costs = model_costs(architecture_from_config(cfg), setup)
    assert costs.matmul_per_token == pytest.approx(body_x * body + head_x * head, rel=1e-12), label


@pytest.mark.parametrize(("setup", "passes"), [(TrainingSetup(), 3), (TrainingSetup(gradient_checkpointing=True), 4),
                                               (TrainingSetup(adapter="lora"), 3),
                                               (TrainingSetup(trainer="dpo", gradient_checkpointing=True), 5)])
def test_attention_flops_and_layer_passes(setup, passes):
    """Causal attention: for query i, QKᵀ and PV each cost (i+1) x head_dim MACs per head; summed over a row of
    n tokens that is n(n+1)/2 -> n²/2 pairs, 2 FLOPs a MAC. The flash backward is 2.5 forwards; checkpointing and
    a reference model add one forward each."""
    cfg = load_cfg("qwen3-0.6b")
    d = dims(cfg)
    n = 4096
    pairs = sum(i + 1 for i in range(n))  # brute-force causal (query, key) pairs of one row
    forward_per_layer = 2 * 2 * pairs * d["heads"] * d["hd"]  # QKᵀ and PV, 2 FLOPs a MAC
    extra = (1 if setup.gradient_checkpointing else 0) + (1 if setup.trainer == "dpo" else 0)
    want = d["L"] * forward_per_layer * (1 + 2.5 + extra)
    costs = model_costs(architecture_from_config(cfg), setup)
    got = costs.flops(0, 1 * n ** 2)  # one row of n tokens
    assert got == pytest.approx(want, rel=2.0 / n)  # n² vs n(n+1): the diagonal is all they differ by
    assert costs.passes == passes
    assert costs.host()["host_layer_pass"] == d["L"] * passes


MOE_CFG = {"model_type": "qwen3_moe", "num_hidden_layers": 4, "hidden_size": 512, "intermediate_size": 1536,
           "moe_intermediate_size": 256, "num_experts": 8, "num_experts_per_tok": 2, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 1000, "tie_word_embeddings": False}
SHARED_MOE_CFG = {**MOE_CFG, "model_type": "qwen2_moe", "shared_expert_intermediate_size": 384}


@pytest.mark.parametrize("cfg", [MOE_CFG, SHARED_MOE_CFG], ids=["qwen3_moe", "qwen2_moe shared expert"])
@pytest.mark.parametrize(("setup", "body_x", "head_x"), [(TrainingSetup(), 6, 6),
                                                         (TrainingSetup(gradient_checkpointing=True), 8, 6),
                                                         (TrainingSetup(adapter="lora"), 4, 4)])
def test_moe_matmul_flops_count_only_the_routed_experts(cfg, setup, body_x, head_x):
    """Brute force over one token's path: attention, the router, each of its top-k experts, the shared expert."""
    h, heads, hd, kvh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"], cfg["num_key_value_heads"]
    fe, e, k = cfg["moe_intermediate_size"], cfg["num_experts"], cfg["num_experts_per_tok"]
    attention = h * heads * hd + 2 * h * kvh * hd + heads * hd * h
    router = h * e
    routed = 0
    for _expert in range(k):  # the experts this token is sent to; the other e - k are idle for it
        routed += h * fe + h * fe + fe * h  # gate_proj, up_proj, down_proj
    shared = 0
    if cfg.get("shared_expert_intermediate_size"):
        fs = cfg["shared_expert_intermediate_size"]
        shared = 3 * h * fs + h * 1  # the shared expert's three linears and its sigmoid gate
    body = cfg["num_hidden_layers"] * (attention + router + routed + shared)
    head = cfg["vocab_size"] * h
    arch = architecture_from_config(cfg)
    assert arch.is_moe and arch.num_experts == e and arch.num_experts_per_tok == k
    costs = model_costs(arch, setup)
    assert costs.matmul_per_token == pytest.approx(body_x * body + head_x * head, rel=1e-12)
    # and it is far below what all experts would cost: e/k times the routed share would be wrong
    all_experts = cfg["num_hidden_layers"] * (attention + router + routed * e // k + shared)
    assert costs.matmul_per_token < body_x * all_experts + head_x * head


# ------------------------------------------------------------------------------------------------------- LoRA


@pytest.mark.parametrize("name", ["qwen3-0.6b", "llama3.1-8b", "qwen2.5-0.5b"])
@pytest.mark.parametrize(("targets", "names"), [
    (("q_proj", "v_proj"), ("q_proj", "v_proj")),
    (("all-linear",), ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")),
    (("o_proj", "down_proj"), ("o_proj", "down_proj")),
    (("model.layers.0.self_attn.k_proj", "not_a_module"), ("k_proj",)),
])
@pytest.mark.parametrize("r", [8, 64])
def test_lora_trainable_params_and_adapter_count(name, targets, names, r):
    cfg = load_cfg(name)
    d = dims(cfg)
    shapes = hand_linears(cfg)
    want = d["L"] * sum(r * (shapes[n][0] + shapes[n][1]) for n in names)  # A (r x d_in) and B (d_out x r)
    setup = TrainingSetup(adapter="lora", lora_r=r, lora_targets=targets)
    costs = model_costs(architecture_from_config(cfg), setup)
    assert costs.trainable_params == want
    assert costs.adapters == len(names)
    assert costs.host()["host_adapter_pass"] == d["L"] * costs.passes * len(names)


def test_full_finetune_trains_every_parameter_and_has_no_adapters():
    arch = arch_of("llama3.2-1b")
    costs = model_costs(arch, TrainingSetup())
    assert costs.adapters == 0 and costs.adapter_per_token == 0
    cfg = load_cfg("llama3.2-1b")
    d = dims(cfg)
    body, _ = hand_matmul_params(cfg)
    # tied: one V x h matrix; per layer two RMSNorms over h; the final norm
    assert costs.trainable_params == body + d["V"] * d["h"] + d["L"] * 2 * d["h"] + d["h"]


# ------------------------------------------------------------------------------------------------ Calibration

TRUE_UNITS = {  # a made-up GPU, inside the H200's physical bounds
    "host_micro_batch": 4e-3,
    "host_layer_pass": 9e-4,
    "host_adapter_pass": 1.5e-4,
    "matmul_flops": 1 / (0.6 * H200_FLOPS),  # 60% of peak (>= the 80% GEMM bound in seconds)
    "attention_flops": 1 / (0.35 * H200_FLOPS),
    "body_elements": 40 / H200_BANDWIDTH,
    "logits_elements": 20 / H200_BANDWIDTH,  # <= LOGIT_BYTES of bandwidth an element
    "adapter_elements": 10 / H200_BANDWIDTH,
    "optimizer_params": 16 / H200_BANDWIDTH,
}


def true_calibration() -> Calibration:
    return Calibration("H200 141GB", dict(TRUE_UNITS), "synthetic", True)


def test_micro_batch_is_host_bound_when_tiny():
    cal = true_calibration()
    for name, setup in [("qwen3-0.6b", TrainingSetup()), ("qwen3-4b", TrainingSetup(adapter="lora"))]:
        costs = model_costs(arch_of(name), setup)
        host = (TRUE_UNITS["host_micro_batch"] + TRUE_UNITS["host_layer_pass"] * costs.layers * costs.passes
                + TRUE_UNITS["host_adapter_pass"] * costs.layers * costs.passes * costs.adapters)
        assert cal.host_seconds(costs) == pytest.approx(host, rel=1e-12)
        assert float(cal.micro_batch_seconds(costs, 1, 8)) == cal.host_seconds(costs)  # exactly the host floor
        # the step adds the optimizer's parameter traffic
        assert cal.step_seconds(costs, 1, 8) == pytest.approx(
            host + TRUE_UNITS["optimizer_params"] * costs.trainable_params, rel=1e-12)


def hand_device_seconds(costs, rows, padded, attention=None):
    tokens = rows * padded
    att = rows * padded ** 2 if attention is None else attention
    u = TRUE_UNITS
    return (u["matmul_flops"] * tokens * costs.matmul_per_token + u["attention_flops"] * att * costs.attention_per_len2
            + u["body_elements"] * tokens * costs.body_per_token + u["logits_elements"] * tokens * costs.logits_per_token
            + u["adapter_elements"] * tokens * costs.adapter_per_token)


@pytest.mark.parametrize(("name", "setup"), [("qwen3-0.6b", TrainingSetup()),
                                             ("llama3.1-8b", TrainingSetup(adapter="lora", gradient_checkpointing=True,
                                                                           lora_targets=("all-linear",)))])
def test_micro_batch_is_device_bound_when_huge(name, setup):
    cal = true_calibration()
    costs = model_costs(arch_of(name), setup)
    rows, padded = 64, 8192
    device = hand_device_seconds(costs, rows, padded)
    assert device > 10 * cal.host_seconds(costs)  # really device-bound
    assert float(cal.micro_batch_seconds(costs, rows, padded)) == pytest.approx(device, rel=1e-12)
    # varlen packing: one row of 3 sequences attends Σ len², not padded²
    lens = [1000, 3000, 4192]
    att = sum(n ** 2 for n in lens)
    packed = float(cal.micro_batch_seconds(costs, 16, sum(lens), attention=16 * att))
    assert packed == pytest.approx(hand_device_seconds(costs, 16, sum(lens), attention=16 * att), rel=1e-12)
    assert packed < float(cal.micro_batch_seconds(costs, 16, sum(lens)))


def test_micro_batch_arrays_match_scalar_calls():
    cal = true_calibration()
    costs = model_costs(arch_of("qwen3-4b"), TrainingSetup(adapter="lora"))
    rows = np.array([1, 1, 2, 4, 8, 16, 32, 1, 3])
    padded = np.array([8, 512, 1024, 2048, 4096, 8192, 8192, 32768, 777])
    att = rows * padded.astype(np.float64) ** 2 * 0.7
    together = cal.micro_batch_seconds(costs, rows, padded)
    together_att = cal.micro_batch_seconds(costs, rows, padded, attention=att)
    naive_together = naive_seconds(costs, rows, padded)
    assert together.shape == rows.shape
    for i, (r, n) in enumerate(zip(rows.tolist(), padded.tolist())):
        one = float(cal.micro_batch_seconds(costs, r, n))
        assert together[i] == one
        assert one == pytest.approx(max(cal.host_seconds(costs), hand_device_seconds(costs, r, n)), rel=1e-12)
        assert together_att[i] == float(cal.micro_batch_seconds(costs, r, n, attention=att[i]))
        assert naive_together[i] == float(naive_seconds(costs, r, n))
    # both regimes are in the grid
    host = cal.host_seconds(costs)
    assert (together == host).any() and (together > host).any()


# --------------------------------------------------------------------------------------------------------- fit


def test_physical_bounds_of_the_h200():
    low, high = physical_bounds("H200 141GB")
    assert low["matmul_flops"] == pytest.approx(1 / (GEMM_FRACTION * H200_FLOPS))
    assert low["attention_flops"] == pytest.approx(1 / (GEMM_FRACTION * H200_FLOPS))
    assert high["logits_elements"] == pytest.approx(LOGIT_BYTES / H200_BANDWIDTH)
    # the synthetic calibration the fit must recover sits strictly inside them
    assert TRUE_UNITS["matmul_flops"] > low["matmul_flops"] and TRUE_UNITS["attention_flops"] > low["attention_flops"]
    assert TRUE_UNITS["logits_elements"] < high["logits_elements"]


FIT_GRID = [
    ("qwen3-0.6b", TrainingSetup()),
    ("llama3.2-1b", TrainingSetup()),
    ("qwen3-4b", TrainingSetup(adapter="lora")),
    ("llama3.1-8b", TrainingSetup(adapter="lora", gradient_checkpointing=True)),
]
FIT_SHAPES = [(1, 128), (1, 512), (2, 256), (1, 2048), (4, 2048), (8, 2048), (2, 8192), (16, 4096), (4, 16384)]
HELD_OUT = [(1, 64), (1, 1024), (3, 3000), (6, 4096), (12, 8192), (1, 32768), (24, 2048)]


def synthetic_steps():
    truth = true_calibration()
    grid = [model_costs(arch_of(name), setup) for name, setup in FIT_GRID]
    measured = [(c, r, n, truth.step_seconds(c, r, n)) for c in grid for r, n in FIT_SHAPES]
    # the training shapes cover both regimes for every model
    for c in grid:
        regimes = {float(truth.micro_batch_seconds(c, r, n)) == truth.host_seconds(c) for r, n in FIT_SHAPES}
        assert regimes == {True, False}
    return truth, grid, measured


def assert_reproduces(fit, truth, grid):
    low, high = physical_bounds("H200 141GB")
    for name, value in fit.seconds_per_unit.items():
        assert low.get(name, 0.0) * (1 - 1e-9) <= value <= high.get(name, math.inf) * (1 + 1e-9), name
    for c in grid:
        for r, n in HELD_OUT:
            assert fit.step_seconds(c, r, n) == pytest.approx(truth.step_seconds(c, r, n), rel=0.01), (r, n)


# Priors far from the truth (the shipped H200 one has a ~2e-8 s host floor against the truth's 4e-3 s).
@pytest.mark.parametrize("prior", ["H200 141GB", "A100 80GB", "B200 180GB"])
def test_fit_recovers_a_known_calibration(prior):
    """As `seqprof calibrate` and benchmarks/runtime/compare.py call it: from a prior."""
    truth, grid, measured = synthetic_steps()
    fit = fit_calibration(measured, "H200 141GB", "synthetic refit", start=calibration_for(prior))
    assert fit.measured and fit.gpu == "H200 141GB" and fit.source == "synthetic refit"
    assert set(fit.seconds_per_unit) == set(FEATURES)
    assert_reproduces(fit, truth, grid)


def test_fit_without_a_prior_recovers_a_known_calibration():
    truth, grid, measured = synthetic_steps()
    fit = fit_calibration(measured, "H200 141GB", "synthetic refit")
    assert_reproduces(fit, truth, grid)


# ------------------------------------------------------------------------------------------- calibration files


def test_h200_gets_the_shipped_measured_calibration():
    on_disk = json.loads(SHIPPED_JSON.read_text())
    cal = calibration_for("H200 141GB")
    assert cal.measured is True and cal.gpu == "H200 141GB"
    assert cal.source == on_disk["source"]
    for name in FEATURES:
        assert cal.seconds_per_unit[name] == float(on_disk["seconds_per_unit"].get(name, 0.0))
    assert shipped_calibration() == cal


def test_other_gpu_gets_the_h200_scaled_by_its_data_sheet():
    base = json.loads(SHIPPED_JSON.read_text())["seconds_per_unit"]
    cal = calibration_for("A100 80GB")
    assert cal.measured is False and cal.gpu == "A100 80GB"
    assert cal.source.startswith("analytic")
    u = cal.seconds_per_unit
    compute = H200_FLOPS / A100_80_FLOPS  # an A100 does a FLOP ~3.2x slower
    memory = H200_BANDWIDTH / A100_80_BANDWIDTH  # and moves a byte ~2.35x slower
    assert u["matmul_flops"] == pytest.approx(base["matmul_flops"] * compute, rel=1e-12)
    assert u["attention_flops"] == pytest.approx(base["attention_flops"] * compute, rel=1e-12)
    for name in ("body_elements", "logits_elements", "adapter_elements", "optimizer_params"):
        assert u[name] == pytest.approx(base[name] * memory, rel=1e-12), name
    for name in ("host_micro_batch", "host_layer_pass", "host_adapter_pass"):
        assert u[name] == base[name], name
    assert set(u) == set(FEATURES)
    # a step on the slower GPU takes longer once the device dominates, and the same at the host floor
    costs = model_costs(arch_of("qwen3-0.6b"), TrainingSetup())
    h200 = calibration_for("H200 141GB")
    assert float(cal.micro_batch_seconds(costs, 1, 8)) == float(h200.micro_batch_seconds(costs, 1, 8))
    assert float(cal.micro_batch_seconds(costs, 32, 8192)) > 2 * float(h200.micro_batch_seconds(costs, 32, 8192))


def test_unknown_gpu_is_an_error():
    with pytest.raises(SeqprofError, match="no speed figures"):
        calibration_for("Voodoo3 16MB")


def valid_dict() -> dict:
    return true_calibration().to_dict()


@pytest.mark.parametrize("damage", [
    lambda d: d["seconds_per_unit"].__setitem__("matmul_flops", -1e-15),
    lambda d: d["seconds_per_unit"].__setitem__("host_layer_pass", float("nan")),
    lambda d: d["seconds_per_unit"].__setitem__("body_elements", "fast"),
    lambda d: d["seconds_per_unit"].__setitem__("body_elements", None),
    lambda d: d.pop("seconds_per_unit"),
    lambda d: d.pop("gpu"),
    lambda d: d.pop("kind"),
    lambda d: d.__setitem__("kind", "seqprof.memory"),
    lambda d: d.__setitem__("seconds_per_unit", [1, 2, 3]),
], ids=["negative", "nan", "string", "null", "no seconds_per_unit", "no gpu", "no kind", "wrong kind", "list"])
def test_from_dict_rejects_damaged_calibrations(damage):
    data = valid_dict()
    Calibration.from_dict(data)  # the undamaged one is fine
    damage(data)
    with pytest.raises(SeqprofError, match="not a seqprof calibration"):
        Calibration.from_dict(data, path="cal.json")


def test_from_dict_rejects_infinite_figures():
    data = json.loads(json.dumps(valid_dict()).replace(str(TRUE_UNITS["body_elements"]), "Infinity"))
    assert data["seconds_per_unit"]["body_elements"] == math.inf
    with pytest.raises(SeqprofError):
        Calibration.from_dict(data)


def test_to_dict_from_dict_round_trip():
    cal = true_calibration()
    data = cal.to_dict()
    assert data["kind"] == "seqprof.calibration"
    again = Calibration.from_dict(json.loads(json.dumps(data)))
    assert again == cal
    analytic = calibration_for("L40S 48GB")
    assert Calibration.from_dict(analytic.to_dict()) == analytic  # measured False survives


def test_calibration_for_reads_a_file(tmp_path):
    cal = Calibration("RTX 4090 24GB", {**TRUE_UNITS, "matmul_flops": 3e-15}, "measured at home", True)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(cal.to_dict()))
    assert calibration_for("RTX 4090 24GB", path) == cal
    assert calibration_for("RTX 4090 24GB", str(path)) == cal


@pytest.mark.parametrize("text", ["{not json", "", "[1, 2]", '"a string"'])
def test_calibration_for_rejects_a_bad_file(tmp_path, text):
    path = tmp_path / "cal.json"
    path.write_text(text)
    with pytest.raises(SeqprofError):
        calibration_for("H200 141GB", path)


def test_calibration_for_missing_file_is_an_error(tmp_path):
    with pytest.raises(SeqprofError):
        calibration_for("H200 141GB", tmp_path / "absent.json")


# ------------------------------------------------------------------------------------------------------ naive


@pytest.mark.parametrize(("gpu", "peak"), [("H200 141GB", H200_FLOPS), ("A100 80GB", A100_80_FLOPS)])
def test_naive_seconds_is_all_flops_over_peak_times_mfu(gpu, peak):
    cfg = load_cfg("llama3.2-1b")
    d = dims(cfg)
    body, head = hand_matmul_params(cfg)
    costs = model_costs(architecture_from_config(cfg), TrainingSetup())
    rows, padded = 4, 2048
    matmul = rows * padded * 6 * (body + head)
    attention = rows * padded ** 2 * d["L"] * 2 * d["heads"] * d["hd"] * 3.5
    want = (matmul + attention) / (peak * NAIVE_MFU)
    assert float(naive_seconds(costs, rows, padded, gpu)) == pytest.approx(want, rel=1e-12)
    assert NAIVE_MFU == 0.4
