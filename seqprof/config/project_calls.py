"""Which config keys a project's own code hands on to a framework's argument class, and under which name.

A project that loads its YAML as a plain dict (yaml.safe_load) and builds the framework's arguments by hand,
`SFTConfig(warmup_ratio=cfg.get("warmup_ratio", 0.03))` or `GRPOConfig(**kwargs)` over a dict it filled from the
config, still feeds those keys to transformers and TRL: a name they removed breaks the run (TypeError) or is lost
on the way. This finds the hand-offs so the keys can be judged as those classes judge them
(seqprof.config.dialects.forwarded). The files are parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.project_fields import (called_name, imported_names, init_method, kept_names, named_parameters,
                                         parsed_module, project_reads_by_file, project_root, python_files,
                                         source_text, star_imported_names)

# the argument classes a script builds by hand: (package, class whose key history judges the keyword)
ARGUMENT_CLASSES = {
    "TrainingArguments": ("transformers", "TrainingArguments"),
    "Seq2SeqTrainingArguments": ("transformers", "TrainingArguments"),
    **{name: ("trl", name) for name in ("SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "ORPOConfig",
                                        "CPOConfig", "RewardConfig", "RLOOConfig", "PPOConfig", "OnlineDPOConfig",
                                        "GKDConfig")},  # GKDConfig(SFTConfig): judged by SFT's key history
}


# TRL's trainers, whose constructors took the config's values as keywords before TRL 0.13 moved them into the
# configs (`SFTTrainer(..., max_seq_length=cfg["max_seq_length"])`): judged by keys/trl_trainer_kwargs.json
TRAINER_CLASSES = frozenset({"SFTTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer", "CPOTrainer", "RewardTrainer",
                             "GRPOTrainer", "RLOOTrainer", "PPOTrainer", "OnlineDPOTrainer", "GKDTrainer", "BCOTrainer",
                             "PRMTrainer", "XPOTrainer", "NashMDTrainer", "IterativeSFTTrainer"})


SECTION = "**"  # Forward.keyword of a config section spread into the class: each of its keys under its own name


@dataclass(frozen=True)
class Forward:
    """One config key handed to a framework class as a keyword: `SFTConfig(warmup_ratio=cfg["warmup_ratio"])`."""

    key: str  # the config's key
    keyword: str  # the name the class gets it under (SECTION: the key's mapping is spread into the class)
    package: str  # "transformers" | "trl"
    cls: str  # "SFTConfig"
    file: str  # relative to the project root
    line: int
    spread: str | None = None  # the section whose mapping the class gets spread (`**cfg["training_args"]`)
    section: str | None = None  # the config section the value is read from (`t = cfg["train"]` ... `t["k"]`)
    own: frozenset[str] = frozenset()  # the names a project subclass of the class takes itself (`alpha_ce`)

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def project_forwards(config_path: str | Path, keys: list[str]) -> dict[str, Forward]:
    """Key -> how the project's code hands it to a transformers / TRL argument class, for the config's top-level
    *keys*. The consumer is the file that reads most of the keys (two at least). Where others read nearly as many
    (four fifths), which script runs this file is unclear (a GRPO and an SFT script over dataclasses of the same
    field names), and a key counts only when each of them that builds a class hands it on under the same name (the
    first one's class judges it)."""
    path = Path(config_path)
    if not path.is_file() or not keys:
        return {}
    wanted = frozenset(keys)
    readers = sorted((found for found in project_reads_by_file(path, wanted, attributes=True)
                      if len(found[1]) >= 2 and not reads_another_config(path, found[0])),
                     key=lambda found: -len(found[1]))
    if not readers:
        return {}
    root = project_root(path)
    close = [file for file, reads in readers if len(reads) * 5 >= len(readers[0][1]) * 4]
    if len(close) > 1:  # a launch line that runs one of them with this file settles it (aabestn's run_dpo.sh)
        from seqprof.config.launches import launched_scripts, scripts_shell_launchers_run

        launched = launched_scripts(path)
        close = [file for file in close if file in launched] or close
        if len(close) > 1:  # else the one the project's shell scripts run at all (proactive-ai's train.sh, train.py)
            run = scripts_shell_launchers_run(str(root))
            close = [file for file in close if file in run] or close
    from seqprof.config.dialects.recipes import path_trainer

    named = path_trainer(str(path))  # dpo.yaml: of a file's SFTConfig(...) and DPOConfig(...) calls, DPOConfig's
    found = [_first_per_key(_forwards_in(str(root / file), str(root), wanted), named) for file in close]
    found = [forwards for forwards in found if forwards]  # a helper building no class is no rival
    if named and len(found) > 1:  # configs/dpo/x.yaml beside sft.py and dpo.py reading the same keys: dpo.py's class
        from seqprof.config.dialects.trl import TRAINER_CONFIGS

        found.sort(key=lambda forwards: not any(f.cls == TRAINER_CONFIGS.get(named) for f in forwards.values()))
    first, *others = found or [{}]
    return {key: forward for key, forward in first.items()
            if all(key in other and other[key].keyword == forward.keyword for other in others)}


_LOADS = frozenset({"load", "loads", "safe_load", "full_load"})  # json.load, yaml.safe_load ...


def spread_whole(config_path: str | Path) -> Forward | None:
    """How the script that runs the config spreads the whole loaded mapping into a framework's argument class
    (prakashchhipa/AskAnythingInCharts' train_vlm_sft.py: `sft_dict = json.load(f)` ... `SFTConfig(**sft_dict)`):
    that class then reads every key, as its parser would. The script is the one its launch lines run it with, else
    the one they run its sibling configs of the same kind with (`configs/sft_config_best.json` beside the launched
    `configs/sft_config.json`); None when no such script, or several, or it spreads no loaded mapping."""
    from seqprof.config.launches import launched_scripts

    path = Path(config_path)
    if not path.is_file():
        return None
    scripts = launched_scripts(path)
    if not scripts:
        siblings = [p for p in path.parent.glob(f"*{path.suffix}") if p != path and _words(p.name) & _words(path.name)]
        scripts = frozenset().union(*(launched_scripts(p) for p in siblings)) if siblings else frozenset()
    if len(scripts) != 1:
        return None
    root = project_root(path)
    (script,) = scripts
    return _spread_in(str(root / script), str(root))


@lru_cache(maxsize=256)
def _spread_in(file: str, root: str) -> Forward | None:
    """The first call in *file* of an argument class that gets a loaded mapping spread into it (`**sft_dict`)."""
    tree = parsed_module(Path(file), tuple(ARGUMENT_CLASSES))
    if tree is None:
        return None
    loaded = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
              and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
              and node.value.func.attr in _LOADS for target in node.targets if isinstance(target, ast.Name)}
    imported = {**star_imported_names(tree, Path(file)), **imported_names(tree)}
    for node in ast.walk(tree):
        target = framework_argument_class(node.func, imported) if isinstance(node, ast.Call) else None
        if target and any(kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id in loaded
                          for kw in node.keywords):
            return Forward(SECTION, SECTION, *target, Path(file).relative_to(root).as_posix(), node.lineno)
    return None


