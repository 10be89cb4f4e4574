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


TOY_R1 = "zdfb__toy-r1-zero"
LF_PRACTICAL = "LiRunGuo__llama-factory-practical"


def test_a_scripts_commented_pip_install_pins_what_it_runs_with(tmp_path):
    """toy-r1-zero's train_R1_zero.py, the TrlParser that reads train_R1_zero.yaml, says in its header comments to
    `pip install git+https://github.com/huggingface/trl.git@e95f9fb...` (0.15.0.dev0, whose ModelConfig has
    torch_dtype): a commit seqprof cannot place among releases, so the removal in trl 0.27 is no claim here."""
    name = f"{TOY_R1}/train_R1_zero.yaml"
    tree = _fresh(tmp_path, TOY_R1)
    assert not _findings(tree / name, "torch_dtype", "SP403")
    notes = [f for f in lint_paths([tree / name], LintOptions()).files[0].findings if f.key == "torch_dtype"]
    assert [f.code for f in notes] == ["SP407"] and "train_R1_zero.py:16" in notes[0].message

    tree = _fresh(tmp_path, TOY_R1)
    script = (tree / name).with_name("train_R1_zero.py")
    _edit(script, "# pip install git+https://github.com/huggingface/trl.git@", "# see ")
    # the `# pip install unsloth` beside it still holds: unsloth 2026.10.9 requires trl<=1.15.0, which lacks it
    assert [f.severity for f in _findings(tree / name, "torch_dtype", "SP408")] == ["error"]


def test_quantization_method_of_an_already_quantized_checkpoint_is_not_judged(tmp_path):
    """LLaMA-Factory's quantization.py loads a checkpoint that carries a quantization_config (Qwen2-7B-Instruct-AWQ)
    by that config before any on-the-fly branch, so a stale `quantization_method: bitsandbytes` changes nothing;
    on the unquantized model it is the silent 16-bit load SP406 names."""
    name = f"{LF_PRACTICAL}/examples__train_lora_qwen_windows.yaml"
    assert not _findings(_fresh(tmp_path, LF_PRACTICAL) / name, "quantization_method", "SP406")

    tree = _fresh(tmp_path, LF_PRACTICAL)
    _edit(tree / name, "Qwen/Qwen2-7B-Instruct-AWQ", "Qwen/Qwen2-7B-Instruct")
    assert [f.severity for f in _findings(tree / name, "quantization_method", "SP406")] == ["error"]
