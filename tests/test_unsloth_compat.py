"""Keys handed to a TRL config that unsloth has patched, on real projects. From unsloth 2026.8.11 the generated
Unsloth<X>Config passes its arguments through filter_config_init_kwargs (models/rl_config_compat.py): a field the
installed trl/transformers lacks is moved to its new name where unsloth knows the rename (warmup_ratio ->
warmup_steps from 2026.9.1) and dropped with a printed notice otherwise, so no TypeError. TuTTC/BSLoRA-vs-PiSSA
hands logging_dir to SFTConfig after `import unsloth` (dropped: SP466); epmresearch/vlm-safety-reasoning hands
warmup_ratio (moved: a note). Without unsloth's import, or at an unsloth before 2026.8.11, both are SP408."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

TUTTC = "TuTTC__BSLoRA-vs-PiSSA-LegalSLM"
TUTTC_BASE = f"{TUTTC}/configs__base_config.yaml"
EPM = "epmresearch__vlm-safety-reasoning"


def _codes(path: Path, key: str, versions: str | None = None) -> list[str]:
    report = lint_paths([path], LintOptions(versions=versions)).files[0]
    return [f.code for f in report.findings if f.key == key]


def test_a_removed_field_unsloth_drops_is_a_warning_not_an_error(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=TUTTC) / TUTTC_BASE
    assert _codes(config, "output.logging_dir") == ["SP466"]


def test_before_unsloth_2026_8_11_the_field_is_refused(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=TUTTC) / TUTTC_BASE
    versions = "unsloth==2026.8.10,trl==1.15.0,transformers==5.17.0"
    assert _codes(config, "output.logging_dir", versions) == ["SP408"]
    assert _codes(config, "output.logging_dir", versions.replace("2026.8.10", "2026.8.11")) == ["SP466"]


def test_without_unsloth_s_import_the_plain_trl_class_refuses_it(tmp_path):
    from corpus_layout import lay_out

    tree = lay_out(tmp_path, only=TUTTC)
    for name in ("training__train.py", "training__trainer_utils.py"):
        script = tree / f"{TUTTC}/{name}"
        script.write_text(script.read_text().replace("import unsloth", "import os").replace(
            "from unsloth import", "from os import"))
    assert _codes(tree / TUTTC_BASE, "output.logging_dir") == ["SP408"]


def test_a_rename_unsloth_knows_keeps_its_effect(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=EPM) / f"{EPM}/configs__sft.yaml"
    assert _codes(config, "warmup_ratio") == ["SP407"]
    # 2026.8.22 knows TRL's renames only: warmup_ratio is dropped there
    assert _codes(config, "warmup_ratio", "unsloth==2026.8.22,trl==1.15.0,transformers==5.17.0") == ["SP466"]
