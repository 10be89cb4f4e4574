"""Keys of a file the project reads by hand, judged where its code hands them on to transformers or TRL.

No framework parses such a file (seqprof.config.dialects.own_schema says why lint reads it as `unknown`), but its
script builds `TrainingArguments(warmup_ratio=cfg["warmup_ratio"])` or `GRPOConfig(**kwargs)` from it
(seqprof.config.project_calls). The keyword meets the class's own history at the versions the project pins: a
name transformers 5.15 removed is a TypeError there, as it would be in a YAML TrainingArguments read. Only
renames, deprecations and removals are reported; whether a keyword is a field at all is left to the class.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from seqprof.config.dialects import hf, trl
from seqprof.config.dialects.common import Keyspace, Moved, check_keys
from seqprof.config.dialects.unsloth_compat import filtered_by_unsloth, unsloth_compat_release
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_calls import SECTION, TRAINER_CLASSES, Forward, hydra_group_spread, project_forwards
from seqprof.config.key_history import KeyHistory, assumed, with_companions, with_trl_and_transformers
from seqprof.config.pins import Pins
from seqprof.config.versions import pins_beside

VERSION_KINDS = frozenset({"deprecated_key", "renamed_key", "removed_key", "upcoming_deprecation"})
TRAINER_OF = {cls: trainer for trainer, cls in trl.TRAINER_CLASSES.items()}
ANY_KEYWORD = "**"  # keys/trl_trainer_kwargs.json: the constructor passes other keywords on


def forwarded_key_diagnostics(cfg: LoadedConfig, only: Collection[str] | None = None,
                              pins: Pins | None = None) -> list[ConfigDiagnostic]:
    """Version findings on the top-level keys (or those of *only*) the project's code passes to an argument class
    under a name that class renamed, deprecated or removed, each naming where the code hands it on; judged at
    *pins* (default: the files beside the config)."""
    keys = [k for k in cfg.data if isinstance(k, str)]
    wanted = keys if only is None else [k for k in keys if k in only]
    nested = _section_leaves(cfg.data) if only is None else {}
    forwards = {nested.get(k, k): replace(f, key=nested.get(k, k))
                for k, f in project_forwards(cfg.path, keys + list(nested)).items()
                if k in wanted or k in nested and f.section == nested[k].split(".")[0]} if wanted else {}
    if nested and wanted:  # the leaves' names may point at another file than the one that spreads a section
        forwards = {**{k: f for k, f in project_forwards(cfg.path, keys).items()
                       if k in wanted and f.keyword == SECTION}, **forwards}
    if not forwards and wanted:  # a Hydra group option the code spreads whole into the class: every key, by name
        group = hydra_group_spread(cfg.path)
        forwards = {k: replace(group, key=k, keyword=k) for k in wanted if k not in group.own} if group else {}
    if forwards and not _project_loads_its_format(cfg.path):
        forwards = {k: f for k, f in forwards.items() if _read_by_name(cfg.path, f)}
    if not forwards:
        return []
    history = KeyHistory.load()
    pins = pins if pins is not None else with_companions(pins_beside(cfg.path), history)
    out: list[ConfigDiagnostic] = []
    compat = unsloth_compat_release(pins, history)
    for forward in _each_key(forwards.values(), cfg.data, cfg.path):
        if forward.cls in TRAINER_CLASSES and _project_imports_unsloth(cfg.path):
            continue  # unsloth's import moves a trainer's old keywords into its config (unsloth trainer.py)
        unsloth = forward.package == "trl" and _imports_unsloth(cfg.path, forward)
        if forward.keyword == "max_seq_length" and unsloth:
            continue
        # a spread section's key reaches the class under its own name: the fix is the config's, not the code's
        found = [replace(d, key=forward.key, message=_handed_on(d.message, forward),
                         handed_on=None if forward.spread else forward.where())
                 for d in _judged(forward, cfg.get(forward.key), cfg.line(forward.key) or 1, cfg.path, pins, history)
                 if d.kind in VERSION_KINDS]
        out += [filtered_by_unsloth(d, forward, compat) for d in found] if unsloth and compat else found
    return out + _spread_numbers_as_text(cfg, forwards.values())


# the words of code that can load a YAML file (PyYAML, OmegaConf, Hydra, ruamel, a parser's parse_yaml_file, an
# HfArgumentParser / TrlParser or the handbook's H4ArgumentParser given the file) or a JSON one; a project none of
# whose Python names them reads no config file of that format
_PARSERS = r"|HfArgumentParser|H4ArgumentParser|TrlParser"
_YAML_WORDS = re.compile(r"yaml|omegaconf|hydra" + _PARSERS, re.I)
_JSON_WORDS = re.compile(r"\bjson" + _PARSERS, re.I)


@lru_cache(maxsize=256)
def _project_loads_its_format(path: str) -> bool:
    """Whether any Python file of the project could load *path*: lzumot/lean_grpo's configs/default.yaml matches the
    fields of its LeanGRPOConfig, whose values the trainer hands to GRPOConfig (`self.config.warmup_ratio`), but no
    code of it names YAML (its typer CLI builds the config from flags), so nothing the trainer hands on comes from
    the file."""
    from seqprof.config.project_fields import code_matches, project_root

    suffix = Path(path).suffix.lower()
    words = _JSON_WORDS if suffix == ".json" else _YAML_WORDS if suffix in (".yaml", ".yml") else None
    return words is None or code_matches(project_root(path), words)


def _read_by_name(path: str, forward: Forward) -> bool:
    """The hand-off reads the key out of a mapping by its name (`cfg["warmup_ratio"]`, `.get("warmup_ratio")`): a
    mapping holding that key exists, whatever loads it (a module seqprof does not see); an attribute of the project's
    own object (`self.config.warmup_ratio`) may be filled from anything."""
    lines = _script_text(path, forward.file).splitlines()
    line = lines[forward.line - 1] if 0 < forward.line <= len(lines) else ""
    name = forward.key.rsplit(".", 1)[-1]
    return f'"{name}"' in line or f"'{name}'" in line or forward.keyword == SECTION or bool(forward.spread)


# a script that loads the YAML with PyYAML itself (OmegaConf's loader reads 2e-5 as a float)
PYYAML_LOAD = re.compile(r"\byaml\.(?:safe_load|load|full_load)\s*\(")


def _spread_numbers_as_text(cfg: LoadedConfig, forwards) -> list[ConfigDiagnostic]:
    """`learning_rate: 2e-5` in a section the project's code loads with PyYAML and spreads into TrainingArguments
    (boostcampaitech3's `TrainingArguments(**configs['TrainingArguments'])`): the class gets the text '2e-5'."""
    from seqprof.config.project_fields import project_root, source_text
    from seqprof.config.text_numbers import TEXT_NUMBER_FAILURES, numbers_left_as_text

    if Path(cfg.path).suffix.lower() not in (".yaml", ".yml"):
        return []
    root = project_root(cfg.path)
    out: list[ConfigDiagnostic] = []
    for forward in forwards:
        text = source_text(root / forward.file) if forward.keyword == SECTION else ""
        if text and PYYAML_LOAD.search(text) and "OmegaConf" not in text:
            out += numbers_left_as_text(cfg, f"the project's code loads it with PyYAML and spreads '{forward.key}' "
                                             f"into {forward.cls} as it is ({forward.where()})",
                                        tuple(k for k in TEXT_NUMBER_FAILURES if "." not in k), forward.key)
    return out


def _section_leaves(data: Mapping) -> dict[str, str]:
    """Key -> its dotted path, for the keys of the file's one-level sections (`training: {max_prompt_length: 512}`)
    that name no top-level key and sit in one section only: a script that reads `config["training"]` into a local
    and hands `train["max_prompt_length"]` to DPOConfig reads them by that name (rmarnold's, hangcao87's). The
    hand-off counts only where the code reads it out of that section (Forward.section): jdpsc's
    `training_config["max_seq_length"]` is not the file's model.max_seq_length."""
    seen: dict[str, list[str]] = {}
    for section, body in data.items():
        if isinstance(section, str) and isinstance(body, Mapping):
            for name in body:
                if isinstance(name, str) and name not in data:
                    seen.setdefault(name, []).append(f"{section}.{name}")
    return {name: paths[0] for name, paths in seen.items() if len(paths) == 1}


def _each_key(forwards, data, path: str) -> list[Forward]:
    """The hand-offs key by key: a section spread into the class (`TrainingArguments(**config.training_args)`)
    hands each of its keys on under its own name (`training_args.evaluation_strategy`)."""
    out: list[Forward] = []
    for forward in forwards:
        section = data.get(forward.key)
        if forward.keyword != SECTION:
            out.append(forward)
        elif isinstance(section, Mapping):
            taken = _taken_out(path, forward.file, [name for name in section if isinstance(name, str)])
            out += [replace(forward, key=f"{forward.key}.{name}", keyword=name, spread=forward.key) for name in section
                    if isinstance(name, str) and name not in taken and name not in forward.own]
    return out


def _imports_unsloth(path: str, forward: Forward) -> bool:
    """The handing-off script imports unsloth before trl: unsloth's patched TRL configs take max_seq_length again
    wherever TRL's have only max_length, and copy it into max_length (unsloth 2026.10.9 models/rl.py;
    AM-2304/gemma4-npc-it's `from unsloth import FastModel`, then `from trl import SFTConfig`)."""
    if _imported_first(_script_text(path, forward.file), "unsloth", "trl", or_alone=True):
        return True
    # or a script imports unsloth before the handing-off module (boostcampaitech7's train.py: `from unsloth import
    # FastLanguageModel`, then `from models.base_model import BaseModel`, whose own trl import comes first)
    from seqprof.config.project_fields import project_root, python_files, source_text

    module = re.escape(forward.file.removesuffix(".py").replace("/", "."))
    return any(_imported_first(source_text(file), "unsloth", module) for file in python_files(project_root(path)))


def _project_imports_unsloth(path: str) -> bool:
    """Some Python file of the project imports unsloth. Its import patches every TRL trainer from trl 0.13 on
    (_patch_trl_trainer / _backwards_compatible_trainer, unsloth 2026.10.9 trainer.py): a call that passes `args`
    has its config's old keywords moved into the config (max_seq_length as max_length), so
    `SFTTrainer(..., max_seq_length=n, args=...)` runs; where in the process the import comes does not matter, the
    class itself is patched."""
    from seqprof.config.project_fields import code_matches, project_root

    return code_matches(project_root(path), _UNSLOTH_IMPORT)


_UNSLOTH_IMPORT = re.compile(r"^\s*(?:import|from)\s+unsloth\b", re.M)


def _imported_first(text: str, first: str, then: str, or_alone: bool = False) -> bool:
    """*text* imports module *first* before module *then* (patterns), or, *or_alone*, without ever importing it."""
    one = re.search(rf"^\s*(?:import|from)\s+{first}\b", text, re.M)
    other = re.search(rf"^\s*(?:import|from)\s+{then}\b", text, re.M)
    return one is not None and (one.start() < other.start() if other is not None else or_alone)


def _taken_out(path: str, file: str, names: list[str]) -> set[str]:
    """The *names* the spreading script pops or deletes from the mapping before the spread (likebeans/Genesis-LLM's
    `d["eval_strategy"] = d.pop("evaluation_strategy")`): the class never gets them under that name."""
    text = _script_text(path, file)
    return {name for name in names
            if re.search(rf"""(?:\.pop\(\s*|\bdel\s+[\w.]+\[\s*)["']{re.escape(name)}["']""", text)} if text else set()


def _script_text(path: str, file: str) -> str:
    """The text of the project file *file* (relative to the root of the config at *path*), '' when unreadable."""
    from seqprof.config.project_fields import project_root, source_text

    script = project_root(path) / file
    return source_text(script) if script.is_file() else ""


def handed_on_by_project(found: list[ConfigDiagnostic], cfg: LoadedConfig, fields: Collection[str],
                         pins: Pins | None = None) -> list:
    """Notes on keys the project's own classes declare (read_by_project), re-judged where its code hands the value
    on to TrainingArguments or a TRL config: ludolara's SFTTrainConfig.warmup_ratio goes on to
    SFTConfig(warmup_ratio=cfg.warmup_ratio), which transformers 5.15 no longer takes."""
    own = {d.key for d in found if d.kind == "unread_key" and d.key in fields}
    judged = {d.key: d for d in forwarded_key_diagnostics(cfg, own, pins)} if own else {}
    return [judged.get(d.key, d) if d.kind == "unread_key" else d for d in found] if judged else found


def _judged(forward: Forward, value, line: int, path: str, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """check_keys on the keyword alone, as the class's own dialect judges it (its line: the config key's)."""
    one = LoadedConfig(path=path, data={forward.keyword: value}, key_lines={forward.keyword: line})
    if forward.cls in TRAINER_CLASSES:
        constructors = trainer_keyword_history(history)
        pins = with_trl_and_transformers(pins, history)
        return check_keys(one, trainer_keyspace(forward.cls, constructors, history), dialect_label=trl.LABEL,
                          removal=lambda key: constructors.removal("trl", key, [forward.cls], pins),
                          assumption=assumed(trl.PACKAGES, pins, history))
    if forward.package == "transformers":
        return check_keys(one, hf.keyspace(history), dialect_label=hf.LABEL,
                          removal=hf.removal_judge(pins, history), arrival=hf.arrival_judge(pins, history),
                          assumption=assumed(["transformers"], pins, history))
    trainer = TRAINER_OF.get(forward.cls, "sft")
    pins = with_trl_and_transformers(pins, history)
    return check_keys(one, trl.keyspace(trainer, history), dialect_label=trl.LABEL,
                      removal=trl.removal_judge(trainer, pins, history),
                      arrival=trl.arrival_judge(trainer, pins, history),
                      assumption=assumed(trl.PACKAGES, pins, history))


@lru_cache(maxsize=4)  # one view per loaded history, not one per hand-off
def trainer_keyword_history(history: KeyHistory) -> KeyHistory:
    """The keywords of TRL's trainer constructors (keys/trl_trainer_kwargs.json) as trl's classes, so they are judged
    under trl's pins as its config fields are; a release whose constructor passes other keywords on (`**`) counts
    as taking them (0.26-0.28's ORPOTrainer shim over trl.experimental's)."""
    from seqprof.config.dialects.common import load_keys_file

    data = load_keys_file("trl_trainer_kwargs")
    classes = {cls: {"versions": entry["versions"],
                     "fields": {key: spans + entry["fields"].get(ANY_KEYWORD, [])
                                for key, spans in entry["fields"].items()}}
               for cls, entry in data["classes"].items()}
    return KeyHistory({**history.data, "trl": {**history.data["trl"], "classes": classes}})


@lru_cache(maxsize=64)  # trl.keyspace is built once per class and history, not once per hand-off
def trainer_keyspace(cls: str, constructors: KeyHistory, history: KeyHistory) -> Keyspace:
    """The keywords *cls* takes in the newest TRL, and those it took before, each saying where the value goes now:
    its config class, under the same name or a new one (SFTConfig's max_length for SFTTrainer's max_seq_length)."""
    entry = constructors.data["trl"]["classes"].get(cls, {})
    fields = entry.get("fields", {})
    newest = constructors.newest("trl")
    if not any(until is None for _, until in entry.get("versions", ())):
        return Keyspace(known=frozenset(fields))  # the class itself is gone: its import fails first (SP441)
    gone = {key for key in fields if key != ANY_KEYWORD and newest not in constructors.having("trl", key, [cls])}
    config = cls.removesuffix("Trainer") + "Config"
    trainer = TRAINER_OF.get(config, "sft")
    renamed = trl.keyspace(trainer, history).renamed

    def now(key: str) -> str:
        if newest in history.having("trl", key, [config]) or key in hf.training_argument_fields():
            return f"set it in {config}(...) instead"
        if key in renamed and renamed[key].replacement:
            return f"set it in {config}(...) as '{renamed[key].replacement}' instead"
        return f"{config} has no such field either"

    # only a setting a config carries, or once carried (beta, max_seq_length): a model, a tokenizer or a dataset
    # the script builds is no config value, whatever name the config gives it (PPOTrainer's model=self.model)
    settings = {key for key in gone if key in renamed or key in hf.training_argument_fields()
                or history.having("trl", key, [config])}
    return Keyspace(known=frozenset(fields) - settings,
                    deprecated={key: Moved(None, f"{cls}(...) no longer takes it as a keyword argument (a TypeError); "
                                                 + now(key)) for key in settings})


def _handed_on(message: str, forward: Forward) -> str:
    if forward.spread:
        return (f"the project's code spreads '{forward.spread}' into {forward.cls} ({forward.where()}), so "
                f"'{forward.keyword}' reaches it under its own name: {message}")
    renamed = "" if forward.keyword == forward.key.rsplit(".", 1)[-1] else f" as '{forward.keyword}'"
    return f"the project's code hands '{forward.key}' to {forward.cls}{renamed} ({forward.where()}): {message}"
