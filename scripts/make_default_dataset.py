"""Regenerate seqprof/assets/python_docs_chat.jsonl: real text (CPython's own docstrings) as chat rows.

The embedded default dataset must be real text that ships with the install and works offline; the
standard library's docstrings are exactly that, with a wide, realistic length spread (one-liners to
long module overviews). Run: python scripts/make_default_dataset.py
"""

from __future__ import annotations

import importlib
import inspect
import json
import random
from pathlib import Path

MODULES = ["json", "csv", "re", "textwrap", "difflib", "heapq", "bisect", "itertools", "functools",
           "collections", "statistics", "fractions", "decimal", "random", "string", "shlex", "argparse",
           "pathlib", "tempfile", "shutil", "zipfile", "tarfile", "gzip", "base64", "hashlib", "hmac",
           "secrets", "uuid", "datetime", "calendar", "logging", "unittest", "doctest", "pprint",
           "dataclasses", "enum", "typing", "contextlib", "abc", "copy", "pickle", "sqlite3", "urllib.parse",
           "http.client", "email.message", "html", "xml.etree.ElementTree", "asyncio", "threading",
           "queue", "subprocess", "socket", "ssl", "selectors", "os.path", "glob", "fnmatch", "io",
           "codecs", "unicodedata", "locale", "gettext", "operator", "math", "cmath", "inspect", "ast",
           "dis", "tokenize", "traceback", "warnings", "weakref", "gc", "timeit", "cProfile", "trace"]
SYSTEM = "You are a concise assistant who explains the Python standard library."


def docs():
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if inspect.getdoc(mod):
            yield name, "module", inspect.getdoc(mod)
        for attr in sorted(getattr(mod, "__all__", None) or dir(mod)):
            if attr.startswith("_"):
                continue
            obj = getattr(mod, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
                continue
            if getattr(obj, "__module__", name) not in (name, "_" + name.split(".")[-1]):
                continue
            doc = inspect.getdoc(obj)
            if doc and len(doc) > 40:
                yield f"{name}.{attr}", "class" if inspect.isclass(obj) else "function", doc


def main() -> None:
    rng = random.Random(20261129)
    items = list(docs())
    rng.shuffle(items)
    rows = []
    i = 0
    while i < len(items) and len(rows) < 600:
        name, kind, doc = items[i]
        msgs = [] if rng.random() < 0.5 else [{"role": "system", "content": SYSTEM}]
        msgs += [{"role": "user", "content": f"What does the Python {kind} `{name}` do?"},
                 {"role": "assistant", "content": doc}]
        if rng.random() < 0.25 and i + 1 < len(items):
            i += 1
            name2, kind2, doc2 = items[i]
            msgs += [{"role": "user", "content": f"And the {kind2} `{name2}`?"},
                     {"role": "assistant", "content": doc2}]
        rows.append({"messages": msgs})
        i += 1
    out = Path(__file__).resolve().parent.parent / "seqprof" / "assets" / "python_docs_chat.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
