"""Facts: everything the lint rules ask about, computed once per config (plan, data, run, simulation, memory, gpu)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from seqprof.config.plan import Plan, Setting
from seqprof.dataset.profile import Profile

# What a framework does with a row longer than its max_seq_length when the config does not say
# (the config reader may state it as the setting `overflow`; this table is the fallback).
OVERFLOW_DEFAULTS: Mapping[str, tuple[str, str]] = {
    "axolotl": ("drop", "axolotl: excess_length_strategy defaults to 'drop' "
                        "(utils/data/utils.py drop_long_seq_in_dataset)"),
    "auto_antislop": ("drop", "auto-antislop: rows with prompt + 1 > finetune_max_seq_length are filtered out "
                              "(utils/dataset_helpers.py load_ftpo_multi_dataset; the DPO path filters the same way)"),
    "trl": ("truncate", "TRL: SFT/DPO truncate to max_length (truncation_mode keep_start / keep_end)"),
    "unsloth": ("truncate", "Unsloth trains through TRL's SFTTrainer, which truncates to max_seq_length"),
    "llamafactory": ("truncate", "LLaMA-Factory: cutoff_len truncates source and target (data/processor infer_seqlen)"),
    "llamafactory_v1": ("truncate", "LLaMA-Factory v1: cutoff_len truncates"),
    "torchtune": ("truncate", "torchtune: the model tokenizer truncates to max_seq_len"),
}

# The key a fix should name when the config does not state the setting (the dialect's own name for it).
KEY_NAMES: Mapping[str, Mapping[str, str]] = {
    "max_seq_length": {"trl": "max_length", "unsloth": "max_seq_length", "axolotl": "sequence_len",
                       "llamafactory": "cutoff_len", "llamafactory_v1": "cutoff_len",
                       "torchtune": "tokenizer.max_seq_len", "auto_antislop": "finetune_max_seq_length",
                       "specforge": "data.max_length", "hf": "max_seq_length"},
    "save_steps": {"specforge": "training.save_interval"},
    "micro_batch_size": {"trl": "per_device_train_batch_size", "hf": "per_device_train_batch_size",
                         "unsloth": "per_device_train_batch_size", "axolotl": "micro_batch_size",
                         "llamafactory": "per_device_train_batch_size", "llamafactory_v1": "micro_batch_size",
                         "torchtune": "batch_size", "auto_antislop": "finetune_batch_size",
                         "specforge": "training.batch_size"},
    "token_budget": {"speculators": "total_seq_len"},
    "gradient_accumulation_steps": {"trl": "gradient_accumulation_steps", "auto_antislop":
                                    "finetune_gradient_accumulation_steps", "specforge": "training.accumulation_steps",
                                    "torchtune": "gradient_accumulation_steps"},
    "num_anchors": {"specforge": "training.num_anchors"},
    "block_size": {"specforge": "model.draft_block_size"},
}


@dataclass(frozen=True)
class Loc:
    """A place in the config a finding can point at (a Setting or ConfigDiagnostic also serves)."""

    key: str | None
    file: str | None
    line: int | None
    value: Any = None


@dataclass(frozen=True)
class DataFacts:
    """What the data's exact length distribution says about this plan's length cap."""

    source: str
    tokenizer: str
    rows: int
    mean: float
    min: int
    p50: float
    p90: float
    p95: float
    p99: float
    max: int
    total_tokens: int
    recommended: int  # the profile's recommended max_seq_length
    recommended_coverage: float
    recommended_truncated_rows: int
    cap: int | None  # the plan's max_seq_length
    rows_over_cap: int
    share_over_cap: float
    tokens_over_cap: int  # tokens cut off (truncate) or never trained on (drop)
    fixed_use: float | None  # content share of a batch padded to the cap
    cap_over_recommended: float | None  # tokens per padded example, cap vs recommended
    padding_free_bound: float | None  # cap / mean kept length: the most any padding fix can save
    overflow: str  # drop | truncate | raise | unknown
    overflow_source: str


@dataclass(frozen=True)
class RunFacts:
    """How long the run is in optimizer steps and when it first writes a checkpoint."""

    rows: int | None  # examples per epoch (after drops and example caps)
    micro_batch_size: int
    gradient_accumulation_steps: int
    world_size: int
    examples_per_step: int
    steps_per_epoch: int | None
    epochs: float | None
    estimated_steps: int
    steps_source: str  # max_steps | data
    save_strategy: str | None
    checkpoint_every: int | None  # optimizer steps between saves; None when it never saves mid-run
    first_checkpoint: int | None
    mid_run_checkpoint: bool | None  # None when the config and its dialect leave saving unknown


@dataclass(frozen=True)
class GpuFacts:
    name: str
    memory_bytes: int


@dataclass(frozen=True)
class Facts:
    """Everything a rule's condition and message may read, computed once."""

    plan: Plan
    cfg: Mapping[str, Any]
    setting: Mapping[str, Setting]
    flags: Mapping[str, Loc]
    data: DataFacts | None = None
    run: RunFacts | None = None
    lazy_sim: Lazy | None = field(default=None, repr=False)  # strategy simulation, run on first use
    memory: MemoryCheck | None = None  # the predicted peak (seqprof.predict.memory), None when it cannot be estimated
    gpu: GpuFacts | None = None
    profile: Profile | None = field(default=None, repr=False)
    packing_key: str | None = None  # how to switch packing on in this dialect/trainer, None when unsupported
    drafter: DrafterFacts | None = None  # drafter plans: the logits over the token budget
    architecture: Any = None  # seqprof.predict.architecture.Architecture, None when no config.json was found
    memory_reason: str | None = None  # why `memory` is None (no config.json, a drafter plan, ...)

    @property
    def sim(self) -> SimFacts | None:
        """The strategy simulation (None without data); computed at most once, when first read."""
        return self.lazy_sim.get() if self.lazy_sim is not None else None

    def context(self) -> dict[str, Any]:
        """The names a rule's Jinja2 condition and message see (`sim` simulates only when a rule reads it)."""
        return {
            "plan": self.plan, "dialect": self.plan.dialect, "cfg": _Values(self.cfg),
            "setting": _Values(self.setting), "flags": _Values(self.flags), "data": self.data,
            "run": self.run, "sim": self.lazy_sim, "memory": self.memory, "gpu": self.gpu,
            "diagnostics": self.plan.diagnostics, "packing_key": self.packing_key,
            "keys": _Values(self.keys), "drafter": self.drafter,
        }

    @property
    def keys(self) -> dict[str, str]:
        """Setting name -> the config's key for it: the stated key, else the dialect's name, else the name."""
        names = {name: table.get(self.plan.dialect, name) for name, table in KEY_NAMES.items()}
        names.update({name: s.key for name, s in self.setting.items() if s.key})
        return _KeyNames(names)


