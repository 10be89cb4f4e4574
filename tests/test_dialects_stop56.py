"""Readings settled in stop 56, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import json

import pytest

from seqprof.lint.run import LintOptions, lint_paths

SDLORA = "BAAI-Brain-Inspired-Group__OPEN-Vis-SDLoRA1"
LORA_K8S = "bryan-gomez-hincapie__LoRa"
MM_ARC = "pbontrager__mm_arc"


def test_a_saved_peft_adapter_config_is_no_training_config(tmp_path):
    """OPEN-Vis-SDLoRA1's test/adapter_config.json is what peft's PeftConfig.save_pretrained writes: peft_type LORA
    beside task_type, base_model_name_or_path and inference_mode. Its LoRA keys (r, lora_alpha, loftq_config) read
    as unsloth-cli's options until peft_type says what it is; with peft_type, no framework's checks run and the
    note says why."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path / "published", only=SDLORA) / f"{SDLORA}/test__adapter_config.json"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    assert not [f for f in report.findings if f.severity in ("warning", "error", "info")]
    assert any("saved PEFT adapter config" in note for note in report.notes)
    data = json.loads(config.read_text())
    del data["peft_type"]
    config.write_text(json.dumps(data))
    assert lint_paths([config], LintOptions()).files[0].dialect == "unsloth"


def test_a_stream_of_yaml_documents_is_refused_as_a_stream_not_as_bad_syntax(tmp_path):
    """bryan-gomez-hincapie/LoRa's lora.yml is a Kubernetes manifest: valid YAML of six documents. yaml.safe_load,
    which the frameworks load configs with, refuses a stream; seqprof refuses it too (one error, exit 2), saying it
    is a stream, not that its syntax is wrong."""
    yaml = pytest.importorskip("yaml")
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=LORA_K8S) / f"{LORA_K8S}/lora.yml"
    text = config.read_text()
    assert len([d for d in yaml.safe_load_all(text) if d is not None]) == 6
    with pytest.raises(yaml.composer.ComposerError, match="single document"):
        yaml.safe_load(text)
    result = lint_paths([config], LintOptions())
    assert len(result.errors) == 1 and "holds more than one document" in result.errors[0]
    assert "invalid YAML" not in result.errors[0]
    first = text.split("\n---", 1)[0]
    config.write_text(first + "\n")
    assert not lint_paths([config], LintOptions()).errors


def test_a_torchtune_config_that_only_samples_trains_nothing(tmp_path):
    """pbontrager/mm_arc's 8B_text_eval.yaml drives its own InferenceRecipe (eval.py): a model, a tokenizer, a
    checkpointer and the sampling settings torchtune's generate recipe reads (temperature, top_k), with no optimizer
    and no loss. It trains nothing, so no trainer is named; without its sampling settings it reads as the SFT
    default."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=MM_ARC) / f"{MM_ARC}/configs__8B_text_eval.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "torchtune" and report.facts.plan.setting("trainer") is None
    text = "\n".join(line for line in config.read_text().splitlines()
                     if not line.startswith(("temperature:", "top_k:")))
    config.write_text(text + "\n")
    report = lint_paths([config], LintOptions()).files[0]
    assert report.facts.plan.setting("trainer").value == "sft"
