"""The values a setting can take, checked as the frameworks check them, so an unusable number is a finding
on its line instead of a silent default (`micro_batch_size: 0` taken as 1, `lora_r: -16` used as is).

What the frameworks do with such values: transformers' DataLoader refuses a batch size that is not a positive
int; PEFT's LoraConfig refuses r <= 0; torch's Dropout refuses p outside [0, 1]; a NaN or infinite learning
rate trains to NaN. A number written as text ("2e-5") is accepted, as every framework coerces it; "auto" is
DeepSpeed's and HF's word for "derive it".
"""

from __future__ import annotations

import math
import re
from typing import Any

POSITIVE_INT = frozenset({
    "micro_batch_size", "gradient_accumulation_steps", "max_seq_length", "max_prompt_length",
    "max_completion_length", "global_batch_size", "world_size", "tensor_parallel_size", "context_parallel_size",
    "pipeline_parallel_size", "lora_r", "pad_to_multiple_of", "ttt_length", "num_anchors", "block_size",
    "saves_per_epoch", "fsdp_version", "max_train_examples", "max_steps_per_epoch",
})
# save_steps is not one: transformers' trainer takes 0 or a negative number as "no step saves" (state.save_steps > 0
# guards the save in trainer_callback.py, 4.35 to 5.25), so 0 / -1 mean "save only at the end" (SP301's business)
POSITIVE_NUMBER = frozenset({"lora_alpha"})
NON_NEGATIVE_NUMBER = frozenset({"learning_rate", "num_epochs"})
PROBABILITY = frozenset({"lora_dropout"})
CHECKED = POSITIVE_INT | POSITIVE_NUMBER | NON_NEGATIVE_NUMBER | PROBABILITY

_WORDS = ("auto", "none", "null", "")

# values a template leaves for something else to fill in before the framework reads the file
_PLACEHOLDERS = (
    (re.compile(r"^\?\?\?$"), "OmegaConf's mandatory-value marker, which Hydra or the launcher must set"),
    (re.compile(r"^__[A-Za-z0-9_]+__$"), "a script fills it in before the run"),
    (re.compile(r"^\$\{[^{}]+\}$|^\$[A-Z_][A-Z0-9_]*$"), "an interpolation, resolved before the run"),
    (re.compile(r"^\{\{.*\}\}$|^<[A-Z][A-Z0-9_ -]*>$"), "a script fills it in before the run"),
    # a template's blank (00drdelius/CustomLOMO's args_lomo_lora.yaml writes `...` for the batch size, the model
    # and the data folder alike)
    (re.compile(r"^(?:\.\.\.|\u2026)$"), "an ellipsis left for the user to fill in"),
)


# `per_device_train_batch_size: [BSIZE]`: a bracketed name the README asks the user to replace (TIGER-AI-Lab/StructLM's
# finetuning YAML), which YAML reads as a one-item list
_BRACKETED_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


# `cutoff_len: {cutoff_len}`: a brace-named slot a launcher fills in with sed or str.format
# (zwq2018/embodied_reasoner's finetune templates), which YAML reads as a one-key mapping with no value
_SLOT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def placeholder(value: Any) -> str | None:
    """What kind of stand-in *value* is (`???`, `__BATCH_SIZE__`, `${oc.env:BS}`, `{{ bs }}`, `[BSIZE]`,
    `{cutoff_len}`), or None for a value."""
    if isinstance(value, dict) and len(value) == 1:
        (name, inner), = value.items()
        if inner is None and isinstance(name, str) and _SLOT_NAME.match(name):
            return "a brace-named slot that the launcher fills in (sed, str.format) before the run"
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) \
            and _BRACKETED_NAME.match(value[0].strip()):
        return "a bracketed name left for the user to fill in"
    if not isinstance(value, str):
        return None
    text = value.strip()
    return next((why for pattern, why in _PLACEHOLDERS if pattern.match(text)), None)


def shown_placeholder(value: Any) -> str:
    """*value* as the file wrote it: `[BSIZE]` rather than Python's `['BSIZE']`."""
    if isinstance(value, dict):
        return "{" + next(iter(value)) + "}"
    return f"[{value[0].strip()}]" if isinstance(value, list) else str(value).strip()


def value_problem(name: str, value: Any) -> str | None:
    """Why `value` cannot be the setting `name` (a canonical setting name), or None when it can."""
    if name not in CHECKED or value is None:
        return None
    wanted = _wanted(name)
    if isinstance(value, bool):
        return f"must be {wanted}, not {str(value).lower()}"
    if isinstance(value, str):
        if value.strip().lower() in _WORDS:
            return None
        if value.strip().lstrip("+-").isdigit() and len(value.strip()) > 24:
            return f"must be {wanted}, not a {len(value.strip())}-digit number"
        try:
            number = float(value)
        except ValueError:
            return f"must be {wanted}, not the text {value[:40]!r}"
        if number.is_integer() and "." not in value and "e" not in value.lower() and math.isfinite(number):
            try:
                number = int(value)
            except ValueError:  # more digits than Python parses
                return f"must be {wanted}, not a {len(value)}-digit number"
        value = number
    if not isinstance(value, (int, float)):
        return f"must be {wanted}, not a {type(value).__name__}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, not {value}"
    if name in POSITIVE_INT:
        if isinstance(value, float) and not value.is_integer():
            return f"must be {wanted}, not {value}"
        if value <= 0:
            return f"must be {wanted}, not {_short(value)}"
        if value > 1 << 40:
            return f"is {_short(value)}, more than any run can use"
    elif name in POSITIVE_NUMBER and value <= 0:
        return f"must be {wanted}, not {_short(value)}"
    elif name in NON_NEGATIVE_NUMBER and value < 0:
        return f"must be {wanted}, not {_short(value)}"
    elif name in PROBABILITY and not 0 <= value <= 1:
        return f"must be {wanted}, not {_short(value)}"
    return None


def _wanted(name: str) -> str:
    if name in POSITIVE_INT:
        return "a positive integer"
    if name in POSITIVE_NUMBER:
        return "a positive number"
    if name in NON_NEGATIVE_NUMBER:
        return "a number >= 0"
    return "a probability between 0 and 1"


def _short(value: int | float) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"a {len(text)}-digit number"
