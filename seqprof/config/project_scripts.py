"""The project's own scripts that parse a config: which argument parser they call, and what they train.

A YAML the project's script parses into its own dataclasses plus TrainingArguments names no trainer; the script
does, when it builds `SFTTrainer(...)` or a subclass of `DPOTrainer`; and whether TRL reads the file at all is the
script's parser (plain HfArgumentParser over transformers' classes, or TrlParser). The scripts are those that call
an argument parser (HfArgumentParser, TrlParser, H4ArgumentParser, ArgumentParserPlus) and name the classes that
declare the most of the config's keys. Files are read as text, never imported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.launches import launched_scripts
from seqprof.config.project_fields import field_owners, project_fields, project_root, python_files, source_text

TRAINER_CLASSES = {"SFTTrainer": "sft", "DPOTrainer": "dpo", "KTOTrainer": "kto", "ORPOTrainer": "orpo",
                   "CPOTrainer": "cpo", "GRPOTrainer": "grpo", "RLOOTrainer": "rloo", "PPOTrainer": "ppo",
                   "PPOv2Trainer": "ppo", "OnlineDPOTrainer": "online_dpo", "RewardTrainer": "reward",
                   "GKDTrainer": "gkd"}
# HfArgumentParser and the subclasses projects name (or copy: muqeeth's TRLParser) are called over a tuple of classes
# a parser call: transformers', TRL's and the recipe layers' by name, a project's own over a tuple or list of classes,
# or one named *ArgumentParser over a class (Codys12/MambaInLlama's DistillArgumentParser(DistillConfig))
PARSERS = re.compile(r"(?<!class )\b(HfArgumentParser|TrlParser|H4ArgumentParser|ArgumentParserPlus|\w+Parser(?=\s*\(\s*[(\[])"
                     r"|\w+ArgumentParser(?=\s*\(\s*[A-Z]\w*\s*\)))\s*\(")
_TRL_IMPORT = re.compile(r"^\s*(?:import\s+trl\b|from\s+trl[\w.]*\s+import\s+(\([^)]*\)|[^\n]*))", re.M)
# what a script takes from trl that makes its parser TRL's: config, argument and parser classes, trainers, and the
# helpers over TRL's ModelConfig; data helpers alone (pack_dataset) leave it transformers' script
_TRL_PARSING_NAME = re.compile(r"(?:Config|Arguments|Parser|Trainer)$|^get_(?:peft|quantization|kbit)")


def uses_trl(text: str) -> bool:
    """The script imports trl itself, or a name from it that belongs to TRL's configs, parsers or trainers."""
    for match in _TRL_IMPORT.finditer(text):
        if match.group(1) is None:
            return True
        listed = re.sub(r"#[^\n]*", "", match.group(1)).strip().strip("()").replace("\\", "")
        names = [n.split(" as ")[0].strip() for n in listed.split(",")]
        if any(_TRL_PARSING_NAME.search(n) or n == "*" for n in names if n):
            return True
    return False


_SUBCLASS = re.compile(r"^\s*class\s+(\w+)\s*\(([^)]*)\)", re.M)


@dataclass(frozen=True)
class ParserScript:
    """A project script that parses the config: its parser and the TRL trainers it builds."""

    file: str  # relative to the project root
    parser: str  # "HfArgumentParser" | "TrlParser" | "H4ArgumentParser" | "ArgumentParserPlus"
    trainers: tuple[tuple[str, int], ...]  # (kind, line) of each trainer it builds; kind '' for transformers' own
    uses_trl: bool  # it imports trl's configs, parsers or trainers


def parser_scripts(config_path: str | Path, keys: Iterable[str]) -> tuple[ParserScript, ...]:
    """The scripts whose parser call names the classes that declare the most of *keys* (run_dpo.py's DPOConfig
    declares beta, run_sft.py's ModelArguments only the model keys both share); () when no class declares any."""
    return _parser_scripts(str(config_path), frozenset(keys))


