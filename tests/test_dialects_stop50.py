"""Readings settled in stop 50, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from seqprof.lint.run import LintOptions, lint_paths

SURI = "chtmp223__suri"
COIN = "zackschen__CoIN"


def test_a_handbook_copy_that_trains_with_trl_is_a_trl_recipe(tmp_path):
    """chtmp223/suri carries alignment-handbook's layer from before its rewrite (ft/lib/alignment_mod/configs.py:
    H4ArgumentParser, SFTConfig(transformers.TrainingArguments)) and pins transformers only; its run_sft.py hands
    what the parser reads to SFTTrainer (from its vendored copy of trl). The recipe is TRL's. With transformers'
    own Trainer in the script, the file is the project's HfArgumentParser YAML."""
    from corpus_layout import lay_out

    from seqprof.config.read import read_plan

    config = f"{SURI}/ft__sft__sft.yaml"
    report = lint_paths([lay_out(tmp_path / "published", only=SURI) / config], LintOptions()).files[0]
    assert (report.dialect, report.facts.plan.setting("trainer").value) == ("trl", "sft")
    assert {f.key for f in report.findings if f.severity == "warning"} >= {"warmup_ratio", "overwrite_output_dir"}
    tree = lay_out(tmp_path / "plain", only=SURI)
    script = tree / f"{SURI}/ft__sft__run_sft.py"
    text = script.read_text()
    assert "trainer = SFTTrainer(" in text
    script.write_text(text.replace("trainer = SFTTrainer(", "trainer = Trainer("))
    assert read_plan(tree / config).dialect == "hf"


def test_a_launchers_scheduler_is_checked_through_llavas_wrapper_script(tmp_path):
    """zackschen/CoIN's launchers run ETrain/Train/LLaVA/train_mem.py (LLaVA's wrapper: it patches attention, then
    calls train() from ETrain.Train.LLaVA.train, which builds transformers' Trainer) with scripts/zero3_offload.json
    and --lr_scheduler_type cosine. The file's WarmupLR scheduler replaces the cosine decay (SP458). A wrapper whose
    entry point is no module of the project says nothing about what reads the options."""
    from corpus_layout import lay_out

    config = f"{COIN}/scripts__zero3_offload.json"
    found = lint_paths([lay_out(tmp_path / "published", only=COIN) / config], LintOptions()).files[0].findings
    assert [(f.code, f.severity) for f in found if f.code == "SP458"] == [("SP458", "warning")]
    assert "1_Science.sh:38" in next(f.message for f in found if f.code == "SP458")
    tree = lay_out(tmp_path / "elsewhere", only=COIN)
    wrapper = tree / f"{COIN}/ETrain__Train__LLaVA__train_mem.py"
    text = wrapper.read_text()
    wrapper.write_text(text.replace("from ETrain.Train.LLaVA.train import", "from other_pkg.train import"))
    assert "SP458" not in {f.code for f in lint_paths([tree / config], LintOptions()).files[0].findings}


SKILL = "orange0629__skill-data-selection"


def test_keys_of_a_llamafactory_fork_the_readme_installs_are_notes(tmp_path):
    """orange0629/skill-data-selection's README clones Qihoo360/360-LLaMA-Factory and installs it with `pip install
    -e .`: its configs' sequence_parallel_size and sequence_parallel_mode are that fork's arguments, which no release
    has and seqprof cannot see, so they are notes, not unknown keys with a did-you-mean. Installed from
    hiyouga/LLaMA-Factory itself, they are unknown."""
    from corpus_layout import lay_out

    config = f"{SKILL}/training__yaml__full_dpo.yaml"
    found = lint_paths([lay_out(tmp_path / "published", only=SKILL) / config], LintOptions()).files[0].findings
    notes = {f.key: f for f in found if f.code == "SP407"}
    assert {"sequence_parallel_size", "sequence_parallel_mode"} <= set(notes)
    assert "Qihoo360/360-LLaMA-Factory (README.md:" in notes["sequence_parallel_size"].message
    assert not [f for f in found if f.severity in ("warning", "error")]
    tree = lay_out(tmp_path / "upstream", only=SKILL)
    readme = tree / f"{SKILL}/README.md"
    readme.write_text(readme.read_text().replace("Qihoo360/360-LLaMA-Factory.git\ncd 360-LLaMA-Factory",
                                                 "hiyouga/LLaMA-Factory.git\ncd LLaMA-Factory"))
    found = lint_paths([tree / config], LintOptions()).files[0].findings
    assert {f.key for f in found if f.code == "SP401"} == {"sequence_parallel_size", "sequence_parallel_mode"}
