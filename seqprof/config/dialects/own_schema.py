"""Files a project's own code reads: the signs, in the keys alone, that no framework's parser is the consumer.

HfArgumentParser and TrlParser refuse a key no dataclass declares, so a file that writes the project's own names
for TrainingArguments fields (`num_epochs`, `model_name`) or keeps its settings in sections of its own (`rollout:`,
`reward:`) is read by the project's script, which maps what it wants onto the framework by hand. The hf and trl
dialects decline such files (detect scores 0), and lint says why (seqprof.lint.run).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.launches import command_lines
from seqprof.config.project_fields import (IDENTIFIER, ProjectDataclass, code_match_at, code_matches, project_root,
                                         python_files, source_text)
from seqprof.config.key_history import KeyHistory

# a project's own names for what TrainingArguments / ModelConfig call otherwise: a file that writes two of them (and
# not the field they stand for) is a dict the project's script maps onto the classes by hand (`num_epochs` ->
# num_train_epochs=, `model_name` -> from_pretrained), not one HfArgumentParser or TrlParser reads, which would
# refuse them; torchtune (epochs, batch_size) and axolotl (micro_batch_size, base_model) are detected before
OWN_SYNONYMS: Mapping[str, str] = {
    "num_epochs": "num_train_epochs", "epochs": "num_train_epochs", "max_epochs": "num_train_epochs",
    "batch_size": "per_device_train_batch_size", "train_batch_size": "per_device_train_batch_size",
    "per_device_batch_size": "per_device_train_batch_size",
    "micro_batch_size": "per_device_train_batch_size", "eval_batch_size": "per_device_eval_batch_size",
    "lr": "learning_rate", "log_steps": "logging_steps", "use_bf16": "bf16", "use_fp16": "fp16",
    "grad_accum_steps": "gradient_accumulation_steps", "gradient_accumulation": "gradient_accumulation_steps",
    "grad_accum": "gradient_accumulation_steps", "accumulation_steps": "gradient_accumulation_steps",
    "model_name": "model_name_or_path", "model_path": "model_name_or_path", "model_dir": "model_name_or_path",
    "model_id": "model_name_or_path", "base_model": "model_name_or_path", "model": "model_name_or_path",
    "total_steps": "max_steps",
    # peft's LoraConfig name, which TRL's ModelConfig and axolotl call lora_target_modules: a flat file with it feeds
    # the project's own LoraConfig(target_modules=...) (alinj4253-droid/qwen-tool-calling-sft, kushc2004's tool_sft)
    "target_modules": "lora_target_modules",
}


def own_sections(data: Mapping[str, Any]) -> list[str]:
    """Top-level mappings that no TrainingArguments or TRL config field ever was (`rollout:`, `reward:`, `trainer:`),
    when there are two or more: a schema of the project's own, which HfArgumentParser and TrlParser would refuse.
    A ChatGLM-style `training_args:` block (SECTION) is TrainingArguments one level down, read as such."""
    from seqprof.config.dialects.hf import SECTION

    if isinstance(data.get(SECTION), Mapping):
        return []
    fields = _dict_valued_fields_allowed()
    found = [k for k, v in data.items() if isinstance(v, Mapping) and v and k not in fields
             and all(isinstance(name, str) and IDENTIFIER.match(name) for name in v)]
    return found if len(found) >= 2 else []


# a section holds settings named like identifiers (IDENTIFIER); a dict field's value may be keyed by dataset ids
# (LionAlignment's own train_dataset_mixer: {"Columbia-NLP/DPO-HelpSteer": 1.0}), which a parser's dataclass reads


@cache
def _dict_valued_fields_allowed() -> frozenset[str]:
    """Every field TrainingArguments or a TRL config ever had, the example scripts' arguments, and the mappings the
    recipe layers on TRL read (alignment-handbook's dataset_mixer, open-r1's dataset_mixture; TrlParser's env)."""
    from seqprof.config.dialects.hf import EXAMPLE_SCRIPT_KEYS

    history = KeyHistory.load()
    trl_classes = list(history.data.get("trl", {}).get("classes", {}))
    return frozenset(history.ever("transformers", ["TrainingArguments"]) | history.ever("trl", trl_classes)
                     | EXAMPLE_SCRIPT_KEYS | {"dataset_mixer", "dataset_mixture", "env"})


def mostly_foreign(data: Mapping[str, Any], known: frozenset[str]) -> bool:
    """A long file of which the framework knows under a fifth of the keys: another tool's schema that shares a few
    generic names (JanusL/nlp-project's OpenNMT-py training.yaml: 50 keys, of which seed, optim, learning_rate ...
    are TrainingArguments fields and label_smoothing a DPOConfig one). Its reader is not the framework."""
    keys = [k for k in data if isinstance(k, str)]
    return len(keys) >= 20 and 5 * sum(k in known for k in keys) < len(keys)


def unread_dump(config_path: str, data: Mapping[str, Any]) -> str:
    """Why the file is a record of a finished run that nothing reads back ('' when it is not): TrainingArguments'
    to_dict masks every *_token value as `<HUB_TOKEN>`, which no one writes by hand, and no file of the project names
    it (adityaxdubey/grpo-accounting-finetune's model_file/training_args.json, saved beside the adapter). A dump the
    project parses again (vkk1710/Automotive_NER's configs/config.json names its training_args.json) is a config."""
    masked = [k for k, v in data.items() if isinstance(k, str) and k.endswith("_token") and v == f"<{k.upper()}>"]
    path = Path(config_path)
    if not masked or not path.is_file():
        return ""
    root = project_root(path)
    if command_lines(root, path.resolve())[0] or _named_in_project(root, path):
        return ""
    return (f"'{masked[0]}: {data[masked[0]]}' is how TrainingArguments.to_dict masks a token: the file is a record "
            "of a finished run, and no file of the project names it, so nothing reads it back")


def _named_in_project(root: Path, path: Path) -> bool:
    """Some Python, shell, YAML, JSON or notebook file of the project writes this file's name."""
    from seqprof.config.project_fields import SKIPPED_FOLDERS

    suffixes = {".py", ".sh", ".yaml", ".yml", ".json", ".ipynb", ".toml", ".cfg"}
    files = (f for f in sorted(root.rglob("*")) if f.suffix in suffixes
             and not any(part in SKIPPED_FOLDERS or part.startswith(".") for part in f.relative_to(root).parts[:-1]))
    for file in list(files)[:5000]:
        if file.is_file() and file.resolve() != path.resolve() and file.stat().st_size < 2_000_000 and \
                path.name in file.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def composed(data: Mapping[str, Any]) -> bool:
    """A file that names other YAML files to merge under it (Quinine's `inherit: [trainers/gpt2-small.yaml, ...]`,
    stanford-crfm/mistral): the project's own loader composes it before anything reads it, and HfArgumentParser or
    TrlParser would refuse the key itself."""
    named = data.get("inherit")
    named = [named] if isinstance(named, str) else named
    return isinstance(named, list) and bool(named) and all(
        isinstance(item, str) and item.lower().endswith((".yaml", ".yml")) for item in named)


def hand_mapped(data: Mapping[str, Any]) -> list[str]:
    """The project's own synonyms of TrainingArguments / ModelConfig fields in *data*, when there are two or more."""
    found = [k for k in data if k in OWN_SYNONYMS and OWN_SYNONYMS[k] not in data]
    return found if len(found) >= 2 else []


def read_as_a_dict(config_path: str, data: Mapping[str, Any]) -> dict[str, str]:
    """Key -> where the project's own code reads it out of the loaded mapping (`cfg.get("warmup_ratio")`,
    `cfg["lora_r"]`), when one file of the project reads more than half of the file's top-level keys (four or more)
    that way: a script that maps the dict onto the framework by hand, which no framework's parser reads (iiicellled's
    sft_train.py: yaml.safe_load, then its own TrainingArguments(**kwargs)). Reads spread over many files are generic
    config code (a linter's, a framework's own), not this file's consumer."""
    from seqprof.config.project_fields import project_reads_by_file

    keys = [k for k in data if isinstance(k, str)]
    if len(keys) < 4:
        return {}
    # `config.training.output_dir` reads a file with a training: section, or one of a Hydra group named so; not a
    # flat file beside it (SongY123/SpatialText2SQL's trainer.py reads its own config/finetune.yaml that way, not the
    # LLaMA-Factory files in scripts/finetune/llamafactory/)
    sections = frozenset(k for k in keys if isinstance(data[k], Mapping)) | {Path(config_path).parent.name}
    best = max(project_reads_by_file(config_path, keys, sections=sections), key=lambda found: len(found[1]),
               default=None)
    if best is None or len(best[1]) * 2 <= len(keys) and not (
            len(best[1]) * 3 >= len(keys) and _builds_a_command_line(config_path, best[0])):
        return {}
    if WHOLE_CONFIG_SPREAD.search(source_text(project_root(config_path) / best[0])):
        return {}  # it also spreads the whole config into a framework class, which then reads every key
    return {key: f"{best[0]}:{line}" for key, line in best[1]}


def _builds_a_command_line(config_path: str, file: str) -> bool:
    """The file that reads the mapping writes five or more options as flags of a command it builds, in a list or an
    append/extend (Drip-Data/DataEva's train.py: `args.extend(['--stage', ...])`, handing 40 of
    training_config_full.yaml's 82 keys to `llamafactory-cli train`): the framework reads the flags, never the file,
    so a third of the keys read is enough. An argparse option it declares (`add_argument("--lr", ...)`) is none."""
    import ast

    from seqprof.config.project_fields import parsed_module

    tree = parsed_module(project_root(config_path) / file)
    flags = 0
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.List, ast.Tuple)):
            items = node.elts
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("append", "extend", "insert"):
            items = node.args
        else:
            continue
        flags += sum(1 for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)
                     and re.fullmatch(r"--[a-z][a-z0-9_]*", item.value))
    return flags >= 5


