"""Readings settled in stop 55, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import pytest

from seqprof.lint.run import LintOptions, lint_paths

CMR = "yansonglee__CMR-R"
SIMPO = "orivine__dpo_new"
ALDRIN = "aldrin-kabya__dpo-training"
POST_TRAIN = "JiangZhende__llm_post_train"
SPATIAL = "SongY123__SpatialText2SQL"


def _report_to(findings):
    return [(f.code, f.severity) for f in findings if f.key == "report_to"]


def test_report_to_null_is_what_the_installed_transformers_refuses(tmp_path):
    """The transformers this suite installs (5.x) wraps report_to=None as [None], and the function Trainer.__init__
    builds its callbacks with refuses it; "none" it takes. yansonglee/CMR-R's GRPO recipe leaves `report_to:` empty
    (null) and pins no transformers, so a fresh install gets 5.x: SP467, an error. Written `none`, nothing is
    reported."""
    transformers = pytest.importorskip("transformers")
    from packaging.version import Version

    from corpus_layout import lay_out

    assert Version(transformers.__version__) >= Version("5.0")
    from transformers.integrations import get_reporting_integration_callbacks

    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), report_to=None)
    with pytest.raises(ValueError, match="None is not supported"):
        get_reporting_integration_callbacks(args.report_to)
    off = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none")
    assert get_reporting_integration_callbacks(off.report_to) == []

    config = f"{CMR}/recipes__Qwen2.5-7B-Instruct__grpo__config_demo.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=CMR) / config], LintOptions()).files[0].findings
    assert _report_to(found) == [("SP467", "error")]
    assert "a fresh install gets transformers 5." in next(f.message for f in found if f.key == "report_to")
    tree = lay_out(tmp_path / "fixed", only=CMR)
    path = tree / config
    path.write_text(path.read_text().replace("report_to:\n", "report_to: none\n"))
    assert _report_to(lint_paths([path], LintOptions()).files[0].findings) == []


def test_report_to_null_under_a_4x_pin_means_every_integration(tmp_path):
    """orivine/dpo_new pins transformers==4.44.2, whose TrainingArguments reads None as "all" (every reporting
    integration installed): SP468, a warning that names the pin. A launch line that passes --report_to itself
    decides what runs, and the file's null is not reported."""
    from corpus_layout import lay_out

    config = f"{SIMPO}/training_configs__llama-3_2-1b-instruct-simpo.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=SIMPO) / config], LintOptions()).files[0].findings
    assert _report_to(found) == [("SP468", "warning")]
    message = next(f.message for f in found if f.key == "report_to")
    assert "transformers 4.44" in message and "transformers==4.44.2" in message
    tree = lay_out(tmp_path / "launched", only=SIMPO)
    (tree.root / SIMPO / "run_simpo.sh").write_text(
        "accelerate launch scripts/run_simpo.py training_configs/llama-3_2-1b-instruct-simpo.yaml --report_to=none\n")
    assert _report_to(lint_paths([tree / config], LintOptions()).files[0].findings) == []


def test_report_to_written_none_is_fixed_with_the_word_none(tmp_path):
    """`report_to: None` is the text 'None' (SP455); for report_to the fix is the word none, never null, which
    transformers 5 refuses. Other keys keep the null fix."""
    path = tmp_path / "sft.yaml"
    path.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\noutput_dir: out\nreport_to: None\n"
                    "hub_model_id: None\npush_to_hub: true\n")
    found = {f.key: f for f in lint_paths([path], LintOptions()).files[0].findings if f.code == "SP455"}
    assert found["report_to"].fix.startswith("write report_to: none")
    assert found["hub_model_id"].fix.startswith("write hub_model_id: null")


def test_a_zero_warmup_ratio_beside_warmup_steps_under_transformers_5(tmp_path):
    """aldrin-kabya/dpo-training's LLaMA-Factory DPO files set `warmup_ratio: 0.0` and `warmup_steps: 20`; the
    bundled LLaMA-Factory allows transformers up to 5.0.0, whose __post_init__ copies any warmup_ratio given, 0 too,
    over warmup_steps (`if self.warmup_ratio is not None`): the run never warms up (SP450 on warmup_steps). Pinned
    to 4.57, warmup_steps wins and the 0 changes nothing."""
    from corpus_layout import lay_out

    config = f"{ALDRIN}/dpo_full_1b.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=ALDRIN) / config], LintOptions()).files[0].findings
    overridden = [f for f in found if f.code == "SP450"]
    assert [(f.key, f.severity) for f in overridden] == [("warmup_steps", "warning")]
    assert "so the run does not warm up at all" in overridden[0].message
    tree = lay_out(tmp_path / "pinned", only=ALDRIN)
    pyproject = tree.root / ALDRIN / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("transformers>=4.51.0,<=5.0.0", "transformers>=4.51.0,<=4.57.1"))
    assert not [f for f in lint_paths([tree / config], LintOptions()).files[0].findings if f.code == "SP450"]