class Lazy:
    """A fact computed on first use and then kept: rules whose conditions never read it cost nothing.

    Attribute reads go to the computed value, so a rule writes `sim.bucketed.padding_efficiency`."""

    __slots__ = ("_compute", "_value", "_done")

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute = compute
        self._value = None
        self._done = False

    def get(self) -> Any:
        if not self._done:
            self._value = self._compute()
            self._done = True
        return self._value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __bool__(self) -> bool:
        return self.get() is not None


class _Values:
    """Read-only attribute view for rules: `cfg.max_seq_length` is None when the plan lacks it."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            return None

    def __contains__(self, name: str) -> bool:
        return name in self._data

    def __iter__(self):
        return iter(self._data)


class _KeyNames(dict):
    """`keys.x` is the config's key for setting x; a setting no table names is called by its own name."""

    def __missing__(self, name: str) -> str:
        return name


def build_facts(plan: Plan, profile: Profile | None = None, *, gpu: GpuFacts | None = None,
                world_size: int | None = None, simulate: bool = True, memory: Any = None,
                model_config: str | None = None, estimate_memory: bool = True) -> Facts:
    """Compute every fact once; facts that need data are None without a profile.

    `simulate=False` skips the strategy simulation when no enabled rule reads it. `memory` is a
    seqprof.predict.memory_plan.MemoryFacts already computed for this plan; without it the estimate is made here
    (architecture from `model_config`, else the plan's model found locally) unless `estimate_memory`
    is False (no enabled rule reads memory)."""
    cfg = {name: s.value for name, s in plan.settings.items()}
    if world_size is not None:
        cfg["world_size"] = world_size
    flags = _flags(plan)
    data = _data_facts(plan, profile) if profile is not None else None
    run = _run_facts(plan, cfg, data)
    lazy_sim = None
    if simulate and profile is not None and _can_simulate(cfg, profile, data):
        lazy_sim = Lazy(lambda: _simulation(plan, cfg, profile, data))
    packing_key = PACKING_KEYS.get(plan.dialect) if cfg.get("trainer") in PACKING_TRAINERS else None
    mem = MemoryInputs()
    if memory is not None or estimate_memory:
        mem = memory_inputs(plan, memory=memory, model_config=model_config, gpu=gpu, world_size=world_size)
    return Facts(plan=plan, cfg=cfg, setting=dict(plan.settings), flags=flags, data=data, run=run,
                 lazy_sim=lazy_sim, memory=mem.check, gpu=gpu, profile=profile, packing_key=packing_key,
                 drafter=mem.drafter, architecture=mem.architecture, memory_reason=mem.reason)


# --- config-only facts -------------------------------------------------------------------------

FLAG_NAMES = ("fp16", "bf16", "load_in_4bit", "load_in_8bit", "deepspeed", "fsdp")


def _flags(plan: Plan) -> dict[str, Loc]:
    """Switches stated as true in the file (a plan setting if the reader made one, else the top-level key)."""
    out: dict[str, Loc] = {}
    for name in FLAG_NAMES:
        s = plan.settings.get(name)
        if s is not None and s.stated:
            if _is_on(s.value):
                out[name] = Loc(key=s.key, file=s.file, line=s.line, value=s.value)
            continue
        if name in plan.raw and _is_on(plan.raw[name]):
            out[name] = Loc(key=name, file=plan.path, line=plan.key_lines.get(name), value=plan.raw[name])
    return out