@lru_cache(maxsize=256)
def _parser_scripts(config_path: str, keys: frozenset[str]) -> tuple[ParserScript, ...]:
    """parser_scripts, once per config and run: reading a file's plan asks it for its trainer and for its parser."""
    root = project_root(config_path)
    # `accelerate launch src/sft.py --config x.yaml`: the project says which script reads it; else a script of the
    # config's own name beside it (jianzhnie's examples/grpo_demo.py for examples/grpo_demo.yaml)
    sibling = Path(config_path).resolve().with_suffix(".py")
    named = launched_scripts(config_path) or ({sibling.relative_to(root.resolve()).as_posix()}
                                              if sibling.is_file() and sibling.is_relative_to(root.resolve()) else set())
    launched = _nearest_parser_scripts(config_path, named)
    if launched:
        return launched
    owners = field_owners(config_path)
    declared = {k: owners[k] for k in keys if k in owners}
    if not declared:
        return ()
    scored: list[tuple[int, ParserScript]] = []
    candidates: list[ParserScript] = []
    for file in sorted({f.file for f in project_fields(config_path).values()} | parser_files(root)):
        script = _parser_script(root, file)
        if script is None:
            continue
        candidates.append(script)
        text = source_text(root / file)
        named = {owner for owner in set().union(*declared.values())  # used there, not declared there
                 if re.search(rf"(?<!class )\b{re.escape(owner)}\b", text)}
        shadowing = _own_copies(root, file)
        score = sum(any(owner not in shadowing or key in shadowing[owner] for owner in classes & named)
                    for key, classes in declared.items())
        if score:
            scored.append((score, script))
    best = max((score for score, _ in scored), default=0)
    tied = [script for score, script in scored if score == best]
    chosen = _nearest(tied, Path(config_path).resolve(), root.resolve()) if len(tied) > 1 else tied
    return tuple(_nearer_through_the_framework(chosen, candidates, keys, config_path, root))


def _nearer_through_the_framework(chosen: list[ParserScript], candidates: list[ParserScript],
                                  keys: frozenset[str], config_path: str, root: Path) -> list[ParserScript]:
    """*chosen*, unless a script in the config's own branch, nearer than every chosen one, takes more of its keys
    once the TRL / transformers classes of each parser call count too: KnightZhang625/llm_relevant_study's
    rl/grpo/grpo_distributed.py, `TrlParser((ModelConfig, ScriptArguments, GRPOConfig))` beside rl/grpo/*.yaml,
    not LoRA/lora_trainer/.../config.py, whose own ModelConfigSelf declares more of the file's keys (torch_dtype,
    model_name_or_path) but whose SFTConfig has no beta or num_generations."""
    config = Path(config_path).resolve()
    if not chosen or not config.is_relative_to(root.resolve()):
        return chosen
    depth = {s.file: _shared_depth(s, config, root.resolve()) for s in candidates}
    nearer = [s for s in candidates if depth[s.file] > max(depth[c.file] for c in chosen)]
    if not nearer:
        return chosen

    def taken(script: ParserScript) -> int:
        return sum(1 for key in keys if key in _framework_fields_parsed(root, script.file)
                   or key in _own_fields(root, script.file))

    best = max(taken(s) for s in nearer)
    return [s for s in nearer if taken(s) == best] if best > max(taken(c) for c in chosen) else chosen


def _own_fields(root: Path, file: str) -> frozenset[str]:
    """The fields of the project dataclasses *file* defines."""
    from seqprof.config.project_fields import dataclasses_in

    return frozenset(field for one in dataclasses_in(root / file, root) for field in one.fields)


