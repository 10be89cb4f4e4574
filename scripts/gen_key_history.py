"""Regenerate dialects/keys/key_history.json: when each TRL, transformers, axolotl, LLaMA-Factory and accelerate
config field came and went.

    .venv/bin/python scripts/gen_key_history.py                  # download the wheels, write the file
    .venv/bin/python scripts/gen_key_history.py --check          # exit 1 if the committed file is stale
    .venv/bin/python scripts/gen_key_history.py --wheels DIR     # reuse wheels already downloaded to DIR

The released wheels (``pip download --no-deps --only-binary=:all: trl==X``; the last patch of every minor
release in TRL_VERSIONS / TRANSFORMERS_VERSIONS) are read as zip files and their sources parsed with ``ast``,
never imported, so one environment covers every version:

- transformers: the ``init`` fields of ``TrainingArguments`` (transformers/training_args.py), what
  HfArgumentParser turns into keys;
- trl: every dataclass named in TRL_CLASSES, or ending in ``Config`` and deriving from TrainingArguments,
  wherever it lives (trl/trainer, trl/experimental), with the fields of its TRL base classes, minus the
  fields of the newest TrainingArguments (as keys/trl_configs.json, which came from importing the classes).

- axolotl: the fields of its pydantic ``AxolotlInputConfig`` and every model class it derives from, by their
  YAML names (a ``Field(alias=...)`` is the key), from src/axolotl/utils/config/models/input/v0_4_1/__init__.py
  up to 0.7 and src/axolotl/utils/schemas/*.py from 0.8 (the last patch of each minor release, sdists where
  PyPI has no wheel); the plugins' arguments are not in the schema and stay as keys/axolotl.json lists them;
  and the keys of the sections a pydantic model of their own validates (AXOLOTL_SECTION_MODELS: fsdp_config from
  0.13, special_tokens, trl, vllm; AXOLOTL_DATASET_MODELS for each `datasets:` entry), which drop any other key;
- accelerate: the fields of ClusterConfig and SageMakerConfig (with BaseConfig's), which ``accelerate launch
  --config_file`` builds from the file and which refuse any other top-level key;
- llamafactory: the dataclasses of src/llamafactory/hparams/*.py that HfArgumentParser reads (LLAMAFACTORY_CLASSES,
  with their LLaMA-Factory bases; TrainingArguments' own fields, not transformers' Seq2SeqTrainingArguments it
  derives from, which are TrainingArguments keys judged by the transformers history), every release (its
  patches changed the fields), and per release the transformers range its METADATA requires, so a
  TrainingArguments key is judged against the transformers releases that LLaMA-Factory release runs with;
  TRL's transformers range per release too (trl 0.12 requires transformers<4.47).

Per field (and per class, under "versions") the file holds spans ``[first version that has it, first later
version that lacks it]`` (null: still present) over the version list beside them, so `seqprof lint` knows which
pinned versions take a key (seqprof/config/key_history.py reads it).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "key_history.json"
COMMAND = "python scripts/gen_key_history.py"

# last patch of each minor release on PyPI (pip index versions trl / transformers)
TRL_VERSIONS = (
    "0.8.6", "0.9.6", "0.10.1", "0.11.4", "0.12.2", "0.13.0", "0.14.0", "0.15.2", "0.16.1", "0.17.0", "0.18.2",
    "0.19.1", "0.20.0", "0.21.0", "0.22.2", "0.23.1", "0.24.0", "0.25.1", "0.26.2", "0.27.2", "0.28.0", "0.29.1",
    "1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.1", "1.6.0", "1.7.1", "1.8.0", "1.9.2", "1.10.0", "1.11.0",
    "1.12.0", "1.13.0", "1.14.2", "1.15.0", "1.16.0",
)
TRANSFORMERS_VERSIONS = (
    "4.36.2", "4.37.2", "4.38.2", "4.39.3", "4.40.2", "4.41.2", "4.42.4", "4.43.4", "4.44.2", "4.45.2", "4.46.3",
    "4.47.1", "4.48.3", "4.49.0", "4.50.3", "4.51.3", "4.52.4", "4.53.3", "4.54.1", "4.55.4", "4.56.2", "4.57.6",
    "5.0.0", "5.1.0", "5.2.0", "5.3.0", "5.4.0", "5.5.4", "5.6.2", "5.7.0", "5.8.1", "5.9.0", "5.10.4", "5.11.0",
    "5.12.1", "5.13.1", "5.14.1", "5.15.1", "5.16.1", "5.17.0", "5.18.0", "5.19.0", "5.20.2", "5.21.1", "5.22.2",
    "5.23.0", "5.24.0", "5.25.0",
)
# last patch of each minor release with the pydantic schema (pip index versions axolotl: 0.5.0 is the oldest on PyPI)
AXOLOTL_VERSIONS = ("0.5.2", "0.6.0", "0.7.0", "0.8.1", "0.9.2", "0.10.0", "0.11.0", "0.12.2", "0.13.2", "0.14.0",
                    "0.15.0", "0.16.1", "0.17.0", "0.18.0", "0.19.0")
AXOLOTL_SCHEMA_DIRS = ("axolotl/utils/config/models/input/v0_4_1/", "axolotl/utils/schemas/")
# every release (pip index versions llamafactory): its patches add and drop arguments, so each is a step of its own
LLAMAFACTORY_VERSIONS = ("0.7.1", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0", "0.9.1", "0.9.2", "0.9.3", "0.9.4",
                         "0.9.5")
# the dataclasses llamafactory/hparams/parser.py hands HfArgumentParser (each with its LLaMA-Factory bases)
# last patch of each minor release (pip index versions accelerate) from 0.20, the config classes of `accelerate launch
# --config_file` (accelerate/commands/config/config_args.py: ClusterConfig, or SageMakerConfig when compute_environment
# is AMAZON_SAGEMAKER, each with BaseConfig's fields), which refuse any other top-level key
ACCELERATE_VERSIONS = ("0.20.3", "0.21.0", "0.22.0", "0.23.0", "0.24.1", "0.25.0", "0.26.1", "0.27.2", "0.28.0",
                       "0.29.3", "0.30.1", "0.31.0", "0.32.1", "0.33.0", "0.34.2", "1.0.1", "1.1.1", "1.2.1", "1.3.0",
                       "1.4.0", "1.5.2", "1.6.0", "1.7.0", "1.8.1", "1.9.0", "1.10.1", "1.11.0", "1.12.0", "1.13.0",
                       "1.14.0", "1.15.0", "1.16.0")
ACCELERATE_CLASSES = ("ClusterConfig", "SageMakerConfig")
LLAMAFACTORY_CLASSES = ("ModelArguments", "DataArguments", "TrainingArguments", "FinetuningArguments",
                        "GeneratingArguments", "EvaluationArguments")
# the environment a requirement's markers are read in (METADATA may give Linux and macOS different ranges)
MARKER_ENV = {"sys_platform": "linux", "platform_system": "Linux", "python_version": "3.11",
              "python_full_version": "3.11.9", "implementation_name": "cpython", "extra": ""}
# the argument classes TRL's scripts parse a --config YAML into besides the trainer config
TRL_CLASSES = ("ModelConfig", "ScriptArguments", "GRPOScriptArguments", "RLOOScriptArguments",
               "DatasetMixtureConfig")


def wheel(package: str, version: str, directory: Path, *, sdist: bool = False) -> Path:
    """The wheel of package==version in *directory* (or, with *sdist*, its sdist when PyPI has no wheel),
    downloaded there first if missing."""
    stem = package.replace("-", "_")

    def found() -> list[Path]:
        return sorted(directory.glob(f"{stem}-{version}-*.whl")) + sorted(directory.glob(f"{stem}-{version}.tar.gz"))
    if not found():
        binary = [] if sdist else ["--only-binary=:all:"]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", *binary, "-q",
                        f"{package}=={version}", "-d", str(directory)], check=True)
    return found()[0]


def package_files(archive: Path, prefix: str) -> dict[str, bytes]:
    """The files of a wheel or an sdist whose path inside the installed package starts with *prefix*
    ('axolotl/utils/schemas/'); an sdist's 'axolotl-0.5.2/src/' is dropped."""
    out = {}
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            return {n: z.read(n) for n in z.namelist() if n.startswith(prefix)}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            inner = re.sub(r"^[^/]+/(src/)?", "", member.name)
            if member.isfile() and inner.startswith(prefix):
                out[inner] = tar.extractfile(member).read()
    return out


