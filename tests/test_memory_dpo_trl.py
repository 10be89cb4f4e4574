"""DPO as TRL 1.16's DPOTrainer runs it (seqprof/predict/memory/trl_head.py), checked against the real trainer.

The walk tests read the published Qwen3 configs; the TRL test runs every ISSUE14_DPO scenario through the real
DPOTrainer on CPU (benchmarks/memory/harness_dpo.py --cpu-tiny, in a venv with trl 1.16: $SEQPROF_TRL_PYTHON,
default /tmp/trlvenv) and compares the batches and forwards TRL ran with the ones seqprof walks; it skips where that
venv is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from seqprof.predict.architecture import read_architecture
from seqprof.predict.memory import TrainingSetup, estimate_memory
from seqprof.predict.memory.trl_head import fused_head, padded

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "memory"
CONFIGS = BENCH / "configs"
TRL_PYTHON = Path(os.environ.get("SEQPROF_TRL_PYTHON", "/tmp/trlvenv/bin/python"))
TOKENIZER = Path(__file__).resolve().parents[1] / ".bench" / "qwen-3"  # the harness's Qwen3 tokenizer (git-ignored)
needs_trl = pytest.mark.skipif(not TRL_PYTHON.exists() or not TOKENIZER.is_dir(),
                               reason="no venv with trl 1.16 (SEQPROF_TRL_PYTHON) or no .bench/qwen-3 tokenizer")
sys.path.insert(0, str(BENCH))
from scenarios import ISSUE14_DPO, by_name  # noqa: E402


def _dpo(**kw) -> TrainingSetup:
    return TrainingSetup(**{"trainer": "dpo", "micro_batch_size": 4, "seq_len": 2048, "reference": "model",
                            "fused_lm_head": True, **kw})


def test_no_logits_are_materialised():
    """Doubling the batch adds 2 x 4 rows x 2,048 tokens x 151,936 vocab (4.6 GiB in bf16) to the materialised walk's
    logits; the fused head scores one 4,096 x 32,768 tile at a time, so its share grows by under a tenth of that."""
    cfg = json.loads((CONFIGS / "qwen3-0.6b.json").read_text())
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    more = 2 * cfg["vocab_size"] * 2 * 4 * 2048

    def logits(**kw) -> int:
        return estimate_memory(arch, _dpo(**kw)).components.get("logits", 0)
    assert logits(micro_batch_size=8) - logits() < more / 10
    assert logits(micro_batch_size=8, fused_lm_head=False) - logits(fused_lm_head=False) >= more


def test_loss_type_ipo_prices_as_sigmoid():
    """Every DPOTrainer loss_type works on per-sequence log-prob sums (dpo_trainer.py _compute_loss)."""
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    assert estimate_memory(arch, _dpo(trainer="ipo")).allocated_bytes == estimate_memory(arch, _dpo()).allocated_bytes


def test_orpo_keeps_the_materialised_logits():
    """trl/experimental/orpo's concatenated_forward reads outputs.logits: no fused head, whatever fused_lm_head."""
    s = _dpo(trainer="orpo", reference="none")
    assert not fused_head(s)
    arch = read_architecture(CONFIGS / "qwen3-0.6b.json")
    assert estimate_memory(arch, s).allocated_bytes == \
        estimate_memory(arch, replace(s, fused_lm_head=False)).allocated_bytes


def test_measured_harness_loss_scenarios_keep_what_they_measured():
    """The DPO rows of measured_h200*.json ran harness.py's own loss (materialised logits), the ISSUE14_DPO ones
    TRL 1.16's DPOTrainer (fused lm_head): each scenario says which."""
    names = [r["name"] for table in BENCH.glob("measured_h200*.json")
             for r in json.loads(table.read_text())["results"]]
    trl = {sc.name for sc in ISSUE14_DPO}  # measured through TRL's own DPOTrainer (harness_dpo.py)
    dpo = [by_name(n) for n in names if "_dpo_" in n and n not in trl]
    assert len(dpo) == 6
    assert not any(sc.setup.fused_lm_head for sc in dpo)
    assert all(sc.setup.fused_lm_head for sc in ISSUE14_DPO)


@pytest.fixture(scope="module")
def trl_runs(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("dpo")
    code = (f"import sys; sys.argv = ['h', 'run', '--out', {str(out)!r}, '--cpu-tiny', '--table', 't.json']; "
            "sys.path.insert(0, 'benchmarks/memory'); import harness_dpo; harness_dpo.main()")
    run = subprocess.run([str(TRL_PYTHON), "-c", code], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((out / "t.json").read_text())["results"]


@needs_trl
def test_real_trainer_batches_and_forwards_are_the_ones_seqprof_walks(trl_runs):
    """Per scenario, what DPOTrainer.train() built and ran on CPU: 2 x micro batch rows of seq_len (chosen then
    rejected, right-padded: a padding mask), labelled tokens within seqprof's bound of every position after the
    first, every forward through the fused head without logits, and one no_grad reference forward per step, through
    the copy TRL loaded, through the adapters-off policy, or none when the log-probs were precomputed."""
    import harness_dpo
    assert [r["name"] for r in trl_runs] == [sc.name for sc in ISSUE14_DPO]
    for res in trl_runs:
        assert "error" not in res, res.get("traceback")
        s = TrainingSetup(**{k: tuple(v) if isinstance(v, list) else v for k, v in res["setup"].items()})
        assert fused_head(s) and padded(s)
        b, p, short = s.micro_batch_size, harness_dpo.TINY_PROMPT, harness_dpo.TINY_SHORTER
        steps = harness_dpo.STEPS - harness_dpo.WARMUP
        assert len(res["batches"]) == steps
        for batch in res["batches"]:
            assert batch["input_ids"] == [s.sequences, s.seq_len]
            assert batch["padding"] == b * short > 0
            assert batch["completion_tokens"] == b * (s.seq_len - p) + b * (s.seq_len - short - p)
            assert batch["completion_tokens"] <= s.sequences * (s.seq_len - 1)
            assert batch["precomputed"] == (s.reference == "precomputed")
        assert all(f["fused_lm_head"] and not f["logits"] and f["input_ids"] == [s.sequences, s.seq_len]
                   for f in res["passes"])
        reference = [f for f in res["passes"] if not f["grad"]]
        assert len([f for f in res["passes"] if f["grad"]]) == steps
        assert len(reference) == (steps if s.reference in ("model", "lora_base") else 0)
        assert all(f["model"] == ("reference" if s.reference == "model" else "policy") for f in reference)
        assert res["reference_model"] == (s.reference == "model")
        assert res["loss_type"] == (["ipo"] if s.trainer == "ipo" else ["sigmoid"])
