"""The YAML tags a project's own loader constructs, so a file it reads with them is no unreadable config.

yaml.safe_load refuses a tag it does not know (`!path`, `!!python/name:...`), and a framework that reads its config
that way stops before training. A project that loads its files itself may register the tag first: configue (used by
illuin-tech/colpali's `configue.load(config_file)`) constructs `!path`, `!ext`, `!cfg` and `!import:...`
(configue 6.0.2 file_loader.py:27-30), and a script's own `yaml.add_constructor("!include", ...)` constructs that
one; a script that loads with yaml.full_load (or an unsafe loader) constructs PyYAML's python/ tags. Files are
scanned as text, never imported.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# configue's constructors (file_loader.py): exact tags, and tag prefixes (add_multi_constructor)
CONFIGUE_TAGS = frozenset({"!path", "!ext", "!cfg"})
CONFIGUE_PREFIXES = frozenset({"!import"})
_USES_CONFIGUE = re.compile(r"^\s*(?:import\s+configue\b|from\s+configue\b)", re.M)
_CONSTRUCTOR = re.compile(r"\badd_(multi_)?constructor\(\s*[\"'](![^\"'\s]*)[\"']")
# PyYAML's own loaders beyond safe_load: FullLoader builds the plain Python types (ssbuild/chatglm_finetuning's
# config/main.py yaml.full_load reads `optimizer_betas: !!python/tuple [0.9, 0.999]`); the unsafe ones build any
# python/ tag (yaml/constructor.py FullConstructor / UnsafeConstructor)
_FULL_LOAD = re.compile(r"\byaml\.full_load(?:_all)?\(|Loader\s*=\s*(?:yaml\.)?FullLoader\b")
_UNSAFE_LOAD = re.compile(r"\byaml\.unsafe_load(?:_all)?\(|Loader\s*=\s*(?:yaml\.)?(?:Unsafe)?Loader\b")
FULL_TAGS = frozenset(f"!!python/{name}" for name in ("none", "bool", "str", "unicode", "bytes", "int", "long", "float",
                                                     "complex", "list", "tuple", "dict"))


def constructed_by_project(config_path: str | Path, tag: str) -> str | None:
    """'file.py' of the project's code that registers a constructor for *tag*, or imports configue for one of its
    tags; None when nothing in the project does."""
    from seqprof.config.project_fields import project_root

    path = Path(config_path).resolve()
    if not path.is_file():
        return None
    tags, prefixes = _registered(str(project_root(path)))
    if tag in tags:
        return tags[tag]
    return next((where for prefix, where in prefixes.items() if tag.startswith(prefix)), None)


@lru_cache(maxsize=64)
def _registered(root: str) -> tuple[dict[str, str], dict[str, str]]:
    """(tag -> file, tag prefix -> file) the project's Python files register."""
    from seqprof.config.project_fields import python_files, source_text

    tags: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for file in python_files(Path(root)):
        text = source_text(file)
        if "configue" not in text and "constructor" not in text and "load" not in text:
            continue
        where = file.relative_to(root).as_posix()
        if _UNSAFE_LOAD.search(text):
            prefixes.setdefault("!!python/", where)
        elif _FULL_LOAD.search(text):
            for tag in FULL_TAGS:
                tags.setdefault(tag, where)
        if _USES_CONFIGUE.search(text):
            for tag in CONFIGUE_TAGS:
                tags.setdefault(tag, where)
            for prefix in CONFIGUE_PREFIXES:
                prefixes.setdefault(prefix, where)
        for match in _CONSTRUCTOR.finditer(text):
            (prefixes if match.group(1) else tags).setdefault(match.group(2), where)
    return tags, prefixes
