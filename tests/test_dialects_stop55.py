"""Readings settled in stop 55, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import pytest

from seqprof.lint.run import LintOptions, lint_paths

CMR = "yansonglee__CMR-R"
SIMPO = "orivine__dpo_new"


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
