"""FSDP's activation checkpointing beside the Trainer's gradient_checkpointing (SP464), on real configs.

Girjoaba/apertus-finetuning-pipeline's full fine-tune is the right way round (`gradient_checkpointing: false` with
`fsdp_config.activation_checkpointing: true`); Mikeriess/ft-da-smol's axolotl pretrain states both, which
transformers' Trainer refuses ("can't be set to True simultaneously", 4.33 on). ikedachin's gpt-oss config states
both too, but with activation_offloading, so axolotl hands the Trainer gradient_checkpointing=False."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

APERTUS = "Girjoaba__apertus-finetuning-pipeline"
APERTUS_FULL = f"{APERTUS}/configs__sft_full_8B.yaml"
SMOL = "Mikeriess__ft-da-smol"
SMOL_LARGE = f"{SMOL}/configs__large.yml"
GPT_OSS = "ikedachin__axolotl_test"


def _refused(path: Path, versions: str | None = None) -> list[tuple[str, int]]:
    report = lint_paths([path], LintOptions(versions=versions)).files[0]
    return [(f.key, f.line) for f in report.findings if f.code == "SP464"]


def test_fsdp_checkpointing_alone_passes_and_both_are_refused(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=APERTUS) / APERTUS_FULL
    assert _refused(config) == []
    config.write_text(config.read_text().replace("gradient_checkpointing: false", "gradient_checkpointing: true", 1))
    assert _refused(config) == [("gradient_checkpointing", 16)]


def test_the_check_arrived_in_transformers_4_33(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=APERTUS) / APERTUS_FULL
    config.write_text(config.read_text().replace("gradient_checkpointing: false", "gradient_checkpointing: true", 1))
    assert _refused(config, "trl==0.19.1,transformers==4.32.0") == []
    assert _refused(config, "trl==0.19.1,transformers==4.33.0") == [("gradient_checkpointing", 16)]


def test_without_fsdp_on_the_fsdp_config_is_not_read(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=APERTUS) / APERTUS_FULL
    text = config.read_text().replace("gradient_checkpointing: false", "gradient_checkpointing: true", 1)
    config.write_text(text.replace('fsdp: "full_shard auto_wrap"\n', "", 1))
    assert "fsdp:" not in config.read_text()
    assert _refused(config) == []


def test_an_axolotl_config_stating_both_is_refused(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=SMOL) / SMOL_LARGE
    assert _refused(config) == [("gradient_checkpointing", 55)]
    config.write_text(config.read_text().replace("gradient_checkpointing: true", "gradient_checkpointing: false", 1))
    assert _refused(config) == []


def test_axolotl_activation_offloading_turns_the_trainer_flag_off(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=GPT_OSS) / f"{GPT_OSS}/gpt-oss-20b-sft-lora-dp2-fsdp.yaml"
    assert _refused(config) == []
    config.write_text(config.read_text().replace("activation_offloading: true\n", "", 1))
    assert _refused(config) == [("gradient_checkpointing", 67)]
