"""Who reads a TRL-era recipe's keys when the YAML alone does not say: the trainer its path (or the project's
parser script) names, and the project's own argument classes of an era before TRL's (trl < 0.9) or of
alignment-handbook before its rewrite.

seqprof.config.dialects.trl asks these when a file's keys leave the trainer open or its key findings may belong
to the project's own classes; seqprof.config.read asks named_trainer for a project's own loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.project_fields import project_name, project_root
from seqprof.config.key_history import KeyHistory
from seqprof.config.pin_files import LAYER_HUB_CAP
from seqprof.config.pins import Pin, Pins

PATH_TRAINERS = {"sft": "sft", "dpo": "dpo", "kto": "kto", "orpo": "orpo", "grpo": "grpo", "cpo": "cpo", "rloo": "rloo",
                 "ppo": "ppo", "pretrain": "pretrain", "rm": "reward", "onlinedpo": "online_dpo",
                 "simpo": "dpo"}  # SimPO recipes (princeton-nlp/SimPO, its forks) train paired preferences DPO-style
# masked-LM (continued) pretraining: transformers' run_mlm, llm2vec's masked next token prediction (MNTP)
MASKED_LM_WORDS = frozenset({"mlm", "mntp"})


def path_trainer(path: str | None) -> str | None:
    """The one trainer the config's file name and folders name (recipes/x/dpo/config.yaml, sft_config.yaml), if any;
    two named say nothing (dpo/kto_pair.yaml). The repository's own name (the folder holding .git) counts only when
    nothing below it names one: configs/rloo.yaml in LLM-RLHF-Tuning-with-PPO-and-DPO is RLOO's, configs/train.yaml
    in SFT_project SFT's."""
    if not path:
        return None
    import re

    parts = Path(path).parts
    below: set[str] = set()
    root_words: set[str] = set()
    for depth in range(min(4, len(parts))):
        words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", parts[-1 - depth])}
        if depth and _repository_root(Path(*parts[:len(parts) - depth])):
            root_words = words
            break
        below |= words
    for words in (below, root_words):
        if {"online", "dpo"} <= words:  # online_dpo/config.yaml is onlinedpo_pythia1b.yml's trainer, not DPO's
            words = (words - {"online", "dpo"}) | {"onlinedpo"}
        named = {PATH_TRAINERS[w] for w in words if w in PATH_TRAINERS}
        if named:
            return named.pop() if len(named) == 1 else None
    return None


def named_trainer(data: Mapping[str, Any], path: str | None) -> tuple[str | None, str]:
    """(trainer, why) the file's path names, else the one the project's own script that parses it builds (TRL
    recipes whose keys leave the trainer open, and a project's own HfArgumentParser YAML)."""
    named = path_trainer(path)
    if named or not path:
        return named, f"the path names {named} ({Path(path).name})" if named else ""
    if _masked_lm(data, path):
        return "pretrain", f"masked-LM pretraining: the path names it ({Path(path).name})"
    from seqprof.config.project_scripts import project_trainer

    return project_trainer(path, data) or (None, "")


def _masked_lm(data: Mapping[str, Any], path: str) -> bool:
    """A masked-LM run: a folder of the path says mlm or mntp (IandRover/BioLLM-MLM's args.json for run_mlm.py), or
    the file name does and the file sets run_mlm's mlm_probability (llm2vec's dictalm2_mntp.json). A file named after
    an MNTP-trained model it fine-tunes (word-task/Llama2-bi-mntp.json) sets no masking probability."""
    import re

    parts = Path(path).parts[-4:]
    words = [{w.lower() for w in re.split(r"[^A-Za-z0-9]+", part)} & MASKED_LM_WORDS for part in parts]
    return any(words[:-1]) or bool(words[-1]) and "mlm_probability" in data


def _repository_root(folder: Path) -> bool:
    try:
        return (folder / ".git").exists()
    except OSError:
        return False