def mapped_by_keyword(config_path: str, data: Mapping[str, Any]) -> dict[str, str]:
    """Key -> where the project's code hands it to a framework class by keyword, when that is how the file reaches
    the framework: three or more of its keys go in as `TrainingArguments(output_dir=cfg["output_dir"], ...)`, no
    code of the project spreads a mapping into an argument class or calls an argument parser, so the class sees
    those keywords alone and the file's other keys are the project's (junqiangchen's sft_config.yaml: 28 keys, six
    handed on, warmup_ratio and evaluation_strategy read by nothing)."""
    from seqprof.config.project_calls import SECTION, project_forwards
    from seqprof.config.project_scripts import parser_files

    keys = [k for k in data if isinstance(k, str)]
    if len(keys) < 4 or not Path(config_path).is_file():
        return {}
    forwards = project_forwards(config_path, keys)
    if len(forwards) < 3 or any(f.spread or f.keyword == SECTION for f in forwards.values()):
        return {}
    root = project_root(config_path)
    if parser_files(root) or code_matches(root, SPREAD_INTO_A_CLASS):
        return {}
    return {key: forward.where() for key, forward in forwards.items()}


# the call of a class that spreads a mapping into it (`X(output_dir=..., **cfg["train"])`), and TRL's config names
_SPREAD_CALL = r"\s*\((?:[^()]|\([^()]*\))*?\*\*\s*[\w\[]"
_TRL_CONFIGS = "SFT|DPO|GRPO|KTO|ORPO|CPO|Reward|PPO|RLOO|GKD|PRM|XPO|BCO"
# a spread into transformers' or TRL's argument classes by name (not a project's ModelConfig / TrainConfig)
SPREAD_INTO_A_FRAMEWORK_CLASS = re.compile(rf"\b(?:\w*TrainingArguments|(?:{_TRL_CONFIGS}|NashMD|OnlineDPO)Config)"
                                           + _SPREAD_CALL)
