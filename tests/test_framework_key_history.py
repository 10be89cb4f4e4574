"""Per-release key history of axolotl and LLaMA-Factory (keys/key_history.json, scripts/gen_key_history.py),
judged under the project's pins like TRL's removals (seqprof.config.versions)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from seqprof.config.read import read_plan
from seqprof.config.key_history import KeyHistory

ROOT = Path(__file__).resolve().parents[1]
# axolotl's own example (axolotl-ai-cloud/axolotl examples/llama-3/lora-1b.yml), copied into tests/data
AXOLOTL_EXAMPLE = ROOT / "tests" / "data" / "configs" / "axolotl" / "examples" / "llama-3" / "lora-1b.yml"
# LLaMA-Factory's own example (hiyouga/LLaMA-Factory examples/train_lora/qwen3_lora_sft.yaml), copied into tests/data
LF_EXAMPLE = ROOT / "tests" / "data" / "configs" / "llamafactory" / "examples" / "train_lora" / "qwen3_lora_sft.yaml"
WHEELS = Path("/tmp/h7b_wheels")  # where scripts/gen_key_history.py --wheels kept them, if it did


def _generator():
    spec = importlib.util.spec_from_file_location("gen_key_history", ROOT / "scripts" / "gen_key_history.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config(tmp_path: Path, example: Path, extra: str, pins: str | None = None) -> Path:
    """*example* plus *extra* keys in a repository (a .git folder marks its root), with requirements.txt = *pins*."""
    (tmp_path / ".git").mkdir(parents=True)
    if pins is not None:
        (tmp_path / "requirements.txt").write_text(pins)
    path = tmp_path / example.name
    shutil.copy(example, path)
    with path.open("a") as fh:
        fh.write("\n" + extra)
    return path


def finding(path: Path, key: str, versions: str | None = None):
    found = [d for d in read_plan(path, versions=versions).diagnostics if d.key == key]
    assert len(found) <= 1, found
    return found[0] if found else None


def first_without(history: KeyHistory, package: str, key: str, classes: list[str]) -> str:
    """The first generated version after the last one that has *key* (from the history alone)."""
    order = history.versions(package)
    last = max(history.having(package, key, classes), key=order.index)
    return order[order.index(last) + 1]


# --- axolotl: relora_steps, a schema field of old releases ----------------------------------------

AX = ["AxolotlInputConfig"]


def test_relora_steps_history_matches_the_releases():
    """relora_steps is in the oldest schema the history read and gone from the newest (ReLoRA moved to relora /
    jagged_restart_steps); where the releases are on disk, their sources agree with the committed spans."""
    history = KeyHistory.load()
    having = history.having("axolotl", "relora_steps", AX)
    order = history.versions("axolotl")
    assert order[0] in having and order[-1] not in having
    gen = _generator()
    on_disk = [v for v in order if list(WHEELS.glob(f"axolotl-{v}[-.]*"))]
    if not on_disk:
        pytest.skip("no axolotl release downloaded (scripts/gen_key_history.py --wheels /tmp/h7b_wheels)")
    for version in on_disk:
        fields = gen.axolotl_fields(gen.wheel("axolotl", version, WHEELS, sdist=True))
        assert ("relora_steps" in fields) == (version in having), version
        assert fields == history.fields_in("axolotl", version, AX), version


def test_relora_steps_by_axolotl_pin(tmp_path):
    history = KeyHistory.load()
    gone = first_without(history, "axolotl", "relora_steps", AX)  # 0.12.2 in the committed history
    gone_minor = ".".join(gone.split(".")[:2])
    old = [v for v in history.versions("axolotl") if v in history.having("axolotl", "relora_steps", AX)][-1]
    path = config(tmp_path, AXOLOTL_EXAMPLE, "relora_steps: 150\n", pins=f"axolotl=={old}\n")
    pinned = finding(path, "relora_steps")
    assert pinned.kind == "deprecated_key" and f"axolotl {gone_minor} removes it" in pinned.message
    assert "requirements.txt:1" in pinned.message
    after = finding(path, "relora_steps", versions=f"axolotl>={gone}")
    assert after.kind == "removed_key" and f"removed in axolotl {gone_minor}" in after.message
    unpinned = config(tmp_path / "unpinned", AXOLOTL_EXAMPLE, "relora_steps: 150\n")
    d = finding(unpinned, "relora_steps")
    newest = ".".join(history.newest("axolotl").split(".")[:2])
    assert d.kind == "deprecated_key" and f"assuming axolotl {newest} (no axolotl pin found" in d.message


def test_a_field_of_the_newest_axolotl_release_is_known(tmp_path):
    """Keys the newest release's schema has are no SP401, and a typo of one still is (with its did-you-mean)."""
    history = KeyHistory.load()
    newest = history.fields_in("axolotl", history.newest("axolotl"), AX)
    assert "use_trackio" in newest
    path = config(tmp_path, AXOLOTL_EXAMPLE, "use_trackio: true\nuse_trakio: true\n")
    assert finding(path, "use_trackio") is None
    typo = finding(path, "use_trakio")
    assert typo.kind == "unknown_key" and typo.suggestion == "use_trackio"


