"""Fit the step-time model on the fit grid of measured.jsonl and judge it on the holdout strategies (CPU).

    python benchmarks/runtime/compare.py benchmarks/runtime/measured_h200.jsonl [--write]

For every holdout (setup, distribution, strategy): the epoch time measured (the mean step time of its sampled
batches x its batch count) against the fitted model, the prior written before the run (prior.json) and the
naive data-sheet baseline (all FLOPs at 40% of peak), on the same sampled batches. --write saves the fitted
calibration as seqprof/predict/calibrations/h200.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from seqprof.predict.architecture import architecture_from_config  # noqa: E402
from seqprof.predict.memory.setup import TrainingSetup  # noqa: E402
from seqprof.predict.steptime import Calibration, fit_calibration, model_costs, naive_seconds  # noqa: E402


def load(measured: Path, plan_name: str = "scenarios.json"):
    plan = json.loads((HERE / plan_name).read_text())
    times: dict[tuple[str, int, int], float] = {}
    for line in measured.read_text().splitlines():
        row = json.loads(line)
        if row.get("seconds"):
            times[(row["setup"], row["rows"], row["length"])] = row["seconds"]
    costs = {}
    for name, spec in plan["setups"].items():
        cfg = json.loads((ROOT / "benchmarks" / "memory" / "configs" / f"{spec['model']}.json").read_text())
        setup = TrainingSetup(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec["setup"].items()})
        costs[name] = (model_costs(architecture_from_config(cfg), setup), setup)
    return plan, times, costs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("measured", type=Path)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--plan", default="scenarios.json",
                    help="scenarios_fresh.json: judge the shipped calibration on the fresh holdout (no fit)")
    args = ap.parse_args()
    plan, times, costs = load(args.measured, args.plan)
    fit_rows = [(costs[name][0], r, n, times[(name, r, n)])
                for name, shapes in plan["fit"].items() for r, n in shapes if (name, r, n) in times]
    prior = Calibration.from_dict(json.loads((HERE / "prior.json").read_text()))
    if not fit_rows:  # the fresh plan has no fit grid: judge what ships
        from seqprof.predict.steptime import shipped_calibration

        fitted = shipped_calibration()
    else:
        fitted = fit_calibration(fit_rows, "H200 141GB",
                             f"measured on an NVIDIA H200 by benchmarks/runtime/harness.py: {len(fit_rows)} steps "
                                 f"of {len(plan['fit'])} setups (benchmarks/runtime/measured_h200.jsonl)", start=prior)
    print("fitted seconds per unit:", {k: f"{v:.3g}" for k, v in fitted.seconds_per_unit.items()})
    fit_err = [abs(fitted.step_seconds(costs[n][0], r, L) / times[(n, r, L)] - 1)
               for n, shapes in plan["fit"].items() for r, L in shapes if (n, r, L) in times]
    if fit_err:
        print(f"fit set: {len(fit_err)} steps, median |error| {statistics.median(fit_err):.1%}, max {max(fit_err):.1%}")
    errors = {"fitted": [], "prior": [], "naive": []}
    ranks = {"fitted": [0, 0], "naive": [0, 0]}
    print("\n| setup | distribution | strategy | measured epoch s | fitted | prior | naive |")
    print("|---|---|---|---|---|---|---|")
    for name, (cost, setup) in costs.items():
        pairs = setup.trainer == "dpo"
        for dist, d in plan["holdout"].items():
            epoch = {}
            for strategy, s in d["strategies"].items():
                shapes = [(2 * r if pairs else r, n) for r, n in s["sample"]]
                if not all((name, r, n) in times for r, n in shapes):
                    continue
                scale = s["batches"] / len(shapes)
                measured = sum(times[(name, r, n)] for r, n in shapes) * scale
                got = {"fitted": sum(fitted.step_seconds(cost, r, n) for r, n in shapes) * scale,
                       "prior": sum(prior.step_seconds(cost, r, n) for r, n in shapes) * scale,
                       "naive": sum(float(naive_seconds(cost, r, n)) for r, n in shapes) * scale}
                for k in errors:
                    errors[k].append(got[k] / measured - 1)
                epoch[strategy] = (measured, got)
                print(f"| {name} | {dist} | {strategy} | {measured:,.1f} | {got['fitted']:,.1f} "
                      f"({got['fitted'] / measured - 1:+.0%}) | {got['prior']:,.1f} ({got['prior'] / measured - 1:+.0%}) "
                      f"| {got['naive']:,.1f} ({got['naive'] / measured - 1:+.0%}) |")
            names = list(epoch)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    ma, mb = epoch[a][0], epoch[b][0]
                    if max(ma, mb) / min(ma, mb) > 1.10:
                        for k in ranks:
                            ranks[k][1] += 1
                            ranks[k][0] += (epoch[a][1][k] > epoch[b][1][k]) == (ma > mb)
    for k, errs in errors.items():
        a = [abs(e) for e in errs]
        if a:
            print(f"{k}: holdout epochs {len(a)}, median |error| {statistics.median(a):.1%}, max {max(a):.1%}"
                  + (f", pairs ranked right {ranks[k][0]}/{ranks[k][1]}" if k in ranks else ""))
    if args.write:
        out = ROOT / "seqprof" / "predict" / "calibrations" / "h200.json"
        out.write_text(json.dumps(fitted.to_dict(), indent=1) + "\n")
        print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
