"""Facts from the config alone: which precision, quantisation and sharding switches are on, and the file's keys with their lines."""

from __future__ import annotations

from typing import Any

from seqprof.config.plan import Plan
from seqprof.lint.facts.common import Loc

FLAG_NAMES = ("fp16", "bf16", "load_in_4bit", "load_in_8bit", "deepspeed", "fsdp")


def config_flags(plan: Plan) -> dict[str, Loc]:
    """Switches stated as true in the file (a plan setting if the reader made one, else the top-level key)."""
    out: dict[str, Loc] = {}
    for name in FLAG_NAMES:
        s = plan.settings.get(name)
        if s is not None and s.stated:
            if is_on(s.value):
                out[name] = Loc(key=s.key, file=s.file, line=s.line, value=s.value)
            continue
        if name in plan.raw and is_on(plan.raw[name]):
            out[name] = Loc(key=name, file=plan.path, line=plan.key_lines.get(name), value=plan.raw[name])
    return out


def is_on(value: Any) -> bool:
    """Explicitly switched on: true, or a non-empty path/table (deepspeed: ds.json); 'auto' is not."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "no", "none", "null", "0", "auto", "off")
    if isinstance(value, dict) and "enabled" in value:  # a DeepSpeed section: {"enabled": "auto"} is not on
        return is_on(value["enabled"])
    if isinstance(value, (dict, list)):
        return bool(value)
    return False


def key_locs(plan: Plan) -> dict[str, Loc]:
    """Every top-level key of the file as written, with its line and value (`loc.rl` in a rule).

    Rules that mirror a framework's own validators read these and `raw` (the values), not the
    canonical settings: axolotl's mode="before" validators and LLaMA-Factory's argument checks
    test the file as parsed, before any default is filled in."""
    return {str(key): Loc(key=str(key), file=plan.path, line=plan.key_lines.get(str(key)), value=value)
            for key, value in plan.raw.items()}
