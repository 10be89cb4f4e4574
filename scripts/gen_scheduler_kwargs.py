"""Regenerate dialects/keys/scheduler_kwargs.json: what transformers' get_scheduler does with lr_scheduler_kwargs.

    .venv/bin/python scripts/gen_scheduler_kwargs.py                  # download the wheels, write the file
    .venv/bin/python scripts/gen_scheduler_kwargs.py --check          # exit 1 if the committed file is stale
    .venv/bin/python scripts/gen_scheduler_kwargs.py --wheels DIR     # reuse wheels already downloaded to DIR

The Trainer hands TrainingArguments.lr_scheduler_kwargs to transformers.optimization.get_scheduler as
scheduler_specific_kwargs. get_scheduler builds `constant` and `constant_with_warmup` without them (the file's
min_lr_rate or num_warmup_steps is never read), and passes them on to every other schedule function beside the
num_warmup_steps / num_training_steps it gives itself, so a key the function does not take, or one of those two
again, is a TypeError when the Trainer creates the scheduler. Read with ``ast`` from transformers/optimization.py of
the released wheels (scripts/gen_key_history.py's TRANSFORMERS_VERSIONS), never imported. Per release and
lr_scheduler_type: whether get_scheduler passes the kwargs on ("reads"), the keywords it passes itself ("passed"),
the keywords the schedule function takes ("takes"; null where it takes **kwargs or is not defined in the module,
such as torch's ReduceLROnPlateau), those without a default that only the kwargs can give ("needs":
warmup_stable_decay's num_decay_steps), and the pairs the function's own ValueError asks for one of ("one_of") or
refuses together ("not_both": cosine_with_min_lr's min_lr and min_lr_rate).
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_key_history import TRANSFORMERS_VERSIONS, generate, wheel  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "scheduler_kwargs.json"
COMMAND = "python scripts/gen_scheduler_kwargs.py"
KWARGS = "scheduler_specific_kwargs"


def _member(node: ast.expr) -> str | None:
    """'COSINE' for `SchedulerType.COSINE`."""
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == "SchedulerType" else None


def _signature(node: ast.FunctionDef | ast.ClassDef | None) -> tuple[list[str] | None, list[str]]:
    """The keywords a schedule function (or a class's __init__) takes besides the optimizer (None with **kwargs),
    and those of them without a default."""
    if isinstance(node, ast.ClassDef):
        node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if node is None:
        return None, []
    positional = node.args.posonlyargs + node.args.args
    defaulted = {a.arg for a in positional[len(positional) - len(node.args.defaults):]} | \
        {a.arg for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None}
    names = [a.arg for a in positional + node.args.kwonlyargs if a.arg not in ("self", "optimizer")]
    return (None if node.args.kwarg is not None else names), [n for n in names if n not in defaulted]


_ONE_OF = re.compile(r"^One of (\w+) or (\w+) should be set")
_ONLY_ONE_OF = re.compile(r"^Only one of (\w+) or (\w+) should be set")


def _pairs(node: ast.FunctionDef | ast.ClassDef | None, pattern: re.Pattern) -> list[list[str]]:
    """The keyword pairs a schedule function's own ValueError names: "One of min_lr or min_lr_rate should be set"
    (one of them is needed), "Only one of min_lr or min_lr_rate should be set" (not both)."""
    found = []
    for raised in (n for n in ast.walk(node) if isinstance(n, ast.Raise)) if node is not None else ():
        text = next((a.value for a in getattr(raised.exc, "args", ()) if isinstance(a, ast.Constant)
                     and isinstance(a.value, str)), "")
        match = pattern.match(text)
        if match and list(match.groups()) not in found:
            found.append(list(match.groups()))
    return found


def _call(body: list[ast.stmt]) -> ast.Call | None:
    """The `schedule_func(...)` a branch of get_scheduler returns."""
    for statement in body:
        if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Call) \
                and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "schedule_func":
            return statement.value
    return None


def _use(call: ast.Call) -> dict:
    return {"reads": any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == KWARGS
                         for k in call.keywords),
            "passed": sorted(k.arg for k in call.keywords if k.arg is not None)}


def scheduler_use(whl: Path) -> dict[str, dict]:
    """lr_scheduler_type value -> {"reads", "passed", "takes"} in transformers/optimization.py of *whl*."""
    with zipfile.ZipFile(whl) as z:
        tree = ast.parse(z.read("transformers/optimization.py"))
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        enum_tree = next(ast.parse(z.read(n)) for n in ("transformers/trainer_utils.py",) if n in names)
    values = {}
    for node in ast.walk(enum_tree):
        if isinstance(node, ast.ClassDef) and node.name == "SchedulerType":
            values = {t.targets[0].id: t.value.value for t in node.body if isinstance(t, ast.Assign)
                      and isinstance(t.targets[0], ast.Name) and isinstance(t.value, ast.Constant)}
    functions: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TYPE_TO_SCHEDULER_FUNCTION"
                                                for t in node.targets) and isinstance(node.value, ast.Dict):
            functions = {_member(k): v.id for k, v in zip(node.value.keys, node.value.values)
                         if _member(k) and isinstance(v, ast.Name)}
    scheduler = defined["get_scheduler"]
    branches: dict[str, dict] = {}
    for node in ast.walk(scheduler):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.comparators) == 1 \
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "name":
            member, call = _member(node.test.comparators[0]), _call(node.body)
            if member and call is not None:
                branches.setdefault(member, _use(call))
    last = _call(scheduler.body)
    out = {}
    for member, function in sorted(functions.items()):
        if member not in values or (member not in branches and last is None):
            continue
        use = branches.get(member) or _use(last)
        takes, required = _signature(defined.get(function))
        function_node = defined.get(function)
        out[values[member]] = {**use, "takes": takes,
                               "needs": [n for n in required if n not in use["passed"]] if use["reads"] else [],
                               "one_of": _pairs(function_node, _ONE_OF),
                               "not_both": _pairs(function_node, _ONLY_ONE_OF)}
    return out


def build(wheels: Path) -> dict:
    return {
        "command": COMMAND,
        "source": "transformers/optimization.py (get_scheduler, TYPE_TO_SCHEDULER_FUNCTION and the schedule "
                  "functions) and trainer_utils.py (SchedulerType) of the released wheels, parsed with ast",
        "versions": {v: scheduler_use(wheel("transformers", v, wheels)) for v in TRANSFORMERS_VERSIONS},
    }


def main(argv: list[str] | None = None) -> int:
    return generate(build, OUT, COMMAND, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