def required_range(archive: Path, requirement: str) -> str:
    """The specifier the release's metadata (wheel METADATA, sdist PKG-INFO) gives *requirement*, markers read
    for Linux / Python 3.11 and extras left out; '' when it names no version."""
    from packaging.markers import Marker
    from packaging.requirements import Requirement

    with zipfile.ZipFile(archive) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            if req.name == requirement and (req.marker is None or Marker(str(req.marker)).evaluate(MARKER_ENV)):
                return str(req.specifier)
    return ""


def _decorated_dataclass(node: ast.ClassDef) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _init_false(value: ast.expr | None) -> bool:
    """``field(init=False, ...)``: not a constructor argument, so not a key HfArgumentParser reads."""
    return isinstance(value, ast.Call) and any(
        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in value.keywords)


def _fields(node: ast.ClassDef, *, init_only: bool) -> list[str]:
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if "ClassVar" in ast.unparse(stmt.annotation) or (init_only and _init_false(stmt.value)):
                continue
            out.append(stmt.target.id)
    return out


def _base_names(node: ast.ClassDef, aliases: Mapping[str, str]) -> list[str]:
    names = []
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
        if name:
            names.append(aliases.get(name, name))
    return names


def training_arguments_fields(whl: Path) -> set[str]:
    """The init fields of TrainingArguments in one transformers wheel."""
    with zipfile.ZipFile(whl) as z:
        tree = ast.parse(z.read("transformers/training_args.py"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TrainingArguments":
            return set(_fields(node, init_only=True))
    raise SystemExit(f"{whl.name}: no TrainingArguments class")


# TrainingArguments fields whose value TrainingArguments.__post_init__ turns into an Enum member
# (`self.optim = OptimizerNames(self.optim)`, `self.lr_scheduler_type = SchedulerType(...)`): a name the release
# lacks is a ValueError before anything loads
TRANSFORMERS_ENUM_FIELDS = {"optim": "OptimizerNames", "lr_scheduler_type": "SchedulerType"}


def enum_members(node: ast.ClassDef) -> set[str]:
    """The string values of a str Enum class body (`adamw_hf = "adamw_hf"`)."""
    return {stmt.value.value for stmt in node.body if isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)}


def transformers_enum_values(whl: Path) -> dict[str, set[str]]:
    """field -> the string members of the Enum TRANSFORMERS_ENUM_FIELDS types it by, in one transformers wheel
    (wherever the class lives: training_args.py, trainer_utils.py)."""
    wanted = {cls: field for field, cls in TRANSFORMERS_ENUM_FIELDS.items()}
    out: dict[str, set[str]] = {}
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if not (name.startswith("transformers/") and name.endswith(".py")):
                continue
            source = z.read(name)
            if not any(f"class {cls}(".encode() in source for cls in wanted):
                continue
            for node in ast.parse(source).body:
                if isinstance(node, ast.ClassDef) and node.name in wanted:
                    out[wanted[node.name]] = enum_members(node)
    missing = set(TRANSFORMERS_ENUM_FIELDS) - set(out)
    if missing:
        raise SystemExit(f"{whl.name}: no Enum for {sorted(missing)}")
    return out


def trl_class_fields(whl: Path, newest_ta: set[str]) -> dict[str, set[str]]:
    """Fields per TRL config/argument class in one trl wheel (TRL bases resolved by name, newest TA fields off)."""
    defs: list[tuple[str, list[str], list[str], bool]] = []  # name, bases, own fields, is a dataclass
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if not (name.startswith("trl/") and name.endswith(".py")) or "vllm_serve" in name:
                continue  # `trl vllm-serve` has a ScriptArguments of its own, not read from a training config
            try:
                tree = ast.parse(z.read(name))
            except SyntaxError:
                continue
            aliases = {a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                       for a in n.names if a.asname}
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    defs.append((node.name, _base_names(node, aliases), _fields(node, init_only=False),
                                 _decorated_dataclass(node)))
    by_name: dict[str, list[tuple[list[str], list[str], bool]]] = {}
    for name, bases, own, is_dc in defs:
        by_name.setdefault(name, []).append((bases, own, is_dc))

    def resolve(name: str, seen: frozenset[str]) -> tuple[set[str], bool]:
        """(fields, derives from TrainingArguments) of every definition of *name*, merged."""
        fields: set[str] = set()
        is_args = False
        for bases, own, is_dc in by_name.get(name, ()):
            if is_dc:
                fields |= set(own)
            for base in bases:
                if base == "TrainingArguments":
                    is_args = True
                elif base in by_name and base not in seen:
                    f, a = resolve(base, seen | {base})
                    fields |= f
                    is_args = is_args or a
        return fields, is_args

    out = {}
    for name in sorted(by_name):
        fields, is_args = resolve(name, frozenset({name}))
        dataclass_somewhere = any(is_dc for _, _, is_dc in by_name[name]) or bool(fields)
        if name in TRL_CLASSES or (name.endswith("Config") and is_args and dataclass_somewhere):
            out[name] = fields - newest_ta
    return out


def _model_keys(node: ast.ClassDef) -> list[str]:
    """The keys a pydantic model reads: its annotated fields by their ``Field(alias=...)`` name where they have one,
    and by their own name (axolotl's config sets populate_by_name; no ClassVar, no private ``_x``)."""
    out = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(stmt.annotation) or stmt.target.id.startswith("_"):
            continue
        keywords = getattr(stmt.value, "keywords", ())
        alias = [k.value.value for k in keywords if k.arg == "alias" and isinstance(k.value, ast.Constant)]
        out.append(alias[0] if alias else stmt.target.id)
        if alias:  # AxolotlInputConfig's populate_by_name reads the field's own name too (type_of_model)
            out.append(stmt.target.id)
        for k in keywords:  # validation_alias=AliasChoices("fsdp_version", "version"): each name is read
            if k.arg == "validation_alias" and isinstance(k.value, ast.Call):
                out.extend(a.value for a in k.value.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return out


def class_fields(files: Mapping[str, bytes], wanted: Iterable[str], *, pydantic: bool) -> dict[str, set[str]]:
    """Keys of each *wanted* class defined in *files*, with those of every base class the same files define (a
    base from elsewhere, e.g. transformers' Seq2SeqTrainingArguments, is left out); classes absent are left out."""
    defs: dict[str, list[tuple[list[str], list[str]]]] = {}
    for name, text in sorted(files.items()):
        if not name.endswith(".py"):
            continue
        tree = ast.parse(text)
        aliases = {a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                   for a in n.names if a.asname}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                own = _model_keys(node) if pydantic else _fields(node, init_only=True)
                defs.setdefault(node.name, []).append((_base_names(node, aliases), own))

    def resolve(name: str, seen: frozenset[str]) -> set[str]:
        out: set[str] = set()
        for bases, own in defs.get(name, ()):
            out |= set(own)
            for base in bases:
                if base not in seen:
                    out |= resolve(base, seen | {base})
        return out

    return {name: resolve(name, frozenset({name})) for name in wanted if name in defs}


def axolotl_fields(archive: Path) -> set[str]:
    """The top-level keys of AxolotlInputConfig (with its mixins) in one axolotl release."""
    for prefix in reversed(AXOLOTL_SCHEMA_DIRS):
        files = package_files(archive, prefix)
        found = class_fields(files, ["AxolotlInputConfig"], pydantic=True)
        if found:
            return found["AxolotlInputConfig"]
    raise SystemExit(f"{archive.name}: no AxolotlInputConfig under {' or '.join(AXOLOTL_SCHEMA_DIRS)}")


# sections of an axolotl config that a pydantic model of their own validates (it drops any key it lacks)
AXOLOTL_SECTION_MODELS = {"fsdp_config": "FSDPConfig", "special_tokens": "SpecialTokensConfig", "trl": "TRLConfig",
                          "vllm": "VllmConfig"}
# the models a `datasets:` / `test_datasets:` / `pretraining_dataset:` entry is validated as (each drops any key it
# lacks; validate_config picks DPODataset for rl: dpo, KTODataset for kto, SFTDataset otherwise)
AXOLOTL_DATASET_MODELS = ("SFTDataset", "DPODataset", "KTODataset", "StepwiseSupervisedDataset", "SyntheticDataset",
                          "PretrainingDataset")


def axolotl_section_fields(archive: Path) -> dict[str, set[str]]:
    """{model: its keys} for each AXOLOTL_SECTION_MODELS model one release defines (FSDPConfig from 0.13: before,
    fsdp_config was a free dict handed to accelerate)."""
    found: dict[str, set[str]] = {}
    for prefix in AXOLOTL_SCHEMA_DIRS:
        found.update(class_fields(package_files(archive, prefix), [*AXOLOTL_SECTION_MODELS.values(),
                                                                   *AXOLOTL_DATASET_MODELS], pydantic=True))
    return found


# axolotl fields typed by a str Enum, which pydantic refuses any other value of: field -> the Enum class
AXOLOTL_ENUM_FIELDS = {"chat_template": "ChatTemplate", "rl": "RLType"}


def axolotl_schema_files(archive: Path) -> dict[str, bytes]:
    """The files of one axolotl release under either schema folder (AXOLOTL_SCHEMA_DIRS)."""
    files: dict[str, bytes] = {}
    for prefix in AXOLOTL_SCHEMA_DIRS:
        files.update(package_files(archive, prefix))
    return files


def axolotl_enum_values(archive: Path) -> dict[str, set[str]]:
    """field -> the values its Enum class allows in one axolotl release (the class's string members)."""
    files = axolotl_schema_files(archive)
    members: dict[str, set[str]] = {}
    for name, text in sorted(files.items()):
        if name.endswith(".py"):
            for node in ast.parse(text).body:
                if isinstance(node, ast.ClassDef) and node.name in AXOLOTL_ENUM_FIELDS.values():
                    members.setdefault(node.name, set()).update(enum_members(node))
    return {field: members[enum] for field, enum in AXOLOTL_ENUM_FIELDS.items() if enum in members}


# the name the "values" table gives the optimizers axolotl builds itself (any other name goes to TrainingArguments'
# optim, which takes the members of the transformers release the axolotl release requires)
AXOLOTL_OWN_OPTIMIZERS = "optimizer"


def axolotl_own_optimizers(archive: Path) -> set[str]:
    """The `optimizer:` names one axolotl release takes besides transformers' OptimizerNames: the strings of the
    Literal in the field's annotation (0.5-0.7) or the members of CustomSupportedOptimizers (from 0.8)."""
    files = axolotl_schema_files(archive)
    names: set[str] = set()
    custom: set[str] = set()  # CustomSupportedOptimizers' members
    typed_by_custom = False  # whether the field's annotation names that Enum
    for name, text in sorted(files.items()):
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.name == "CustomSupportedOptimizers":
                custom = enum_members(node)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id == "optimizer":
                for part in ast.walk(node.annotation):
                    if isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name) \
                            and part.value.id == "Literal":
                        names |= {c.value for c in ast.walk(part.slice) if isinstance(c, ast.Constant)
                                  and isinstance(c.value, str)}
                    typed_by_custom |= isinstance(part, ast.Name) and part.id == "CustomSupportedOptimizers"
    if typed_by_custom:
        names |= custom
    if not names:
        raise SystemExit(f"{archive.name}: no optimizer field with its own names")
    return names


def axolotl_requires(archive: Path, requirement: str) -> str:
    """The specifier one axolotl release gives *requirement*: its wheel's METADATA, or the sdist's
    requirements.txt (which its setup.py reads)."""
    if archive.suffix == ".whl":
        return required_range(archive, requirement)
    from packaging.requirements import Requirement

    for line in package_files(archive, "requirements.txt").get("requirements.txt", b"").decode().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and re.match(rf"{re.escape(requirement)}\b", line):
            return str(Requirement(line).specifier)
    return ""


# the name the "values" table gives the bare `type:` words of a `datasets:` entry
AXOLOTL_DATASET_TYPE = "datasets.type"
_BASE_TYPE = re.compile(r"""\b(?:d_base_type|dataset_base_type)\s*==\s*["']([\w-]+)["']""")
_HANDLERS = re.compile(r"DATASET_HANDLERS\s*=\s*\{(.*?)\}", re.S)


def axolotl_dataset_types(archive: Path) -> set[str]:
    """The bare `type:` words a datasets entry may have in one axolotl release: the modules of
    axolotl/prompt_strategies/ (prompt_strategies/__init__.py load() imports `.<type>`) and the base types
    utils/data/ handles itself (alpaca, explainchoice, ... : the `d_base_type == "x"` chain, DATASET_HANDLERS from
    0.10); anything else ends in "unhandled prompt tokenization strategy"."""
    modules = {name.split("/")[2].removesuffix(".py") for name in package_files(archive, "axolotl/prompt_strategies/")
               if name.count("/") >= 2 and name.endswith(".py")}
    handled: set[str] = set()
    for name, text in package_files(archive, "axolotl/utils/data/").items():
        if name.endswith(".py"):
            source = text.decode()
            handled |= set(_BASE_TYPE.findall(source))
            for block in _HANDLERS.findall(source):
                handled |= set(re.findall(r"""["']([\w-]+)["']\s*:""", block))
    return (modules - {"__init__"}) | handled


# the name the llamafactory "values" table gives the chat templates a release registers
LLAMAFACTORY_TEMPLATE = "template"
REGISTER_CALLS = ("register_template", "_register_template")


def llamafactory_templates(archive: Path) -> set[str]:
    """The `template:` names one LLaMA-Factory release registers: every register_template(name=...) call of
    llamafactory/data/template.py (get_template_and_fix_tokenizer raises "Template X does not exist." for others)."""
    found: set[str] = set()
    for text in package_files(archive, "llamafactory/data/template.py").values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in REGISTER_CALLS:
                name = next((k.value for k in node.keywords if k.arg == "name"), node.args[0] if node.args else None)
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found.add(name.value)
    return found


def launch_arguments(files: Mapping[str, bytes]) -> set[str]:
    """The dest of each `--option` launch_command_parser adds: `accelerate launch` copies a config file's
    deepspeed_config / fsdp_config entries onto these (fsdp_config's with an fsdp_ prefix), and nothing reads others."""
    out: set[str] = set()
    for text in files.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                dest = next((k.value.value for k in node.keywords if k.arg == "dest"
                             and isinstance(k.value, ast.Constant)), None)
                longs = [n for n in names if n.startswith("--")]
                if dest or longs:
                    out.add(dest or longs[0][2:].replace("-", "_"))
    return out


def history(versions: Iterable[str], by_version: Mapping[str, Mapping[str, set[str]]]) -> dict[str, dict]:
    """class -> {"versions": spans of the class, "fields": spans per field} over *versions*."""
    versions = list(versions)
    names = sorted({c for classes in by_version.values() for c in classes})
    out = {}
    for cls in names:
        present = {v: by_version[v][cls] for v in versions if cls in by_version[v]}
        out[cls] = {"versions": intervals(versions, {v: {"*"} for v in present})["*"],
                    "fields": intervals(versions, present)}
    return out


def intervals(versions: Iterable[str], present: Mapping[str, set[str]]) -> dict[str, list[list[str | None]]]:
    """field -> [[first version with it, first later version without it (None: still there)], ...]."""
    out: dict[str, list[list[str | None]]] = {}
    for version in versions:
        fields = present.get(version, set())
        for name in sorted(fields | set(out)):
            spans = out.setdefault(name, [])
            open_span = bool(spans) and spans[-1][1] is None
            if name in fields and not open_span:
                spans.append([version, None])
            elif name not in fields and open_span:
                spans[-1][1] = version
    return {name: spans for name, spans in sorted(out.items())}


def build(wheels: Path) -> dict:
    ta_by_version = {v: training_arguments_fields(wheel("transformers", v, wheels)) for v in TRANSFORMERS_VERSIONS}
    ta_values = {v: transformers_enum_values(wheel("transformers", v, wheels)) for v in TRANSFORMERS_VERSIONS}
    newest_ta = ta_by_version[TRANSFORMERS_VERSIONS[-1]]
    trl = {v: wheel("trl", v, wheels) for v in TRL_VERSIONS}
    trl_by_version = {v: trl_class_fields(whl, newest_ta) for v, whl in trl.items()}
    axolotl = {v: wheel("axolotl", v, wheels, sdist=True) for v in AXOLOTL_VERSIONS}
    axolotl_by_version = {v: {"AxolotlInputConfig": axolotl_fields(archive), **axolotl_section_fields(archive)}
                          for v, archive in axolotl.items()}
    axolotl_values = {v: {**axolotl_enum_values(archive), AXOLOTL_DATASET_TYPE: axolotl_dataset_types(archive),
                          AXOLOTL_OWN_OPTIMIZERS: axolotl_own_optimizers(archive)}
                      for v, archive in axolotl.items()}
    llamafactory = {v: wheel("llamafactory", v, wheels) for v in LLAMAFACTORY_VERSIONS}
    lf_by_version = {v: class_fields(package_files(whl, "llamafactory/hparams/"), LLAMAFACTORY_CLASSES,
                                     pydantic=False) for v, whl in llamafactory.items()}
    lf_templates = {v: {LLAMAFACTORY_TEMPLATE: llamafactory_templates(whl)} for v, whl in llamafactory.items()}
    accelerate = {v: {**class_fields(package_files(whl, "accelerate/commands/config/"), ACCELERATE_CLASSES,
                                     pydantic=False),
                      "LaunchArguments": launch_arguments(package_files(whl, "accelerate/commands/launch.py"))}
                  for v, whl in ((v, wheel("accelerate", v, wheels)) for v in ACCELERATE_VERSIONS)}
    return {
        "command": COMMAND,
        "source": "released wheels (pip download --no-deps), sources parsed with ast; per field: "
                  "[first version that has it, first later version that lacks it (null: still present)]",
        "transformers": {"versions": list(TRANSFORMERS_VERSIONS), "classes": {
            "TrainingArguments": {"versions": [[TRANSFORMERS_VERSIONS[0], None]],
                                  "fields": intervals(TRANSFORMERS_VERSIONS, ta_by_version)}},
            "values": history(TRANSFORMERS_VERSIONS, ta_values),
            "note": "values: the members of the Enum each TrainingArguments field in TRANSFORMERS_ENUM_FIELDS "
                    "is turned into by __post_init__ (OptimizerNames, SchedulerType)"},
        "trl": {"versions": list(TRL_VERSIONS), "classes": history(TRL_VERSIONS, trl_by_version),
                "requires": {v: {"transformers": required_range(whl, "transformers")} for v, whl in trl.items()},
                "note": f"TRL fields minus transformers {TRANSFORMERS_VERSIONS[-1]} TrainingArguments fields; "
                        "requires: the Requires-Dist range of each release's METADATA (Linux, Python 3.11)"},
        "axolotl": {"versions": list(AXOLOTL_VERSIONS), "classes": history(AXOLOTL_VERSIONS, axolotl_by_version),
                    "values": history(AXOLOTL_VERSIONS, axolotl_values),
                    "requires": {v: {"transformers": axolotl_requires(archive, "transformers")}
                                 for v, archive in axolotl.items()},
                    "note": "AxolotlInputConfig and its mixins (src/axolotl/utils/config/models/input/v0_4_1/ to "
                            "0.7, src/axolotl/utils/schemas/ from 0.8; sdists where PyPI has no wheel), alias names; "
                            "FSDPConfig / SpecialTokensConfig / TRLConfig / VllmConfig: the keys of fsdp_config (a "
                            "pydantic model from 0.13, a free dict before), special_tokens, trl and vllm; "
                            "values: the members of the str Enum each field in AXOLOTL_ENUM_FIELDS is typed by, and "
                            "under datasets.type the bare dataset type words the release handles, under optimizer "
                            "the names it builds itself (any other goes to TrainingArguments' optim); requires: the "
                            "release's METADATA or sdist requirements.txt"},
        "llamafactory": {"versions": list(LLAMAFACTORY_VERSIONS), "step": "patch",
                         "classes": history(LLAMAFACTORY_VERSIONS, lf_by_version),
                         "values": history(LLAMAFACTORY_VERSIONS, lf_templates),
                         "requires": {v: {"transformers": required_range(whl, "transformers")}
                                      for v, whl in llamafactory.items()},
                         "note": "src/llamafactory/hparams/*.py dataclasses with their LLaMA-Factory bases "
                                 "(TrainingArguments: its own fields, not Seq2SeqTrainingArguments'); values: under "
                                 "template the names data/template.py registers; requires: the "
                                 "Requires-Dist range of each release's METADATA (Linux, Python 3.11)"},
        "accelerate": {"versions": list(ACCELERATE_VERSIONS), "classes": history(ACCELERATE_VERSIONS, accelerate),
                       "note": "the dataclasses `accelerate launch --config_file` builds from the file "
                               "(accelerate/commands/config/config_args.py), BaseConfig's fields included; "
                               "LaunchArguments: the dest of each option of launch_command_parser "
                               "(accelerate/commands/launch.py), onto which launch copies the entries of the "
                               "file's deepspeed_config / fsdp_config tables"},
    }


def render(data: dict) -> str:
    """One field per line: small, and a diff shows which key moved."""
    text = json.dumps(data, indent=1)
    # fold every list of plain values, then every list of such lists, onto one line
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    return re.sub(r"\[\s+(\[[^\[\]]*\](?:,\s+\[[^\[\]]*\])*)\s+\]",
                  lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def generate(build_from, out: Path, command: str, description: str, argv: list[str] | None = None) -> int:
    """The command line every wheel-reading generator shares: build from a wheels folder (--wheels, else a
    temporary one), then write *out*, or with --check exit 1 when the committed file differs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--wheels", type=Path, help="folder of downloaded wheels (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.wheels:
        args.wheels.mkdir(parents=True, exist_ok=True)
        data = build_from(args.wheels)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data = build_from(Path(tmp))
    return check_or_write(data, out, command, args.check)


def check_or_write(data: dict, out: Path, command: str, check: bool) -> int:
    """Write *data* to *out*, or with *check* exit 1 when the committed file differs (every generator's ending)."""
    if check:
        if not out.exists() or json.loads(out.read_text()) != data:
            print(f"stale: {out} (run {command})")
            return 1
        return 0
    out.write_text(render(data))
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return generate(build, OUT, COMMAND, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
