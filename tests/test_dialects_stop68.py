"""Readings settled in stop 68, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _lint(config: Path):
    return lint_paths([config], LintOptions()).files[0]


def _findings(config: Path, key: str, code: str):
    return [f for f in _lint(config).findings if f.key == key and f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


LINALG = "atomwalk12__linalg-zero"


def test_uv_groups_declared_conflicting_are_separate_environments(tmp_path):
    """pyproject.toml declares its data-gen, grpo and sft groups conflicting ([tool.uv] conflicts): each is its own
    environment, installed by `uv sync --group X` (transformers 4.55.2, >=4.53.2, 4.56.2). The SFT recipes under
    config/sft/ run in the sft group, whose transformers 4.56.2 still has overwrite_output_dir: an upgrade warning,
    not an error. Merged into one set of pins, the groups contradict each other and every release is possible."""
    name = f"{LINALG}/linalg_zero__config__sft__qwen2.5-3B__instruct.yaml"
    found = _findings(_fresh(tmp_path, LINALG) / name, "overwrite_output_dir", "SP403")
    assert [(f.severity, f.line) for f in found] == [("warning", 66)]
    assert "transformers==4.56.2 (pyproject.toml:" in found[0].message and "4.55.2" not in found[0].message

    # a command line naming the config with another group runs it there
    tree = _fresh(tmp_path, LINALG)
    _edit(tree / f"{LINALG}/Makefile", "@uv run python linalg_zero/sft.py --config $(SFT_CONFIG)",
          "@uv run --group data-gen python linalg_zero/sft_train.py --config "
          "linalg_zero/config/sft/qwen2.5-3B/instruct.yaml")
    found = _findings(tree / name, "overwrite_output_dir", "SP403")
    assert found and "transformers==4.55.2" in found[0].message and "4.56.2" not in found[0].message

    # groups that do not conflict are one environment: their pins are merged as before
    tree = _fresh(tmp_path, LINALG)
    _edit(tree / f"{LINALG}/pyproject.toml", '{ group = "sft" },', "")
    assert not _findings(tree / name, "overwrite_output_dir", "SP403")
    assert _findings(tree / name, "overwrite_output_dir", "SP408")


SHIFT = "Meaquadddd__DPO-Shift"


def test_a_project_importing_the_old_handbook_parser_runs_the_old_handbook(tmp_path):
    """The SFT recipe (dataset_mixer) runs under the alignment-handbook that run_dposhift.py imports
    H4ArgumentParser from, which only the handbook before its rewrite onto TRL's classes has: its own
    ModelArguments declares torch_dtype, so TRL's rename of ModelConfig.torch_dtype does not reach the file."""
    name = f"{SHIFT}/recipes__llama-3-8b__sft__config_full.yaml"
    found = _findings(_fresh(tmp_path, SHIFT) / name, "torch_dtype", "SP407")
    assert found and "run_dposhift.py:27" in found[0].message

    tree = _fresh(tmp_path, SHIFT)
    _edit(tree / f"{SHIFT}/scripts__run_dposhift.py", "    H4ArgumentParser,\n", "")
    assert _findings(tree / name, "torch_dtype", "SP403")


R1 = "tienanh28122000__R1"


def test_grpo_eval_batch_against_the_processes_the_launcher_starts(tmp_path):
    """train.sh runs config_r1.yaml on 6 processes; it evaluates (eval_strategy: steps), and its eval batch 8 x 6 =
    48 holds three groups of num_generations 16. At 4 per device (the repository's other recipes) it is 24, which
    GRPO's eval check refuses before the run starts."""
    name = f"{R1}/recipes__config_r1.yaml"
    assert not _findings(_fresh(tmp_path, R1) / name, "per_device_eval_batch_size", "SP460")

    tree = _fresh(tmp_path, R1)
    _edit(tree / name, "per_device_eval_batch_size: 8", "per_device_eval_batch_size: 4")
    found = _findings(tree / name, "per_device_eval_batch_size", "SP460")
    assert [(f.severity, f.line) for f in found] == [("error", 24)]
    assert "= 24" in found[0].message and "train.sh:3" in found[0].message

    # a run that never evaluates has no eval batch to check
    _edit(tree / name, "eval_strategy: steps", "eval_strategy: 'no'")
    assert not _findings(tree / name, "per_device_eval_batch_size", "SP460")