def _framework_fields_parsed(root: Path, file: str) -> frozenset[str]:
    """Every field the TRL and transformers classes of *file*'s parser call had in any release (TrlParser((
    ModelConfig, ScriptArguments, GRPOConfig)) declares torch_dtype, beta, num_generations ...): a script whose own
    classes declare few of a config's keys may still parse it all through the framework's (KnightZhang625/
    llm_relevant_study's rl/grpo/grpo_distributed.py, beside a LoRA script whose ModelConfigSelf declares
    torch_dtype)."""
    from seqprof.config.key_history import KeyHistory
    from seqprof.config.parser_classes import NOT_TRAINING_ARGUMENTS, TRANSFORMERS_CLASSES, parser_call_at

    call = parser_call_at(root, file)
    if call is None:
        return frozenset()
    history = KeyHistory.load()
    out: set[str] = set()
    for dotted in call:
        package, _, name = dotted.rpartition(".")
        top = package.split(".")[0]
        if top == "trl" and name in history.data["trl"]["classes"]:
            out |= history.ever("trl", [name])
            if name not in NOT_TRAINING_ARGUMENTS:
                out |= history.ever("transformers", ["TrainingArguments"])
        elif top == "transformers" and name in TRANSFORMERS_CLASSES:
            out |= history.ever("transformers", ["TrainingArguments"])
    return frozenset(out)


def _nearest_parser_scripts(config_path: str | Path, files: Iterable[str]) -> tuple[ParserScript, ...]:
    """Those of *files* (relative to the project root) that call an argument parser, narrowed to the config's own
    branch: launch lines that name every stage's config by one shared path (`train.py --config configs/default.yaml`
    in each of AntonioGr7/post-training-lab's folders) run the script in the config's folder."""
    root = project_root(config_path)
    scripts = [s for s in (_parser_script(root, file) for file in sorted(set(files) & parser_files(root))) if s]
    return tuple(_nearest(scripts, Path(config_path).resolve(), root.resolve())) if scripts else ()


def _nearest(scripts: list[ParserScript], config: Path, root: Path) -> list[ParserScript]:
    """Of scripts that take the keys equally well, those in the config's own branch of the tree: aws-samples'
    option-3-dpo/args.yaml is option-3-dpo/scripts/train.py's (TrlParser over DPOConfig), not its sibling
    option-2's. All of them when none is nearer than another."""
    if not config.is_relative_to(root):
        return scripts
    depth = max(_shared_depth(s, config, root) for s in scripts)
    return [s for s in scripts if _shared_depth(s, config, root) == depth]


def _shared_depth(script: ParserScript, config: Path, root: Path) -> int:
    """How many folders the script's path shares with the config's, from the project root."""
    folders, parts = config.parent.relative_to(root).parts, Path(script.file).parent.parts
    return next((i for i, (a, b) in enumerate(zip(folders, parts)) if a != b), min(len(folders), len(parts)))


def _own_copies(root: Path, file: str) -> dict[str, frozenset[str]]:
    """The dataclasses *file* defines under a name another project file defines too, with their own fields: each
    of Racul/async_rlhf's rloo.py and ppov2.py has a ScriptArguments, and only rloo.py's declares `bok`, so a key
    of the other's copy is no evidence for this script."""
    from seqprof.config.project_fields import dataclasses_in, project_dataclasses

    every = project_dataclasses(root)
    return {one.name: one.fields for one in dataclasses_in(root / file, root) if len(every.get(one.name, ())) > 1}


def _parser_script(root: Path, file: str) -> ParserScript | None:
    """*file* as a ParserScript when it calls an argument parser; None otherwise."""
    text = source_text(root / file)
    parser = PARSERS.search(text)
    if not parser:
        return None
    return ParserScript(file, parser.group(1), tuple(_trainers_built(text)), uses_trl(text))


def launched_trainer(config_path: str | Path) -> tuple[str, str] | None:
    """(trainer, why) when the project's launch lines run the config with parser scripts that build one kind of TRL
    trainer (cuiluyi's dpo/config_demo.yaml, run by `src/open_r1/dpo.py` though it keeps GRPO keys): the command
    outweighs what the keys suggest. None when nothing launches it, or the scripts build none or several."""
    built: dict[str, str] = {}
    for script in _nearest_parser_scripts(config_path, launched_scripts(config_path)):
        for kind, line in script.trainers:
            built.setdefault(kind, f"{script.file}:{line}")
    if len(built) != 1 or "" in built:
        return None
    (kind, where), = built.items()
    return kind, f"the script the project runs it with builds a {kind} trainer ({where})"


