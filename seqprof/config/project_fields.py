"""The fields of a project's own argument dataclasses (and pydantic models), read from the Python files beside
its config, and which config keys its code reads itself (project_reads).

Recipes built on TRL or transformers parse their YAML with HfArgumentParser / TrlParser into the framework's
classes *and* the project's own dataclasses (SimPO's SimPOConfig(TrainingArguments), a ScriptArguments of its
own, Aria's AriaModelConfig). A key such a class declares is read by the project's script, whatever the
framework removed or never had: lint must not call it unknown or removed. The files are parsed with `ast`,
never imported, and the scan is bounded, so a config inside a large checkout costs milliseconds, not minutes.
"""

from __future__ import annotations

import ast
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.versions import project_folders

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "requirements.txt")
SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "__pycache__", "venv", "env", "build", "dist",
                             "wandb", "outputs", "checkpoints"})
MAX_FILES = 4000  # Python files looked at in one project
MAX_ENTRIES = 50_000  # names walked in one project (a data folder of a million shards is not read through)
MAX_FILE_BYTES = 512 * 1024
TRAINING_ARGUMENTS = frozenset({"transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments",
                                "transformers.training_args.TrainingArguments",
                                "transformers.training_args_seq2seq.Seq2SeqTrainingArguments"})


@dataclass(frozen=True)
class ProjectField:
    """One field of a project's own dataclass: where it is declared."""

    name: str
    owner: str  # the class: "SimPOConfig"
    file: str  # relative to the project root
    line: int
    bases: tuple[str, ...] = ()  # the class's bases, through the module's imports: "transformers.TrainingArguments"
    default: object = None  # a literal default (`= 150`, `field(default=150)`), else None

    def in_trl_copy(self) -> bool:
        """Declared in a copy of TRL inside the project (xsc1234/RLKD's src/open_r1/trl/trainer/sft_config.py, first
        on sys.path beside its scripts): TRL's class, at the copy's version, not one of the project's own."""
        return f"/{FRAMEWORK_SOURCE['trl']}/" in f"/{self.file}"

    def extends_training_arguments(self) -> bool:
        """The class subclasses transformers' TrainingArguments (or Seq2SeqTrainingArguments) directly."""
        return any(b in TRAINING_ARGUMENTS for b in self.bases)

    def where(self) -> str:
        return f"{self.owner} ({self.file}:{self.line})"


def project_root(config_path: str | Path) -> Path:
    """The folder holding .git above the config; else the highest folder with a project file; else its own."""
    start = Path(config_path).resolve().parent
    folders = list(project_folders(start))  # the same folders the version pins are searched in
    if (folders[-1] / ".git").exists():
        return folders[-1]
    marked = [f for f in folders if any((f / name).is_file() for name in PROJECT_MARKERS)]
    return marked[-1] if marked else start


def project_fields(config_path: str | Path) -> dict[str, ProjectField]:
    """Field name -> its declaration, over every @dataclass in the config's project (first declaration wins)."""
    path = Path(config_path)
    if not path.is_file():
        return {}
    return _declarations_under(str(project_root(path)))[0]


@dataclass(frozen=True)
class ProjectDataclass:
    """One @dataclass of the project: its own fields and its bases, through its module's imports."""

    name: str
    fields: frozenset[str]
    bases: tuple[str, ...]
    file: str = ""  # relative to the project root


def project_dataclasses(root: str | Path) -> dict[str, list[ProjectDataclass]]:
    """Class name -> each @dataclass of that name under the project *root* (two files may each define a
    ScriptArguments), from the same walk as project_fields."""
    return _declarations_under(str(root))[3]


def copies_seen_from(root: str | Path, name: str, file: str) -> list[ProjectDataclass]:
    """The @dataclass copies named *name* that a bare name in *file* means: the file's own where it defines one
    (each stage of AntonioGr7/post-training-lab defines a LabArguments of its own), else every copy."""
    every = project_dataclasses(root).get(name, [])
    return [one for one in every if one.file == file] or every


def dataclasses_in(file: Path, root: Path) -> list[ProjectDataclass]:
    """The @dataclass classes one project file defines, with their own fields."""
    return _declarations(file, root)[2]


def field_owners(config_path: str | Path) -> dict[str, frozenset[str]]:
    """Field name -> every project class that has it, declared or inherited from a project class
    (RLOOConfig and GRPOConfig both declare system_prompt; GRPOScriptArguments inherits ScriptArguments' fields)."""
    path = Path(config_path)
    if not path.is_file():
        return {}
    return _declarations_under(str(project_root(path)))[2]


