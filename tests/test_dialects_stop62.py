"""Readings settled in stop 62, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqprof.lint.run import LintOptions, lint_paths

TEMPLATE = "charlieJ107__transformers-template"
NER = "jdirkx__enja-ner_xlm-RoBERTa"
QWEN_VL = "aiiseverything__Qwen-VL2-postrain"


def _fresh(tmp_path: Path, folder: str) -> Path:
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config: Path, code: str | None = None):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if code is None or f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("edit,raised", [
    (None, True),  # save_strategy "best", metric_for_best_model empty, load_best_model_at_end false
    (("metric_for_best_model: #", "metric_for_best_model: eval_loss #"), False),
    (("load_best_model_at_end: false", "load_best_model_at_end: true"), False),  # __post_init__ fills in "loss"
    (("lr_scheduler_type: linear", "lr_scheduler_type: reduce_lr_on_plateau"), False),  # so does a plateau
    (("save_strategy: \"best\"", "save_strategy: \"steps\""), False),
])
def test_save_strategy_best_without_a_metric_is_refused_when_the_trainer_is_made(tmp_path, edit, raised):
    """charlieJ107/transformers-template's training_args.yaml saves on "best" and names no metric: transformers
    (>=4.52.4 installs 5.25) raises in Trainer.__init__ (trainer.py:686-689) before the first step."""
    config = _fresh(tmp_path, TEMPLATE) / f"{TEMPLATE}/config__training_args.yaml"
    if edit:
        _edit(config, *edit)
    found = _findings(config, "SP471")
    assert [(f.key, f.line, f.severity) for f in found] == ([("save_strategy", 183, "error")] if raised else [])
    if raised:
        assert "transformers>=4.52.4 (pyproject.toml:15) installs 5.25" in found[0].message


def test_save_strategy_best_is_judged_only_from_the_release_that_has_it(tmp_path):
    """SaveStrategy.BEST and the Trainer's check came in 4.47 (trainer_utils.py, trainer.py); before it the value
    is no strategy at all, which is not this rule's to say."""
    config = _fresh(tmp_path, TEMPLATE) / f"{TEMPLATE}/config__training_args.yaml"
    _edit(config.parents[1] / "pyproject.toml", '"transformers[torch]>=4.52.4"', '"transformers[torch]==4.46.3"')
    assert _findings(config, "SP471") == []


def test_a_requirement_with_no_version_allows_the_newest_release(tmp_path):
    """jdirkx/enja-ner_xlm-RoBERTa's requirements.txt names `transformers` with no version: a fresh install gets
    the newest release, which lacks logging_dir (removed in 5.15), so the removal is an error, as under a range
    that allows it. With no requirement at all the newest is only assumed: a warning that says so."""
    config = _fresh(tmp_path, NER) / f"{NER}/config__training_args.yaml"
    found = [(f.code, f.severity) for f in _findings(config) if f.key == "logging_dir"]
    assert found == [("SP408", "error")]
    message = next(f.message for f in _findings(config) if f.key == "logging_dir")
    assert "requirements.txt:1 names transformers with no version: pip installs transformers 5.25" in message

    config = _fresh(tmp_path, NER) / f"{NER}/config__training_args.yaml"
    _edit(config.parents[1] / "requirements.txt", "transformers\n", "")
    found = [f for f in _findings(config) if f.key == "logging_dir"]
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "no transformers pin found beside the config" in found[0].message


def test_a_deepspeed_comment_key_is_no_misspelt_setting(tmp_path):
    """Qwen-VL2-postrain's ds_zero2.json writes its comments as "//", "//2", "//3": DeepSpeedConfig reads only the
    top-level keys it knows, so they are notes. A misspelt top-level setting in the same file stays a warning."""
    config = _fresh(tmp_path, QWEN_VL) / f"{QWEN_VL}/configs__ds_zero2.json"
    data = json.loads(config.read_text())
    assert [k for k in data if k.startswith("//")] == ["//", "//2", "//3"]
    found = _findings(config)
    assert [(f.code, f.key) for f in found] == [("SP407", "//"), ("SP407", "//2"), ("SP407", "//3")]
    assert all(f.severity == "info" and "a comment" in f.message for f in found)

    config = _fresh(tmp_path, QWEN_VL) / f"{QWEN_VL}/configs__ds_zero2.json"
    _edit(config, '"gradient_clipping"', '"gradient_cliping"')
    warned = [(f.code, f.key, f.severity) for f in _findings(config) if f.severity != "info"]
    assert warned == [("SP401", "gradient_cliping", "warning")]

    config = _fresh(tmp_path, QWEN_VL) / f"{QWEN_VL}/configs__ds_zero2.json"
    _edit(config, '"//2": "', '"//2": {"stage": 3}, "unused": "')  # a block under a comment's name is no comment
    assert ("SP401", "//2") in [(f.code, f.key) for f in _findings(config)]


