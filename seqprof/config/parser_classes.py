"""The classes a project's parser call reads a config into, and the keys none of them declares.

`TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))` fills those three dataclasses from the YAML and nothing
else: a key none of them declares is dropped without a word (trl 0.13 to 0.18) or refused (TrlParser before and
after, HfArgumentParser.parse_yaml_file). That is only sure when every class in the call is known: TRL's and
transformers' own (their fields at the releases the pins allow, from keys/key_history.json), or the project's own
dataclasses whose bases are known in turn. A class imported from a package that is not in the checkout (an
installed alignment-handbook), a parser built over a variable, or a script that also reads the key by hand leaves
the key a note (SP407). Files are parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.launches import framework_launches, tied_scripts
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import (ProjectDataclass, called_name, code_matches, copies_seen_from,
                                         imported_names, in_project, parsed_module, parser_call_classes,
                                         project_dataclasses, project_reads, project_root, python_files,
                                         source_text)
from seqprof.config.project_scripts import parser_files, parser_scripts
from seqprof.config.key_history import KeyHistory
from seqprof.config.pins import Pins

PARSER_NAMES = frozenset({"TrlParser", "HfArgumentParser"})
# TRL's argument classes that are not TrainingArguments subclasses
NOT_TRAINING_ARGUMENTS = frozenset({"ModelConfig", "ScriptArguments", "GRPOScriptArguments", "RLOOScriptArguments",
                                    "DatasetMixtureConfig"})
TRANSFORMERS_CLASSES = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments"})
# at most this share of the file's keys may be undeclared: more, and the script found is likely not the one that
# parses the file (or the file is read some other way as well)
MOST_UNDECLARED = 0.25


@dataclass(frozen=True)
class ParserCall:
    """A script's parser call: where, which parser, the classes it is given, and what it does with other keys."""

    file: str  # relative to the project root
    line: int
    parser: str  # "TrlParser" | "HfArgumentParser"
    classes: tuple[str, ...]  # as written in the call
    fate: str  # "trl" (by release: seqprof.config.dialects.trl.unknown_key_fate) | "refused" | "dropped" | "unknown"


@dataclass(frozen=True)
class Undeclared:
    """Keys of a config that no class of its parser call declares, and the call."""

    keys: tuple[str, ...]
    calls: tuple[ParserCall, ...]
    frameworks: frozenset[str] = frozenset()  # the TRL / transformers classes the calls' classes are or derive from

    def where(self) -> str:
        return "; ".join(f"{c.parser}(({', '.join(c.classes)})) at {c.file}:{c.line}" for c in self.calls)


def undeclared_keys(config_path: str | Path, data: Mapping, pins: Pins, history: KeyHistory,
                    expected: str) -> Undeclared | None:
    """The top-level keys of *data* that no class of the parser call of every script that parses the config
    declares at any release the pins allow, and that no project code reads by name; None when the scripts or any
    class of theirs cannot be placed, a script's classes do not include *expected* (the config class of the
    trainer the file was read as: an SFT recipe matched to the GRPO script of a checkout whose SFT script is
    elsewhere), or the keys left over are too many to be the file's own mistakes."""
    keys = [k for k in data if isinstance(k, str)]
    if not keys or any(launch.dialect == "trl" for launch in framework_launches(str(Path(config_path).resolve()))):
        return None  # `trl grpo --config x.yaml`: the CLI's own classes read it, and it hands accelerate's keys on
    root = project_root(config_path)
    scripts = [s.file for s in parser_scripts(config_path, keys)]
    # no project class declares a key: the scripts whose parser fills the trainer's config class
    fallback = not scripts
    calls, declared, frameworks = [], set(), set()
    for script in sorted(parser_files(root)) if fallback else scripts:
        call = _parser_call(root / script, root, Path(config_path))
        fields, reached = _declared(call, root, pins, history) if call is not None else (None, set())
        if fallback and (call is None or expected not in reached):
            continue  # a script for another trainer, or none this file could reach
        if call is None or fields is None or expected not in reached and \
                (fallback or not _own_config_class(call, root, keys, expected, pins, history)):
            return None
        calls.append(call)
        declared |= fields
        frameworks |= reached
    if not calls or _older_than_known(frameworks, pins, history):
        return None
    dropped = _prefixes_dropped(tuple(str(root / call.file) for call in calls))
    left = [k for k in keys if k not in declared and not (k == "env" and calls[0].parser == "TrlParser")
            and not k.startswith(dropped or ("\0",))]
    if not left or len(left) > MOST_UNDECLARED * len(keys):
        return None
    if _loads_by_hand(str(root), Path(config_path).suffix.lower() == ".json"):
        read = project_reads(config_path, left)  # `cfg.get("wandb_project")` in the script: read by hand
        left = [k for k in left if k not in read]
    # else nothing in the project loads such a file as a mapping: `extra_args.get("use_4bit")` reads a dict of the
    # script's own making, not this file (MarkusEnglberger/RLcausality)
    return Undeclared(tuple(left), tuple(calls), frozenset(frameworks)) if left else None


