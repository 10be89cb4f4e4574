"""Step time: seconds per optimizer step from the architecture, the training setup and the batch shapes.

Step time is not proportional to padded tokens. A micro batch costs
- a floor: the kernels every layer launches whatever the batch (`layer_passes`), and a fixed host cost;
- its matmuls, linear in the tokens computed: ≈ 2·P FLOPs a token forward, 2·P more for the input
  gradients, 2·P more for the weight gradients of a full fine-tune (a LoRA backward skips those of the
  frozen weights), 2·P again to recompute the forward under gradient checkpointing, and one more forward of a
  DPO reference model;
- attention, quadratic in each row's attended length: Σ rows·len² · heads · head_dim;
- memory-bound elementwise work (norms, activations, residuals; the fp32 logits and the loss), linear in
  tokens but priced by bandwidth, not FLOP/s;
and each optimizer step reads and writes every trainable parameter's states.

The seconds per unit of each term (a `Calibration`) are measured on a GPU (`seqprof calibrate`,
benchmarks/runtime/): the H200's ships with seqprof. Other GPUs get the H200's scaled by their data-sheet peak
FLOP/s and memory bandwidth, marked "analytic". The naive baseline (`naive_step_seconds`) is what a data sheet
alone gives: all FLOPs over peak × one MFU.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import Architecture
from seqprof.predict.memory.setup import TrainingSetup

FEATURES = ("micro_batches", "layer_passes", "matmul_flops", "attention_flops", "body_elements",
            "logits_elements", "optimizer_params")
NAIVE_MFU = 0.4  # the one utilisation figure the naive baseline divides by


@dataclass(frozen=True)
class Work:
    """What an epoch (or a step, or one micro batch) computes, summed over its micro batches."""

    micro_batches: float
    tokens: float  # Σ rows × padded length: every token the GPU computes, padding included
    attention: float  # Σ rows × attended length²: rows × padded length² for padded or packed rows
    optimizer_steps: float
    real_tokens: float = 0.0  # tokens that are data (for tokens/s)

    def __add__(self, other: Work) -> Work:
        return Work(self.micro_batches + other.micro_batches, self.tokens + other.tokens,
                    self.attention + other.attention, self.optimizer_steps + other.optimizer_steps,
                    self.real_tokens + other.real_tokens)

    @classmethod
    def batch(cls, rows: int, padded_len: int, *, real_tokens: int | None = None, accumulation: int = 1) -> Work:
        """One micro batch of `rows` sequences padded (or packed) to `padded_len`."""
        return cls(1, rows * padded_len, rows * padded_len ** 2, 1 / accumulation,
                   rows * padded_len if real_tokens is None else real_tokens)


@dataclass(frozen=True)
class ModelCosts:
    """Per-token and per-row costs of one architecture under one training setup."""

    layers: int
    matmul_per_token: float  # FLOPs a computed token costs in the matmuls, forward + backward (+ recompute)
    attention_per_len2: float  # FLOPs per unit of rows × len² (all layers, forward + backward)
    body_per_token: float  # elementwise elements a token touches across the layers, all passes
    logits_per_token: float  # logits elements a token touches (vocab × passes)
    passes: float  # layer passes per micro batch (forward, backward, recompute, reference forward)
    trainable_params: int

    def features(self, work: Work) -> dict[str, float]:
        return {"micro_batches": work.micro_batches, "layer_passes": work.micro_batches * self.layers * self.passes,
                "matmul_flops": work.tokens * self.matmul_per_token,
                "attention_flops": work.attention * self.attention_per_len2,
                "body_elements": work.tokens * self.body_per_token,
                "logits_elements": work.tokens * self.logits_per_token,
                "optimizer_params": work.optimizer_steps * self.trainable_params}

    def flops(self, work: Work) -> float:
        f = self.features(work)
        return f["matmul_flops"] + f["attention_flops"]


def model_costs(arch: Architecture, setup: TrainingSetup) -> ModelCosts:
    """The terms above for `arch` trained as `setup` says (per sequence of the micro batch; DPO's
    chosen and rejected rows are rows of the work, so they are counted by the caller's shapes)."""
    from seqprof.predict.memory.activations import step_context

    full = not (setup.adapter or setup.load_in_4bit or setup.load_in_8bit)
    per_layer_matmul = sum(lin.d_in * lin.d_out * lin.count for lin in arch.layer_linears())
    if arch.is_moe:  # a token passes through its top-k experts only
        per_expert = sum(lin.d_in * lin.d_out for lin in arch.layer_linears() if lin.count > 1)
        per_layer_matmul -= (arch.num_experts - arch.num_experts_per_tok) * per_expert
    body = 2.0 * arch.num_layers * per_layer_matmul
    head = 2.0 * arch.vocab_size * arch.hidden_size
    gc = 1.0 if setup.gradient_checkpointing else 0.0
    reference = 1.0 if setup.trainer == "dpo" and setup.reference in ("model", "lora_base") else 0.0
    backward = 2.0 if full else 1.0  # input gradients always; weight gradients only for trained weights
    matmul = body * (1 + backward + gc + reference) + head * (1 + backward + reference)
    attn_fwd = 2.0 * arch.num_layers * arch.num_heads * arch.head_dim  # QKᵀ and PV, causal half, 2 FLOPs a MAC
    attention = attn_fwd * (1 + 2.5 + gc + reference)  # the flash backward does 2.5x the forward's matmuls
    passes = 1 + 2 + gc + reference
    trainable = arch.param_count()
    if not full:
        cx = step_context(arch, setup)
        trainable = arch.num_layers * sum(setup.lora_r * (lin.d_in + lin.d_out) * lin.count
                                          for lin in arch.layer_linears() if lin.name in cx.targets)
    return ModelCosts(layers=arch.num_layers, matmul_per_token=matmul, attention_per_len2=attention,
                      body_per_token=float(arch.num_layers * arch.hidden_size * passes),
                      logits_per_token=float(arch.vocab_size * (2 + reference)), passes=passes,
                      trainable_params=trainable)


@dataclass(frozen=True)
class Calibration:
    """Seconds per unit of each FEATURES term on one GPU, and where the figures come from."""

    gpu: str
    seconds_per_unit: Mapping[str, float]
    source: str  # "measured on ..." or "analytic: ..."
    measured: bool

    def seconds(self, costs: ModelCosts, work: Work) -> float:
        f = costs.features(work)
        return sum(self.seconds_per_unit.get(name, 0.0) * value for name, value in f.items())

    def to_dict(self) -> dict:
        return {"kind": "seqprof.calibration", "version": 1, "gpu": self.gpu, "measured": self.measured,
                "source": self.source, "seconds_per_unit": dict(self.seconds_per_unit)}

    @classmethod
    def from_dict(cls, data: Mapping, path: str = "<calibration>") -> Calibration:
        try:
            units = {name: float(data["seconds_per_unit"].get(name, 0.0)) for name in FEATURES}
            if data.get("kind") != "seqprof.calibration" or any(v < 0 or v != v for v in units.values()):
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
_MEMORY_TERMS = ("body_elements", "logits_elements", "optimizer_params")
MEASURED_GPU = "H200 141GB"


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


def naive_step_seconds(costs: ModelCosts, work: Work, gpu: str = MEASURED_GPU) -> float:
    """The data-sheet baseline: every matmul and attention FLOP at NAIVE_MFU of the GPU's peak."""
    return costs.flops(work) / (GPU_SPEEDS[gpu][0] * NAIVE_MFU)


def fit_calibration(rows: list[tuple[dict[str, float], float]], gpu: str, source: str) -> Calibration:
    """Non-negative least squares on relative error: each measurement (features, seconds) weighs the same."""
    import numpy as np
    from scipy.optimize import nnls

    a = np.array([[f[name] / seconds for name in FEATURES] for f, seconds in rows], dtype=np.float64)
    scale = a.max(axis=0)
    scale[scale == 0] = 1.0
    coef, _ = nnls(a / scale, np.ones(len(rows)))
    return Calibration(gpu=gpu, seconds_per_unit={n: float(c / s) for n, c, s in zip(FEATURES, coef, scale)},
                       source=source, measured=True)
