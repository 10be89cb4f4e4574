"""A check of LLaMA-Factory's parser, as the fork the project runs writes it.

Research projects often run their own copy of LLaMA-Factory (a fork of the repository, or one vendored into
src/llamafactory) and change its checks to let their own methods through: ElementQi/LLaMA-Factory-Badam's parser.py
lets quantization_bit pass with `finetuning_type: delta` or `use_qbadam: true`, which upstream refuses. Where the
copy's hparams/parser.py is in the project (seqprof.config.dialects.llamafactory finds it), the raise is found by
its message and the conditions above it are evaluated on the config's own values; a condition on anything else
leaves the check unknown. The file is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

UNKNOWN = object()  # a condition the config's values do not decide


def fork_lets_through(parser: Path | None, config_path: str | Path, message: str, values: Mapping,
                      defaults: Mapping) -> str | None:
    """'file:line' (or the file) of the project's own copy of the *parser* when it does not refuse the config with
    *message* (the start of the error upstream raises): no raise of it, or each one sits under a condition the
    config's *values* (with *defaults*, then the literal defaults of the project's own argument fields, for unstated
    keys) make false or leave undecided. None when the project carries no copy, or the copy refuses it as upstream
    does."""
    from seqprof.config.project_fields import parsed_module, project_fields

    tree = parsed_module(parser) if parser is not None else None
    if tree is None:
        return None
    where = _named(parser, config_path)
    raises = [node for node in ast.walk(tree) if isinstance(node, ast.Raise) and _says(node, message)]
    if not raises:
        return where
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    declared = {name: field.default for name, field in project_fields(config_path).items() if field.default is not None}
    outcomes = [_reached(node, parents, {**declared, **defaults, **values}) for node in raises]
    if any(outcome is True for outcome in outcomes):
        return None
    return f"{where}:{raises[0].lineno}"


def _says(node: ast.Raise, message: str) -> bool:
    call = node.exc
    return isinstance(call, ast.Call) and bool(call.args) and isinstance(call.args[0], ast.Constant) and \
        isinstance(call.args[0].value, str) and call.args[0].value.startswith(message)


def _reached(node: ast.AST, parents: dict, values: Mapping):
    """Whether the config reaches *node*: True, False, or UNKNOWN, through every `if` above it in its function."""
    result = True
    while node in parents and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = parents[node]
        if isinstance(parent, ast.If):
            test = _value(parent.test, values)
            if node in parent.orelse:
                test = UNKNOWN if test is UNKNOWN else not test
            if test is False:
                return False
            if test is UNKNOWN:
                result = UNKNOWN
        node = parent
    return result


def _value(node: ast.expr, values: Mapping):
    """A condition of the parser on the config's values: `finetuning_args.finetuning_type not in ["lora", "delta"]`,
    `model_args.quantization_bit is not None`, `finetuning_args.use_qbadam == True`; UNKNOWN for anything else."""
    if isinstance(node, ast.BoolOp):
        parts = [_value(v, values) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in parts else UNKNOWN if UNKNOWN in parts else True
        return True if True in parts else UNKNOWN if UNKNOWN in parts else False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _value(node.operand, values)
        return inner if inner is UNKNOWN else not inner
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Attribute):
        return bool(values[node.attr]) if node.attr in values else UNKNOWN
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Attribute) \
            and node.left.attr in values:
        left, op, right = values[node.left.attr], node.ops[0], _literal(node.comparators[0])
        if right is UNKNOWN:
            return UNKNOWN
        if isinstance(op, (ast.Is, ast.Eq)):
            return left == right
        if isinstance(op, (ast.IsNot, ast.NotEq)):
            return left != right
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, tuple):
            return (left in right) == isinstance(op, ast.In)
    return UNKNOWN


def _literal(node: ast.expr):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(isinstance(e, ast.Constant) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return UNKNOWN


def classes_picked_at_run_time(parser: Path | None, config_path: str | Path) -> str | None:
    """'file:line' of an HfArgumentParser call in the copy's *parser* whose classes are picked at run time
    (Wicwik/PEFT-Factory's `HfArgumentParser(_TRAIN_ARGS + [peft_args_class])`, the class chosen by finetuning_type
    from peft's and adapters' configs): a key none of the copy's own classes declares may be that class's. None
    where every parser call takes a class, or a module-level list of classes, as written."""
    from seqprof.config.project_fields import called_name, parsed_module

    tree = parsed_module(parser) if parser is not None else None
    if tree is None:
        return None
    written = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
               for target in node.targets if isinstance(target, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and called_name(node.func) == "HfArgumentParser" and node.args \
                and not _as_written(node.args[0], written):
            return f"{_named(parser, config_path)}:{node.lineno}"
    return None


def _named(parser: Path, config_path: str | Path) -> str:
    """The copy's parser.py as a finding names it: relative to the project root."""
    from seqprof.config.project_fields import project_root

    root = project_root(config_path)
    return parser.relative_to(root).as_posix() if parser.is_relative_to(root) else parser.as_posix()


def _as_written(node: ast.expr, written: dict) -> bool:
    """A class (a name the module does not bind to anything else), or a list or tuple of classes, maybe through a
    module-level name (`_TRAIN_ARGS = [ModelArguments, ...]`)."""
    if isinstance(node, ast.Name) and node.id in written:
        node = written[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(isinstance(e, (ast.Name, ast.Attribute)) and not (isinstance(e, ast.Name) and e.id in written)
                   for e in node.elts)
    return isinstance(node, (ast.Name, ast.Attribute))
