"""The generation batch GRPOConfig refuses, as its __post_init__ checks it from TRL 0.18 on.

GRPO samples num_generations completions per prompt and splits one generation batch into training steps, so
GRPOConfig.__post_init__ (trl/trainer/grpo_config.py, 0.18 to 1.16) raises a ValueError before training when
generation_batch_size and steps_per_generation are both set, when generation_batch_size is no multiple of the
global batch (per_device_train_batch_size x processes), or when it is no multiple of num_generations, and when
num_generations is below 2. The world size is not in the file; a generation batch that per_device_train_batch_size
alone does not divide is refused on any number of processes. (0.18 writes the check `generation_batch_size %
per_device_train_batch_size * num_processes != 0`, which is that same per-device test.) Where generation_batch_size
is left to TRL, the batch it derives (per_device_train_batch_size x processes x steps_per_generation, which defaults
to gradient_accumulation_steps; GRPOTrainer of 0.15 to 0.17 checked per-device x processes, 0.17 times the
accumulation) is judged with the process count the project's launch lines start (seqprof.config.launch_processes).
"""

from __future__ import annotations

from dataclasses import replace
from math import gcd
from typing import Any

from seqprof.config.key_history import KeyHistory, run_release_said
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

CHECKED_FROM = "0.18.0"  # generation_batch_size and steps_per_generation arrive, with the checks above
GROUP_CHECKS_FROM = "0.15.0"  # GRPOTrainer.__init__ checks the global batch against num_generations
ACCUMULATED_FROM = "0.17.0"  # ... times gradient_accumulation_steps; from 0.18 GRPOConfig's generation batch
DEFAULTS = {"per_device_train_batch_size": 8, "num_generations": 8}  # TrainingArguments' and GRPOConfig's
EVAL_UNCHECKED_FROM = "0.20.0"  # GRPOConfig 0.20 and 0.21 dropped the eval batch check
EVAL_CHECKED_AGAIN = "0.22.0"  # ... back from 0.22, where do_eval and eval_strategy != "no"
EVAL_GROUPS_FROM = "0.26.0"  # num_generations_eval, else num_generations, must divide the eval batch
EVAL_KEYS = ("per_device_eval_batch_size", "eval_strategy", "evaluation_strategy", "num_generations_eval")
BATCH_KEYS = ("generation_batch_size", "steps_per_generation", "per_device_train_batch_size", "num_generations")