@lru_cache(maxsize=256)
def _prefixes_dropped(files: tuple[str, ...]) -> tuple[str, ...]:
    """The key prefixes every one of *files* strips from a loaded config before parsing it:
    `{k: v for k, v in config.items() if not k.startswith('_')}` keeps `_comment` / `_usage` keys away from
    parse_dict (hunwenpinghao/agent_data_collect's fine_tune_qwen.py). Only a prefix all the scripts strip counts."""
    found: set[str] | None = None
    for file in files:
        tree = parsed_module(Path(file))
        here = {prefix for node in ast.walk(tree) if isinstance(node, ast.DictComp)
                for prefix in _stripped_prefixes(node)} if tree is not None else set()
        found = here if found is None else found & here
    return tuple(sorted(found or ()))


def _stripped_prefixes(comp: ast.DictComp) -> set[str]:
    """The prefixes a comprehension over `x.items()` leaves out: `if not k.startswith('_')` on its key."""
    out: set[str] = set()
    for generator in comp.generators:
        target = generator.target
        key = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        items = generator.iter
        if not (isinstance(key, ast.Name) and isinstance(items, ast.Call) and isinstance(items.func, ast.Attribute)
                and items.func.attr == "items"):
            continue
        for test in generator.ifs:
            call = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "startswith" \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == key.id and call.args \
                    and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str) \
                    and call.args[0].value:
                out.add(call.args[0].value)
    return out


YAML_LOADS = re.compile(r"\byaml\.(?:safe_|full_|unsafe_)?load(?:_all)?\(|\bOmegaConf\.(?:load|create)\(|"
                        r"\bload_yaml\w*\(|\bYAML\(|\bread_yaml\w*\(|\bhydra\b")
JSON_LOADS = re.compile(r"\bjson\.loads?\(|\bload_json\w*\(|\bread_json\w*\(")


@lru_cache(maxsize=256)
def _loads_by_hand(root: str, json_file: bool) -> bool:
    """Whether any Python file of the project loads a YAML (or, for a JSON config, JSON) file as a mapping, which its
    code could then read keys out of by name."""
    pattern = JSON_LOADS if json_file else YAML_LOADS
    return code_matches(Path(root), pattern)


def _own_config_class(call: ParserCall, root: Path, keys: list[str], expected: str, pins: Pins,
                      history: KeyHistory) -> bool:
    """Whether the project's own TrainingArguments subclass stands where the trainer's TRL config class would: the
    call fills no TRL trainer config, and a class of it deriving from TrainingArguments alone declares a key of the
    file that neither TrainingArguments nor *expected* ever had (VikhrModels' smpo.py parses into
    SimpleMarginPOConfig(TrainingArguments), whose chosen_sft_ratio the SMPO recipe sets). Then a DPOConfig field
    the recipe also sets is one that call refuses, not DPOConfig's to judge."""
    if expected in TRANSFORMERS_CLASSES:
        return False
    framework = history.ever("transformers", ["TrainingArguments"]) | history.ever("trl", [expected])
    for dotted in _resolved_classes(call, root):
        reached: set[str] = set()
        fields = _class_fields(dotted, str(root), pins, history, (), reached, call.file)
        if fields is None or reached - NOT_TRAINING_ARGUMENTS - TRANSFORMERS_CLASSES:
            return False  # a TRL trainer config among the call's classes: not the project's own
        if "TrainingArguments" in reached and any(k in fields and k not in framework for k in keys):
            return True
    return False


def classes_parsed_into(config_path: str | Path, keys: list[str]) -> frozenset[str] | None:
    """The project's own classes the parser calls of the scripts that parse the config fill, with their project
    bases; None when a script's call cannot be read. A project that declares GRPOConfig in its package while its
    examples/grpo_demo.py fills trl's GRPOConfig (jianzhnie/Open-R1) does not read the recipe into its own."""
    copies = _copies_parsed_into(config_path, keys)
    return None if copies is None else frozenset(one.name for one in copies)


def fields_parsed_into(config_path: str | Path, keys: list[str]) -> dict[str, str] | None:
    """Field -> the file declaring it, over the project's own classes that the parser calls fill, from the copy each
    script sees: 03-ppo's LabArguments.max_prompt_length is no field of the LabArguments 04-dpo/train.py defines
    and parses into (None as for classes_parsed_into)."""
    copies = _copies_parsed_into(config_path, keys)
    return None if copies is None else {field: one.file for one in copies for field in sorted(one.fields)}


