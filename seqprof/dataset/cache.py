"""A profile cache: re-running analyze on unchanged input reads the exact result instead of tokenizing again.

An entry is keyed by everything a length depends on: the bytes of every input file (its content, not its
mtime; and its path, which the profile's row locations name), the tokenizer (its tokenizer.json's hash), the chat template and special tokens, the schema options,
and seqprof's profile format. Entries live under the platform cache dir (`$XDG_CACHE_HOME/seqprof`, else
`~/.cache/seqprof`), are written atomically, and are checked when read: an entry that does not parse, or
whose key or content does not match, is ignored and rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seqprof.dataset.profile import PROFILE_VERSION, Profile
from seqprof.dataset.tokenizers import LoadedTokenizer

CACHE_FORMAT = 1
_READ_CHUNK = 1 << 22


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "seqprof" / "profiles"


def file_digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=20)
    with path.open("rb") as fh:
        while chunk := fh.read(_READ_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def profile_key(files: Sequence[Path], tok: LoadedTokenizer, options: dict[str, Any]) -> str:
    """One hex key for the input's content, the tokenizer, its template and the options that shape lengths."""
    parts = {
        "cache": CACHE_FORMAT, "profile": PROFILE_VERSION,
        "files": [file_digest(p) for p in files],
        "paths": [str(p.resolve()) for p in files],  # row locations in the profile name them
        "tokenizer": tok.file_hash, "template": tok.chat_template, "specials": sorted(tok.special_tokens.items()),
        "options": options,
    }
    return hashlib.blake2b(json.dumps(parts, sort_keys=True, default=str).encode(), digest_size=20).hexdigest()


def load_cached(key: str) -> tuple[Profile, list[tuple[str, str]]] | None:
    """The cached profile and the rows it skipped, or None for a miss or any damaged entry."""
    path = cache_dir() / f"{key}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry.get("key") != key:
            raise ValueError("key mismatch")
        profile = Profile.from_dict(entry["profile"])
        skips = [(str(loc), str(why)) for loc, why in entry.get("skipped", [])]
        return profile, skips
    except OSError:  # no entry, or a cache dir that cannot be read: a miss
        return None
    except Exception:  # noqa: BLE001 - a damaged entry of any kind is a miss, and is removed
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        return None


def store(key: str, profile: Profile, skipped: list[tuple[str, str]]) -> None:
    """Write the entry atomically; a cache that cannot be written is silently skipped (it is only a cache)."""
    from seqprof.outputs import replace_atomically

    folder = cache_dir()
    entry = json.dumps({"key": key, "profile": profile.to_dict(), "skipped": skipped}).encode("utf-8")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_atomically(folder / f"{key}.json", entry)
    except OSError:
        return