# --- LLaMA-Factory: visual_inputs (ModelArguments until 0.8.x), every release a step ---------------

def test_llamafactory_history_is_per_release_and_records_the_transformers_range():
    history = KeyHistory.load()
    assert history.step("llamafactory") == "patch"
    gen = _generator()
    for version in history.versions("llamafactory"):
        whl = list(WHEELS.glob(f"llamafactory-{version}-*.whl"))
        if whl:  # the METADATA of the release on disk gives the recorded range
            assert history.requires("llamafactory", version, "transformers") == \
                gen.required_range(whl[0], "transformers")
    assert history.requires("llamafactory", history.newest("llamafactory"), "transformers")


def test_visual_inputs_by_llamafactory_pin(tmp_path):
    history = KeyHistory.load()
    classes = ["ModelArguments"]
    gone = first_without(history, "llamafactory", "visual_inputs", classes)  # 0.9.0 in the committed history
    last = [v for v in history.versions("llamafactory") if v in history.having("llamafactory", "visual_inputs",
                                                                                  classes)][-1]
    path = config(tmp_path, LF_EXAMPLE, "visual_inputs: false\n", pins=f"llamafactory=={last}\n")
    pinned = finding(path, "visual_inputs")
    assert pinned.kind == "deprecated_key" and f"llamafactory {gone} removes it" in pinned.message
    after = finding(path, "visual_inputs", versions=f"llamafactory=={gone}")
    assert after.kind == "removed_key" and f"removed in llamafactory {gone}" in after.message
    unpinned = config(tmp_path / "unpinned", LF_EXAMPLE, "visual_inputs: false\n")
    d = finding(unpinned, "visual_inputs")
    assert d.kind == "deprecated_key"
    assert f"assuming llamafactory {history.newest('llamafactory')} (no llamafactory pin found" in d.message


def test_training_arguments_keys_follow_the_transformers_range_llamafactory_requires(tmp_path):
    """evaluation_strategy left TrainingArguments before the transformers floor of the newest llamafactory, and
    is in every transformers the oldest llamafactory with an upper bound allows; a transformers pin wins."""
    history = KeyHistory.load()
    from packaging.specifiers import SpecifierSet

    ta = ["TrainingArguments"]
    having = history.having("transformers", "evaluation_strategy", ta)

    def runs_with(lf: str) -> list[str]:
        spec = SpecifierSet(history.requires("llamafactory", lf, "transformers"))
        return [t for t in history.versions("transformers") if spec.contains(t)]

    capped = next(v for v in history.versions("llamafactory") if "<" in history.requires("llamafactory", v,
                                                                                          "transformers"))
    assert set(runs_with(capped)) <= having  # so no finding under that pin
    newest = history.newest("llamafactory")
    assert not set(runs_with(newest)) & having  # so SP408 under a pin of the newest
    path = config(tmp_path, LF_EXAMPLE, "evaluation_strategy: steps\n")
    assert finding(path, "evaluation_strategy", versions=f"llamafactory=={capped}") is None
    assert finding(path, "evaluation_strategy", versions=f"llamafactory=={newest}").kind == "removed_key"
    # a release with no upper bound on transformers: its range reaches releases without the field, and a fresh
    # install gets the newest of them (SP408, naming it); a transformers pin past the removal says so too
    open_ended = next(v for v in history.versions("llamafactory")
                      if "<" not in history.requires("llamafactory", v, "transformers"))
    assert set(runs_with(open_ended)) & having and set(runs_with(open_ended)) - having
    wide = finding(path, "evaluation_strategy", versions=f"llamafactory=={open_ended}")
    assert wide.kind == "removed_key" and "pip installs transformers" in wide.message
    gone = first_without(history, "transformers", "evaluation_strategy", ta)
    over = finding(path, "evaluation_strategy", versions=f"llamafactory=={open_ended},transformers>={gone}")
    assert over.kind == "removed_key" and f"transformers>={gone}" in over.message
    assert finding(path, "lerning_rate") is None  # unrelated keys untouched
