"""Readings settled in stop 69, on the real files that showed them. Each test also shows the reading without the
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


CAI = "moodlep__cai"
CAI_SETUP = "train/scripts/hf_recipes/hf_setup"
CAI_DPO = f"{CAI}/train__scripts__hf_recipes__cai__mistral__dpo__config_anthropic_qlora.yaml"
CAI_SFT = f"{CAI}/train__scripts__hf_recipes__cai__smol__sft__config_anthropic_smollm.yaml"


def test_setup_files_kept_to_replace_a_frameworks_own_pin_the_recipes(tmp_path):
    """moodlep/cai keeps hf_setup/alignment-handbook-setup-sft.py and -setup.dpo.py, `deps` lists its Readme says to
    copy over the handbook's setup.py: trl==0.9.6 in both, transformers<=4.45 for DPO and >=4.39.3 for SFT. A DPO
    recipe under cai/mistral/dpo/ runs in the dpo file's environment: max_prompt_length and warmup_ratio still work
    there (upgrade warnings naming that file); its torch_dtype is the old handbook's own ModelArguments field (trl
    0.9.6 predates the handbook's rewrite onto TRL's classes)."""
    tree = _fresh(tmp_path, CAI)
    dpo = tree / CAI_DPO
    findings = _lint(dpo).findings
    warmup = [f for f in findings if f.key == "warmup_ratio"]
    assert [f.severity for f in warmup] == ["warning"]
    assert "transformers<=4.45 (train/scripts/hf_recipes/hf_setup/alignment-handbook-setup.dpo.py:28)" in \
        warmup[0].message and "breaks on that upgrade" in warmup[0].message
    assert [(f.code, f.severity) for f in findings if f.key == "torch_dtype"] == [("SP407", "info")]

    sft = tree / CAI_SFT
    max_seq = _findings(sft, "max_seq_length", "SP402")
    assert max_seq and "alignment-handbook-setup-sft.py:29" in max_seq[0].message
    assert [(f.code, f.severity) for f in _lint(sft).findings if f.key == "torch_dtype"] == [("SP407", "info")]

    # under another folder name the setup files are no environment folder: the newest releases are assumed
    tree = _fresh(tmp_path, CAI)
    (tree.root / CAI / CAI_SETUP).rename(tree.root / CAI / "train/scripts/hf_recipes/notes")
    dpo = tree / CAI_DPO
    assert "hf_setup" not in " ".join(f.message for f in _lint(dpo).findings)
    assert [f.code for f in _findings(dpo, "torch_dtype", "SP403")]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


LEAN = "lzumot__lean_grpo"


def test_a_project_that_loads_no_yaml_hands_nothing_on_from_the_file(tmp_path):
    """lzumot/lean_grpo's configs/default.yaml has the fields of its LeanGRPOConfig, whose warmup_ratio and
    max_prompt_length the trainer hands to GRPOConfig; but no code of the project names YAML (its typer CLI builds
    the config from flags), so nothing reaches GRPOConfig from the file. Once a script loads it, the hand-off holds."""
    name = f"{LEAN}/configs__default.yaml"
    tree = _fresh(tmp_path, LEAN)
    assert not [f for f in _lint(tree / name).findings if f.severity in ("warning", "error")]

    tree = _fresh(tmp_path, LEAN)
    cli = tree.root / LEAN / "src/lean_grpo/cli.py"
    cli.write_text("import yaml\n" + cli.read_text())
    assert [f.code for f in _findings(tree / name, "max_prompt_length", "SP408")] == ["SP408"]


HEALER = "seacowx__mental-healer"


def test_a_pydantic_model_built_from_the_file_is_its_reader(tmp_path):
    """seacowx/mental-healer's train_grpo.py: `GRPOTrainerArgs(**yaml.safe_load(...))`, a pydantic BaseModel that
    declares 24 of grpo_config.yaml's 25 keys (it ignores max_completion_length): the file is the project's own
    schema, though its keys look like GRPOConfig's. A class declaring fewer of them is not its reader."""
    name = f"{HEALER}/src__configs__grpo_config.yaml"
    assert _lint(_fresh(tmp_path, HEALER) / name).dialect == "unknown"

    tree = _fresh(tmp_path, HEALER)
    _edit(tree.root / HEALER / "src/utils/custom_trainer_args.py", "    adam_beta1: float\n    adam_beta2: float\n"
          "    weight_decay: float\n    warmup_steps: int\n    learning_rate: float\n", "")  # 19 of 25 keys left
    assert _lint(tree / name).dialect == "trl"


