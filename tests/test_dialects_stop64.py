"""Readings settled in stop 64, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

TINY_THINK = "Shekswess__tiny-think"


def _fresh(tmp_path: Path, folder: str) -> Path:
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config: Path, key: str):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == key]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_a_readme_install_line_with_no_version_pins_the_newest_release(tmp_path):
    """tiny-think pins no TRL in a file; its README installs it with `uv pip install trl` (README.md:136), which
    gets the newest release, as a bare requirements.txt line does. DPOConfig lost max_prompt_length in trl 0.29, so
    the DPO config's key is an error, not a warning about an assumed version."""
    tree = _fresh(tmp_path, TINY_THINK)
    dpo = tree / f"{TINY_THINK}/configs__dpo__math_stem_dpo_beta1_lr3e_6_e1_bs8.yaml"
    found = _findings(dpo, "trainer.max_prompt_length")
    assert [(f.code, f.severity) for f in found] == [("SP408", "error")]
    assert "README.md:136 names trl with no version" in found[0].message

    # without the install line, nothing pins TRL: the newest release is assumed, and said to be
    tree = _fresh(tmp_path, TINY_THINK)
    dpo = tree / f"{TINY_THINK}/configs__dpo__math_stem_dpo_beta1_lr3e_6_e1_bs8.yaml"
    _edit(dpo.parents[2] / "README.md", "uv pip install trl\n", "\n")
    found = _findings(dpo, "trainer.max_prompt_length")
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "no trl pin found beside the config" in found[0].message

    # a README line that gives the version wins over one that gives none: a warning for the upgrade past it
    tree = _fresh(tmp_path, TINY_THINK)
    dpo = tree / f"{TINY_THINK}/configs__dpo__math_stem_dpo_beta1_lr3e_6_e1_bs8.yaml"
    _edit(dpo.parents[2] / "README.md", "uv pip install wandb\n", "uv pip install wandb\nuv pip install trl==0.24.0\n")
    found = _findings(dpo, "trainer.max_prompt_length")
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "trl==0.24.0 (README.md:140) still has it" in found[0].message


EARLEE = "EeyoreLee__EarleeNLP"
COGNITION = "Follen-cry__MLLM_Cognition_Alignment"
LORA_FORGE = "sfncore__lora-forge"


def _read(config: Path):
    return lint_paths([config], LintOptions()).files[0]


def test_a_parser_class_taken_by_name_from_a_module_imported_at_run_time_is_that_class(tmp_path):
    """EarleeNLP's main.py imports models.<model>.argument_<model> at run time, takes `argument = getattr(
    argument_module, "ModelArgument")` and parses each JSON with HfArgumentParser((argument, TrainingArguments)).
    The file's model_init_param / collection_param mappings are dict fields of BaseModelArgument, which every
    ModelArgument subclasses: a TrainingArguments file, not a schema of the project's own."""
    tree = _fresh(tmp_path, EARLEE)
    config = tree / f"{EARLEE}/args__example.json"
    report = _read(config)
    assert report.dialect == "hf"
    assert [(f.code, f.key) for f in report.findings if f.severity == "warning"] == [("SP402", "evaluation_strategy")]
    shown = {f.key: f.message for f in report.findings}
    assert "BaseModelArgument" in shown["model_init_param"]

    # a class the script does not name (a variable set from a call seqprof cannot read): the sections stay its own
    tree = _fresh(tmp_path, EARLEE)
    config = tree / f"{EARLEE}/args__example.json"
    _edit(config.parents[1] / "main.py", 'argument = getattr(argument_module, "ModelArgument")',
          'argument = load_argument_class(argument_module)')
    assert _read(config).dialect == "unknown"