CONFIG_CLASSES_FROM = "0.9"  # trl 0.9 added SFTConfig / DPOConfig / ...: before it, no TRL class parsed a YAML's keys
# alignment-handbook kept its own ModelArguments and DataArguments (src/alignment/configs.py; its SFTConfig and
# DPOConfig derive from TRL's) until 19f0345 (2025-07-24), which took TRL's ModelConfig and pinned trl>=0.19.1.
# Their fields at 95dc472, the last commit before it:
HANDBOOK_REWRITE = "0.19"
OLD_LAYER_KEYS = frozenset({"dataset_mixer"})  # the rewrite renamed it dataset_mixture
REWRITE_TRANSFORMERS = "4.53.3"  # the rewrite's setup.py floor (transformers>=4.53.3)
PROJECT_READER = ("the project's own argument classes", "the project's script reads it")
HANDBOOK_READER = ("alignment-handbook's own argument classes", "the handbook's scripts read it")
HANDBOOK_OWN_FIELDS = frozenset(
    "base_model_revision model_name_or_path model_revision model_code_revision torch_dtype tokenizer_name_or_path "
    "trust_remote_code attn_implementation use_peft lora_r lora_alpha lora_dropout lora_target_modules "
    "lora_modules_to_save load_in_8bit load_in_4bit bnb_4bit_quant_type use_bnb_nested_quant bnb_4bit_quant_storage "
    "chat_template dataset_mixer text_column dataset_splits dataset_configs preprocessing_num_workers "
    "truncation_side auto_insert_empty_system_msg".split())


def own_classes_era(path: str, pins: Pins, history: KeyHistory,
                    keys: frozenset[str] = frozenset()) -> tuple[str, frozenset[str] | None, tuple[str, str]] | None:
    """Why the project's own argument classes, not TRL's, read a TRL-era recipe's keys, which keys (None: every
    key that is no TrainingArguments field), and whose classes they are; None when TRL's may.

    Before trl 0.9 there was no SFTConfig or DPOConfig: a recipe pinned to such a release (every allowed one
    older) parsed its YAML with its own dataclasses (alignment-handbook's H4ArgumentParser over ModelArguments,
    DataArguments, SFTConfig(TrainingArguments)). alignment-handbook itself kept that layout while its pins allowed
    pre-0.9 releases (its later src/alignment/configs.py takes trl's ModelConfig and ScriptArguments). A recipe
    of that handbook's (dataset_mixer) under a transformers pin older than the rewrite's floor is read by its
    classes too (_old_handbook_recipe)."""
    from packaging.version import Version

    allowed = history.allowed("trl", pins)
    handbook = project_name(path) == "alignment-handbook"
    if allowed is None and handbook and pins.vcs("trl") is None:
        return ("alignment-handbook with no trl pin, though every copy of it pins one: a modified copy seqprof "
                f"cannot date; before its rewrite onto trl>={HANDBOOK_REWRITE} its own ModelArguments and "
                "DataArguments declared these keys", HANDBOOK_OWN_FIELDS, PROJECT_READER)
    if allowed is None:
        return _old_handbook_recipe(path, pins, history, keys)
    before = Version(CONFIG_CLASSES_FROM)
    if allowed:
        every_old, some_old = (f([Version(v) < before for v in allowed]) for f in (all, any))
    else:  # pinned below the oldest release the history holds (trl==0.7.4): read the bound itself
        from packaging.specifiers import SpecifierSet

        bounds = [Version(b.version.rstrip(".*")) for pin in pins.of("trl") for b in SpecifierSet(pin.specifier)
                  if b.operator in ("==", "===", "<", "<=", "~=")]
        every_old = some_old = bool(bounds) and min(bounds) < before
    if every_old:
        return (f"{pins.describe('trl')} predates TRL's config classes (trl {CONFIG_CLASSES_FROM} added SFTConfig)",
                None, PROJECT_READER)
    if some_old and handbook:
        return (f"alignment-handbook pinned to {pins.describe('trl')}, which allows releases before TRL's config "
                "classes: its own src/alignment/configs.py of that era declares its arguments", None, PROJECT_READER)
    if handbook and (any(Version(v) < Version(HANDBOOK_REWRITE) for v in allowed) if allowed else every_old):
        return (f"alignment-handbook pinned to {pins.describe('trl')}, which allows releases before its rewrite "
                f"onto TRL's ModelConfig (trl>={HANDBOOK_REWRITE}): its own ModelArguments and DataArguments declare "
                "them", HANDBOOK_OWN_FIELDS, PROJECT_READER)
    return _old_handbook_recipe(path, pins, history, keys)