# calls that hand a config section on as a plain mapping: `dict(cfg.x)`, `asdict(cfg.x)`, `OmegaConf.to_container(
# cfg.x)`, `vars(cfg.x)`
_AS_MAPPING = frozenset({"dict", "asdict", "vars", "to_container", "to_object"})


def hydra_group_spread(config_path: str | Path) -> Forward | None:
    """How the project's code spreads the Hydra config group that a group option file fills into transformers' or
    TRL's argument class (nbroad1881/redesigned-train's conf/training_args/default.yaml, composed as
    `cfg.training_args` and spread by `TrainingArguments(**(dict(cfg.training_args)))`; slp-rl/slamkit's
    `DPOConfig(**OmegaConf.to_container(cfg.training_args))`): each key of the file reaches that class under its
    own name. None when the file is no group option, or no call, or calls into different classes, spread it."""
    from seqprof.config.dialects.own_schema import hydra_group

    path = Path(config_path)
    group = hydra_group(str(path)) if path.is_file() else None
    if group is None:
        return None
    root = project_root(path)
    found = [forward for file in python_files(root) for forward in _group_spreads(str(file), str(root), group)]
    return found[0] if found and len({(f.package, f.cls) for f in found}) == 1 else None


@lru_cache(maxsize=256)
def _group_spreads(file: str, root: str, group: str) -> tuple[Forward, ...]:
    """The calls in *file* of an argument class (or a subclass the file defines) that get `cfg.<group>` spread."""
    text = source_text(Path(file))
    if "**" not in text or group not in text:
        return ()
    tree = parsed_module(Path(file))
    if tree is None:
        return ()
    imported = {**star_imported_names(tree, Path(file)), **imported_names(tree)}
    subclasses = framework_subclasses(tree, imported)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = framework_argument_class(node.func, imported) or _subclass_target(node.func, subclasses)
        if target is None:
            continue
        own = subclasses[node.func.id][1] if isinstance(node.func, ast.Name) and node.func.id in subclasses \
            else frozenset()
        for kw in node.keywords:
            value = kw.value
            while isinstance(value, ast.Call) and called_name(value.func) in _AS_MAPPING and value.args:
                value = value.args[0]
            named = value.attr if isinstance(value, ast.Attribute) else value.slice.value \
                if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) else None
            if kw.arg is None and named == group:
                out.append(Forward(SECTION, SECTION, *target, Path(file).relative_to(root).as_posix(), node.lineno,
                                   spread=group, own=own))
    return tuple(out)


