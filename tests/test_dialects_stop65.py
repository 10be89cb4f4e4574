"""Readings settled in stop 65, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config: Path, key: str):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == key]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


ADAMAME = "dayeonki__adamame"
APR_RL = "Tomsawyerhu__APR-RL"


def test_resume_true_in_a_llamafactory_training_file_stops_a_fresh_run(tmp_path):
    """LLaMA-Factory's sft workflow hands resume_from_checkpoint to Trainer.train, which reads True as "the newest
    checkpoint in output_dir" and raises when there is none; unset, LLaMA-Factory resumes by itself."""
    name = f"{ADAMAME}/1_sft__stage1_scripts__sft_distill1.5b.yaml"
    found = _findings(_fresh(tmp_path, ADAMAME) / name, "resume_from_checkpoint")
    assert [(f.code, f.severity) for f in found] == [("SP473", "warning")]
    assert "No valid checkpoint found" in found[0].message and "saves/distill_1.5b/adapter" in found[0].message

    # no do_train: trainer.train never runs, the key is read by nothing
    tree = _fresh(tmp_path, ADAMAME)
    _edit(tree / name, "do_train: true", "do_train: false")
    assert not [f for f in _findings(tree / name, "resume_from_checkpoint") if f.code == "SP473"]

    # a file named as a resume run is meant to find a checkpoint
    tree = _fresh(tmp_path, ADAMAME)
    resume = (tree / name).with_name("sft_distill1.5b_resume.yaml")
    (tree / name).rename(resume)
    assert not [f for f in _findings(resume, "resume_from_checkpoint") if f.code == "SP473"]


def test_resume_true_counts_only_where_the_script_that_parses_the_file_trains(tmp_path):
    """APR-RL's grpo.py passes training_args.resume_from_checkpoint to trainer.train under `if not
    script_args.evaluate_only:`; config_full.yaml sets evaluate_only: true, so that call never runs."""
    name = f"{APR_RL}/config_full.yaml"
    assert not [f for f in _findings(_fresh(tmp_path, APR_RL) / name, "resume_from_checkpoint") if f.code == "SP473"]

    tree = _fresh(tmp_path, APR_RL)
    _edit(tree / name, "evaluate_only: true", "evaluate_only: false")
    found = [f for f in _findings(tree / name, "resume_from_checkpoint") if f.code == "SP473"]
    assert len(found) == 1 and "grpo.py:644 passes it to trainer.train" in found[0].message


DISC = "FudanDISC__DISC-MedLLM"


def test_an_optimizer_name_the_installed_transformers_dropped_is_an_error(tmp_path):
    """DISC-MedLLM's sft.json sets optim: adamw_hf and pins no transformers: a fresh install gets 5.25, whose
    OptimizerNames lost adamw_hf in 4.50, and TrainingArguments.__post_init__ raises ValueError."""
    name = f"{DISC}/train__sft.json"
    found = _findings(_fresh(tmp_path, DISC) / name, "optim")
    assert [(f.code, f.severity) for f in found] == [("SP474", "error")]
    assert "4.50 dropped it" in found[0].message and found[0].fix.startswith("optim: adamw_torch")

    tree = _fresh(tmp_path, DISC)
    requirements = (tree / name).parents[1] / "requirements.txt"
    requirements.write_text(requirements.read_text() + "\ntransformers==4.49.0\n")
    assert not [f for f in _findings(tree / name, "optim") if f.code == "SP474"]


KAUFMANN = "max-kaufmann__open-r1"


def test_a_requirement_on_a_local_file_is_a_copy_seqprof_cannot_date(tmp_path):
    """max-kaufmann/open-r1's setup.py installs `trl @ file:///mfs1/u/max/trl`, the author's own copy: no release
    and no head of main, so trl 1.16's removals are no errors there."""
    name = f"{KAUFMANN}/recipes__Gemma-3-4B__grpo__config_demo.yaml"
    found = _findings(_fresh(tmp_path, KAUFMANN) / name, "torch_dtype")
    assert not [f for f in found if f.severity == "error"]

    tree = _fresh(tmp_path, KAUFMANN)
    _edit((tree / name).parents[3] / "setup.py", '"trl @ file:///mfs1/u/max/trl"', '"trl"')
    assert [f.code for f in _findings(tree / name, "torch_dtype") if f.severity == "error"] == ["SP408"]


GOD = "DespiteDeath1__god-base-tournament"


def test_the_image_whose_dockerfile_copies_the_config_is_the_one_that_runs_it(tmp_path):
    """The training Dockerfile builds FROM axolotlai/axolotl:main-py3.11-cu124-2.5.1 (a main build seqprof cannot
    date) and COPYs core/config/base.yml into it; the validator's Dockerfile names another image. The copying one
    decides: flash_attention's deprecation in 0.17 is not judged, while keys no axolotl release's TRLConfig ever had
    are still dropped whichever commit it is."""
    tree = _fresh(tmp_path, GOD)
    base = tree / f"{GOD}/core__config__base.yml"
    assert not [f for f in _findings(base, "flash_attention") if f.severity in ("warning", "error")]
    grpo = tree / f"{GOD}/core__config__base_grpo.yml"
    found = _findings(grpo, "trl.kl_threshold")
    assert [f.code for f in found] == ["SP401"] and "no release (0.5-0.19) has it" in found[0].message

    tree = _fresh(tmp_path, GOD)
    base = tree / f"{GOD}/core__config__base.yml"
    _edit(base.parents[2] / "dockerfiles" / "standalone-text-trainer.dockerfile",
          "COPY core/config/base.yml /workspace/axolotl/base.yml\n", "")
    assert [f.code for f in _findings(base, "flash_attention")] == ["SP402"]