def _old_handbook_recipe(path: str, pins: Pins, history: KeyHistory,
                         keys: frozenset[str]) -> tuple[str, frozenset[str], tuple[str, str]] | None:
    """A recipe setting the pre-rewrite handbook's dataset_mixer that no class of the project declares, in a project
    whose transformers pin predates the rewrite's floor (MiuLab/FactAlign, transformers==4.41.1): the handbook that
    runs it is the old one, whose own ModelArguments declare torch_dtype and the rest of HANDBOOK_OWN_FIELDS."""
    from packaging.version import Version

    from seqprof.config.project_fields import project_fields

    old_layer = sorted(keys & OLD_LAYER_KEYS)
    if not old_layer or set(old_layer) & set(project_fields(path)):
        return None
    for package, floor in (("transformers", REWRITE_TRANSFORMERS), ("trl", HANDBOOK_REWRITE)):
        allowed = history.allowed(package, pins)  # moodlep/cai's trl==0.9.6 beside transformers>=4.39.3
        if allowed and all(Version(v) < Version(floor) for v in allowed):
            return (f"its {', '.join(old_layer)} is alignment-handbook's DataArguments before the rewrite onto TRL's "
                    f"classes, which requires {package}>={floor}, and {pins.describe(package)} is older: the "
                    "handbook's own ModelArguments of that era declare it", HANDBOOK_OWN_FIELDS, HANDBOOK_READER)
    importer = _old_handbook_importer(path)
    if importer:
        return (f"its {', '.join(old_layer)} is alignment-handbook's DataArguments before the rewrite onto TRL's "
                f"classes, and {importer} imports the handbook's H4ArgumentParser, which the rewrite removed: the "
                "handbook the project installs is the old one, whose own ModelArguments declare it",
                HANDBOOK_OWN_FIELDS, HANDBOOK_READER)
    return None


def _old_handbook_importer(path: str) -> str:
    """'scripts/run_dposhift.py:27' where a script of the project imports H4ArgumentParser from an installed
    alignment-handbook (Meaquadddd/DPO-Shift, whose recipes the handbook's own scripts run): only the handbook before
    its rewrite onto TRL's classes (19f0345) has it; '' when none does."""
    return _old_handbook_importer_under(str(project_root(path)))


@cache  # asked for each dataset_mixer recipe of the project
def _old_handbook_importer_under(root_name: str) -> str:
    import ast

    from seqprof.config.project_fields import parsed_module, python_files

    root = Path(root_name)
    for file in python_files(root):
        tree = parsed_module(file, ("H4ArgumentParser",))
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom) and node.module == "alignment" and not node.level \
                    and any(a.name == "H4ArgumentParser" for a in node.names):
                return f"{file.relative_to(root).as_posix()}:{node.lineno}"
    return ""


def read_by_own_classes(diagnostics: list, path: str, pins: Pins, history: KeyHistory,
                        keys: frozenset[str] = frozenset()) -> list:
    """Key diagnostics on keys that are not TrainingArguments fields become SP407 notes when the project's own
    classes read them (own_classes_era), also where its sources sit beside the config but subclass classes they
    import (Prereq_tune's PreModelArguments(ModelArguments), from an installed alignment-handbook)."""
    era = own_classes_era(path, pins, history, keys)
    if era is None:
        return diagnostics
    why, own, reader = era
    training_arguments = history.ever("transformers", ["TrainingArguments"])
    kinds = {"unknown_key", "deprecated_key", "renamed_key", "removed_key", "upcoming_deprecation", "premature_key"}
    return [replace(d, kind="unread_key", suggestion=None, value_change=None,
                    message=f"'{d.key}' is read by {reader[0]}, not TRL's: {why}; {reader[1]}")
            if d.kind in kinds and d.key not in training_arguments and (own is None or d.key in own) else d
            for d in diagnostics]


# the key of the recipe layers' own ScriptArguments (alignment-handbook since its rewrite onto TRL's classes, and
# open-r1): a recipe that sets it is written for a layer's scripts (the older dataset_mixer recipes ran under an
# older handbook, whose pins are not these)
LAYER_DATA_KEYS = frozenset({"dataset_mixture"})


def with_recipe_layer(pins: Pins, data: Mapping[str, Any], path: str | None) -> Pins:
    """*pins* and the recipe layer's huggingface-hub cap where a project keeps recipes of alignment-handbook or
    open-r1 but no script that parses a config (HallerPatrick/linearization: DPO recipes with dataset_mixture, run by
    the handbook's scripts/dpo.py): it runs them through an install of the layer, whose setup.py keeps
    huggingface-hub<1.0 and so transformers below 5.0. Unchanged when the project pins transformers or
    huggingface-hub itself, or parses configs with its own code."""
    if not path or not LAYER_DATA_KEYS & set(data):
        return pins
    if any(pins.of(p) or pins.vcs(p) for p in ("transformers", "huggingface-hub")):
        return pins
    from seqprof.config.project_scripts import parser_files

    if parser_files(project_root(path)):
        return pins
    keys = ", ".join(sorted(LAYER_DATA_KEYS & set(data)))
    return pins.with_pin(Pin("huggingface-hub", LAYER_HUB_CAP, f"alignment-handbook's / open-r1's setup.py: their "
                                                               f"scripts read {keys}, the project's parse nothing"))
