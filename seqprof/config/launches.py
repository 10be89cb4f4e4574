"""The commands a project runs a config with, read from its scripts, job files and docs.

A framework's own command line on the file (`axolotl train x.yaml`, `llamafactory-cli train x.yaml`,
`tune run <recipe> --config x.yaml`, `trl dpo --config x.yaml`) settles which parser reads it, whatever its keys
look like: a hand-written axolotl file full of TrainingArguments names is still axolotl's (axolotl's schema drops what
it does not know), and lint must judge it by axolotl's rules. Nothing is run; the files are read as text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.project_fields import (SKIPPED_FOLDERS, project_declares_or_sets, project_root, python_files,
                                           source_text)

LAUNCHERS = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job", ".py", ".md", ".yaml", ".yml", ".ipynb", ".txt")
MAX_LAUNCH_FILES = 2000
MAX_FILE_BYTES = 512 * 1024

# a framework's command line -> (dialect, its pattern); `config` is the file it is given, `trainer` what it names
_START = r"(?:^|[\s;&|(`\"'])"
FRAMEWORK_COMMANDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("axolotl", re.compile(_START + r"axolotl\s+(?:(?:train|preprocess)\s+)?(?P<config>[^\s\"']+\.ya?ml)\b|"
                           r"-m\s+axolotl\.cli\.(?:train|preprocess)\s+(?P<config2>\S+)")),
    ("llamafactory", re.compile(_START + r"(?:llamafactory-cli|lmf)\s+train\s+(?P<config>\S+)")),
    ("torchtune", re.compile(_START + r"tune\s+run\s.*?--config[=\s]+(?P<config>\S+)")),
    ("trl", re.compile(_START + r"trl\s+(?P<trainer>sft|dpo|grpo|kto|orpo|rloo|reward|online[-_]dpo|xpo|nash[-_]md|"
                       r"gkd|ppo|cpo)\s.*?--config[=\s]+(?P<config>\S+)")),
)


@dataclass(frozen=True)
class Launch:
    """One framework command the project runs the config with."""

    dialect: str  # the framework whose command line reads the file
    trainer: str | None  # what the command names (TRL's sub-command), else None
    command: str  # the line, shortened
    where: str  # file:line, relative to the project root

    def describe(self) -> str:
        return f"run by `{self.command}` ({self.where})"


def framework_launch(config_path: str | Path) -> Launch | None:
    """The framework command the project's files run *config_path* with, when every such command agrees on the
    framework; None when none does, or two frameworks do (a comparison script)."""
    found = framework_launches(str(Path(config_path).resolve()))
    return found[0] if found and len({launch.dialect for launch in found}) == 1 else None


@lru_cache(maxsize=256)
def framework_launches(config_path: str) -> tuple[Launch, ...]:
    path = Path(config_path)
    root = project_root(path)
    found: list[Launch] = []
    lines, namesakes = command_lines(root, path)
    for file, number, line in lines:
        if PRINTED.match(line) and not re.search(r"&&|;|\|\|", line):  # `echo "next: python3 -m trl sft
            continue  # --config training.yaml"` runs nothing (antojoseph/solidity-vuln-detect's setup_remote.sh)
        for dialect, pattern in FRAMEWORK_COMMANDS:
            for match in pattern.finditer(line):
                given = (match.groupdict().get("config") or match.groupdict().get("config2") or "").strip("\"'")
                if not _names(given, path, bare=namesakes <= 1, root=root):
                    continue  # the command runs another file of the line (axolotl's config, not its deepspeed json)
                trainer = match.groupdict().get("trainer")
                found.append(Launch(dialect, trainer.replace("-", "_") if trainer else None, shortened(line),
                                    f"{file}:{number}"))
                break
    return tuple(found)


PRINTED = re.compile(r"^\s*(?:echo|printf)\b")  # a shell line that prints a command a user may run, not runs it


def command_lines(root: Path, config: Path) -> tuple[list[tuple[str, int, str]], int]:
    """(file, line, text) for each line of the project's scripts, job files and docs that names *config* (its file
    name, and its folders where the line gives any; a backslash-continued command is one line), and how many files
    of the project bear its name (a bare name on a line names which of them is unclear)."""
    name = config.name
    naming = re.compile(r"(?<![\w.-])([\w./${}~-]*?)" + re.escape(name) + r"(?![\w.-])")
    out: list[tuple[str, int, str]] = []
    seen = namesakes = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for file in sorted(names):
            if seen >= MAX_LAUNCH_FILES:
                return out, namesakes
            namesakes += file == name
            own = Path(folder) / file == config  # the config's own comment may say how it is run (open-r1's recipes)
            # a namesake elsewhere is another config, unless a line of it names this one by its folders too (pclucas14/
            # SWE-agent's Amulet job amlt_config/run_1r1m_32B.yaml runs llama_factory_config/run_1r1m_32B.yaml)
            namesake = file == name and not own
            if not (file.endswith(LAUNCHERS) or file == "Makefile"):
                continue
            seen += 1
            where = Path(folder) / file
            try:
                if not where.is_file() or where.stat().st_size > MAX_FILE_BYTES:  # never open a FIFO or a device
                    continue
                text = where.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if name not in text:
                continue
            number = 1
            variables: dict[str, str] = {}  # CONFIG=recipes/x/sft.yaml: a later `--config "$CONFIG"` names it too
            stays = file.endswith(SHELL_SCRIPTS) and not _MOVES.search(text)
            for chunk in re.split(r"(?<!\\)\n", text):
                line = _substituted(re.sub(r"\\\r?\n", " ", chunk), variables)
                if any(_same_file(m.group(1), config, bare=not namesake, root=root) and
                       (not stays or _reachable(m.group(1), where.parent, config, root))
                       for m in naming.finditer(line)):
                    out.append((where.relative_to(root).as_posix(), number, line.strip()))
                    assigned = _ASSIGNMENT.match(line)
                    if assigned and any(_same_file(m.group(1), config, root=root)
                                        for m in naming.finditer(assigned.group(2))):
                        variables[assigned.group(1)] = assigned.group(2).strip("\"'")
                number += chunk.count("\n") + 1
    return out, namesakes


SHELL_SCRIPTS = (".sh", ".bash", ".zsh", ".slurm", ".sbatch")
_MOVES = re.compile(r"(?:^|[\s;&|(])(?:cd|pushd)\s", re.M)  # a script that changes folder runs its lines elsewhere


def _reachable(prefix: str, script_folder: Path, config: Path, root: Path) -> bool:
    """Whether a shell script that never changes folder reaches *config* by the relative folders *prefix* from where
    it can run: its own folder or one above it, up to the repository root. Follen-cry/MLLM_Cognition_Alignment's
    sft/qwen/scripts/finetune_lora.sh passes `--deepspeed scripts/zero3_offload.json`, run from sft/qwen: that is
    sft/qwen/scripts/zero3_offload.json, not sft/llama's file of that name. A prefix with a variable or an absolute
    one is left to _same_file."""
    if prefix.startswith(("/", "~")) or set(prefix) & set("${}"):
        return True
    folders = [p for p in prefix.split("/") if p and p != "."]
    if not folders:
        return True
    target = config.resolve().parent
    for base in (script_folder, *script_folder.parents):
        if (base.joinpath(*folders)).resolve() == target:
            return True
        if base.resolve() == root.resolve():
            break
    return False


# a shell or Makefile assignment of one word: `export CONFIG="recipes/x.yaml"`, `CONFIG ?= x.yaml`
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)\s*[:?]?=\s*(\"[^\"\s]*\"|'[^'\s]*'|[^\s;&|#]+)\s*(?:#.*)?$")


def _substituted(line: str, variables: dict[str, str]) -> str:
    """*line* with each `$VAR`, `${VAR}` and `$(VAR)` of *variables* written out."""
    if not variables or "$" not in line:
        return line
    return re.sub(r"\$(?:\{(\w+)\}|\((\w+)\)|(\w+))",
                  lambda m: variables.get(m.group(1) or m.group(2) or m.group(3), m.group(0)), line)


def launched_scripts(config_path: str | Path) -> frozenset[str]:
    """The project's Python files that the command lines naming *config_path* run (`python src/sft.py --config
    x.yaml`, `accelerate launch ... sft.py`, `-m pkg.train`), relative to the project root."""
    return _launched_scripts(str(Path(config_path).resolve()))


@lru_cache(maxsize=256)
def _launched_scripts(config_path: str) -> frozenset[str]:
    path = Path(config_path)
    root = project_root(path)
    named = set().union(*(_scripts_on(line) for _, _, line in command_lines(root, path)[0]))
    return _project_files_named(root, named) if named else frozenset()


@lru_cache(maxsize=64)
def scripts_shell_launchers_run(root: str) -> frozenset[str]:
    """The project's Python files that its shell scripts run on any line (hungphongtrn/proactive-ai's train.sh:
    `accelerate launch --config_file fsdp_config.yaml train.py`), relative to the project root: of two scripts that
    each read a config by default, the one the project launches."""
    base = Path(root)
    named: set[str] = set()
    seen = 0
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for file in sorted(names):
            where = Path(folder) / file
            if not file.endswith(SHELL_SCRIPTS) or seen >= MAX_LAUNCH_FILES:
                continue
            seen += 1
            try:
                if not where.is_file() or where.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = where.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            named |= set().union(*(_scripts_on(line) for line in text.splitlines()
                                   if not line.lstrip().startswith("#")))
    return _project_files_named(base, named)


def _scripts_on(line: str) -> set[str]:
    """The Python files a command line runs, as written: `src/sft.py`, and `-m pkg.train` as pkg/train.py."""
    return {m.group(1).removeprefix("./") for m in _SCRIPT.finditer(line)} | \
        {m.group(1).replace(".", "/") + ".py" for m in _MODULE.finditer(line)}


def _project_files_named(root: Path, named: set[str]) -> frozenset[str]:
    """The project's Python files (relative to *root*) that *named* paths, as a command line writes them, are."""
    files = [f.relative_to(root).as_posix() for f in python_files(root)]
    return frozenset(f for f in files for n in named if f == n or f.endswith("/" + n.lstrip("/")))


def command_line_values(config_path: str | Path, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Key -> (value, 'file:line') for each of *keys* that every command line running a script on the config passes
    the same value as an option (`--save_strategy='steps'`): HfArgumentParser's and TrlParser's command line
    overrides the file (dvlab-research/Step-DPO's launchers run configs/config_full.yaml, which says
    save_strategy: no, with --save_strategy='steps'). Empty when no command line runs a script on it."""
    path = Path(config_path).resolve()
    lines = script_lines(path)
    if not lines:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for key in keys:
        option = re.compile(rf"(?<![\w-])--{re.escape(key)}(?:=|\s+)(\"[^\"]*\"|'[^']*'|[^\s\\]+)")
        found = [(option.findall(line), f"{file}:{number}") for file, number, line in lines]
        values = {m[-1].strip("\"'") for m, _ in found if m}
        if all(m for m, _ in found) and len(values) == 1:
            file, number, _ = lines[0]  # every line passes the option
            out[key] = (values.pop(), f"{file}:{_option_line(project_root(path) / file, number, f'--{key}')}")
    return out


def script_lines(config_path: str | Path) -> list[tuple[str, int, str]]:
    """(file, line, text) of each command line of the project that names the config and runs a Python script or
    module on it (`python src/sft.py --config x.yaml`, `accelerate launch -m pkg.train x.yaml`)."""
    path = Path(config_path).resolve()
    if not path.is_file():
        return []
    return [(file, number, line) for file, number, line in command_lines(project_root(path), path)[0]
            if _SCRIPT.search(line) or _MODULE.search(line)]


def _option_line(script: Path, first: int, option: str) -> int:
    """The line of a backslash-continued command, starting at *first*, that holds *option*: a finding points at
    the flag (ProLLaMA's run_it.sh: torchrun on line 18, --lr_scheduler_type on line 28)."""
    rows = source_text(script).splitlines()[first - 1:]
    for offset, row in enumerate(rows):
        if re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", row):
            return first + offset
        if not row.rstrip().endswith("\\"):
            break
    return first


def launch_overrides(config_path: str | Path) -> frozenset[str]:
    """The keys a command line naming the config also passes itself (`--learning_rate=1e-5`, LLaMA-Factory's
    `learning_rate=1e-5`): the parser takes those from the command line, through argparse or OmegaConf."""
    path = Path(config_path)
    lines, _ = command_lines(project_root(path), path.resolve())
    return frozenset(m.group(1) for _, _, line in lines
                     for m in re.finditer(r"(?:^|\s)(?:--)?([A-Za-z_][\w.]*)(?:=|\s+(?=[^-\s]))", line)
                     if "--" + m.group(1) in line or m.group(1) + "=" in line)


def set_outside_the_file(config_path: str | Path, keys: Sequence[str]) -> bool:
    """A launch line naming the config passes one of *keys*, or the project's code declares or sets one: what the
    file says of them is not what runs (vllm_mode, lr_scheduler_kwargs)."""
    return bool(set(keys) & launch_overrides(config_path)) or project_declares_or_sets(config_path, keys)


def tune_overrides(config_path: str | Path) -> dict[str, str]:
    """Key -> 'file:line' for each dotted key that every `tune run ... --config <this file>` line of the project
    sets on the command line (`dataset._component_=data.datasets.politune_left`): torchtune's parse_args merges
    those over the file, so the file's own value never runs (scale-lab/PoliTune's README). Empty when no such line
    names the file."""
    path = Path(config_path).resolve()
    if not path.is_file():
        return {}
    runs = []
    for file, number, line in command_lines(project_root(path), path)[0]:
        match = _TUNE_RUN.search(line)
        if match and _names(match.group("config").strip("\"'"), path, bare=True):
            runs.append(({m.group(1) for m in _OVERRIDE.finditer(line[match.end():])}, f"{file}:{number}"))
    common = set.intersection(*(keys for keys, _ in runs)) if runs else set()
    return {key: runs[0][1] for key in sorted(common)}


_TUNE_RUN = re.compile(r"\btune\s+run\s.*?--config[=\s]+(?P<config>\S+)")
_OVERRIDE = re.compile(r"(?:^|\s)~?([A-Za-z_][\w.]*)=(?!=)")


def tied_scripts(config_path: str | Path) -> frozenset[str]:
    """The project's Python files a command line naming the config runs, and those that write its file name
    themselves (`add_argument("--config", default="configs/sft_config.json")`), relative to the project root: the
    scripts that certainly read this file, not merely a file of its keys."""
    path = Path(config_path).resolve()
    root = project_root(path)
    return launched_scripts(path) | {f.relative_to(root).as_posix() for f in python_files(root)
                                     if path.name in source_text(f)}


def tied_scripts_and_siblings(config_path: str | Path) -> tuple[str, ...]:
    """tied_scripts, then the project modules each imports from its own folder (`from self_learning_training import
    do_train`): the script that loads the config may hand the mapping to a function there, which builds the
    framework's class from it (wj210/Self-Training-LLM's train.py and self_learning_training.py)."""
    import ast

    from seqprof.config.project_fields import parsed_module, sibling_module

    root = project_root(Path(config_path).resolve())
    tied = sorted(tied_scripts(config_path))
    out = list(tied)
    for script in tied:
        tree = parsed_module(root / script)
        for node in ast.walk(tree) if tree is not None else ():
            sibling = sibling_module(node, root / script)
            name = sibling.relative_to(root).as_posix() if sibling is not None else None
            if name is not None and name not in out:
                out.append(name)
    return tuple(out)


def keys_set_by_loader(config_path: str | Path, keys: Iterable[str]) -> dict[str, str]:
    """Key -> 'file:line' for each of *keys* that a script loading the config (tied_scripts_and_siblings) always
    assigns by subscript itself, at a function's top level or in every branch of an if/else
    (`available_trainer_args["evaluation_strategy"] = "steps"` / `= "epoch"`, wj210/Self-Training-LLM), so the file's
    value is not what the class gets. An assignment under one condition (cive202's smoke-test mode) leaves the
    file's value to the usual run, and one that reads the same key (`cfg["lr"] = float(cfg["lr"])`) converts it."""
    import ast

    from seqprof.config.project_fields import parsed_module

    path = Path(config_path).resolve()
    wanted = frozenset(keys)
    if not path.is_file() or not wanted:
        return {}
    root = project_root(path)
    out: dict[str, str] = {}
    for script in tied_scripts_and_siblings(path):
        tree = parsed_module(root / script)
        if tree is None:
            continue
        functions = [n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for body in [tree.body, *functions]:
            for key, line in _always_set(body, wanted).items():
                out.setdefault(key, f"{script}:{line}")
    return out


def _always_set(body: list, keys: frozenset[str]) -> dict[str, int]:
    """The *keys* a statement list assigns by subscript on every path through it (an if/else counts when both
    branches do), each with its first line; a key read on the right side does not count."""
    import ast

    found: dict[str, int] = {}
    for statement in body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                key = target.slice.value if isinstance(target, ast.Subscript) and \
                    isinstance(target.slice, ast.Constant) else None
                if key in keys and not any(isinstance(n, ast.Constant) and n.value == key
                                           for n in ast.walk(statement.value)):
                    found.setdefault(key, statement.lineno)
        elif isinstance(statement, ast.If) and statement.orelse:
            both = _always_set(statement.body, keys)
            other = _always_set(statement.orelse, keys)
            for key in both.keys() & other.keys():
                found.setdefault(key, min(both[key], other[key]))
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for key, line in _always_set(statement.body, keys).items():
                found.setdefault(key, line)
    return found


_SCRIPT = re.compile(r"(?<![\w./$-])((?:\.{0,2}/)?[\w./-]*?\w\.py)(?![\w.])")
_MODULE = re.compile(r"(?:^|\s)-m\s+((?:\w+\.)*\w+)")


_SHELL_DEFAULT = re.compile(r"\$\{\w+:?[-=]((?:[^{}]|\{\w+\})+)\}")  # ${VAR:-default}, ${1-default}


def _names(given: str, config: Path, bare: bool, root: Path | None = None) -> bool:
    """A command's file argument is *config*: its name, and its folders where it writes any (with *bare*, a name
    without folders is enough). A shell default, `${1:-${SCRIPT_DIR}/x.yaml}`, gives the file a run takes when the
    command line names none (SongY123/SpatialText2SQL's train.sh)."""
    default = _SHELL_DEFAULT.fullmatch(given)
    given = default.group(1) if default else given
    head, _, tail = given.rpartition("/")
    return tail == config.name and _same_file(head, config, bare, root)


def _same_file(prefix: str, config: Path, bare: bool = True, root: Path | None = None) -> bool:
    """A line's `configs/dpo/` + name names *config* when its folders (those not written with a variable) end the
    config's own path; a bare name does when *bare*. An absolute path names it when it ends in the config's folders
    inside the project *root*, the rest being where the checkout lies on the author's machine
    (`axolotl train /srv/frappe-llm/configs/dpo.yaml` for the repository's configs/dpo.yaml)."""
    folders = [p for p in prefix.split("/") if p and p not in (".", "..") and not set(p) & set("${}~")]
    if not folders:
        return bare
    parents = config.parent.parts
    if len(folders) <= len(parents) and tuple(parents[-len(folders):]) == tuple(folders):
        return True
    inside = config.parent.relative_to(root).parts if root is not None and config.is_relative_to(root) else ()
    return prefix.startswith("/") and bool(inside) and len(folders) > len(inside) and \
        tuple(folders[-len(inside):]) == inside


def shortened(line: str, width: int = 100) -> str:
    """A command line on one line, cut to *width* characters."""
    line = re.sub(r"\s+", " ", line)
    return line if len(line) <= width else line[:width - 1] + "…"