CONFIG_NAME = re.compile(r"""["']([\w./-]+\.(?:ya?ml|json))["']""")  # a config path a script writes
# words of config and script names that tell nothing of what a file is for
GENERIC_WORDS = frozenset({"config", "configs", "cfg", "train", "training", "default", "base", "example", "demo",
                           "run", "args", "arguments", "settings", "params", "yaml", "yml", "json"})


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", Path(name).stem.lower()) if w and w not in GENERIC_WORDS}


def reads_another_config(config_path: Path, script: str) -> bool:
    """Whether *script* (relative to the project root) is tied to config files other than this one: the paths it
    writes (`add_argument("--config", default="configs/sft_config.yaml")`) are files of the project, none shares a
    word with this config's name (train_pretrain.yaml's script also runs train_pretrain_gpu.yaml), nor does the
    script's own name, and no command line naming this config runs the script. HiepDema's train_sft.py reads the
    same section keys as configs/grpo_quadratic_eq.yaml, but only configs/sft_config.yaml ever reaches it."""
    root = project_root(config_path)
    named = {m.group(1).removeprefix("./") for m in CONFIG_NAME.finditer(source_text(root / script))}
    named = {name for name in named if (root / name).is_file()}
    mine = _words(config_path.name)
    if not named or not mine or any(_words(name) & mine for name in named) or _words(script) & mine:
        return False
    from seqprof.config.launches import launched_scripts

    return script not in launched_scripts(config_path)


def _first_per_key(forwards: tuple[Forward, ...], trainer: str | None = None) -> dict[str, Forward]:
    """Each key's first hand-off, or its hand-off to the config class of *trainer* where the file has one
    (yunlong-le's training.py builds SFTConfig in run_sft_like and DPOConfig in run_dpo from the same keys)."""
    from seqprof.config.dialects.trl import TRAINER_CONFIGS

    own = TRAINER_CONFIGS.get(trainer or "")
    out: dict[str, Forward] = {}
    for forward in forwards:
        if forward.cls == own and out.get(forward.key, forward).cls != own:
            out[forward.key] = forward
        out.setdefault(forward.key, forward)
    return out


