"""Regenerate dialects/keys/module_names.json: the names of every linear / embedding / conv layer transformers' models
assign, the names LoRA's target_modules match against.

    .venv/bin/python scripts/gen_module_names.py            # from the installed transformers
    .venv/bin/python scripts/gen_module_names.py --check    # exit 1 if the committed file is stale

PEFT matches each listed target module by its name or name suffix (peft/tuners/tuners_utils.py
check_target_module_exists) and drops an entry that matches nothing without a word once another entry matches, so a
misspelt `q_pro[j` beside a right `v_proj` trains with no adapter on the query projection. seqprof calls an entry a
typo only when it is no layer name of any model here and one small edit from one that is (SP436). The names come
from reading transformers/models/*/modeling_*.py with ``ast``, never importing them: every ``self.<name> = X(...)``
whose X ends in Linear, Conv1D, Conv1d, Conv2d or Embedding (nn.Linear, Conv1D in GPT-2, ColumnParallelLinear ...),
and every ``self.<name> = nn.Parameter(...)`` (the fused expert weights of MoE models, gate_up_proj).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "module_names.json"
COMMAND = "python scripts/gen_module_names.py"
LAYER_SUFFIXES = ("Linear", "Conv1D", "Conv1d", "Conv2d", "Embedding", "Parameter")


def layer_names(source: str) -> set[str]:
    """``self.<name> = <...Linear|Conv1D|Embedding|Parameter>(...)`` assignments of one modeling file."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not called.endswith(LAYER_SUFFIXES):
            continue
        for target in node.targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                out.add(target.attr)
    return out


def build() -> dict:
    import transformers

    models = Path(transformers.__file__).parent / "models"
    names: set[str] = set()
    files = sorted(models.glob("*/modeling_*.py"))
    for path in files:
        try:
            names |= layer_names(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
    return {"command": COMMAND, "transformers": transformers.__version__, "files": len(files),
            "names": sorted(names)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    data = build()
    if args.check:
        if not OUT.exists() or json.loads(OUT.read_text())["names"] != data["names"]:
            print(f"stale: {OUT} (run {COMMAND})")
            return 1
        return 0
    OUT.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {OUT}: {len(data['names'])} names from {data['files']} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