@lru_cache(maxsize=64)
def _declarations_under(root: str) -> tuple[dict[str, ProjectField], frozenset[str], dict[str, frozenset[str]],
                                            dict[str, list[ProjectDataclass]]]:
    """One walk of the project's argument files: their fields (first declaration wins), their class names, each
    field's owners with the project subclasses that inherit it, and the @dataclass classes by name."""
    fields: dict[str, ProjectField] = {}
    classes: set[str] = set()
    declared: dict[str, set[str]] = {}
    subclasses: dict[str, set[str]] = {}
    table: dict[str, list[ProjectDataclass]] = {}
    for file in python_files(Path(root)):
        found, names, dataclasses = _declarations(file, Path(root))
        for one in dataclasses:  # a subclass with no field of its own inherits too (CLFScriptArguments)
            table.setdefault(one.name, []).append(one)
            for base in one.bases:
                subclasses.setdefault(base.rsplit(".", 1)[-1], set()).add(one.name)
        for field in found:
            fields.setdefault(field.name, field)
            declared.setdefault(field.name, set()).add(field.owner)
            for base in field.bases:
                subclasses.setdefault(base.rsplit(".", 1)[-1], set()).add(field.owner)
        classes.update(names)
    owners = {}
    for name, direct in declared.items():
        reached, todo = set(direct), list(direct)
        while todo:
            for child in subclasses.get(todo.pop(), ()):
                if child not in reached:
                    reached.add(child)
                    todo.append(child)
        owners[name] = frozenset(reached)
    return fields, frozenset(classes), owners, table


def python_files(root: Path) -> list[Path]:
    """The project's Python files, and after them those of a package it holds only as a built copy (build/lib);
    one walk per project and run (each module lookup and launch line asks again)."""
    return list(_python_files_under(str(root)))


@lru_cache(maxsize=64)
def _python_files_under(root_text: str) -> tuple[Path, ...]:
    root = Path(root_text)
    files: list[Path] = []
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        files += [Path(folder) / n for n in sorted(names) if n.endswith(".py")]
        seen += len(names) + len(dirs)
        if len(files) >= MAX_FILES or seen >= MAX_ENTRIES:
            return tuple(files[:MAX_FILES])
    return tuple((files + _built_only(root, files))[:MAX_FILES])


def _built_only(root: Path, files: list[Path]) -> list[Path]:
    """Files of build/lib's packages that the checkout has no source of: a repository that commits the build
    of its `alignment` package beside scripts importing it (HaoruSung's medical-QA fork of alignment-handbook)."""
    built = root / "build" / "lib"
    if not built.is_dir():
        return []
    have = {part for f in files for part in f.relative_to(root).parts[:-1]} | {f.stem for f in files}
    out: list[Path] = []
    for package in sorted(p for p in built.iterdir() if p.is_dir() and p.name not in have):
        out += sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)[:MAX_FILES]
    return out


@lru_cache(maxsize=256)
def in_project(module: str, root: str) -> bool:
    """*module* ('open_r1.configs', 'configs') is a file of the project: the checkout has it, at any depth (src/)."""
    tail = module.replace(".", "/")
    return any(f.as_posix().endswith((f"/{tail}.py", f"/{tail}/__init__.py")) for f in python_files(Path(root)))


def parsed_module(file: Path, needs: tuple[str, ...] = ()) -> ast.Module | None:
    """*file*'s syntax tree; None for a file that is unreadable, too large, not a regular file, not Python, or
    holds none of the words in *needs* (which spares parsing a file that cannot matter)."""
    text = source_text(file)
    if not text or (needs and not any(word in text for word in needs)):
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def dataclass_fields(file: Path, root: Path) -> list[ProjectField]:
    """The annotated fields of each @dataclass class in *file* (an unreadable or invalid file has none)."""
    return _declarations(file, root)[0]


def _declarations(file: Path, root: Path) -> tuple[list[ProjectField], set[str], list[ProjectDataclass]]:
    """*file*'s dataclass / pydantic fields, the names of every class it defines (H4ArgumentParser among them), and
    its @dataclass classes and pydantic models whole (a class with no field of its own still names its bases)."""
    tree = parsed_module(file, ("dataclass", "BaseModel", "TrainingArguments"))
    if tree is None:
        return [], set(), []
    rel = file.relative_to(root).as_posix()
    imported = imported_names(tree)
    out, classes, dataclasses = [], set(), []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        classes.add(node.name)
        decorated = any(_is_dataclass(d) for d in node.decorator_list)
        bases = tuple(_dotted(b, imported) for b in node.bases)
        if decorated or any(_is_pydantic_model(b) for b in node.bases):
            own = [ProjectField(item.target.id, node.name, rel, item.lineno, bases, _literal_default(item.value))
                   for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]
            out += own
            dataclasses.append(ProjectDataclass(node.name, frozenset(f.name for f in own), bases, rel))
        elif any(b in TRAINING_ARGUMENTS for b in bases):
            out += _init_parameters(node, rel, bases)
    return out, classes, dataclasses


