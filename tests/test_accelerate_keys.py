"""An accelerate launch config's top-level keys judged against the pinned accelerate (SP430, SP408), on a real file.

CLAIRE-Labo/open-instruct's `accelerate config` output sets enable_cpu_affinity, a ClusterConfig field from accelerate
0.29, while its requirements.txt pins accelerate>=0.21.0,<0.23.0: `accelerate launch --config_file` builds
ClusterConfig(**file) and stops with a TypeError there (a "had unknown keys" ValueError from 0.28). Which release has
which field comes from the released wheels (keys/key_history.json, scripts/gen_key_history.py)."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths

CLAIRE = "CLAIRE-Labo__open-instruct"
DDP = f"{CLAIRE}/accelerate_configs__generated_config_rcp_ddp_4gpu.yaml"


def _findings(path: Path, versions: str | None = None) -> list[tuple[str, str, int]]:
    report = lint_paths([path], LintOptions(versions=versions)).files[0]
    assert report.dialect == "accelerate"
    return [(f.code, f.key, f.line) for f in report.findings if f.severity in ("warning", "error")]


def test_a_field_newer_than_the_pinned_accelerate_is_refused(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=CLAIRE) / DDP
    assert _findings(config) == [("SP430", "enable_cpu_affinity", 5)]  # the project's own pin, <0.23
    assert _findings(config, "accelerate==0.28.0") == [("SP430", "enable_cpu_affinity", 5)]
    assert _findings(config, "accelerate==0.29.3") == []


def test_debug_arrived_in_accelerate_0_22(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=CLAIRE) / DDP
    config.write_text(config.read_text().replace("enable_cpu_affinity: true\n", "", 1))
    assert _findings(config, "accelerate==0.21.0") == [("SP430", "debug", 2)]
    assert _findings(config, "accelerate==0.22.0") == []


def test_a_field_accelerate_removed_is_refused_from_that_release(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=CLAIRE) / DDP
    config.write_text(config.read_text() + "\nipex_config:\n  ipex: false\n")
    assert _findings(config, "accelerate==1.12.0") == [("SP403", "ipex_config", 19)]  # breaks on the upgrade
    assert _findings(config, "accelerate==1.13.0") == [("SP408", "ipex_config", 19)]
    unpinned = (tmp_path / "unpinned.yaml")
    unpinned.write_text(config.read_text())
    assert _findings(unpinned) == [("SP403", "ipex_config", 19)]  # assumed the newest release: a warning


def test_a_sagemaker_config_is_judged_by_sagemakers_fields(tmp_path):
    from corpus_layout import lay_out

    config = lay_out(tmp_path, only=CLAIRE) / DDP
    text = config.read_text().replace("enable_cpu_affinity: true\n", "", 1) + "\nec2_instance_type: ml.p4d.24xlarge\n"
    config.write_text(text)
    assert [key for _, key, _ in _findings(config)] == ["ec2_instance_type"]
    config.write_text(text.replace("compute_environment: LOCAL_MACHINE", "compute_environment: AMAZON_SAGEMAKER"))
    assert "ec2_instance_type" not in [key for _, key, _ in _findings(config)]
