"""The generation batch GRPOConfig refuses (SP460), on a real GRPO recipe: Azure/azureml-examples' GRPO trainer
config (num_generations 2, per_device_train_batch_size 1), as published and with its batch numbers changed. What
seqprof says is compared with a brute force over world sizes of the checks GRPOConfig.__post_init__ makes (trl 0.18
to 1.16): refused on every number of GPUs, or not. a36600248-eng/CODE-GRPO ships its own GRPOConfig, which sets
num_generations in code, so its recipes are not judged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from seqprof.lint.run import LintOptions, lint_paths

FOLDER = "Azure__azureml-examples"
NAME = f"{FOLDER}/sdk__python__jobs__grpo__src__grpo_trainer_config.yaml"
OWN_CONFIG = "a36600248-eng__CODE-GRPO"
OWN_NAME = f"{OWN_CONFIG}/trl__configs__comparison__server_2gpu__codegrpo_pseudo_multiround_qprior_soft_mixed500.yaml"


def _findings(path: Path) -> dict[str, str]:
    report = lint_paths([path], LintOptions()).files[0]
    return {f.key: f.message for f in report.findings if f.code == "SP460"}


def _refused_on_every_world_size(generation: int, per_device: int, groups: int) -> bool:
    """GRPOConfig's own checks, tried on 1 to 64 processes: the generation batch must be a multiple of the global
    batch and of num_generations, and num_generations at least 2."""
    return all(groups < 2 or generation % (per_device * processes) or generation % groups
               for processes in range(1, 65))


def _with(config: Path, key: str, value: int) -> None:
    text, count = re.subn(rf"(?m)^{key}: *\d+", f"{key}: {value}", config.read_text())
    if not count:  # a key the recipe leaves to its default, stated after num_generations
        text, count = re.subn(r"(?m)^(num_generations: *\d+)$", rf"\1\n{key}: {value}", text)
    assert count == 1
    config.write_text(text)


def test_the_published_generation_batch_passes(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    assert _findings(config) == {}
    _with(config, "generation_batch_size", 8)
    assert not _refused_on_every_world_size(8, 1, 2)
    assert _findings(config) == {}


@pytest.mark.parametrize(("key", "value"), [
    ("per_device_train_batch_size", 3), ("per_device_train_batch_size", 2), ("per_device_train_batch_size", 32),
    ("num_generations", 6), ("num_generations", 4), ("num_generations", 1), ("num_generations", 16),
    ("generation_batch_size", 12), ("generation_batch_size", 7), ("generation_batch_size", 20)])
def test_a_changed_number_is_refused_exactly_where_every_world_size_fails(tmp_path, key, value):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    numbers = {"generation_batch_size": 16, "per_device_train_batch_size": 1, "num_generations": 2, key: value}
    for name in ("generation_batch_size", "per_device_train_batch_size", "num_generations"):
        _with(config, name, numbers[name])
    expected = _refused_on_every_world_size(numbers["generation_batch_size"],
                                            numbers["per_device_train_batch_size"], numbers["num_generations"])
    assert bool(_findings(config)) == expected


def test_generation_batch_beside_steps_per_generation_is_refused(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    _with(config, "generation_batch_size", 16)
    assert _findings(config) == {}
    _with(config, "steps_per_generation", 4)
    assert "steps_per_generation" in _findings(config)["generation_batch_size"]


def test_releases_before_the_generation_batch_are_not_judged(tmp_path):
    """generation_batch_size arrived in trl 0.18; an older release does not know the key (SP430's), so there is
    no refusal of its value to report."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=FOLDER) / NAME
    _with(config, "generation_batch_size", 16)
    _with(config, "per_device_train_batch_size", 3)
    assert _findings(config)
    report = lint_paths([config], LintOptions(versions="trl==0.17.0,transformers==4.51.3")).files[0]
    assert not [f for f in report.findings if f.code == "SP460"]


def test_a_project_that_sets_the_batch_in_code_is_not_judged(tmp_path):
    """CODE-GRPO's own CodeGRPOConfig sets num_generations in __post_init__ (trl/trainer/code_grpo_config.py:559),
    so what reaches TRL's checks is not what the file says."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=OWN_CONFIG) / OWN_NAME
    _with(config, "num_generations", 6)
    assert _findings(config) == {}