def _init_parameters(node: ast.ClassDef, rel: str, bases: tuple[str, ...]) -> list[ProjectField]:
    """The named parameters of a hand-written `__init__` on a TrainingArguments subclass that is no dataclass:
    basalam/product-catalog-generator's SFTTrainArguments(**config) takes project_name, padding_side and
    max_seq_length itself and hands TrainingArguments only the rest (filtered by its signature)."""
    init = init_method(node)
    if init is None:
        return []
    positional = init.args.posonlyargs + init.args.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(init.args.defaults):], init.args.defaults))
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
    return [ProjectField(a.arg, node.name, rel, a.lineno, bases, _literal_default(defaults.get(a.arg)))
            for a in named_parameters(init)]


def init_method(node: ast.ClassDef) -> ast.FunctionDef | None:
    """The `__init__` a class body writes, if it writes one."""
    return next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)


def named_parameters(function: ast.FunctionDef) -> list[ast.arg]:
    """A method's parameters a caller can name, `self` left out."""
    return (function.args.posonlyargs + function.args.args)[1:] + function.args.kwonlyargs


def _literal_default(value: ast.expr | None) -> object:
    """`= 150` or `field(default=150, ...)` -> 150; anything computed (a factory, a name) -> None."""
    if isinstance(value, ast.Call) and called_name(value.func) == "field":
        value = next((k.value for k in value.keywords if k.arg == "default"), None)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        return -value.operand.value if isinstance(value.operand.value, (int, float)) else None
    return value.value if isinstance(value, ast.Constant) else None


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it imports: `from transformers import TrainingArguments as HfTrainingArguments` gives
    HfTrainingArguments -> transformers.TrainingArguments; `import transformers as tf` gives tf -> transformers."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            names.update({a.asname or a.name: a.name for a in node.names})
    return names