def _copies_parsed_into(config_path: str | Path, keys: list[str]) -> list[ProjectDataclass] | None:
    """The project dataclasses the parser calls fill and their project bases, each class name resolved to the
    copy its file sees (copies_seen_from); None when a call cannot be read or names an installed package's class."""
    root = project_root(config_path)
    calls = _calls_parsing(config_path, keys, fate_known=False, every_call=True)  # which classes, whatever becomes
    # of other keys, and of every call a script makes
    if calls is None:
        return None
    table = project_dataclasses(root)
    reached: dict[tuple[str, str], ProjectDataclass] = {}
    for call in calls:
        todo: list[tuple[str, str]] = []  # (class name, the file its bare name is written in)
        for dotted in _resolved_classes(call, root):
            package, _, name = dotted.rpartition(".")
            if package.split(".")[0] in ("trl", "transformers") and \
                    not (name in table and in_project(package, str(root))):
                continue  # the framework's own class, not one a copy of it in the checkout adds (CODE-GRPO's)
            if package and not in_project(package, str(root)) and name not in table:
                return None  # an installed package's class (alignment's ModelArguments): what it declares is unknown
            if not package and dotted not in table:
                return None  # a variable (`TrlParser(dataclass_types)`, CODE-GRPO's code_grpo.py): which classes, unknown
            if package and name not in table:
                return None  # a class no file of the project defines (dylanyunlon's CCPOConfig, an ImportError)
            todo.append((name or dotted, "" if package else call.file))
        while todo:
            name, file = todo.pop()
            for one in copies_seen_from(root, name, file) if name in table else ():
                if (one.name, one.file) in reached:
                    continue
                reached[(one.name, one.file)] = one
                todo += [(b.rpartition(".")[2], "" if b.rpartition(".")[0] else one.file) for b in one.bases
                         if b and b not in ("object",) and (not b.rpartition(".")[0]
                                                            or in_project(b.rpartition(".")[0], str(root)))]
    return list(reached.values())


@dataclass(frozen=True)
class ParsedInto:
    """The frameworks whose classes a config's parser calls fill, and where the calls are."""

    frameworks: frozenset[str]  # "transformers", "trl": the calls' classes are or derive from theirs
    calls: tuple[str, ...]  # ("train.py:56",)

    @property
    def where(self) -> str:
        return ", ".join(self.calls)

    def transformers_alone(self) -> str:
        """Why the file is transformers' ('' when TRL's classes, or no framework's, take its keys)."""
        if self.frameworks != {"transformers"}:
            return ""
        return f"parsed by HfArgumentParser over TrainingArguments and the project's own classes at {self.where}"


def parsed_into(config_path: str | Path, keys: Iterable[str],
                parsers: tuple[str, ...] = ("HfArgumentParser",)) -> ParsedInto | None:
    """Which frameworks' classes take the config's keys, when every script that parses it calls one of *parsers*
    (HfArgumentParser; TrlParser, its subclass, where the caller asks) over classes that are transformers' or TRL's
    own or the project's (through their bases); None when a call cannot
    be read or a class is an installed package's. Only those classes take its keys, whatever trainer the script also
    builds: yshihao-ai/HyCoRA's train.py builds DPOTrainer for train_mode dpo beside HfArgumentParser((
    CustomizedArguments, TrainingArguments)), with trl pinned; its evaluate.py fills EvaluateArguments alone."""
    path = Path(config_path)
    return _parsed_into(str(path), frozenset(keys), parsers) if path.is_file() else None


@lru_cache(maxsize=256)
def _parsed_into(config_path: str, keys: frozenset[str], parsers: tuple[str, ...]) -> ParsedInto | None:
    """parsed_into, once per config and run: the dialect choice asks it from up to three places."""
    root = project_root(config_path)
    calls = _calls_parsing(config_path, keys)
    if calls is None or any(call.parser not in parsers for call in calls):
        return None
    table = project_dataclasses(root)
    frameworks: set[str] = set()
    where = []
    for call in calls:
        todo, seen = list(_resolved_classes(call, root)), set()
        while todo:
            dotted = todo.pop()
            package, _, name = dotted.rpartition(".")
            if package.split(".")[0] in ("trl", "transformers") and name not in table:
                frameworks.add(package.split(".")[0])
                continue
            if name not in table or (package and not in_project(package, str(root))):
                return None  # an installed package's class, or one the checkout does not define
            if name not in seen:
                seen.add(name)
                todo += [b for one in table[name] for b in one.bases if b and b != "object"]
        where.append(f"{call.file}:{call.line}")
    return ParsedInto(frozenset(frameworks), tuple(where))


def extra_keys_dropped(config_path: str | Path, keys: Iterable[str]) -> str | None:
    """Where every script that parses the config calls a parser that drops keys its classes lack (allow_extra_keys=
    True, fail_with_unknown_args=False): 'pt_llama.py:237'; None when one refuses them or no call can be read."""
    calls = _calls_parsing(config_path, keys)
    if not calls or any(call.fate != "dropped" for call in calls):
        return None
    return ", ".join(f"{call.file}:{call.line}" for call in calls)


