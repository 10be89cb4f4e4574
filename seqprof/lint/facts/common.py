"""What several families of facts share: a place in the config, a fact computed on first use, number checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

GIB = 2**30

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


def positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0 and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def positive_number(value: Any) -> float | None:
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


class KeyNames(dict):
    """`keys.x` is the config's key for setting x; a setting no table names is called by its own name."""

    def __missing__(self, name: str) -> str:
        return name
