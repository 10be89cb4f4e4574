"""Regenerate dialects/keys/trl_exports.json: which names `from trl import X` finds in each TRL release.

    .venv/bin/python scripts/gen_trl_exports.py                  # download the wheels, write the file
    .venv/bin/python scripts/gen_trl_exports.py --check          # exit 1 if the committed file is stale
    .venv/bin/python scripts/gen_trl_exports.py --wheels DIR     # reuse wheels already downloaded to DIR

TRL 0.29 moved ORPO, CPO, PPO, online DPO, GKD, BCO, XPO, Nash-MD and PRM to trl.experimental and stopped
exporting them from `trl` (0.26-0.28 kept them as deprecated imports): a project script that says
`from trl import ORPOConfig` stops at its first line on a fresh install. The names are those trl/__init__.py
lists, read with ``ast`` from the released wheels (the last patch of each minor release, as
scripts/gen_key_history.py's TRL_VERSIONS): the strings of its ``_import_structure`` and the names its
``TYPE_CHECKING`` branch imports from trl's own modules. Per name: spans ``[first version that exports it, first
later version that does not (null: still exported)]``.
"""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_key_history import TRL_VERSIONS, generate, intervals, wheel  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "trl_exports.json"
COMMAND = "python scripts/gen_trl_exports.py"


def exported(whl: Path) -> set[str]:
    """The public names trl/__init__.py of *whl* makes importable from `trl`: those its TYPE_CHECKING branch imports
    from trl's own modules, and the list items written into `_import_structure` (its keys are module names)."""
    with zipfile.ZipFile(whl) as z:
        tree = ast.parse(z.read("trl/__init__.py"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:  # `from .trainer import DPOConfig`
            names |= {alias.asname or alias.name for alias in node.names}
        targets = [t for t in getattr(node, "targets", [getattr(node, "target", None)]) if t is not None]
        if any("_import_structure" in ast.unparse(t) for t in targets) or (
                isinstance(node, ast.Call) and "_import_structure" in ast.unparse(node.func)):
            # `_import_structure = {"trainer": [...]}`, `_import_structure["x"] = [...]`, `.extend([...])`
            names |= {item.value for seq in ast.walk(node) if isinstance(seq, (ast.List, ast.Tuple))
                      for item in seq.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)}
    return {n for n in names if n.isidentifier() and not n.startswith("_")}


def build(wheels: Path) -> dict:
    by_version = {v: exported(wheel("trl", v, wheels)) for v in TRL_VERSIONS}
    return {
        "command": COMMAND,
        "source": "trl/__init__.py of the released wheels (pip download --no-deps), parsed with ast: "
                  "_import_structure's names and the TYPE_CHECKING imports; per name: [first version that exports "
                  "it, first later version that does not (null: still exported)]",
        "versions": list(TRL_VERSIONS),
        "names": intervals(TRL_VERSIONS, by_version),
    }


def main(argv: list[str] | None = None) -> int:
    return generate(build, OUT, COMMAND, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