def _calls_parsing(config_path: str | Path, keys: Iterable[str], fate_known: bool = True,
                   every_call: bool = False) -> list[ParserCall] | None:
    """The parser call of each script that parses the config; None when none does or a call cannot be read (or,
    with *fate_known*, when what the call does with other keys cannot be read either). With *every_call*, a script
    with calls over different classes stands for all of them (_parser_call)."""
    root = project_root(config_path)
    scripts = [s.file for s in parser_scripts(config_path, keys)]
    calls = [_parser_call(root / script, root, Path(config_path), fate_known, every_call) for script in scripts]
    return calls if calls and all(call is not None for call in calls) else None


def _parser_call(file: Path, root: Path, config: Path | None = None, fate_known: bool = True,
                 every_call: bool = False) -> ParserCall | None:
    """The one parser call of *file* whose classes are plain names (a variable set to classes in branches stands for
    the branch the launch line of *config* takes); None when there is none, several with other classes, or one over
    a variable set to something else (`TrlParser(dataclass_types)`). Of several calls over other classes, the
    training call (_training_call); with *every_call*, one call over all their classes: which of LLaMA-Factory's
    train, infer and eval parsers reads a file, the command says (Xnhyacinth/LLMR's eval config sets gen_chat, a
    field of its fork's EvaluationArguments)."""
    tree = parsed_module(file)
    if tree is None:
        return None
    found = []
    imported = imported_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = called_name(node.func)
        own = None if name in PARSER_NAMES else _project_parser(name, imported, root)
        if name not in PARSER_NAMES and own is None:
            continue
        items = parser_call_classes(node)
        if not all(isinstance(i, (ast.Name, ast.Attribute)) for i in items):
            return None
        written = tuple(c for i in items for c in _chosen_classes(tree, i, imported, root, config))
        found.append((name, node.lineno, written, own))
    if len({(name, classes) for name, _, classes, _ in found}) > 1 and every_call and \
            len({(name, own) for name, _, _, own in found}) == 1:
        found = [(found[0][0], found[0][1], tuple(dict.fromkeys(c for _, _, classes, _ in found for c in classes)),
                  found[0][3])]
    elif len({(name, classes) for name, _, classes, _ in found}) > 1:
        found = _training_call(found)
    if not found or len({(name, classes) for name, _, classes, _ in found}) != 1:
        return None
    name, line, classes, own = found[0]
    text = source_text(file) + (source_text(own) if own is not None else "")
    if name == "TrlParser":
        fate = "dropped" if "fail_with_unknown_args=False" in text.replace(" ", "") else "trl"
    else:
        fate = _leftover_fate(text)
        if fate is None and fate_known:
            return None  # parse_args_into_dataclasses: the file reaches it some other way
    return ParserCall(file.relative_to(root).as_posix(), line, name, classes, fate or "unknown")


def parser_call_at(root: Path, file: str) -> tuple[str, ...] | None:
    """The dotted classes of *file*'s one parser call (through its imports), None when it has no readable one."""
    call = _parser_call(root / file, root)
    return tuple(_resolved_classes(call, root)) if call is not None else None


def _training_call(found: list) -> list:
    """Of several parser calls over different classes, the one a training config reaches: the only one whose classes
    include a TrainingArguments (jianzhnie/LLamaTuner's configs/parser.py, like LLaMA-Factory's, parses TRAIN_ARGS,
    INFER_ARGS and EVAL_ARGS, and only TRAIN_ARGS holds Seq2SeqTrainingArguments); [] when not exactly one does."""
    training = [call for call in found if any(c.rsplit(".", 1)[-1].endswith("TrainingArguments") for c in call[2])]
    return training if len({(name, classes) for name, _, classes, _ in training}) == 1 else []


