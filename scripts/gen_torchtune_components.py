"""Regenerate seqprof/config/dialects/keys/torchtune_components.json from torchtune (and torch) sources.

torchtune's ``config.instantiate`` calls a node's ``_component_`` with the node's other keys as keyword
arguments (torchtune/config/_instantiate.py: _instantiate_node), and ``tune validate`` binds them to
``inspect.signature`` (torchtune/config/_validate.py), so a key the callable does not take is a TypeError
unless it takes ``**kwargs``. seqprof never imports torchtune, so the signatures are read here by ``ast``
from released wheels (or source trees) and committed:

    pip download --no-deps torchtune==0.5.0 -d /tmp/tt/0.5.0
    pip download --no-deps torchtune==0.6.1 -d /tmp/tt/0.6.1
    git --git-dir=<torchtune mirror> archive HEAD torchtune recipes version.txt | tar -x -C /tmp/tt/main
    .venv/bin/python scripts/gen_torchtune_components.py \\
        --torchtune /tmp/tt/0.5.0/torchtune-0.5.0-py3-none-any.whl \\
        --torchtune /tmp/tt/0.6.1/torchtune-0.6.1-py3-none-any.whl --torchtune /tmp/tt/main \\
        --torch <site-packages with torch, or a torch wheel>

Every source adds to the result (a kwarg any release accepts is not certainly wrong):
- ``paths``: every public dotted path a config can name (a callable defined in a module, or re-exported by
  a package ``__init__``) -> an index into ``signatures``; ``name = functools.partial(f, ...)`` keeps f's
  keyword parameters (partial's keywords can be overridden); a class without ``__init__`` takes its
  torchtune/torch base's, or its dataclass fields; one whose base lies outside the sources is left out
  (unknown component: not checked).
- ``signatures``: keyword-passable parameter names and ``var_kw`` (takes ``**kwargs``).
- ``recipe_keys``: per shipped recipe (recipes/**/*.py), the top-level keys it reads as ``cfg.x``,
  ``cfg.get("x")``, ``cfg["x"]``, ``getattr(cfg, "x")`` or ``"x" in cfg`` (a string constant such as
  torchtune.training.PROFILER_KEY counts as its value); ``library_keys``: the same reads in
  torchtune's own modules that are handed the whole config (torchtune/dev/rl/workers).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

OUT = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "torchtune_components.json"
TORCH_PACKAGES = ("torch.optim",)  # optimizers and lr schedulers configs name (torch.optim.AdamW, ...)
CFG_METHODS = frozenset({"get", "items", "keys", "values", "pop", "copy", "setdefault", "update"})


class Tree:
    """The .py files of a wheel or a directory, by POSIX path, read without importing anything."""

    def __init__(self, source: Path, only: tuple[str, ...] = ()) -> None:
        self.source = source
        self.files: dict[str, str] = {}

        def wanted(name: str) -> bool:
            return (name.endswith(".py") or name.endswith("METADATA") or name == "version.txt") \
                and (not only or name.startswith(only))

        if source.is_file():
            with zipfile.ZipFile(source) as zf:
                for name in filter(wanted, zf.namelist()):
                    self.files[name] = zf.read(name).decode("utf-8", "replace")
        else:
            roots = [source / o for o in only if (source / o).is_dir()] if only else [source]
            paths = [p for r in roots for p in r.rglob("*")] + [p for p in source.iterdir() if p.is_file() or only]
            for p in paths:
                name = p.relative_to(source).as_posix()
                if p.is_file() and wanted(name):
                    self.files[name] = p.read_text("utf-8", "replace")
                elif p.is_dir() and p.name.endswith(".dist-info") and (p / "METADATA").is_file() and wanted(name + "/METADATA"):
                    self.files[name + "/METADATA"] = (p / "METADATA").read_text("utf-8", "replace")

    def version(self, package: str) -> str:
        for name, text in self.files.items():
            if name.endswith(".dist-info/METADATA") and PurePosixPath(name).parts[0].lower().startswith(package):
                m = re.search(r"^Version: (\S+)", text, re.M)
                if m:
                    return m.group(1)
        for name in (f"{package}/version.py", "version.txt"):
            m = re.search(r"(\d+\.\d+[\w.+]*)", self.files.get(name, ""))
            if m:
                return m.group(1) + (" (source tree)" if name == "version.txt" else "")
        return "unknown"

    def modules(self, prefix: str) -> dict[str, str]:
        """dotted module name -> file path, for the modules under *prefix* (a dotted package)."""
        out = {}
        root = prefix.replace(".", "/")
        for name in self.files:
            if not name.endswith(".py") or not (name.startswith(root + "/") or name == root + ".py"):
                continue
            mod = name[:-3].replace("/", ".")
            out[mod.removesuffix(".__init__")] = name
        return out


@dataclass(frozen=True)
class Signature:
    params: tuple[str, ...]
    var_kw: bool


class Resolver:
    """Names of a set of modules resolved to definitions (def, class, partial, alias, import) by ast."""

    def __init__(self, tree: Tree, prefixes: tuple[str, ...]) -> None:
        self.mods: dict[str, str] = {}
        for prefix in prefixes:
            self.mods.update(tree.modules(prefix))
        self.tree = tree
        self._scopes: dict[str, dict[str, tuple[str, object]]] = {}

    def scope(self, mod: str) -> dict[str, tuple[str, object]]:
        """name -> ('def', node) | ('ref', 'module.name') | ('partial', 'module.name') | ('module', 'mod')."""
        if mod in self._scopes:
            return self._scopes[mod]
        names: dict[str, tuple[str, object]] = {}
        self._scopes[mod] = names
        try:
            body = ast.parse(self.tree.files[self.mods[mod]]).body
        except SyntaxError:
            return names
        package = mod if self.mods[mod].endswith("__init__.py") else mod.rpartition(".")[0]
        for node in _top_level(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[node.name] = ("def", node)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                for alias in node.names:
                    if alias.name == "*":
                        for n, v in self.scope(base).items() if base in self.mods else ():
                            if not n.startswith("_"):
                                names.setdefault(n, v)
                        continue
                    target = f"{base}.{alias.name}"
                    kind = "module" if target in self.mods else "ref"
                    names[alias.asname or alias.name] = (kind, target)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value, target = node.value, node.targets[0].id
                if isinstance(value, ast.Call) and _dotted(value.func) in ("partial", "functools.partial") \
                        and value.args:
                    ref = self._ref(mod, _dotted(value.args[0]))
                    if ref:
                        names[target] = ("partial", ref)
                elif isinstance(value, (ast.Name, ast.Attribute)):
                    ref = self._ref(mod, _dotted(value))
                    if ref:
                        names[target] = ("ref", ref)
        return names

    def _ref(self, mod: str, dotted: str | None) -> str | None:
        """'module.name' for a name (or a.b attribute) used in *mod*."""
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        entry = self.scope(mod).get(head)
        if entry is None:
            return f"{mod}.{dotted}" if not rest else None
        kind, value = entry
        if kind == "def":
            return f"{mod}.{head}" if not rest else None
        if kind == "module":
            return f"{value}.{rest}" if rest else None
        return f"{value}.{rest}" if rest else str(value)

    def signature(self, path: str, depth: int = 0) -> Signature | None:
        """The keyword-passable parameters of the callable at *path*, or None when it is not known."""
        if depth > 20:
            return None
        mod, _, name = path.rpartition(".")
        if mod not in self.mods:
            # 'pkg.sub.name' where pkg.sub is a module re-exported under another name
            return None
        entry = self.scope(mod).get(name)
        if entry is None:
            return None
        kind, value = entry
        if kind in ("ref", "partial"):
            return self.signature(str(value), depth + 1)
        if kind != "def":
            return None
        node = value
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return _function_signature(node, drop_self=False)
        return self._class_signature(mod, node, depth)

    def _class_signature(self, mod: str, node: ast.ClassDef, depth: int) -> Signature | None:
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                return _function_signature(item, drop_self=True)
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__new__":
                return _function_signature(item, drop_self=True)
        if any(_dotted(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "dataclasses.dataclass")
               for d in node.decorator_list):
            fields = [t.target.id for t in node.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)
                      and "ClassVar" not in ast.unparse(t.annotation) and not _init_false(t.value)]
            inherited: list[str] = []
            for base in node.bases:
                ref = self._ref(mod, _dotted(base))
                sig = self.signature(ref, depth + 1) if ref else None
                if sig is None and _dotted(base) not in ("object", None):
                    return None
                inherited += list(sig.params) if sig else []
            return Signature(tuple(dict.fromkeys(inherited + fields)), False)
        bases = [b for b in node.bases if _dotted(b) not in ("object", "ABC", "abc.ABC", "Generic", "Protocol")
                 and not isinstance(b, ast.Subscript)]
        if not bases:
            return Signature((), False) if not node.bases else None
        ref = self._ref(mod, _dotted(bases[0]))
        return self.signature(ref, depth + 1) if ref else None

    def public_paths(self) -> dict[str, Signature]:
        """Every public dotted path a config can name: names defined in a module, or re-exported by a package."""
        out: dict[str, Signature] = {}
        for mod, file in self.mods.items():
            if any(part.startswith("_") and part != "__init__" for part in mod.split(".")[1:]) \
                    and not file.endswith("__init__.py"):
                private_module = True
            else:
                private_module = False
            is_package = file.endswith("__init__.py")
            for name, (kind, _value) in self.scope(mod).items():
                if name.startswith("_") or kind == "module":
                    continue
                if kind == "ref" and not is_package:
                    continue  # an import in a plain module is not where configs name the callable
                if private_module and kind == "ref":
                    continue
                sig = self.signature(f"{mod}.{name}")
                if sig is not None:
                    out[f"{mod}.{name}"] = sig
        return out


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements, looking into try/except and if blocks (optional imports)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.Try):
            out += _top_level(node.body) + [n for h in node.handlers for n in _top_level(h.body)]
        elif isinstance(node, ast.If):
            out += _top_level(node.body) + _top_level(node.orelse)
        else:
            out.append(node)
    return out


def _dotted(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _init_false(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant)
                                               and k.value.value is False for k in value.keywords)


def _function_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, *, drop_self: bool) -> Signature:
    args = node.args
    positional = [a.arg for a in args.args]
    if drop_self and positional:
        positional = positional[1:]
    names = positional + [a.arg for a in args.kwonlyargs]  # positional-only ones cannot be passed by name
    return Signature(tuple(names), args.kwarg is not None)


def recipe_reads(tree: Tree) -> tuple[dict[str, list[str]], list[str]]:
    """Top-level keys each recipe reads, and those torchtune's own whole-config consumers read."""
    recipes: dict[str, list[str]] = {}
    library: set[str] = set()
    parsed = {}
    for name, text in tree.files.items():
        if name.endswith(".py") and name.startswith(("recipes/", "torchtune/")):
            try:
                parsed[name] = ast.parse(text)
            except SyntaxError:
                continue
    constants = {t.id: n.value.value for m in parsed.values() for n in m.body if isinstance(n, ast.Assign)
                 for t in n.targets if isinstance(t, ast.Name) and t.id.isupper()
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}  # PROFILER_KEY = "profiler"
    for name, module in parsed.items():
        is_recipe = name.startswith("recipes/")
        keys = _cfg_reads(module, constants)
        if is_recipe and keys:
            recipes[name.removeprefix("recipes/")[:-3]] = sorted(keys)
        elif keys:
            library |= keys
    return recipes, sorted(library)


