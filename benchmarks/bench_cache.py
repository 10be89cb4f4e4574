"""A re-run of analyze on unchanged input vs the first run, each in a fresh process: prints the ratio.

Goal (issue 10): the cached re-run takes <= 10% of the first run's time. Runs on every shape of
benchmarks/corpora.py with an empty cache directory of its own.

    python benchmarks/bench_cache.py [--rows 1000] [--max-mb 16] [--tokenizer qwen-2.5]

A cached run still pays Python's start, the imports and hashing the input (~0.3 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_analyze import write_corpus  # noqa: E402


def timed_analyze(data: Path, tokenizer: str, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "seqprof", "analyze", str(data), "-t", tokenizer, "--format", "json"],
                   check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000, help="chat rows (preference: 10x)")
    ap.add_argument("--max-mb", type=float, default=16)
    ap.add_argument("--tokenizer", default="qwen-2.5")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        for shape in ("text", "chat", "preference"):
            data = Path(tmp) / f"{shape}.jsonl"
            write_corpus(shape, args.rows * (10 if shape == "preference" else 1), args.max_mb, data)
            first = timed_analyze(data, args.tokenizer, env)
            again = timed_analyze(data, args.tokenizer, env)
            print(f"{shape:<10} {data.stat().st_size / 1e6:6.1f} MB  first {first:6.2f} s  cached {again:5.2f} s  "
                  f"ratio {again / first:.3f}  (goal <= 0.10)")


if __name__ == "__main__":
    main()