# `TrainingArguments(**kwargs)`, `SFTConfig(output_dir=..., **cfg["train"])`: a mapping spread into an argument class
# (a LoraConfig(**cfg) or BitsAndBytesConfig(**q) takes no training argument)
SPREAD_INTO_A_CLASS = re.compile(rf"\b(?:\w*Arguments|\w*(?:{_TRL_CONFIGS}|Nash|Model)Config)" + _SPREAD_CALL)


def built_from_the_mapping(config_path: str, data: Mapping[str, Any]) -> str:
    """'XXPOTrainArgs (xxpo/xxpo_accelerate.py)' when one @dataclass of the project, with no transformers or TRL class
    among its ancestors, declares every key of the file (four or more; a pydantic model, which ignores the others,
    four in five) and the project builds it from a mapping (`XXPOTrainArgs(**train_config)`, codefuse-ai/MFTCoder):
    no framework's parser reads the file; else ''."""
    from seqprof.config.project_fields import project_dataclasses

    keys = [k for k in data if isinstance(k, str)]
    if len(keys) < 4 or not Path(config_path).is_file():
        return ""
    root = project_root(config_path)
    if code_matches(root, SPREAD_INTO_A_FRAMEWORK_CLASS):
        return ""  # wndudwkd003/kr_llm_ft_25 builds its own SFTConfig, then TrainingArguments(**asdict(cm.sft))
    table = project_dataclasses(root)
    for name in sorted(table):
        if SPREAD_INTO_A_FRAMEWORK_CLASS.match(f"{name}(**x"):
            continue  # a name of a framework's class (the project's DPOConfig beside trl's)
        fields, foreign, pydantic = _ancestry(name, table)
        declared = sum(1 for k in keys if k in fields)
        if foreign or declared < len(keys) and not (pydantic and declared * 5 >= len(keys) * 4):
            continue
        where = code_match_at(root, re.compile(rf"(?<![\w.]){re.escape(name)}\(\s*\*\*"))
        if where is not None:
            return f"{name} ({where.rsplit(':', 1)[0]})"
    return ""