def _cfg_reads(module: ast.Module, constants: dict[str, str]) -> set[str]:
    def literal_of(n: ast.AST | None) -> str | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            return n.value
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        return constants.get(name) if name else None

    def is_cfg(n: ast.AST) -> bool:
        return (isinstance(n, ast.Name) and n.id == "cfg") or (isinstance(n, ast.Attribute) and n.attr in ("cfg", "_cfg")
                                                                and isinstance(n.value, ast.Name) and n.value.id == "self")

    keys: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Attribute) and is_cfg(node.value) and node.attr not in CFG_METHODS:
            keys.add(node.attr)
        elif isinstance(node, ast.Call):
            f = node.func
            literal = literal_of(node.args[0]) if node.args else None
            if isinstance(f, ast.Attribute) and is_cfg(f.value) and f.attr in ("get", "pop", "select") and literal:
                keys.add(literal.split(".")[0])
            elif isinstance(f, ast.Name) and f.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                    and is_cfg(node.args[0]) and literal_of(node.args[1]):
                keys.add(str(literal_of(node.args[1])))
        elif isinstance(node, ast.Subscript) and is_cfg(node.value) and literal_of(node.slice):
            keys.add(str(literal_of(node.slice)))
        elif isinstance(node, ast.Compare) and literal_of(node.left) and len(node.ops) == 1 \
                and isinstance(node.ops[0], (ast.In, ast.NotIn)) and is_cfg(node.comparators[0]):
            keys.add(str(literal_of(node.left)))
    return keys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torchtune", action="append", type=Path, required=True,
                    help="a torchtune wheel or source tree (repeatable; results are merged)")
    ap.add_argument("--torch", type=Path, required=True, help="a torch wheel or a site-packages holding torch/")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = ap.parse_args(argv)

    merged: dict[str, Signature] = {}
    recipes: dict[str, set[str]] = {}
    library: set[str] = set()
    sources = []
    for src in args.torchtune:
        tree = Tree(src)
        sources.append(f"torchtune {tree.version('torchtune')} ({src.name})")
        _merge(merged, Resolver(tree, ("torchtune",)).public_paths())
        per_recipe, lib = recipe_reads(tree)
        for r, keys in per_recipe.items():
            recipes.setdefault(r, set()).update(keys)
        library |= set(lib)
    torch_tree = Tree(args.torch, only=("torch/optim", "torch-"))
    sources.append(f"torch {torch_tree.version('torch')} ({', '.join(TORCH_PACKAGES)})")
    _merge(merged, Resolver(torch_tree, TORCH_PACKAGES).public_paths())

    signatures: list[Signature] = sorted(set(merged.values()), key=lambda s: (s.params, s.var_kw))
    index = {s: i for i, s in enumerate(signatures)}
    data = {
        "source": "; ".join(sources),
        "command": "scripts/gen_torchtune_components.py " + " ".join(
            [f"--torchtune {p.name}" for p in args.torchtune] + [f"--torch {args.torch.name}"]),
        "paths": {p: index[s] for p, s in sorted(merged.items())},
        "signatures": [{"params": list(s.params), "var_kw": s.var_kw} for s in signatures],
        "recipe_keys": {r: sorted(k) for r, k in sorted(recipes.items())},
        "library_keys": sorted(library),
    }
    text = _dump(data)
    if args.check:
        same = OUT.exists() and OUT.read_text("utf-8") == text
        print("up to date" if same else f"{OUT} is stale")
        return 0 if same else 1
    OUT.write_text(text, "utf-8")
    print(f"wrote {OUT}: {len(merged)} paths, {len(signatures)} signatures, {len(recipes)} recipes")
    return 0


def _merge(into: dict[str, Signature], new: dict[str, Signature]) -> None:
    """Union of parameters over releases: a kwarg one release accepts is not certainly wrong."""
    for path, sig in new.items():
        old = into.get(path)
        into[path] = sig if old is None else Signature(tuple(dict.fromkeys(old.params + sig.params)),
                                                       old.var_kw or sig.var_kw)


def _dump(data: dict) -> str:
    """JSON with one path / signature / recipe per line: small, and diffs read well."""
    buf = io.StringIO()
    buf.write("{\n")
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        buf.write(f" {json.dumps(key)}: ")
        if isinstance(value, dict):
            inner = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            buf.write("{\n" + ",\n".join(inner) + "\n }")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            buf.write("[\n" + ",\n".join(f"  {json.dumps(v)}" for v in value) + "\n ]")
        else:
            buf.write(json.dumps(value))
        buf.write(",\n" if i < len(items) - 1 else "\n")
    buf.write("}\n")
    return buf.getvalue()


if __name__ == "__main__":
    sys.exit(main())