def star_imported_names(tree: ast.Module, file: Path) -> dict[str, str]:
    """imported_names of the project's own modules that *file* star-imports from its folder (TEN-Sum's run_dpo.py:
    `from utils import *`, where utils.py imports DPOConfig from trl); one level, as Python resolves a sibling."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        star = isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        module = sibling_module(node, file) if star else None
        found = parsed_module(module) if module is not None else None
        if found is not None:
            names.update({k: v for k, v in imported_names(found).items() if k not in names})
    return names


def sibling_module(node: ast.AST, file: Path) -> Path | None:
    """The module file of *file*'s own folder that an import node names (`from utils import *`, `from
    self_learning_training import do_train`), as Python resolves a sibling; None for any other node or module."""
    if not isinstance(node, ast.ImportFrom) or not node.module or node.level > 1:
        return None
    module = file.parent / (node.module.replace(".", "/") + ".py")
    return module if module.is_file() else None


def _dotted(node: ast.expr, imported: dict[str, str]) -> str:
    """A base class as a dotted name, its first part resolved through the module's imports ('' if not a name)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([imported.get(node.id, node.id), *parts])


def called_name(func: ast.expr) -> str:
    """The name a call calls: `HfArgumentParser(...)` and `transformers.HfArgumentParser(...)` both give
    'HfArgumentParser'; '' for anything else (a subscript, a call's result)."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def parser_call_classes(call: ast.Call) -> list[ast.expr | None]:
    """The class expressions an HfArgumentParser-like call is given: the items of its first argument (or of
    `dataclass_types=`) when that is a tuple or list, else that one argument (None when it has none)."""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dataclass_types"), None)
    return list(given.elts) if isinstance(given, (ast.Tuple, ast.List)) else [given]


def project_classes(config_path: str | Path) -> frozenset[str]:
    """The names of the classes the project's argument files define (those holding a dataclass or a pydantic
    model, as project_fields reads them): whether it carries alignment-handbook's H4ArgumentParser layer."""
    path = Path(config_path)
    return _declarations_under(str(project_root(path)))[1] if path.is_file() else frozenset()


def project_reads(config_path: str | Path, keys: Iterable[str], attributes: bool = False) -> dict[str, str]:
    """The *keys* the project's Python reads out of a config mapping (`cfg["gpu"]`, `cfg.get("gpu")`, `.pop("gpu")`,
    `"gpu" in cfg`, `getattr(args, "gpu")`, an OmegaConf config's `cfg.gpu`), and with *attributes* also as any
    attribute (`args.warmup_ratio`: a
    dataclass field is read that way), each with where it is first read ('cw_cli/core/framework.py:112'). A text
    scan over the same bounded files project_fields walks: milliseconds for a project's own checkout, about 1.5 s
    for one the size of transformers (2,900 files)."""
    found: dict[str, str] = {}
    for file, reads in project_reads_by_file(config_path, keys, attributes):
        for key, line in reads:
            found.setdefault(key, f"{file}:{line}")
    return found


def project_reads_by_file(
        config_path: str | Path, keys: Iterable[str], attributes: bool = False,
        sections: frozenset[str] | None = None) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    """project_reads file by file: (the file relative to the project root, ((key, first line), ...)), for the files
    that read any of *keys*, in walk order. With *sections*, a read through a config's section
    (`config.training.output_dir`) counts only for those section names."""
    path, wanted = Path(config_path), frozenset(k for k in keys if IDENTIFIER.match(k))
    if not path.is_file() or not wanted:
        return ()
    return _reads_under(str(project_root(path)), wanted, attributes,
                        None if sections is None else frozenset(s for s in sections if IDENTIFIER.match(s)))


def project_pops(config_path: str | Path, keys: Iterable[str]) -> dict[str, str]:
    """The *keys* the project's Python removes from a config mapping by name (`config.pop("modelopt", None)`, `del
    cfg["modelopt"]`), each with where: NVIDIA's llm_qat llama_factory.py pops its modelopt section before
    LLaMA-Factory parses the rest."""
    path, wanted = Path(config_path), sorted((k for k in keys if IDENTIFIER.match(k)), key=len, reverse=True)
    if not path.is_file() or not wanted:
        return {}
    root = project_root(path)
    quoted = rf"[\"']({'|'.join(wanted)})[\"']"
    pattern = re.compile(rf"\.pop\(\s*{quoted}|\bdel\s+[\w.]+\[\s*{quoted}\s*\]")
    found: dict[str, str] = {}
    for file in python_files(root):  # one walk for every key, as project_reads does
        text = source_text(file)
        for match in pattern.finditer(text):
            found.setdefault(match.group(1) or match.group(2),
                             f"{file.relative_to(root).as_posix()}:{text.count(chr(10), 0, match.start()) + 1}")
    return found


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a key code can name: `cfg["gpu"]`, a field
# an attribute annotated where it is declared (`self.adafactor: bool = False`), not read; a colon that ends the line
# closes a condition that reads it (allenai/hyperdecoders' t5_trainer.py: `if self.args.adafactor:`)
ANNOTATION = r"[ \t]*:[ \t]*[^\s#]"


@lru_cache(maxsize=256)
def _reads_under(root: str, keys: frozenset[str], attributes: bool,
                 sections: frozenset[str] | None = None) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    names = "|".join(sorted(keys, key=len, reverse=True))
    section = r"(?:\.[A-Za-z_]\w*)?" if sections is None else \
        rf"(?:\.(?:{'|'.join(sorted(sections))}))?" if sections else ""
    quoted = rf"[\"']({names})[\"']"
    # a subscript the code assigns to writes the key (Xavier-123/easyai-llamafactory's `train_args["template"] = ...`
    # fills the dict it dumps for llamafactory-cli), it does not read it
    forms = [rf"\[\s*{quoted}\s*\](?!\s*=[^=])", rf"\.(?:get|pop|setdefault)\(\s*{quoted}",
             rf"{quoted}\s+(?:not\s+)?in\s",
             rf"getattr\(\s*[\w.\[\]]+\s*,\s*{quoted}",
             # an OmegaConf / DictDefault config, or a Hydra group of one (`cfg.training.warmup_ratio`)
             rf"\b(?:cfg|conf|config){section}\.({names})\b(?!\s*(?:\(|=[^=])|{ANNOTATION})",
             # an argparse option of the project's own, which its code fills from the YAML (TEN-Sum's
             # `add_argument('--max_prompt_length')`, then `setattr(args, key, value)` per key); `--max-prompt-length`
             # is the same option (argparse's dest)
             rf"add_argument\(\s*[\"']--?({names}|{names.replace('_', '-')})[\"']",
             # a key constant the loader pops by name (wwwbq/LLMfactory's BASE_KEY = '_base_', then
             # cfg_dict.pop(BASE_KEY): mmengine-style inheritance of a base file)
             rf"(?<![^\n])[ \t]*[A-Z][A-Z0-9_]*KEY\s*=\s*{quoted}[ \t]*(?:#[^\n]*)?(?=\n|$)"]
    forms += [rf"\.({names})\b(?!\s*\(|{ANNOTATION})"] if attributes else []
    pattern = re.compile("|".join(forms))
    out = []
    for file in python_files(Path(root)):
        text = source_text(file)
        reads: dict[str, int] = {}
        for match in pattern.finditer(text):
            if commented_out(text, match.start()):
                continue  # QuantumDou/ReaVE's tuner.py: `# medical_eval = args.pop("medical_eval", None)`
            name = next(g for g in match.groups() if g)
            name = name if name in keys else name.replace("-", "_")
            reads.setdefault(name, text.count("\n", 0, match.start()) + 1)
        for name, line in kept_by_name(file).items() if ".items()" in text else ():
            if name in keys:
                reads.setdefault(name, line)
        if reads:
            out.append((file.relative_to(root).as_posix(), tuple(reads.items())))
    return tuple(out)


def kept_by_name(file: Path) -> dict[str, int]:
    """Name -> line of the names a filtered copy of a mapping keeps, `{k: v for k, v in cfg.items() if k in
    supported}` with `supported` a literal of names in the module (SujitRoy's run_sft.py builds SFTConfig(**kwargs)
    from such a copy of its YAML): the code names each key it hands on, as `cfg["k"]` would."""
    tree = parsed_module(file, (".items()",))
    out: dict[str, int] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.DictComp):
            for element in kept_names(node, tree):
                out.setdefault(element.value, element.lineno)
    return out


