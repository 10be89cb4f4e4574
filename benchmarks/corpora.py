"""Real-text corpora for the benchmarks, built from what this Python ships (no downloads).

- text: the standard library's .py files cut into ~4 KB chunks (code and docstrings).
- chats: long multi-turn conversations whose turns are real docstrings and source chunks; turn counts
  follow a long-tailed distribution (mean ~34, a few in the hundreds) like real chat logs.
- preference: prompt / chosen / rejected rows, the completions two different real docstrings.
"""

from __future__ import annotations

import ast
import random
import sysconfig
from collections.abc import Iterator
from pathlib import Path


def _stdlib_sources() -> Iterator[str]:
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            yield path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


def text_rows(max_bytes: int) -> list[str]:
    texts, total = [], 0
    for src in _stdlib_sources():
        for start in range(0, len(src), 4096):
            chunk = src[start:start + 4096]
            texts.append(chunk)
            total += len(chunk)
            if total >= max_bytes:
                return texts
    return texts


def _passages(limit: int) -> list[str]:
    """Docstrings (and, where a module has few, ~1 KB source chunks) of the standard library."""
    out: list[str] = []
    for src in _stdlib_sources():
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Module)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 40:
                    out.append(doc)
        out.extend(src[i:i + 1024] for i in range(0, min(len(src), 8192), 1024))
        if len(out) >= limit:
            break
    return out


def chat_rows(count: int, seed: int = 0) -> list[list[dict]]:
    """`count` conversations; turns ~ 2 + lognormal (mean ~34 messages), capped at 600."""
    rng = random.Random(seed)
    passages = _passages(60_000)
    rows = []
    for _ in range(count):
        turns = min(600, 2 + int(rng.lognormvariate(2.9, 1.05)))
        turns += turns % 2  # end on an assistant turn
        msgs = [{"role": "system", "content": "You answer questions about Python's standard library."}]
        for t in range(turns):
            text = rng.choice(passages)
            if t % 2 == 0:
                msgs.append({"role": "user", "content": "Explain this:\n" + text[:300]})
            else:
                msgs.append({"role": "assistant", "content": text})
        rows.append(msgs)
    return rows


def preference_rows(count: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    passages = _passages(20_000)
    return [{"prompt": "What does this do?\n" + rng.choice(passages)[:400], "chosen": rng.choice(passages),
             "rejected": rng.choice(passages)} for _ in range(count)]