REAVE = "QuantumDou__ReaVE"


def test_a_read_in_a_comment_reads_nothing(tmp_path):
    """QuantumDou/ReaVE's bundled LLaMA-Factory has `# medical_eval_config = config.get("medical_eval")` in tuner.py,
    switched off: nothing pops the medical_eval block, and LLaMA-Factory's parser refuses it. Uncommented, the
    project's code reads it."""
    name = f"{REAVE}/LlamaFactory__examples__mint-cot__qwen2_5_vl_3b_lora_quick_test.yaml"
    found = [(f.code, f.severity) for f in _lint(_fresh(tmp_path, REAVE) / name).findings if f.key == "medical_eval"]
    assert found == [("SP401", "warning")]

    tree = _fresh(tmp_path, REAVE)
    _edit(tree.root / REAVE / "LlamaFactory/src/llamafactory/train/tuner.py",
          '    # medical_eval_config: dict[str, Any] | None = config.get("medical_eval")',
          '    medical_eval_config: dict[str, Any] | None = config.get("medical_eval")')
    found = [(f.code, f.severity) for f in _lint(tree / name).findings if f.key == "medical_eval"]
    assert found == [("SP407", "info")]


PROACTIVE = "hungphongtrn__proactive-ai"


def test_of_two_scripts_reading_a_config_the_launched_one_hands_it_on(tmp_path):
    """hungphongtrn/proactive-ai: train.py and unsloth_train.py both default to train_config.yaml and spread its
    training: section into GRPOConfig; train.sh launches train.py, which never imports unsloth, so trl 1.x's plain
    GRPOConfig refuses max_prompt_length and warmup_ratio (SP408), where unsloth's patched one would drop or move
    them (SP466, SP407). With no launcher, the first reader (unsloth_train.py) stands."""
    name = f"{PROACTIVE}/train_config.yaml"
    found = {f.key: f.code for f in _lint(_fresh(tmp_path, PROACTIVE) / name).findings}
    assert found == {"training.max_prompt_length": "SP408", "training.warmup_ratio": "SP408"}

    tree = _fresh(tmp_path, PROACTIVE)
    (tree.root / PROACTIVE / "train.sh").unlink()
    found = {f.key: f.code for f in _lint(tree / name).findings}
    assert found == {"training.max_prompt_length": "SP466", "training.warmup_ratio": "SP407"}


REGROUND = "sespoir__ReGround"


def test_model_only_saves_beside_the_best_model_under_deepspeed(tmp_path):
    """sespoir/ReGround's sft_qwen2_5_vl_7b.yaml: save_only_model and load_best_model_at_end with deepspeed:
    ds_z3_config.json, which the Trainer refuses from transformers 4.38 (SP475); without DeepSpeed it passes."""
    name = f"{REGROUND}/training__sft_qwen2_5_vl_7b.yaml"
    found = [(f.code, f.line) for f in _lint(_fresh(tmp_path, REGROUND) / name).findings if f.code == "SP475"]
    assert found == [("SP475", 29)]

    tree = _fresh(tmp_path, REGROUND)
    _edit(tree / name, "deepspeed:", "# deepspeed:")
    assert not [f for f in _lint(tree / name).findings if f.code == "SP475"]


WASSNAME = "wassname__alignment-handbook"