@lru_cache(maxsize=256)
def _forwards_in(file: str, root: str, keys: frozenset[str]) -> tuple[Forward, ...]:
    """The hand-offs in one file: a keyword of a call of an argument class whose value reads a key, or, where such
    a call spreads a mapping (`GRPOConfig(**kwargs)`), an entry of a dict the file builds (`dict(k=...)`,
    `{"k": ...}`, `kwargs["k"] = ...`) whose value reads one."""
    tree = parsed_module(Path(file), (*ARGUMENT_CLASSES, *TRAINER_CLASSES))
    if tree is None:
        return ()
    imported = {**star_imported_names(tree, Path(file)), **imported_names(tree)}
    rel = Path(file).relative_to(root).as_posix()
    every = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    subclasses = framework_subclasses(tree, imported)
    calls = [(node, target) for node in every
             for target in [framework_argument_class(node.func, imported) or _subclass_target(node.func, subclasses)]
             if target is not None]
    trainers = [(node, target) for node in every
                for target in [framework_argument_class(node.func, imported, TRAINER_CLASSES)] if target is not None]
    out: list[Forward] = []
    sections = _section_names(tree, keys) if any(kw.arg is None for call, _ in calls for kw in call.keywords) else {}
    for call, (package, cls) in calls:
        own = subclasses[call.func.id][1] if isinstance(call.func, ast.Name) and call.func.id in subclasses \
            else frozenset()
        for kw in call.keywords:  # `warmup_ratio=cfg["warmup_ratio"]`, or `**cfg["training_args"]`: a section
            reads = [] if kw.arg in own else _reads(kw.value, keys) if kw.arg else \
                [k for k in [_key_read(kw.value) or _spread_name(kw.value, sections)] if k in keys]
            out += [Forward(key, kw.arg or SECTION, package, cls, rel, kw.value.lineno,
                            section=_section_read(kw.value, key, tree), own=own) for key in reads]
    out += _spread_forwards(tree, calls, rel, keys, filtered=True)
    # a trainer's keywords last: where a key also goes to a config class, that class judges it (_first_per_key)
    out += [Forward(key, kw.arg, package, cls, rel, kw.value.lineno, section=_section_read(kw.value, key, tree))
            for call, (package, cls) in trainers for kw in call.keywords if kw.arg and not _own_attribute(kw.value)
            for key in _reads(kw.value, keys)]
    return tuple(out + _spread_forwards(tree, trainers, rel, keys))  # `SFTTrainer(**trainer_kwargs)` (epmresearch)


def _spread_forwards(tree: ast.Module, calls: list, rel: str, keys: frozenset[str],
                     filtered: bool = False) -> list[Forward]:
    """The hand-offs through mappings spread into *calls* (`GRPOConfig(**kwargs)`): the string-keyed entries the
    module writes into them, judged as the first such call's class; *filtered* (config classes): also the names a
    comprehension keeps of a config mapping it copies (`{k: v for k, v in cfg.items() if k in supported}`), and the
    entries written under a check of the class's signature; else (trainers) those are left out."""
    spread = [(target, kw.value) for call, target in calls for kw in call.keywords if kw.arg is None]
    if not spread:
        return []
    (package, cls), _ = spread[0]
    spread_names = _copied_from(tree, {value.id for _, value in spread if isinstance(value, ast.Name)})
    entries = [entry for _, value in spread for entry in _literal_entries(value)]  # `**dict(k=v)`
    written = entries + list(_dict_entries(tree, spread_names, skip_checked=not filtered))
    out = [Forward(key, name, package, cls, rel, value.lineno) for name, value in written for key in _reads(value, keys)]
    if filtered:
        out += [Forward(name.value, name.value, package, cls, rel, name.lineno)
                for comp in _filtered_copies(tree, spread_names) for name in kept_names(comp, tree)
                if name.value in keys]
    return out


def _filtered_copies(tree: ast.Module, spread_names: set[str]) -> list[ast.DictComp]:
    """The comprehensions that fill a dict the class gets spread: `kwargs = {k: v for k, v in cfg.items() if k in
    supported}`, or one spread directly (`SFTConfig(**{k: v for ...})`)."""
    out = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
           and isinstance(node.value, ast.DictComp)
           and any(isinstance(t, ast.Name) and t.id in spread_names for t in node.targets)]
    return out + [kw.value for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
                  if kw.arg is None and isinstance(kw.value, ast.DictComp)]


