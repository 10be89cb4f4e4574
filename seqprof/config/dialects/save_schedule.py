"""The save schedule load_best_model_at_end imposes, as TrainingArguments has it in each release.

Before 4.9 DefaultFlowCallback saves at every evaluation when load_best_model_at_end is on (`if
args.load_best_model_at_end: control.should_save = True`), whatever save_strategy says. From 4.9 __post_init__
refuses a save strategy other than the eval strategy ("--load_best_model_at_end requires the save and eval
strategy to match"), and step saves that are no round multiple of the evaluation steps; 4.48 exempts
save_strategy "best". save_strategy "best" (4.47 on) keeps a checkpoint whenever metric_for_best_model improves, so
the Trainer refuses it when no metric is named or implied. From 4.38 the Trainer also refuses save_only_model
beside load_best_model_at_end under DeepSpeed or FSDP, whose best checkpoint it could not load back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.key_history import KeyHistory, release_with_check
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

REFUSED_FROM = "4.9.0"  # training_args.py __post_init__: the strategies must match
RELEASES_BEFORE_REFUSAL = ["4.0.1", "4.1.1", "4.2.2", "4.3.3", "4.4.2", "4.5.1", "4.6.1", "4.7.0", "4.8.2"]
BEST_FROM = "4.48.0"  # save_strategy "best" passes the check
BEST_STRATEGY_FROM = "4.47.0"  # trainer_utils.SaveStrategy.BEST; Trainer.__init__ wants metric_for_best_model
RELEASES_BEFORE_BEST = ["4.36.2", "4.37.2", "4.38.2", "4.39.3", "4.40.2", "4.41.2", "4.42.4", "4.43.4", "4.44.2",
                        "4.45.2", "4.46.3"]
MODEL_ONLY_REFUSED_FROM = "4.38.0"  # huggingface/transformers#28866, create_accelerator_and_postprocess
RELEASES_BEFORE_MODEL_ONLY_REFUSAL = ["4.36.2", "4.37.2"]  # save_only_model came in 4.36
# schedulers for which TrainingArguments.__post_init__ fills metric_for_best_model with "loss" (greedy from 5.x)
METRIC_FILLING_SCHEDULERS = ("reduce_lr_on_plateau", "greedy")
SCHEDULE_KEYS = ("eval_strategy", "evaluation_strategy", "save_strategy", "save_steps", "eval_steps",
                 "load_best_model_at_end")


def saves_at_each_evaluation(data: Mapping[str, Any]) -> bool:
    """load_best_model_at_end with evaluation on: saving follows evaluation (before 4.9) or the release refuses a
    schedule that does not (SP459), so a `save_strategy: no` beside them is no run that never checkpoints."""
    strategy = data.get("eval_strategy", data.get("evaluation_strategy"))
    return data.get("load_best_model_at_end") is True and isinstance(strategy, str) and strategy.lower() in (
        "steps", "epoch")


def refused_save_schedules(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """The save schedules the pinned release's TrainingArguments or Trainer refuses before the first step (SP459,
    SP471), for every dialect that hands the file to them."""
    return (best_model_schedule_refused(cfg, pins, history) + best_save_without_metric(cfg, pins, history)
            + best_model_from_model_only_saves(cfg, pins, history))


def best_model_schedule_refused(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """load_best_model_at_end beside a save schedule the pinned release's TrainingArguments refuses.

    Judged only on what the file states, with TrainingArguments' own defaults (eval_strategy "no", save_strategy
    "steps"), and only where the project's code neither declares nor sets the schedule itself."""
    from packaging.version import Version

    data = cfg.data
    if data.get("load_best_model_at_end") is not True:
        return []
    found = release_with_check(history, pins, "transformers", REFUSED_FROM, RELEASES_BEFORE_REFUSAL)
    if found is None or _project_sets(cfg.path, SCHEDULE_KEYS):
        return []
    installed, release = found
    eval_key = next((k for k in ("eval_strategy", "evaluation_strategy") if k in data), None)
    evaluation = data.get(eval_key, "no") if eval_key else "no"
    saving = data.get("save_strategy", "steps")
    if not isinstance(evaluation, str) or not isinstance(saving, str):
        return []  # a YAML `no` read as false is SP434's
    evaluation, saving = evaluation.lower(), saving.lower()
    if saving == "best" and Version(installed) >= Version(BEST_FROM):
        return []
    if evaluation != saving:
        key = eval_key if eval_key else "load_best_model_at_end"
        stated = f"{eval_key}: {evaluation}" if eval_key else "no eval strategy (the default, 'no')"
        saved = f"save_strategy: {saving}" if "save_strategy" in data else "save_strategy steps (the default)"
        return [_refused(cfg, key, f"load_best_model_at_end with {stated} and {saved}: TrainingArguments refuses "
                                   "the pair before the run starts (\"--load_best_model_at_end requires the save and "
                                   f"eval strategy to match\"; {release})")]
    save_steps, eval_steps = data.get("save_steps"), data.get("eval_steps")
    if evaluation == "steps" and _whole(save_steps) and _whole(eval_steps) and save_steps % eval_steps:
        return [_refused(cfg, "save_steps", f"save_steps: {save_steps} is no round multiple of eval_steps: "
                                            f"{eval_steps} beside load_best_model_at_end: TrainingArguments refuses "
                                            "it before the run starts (\"--load_best_model_at_end requires the saving "
                                            f"steps to be a round multiple of the evaluation steps\"; {release})")]
    return []


