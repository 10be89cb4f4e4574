"""Peak RSS of analyze does not grow with rows: 50k rows vs 500k rows of the same shape, fresh processes.

Goal (issue 10): RSS(500k) <= 1.25 x RSS(50k). Rows are real lines of the standard library's sources
(text shape) and real multi-turn conversations (chat shape, 5k vs 50k: each is ~100x longer).

    python benchmarks/bench_rows_memory.py [--shape text|chat]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = ("import json, resource, sys\n"
         "from seqprof.dataset.analyze import AnalyzeOptions, build_profile\n"
         "p = build_profile(sys.argv[1], AnalyzeOptions(cache=False))\n"
         "print(json.dumps({'rows': p.dataset.rows, 'tokens': p.sequence.total_tokens,\n"
         "                  'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n")


def write(shape: str, rows: int, path: Path) -> None:
    import corpora

    with path.open("w") as out:
        if shape == "text":
            lines = [line for text in corpora.text_rows(8_000_000) for line in text.splitlines() if line.strip()]
            for i in range(rows):
                out.write(json.dumps({"text": lines[i % len(lines)]}) + "\n")
        else:
            chats = corpora.chat_rows(min(rows, 2000))
            for i in range(rows):
                out.write(json.dumps({"messages": chats[i % len(chats)]}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["text", "chat"], default="text")
    args = ap.parse_args()
    small, large = (50_000, 500_000) if args.shape == "text" else (2_000, 20_000)
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for rows in (small, large):
            path = Path(tmp) / f"{rows}.jsonl"
            write(args.shape, rows, path)
            proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
            out[rows] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{args.shape}: {rows:>7,} rows  {path.stat().st_size / 1e6:7.1f} MB  "
                  f"{out[rows]['tokens']:>12,} tokens  peak RSS {out[rows]['rss_mb']:.0f} MB")
    print(f"ratio RSS {large:,} / {small:,} rows = {out[large]['rss_mb'] / out[small]['rss_mb']:.3f}  (goal <= 1.25)")


if __name__ == "__main__":
    main()
