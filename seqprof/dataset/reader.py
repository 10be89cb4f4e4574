"""Read dataset rows in streaming batches, each row tagged with its exact file:line (or row) location."""

from __future__ import annotations

import glob as globlib
import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, not_a_regular_file

BATCH_ROWS = 8192  # rows per batch: large batches keep every tokenizer thread busy between batches
BATCH_BYTES = 16 << 20  # ...but a batch of very long rows stops at about this much JSON
# One row's JSON: 64 MB is ~16M tokens, past every context window; a longer line is refused without being read
# whole (tokenizing a 60 MB row took past 6 GB of RAM).
MAX_ROW_BYTES = 64 * MiB
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".csv": "csv",
            ".arrow": "arrow"}


@dataclass(frozen=True)
class Row:
    """One record and where it came from, so every later error can name file and line."""

    location: str  # "path:line" (JSONL) or "path#row" (Parquet/CSV/JSON array, 1-based)
    record: Any


@dataclass(frozen=True)
class DataSource:
    """The resolved input: the files to read, in order, and their common format."""

    display: str
    files: tuple[Path, ...]
    format: str


def split_location(location: str) -> tuple[str, int | None]:
    """"data.jsonl:12" -> ("data.jsonl", 12); "data.parquet#3" -> ("data.parquet#3", None)."""
    head, sep, tail = location.rpartition(":")
    return (head, int(tail)) if sep and tail.isdigit() else (location, None)


