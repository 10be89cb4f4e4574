"""SP434 against transformers' own parser: the configs it flags are the ones HfArgumentParser refuses.

`save_strategy: no` unquoted is YAML 1.1's boolean false; TrainingArguments.__post_init__ then raises
"False is not a valid SaveStrategy". TrlParser makes each config value an argparse default (never converted), which
ends in the same dataclass call, so the parse below is what both parsers do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main

KEYS = ("save_strategy", "eval_strategy", "logging_strategy")


def _refused_by_transformers(config: Path) -> bool:
    from transformers import HfArgumentParser, TrainingArguments

    try:
        HfArgumentParser(TrainingArguments).parse_yaml_file(str(config), allow_extra_keys=True)
    except ValueError:
        return True
    return False


def _sp434(config: Path) -> list[dict]:
    import json

    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--dialect", "hf"])
    return [f for f in json.loads(result.stdout)["findings"] if f["code"] == "SP434"]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value, refused", [("no", True), ("off", True), ("false", True), ('"no"', False),
                                            ("'no'", False), ("steps", False), ("epoch", False)])
def test_sp434_fires_exactly_where_transformers_refuses_the_value(tmp_path, key, value, refused):
    config = tmp_path / "train.yaml"
    config.write_text(f"output_dir: {tmp_path / 'out'}\nper_device_train_batch_size: 2\n{key}: {value}\n")
    assert _refused_by_transformers(config) is refused
    found = _sp434(config)
    assert bool(found) is refused
    if found:
        assert found[0]["line"] == 3 and found[0]["severity"] == "error"
        fixed = tmp_path / "fixed.yaml"  # the fix, applied, parses
        fixed.write_text(config.read_text().replace(f"{key}: {value}", found[0]["fix"].split("quote it: ")[1]))
        assert not _refused_by_transformers(fixed) and not _sp434(fixed)