POST_TRAINING_LAB = "AntonioGr7__post-training-lab"
EEDI = "yannan90__kaggle-2024-Eedi-8th-place-training-code"
EMBODIED = "zwq2018__embodied_reasoner"


@pytest.mark.parametrize("stage,trainer", [
    ("01-sft", "sft"), ("02-reward-modeling", "reward"), ("03-ppo", "ppo"), ("04-dpo", "dpo"), ("05-grpo", "grpo"),
    ("07-distillation", "gkd"),
])
def test_each_stage_s_config_is_read_by_the_script_in_its_own_folder(tmp_path, stage, trainer):
    """Every stage of AntonioGr7/post-training-lab runs `train.py --config configs/default.yaml` from its folder, so
    each launch line names every stage's config; the script beside the config decides (07's builds GKDTrainer,
    whose beta the keys alone read as DPO's)."""
    config = _fresh(tmp_path, POST_TRAINING_LAB) / f"{POST_TRAINING_LAB}/{stage}__configs__default.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert (report.dialect, report.facts.plan.setting("trainer").value) == ("trl", trainer)


def test_ppo_s_total_episodes_not_the_epochs_sets_the_run_s_length(tmp_path):
    """03-ppo saves nothing (save_strategy: no) and states no epochs, so TrainingArguments' 3 would make it a
    3-epoch run; PPOTrainer derives its length from total_episodes when set (30000 episodes: 469 updates), which
    the config gives no speed for. Without total_episodes the epochs count again."""
    config = _fresh(tmp_path, POST_TRAINING_LAB) / f"{POST_TRAINING_LAB}/03-ppo__configs__default.yaml"
    assert _findings(config, "SP301") == []
    _edit(config, "total_episodes:", "# total_episodes:")
    config = config.rename(config.with_name("03-ppo__configs__edited.yaml"))
    assert [f.key for f in _findings(config, "SP301")] == ["save_strategy"]


def test_a_warmup_scheduler_without_its_peak_warms_up_to_deepspeed_s_default(tmp_path):
    """The Eedi 8th-place reranker's stage3.json: AdamW with no lr and WarmupDecayLR with no warmup_max_lr. The
    Trainer fills only keys written "auto", so the run peaks at 0.001 (lr_schedules.py's default) whatever its
    learning_rate. With warmup_max_lr "auto" the Trainer's rate is used."""
    config = _fresh(tmp_path, EEDI) / f"{EEDI}/train__reranker__stage3.json"
    found = _findings(config, "SP469")
    assert len(found) == 1 and "WarmupDecayLR scheduler gives no warmup_max_lr" in found[0].message
    _edit(config, '"warmup_num_steps": "auto"', '"warmup_num_steps": "auto", "warmup_max_lr": "auto"')
    config = config.rename(config.with_name("stage3_edited.json"))
    assert _findings(config, "SP469") == []


def test_a_brace_named_slot_is_a_placeholder_not_a_mapping(tmp_path):
    """embodied_reasoner's finetune templates write `cutoff_len: {cutoff_len}`, which YAML reads as a one-key
    mapping; scripts/train.sh fills every slot with sed before llamafactory-cli runs. A note, not SP406."""
    config = _fresh(tmp_path, EMBODIED) / f"{EMBODIED}/finetune__full__template.yaml"
    found = _findings(config)
    assert [f for f in found if f.code == "SP406"] == []
    slot = next(f for f in found if f.key == "cutoff_len")
    assert slot.code == "SP407" and "'cutoff_len: {cutoff_len}' is a template placeholder" in slot.message
