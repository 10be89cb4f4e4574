"""lr_scheduler_kwargs that get_scheduler never reads (SP462) or hands to a schedule function that refuses them
(SP463), on real recipes: Neelectric/open-r1_olmo's GRPO recipe keeps open-r1's `min_lr_rate: 0.1` beside
`lr_scheduler_type: constant_with_warmup`; ignvr/rl-for-real puts `num_warmup_steps: 10` there; xiyang-aads-lilly's
alignment-handbook recipe gives cosine_with_min_lr its min_lr. The verdicts follow the signatures each transformers
release's optimization.py gives its schedule functions (keys/scheduler_kwargs.json), checked here against a table
written out by hand from transformers 4.57.6 and 5.25.0's optimization.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seqprof.config.dialects.scheduler_kwargs import scheduler_use
from seqprof.lint.run import LintOptions, lint_paths

OLMO = "Neelectric__open-r1_olmo"
OLMO_GRPO = f"{OLMO}/recipes__CohereForAI__c4ai-command-r7b-12-2024__grpo__grpo_config_v00.03.yaml"
RL_FOR_REAL = "ignvr__rl-for-real"
HANDBOOK = "xiyang-aads-lilly__alignment-handbook"

# transformers 5.25.0 optimization.py, read by eye: the keywords each schedule function takes besides the optimizer
# (get_linear_schedule_with_warmup, get_cosine_schedule_with_warmup, get_cosine_with_min_lr_schedule_with_warmup,
# get_polynomial_decay_schedule_with_warmup, get_wsd_schedule), and whether get_scheduler passes the kwargs on
BY_HAND_5_25 = {
    "linear": (True, {"num_warmup_steps", "num_training_steps", "last_epoch"}),
    "cosine": (True, {"num_warmup_steps", "num_training_steps", "num_cycles", "last_epoch"}),
    "cosine_with_min_lr": (True, {"num_warmup_steps", "num_training_steps", "num_cycles", "last_epoch", "min_lr",
                                  "min_lr_rate"}),
    "polynomial": (True, {"num_warmup_steps", "num_training_steps", "lr_end", "power", "last_epoch"}),
    "warmup_stable_decay": (True, {"num_warmup_steps", "num_decay_steps", "num_training_steps", "num_stable_steps",
                                   "warmup_type", "decay_type", "min_lr_ratio", "num_cycles", "last_epoch"}),
    "constant": (False, {"last_epoch"}),
    "constant_with_warmup": (False, {"num_warmup_steps", "last_epoch"}),
}


def _codes(path: Path, versions: str | None = None) -> dict[str, str]:
    report = lint_paths([path], LintOptions(versions=versions)).files[0]
    return {f.code: f.message for f in report.findings if f.code in ("SP462", "SP463")}


def _set_type(config: Path, kind: str) -> None:
    text, count = re.subn(r"(?m)^lr_scheduler_type: *\S+", f"lr_scheduler_type: {kind}", config.read_text())
    assert count == 1
    config.write_text(text)


def test_the_committed_table_matches_the_schedule_functions_read_by_hand():
    table = scheduler_use()["5.25.0"]
    for kind, (reads, takes) in BY_HAND_5_25.items():
        assert table[kind]["reads"] is reads
        assert set(table[kind]["takes"]) == takes
    assert table["warmup_stable_decay"]["needs"] == ["num_decay_steps"]
    assert scheduler_use()["4.57.6"]["inverse_sqrt"]["reads"] is False  # 5.x passes them on


def test_kwargs_beside_constant_with_warmup_are_never_read(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path / "olmo", only=OLMO) / OLMO_GRPO
    found = _codes(config)
    assert list(found) == ["SP462"] and "min_lr_rate" in found["SP462"]
    for name in ("config__multi_tasks.yaml", "config__syllogism_toy.yaml"):
        config = lay_out(tmp_path / name, only=RL_FOR_REAL) / f"{RL_FOR_REAL}/{name}"
        assert list(_codes(config)) == ["SP462"]


@pytest.mark.parametrize(("kind", "code"), [
    ("cosine_with_min_lr", None), ("cosine", "SP463"), ("linear", "SP463"), ("polynomial", "SP463"),
    ("constant", "SP462")])
def test_min_lr_rate_follows_what_each_schedule_takes(tmp_path, kind, code):
    """min_lr_rate is a keyword of cosine_with_min_lr alone; the others refuse it, and constant never reads it."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=OLMO) / OLMO_GRPO
    _set_type(config, kind)
    reads, takes = BY_HAND_5_25[kind]
    expected = None if "min_lr_rate" in takes else "SP463" if reads else "SP462"
    assert code == expected
    assert list(_codes(config)) == ([code] if code else [])


def test_a_missing_required_argument_and_a_repeated_one_are_refused(tmp_path):
    from corpus_layout import lay_out

    name = f"{HANDBOOK}/recipes__llama3-8b__sft__config_full.yaml"
    config = lay_out(tmp_path / "as_published", only=HANDBOOK) / name
    assert _codes(config) == {}
    _set_type(config, "warmup_stable_decay")
    assert "takes no min_lr" in _codes(config)["SP463"]
    config.write_text(config.read_text().replace("  min_lr: 5e-6\n", "  min_lr_ratio: 0.1\n", 1))
    assert "needs num_decay_steps" in _codes(config)["SP463"]
    config.write_text(config.read_text().replace("  min_lr_ratio: 0.1\n",
                                                 "  min_lr_ratio: 0.1\n  num_decay_steps: 100\n"))
    assert _codes(config) == {}
    config.write_text(config.read_text().replace("  num_decay_steps: 100\n", "  num_decay_steps: 100\n"
                                                 "  num_warmup_steps: 5\n"))
    assert "got multiple values" in _codes(config)["SP463"]


def test_a_deepspeed_run_or_a_project_scheduler_is_not_judged(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path / "deepspeed", only=OLMO) / OLMO_GRPO
    config.write_text(config.read_text() + "\ndeepspeed: ds_config.json\n")
    assert _codes(config) == {}
    config = lay_out(tmp_path / "own_scheduler", only=OLMO) / OLMO_GRPO
    (config.parents[1] / "trainer.py").write_text(
        "class MyTrainer(GRPOTrainer):\n    def create_scheduler(self, num_training_steps, optimizer=None):\n"
        "        return super().create_scheduler(num_training_steps, optimizer)\n")
    assert _codes(config) == {}


def test_cosine_with_min_lr_needs_exactly_one_floor(tmp_path):
    """get_cosine_with_min_lr_schedule_with_warmup raises ValueError itself without min_lr or min_lr_rate ("One of
    min_lr or min_lr_rate should be set through the `lr_scheduler_kwargs`") and with both ("Only one of ...")."""
    from corpus_layout import lay_out

    name = f"{HANDBOOK}/recipes__llama3-8b__sft__config_full.yaml"
    config = lay_out(tmp_path / "no_floor", only=HANDBOOK) / name
    config.write_text(config.read_text().replace("lr_scheduler_kwargs:\n  min_lr: 5e-6\n", "", 1))
    assert "lr_scheduler_kwargs" not in config.read_text()
    assert "needs one of min_lr or min_lr_rate" in _codes(config)["SP463"]
    config = lay_out(tmp_path / "two_floors", only=HANDBOOK) / name
    config.write_text(config.read_text().replace("  min_lr: 5e-6\n", "  min_lr: 5e-6\n  min_lr_rate: 0.1\n", 1))
    assert "takes only one of min_lr and min_lr_rate" in _codes(config)["SP463"]