def file_format(path: Path) -> str | None:
    """Format from the file name; `.gz` is looked through (data.jsonl.gz is jsonl)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return _FORMATS.get(suffixes[-1]) if suffixes else None


def resolve_source(spec: str, *, split: str | None = None, subset: str | None = None) -> DataSource:
    """A file, a directory of shards, a glob (`data/train-*.parquet`), a `datasets` save_to_disk directory,
    or a hub dataset id in the local HF caches (seqprof.dataset.hf_datasets) -> ordered file list."""
    from seqprof.dataset import hf_datasets

    path = Path(spec)
    problem = not_a_regular_file(path)
    if problem and problem != "is a directory":
        raise SeqprofError(f"dataset {problem}, not a file seqprof can read", path=spec,
                           fix="write the data to a regular file first" if "FIFO" in problem or "device" in problem
                           else "check the path")
    if hf_datasets.is_save_to_disk(path):
        files = hf_datasets.save_to_disk_files(path, split)
    elif path.is_file():  # a literal name first: 'data[1].jsonl' is that file, not a glob for data1.jsonl
        files = [path]
    elif any(ch in spec for ch in "*?["):
        files = [Path(p) for p in sorted(globlib.glob(spec, recursive=True)) if Path(p).is_file()]
        if not files:
            raise SeqprofError("no files match this pattern", path=spec, fix="check the glob")
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and file_format(p) is not None)
        if not files:
            raise SeqprofError("directory holds no .jsonl/.json/.parquet/.csv/.arrow files", path=spec,
                               fix="point at a data file, a shard directory or a glob")
    elif path.is_file():
        files = [path]
    else:
        files = hf_datasets.hub_dataset_files(spec, split, subset) if not path.is_absolute() else None
        if not files:
            raise SeqprofError("no such file or directory", path=spec, fix="check the path")
    formats = {file_format(f) for f in files}
    if None in formats:
        bad = next(f for f in files if file_format(f) is None)
        raise SeqprofError("unknown data format (expected .jsonl, .jsonl.gz, .json, .parquet, .csv or .arrow)",
                           path=str(bad), fix="rename the file or convert it")
    if len(formats) > 1:
        raise SeqprofError(f"shards mix formats ({', '.join(sorted(formats))})", path=spec,
                           fix="select one format with a glob")
    return DataSource(display=spec, files=tuple(files), format=formats.pop())


def read_rows(source: DataSource, *, skip_bad_rows: bool = False,
              on_skip=None) -> Iterator[list[Row]]:
    """Yield batches of rows from every file of the source, in order."""
    reader = {"jsonl": _read_jsonl, "json": _read_json_array, "parquet": _read_parquet, "csv": _read_csv,
              "arrow": _read_arrow}[source.format]
    for path in source.files:
        yield from reader(path, skip_bad_rows, on_skip)


def _open_binary(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")


def _lines(fh) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) per line; None for a line over MAX_ROW_BYTES, skipped without holding it."""
    lineno = 0
    while True:
        raw = fh.readline(MAX_ROW_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_ROW_BYTES and not raw.endswith(b"\n"):
            while (rest := fh.readline(MAX_ROW_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield lineno, None
        else:
            yield lineno, raw


def _looks_pretty_printed(raw: bytes, lineno: int) -> bool:
    """A first line of just `[` or `{`: one indented JSON document saved as .jsonl (skipping lines won't help)."""
    return lineno == 1 and raw.strip() in (b"[", b"{")


def _read_jsonl(path: Path, skip_bad_rows: bool, on_skip) -> Iterator[list[Row]]:
    """One orjson parse per line with our own line count: errors name the exact line."""
    batch: list[Row] = []
    batch_bytes = 0
    try:
        with _open_binary(path) as fh:
            for lineno, raw in _lines(fh):
                if raw is None:
                    problem = f"row is longer than {MAX_ROW_BYTES // MiB} MB (more tokens than any context window)"
                    if skip_bad_rows:
                        if on_skip:
                            on_skip(f"{path}:{lineno}", problem)
                        continue
                    raise SeqprofError(problem, path=str(path), line=lineno,
                                       fix="split or drop the row, or pass --skip-bad-rows")
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark, as Windows editors write
                    raw = raw[3:]
                if not raw.strip():
                    continue
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    if _looks_pretty_printed(raw, lineno):
                        raise SeqprofError("the file is one pretty-printed JSON document, not one record per line",
                                           path=str(path), line=lineno,
                                           fix="rename it to .json (a JSON array of records) or write one record "
                                               "per line") from None
                    if skip_bad_rows:
                        if on_skip:
                            on_skip(f"{path}:{lineno}", f"malformed JSON ({exc.msg})")
                        continue
                    raise SeqprofError(f"malformed JSON ({exc.msg})", path=str(path), line=lineno,
                                       fix="fix the line or pass --skip-bad-rows") from None
                batch.append(Row(f"{path}:{lineno}", record))
                batch_bytes += len(raw)
                if len(batch) >= BATCH_ROWS or batch_bytes >= BATCH_BYTES:
                    yield batch
                    batch, batch_bytes = [], 0
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, SeqprofError):
            raise
        raise SeqprofError(f"cannot read file ({exc})", path=str(path), fix="check the file is intact") from None
    if batch:
        yield batch


def _read_json_array(path: Path, skip_bad_rows: bool, on_skip) -> Iterator[list[Row]]:
    """A JSON document holding a list of records (or {"data": [...]}, as some exports do)."""
    try:
        with _open_binary(path) as fh:
            data = orjson.loads(fh.read())
    except orjson.JSONDecodeError as exc:
        raise SeqprofError(f"malformed JSON ({exc})", path=str(path),
                           fix="a .json dataset must be one JSON array of records; use .jsonl for one record per line") from None
    except OSError as exc:
        raise SeqprofError(f"cannot read file ({exc})", path=str(path)) from None
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise SeqprofError("expected a JSON array of records", path=str(path),
                           fix="wrap the records in [...] or write them one per line as .jsonl")
    for start in range(0, len(data), BATCH_ROWS):
        yield [Row(f"{path}#{i + 1}", rec) for i, rec in enumerate(data[start:start + BATCH_ROWS], start=start)]


def _read_parquet(path: Path, skip_bad_rows: bool, on_skip) -> Iterator[list[Row]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise SeqprofError(f"not a readable Parquet file ({exc})", path=str(path)) from None
    offset = 0
    try:
        for rb in pf.iter_batches(batch_size=BATCH_ROWS):
            records = rb.to_pylist()
            yield [Row(f"{path}#{offset + i + 1}", rec) for i, rec in enumerate(records)]
            offset += len(records)
    except (pa.ArrowException, OSError) as exc:  # a damaged page surfaces only when its batch is read
        raise SeqprofError(f"Parquet file is damaged after row {offset:,} ({exc})", path=str(path),
                           fix="re-export or re-download the file") from None


def _read_arrow(path: Path, skip_bad_rows: bool, on_skip) -> Iterator[list[Row]]:
    """An Arrow IPC stream (what `datasets` writes) or IPC file, memory-mapped, a record batch at a time."""
    import pyarrow as pa

    try:
        source = pa.memory_map(str(path))
        try:
            batches = iter(pa.ipc.open_stream(source))
        except pa.ArrowInvalid:
            source.seek(0)
            reader = pa.ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        offset = 0
        for rb in batches:
            for start in range(0, rb.num_rows, BATCH_ROWS):
                records = rb.slice(start, BATCH_ROWS).to_pylist()
                yield [Row(f"{path}#{offset + i + 1}", rec) for i, rec in enumerate(records)]
                offset += len(records)
    except (pa.ArrowException, OSError) as exc:
        raise SeqprofError(f"not a readable Arrow file ({exc})", path=str(path),
                           fix="pass the dataset's save_to_disk directory or its .arrow shards") from None


def _read_csv(path: Path, skip_bad_rows: bool, on_skip) -> Iterator[list[Row]]:
    """Every cell as the text it is (CSV has no types: `1` is "1" to a trainer, not 1.0), decoded as UTF-8."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read_options = pacsv.ReadOptions(block_size=1 << 22)
    try:
        with pacsv.open_csv(path, read_options=read_options) as probe:  # the header: one block, types unused
            names = probe.schema.names
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise SeqprofError(f"the header names column {repeated[0]!r} more than once", path=str(path),
                               line=1, fix="give every column its own name")
        reader = pacsv.open_csv(path, read_options=read_options, convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, strings_can_be_null=False))
        offset = 0
        for rb in reader:
            records = rb.to_pylist()
            yield [Row(f"{path}#{offset + i + 1}", rec) for i, rec in enumerate(records)]
            offset += len(records)
    except UnicodeDecodeError:  # a header that is not UTF-8
        raise SeqprofError("CSV is not UTF-8 text", path=str(path),
                           fix="re-save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None
    except pa.ArrowInvalid as exc:
        if "UTF8" in str(exc) or "UTF-8" in str(exc):
            raise SeqprofError("CSV is not UTF-8 text", path=str(path),
                               fix="re-save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None
        raise SeqprofError(f"malformed CSV ({exc})", path=str(path), fix="check quoting and column counts") from None
    except pa.ArrowException as exc:
        raise SeqprofError(f"malformed CSV ({exc})", path=str(path), fix="check quoting and column counts") from None
