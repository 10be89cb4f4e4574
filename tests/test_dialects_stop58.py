"""Readings settled in stop 58, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

SHAHARAK = "Shaharak88__LLaMA-Factory-treadmill-movment"
BOR = "yhavinga__bor-llm"
KOBLLA = "bckim-mathai__llama3-koblla"
SGC = "qian-yu-db__databricks-SGC-Axolotl-examples"


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


def test_an_eval_strategy_with_nothing_to_evaluate_on_stops_llamafactory(tmp_path):
    """Shaharak88's qwen25vl_dora_sft.yaml sets `eval_strategy: steps` with `val_size: 0.0` and no eval_dataset.
    TrainingArguments' __post_init__ turns do_eval on for any strategy but "no", and LLaMA-Factory's get_train_args
    then refuses the run ("Please make sure eval_dataset be provided or val_size >1e-6"): SP444. With some rows held
    out, or the strategy "no", nothing."""
    config = f"{SHAHARAK}/examples__train_qlora__qwen25vl_dora_sft.yaml"
    found = _findings(_fresh(tmp_path, SHAHARAK) / config, "SP444")
    assert [(f.key, f.severity) for f in found] == [("eval_strategy", "error")]
    assert "eval_strategy: steps turns on do_eval" in found[0].message
    assert 'set eval_strategy: "no"' in found[0].fix

    tree = _fresh(tmp_path, SHAHARAK)
    _edit(tree / config, "val_size: 0.0", "val_size: 0.05")
    assert not _findings(tree / config, "SP444")

    tree = _fresh(tmp_path, SHAHARAK)
    _edit(tree / config, "eval_strategy: steps", 'eval_strategy: "no"')
    assert not _findings(tree / config, "SP444")


def test_an_axolotl_dataset_entrys_message_field_role_is_deprecated_from_0_7(tmp_path):
    """yhavinga's bor_finetune.yml names its message fields with `message_field_role: role` and
    `message_field_content: content`. From axolotl 0.7 SFTDataset's before-validator moves them into
    message_property_mappings and logs "message_field_role is deprecated": SP403 on each, the fix naming the mapping
    with the value. Pinned to 0.6, or under `rl: dpo` (a DPODataset entry), nothing."""
    config = f"{BOR}/configs__finetune__bor_finetune.yml"
    found = [f for f in _findings(_fresh(tmp_path, BOR) / config, "SP403") if "message_field" in f.key]
    assert [(f.key, f.severity) for f in found] == [("datasets.0.message_field_role", "warning"),
                                                   ("datasets.0.message_field_content", "warning")]
    assert "deprecated from axolotl 0.7" in found[0].message
    assert "message_property_mappings: {role: role}" in found[0].fix

    tree = _fresh(tmp_path, BOR)
    (tree / f"{BOR}/requirements_common.txt").write_text(
        (tree / f"{BOR}/requirements_common.txt").read_text() + "\naxolotl==0.6.0\n")
    assert not [f for f in _findings(tree / config, "SP403") if "message_field" in f.key]

    tree = _fresh(tmp_path, BOR)
    (tree / config).write_text("rl: dpo\n" + (tree / config).read_text())
    assert not [f for f in _findings(tree / config, "SP403") if "message_field" in f.key]


def test_a_torchtune_generate_prompt_written_as_text_stops_generate_from_0_4(tmp_path):
    """KoBLLa's configs/generation.yaml writes `prompt: "Hello. My name is"`. From torchtune 0.4 generate.py reads
    prompt["system"] and prompt["user"], so a string raises TypeError: SP406 at the unpinned newest release. Pinned
    to torchtune 0.3.1 (a string was tokenized as it stands), or with the prompt written as roles, nothing."""
    config = f"{KOBLLA}/configs__generation.yaml"
    found = _findings(_fresh(tmp_path, KOBLLA) / config, "SP406")
    assert [(f.key, f.severity) for f in found] == [("prompt", "error")]
    assert "string indices must be integers" in found[0].message and "torchtune 0.6" in found[0].message

    tree = _fresh(tmp_path, KOBLLA)
    (tree / f"{KOBLLA}/configs__generation.yaml").parent.joinpath("requirements.txt").write_text("torchtune==0.3.1\n")
    assert not _findings(tree / config, "SP406")

    tree = _fresh(tmp_path, KOBLLA)
    _edit(tree / config, 'prompt: "Hello. My name is"', 'prompt:\n  system: null\n  user: "Hello. My name is"')
    assert not _findings(tree / config, "SP406")


def test_a_requirements_yaml_of_pip_lines_pins_axolotl(tmp_path):
    """qian-yu-db's cli/axolotl/requirements.yaml is a Databricks environment spec: a `dependencies:` list of pip
    lines, among them `axolotl[flash-attn,deepspeed]==0.12.2`. Read as a pin, axolotl 0.12 judges the config beside
    it: flash_attention is no deprecated key there (0.17 deprecated it), and fsdp_config's `fsdp_` keys are the
    prefix 0.12 warns about, not keys a pydantic model drops. Without the file, 0.19 is assumed."""
    config = f"{SGC}/cli__axolotl__fft-8b-liger-fsdp.yaml"
    found = _findings(_fresh(tmp_path, SGC) / config)
    assert not [f for f in found if f.key == "flash_attention"]
    prefixed = [f for f in found if f.key.startswith("fsdp_config.fsdp_")]
    assert prefixed and {f.code for f in prefixed} == {"SP403"}
    assert all("axolotl 0.12 and newer warn" in f.message for f in prefixed)

    tree = _fresh(tmp_path, SGC)
    (tree / f"{SGC}/cli__axolotl__requirements.yaml").unlink()
    found = _findings(tree / config)
    assert [f.code for f in found if f.key == "flash_attention"] == ["SP403"]
