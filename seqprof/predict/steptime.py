"""Step time: seconds per optimizer step from the architecture, the training setup and the batch shapes.

Step time is not proportional to padded tokens. A micro batch takes max(host, device):
- host: the kernels every layer (and every LoRA branch) launches in each pass, whatever the batch; the GPU
  runs behind this Python, so a small batch costs its launches;
- device: its matmuls, linear in the tokens computed (≈ 2·P FLOPs a token forward, 2·P more for the input
  gradients, 2·P more for the weight gradients of a full fine-tune — a LoRA backward skips those of the
  frozen weights —, 2·P again to recompute under gradient checkpointing, one more forward of a reference
  model); attention, quadratic in each row's attended length (Σ rows·len² · heads · head_dim); and
  width-linear per-token work, the logits and the LoRA branches' traffic, priced by bandwidth;
and each optimizer step reads and writes every trainable parameter's states.

The seconds per unit of each term (a `Calibration`) are measured on a GPU (`seqprof calibrate`,
benchmarks/runtime/): the H200's ships with seqprof. Other GPUs get the H200's scaled by their data-sheet peak
FLOP/s and memory bandwidth, marked "analytic". The naive baseline (`naive_seconds`) is what a data sheet
alone gives: all FLOPs over peak × one MFU.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import Architecture
from seqprof.predict.memory.setup import REFERENCE_FREE, TrainingSetup

HOST_TERMS = ("host_micro_batch", "host_layer_pass", "host_adapter_pass")
DEVICE_TERMS = ("matmul_flops", "attention_flops", "body_elements", "logits_elements", "adapter_elements")
STEP_TERMS = ("optimizer_params",)
FEATURES = HOST_TERMS + DEVICE_TERMS + STEP_TERMS
NAIVE_MFU = 0.4  # the one utilisation figure the naive baseline divides by
GEMM_FRACTION = 0.8  # a large bf16 GEMM's share of the data-sheet peak (measured 790/989 on the H200)
# Bytes a logit moves at most across the loss: the bf16 logits, their fp32 copy, log-softmax and its gradient
# written and read (transformers' ForCausalLMLoss upcasts); a fit may not price the vocabulary higher.
LOGIT_BYTES = 32


@dataclass(frozen=True)
class ModelCosts:
    """What one micro batch of one architecture under one training setup costs, per unit of its shape."""

    layers: int
    passes: float  # layer passes per micro batch: forward, backward (2), recompute, reference forward
    adapters: int  # LoRA-wrapped linears per layer (each adds its own small kernels to every pass)
    matmul_per_token: float  # matmul FLOPs a computed token costs, forward + backward (+ recompute, reference)
    attention_per_len2: float  # attention FLOPs per unit of rows x attended length², all layers and passes
    body_per_token: float  # elements a token's activations touch across the layers and passes (bandwidth)
    logits_per_token: float  # logits elements a token touches (vocab x passes of the loss)
    adapter_per_token: float  # activation elements the LoRA branches read and write, all layers and passes
    trainable_params: int

    def host(self) -> dict[str, float]:
        """The per-micro-batch host terms (kernel launches, Python): the same for every shape."""
        return {"host_micro_batch": 1.0, "host_layer_pass": self.layers * self.passes,
                "host_adapter_pass": self.layers * self.passes * self.adapters}

    def device(self, tokens, attention) -> dict[str, object]:
        """The GPU terms of micro batches of `tokens` computed tokens and `attention` rows x len² (arrays ok)."""
        return {"matmul_flops": tokens * self.matmul_per_token, "attention_flops": attention * self.attention_per_len2,
                "body_elements": tokens * self.body_per_token, "logits_elements": tokens * self.logits_per_token,
                "adapter_elements": tokens * self.adapter_per_token}

    def flops(self, tokens, attention):
        return tokens * self.matmul_per_token + attention * self.attention_per_len2


def model_costs(arch: Architecture, setup: TrainingSetup) -> ModelCosts:
    """The terms above for `arch` trained as `setup` says (a DPO micro batch's chosen and rejected rows are
    both rows of its shape)."""
    from seqprof.predict.memory.activations import step_context

    full = not (setup.adapter or setup.load_in_4bit or setup.load_in_8bit)
    layers = arch.layers()  # each as transformers builds it: hybrid mixers, dense-first MoE layers

    def active_matmul(linears, layer) -> int:
        total = sum(lin.d_in * lin.d_out * lin.count for lin in linears)
        if layer.is_moe:  # a token passes through its top-k experts only
            per_expert = sum(lin.d_in * lin.d_out for lin in linears if lin.count > 1)
            total -= (layer.num_experts - layer.num_experts_per_tok) * per_expert
        return total

    body = 2.0 * sum(active_matmul(layer.linears, layer) for layer in layers)
    quadratic = sum(1 for layer in layers if layer.kind != "linear_attention")  # Gated DeltaNet is linear in length
    head = 2.0 * arch.vocab_size * arch.hidden_size
    gc = 1.0 if setup.gradient_checkpointing else 0.0
    # no_grad forwards besides the policy's: DPO's reference pass; KTO's KL rows through the policy, then the
    # reference's completion and KL passes (trl kto_trainer.py _compute_loss)
    ref_pass = setup.is_preference and setup.trainer not in REFERENCE_FREE and setup.reference in ("model", "lora_base")
    reference = (1.0 + 2.0 * ref_pass) if setup.trainer == "kto" else float(ref_pass)
    backward = 2.0 if full else 1.0  # input gradients always; weight gradients only for trained weights
    matmul = body * (1 + backward + gc + reference) + head * (1 + backward + reference)
    attn_fwd = 2.0 * quadratic * arch.num_heads * arch.head_dim  # QKᵀ and PV, causal half, 2 FLOPs a MAC
    attention = attn_fwd * (1 + 2.5 + gc + reference)  # the flash backward does 2.5x the forward's matmuls
    passes = 1 + 2 + gc + reference
    trainable, adapters, adapter_width = arch.param_count(), 0, 0
    if not full:
        targets = step_context(arch, setup).targets
        wrapped = [[lin for lin in layer.linears if lin.name in targets] for layer in layers]
        adapters = sum(lin.count for one in wrapped for lin in one) / max(1, len(layers))  # a layer, on average
        widths = sum((lin.d_in + lin.d_out) * lin.count for one in wrapped for lin in one)  # over all layers
        adapter_width = widths / max(1, len(layers))
        trainable = setup.lora_r * widths
    return ModelCosts(layers=arch.num_layers, passes=passes, adapters=adapters, matmul_per_token=matmul,
                      attention_per_len2=attention, body_per_token=float(arch.num_layers * arch.hidden_size * passes),
                      logits_per_token=float(arch.vocab_size * (2 + reference)),
                      adapter_per_token=float(arch.num_layers * adapter_width * (passes - reference)),
                      trainable_params=trainable)


@dataclass(frozen=True)
class Calibration:
    """Seconds per unit of each term on one GPU, and where the figures come from.

    A micro batch takes max(host, device): the GPU runs behind the Python that launches its kernels, so a
    small batch costs the launches and a large one its FLOPs and bytes (measured: a 0.6B model's step is
    flat at ~95 ms up to ~5k tokens). Each optimizer step adds its parameter traffic."""

    gpu: str
    seconds_per_unit: Mapping[str, float]
    source: str  # "measured on ..." or "analytic: ..."
    measured: bool

    def host_seconds(self, costs: ModelCosts) -> float:
        return sum(self.seconds_per_unit.get(k, 0.0) * v for k, v in costs.host().items())

    def micro_batch_seconds(self, costs: ModelCosts, rows, padded, attention=None):
        """Seconds of micro batches of `rows` x `padded` tokens (numpy arrays or numbers); `attention` is
        Σ attended length² per batch when it is not rows x padded² (varlen packing)."""
        import numpy as np

        rows, padded = np.asarray(rows, dtype=np.float64), np.asarray(padded, dtype=np.float64)
        att = rows * padded ** 2 if attention is None else np.asarray(attention, dtype=np.float64)
        device = sum(self.seconds_per_unit.get(k, 0.0) * v for k, v in costs.device(rows * padded, att).items())
        return np.maximum(self.host_seconds(costs), device)

    def optimizer_seconds(self, costs: ModelCosts) -> float:
        return self.seconds_per_unit.get("optimizer_params", 0.0) * costs.trainable_params

    def step_seconds(self, costs: ModelCosts, rows: int, padded: int) -> float:
        """One optimizer step of one micro batch (what `seqprof calibrate` times)."""
        return float(self.micro_batch_seconds(costs, rows, padded)) + self.optimizer_seconds(costs)

    def to_dict(self) -> dict:
        return {"kind": "seqprof.calibration", "version": 2, "gpu": self.gpu, "measured": self.measured,
                "source": self.source, "seconds_per_unit": dict(self.seconds_per_unit)}

    @classmethod
    def from_dict(cls, data: Mapping, path: str = "<calibration>") -> Calibration:
        try:
            units = {name: float(data["seconds_per_unit"].get(name, 0.0)) for name in FEATURES}
            if data.get("kind") != "seqprof.calibration" or not all(0 <= v < float("inf") for v in units.values()):
                raise ValueError
            return cls(gpu=str(data["gpu"]), seconds_per_unit=units, source=str(data.get("source", path)),
                       measured=bool(data.get("measured", True)))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise SeqprofError("not a seqprof calibration file", path=path,
                               fix="write one with `seqprof calibrate --model-config DIR`") from None


# Data-sheet figures (dense bf16 tensor FLOP/s, memory bandwidth bytes/s) the analytic calibrations scale by.
# Approximate public figures; a GPU's own `seqprof calibrate` replaces them.
GPU_SPEEDS: Mapping[str, tuple[float, float]] = {
    "H100 80GB": (989e12, 3.35e12), "H100 NVL 94GB": (835e12, 3.9e12), "H100 PCIe 80GB": (756e12, 2.0e12),
    "H800 80GB": (989e12, 3.35e12), "H200 141GB": (989e12, 4.8e12), "H200 NVL 141GB": (835e12, 4.8e12),
    "GH200 96GB": (989e12, 4.0e12), "GH200 144GB": (989e12, 4.9e12), "B200 180GB": (2250e12, 8.0e12),
    "GB200 186GB": (2500e12, 8.0e12), "B300 288GB": (2250e12, 8.0e12), "DGX Spark GB10 128GB": (62e12, 0.273e12),
    "A100 40GB": (312e12, 1.555e12), "A100 80GB": (312e12, 2.039e12), "A800 80GB": (312e12, 2.039e12),
    "A10G 24GB": (70e12, 0.6e12), "A10 24GB": (125e12, 0.6e12), "A40 48GB": (150e12, 0.696e12),
    "L4 24GB": (121e12, 0.3e12), "L40 48GB": (181e12, 0.864e12), "L40S 48GB": (362e12, 0.864e12),
    "V100 16GB": (125e12, 0.9e12), "V100 32GB": (125e12, 0.9e12), "T4 16GB": (65e12, 0.32e12),
    "RTX A6000 48GB": (155e12, 0.768e12), "RTX 6000 Ada 48GB": (364e12, 0.96e12),
    "RTX PRO 6000 96GB": (500e12, 1.79e12), "RTX 3090 24GB": (71e12, 0.936e12), "RTX 4090 24GB": (165e12, 1.008e12),
    "RTX 5090 32GB": (209e12, 1.792e12), "MI250X 128GB": (383e12, 3.2e12), "MI300X 192GB": (1307e12, 5.3e12),
    "MI325X 256GB": (1307e12, 6.0e12),
}
_COMPUTE_TERMS = ("matmul_flops", "attention_flops")
_MEMORY_TERMS = ("body_elements", "logits_elements", "adapter_elements", "optimizer_params")
MEASURED_GPU = "H200 141GB"


@cache
def shipped_calibration() -> Calibration:
    """The H200 calibration measured for seqprof (benchmarks/runtime/)."""
    text = (resources.files("seqprof") / "predict" / "calibrations" / "h200.json").read_text()
    return Calibration.from_dict(json.loads(text), path="seqprof/predict/calibrations/h200.json")


def calibration_for(gpu: str, path: str | Path | None = None) -> Calibration:
    """A calibration file if given, the measured H200 one for an H200, else the H200's scaled to `gpu`
    (canonical name from seqprof.predict.gpus) by its peak FLOP/s and memory bandwidth."""
    if path is not None:
        from seqprof.inputs import MiB, read_input_text

        text = read_input_text(path, what="calibration", limit=MiB)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SeqprofError(f"calibration is not valid JSON ({exc.msg})", path=str(path)) from None
        return Calibration.from_dict(data if isinstance(data, dict) else {}, path=str(path))
    base = shipped_calibration()
    if gpu == MEASURED_GPU:
        return base
    if gpu not in GPU_SPEEDS:
        raise SeqprofError(f"no speed figures for GPU {gpu!r}",
                           fix="measure it with `seqprof calibrate` and pass --calibration FILE")
    flops, bandwidth = GPU_SPEEDS[gpu]
    ref_flops, ref_bandwidth = GPU_SPEEDS[MEASURED_GPU]
    units = {}
    for name, value in base.seconds_per_unit.items():
        if name in _COMPUTE_TERMS:
            units[name] = value * ref_flops / flops
        elif name in _MEMORY_TERMS:
            units[name] = value * ref_bandwidth / bandwidth
        else:
            units[name] = value  # launch and host floors: kept as measured
    return Calibration(gpu=gpu, seconds_per_unit=units, measured=False,
                       source=f"analytic: the H200 calibration scaled by {gpu}'s data-sheet bf16 FLOP/s "
                              f"({flops / 1e12:.0f} T) and memory bandwidth ({bandwidth / 1e12:.2f} TB/s)")


def naive_seconds(costs: ModelCosts, rows, padded, gpu: str = MEASURED_GPU):
    """The data-sheet baseline: every matmul and attention FLOP at NAIVE_MFU of the GPU's peak."""
    import numpy as np

    rows, padded = np.asarray(rows, dtype=np.float64), np.asarray(padded, dtype=np.float64)
    return costs.flops(rows * padded, rows * padded ** 2) / (GPU_SPEEDS[gpu][0] * NAIVE_MFU)


