"""The save schedule load_best_model_at_end imposes (SP301 stays silent, SP459 says when the release refuses it),
on real projects' files: ylsung/Ladder-Side-Tuning pins transformers 4.6.0, which saves at each evaluation, and the
same files under 4.11.3 meet __post_init__'s "--load_best_model_at_end requires the save and eval strategy to
match"."""

from __future__ import annotations

import json
from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _findings(path: Path, code: str) -> dict[str, str]:
    report = lint_paths([path], LintOptions()).files[0]
    return {f.key: f.message for f in report.findings if f.code == code}


def test_load_best_model_at_end_saves_at_each_evaluation(tmp_path):
    """ylsung/Ladder-Side-Tuning's side_transformers.json: save_strategy "no" beside load_best_model_at_end and
    evaluation per epoch. transformers 4.6.0 (its setup.py) saves at every evaluation then (DefaultFlowCallback),
    so the run checkpoints each epoch; without load_best_model_at_end it never would."""
    from corpus_layout import lay_out

    folder = "ylsung__Ladder-Side-Tuning"
    name = f"{folder}/seq2seq__configs__side_transformers.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    data = json.loads(config.read_text())
    assert data["save_strategy"] == "no" and data["load_best_model_at_end"] is True
    assert _findings(config, "SP301") == {}

    edited = lay_out(tmp_path / "no_best_model", only=folder) / name
    edited.write_text(json.dumps({k: v for k, v in data.items() if k != "load_best_model_at_end"}, indent=2))
    assert "save_strategy" in _findings(edited, "SP301")


def test_load_best_model_at_end_with_another_save_schedule_is_refused_from_4_9(tmp_path):
    """ylsung/Ladder-Side-Tuning's lora.json evaluates per epoch and saves every 1000 steps with
    load_best_model_at_end. Its transformers==4.6.0 saves at each evaluation instead; 4.11.3's __post_init__ raises
    "--load_best_model_at_end requires the save and eval strategy to match" (training_args.py:737)."""
    from corpus_layout import lay_out

    folder = "ylsung__Ladder-Side-Tuning"
    name = f"{folder}/seq2seq__configs__lora.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert _findings(config, "SP459") == {}

    config = lay_out(tmp_path / "upgraded", only=folder) / name
    setup = config.parents[2] / "setup.py"
    setup.write_text(setup.read_text().replace("'transformers==4.6.0'", "'transformers==4.11.3'"))
    found = _findings(config, "SP459")
    assert list(found) == ["evaluation_strategy"] and "save_strategy steps (the default)" in found[
        "evaluation_strategy"]
