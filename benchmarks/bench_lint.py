"""`seqprof lint CONFIG --profile profile.json` wall time (a fresh process, as CI runs it), target <= 1 s.

The profile is real: Python's standard library cut into top-level blocks (functions, classes,
paragraphs of code), tokenized once by `seqprof analyze` with the packaged Qwen 2.5 tokenizer and saved.
Each timed run is a new interpreter doing what CI does: start, read the config, load the profile,
solve buckets, simulate the strategies, run every rule, print. The baseline, timed in the same
process the same way, is a bare interpreter start (`python -c pass`): the ratio says how much of
the wall time seqprof itself adds. The run also checks that transformers was never imported.

    python benchmarks/bench_lint.py [--config PATH] [--max-mb 8] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STORY = REPO.parent / "shared" / "configs" / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"
TARGET_S = 1.0


def stdlib_blocks(max_bytes: int) -> list[str]:
    """Real text with a natural spread of lengths: stdlib sources split at top-level statements."""
    blocks, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for block in re.split(r"\n(?=(?:def|class|async def|if __name__) )", source):
            if block.strip():
                blocks.append(block)
                total += len(block)
                if total >= max_bytes:
                    return blocks
    return blocks


def wall(cmd: list[str], repeat: int) -> tuple[float, float, str]:
    """Median wall time and median CPU time (user + sys of the child: what a busy machine does not inflate)."""
    times, cpus, out = [], [], ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = proc.stdout + proc.stderr
    return statistics.median(times), statistics.median(cpus), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(STORY))
    ap.add_argument("--max-mb", type=float, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from seqprof.dataset.analyze import build_profile

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "stdlib.jsonl"
        data.write_text("".join(json.dumps({"text": b}) + "\n" for b in stdlib_blocks(int(args.max_mb * 1e6))))
        profile = build_profile(data)
        profile_path = Path(tmp) / "profile.json"
        profile.save(profile_path)
        stats = profile.sequence.stats()
        print(f"profile: {stats.count:,} rows, mean {stats.mean:.1f}, p99 {stats.p99:.0f}, max {stats.max:,} tokens")

        baseline, baseline_cpu, _ = wall([sys.executable, "-c", "pass"], args.repeat)
        probe = ("import sys\nfrom seqprof.cli import main\n"
                 f"try:\n    main(['lint', {args.config!r}, '--profile', {str(profile_path)!r}])\n"
                 "except SystemExit:\n    pass\n"
                 "print('transformers imported:', 'transformers' in sys.modules)\n")
        lint_s, lint_cpu, out = wall([sys.executable, "-c", probe], args.repeat)
        print(out.strip().splitlines()[-1])
        print(f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall time grows with it)")
        print(f"bare interpreter start: wall {baseline:.3f} s, cpu {baseline_cpu:.3f} s (median of {args.repeat})")
        print(f"seqprof lint --profile: wall {lint_s:.3f} s, cpu {lint_cpu:.3f} s (median of {args.repeat}); "
              f"target <= {TARGET_S:.1f} s wall: {'met' if lint_s <= TARGET_S else 'NOT met'}")
        print(f"ratio lint / bare start: wall {lint_s / baseline:.1f}x, cpu {lint_cpu / max(baseline_cpu, 1e-3):.1f}x")


if __name__ == "__main__":
    main()
