"""Numbers yaml.safe_load keeps as text (`learning_rate: 5e-5`), judged against transformers' own parser.

YAML 1.1 reads a number as a float only with a dot and a signed exponent, so PyYAML gives `5e-5` as the str '5e-5'.
HfArgumentParser.parse_yaml_file hands it to TrainingArguments as it is, and torch's AdamW then raises TypeError
(scripts/string_number_failures.py runs each float field through a real Trainer). TrlParser goes through argparse,
which converts the top-level values; LLaMA-Factory 0.9.4 and newer load with OmegaConf, which reads `5e-5` as a
float.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main

HF_SCRIPT = """import sys
from transformers import HfArgumentParser, TrainingArguments

(args,) = HfArgumentParser((TrainingArguments,)).parse_yaml_file(sys.argv[1])
"""
TRL_SCRIPT = """from trl import SFTConfig, TrlParser

(args,) = TrlParser((SFTConfig,)).parse_args_and_config()
"""


def _text_after_transformers_parse(config: Path, key: str) -> bool:
    from transformers import HfArgumentParser, TrainingArguments

    (args,) = HfArgumentParser(TrainingArguments).parse_yaml_file(str(config), allow_extra_keys=True)
    return isinstance(getattr(args, key), str)


def _project(tmp_path: Path, script: str, body: str) -> Path:
    (tmp_path / "requirements.txt").write_text("transformers==4.57.6\ntrl==0.24.0\n")
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "run.sh").write_text("python train.py train.yaml\n" if "parse_yaml_file" in script else
                                     "python train.py --config train.yaml\n")
    config = tmp_path / "train.yaml"
    config.write_text(f"output_dir: out\nper_device_train_batch_size: 2\n{body}\n")
    return config


def _sp406(config: Path, *extra: str) -> list[dict]:
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", *extra])
    return [f for f in json.loads(result.stdout)["findings"] if f["code"] == "SP406"]


@pytest.mark.parametrize("key", ["learning_rate", "adam_epsilon", "weight_decay", "max_grad_norm"])
@pytest.mark.parametrize("value", ["5e-5", "1e5", '"5e-5"', "5.0e-5", "0.00005", "1.0e-05", "3"])
def test_flagged_exactly_where_parse_yaml_file_hands_on_text(tmp_path, key, value):
    config = _project(tmp_path, HF_SCRIPT, f"{key}: {value}")
    text = _text_after_transformers_parse(config, key)
    found = _sp406(config)
    assert bool(found) is text
    if found:
        assert found[0]["line"] == 3 and found[0]["severity"] == "error" and "parse" not in found[0]["message"][:20]
        assert "HfArgumentParser at train.py:4 hands" in found[0]["message"]
        config.write_text(config.read_text().replace(f"{key}: {value}", found[0]["fix"].split("write '")[1][:-1]))
        assert not _text_after_transformers_parse(config, key) and not _sp406(config)


def test_trlparser_converts_top_level_values_but_not_a_mapping_s_entries(tmp_path):
    config = _project(tmp_path, TRL_SCRIPT, "max_length: 1024\nlearning_rate: 5e-5\nlr_scheduler_type: cosine_with_min_lr\n"
                                            "lr_scheduler_kwargs:\n  min_lr: 1e-6\n")
    found = _sp406(config)
    assert [f["key"] for f in found] == ["lr_scheduler_kwargs.min_lr"]
    assert found[0]["line"] == 7 and "TrlParser" in found[0]["message"] and "min_lr: 1.0e-6" in found[0]["fix"]


@pytest.mark.parametrize("release, flagged", [("0.9.2", True), ("0.9.3", True), ("0.9.4", False), ("0.9.5", False)])
def test_llamafactory_before_omegaconf_loads_it(tmp_path, release, flagged):
    config = tmp_path / "sft.yaml"
    config.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                      "template: qwen\noutput_dir: out\nlearning_rate: 1e-4\n")
    found = _sp406(config, "--versions", f"llamafactory=={release}")
    assert [f["key"] for f in found] == (["learning_rate"] if flagged else [])
    if flagged:
        assert f"llamafactory=={release}" in found[0]["message"] and "yaml.safe_load" in found[0]["message"]


def test_axolotl_converts_its_learning_rate(tmp_path):
    config = tmp_path / "axolotl.yaml"
    config.write_text("base_model: Qwen/Qwen2.5-0.5B\nmicro_batch_size: 2\nlearning_rate: 2e-4\n")
    assert _sp406(config) == []


def test_a_text_number_the_project_casts_itself_never_reaches_the_optimizer(tmp_path):
    """hitz-zentroa/GoLLIE's config says `adam_epsilon: 1e-7` (text to yaml.safe_load) and parse_yaml_file hands it
    on, but its Trainer subclass builds the optimizer with epsilon=float(args.adam_epsilon) ("Ensure that the values
    are floats", src/trainer.py): the text never reaches AdamW. Without that file the value is flagged."""
    from corpus_layout import lay_out

    folder = "hitz-zentroa__GoLLIE"
    name = f"{folder}/configs__model_configs__GoLLIE-7B_CodeLLaMA.yaml"
    config = lay_out(tmp_path / "a", only=folder) / name
    assert "adam_epsilon: 1e-7" in config.read_text()
    trainer = config.parents[2] / "src" / "trainer.py"
    assert "epsilon=float(args.adam_epsilon)" in trainer.read_text()
    assert "adam_epsilon" not in {f["key"] for f in _sp406(config)}
    bare = lay_out(tmp_path / "b", only=folder) / name
    (bare.parents[2] / "src" / "trainer.py").unlink()
    assert "adam_epsilon" in {f["key"] for f in _sp406(bare)}
    assert _text_after_transformers_parse(bare, "adam_epsilon")  # transformers' own parser leaves it text
