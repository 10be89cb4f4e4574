"""The analyze stage: data + tokenizer -> Profile (exact histograms per field, recommendation)."""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from seqprof.dataset.engine import count_batches
from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.lengths import FastPathMismatch
from seqprof.dataset.profile import DatasetInfo, ExamplePreview, Profile, TokenizerInfo
from seqprof.dataset.reader import read_rows, resolve_source
from seqprof.dataset.recommend import (
    DEFAULT_COVERAGE,
    DEFAULT_MULTIPLE,
    recommend_max_seq_length,
)
from seqprof.dataset.schema import detect_schema, normalise
from seqprof.dataset.tokenizers import load_tokenizer
from seqprof.errors import NoRowsError, SeqprofError

LONGEST_KEPT = 5
PREVIEW_CHARS = 240


@dataclass(frozen=True)
class AnalyzeOptions:
    tokenizer: str | None = None
    chat_template: str | None = None  # a .jinja file
    chat_template_text: str | None = None  # the template itself (an inline axolotl chat_template_jinja)
    schema: str | None = None
    columns: Mapping[str, str] | None = None
    skip_bad_rows: bool = False
    coverage: float = DEFAULT_COVERAGE
    multiple: int = DEFAULT_MULTIPLE
    per_turn_fields: bool = True
    engine: str = "local"  # local | ray (seqprof.dataset.engine_ray: one Ray task per shard, same result)
    workers: int = 1  # processes counting batches (seqprof.dataset.engine); tokenizing uses every core anyway
    split: str | None = None  # a DatasetDict's or a hub dataset's split (default train)
    subset: str | None = None  # a hub dataset's subset (config)
    cache: bool = True  # read and write the profile cache (seqprof.dataset.cache); SEQPROF_NO_CACHE=1 turns it off
    fast_path: bool = True  # count with tiktoken where it is exact (seqprof.dataset.fast_bpe), checked against HF


def input_files(data: str | Path, options: AnalyzeOptions) -> list[Path]:
    """Every file this analyze run reads (outputs must be none of them)."""
    files = list(resolve_source(str(data), split=options.split, subset=options.subset).files)
    for given in (options.tokenizer, options.chat_template):
        if given and Path(given).exists():
            files.append(Path(given))
            if Path(given).is_dir():
                files += [p for p in Path(given).iterdir() if p.is_file()]
    return files


def default_dataset_path() -> Path:
    """The small real dataset that ships inside the package (Python's own docs as chat turns)."""
    return Path(str(resources.files("seqprof") / "assets" / "python_docs_chat.jsonl"))


def build_profile(data: str | Path, options: AnalyzeOptions = AnalyzeOptions(), *,
                  progress: Callable[[int, int], None] | None = None,
                  on_skip: Callable[[str, str], None] | None = None,
                  on_note: Callable[[str], None] | None = None) -> Profile:
    """Read every row, count its tokens exactly as the trainer will, and summarise exactly.

    An unchanged input with the same tokenizer and options is read from the cache (its skipped rows are
    reported again through `on_skip`)."""
    source = resolve_source(str(data), split=options.split, subset=options.subset)
    tok = load_tokenizer(options.tokenizer, chat_template_path=options.chat_template,
                         chat_template_text=options.chat_template_text)
    key = None
    if options.cache and os.environ.get("SEQPROF_NO_CACHE", "") in ("", "0"):
        from seqprof.dataset import cache

        key = cache.profile_key(source.files, tok, _length_options(options))
        hit = cache.load_cached(key)
        if hit is not None:
            profile, skips = hit
            for location, why in skips:
                if on_skip:
                    on_skip(location, why)
            if progress:
                progress(profile.dataset.rows, profile.sequence.total_tokens)
            return replace(profile, dataset=replace(profile.dataset, path=source.display))
    run = profile_source if options.engine == "local" else _ray_profile
    try:
        profile, skips = run(source, tok, options, progress, on_skip)
    except FastPathMismatch as exc:
        if on_note:
            on_note(f"the fast counter differed from the HF tokenizer ({exc}); counting again with HF")
        profile, skips = run(source, tok, replace(options, fast_path=False), progress, on_skip)
    if key is not None:
        cache.store(key, profile, skips)
    return profile


