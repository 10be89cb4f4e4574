"""seqprof analyze vs a bare tokenizer on the same large real corpus, same run: prints the time ratio.

Corpus: every .py file of this Python's standard library, cut into ~4 KB chunks (real code and
docstrings), as a text JSONL. The baseline is `tokenizers.Tokenizer.encode_batch` on the same texts
already in memory (plus loading the tokenizer, which both pay); seqprof's time includes reading and parsing the file, counting and summarising.
Goal (issue 2): ratio <= 1.15.

    python benchmarks/bench_analyze.py [--tokenizer qwen-2.5] [--max-mb 24]
"""

from __future__ import annotations

import argparse
import json
import sysconfig
import tempfile
import time
from pathlib import Path


def corpus(max_bytes: int) -> list[str]:
    texts, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            src = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for start in range(0, len(src), 4096):
            chunk = src[start:start + 4096]
            texts.append(chunk)
            total += len(chunk)
            if total >= max_bytes:
                return texts
    return texts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", default="qwen-2.5")
    ap.add_argument("--max-mb", type=float, default=24)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from seqprof.dataset.analyze import AnalyzeOptions, build_profile
    from seqprof.dataset.tokenizers import load_tokenizer

    texts = corpus(int(args.max_mb * 1e6))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "stdlib.jsonl"
        data.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
        bare_times, seqprof_times = [], []
        for _ in range(args.repeat):  # interleaved, so machine noise hits both alike
            t0 = time.perf_counter()
            bare = load_tokenizer(args.tokenizer).tokenizer  # both sides pay for loading the tokenizer
            encs = bare.encode_batch(texts, add_special_tokens=True)
            bare_total = sum(len(e) for e in encs)
            del encs  # freeing the encodings is part of the cost (seqprof frees its own inside its run)
            bare_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            profile = build_profile(data, AnalyzeOptions(tokenizer=args.tokenizer))
            seqprof_times.append(time.perf_counter() - t0)
        assert profile.sequence.total_tokens == bare_total, "seqprof and the bare tokenizer disagree"
    b, s = min(bare_times), min(seqprof_times)
    print(f"corpus: {len(texts):,} rows, {sum(map(len, texts)) / 1e6:.1f} MB, {bare_total:,} tokens ({args.tokenizer})")
    print(f"bare tokenizers.encode_batch: {b:.2f} s   seqprof analyze: {s:.2f} s   (best of {args.repeat})")
    print(f"ratio seqprof / bare = {s / b:.3f}  (goal <= 1.15)")


if __name__ == "__main__":
    main()
