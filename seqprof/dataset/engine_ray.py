"""The same profile on a Ray cluster (`analyze --engine ray`): one task per shard, exact histograms merged.

Ray Data runs a pool of actors (each builds the tokenizer once; fractional CPUs, so a 2-CPU laptop runs
them too); every actor profiles whole shards with the local engine, and the driver adds the shards'
exact histograms and keeps the longest rows. The result is identical to the local engine's: same
schema (detected once, on the first row, and given to every shard), same counts, same previews.
Parallelism is across files: split one big file into shards (`split -l`, or Parquet row groups written
as files) to spread it. Set RAY_ADDRESS to use a running cluster; without it a local one is started on
loopback. Ray is an optional extra: `pip install 'seqprof[ray]'`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, ExamplePreview, Profile
from seqprof.dataset.reader import DataSource, split_location
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.dataset.tokenizers import LoadedTokenizer
from seqprof.errors import NoRowsError, SeqprofError


class _ShardProfiler:
    """A Ray Data actor: profiles each shard it is given with the local engine."""

    def __init__(self, tok: LoadedTokenizer, source_format: str, options: Any) -> None:
        self.tok, self.format, self.options = tok, source_format, options

    def __call__(self, batch: dict) -> dict:
        """Each shard's profile as JSON; a shard's own error comes back as data (Ray's wrappers drop it)."""
        from seqprof.dataset.analyze import profile_source
        from seqprof.dataset.lengths import FastPathMismatch

        profiles, skips, errors = [], [], []
        for path in batch["path"]:
            source = DataSource(display=str(path), files=(Path(path),), format=self.format)
            profile, skipped, error = "", [], ""
            try:
                built, skipped = profile_source(source, self.tok, self.options, None, None)
                profile = json.dumps(built.to_dict())
            except NoRowsError:
                pass  # a shard of blank lines or only bad rows adds nothing
            except SeqprofError as exc:
                error = json.dumps({"kind": "input", "message": exc.message, "path": exc.path, "line": exc.line,
                                    "fix": exc.fix})
            except FastPathMismatch as exc:
                error = json.dumps({"kind": "fast_path", "message": str(exc)})
            profiles.append(profile)
            skips.append(json.dumps(skipped))
            errors.append(error)
        return {"index": list(batch["index"]), "profile": profiles, "skips": skips, "error": errors}


def ray_profile(source: DataSource, tok: LoadedTokenizer, options: Any, schema_name: str,
                on_skip: Callable[[str, str], None] | None = None) -> tuple[Profile, list[tuple[str, str]]]:
    """Profile every shard of `source` on Ray and merge; raises the shards' own SeqprofError as it is."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise SeqprofError("--engine ray needs Ray", fix="pip install 'seqprof[ray]' (or ray[data])") from None
    started = not ray.is_initialized()
    if started:
        address = os.environ.get("RAY_ADDRESS")
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if not address:
            kwargs["_node_ip_address"] = "127.0.0.1"  # a local cluster on loopback only
        ray.init(address=address or None, **kwargs)
    try:
        shard_options = replace(options, schema=schema_name, cache=False, workers=1)
        cpus = max(1.0, float(ray.cluster_resources().get("CPU", 1)))
        actors = max(1, min(len(source.files), int(cpus * 2)))
        ds = ray.data.from_items([{"index": i, "path": str(p)} for i, p in enumerate(source.files)],
                                 override_num_blocks=len(source.files))
        rows = ds.map_batches(_ShardProfiler, fn_constructor_args=(tok, source.format, shard_options),
                              batch_size=1, concurrency=actors, num_cpus=0.5).take_all()
    except Exception as exc:  # noqa: BLE001 - Ray itself failed (shards return their own errors as data)
        raise SeqprofError(f"the Ray run failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
                           path=source.display, fix="check RAY_ADDRESS, or run without --engine ray") from None
    finally:
        if started:
            ray.shutdown()
    rows = sorted(rows, key=lambda r: r["index"])
    for row in rows:  # the first shard's error, as the local engine would have met it
        if row["error"]:
            error = json.loads(row["error"])
            if error["kind"] == "fast_path":
                from seqprof.dataset.lengths import FastPathMismatch

                raise FastPathMismatch(error["message"])
            raise SeqprofError(error["message"], path=error["path"], line=error["line"], fix=error["fix"])
    return _merge(source, tok, options, rows, on_skip)


def _merge(source: DataSource, tok: LoadedTokenizer, options: Any, rows: list[dict],
           on_skip: Callable[[str, str], None] | None) -> tuple[Profile, list[tuple[str, str]]]:
    sequence, fields = LengthHistogram(), {}
    candidates, skips, count, skipped, schema, info = [], [], 0, 0, None, None
    for row in rows:
        for location, why in json.loads(row["skips"]):
            skips.append((location, why))
            if on_skip:
                on_skip(location, why)
        if not row["profile"]:
            continue
        part = Profile.from_dict(json.loads(row["profile"]))
        info = info or part.tokenizer
        schema = schema or part.dataset.schema
        sequence = sequence.merge(part.sequence)
        for name, hist in part.fields.items():  # shard by shard: the order the local engine first meets them
            fields[name] = fields.get(name, LengthHistogram()).merge(hist)
        count += part.dataset.rows
        skipped += part.dataset.skipped_rows
        candidates += [(e, row["index"]) for e in part.longest]
    if count == 0:
        raise NoRowsError(source.display, skipped)
    from seqprof.dataset.analyze import LONGEST_KEPT

    longest = sorted(candidates, key=lambda c: (-c[0].length, c[1], _position(c[0].location)))[:LONGEST_KEPT]
    profile = Profile(
        dataset=DatasetInfo(path=source.display, format=source.format, rows=count, skipped_rows=skipped,
                            schema=schema),
        tokenizer=info, sequence=sequence, fields=fields,
        recommendation=recommend_max_seq_length(sequence, multiple=options.multiple, coverage=options.coverage),
        longest=tuple(ExamplePreview(location=e.location, length=e.length, preview=e.preview) for e, _ in longest),
    )
    return profile, skips


def _position(location: str) -> int:
    """A row's place in its file: the line of path:LINE, the row of path#ROW."""
    _, line = split_location(location)
    if line is not None:
        return line
    _, _, row = location.rpartition("#")
    return int(row) if row.isdigit() else 0
