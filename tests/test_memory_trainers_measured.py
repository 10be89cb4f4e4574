"""SFT and KTO held to the trainers' real steps on an H200 (benchmarks/memory/measured_h200_issue14_{sft,kto}.json:
harness_sft.py runs transformers' Trainer and TRL 1.16's SFTTrainer, harness_kto.py TRL 1.16's KTOTrainer, on padded
batches of real text), and the configs that decide which path `seqprof memory` walks.

Every scenario was predicted at the recorded commit before its run. What the run then found is modelled after it and
says so: transformers' Trainer keeps the embedding in 32-bit states under a bitsandbytes 8-bit optimizer (-7.5% at
the run), and LLM.int8 weights peaked far above the walk, so `seqprof memory` refuses them."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from seqprof.config.read import read_plan
from seqprof.errors import SeqprofError
from seqprof.predict.memory import estimate_memory
from seqprof.predict.memory_plan import refused, setup_from_plan

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory"
sys.path.insert(0, str(BENCH))
from scenarios import by_name  # noqa: E402

SFT = json.loads((BENCH / "measured_h200_issue14_sft.json").read_text())
KTO = json.loads((BENCH / "measured_h200_issue14_kto.json").read_text())
MEASURED = [r for r in SFT["results"] + KTO["results"] if isinstance(r.get("max_allocated"), int)]
FOUND_AT_RUN = {"sft_hf_qwen3-1.7b_full_adamw8bit_gc_b4_s2048"}  # modelled after its run (the Trainer's 32-bit embedding states)


def _result(name: str) -> dict:
    return next(r for r in MEASURED if r["name"] == name)


@pytest.mark.parametrize("result", [r for r in MEASURED if not refused(by_name(r["name"]).setup)],
                         ids=lambda r: r["name"])
def test_peak_within_3_percent_of_the_trainer_on_the_h200(result):
    sc = by_name(result["name"])
    est = estimate_memory(sc.architecture(), sc.setup)
    assert abs(est.allocated_bytes - result["max_allocated"]) <= 0.03 * result["max_allocated"]
    assert est.totals["trainable_params"] == result["trainable_params"]
    if result["name"] not in FOUND_AT_RUN:  # predicted before the run, and it held
        assert abs(result["predicted_at_run"] - result["max_allocated"]) <= 0.03 * result["max_allocated"]


def test_the_runs_had_the_batches_the_walk_assumes():
    """Padded rows (the collator's padding mask reaches sdpa) at the scenario's length; TRL's forwards scored through
    the fused lm_head (no logits), the Trainer's materialised them; KTO ran its KL rows and, for full fine-tuning,
    a reference copy."""
    for r in MEASURED:
        s = by_name(r["name"]).setup
        assert all(b["input_ids"] == [s.micro_batch_size, s.seq_len] and b["padding"] > 0 for b in r["batches"])
        grad = [p for p in r["passes"] if p["grad"]]
        assert grad and all(p["fused_lm_head"] == s.fused_lm_head and p["logits"] != s.fused_lm_head for p in grad)
        if s.trainer == "kto":
            assert all(b["KL_input_ids"] == [s.micro_batch_size, s.seq_len] for b in r["batches"])
            assert r["reference_model"] == (s.reference == "model")


def test_the_padding_mask_is_what_the_padded_trainer_run_keeps():
    """Without the padding mask the same Trainer step (no checkpointing: every layer keeps its mask) would be 2%
    under the measured peak; with it, within 0.1%."""
    r = _result("sft_hf_qwen3-1.7b_full_b4_s1024")
    sc = by_name(r["name"])
    masked = estimate_memory(sc.architecture(), sc.setup).allocated_bytes
    unmasked = estimate_memory(sc.architecture(), replace(sc.setup, padding_mask=False)).allocated_bytes
    assert unmasked < 0.98 * r["max_allocated"] and abs(masked - r["max_allocated"]) < 0.001 * r["max_allocated"]


def test_the_fused_head_is_what_trl_runs_not_the_logits():
    r = _result("sft_trl_qwen3-4b_lora16_all_b2_s2048")
    sc = by_name(r["name"])
    logits = estimate_memory(sc.architecture(), replace(sc.setup, fused_lm_head=False)).allocated_bytes
    assert logits > 1.05 * r["max_allocated"]


def test_eight_bit_adam_keeps_the_embedding_in_32_bit_states_only_under_the_trainer():
    r = _result("sft_hf_qwen3-1.7b_full_adamw8bit_gc_b4_s2048")
    sc = by_name(r["name"])
    plain = estimate_memory(sc.architecture(), replace(sc.setup, hf_trainer=False))
    trainer = estimate_memory(sc.architecture(), sc.setup)
    arch = sc.architecture()
    extra = trainer.totals["optimizer_states"] - plain.totals["optimizer_states"]
    assert abs(extra - arch.vocab_size * arch.hidden_size * (8 - 2 - 8 / 256)) < 2  # fp32 states, not 8-bit
    assert plain.allocated_bytes < 0.95 * r["max_allocated"]


def _config(tmp_path: Path, text: str, pins: str | None = None) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'x'\n" + (f"dependencies = [{pins!r}]\n" if pins else ""))
    path = folder / "train.yaml"
    path.write_text(text)
    return path


TRL_SFT = "model_name_or_path: Qwen/Qwen3-1.7B\ndataset_name: trl-lib/Capybara\nmax_length: 2048\n" \
          "per_device_train_batch_size: 4\nbf16: true\n"


@pytest.mark.parametrize("pin, fused", [(None, True), ("trl>=1.15", True), ("trl==1.14.2", False),
                                        ("trl==1.9.0", False), ("trl<1.0", False)])
def test_the_trl_release_the_pins_allow_decides_the_fused_head(tmp_path, pin, fused):
    """add_fused_lm_head arrived in trl 1.15.0 (no earlier release's trainer/*.py has it)."""
    setup, notes = setup_from_plan(read_plan(_config(tmp_path, TRL_SFT, pin)))
    assert setup.fused_lm_head is fused and setup.padding_mask and setup.hf_trainer
    assert any("fused lm_head" in n for n in notes)


def test_axolotl_dpo_materialises_the_logits(tmp_path):
    """axolotl 0.19.0 requires trl==1.9.0: its DPO runs TRL's trainer from before the fused head."""
    path = _config(tmp_path, "base_model: Qwen/Qwen3-1.7B\nrl: dpo\nsequence_len: 2048\nmicro_batch_size: 2\n"
                             "datasets:\n  - path: x.jsonl\n    type: chatml.intel\n")
    setup, _ = setup_from_plan(read_plan(path))
    assert setup.trainer == "dpo" and not setup.fused_lm_head


def test_eight_bit_weights_are_one_clear_refusal(tmp_path):
    path = _config(tmp_path, "base_model: Qwen/Qwen3-4B\nload_in_8bit: true\nadapter: lora\nsequence_len: 2048\n"
                             "micro_batch_size: 2\n")
    with pytest.raises(SeqprofError, match="8-bit"):
        setup_from_plan(read_plan(path))
