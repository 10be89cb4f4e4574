"""GRPO's memory walk (seqprof/predict/memory/grpo.py) against TRL 1.16's own numbers.

The arithmetic tests recount the KV cache and the generation batch from the published config by hand. The TRL tests
run the real GRPOConfig and GRPOTrainer (CPU, a venv with trl 1.16: $SEQPROF_TRL_PYTHON, default /tmp/trlvenv) in a
subprocess and compare the batch TRL builds with the one seqprof assumes; they skip where that venv is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from seqprof.errors import SeqprofError
from seqprof.predict.architecture import read_architecture
from seqprof.predict.memory import TrainingSetup, estimate_memory
from seqprof.predict.memory.grpo import KV, rollout

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "benchmarks" / "memory" / "configs"
TRL_PYTHON = Path(os.environ.get("SEQPROF_TRL_PYTHON", "/tmp/trlvenv/bin/python"))
TOKENIZER = Path(__file__).resolve().parents[1] / ".bench" / "qwen-3"  # the harness's Qwen3 tokenizer (git-ignored)
needs_trl = pytest.mark.skipif(not TRL_PYTHON.exists() or not TOKENIZER.is_dir(),
                               reason="no venv with trl 1.16 (SEQPROF_TRL_PYTHON) or no .bench/qwen-3 tokenizer")


def _grpo(**kw) -> TrainingSetup:
    return TrainingSetup(**{"trainer": "grpo", "gradient_checkpointing": True, **kw})


def test_generation_peak_holds_every_layers_keys_and_values_at_prompt_plus_completion_minus_one():
    """8 x 8 = 64 completions x (128 + 2,048 - 1) cached tokens: Qwen3-0.6B's config has 28 layers, 8 kv heads of 128."""
    cfg = json.loads((CONFIGS / "qwen3-0.6b.json").read_text())
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    s = _grpo(micro_batch_size=8, steps_per_generation=8, seq_len=128 + 2048, max_completion_length=2048, adapter="lora",
              lora_targets=("q_proj", "v_proj"))
    est = estimate_memory(arch, s)
    by_hand = 2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * cfg["head_dim"] * 64 * (128 + 2048 - 1) * 2
    assert est.peak_phase.startswith("generation")
    assert est.components[KV] == pytest.approx(by_hand, rel=1e-6)


def test_generation_batch_is_micro_batch_times_steps_per_generation():
    ro = rollout(_grpo(micro_batch_size=8, gradient_accumulation_steps=4, seq_len=600, max_completion_length=512))
    assert (ro.rows, ro.prompts, ro.prompt_len, ro.old_logps, ro.ref_logps) == (32, 4, 88, False, False)
    ro = rollout(_grpo(micro_batch_size=8, gradient_accumulation_steps=4, steps_per_generation=2, seq_len=600,
                       max_completion_length=512, beta=0.04))
    assert (ro.rows, ro.old_logps, ro.ref_logps) == (16, False, True)  # 4 % (2 x 1) == 0: no old pass
    ro = rollout(_grpo(micro_batch_size=8, seq_len=600, max_completion_length=512, num_iterations=2))
    assert ro.old_logps  # 1 % (1 x 2) != 0


def test_reference_copy_only_for_full_fine_tuning():
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    base = _grpo(micro_batch_size=8, seq_len=640, max_completion_length=512)
    full = estimate_memory(arch, replace(base, beta=0.04))
    assert full.totals["reference_model"] == full.totals["weights"]
    lora = estimate_memory(arch, replace(base, beta=0.04, adapter="lora", lora_targets=("all-linear",)))
    assert lora.totals["reference_model"] == 0


def test_grpo_differs_from_sft_of_the_same_tokens():
    """The fused head keeps no logits: a GRPO step is not priced as SFT with HF's loss on b x s x V."""
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    g = estimate_memory(arch, _grpo(micro_batch_size=16, seq_len=640, max_completion_length=512))
    sft = estimate_memory(arch, TrainingSetup(micro_batch_size=16, seq_len=640, gradient_checkpointing=True))
    assert g.components.get("logits", 0) < sft.components["logits"] / 10


@pytest.mark.parametrize("kw", [dict(seq_len=512, max_completion_length=512), dict(micro_batch_size=6),
                                dict(num_generations=1)])
