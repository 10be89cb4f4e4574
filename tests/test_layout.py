"""The package's shape is DESIGN.md's: one subpackage per stage, and imports only point down the stages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "seqprof"

# Lower numbers sit below: a module may import its own stage and the stages under it, never one above, and
# never a sibling stage of the same rank (dataset and config know nothing of each other).
RANK = {"errors": 0, "severity": 0, "outputs": 0.5, "inputs": 0.5, "settings": 1.5, "dataset": 1, "config": 1, "batching": 2, "predict": 2,
        "lint": 3, "render": 4, "cli": 5, "__main__": 6, "": 6}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every seqprof module `path` imports (at top level or inside a function), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: relative import; name the stage (from seqprof.x import)")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "seqprof":
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "seqprof"]
    return found


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        yield path, module


def test_the_top_level_reads_as_the_stages():
    stages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert stages == {"dataset", "batching", "config", "predict", "lint", "render"}
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == {"__init__", "__main__", "cli", "errors", "inputs", "outputs", "settings", "severity"}
    assert (PACKAGE / "assets" / "python_docs_chat.jsonl").is_file()


def test_imports_only_point_down_the_stages():
    wrong = []
    for path, module in _modules():
        here = _stage(module)
        assert here in RANK, f"{module}: a stage the layout does not know"
        for target, line in _imports(path):
            there = _stage(target)
            if there == here:
                continue
            if RANK[there] > RANK[here] or (RANK[there] == RANK[here] and here):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {here or 'seqprof'} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_seqprof_and_lint_import_without_the_heavy_libraries():
    """`seqprof lint` with a saved profile never loads transformers; the public API imports without it."""
    code = ("import sys\n"
            "for m in ('transformers', 'torch'): sys.modules[m] = None\n"
            "import seqprof, seqprof.cli, seqprof.lint.run, seqprof.render.report\n"
            "from seqprof import BucketedShuffleSampler, LengthHistogram, optimal_boundaries, profile\n"
            "heavy = [m for m in ('tokenizers', 'polars', 'pyarrow', 'jinja2.sandbox') if m in sys.modules]\n"
            "print(','.join(heavy))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""


def test_copied_configs_are_exact_copies_of_shared():
    """tests/data holds byte-for-byte copies; when ../shared is beside the checkout they must still match it."""
    data = PACKAGE.parent / "tests" / "data"
    shared = PACKAGE.parent.parent / "shared"
    copies = sorted(p for sub in ("configs", "reference") for p in (data / sub).rglob("*") if p.is_file())
    assert len(copies) > 20
    if not shared.is_dir():
        return  # a plain clone: the copies are all there is
    different = [str(p.relative_to(data)) for p in copies if p.read_bytes() != (shared / p.relative_to(data)).read_bytes()]
    assert not different
