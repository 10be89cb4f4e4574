"""seqprof analyze vs the bare libraries on the same real rows, same run: prints time and peak-RSS ratios.

Shapes (benchmarks/corpora.py builds each from this Python's own sources, no downloads):
- text: stdlib .py files in ~4 KB chunks. Baseline: `tokenizers.Tokenizer.encode_batch` on the texts in memory.
- chat: long multi-turn conversations (mean ~35 messages, a few near 600) with per-role counts on.
  Baseline: transformers' `apply_chat_template(rows, tokenize=False)` + `Tokenizer.encode_batch`.
- preference: prompt/chosen/rejected strings. Baseline: `encode_batch` of prompt, chosen and rejected.
Each side runs in its own fresh process (so peak RSS is its own), interleaved, best of --repeat.
Both sides pay for loading the tokenizer; seqprof's time includes reading and parsing the JSONL file.
Goals (issue 10): chat time <= 1.15x and RSS <= 1.5x; text time <= 1.15x (<= 0.4x once the fast path lands).

    python benchmarks/bench_analyze.py --shape chat --rows 300 [--tokenizer qwen-3] [--repeat 3]
    python benchmarks/bench_analyze.py --shape text --max-mb 16
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def write_corpus(shape: str, rows: int, max_mb: float, path: Path) -> None:
    import corpora

    with path.open("w") as out:
        if shape == "text":
            for text in corpora.text_rows(int(max_mb * 1e6)):
                out.write(json.dumps({"text": text}) + "\n")
        elif shape == "chat":
            for msgs in corpora.chat_rows(rows):
                out.write(json.dumps({"messages": msgs}) + "\n")
        else:
            for row in corpora.preference_rows(rows):
                out.write(json.dumps(row) + "\n")


def run_side(side: str, shape: str, data: Path, tokenizer: str) -> dict:
    """One side, in this (fresh) process: wall time, tokens counted, peak RSS."""
    t0 = time.perf_counter()
    if side == "seqprof":
        from seqprof.dataset.analyze import AnalyzeOptions, build_profile

        profile = build_profile(data, AnalyzeOptions(tokenizer=tokenizer, cache=False))
        tokens = profile.sequence.total_tokens if shape != "preference" else \
            sum(profile.fields[f].total_tokens for f in ("prompt", "chosen", "rejected"))
    else:
        from seqprof.dataset.tokenizers import load_tokenizer

        loaded = load_tokenizer(tokenizer)
        rows = [json.loads(line) for line in data.read_text().splitlines()]
        bare = loaded.tokenizer
        if shape == "text":
            encs = bare.encode_batch([r["text"] for r in rows], add_special_tokens=True)
            tokens = sum(len(e) for e in encs)
        elif shape == "chat":
            from transformers import PreTrainedTokenizerFast

            hf = PreTrainedTokenizerFast(tokenizer_object=bare, **loaded.special_tokens)
            texts = hf.apply_chat_template([r["messages"] for r in rows], tokenize=False,
                                           chat_template=loaded.chat_template)
            encs = bare.encode_batch(texts, add_special_tokens=False)
            tokens = sum(len(e) for e in encs)
        else:
            texts = [r[k] for r in rows for k in ("prompt", "chosen", "rejected")]
            encs = bare.encode_batch(texts, add_special_tokens=False)
            eos = 1 if loaded.eos_token else 0
            tokens = sum(len(e) for e in encs) + 2 * eos * len(rows)
        del encs
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "tokens": tokens, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["text", "chat", "preference"], default="text")
    ap.add_argument("--tokenizer", default="qwen-2.5")
    ap.add_argument("--rows", type=int, default=300, help="chat / preference rows")
    ap.add_argument("--max-mb", type=float, default=16, help="text corpus size")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:  # a child process: one side, result as JSON on stdout
        print(json.dumps(run_side(args.side, args.shape, Path(args.data), args.tokenizer)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / f"{args.shape}.jsonl"
        write_corpus(args.shape, args.rows, args.max_mb, data)
        results: dict[str, list[dict]] = {"bare": [], "seqprof": []}
        for _ in range(args.repeat):  # interleaved, so machine noise hits both alike
            for side in results:
                proc = subprocess.run([sys.executable, __file__, "--side", side, "--shape", args.shape, "--data",
                                       str(data), "--tokenizer", args.tokenizer], capture_output=True, text=True,
                                      check=True)
                results[side].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        size = data.stat().st_size / 1e6
    bare, ours = (min(results[s], key=lambda r: r["seconds"]) for s in ("bare", "seqprof"))
    rss = {s: min(r["rss_mb"] for r in results[s]) for s in results}
    print(f"shape {args.shape}: {size:.1f} MB JSONL, {bare['tokens']:,} tokens ({args.tokenizer})")
    print(f"bare: {bare['seconds']:.2f} s, {rss['bare']:.0f} MB peak RSS   "
          f"seqprof analyze: {ours['seconds']:.2f} s, {rss['seqprof']:.0f} MB   (best of {args.repeat})")
    print(f"ratio seqprof / bare: time {ours['seconds'] / bare['seconds']:.3f}, peak RSS {rss['seqprof'] / rss['bare']:.3f}")
    if ours["tokens"] != bare["tokens"]:
        sys.exit(f"token totals differ: seqprof {ours['tokens']:,} vs bare {bare['tokens']:,}")


if __name__ == "__main__":
    main()
