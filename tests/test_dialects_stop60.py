"""Readings settled in stop 60, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from seqprof.config.key_history import KeyHistory
from seqprof.lint.run import LintOptions, lint_paths

GRAPHIX = "cenourin__graphix-t5-scibench"
SCIENCE_NEWS = "PiLab-ZJU__Science-Newsworthy"
WHEELS = Path("/tmp/h7b_wheels")  # where scripts/gen_key_history.py --wheels kept them, if it did (as
# tests/test_framework_key_history.py)


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _findings(config, key=None):
    found = lint_paths([config], LintOptions()).files[0].findings
    return [f for f in found if key is None or f.key == key]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_a_dockerfile_s_installed_requirements_file_pins_the_run(tmp_path):
    """graphix-t5-scibench's docker/modern/Dockerfile copies requirements-a4.lock into the image and installs it
    with `pip install --no-deps -r /opt/graphix/requirements-a4.lock`: transformers==4.57.6 runs, which still has
    warmup_ratio (an upgrade warning naming the lock). Without the -r line nothing pins transformers and the newest
    release, which dropped it, is judged."""
    config = f"{GRAPHIX}/configs__train.json"
    dockerfile = f"{GRAPHIX}/docker__modern__Dockerfile"
    found = _findings(_fresh(tmp_path, GRAPHIX) / config, "warmup_ratio")
    assert [(f.code, f.severity) for f in found] == [("SP402", "warning")]
    assert "transformers==4.57.6 (docker/modern/Dockerfile:15, which installs /opt/graphix/requirements-a4.lock, " \
        "line 40)" in found[0].message

    tree = _fresh(tmp_path, GRAPHIX)
    _edit(tree / dockerfile, "-r /opt/graphix/requirements-a4.lock", "numpy")
    found = _findings(tree / config, "warmup_ratio")
    assert found and "requirements-a4.lock" not in found[0].message


def test_a_key_the_project_s_code_moves_to_its_new_name_is_a_note(tmp_path):
    """graphix_modern/train.py's parse_config does `cfg["eval_strategy"] = cfg.pop("evaluation_strategy")` before
    HfArgumentParser.parse_dict: the old name never reaches transformers 4.57.6, which lacks it. Without that line,
    SP408."""
    config = f"{GRAPHIX}/configs__train.json"
    found = _findings(_fresh(tmp_path, GRAPHIX) / config, "evaluation_strategy")
    assert [(f.code, f.severity) for f in found] == [("SP407", "info")]
    assert "graphix_modern/train.py:60" in found[0].message

    tree = _fresh(tmp_path, GRAPHIX)
    _edit(tree / f"{GRAPHIX}/graphix_modern__train.py", 'cfg["eval_strategy"] = cfg.pop("evaluation_strategy")',
          "pass")
    assert [f.code for f in _findings(tree / config, "evaluation_strategy")] == ["SP408"]


@pytest.mark.parametrize("pin,template,expected", [
    ("llamafactory==0.9.2", "qwen3", "0.9.3 added it"),  # data/template.py registers qwen3 from 0.9.3
    ("llamafactory==0.9.3", "qwen3", None),
    ("llamafactory==0.9.5", "baichuan2", "releases up to 0.9.4 registered it, 0.9.5 dropped it"),
    ("llamafactory>=0.9.0", "baichuan2", None),  # 0.9.0-0.9.4 have it: which one pip picks is not the pins' alone
    ("", "baichuan2", None),  # unpinned: most often a clone of main, which had it until 0.9.5's time
    ("", "gpt", None),  # unpinned, in no release: main registered it between releases (stop 61)
    ("", "qwen25", "no commit of main"),  # no release and no commit of main: a fork's (SkyThought's) or a mistake
    ("", "lama3", "did you mean 'llama3'?"),
    ("", "llama3", None),
])
def test_a_template_no_allowed_release_registers(tmp_path, pin, template, expected):
    """Science-Newsworthy's media_lora_sft.yaml (template: llama3, LLaMA-Factory unpinned) with other templates and
    pins: get_template_and_fix_tokenizer raises "Template X does not exist." for a name the release lacks. Unpinned,
    only a name no release and no commit of main ever registered is judged (stop 61)."""
    tree = _fresh(tmp_path, SCIENCE_NEWS)
    config = tree / f"{SCIENCE_NEWS}/configs__media_lora_sft.yaml"
    _edit(config, "template: llama3", f"template: {template}")
    if pin:
        (config.parent.parent / "requirements.txt").write_text(f"{pin}\n")
    found = _findings(config, "template")
    if expected is None:
        assert found == []
    else:
        assert [(f.code, f.severity) for f in found] == [("SP406", "error")]
        assert expected in found[0].message and f"Template {template} does not exist." in found[0].message


def test_a_template_the_project_registers_or_its_copy_carries_is_not_judged(tmp_path):
    """A project that registers its own template (`from llamafactory.data.template import register_template`,
    then register_template(name="qwen25", ...)), or whose config sits in a LLaMA-Factory copy, decides itself."""
    tree = _fresh(tmp_path, SCIENCE_NEWS)
    config = tree / f"{SCIENCE_NEWS}/configs__media_lora_sft.yaml"
    _edit(config, "template: llama3", "template: qwen25")
    (config.parent.parent / "requirements.txt").write_text("llamafactory==0.9.5\n")
    assert [f.code for f in _findings(config, "template")] == ["SP406"]

    tree = _fresh(tmp_path, SCIENCE_NEWS)
    config = tree / f"{SCIENCE_NEWS}/configs__media_lora_sft.yaml"
    _edit(config, "template: llama3", "template: qwen25")
    (config.parent.parent / "requirements.txt").write_text("llamafactory==0.9.5\n")
    (config.parent.parent / "register.py").write_text(
        "from llamafactory.data.template import register_template\n\nregister_template(\n    name=\"qwen25\",\n)\n")
    assert _findings(config, "template") == []

    tree = _fresh(tmp_path, SCIENCE_NEWS)
    config = tree / f"{SCIENCE_NEWS}/configs__media_lora_sft.yaml"
    _edit(config, "template: llama3", "template: qwen25")
    (config.parent.parent / "requirements.txt").write_text("llamafactory==0.9.5\n")
    inside = config.parent.parent / "LLaMA-Factory" / "examples" / config.name
    inside.parent.mkdir(parents=True)
    inside.write_text(config.read_text())
    assert _findings(inside, "template") == []


def test_the_template_history_matches_a_release_s_own_registrations():
    """An independent reading of one release: every `name="..."` passed to register_template in llamafactory
    0.9.5's data/template.py, by regular expression over the wheel, against the generated history (which the
    generator reads with ast). Skipped where the wheel was not downloaded (scripts/gen_key_history.py --wheels)."""
    import re

    wheel = next(iter(sorted(WHEELS.glob("llamafactory-0.9.5-*.whl"))), None)
    if wheel is None:
        pytest.skip(f"llamafactory 0.9.5 not downloaded (scripts/gen_key_history.py --wheels {WHEELS})")
    text = zipfile.ZipFile(wheel).read("llamafactory/data/template.py").decode()
    # a call at the left margin (the docstring's indented example of register_template(name="custom") is none)
    names = set(re.findall(r"^_?register_template\(\s*name=\"([^\"]+)\"", text, re.M))
    history = KeyHistory.load()
    fields = history.data["llamafactory"]["values"]["template"]["fields"]
    assert names == {n for n in fields if "0.9.5" in history.having("llamafactory", n, ["template"], "values")}