def _is_on(value: Any) -> bool:
    """Explicitly switched on: true, or a non-empty path/table (deepspeed: ds.json); 'auto' is not."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "no", "none", "null", "0", "auto", "off")
    if isinstance(value, (dict, list)):
        return bool(value)
    return False


# --- data facts --------------------------------------------------------------------------------


def _data_facts(plan: Plan, profile: Profile) -> DataFacts:
    hist = profile.sequence
    stats = hist.stats()
    rec = profile.recommendation
    cap = _positive_int(plan.get("max_seq_length"))
    overflow, overflow_source = _overflow(plan)
    rows_over = tokens_over = 0
    fixed_use = cap_over_rec = bound = None
    if cap is not None and stats.count:
        counts = hist.counts.astype(np.int64)
        lengths = np.arange(counts.size, dtype=np.int64)
        over = lengths > cap
        rows_over = int(counts[over].sum())
        tokens_over = int(np.dot(lengths[over] - cap, counts[over]))
        if overflow == "drop":
            kept_rows = stats.count - rows_over
            kept_tokens = int(np.dot(lengths[~over], counts[~over]))
        else:
            kept_rows = stats.count
            kept_tokens = stats.total_tokens - tokens_over
        if kept_rows:
            fixed_use = kept_tokens / (kept_rows * cap)
            bound = cap * kept_rows / kept_tokens if kept_tokens else None
        cap_over_rec = cap / rec.max_seq_length
    return DataFacts(
        source=profile.dataset.path, tokenizer=profile.tokenizer.name, rows=stats.count,
        mean=stats.mean, min=stats.min, p50=stats.p50, p90=stats.p90, p95=stats.p95, p99=stats.p99,
        max=stats.max, total_tokens=stats.total_tokens, recommended=rec.max_seq_length,
        recommended_coverage=rec.coverage, recommended_truncated_rows=rec.truncated_rows, cap=cap,
        rows_over_cap=rows_over, share_over_cap=(rows_over / stats.count) if stats.count else 0.0,
        tokens_over_cap=tokens_over, fixed_use=fixed_use, cap_over_recommended=cap_over_rec,
        padding_free_bound=bound, overflow=overflow, overflow_source=overflow_source,
    )


def _overflow(plan: Plan) -> tuple[str, str]:
    """drop/truncate/raise for over-long rows: stated in the config, else the dialect's default."""
    for name in ("overflow", "excess_length_strategy"):
        s = plan.settings.get(name)
        if s is not None and s.value:
            return str(s.value), (f"{s.key} in the config" if s.stated else s.source)
    raw = plan.raw.get("excess_length_strategy")
    if plan.dialect == "axolotl" and raw:
        return str(raw), "excess_length_strategy in the config"
    return OVERFLOW_DEFAULTS.get(plan.dialect, ("unknown", f"{plan.dialect}: not documented"))


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0 and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def _positive_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0:
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if number > 0 else None
    return None


# --- run length and checkpoints --------------------------------------------------------------


def _run_facts(plan: Plan, cfg: Mapping[str, Any], data: DataFacts | None) -> RunFacts | None:
    """Estimated optimizer steps (stated max_steps, else rows / examples per step * epochs)."""
    micro = _positive_int(cfg.get("micro_batch_size")) or 1
    accum = _positive_int(cfg.get("gradient_accumulation_steps")) or 1
    world = _positive_int(cfg.get("world_size")) or 1
    max_steps = _positive_int(cfg.get("max_steps"))
    epochs = _positive_number(cfg.get("num_epochs"))
    rows = None
    steps_per_epoch = None
    if data is not None:
        rows = data.rows - data.rows_over_cap if data.overflow == "drop" else data.rows
        cap_rows = _positive_int(cfg.get("max_train_examples"))
        if cap_rows is not None:
            rows = min(rows, cap_rows)
        steps_per_epoch = optimizer_steps_per_epoch(rows, micro, accum, world)
    if max_steps is not None:
        estimated, source = max_steps, "max_steps"
    elif steps_per_epoch is not None and epochs is not None:
        estimated, source = max(1, math.ceil(steps_per_epoch * epochs)), "data"
    else:
        return None
    strategy, every, known = _checkpoint_interval(cfg, steps_per_epoch, estimated)
    first = every
    mid = (first is not None and first < estimated) if known else None
    return RunFacts(rows=rows, micro_batch_size=micro, gradient_accumulation_steps=accum, world_size=world,
                    examples_per_step=micro * accum * world, steps_per_epoch=steps_per_epoch, epochs=epochs,
                    estimated_steps=estimated, steps_source=source, save_strategy=strategy,
                    checkpoint_every=every, first_checkpoint=first, mid_run_checkpoint=mid)


def optimizer_steps_per_epoch(rows: int, micro_batch_size: int, accumulation: int, world_size: int) -> int:
    """HF Trainer: each rank sees ceil(rows / (micro * world)) batches; a step every `accumulation`
    of them, the last partial accumulation included (transformers >= 4.46)."""
    batches = math.ceil(rows / (micro_batch_size * world_size))
    return max(1, math.ceil(batches / accumulation)) if rows else 0


def _checkpoint_interval(cfg: Mapping[str, Any], steps_per_epoch: int | None,
                         total: int) -> tuple[str | None, int | None, bool]:
    """(save strategy, optimizer steps between saves, whether that is known).

    Unknown (the rule stays silent) when neither config nor dialect says how it saves, when saving
    depends on evaluation (best), or when saves are per epoch and the epoch length is not known
    (no data)."""
    strategy = cfg.get("save_strategy")
    strategy = str(strategy).lower() if strategy is not None else None
    saves_per_epoch = _positive_number(cfg.get("saves_per_epoch"))
    if strategy in ("no", "none", "false"):
        return "no", None, True
    if strategy == "epoch" or saves_per_epoch is not None:
        if steps_per_epoch is None:
            return "epoch", None, False
        return "epoch", max(1, math.floor(steps_per_epoch / (saves_per_epoch or 1.0))), True
    if strategy in ("steps", None):
        number = _positive_number(cfg.get("save_steps"))
        if number is None:
            return strategy, None, False
        every = math.ceil(number * total) if number < 1 else int(number)  # HF: a float < 1 is a ratio
        return "steps", every, True
    return strategy, None, False