def _listed_classes(tree: ast.Module, name: str) -> list[str] | None:
    """The classes a module-level `NAME = [A, B, ...]` (or a tuple) lists, as written; None when there is no such
    list of plain names."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and isinstance(node.value, (ast.List, ast.Tuple)) and node.value.elts \
                and all(isinstance(e, (ast.Name, ast.Attribute)) for e in node.value.elts):
            return [ast.unparse(e) for e in node.value.elts]
    return None


def _chosen_classes(tree: ast.Module, item: ast.expr, imported: Mapping[str, str], root: Path,
                    config: Path | None) -> list[str]:
    """The classes a parser call's item may be: itself, or for a variable the script sets in branches, the classes
    of the branch the config's launch line takes. xzy-bit's run_dpo.py sets `config_cls = SimPOConfig` when
    `pre_args.trainer == "simpo"` (else DPOConfig), and run_simpo_1b.sh runs the simpo recipe with `--trainer
    simpo`. With no such flag on the launch line, every class the variable is set to (a key any declares is
    declared). A name the script imports or defines is itself."""
    if not isinstance(item, ast.Name) or item.id in imported or any(
            isinstance(n, ast.ClassDef) and n.name == item.id for n in tree.body):
        return [ast.unparse(item)]
    listed = _listed_classes(tree, item.id)
    if listed is not None:  # `TRAIN_ARGS = [ModelArguments, ..., Seq2SeqTrainingArguments]`, then
        return listed      # HfArgumentParser(TRAIN_ARGS)
    branches = list(_assignments(tree.body, item.id, None))
    if not branches:
        return [item.id]
    flags = _launch_flags(root, config, {attr for _, (attr, _) in branches if attr}) if config else {}
    chosen = [cls for cls, (attr, values) in branches if attr in flags and flags[attr] in values]
    if not chosen and flags:  # the flag names no tested value: the branches no test guards (the final else)
        chosen = [cls for cls, (attr, _) in branches if attr is None]
    return list(dict.fromkeys(chosen or [cls for cls, _ in branches]))


def _assignments(body: list[ast.stmt], name: str, guard: tuple[str | None, frozenset[str]] | None
                 ) -> Iterable[tuple[str, tuple[str | None, frozenset[str]]]]:
    """(class, (attribute tested, values)) for each `name = SomeClass` in *body*: the test of the `if` / `elif` it
    sits under (`args.trainer == "simpo"`, `args.trainer in {"a", "b"}`), (None, ()) where no such test guards it.
    A class taken by name from a module imported at run time (EeyoreLee/EarleeNLP's `argument = getattr(
    argument_module, "ModelArgument")`, the module picked by the config's `model`) is that name: any copy of it."""
    for node in body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
            cls = ast.unparse(value) if isinstance(value, (ast.Name, ast.Attribute)) else _class_by_name(value)
            if cls:
                yield cls, guard or (None, frozenset())
        elif isinstance(node, ast.If):
            yield from _assignments(node.body, name, _tested(node.test) or guard)
            yield from _assignments(node.orelse, name, None if not node.orelse or not isinstance(
                node.orelse[0], ast.If) or len(node.orelse) > 1 else guard)
        elif isinstance(node, (ast.FunctionDef, ast.With, ast.Try, ast.For, ast.While)):
            for inner in ([node.body] + [getattr(node, f, []) for f in ("orelse", "finalbody")] +
                          [h.body for h in getattr(node, "handlers", [])]):
                yield from _assignments(inner, name, guard)


def _class_by_name(value: ast.expr) -> str:
    """'ModelArgument' for `getattr(module, "ModelArgument")`; '' for anything else."""
    if isinstance(value, ast.Call) and called_name(value.func) == "getattr" and len(value.args) == 2 and \
            isinstance(value.args[1], ast.Constant) and isinstance(value.args[1].value, str) and \
            value.args[1].value.isidentifier() and value.args[1].value[:1].isupper():
        return value.args[1].value
    return ""


def _tested(test: ast.expr) -> tuple[str, frozenset[str]] | None:
    """('trainer', {'simpo'}) for `x.trainer == "simpo"` or `x.trainer in {"simpo", ...}`; None for another test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, (ast.Attribute, ast.Name))):
        return None
    attr = test.left.attr if isinstance(test.left, ast.Attribute) else test.left.id
    right = test.comparators[0]
    if isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return attr, frozenset({right.value})
    if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Set, ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts):
        return attr, frozenset(e.value for e in right.elts)
    return None


def _launch_flags(root: Path, config: Path, attributes: set[str]) -> dict[str, str]:
    """attribute -> the value the config's launch lines give its flag (`--trainer simpo`); only where they agree."""
    from seqprof.config.launches import command_lines

    seen: dict[str, set[str]] = {}
    for _, _, line in command_lines(root, config.resolve())[0]:
        for attr in attributes:
            flag = "|".join(re.escape(f"--{a}") for a in {attr, attr.replace("_", "-")})
            for value in re.findall(rf"(?:{flag})(?:=|\s+)[\"']?([\w.-]+)", line):
                seen.setdefault(attr, set()).add(value)
    return {attr: next(iter(values)) for attr, values in seen.items() if len(values) == 1}


def own_parser_fate(config_path: str | Path, keys: list[str]) -> str | None:
    """What the parser that reads the config does with a key none of its classes declares, when every script that
    parses it calls a parser class of the project's own (an HfArgumentParser subclass, or a copy of TrlParser:
    muqeeth's TRLParser raises "not used by the TRLParser"); None when TRL's or transformers' own parser reads it,
    or what the project's does is unclear."""
    root = project_root(config_path)
    found: set[tuple[str, str, str]] = set()
    for script in parser_scripts(config_path, keys):
        if script.parser in PARSER_NAMES:
            return None  # TRL's or transformers' own: the caller knows what it does
        tree = parsed_module(root / script.file)
        own = _project_parser(script.parser, imported_names(tree), root) if tree is not None else None
        fate = _leftover_fate(source_text(own), copied_trlparser=True) if own is not None else None
        if fate is None:
            return None
        found.add((script.parser, own.relative_to(root).as_posix(), fate))
    fates = {fate for *_, fate in found}
    if len(fates) != 1:
        return None
    names = ", ".join(f"{name} ({where})" for name, where, _ in sorted(found))
    return f"the project's own parser {names} " + (
        "refuses a key no argument class declares" if fates == {"refused"} else
        "drops a key no argument class declares without a word, so the setting has no effect")


def leftovers_taken_back(config_path: str | Path, keys: list[str]) -> str | None:
    """Where the scripts that parse the config with TRL's own TrlParser take the keys no argument class declares back
    instead of letting it refuse them: every parse_args_and_config call passes return_remaining_strings=True or
    fail_with_unknown_args=False (HuiResearch/ReasoningIE's sft.py:186 throws the leftovers away); 'sft.py:186', or
    None when a script lets TrlParser refuse them, or another parser reads the file."""
    root = project_root(config_path)
    scripts = parser_scripts(config_path, keys)
    where = []
    for script in scripts:
        tree = parsed_module(root / script.file) if script.parser == "TrlParser" else None
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                 and node.func.attr == "parse_args_and_config"] if tree is not None else []
        if not calls or not all(_keeps_leftovers(call) for call in calls):
            return None
        where += [f"{script.file}:{call.lineno}" for call in calls]
    return ", ".join(where) or None


def _keeps_leftovers(call: ast.Call) -> bool:
    return any(isinstance(k.value, ast.Constant) and (k.arg, k.value.value) in (
        ("return_remaining_strings", True), ("fail_with_unknown_args", False)) for k in call.keywords)


@dataclass(frozen=True)
class YamlReading:
    """How the scripts that parse a YAML config hand its values to the dataclasses."""

    where: str  # 'HfArgumentParser at train.py:42'
    argparse: bool  # through argparse (TrlParser: top-level values become defaults, converted by each field's type)


def yaml_reading(config_path: str | Path, keys: list[str]) -> YamlReading | None:
    """How the YAML config's values reach the dataclasses: as yaml.safe_load gave them (HfArgumentParser's
    parse_yaml_file / parse_dict: no field's type is applied), or as argparse defaults (TrlParser, the trl CLI);
    None for another loader (OmegaConf, ruamel), a JSON file, or a parser call that cannot be read."""
    path = Path(config_path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        return None
    if any(launch.dialect == "trl" for launch in framework_launches(str(path.resolve()))):
        return YamlReading("the trl CLI (TrlParser)", argparse=True)
    root = project_root(path)
    where, through_argparse = [], set()
    tied = tied_scripts(path)
    for script in parser_scripts(path, keys):
        if script.file not in tied:
            return None  # a script matched by the fields its classes declare: which loader runs the file is unsure
        call = _parser_call(root / script.file, root, path)
        if call is None:
            return None
        tree = parsed_module(root / call.file)
        own = _project_parser(call.parser, imported_names(tree), root) if tree is not None else None
        text = source_text(root / call.file) + (source_text(own) if own is not None else "")
        if re.search(r"\bOmegaConf\b|\bruamel\b", text):
            return None
        if call.parser == "TrlParser":
            through_argparse.add(True)
        elif "parse_yaml_file(" in text or "parse_dict(" in text and re.search(r"\byaml\.(safe_)?load\(", text):
            through_argparse.add(False)
        else:
            return None
        where.append(f"{call.parser} at {call.file}:{call.line}")
    if len(through_argparse) != 1:
        return None
    return YamlReading("; ".join(where), argparse=through_argparse.pop())


def _leftover_fate(text: str, copied_trlparser: bool = False) -> str | None:
    """"dropped" / "refused": what a parser does with leftover keys, as the source that calls or defines it says
    (allow_extra_keys=True; parse_yaml_file / parse_json_file / parse_dict, which raise on them). A project's copy
    of TrlParser also says it by fail_with_unknown_args=False or by raising "... not used by ..." itself."""
    flat = text.replace(" ", "")
    if "allow_extra_keys=True" in flat or copied_trlparser and "fail_with_unknown_args=False" in flat:
        return "dropped"
    if any(f".{method}(" in text for method in ("parse_yaml_file", "parse_json_file", "parse_dict")) or \
            copied_trlparser and re.search(r"raise\s+ValueError\([^)]*not used by", text):
        return "refused"
    return None


def _project_parser(name: str, imported: dict[str, str], root: Path) -> Path | None:
    """The project file defining *name* as its own subclass of transformers' HfArgumentParser, as the script imports
    it (*imported*: its imported_names): VikhrModels' src/utils/yaml_args_parser.py H4ArgumentParser, whose parse()
    reads the YAML with parse_yaml_file (alignment-handbook's layer, copied into the checkout)."""
    module = imported.get(name, "").rpartition(".")[0]
    if not module or module.split(".")[0] in ("transformers", "trl") or not in_project(module, str(root)):
        return None
    tail = module.replace(".", "/")
    # the module itself, at the root or deeper (src/), or a module of the package it re-exports the class from
    # (wassname/alignment-handbook's `from alignment import H4ArgumentParser`: src/alignment/configs.py)
    files = python_files(root)
    in_package = [f for f in files if f"/{tail}/" in f"/{f.relative_to(root).as_posix()}"]
    candidates = [root / f"{tail}.py", root / tail / "__init__.py"] + sorted(
        (f for f in files if f.as_posix().endswith(f"/{tail}.py")), key=lambda f: len(f.parts)) + sorted(
        in_package, key=lambda f: (len(f.parts), f.name != "__init__.py", f.name))
    for candidate in dict.fromkeys(candidates):
        defined = parsed_module(candidate, ("HfArgumentParser",)) if candidate.is_file() else None
        if defined is None:
            continue
        theirs = imported_names(defined)
        if any(isinstance(node, ast.ClassDef) and node.name == name
               and any(isinstance(b, ast.Name) and theirs.get(b.id) == "transformers.HfArgumentParser"
                       for b in node.bases)
               for node in defined.body):
            return candidate
    return None


def _declared(call: ParserCall, root: Path, pins: Pins,
              history: KeyHistory) -> tuple[set[str] | None, set[str]]:
    """Every field the call's classes have at a release the pins allow (None when one of them cannot be placed),
    and the framework classes they are or derive from."""
    out: set[str] = set()
    reached: set[str] = set()
    for dotted in _resolved_classes(call, root):
        fields = _class_fields(dotted, str(root), pins, history, (), reached, call.file)
        if fields is None:
            return None, reached
        out |= fields
    return out, reached


def _resolved_classes(call: ParserCall, root: Path) -> list[str]:
    """The call's classes as dotted names through the script's imports ('trl.GRPOConfig', 'open_r1.configs.
    GRPOScriptArguments'); a class the script defines keeps its bare name, shadowing one it imports (VideoThinker's
    sft.py imports trl's ScriptArguments, then defines its own ScriptArguments(trl.ScriptArguments))."""
    tree = parsed_module(root / call.file)
    imported = imported_names(tree) if tree is not None else {}
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)} if tree is not None else set()
    out = []
    for written in call.classes:
        head, _, rest = written.partition(".")
        out.append(written if head in defined else f"{imported.get(head, head)}{'.' + rest if rest else ''}")
    return out


def _class_fields(dotted: str, root: str, pins: Pins, history: KeyHistory, seen: tuple[str, ...],
                  reached: set[str], file: str = "") -> set[str] | None:
    """The fields of a class named *dotted* (through the imports of *file*, where it is named): TRL's or
    transformers' at the allowed releases, or a project dataclass's own and its bases'; None when it cannot be
    placed. A bare name means the copy *file* defines, where it defines one (copies_seen_from)."""
    package, _, name = dotted.rpartition(".")
    top = package.split(".")[0]
    if top in ("trl", "transformers"):
        reached.add(name)
        if in_project(top, root):
            return None  # a copy in the checkout (src/open_r1/trl/, first on sys.path when the script runs) may
            #              declare fields no release has (ColdJeans21's GRPOConfig.hint_template)
    if top == "trl" and name in history.data["trl"]["classes"]:
        fields = _framework_fields("trl", [name], pins, history)  # an on-policy config's history holds its base's
        if name not in NOT_TRAINING_ARGUMENTS:
            fields |= _framework_fields("transformers", ["TrainingArguments"], pins, history)
        return fields
    if top == "transformers" and name in TRANSFORMERS_CLASSES:
        return _framework_fields("transformers", ["TrainingArguments"], pins, history) | \
            (SEQ2SEQ_FIELDS if name == "Seq2SeqTrainingArguments" else set())
    if top in ("trl", "transformers") or name in seen or (package and not in_project(package, root)):
        return None  # another package's class (an installed alignment-handbook's ScriptArguments)
    found = copies_seen_from(root, name or dotted, "" if package else file)
    if not found:
        return None
    out: set[str] = set()
    for one in found:
        out |= one.fields
        for base in one.bases:
            more = set() if base in ("", "object") else \
                _class_fields(base, root, pins, history, (*seen, name), reached, one.file)
            if more is None:
                return None
            out |= more
    return out


def _older_than_known(frameworks: set[str], pins: Pins, history: KeyHistory) -> bool:
    """Whether a framework class the parser fills is pinned older than every release the history holds
    (NeilFranks/question_generation's transformers==3.0.0, whose TrainingArguments still had
    evaluate_during_training and whose parse_json_file dropped unknown keys): its fields are unknown."""
    trl_classes = {c for c in frameworks if c in history.data["trl"]["classes"]}
    return bool(trl_classes) and history.older_than_known("trl", pins) or \
        bool(frameworks - NOT_TRAINING_ARGUMENTS) and history.older_than_known("transformers", pins)


# Seq2SeqTrainingArguments's own fields (transformers training_args_seq2seq.py, 4.x and 5.x)
SEQ2SEQ_FIELDS = frozenset({"sortish_sampler", "predict_with_generate", "generation_max_length",
                            "generation_num_beams", "generation_config"})


def _framework_fields(package: str, classes: Iterable[str], pins: Pins, history: KeyHistory) -> set[str]:
    """Fields *classes* have at any release the pins allow; every release's when a commit pins it (unplaceable)."""
    classes = list(classes)
    allowed = history.allowed(package, pins)
    if pins.vcs(package) is not None or not allowed and allowed is not None:
        return history.ever(package, classes)
    releases = allowed or [history.newest(package)]
    return {k for v in releases for k in history.fields_in(package, v, classes)}


# what SP438 answers, for a field the parser's classes never had in any release: a note asking whether the script
# reads the key, and an upgrade warning that took another class's field for theirs (liv-daliberti's SFT recipe:
# max_prompt_length is DPOConfig's, not SFTConfig's). A field they had (torch_dtype in ModelConfig) is the version
# history's business (its rename advice), and a typo (unknown_key) keeps its did-you-mean
ANSWERED = frozenset({"unread_key", "deprecated_key", "renamed_key", "upcoming_deprecation"})


def undeclared_by_parser(diagnostics: list[ConfigDiagnostic], cfg: LoadedConfig, expected: str, pins: Pins,
                         history: KeyHistory) -> list[ConfigDiagnostic]:
    """*diagnostics* with each key undeclared_keys finds, and no class of the call ever had, made an
    `undeclared_key` (SP438): a note SP407 gave it (`read by your own script's arguments?`) is answered, and a key
    no rule spoke of (a DPO field in a GRPO recipe: TRL has it, the parser's classes do not) is added (ANSWERED)."""
    found = undeclared_keys(cfg.path, cfg.data, pins, history, expected)
    if found is None:
        return diagnostics
    spoken = {d.key: d for d in diagnostics}
    fate = _fate(found.calls, pins, history)
    ever = _ever_declared(found.frameworks, history)
    answered = {k for k in found.keys if k not in ever  # a rename's advice (use_liger -> use_liger_kernel) stays
                and (k not in spoken or spoken[k].kind in ANSWERED and not spoken[k].suggestion)}
    out = [d for d in diagnostics if d.key not in answered]
    for key in (k for k in found.keys if k in answered):
        out.append(ConfigDiagnostic(
            kind="undeclared_key", key=key, file=cfg.path, line=cfg.line(key) or 1,
            message=f"'{key}' is declared by none of the classes the project's script reads this file into "
                    f"({found.where()}): {fate}"))
    return out


def _ever_declared(frameworks: frozenset[str], history: KeyHistory) -> set[str]:
    """Every field the framework classes had in any release (TrainingArguments' under each TRL config)."""
    trl_classes = [c for c in frameworks if c in history.data["trl"]["classes"]]
    fields = history.ever("trl", trl_classes)
    if frameworks - NOT_TRAINING_ARGUMENTS:
        fields |= history.ever("transformers", ["TrainingArguments"]) | SEQ2SEQ_FIELDS
    return fields


def _fate(calls: tuple[ParserCall, ...], pins: Pins, history: KeyHistory) -> str:
    """What the parser does with a key none of its classes declares, at the releases the pins allow."""
    from packaging.version import Version

    from seqprof.config.dialects.trl import unknown_key_fate

    fates = {c.fate for c in calls}
    if fates == {"dropped"}:
        return "the script's parser drops it without a word (allow_extra_keys=True / fail_with_unknown_args=False), " \
               "so the setting has no effect"
    if fates == {"refused"}:
        return "HfArgumentParser refuses it (\"Some keys are not used by the HfArgumentParser\")"
    if fates == {"trl"}:
        placed = pins.vcs("trl") is None or pins.vcs("trl").head  # a commit is not placed among releases
        releases = (history.allowed("trl", pins) or [history.newest("trl")]) if placed else history.versions("trl")
        fate = unknown_key_fate(sorted(releases, key=Version)).replace(
            " (the `trl` CLI hands it to accelerate launch, which refuses it)", "")
        return fate if placed else f"trl is pinned to a commit ({pins.vcs('trl').source}), which seqprof cannot " \
                                   f"place among releases: {fate}"
    return "the scripts' parsers drop or refuse it"
