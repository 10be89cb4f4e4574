"""How analyze scales with cores: threads inside one process, and worker processes (--workers).

Each configuration runs in a fresh process with the cache off, on the same data (benchmarks/corpora.py:
stdlib text chunks, and long multi-turn chats). `threads k`: one process, SEQPROF_THREADS=k and
RAYON_NUM_THREADS=k (the fast counter's and HF's thread pools). `workers k`: k processes of one thread each.

    python benchmarks/bench_workers.py [--tokenizer qwen-3] [--rows 1000] [--max-mb 16] [--max-cores 16]
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

CHILD = ("import sys\n"
         "from seqprof.dataset.analyze import AnalyzeOptions, build_profile\n"
         "p = build_profile(sys.argv[1], AnalyzeOptions(tokenizer=sys.argv[2], cache=False, workers=int(sys.argv[3])))\n"
         "print(p.sequence.total_tokens)\n")


def run(data: Path, tokenizer: str, threads: int, workers: int) -> tuple[float, int]:
    env = {**os.environ, "SEQPROF_THREADS": str(threads), "RAYON_NUM_THREADS": str(threads)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(data), tokenizer, str(workers)], env=env,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, int(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", default="qwen-3")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--max-mb", type=float, default=16)
    ap.add_argument("--max-cores", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    counts = [k for k in (1, 2, 4, 8, 16, 32) if k <= args.max_cores]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("text", "chat"):
            data = Path(tmp) / f"{shape}.jsonl"
            write_corpus(shape, args.rows, args.max_mb, data)
            base, tokens = run(data, args.tokenizer, 1, 1)
            print(f"{shape}: {data.stat().st_size / 1e6:.1f} MB, {tokens:,} tokens; 1 core: {base:.2f} s", flush=True)
            for k in counts[1:]:
                t_threads, n1 = run(data, args.tokenizer, k, 1)
                t_workers, n2 = run(data, args.tokenizer, 1, k)
                assert n1 == n2 == tokens
                print(f"  {k:>2} cores: threads {t_threads:6.2f} s ({base / t_threads:4.1f}x)   "
                      f"workers {t_workers:6.2f} s ({base / t_workers:4.1f}x)", flush=True)


if __name__ == "__main__":
    main()
