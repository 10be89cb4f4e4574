"""Readings settled in stop 54, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from seqprof.lint.run import LintOptions, lint_paths

GEMMA_PEFT = "HarshilMaks__gemma3-peft"
OPEN_RS2 = "LYF22034__open-rs2-grpo-lora"
DEID = "obi-ml-public__ehr_deidentification"


def test_an_unsloth_model_in_a_file_of_sections_is_the_projects_own_schema(tmp_path):
    """HarshilMaks/gemma3-peft's training_config.yaml names `model_name: unsloth/gemma-3-12b-it-bnb-4bit` but keeps
    its settings in sections of its own (lora:, training:, memory:, output:, oom_fallbacks:), which its script reads;
    unsloth-cli.py takes flat options and no file. It is the project's schema: no dialect, and `output:` is no typo
    of output_dir. Flattened to unsloth-cli's options, the same model makes it an Unsloth file."""
    from corpus_layout import lay_out

    config = f"{GEMMA_PEFT}/configs__training_config.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=GEMMA_PEFT) / config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    assert not [f for f in report.findings if f.severity in ("warning", "error")]
    tree = lay_out(tmp_path / "flat", only=GEMMA_PEFT)
    path = tree / config
    path.write_text("model_name: unsloth/gemma-3-12b-it-bnb-4bit\nmax_seq_length: 4096\nload_in_4bit: true\n"
                    "r: 64\nlora_alpha: 32\n")
    assert lint_paths([path], LintOptions()).files[0].dialect == "unsloth"


def test_an_install_script_installs_its_conda_environment_file(tmp_path):
    """LYF22034/open-rs2-grpo-lora's README runs scripts/set/set_env.sh from the repository root; its line 18,
    `conda env update -f ./scripts/set/environment.yml`, installs transformers==4.50.0 and trl==0.15.2. Read,
    that pin keeps gradient_checkpointing_kwargs a note (activation_checkpointing_kwargs comes in 5.23) and makes
    warmup_ratio an upgrade warning that names the pin. Without the conda line seqprof finds no pin and assumes
    the newest transformers, where the key is a deprecated alias to rename."""
    from corpus_layout import lay_out

    config = f"{OPEN_RS2}/recipes__DeepSeek-R1-Distill-Qwen-1.5B__grpo__train_model_open_rs2.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=OPEN_RS2) / config], LintOptions()).files[0].findings
    by_key = {f.key: f for f in found}
    assert by_key["gradient_checkpointing_kwargs"].severity == "info"
    warmup = by_key["warmup_ratio"]
    assert "transformers==4.50.0 (scripts/set/environment.yml:269, installed by set_env.sh:18)" in warmup.message
    assert "it breaks on that upgrade" in warmup.message
    tree = lay_out(tmp_path / "bare", only=OPEN_RS2)
    script = tree.root / OPEN_RS2 / "scripts" / "set" / "set_env.sh"
    script.write_text(script.read_text().replace("conda env update -f", "cat"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    by_key = {f.key: f for f in found}
    assert by_key["gradient_checkpointing_kwargs"].severity == "warning"
    assert "transformers 5.25 (no pins found beside the config)" in by_key["warmup_ratio"].message
    tree = lay_out(tmp_path / "broken", only=OPEN_RS2)  # a broken environment file the script names pins nothing
    (tree.root / OPEN_RS2 / "scripts" / "set" / "environment.yml").write_text("dependencies: [\n  - : :\n")
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert "transformers 5.25 (no pins found beside the config)" in \
        next(f.message for f in found if f.key == "warmup_ratio")


def test_a_zero_train_batch_size_in_a_file_that_does_not_train(tmp_path):
    """obi-ml-public/ehr_deidentification's predict_i2b2.json says `do_train: false` and
    `per_device_train_batch_size: 0`: the train DataLoader is built only in Trainer.train(), which run_ner.py calls
    under `if training_args.do_train`, and no TrainingArguments release checks the value, so nothing refuses it.
    With `do_train: true` the same 0 is an SP406 error."""
    from corpus_layout import lay_out

    config = f"{DEID}/steps__forward_pass__run__i2b2__predict_i2b2.json"
    found = lint_paths([lay_out(tmp_path / "published", only=DEID) / config], LintOptions()).files[0].findings
    assert not [f for f in found if f.key == "per_device_train_batch_size"]
    tree = lay_out(tmp_path / "training", only=DEID)
    path = tree / config
    path.write_text(path.read_text().replace('"do_train":false', '"do_train":true'))
    found = lint_paths([path], LintOptions()).files[0].findings
    assert [(f.code, f.severity) for f in found if f.key == "per_device_train_batch_size"] == [("SP406", "error")]


def test_an_unknown_stage_with_no_model_data_or_template_beside_a_section_is_not_llamafactory(tmp_path):
    """YJY131248/Chat4Seniors' config/grpo.yaml borrows LLaMA-Factory's names (stage: grpo, finetuning_type,
    cutoff_len, val_size) for the job spec of its verl platform, whose settings sit in a verl_platform_config:
    section; it names no model_name_or_path, dataset or template, and LLaMA-Factory has no grpo stage. Nothing of
    LLaMA-Factory's is raised on it (no SP406 on the stage, no SP428 on val_size). With a `template: qwen` line, as
    SachinKonan/LLaMA-Factory-AutoReviewer's fork files have beside their grpo stage, it reads as LLaMA-Factory."""
    from corpus_layout import lay_out

    config = "YJY131248__Chat4Seniors/config__grpo.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only="YJY131248__Chat4Seniors") / config],
                        LintOptions()).files[0]
    assert report.dialect != "llamafactory"
    assert not {f.code for f in report.findings} & {"SP406", "SP428"}
    tree = lay_out(tmp_path / "templated", only="YJY131248__Chat4Seniors")
    path = tree / config
    path.write_text(path.read_text().replace("finetuning_type: full\n", "finetuning_type: full\ntemplate: qwen\n"))
    assert lint_paths([path], LintOptions()).files[0].dialect == "llamafactory"


def test_a_key_read_only_in_a_conditions_test_is_not_handed_on(tmp_path):
    """j8evn/Metaflyer-llm-project's train_dpo.py passes DPOConfig `evaluation_strategy="steps" if 'eval_path' in
    config['data'] else "no"`: the data section only decides the value, so no finding blames the config's `data`
    key for a keyword the script hard-codes. Written as the value itself (`config['data']`), it is handed on."""
    from corpus_layout import lay_out

    repo = "j8evn__Metaflyer-llm-project"
    config = f"{repo}/configs__dpo_config.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=repo) / config], LintOptions()).files[0].findings
    assert not [f for f in found if f.key == "data"]
    tree = lay_out(tmp_path / "value", only=repo)
    script = tree.root / repo / "src" / "train_dpo.py"
    script.write_text(script.read_text().replace(
        "evaluation_strategy=\"steps\" if 'eval_path' in config['data'] else \"no\"",
        "evaluation_strategy=config['data']"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert [f.code for f in found if f.key == "data"] == ["SP408"]
