"""Hybrid Gated-DeltaNet (Qwen3.5), Gemma 3 sandwich norms and Liger at a 248k vocabulary, held to H200 peaks.

The independent figures are `torch.cuda.max_memory_allocated()` measured on an H200 (benchmarks/memory/
measured_h200_issue14_hybrid*.json, transformers' torch path: no fla / causal-conv1d), random-init models of
published shapes. The holdout table was predicted at its recorded commit before it ran."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

from seqprof.predict.memory import estimate_memory

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

RUN = json.loads((BENCH / "measured_h200_issue14_hybrid.json").read_text())
HOLD = json.loads((BENCH / "measured_h200_issue14_hybrid_holdout.json").read_text())
RESULTS = RUN["results"] + HOLD["results"]


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r["name"])
def test_peak_within_3_percent_of_the_h200(result):
    sc = by_name(result["name"])
    predicted = estimate_memory(sc.architecture(), sc.setup).allocated_bytes
    assert abs(predicted - result["max_allocated"]) <= 0.03 * result["max_allocated"]


@pytest.mark.parametrize("result", [r for r in RESULTS if by_name(r["name"]).setup.adapter is None],
                         ids=lambda r: r["name"])
def test_parameters_are_what_transformers_built(result):
    """A full fine-tune's model on the GPU holds exactly the parameters seqprof counts (and trains them all)."""
    sc = by_name(result["name"])
    assert sc.architecture().param_count() == result["params_counted"] == result["trainable_params"]


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r["name"])
def test_trainable_parameters_are_what_peft_made_trainable(result):
    sc = by_name(result["name"])
    assert estimate_memory(sc.architecture(), sc.setup).totals["trainable_params"] == result["trainable_params"]


def test_holdout_was_predicted_before_it_ran_and_held():
    recorded = [abs(r["predicted_at_run"] - r["max_allocated"]) / r["max_allocated"] for r in HOLD["results"]]
    assert len(recorded) == 3 and max(recorded) <= 0.02 and statistics.median(recorded) <= 0.01
    assert HOLD["model_commit"] != RUN["model_commit"]


def test_the_estimate_names_the_linear_attention_path():
    sc = by_name("hybrid_qwen3.5-9b_full_bf16_gc_b2_s2048")
    notes = " ".join(estimate_memory(sc.architecture(), sc.setup).notes)
    assert "Gated DeltaNet" in notes and "torch path" in notes


def test_a_qwen3_5_config_without_layer_types_is_the_published_pattern():
    """Qwen3_5TextConfig.__post_init__ fills layer_types as one full-attention layer in 4 (full_attention_interval);
    the published config lists the same pattern, so both must give the same layers and parameters."""
    from seqprof.predict.architecture import architecture_from_config

    published = json.loads((BENCH / "configs" / "qwen3.5-9b.json").read_text())
    bare = {k: v for k, v in published.items() if k != "layer_types"}
    with_types = architecture_from_config(published, source="published")
    without = architecture_from_config(bare, source="bare")
    assert [x.kind for x in without.layers()] == published["layer_types"] == [x.kind for x in with_types.layers()]
    assert without.param_count() == with_types.param_count()
