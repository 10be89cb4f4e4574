"""Issue 14's measurements: MoE with transformers 5's fused experts, LoRA/QLoRA on a MoE, QLoRA as peft prepares it.

The tables are H200 runs of benchmarks/memory/harness.py (`--set issue14`, `--set issue14_holdout`); the holdout
was predicted and committed before it ran (its `model_commit`), and its recorded predictions are held here too.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

from seqprof.config.read import read_plan
from seqprof.predict.memory import TrainingSetup, estimate_memory
from seqprof.predict.memory_plan import setup_from_plan

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

RUN = json.loads((BENCH / "measured_h200_issue14.json").read_text())
HOLD = json.loads((BENCH / "measured_h200_issue14_holdout.json").read_text())
RESULTS = RUN["results"] + HOLD["results"]


def _estimate(name: str):
    sc = by_name(name)
    return estimate_memory(sc.architecture(), sc.setup)


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r["name"])
def test_peak_within_5_percent_of_the_h200(result):
    predicted = _estimate(result["name"]).allocated_bytes
    assert abs(predicted - result["max_allocated"]) <= 0.05 * result["max_allocated"]


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r["name"])
def test_trainable_parameters_are_what_peft_made_trainable(result):
    """peft's own count on the GPU (LoRA on fused experts and routers included) is the independent figure."""
    assert _estimate(result["name"]).totals["trainable_params"] == result["trainable_params"]


def test_holdout_was_predicted_before_it_ran_and_held():
    assert len(HOLD["model_commit"]) >= 7 and HOLD["versions"]["transformers"].startswith("5.")
    recorded = [abs(r["predicted_at_run"] - r["max_allocated"]) / r["max_allocated"] for r in HOLD["results"]]
    assert len(recorded) == 4 and max(recorded) <= 0.05 and statistics.median(recorded) <= 0.02
    names = " ".join(r["name"] for r in HOLD["results"])
    assert "moe" in names and "qlora_prep" in names


def test_moe_expert_gradients_are_the_experts_not_top_k_times_them():
    """A full fine-tune's expert gradients are one copy of the expert weights (the old walk priced top-k copies)."""
    sc = by_name("moe_qwen3-30b-a3b-8l_full_bf16_gc_b2_s2048")
    arch = sc.architecture()
    est = estimate_memory(arch, sc.setup)
    assert est.totals["gradients"] == 2 * arch.param_count()
    dense = estimate_memory(arch, TrainingSetup(micro_batch_size=2, seq_len=2048, gradient_checkpointing=True,
                                                optimizer="adamw_torch_fused"))
    assert dense.allocated_bytes == est.allocated_bytes


def test_peft_reaches_experts_only_on_converted_model_types():
    """qwen2_moe is transformers' conversion pattern itself, so peft's all-linear leaves its experts alone."""
    qwen2 = _estimate("holdout14_qwen1.5-moe_lora16_all_gc_b2_s2048")
    qwen3 = _estimate("moe_qwen3-30b-a3b_lora16_all_gc_b1_s4096")
    assert qwen2.totals["trainable_params"] < 20_000_000 < qwen3.totals["trainable_params"]
    assert any("reaches the fused experts" in n for n in qwen3.notes)
    assert not any("reaches the fused experts" in n for n in qwen2.notes)


def test_qlora_on_a_moe_keeps_the_experts_unquantised():
    sc = by_name("moe_qwen3-30b-a3b_qlora16_prep_b1_s2048")
    arch = sc.architecture()
    est = estimate_memory(arch, sc.setup)
    experts = arch.num_layers * 3 * arch.num_experts * arch.hidden_size * arch.moe_intermediate_size
    assert est.totals["weights"] > 4 * experts  # fp32 after the upcast, not 4-bit


def _plan(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return read_plan(path)


def test_axolotl_qlora_is_prepared_with_upcasts_and_trl_is_not(tmp_path):
    axolotl = _plan(tmp_path, "ax.yaml", "base_model: NousResearch/Meta-Llama-3-8B\nadapter: qlora\n"
                    "load_in_4bit: true\nlora_target_linear: true\nsequence_len: 4096\nmicro_batch_size: 1\n")
    trl = _plan(tmp_path, "trl.yaml", "model_name_or_path: meta-llama/Llama-3.1-8B\nuse_peft: true\n"
                "load_in_4bit: true\nmax_length: 4096\nper_device_train_batch_size: 1\n")
    assert axolotl.dialect == "axolotl" and trl.dialect == "trl"
    assert setup_from_plan(axolotl)[0].kbit_upcast is True
    assert setup_from_plan(trl)[0].kbit_upcast is False