def _section_names(tree: ast.Module, keys: frozenset[str]) -> dict[str, str]:
    """Local name -> the config key it was read from: `training_args = kwargs.get("training_args")`, later spread as
    `Seq2SeqTrainingArguments(**training_args)` (morettt/Chatbot-Trainer's finetune.py, ChatGLM's finetune recipe)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        pairs = [(target, node.value)] if isinstance(target, ast.Name) else \
            list(zip(target.elts, node.value.elts)) if isinstance(target, ast.Tuple) and \
            isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts) else []
        for name, value in pairs:  # `t, m = cfg["TrainingArguments"], cfg["ModelArguments"]` (boostcampaitech3)
            key = _key_read(_copied_section(value))
            if isinstance(name, ast.Name) and key in keys:
                out.setdefault(name.id, key)
    return out


def _copied_section(value: ast.expr) -> ast.expr:
    """The section read under a copy of it: `dict(config.get("trainer") or {})` (Shekswess/tiny-think's dpo.py,
    then `DPOConfig(**trainer_cfg)`), `copy.deepcopy(cfg["train"])`, `cfg["train"].copy()`, `{**cfg["train"]}`."""
    while True:
        if isinstance(value, ast.Call) and called_name(value.func) in ("dict", "deepcopy", "copy") \
                and len(value.args) == 1 and not value.keywords:
            value = value.args[0]
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy" \
                and not value.args and not value.keywords:
            value = value.func.value
        elif isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2 and \
                (isinstance(value.values[1], ast.Dict) and not value.values[1].keys
                 or isinstance(value.values[1], ast.Constant) and value.values[1].value is None):
            value = value.values[0]
        elif isinstance(value, ast.Dict) and value.keys == [None]:
            value = value.values[0]
        else:
            return value


def _spread_name(value: ast.expr, sections: dict[str, str]) -> str | None:
    return sections.get(value.id) if isinstance(value, ast.Name) else None


def framework_argument_class(func: ast.expr, imported: dict[str, str],
                             trainers: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(package, class) when *func* names transformers' or TRL's argument class (or, given *trainers*, one of those
    TRL trainers) through the module's imports (a project's own class of the same name is not theirs)."""
    if isinstance(func, ast.Name):
        dotted = imported.get(func.id, "")
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        dotted = f"{imported.get(func.value.id, func.value.id)}.{func.attr}"
    else:
        return None
    package, _, name = dotted.rpartition(".")
    found = ("trl", name) if name in trainers else None if trainers else ARGUMENT_CLASSES.get(name)
    return found if found and package.split(".")[0] == found[0] else None


Subclasses = dict[str, tuple[tuple[str, str], frozenset[str]]]  # class -> ((package, class), names it takes)