def _length_options(options: AnalyzeOptions) -> dict:
    """The options a profile depends on (all but the tokenizer, which the cache key hashes by content)."""
    return {"schema": options.schema, "columns": sorted((options.columns or {}).items()),
            "skip_bad_rows": options.skip_bad_rows, "coverage": options.coverage, "multiple": options.multiple,
            "per_turn_fields": options.per_turn_fields}


def _ray_profile(source, tok, options: AnalyzeOptions, progress, on_skip) -> tuple[Profile, list[tuple[str, str]]]:
    """--engine ray: the schema is detected here, on the first row, and every shard is profiled with it."""
    from seqprof.dataset.engine_ray import ray_profile

    first = next(read_rows(source, skip_bad_rows=options.skip_bad_rows), None)
    if first is None:
        raise NoRowsError(source.display)
    schema = detect_schema(first[0].record, location=first[0].location, forced=options.schema,
                           columns=options.columns)
    profile, skips = ray_profile(source, tok, options, schema.name, on_skip)
    if progress:
        progress(profile.dataset.rows, profile.sequence.total_tokens)
    return profile, skips


def profile_source(source, tok, options: AnalyzeOptions, progress, on_skip) -> tuple[Profile, list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    skipped = 0

    def skip(location: str, why: str) -> None:
        nonlocal skipped
        skipped += 1
        skips.append((location, why))
        if on_skip:
            on_skip(location, why)

    sequence = LengthHistogram()
    fields: dict[str, LengthHistogram] = {}
    longest: list[tuple[int, int, str, str]] = []  # min-heap of (length, order, location, preview)
    batches = read_rows(source, skip_bad_rows=options.skip_bad_rows, on_skip=skip)
    first = next(batches, None)
    if first is None:
        raise NoRowsError(source.display, skipped)
    schema = detect_schema(first[0].record, location=first[0].location, forced=options.schema,
                           columns=options.columns)

    def normalised():
        for batch in itertools.chain([first], batches):
            examples, locations = [], []
            for row in batch:
                try:
                    examples.append(normalise(row, schema))
                    locations.append(row.location)
                except SeqprofError as exc:
                    if not options.skip_bad_rows:
                        raise
                    skip(row.location, exc.message)
            if examples:
                yield examples, locations

    rows = tokens = 0
    counted_batches = count_batches(normalised(), tok, schema.name, per_turn_fields=options.per_turn_fields,
                                    fast_path=options.fast_path, skip_bad_rows=options.skip_bad_rows,
                                    workers=options.workers)
    for (examples, locations), (kept, counted, refused) in counted_batches:
        for location, why in refused:
            skip(location, why)
        if counted is None:
            continue
        if kept is not None:
            examples, locations = [examples[i] for i in kept], [locations[i] for i in kept]
        sequence.add(counted.sequence)
        for name, values in counted.fields.items():
            fields.setdefault(name, LengthHistogram()).add(values)
        for i, length in enumerate(counted.sequence.tolist()):
            item = (length, -(rows + i), locations[i], examples[i])
            if len(longest) < LONGEST_KEPT:
                heapq.heappush(longest, item)
            elif length > longest[0][0]:
                heapq.heapreplace(longest, item)
        rows += len(examples)
        tokens += int(counted.sequence.sum())
        if progress:
            progress(rows, tokens)
    if rows == 0:
        raise NoRowsError(source.display, skipped)
    previews = tuple(ExamplePreview(location=loc, length=length, preview=_preview(ex))
                     for length, _, loc, ex in sorted(longest, key=lambda t: (-t[0], -t[1])))
    return Profile(
        dataset=DatasetInfo(path=source.display, format=source.format, rows=rows, skipped_rows=skipped,
                            schema=schema.name),
        tokenizer=TokenizerInfo(name=tok.name, vocab_size=tok.vocab_size),
        sequence=sequence,
        fields=fields,
        recommendation=recommend_max_seq_length(sequence, multiple=options.multiple, coverage=options.coverage),
        longest=previews,
    ), skips


def _preview(example: dict) -> str:
    """The start of the example's text, for people (the report escapes it)."""
    parts = []
    for key, value in example.items():
        if isinstance(value, str):
            parts.append(f"{key}: {value}")
        elif isinstance(value, list):
            parts.extend(f"{m.get('role')}: {m.get('content')}" for m in value if isinstance(m, dict))
    text = " | ".join(parts)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"