def _ancestry(name: str, table: Mapping[str, list[ProjectDataclass]]) -> tuple[set[str], bool, bool]:
    """The fields class *name* declares or inherits from the project's own dataclasses, whether a base along the
    way is not the project's own (transformers', TRL's, an installed package's), and whether it is a pydantic model
    (BaseModel adds no field, and by default ignores a key it does not declare: seacowx/mental-healer's
    GRPOTrainerArgs(**yaml.safe_load(...)) drops the file's max_completion_length)."""
    fields: set[str] = set()
    foreign, pydantic, todo, seen = False, False, [name], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for one in table.get(current, ()):
            fields |= one.fields
            for base in one.bases:
                short = base.rpartition(".")[2]
                if short in table:
                    todo.append(short)
                elif short == "BaseModel":
                    pydantic = True
                elif base not in ("object", ""):
                    foreign = True
    return fields, foreign, pydantic


def read_by_its_own_trainer(config_path: str, data: Mapping[str, Any]) -> dict[str, str]:
    """read_as_a_dict for an axolotl-shaped file, when the one project file that reads most of its keys never imports
    or runs axolotl, and a command of the project runs that file on this config while none runs axolotl on it:
    PrasannS's run_hotpotqa_*.sh runs train_chunked_fast.py, which builds its own TrainingArguments from
    cfg.get("micro_batch_size"), on one of its axolotl-shaped configs; its siblings go to `axolotl.cli.train`."""
    from seqprof.config.project_fields import project_root

    reads = read_as_a_dict(config_path, data)
    files = {where.rsplit(":", 1)[0] for where in reads.values()}
    if len(files) != 1:
        return {}
    reader = files.pop()
    root = project_root(config_path)
    try:
        text = (root / reader).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    if RUNS_AXOLOTL.search(text):
        return {}
    commands = [line for _, _, line in command_lines(root, Path(config_path))[0]]
    runs_reader = any(Path(reader).name in line for line in commands)
    return reads if runs_reader and not any(RUNS_AXOLOTL.search(line) for line in commands) else {}


# code that imports axolotl or starts it (`-m axolotl.cli.train`, `["axolotl", "train", ...]`, `axolotl train`)
RUNS_AXOLOTL = re.compile(r"\bimport\s+axolotl|\bfrom\s+axolotl\b|axolotl\.cli|[\"']axolotl[\"']\s*,|"
                          r"\baxolotl\s+(?:train|preprocess|fetch|inference|merge)", re.I)


# `@hydra.main(config_path="config", ...)`, `hydra.initialize(config_path="../conf")`, `initialize_config_dir(config_dir=
# "...")`: the folder whose YAML files Hydra composes (with their config groups, config/loss/kto.yaml) into a DictConfig
HYDRA_CONFIG_DIR = re.compile(r"(?:hydra\.main|initialize|initialize_config_dir)\s*\([^)]*?"
                              r"\bconfig_(?:path|dir)\s*=\s*[\"']([^\"']+)[\"']", re.S)


@cache  # asked by read_plan when it chooses the dialect, and again by lint when it says why none was claimed
def hydra_config(config_path: str) -> str | None:
    """'launch.py:332' when the file is a config group option of the project's Hydra entry point (ContextualAI/
    HALOs' config/loss/kto.yaml under `@hydra.main(config_path="config")`): Hydra composes it under its group's key
    (`loss.desirable_weight`) into the project's own DictConfig, so whatever framework's keys it shares, none is
    read at the top level where a framework's parser would; else None. A primary config directly in that folder
    is left to the other signs (its sections may be spread into a framework class)."""
    path = Path(config_path).resolve()
    for folder, where in _hydra_option_folders(path):
        if not re.match(r"\s*#\s*@package\s+_global_", source_text(path)) and \
                not _parsed_whole(path.relative_to(folder).parts[0], project_root(path)):
            return where
    return None


