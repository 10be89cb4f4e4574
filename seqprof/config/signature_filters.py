"""Whether a project keeps only the keys a framework class accepts before it builds that class.

`filter_valid_args(cfg, TrainingArguments)` over `inspect.signature(class_type).parameters` (PianistTransformer),
`{k: v for k, v in kwargs.items() if k in set(inspect.signature(SFTConfig).parameters)}` (ShiboZhang's rl-learn):
a key the installed release lacks is then dropped without an error, not refused with a TypeError. A removed or
renamed key is still lost, but the run does not stop on it, and the finding has to say so. Files are parsed with
`ast`, never imported.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from seqprof.config.launches import tied_scripts_and_siblings
from seqprof.config.project_calls import ARGUMENT_CLASSES
from seqprof.config.project_fields import called_name, parsed_module, project_root, python_files, source_text

_INTROSPECTION = frozenset({"signature", "fields", "getfullargspec", "getargspec"})


def signature_filter(config_path: str | Path, files: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """(the class, 'file:line') where a script tied to the config (launched with it, or naming its file) or a module
    it imports from its folder, or one of *files* (where the project's code hands the config's keys on), keeps only
    that framework class's parameters or dataclass fields of a mapping; None when no such script does."""
    root = project_root(Path(config_path).resolve())
    helpers = _filtering_helpers(str(root))
    for file in [*tied_scripts_and_siblings(config_path), *files]:
        found = _filter_in(str(root / file), helpers)
        if found is not None:
            return found[0], f"{file}:{found[1]}"
    return None


def _introspected(node: ast.AST) -> ast.expr | None:
    """The class of `inspect.signature(X)` (or of X.__init__), `dataclasses.fields(X)`, `X.__dataclass_fields__` or
    `getattr(X, "__dataclass_fields__")` (Firefly0237/Anima-Sherlock-agent's supported_config_keys)."""
    if isinstance(node, ast.Call) and node.args:
        if called_name(node.func) in _INTROSPECTION:
            given = node.args[0]
            return given.value if isinstance(given, ast.Attribute) and given.attr == "__init__" else given
        if called_name(node.func) == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value == "__dataclass_fields__":
            return node.args[0]
    if isinstance(node, ast.Attribute) and node.attr == "__dataclass_fields__":
        return node.value
    return None


@lru_cache(maxsize=64)
def _filtering_helpers(root: str) -> frozenset[str]:
    """Names of the project's functions that introspect one of their own parameters (`def filter_valid_args(d,
    class_type)`: `inspect.signature(class_type)`)."""
    out: set[str] = set()
    for file in python_files(Path(root)):
        text = source_text(file)
        if not any(word in text for word in ("signature(", "fields(", "__dataclass_fields__")):
            continue
        tree = parsed_module(file)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = {a.arg for a in node.args.args}
                if any(isinstance(arg := _introspected(inner), ast.Name) and arg.id in params
                       for inner in ast.walk(node)):
                    out.add(node.name)
    return frozenset(out)


def _filter_in(file: str, helpers: frozenset[str]) -> tuple[str, int] | None:
    tree = parsed_module(Path(file))
    for node in ast.walk(tree) if tree is not None else ():
        target = _introspected(node)
        if isinstance(target, ast.Name) and target.id in ARGUMENT_CLASSES:
            return target.id, node.lineno
        if isinstance(node, ast.Call) and called_name(node.func) in helpers:
            named = [a.id for a in node.args if isinstance(a, ast.Name) and a.id in ARGUMENT_CLASSES]
            if named:
                return named[0], node.lineno
    return None