def test_a_removal_under_a_pin_older_than_every_release_read_does_not_claim_the_pin_has_the_key(tmp_path):
    """transformers==4.25.0 predates the 4.36 where seqprof's history starts; save_safetensors (4.27 added it) is
    removed in 5.0. Whether 4.25.0 has it is unknown, and the warning says so rather than 'still has it'."""
    tree = _fresh(tmp_path, EARLEE)
    config = tree / f"{EARLEE}/args__pass_bom__ec.json"
    found = [f for f in _read(config).findings if f.key == "save_safetensors"]
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "so whether it has 'save_safetensors' is unknown" in found[0].message
    assert "still has it" not in found[0].message

    # pinned to a release the history holds, the pin is known to have it
    tree = _fresh(tmp_path, EARLEE)
    config = tree / f"{EARLEE}/args__pass_bom__ec.json"
    _edit(config.parents[2] / "requirements.txt", "transformers==4.25.0", "transformers==4.46.0")
    found = [f for f in _read(config).findings if f.key == "save_safetensors"]
    assert [(f.code, f.severity) for f in found] == [("SP403", "warning")]
    assert "transformers==4.46.0 (requirements.txt:2) still has it" in found[0].message


def test_a_shell_script_that_never_changes_folder_reaches_only_configs_below_where_it_runs(tmp_path):
    """sft/qwen/scripts/finetune_lora.sh passes `--deepspeed scripts/zero3_offload.json` and `--lr_scheduler_type
    cosine`; it runs from sft/qwen (PYTHONPATH=src), so the file is sft/qwen/scripts/zero3_offload.json (not in the
    repository), never sft/llama's file of that name, whose scheduler section SP458 would hold against the flag."""
    tree = _fresh(tmp_path, COGNITION)
    llama = tree / f"{COGNITION}/sft__llama__scripts__zero3_offload.json"
    assert not [f for f in _read(llama).findings if f.code == "SP458"]

    # the same file where the script reaches it: SP458 ties it to the launch line
    qwen = llama.parents[2] / "qwen/scripts/zero3_offload.json"
    qwen.write_text(llama.read_text())
    found = [f for f in _read(qwen).findings if f.code == "SP458"]
    assert len(found) == 1 and "sft/qwen/scripts/finetune_lora.sh:45" in found[0].message

    # and a script that changes folder first may run the line anywhere: the suffix match stands, as before
    tree = _fresh(tmp_path, COGNITION)
    llama = tree / f"{COGNITION}/sft__llama__scripts__zero3_offload.json"
    _edit(llama.parents[2] / "qwen/scripts/finetune_lora.sh", "export PYTHONPATH=src:$PYTHONPATH",
          "cd ../llama\nexport PYTHONPATH=src:$PYTHONPATH")
    assert [f.code for f in _read(llama).findings if f.code == "SP458"] == ["SP458"]


def test_ms_amps_deepspeed_section_is_no_unknown_key(tmp_path):
    """zero2_fp8.json carries `msamp: {enabled, opt_level}`, the section MS-AMP's DeepSpeed engine reads
    (msamp/deepspeed/runtime/config.py); a misspelling of it is still unknown."""
    tree = _fresh(tmp_path, COGNITION)
    config = tree / f"{COGNITION}/sft__llama__scripts__zero2_fp8.json"
    assert not [f for f in _read(config).findings if f.code == "SP401"]
    _edit(config, '"msamp"', '"msampp"')
    assert [f.key for f in _read(config).findings if f.code == "SP401"] == ["msampp"]


def test_axolotls_legacy_message_fields_are_judged_at_the_release_a_range_installs(tmp_path):
    """lora-forge asks axolotl>=0.5.0 (pyproject.toml:21): pip installs 0.19, whose dataset schema maps
    message_field_role / message_field_content into message_property_mappings with a deprecation warning."""
    tree = _fresh(tmp_path, LORA_FORGE)
    config = tree / f"{LORA_FORGE}/configs__roles__deacon.yml"
    found = [f for f in _read(config).findings if "message_field" in (f.key or "")]
    assert [(f.code, f.key) for f in found] == [("SP403", "datasets.0.message_field_role"),
                                                ("SP403", "datasets.0.message_field_content")]
    assert "axolotl>=0.5.0 (pyproject.toml:21) installs 0.19" in found[0].message

    # pinned below 0.7, where the fields are the schema's own names: nothing to say
    tree = _fresh(tmp_path, LORA_FORGE)
    config = tree / f"{LORA_FORGE}/configs__roles__deacon.yml"
    _edit(config.parents[2] / "pyproject.toml", '"axolotl>=0.5.0"', '"axolotl==0.6.0"')
    assert not [f for f in _read(config).findings if "message_field" in (f.key or "")]
