"""Where batches of rows are counted: in this process, or in worker processes (--workers N).

Tokenizing already runs on every core (HF's encode_batch and the fast counter use one thread per core);
what stays on one core is Python's part: rendering chat templates, normalising rows, reading lengths
back. Worker processes split that too, in ~1 MB pieces. Results come back in input order, so a profile
made with any number of workers is identical; at most 4 x workers pieces are in flight, so memory stays
bounded.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from seqprof.dataset.chat_template import TemplateRunaway
from seqprof.dataset.lengths import BatchLengths, LengthCounter
from seqprof.dataset.tokenizers import LoadedTokenizer
from seqprof.errors import SeqprofError

Batch = tuple[list[dict], list[str]]  # normalised examples and their locations
Counted = tuple[list[int] | None, BatchLengths | None, list[tuple[str, str]]]  # kept rows (None: all), lengths, skips


def count_batch(counter: LengthCounter, examples: Sequence[dict], locations: Sequence[str],
                skip_bad_rows: bool) -> Counted:
    """Count a batch; with --skip-bad-rows a row the chat template refuses is dropped (and said), not fatal."""
    try:
        return None, counter.count(examples, locations), []
    except TemplateRunaway:
        raise  # the template's fault: every row would pay the bound again
    except SeqprofError:
        if not skip_bad_rows:
            raise
    kept, skips = [], []
    for i, (ex, loc) in enumerate(zip(examples, locations)):
        try:
            counter.count([ex], [loc])
        except TemplateRunaway:
            raise
        except SeqprofError as exc:
            skips.append((loc, exc.message))
            continue
        kept.append(i)
    if not kept:
        return kept, None, skips
    return kept, counter.count([examples[i] for i in kept], [locations[i] for i in kept]), skips


def count_batches(batches: Iterable[Batch], tok: LoadedTokenizer, schema: str, *, per_turn_fields: bool,
                  fast_path: bool, skip_bad_rows: bool, workers: int = 1) -> Iterator[tuple[Batch, Counted]]:
    """Each batch with its counts, in order, by one LengthCounter here or one per worker process."""
    if workers <= 1:
        counter = LengthCounter(tok, schema, per_turn_fields=per_turn_fields, fast_path=fast_path)
        for batch in batches:
            yield batch, count_batch(counter, *batch, skip_bad_rows)
        return
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                             initargs=(tok, schema, per_turn_fields, fast_path)) as pool:
        pending: deque = deque()
        for piece in _pieces(batches):
            pending.append((piece, pool.submit(_count_in_worker, *piece, skip_bad_rows)))
            if len(pending) >= 4 * workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()


WORKER_PIECE_CHARS = 1 << 20  # ~1 MB of text per task: a reader's 16 MB batch keeps 16 workers busy


def _pieces(batches: Iterable[Batch]) -> Iterator[Batch]:
    """Reader batches cut into ~1 MB pieces, so every worker has work."""
    for examples, locations in batches:
        start, size = 0, 0
        for i, example in enumerate(examples):
            size += _chars(example)
            if size >= WORKER_PIECE_CHARS:
                yield examples[start:i + 1], locations[start:i + 1]
                start, size = i + 1, 0
        if start < len(examples):
            yield examples[start:], locations[start:]


def _chars(example: dict) -> int:
    total = 0
    for value in example.values():
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, list):
            total += sum(len(m.get("content") or "") for m in value if isinstance(m, dict)
                         and isinstance(m.get("content"), str))
    return total


_COUNTER: LengthCounter | None = None  # the worker process's own counter


def _start_worker(tok: LoadedTokenizer, schema: str, per_turn_fields: bool, fast_path: bool) -> None:
    global _COUNTER
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one process per core already
    os.environ["SEQPROF_THREADS"] = "1"
    from seqprof.dataset import fast_bpe

    fast_bpe.reset_threads()  # a thread pool inherited through fork has no threads in this process
    _COUNTER = LengthCounter(tok, schema, per_turn_fields=per_turn_fields, fast_path=fast_path)


def _count_in_worker(examples: Sequence[dict], locations: Sequence[str], skip_bad_rows: bool) -> Counted:
    assert _COUNTER is not None
    return count_batch(_COUNTER, examples, locations, skip_bad_rows)
