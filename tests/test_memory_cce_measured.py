"""Cut Cross-Entropy held to H200 peaks (benchmarks/memory/measured_h200_issue14_cce.json: cut-cross-entropy 25.1.1's
linear_cross_entropy as axolotl's plugin calls it, predicted at the recorded commit before the run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from seqprof.predict.memory import estimate_memory

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

RUN = json.loads((BENCH / "measured_h200_issue14_cce.json").read_text())


@pytest.mark.parametrize("result", RUN["results"], ids=lambda r: r["name"])
def test_cce_peak_within_2_percent_of_the_h200(result):
    sc = by_name(result["name"])
    est = estimate_memory(sc.architecture(), sc.setup)
    assert sc.setup.loss == "cut_cross_entropy"
    assert abs(est.allocated_bytes - result["max_allocated"]) <= 0.02 * result["max_allocated"]
    assert abs(result["predicted_at_run"] - result["max_allocated"]) <= 0.02 * result["max_allocated"]
    assert est.components.get("logits", 0) == 0  # no logits exist under CCE; the hf loss would hold them
