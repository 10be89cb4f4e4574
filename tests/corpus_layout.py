"""The judged corpus laid out as its repositories are: each file at its path there (SOURCES.json), a .git folder
marking each repository's root, so lint reads a config with the pin files and code of the folders above it as it
would in a clone (tests/data/corpus keeps the files flat, one folder per repository, names joined by '__')."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"


class CorpusTree:
    """Corpus names (``owner__repo/flat__name.yaml``) -> where the file lies in its laid-out repository."""

    def __init__(self, root: Path, where: dict[str, Path]) -> None:
        self.root = root
        self.where = where

    def __truediv__(self, name: str) -> Path:
        return self.where[name]


def lay_out(dest: Path, corpus: Path = CORPUS, only: str | None = None) -> CorpusTree:
    """Copy every file of *corpus* (or of its folder *only*, `owner__repo`) under *dest* at its repository path;
    *dest* must be outside seqprof's checkout, so no config sees seqprof's own pin files."""
    sources = json.loads((corpus / "SOURCES.json").read_text())
    where = {}
    for name, source in sources.items():
        if only is not None and not name.startswith(only + "/"):
            continue
        repository = dest / name.split("/", 1)[0]
        (repository / ".git").mkdir(parents=True, exist_ok=True)
        target = repository / source["path"]
        if target.exists():
            raise ValueError(f"{name}: {source['path']} is laid out twice")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / name, target)
        where[name] = target
    return CorpusTree(dest, where)
