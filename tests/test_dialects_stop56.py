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


TRANSLATION = "bugdaryan__translation-en-ru"


def test_a_deepspeed_optimizer_with_no_lr_runs_at_deepspeeds_default(tmp_path):
    """bugdaryan/translation-en-ru's ds_config.json writes `"optimizer": {"type": "AdamW"}` and no scheduler.
    transformers' own fill_match (the installed release's) copies the Trainer's learning_rate only into a key the
    file writes as "auto": with no params it leaves the section as it is, and DeepSpeed builds AdamW at its default
    1e-3. SP469 says so; with `"params": {"lr": "auto"}`, or a WarmupLR scheduler that writes its own lr, it is
    quiet."""
    pytest.importorskip("transformers")
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    from corpus_layout import lay_out

    class Node:  # accelerate's HfDeepSpeedConfig.find_config_node: walk the dotted path, None where it ends
        mismatches: list = []

        def __init__(self, config):
            self.config = config

        def find_config_node(self, ds_key_long):
            config, *path, key = [self.config, *ds_key_long.split(".")]
            for node in path:
                config = config.get(node)
                if config is None:
                    return None, key
            return config, key

    config = lay_out(tmp_path, only=TRANSLATION) / f"{TRANSLATION}/ds_config.json"
    written = json.loads(config.read_text())
    for data, filled in ((written, None), ({**written, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}, 5e-5)):
        node = Node(json.loads(json.dumps(data)))
        HfTrainerDeepSpeedConfig.fill_match(node, "optimizer.params.lr", 5e-5, "learning_rate")
        assert node.config["optimizer"].get("params", {}).get("lr") == filled

    found = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.code == "SP469"]
    assert len(found) == 1 and "default lr 0.001" in found[0].message and found[0].severity == "warning"
    for fixed in ({**written, "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}},
                  {**written, "scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": "auto"}}}):
        config.write_text(json.dumps(fixed))
        assert not [f for f in lint_paths([config], LintOptions()).files[0].findings if f.code == "SP469"]


JAILBREAKER = "martinjingyu__Multi-Turn-Jailbreaker"
ECOMMERCE = "aaadanzghe__ecommerce-content-agent"


def test_an_old_name_the_project_redeclares_loses_nothing_when_it_holds_the_default(tmp_path):
    """martinjingyu/Multi-Turn-Jailbreaker's TrainingArguments subclass re-declares evaluation_strategy, which nothing
    reads, and its sft_config.yaml writes "no": eval_strategy's own default in the installed transformers, so nothing
    is lost where transformers no longer reads the old name (a note, not an error). Written "steps", the setting is
    lost: SP408."""
    transformers = pytest.importorskip("transformers")
    from seqprof.config.project_fields import RENAMED_TO_DEFAULTS
    from corpus_layout import lay_out

    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"))
    assert {name: getattr(args, name) for name in RENAMED_TO_DEFAULTS} == RENAMED_TO_DEFAULTS

    config = lay_out(tmp_path / "published", only=JAILBREAKER) / f"{JAILBREAKER}/config__sft_config.yaml"
    found = {f.key: f for f in lint_paths([config], LintOptions()).files[0].findings}
    assert found["evaluation_strategy"].severity == "info" and "eval_strategy's default" in \
        found["evaluation_strategy"].message
    config.write_text(config.read_text().replace('evaluation_strategy: "no"', 'evaluation_strategy: "steps"'))
    found = {f.key: f for f in lint_paths([config], LintOptions()).files[0].findings}
    assert (found["evaluation_strategy"].code, found["evaluation_strategy"].severity) == ("SP408", "error")


def test_a_llamafactory_training_file_with_only_do_eval_trains_nothing(tmp_path):
    """aaadanzghe/ecommerce-content-agent's train_config.yaml has a learning rate, epochs and batch sizes, no stage
    and do_eval: true but no do_train: LLaMA-Factory's sft workflow trains only under do_train (false by
    default), so the run only evaluates (SP447). Its grpo_config.yaml also names stage: grpo, which tuner.py refuses
    (SP406). A file of do_eval alone, with no training keys, is an evaluation file and is not reported."""
    from corpus_layout import lay_out

    tree = lay_out(tmp_path, only=ECOMMERCE)
    train = tree / f"{ECOMMERCE}/configs__train_config.yaml"
    codes = {(f.code, f.key) for f in lint_paths([train], LintOptions()).files[0].findings}
    assert ("SP447", "do_eval") in codes
    grpo = {(f.code, f.key) for f in lint_paths([tree / f"{ECOMMERCE}/configs__grpo_config.yaml"],
                                               LintOptions()).files[0].findings}
    assert ("SP406", "stage") in grpo
    kept = [line for line in train.read_text().splitlines()
            if not line.startswith(("learning_rate", "num_train_epochs", "per_device_train_batch_size",
                                    "gradient_accumulation_steps", "max_steps"))]
    train.write_text("\n".join(kept) + "\n")
    assert "SP447" not in {f.code for f in lint_paths([train], LintOptions()).files[0].findings}