def test_a_parser_class_the_project_re_exports_from_its_src_package(tmp_path):
    """wassname/alignment-handbook's run_sft.py: `from alignment import H4ArgumentParser`, a package under src/
    whose __init__ re-exports the class from configs.py (HfArgumentParser's subclass, parse_yaml_file): the
    parser's classes are known, so use_flash_attention_2, which none declares, is refused (SP438), not a note.
    A module nowhere in the checkout leaves the parser unknown."""
    name = f"{WASSNAME}/recipes__smollm2__sft__config.yaml"
    found = [(f.code, f.severity) for f in _lint(_fresh(tmp_path, WASSNAME) / name).findings
             if f.key == "use_flash_attention_2"]
    assert found == [("SP438", "warning")]

    tree = _fresh(tmp_path, WASSNAME)
    (tree.root / WASSNAME / "src/alignment").rename(tree.root / WASSNAME / "src/elsewhere")
    found = [(f.code, f.severity) for f in _lint(tree / name).findings if f.key == "use_flash_attention_2"]
    assert found == [("SP407", "info")]


WEBRL = "THUDM__WebRL"


def test_a_file_a_hydra_defaults_list_names_is_the_projects(tmp_path):
    """THUDM/WebRL's scripts/config/main/default.yaml: webrl.yaml beside it opens with `defaults: [default, _self_]`,
    and run.py composes it with Hydra's initialize/compose from a folder its flags give; its project_name is read
    as `config.project_name`. Not a TRL file. Without the defaults entry, its keys read as TRL's again."""
    name = f"{WEBRL}/scripts__config__main__default.yaml"
    assert _lint(_fresh(tmp_path, WEBRL) / name).dialect == "unknown"

    tree = _fresh(tmp_path, WEBRL)
    _edit(tree / f"{WEBRL}/scripts__config__main__webrl.yaml", "  - default\n", "")
    assert _lint(tree / name).dialect == "trl"


XTRAINER = "wwwbq__XTrainer"


def test_a_llamafactory_base_file_merged_under_others_is_a_fragment(tmp_path):
    """wwwbq/XTrainer's configs/default.yaml (val_size, no dataset) is merged under the configs that name it in
    `_base_` (its loader's mmengine-style inheritance), which set stage and dataset: a fragment, whose settings are
    not judged alone (no SP428). A file no `_base_` names is judged whole."""
    name = f"{XTRAINER}/configs__default.yaml"
    assert not [f for f in _lint(_fresh(tmp_path, XTRAINER) / name).findings if f.code == "SP428"]

    tree = _fresh(tmp_path, XTRAINER)
    for other in ("configs__qwen0.5b_sft_lora.yaml", "configs__train__qwen_lora_sft.yaml"):
        _edit(tree / f"{XTRAINER}/{other}", '_base_: ["./default.yaml"]', "# no base")
    assert [f.code for f in _lint(tree / name).findings if f.code == "SP428"] == ["SP428"]


LLMR = "Xnhyacinth__LLMR"


def test_a_field_of_the_forks_eval_parser_classes_is_its_own(tmp_path):
    """Xnhyacinth/LLMR's fork of LLaMA-Factory parses an eval config into _EVAL_ARGS, whose EvaluationArguments
    declares gen_chat and vllm; its train parser's classes do not. Which parser reads the file the command says, so
    a field of any of the fork's parser calls is the fork's own (SP407). Without the fields, unknown keys (SP401)."""
    name = f"{LLMR}/config__bbh__test_lora_llama2.yaml"
    found = {f.key: f.code for f in _lint(_fresh(tmp_path, LLMR) / name).findings if f.key in ("gen_chat", "vllm")}
    assert found == {"gen_chat": "SP407", "vllm": "SP407"}

    tree = _fresh(tmp_path, LLMR)
    _edit(tree.root / LLMR / "src/llamafactory/hparams/evaluation_args.py", "    gen_chat: bool = field(",
          "    gen_chat_mode: bool = field(")
    found = {f.key: f.code for f in _lint(tree / name).findings if f.key in ("gen_chat", "vllm")}
    assert found == {"gen_chat": "SP401", "vllm": "SP407"}
