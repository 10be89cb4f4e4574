"""Regenerate dialects/keys/trl_trainer_kwargs.json: which keyword arguments each TRL trainer's constructor takes in
each TRL release.

    .venv/bin/python scripts/gen_trainer_kwargs.py                  # download the wheels, write the file
    .venv/bin/python scripts/gen_trainer_kwargs.py --check          # exit 1 if the committed file is stale
    .venv/bin/python scripts/gen_trainer_kwargs.py --wheels DIR     # reuse wheels already downloaded to DIR

Scripts written for TRL before 0.13 hand their config's values to the trainer itself:
`SFTTrainer(model, train_dataset=ds, max_seq_length=cfg["max_seq_length"], packing=True)`. TRL 0.13 moved those
arguments into SFTConfig and dropped them from SFTTrainer.__init__, so on a fresh install the call raises
TypeError. The constructors are read with ``ast`` from the released wheels (the last patch of each minor release, as
scripts/gen_key_history.py's TRL_VERSIONS): every class named ``*Trainer`` anywhere in the package, with the
parameters its ``__init__`` takes by keyword; a class without an ``__init__``, or whose ``**kwargs`` go on to
``super().__init__``, takes its TRL base's too; an old name a ``@deprecate_kwarg("old", new_name=...)`` decorator
maps onto a parameter is taken as well; ``**`` stands for a ``**kwargs`` that reaches transformers' Trainer, which
TRL's history cannot judge. A class whose constructor is transformers' alone is left out. Per argument: spans
``[first version that takes it, first later version that does not (null: still taken)]``.
"""

from __future__ import annotations

import ast
import sys
import warnings
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_key_history import TRL_VERSIONS, generate, history, wheel  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "trl_trainer_kwargs.json"
COMMAND = "python scripts/gen_trainer_kwargs.py"
ANY = "**"  # the constructor passes other keywords on to transformers' Trainer


def _deprecated_names(fn: ast.FunctionDef) -> set[str]:
    """Old keyword names a `@deprecate_kwarg("tokenizer", "0.16.0", "processing_class")` (or `new_name=`) maps onto
    the new one; without a new name the old keyword stays in the call, and the signature decides."""
    out = set()
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("deprecate_kwarg") and dec.args \
                and isinstance(dec.args[0], ast.Constant) \
                and (len(dec.args) >= 3 or any(k.arg == "new_name" for k in dec.keywords)):
            out.add(dec.args[0].value)
    return out


def _init_of(node: ast.ClassDef) -> tuple[set[str], bool] | None:
    """(keyword parameters, has **kwargs) of the class's own __init__, None when it has none."""
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            args = stmt.args
            names = {a.arg for a in args.args[1:] + args.kwonlyargs} | _deprecated_names(stmt)
            return names, args.kwarg is not None
    return None


def _base_names(node: ast.ClassDef) -> list[str]:
    return [b.attr if isinstance(b, ast.Attribute) else b.id for b in node.bases
            if isinstance(b, (ast.Attribute, ast.Name))]


def trainer_kwargs(whl: Path) -> dict[str, set[str]]:
    """Trainer class -> the keywords its constructor takes, in one trl wheel."""
    defs: dict[str, list[tuple[list[str], tuple[set[str], bool] | None]]] = {}
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if not (name.startswith("trl/") and name.endswith(".py")):
                continue
            try:
                with warnings.catch_warnings():  # an old release's "\ " in a string is no concern here
                    warnings.simplefilter("ignore")
                    tree = ast.parse(z.read(name))
            except SyntaxError:
                continue
            aliases = {a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                       for a in n.names if a.asname}  # `from ..experimental.orpo import ORPOTrainer as _ORPOTrainer`
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    bases = [aliases.get(b, b) for b in _base_names(node)]
                    defs.setdefault(node.name, []).append((bases, _init_of(node)))

    def resolve(name: str, seen: frozenset[str]) -> set[str] | None:
        """The keywords of every definition of *name* that TRL's own code decides, merged; None if none does."""
        found: set[str] | None = None
        for bases, init in defs.get(name, ()):
            inherited = [resolve(b, seen | {b}) for b in bases if b in defs and b not in seen and b != name]
            inherited = [k for k in inherited if k is not None]
            if init is None:
                own = set().union(*inherited) if inherited else None
            else:  # a shim over the class of the same name elsewhere (trl.experimental's) passes on to that one,
                names, var_kw = init  # whose own definition is merged here anyway
                shim = name in bases
                own = names | (set().union(*inherited) if inherited or shim else {ANY}) if var_kw else set(names)
            if own is not None:
                found = own if found is None else found | own
        return found

    out = {}
    for name in sorted(defs):
        if name.endswith("Trainer") and not name.startswith("_"):
            kwargs = resolve(name, frozenset({name}))
            if kwargs is not None:
                out[name] = kwargs
    return out


def build(wheels: Path) -> dict:
    by_version = {v: trainer_kwargs(wheel("trl", v, wheels)) for v in TRL_VERSIONS}
    return {
        "command": COMMAND,
        "source": "the __init__ of every *Trainer class in the released trl wheels (pip download --no-deps), parsed "
                  "with ast, with its TRL bases' where it has none or passes **kwargs on; per keyword: [first version "
                  "that takes it, first later version that does not (null: still taken)]; '**': other keywords go on "
                  "to transformers' Trainer",
        "versions": list(TRL_VERSIONS),
        "classes": history(TRL_VERSIONS, by_version),
    }


def main(argv: list[str] | None = None) -> int:
    return generate(build, OUT, COMMAND, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
