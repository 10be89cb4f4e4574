"""Names the project's script imports from `trl` that the TRL release it runs with does not export.

TRL 0.29 stopped exporting ORPOConfig, CPOTrainer, PPOConfig and the other trainers it had moved to
trl.experimental; 0.20 dropped DataCollatorForCompletionOnlyLM. A recipe whose script says
`from trl import ORPOConfig, ORPOTrainer` under `trl>=0.9.6` never reaches its first key on a fresh install: the
import raises before the config is read. The script is the one that parses the config (seqprof.config.
project_scripts) or that the project's launch lines run with it; the names and releases come from
keys/trl_exports.json (scripts/gen_trl_exports.py). Files are parsed, never imported.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from seqprof.config.dialects.common import load_keys_file
from seqprof.config.launches import launched_scripts
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import in_project, parsed_module, project_root
from seqprof.config.project_scripts import parser_scripts
from seqprof.config.key_history import KeyHistory, assumed
from seqprof.config.pins import Pins


@dataclass(frozen=True)
class MissingImport:
    """One `from trl import NAME` the releases the run may have cannot satisfy."""

    name: str
    where: str  # 'scripts/run_orpo.py:24'
    verdict: str  # 'error': the release pip installs lacks it | 'warning': unpinned, the newest assumed
    detail: str


@cache
def _exports() -> dict[str, set[str]]:
    """Name -> the generated TRL versions whose `trl` exports it."""
    data = load_keys_file("trl_exports")
    order = data["versions"]
    out: dict[str, set[str]] = {}
    for name, spans in data["names"].items():
        for first, end in spans:
            stop = order.index(end) if end else len(order)
            out.setdefault(name, set()).update(order[order.index(first):stop])
    return out


def missing_trl_imports(config_path: str | Path, data: Mapping, pins: Pins, history: KeyHistory,
                        trainer: str | None = None) -> list[MissingImport]:
    """Each `from trl import X` of the scripts that run the config, where the release a fresh install of the pins
    gets (the newest, unpinned) does not export X; none when TRL is pinned to a commit, the checkout has a trl
    copy of its own, or one of several scripts that may run the file imports nothing missing."""
    root = project_root(config_path)
    scripts = set(launched_scripts(config_path)) or _parsing_scripts(config_path, data, trainer)
    commit = pins.vcs("trl")
    if not scripts or commit is not None and not commit.head or in_project("trl", str(root)):
        return []  # a commit seqprof cannot place; a vendored trl (src/open_r1/trl) decides what it exports
    order = history.versions("trl")
    allowed = history.allowed("trl", pins) if commit is None else [order[-1]]  # main: newer than every release
    runs = (allowed or [order[-1]]) if allowed != [] else []
    if not runs:
        return []  # pins that match no release: nothing to say about what runs
    newest = max(runs, key=order.index)
    exports = _exports()
    failing: dict[str, list[MissingImport]] = {}
    for script in sorted(scripts):
        for name, line in _trl_imports(root / script):
            having = exports.get(name)
            if having and newest not in having:
                failing.setdefault(script, []).append(MissingImport(
                    name, f"{script}:{line}", "error" if allowed else "warning",
                    _detail(name, having, runs, newest, pins, history)))
    if len(failing) < len(scripts):
        return []  # two scripts may run the file (Vmjkom's run_sft.py, run_sft_masked.py): unless both fail, it may run
    by_name: dict[str, list[MissingImport]] = {}
    for script in sorted(failing):
        for m in failing[script]:
            by_name.setdefault(m.name, []).append(m)
    return [replace(found[0], where=", ".join(m.where for m in found)) for found in by_name.values()
            if len(found) == len(failing)]  # a name every script that may run the file imports


def _parsing_scripts(config_path: str | Path, data: Mapping, trainer: str | None) -> set[str]:
    """The scripts that parse the config and build its trainer (a GSPO recipe is not sft.py's, though sft.py's
    TrlParser names the same ScriptArguments and ModelConfig), with one named for that trainer that builds a trainer
    of the project's own (it may be the file's); with no trainer known, the one parsing script when it builds none."""
    found = parser_scripts(config_path, [k for k in data if isinstance(k, str)])
    building = {s.file for s in found if trainer and trainer in {kind for kind, _ in s.trainers}}
    if building:  # and one named for the trainer that builds its own (muqeeth's rloo.py: MyRLOOTrainer)
        from seqprof.config.dialects.recipes import path_trainer

        return building | {s.file for s in found if not s.trainers and path_trainer(Path(s.file).name) == trainer}
    return {found[0].file} if trainer is None and len(found) == 1 and not found[0].trainers else set()


def _trl_imports(file: Path) -> list[tuple[str, int]]:
    """(name, line) of each `from trl import X` outside a try that catches ImportError."""
    tree = parsed_module(file)
    if tree is None:
        return []
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return [(alias.name, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "trl" and node.level == 0 and id(node) not in guarded
            for alias in node.names if alias.name != "*"]


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """A bare `except:`, or one naming ImportError, ModuleNotFoundError or Exception: the script has a fallback."""
    caught = handler.type
    names = [ast.unparse(e) for e in (caught.elts if isinstance(caught, ast.Tuple) else [caught])] if caught else []
    return not names or any(n.rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError", "Exception")
                            for n in names)


def _detail(name: str, having: set[str], runs: list[str], newest: str, pins: Pins, history: KeyHistory) -> str:
    """When trl stopped (or started) exporting *name*, and which releases the pins let a fresh install get."""
    order = history.versions("trl")
    last = max(having, key=order.index)
    first = min(having, key=order.index)
    gone = order.index(last) < order.index(newest)
    when = (f"trl stopped exporting it in {history.release('trl', order[order.index(last) + 1]).split()[-1]}"
            if gone else f"trl exports it only from {history.release('trl', first).split()[-1]} on")
    pinned = pins.describe("trl")
    head = pins.vcs("trl")
    if head is not None:
        return f"{when}, and trl is installed from its main branch ({head.source}), newer than {newest}"
    if pinned is None:
        return f"{when}; {assumed(['trl'], pins, history)}, which lacks it"
    if any(v in having for v in runs):  # a fresh install takes the newest it can: one of those lacking it
        lacking = [v for v in runs if v not in having and order.index(v) > order.index(last)]
        span = history.release('trl', lacking[0]).split()[-1] + (
            f"-{history.release('trl', newest).split()[-1]}" if lacking[0] != newest else "")
        some = "one of those" if lacking[0] != newest else "it"
        return (f"{when}, and {pinned} allows trl {span}, without it, and a fresh install gets {some} (older "
                "releases the pins allow still have it)")
    return f"{when}, and every release {pinned} allows lacks it"


def missing_import_diagnostics(cfg, pins: Pins, history: KeyHistory,
                               trainer: str | None = None) -> list[ConfigDiagnostic]:
    """missing_trl_imports as diagnostics at the script's import line (the script, not a key, is at fault):
    `unimportable_name` under pins (SP440, an error), `unimportable_name_assumed` without (SP441, a warning)."""
    root = project_root(cfg.path)
    by_line: dict[tuple[str, str], list[MissingImport]] = {}
    for m in missing_trl_imports(cfg.path, cfg.data, pins, history, trainer):
        by_line.setdefault((m.where, m.detail), []).append(m)  # `from trl import ORPOConfig, ORPOTrainer`: one
    out = []
    for (where, detail), found in by_line.items():
        script, line = where.split(", ")[0].rsplit(":", 1)
        file = root / script if Path(cfg.path).is_absolute() else Path(os.path.relpath(root / script))
        names = ", ".join(m.name for m in found)
        who = f"the script that runs {Path(cfg.path).name} imports" if ", " not in where else \
            f"each script that may run {Path(cfg.path).name} imports"
        out.append(ConfigDiagnostic(
            kind="unimportable_name" if found[0].verdict == "error" else "unimportable_name_assumed",
            key=found[0].name, file=str(file), line=int(line),
            message=f"{who} {names} from trl ({where}): {detail}; the import raises before any key is read"))
    return out