def hydra_group(config_path: str) -> str | None:
    """The config group a file fills as one of its options under the project's Hydra entry point
    (conf/training_args/default.yaml fills `training_args`); None for a file outside a Hydra config folder, or a
    primary config directly in it."""
    path = Path(config_path).resolve()
    return next((path.relative_to(folder).parts[0] for folder, _ in _hydra_option_folders(path)), None)


def _hydra_option_folders(path: Path) -> list[tuple[Path, str]]:
    """The Hydra config folders (and the calls naming them) that hold *path* in a group folder below them."""
    if not path.is_file():
        return []
    root = project_root(path)
    return [(folder, where) for folder, where in _hydra_config_folders(root)
            if folder != root and folder in path.parents and path.parent != folder]


def _hydra_config_folders(root: Path) -> list[tuple[Path, str]]:
    """(the folder Hydra composes configs from, 'file:line' of the call naming it), for each Hydra entry point
    (HYDRA_CONFIG_DIR) in the project's Python files under *root*, in file order."""
    found = []
    for file in python_files(root):
        text = source_text(file)
        if "hydra" not in text:
            continue
        found += [((file.parent / match.group(1)).resolve(),
                   f"{file.relative_to(root).as_posix()}:{text.count(chr(10), 0, match.start()) + 1}")
                  for match in HYDRA_CONFIG_DIR.finditer(text)]
    return found


# a project that spreads the whole composed config into a parser or class: `parse_dict(OmegaConf.to_container(cfg))`,
# `TrainingArguments(**OmegaConf.to_container(cfg))`; a section (`cfg.training_args`) is read by the other signs
WHOLE_CONFIG_SPREAD = re.compile(r"(?:\*\*|parse_dict\(\s*)OmegaConf\.to_container\(\s*\w+\s*[,)]")


def hydra_primary_config(config_path: str, data: Mapping[str, Any]) -> str | None:
    """'train.py:81' when the file is a primary config of the project's Hydra entry point: it lies directly in the
    `config_path` folder and opens with a defaults list (Arc-Computer/ATLAS's configs/train.yaml composes its
    model/data/trainer groups). Hydra consumes `defaults` and the project's code reads the composed DictConfig,
    handing its top-level keys on through `${...}` interpolations or by hand; no framework parser reads the file,
    unless the code spreads the whole config into one. A framework block one level down (swiss-ai's
    `training_args:`) is left to the other signs."""
    from seqprof.config.dialects.hf import training_argument_fields

    defaults = data.get("defaults")
    if not isinstance(defaults, list) or not defaults or not all(
            isinstance(item, str) or isinstance(item, Mapping) and len(item) == 1 for item in defaults):
        return None
    fields = training_argument_fields()
    top = sum(k in fields for k in data)
    if any(isinstance(v, Mapping) and sum(k in fields for k in v) >= max(top, 1) for v in data.values()):
        return None
    path = Path(config_path).resolve()
    if not path.is_file():
        return None
    root = project_root(path)
    if code_matches(root, WHOLE_CONFIG_SPREAD):
        return None
    return next((where for folder, where in _hydra_config_folders(root) if folder == path.parent), None)


HYDRA_IMPORT = re.compile(r"^\s*(?:from\s+hydra\b|import\s+hydra\b)", re.M)


def hydra_defaults_entry(config_path: str) -> str | None:
    """'webrl.yaml' when a sibling YAML file names this one in a Hydra defaults list beside `_self_` (THUDM/WebRL's
    scripts/config/main/webrl.yaml: `defaults: [default, _self_]`) in a project that imports Hydra: Hydra composes it
    into the project's own DictConfig, wherever the code takes its config folder from (WebRL's
    `initialize(config_path=args.config_path)`); no framework's parser reads it. Else None."""
    import yaml

    path = Path(config_path).resolve()
    if not path.is_file() or not code_matches(project_root(path), HYDRA_IMPORT):
        return None
    for sibling in sorted(path.parent.glob("*.y*ml")):
        if sibling == path or sibling.suffix not in (".yaml", ".yml"):
            continue
        text = source_text(sibling)
        if "_self_" not in text or path.stem not in text:
            continue
        try:
            defaults = (yaml.safe_load(text) or {}).get("defaults")
        except (yaml.YAMLError, AttributeError):
            continue
        if isinstance(defaults, list) and "_self_" in defaults and path.stem in defaults:
            return sibling.name
    return None


