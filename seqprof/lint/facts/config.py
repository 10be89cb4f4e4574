"""Facts from the config alone: which precision, quantisation and sharding switches are on, and the file's keys with their lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seqprof.config.plan import Plan
from seqprof.lint.facts.common import Loc

FLAG_NAMES = ("fp16", "bf16", "load_in_4bit", "load_in_8bit", "deepspeed", "fsdp")
PRECISION_SECTIONS = frozenset({"fp16", "bf16"})  # a DeepSpeed JSON's sections of these names


def config_flags(plan: Plan) -> dict[str, Loc]:
    """Switches stated as true in the file (a plan setting if the reader made one, else the top-level key)."""
    out: dict[str, Loc] = {}
    for name in FLAG_NAMES:
        s = plan.settings.get(name)
        if s is not None and s.stated:
            if is_on(s.value):
                out[name] = Loc(key=s.key, file=s.file, line=s.line, value=s.value)
            continue
        value = plan.raw.get(name)
        if name in PRECISION_SECTIONS and isinstance(value, dict):
            value = value.get("enabled", False)  # DeepSpeed reads only `enabled` (NExT-GPT's {"enable": true} is off)
        if name in plan.raw and is_on(value):
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


@dataclass(frozen=True)
class TargetTypo:
    """A LoRA target module that is no layer name of any transformers model and one small edit from one that is."""

    key: str | None
    file: str | None
    line: int | None
    value: str
    suggestion: str


# readers whose comma-separated string is split into a list before PEFT sees it (LLaMA-Factory's lora_target);
# elsewhere one string is PEFT's regular expression (re.fullmatch against the module's whole name), not a name
SPLIT_STRINGS = frozenset({"llamafactory", "llamafactory_v1", "auto_antislop"})


def lora_target_typos(plan: Plan) -> list[TargetTypo]:
    """Entries of a stated target-module list that PEFT would match against nothing, by their last dotted part:
    not a layer name transformers' models assign (case aside: InternLM's wqkv is MPT's Wqkv), and within one edit
    (two for names of eight or more letters) of one that is. torchtune names its own modules (output_proj)."""
    from seqprof.config.dialects.common import levenshtein, load_keys_file

    setting = plan.settings.get("lora_targets")
    if setting is None or not setting.stated or plan.dialect == "torchtune" or not isinstance(setting.value, list):
        return []
    raw = plan.raw.get(setting.key) if setting.key else None
    if isinstance(raw, str) and plan.dialect not in SPLIT_STRINGS:
        return []
    known = load_keys_file("module_names")["names"]
    lowered = {name.lower() for name in known}
    out = []
    for entry in setting.value:
        if not isinstance(entry, str) or not entry.strip() or entry.strip().lower() in ("all", "all-linear"):
            continue
        name = entry.split(".")[-1] if "." in entry.strip(".") else entry
        if name.lower() in lowered or len(name) < 4:
            continue
        limit = 2 if len(name) >= 8 else 1
        close = sorted((levenshtein(name.lower(), k.lower(), limit), k) for k in known
                       if abs(len(k) - len(name)) <= limit)
        close = [(d, k) for d, k in close if d <= limit]
        if close and (len(close) == 1 or close[0][0] < close[1][0]):
            out.append(TargetTypo(key=setting.key, file=setting.file, line=setting.line, value=entry,
                                  suggestion=entry[: len(entry) - len(name)] + close[0][1]))
    return out


# keys of axolotl's UserDefinedPrompterType (utils/schemas/datasets.py), which only a `type:` mapping reads
# (prompt_strategies/user_defined.py); no prompt strategy named by a string reads them from the dataset entry
USER_DEFINED_FORMAT_KEYS = ("field_system", "field_instruction", "field_input", "field_output", "format",
                            "no_input_format", "system_format")


@dataclass(frozen=True)
class UnreadDatasetKeys:
    """An axolotl `type: completion` dataset entry that also names instruction/output columns it never reads."""

    key: str
    file: str | None
    line: int | None
    index: int
    keys: tuple[str, ...]
    field: str  # the one column the completion strategy tokenizes


def completion_unread_keys(plan: Plan) -> list[UnreadDatasetKeys]:
    """axolotl's completion strategy (prompt_strategies/completion.py load) reads one column, `field` (default
    "text"), from every row; instruction/output column names beside it are read by nothing, so rows without that
    column fail at tokenization (KeyError) or train on the wrong text."""
    if plan.dialect != "axolotl":
        return []
    out = []
    for name in ("datasets", "test_datasets"):
        entries = plan.raw.get(name)
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            if not isinstance(entry, dict) or entry.get("type") != "completion":
                continue
            unread = tuple(k for k in USER_DEFINED_FORMAT_KEYS if entry.get(k) not in (None, ""))
            if unread:
                dotted = f"{name}.{i}.{unread[0]}"
                out.append(UnreadDatasetKeys(key=dotted, file=plan.path, line=plan.key_lines.get(dotted), index=i,
                                             keys=unread, field=str(entry.get("field") or "text")))
    return out


# the dialects whose loaders keep a YAML `None` as the text "None" (PyYAML's safe_load behind HfArgumentParser,
# TrlParser and axolotl; OmegaConf behind LLaMA-Factory), for fields whose unset value is None. torchtune's
# tutorials write `None` as a placeholder their launchers replace (key=value overrides built up in bash arrays)
TEXT_NONE_DIALECTS = frozenset({"hf", "trl", "llamafactory", "axolotl"})
# Hub settings only push_to_hub reads: the text is never used while pushing is off
HUB_ONLY = frozenset({"hub_model_id", "hub_token", "hub_strategy", "hub_private_repo", "hub_revision"})


def none_texts(plan: Plan) -> list[Loc]:
    """Keys of a YAML file written `key: None`: the text 'None', not null. Not those a command line naming the file
    sets itself (wx-zhang/bfpo's `--other_data_config=...`), nor a Hub setting while push_to_hub is off, nor any
    where the project's own code compares a value with the text "None" (it reads the word on purpose)."""
    if plan.dialect not in TEXT_NONE_DIALECTS or str(plan.path).lower().endswith(".json"):
        return []
    pushing = is_on(plan.raw.get("push_to_hub"))
    found = [Loc(key=key, file=plan.path, line=plan.key_lines.get(key), value=value)
             for key, value in _leaves(plan.raw, "") if isinstance(value, str) and value.strip() == "None"
             and (pushing or key not in HUB_ONLY)]
    if found and _project_tests_none_text(plan.path):
        return []
    if found:
        from pathlib import Path

        from seqprof.config.launches import launch_overrides

        overridden = launch_overrides(plan.path) if Path(plan.path).is_file() else frozenset()
        found = [loc for loc in found if loc.key not in overridden]
    return found


def _leaves(node: Any, prefix: str):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}{key}" if not prefix else f"{prefix}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, f"{prefix}.{i}")
    else:
        yield prefix, node


def _project_tests_none_text(path: str) -> bool:
    """The project's Python compares a value with the text "None" (`if args.x == "None":`, `in ("None", None)`)."""
    import re
    from pathlib import Path

    from seqprof.config.project_fields import code_matches, project_root

    if not Path(path).is_file():
        return False
    return code_matches(project_root(path), re.compile(r"""(?:==|!=|\bin\b)\s*[(\[]?[^\n]*?["']None["']|["']None["']\s*(?:==|!=)"""))