# --- simulation (seqprof.batching.buckets / seqprof.batching.simulate) ------------------------------------------

DEFAULT_NUM_BUCKETS = 6  # the story's drafter run used six solved buckets
SIM_EPOCHS = 2  # seeded epochs per random strategy: the fewest that still measure batch repetition

# The key that switches packing on, per dialect (absent: the framework has no packing for this trainer).
PACKING_KEYS: Mapping[str, str] = {
    "axolotl": "sample_packing: true",
    "trl": "packing: true",
    "unsloth": "packing: true",
    "llamafactory": "packing: true (or neat_packing: true to keep examples from attending to each other)",
    "llamafactory_v1": "packing: true",
    "torchtune": "dataset.packed: true",
}
PACKING_TRAINERS = (None, "sft", "pretrain", "pt")


@dataclass(frozen=True)
class SimFacts:
    """Every batching strategy simulated on the data (seqprof.batching.simulate results), and the plan's own."""

    num_buckets: int
    batch_size: int | None
    token_budget: int | None
    max_seq_length: int
    boundaries: tuple[int, ...]  # padding-optimal bucket upper bounds (seqprof.batching.buckets)
    current_name: str  # the strategy the plan uses
    current: Any  # its StrategyResult
    fixed: Any
    random: Any
    sorted: Any
    group_by_length: Any
    bucketed: Any
    packing: Any
    packing_key: str | None  # how to switch packing on in this dialect, None when unsupported


def current_strategy(cfg: Mapping[str, Any]) -> str:
    """Which simulated strategy the plan's padding/shuffling settings amount to."""
    padding = cfg.get("padding")
    if padding == "max_length":
        return "fixed_padding"
    if padding in ("packed", "padding_free"):
        return "packing_bfd"
    if cfg.get("sort_by_length") and not cfg.get("shuffle"):
        return "sorted_static"
    if cfg.get("group_by_length"):
        return "group_by_length"
    return "random_shuffle"


def _can_simulate(cfg: Mapping[str, Any], profile: Profile, data: DataFacts) -> bool:
    """False when there is nothing meaningful to simulate (no rows, or a token budget below the cap)."""
    token_budget = _positive_int(cfg.get("token_budget"))
    return profile.sequence.count > 0 and not (token_budget is not None and token_budget < (data.cap or
                                                                                          data.recommended))


def _simulation(plan: Plan, cfg: Mapping[str, Any], profile: Profile, data: DataFacts) -> SimFacts:
    """Solve bucket boundaries and simulate every strategy under the plan's batch and length cap."""
    from seqprof.batching.buckets import DEFAULT_BATCH_SIZE, optimal_boundaries
    from seqprof.batching.simulate import simulate as run_simulation

    token_budget = _positive_int(cfg.get("token_budget"))
    batch_size = None if token_budget else (_positive_int(cfg.get("micro_batch_size")) or DEFAULT_BATCH_SIZE)
    # transformers' Trainer: LengthGroupedSampler(train_batch_size * gradient_accumulation_steps, ...)
    accum = _positive_int(cfg.get("gradient_accumulation_steps")) or 1
    mega_batch = batch_size * accum if batch_size is not None else None
    cap = data.cap or data.recommended
    boundaries = optimal_boundaries(profile.sequence, DEFAULT_NUM_BUCKETS, cap)
    simulation = run_simulation(profile.sequence, max_seq_length=cap, boundaries=boundaries, batch_size=batch_size,
                                token_budget=token_budget, epochs=SIM_EPOCHS, mega_batch_size=mega_batch)
    packing_key = PACKING_KEYS.get(plan.dialect) if cfg.get("trainer") in PACKING_TRAINERS else None
    results = simulation.strategies
    current = current_strategy(cfg)
    return SimFacts(num_buckets=DEFAULT_NUM_BUCKETS, batch_size=batch_size, token_budget=token_budget,
                    max_seq_length=cap, boundaries=tuple(boundaries), current_name=current,
                    current=results[current], fixed=results["fixed_padding"], random=results["random_shuffle"],
                    sorted=results["sorted_static"], group_by_length=results["group_by_length"],
                    bucketed=results["bucketed_shuffle"], packing=results["packing_bfd"], packing_key=packing_key)


# --- GPU ---------------------------------------------------------------------------------------


def gpu_facts(name: str | None = None, memory: str | None = None) -> GpuFacts | None:
    """--gpu NAME (seqprof.predict.gpus table) or --gpu-memory SIZE; None when neither is given."""
    if memory is None and name is None:
        return None
    from seqprof.predict.gpus import gpu_memory_bytes, parse_memory_size

    if memory is not None:
        return GpuFacts(name=name or f"{memory} GPU", memory_bytes=parse_memory_size(memory))
    label, size = gpu_memory_bytes(name)
    return GpuFacts(name=label, memory_bytes=size)


