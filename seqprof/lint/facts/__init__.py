"""Facts: everything the lint rules ask about, computed once per config (plan, data, run, simulation, memory, gpu)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from seqprof.config.plan import Plan, Setting
from seqprof.dataset.profile import Profile
from seqprof.lint.facts.common import KEY_NAMES, KeyNames, Lazy, Loc
from seqprof.lint.facts.config import (
    completion_unread_keys,
    config_flags,
    key_locs,
    lora_target_typos,
    none_texts,
)
from seqprof.lint.facts.data import DataFacts, data_facts
from seqprof.lint.facts.drafter import DrafterFacts
from seqprof.lint.facts.gpu import GpuFacts, gpu_facts
from seqprof.lint.facts.memory import (
    NEAR_GPU_LIMIT,
    MemoryCheck,
    MemoryInputs,
    memory_inputs,
)
from seqprof.lint.facts.run import RunFacts, optimizer_steps_per_epoch, run_facts
from seqprof.lint.facts.time import TimeFacts, time_facts
from seqprof.lint.facts.simulation import (
    DEFAULT_NUM_BUCKETS,
    PACKING_KEYS,
    PACKING_TRAINERS,
    SIM_EPOCHS,
    SimFacts,
    can_simulate,
    simulation,
)


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
    lazy_time: Lazy | None = field(default=None, repr=False)  # hours on the GPU (TimeFacts), on first use
    time_reason: str | None = None  # why there is no time: no --gpu, no data, no config.json, ...
    registry: Any = None  # seqprof.lint.config_data.DatasetRegistry: LLaMA-Factory's dataset_info.json, when read

    @property
    def time(self) -> TimeFacts | None:
        """The run's hours on the GPU (None without a GPU, data or the model's config.json)."""
        return self.lazy_time.get() if self.lazy_time is not None else None

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
            "keys": _Values(self.keys), "drafter": self.drafter, "time": self.lazy_time,
            "raw": _Values(self.plan.raw), "loc": _Values(key_locs(self.plan)),  # the file's top-level keys as written
            "registry": self.registry, "lora_target_typos": lora_target_typos(self.plan),
            "completion_unread_keys": completion_unread_keys(self.plan),
            "none_texts": none_texts(self.plan),
        }

    @property
    def keys(self) -> dict[str, str]:
        """Setting name -> the config's key for it: the stated key, else the dialect's name, else the name."""
        names = {name: table.get(self.plan.dialect, name) for name, table in KEY_NAMES.items()}
        names.update({name: s.key for name, s in self.setting.items() if s.key})
        return KeyNames(names)


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


# dialects whose parser lets the command line override the file (HfArgumentParser, TrlParser, H4ArgumentParser)
COMMAND_LINE_DIALECTS = frozenset({"hf", "trl"})
CHECKPOINT_KEYS = ("save_strategy", "save_steps")


def build_facts(plan: Plan, profile: Profile | None = None, *, gpu: GpuFacts | None = None,
                world_size: int | None = None, simulate: bool = True, memory: Any = None,
                model_config: str | None = None, estimate_memory: bool = True,
                gpu_price: float | None = None, calibration: str | None = None, registry: Any = None) -> Facts:
    """Compute every fact once; facts that need data are None without a profile.

    `simulate=False` skips the strategy simulation when no enabled rule reads it. `memory` is a
    seqprof.predict.memory_plan.MemoryFacts already computed for this plan; without it the estimate is made here
    (architecture from `model_config`, else the plan's model found locally) unless `estimate_memory`
    is False (no enabled rule reads memory). `registry` is the dataset registry the config's names are looked up
    in (seqprof.lint.config_data.dataset_registry), read by the caller, which knows the working directory."""
    cfg = {name: s.value for name, s in plan.settings.items()}
    if plan.dialect in COMMAND_LINE_DIALECTS:  # the launchers' options override the file's saving
        from seqprof.config.launches import command_line_values

        cfg.update({k: v for k, (v, _) in command_line_values(plan.path, CHECKPOINT_KEYS).items()})
    if world_size is not None:
        cfg["world_size"] = world_size
    flags = config_flags(plan)
    data = data_facts(plan, profile) if profile is not None else None
    run = run_facts(plan, cfg, data)
    timer, time_reason = _timer(plan, gpu, profile, model_config, world_size, calibration)
    lazy_sim = lazy_time = None
    if (simulate or timer is not None) and profile is not None and can_simulate(cfg, profile, data):
        lazy_sim = Lazy(lambda: simulation(plan, cfg, profile, data, timer=timer))
        if timer is not None:
            lazy_time = Lazy(lambda: time_facts(run, lazy_sim.get(), timer, recommended=data.recommended,
                                                price=gpu_price))
    packing_key = PACKING_KEYS.get(plan.dialect) if cfg.get("trainer") in PACKING_TRAINERS else None
    mem = MemoryInputs()
    if memory is not None or estimate_memory:
        mem = memory_inputs(plan, memory=memory, model_config=model_config, gpu=gpu, world_size=world_size)
    return Facts(plan=plan, cfg=cfg, setting=dict(plan.settings), flags=flags, data=data, run=run,
                 lazy_sim=lazy_sim, memory=mem.check, gpu=gpu, profile=profile, packing_key=packing_key,
                 drafter=mem.drafter, architecture=mem.architecture, memory_reason=mem.reason,
                 lazy_time=lazy_time, time_reason=time_reason, registry=registry)


def _timer(plan: Plan, gpu: GpuFacts | None, profile: Profile | None, model_config: str | None,
           world_size: int | None, calibration: str | None) -> tuple[Any, str | None]:
    """The plan's EpochTimer on the named GPU, or (None, why not)."""
    if gpu is None:
        return None, "no GPU: pass --gpu NAME"
    if profile is None:
        return None, "no data: pass --data DATA or --profile profile.json"
    from seqprof.errors import SeqprofError
    from seqprof.predict.gpus import GPU_MEMORY_MIB
    from seqprof.predict.runtime import epoch_timer

    if gpu.name not in GPU_MEMORY_MIB:
        return None, f"no speed figures for {gpu.name}: name the card with --gpu"
    try:
        timer = epoch_timer(plan, gpu=gpu.name, model_config=model_config, calibration=calibration)
    except SeqprofError as exc:
        return None, exc.message
    if world_size:
        timer = replace(timer, world_size=world_size)
    return timer, None


__all__ = ["DEFAULT_NUM_BUCKETS", "NEAR_GPU_LIMIT", "SIM_EPOCHS", "DataFacts", "DrafterFacts", "Facts", "GpuFacts",
           "Lazy", "Loc", "MemoryCheck", "RunFacts", "SimFacts", "TimeFacts", "build_facts", "gpu_facts", "optimizer_steps_per_epoch"]
