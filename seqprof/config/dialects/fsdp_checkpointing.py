"""FSDP's activation checkpointing and the Trainer's gradient checkpointing, both switched on.

From transformers 4.33 `Trainer.create_accelerator_and_postprocess` copies `fsdp_config["activation_checkpointing"]`
onto accelerate's FSDP plugin and raises a ValueError when it and the `gradient_checkpointing` training argument
are both true ("The activation_checkpointing in FSDP config and the gradient_checkpointing in training arg can't be
set to True simultaneously"; 5.25 words it for `activation_checkpointing`, the argument's new name). TrainingArguments
strips the `fsdp_` prefix of fsdp_config's keys first, so `fsdp_activation_checkpointing` counts too; axolotl hands
its `fsdp_config` and `gradient_checkpointing` to TrainingArguments unchanged (core/builders/base.py).
"""

from __future__ import annotations

from typing import Any

from seqprof.config.key_history import KeyHistory, release_with_check
from seqprof.config.loader import LoadedConfig
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

REFUSED_FROM = "4.33.0"  # trainer.py create_accelerator_and_postprocess: the check first appears in 4.33.0
# the last release of each minor before it, for pins older than the key history (4.36 on)
RELEASES_BEFORE_REFUSAL = ["4.26.1", "4.27.4", "4.28.1", "4.29.2", "4.30.2", "4.31.0", "4.32.1"]
FSDP_KEYS = ("activation_checkpointing", "fsdp_activation_checkpointing")
CHECKPOINTING_KEYS = ("gradient_checkpointing", "activation_checkpointing")  # the training argument (5.x: both)


def checkpointing_twice(cfg: LoadedConfig, pins: Pins, history: KeyHistory, *,
                        fsdp_on: bool, axolotl: bool = False) -> list[ConfigDiagnostic]:
    """gradient_checkpointing: true beside FSDP with fsdp_config's activation_checkpointing on, in one file.

    Judged only where the file states both and turns FSDP on (`fsdp:`; axolotl: an fsdp_config), the release the
    pins install has the check, and the project's code neither declares nor sets gradient_checkpointing itself."""
    data = cfg.data
    section = data.get("fsdp_config")
    if not fsdp_on or not isinstance(section, dict):
        return []
    fsdp_key = next((k for k in FSDP_KEYS if _on(section.get(k))), None)
    trainer_key = next((k for k in CHECKPOINTING_KEYS if k in data), None)
    if fsdp_key is None or trainer_key is None or not _on(data.get(trainer_key)):
        return []
    if axolotl and data.get("activation_offloading"):  # axolotl then passes gradient_checkpointing=False
        return []
    if trainer_key == "activation_checkpointing" and not axolotl and "gradient_checkpointing" in data:
        return []  # 5.x's two names for one argument: SP404 and the key checks have that file
    if axolotl:
        release = "axolotl hands both to TrainingArguments (core/builders/base.py)"
    else:
        found = release_with_check(history, pins, "transformers", REFUSED_FROM, RELEASES_BEFORE_REFUSAL)
        if found is None:
            return []
        release = found[1]
    if _project_sets_checkpointing(cfg.path):
        return []
    dotted = f"fsdp_config.{fsdp_key}"
    return [ConfigDiagnostic(
        kind="fsdp_checkpointing_twice", key=trainer_key, file=cfg.path, line=cfg.line(trainer_key) or 1,
        suggestion=dotted,
        message=(f"{trainer_key}: true beside {dotted}: true (line {cfg.line(dotted) or cfg.line('fsdp_config')}) "
                 "with FSDP on: the Trainer refuses the pair before the first step (\"The activation_checkpointing "
                 "in FSDP config and the gradient_checkpointing in training arg can't be set to True "
                 f"simultaneously\"; {release})"))]


def _on(value: Any) -> bool:
    """Truthy as the Trainer reads it: a YAML true, or the strings "true"/"True" of a JSON-minded config."""
    return value is True or isinstance(value, str) and value.strip().lower() == "true"


def _project_sets_checkpointing(config_path: str) -> bool:
    from seqprof.config.project_fields import project_declares_or_sets

    return project_declares_or_sets(config_path, CHECKPOINTING_KEYS)