# --- memory (seqprof.predict.memory, seqprof.predict.architecture) ---------------------------------------------

GIB = 2**30
NEAR_GPU_LIMIT = 0.10  # "within 10% of the GPU's memory": the warning band under the limit
DRAFTER_LOGITS_LIMIT = 0.25  # a logits tensor over a quarter of the GPU: its loss needs three quarters more
_FIXED_COMPONENTS = ("cuda_context", "allocator_overhead", "workspace")  # the same for every config
DRAFTER_NOTE = "drafter training: the peak estimate covers fine-tuning (SFT, DPO), not a frozen target + draft model"

# How each memory fix is switched on in a dialect's own keys; a missing entry: the framework has no switch.
MEMORY_FIXES: Mapping[str, Mapping[str, str]] = {
    "axolotl": {
        "checkpointing": "gradient_checkpointing: true", "lora": "adapter: lora",
        "qlora": "adapter: qlora with load_in_4bit: true",
        "sharding": "deepspeed: deepspeed_configs/zero3_bf16.json (or fsdp_config)",
        "fused_loss": "plugins: [axolotl.integrations.liger.LigerPlugin] with liger_fused_linear_cross_entropy: "
                      "true, or plugins: [axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin] with "
                      "cut_cross_entropy: true",
        "lora_reference": "adapter: lora (the reference is then the base model with the adapter switched off)",
        "precompute_reference": "precompute_ref_log_probs: true"},
    "trl": {
        "checkpointing": "gradient_checkpointing: true", "lora": "use_peft: true (lora_r, lora_target_modules)",
        "qlora": "use_peft: true with load_in_4bit: true",
        "sharding": "deepspeed: a ZeRO-3 JSON, or fsdp: full_shard auto_wrap",
        "fused_loss": "use_liger_kernel: true",
        "lora_reference": "use_peft: true (with ref_model=None the trainer uses the base model, adapter "
                          "disabled, as the reference)",
        "precompute_reference": "precompute_ref_log_probs: true"},
    "hf": {
        "checkpointing": "gradient_checkpointing: true",
        "sharding": "deepspeed: a ZeRO-3 JSON, or fsdp: full_shard auto_wrap",
        "fused_loss": "use_liger_kernel: true"},
    "unsloth": {
        "checkpointing": "use_gradient_checkpointing: unsloth", "lora": "full_finetuning: false",
        "qlora": "load_in_4bit: true"},
    "llamafactory": {
        "checkpointing": "disable_gradient_checkpointing: false", "lora": "finetuning_type: lora",
        "qlora": "finetuning_type: lora with quantization_bit: 4",
        "sharding": "deepspeed: examples/deepspeed/ds_z3_config.json", "fused_loss": "enable_liger_kernel: true",
        "lora_reference": "finetuning_type: lora (with no ref_model, the base model with the adapter disabled "
                          "is the reference)"},
    "llamafactory_v1": {
        "lora": "peft_config: {name: lora}", "qlora": "quant_config: {quantization_bit: 4}",
        "sharding": "dist_config: {name: fsdp2}", "fused_loss": "kernel_config: {name: liger_kernel}"},
    "torchtune": {
        "checkpointing": "enable_activation_checkpointing: true",
        "lora": "a lora_* model builder (model._component_: torchtune.models.<family>.lora_<size>)",
        "qlora": "a qlora_* model builder (model._component_: torchtune.models.<family>.qlora_<size>)",
        "sharding": "a *_distributed recipe (FSDP)",
        "fused_loss": "loss._component_: torchtune.modules.loss.LinearCrossEntropyLoss",
        "lora_reference": "the lora_dpo recipe (the reference is the base model with the adapter disabled)"},
    "auto_antislop": {
        "checkpointing": "finetune_gradient_checkpointing: unsloth", "qlora": "finetune_load_in_4bit: true"},
}


@dataclass(frozen=True)
class MemoryComponent:
    """One component of the predicted peak, as a rule's message names it."""

    name: str
    label: str
    bytes: int
    share: float  # of the predicted peak

    @property
    def gib(self) -> float:
        return self.bytes / GIB


@dataclass(frozen=True)
class MemoryFixes:
    """The memory fixes written in the dialect's own keys; None where the framework has no switch for one."""

    checkpointing: str | None = None
    lora: str | None = None
    qlora: str | None = None
    sharding: str | None = None
    fused_loss: str | None = None
    lora_reference: str | None = None
    precompute_reference: str | None = None


@dataclass(frozen=True)
class MemoryOption:
    """The same step re-estimated with one fix applied: what to write, and the peak it predicts."""

    fix: str
    peak_bytes: int
    fits: bool | None  # None without a GPU

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB


