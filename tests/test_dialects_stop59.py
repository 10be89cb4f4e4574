"""Readings settled in stop 59, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

STEP_DPO = "mathllm__Step-Controlled_DPO"


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository: seqprof caches what it reads of a project per path, so each variant
    of a test's files is laid out anew rather than edited in place."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config, code=None):
    found = lint_paths([config], LintOptions()).files[0].findings
    return [f for f in found if code is None or f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_trl_before_0_8_runs_with_the_transformers_it_can_import(tmp_path):
    """Step-Controlled_DPO's handbook setup.py pins trl==0.7.10 beside transformers>=4.38.2. trl 0.7's core.py
    imports top_k_top_p_filtering from transformers, which 4.39 removed, so the project ran with 4.38, where
    `evaluation_strategy` is TrainingArguments' field: no SP408 (removed in 4.46), but the warning that the
    upgrade renames it, naming the import. With trl==0.8.6 (which defines its own) pip's newest transformers
    below 5.0 runs, which lacks the key: SP408."""
    config = f"{STEP_DPO}/alignment-handbook__recipes__mathcoder_mistral__sft__config_full.yaml"
    setup = f"{STEP_DPO}/alignment-handbook__setup.py"
    found = [f for f in _findings(_fresh(tmp_path, STEP_DPO) / config) if f.key == "evaluation_strategy"]
    assert [(f.code, f.severity) for f in found] == [("SP402", "warning")]
    assert "trl before 0.8 imports top_k_top_p_filtering" in found[0].message
    assert "breaks on that upgrade" in found[0].message

    tree = _fresh(tmp_path, STEP_DPO)
    _edit(tree / setup, '"trl==0.7.10"', '"trl==0.8.6"')
    found = [f for f in _findings(tree / config) if f.key == "evaluation_strategy"]
    assert [f.code for f in found] == ["SP408"]


VI_LLM = "ThuanNaN__vi-llm-pretraining"
WORKSHOP = "ALIRE-HES-SO__llm-sft-workshop"


def test_an_fsdp_entry_accelerate_no_longer_takes_is_dropped(tmp_path):
    """vi-llm-pretraining's accelerate_config_fsdp.yaml writes `fsdp_backward_prefetch_policy: BACKWARD_PRE` with
    accelerate>=0.30 in pyproject.toml. launch copies each fsdp_config entry onto its arguments, and from 1.0 no
    argument of that name exists (0.30's utils/launch.py still moved it to fsdp_backward_prefetch), so pip's newest
    release runs FSDP with no backward prefetch: SP401 naming the new name. Pinned to 0.30, nothing."""
    config = f"{VI_LLM}/accelerate_config_fsdp.yaml"
    found = _findings(_fresh(tmp_path, VI_LLM) / config, "SP401")
    assert [(f.key, f.severity) for f in found] == [("fsdp_config.fsdp_backward_prefetch_policy", "warning")]
    assert "removed in accelerate 1.0" in found[0].message
    assert "'fsdp_backward_prefetch'" in found[0].fix

    tree = _fresh(tmp_path, VI_LLM)
    _edit(tree / f"{VI_LLM}/pyproject.toml", "accelerate>=0.30", "accelerate==0.30.1")
    assert not _findings(tree / config, "SP401")


def test_an_unquoted_distributed_type_no_is_accelerates(tmp_path):
    """The workshop's configs/accelerate_single.yaml is three keys: gpu_ids, num_processes and `distributed_type:
    NO`, which YAML 1.1 reads as false (accelerate's launcher then runs one process, as for "NO"). It is read as
    accelerate's config; written `distributed_type: MAYBE`, it is not."""
    from seqprof.config.read import detect_dialect

    config = _fresh(tmp_path, WORKSHOP) / f"{WORKSHOP}/configs__accelerate_single.yaml"
    assert detect_dialect(config) == "accelerate"

    config.write_text(config.read_text().replace("distributed_type: NO", "distributed_type: MAYBE"))
    assert detect_dialect(config) == "unknown"


CHINESE_LLAMA = "seal-wang__chinese_llama"


def test_a_moved_key_at_its_default_under_a_parser_that_drops_extra_keys_changes_nothing(tmp_path):
    """chinese_llama's pt_llama_config.json sets `"no_cuda": false` under transformers==4.31.0, and pt_llama.py
    reads it with parse_json_file(..., allow_extra_keys=True). transformers 5 removes no_cuda; the parser then drops
    it, and use_cpu keeps its default, false: the run is the same, so an SP407 note, not the upgrade warning. Set to
    true (the run would move to the GPU), or read by a parser that refuses extra keys, the SP402 warning stands."""
    config = f"{CHINESE_LLAMA}/script__pt_clm__pt_llama_config.json"
    found = [f for f in _findings(_fresh(tmp_path, CHINESE_LLAMA) / config) if f.key == "no_cuda"]
    assert [(f.code, f.severity) for f in found] == [("SP407", "info")]
    assert "allow_extra_keys" not in found[0].message and "pt_llama.py" in found[0].message
    assert "removing it changes nothing" in found[0].message

    tree = _fresh(tmp_path, CHINESE_LLAMA)
    _edit(tree / config, '"no_cuda": false', '"no_cuda": true')
    assert [f.code for f in _findings(tree / config) if f.key == "no_cuda"] == ["SP402"]

    tree = _fresh(tmp_path, CHINESE_LLAMA)
    _edit(tree / f"{CHINESE_LLAMA}/script__pt_clm__pt_llama.py", "allow_extra_keys=True", "allow_extra_keys=False")
    assert [f.code for f in _findings(tree / config) if f.key == "no_cuda"] == ["SP402"]


KARBON = "trungpq27__test-repo"


def test_requires_python_caps_the_transformers_pip_can_install(tmp_path):
    """karbon-asr's pyproject.toml says `requires-python = ">=3.9, <3.11"` beside transformers>=4.48.0. transformers'
    newest releases require Python 3.11 (their Requires-Python, keys/companion_requires.json), so pip installs an
    older one, which has no activation_checkpointing: `gradient_checkpointing` is an SP429 note that the rename waits
    for that upgrade, not the SP403 warning to rename it now. Without the cap, the warning."""
    config = f"{KARBON}/s2tt-pako2vi-medium-v3.mix-v1.yaml"
    found = [f for f in _findings(_fresh(tmp_path, KARBON) / config) if f.key.endswith("gradient_checkpointing")]
    assert [(f.code, f.severity) for f in found] == [("SP429", "info")]
    assert "python>=3.9,<3.11 (pyproject.toml:10)" in found[0].message

    tree = _fresh(tmp_path, KARBON)
    _edit(tree / f"{KARBON}/pyproject.toml", 'requires-python = ">=3.9, <3.11"', 'requires-python = ">=3.9"')
    found = [f for f in _findings(tree / config) if f.key.endswith("gradient_checkpointing")]
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]


QWEN_CODING = "radicalyyyahaha__Qwen-Qwen3.5-0.8B-Base-SFT-GRPO-Coding"


def test_sampling_settings_alone_are_no_trl_config(tmp_path):
    """The coding project's configs/eval.yaml holds decoding and vLLM engine settings (temperature, top_p,
    max_new_tokens, n_samples, gpu_memory_utilization, tensor_parallel_size) for its evaluation script. temperature and
    top_p are GRPOConfig fields, but no training argument is there, so no TRL parser's file: unknown. With a learning
    rate and an output_dir beside them, TRL's."""
    from seqprof.config.read import detect_dialect

    config = _fresh(tmp_path, QWEN_CODING) / f"{QWEN_CODING}/configs__eval.yaml"
    assert detect_dialect(config) == "unknown"

    config.write_text(config.read_text() + "learning_rate: 1.0e-5\noutput_dir: out\n")
    assert detect_dialect(config) == "trl"
