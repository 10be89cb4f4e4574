"""Hugging Face `datasets` where users keep them, found offline and read with pyarrow (no `datasets` import).

- a `save_to_disk` directory: `state.json` names its Arrow shards; a DatasetDict's `dataset_dict.json`
  names its splits, one directory each (`--split`, default train or the only one);
- loose `.arrow` files (the Arrow IPC stream `datasets` writes, or the IPC file format);
- a hub id `org/name` already on this machine: the `datasets` cache (`$HF_DATASETS_CACHE`, else
  `$HF_HOME/datasets`: `org___name/<subset>/<version>/<hash>/<name>-<split>[-NNNNN-of-NNNNN].arrow`) or
  the hub cache of raw files (`$HF_HUB_CACHE`, else `$HF_HOME/hub`: `datasets--org--name/snapshots/<rev>/`),
  with `--subset NAME` and `--split NAME` picked as the hub's own data-file patterns do.
Nothing is downloaded; a miss says every place that was tried.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from seqprof.errors import SeqprofError

DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".csv", ".jsonl.gz", ".json.gz")


def is_save_to_disk(path: Path) -> bool:
    return path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file())


def save_to_disk_files(path: Path, split: str | None) -> list[Path]:
    """The Arrow shards of a `save_to_disk` directory (of one split, for a DatasetDict)."""
    if (path / "dataset_dict.json").is_file():
        splits = _json(path / "dataset_dict.json").get("splits") or []
        chosen = _choose_split(splits, split, str(path))
        return save_to_disk_files(path / chosen, None)
    state = _json(path / "state.json")
    names = [f.get("filename") for f in state.get("_data_files") or [] if isinstance(f, dict)]
    files = [path / n for n in names if isinstance(n, str)]
    missing = [f for f in files if not f.is_file()]
    if not files or missing:
        raise SeqprofError("save_to_disk directory is incomplete (state.json names shards that are not there)",
                           path=str(missing[0] if missing else path / "state.json"),
                           fix="save the dataset again with Dataset.save_to_disk")
    return files


def hub_dataset_files(spec: str, split: str | None, subset: str | None) -> list[Path] | None:
    """The files of hub dataset `spec` (org/name) in the local caches, or None (with what was tried)."""
    if not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", spec) or spec.lower().endswith(DATA_SUFFIXES):
        return None  # a path that is not there, not a hub id
    tried: list[str] = []
    files = _from_datasets_cache(spec, split or "train", subset, tried) or \
        _from_hub_cache(spec, split or "train", subset, tried)
    if files:
        return files
    raise SeqprofError(f"dataset {spec!r} is not a file, a directory or a dataset in the local Hugging Face caches; "
                       "tried " + "; ".join(tried), path=spec,
                       fix="pass a local path, or load the dataset once with `datasets` (it caches it), "
                           "or check --split / --subset")


def _from_datasets_cache(spec: str, split: str, subset: str | None, tried: list[str]) -> list[Path]:
    roots = [os.environ.get("HF_DATASETS_CACHE"), _hf_home() / "datasets"]
    folder = spec.replace("/", "___")
    short = spec.rsplit("/", 1)[-1]
    pattern = re.compile(rf"{re.escape(short)}-{re.escape(split)}(-\d{{5}}-of-\d{{5}})?\.arrow$")
    for root in [Path(r) for r in roots if r]:
        base = root / folder
        tried.append(f"datasets cache {base}")
        if not base.is_dir():
            continue
        configs = [base / subset] if subset else sorted(p for p in base.iterdir() if p.is_dir())
        candidates = []
        for config in configs:
            for shard_dir in config.glob("*/*"):
                shards = sorted(p for p in shard_dir.glob("*.arrow") if pattern.search(p.name))
                if shards:
                    candidates.append((shard_dir.stat().st_mtime, shards))
        if candidates:
            return max(candidates)[1]  # the newest build of the dataset
    return []


def hub_dataset_repos(spec: str) -> list[Path]:
    """Where hub dataset `spec` (org/name) would sit in the hub caches (`$HF_HUB_CACHE`, `$HF_HOME/hub`)."""
    roots = [os.environ.get("HF_HUB_CACHE"), _hf_home() / "hub"]
    return [Path(r) / ("datasets--" + spec.replace("/", "--")) for r in roots if r]


def hub_snapshot(repo: Path) -> Path | None:
    """The snapshot of one cached hub repo that refs/main names, else the newest; None when there is none."""
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo / "refs" / "main"
    snapshot = snapshots / ref.read_text().strip() if ref.is_file() else None
    if snapshot is None or not snapshot.is_dir():
        snapshot = max(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, default=None)
    return snapshot


def _from_hub_cache(spec: str, split: str, subset: str | None, tried: list[str]) -> list[Path]:
    for repo in hub_dataset_repos(spec):
        tried.append(f"hub cache {repo}")
        snapshot = hub_snapshot(repo)
        if snapshot is None:
            continue
        data = sorted(p for p in snapshot.rglob("*") if p.is_file() and p.name.endswith(DATA_SUFFIXES))
        rel = {p: p.relative_to(snapshot).as_posix() for p in data}
        if subset:
            data = [p for p in data if rel[p].split("/")[0] == subset or f"/{subset}/" in f"/{rel[p]}"]
        word = re.compile(rf"(^|[/_.-]){re.escape(split)}([/_.-]|$)")
        named = [p for p in data if word.search(rel[p])]
        if named:
            return named
        any_split = re.compile(r"(^|[/_.-])(train|test|validation|valid|dev)([/_.-]|$)")
        if split == "train" and data and not any(any_split.search(rel[p]) for p in data):
            return data  # no split in the file names: the hub takes every file as train
    return []


def _choose_split(splits: list, wanted: str | None, where: str) -> str:
    names = [s for s in splits if isinstance(s, str)]
    if wanted is not None:
        if wanted not in names:
            raise SeqprofError(f"no split {wanted!r} (splits: {', '.join(names) or 'none'})", path=where,
                               fix="pass --split with one of them")
        return wanted
    if "train" in names:
        return "train"
    if len(names) == 1:
        return names[0]
    raise SeqprofError(f"a DatasetDict with splits {', '.join(names)}", path=where, fix="pick one with --split NAME")


def _hf_home() -> Path:
    return Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SeqprofError(f"cannot read {path.name} ({exc})", path=str(path),
                           fix="save the dataset again with save_to_disk") from None
    return data if isinstance(data, dict) else {}