@dataclass(frozen=True)
class MemoryCheck:
    """The memory estimate as the rules read it (and the HTML report draws it: components, peak, notes)."""

    peak_bytes: int
    components: Mapping[str, int]
    peak_phase: str
    notes: tuple[str, ...]
    top: tuple[MemoryComponent, ...]  # the config's own components, largest first (no context/slack)
    logits: MemoryComponent
    reference: MemoryComponent
    gpu_name: str | None
    gpu_bytes: int | None
    micro_batch_size: int
    seq_len: int
    tokens: int  # tokens in one forward (chosen + rejected for preference training)
    vocab_size: int
    precision: str
    dtype_bytes: int
    full_finetune: bool
    quantized: bool
    gradient_checkpointing: bool
    fused_loss: bool
    sharded: bool
    world_size: int
    world_size_known: bool  # stated in the config or by --gpus (else the estimate assumes 1 GPU)
    trainer: str
    reference_mode: str  # model | lora_base | precomputed
    fix: MemoryFixes
    source: str  # where the architecture came from
    estimate: Any = field(default=None, repr=False, compare=False)  # seqprof.predict.memory_plan.MemoryFacts
    keys: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB

    @property
    def capacity_bytes(self) -> int | None:
        """The GPU's memory (the HTML report reads this name)."""
        return self.gpu_bytes

    @property
    def gpu_gib(self) -> float | None:
        return self.gpu_bytes / GIB if self.gpu_bytes else None

    @property
    def headroom(self) -> float | None:
        """Free share of the GPU at the predicted peak (negative: over)."""
        return 1 - self.peak_bytes / self.gpu_bytes if self.gpu_bytes else None

    @property
    def over_gpu(self) -> bool:
        return bool(self.gpu_bytes) and self.peak_bytes > self.gpu_bytes

    @property
    def near_gpu(self) -> bool:
        """Fits, but within NEAR_GPU_LIMIT of the GPU's memory."""
        return bool(self.gpu_bytes) and not self.over_gpu and self.headroom < NEAR_GPU_LIMIT

    @property
    def over_gib(self) -> float:
        return (self.peak_bytes - self.gpu_bytes) / GIB if self.gpu_bytes else 0.0

    @property
    def logits_tensor_bytes(self) -> int:
        """One copy of the logits: tokens x vocabulary x the compute dtype's bytes (b·s·V·bytes)."""
        return self.tokens * self.vocab_size * self.dtype_bytes

    @property
    def logits_tensor_gib(self) -> float:
        return self.logits_tensor_bytes / GIB

    @property
    def largest_other(self) -> MemoryComponent | None:
        """The largest component that is not the logits."""
        return next((c for c in self.top if c.name != "logits"), None)

    @property
    def logits_dominate(self) -> bool:
        return bool(self.top) and self.top[0].name == "logits"

    @property
    def needs_reference_copy(self) -> bool:
        """Preference training that keeps a second full copy of the weights as its reference model."""
        from seqprof.predict.memory import REFERENCE_FREE

        return self.reference.bytes > 0 and self.trainer not in REFERENCE_FREE

    @cached_property
    def options(self) -> tuple[MemoryOption, ...]:
        """The fixes that lower the peak, each re-estimated (computed only when a message reads them)."""
        return _memory_options(self, ("micro_batch", "checkpointing", "lora", "qlora", "sharding"))

    @cached_property
    def loss_options(self) -> tuple[MemoryOption, ...]:
        return _memory_options(self, ("fused_loss",))

    @cached_property
    def reference_options(self) -> tuple[MemoryOption, ...]:
        return _memory_options(self, ("lora_reference", "precompute_reference"))


@dataclass(frozen=True)
class DrafterFacts:
    """A drafter run's full-vocabulary logits over its token budget: b·s·V·bytes (DESIGN.md, third story)."""

    tokens: int  # tokens per step on one GPU: token_budget, else micro batch x max length
    micro_batch_size: int
    max_length: int | None
    vocab_size: int  # the target's vocabulary (its lm_head sizes the logits)
    precision: str
    dtype_bytes: int
    at: Setting | None  # the key that sets the budget
    gpu_bytes: int | None
    positions: int | None  # DFlash family: micro batch x num_anchors x block_size positions need logits
    source: str
    from_budget: bool = False  # the plan states a token budget (else micro batch x max length)

    @property
    def logits_bytes(self) -> int:
        return self.tokens * self.vocab_size * self.dtype_bytes

    @property
    def logits_gib(self) -> float:
        return self.logits_bytes / GIB

    @property
    def loss_gib(self) -> float:
        """The tensor, its log-softmax and its gradient, as large each: what a cross-entropy over it holds."""
        return 3 * self.logits_bytes / GIB

    @property
    def share(self) -> float | None:
        """The logits tensor's share of the GPU (None without a GPU)."""
        return self.logits_bytes / self.gpu_bytes if self.gpu_bytes else None

    @property
    def gpu_gib(self) -> float | None:
        return self.gpu_bytes / GIB if self.gpu_bytes else None

    @property
    def limit_share(self) -> float:
        """The share of the GPU one logits tensor may take (DRAFTER_LOGITS_LIMIT)."""
        return DRAFTER_LOGITS_LIMIT

    @property
    def budget_limit(self) -> int | None:
        """The largest token budget whose logits stay within DRAFTER_LOGITS_LIMIT of the GPU."""
        if not self.gpu_bytes:
            return None
        return int(DRAFTER_LOGITS_LIMIT * self.gpu_bytes) // (self.vocab_size * self.dtype_bytes)

    @property
    def positions_gib(self) -> float | None:
        """The logits at only the positions the loss reads (DFlash anchors x block), in GiB."""
        return self.positions * self.vocab_size * self.dtype_bytes / GIB if self.positions else None


@dataclass(frozen=True)
class MemoryInputs:
    """What build_facts needs from the memory stage: the estimate, the drafter check, and why either is missing."""

    check: MemoryCheck | None = None
    drafter: DrafterFacts | None = None
    architecture: Any = None
    reason: str | None = None


