"""A project's own TrainerCallback that writes the model while the run goes on.

`save_strategy: "no"` says the Trainer writes no checkpoint, but a project may save by itself: nbroad1881/
redesigned-train's SaveCallback.on_evaluate calls `model.save_pretrained(args.output_dir)` whenever the metric
improves (or sets `control.should_save`). Then the file alone no longer says when the run is saved, and SP301 stays
silent. The files are parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from seqprof.config.project_fields import parsed_module, project_root, python_files, source_text

_CALLBACK = re.compile(r"^\s*class\s+\w+\([^)]*TrainerCallback\b", re.M)
SAVES = frozenset({"save_pretrained", "save_model", "save_state", "_save_checkpoint"})  # and torch.save


def callback_saves(config_path: str | Path) -> str | None:
    """'file:line' of a save inside an event method of a TrainerCallback subclass of the config's project
    (`on_evaluate`, `on_step_end`, `on_epoch_end` ...): a call of save_pretrained / save_model / torch.save, or
    `control.should_save = True`; None when the project has none."""
    path = Path(config_path)
    return _callback_saves(str(project_root(path))) if path.is_file() else None


@lru_cache(maxsize=64)
def _callback_saves(root: str) -> str | None:
    for file in python_files(Path(root)):
        if not _CALLBACK.search(source_text(file)):
            continue
        tree = parsed_module(file)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ClassDef) and any(_named(base) == "TrainerCallback" for base in node.bases):
                line = _save_in_events(node)
                if line is not None:
                    return f"{file.relative_to(root).as_posix()}:{line}"
    return None


def _named(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _torch_save(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "save" and _named(func.value) == "torch"


def _save_in_events(cls: ast.ClassDef) -> int | None:
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef) or not method.name.startswith("on_") or method.name == "on_save":
            continue
        for node in ast.walk(method):
            if isinstance(node, ast.Call) and (_named(node.func) in SAVES or _torch_save(node.func)):
                return node.lineno
            if isinstance(node, ast.Assign) and any(_named(t) == "should_save" for t in node.targets) and \
                    isinstance(node.value, ast.Constant) and node.value.value is True:
                return node.lineno
    return None
