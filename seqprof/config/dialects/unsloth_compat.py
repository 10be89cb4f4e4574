"""What unsloth's patched TRL configs do with arguments the installed trl/transformers no longer take.

Importing unsloth replaces TRL's config classes with generated Unsloth<X>Config classes; from 2026.8.11 their
__init__ passes the arguments through `filter_config_init_kwargs` (unsloth/models/rl_config_compat.py), which moves a
field to its new name where unsloth knows the rename and drops any other with a printed notice. A keyword that would
be a TypeError in plain TRL (SP408) then starts the run: a note where the value keeps its effect, SP466 where it has
none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from seqprof.config.key_history import KeyHistory
from seqprof.config.pins import Pins
from seqprof.config.plan import ConfigDiagnostic

if TYPE_CHECKING:
    from seqprof.config.project_calls import Forward

UNSLOTH_COMPAT_FROM = "2026.8.11"  # unsloth/models/rl_config_compat.py first ships in 2026.8.11's wheel
# what filter_config_init_kwargs moves to a new name instead of dropping, by the release that began to: TRL's renames
# from 2026.8.11, transformers 5's from 2026.9.1 (TRANSFORMERS_CONFIG_RENAMES; 2026.8.22 has none)
UNSLOTH_RENAMES: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("2026.8.11", {"use_liger_loss": "use_liger_kernel", "vllm_guided_decoding_regex": "vllm_structured_outputs_regex",
                   "wandb_log_unique_prompts": "log_unique_prompts"}),
    ("2026.9.1", {"warmup_ratio": "warmup_steps", "push_to_hub_token": "hub_token",
                  "per_gpu_train_batch_size": "per_device_train_batch_size",
                  "per_gpu_eval_batch_size": "per_device_eval_batch_size"}),
)


def unsloth_compat_release(pins: Pins, history: KeyHistory) -> str | None:
    """The unsloth release the project installs when it filters its patched TRL configs' arguments (2026.8.11 on),
    else None: the newest release the pins allow, or the newest one where unsloth is listed bare or from main."""
    from packaging.version import Version

    if not pins.pins.get("unsloth"):
        return None
    checkout = pins.vcs("unsloth")
    if checkout is not None and not checkout.head:
        return None  # a fixed commit seqprof cannot place
    allowed = history.allowed("unsloth", pins) or (history.versions("unsloth") if not pins.of("unsloth") else [])
    if not allowed or Version(allowed[-1]) < Version(UNSLOTH_COMPAT_FROM):
        return None
    return allowed[-1]


def filtered_by_unsloth(d: ConfigDiagnostic, forward: Forward, release: str) -> ConfigDiagnostic:
    """A keyword the installed release no longer takes, handed to unsloth's patched TRL config: its
    `filter_config_init_kwargs` (models/rl_config_compat.py) moves a renamed one to its new name and drops any other
    with a printed notice ("will be IGNORED"), so the class never raises TypeError (TuTTC's logging_dir)."""
    from packaging.version import Version

    if d.kind != "removed_key":
        return d  # the installed release still takes it: unsloth passes it on unchanged
    moved = {old: new for since, table in UNSLOTH_RENAMES if Version(release) >= Version(since)
             for old, new in table.items()}
    where = f"the project's code hands '{forward.key}' to {forward.cls} ({forward.where()}) after importing unsloth"
    if forward.keyword in moved:
        return replace(d, kind="unread_key", suggestion=None, value_change=None, message=(
            f"{where}, whose patched {forward.cls} (unsloth {release}, models/rl_config_compat.py) moves the value to "
            f"'{moved[forward.keyword]}', which the installed release reads instead: no error, and the setting keeps "
            f"its effect"))
    return replace(d, kind="dropped_by_unsloth", suggestion=None, value_change=None, message=(
        f"{where}, whose patched {forward.cls} (unsloth {release}, models/rl_config_compat.py) drops it with a printed "
        f"notice instead of the TypeError ('{forward.keyword}' ... will be IGNORED): the run starts, and the setting "
        f"has no effect ({d.message.split(': ', 1)[-1]})"))