def memory_inputs(plan: Plan, *, memory: Any = None, model_config: str | None = None,
                  gpu: GpuFacts | None = None, world_size: int | None = None) -> MemoryInputs:
    """The memory facts of one plan: seqprof.predict.memory's estimate for fine-tuning, the logits check for drafters.

    `memory` is a seqprof.predict.memory_plan.MemoryFacts already computed; `model_config` (--model-config) wins over the
    plan's model found locally. A config.json that is missing locally skips the memory rules, never a guess;
    an explicit --model-config that cannot be read is an error."""
    from seqprof.errors import SeqprofError
    from seqprof.predict.architecture import read_architecture

    drafter = str(plan.get("trainer") or "").lower() == "drafter"
    if model_config:
        read_architecture(model_config)  # the user named it: a bad file is an input error (exit 2)
    if drafter:  # the target's architecture sizes the logits; the fine-tuning estimate does not apply
        path, why = locate_model_config(plan, model_config, drafter=True)
        if path is None:
            return MemoryInputs(reason=why)
        try:
            arch = read_architecture(path)
        except SeqprofError as exc:
            return MemoryInputs(reason=str(exc))
        return MemoryInputs(drafter=drafter_facts(plan, arch, gpu), architecture=arch, reason=DRAFTER_NOTE)
    if memory is None:
        path, why = locate_model_config(plan, model_config)
        if path is None:
            return MemoryInputs(reason=why)
        from seqprof.predict.memory_plan import memory_facts

        try:
            memory = memory_facts(_with_world_size(plan, world_size), model_config=path,
                                  gpu_name=gpu.name if gpu else None, gpu_bytes=gpu.memory_bytes if gpu else None)
        except (TypeError, ValueError) as exc:  # a value the estimate cannot read: skip the rules, never crash lint
            return MemoryInputs(reason=f"the memory estimate could not read this config ({exc})")
    if not memory.available:
        return MemoryInputs(architecture=memory.architecture, reason=memory.note.removeprefix("skipped: "))
    return MemoryInputs(check=memory_check(plan, memory), architecture=memory.architecture)


def locate_model_config(plan: Plan, model_config: str | None = None,
                        drafter: bool = False) -> tuple[str | None, str]:
    """The config.json to read: --model-config, else the plan's model config / model found locally.

    A drafter plan's model_config_path is the draft model's JSON; its logits are sized by the target (model)."""
    from seqprof.predict.architecture import find_model_config

    if model_config:
        return model_config, ""
    names = [plan.get("model")] if drafter else [plan.get("model_config_path"), plan.get("model")]
    for name in names:
        if not isinstance(name, str) or not name.strip():
            continue
        found = find_model_config(name)
        if found is None and not name.startswith(("/", "~")):  # relative to the config file's folder
            found = find_model_config(str(Path(plan.path).resolve().parent / name))
        if found is not None:
            return str(found), ""
    model = plan.get("model")
    if not isinstance(model, str) or not model.strip():
        return None, "the config names no model; pass --model-config PATH/config.json"
    return None, f"no model config.json found locally for {model}; pass --model-config"


def _with_world_size(plan: Plan, world_size: int | None) -> Plan:
    """--gpus overrides the plan's world size for the estimate (it decides ZeRO/FSDP sharding)."""
    if world_size is None:
        return plan
    settings = dict(plan.settings)
    settings["world_size"] = Setting(world_size, None, None, None, "--gpus")
    return replace(plan, settings=settings)


def _world_size_known(plan: Plan) -> bool:
    s = plan.settings.get("world_size")
    return s is not None and (s.stated or s.source == "--gpus")


def _component(name: str, nbytes: int, peak: int) -> MemoryComponent:
    from seqprof.predict.memory import COMPONENT_LABELS

    return MemoryComponent(name=name, label=COMPONENT_LABELS.get(name, name.replace("_", " ")), bytes=int(nbytes),
                           share=nbytes / peak if peak else 0.0)


def memory_check(plan: Plan, mf: Any) -> MemoryCheck:
    """seqprof.predict.memory_plan.MemoryFacts (available) -> the facts the memory rules read, in the plan's own keys."""
    from seqprof.predict.memory import PRECISIONS

    est, setup, arch = mf.estimate, mf.setup, mf.architecture
    peak = est.peak_bytes
    comps = dict(est.components)
    own = sorted((_component(k, v, peak) for k, v in comps.items() if v > 0 and k not in _FIXED_COMPONENTS),
                 key=lambda c: -c.bytes)
    names = {name: table.get(plan.dialect, name) for name, table in KEY_NAMES.items()}
    names.update({name: s.key for name, s in plan.settings.items() if s.key})
    return MemoryCheck(
        peak_bytes=peak, components=comps, peak_phase=est.peak_phase, notes=(*mf.assumptions, *est.notes),
        top=tuple(own), logits=_component("logits", comps.get("logits", 0), peak),
        reference=_component("reference_model", comps.get("reference_model", 0), peak),
        gpu_name=mf.gpu_name, gpu_bytes=mf.gpu_bytes, micro_batch_size=setup.micro_batch_size,
        seq_len=setup.seq_len, tokens=setup.tokens, vocab_size=arch.vocab_size, precision=setup.precision,
        dtype_bytes=PRECISIONS[setup.precision], full_finetune=setup.adapter is None,
        quantized=setup.load_in_4bit or setup.load_in_8bit, gradient_checkpointing=setup.gradient_checkpointing,
        fused_loss=setup.loss != "hf", sharded=bool(setup.zero_stage or setup.fsdp), world_size=setup.world_size,
        world_size_known=_world_size_known(plan), trainer=setup.trainer, reference_mode=setup.reference,
        fix=MemoryFixes(**MEMORY_FIXES.get(plan.dialect, {})), source=mf.note, estimate=mf,
        keys=_KeyNames(names))


