"""ORPO as TRL 1.16's ORPOTrainer runs it (trl.experimental.orpo), held to the H200
(benchmarks/memory/measured_h200_issue14_orpo.json, harness_orpo.py; predicted at af83f40 before the run).

Materialised logits, the chosen rows' NLL on a contiguous copy of their logits and the log-odds term, each
log_softmax in fp32 under the Trainer's autocast. Both runs kept one bf16 logits tensor more during the backward than
the walk (-5.5%, -7.3%); probe_orpo_loss.py's CPU emulation of the same loss does not, so it is left as measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from seqprof.predict.memory import estimate_memory

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

MEASURED = json.loads((BENCH / "measured_h200_issue14_orpo.json").read_text())["results"]


@pytest.mark.parametrize("result", MEASURED, ids=lambda r: r["name"])
def test_orpo_peak_within_8_percent_of_the_trainer_on_the_h200(result):
    sc = by_name(result["name"])
    est = estimate_memory(sc.architecture(), sc.setup)
    for predicted in (est.allocated_bytes, result["predicted_at_run"]):
        assert abs(predicted - result["max_allocated"]) <= 0.08 * result["max_allocated"]
    assert est.totals["trainable_params"] == result["trainable_params"]
    s = sc.setup
    assert all(b["chosen"] == [s.micro_batch_size, s.seq_len] for b in result["batches"])
    assert all(p["logits"] and p["grad"] for p in result["passes"])  # one forward, logits materialised, no reference


def test_the_chosen_nll_costs_what_its_logits_copy_and_fp32_log_softmax_take():
    """The NLL term over DPO's reference-free cousin without it (SimPO): about the chosen half of the logits copied
    in bf16 and log-softmaxed in fp32 (3 bytes a chosen logit over the bf16 logits at the forward's peak)."""
    from dataclasses import replace

    sc = by_name("orpo_trl_qwen3-1.7b_lora16_all_gc_b2_s2048")
    arch = sc.architecture()
    orpo = estimate_memory(arch, sc.setup)
    simpo = estimate_memory(arch, replace(sc.setup, trainer="simpo"))
    chosen_logits = arch.vocab_size * sc.setup.tokens // 2
    assert 2.5 * chosen_logits < orpo.allocated_bytes - simpo.allocated_bytes < 6.5 * chosen_logits