def _parsed_whole(group: str, root: Path) -> bool:
    """The project hands the group's whole section to an argument parser (thiomajid/distil_xlstm's
    `HfArgumentParser(KDArguments).parse_dict(OmegaConf.to_container(cfg["trainer"]))`): its keys are that parser's,
    read as a framework's would be."""
    section = rf"""(?:\[\s*["']{re.escape(group)}["']\s*\]|\.{re.escape(group)}\b)"""
    pattern = re.compile(rf"parse_dict\([^\n]*{section}")
    return code_matches(root, pattern)


# an HfArgumentParser of the project's own
_PARSERS = r"\b(?:HfArgumentParser|TrlParser|H4ArgumentParser|ArgumentParserPlus)\b"
# packages whose classes a project's dataclass may extend to take a framework's arguments
_FRAMEWORK_PACKAGES = frozenset({"transformers", "trl", "peft", "accelerate", "axolotl", "llamafactory", "torchtune"})


def filled_by_own_dataclasses(config_path: str, data: Mapping[str, Any]) -> bool:
    """Every key of the file is a field of the project's own dataclasses, none of which extends a framework's class
    (bisect-group/NovoMolGen's SFTConfig(PolicyTrainerConfig): a plain dataclass of learning_rate, max_length,
    dataset_name ... named like TRL's). Its loader fills them; HfArgumentParser could not parse such a class beside
    TrainingArguments, whose option names it repeats. A base seqprof cannot resolve to a project class counts as a
    framework's. A project with an HfArgumentParser of its own may parse the file into such classes (allenai/
    open-instruct's FlatArguments through ArgumentParserPlus), or spread them into TrainingArguments: then the file
    is transformers' after all."""
    from seqprof.config.project_calls import spread_into_framework_class
    from seqprof.config.project_fields import project_dataclasses, project_fields

    keys = [k for k in data if isinstance(k, str)]
    fields = project_fields(config_path) if len(keys) >= 6 else {}
    if not fields or any(k not in fields or fields[k].in_trl_copy() for k in keys):
        return False
    root = project_root(config_path)
    # wndudwkd003/kr_llm_ft_25: `sft_dict = asdict(self.cm.sft)`, then `TrainingArguments(**sft_dict)`
    owners = {fields[k].owner for k in keys}
    if _parsed_by_a_parser(root, owners) or spread_into_framework_class(root) is not None:
        return False
    classes = project_dataclasses(root)

    def extends_a_framework(name: str, seen: frozenset[str]) -> bool:
        for declared in classes.get(name, ()):
            for base in declared.bases:
                short = base.rsplit(".", 1)[-1]
                if base.split(".")[0] in _FRAMEWORK_PACKAGES or short not in classes:
                    return True
                if short not in seen and extends_a_framework(short, seen | {name}):
                    return True
        return False

    return not any(extends_a_framework(owner, frozenset()) for owner in owners)


def _parsed_by_a_parser(root: Path, owners: set[str]) -> bool:
    """Whether an HfArgumentParser-like call of the project may fill any of *owners*: one naming one of them among
    its classes, or one over classes it cannot read (`TrlParser(dataclass_types)`). Nkluge-correa/Tucano's
    dpo-tucano.py parses (ScriptArguments, DPOConfig, ModelConfig), not the TrainingArguments dataclass of its own
    that sft-tucano.py fills from specs-tucano-sft.yml."""
    import ast

    from seqprof.config.project_fields import (called_name, parsed_module, parser_call_classes, python_files,
                                             source_text)

    pattern = re.compile(_PARSERS)
    for file in python_files(root):
        if not pattern.search(source_text(file)):
            continue
        tree = parsed_module(file)
        if tree is None:
            return True
        calls = [node for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and pattern.fullmatch(called_name(node.func) or "")]
        if not calls:  # named, never called here: a subclass of the parser (called under its own name) or a re-export
            return True
        for node in calls:
            items = parser_call_classes(node)
            names = {called_name(item) for item in items if isinstance(item, (ast.Name, ast.Attribute))}
            if len(names) < len(items) or names & owners:
                return True
    return False