def framework_subclasses(tree: ast.Module, imported: dict[str, str]) -> Subclasses:
    """Class name -> ((package, class) it extends, the names it takes itself), for the module's own subclasses of
    transformers' or TRL's argument classes that hand every other keyword on: Gladiator07/WSDM-Cup-2025-Kaggle's
    `DistillationTrainingArguments(TrainingArguments)` takes alpha_ce and temperature in its `__init__` and passes
    `**kwargs` to TrainingArguments, so `DistillationTrainingArguments(**cfg.trainer_args)` feeds TrainingArguments
    the rest. A subclass whose `__init__` takes no `**kwargs` hands nothing on by name and is left out."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    out: Subclasses = {}
    for _ in range(3):  # a subclass of a subclass defined above or below it
        for node in classes:
            if node.name in out:
                continue
            own = _own_arguments(node)
            for base in node.bases if own is not None else ():
                target = framework_argument_class(base, imported)
                parent = (target, frozenset()) if target else out.get(base.id) if isinstance(base, ast.Name) else None
                if parent is not None:
                    out[node.name] = (parent[0], parent[1] | own)
                    break
    return out


def _own_arguments(node: ast.ClassDef) -> frozenset[str] | None:
    """The fields a class body annotates and the named parameters of its `__init__`; None when that `__init__`
    takes no `**kwargs` to hand on."""
    fields = {item.target.id for item in node.body
              if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    init = init_method(node)
    if init is None:
        return frozenset(fields)
    if init.args.kwarg is None:
        return None
    return frozenset(fields | {a.arg for a in named_parameters(init)})


def _subclass_target(func: ast.expr, subclasses: Subclasses) -> tuple[str, str] | None:
    return subclasses[func.id][0] if isinstance(func, ast.Name) and func.id in subclasses else None


_SPREAD_CALL = re.compile(rf"\b(?:{'|'.join(ARGUMENT_CLASSES)})\(\s*\*\*")


def spread_into_framework_class(root: Path) -> str | None:
    """'file:line' of a call that spreads a mapping into transformers' or TRL's argument class
    (`TrainingArguments(**sft_dict)`), through the module's imports: Nkluge-correa/Tucano's own
    `specifications.TrainingArguments(**kwargs)` is not one. None when the project has no such call."""
    for file in python_files(root):
        if not _SPREAD_CALL.search(source_text(file)):
            continue
        tree = parsed_module(file)
        if tree is None:
            return file.relative_to(root).as_posix()
        imported = {**star_imported_names(tree, file), **imported_names(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and any(k.arg is None for k in node.keywords) \
                    and framework_argument_class(node.func, imported) is not None:
                return f"{file.relative_to(root).as_posix()}:{node.lineno}"
    return None


def _dict_entries(tree: ast.Module, spread_names: set[str], skip_checked: bool = False):
    """(name, value) of every string-keyed entry the module puts in a dict it spreads into the class by name
    (`GRPOConfig(**kwargs)`): `kwargs = dict(name=v)`, `kwargs = {"name": v}`, `kwargs["name"] = v`,
    `kwargs.update(name=v)`. Other dicts are not the class's: `sft_cfg["max_seq_length"] = cfg["max_seq_length"]`
    feeds a model loader (epmresearch's grpo_trainer.py). With *skip_checked*, an entry written only where the code
    has checked that the class takes that name (`if "beta" in signature.parameters: kwargs["beta"] = ...`,
    Ntin0709/insurance_training) is left out: it raises no TypeError where the class lacks it (for a config class
    the value is still lost there, which is what its finding says: chaton59/OC_P14's max_prompt_length)."""
    checked = _checked_names(tree) if skip_checked else {}
    for node in ast.walk(tree):
        if id(node) in checked and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value in checked[id(node)]
                for t in node.targets):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in spread_names:
                    yield from _literal_entries(node.value)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id in spread_names and isinstance(target.slice, ast.Constant) \
                        and isinstance(target.slice.value, str):
                    yield target.slice.value, node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in spread_names:
            yield from ((kw.arg, kw.value) for kw in node.keywords if kw.arg)
            for arg in node.args:
                yield from _literal_entries(arg)


_SIGNATURE = re.compile(r"parameters|signature|fields|__init__|\bdir\(")  # what a class takes, not what a config holds


def _checked_names(tree: ast.Module) -> dict[int, set[str]]:
    """Statement -> the names an enclosing `if "name" in <...>:` tests membership of in what the class takes (a
    signature's parameters, a dataclass's fields), for the statements of its body; `if "beta" in cfg:` tests the
    config, which says nothing of the class."""
    out: dict[int, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        names = {test.left.value for test in ast.walk(node.test) if isinstance(test, ast.Compare)
                 and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str)
                 and any(isinstance(op, ast.In) for op in test.ops)
                 and _SIGNATURE.search(" ".join(ast.unparse(c) for c in test.comparators))}
        for stmt in node.body:
            for inner in ast.walk(stmt):
                out.setdefault(id(inner), set()).update(names)
    return out


def _copied_from(tree: ast.Module, names: set[str]) -> set[str]:
    """*names* and the dicts they are copies or filtered copies of: `sft_kwargs = {k: v for k, v in
    candidate_kwargs.items() if k in supported}` (YuhoLens' sft.py), `dict(d)`, `d.copy()`, `{**d}`."""
    names = set(names)
    while True:
        more = {source for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)
                for source in _copy_sources(node.value)} - names
        if not more:
            return names
        names |= more


