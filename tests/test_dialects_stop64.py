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