def kept_names(comp: ast.DictComp, tree: ast.Module) -> list[ast.Constant]:
    """The names a `{k: v for k, v in d.items() if k in NAMES}` keeps, where NAMES is a literal of names, inline or
    bound to a name in *tree*; [] for any other comprehension."""
    out: list[ast.Constant] = []
    for generator in comp.generators:
        if not (isinstance(generator.iter, ast.Call) and isinstance(generator.iter.func, ast.Attribute)
                and generator.iter.func.attr == "items" and isinstance(generator.target, ast.Tuple)
                and generator.target.elts and isinstance(generator.target.elts[0], ast.Name)):
            continue
        key_name = generator.target.elts[0].id
        for test in generator.ifs:
            for part in test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]:
                if isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.In) \
                        and isinstance(part.left, ast.Name) and part.left.id == key_name:
                    kept = part.comparators[0]
                    out += _name_literal(_literal_bindings(tree).get(kept.id) if isinstance(kept, ast.Name)
                                         else kept)
    return out


@lru_cache(maxsize=256)
def _literal_bindings(tree: ast.Module) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, node.value)
    return out


def _name_literal(node: ast.expr | None) -> list[ast.Constant]:
    """The string elements of a set, list or tuple display, or of `set(...)` / `frozenset(...)` over one; [] when
    *node* is anything else (or None: a name bound to nothing in the module) (`set(inspect.signature(SFTConfig).parameters)` is judged by signature_filters)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset") \
            and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return []
    elements = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return elements if len(elements) == len(node.elts) else []


def project_declares_or_sets(config_path: str | Path, keys: Sequence[str]) -> bool:
    """The project declares one of *keys* as a field of its own or sets one in code (`args.save_steps = ...`, a
    `generation_batch_size=` keyword), which the config file alone does not show; False for a config not on disk."""
    path = Path(config_path)
    if not path.is_file():
        return False
    declared = project_fields(path)
    assigned = re.compile(rf"\b(?:{'|'.join(map(re.escape, keys))})\s*=(?!=)")
    return any(k in declared for k in keys) or code_matches(project_root(path), assigned)


def code_matches(root: Path, pattern: re.Pattern) -> bool:
    """Whether any of the project's Python files (under *root*) matches *pattern*."""
    return code_match_at(root, pattern) is not None


def code_match_at(root: Path, pattern: re.Pattern) -> str | None:
    """'file:line' (relative to *root*) of the first match of *pattern* in the project's Python files, outside
    comments; None."""
    for file in python_files(root):
        text = source_text(file)
        for found in pattern.finditer(text):
            if not commented_out(text, found.start()):
                return f"{file.relative_to(root).as_posix()}:{text.count(chr(10), 0, found.start()) + 1}"
    return None


def commented_out(text: str, position: int) -> bool:
    """Whether *position* in Python source *text* lies in a comment: a `#` before it on its line, outside the
    line's string literals (code switched off, `# grpo_config = GRPOConfig(**cfg)`, reads and calls nothing)."""
    start = text.rfind("\n", 0, position) + 1
    quote = ""
    for char in text[start:position]:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#":
            return True
    return False


def source_text(file: Path) -> str:
    """*file*'s text; '' for a file that is unreadable, too large or not a regular file."""
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:  # a FIFO named x.py is never read
            return ""
        return file.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return ""


def read_by_project_code(diagnostics: list, config_path: str | Path, framework: str, *,
                         taken_out: bool = False) -> list:
    """Unknown keys that are no near miss of a known one, where the project's own Python reads them from the config
    (a launcher's `image:`, `gpu:` it pops before axolotl sees the file): SP407 notes naming where. For a framework
    that ignores extra keys (axolotl's pydantic models drop them), so the key is the project's, not a lost setting.
    With *taken_out*, only keys the code removes by name (`config.pop("modelopt", None)`, `del cfg["modelopt"]`): for
    a framework that refuses extra keys, a key merely read would still reach it."""
    unknown = [d.key for d in diagnostics if d.kind == "unknown_key" and not d.suggestion]
    reads = (project_pops if taken_out else project_reads)(config_path, unknown) if unknown else {}
    if not reads:
        return diagnostics
    from dataclasses import replace

    return [replace(d, kind="unread_key",
                    message=f"'{d.key}' is not a key of {framework}'s; the project's script reads it from the config "
                            f"({reads[d.key]})")
            if d.kind == "unknown_key" and not d.suggestion and d.key in reads else d for d in diagnostics]


MOVED_KINDS = frozenset({"removed_key", "renamed_key", "deprecated_key"})