def physical_bounds(gpu: str) -> tuple[dict[str, float], dict[str, float]]:
    """What a fit may not claim: matmuls faster than a large bf16 GEMM runs on the GPU (GEMM_FRACTION of
    its data-sheet peak; 8192³ ran at ~790 of 989 TFLOP/s on the H200). Without the bound a fit on a few model
    widths trades matmul FLOPs (∝ width²) for the per-token terms (∝ width) and would extrapolate wrong to
    wider models; with it the width-linear terms carry what narrow models lose (small GEMMs, elementwise).
    Likewise the logits may cost at most LOGIT_BYTES of bandwidth an element."""
    flops, bandwidth = GPU_SPEEDS.get(gpu, (None, None))
    low = {"matmul_flops": 1 / (GEMM_FRACTION * flops), "attention_flops": 1 / (GEMM_FRACTION * flops)} if flops \
        else {}
    high = {"logits_elements": LOGIT_BYTES / bandwidth} if bandwidth else {}
    return low, high


def fit_calibration(measured: list[tuple[ModelCosts, int, int, float]], gpu: str, source: str,
                    start: Calibration | None = None) -> Calibration:
    """Least squares on relative error over measured steps (costs, rows, padded length, seconds), every
    seconds-per-unit kept >= 0, starting from `start` (a prior) when given."""
    import numpy as np
    from scipy.optimize import least_squares

    start = start or shipped_calibration()  # from far off, max(host, device) leaves the host terms no gradient
    guess = np.array([start.seconds_per_unit.get(n, 0.0) or 1e-12 for n in FEATURES])
    scale = guess.copy()
    low, high = physical_bounds(gpu)
    lower = np.array([low.get(n, 0.0) for n in FEATURES]) / scale
    upper = np.array([high.get(n, np.inf) for n in FEATURES]) / scale
    x0 = np.clip(np.ones(len(FEATURES)), lower * 1.0001, np.where(np.isfinite(upper), upper * 0.9999, np.inf))

    def residuals(x):
        cal = Calibration(gpu, dict(zip(FEATURES, x * scale)), source, True)
        return np.array([cal.step_seconds(c, r, n) / t - 1 for c, r, n, t in measured])

    fit = least_squares(residuals, x0, bounds=(lower, upper), x_scale="jac")
    return Calibration(gpu=gpu, seconds_per_unit={n: float(v) for n, v in zip(FEATURES, fit.x * scale)},
                       source=source, measured=True)
