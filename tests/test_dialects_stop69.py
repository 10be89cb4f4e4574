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