def renamed_by_project(diagnostics: list, config_path: str | Path) -> list:
    """Moved keys the project's own code renames before its parser sees them: a literal `"evaluation_strategy":
    "eval_strategy"` mapping in its Python (SeanYHan888/SimPO's H4ArgumentParser._legacy_key_aliases, applied to
    the YAML before parse_dict), or a `cfg["eval_strategy"] = cfg.pop("evaluation_strategy")`. SP407 notes that
    say where; the key reaches the framework under its new name."""
    moved = {(d.key, d.suggestion) for d in diagnostics if d.kind in MOVED_KINDS and d.suggestion
             and IDENTIFIER.match(d.key) and IDENTIFIER.match(d.suggestion)}
    path = Path(config_path)
    if not moved or not path.is_file():
        return diagnostics
    where = _renames_under(str(project_root(path)), frozenset(moved))
    if not where:
        return diagnostics
    from dataclasses import replace

    return [replace(d, kind="unread_key", suggestion=None, value_change=None,
                    message=f"'{d.key}' is renamed '{d.suggestion}' by the project's own code before its parser reads "
                            f"the file ({where[d.key, d.suggestion]}): the project's script reads it as "
                            f"'{d.suggestion}'")
            if (d.key, d.suggestion) in where and d.kind in MOVED_KINDS else d for d in diagnostics]


@lru_cache(maxsize=64)
def _renames_under(root: str, moved: frozenset[tuple[str, str]]) -> dict[tuple[str, str], str]:
    # a mapping `"evaluation_strategy": "eval_strategy"`, or a move
    # `cfg["eval_strategy"] = cfg.pop("evaluation_strategy")` (cenourin/graphix-t5-scibench's train.py parse_config)
    patterns = {pair: re.compile(rf"[\"']{pair[0]}[\"']\s*:\s*[\"']{pair[1]}[\"']|\[\s*[\"']{pair[1]}[\"']\s*\]\s*=\s*"
                                 rf"[\w.]+\.pop\(\s*[\"']{pair[0]}[\"']") for pair in moved}
    found: dict[tuple[str, str], str] = {}
    for file in python_files(Path(root)):
        text = source_text(file)
        for pair, pattern in patterns.items():
            m = pattern.search(text) if pair not in found else None
            if m:
                found[pair] = f"{file.relative_to(root)}:{text.count(chr(10), 0, m.start()) + 1}"
    return found


def _is_pydantic_model(base: ast.expr) -> bool:
    """A pydantic model's fields are config keys too: axolotl's plugins declare their arguments as
    `class MedusaArgs(BaseModel)` (src/axolotl/integrations/*/args.py), merged into the schema when listed
    under `plugins:`."""
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return name == "BaseModel"


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "dataclass"


@dataclass(frozen=True)
class Fork:
    """The project's own packaging names it as a framework package: a fork (or an old copy) of that framework."""

    package: str  # normalised: "llamafactory", "axolotl", "trl", "torchtune"
    source: str  # "setup.py:40"
    installed: str = ""  # not this repository but another one the project installs the framework from (owner/name)


def project_name(config_path: str | Path) -> str | None:
    """The name the config's project gives itself in pyproject.toml or setup.py (normalised), or None."""
    found = _own_name(config_path)
    return found[0] if found else None


def framework_fork(config_path: str | Path) -> Fork | None:
    """The framework this config's project *is*, by the name its setup.py / pyproject.toml gives it (LLaMA-Factory
    forks keep name="llamafactory", an axolotl checkout name="axolotl"); None for a project of its own."""
    from seqprof.config.pins import FRAMEWORKS

    found = _own_name(config_path) or _framework_source(config_path)
    return Fork(*found) if found and found[0] in FRAMEWORKS else None


def vendored_checkout(config_path: str | Path, package: str) -> Path | None:
    """The folder below the project root (at most two down) that is a checkout of framework *package*: its own
    pyproject.toml or setup.py names it so and the package's folder sits beside (shawnricecake/Heima's
    torchtune_pkg/torchtune, which its README installs with `pip install -e .`). Its source, not the release's, is
    what `import torchtune` runs."""
    path = Path(config_path)
    if not path.is_file():
        return None
    root = project_root(path)
    for folder in sorted({*root.glob("*/"), *root.glob("*/*/")}):
        if folder.name in SKIPPED_FOLDERS or folder.name.startswith(".") or not (folder / package).is_dir():
            continue
        found = _packaged_name(folder)
        if found and found[0] == package:
            return folder
    return None


# a folder of each framework's own source, in its repository (a project's scripts folder named trl/ is not one)
FRAMEWORK_SOURCE = {"axolotl": "src/axolotl/utils", "llamafactory": "src/llamafactory/hparams",
                    "torchtune": "torchtune/modules", "trl": "trl/trainer"}


