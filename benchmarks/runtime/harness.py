"""Time the scenarios of scenarios.json on this machine's GPU (one setup per process), appending to a JSONL file.

    python3 benchmarks/runtime/harness.py --out $OUT/measured.jsonl --deadline 540

Every distinct (rows, length) of a setup, fit grid and holdout samples alike, is timed once: warm-up steps of
that shape, then the median of timed steps (seqprof.predict.calibrate.StepTimer). The prediction is made
afterwards on the CPU (compare.py), so nothing here knows the model's coefficients.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLAN = "scenarios.json"
sys.path.insert(0, str(HERE.parents[1]))


def shapes_of(plan: dict, name: str) -> list[tuple[int, int]]:
    shapes = [tuple(s) for s in plan["fit"].get(name, [])]
    pairs = plan["setups"][name]["setup"]["trainer"] == "dpo"  # a sampled row is a pair: chosen and rejected
    for dist in plan["holdout"].values():
        for strategy in dist["strategies"].values():
            shapes += [(2 * r if pairs else r, n) for r, n in strategy["sample"]]
    seen, out = set(), []
    for s in shapes:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def child(name: str, out: str, deadline: float) -> None:
    from seqprof.predict.calibrate import measure
    from seqprof.predict.memory.setup import TrainingSetup

    plan = json.loads((HERE / PLAN).read_text())
    spec = plan["setups"][name]
    config = json.loads((HERE.parent / "memory" / "configs" / f"{spec['model']}.json").read_text())
    setup = TrainingSetup(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec["setup"].items()})

    def record(row):
        with open(out, "a") as fh:
            fh.write(json.dumps({"setup": name, **row}) + "\n")
    started = time.monotonic()
    measure(config, setup, shapes_of(plan, name), warmup=2, repeats=3, deadline=deadline, on_row=record)
    print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=540, help="seconds from now after which no shape starts")
    ap.add_argument("--setups", nargs="*")
    ap.add_argument("--child")
    ap.add_argument("--plan", default="scenarios.json")
    ap.add_argument("--until", type=float)
    args = ap.parse_args()
    global PLAN
    PLAN = args.plan
    if args.child:
        child(args.child, args.out, time.monotonic() + args.until)
        return 0
    plan = json.loads((HERE / PLAN).read_text())
    wall_deadline = time.time() + args.deadline
    for name in args.setups or list(plan["setups"]):
        left = wall_deadline - time.time()
        if left < 20:
            break
        # the child's deadline is on its own monotonic clock: pass the seconds left
        subprocess.run([sys.executable, __file__, "--child", name, "--out", args.out, "--plan", args.plan,
                        "--until", str(left)], timeout=left + 120, check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
