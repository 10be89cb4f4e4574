"""Readings settled in stop 61, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from seqprof.config.dialects.llamafactory_template import main_templates
from seqprof.config.key_history import KeyHistory
from seqprof.lint.run import LintOptions, lint_paths

OPEN_THOUGHTS = "open-thoughts__open-thoughts"
EGOBLIND = "juliavekim__EgoBlind-RA"
LLAMAFACTORY_CLONE = Path("/work/.mirror/hiyouga+LLaMA-Factory/repo")  # where `fetch` put it, if it did


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _template_findings(config: Path):
    return [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "template"]


def _set_template(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert f"template: {old}" in text
    config.write_text(text.replace(f"template: {old}", f"template: {new}"))


@pytest.mark.parametrize("template,raised", [
    ("qwen25", True),  # no release and no commit of main: open-thoughts issue #18's "Template qwen25 does not exist"
    ("gpt", False),  # main registered it from August to December 2025, in no release
    ("qwen2_vl", False),  # a release's and main's
    ("qwen", False),
])
def test_an_unpinned_project_s_template_is_judged_by_every_name_main_registered(tmp_path, template, raised):
    """OpenThinker-7B.yaml trains with upstream LLaMA-Factory (train/README.md) and pins no release: a clone of
    main. `qwen25` was never registered there, so the run stops at get_template_and_fix_tokenizer."""
    config = _fresh(tmp_path, OPEN_THOUGHTS) / f"{OPEN_THOUGHTS}/train__OpenThinker-7B.yaml"
    _set_template(config, "qwen25", template)
    found = _template_findings(config)
    assert [(f.code, f.severity) for f in found] == ([("SP406", "error")] if raised else [])
    if raised:
        assert "no commit of main (to 2026-08-18) ever registered it" in found[0].message


@pytest.mark.parametrize("requirement,raised", [
    ("llamafactory @ git+https://github.com/hiyouga/LLaMA-Factory.git", True),  # upstream's main
    ("llamafactory @ git+https://github.com/NovaSky-AI/LLaMA-Factory.git", False),  # a fork registers its own
])
def test_a_git_install_of_upstream_is_main_and_a_fork_s_is_not_judged(tmp_path, requirement, raised):
    """A git install of hiyouga/LLaMA-Factory runs main's registry; one of another repository runs its own."""
    tree = _fresh(tmp_path, OPEN_THOUGHTS)
    config = tree / f"{OPEN_THOUGHTS}/train__OpenThinker-7B.yaml"
    (config.parent / "requirements.txt").write_text(requirement + "\n")
    assert [f.code for f in _template_findings(config)] == (["SP406"] if raised else [])


def test_a_name_the_project_s_install_script_registers_is_its_own(tmp_path):
    """EgoBlind-RA's slurm/install_llamafactory_engaging.sh clones main and then runs its own
    scripts/register_template.py ("Re-applying kimi_vl_nothink template registration..."): the vision configs'
    `kimi_vl_nothink` is the project's, but sft_unified.yaml's `kimi` is not (a whole name, not a prefix), and the
    script's own name register_template.py is not LLaMA-Factory's data/template.py edited. Without the script,
    `kimi_vl_nothink` is judged like any other name."""
    tree = _fresh(tmp_path, EGOBLIND)
    assert _template_findings(tree / f"{EGOBLIND}/configs__sft_urgent_vision.yaml") == []
    assert [f.code for f in _template_findings(tree / f"{EGOBLIND}/configs__sft_unified.yaml")] == ["SP406"]

    tree = _fresh(tmp_path, EGOBLIND)
    (tree / f"{EGOBLIND}/slurm__install_llamafactory_engaging.sh").unlink()
    assert [f.code for f in _template_findings(tree / f"{EGOBLIND}/configs__sft_urgent_vision.yaml")] == ["SP406"]


def test_every_template_a_release_registers_was_registered_on_main():
    """Releases are cut from main: the release table (scripts/gen_key_history.py, from the wheels) and the main
    table (scripts/gen_llamafactory_main_templates.py, from git history) are read from different sources, and
    every name of the first must be in the second; each span closes no earlier than it opened."""
    released = KeyHistory.load().data["llamafactory"]["values"]["template"]["fields"]
    main = main_templates()["templates"]
    assert set(released) <= set(main)
    for spans in main.values():
        assert all(start and (end is None or start <= end) for start, end in spans)  # a rename can come and go in a day


def test_the_main_table_matches_the_registry_at_its_head():
    """An independent reading of main's newest registry: every `name="..."` passed to register_template at the
    table's head commit, by regular expression, against the names whose span is still open. Skipped where no
    clone of LLaMA-Factory is at hand."""
    head = main_templates()["head"]["commit"]
    if not (LLAMAFACTORY_CLONE / "HEAD").exists():
        pytest.skip(f"no LLaMA-Factory clone at {LLAMAFACTORY_CLONE}")
    text = subprocess.run(["git", "-C", str(LLAMAFACTORY_CLONE), "show", f"{head}:src/llamafactory/data/template.py"],
                          capture_output=True, text=True, check=True).stdout
    names = set(re.findall(r"^_?register_template\(\s*name=\"([^\"]+)\"", text, re.M))
    still = {n for n, spans in main_templates()["templates"].items() if spans[-1][1] is None}
    assert names == still