def test_bad_grpo_setups_are_one_error(kw):
    with pytest.raises(SeqprofError):
        _grpo(**{"micro_batch_size": 8, "seq_len": 640, "max_completion_length": 512, **kw})


def _trl(code: str, timeout: int = 600) -> str:
    out = subprocess.run([str(TRL_PYTHON), "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@needs_trl
def test_defaults_are_grpoconfigs():
    got = json.loads(_trl(
        "import json, tempfile; from trl import GRPOConfig; c = GRPOConfig(tempfile.mkdtemp(), use_cpu=True, "
        "per_device_train_batch_size=8, gradient_accumulation_steps=2); print(json.dumps(dict(n=c.num_generations, "
        "c=c.max_completion_length, mu=c.num_iterations, beta=c.beta, spg=c.steps_per_generation, "
        "rows=c.generation_batch_size, gc=c.gradient_checkpointing)))").splitlines()[-1])
    s = TrainingSetup(trainer="grpo", micro_batch_size=8, gradient_accumulation_steps=2, seq_len=1024)
    assert (got["n"], got["c"], got["mu"], got["beta"]) == (s.num_generations, s.max_completion_length,
                                                             s.num_iterations, s.beta)
    assert got["spg"] == 2 and got["rows"] == rollout(s).rows == 16
    assert got["gc"] is True  # GRPOConfig turns checkpointing on: scenarios set it explicitly


@needs_trl
def test_real_trainer_builds_the_batch_seqprof_assumes(tmp_path):
    """One ISSUE14_GRPO scenario through the real GRPOTrainer on CPU (the harness's --cpu-tiny): the tensors of
    each generation round have rows = micro batch x steps_per_generation, prompts padded to the longest, completions
    to max_completion_length, and old / reference log-probs exactly when seqprof runs those passes."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "memory"))
    from scenarios import ISSUE14_GRPO
    sc = ISSUE14_GRPO[2]
    _trl(f"import sys; sys.argv = ['h', 'run', '--out', {str(tmp_path)!r}, '--cpu-tiny', '--only', {sc.name!r}, "
         f"'--table', 't.json']; sys.path.insert(0, 'benchmarks/memory'); import harness_grpo; harness_grpo.main()")
    res = json.loads((tmp_path / "t.json").read_text())["results"][0]
    assert "error" not in res, res.get("traceback")
    s = TrainingSetup(**{k: tuple(v) if isinstance(v, list) else v for k, v in res["setup"].items()})
    ro = rollout(s)
    for batch in res["generation_batches"]:
        assert batch["prompt_ids"] == [ro.rows, ro.prompt_len]
        assert batch["completion_ids"] == [ro.rows, ro.completion_len]
        assert ("old_per_token_logps" in batch) == ro.old_logps
        assert ("ref_per_token_logps" in batch) == ro.ref_logps
    assert res["reference_model"] is False  # LoRA: the reference is the base with adapters off


def test_the_generation_batch_is_divisible_over_all_gpus_not_one(tmp_path):
    """GRPOConfig.__post_init__ checks per_device_train_batch_size x GPUs x steps_per_generation against
    num_generations: open-r1's recipes (4 per GPU, 16 generations) run on several GPUs. Without a stated GPU count
    the fewest that satisfy TRL are assumed and said; a setup that states too few is still one error."""
    from seqprof.config.read import read_plan
    from seqprof.errors import SeqprofError
    from seqprof.predict.memory import TrainingSetup
    from seqprof.predict.memory_plan import setup_from_plan

    config = tmp_path / "grpo.yaml"
    config.write_text("model_name_or_path: Qwen/Qwen3-1.7B\ndataset_name: open-r1/OpenR1-Math-220k\nbf16: true\n"
                      "per_device_train_batch_size: 4\nnum_generations: 16\nmax_completion_length: 1024\n"
                      "use_vllm: false\n")
    setup, notes = setup_from_plan(read_plan(config), prompt_length=256)
    assert setup.world_size == 4 and any("at least 4 GPUs are assumed" in n for n in notes)
    base = dict(trainer="grpo", micro_batch_size=4, num_generations=16, seq_len=1280, max_completion_length=1024)
    TrainingSetup(**base, world_size=4)
    with pytest.raises(SeqprofError, match="4 completions x 2 GPUs"):
        TrainingSetup(**base, world_size=2)