def best_save_without_metric(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """save_strategy "best" with no metric to judge "best" by: Trainer.__init__ (4.47 on) raises "`args.
    metric_for_best_model` must be provided when using 'best' save_strategy". __post_init__ fills the metric with
    "loss" only beside load_best_model_at_end or a plateau/greedy scheduler, so those pass."""
    data = cfg.data
    saving = data.get("save_strategy")
    if not isinstance(saving, str) or saving.lower() != "best" or data.get("metric_for_best_model") is not None:
        return []
    scheduler = data.get("lr_scheduler_type")
    if data.get("load_best_model_at_end") is True or (
            isinstance(scheduler, str) and scheduler.lower() in METRIC_FILLING_SCHEDULERS):
        return []
    found = release_with_check(history, pins, "transformers", BEST_STRATEGY_FROM, RELEASES_BEFORE_BEST)
    if found is None or _project_sets(cfg.path, ("save_strategy", "metric_for_best_model", "load_best_model_at_end")):
        return []
    named = "metric_for_best_model: null" if "metric_for_best_model" in data else "no metric_for_best_model"
    return [ConfigDiagnostic(
        kind="best_save_without_metric", key="save_strategy", file=cfg.path, line=cfg.line("save_strategy") or 1,
        message=f"save_strategy: best with {named}: \"best\" is judged by that metric, so the Trainer raises when "
                "it is created, before the first step (\"`args.metric_for_best_model` must be provided when using "
                f"'best' save_strategy\"; {found[1]})")]


def best_model_from_model_only_saves(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """save_only_model and load_best_model_at_end in a file that shards with DeepSpeed or FSDP: a checkpoint of the
    model alone cannot be loaded back into the DeepSpeed engine or FSDP units, so the Trainer raises when it is
    created ("DeepSpeed can't be used with `save_only_model` along with `load_best_model_at_end`", 4.38 on; before,
    the run failed at its end, loading the best checkpoint: huggingface/transformers#27751)."""
    data = cfg.data
    if data.get("save_only_model") is not True or data.get("load_best_model_at_end") is not True:
        return []
    wrapper = ("DeepSpeed", "deepspeed") if _set(data.get("deepspeed")) else ("FSDP", "fsdp") if _set(
        data.get("fsdp")) else None
    if wrapper is None:
        return []
    found = release_with_check(history, pins, "transformers", MODEL_ONLY_REFUSED_FROM,
                               RELEASES_BEFORE_MODEL_ONLY_REFUSAL)
    if found is None or _project_sets(cfg.path, ("save_only_model", "load_best_model_at_end", wrapper[1])):
        return []
    return [ConfigDiagnostic(
        kind="best_model_from_model_only_saves", key="save_only_model", file=cfg.path,
        line=cfg.line("save_only_model") or 1,
        message=f"save_only_model beside load_best_model_at_end with {wrapper[0]} ({wrapper[1]}, line "
                f"{cfg.line(wrapper[1]) or 1}): a checkpoint of the model alone cannot be loaded back into "
                f"{wrapper[0]}'s wrapped model, so the Trainer raises when it is created, before the first step "
                f"(\"{wrapper[0]} can't be used with `save_only_model` along with `load_best_model_at_end`\"; "
                f"{found[1]})")]


def _set(value: Any) -> bool:
    """A deepspeed / fsdp setting that turns it on: a path or a config mapping, an fsdp option string or list."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "none", "null", "no")
    return isinstance(value, (dict, list)) and bool(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _project_sets(config_path: str, keys: tuple[str, ...]) -> bool:
    """The project declares one of *keys* as a field of its own or sets one in code, which the file alone does not
    show."""
    from seqprof.config.project_fields import project_declares_or_sets

    return project_declares_or_sets(config_path, keys)


def _refused(cfg: LoadedConfig, key: str, message: str) -> ConfigDiagnostic:
    return ConfigDiagnostic(kind="best_model_schedule", key=key, file=cfg.path, line=cfg.line(key) or 1,
                            message=message)