def test_the_main_table_names_its_source():
    data = json.loads((Path(__file__).parents[1] / "seqprof/config/dialects/keys/llamafactory_main_templates.json")
                      .read_text())
    assert data["command"].startswith("python scripts/gen_llamafactory_main_templates.py")
    assert re.fullmatch(r"[0-9a-f]{40}", data["head"]["commit"])


SUMERIAN = "indrajeetadityaroy9__sumerian_translation"


def test_a_key_with_a_known_key_s_words_in_another_order_suggests_that_key(tmp_path):
    """sumerian_translation's llama3_sft.yaml sets `datasets_test:` (its validation files); axolotl's key is
    `test_datasets`, and pydantic drops the other. The prefix rule alone answered `datasets`, a key the file already
    sets, so following the hint would train on the test set."""
    from seqprof.config.dialects.common import did_you_mean

    config = _fresh(tmp_path, SUMERIAN) / f"{SUMERIAN}/configs__llama3_sft.yaml"
    found = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "datasets_test"]
    assert [(f.code, f.severity) for f in found] == [("SP401", "warning")]
    assert "did you mean 'test_datasets'?" in found[0].message
    assert did_you_mean("datasets_test", ["datasets"]) == "datasets"  # without the reordered key: the prefix rule
    assert did_you_mean("steps_eval", ["eval_steps", "steps_eval_x"]) == "eval_steps"
    assert did_you_mean("size_batch_eval", ["eval_batch_size", "batch_eval_size"]) is None  # two orders: no guess
    # word order alone makes no guess: fengyuli-dev/cs229-project's own torchtune recipe reads `val_dataset`, which
    # is no misspelling of the released recipes' `dataset_val`
    assert did_you_mean("val_dataset", ["dataset_val", "dataset"]) is None


UPO = "wjn1996__Uncertainty-Preference-Optimization"


def test_a_dataset_info_json_with_a_trailing_comma_stops_the_run(tmp_path):
    """Uncertainty-Preference-Optimization's data/dataset_info.json ends an entry with `},` before its closing brace
    (line 141-143): its LLaMA-Factory loader raises "Cannot open data/dataset_info.json due to Expecting property
    name ..." before any data loads, for every config that names a dataset. With the comma removed, nothing."""
    tree = _fresh(tmp_path, UPO)
    config = tree / f"{UPO}/examples__llm_bench__init_stage__args__zephyr_kto.yaml"
    found = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.code == "SP470"]
    assert [(f.severity, f.key, f.line) for f in found] == [("error", "dataset", 12)]
    assert "line 143 column 1" in found[0].message

    info = tree / f"{UPO}/data__dataset_info.json"
    text = info.read_text()
    head, tail = text.rsplit("}", 1)
    fixed = re.sub(r",(\s*)$", r"\1", head) + "}" + tail  # the comma before the closing brace
    json.loads(fixed)  # the repair is valid JSON
    tree = _fresh(tmp_path, UPO)  # a new layout: seqprof caches what it read of the first
    (tree / f"{UPO}/data__dataset_info.json").write_text(fixed)
    config = tree / f"{UPO}/examples__llm_bench__init_stage__args__zephyr_kto.yaml"
    assert [f for f in lint_paths([config], LintOptions()).files[0].findings if f.code == "SP470"] == []


SLM = "Stycoo__SLM-Reasoning"


def test_a_fork_s_stage_names_the_released_workflow_its_tuner_hands_it_to(tmp_path):
    """SLM-Reasoning's own LLaMA-Factory copy adds stages: its train/tuner.py runs `completion_dpo` with the released
    run_dpo (a DPO run) and `multi_sft` with a workflow of its own (run_multi_sft), whose trainer keeps the stage's
    name. Without the tuner, the stage's name is all there is."""
    def trainer(config):
        facts = lint_paths([config], LintOptions()).files[0].facts
        return facts.plan.setting("trainer").value

    tree = _fresh(tmp_path, SLM)
    dpo = f"{SLM}/recipes__align_dpo__iterative_reverse_segment_dpo_w_accu_q_hybrid_w_seg_sft__iter_1.yaml"
    assert trainer(tree / dpo) == "dpo"
    assert trainer(tree / f"{SLM}/recipes__sft__llama3_full_multi_sft_ds3.yaml") == "multi_sft"

    tree = _fresh(tmp_path, SLM)
    (tree / f"{SLM}/src__llamafactory__train__tuner.py").unlink()
    assert trainer(tree / dpo) == "completion_dpo"
