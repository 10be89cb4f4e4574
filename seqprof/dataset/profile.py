"""The Profile value object: what analyze measured, saved and reloaded by lint/buckets/report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.recommend import Recommendation
from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, read_input_text

PROFILE_KIND = "seqprof.profile"
PROFILE_VERSION = 1
MAX_PROFILE_BYTES = 512 * MiB  # a profile of 16M distinct lengths in every field is far below this


@dataclass(frozen=True)
class DatasetInfo:
    path: str
    format: str  # jsonl | json | parquet | csv
    rows: int
    skipped_rows: int
    schema: str  # text | prompt_completion | messages | preference | alpaca


@dataclass(frozen=True)
class TokenizerInfo:
    name: str
    vocab_size: int


@dataclass(frozen=True)
class ExamplePreview:
    """One of the longest examples, for the report: where it is and how it starts."""

    location: str  # file:line or file#row
    length: int
    preview: str


@dataclass(frozen=True)
class Profile:
    dataset: DatasetInfo
    tokenizer: TokenizerInfo
    sequence: LengthHistogram  # one training example as the trainer pads it
    fields: dict[str, LengthHistogram]
    recommendation: Recommendation
    longest: tuple[ExamplePreview, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """The DESIGN.md JSON contract (plus `kind`/`version` so a saved file is recognised)."""
        return {
            "kind": PROFILE_KIND,
            "version": PROFILE_VERSION,
            "dataset": dict(self.dataset.__dict__),
            "tokenizer": dict(self.tokenizer.__dict__),
            "sequence": _hist_to_dict(self.sequence),
            "fields": {name: _hist_to_dict(h) for name, h in self.fields.items()},
            "recommendation": self.recommendation.to_dict(),
            "longest": [dict(e.__dict__) for e in self.longest],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, path: str = "<profile>") -> Profile:
        if data.get("kind") != PROFILE_KIND:
            raise SeqprofError("not a seqprof profile", path=path,
                               fix="write one with `seqprof analyze DATA --output profile.json`")
        try:
            return cls(
                dataset=DatasetInfo(**data["dataset"]),
                tokenizer=TokenizerInfo(**data["tokenizer"]),
                sequence=_hist_from_dict(data["sequence"]),
                fields={str(k): _hist_from_dict(v) for k, v in _mapping(data["fields"], "fields").items()},
                recommendation=_recommendation(data["recommendation"]),
                longest=tuple(ExamplePreview(**e) for e in data.get("longest", [])),
            )
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise SeqprofError(f"profile is damaged ({exc})", path=path,
                               fix="regenerate it with `seqprof analyze DATA --output profile.json`") from None

    def save(self, path: str | Path) -> None:
        """Write atomically, never through a link or over a non-regular file (seqprof.outputs)."""
        from seqprof.outputs import write_output

        write_output(path, json.dumps(self.to_dict(), indent=1), "--output")

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        p = Path(path)
        text = read_input_text(p, what="profile", limit=MAX_PROFILE_BYTES)
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise SeqprofError(f"profile is not valid JSON ({exc})", path=str(p),
                               fix="regenerate it with `seqprof analyze DATA --output profile.json`") from None
        if not isinstance(data, dict):
            raise SeqprofError("not a seqprof profile", path=str(p))
        return cls.from_dict(data, path=str(p))


def is_profile_file(path: str | Path) -> bool:
    """True when `path` is a JSON file written by `analyze --output` (cheap sniff of the head)."""
    p = Path(path)
    try:
        if not p.is_file() or p.suffix != ".json":
            return False
        with p.open("rb") as fh:
            head = fh.read(256)
    except OSError:  # a name too long, a permission: not a profile; the data reader says what is wrong
        return False
    return f'"kind": "{PROFILE_KIND}"'.encode() in head


def _hist_to_dict(hist: LengthHistogram) -> dict[str, Any]:
    out = hist.stats().to_dict()
    out["histogram"] = {str(k): v for k, v in hist.items()}
    return out


MAX_LENGTH = 1 << 24  # 16.7M tokens: longer than any context window; a larger key is a damaged profile


def _hist_from_dict(data: dict[str, Any]) -> LengthHistogram:
    """A histogram from a (possibly hand-edited) profile: lengths 0..MAX_LENGTH, counts >= 0, integers."""
    counts = data["histogram"]
    if not isinstance(counts, dict):
        raise ValueError("a histogram must map lengths to counts")
    checked = {}
    for key, value in counts.items():
        length = int(key)
        if not 0 <= length <= MAX_LENGTH or isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"histogram entry {key!r}: {value!r} (lengths 0..{MAX_LENGTH:,}, counts >= 0)")
        checked[length] = value
    return LengthHistogram.from_mapping(checked)


def _mapping(value: Any, name: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"'{name}' must be an object")
    return value


def _recommendation(data: Any) -> Recommendation:
    rec = Recommendation(**_mapping(data, "recommendation"))
    if isinstance(rec.max_seq_length, bool) or not isinstance(rec.max_seq_length, int) or \
            not 1 <= rec.max_seq_length <= MAX_LENGTH:
        raise ValueError(f"recommendation.max_seq_length {rec.max_seq_length!r} is not a length")
    return rec
