"""The normalised training Plan: one framework-independent view of a config, every value with its key and line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Canonical setting names a dialect may fill (others may be added; rules read them by name):
#   model, trainer (sft|dpo|orpo|kto|ftpo|drafter|pretrain|...), max_seq_length, max_prompt_length,
#   max_completion_length, micro_batch_size, gradient_accumulation_steps, world_size,
#   padding (max_length|longest|packed|padding_free), group_by_length, shuffle, sort_by_length,
#   gradient_checkpointing, lora_r, lora_alpha, lora_dropout, lora_targets, load_in_4bit, load_in_8bit,
#   adapter (lora|qlora|None), precision (bf16|fp16|fp32), optimizer, num_epochs, max_steps,
#   save_steps, save_strategy, attn_implementation, fused_loss (liger|chunked|cut_cross_entropy|None),
#   deepspeed, zero_stage, fsdp, token_budget, datasets, model_config_path
# Added by the dialect readers (seqprof/config/dialects/):
#   overflow (drop|truncate|raise: what happens to rows longer than max_seq_length),
#   max_train_examples (a cap on rows used), saves_per_epoch, learning_rate, global_batch_size,
#   batching (fixed|token_budget), task (train|inference|export|eval|no_training|launch: non-train files
#   get no training defaults), draft_strategy (eagle3|dflash|dspark|...), num_anchors, block_size,
#   ttt_length, max_steps_per_epoch, tensor_parallel_size, pipeline_parallel_size,
#   context_parallel_size, fsdp_version, pad_to_multiple_of, offload_optimizer, offload_params,
#   model_config (the drafter/model JSON that model_config_path names, when found)


@dataclass(frozen=True)
class Setting:
    """One value of the plan and where it came from."""

    value: Any
    key: str | None  # the config's own key (dotted for nested), None when the dialect defaulted it
    file: str | None
    line: int | None  # 1-based line of the key, None when defaulted
    source: str = "config"  # "config", or "default: <why / doc reference>"

    @property
    def stated(self) -> bool:
        return self.source == "config"


@dataclass(frozen=True)
class ConfigDiagnostic:
    """Something the reader noticed about the file itself (not a rule verdict yet)."""

    kind: str  # unknown_key | deprecated_key | renamed_key | removed_key | upcoming_deprecation | premature_key | duplicate_key
    #         | repeated_key (a duplicate with the same value) | invalid_value | unread_key
    #         | undeclared_key (no class of the project's parser call declares it: SP438)
    key: str
    file: str
    line: int
    message: str
    suggestion: str | None = None  # did-you-mean / replacement key
    other_line: int | None = None  # duplicate_key / repeated_key: the first occurrence
    value_change: str | None = None  # renamed_key/removed_key: how the value changes under the new key
    # renamed_key/deprecated_key whose replacement the pinned releases lack: the release that brings it ('trl 0.23')
    suggestion_from: str | None = None
    # a key the project's code hands on to a framework class (seqprof.config.dialects.forwarded): where, since the
    # fix is in that code ('models/sft_trainer.py:181')
    handed_on: str | None = None
    # unknown_key: why the framework drops it, where more is known than that no class has it (axolotl's FSDPConfig
    # drops a fsdp_config key it lacks)
    reason: str | None = None


@dataclass(frozen=True)
class Plan:
    path: str
    dialect: str  # hf | trl | axolotl | llamafactory | llamafactory_v1 | torchtune | unsloth | auto_antislop | specforge | speculators | accelerate | deepspeed | unknown
    settings: Mapping[str, Setting] = field(default_factory=dict)
    diagnostics: tuple[ConfigDiagnostic, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)  # the parsed config (plain dicts/lists)
    key_lines: Mapping[str, int] = field(default_factory=dict)  # dotted key -> 1-based line
    dialect_source: str = ""  # why the file was read as this dialect: the keys that decided it, the command, --dialect
    fragment: bool = False  # part of a config the project merges with others: only its keys can be judged alone

    def get(self, name: str, default: Any = None) -> Any:
        s = self.settings.get(name)
        return default if s is None else s.value

    def setting(self, name: str) -> Setting | None:
        return self.settings.get(name)
