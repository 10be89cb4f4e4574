#!/usr/bin/env python3
"""Print measured vs predicted peak for every committed H200 measurement (no GPU needed).

Also prints the error of accelerate's rule of thumb ("training with Adam" = 4 x the weights in the
training dtype) on the same measurements, as the baseline seqprof has to beat.

    .venv/bin/python benchmarks/memory/compare.py [--markdown]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from scenarios import by_name  # noqa: E402

from seqprof.predict.memory import PRECISIONS, estimate_memory  # noqa: E402

GIB = 2**30


def main() -> int:
    markdown = "--markdown" in sys.argv
    rows = []
    baseline = []
    for table in ("measured_h200.json", "measured_h200_holdout.json", "measured_h200_issue14.json",
                  "measured_h200_issue14_holdout.json", "measured_h200_issue14_hybrid.json",
                  "measured_h200_issue14_hybrid_holdout.json", "measured_h200_issue14_grpo.json",
                  "measured_h200_issue14_cce.json", "measured_h200_issue14_dpo.json",
                  "measured_h200_issue14_dpo_holdout.json", "measured_h200_issue14_sft.json",
                  "measured_h200_issue14_kto.json", "measured_h200_issue14_sft_4b.json",
                  "measured_h200_issue14_int8.json", "measured_h200_issue14_int8_llama.json",
                  "measured_h200_issue14_sft_llama_qlora.json", "measured_h200_issue14_unsloth.json",
                  "measured_h200_issue14_unsloth_holdout.json", "measured_h200_issue14_orpo.json"):
        data = json.loads((HERE / table).read_text())
        for r in data["results"]:
            sc = by_name(r["name"])
            est = estimate_memory(sc.architecture(), sc.setup)
            meas = r.get("max_allocated")
            at_run = r.get("predicted_at_run")
            if not isinstance(meas, int):
                rows.append((r["name"], "OOM" if r.get("oom") else r.get("error", "?")[:40],
                             f"{est.allocated_bytes / GIB:.2f}", "", "", est.peak_phase))
                continue
            err = (est.allocated_bytes - meas) / meas
            dtype_bytes = 4 if sc.setup.master_weights_fp32 else PRECISIONS[sc.setup.precision]
            baseline.append(abs(4 * sc.architecture().param_count() * dtype_bytes - meas) / meas)
            err_run = (at_run - meas) / meas if isinstance(at_run, int) else None
            rows.append((r["name"], f"{meas / GIB:.2f}", f"{est.allocated_bytes / GIB:.2f}", f"{100 * err:+.1f}%",
                         f"{100 * err_run:+.1f}%" if err_run is not None else "", est.peak_phase))
    head = ("scenario", "measured GiB", "predicted GiB", "error", "error at run", "peak at")
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(str(x[i])) for x in (head, *rows)) for i in range(len(head))]
        for row in (head, *rows):
            print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    errs = [abs(float(r[3].rstrip("%"))) for r in rows if r[3]]
    print(f"\n{len(errs)} measured: median |error| {statistics.median(errs):.2f}%, max {max(errs):.2f}%")
    print(f"accelerate's 4 x weights on the same runs: median |error| {100 * statistics.median(baseline):.0f}%, "
          f"max {100 * max(baseline):.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