def generation_batch_refused(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """What GRPOConfig (GRPOTrainer before 0.18) of the release the pins install refuses in the file's generation
    batch, and in its eval batch.

    Judged on the keys the file states, with TRL's defaults for the others, and not where the project's code
    declares or sets one of them itself."""
    from packaging.version import Version

    data = cfg.data
    installed = history.run_release("trl", pins)
    if installed is None or Version(installed) < Version(GROUP_CHECKS_FROM):
        return []
    stated = {k: data[k] for k in BATCH_KEYS if k in data}
    if not stated or not all(_whole(v) for v in stated.values()) or _project_sets_batch(cfg.path):
        return []
    release = run_release_said("trl", pins, installed)
    return _train_batch_refused(cfg, stated, installed, release) + \
        _eval_groups_split_by_processes(cfg, {**DEFAULTS, **stated}, installed, release)


def _train_batch_refused(cfg: LoadedConfig, stated: dict, installed: str, release: str) -> list[ConfigDiagnostic]:
    """The generation (train) batch checks of generation_batch_refused."""
    from packaging.version import Version

    value = {**DEFAULTS, **stated}
    generation, per_device, groups = (value.get("generation_batch_size"), value["per_device_train_batch_size"],
                                      value["num_generations"])
    said = {k: f"{k}: {v}" if k in stated else f"{k} {v} (the default)" for k, v in value.items()}
    if Version(installed) < Version(CHECKED_FROM):  # no generation_batch_size yet: GRPOTrainer's own check
        return _groups_split_by_processes(cfg, value, said, installed, release) if groups >= 2 else []
    if groups < 2:
        return [_refused(cfg, "num_generations", f"num_generations: {groups}: GRPO needs at least 2 completions per "
                         "prompt to compare their rewards, and GRPOConfig refuses fewer before the run starts "
                         f"(\"GRPO requires at least 2 generations per prompt\"; {release})")]
    if generation is None:
        return _groups_split_by_processes(cfg, value, said, installed, release)
    if "steps_per_generation" in stated:
        return [_refused(cfg, "generation_batch_size", "generation_batch_size and steps_per_generation are both set: "
                         "GRPOConfig derives each from the other and refuses the pair before the run starts "
                         f"(\"'generation_batch_size' and 'steps_per_generation' can not be both configured\"; "
                         f"{release})")]
    if generation % per_device:
        return [_refused(cfg, "generation_batch_size", f"generation_batch_size: {generation} is no multiple of "
                         f"{said['per_device_train_batch_size']}, so of no global batch on any number of GPUs: "
                         "GRPOConfig refuses it before the run starts (\"generation_batch_size must be divisible "
                         f"by the global batch size\"; {release})")]
    if generation % groups:
        return [_refused(cfg, "generation_batch_size", f"generation_batch_size: {generation} is no multiple of "
                         f"{said['num_generations']}: a generation batch holds whole groups of completions per "
                         f"prompt, and GRPOConfig refuses it before the run starts ({release})")]
    return []


def _groups_split_by_processes(cfg: LoadedConfig, value: dict, said: dict, installed: str,
                               release: str) -> list[ConfigDiagnostic]:
    """The batch TRL builds from per_device_train_batch_size x the processes the project's launch lines start (x
    steps_per_generation, else gradient_accumulation_steps, from 0.17) when it cuts whole groups of num_generations
    completions from none: GRPOTrainer (0.15 to 0.17) or GRPOConfig (0.18 on) refuses it before the run starts.
    Not judged where a launch line or the project's code sets one of the batch keys itself."""
    from packaging.version import Version

    from seqprof.config.launch_processes import launched_processes
    from seqprof.config.launches import launch_overrides

    steps = value.get("steps_per_generation", cfg.data.get("gradient_accumulation_steps", 1))
    if not _whole(steps):
        return []
    if set(launch_overrides(cfg.path)) & {*BATCH_KEYS, "gradient_accumulation_steps"} or \
            _project_sets_keys(cfg.path, ("gradient_accumulation_steps",)):
        return []
    processes = launched_processes(cfg.path)
    if processes is None:
        return []
    accumulated = Version(installed) >= Version(ACCUMULATED_FROM)
    per_device, groups = value["per_device_train_batch_size"], value["num_generations"]
    batch = per_device * processes.count * (steps if accumulated else 1)
    if batch % groups == 0:
        return []
    step_key = "steps_per_generation" if "steps_per_generation" in value else "gradient_accumulation_steps"
    step_said = f"{step_key}: {steps}" if step_key in cfg.data else f"{step_key} {steps} (the default)"
    factors = [said["per_device_train_batch_size"], f"{processes.count} processes", *([step_said] * accumulated)]
    derived = Version(installed) >= Version(CHECKED_FROM)
    which = "the generation batch GRPOConfig derives" if derived else "the train batch GRPOTrainer checks"
    said_by_trl = f"generation_batch_size ({batch}) must be divisible by num_generations ({groups})" if derived else \
        f"The {'effective' if accumulated else 'global'} train batch size ({processes.count} x {per_device}" + \
        (f" x {steps}" if accumulated else "") + ") must be evenly divisible by the number of generations per prompt"
    fits = [n for n in range(2, batch + 1) if batch % n == 0]
    found = _refused(cfg, "num_generations", f"{said['num_generations']} does not divide {which}, "
                     f"{' x '.join(factors)} = {batch} (the processes {processes.describe()}): that batch holds no "
                     f"whole groups of {groups} completions per prompt, and TRL refuses it before the run starts "
                     f"(\"{said_by_trl}\"; {release})")
    return [replace(found, suggestion=", ".join(map(str, fits)) if fits else None)]


def _eval_groups_split_by_processes(cfg: LoadedConfig, value: dict, installed: str,
                                    release: str) -> list[ConfigDiagnostic]:
    """The eval batch, per_device_eval_batch_size x the processes the launch lines start, when it cuts whole groups
    of num_generations (num_generations_eval from 0.26) completions from none while the run evaluates (eval_strategy
    other than "no", which also sets do_eval): GRPOTrainer (0.15 to 0.17), GRPOConfig (0.18, 0.19, and again from
    0.22) refuses it before the run starts; 0.20 and 0.21 check nothing. Not judged where a launch line or the
    project's code sets one of the keys itself."""
    from packaging.version import Version

    from seqprof.config.launch_processes import launched_processes
    from seqprof.config.launches import launch_overrides

    version = Version(installed)
    if Version(EVAL_UNCHECKED_FROM) <= version < Version(EVAL_CHECKED_AGAIN):
        return []
    data = cfg.data
    strategy_key = next((k for k in ("eval_strategy", "evaluation_strategy") if k in data), None)
    strategy = data.get(strategy_key) if strategy_key else "no"
    if not isinstance(strategy, str) or strategy.strip().lower() == "no":
        return []
    per_device = data.get("per_device_eval_batch_size", DEFAULTS["per_device_train_batch_size"])
    group_key = "num_generations_eval" if version >= Version(EVAL_GROUPS_FROM) and \
        data.get("num_generations_eval") is not None else "num_generations"
    groups = data.get(group_key, value["num_generations"])
    if not _whole(per_device) or not _whole(groups) or groups < 2:
        return []
    keys = (*EVAL_KEYS, *BATCH_KEYS)
    if set(launch_overrides(cfg.path)) & set(keys) or _project_sets_keys(cfg.path, EVAL_KEYS):
        return []
    processes = launched_processes(cfg.path)
    if processes is None:
        return []
    batch = per_device * processes.count
    if batch % groups == 0:
        return []
    said_device = f"per_device_eval_batch_size: {per_device}" if "per_device_eval_batch_size" in data else \
        f"per_device_eval_batch_size {per_device} (the default)"
    said_groups = f"{group_key}: {groups}" if group_key in data else f"{group_key} {groups} (the default)"
    step = groups // gcd(groups, processes.count)  # per-device eval batches that hold whole groups: its multiples
    fits = [step * k for k in range(1, 4)]
    key = "per_device_eval_batch_size" if "per_device_eval_batch_size" in data else group_key
    found = _refused(cfg, key, f"{said_groups} does not divide the eval batch, {said_device} x {processes.count} "
                     f"processes = {batch} (the processes {processes.describe()}), and {strategy_key}: {strategy} "
                     f"evaluates: that batch holds no whole groups of {groups} completions per prompt, and TRL "
                     f"refuses it before the run starts (\"{_eval_check_said(version)}\"; {release})")
    return [replace(found, suggestion=", ".join(map(str, fits)))]


def _eval_check_said(version) -> str:
    """The words of the eval batch check of TRL *version*."""
    from packaging.version import Version

    if version < Version(EVAL_UNCHECKED_FROM):
        which = "effective" if Version(ACCUMULATED_FROM) <= version < Version(CHECKED_FROM) else "global"
        return f"The {which} eval batch size ... must be evenly divisible by the number of generations per prompt"
    if version < Version(EVAL_GROUPS_FROM):
        return "The global eval batch size ... must be divisible by num_generations"
    return "The global eval batch size ... must be divisible by the number of generations used for evaluation"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _project_sets_batch(config_path: str) -> bool:
    """The project declares one of the batch fields itself or sets one in code, which the file alone does not
    show (a script that passes `generation_batch_size=` from its own arguments)."""
    return _project_sets_keys(config_path, BATCH_KEYS)


def _project_sets_keys(config_path: str, keys: tuple[str, ...]) -> bool:
    from seqprof.config.project_fields import project_declares_or_sets

    return project_declares_or_sets(config_path, keys)


def _refused(cfg: LoadedConfig, key: str, message: str) -> ConfigDiagnostic:
    return ConfigDiagnostic(kind="grpo_generation_batch", key=key, file=cfg.path, line=cfg.line(key) or 1,
                            message=message)
