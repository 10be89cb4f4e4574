"""ZeRO CPU offload per rank against DeepSpeed's own model-state estimators (an independent formula, not ours):
deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs (offload_optimizer: 2 bytes a param on
the GPU) and stage3.py estimate_zero3_model_states_mem_needs (offload_param + offload_optimizer: the largest layer's
params and grads, 4 bytes each param of it; offload_optimizer alone: that plus 2 bytes a param / GPUs). Not measured:
that needs several GPUs (the multi-GPU issue)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from seqprof.config.read import read_plan
from seqprof.predict.memory import TrainingSetup, estimate_memory
from seqprof.predict.memory_plan import setup_from_plan

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

ARCH = by_name("llama3.1-8b_full_bf16_gc_b1_s2048").architecture()
WORLD = 8


def _states(zero: int, offload_optimizer: bool, offload_params: bool) -> int:
    s = TrainingSetup(micro_batch_size=1, seq_len=2048, gradient_checkpointing=True, zero_stage=zero,
                      world_size=WORLD, offload_optimizer=offload_optimizer, offload_params=offload_params)
    est = estimate_memory(ARCH, s)
    return sum(est.components.get(k, 0) for k in ("weights", "gradients", "optimizer_states"))


@pytest.mark.parametrize("zero, optimizer, params, deepspeed", [
    (2, True, False, lambda P, L: 2 * P),
    (3, True, True, lambda P, L: 4 * L),
    (3, True, False, lambda P, L: 4 * L + 2 * P / WORLD),
])
def test_offloaded_model_states_match_deepspeeds_estimators(zero, optimizer, params, deepspeed):
    P, largest = ARCH.param_count(), max(layer.params for layer in ARCH.layers())
    assert _states(zero, optimizer, params) == pytest.approx(deepspeed(P, largest), rel=0.01)


def test_offload_is_read_from_the_deepspeed_json(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {
        "stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "none"}}}))
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: meta-llama/Llama-3.1-8B\nmax_length: 2048\nper_device_train_batch_size: 1\n"
                      "bf16: true\ndeepspeed: ds.json\n")
    setup, _ = setup_from_plan(read_plan(config, dialect="trl"))
    assert (setup.zero_stage, setup.offload_optimizer, setup.offload_params) == (3, True, False)
    est = estimate_memory(ARCH, setup)
    assert est.components.get("optimizer_states", 0) == 0
    assert any("offloaded to the host" in n for n in est.notes)
