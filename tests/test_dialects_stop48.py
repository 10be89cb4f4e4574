"""Readings settled in stop 48, on the real files that showed them: a launch line that names the config by an
absolute path, LLaMA-Factory's mcore_adapter keys, a project's own dataclass over a GRPO-looking file, and
alignment-handbook's huggingface-hub cap on the transformers a project can install. Each test also shows the
reading without the evidence that decides it."""

from __future__ import annotations

from seqprof.config.read import read_plan
from seqprof.config.versions import find_pins
from seqprof.lint.run import LintOptions, lint_paths

FRAPPE = "ArtisanClarinets__frappe-llm"
TEXT2SQL = "Qianvenh__Text2SQL-Qwen3-1p7B"
HUMANIZE = "jayshah5696__humanize-rl"
WPO = "wzhouad__WPO"


def test_an_absolute_path_on_the_launch_line_names_the_config(tmp_path):
    """frappe-llm's scripts/train_dpo.sh runs `axolotl train /srv/frappe-llm/configs/qwen25-coder-3b-dpo-frappe.yaml`
    (the checkout's place on the author's server). The file mixes TRL-looking keys (num_train_epochs, max_seq_length,
    loss_type) into an axolotl config (base_model, adapter, rl: dpo); the launch line is what it was read by. With
    the path's folders not matching, the file reads as axolotl by its keys (since stop 51, axolotl's `rl:` beside
    base_model is never TRL's), no longer by the command."""
    from corpus_layout import lay_out

    tree = lay_out(tmp_path / "published", only=FRAPPE)
    plan = read_plan(tree / f"{FRAPPE}/configs__qwen25-coder-3b-dpo-frappe.yaml")
    assert (plan.dialect, plan.settings["trainer"].value) == ("axolotl", "dpo")
    assert "scripts/train_dpo.sh:5" in plan.dialect_source
    tree = lay_out(tmp_path / "moved", only=FRAPPE)  # the path's folders inside the project must match
    script = tree / f"{FRAPPE}/scripts__train_dpo.sh"
    script.write_text(script.read_text().replace("/srv/frappe-llm/configs/", "/srv/frappe-llm/other/"))
    plan = read_plan(tree / f"{FRAPPE}/configs__qwen25-coder-3b-dpo-frappe.yaml")
    assert plan.dialect == "axolotl" and "train_dpo.sh" not in plan.dialect_source


def test_mcore_adapter_fields_are_llamafactory_keys_under_use_mca(tmp_path):
    """Qianvenh/Text2SQL's megatron config sets overlap_p2p_comm with use_mca: true; LLaMA-Factory then parses
    mcore_adapter's Seq2SeqTrainingArguments, whose DistributingParallelArguments declares it."""
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=TEXT2SQL) / f"{TEXT2SQL}/config__train__qwen3_1p7B_deepspeed_megatron_lora_qv.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "llamafactory"
    assert [f.key for f in report.findings if f.code == "SP401"] == []
    config.write_text(config.read_text().replace("overlap_p2p_comm:", "overlap_p2p_comms:"))
    report = lint_paths([config], LintOptions()).files[0]
    assert [f.key for f in report.findings if f.code == "SP401"] == ["overlap_p2p_comms"]


def test_a_grpo_looking_file_read_into_the_projects_dataclass_is_the_projects(tmp_path):
    """humanize-rl's gemma4_e2b_rl_a100_full_v2.yaml (num_generations, max_prompt_length, generation_batch_size)
    is `GRPOProbeConfig(**yaml.safe_load(...))` in src/humanize_rl/training/rl_gemma4_trl_vllm_modal.py, which copies
    chosen fields into trl.GRPOConfig; without that script the file reads as a TRL GRPO recipe."""
    from corpus_layout import lay_out

    config = f"{HUMANIZE}/configs__rl__gemma4_e2b_rl_a100_full_v2.yaml"
    plan = read_plan(lay_out(tmp_path / "published", only=HUMANIZE) / config)
    assert plan.dialect == "unknown" and not [d for d in plan.diagnostics if d.kind == "unknown_key"]
    tree = lay_out(tmp_path / "without", only=HUMANIZE)
    (tree / f"{HUMANIZE}/src__humanize_rl__training__rl_gemma4_trl_vllm_modal.py").unlink()
    assert read_plan(tree / config).dialect == "trl"


def test_alignment_handbook_caps_transformers_below_5(tmp_path):
    """WPO's scripts/run_wpo.py imports alignment-handbook (`from alignment import H4ArgumentParser, ...`) and pins
    nothing; every alignment-handbook setup.py requires huggingface-hub<1.0, which no transformers from 5.0 meets.
    So gradient_checkpointing_kwargs is a live field there, not transformers 5.23's deprecated alias."""
    from corpus_layout import lay_out

    tree = lay_out(tmp_path / "published", only=WPO)
    config = tree / f"{WPO}/training_configs__mistral.yaml"
    hub = find_pins(config).of("huggingface-hub")
    assert [p.specifier for p in hub] == ["<1.0"] and "scripts/run_wpo.py:28" in hub[0].source
    report = lint_paths([config], LintOptions()).files[0]
    codes = {f.key: f.code for f in report.findings}
    assert codes["gradient_checkpointing_kwargs"] == "SP429"  # a note: the replacement needs transformers 5.23
    assert codes["evaluation_strategy"] == "SP408"  # gone from 4.51 on, which the cap allows
    # a repository that ships its own `alignment` package (a fork of the handbook) pins through its own setup.py
    tree = lay_out(tmp_path / "shipping", only=WPO)  # the project's Python files are listed once per run
    config = tree / f"{WPO}/training_configs__mistral.yaml"
    package = (tree / f"{WPO}/scripts__run_wpo.py").parent.parent / "alignment"
    package.mkdir()
    (package / "configs.py").write_text("")  # src/alignment/configs.py: a package with or without __init__.py
    assert find_pins(config).of("huggingface-hub") == ()


def test_a_vendored_alignment_handbook_checkout_brings_its_cap(tmp_path):
    """ucr-rai/base-and-edit keeps a clone of alignment-handbook (alignment-handbook/src/alignment/ beside the
    handbook's own setup.py, huggingface-hub<1.0) and imports it: the package it ships is the handbook itself, so the
    cap stands; a package of the project's own (no handbook setup.py above its src/) would not bring it."""
    from corpus_layout import lay_out

    name = "ucr-rai__base-and-edit"
    config = lay_out(tmp_path / "published", only=name) / f"{name}/recipes__sft.yaml"
    assert [p.specifier for p in find_pins(config).of("huggingface-hub")] == ["<1.0"]
    tree = lay_out(tmp_path / "renamed", only=name)
    config = tree / f"{name}/recipes__sft.yaml"
    setup = tree / f"{name}/alignment-handbook__setup.py"
    setup.write_text(setup.read_text().replace('name="alignment-handbook"', 'name="base-and-edit"'))
    assert find_pins(config).of("huggingface-hub") == ()