def _memory_options(check: MemoryCheck, kinds: tuple[str, ...]) -> tuple[MemoryOption, ...]:
    """Re-estimate the step with each applicable fix (seqprof.predict.memory.estimate_memory on a changed setup)."""
    from seqprof.predict.memory import ALL_LINEAR, estimate_memory

    mf = check.estimate
    setup, arch = mf.setup, mf.architecture
    fix, keys = check.fix, check.keys
    lora = {"adapter": "lora", "lora_targets": ALL_LINEAR, "lora_r": setup.lora_r, "master_weights_fp32": False}
    candidates: list[tuple[str, Any]] = []
    for kind in kinds:
        if kind == "micro_batch" and setup.micro_batch_size > 1:
            text = (f"{keys['micro_batch_size']}: 1 (multiply {keys['gradient_accumulation_steps']} "
                    f"by {setup.micro_batch_size} to keep the effective batch)")
            candidates.append((text, replace(setup, micro_batch_size=1)))
        elif kind == "checkpointing" and not setup.gradient_checkpointing and fix.checkpointing:
            candidates.append((fix.checkpointing, replace(setup, gradient_checkpointing=True)))
        elif kind == "lora" and setup.adapter is None and fix.lora:
            candidates.append((f"{fix.lora}, r={setup.lora_r} on all linear layers", replace(setup, **lora)))
        elif kind == "qlora" and not (setup.load_in_4bit or setup.load_in_8bit) and fix.qlora:
            targets = setup.lora_targets if setup.adapter else ALL_LINEAR
            candidates.append((fix.qlora, replace(setup, **{**lora, "lora_targets": targets}, load_in_4bit=True)))
        elif kind == "sharding" and setup.world_size > 1 and not (setup.zero_stage or setup.fsdp) and fix.sharding:
            candidates.append((f"{fix.sharding} over {setup.world_size} GPUs", replace(setup, zero_stage=3)))
        elif kind == "fused_loss" and setup.loss == "hf" and fix.fused_loss:
            candidates.append((fix.fused_loss, replace(setup, loss="liger")))
        elif kind == "lora_reference" and setup.adapter is None and fix.lora_reference:
            candidates.append((fix.lora_reference, replace(setup, **lora, reference="lora_base")))
        elif kind == "precompute_reference" and setup.reference == "model" and fix.precompute_reference:
            candidates.append((fix.precompute_reference, replace(setup, reference="precomputed")))
    if check.gpu_bytes and len(candidates) > 1:  # none alone may fit: then all of them together
        together = setup
        for field_name in ("micro_batch_size", "gradient_checkpointing", "adapter", "lora_targets", "lora_r",
                           "master_weights_fp32", "load_in_4bit", "zero_stage", "loss", "reference"):
            for _, changed in candidates:
                if getattr(changed, field_name) != getattr(setup, field_name):
                    together = replace(together, **{field_name: getattr(changed, field_name)})
        candidates.append(("all of these together", together))
    options = []
    for text, changed in candidates:
        peak = estimate_memory(arch, changed).peak_bytes
        options.append(MemoryOption(fix=text, peak_bytes=peak,
                                    fits=peak <= check.gpu_bytes if check.gpu_bytes else None))
    if len(options) > 1 and options[-1].fix == "all of these together" and any(o.fits for o in options[:-1]):
        options.pop()  # one change alone is enough
    return tuple(options)


def drafter_facts(plan: Plan, arch: Any, gpu: GpuFacts | None) -> DrafterFacts | None:
    """b·s·V·bytes for a drafter plan: its token budget (or micro batch x max length) x the target's vocabulary."""
    from seqprof.predict.memory import PRECISIONS

    precision = str(plan.get("precision") or "bf16").lower()
    if precision not in PRECISIONS:
        precision = "bf16"
    micro = _positive_int(plan.get("micro_batch_size")) or 1
    length = _positive_int(plan.get("max_seq_length"))
    budget = _positive_int(plan.get("token_budget"))
    if budget is not None:
        tokens, at = budget, plan.setting("token_budget")
    elif length is not None:
        tokens, at = micro * length, plan.setting("max_seq_length")
    else:
        return None
    anchors, block = _positive_int(plan.get("num_anchors")), _positive_int(plan.get("block_size"))
    positions = micro * anchors * block if anchors and block and budget is None else None
    return DrafterFacts(tokens=tokens, micro_batch_size=micro, max_length=length, vocab_size=arch.vocab_size,
                        precision=precision, dtype_bytes=PRECISIONS[precision], at=at,
                        gpu_bytes=gpu.memory_bytes if gpu else None,
                        positions=positions if positions and positions < tokens else None, source=arch.source,
                        from_budget=budget is not None)