def project_trainer(config_path: str | Path, keys: Iterable[str]) -> tuple[str, str] | None:
    """(trainer, why) when the project scripts that parse the config build one kind of TRL trainer; None when
    none builds a TRL trainer, or they build different ones."""
    built: dict[str, str] = {}
    for script in parser_scripts(config_path, keys):
        for kind, line in script.trainers:
            built.setdefault(kind, f"{script.file}:{line}")
    if len(built) != 1:
        return None
    (kind, where), = built.items()
    if not kind:
        return None  # transformers' Trainer: what it trains is the model's and the data's business
    return kind, f"the project's script that parses it builds a {kind} trainer ({where})"


def read_by_transformers_alone(config_path: str | Path, keys: Iterable[str]) -> str | None:
    """'scripts/run_cft.py' when every script that parses the config calls plain HfArgumentParser, takes no TRL
    config or parser (a data helper such as pack_dataset is not one) and builds no TRL trainer: transformers' parser
    reads it, whatever TRL-era keys (dataset_mixer) it shares."""
    scripts = parser_scripts(config_path, keys)
    if scripts and all(s.parser == "HfArgumentParser" and not any(kind for kind, _ in s.trainers) and not s.uses_trl
                       for s in scripts):
        return ", ".join(s.file for s in scripts)
    return None


def parser_files(root: Path) -> frozenset[str]:
    """The project's Python files that call an argument parser, relative to *root*."""
    return _parser_files_under(str(root))


@lru_cache(maxsize=64)
def _parser_files_under(root: str) -> frozenset[str]:
    """The project's Python files that call an argument parser (one text scan per project and run)."""
    return frozenset(file.relative_to(root).as_posix() for file in python_files(Path(root))
                     if PARSERS.search(source_text(file)))


_CLASS_ALIAS = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(?:trl\.)?([A-Za-z_]\w*)[ \t]*(?:#.*)?$", re.M)


def _trainers_built(text: str) -> list[tuple[str, int]]:
    """(kind, line) of each trainer the file instantiates: a TRL one, directly or through a class of its own over
    one, or transformers' Trainer (kind '')."""
    classes = dict(TRAINER_CLASSES)
    for match in _SUBCLASS.finditer(text):
        bases = {b.strip().rsplit(".", 1)[-1] for b in match.group(2).split(",")}
        kinds = {classes[b] for b in bases if b in classes}
        if len(kinds) == 1:
            classes[match.group(1)] = kinds.pop()
    classes.update({"Trainer": "", "Seq2SeqTrainer": ""})  # transformers' own: a script that also builds one is
    # not one trainer's (Firefly's train.py builds DPOTrainer for train_mode dpo, Trainer for pretrain and sft)
    aliases: dict[str, set[str]] = {}  # `TrainerCls = RLOOTrainer` ... `TrainerCls(...)` (Racul/async_rlhf's rloo.py)
    for match in _CLASS_ALIAS.finditer(text):
        if match.group(2) in classes and match.group(1) not in classes:
            aliases.setdefault(match.group(1), set()).add(classes[match.group(2)])
    classes.update({alias: kinds.pop() for alias, kinds in aliases.items() if len(kinds) == 1})
    calls = re.compile(r"(?<![\w.])(?:trl\.|transformers\.)?(" + "|".join(map(re.escape, classes)) + r")\s*\(")
    out = []
    for match in calls.finditer(text):
        if re.search(r"class\s+\w+\s*\($", text[max(0, match.start() - 80):match.end()]):
            continue  # a base-class list, not a call
        out.append((classes[match.group(1)], text.count("\n", 0, match.start()) + 1))
    return out