def test_a_zero_section_key_no_deepspeed_release_has(tmp_path):
    """JiangZhende/llm_post_train's ds_config.json writes `"device": "none"` straight under zero_optimization, beside
    an offload_optimizer block that has its own device; DeepSpeedZeroConfig (extra="forbid" since 0.7) has no such
    field and deepspeed.initialize refuses the file. Under offload_optimizer, device is a field and passes."""
    from corpus_layout import lay_out

    config = f"{POST_TRAIN}/ds_config.json"
    found = lint_paths([lay_out(tmp_path / "published", only=POST_TRAIN) / config], LintOptions()).files[0].findings
    assert [(f.code, f.key) for f in found if f.severity in ("warning", "error")] == \
        [("SP401", "zero_optimization.device")]
    tree = lay_out(tmp_path / "moved", only=POST_TRAIN)
    path = tree / config
    path.write_text(path.read_text().replace('"device": "none",', '"overlap_comm": true,'))
    assert not [f for f in lint_paths([path], LintOptions()).files[0].findings if f.severity == "warning"]


def test_a_launcher_that_runs_the_file_by_a_shell_default(tmp_path):
    """SongY123/SpatialText2SQL's scripts/finetune/llamafactory/train.sh sets
    `CONFIG_PATH="${1:-${DEFAULT_CONFIG}}"` (the Qwen SFT file beside it) and runs `llamafactory-cli train
    "${CONFIG_PATH}"`: the file a run takes when no argument is given is LLaMA-Factory's. Without that line, the
    project's own loader, which reads sections of config/finetune.yaml by the same key names, makes it the
    project's."""
    from corpus_layout import lay_out

    config = f"{SPATIAL}/scripts__finetune__llamafactory__qwen25_coder_7b_nl2sql_full_sft.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=SPATIAL) / config], LintOptions()).files[0]
    assert (report.dialect, report.facts.plan.setting("trainer").value) == ("llamafactory", "sft")
    tree = lay_out(tmp_path / "unlaunched", only=SPATIAL)
    (tree.root / SPATIAL / "scripts" / "finetune" / "llamafactory" / "train.sh").unlink()
    assert lint_paths([tree / config], LintOptions()).files[0].dialect == "unknown"


def test_reads_through_a_section_do_not_claim_a_flat_file(tmp_path):
    """A project trainer that reads `self.config.model.model_name_or_path` and `config.training.output_dir` reads a
    file with model: and training: sections, not a flat LLaMA-Factory file that shares the names. Read straight off
    the config (`config.output_dir`), the same names make the flat file the project's own."""
    (tmp_path / ".git").mkdir()
    code = tmp_path / "src" / "trainer.py"
    code.parent.mkdir()
    keys = ["model_name_or_path", "output_dir", "learning_rate", "num_train_epochs", "lr_scheduler_type",
            "per_device_train_batch_size", "gradient_accumulation_steps"]
    code.write_text("".join(f"x{i} = self.config.{'model' if i == 0 else 'training'}.{k}\n"
                            for i, k in enumerate(keys)))
    config = tmp_path / "llamafactory" / "sft.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nstage: sft\ndo_train: true\n"
                      "finetuning_type: lora\ndataset: alpaca_en_demo\ntemplate: qwen\noutput_dir: out\n"
                      "learning_rate: 1.0e-4\nnum_train_epochs: 3.0\nlr_scheduler_type: cosine\n"
                      "per_device_train_batch_size: 1\ngradient_accumulation_steps: 8\n")
    assert lint_paths([config], LintOptions()).files[0].dialect == "llamafactory"
    code.write_text("".join(f"x{i} = self.config.{k}\n" for i, k in enumerate(keys)))
    from seqprof.config.project_fields import _reads_under

    _reads_under.cache_clear()
    assert lint_paths([config], LintOptions()).files[0].dialect == "unknown"
