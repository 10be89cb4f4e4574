"""Readings settled in stop 66, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config: Path, key: str, code: str):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == key and f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


RECIPES = "tcapelle__llm_recipes"
CHATLM = "charent__ChatLM-mini-Chinese"


def test_axolotl_optimizer_judged_at_the_transformers_the_axolotl_release_pins(tmp_path):
    """tcapelle's zephyr recipe keeps axolotl 0.5's default `optimizer: adamw_hf`. axolotl hands any name it does not
    build itself to TrainingArguments' optim, at the transformers release it pins exactly: 0.19.0 requires
    transformers==5.16.1, whose OptimizerNames dropped adamw_hf (gone from 4.50); 0.7.0 requires 4.48.3, which has
    it."""
    name = f"{RECIPES}/zephyr__axolotl.yml"
    found = _findings(_fresh(tmp_path, RECIPES) / name, "optimizer", "SP474")
    assert [(f.severity, f.line) for f in found] == [("error", 38)]
    assert "transformers 5.16" in found[0].message and found[0].fix == "optimizer: adamw_torch"

    tree = _fresh(tmp_path, RECIPES)
    (tree / name).parent.joinpath("requirements.txt").write_text("axolotl==0.7.0\n")
    assert not _findings(tree / name, "optimizer", "SP474")

    # one of axolotl's own optimizers is no transformers name, and passes
    tree = _fresh(tmp_path, RECIPES)
    _edit(tree / name, "optimizer: adamw_hf", "optimizer: optimi_adamw")
    assert not _findings(tree / name, "optimizer", "SP474")


def test_accelerate_param_offload_below_stage_3(tmp_path):
    """accelerate's DeepSpeedPlugin writes an inline offload_param_device into zero_optimization.offload_param, which
    DeepSpeed reads only at stage 3: ChatLM-mini-Chinese's zero_stage: 2 keeps the parameters on the GPU."""
    name = f"{CHATLM}/accelerate.yaml"
    found = _findings(_fresh(tmp_path, CHATLM) / name, "deepspeed_config.offload_param_device", "SP456")
    assert [(f.severity, f.line) for f in found] == [("warning", 7)]

    tree = _fresh(tmp_path, CHATLM)
    _edit(tree / name, "zero_stage: 2", "zero_stage: 3")
    assert not _findings(tree / name, "deepspeed_config.offload_param_device", "SP456")
