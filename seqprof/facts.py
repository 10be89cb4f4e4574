"""Facts: everything the lint rules ask about, computed once per config (plan, data, run, simulation, memory, gpu)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .plan import Plan, Setting
from .profile import Profile

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
    memory: Any = None  # filled by the memory issue; rules needing it are skipped until then
    gpu: GpuFacts | None = None
    profile: Profile | None = field(default=None, repr=False)
    packing_key: str | None = None  # how to switch packing on in this dialect/trainer, None when unsupported

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
            "keys": _Values(self.keys),
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
                world_size: int | None = None, simulate: bool = True, memory: Any = None) -> Facts:
    """Compute every fact once; facts that need data are None without a profile.

    `simulate=False` skips the strategy simulation when no enabled rule reads it; `memory` is the
    memory estimate (seqprof.memory), None until the memory model provides one."""
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
    return Facts(plan=plan, cfg=cfg, setting=dict(plan.settings), flags=flags, data=data, run=run,
                 lazy_sim=lazy_sim, memory=memory, gpu=gpu, profile=profile, packing_key=packing_key)


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


# --- simulation (seqprof.buckets / seqprof.simulate) ------------------------------------------

DEFAULT_NUM_BUCKETS = 6  # the story's drafter run used six solved buckets
DEFAULT_MICRO_BATCH = 8  # transformers' per_device_train_batch_size default
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
    """Every batching strategy simulated on the data (seqprof.simulate results), and the plan's own."""

    num_buckets: int
    batch_size: int | None
    token_budget: int | None
    max_seq_length: int
    boundaries: tuple[int, ...]  # padding-optimal bucket upper bounds (seqprof.buckets)
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
    from .buckets import optimal_boundaries
    from .simulate import simulate as run_simulation

    token_budget = _positive_int(cfg.get("token_budget"))
    batch_size = None if token_budget else (_positive_int(cfg.get("micro_batch_size")) or DEFAULT_MICRO_BATCH)
    cap = data.cap or data.recommended
    boundaries = optimal_boundaries(profile.sequence, DEFAULT_NUM_BUCKETS, cap)
    simulation = run_simulation(profile.sequence, max_seq_length=cap, boundaries=boundaries, batch_size=batch_size,
                                token_budget=token_budget, epochs=SIM_EPOCHS)
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
    """--gpu NAME (seqprof.gpus table) or --gpu-memory SIZE; None when neither is given."""
    if memory is None and name is None:
        return None
    from .gpus import gpu_memory_bytes, parse_memory_size

    if memory is not None:
        return GpuFacts(name=name or f"{memory} GPU", memory_bytes=parse_memory_size(memory))
    label, size = gpu_memory_bytes(name)
    return GpuFacts(name=label, memory_bytes=size)