def _framework_source(config_path: str | Path) -> tuple[str, str] | None:
    """(package, folder) when the project root holds a framework's own package source (selalipop/axolotl's
    src/axolotl/utils/schemas/datasets.py, with no packaging file beside it): the repository is that framework."""
    path = Path(config_path)
    if not path.is_file():
        return None
    root = project_root(path)
    for package, folder in FRAMEWORK_SOURCE.items():
        source = root / folder
        if source.is_dir() and any(source.rglob("*.py")):
            return package, folder
    return None


def _own_name(config_path: str | Path) -> tuple[str, str] | None:
    """(normalised name, 'setup.py:40') from the project root's pyproject.toml, else its setup.py."""
    path = Path(config_path)
    return _packaged_name(project_root(path)) if path.is_file() else None


def _packaged_name(folder: Path) -> tuple[str, str] | None:
    """(normalised name, 'setup.py:40') that *folder*'s pyproject.toml, else its setup.py, gives the package."""
    from seqprof.config.pins import normalize

    for name, reader in (("pyproject.toml", _pyproject_name), ("setup.py", _setup_py_name)):
        file = folder / name
        found = reader(file) if file.is_file() else None
        if found:
            return normalize(found[0]), f"{name}:{found[1]}"
    return None


def _pyproject_name(file: Path) -> tuple[str, int] | None:
    from seqprof.config.pin_files import parse_toml

    try:
        text = file.read_text(encoding="utf-8", errors="replace")
        data = parse_toml(text)
    except (OSError, ValueError):
        return None
    name = data.get("project", {}).get("name") or data.get("tool", {}).get("poetry", {}).get("name")
    if not isinstance(name, str):
        return None
    line = next((i for i, row in enumerate(text.splitlines(), 1) if row.strip().startswith("name")), 1)
    return name, line


def _setup_py_name(file: Path) -> tuple[str, int] | None:
    """setup(name="...") written literally (the file is parsed, never run)."""
    tree = parsed_module(file)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup":
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    return kw.value.value, kw.value.lineno
    return None


def read_by_own_copy(diagnostics: list, config_path: str | Path, package: str, framework: str,
                     own_argument=lambda key: False, older_copy: bool = False) -> list:
    """A framework's key diagnostics as the config's repository reads them: by its own dataclasses where their
    Python files are beside the config (read_by_project), else, in a repository that is *package* itself, as that
    copy's possible arguments (read_by_fork). A copy older than every release seqprof knows (*older_copy*) is read
    as such whatever classes it stages: z7ye's axolotl 0.3.0 checkout ships its trainer's TrainingArguments
    subclass, not a config schema, and that release's utils/config.py reads eval_table_max_new_tokens."""
    if not diagnostics:
        return diagnostics
    fields = project_fields(config_path)
    if not fields or older_copy:
        diagnostics = read_by_fork(diagnostics, framework_fork(config_path), package, framework, own_argument)
    return read_by_project(diagnostics, fields, framework, config_path)


def read_by_fork(diagnostics: list, fork: Fork | None, package: str, framework: str,
                 own_argument=lambda key: False) -> list:
    """Unknown keys, and removals of the framework's own arguments (*own_argument*), in a repository that is
    *framework* itself (a fork, or a copy older than every release seqprof knows), or that installs it from a fork's
    repository, become SP407 notes: that copy's own arguments may read them. For when its Python files are not
    beside the config; where they are, project_fields reads that copy's arguments and an unknown key stays
    unknown."""
    if fork is None or fork.package != package:
        return diagnostics
    from dataclasses import replace

    out = []
    for d in diagnostics:
        if d.kind == "unknown_key":
            said = f"'{d.key}' is not an argument of any {framework} release seqprof knows"
        elif d.kind in ("deprecated_key", "removed_key", "renamed_key") and own_argument(d.key):
            said = f"'{d.key}' is an argument some {framework} releases had"  # which one this copy is, is unknown
        else:
            out.append(d)
            continue
        where = (f"the project installs {framework} from a fork, {fork.installed} ({fork.source.split(' (')[0]}), "
                 "at a commit seqprof cannot see: the fork's own arguments may read it") if fork.installed else \
            (f"this repository is {framework} itself ({fork.source} names it '{fork.package}'), at a version seqprof "
             "cannot see: its own copy may read it")
        out.append(replace(d, kind="unread_key", suggestion=None, value_change=None, message=f"{said}, and {where}"))
    return out


PROJECT_READ_KINDS = frozenset({"unknown_key", "unread_key", "deprecated_key", "renamed_key", "removed_key",
                                "upcoming_deprecation", "premature_key"})


# TrainingArguments fields only scripts read, never the Trainer (transformers 4.57's run_*.py examples check
# overwrite_output_dir themselves): dropped, or kept by a project's own class that nothing reads, they lose nothing
UNREAD_BY_THE_TRAINER = frozenset({"overwrite_output_dir"})


# the defaults of the names transformers renamed TrainingArguments fields to (training_args.py, 4.41 to 5.25): an old
# name a project re-declares and nothing reads loses nothing when it holds the new field's default
RENAMED_TO_DEFAULTS = {"eval_strategy": "no", "warmup_steps": 0}