def _copy_sources(value: ast.expr) -> list[str]:
    """The dicts an assigned value copies: a comprehension over `d.items()`, `dict(d)`, `d.copy()`, `{**d}`."""
    def name_of(node: ast.expr) -> str | None:
        return node.id if isinstance(node, ast.Name) else None

    if isinstance(value, ast.DictComp):
        return [n for g in value.generators if isinstance(g.iter, ast.Call) and isinstance(g.iter.func, ast.Attribute)
                and g.iter.func.attr == "items" for n in [name_of(g.iter.func.value)] if n]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and value.args:
        return [n for n in [name_of(value.args[0])] if n]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy":
        return [n for n in [name_of(value.func.value)] if n]
    if isinstance(value, ast.Dict):
        return [n for k, v in zip(value.keys, value.values) if k is None for n in [name_of(v)] if n]
    return []


def _literal_entries(value: ast.expr):
    """The string-keyed entries of a dict display or a `dict(...)` call."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        yield from ((kw.arg, kw.value) for kw in value.keywords if kw.arg)
    elif isinstance(value, ast.Dict):
        yield from ((k.value, v) for k, v in zip(value.keys, value.values)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str))


def _section_read(value: ast.expr, key: str, tree: ast.Module) -> str | None:
    """The config section *value* reads *key* out of: `cfg["train"]["k"]`, or `t["k"]` / `t.get("k")` / `t.k` where
    the module binds `t` to `cfg["train"]` (an assignment, or a keyword `t=cfg["train"]` of a call it makes);
    None when the container is not such a section."""
    for node in ast.walk(value):
        if _key_read(node) != key:
            continue
        container = node.value if isinstance(node, (ast.Subscript, ast.Attribute)) else \
            node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        if container is None:
            continue
        direct = _key_read(container)
        if direct is not None and not isinstance(container, ast.Attribute):
            return direct
        bound = _bound_sections(tree).get(container.id) if isinstance(container, ast.Name) else None
        if bound is not None:  # else another read of it (`overrides.get("k", cfg["train"]["k"])`) may say
            return bound
    return None


@lru_cache(maxsize=256)
def _bound_sections(tree: ast.Module) -> dict[str, str]:
    """Local name -> the section it is bound to, when every binding of that name in the module reads the same one."""
    seen: dict[str, set[str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            seen.setdefault(node.targets[0].id, set()).add(_key_read(node.value))
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg:
                    read = _key_read(kw.value)
                    if read is not None and not isinstance(kw.value, ast.Attribute):
                        seen.setdefault(kw.arg, set()).add(read)
    return {name: next(iter(found)) for name, found in seen.items() if len(found) == 1 and None not in found}


def _own_attribute(value: ast.expr) -> bool:
    """`self.model`: what an object holds, not a read of the config (ashioyajotham's PPOTrainer(model=self.model))."""
    return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self"


def _reads(value: ast.expr, keys: frozenset[str]) -> list[str]:
    """The config keys an expression reads: `cfg["k"]`, `cfg.get("k", d)`, `getattr(cfg, "k", d)`, `cfg.k`."""
    found: list[str] = []
    indexed = {id(node.value) for node in ast.walk(value) if isinstance(node, (ast.Subscript, ast.Attribute))}
    # a read that only decides, never is, the value: the test of `"steps" if "eval_path" in cfg["data"] else "no"`
    # (j8evn/Metaflyer-llm-project's evaluation_strategy), a comparison's operands
    deciding = {id(inner) for node in ast.walk(value) for part in
                ([node.test] if isinstance(node, ast.IfExp) else [node] if isinstance(node, ast.Compare) else [])
                for inner in ast.walk(part)}
    for node in ast.walk(value):
        if id(node) in indexed or id(node) in deciding:  # `cfg["model"]["lr"]` reads model.lr, not `model`
            continue
        name = _key_read(node)
        if name in keys and name not in found:
            found.append(name)
    return found


def _key_read(node: ast.AST) -> str | None:
    """The key *node* itself reads, if it is such a read."""
    name = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        name = node.slice.value
    elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "pop") and isinstance(node.args[0], ast.Constant):
        name = node.args[0].value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
        name = node.args[1].value
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        name = node.attr
    return name if isinstance(name, str) else None

