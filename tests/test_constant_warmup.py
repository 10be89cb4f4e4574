"""Warmup beside a schedule that never warms up (SP465), on real recipes: philschmid's Llama 3.1 QLoRA recipe
(TRL) and kallewoof/qlora's axolotl file set `constant` with warmup. transformers' get_scheduler builds "constant"
without num_warmup_steps, so the warmup is never applied. Each test also shows what keeps the finding away."""

from __future__ import annotations

import json
from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

PHIL = "philschmid__deep-learning-pytorch-huggingface"
PHIL_QLORA = f"{PHIL}/training__receipes__llama-3-1-8b-qlora.yaml"
KALLE = "kallewoof__qlora"


def _unread(path: Path) -> list[tuple[str, int]]:
    report = lint_paths([path], LintOptions()).files[0]
    return [(f.key, f.line) for f in report.findings if f.code == "SP465"]


def test_a_constant_schedule_leaves_the_warmup_unread(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=PHIL) / PHIL_QLORA
    assert _unread(config) == [("warmup_ratio", 35)]
    config.write_text(config.read_text().replace("lr_scheduler_type: constant", "lr_scheduler_type: "
                                                 "constant_with_warmup", 1))
    assert _unread(config) == []


def test_a_project_that_builds_its_own_schedule_is_not_judged(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=PHIL) / PHIL_QLORA
    (config.parent / "run_sft.py").write_text(
        "from transformers import get_constant_schedule_with_warmup\n"
        "trainer = SFTTrainer(model, args, optimizers=(optimizer, scheduler))\n")
    assert _unread(config) == []


def test_axolotl_s_constant_scheduler_too(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=KALLE) / f"{KALLE}/axolotl.yml"
    assert _unread(config) == [("warmup_steps", 62)]


def test_a_deepspeed_scheduler_section_replaces_the_schedule(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=PHIL) / PHIL_QLORA
    (config.parent / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 2}}))
    config.write_text(config.read_text() + "\ndeepspeed: ds.json\n")
    assert _unread(config) == [("warmup_ratio", 35)]
    (config.parent / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 2}, "scheduler": {
        "type": "WarmupLR", "params": {"warmup_num_steps": 100}}}))
    assert _unread(config) == []