def _holds_the_default(diagnostic, data: Mapping | None) -> bool:
    """The file writes the renamed key's value as the new field's default (`evaluation_strategy: "no"`)."""
    if data is None or diagnostic.suggestion not in RENAMED_TO_DEFAULTS:
        return False
    value, default = data.get(diagnostic.key), RENAMED_TO_DEFAULTS[diagnostic.suggestion]
    if isinstance(default, str):
        return isinstance(value, str) and value.lower() == default
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default


def read_by_project(diagnostics: list, fields: dict[str, ProjectField], framework: str,
                    config_path: str | Path | None = None, data: Mapping | None = None) -> list:
    """Key diagnostics on top-level keys the project's own dataclasses declare, made SP407 notes that say where:
    the project's script parses them, whatever *framework* removed or never had. Except a field transformers
    dropped that the project re-declares on its TrainingArguments subclass (Yumeio's `warmup_ratio`, kept for
    its default) and that nothing in the project (*config_path*'s) reads: the parser takes the key, and the
    Trainer, which no longer reads it, drops the setting without a word."""
    from dataclasses import replace

    parsed_into = None
    if config_path is not None and any(d.kind in PROJECT_READ_KINDS and d.key in fields for d in diagnostics):
        from seqprof.config.parser_classes import fields_parsed_into

        # the script that parses the file is the one whose classes take its keys, all of them, not only those found
        keys = [k for k in data if isinstance(k, str)] if data is not None else [d.key for d in diagnostics]
        parsed_into = fields_parsed_into(config_path, keys)
    out = []
    for d in diagnostics:
        found = fields.get(d.key) if d.kind in PROJECT_READ_KINDS else None
        if found is not None and parsed_into is not None:  # the declaration in a class the script's parser fills
            found = _declared_in(d.key, parsed_into.get(d.key), found, config_path)
        lost = found is not None and config_path is not None and _lost_on_training_arguments(d, found, config_path)
        if lost and d.key in UNREAD_BY_THE_TRAINER:  # hunwenpinghao's CustomTrainingArguments.overwrite_output_dir
            gone = d.message.replace(": it breaks on that upgrade", ": the field is gone on that upgrade")
            out.append(replace(d, kind="unread_key", suggestion=None, value_change=None,
                               message=f"{gone}; but the project's own {found.where()} re-declares it on "
                                       "transformers' TrainingArguments, so the parser takes it on every release, and "
                                       "neither the Trainer nor the project's code reads it: removing it changes "
                                       "nothing"))
            continue
        if lost and _holds_the_default(d, data):  # martinjingyu's evaluation_strategy: "no", eval_strategy's default
            out.append(replace(d, kind="unread_key", suggestion=None, value_change=None,
                               message=f"{d.message}; the project's own {found.where()} re-declares it on "
                                       "transformers' TrainingArguments, so the parser takes it on every release, and "
                                       f"nothing reads it, but its value is {d.suggestion}'s default: where "
                                       "transformers no longer reads it, nothing changes"))
            continue
        if lost:
            kept = d.message.replace(": it breaks on that upgrade", ": the setting is lost on that upgrade")
            out.append(replace(d, message=f"{kept}; the project's own {found.where()} re-declares it on "
                                          "transformers' TrainingArguments, so the parser takes it on every release, "
                                          "but nothing in the project reads it: where transformers no longer does, "
                                          "the setting is lost without a word"))
            continue
        whose = f"{framework}'" if framework.endswith("s") else f"{framework}'s"  # transformers', TRL's
        out.append(d if found is None else replace(
            d, kind="unread_key", suggestion=None, value_change=None,
            message=f"'{d.key}' is a field of the project's own {found.where()}, not of {whose} classes: "
                    "the project's script reads it"))
    return out


def _declared_in(key: str, file: str | None, first: ProjectField, config_path: str | Path) -> ProjectField | None:
    """*key*'s declaration in *file* (None when no class the parser fills declares it); *first*, the project's first
    declaration, where it is that one or *file*'s cannot be read."""
    if file is None:
        return None
    if first.file == file:
        return first
    root = project_root(config_path)
    return next((f for f in dataclass_fields(root / file, root) if f.name == key), first)


def _lost_on_training_arguments(diagnostic, found: ProjectField, config_path: str | Path) -> bool:
    """A removal of a TrainingArguments field that the project re-declares on a TrainingArguments subclass
    and never reads itself (as an attribute, `args.warmup_ratio`, or out of a mapping: project_reads)."""
    from seqprof.config.key_history import KeyHistory

    return (diagnostic.kind in ("removed_key", "deprecated_key", "renamed_key") and found.extends_training_arguments()
            and diagnostic.key in KeyHistory.load().ever("transformers", ["TrainingArguments"])
            and diagnostic.key not in project_reads(config_path, [diagnostic.key], attributes=True))
