"""Version pins beside a config, and the severity of a removed key under them (seqprof.config.versions)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.config.dialects.common import load_keys_file
from seqprof.config.read import read_plan
from seqprof.config.key_history import KeyHistory, with_companions
from seqprof.config.pins import parse_spec
from seqprof.config.versions import find_pins
from seqprof.errors import SeqprofError

# TRL's own example config (huggingface/trl examples/cli_configs/example_config.yaml), copied into tests/data
TRL_EXAMPLE = Path(__file__).parent / "data" / "configs" / "trl" / "examples" / "cli_configs" / "example_config.yaml"
# requirement strings of huggingface/open-r1 setup.py (_deps, commit 02b9c0e): trl/transformers from git carry no pin
OPEN_R1_DEPS = '''accelerate>=1.2.1
bitsandbytes
datasets>=3.2.0
deepspeed==0.15.4
distilabel[vllm,ray,openai]>=1.5.2
huggingface-hub[cli]>=0.19.2,<1.0
liger_kernel==0.5.2
transformers @ git+https://github.com/huggingface/transformers.git@main
trl @ git+https://github.com/huggingface/trl.git@main
vllm>=0.7.0
'''


def project(tmp_path: Path, files: dict[str, str], extra_key: str = "max_seq_length: 1024\n") -> Path:
    """A repository (a .git folder marks its root) holding *files* and TRL's example config one folder down."""
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    config = tmp_path / "recipes" / "sft.yaml"
    config.parent.mkdir()
    shutil.copy(TRL_EXAMPLE, config)
    with config.open("a") as fh:
        fh.write(extra_key)
    return config


def diagnostic(plan, key):
    found = [d for d in plan.diagnostics if d.key == key]
    assert len(found) == 1, plan.diagnostics
    return found[0]


# --- pins from project files ---------------------------------------------------------------------

def test_requirements_with_include_extras_and_ranges(tmp_path):
    config = project(tmp_path, {
        "requirements.txt": "-r requirements/base.txt\n--extra-index-url https://download.pytorch.org/whl/cu121\n"
                            "trl[vllm] >=0.19, <0.21 ; python_version >= '3.10'  # GRPO needs vllm\n",
        "requirements/base.txt": OPEN_R1_DEPS + "transformers~=4.57.0\n"})
    pins = find_pins(config)
    assert [(p.specifier, p.source) for p in pins.of("trl")] == [(">=0.19,<0.21", "requirements.txt:3")]
    assert [(p.specifier, p.source) for p in pins.of("transformers")] == [("~=4.57.0", "base.txt:11")]
    assert pins.allowed("trl", KeyHistory.load().versions("trl")) == ["0.19.1", "0.20.0"]


ASHOK = Path(__file__).parent / "data" / "corpus" / "ashokvaktariya1__alignment_book_qx"


@pytest.mark.parametrize("name", ["newrequirement.txt", "new_requirements.txt", "train_requirements.txt"])
def test_a_requirements_file_by_any_name_is_read(tmp_path, name):
    """ashokvaktariya1/alignment_book_qx freezes its environment in newrequirement.txt (transformers==4.41.2 at line
    88), muqeeth/Adversarial_goodhart_rlhf installs from new_requirements.txt: pip's format whatever the prefix."""
    config = project(tmp_path, {name: (ASHOK / "newrequirement.txt").read_text()})
    assert [(p.specifier, p.source) for p in find_pins(config).of("transformers")] == [("==4.41.2", f"{name}:88")]
    assert find_pins(project(tmp_path / "other", {"notes.txt": "transformers==4.41.2\n"})).of("transformers") == ()


def test_git_requirements_on_main_are_newer_than_every_release(tmp_path):
    """`trl @ git+...@main` is past the newest release, so a key that release lacks is gone there too (SP408)."""
    config = project(tmp_path, {"requirements.txt": OPEN_R1_DEPS})
    pins = find_pins(config)
    assert pins.of("trl") == () and pins.vcs("trl").head
    found = diagnostic(read_plan(config), "max_seq_length")
    assert found.kind == "removed_key" and "installed from its main branch (requirements.txt:" in found.message


def test_git_requirements_pin_a_commit_so_removals_are_notes(tmp_path):
    """A commit of trl may still have a key the next release dropped: a note (SP407), not a warning."""
    config = project(tmp_path, {"requirements.txt": OPEN_R1_DEPS.replace("trl.git@main", "trl.git@c04e84c")})
    assert not find_pins(config).vcs("trl").head
    found = diagnostic(read_plan(config), "max_seq_length")
    assert found.kind == "unread_key" and "pinned to a commit (requirements.txt:" in found.message


def test_setup_py_deps_table_is_read(tmp_path):
    """open-r1's setup.py (huggingface/open-r1, Apache-2.0): pins in a `_deps` table that deps_list() picks from."""
    setup = (
        'import re\nfrom setuptools import setup\n\n_deps = [\n    "accelerate==1.4.0",\n'
        '    "transformers==4.52.3",\n    "trl[vllm]==0.18.0",\n]\n'
        'deps = {b: a for a, b in (re.findall(r"^(([^!=<>~ \\[\\]]+)(?:\\[[^\\]]+\\])?(?:[!=<>~ ].*)?$)", x)[0] '
        'for x in _deps)}\n\ndef deps_list(*pkgs):\n    return [deps[pkg] for pkg in pkgs]\n\n'
        'setup(name="open-r1", install_requires=deps_list("accelerate", "transformers", "trl"))\n')
    config = project(tmp_path, {"setup.py": setup})
    pins = find_pins(config)
    assert [p.specifier for p in pins.of("trl")] == ["==0.18.0"]
    assert [p.specifier for p in pins.of("transformers")] == ["==4.52.3"]


def test_uv_lock_version_wins_over_pyproject_range(tmp_path):
    # alignment-handbook style pyproject ranges, resolved by uv.lock (uv's [[package]] tables)
    config = project(tmp_path, {
        "pyproject.toml": '[project]\nname = "handbook"\nversion = "0.1"\ndependencies = [\n'
                          '    "transformers>=4.56.1",\n    "trl>=0.19.1",\n]\n',
        "uv.lock": 'version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "torch"\nversion = "2.6.0"\n\n'
                   '[[package]]\nname = "trl"\nversion = "0.19.1"\nsource = { registry = "https://pypi.org/simple" }\n'})
    pins = find_pins(config)
    assert [(p.specifier, p.source, p.exact) for p in pins.of("trl")] == [("==0.19.1", "uv.lock:9", True)]
    assert [(p.specifier, p.source) for p in pins.of("transformers")] == [(">=4.56.1", "pyproject.toml:5")]


def test_poetry_environment_and_setup_py(tmp_path):
    config = project(tmp_path, {
        "pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\ntrl = "^0.19.1"\n'
                          'transformers = { version = "~4.57", extras = ["torch"] }\n'})
    pins = find_pins(config)
    assert pins.of("trl")[0].specifier == ">=0.19.1,<0.20" and pins.of("transformers")[0].specifier == ">=4.57,<4.58"
    conda = tmp_path / "conda"  # another repository
    (conda / ".git").mkdir(parents=True)
    (conda / "environment.yml").write_text("name: ft\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n"
                                           "  - conda-forge::transformers=4.57\n  - pip\n  - pip:\n"
                                           "      - trl==0.22.2\n")
    (conda / "setup.py").write_text('from setuptools import setup\nsetup(name="x", install_requires=[\n'
                                    '    "trl>=0.22",\n])\n')
    pins = find_pins(conda / "sft.yaml")
    assert [p.specifier for p in pins.of("trl")] == ["==0.22.2", ">=0.22"]
    assert pins.of("transformers")[0].specifier == "==4.57.*"
    assert pins.allowed("transformers", KeyHistory.load().versions("transformers")) == ["4.57.6"]


def test_a_bad_pins_file_is_a_note_not_a_crash(tmp_path):
    config = project(tmp_path, {"pyproject.toml": "[project\ndependencies = ['trl==0.19']\n",
                                "requirements.txt": "trl==0.19.1\n"})
    pins = find_pins(config)
    assert pins.of("trl")[0].specifier == "==0.19.1"
    assert len(pins.notes) == 1 and "pyproject.toml" in pins.notes[0]


def test_the_search_stops_at_the_repository_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl==0.19.1\n")  # outside the repository
    config = project(tmp_path / "repo", {})
    assert find_pins(config).of("trl") == ()


@pytest.mark.parametrize("spec", ["trl", "trl==abc", "", "==0.19", "trl==0.19;transformers"])
def test_bad_versions_spec_is_a_seqprof_error(spec):
    with pytest.raises(SeqprofError):
        parse_spec(spec)


def test_versions_spec():
    pins = parse_spec("trl>=0.19,<0.21, transformers==4.57")
    assert pins.of("trl")[0].specifier == ">=0.19,<0.21" and pins.of("transformers")[0].specifier == "==4.57.*"


# --- severity by pin, on TRL's example config ------------------------------------------------------

def test_max_seq_length_under_trl_pins(tmp_path):
    config = project(tmp_path, {"requirements.txt": "trl==0.19.1\n"})
    old = diagnostic(read_plan(config), "max_seq_length")
    assert old.kind == "renamed_key" and "trl 0.20 removes it" in old.message and "requirements.txt:1" in old.message
    new = diagnostic(read_plan(config, versions="trl>=0.20"), "max_seq_length")
    assert new.kind == "removed_key" and new.suggestion == "max_length" and "trl>=0.20" in new.message
    # a range across the removal: a fresh install gets 0.20, which refuses it (the issue's rule: removed in a
    # version the pins allow is an error)
    span = diagnostic(read_plan(config, versions="trl>=0.19,<0.21"), "max_seq_length")
    assert span.kind == "removed_key" and "pip installs trl 0.20" in span.message, span.message
    assert "releases before it still have it" in span.message


def test_torch_dtype_under_trl_pins(tmp_path):
    config = project(tmp_path, {}, extra_key="torch_dtype: bfloat16\n")
    d = diagnostic(read_plan(config, versions="trl==0.22"), "torch_dtype")
    assert d.kind == "deprecated_key" and "trl 0.27 removes it" in d.message and d.suggestion == "dtype"
    assert diagnostic(read_plan(config, versions="trl==0.27"), "torch_dtype").kind == "removed_key"


def test_transformers_pin_decides_training_arguments_keys(tmp_path):
    config = project(tmp_path, {"requirements.txt": "transformers==4.57.1\n"},
                     extra_key="group_by_length: true\n")
    d = diagnostic(read_plan(config), "group_by_length")
    assert d.kind == "renamed_key" and "transformers 5.2 removes it" in d.message
    assert "train_sampling_strategy: group_by_length" in d.value_change  # the fix says the value changes too
    assert diagnostic(read_plan(config, versions="transformers>=5.2"), "group_by_length").kind == "removed_key"


def test_a_deprecation_past_the_pins_is_a_note(tmp_path):
    """transformers 5.23 deprecated gradient_checkpointing_kwargs for activation_checkpointing_kwargs (the history's
    first release with the new field); a 4.52 pin has only the old name, a 5.x range or no pin has both."""
    config = project(tmp_path, {"requirements.txt": "transformers==4.52.3\n"},
                     extra_key="gradient_checkpointing_kwargs:\n  use_reentrant: false\n")
    first = min(KeyHistory.load().having("transformers", "activation_checkpointing_kwargs", ["TrainingArguments"]),
                key=lambda v: tuple(map(int, v.split("."))))
    pinned = diagnostic(read_plan(config), "gradient_checkpointing_kwargs")
    assert pinned.kind == "upcoming_deprecation" and pinned.suggestion == "activation_checkpointing_kwargs"
    assert f"transformers {'.'.join(first.split('.')[:2])} added it" in pinned.message
    for spec in (f"transformers>={first}", "transformers>=4.50"):  # a range that reaches the new name: a warning
        assert diagnostic(read_plan(config, versions=spec), "gradient_checkpointing_kwargs").kind == "deprecated_key"
    unpinned = project(tmp_path / "unpinned", {}, extra_key="gradient_checkpointing_kwargs: {}\n")
    d = diagnostic(read_plan(unpinned), "gradient_checkpointing_kwargs")  # the newest release is assumed
    assert d.kind == "deprecated_key" and "no pins found" in d.message


def test_a_deprecation_under_a_commit_pin_is_a_note_naming_the_commit(tmp_path):
    """A transformers commit (Wen-ChuangChou/open-r1's setup.py pins a 4.52 dev commit) cannot be placed among
    releases: whether it has activation_checkpointing_kwargs yet is unknown, so the old name is a note, and the
    assumed release says why it was assumed."""
    config = project(tmp_path, {"requirements.txt": "transformers @ git+https://github.com/huggingface/transformers"
                                                    ".git@acdbe627\n"},
                     extra_key="gradient_checkpointing_kwargs:\n  use_reentrant: false\n")
    d = diagnostic(read_plan(config), "gradient_checkpointing_kwargs")
    assert d.kind == "upcoming_deprecation" and "pinned to a commit (requirements.txt:1)" in d.message
    assert "no pins found" not in d.message


def test_lint_json_names_the_versions_and_exits_1_on_sp408(tmp_path):
    config = project(tmp_path, {"requirements.txt": "trl>=0.20\n"})
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--select", "SP4"])
    out = json.loads(result.stdout)
    assert result.exit_code == 1 and [f["code"] for f in out["findings"]] == ["SP408"]
    assert out["files"][0]["versions"]["trl"] == {"pinned": ">=0.20", "source": "requirements.txt:1", "assumed": None}
    assert out["files"][0]["versions"]["transformers"]["assumed"] == KeyHistory.load().newest("transformers")
    bad = CliRunner().invoke(main, ["lint", str(config), "--versions", "trl=>0.2"])
    assert bad.exit_code == 2 and "--versions" in bad.output and "Traceback" not in bad.output


# --- the generated history ----------------------------------------------------------------------

def test_history_agrees_with_the_imported_trl_classes():
    """keys/trl_configs.json came from importing trl 1.16's classes; the history parsed the same wheel's source."""
    imported = load_keys_file("trl_configs")
    history = KeyHistory.load()
    assert history.newest("trl") == imported["version"]
    for cls, keys in imported["classes"].items():
        if cls == "cli":
            continue
        now = {k for k in history.ever("trl", [cls]) if history.newest("trl") in history.having("trl", k, [cls])}
        assert now == set(keys), cls


def test_history_agrees_with_the_imported_training_arguments():
    imported = load_keys_file("hf_training_arguments")
    history = KeyHistory.load()
    assert history.newest("transformers") == imported["version"]
    fields = history.ever("transformers", ["TrainingArguments"])
    assert {k for k in fields if history.having("transformers", k, ["TrainingArguments"]) >= {imported["version"]}} \
        == set(imported["fields"])


def test_a_recipe_pinned_before_trls_config_classes_reads_its_own_keys(tmp_path):
    """trl 0.9 added SFTConfig and DPOConfig (the key history's SFTConfig starts there): a project pinned to
    trl==0.7.4 parsed its YAML with its own classes (SPIN, old alignment-handbook), so TRL's later removal of
    max_seq_length is no finding of TRL's; a TrainingArguments key still follows transformers."""
    first = min(KeyHistory.load().having("trl", "max_seq_length", ["SFTConfig"]),
                key=lambda v: tuple(map(int, v.split("."))))
    assert first.startswith("0.9")
    config = project(tmp_path, {"requirements.txt": "trl==0.7.4\ntransformers==4.36.2\n"},
                     extra_key="max_seq_length: 1024\nevaluation_strategy: steps\n")
    plan = read_plan(config)
    d = diagnostic(plan, "max_seq_length")
    assert d.kind == "unread_key" and "predates TRL's config classes" in d.message
    assert diagnostic(plan, "evaluation_strategy").kind != "unread_key"
    newer = project(tmp_path / "newer", {"requirements.txt": "trl==0.19.1\n"})
    assert diagnostic(read_plan(newer), "max_seq_length").kind in ("renamed_key", "removed_key")


# --- a fix the pinned releases cannot take yet -------------------------------------------------------

def _lint_json(config: Path) -> dict:
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json", "--select", "SP4"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _finding(out: dict, key: str) -> dict:
    return next(f for f in out["findings"] if f["key"] == key)


@pytest.mark.parametrize("pins, key, code, since", [
    # ModelConfig.dtype arrived in trl 0.23 (model_config.py); torch_dtype left in 0.27
    ("trl==0.16.0\n", "torch_dtype: bfloat16\n", "SP403", "trl 0.23"),
    # TrainingArguments.eval_strategy arrived in 4.41; evaluation_strategy left in 4.51
    ("transformers==4.36.2\n", "evaluation_strategy: steps\n", "SP402", "transformers 4.41"),
    # warmup_steps reads a float ratio from 5.0 (an int before); warmup_ratio left in 5.15
    ("transformers==4.50.3\n", "warmup_ratio: 0.1\n", "SP402", "transformers 5.0"),
])
def test_a_key_that_breaks_later_keeps_its_name_while_the_pin_lacks_the_replacement(tmp_path, pins, key, code, since):
    """Still a warning naming the release that breaks it, but the fix waits for the release that brings the new
    name (renaming at the pin would be refused)."""
    out = _lint_json(project(tmp_path, {"requirements.txt": pins}, key))
    f = _finding(out, key.split(":")[0])
    assert f["code"] == code and f["severity"] == "warning" and "breaks on that upgrade" in f["message"]
    assert f["fix"].startswith(f"keep '{key.split(':')[0]}' while the pins stay; from {since} on")


def test_the_same_key_under_a_pin_with_the_replacement_is_renamed_now(tmp_path):
    out = _lint_json(project(tmp_path, {"requirements.txt": "trl==0.26.2\n"}, "torch_dtype: bfloat16\n"))
    assert _finding(out, "torch_dtype")["fix"] == "use 'dtype' instead"


def test_a_pin_older_than_the_history_is_judged_as_its_oldest_release(tmp_path):
    """transformers==4.34 (the history starts at 4.36): gradient_checkpointing's replacement arrived in 5.23, so a
    note; judged without the pin it would be a warning against 5.24."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("transformers==4.34\n")
    config = tmp_path / "train_args.yaml"  # a TrainingArguments file (Firefly's train_args/*.json, as YAML)
    config.write_text("output_dir: out\nper_device_train_batch_size: 4\nlearning_rate: 1.0e-5\n"
                      "gradient_checkpointing: true\n")
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json"])
    f = _finding(json.loads(result.stdout), "gradient_checkpointing")
    assert f["code"] == "SP429" and "transformers==4.34" in f["message"]


def test_trl_s_own_cap_on_transformers_bounds_an_open_transformers_pin(tmp_path):
    """trl<0.13 installs trl 0.12.2, whose metadata requires transformers<4.47: activation_checkpointing_kwargs
    (5.23) is out of reach, so gradient_checkpointing_kwargs is right there (a note); a floor (trl 1.16's
    transformers>=4.56.2) narrows nothing."""
    key = "gradient_checkpointing_kwargs:\n  use_reentrant: false\n"
    capped = _lint_json(project(tmp_path / "a", {"requirements.txt": "trl<0.13\ntransformers>=4.39\n"}, key))
    f = _finding(capped, "gradient_checkpointing_kwargs")
    assert f["code"] == "SP429" and "what trl 0.12.2 requires" in f["message"]
    floor = _lint_json(project(tmp_path / "b", {"requirements.txt": "trl>=1.0\ntransformers>=4.39\n"}, key))
    f = _finding(floor, "gradient_checkpointing_kwargs")
    assert f["code"] == "SP403" and "requires" not in f["message"]


@pytest.mark.parametrize("companion", ["vllm", "vllm>=0.8.3", "unsloth>=2025.2"])
def test_vllm_or_unsloth_beside_an_open_transformers_caps_it(tmp_path, companion):
    """A project that installs vLLM or Unsloth gets the transformers their newest release allows
    (keys/companion_requires.json, read from the wheels' METADATA): where that cap lies below the release that
    brought activation_checkpointing_kwargs, the old name is right (a note), not a rename to advise."""
    from packaging.specifiers import SpecifierSet

    history = KeyHistory.load()
    name = companion.split(">")[0]
    newest = history.versions(name)[-1]
    cap = SpecifierSet(history.requires(name, newest, "transformers"))
    replacement = sorted(history.having("transformers", "activation_checkpointing_kwargs", ["TrainingArguments"]),
                         key=history.versions("transformers").index)[0]
    key = "gradient_checkpointing_kwargs:\n  use_reentrant: false\n"
    out = _lint_json(project(tmp_path, {"requirements.txt": f"trl\ntransformers\n{companion}\n"}, key))
    f = _finding(out, "gradient_checkpointing_kwargs")
    if any(cap.contains(v) for v in history.versions("transformers")[history.versions("transformers").index(replacement):]):
        assert f["code"] == "SP403"  # the cap reaches the rename: the advice stands
    else:
        assert f["code"] == "SP429" and f"what {name} {newest} requires" in f["message"]


def test_a_companion_pinned_to_an_old_release_caps_nothing_it_did_not_cap(tmp_path):
    """vllm==0.8.3 named transformers>=4.51.1 and no cap: an open transformers is judged at the newest release."""
    history = KeyHistory.load()
    assert "<" not in (history.requires("vllm", "0.8.3", "transformers") or "")
    key = "gradient_checkpointing_kwargs:\n  use_reentrant: false\n"
    out = _lint_json(project(tmp_path, {"requirements.txt": "trl\ntransformers\nvllm==0.8.3\n"}, key))
    f = _finding(out, "gradient_checkpointing_kwargs")
    assert f["code"] == "SP403" and "vllm" not in f["message"]


@pytest.mark.parametrize("trl, code", [("trl>=0.9.6,<0.13.0", "SP407"), ("trl", "SP407"), ("trl>=0.19.1", "SP408")])
def test_alignment_handbook_s_own_model_arguments_read_torch_dtype_before_its_rewrite(tmp_path, trl, code):
    """alignment-handbook's src/alignment/configs.py declared ModelArguments.torch_dtype itself until 19f0345
    (2025-07-24), which took TRL's ModelConfig and pinned trl>=0.19.1; a copy with no trl pin cannot be dated.
    trl>=0.19.1 installs the newest trl, whose ModelConfig lacks torch_dtype (removed in 0.27): SP408."""
    setup = f'from setuptools import setup\nsetup(name="alignment-handbook", install_requires=["{trl}"])\n'
    config = project(tmp_path, {"setup.py": setup}, "torch_dtype: bfloat16\n")
    result = CliRunner().invoke(main, ["lint", str(config), "--format", "json"])
    assert _finding(json.loads(result.stdout), "torch_dtype")["code"] == code


def test_a_key_newer_than_the_pin_is_premature_and_one_removed_before_it_is_not():
    """GRPOConfig gained log_completions in trl 0.15 (the wheels, keys/key_history.json): trl==0.14.0 refuses it;
    trl==0.15 has it; with no pin nothing is claimed; SFTConfig's max_seq_length, gone in 0.20, is a removal under
    trl==0.21, not a premature key."""
    history = KeyHistory.load()
    at = {v: parse_spec(f"trl=={v}") for v in ("0.14.0", "0.15.2", "0.21")}
    early = history.premature("trl", "log_completions", ["GRPOConfig"], at["0.14.0"])
    assert early is not None and early.removed_in == "trl 0.15" and "trl==0.14.0" in early.detail
    assert history.premature("trl", "log_completions", ["GRPOConfig"], at["0.15.2"]) is None
    assert history.premature("trl", "log_completions", ["GRPOConfig"], parse_spec("transformers==4.57")) is None
    assert history.premature("trl", "max_seq_length", ["SFTConfig"], at["0.21"]) is None


def test_premature_keys_skip_script_arguments_recipes_declare_themselves(tmp_path):
    """open-r1's own GRPOScriptArguments has reward_funcs whatever trl's scripts have: no SP430 under trl==0.16."""
    config = project(tmp_path, {"requirements.txt": "trl==0.16.0\n"},
                     "num_generations: 8\nreward_funcs:\n- accuracy\nlog_completions: true\n")
    plan = read_plan(config)
    kinds = {d.key: d.kind for d in plan.diagnostics}
    assert "reward_funcs" not in kinds or kinds["reward_funcs"] != "premature_key"
    assert kinds.get("log_completions") != "premature_key"  # trl 0.16 has it


# LLaMA-Factory's own example (hiyouga/LLaMA-Factory examples/train_lora/qwen3_lora_sft.yaml), with warmup_ratio
LF_EXAMPLE = Path(__file__).parent / "data" / "configs" / "llamafactory" / "examples" / "train_lora" / \
    "qwen3_lora_sft.yaml"


def test_a_conda_export_written_as_requirements_pins_exact_versions(tmp_path):
    """`conda list --export > requirements.txt` (linjc16/Panacea's): name=version=build lines are exact pins."""
    config = project(tmp_path, {"requirements.txt": "# platform: linux-64\n_libgcc_mutex=0.1=main\n"
                                                    "transformers=4.36.2=pypi_0\ntrl=0.7.10=pypi_0\n"})
    pins = find_pins(config)
    assert [(p.specifier, p.source, p.exact) for p in pins.of("trl")] == [("==0.7.10", "requirements.txt:4", True)]
    assert [p.specifier for p in pins.of("transformers")] == ["==4.36.2"]
    # trl 0.7 predates SFTConfig: the recipe's keys are its own classes' (SP407), not a removal
    assert diagnostic(read_plan(config), "max_seq_length").kind == "unread_key"


@pytest.mark.parametrize("name,text", [
    ("requirements.txt", "-e git+https://github.com/hiyouga/LLaMA-Factory.git@v0.9.3#egg=llamafactory\n"
                         "transformers>=4.48.2\n"),
    ("pyproject.toml", '[project]\nname = "p"\nversion = "0.1"\ndependencies = ["transformers>=4.48.2"]\n\n'
                       '[tool.pdm.dev-dependencies]\ndev = [\n'
                       '    "-e file:///${PROJECT_ROOT}/LLaMA-Factory#egg=llamafactory[metrics,torch]",\n]\n'),
    ("requirements.txt", "transformers>=4.48.2\n"),
])
def test_llamafactory_s_own_transformers_cap_bounds_a_project_s_open_transformers_pin(tmp_path, name, text):
    """BeautyyuYanli/DeepSink (an editable checkout) and MmMaiIIi/eAlignment (`pip install llamafactory` beside
    transformers>=4.46): every LLaMA-Factory release caps transformers (0.9.5: <=5.6.0), and 5.6 still has
    warmup_ratio, which 5.15 drops, so no install lacks it: no SP408, and no warning either."""
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    config = tmp_path / "lora_sft.yaml"
    shutil.copy(LF_EXAMPLE, config)
    pins = find_pins(config)
    assert (pins.vcs("llamafactory") is not None) == ("egg=" in text)
    assert [p.specifier for p in pins.of("transformers")] == [">=4.48.2"]
    assert not [d for d in read_plan(config).diagnostics if d.key == "warmup_ratio"]


def test_a_llamafactory_fork_follows_its_own_transformers_pin(tmp_path):
    """A fork names itself llamafactory (setup.py): its own requirements are the transformers it runs with, so a
    range past 5.15 is an SP408 there."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(name="llamafactory", version="0.9.6.dev0")\n')
    (tmp_path / "requirements.txt").write_text("transformers>=4.48.2\n")
    config = tmp_path / "lora_sft.yaml"
    shutil.copy(LF_EXAMPLE, config)
    assert diagnostic(read_plan(config), "warmup_ratio").kind == "removed_key"


@pytest.mark.parametrize("transformers,release,kind", [
    (">=4.40.0", "0.9.5", None),  # 0.9.5 caps transformers at 5.6.0, which still has warmup_ratio
    (">=5.20", "0.8.3", "removed_key"),  # pip backs off to the newest release that admits 5.20: 0.8.3, uncapped
])
def test_a_llamafactory_range_is_the_release_pip_installs(tmp_path, transformers, release, kind):
    """rohit07cf/llm-distributed-finetuning-guide pins llamafactory>=0.8.0 and transformers>=4.40.0: pip installs
    llamafactory 0.9.5 and a transformers inside its cap, not the uncapped range of the 0.8 releases the pin also
    allows. Whether each release caps transformers is read from the key history's METADATA, as the judge does."""
    history = KeyHistory.load()
    assert "<" not in (history.requires("llamafactory", "0.8.3", "transformers") or "")
    assert "<=5.6.0" in history.requires("llamafactory", "0.9.5", "transformers")
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(f"llamafactory>=0.8.0\ntransformers{transformers}\n")
    config = tmp_path / "lora_sft.yaml"
    shutil.copy(LF_EXAMPLE, config)
    found = [d for d in read_plan(config).diagnostics if d.key == "warmup_ratio"]
    assert [d.kind for d in found] == ([kind] if kind else [])
    if kind:
        assert f"llamafactory {release}" in found[0].message


def test_lint_json_names_a_commit_pin_as_a_pin(tmp_path):
    """jwkirchenbauer/mdpo's setup.py pins `trl @ git+...@69ad852...`: the JSON says where, and that a commit was
    pinned, rather than showing trl as unpinned."""
    config = project(tmp_path, {"requirements.txt": "trl @ git+https://github.com/huggingface/trl.git@69ad852e5654a7"
                                                    "7f1695eb4c608906fe0c7e8624\n"})
    out = json.loads(CliRunner().invoke(main, ["lint", str(config), "--format", "json"]).stdout)
    assert out["files"][0]["versions"]["trl"] == {"pinned": None, "source": "requirements.txt:1", "commit": True,
                                                  "assumed": KeyHistory.load().newest("trl")}


CLMBOT = Path(__file__).parent / "data" / "corpus" / "donaghhorgan__clmbot"


def test_a_pipfile_and_its_lock_are_pins(tmp_path):
    """donaghhorgan/clmbot pins `transformers = "==4.10.0"` in its Pipfile (pipenv); a Pipfile.lock's resolved
    version is an exact pin, and `"*"` allows any version."""
    text = (CLMBOT / "Pipfile").read_text()
    config = project(tmp_path, {"Pipfile": text.replace('typer = "==0.4.0"', 'trl = "*"')})
    pins = find_pins(config)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("transformers"))
    assert [(p.specifier, p.source) for p in pins.of("transformers")] == [("==4.10.0", f"Pipfile:{line}")]
    assert [p.specifier for p in pins.pins["trl"]] == [""] and pins.of("trl") == ()  # listed, any version
    lock = {"_meta": {}, "default": {"transformers": {"hashes": [], "version": "==4.10.0"}}, "develop": {}}
    locked = project(tmp_path / "lock", {"Pipfile.lock": json.dumps(lock, indent=4)})
    assert [(p.specifier, p.exact) for p in find_pins(locked).of("transformers")] == [("==4.10.0", True)]


# --- a checkout of the framework itself, and what install scripts install ----------------------------

AXOLOTL_EXAMPLE = Path(__file__).parent / "data" / "configs" / "axolotl" / "examples" / "qwen3" / "8b-lora-fused-attn.yaml"


def _axolotl_checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = tmp_path / "examples" / "qwen3" / "lora.yaml"
    config.parent.mkdir(parents=True)
    shutil.copy(AXOLOTL_EXAMPLE, config)
    return config


@pytest.mark.parametrize("files, version", [
    ({"setup.py": 'from setuptools import setup\nsetup(\n    name="axolotl",\n    version="0.4.0",\n)\n'}, "0.4.0"),
    # voidful/axolotl at fe4252c: pyproject.toml reads its version from the VERSION file
    ({"pyproject.toml": '[project]\nname = "axolotl"\ndynamic = ["version"]\n\n[tool.setuptools.dynamic]\n'
                        'version = { file = "VERSION" }\n', "VERSION": "0.16.0.dev0\n"}, "0.16.0.dev0"),
])
def test_a_checkout_of_the_framework_runs_at_its_own_version(tmp_path, files, version):
    """An axolotl checkout installed with `pip install -e .` is the reader of its examples: its flash_attention is
    a live field before 0.17 (0.16.1 schemas/config.py has no deprecated= on it): a note for the upgrade (SP429)."""
    config = _axolotl_checkout(tmp_path, files)
    pins = find_pins(config)
    assert [p.specifier for p in pins.of("axolotl")] == [f"=={version}"]
    assert "this checkout's own version" in pins.of("axolotl")[0].source
    found = diagnostic(read_plan(config), "flash_attention")
    assert found.kind == "upcoming_deprecation" and "0.17" in found.message
    assert found.suggestion == "attn_implementation: flash_attention_2"


def test_a_llamafactory_checkout_built_by_hatchling_runs_at_the_version_its_pattern_reads(tmp_path):
    """LLaMA-Factory from 0.9.4 builds with hatchling: [tool.hatch.version] reads VERSION = "0.9.4.dev0" out of
    src/llamafactory/extras/env.py by its pattern (JonOlsenCa's fork). That development build sits between 0.9.3 and
    0.9.4, both of which call the bitsandbytes method 'bnb', so `quantization_method: bitsandbytes` loads the model
    unquantized (SP406)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "llamafactory"\ndynamic = ["version"]\n\n[tool.hatch.version]\n'
        'path = "src/llamafactory/extras/env.py"\npattern = "VERSION = \\"(?P<version>[^\\"]+)\\""\n')
    env = tmp_path / "src" / "llamafactory" / "extras" / "env.py"
    env.parent.mkdir(parents=True)
    env.write_text('import platform\n\nVERSION = "0.9.4.dev0"\n')
    config = tmp_path / "examples" / "qlora.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: Qwen/Qwen3-4B\nstage: sft\ndo_train: true\nquantization_bit: 4\n"
                      "quantization_method: bitsandbytes\n")
    pins = find_pins(config)
    assert [(p.specifier, p.source.split(" (")[0]) for p in pins.of("llamafactory")] == [
        ("==0.9.4.dev0", "src/llamafactory/extras/env.py")]
    found = diagnostic(read_plan(config), "quantization_method")
    assert found.kind == "invalid_value" and found.suggestion == "quantization_method: bnb"


@pytest.mark.parametrize("kind, reported", [
    ("chat", True),  # RamakrishnaReddyPalle/large-pdf-agent: no prompt_strategies/chat module, no base type
    ("alpacca", True),  # a typo of a base type
    ("alpaca", False), ("chat_template", False), ("completion", False), ("messages", False),
    ("chat_template.default", False),  # a strategy's loader (or a module of the project's own): not judged
    ("alpaca:chat", False),  # a base type with its prompt style
])
def test_an_axolotl_dataset_type_no_release_handles_is_refused(tmp_path, kind, reported):
    """axolotl 0.19 utils/data/wrappers.py: a `type:` that load() finds no prompt_strategies module for and no
    base type handler takes stops data loading ("unhandled prompt tokenization strategy")."""
    config = _axolotl_checkout(tmp_path, {"requirements.txt": "axolotl>=0.15\n"})
    config.write_text(config.read_text().replace("datasets:", f"datasets:\n  - path: my/data\n    type: {kind}", 1))
    found = [d for d in read_plan(config).diagnostics if d.key == "datasets.0.type"]
    assert [d.kind for d in found] == (["invalid_value"] if reported else [])
    if kind == "alpacca":
        assert found[0].suggestion == "type: alpaca"


def test_a_special_tokens_key_specialtokensconfig_lacks_is_dropped(tmp_path):
    """AbeerMostafa/Novelty-Reviewer (axolotl==0.12.2) writes `special_tokens: {ad_token: ...}`: SpecialTokensConfig
    has bos/eos/pad/unk_token and additional_special_tokens, pydantic drops the rest, and the pad token is never
    set. The fields it has are silent."""
    config = _axolotl_checkout(tmp_path, {"requirements.txt": "axolotl==0.12.2\n"})
    config.write_text(config.read_text() + "special_tokens:\n  ad_token: <pad>\n  eos_token: <eos>\n")
    found = [d for d in read_plan(config).diagnostics if d.key.startswith("special_tokens.")]
    assert [(d.key, d.kind, d.suggestion) for d in found] == [
        ("special_tokens.ad_token", "unknown_key", "special_tokens.pad_token")]
    assert "axolotl==0.12.2" in found[0].reason
    # tcapelle/triton_eval: vLLM's settings written inside trl:, which TRLConfig drops; vllm: is a top-level section
    config.write_text(config.read_text() + "trl:\n  beta: 0.1\n  vllm:\n    gpu_memory_utilization: 0.9\n")
    moved = [d for d in read_plan(config).diagnostics if d.key == "trl.vllm"]
    assert [(d.kind, d.suggestion) for d in moved] == [("unknown_key", "vllm")]


@pytest.mark.parametrize("extra, key, suggestion", [
    ("torch_dtype: float16\n", "torch_dtype", "fp16: true"),  # anselmlong/almost-anselm
    ("torch_dtype: bfloat16\nbf16: true\n", "torch_dtype", None),  # D-Katt/llm_tuning: the flag is there already
    ("tokenizer: mistralai/mistral-7b-v0.1\n", "tokenizer", "tokenizer_config"),  # not tokenizer_type, a class
    ("tokenizer:\n  padding_side: left\n", "tokenizer", None),
])
def test_an_unknown_axolotl_key_suggests_what_takes_its_value(tmp_path, extra, key, suggestion):
    """axolotl has no torch_dtype (normalize_config sets the dtype from bf16 / fp16) and no tokenizer (the repo goes
    in tokenizer_config; the nearest name, tokenizer_type, takes a transformers class and would break the run)."""
    config = _axolotl_checkout(tmp_path, {"requirements.txt": "axolotl>=0.15\n"})
    text = "\n".join(line for line in config.read_text().splitlines() if not line.startswith(("bf16", "fp16")))
    config.write_text(text + "\n" + extra)
    found = diagnostic(read_plan(config), key)
    assert (found.kind, found.suggestion) == ("unknown_key", suggestion)


def test_the_attention_flags_are_deprecated_from_axolotl_0_17(tmp_path):
    config = _axolotl_checkout(tmp_path, {"requirements.txt": "axolotl>=0.17\n"})
    found = diagnostic(read_plan(config), "flash_attention")
    assert found.kind == "renamed_key" and found.suggestion == "attn_implementation: flash_attention_2"
    assert "from 0.17" in found.message
    unpinned = _axolotl_checkout(tmp_path / "unpinned", {})
    assert diagnostic(read_plan(unpinned), "flash_attention").kind == "renamed_key"


@pytest.mark.parametrize("name, text, source", [
    # martin-kukla/rm-for-rank-torchtune setup.sh at 2b4f164: the author's torchtune fork, cloned beside the repo
    ("setup.sh", "#! /bin/bash\n#pip install torchtune\npip install -e ../torchtune\npip install wandb\n",
     "setup.sh:3 (a local checkout)"),
    ("requirements.txt", "wandb\n-e ../torchtune\n", "requirements.txt:2 (a local checkout)"),
    # anilkeshwani/speech-text-alignment .gitmodules at 4538814: torchtune vendored at commit 54673b7
    (".gitmodules", '[submodule "submodules/torchtune"]\n\tpath = submodules/torchtune\n'
                    '\turl = https://github.com/pytorch/torchtune.git\n', ".gitmodules:3 (a git submodule)"),
    ("Dockerfile", "FROM pytorch/pytorch\nRUN pip install -U pip && \\\n    pip install git+https://github.com/"
                   "pytorch/torchtune.git@8f59c2f wandb\n", "Dockerfile:2"),
])
def test_a_local_checkout_submodule_or_script_install_is_a_commit_pin(tmp_path, name, text, source):
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    pins = find_pins(tmp_path / "configs" / "x.yaml")
    found = pins.vcs("torchtune")
    assert found is not None and not found.head and found.source == source


def test_pip_install_lines_of_a_script_are_pins(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "install.sh").write_text("set -e\npython -m pip install 'trl==0.19.1' \"transformers>=4.51,<4.56\" "
                                         "-r requirements.txt  # the rest\npip install -e .\n")
    pins = find_pins(tmp_path / "x.yaml")
    assert [(p.specifier, p.source) for p in pins.of("trl")] == [("==0.19.1", "install.sh:2")]
    assert [p.specifier for p in pins.of("transformers")] == [">=4.51,<4.56"]


def test_an_environment_folder_at_the_root_pins_what_nothing_above_the_config_does(tmp_path):
    """IceyWuu/DisentangledPreferenceOptimization pins in envfiles/, swiss-ai/posttraining two levels down in
    installation/docker-arm64-cuda/: the image they install is what runs the recipes."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "envfiles").mkdir()
    (tmp_path / "envfiles" / "requirements_cuda128.txt").write_text("torch==2.8.0\ntransformers==4.57.0\ntrl==0.23.1\n")
    (tmp_path / "installation" / "docker-arm64").mkdir(parents=True)
    (tmp_path / "installation" / "docker-arm64" / "requirements-freeze.txt").write_text("trl==0.23.1\n")
    (tmp_path / "requirements.txt").write_text("transformers>=4.50\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "requirements.txt").write_text("trl==0.9.6\n")  # another project's: not read
    pins = find_pins(tmp_path / "recipes" / "dpo.yaml")
    assert [(p.specifier, p.source) for p in pins.pins["trl"]] == [
        ("==0.23.1", "envfiles/requirements_cuda128.txt:3"),
        ("==0.23.1", "installation/docker-arm64/requirements-freeze.txt:1")]
    # the root's own requirements.txt decides transformers; the environment folder only fills what is unpinned
    assert [p.source for p in pins.of("transformers")] == ["requirements.txt:1"]


def test_environment_folders_that_disagree_pin_nothing(tmp_path):
    (tmp_path / ".git").mkdir()
    for image, version in (("cuda118", "0.19.1"), ("cuda128", "0.23.1")):
        (tmp_path / "docker" / image).mkdir(parents=True)
        (tmp_path / "docker" / image / "requirements.txt").write_text(f"trl=={version}\n")
    assert find_pins(tmp_path / "recipes" / "dpo.yaml").of("trl") == ()


@pytest.mark.parametrize("files, version, source", [
    # liyucheng09/torchtune at 9cb3079: setuptools reads torchtune.__version__, which __init__.py writes literally
    ({"torchtune/__init__.py": '__version__ = "1.0.0"\n', "version.txt": "0.5.0\n"}, "1.0.0", "torchtune/__init__.py"),
    # upstream torchtune: setup.py writes torchtune/version.py from version.txt at build time, so only that is there
    ({"torchtune/__init__.py": "from torchtune.version import __version__\n", "version.txt": "0.6.1\n"}, "0.6.1",
     "version.txt"),
])
def test_a_dynamic_version_attribute_is_read_where_the_build_finds_it(tmp_path, files, version, source):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "torchtune"\ndynamic = ["version"]\n\n'
                                             '[tool.setuptools.dynamic]\nversion = {attr = "torchtune.__version__"}\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    pins = find_pins(tmp_path / "recipes" / "x.yaml").of("torchtune")
    assert [p.specifier for p in pins] == [f"=={version}"] and pins[0].own and pins[0].source.startswith(source)


# --- what pip can install beside the project's other pins (stop 29) ---------------------------------------------

def _install(tmp_path: Path, requirements: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    (tmp_path / "requirements.txt").write_text(requirements)
    config = tmp_path / "recipes" / "grpo.yaml"
    config.parent.mkdir(exist_ok=True)
    return config


def test_a_huggingface_hub_pin_caps_transformers_where_its_requirement_stops_meeting_it(tmp_path):
    """sergeykochetkov/alignment-handbook pins huggingface-hub<1.0; transformers 5.0 requires >=1.3, so a fresh
    install gets 4.57, whose warmup_ratio is a live field: an upgrade warning, not a removal."""
    from seqprof.config.key_history import with_companions

    history = KeyHistory.load()
    config = _install(tmp_path, "huggingface-hub>=0.19.2,<1.0\ntransformers>=4.39.3\n")
    pins = with_companions(find_pins(config), history)
    assert history.allowed("transformers", pins)[-1].startswith("4.57")
    required = history.data["shared"]["requires"]["transformers"]
    newest_met = max((v for v in history.allowed("transformers", pins)), key=history.versions("transformers").index)
    assert "<1.0" in required[newest_met]["huggingface-hub"] and ">=1" in required["5.0.0"]["huggingface-hub"]
    config.write_text("model_name_or_path: m\nmax_length: 1024\nwarmup_ratio: 0.1\n")
    found = diagnostic(read_plan(config), "warmup_ratio")
    assert found.kind == "upcoming_deprecation" or "still has it" in found.message
    # no hub pin: the newest transformers, which lacks warmup_ratio
    assert history.allowed("transformers", with_companions(find_pins(_install(tmp_path / "b", "")), history)) is None


@pytest.mark.parametrize("transformers, capped", [
    ("transformers @ git+https://github.com/huggingface/transformers.git\n", True),  # main: installed while it met
    ("transformers @ git+https://github.com/huggingface/transformers.git@336dc69\n", False),  # a commit: unplaced
])
def test_a_huggingface_hub_pin_caps_a_transformers_main_branch_pin(tmp_path, transformers, capped):
    """iezhuozhuo/openr1's setup.py installs transformers from git main beside huggingface-hub<1.0: main has needed
    hub>=1.3 since 5.0, so the install that resolves is a 4.x, as for a range."""
    from seqprof.config.key_history import with_companions

    history = KeyHistory.load()
    pins = with_companions(find_pins(_install(tmp_path, "huggingface-hub>=0.19.2,<1.0\n" + transformers)), history)
    allowed = history.allowed("transformers", pins)
    if capped:
        assert allowed[-1].startswith("4.57") and "huggingface-hub" in pins.describe("transformers")
    else:
        assert allowed is None and pins.vcs("transformers") is not None


def test_a_transformers_pin_caps_trl_at_the_newest_release_whose_floor_it_meets(tmp_path):
    """yhz5613813/POER pins transformers==4.51.2 and leaves trl open: trl 0.20 requires transformers>=4.53.2, so pip
    installs trl 0.19, whose GRPOConfig still has max_prompt_length and lost vllm_device in 0.18."""
    from seqprof.config.key_history import with_dependency_floor

    history = KeyHistory.load()
    config = _install(tmp_path, "transformers==4.51.2\ntrl\n")
    pins = with_dependency_floor(find_pins(config), history, "trl", "transformers")
    from packaging.specifiers import SpecifierSet

    allowed = history.allowed("trl", pins)
    assert allowed[-1].startswith("0.19")  # pip takes the newest whose floor 4.51.2 meets; 0.20's does not
    assert "4.51.2" in SpecifierSet(history.requires("trl", allowed[-1], "transformers"))
    assert "4.51.2" not in SpecifierSet(history.requires("trl", "0.20.0", "transformers"))
    config.write_text("model_name_or_path: m\nnum_generations: 8\nmax_prompt_length: 512\nvllm_device: cuda:1\n")
    plan = read_plan(config)
    assert diagnostic(plan, "vllm_device").kind == "removed_key"
    assert diagnostic(plan, "max_prompt_length").kind != "removed_key"  # 0.19 has it: a warning for the upgrade


def test_a_range_whose_newest_release_has_the_key_is_an_upgrade_warning_even_if_older_ones_predate_it():
    """trl<0.20 allows 0.8-0.13, whose GRPOConfig did not exist yet: what pip installs (0.19) has max_prompt_length."""
    history = KeyHistory.load()
    allowed = [v for v in history.versions("trl") if history.versions("trl").index(v) <= history.versions("trl").index("0.19.1")]
    found = history.removal_among("trl", "max_prompt_length", ["GRPOConfig"], allowed, "trl<0.20")
    assert found.verdict == "warning" and "trl 0.28 removes it" in found.detail


def test_a_llamafactory_checkout_reads_its_version_where_its_setup_py_does(tmp_path):
    """LLaMA-Factory's setup.py: version=get_version(), which opens os.path.join("src", "llamafactory", "extras",
    "env.py") and takes VERSION (LWL-cpu's vendored copy at 0.9.3.dev0)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text(
        'import os\nimport re\n\nfrom setuptools import find_packages, setup\n\n\ndef get_version() -> str:\n'
        '    with open(os.path.join("src", "llamafactory", "extras", "env.py"), encoding="utf-8") as f:\n'
        '        file_content = f.read()\n        pattern = r"{}\\W*=\\W*\\"([^\\"]+)\\"".format("VERSION")\n'
        '        (version,) = re.findall(pattern, file_content)\n        return version\n\n\n'
        'def main():\n    setup(\n        name="llamafactory",\n        version=get_version(),\n    )\n')
    env = tmp_path / "src" / "llamafactory" / "extras" / "env.py"
    env.parent.mkdir(parents=True)
    env.write_text('import platform\n\nVERSION = "0.9.3.dev0"\n')
    config = tmp_path / "examples" / "x.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: m\nstage: sft\n")
    pin, = find_pins(config).of("llamafactory")
    assert pin.specifier == "==0.9.3.dev0" and pin.own
    assert pin.source.startswith("src/llamafactory/extras/env.py")


@pytest.mark.parametrize("name, text, specifier", [
    # modal-projects/finetuning-workshop axolotl_sft_multigpu/main.py at its HEAD: a nightly of 2025-08-12
    ("main.py", 'import modal\n\nimage = modal.Image.from_registry(\n'
                '    "axolotlai/axolotl:main-20250812-py3.11-cu126-2.7.1"\n)\n', "==0.12.1"),
    ("Dockerfile", "FROM axolotlai/axolotl:0.12.1-py3.11-cu126-2.7.1\nRUN pip install wandb\n", "==0.12.1"),
    ("docker-compose.yml", "services:\n  train:\n    image: winglian/axolotl:main-20250101\n", "==0.6.0"),
    ("main.py", 'IMAGE = "axolotlai/axolotl:main-latest"\n', None),  # which day: unknown
    ("run.sh", "docker run axolotlai/axolotl-base:main-20250812 bash\n", None),  # the base image has no axolotl
    ("main.py", 'A = "axolotlai/axolotl:0.12.1"\nB = "axolotlai/axolotl:0.19.0"\n', None),  # two releases
])
def test_a_framework_image_pins_the_release_it_was_built_from(tmp_path, name, text, specifier):
    """axolotl's nightly tags carry the day they were built; the code is the last release before it (release days
    from keys/release_dates.json: 0.12.1 on 2025-08-11, 0.12.2 on 2025-08-18)."""
    config = _axolotl_checkout(tmp_path, {name: text})
    found = find_pins(config).of("axolotl")
    assert [p.specifier for p in found] == ([specifier] if specifier else [])
    if specifier:
        assert found[0].source.startswith(f"{name}:")


def test_two_files_pinning_different_releases_are_alternative_installs(tmp_path):
    """JasonJiaxiangLi/Reward_learning_SFT: requirements.txt transformers==4.38.2, setup.py ==4.37.0. No release
    meets both, yet each file installs one; both still have evaluation_strategy, so it is an upgrade warning naming
    the release that breaks it, not 'no release matches'."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("transformers==4.38.2\n")
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(name="x", install_requires=['
                                       '"transformers==4.37.0"])\n')
    config = tmp_path / "config.yaml"
    config.write_text("model_name_or_path: m\nevaluation_strategy: steps\nlearning_rate: 1.0e-5\n"
                      "per_device_train_batch_size: 2\n")
    history = KeyHistory.load()
    assert history.allowed("transformers", find_pins(config)) == ["4.37.2", "4.38.2"]  # one per minor
    found = diagnostic(read_plan(config), "evaluation_strategy")
    assert "still has it, transformers 4.51 removes it" in found.message and "matches no release" not in found.message


def test_a_framework_range_whose_every_release_misses_the_dependency_pin_says_pip_cannot_install_both(tmp_path):
    """javierdejesusda/YuhoLens pins transformers==4.48.0 beside trl>=1.2.0,<2.0.0; trl 1.2.0 requires
    transformers>=4.56.2 (its wheel's metadata), so no install has both: the message says so where it names the
    transformers pin, instead of promising what 4.48.0 keeps."""
    from packaging.specifiers import SpecifierSet

    from seqprof.config.key_history import with_trl_and_transformers

    history = KeyHistory.load()
    config = _install(tmp_path, "transformers==4.48.0\ntrl>=1.2.0,<2.0.0\n")
    allowed = history.allowed("trl", find_pins(config))
    assert allowed and all("4.48.0" not in SpecifierSet(history.requires("trl", v, "transformers") or "")
                           for v in allowed)  # the conflict, from the recorded metadata of each release
    described = with_trl_and_transformers(find_pins(config), history).describe("transformers")
    assert "requirements.txt:1" in described and "pip cannot install both" in described
    assert "trl>=1.2.0,<2.0.0 (requirements.txt:2) requires transformers>=4.56.2" in described
    agreeing = _install(tmp_path / "agreeing", "transformers==4.57.1\ntrl>=1.2.0,<2.0.0\n")
    assert "pip cannot" not in with_trl_and_transformers(find_pins(agreeing), history).describe("transformers")


@pytest.mark.parametrize("requirements, kind", [
    ("axolotl>=0.12\n", "deprecated_key"),  # 0.12.0 added check_fsdp_config_kwargs_prefix
    ("", "deprecated_key"),  # unpinned: the newest release
    ("axolotl==0.11.0\n", "upcoming_deprecation"),  # 0.11 reads the prefixed names
])
def test_fsdp_prefixed_keys_inside_fsdp_config_are_deprecated_from_axolotl_0_12(tmp_path, requirements, kind):
    config = _axolotl_checkout(tmp_path, {"requirements.txt": requirements} if requirements else {})
    config.write_text(config.read_text() + "fsdp_config:\n  fsdp_offload_params: true\n  fsdp_version: 2\n")
    plan = read_plan(config)
    found = diagnostic(plan, "fsdp_config.fsdp_offload_params")
    assert found.kind == kind and found.suggestion == "fsdp_config.offload_params"
    assert found.line == config.read_text().splitlines().index("  fsdp_offload_params: true") + 1
    assert not [d for d in plan.diagnostics if d.key == "fsdp_config.fsdp_version"]  # the one prefix it keeps


@pytest.mark.parametrize("requirements, reported", [
    ("axolotl>=0.13\n", True),  # FSDPConfig (utils/schemas/fsdp.py) validates the section from 0.13
    ("", True),  # unpinned: the newest release
    ("axolotl==0.12.2\n", False),  # 0.12: fsdp_config is a free dict handed on as written
])
def test_a_fsdp_config_key_fsdpconfig_lacks_is_dropped_from_axolotl_0_13(tmp_path, requirements, reported):
    """pydantic ignores a key FSDPConfig lacks, stripped of `fsdp_` or not: its value never reaches accelerate, so
    the prefix deprecation's fix (drop the prefix) would leave it ignored."""
    config = _axolotl_checkout(tmp_path, {"requirements.txt": requirements} if requirements else {})
    config.write_text(config.read_text() + "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
                      "  backward_prefetch: BACKWARD_PRE\n  offload_param: true\n  reshard_after_forward: true\n")
    plan = read_plan(config)
    keys = ["fsdp_config.fsdp_sharding_strategy", "fsdp_config.backward_prefetch", "fsdp_config.offload_param"]
    found = {d.key: d for d in plan.diagnostics if d.key in keys}
    assert not [d for d in plan.diagnostics if d.key == "fsdp_config.reshard_after_forward"]
    if not reported:
        assert [d.kind for d in found.values()] in ([], ["upcoming_deprecation"], ["deprecated_key"])
        return
    assert {k: d.kind for k, d in found.items()} == dict.fromkeys(keys, "unknown_key")
    assert "'sharding_strategy'" in found[keys[0]].message and found[keys[0]].suggestion is None
    assert found[keys[2]].suggestion == "fsdp_config.offload_params"  # a typo of a field FSDPConfig has


@pytest.mark.parametrize("requirements, value, expected", [
    ("trl==0.11.4\ntransformers==4.45.2\n", "0.1", "is refused"),  # 4.42-4.57 __post_init__: not an int
    ("trl==0.11.4\ntransformers==4.45.2\n", "100.0", "is refused"),
    ("trl==0.11.4\ntransformers==4.41.2\n", "0.1", "of a step"),  # no check yet: warmup over 0.1 steps
    ("trl==0.11.4\ntransformers==4.41.2\n", "100.0", None),  # 100 steps either way
    ("trl==0.11.4\ntransformers==4.45.2\n", "10", None),  # an int step count
    ("transformers>=5.0\n", "0.1", None),  # 5.0: a float below 1 is the ratio
    ("", "0.1", None),  # unpinned: a fresh install gets 5.x
])
def test_a_float_warmup_steps_is_judged_by_the_transformers_the_pins_install(tmp_path, requirements, value, expected):
    """transformers 5.0 made warmup_steps a float (below 1: the ratio); the 4.x releases read a step count."""
    config = project(tmp_path, {"requirements.txt": requirements}, extra_key=f"warmup_steps: {value}\n")
    found = [d for d in read_plan(config).diagnostics if d.key == "warmup_steps"]
    if expected is None:
        assert not found
        return
    assert [d.kind for d in found] == ["invalid_value"] and expected in found[0].message
    assert found[0].line == config.read_text().splitlines().index(f"warmup_steps: {value}") + 1
    assert (found[0].suggestion == "warmup_ratio") == (value == "0.1")


def test_a_readmes_install_lines_pin_what_no_project_file_pins(tmp_path):
    """NV-Reason-CXR pins nothing in a file; its README's training steps run `uv pip install trl==0.22.2
    transformers==4.56.1` in a code block. Those are its pins, unless a project file pins the package, the line is
    prose rather than a code block, or the README installs two different versions of it."""
    readme = ("# X\n\nRun `pip install trl==0.9.0` in prose: not a step.\n\n```shell\nuv pip install vllm==0.10.1.1\n"
              "uv pip install trl==0.22.2 transformers==4.56.1\n```\n\n```bash\npip install torchtune==0.5.0\n"
              "pip install torchtune==0.6.1\n```\n")
    pins = find_pins(project(tmp_path / "readme", {"README.md": readme}))
    assert [(p.specifier, p.source) for p in pins.of("trl")] == [("==0.22.2", "README.md:7")]
    assert [p.specifier for p in pins.of("transformers")] == ["==4.56.1"]
    assert pins.of("torchtune") == ()  # two versions: which one runs is unknown
    filed = find_pins(project(tmp_path / "filed", {"README.md": readme, "requirements.txt": "trl>=0.19\n"}))
    assert [(p.specifier, p.source) for p in filed.of("trl")] == [(">=0.19", "requirements.txt:1")]


@pytest.mark.parametrize("checkout, expected", [
    ("git checkout 55cc214c767741e83ee7b346e5e13e6c03b7b9fa\n", ("", True, False)),  # a commit: not placed
    ("git checkout v0.4.1\n", ("==0.4.1", False, False)),  # a release tag is that release
    ("", ("", True, True)),  # the main branch: newer than every release
])
def test_a_framework_cloned_and_installed_from_a_checkout_is_pinned_there(tmp_path, checkout, expected):
    """RLHFlow's pair-pm README: `git clone .../axolotl`, `cd axolotl`, `git checkout 55cc214c...`, `pip install -e
    .`. A clone that is never installed pins nothing."""
    steps = f"git clone https://github.com/OpenAccess-AI-Collective/axolotl\ncd axolotl\n{checkout}pip install -e .\n"
    readme = f"# X\n\n```shell\n{steps}git clone https://github.com/huggingface/trl.git\n```\n"
    pins = find_pins(project(tmp_path, {"README.md": readme}))
    found = pins.pins["axolotl"]
    assert [(p.specifier, p.vcs, p.head, p.source) for p in found] == [(*expected, "README.md:4")]
    assert "trl" not in pins.pins


def test_a_development_build_is_placed_between_the_release_before_it_and_its_own():
    """LLaMA-Factory's checkouts name themselves 0.9.3.dev0 (extras/env.py): the code after 0.9.2 on the way to
    0.9.3. A key 0.9.2 removed is then neither certainly there nor certainly gone: a warning that says so, not
    the error `every release allowed lacks it`, and no match-nothing fallback to the newest release."""
    history = KeyHistory.load()
    assert history.allowed("llamafactory", parse_spec("llamafactory==0.9.3.dev0")) == ["0.9.2", "0.9.3"]
    assert history.allowed("llamafactory", parse_spec("llamafactory==0.9.3")) == ["0.9.3"]
    assert history.allowed("transformers", parse_spec("transformers==4.57.0.dev0")) == \
        [v for v in history.versions("transformers") if v.startswith(("4.56.", "4.57."))]
    gone = history.removal("llamafactory", "image_resolution", ["ModelArguments"],
                           parse_spec("llamafactory==0.9.2.dev0"))
    assert gone is not None and gone.verdict == "assumed" and "development build of 0.9.2" in gone.detail
    assert history.removal("llamafactory", "image_resolution", ["ModelArguments"],
                           parse_spec("llamafactory==0.9.2")).verdict == "error"



CORPUS_DIR = Path(__file__).parent / "data" / "corpus"


def test_a_conda_explicit_export_under_environment_yml_pins_exact_versions(tmp_path):
    """da03/LongPerceptualThoughts' environment.yml is `conda list --explicit` output (@EXPLICIT, one package URL a
    line), not YAML: its file names are the exact versions (transformers-4.51.3-pyhd8ed1ab_0.conda). A file that is
    neither is a note, not a crash."""
    text = (CORPUS_DIR / "da03__LongPerceptualThoughts" / "environment.yml").read_text()
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "/transformers-4.51.3-" in row)
    config = project(tmp_path / "explicit", {"environment.yml": text})
    pins = find_pins(config)
    assert [(p.specifier, p.source, p.exact) for p in pins.of("transformers")] == [("==4.51.3", f"environment.yml:{line}",
                                                                                 True)]
    assert [p.specifier for p in pins.of("trl")] == ["==0.9.6"]
    broken = project(tmp_path / "broken", {"environment.yml": "name: x\ndependencies: [\n  - @bad\n"})
    found = find_pins(broken)
    assert found.of("transformers") == () and any("environment.yml: not read" in n for n in found.notes)


def test_setup_py_extras_pin_nothing(tmp_path):
    """nemoramo/LLaMA-Factory's setup.py lists `"sglang": ["sglang[srt]>=0.4.5", "transformers==4.51.1"]` under
    extra_require: a plain install takes none of it, so only requirements.txt pins transformers."""
    repo = CORPUS_DIR / "nemoramo__LLaMA-Factory"
    setup = (repo / "setup.py").read_text()
    assert '"transformers==4.51.1"' in setup
    config = project(tmp_path, {"setup.py": setup, "requirements.txt": (repo / "requirements.txt").read_text()})
    assert {p.source.split(":")[0] for p in find_pins(config).of("transformers")} == {"requirements.txt"}


def test_a_range_that_names_one_patch_is_that_minor_release(tmp_path):
    """huggingface/parler-tts' setup.py pins `transformers>=4.46.1,<=4.46.1`: 4.46.1 is a release, judged as the
    4.46 the key history lists (4.46.3), not as "matches no release" and the newest assumed."""
    setup = (CORPUS_DIR / "huggingface__parler-tts" / "setup.py").read_text()
    assert '"transformers>=4.46.1,<=4.46.1"' in setup
    config = project(tmp_path, {"setup.py": setup})
    history = KeyHistory.load()
    assert history.allowed("transformers", find_pins(config)) == ["4.46.3"]


def test_a_framework_checkout_in_the_repository_installed_after_cd_runs_at_its_own_version(tmp_path):
    """ucsb-mlsec/llamafactory's README: `cd LLaMA-Factory`, `pip install -e .`. The vendored copy names itself
    0.9.3.dev0 and its requirements.txt caps transformers at 4.51.3: those are the project's pins, not a fresh
    install's 0.9.5 with transformers 5."""
    lf = tmp_path / "LLaMA-Factory"
    (lf / "src" / "llamafactory" / "extras").mkdir(parents=True)
    (lf / "src" / "llamafactory" / "extras" / "env.py").write_text('VERSION = "0.9.3.dev0"\n')
    (lf / "setup.py").write_text(
        "import re\nfrom setuptools import setup\n\n\ndef get_version():\n"
        "    with open('src/llamafactory/extras/env.py') as f:\n"
        "        return re.search(r'VERSION = \"(.*)\"', f.read()).group(1)\n\n\n"
        "setup(name='llamafactory', version=get_version(), install_requires=open('requirements.txt').read().split())\n")
    (lf / "requirements.txt").write_text("transformers>=4.45.0,<=4.51.3\n")
    readme = "# X\n\n```bash\ncd LLaMA-Factory\npip install -e .\ncd ..\n```\n"
    pins = find_pins(project(tmp_path, {"README.md": readme}))
    pin, = pins.of("llamafactory")
    assert pin.specifier == "==0.9.3.dev0" and pin.own and pin.source.startswith("LLaMA-Factory/")
    assert [(p.specifier, p.source) for p in pins.of("transformers")] == \
        [(">=4.45.0,<=4.51.3", "LLaMA-Factory/requirements.txt:1")]


@pytest.mark.parametrize("text, head", [
    # LvBaolu/Mixtral_V2 Dockerfile: a main build whose tag names no day
    ("FROM winglian/axolotl:main-py3.10-cu118-2.1.1\n", False),
    # malcolmsharpe/modal-example-llm-finetuning src/common.py: an image pinned by digest
    ('axolotl_image = modal.Image.from_registry(f"axolotlai/axolotl@sha256:{AXOLOTL_REGISTRY_SHA}")\n', False),
    ("FROM axolotlai/axolotl:main-latest\n", True),
])
def test_an_undated_main_build_or_digest_of_a_framework_image_is_a_commit_pin(tmp_path, text, head):
    config = _axolotl_checkout(tmp_path, {"Dockerfile": text})
    pins = find_pins(config)
    assert pins.of("axolotl") == () and pins.vcs("axolotl") is not None and pins.vcs("axolotl").head is head


def test_a_framework_image_named_by_a_launcher_anywhere_in_the_repository_pins_it(tmp_path):
    """A Modal app keeps its image in src/common.py while the configs sit in config/: the image is the install,
    when every file that names one names the same."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "common.py").write_text('image = modal.Image.from_registry("axolotlai/axolotl:0.12.1")\n')
    config = tmp_path / "config" / "x.yml"
    config.parent.mkdir()
    config.write_text("base_model: m\n")
    pin, = find_pins(config).of("axolotl")
    assert pin.specifier == "==0.12.1" and pin.source.startswith("src/common.py:1")
    (tmp_path / "deploy").mkdir()  # two images off the config's path: which one runs it is unknown
    (tmp_path / "deploy" / "app.py").write_text('IMAGE = "axolotlai/axolotl:0.19.0"\n')
    assert find_pins(config).of("axolotl") == ()


def test_an_env_yml_installing_a_vendored_checkout_and_a_readme_release_checkout_pin_both(tmp_path):
    """yu-rp/VisualPerceptionToken: env.yml's pip list installs `-e /path/to/transformers` and
    `-e /path/to/LLaMA-Factory[torch,metrics]` (the author's paths); the repository vendors LLaMA-Factory/ (0.9.1.dev0)
    and its README clones transformers and checks out v4.45.2 before `conda env create -f env.yml`."""
    lf = tmp_path / "LLaMA-Factory"
    (lf / "src" / "llamafactory" / "extras").mkdir(parents=True)
    (lf / "src" / "llamafactory" / "extras" / "env.py").write_text('VERSION = "0.9.1.dev0"\n')
    (lf / "setup.py").write_text(
        "import re\nfrom setuptools import setup\n\n\ndef get_version():\n"
        "    with open('src/llamafactory/extras/env.py') as f:\n"
        "        return re.search(r'VERSION = \"(.*)\"', f.read()).group(1)\n\n\n"
        "setup(name='llamafactory', version=get_version())\n")
    env = ("name: vpt\ndependencies:\n  - python=3.11\n  - pip:\n      - trl==0.9.6\n"
           "      - -e /path/to/transformers\n      - -e /path/to/LLaMA-Factory[torch,metrics]\n")
    readme = ("# VPT\n\n```bash\ngit clone https://github.com/huggingface/transformers.git\ncd transformers\n"
              "git checkout v4.45.2\ncd /to/this/folder\nconda env create -f env.yml\n```\n")
    pins = find_pins(project(tmp_path, {"env.yml": env, "ReadMe.md": readme}))
    pin, = pins.of("llamafactory")
    assert pin.specifier == "==0.9.1.dev0" and pin.own
    pin, = pins.of("transformers")
    assert pin.specifier == "==4.45.2" and pin.source.startswith("ReadMe.md:4") and "env.yml:6" in pin.source
    assert [p.specifier for p in pins.of("trl")] == ["==0.9.6"]


def test_a_readme_clone_of_a_release_pins_nothing_by_itself(tmp_path):
    """A clone checked out at a tag but never installed is no pin (RLHFlow's pair-pm rule), unless a project file
    installs that checkout."""
    readme = "# X\n\n```bash\ngit clone https://github.com/huggingface/transformers.git\ncd transformers\n" \
             "git checkout v4.45.2\n```\n"
    assert "transformers" not in find_pins(project(tmp_path, {"README.md": readme})).pins


def test_the_winglian_namespace_main_latest_is_an_old_main_not_the_branch_head(tmp_path):
    """axolotl stopped pushing images to winglian/ on 2025-11-14 (0fbde69e9): its main-latest is main of that day
    (0.13.0.dev), a commit seqprof cannot place, while axolotlai/axolotl:main-latest is today's main."""
    old = find_pins(_axolotl_checkout(tmp_path / "old", {"Dockerfile": "FROM winglian/axolotl:main-latest\n"}))
    new = find_pins(_axolotl_checkout(tmp_path / "new", {"Dockerfile": "FROM axolotlai/axolotl:main-latest\n"}))
    assert old.vcs("axolotl") is not None and not old.vcs("axolotl").head
    assert new.vcs("axolotl") is not None and new.vcs("axolotl").head


def test_a_rename_whose_new_name_a_pin_older_than_the_history_may_lack_is_kept_until_the_upgrade(tmp_path):
    """mingruimingrui's transformers==4.0.1 predates the key history (4.36 on), and use_cpu arrived in 4.34: the
    fix is to keep no_cuda while the pin stays, not to rename it (TrainingArguments(use_cpu=...) fails on 4.0.1)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("transformers==4.0.1\n")
    config = tmp_path / "training_args.json"
    config.write_text('{"output_dir": "out", "per_device_train_batch_size": 8, "no_cuda": false}\n')
    found = diagnostic(read_plan(config), "no_cuda")
    assert found.suggestion == "use_cpu" and found.suggestion_from
    assert "older than every transformers release seqprof has read" in found.message


def test_an_accelerate_pin_caps_the_trl_that_pip_can_install_beside_it():
    """koukoulala/alignment-handbook's setup.py pins accelerate==0.29.2 beside trl>=0.8.2: every trl from 0.12 on
    requires accelerate>=0.34 (its wheel's metadata, keys/companion_requires.json "shared"), so pip resolves trl
    0.11.4, whose __init__ still exports setup_chat_format (SP440 then says nothing)."""
    from seqprof.config.key_history import with_shared_dependencies

    history = KeyHistory.load()
    pins = with_shared_dependencies(parse_spec("trl>=0.8.2,accelerate==0.29.2"), history)
    assert max(history.allowed("trl", pins), key=lambda v: tuple(map(int, v.split(".")))).startswith("0.11.")
    free = with_shared_dependencies(parse_spec("trl>=0.8.2"), history)
    assert history.allowed("trl", free)[-1] == history.newest("trl")


def test_an_install_script_in_a_scripts_folder_pins_what_pyproject_lists_unpinned(tmp_path):
    """K-bhuvan/chess-llm: pyproject.toml's [train] extra lists transformers and trl with no version, and the README
    then runs scripts/install_unsloth_blackwell.sh, which caps them (transformers<=5.5.0, trl<=0.24.0). The script's
    range is what the project installs; a train.sh in the same folder pins nothing."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "chess-llm"\nversion = "0.1"\n'
                                             '[project.optional-dependencies]\ntrain = ["trl", "transformers"]\n')
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "install_unsloth_blackwell.sh").write_text(
        'pip install "unsloth==2026.8.18" --no-deps\npip install \\\n  "transformers>=4.51.3,<=5.5.0" \\\n'
        '  "trl>=0.18.2,<=0.24.0"\n')
    (scripts / "train.sh").write_text("pip install transformers==4.30.0\npython train.py\n")
    config = tmp_path / "configs" / "sft.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: Qwen/Qwen3-0.6B\nwarmup_ratio: 0.03\n")
    pins = find_pins(config)
    assert [p.specifier for p in pins.of("transformers")] == [">=4.51.3,<=5.5.0"]
    assert pins.of("transformers")[0].source.startswith("scripts/install_unsloth_blackwell.sh:")
    assert [p.specifier for p in pins.of("trl")] == [">=0.18.2,<=0.24.0"]
    # 5.5 still has warmup_ratio (5.15 drops it): what the script installs takes the key
    having = KeyHistory.load().having("transformers", "warmup_ratio", ["TrainingArguments"])
    assert any(v.startswith("5.5.") for v in having) and not any(v.startswith("5.15.") for v in having)
    assert not [d for d in read_plan(config, "hf").diagnostics if d.key == "warmup_ratio" and d.kind == "removed_key"]


def test_a_readme_s_requirements_list_pins_what_no_file_pins(tmp_path):
    """zejunwang1/gpt2classifier's README lists its environment under "依赖环境" (`- transformers 4.27.3`) and no
    file pins transformers: the configs were written for 4.27.3, which still has evaluation_strategy, warmup_ratio
    and no_cuda, so each is a warning naming the release that drops it, not an error against 5.x. A version in
    prose or under another heading pins nothing."""
    real = CORPUS_DIR / "zejunwang1__gpt2classifier"
    (tmp_path / ".git").mkdir()
    shutil.copy(real / "README.md", tmp_path / "README.md")
    config = tmp_path / "config" / "train_args.json"
    config.parent.mkdir()
    shutil.copy(real / "config__train_args.json", config)
    listed = next(i for i, line in enumerate((real / "README.md").read_text().splitlines(), 1)
                  if line.strip() == "- transformers 4.27.3")
    assert find_pins(config).describe("transformers") == f"transformers==4.27.3 (README.md:{listed})"
    found = {d.key: d for d in read_plan(config).diagnostics if d.key in ("evaluation_strategy", "warmup_ratio",
                                                                          "no_cuda")}
    assert len(found) == 3 and all(d.kind != "removed_key" and "breaks on that upgrade" in d.message
                                   for d in found.values())
    (tmp_path / "README.md").write_text("# gpt2classifier\n\nTested with transformers 4.27.3.\n\n## Usage\n\n"
                                        "- transformers 4.27.3\n")
    assert find_pins(config).describe("transformers") is None


def test_a_readme_s_requirements_block_pins_and_a_release_older_than_the_history_is_not_judged_by_it(tmp_path):
    """NeilFranks/question_generation's README gives its environment as a requirements block under "## Requirements"
    (```` ``` ```` then `transformers==3.0.0`), and no file pins transformers. 3.0.0 is older than every release the
    history holds (4.36 on): its TrainingArguments still had evaluate_during_training (deprecated in 3.2, removed in
    4.0) and its parse_json_file dropped unknown keys, so args.json's evaluate_during_training is a note, not SP438's
    "HfArgumentParser refuses it". The same block under another heading pins nothing."""
    import json

    sources = json.loads((CORPUS_DIR / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir()
    for name, source in sources.items():
        if name.startswith("NeilFranks__question_generation/"):
            shutil.copy(CORPUS_DIR / name, tmp_path / source["path"])
    readme = (tmp_path / "README.md").read_text()
    line = readme.splitlines().index("transformers==3.0.0") + 1
    config = tmp_path / "args.json"
    assert find_pins(config).describe("transformers") == f"transformers==3.0.0 (README.md:{line})"
    from seqprof.lint.run import LintOptions, lint_paths

    report = lint_paths([config], LintOptions()).files[0]
    [found] = [f for f in report.findings if f.key == "evaluate_during_training"]
    assert found.severity == "info" and "older than every transformers release seqprof has read" in found.message
    assert not [f for f in report.findings if f.severity in ("warning", "error")]
    (tmp_path / "README.md").write_text(readme.replace("## Requirements", "## Benchmarks"))
    assert find_pins(config).describe("transformers") is None


def test_evaluate_during_training_is_renamed_with_its_value_on_a_release_that_lacks_it(tmp_path):
    """transformers 3.2 deprecated evaluate_during_training for evaluation_strategy (now eval_strategy) and 4.0
    removed it (training_args.py of 3.2.0 and 4.0.0): unpinned, the fix names the new key and its value."""
    (tmp_path / ".git").mkdir()
    config = tmp_path / "args.json"
    config.write_text('{"output_dir": "o", "per_device_train_batch_size": 4, "evaluate_during_training": true}\n')
    [found] = [d for d in read_plan(config).diagnostics if d.key == "evaluate_during_training"]
    assert found.suggestion == "eval_strategy" and "'eval_strategy: steps'" in found.value_change
    assert "removed in 4.0" in found.message


def test_a_development_build_below_the_history_is_judged_as_its_oldest_release(tmp_path):
    """brandonwilde/XLdefgen pins transformers==4.18.0.dev0 (a build from source before 4.18): older than every
    release the history holds (4.36 on), it is judged like a pin below them, so evaluation_strategy works there and
    breaks on the upgrade that drops it, as for ==4.27.3."""
    history = KeyHistory.load()
    assert history.allowed("transformers", parse_spec("transformers==4.18.0.dev0")) == \
        [history.versions("transformers")[0]]
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("transformers==4.18.0.dev0\n")
    config = tmp_path / "args.json"
    config.write_text('{"output_dir": "out", "evaluation_strategy": "steps", "overwrite_output_dir": true}\n')
    found = [d for d in read_plan(config, "hf").diagnostics if d.key in ("evaluation_strategy", "overwrite_output_dir")]
    assert len(found) == 2 and all(d.kind != "removed_key" and "breaks on that upgrade" in d.message for d in found)


def test_a_llamafactory_nothing_names_is_a_guess_not_a_bound(tmp_path):
    """SaturnAura/iGFT runs a vendored LLaMA-Factory (third_party/, v0.7.1.dev0) that no file installs by name,
    beside transformers>=4.29.0: the newest release's range (4.55 on) is only a guess at that copy, so the
    evaluation_strategy transformers 4.51 removed is a warning that says what it assumed, not an error claiming
    every release the project allows lacks it. Listed in requirements.txt, pip installs that release: an error."""
    real = CORPUS_DIR / "SaturnAura__iGFT"

    def project(folder: Path, extra: str) -> Path:
        (folder / ".git").mkdir(parents=True)
        shutil.copy(real / "pyproject.toml", folder / "pyproject.toml")
        (folder / "requirements.txt").write_text((real / "requirements.txt").read_text() + extra)
        config = folder / "configs" / "llamafactory" / "sft.yaml"
        config.parent.mkdir(parents=True)
        shutil.copy(real / "configs__llamafactory__sft.yaml", config)
        return config

    vendored = project(tmp_path / "vendored", "")
    assert not find_pins(vendored).pins.get("llamafactory")
    found = diagnostic(read_plan(vendored), "evaluation_strategy")
    assert found.kind != "removed_key" and "assuming llamafactory" in found.message
    listed = project(tmp_path / "listed", "llamafactory\n")
    assert diagnostic(read_plan(listed), "evaluation_strategy").kind == "removed_key"


def test_a_recipe_of_a_layer_the_project_does_not_contain_runs_under_the_layer_s_hub_cap(tmp_path):
    """HallerPatrick/linearization keeps alignment-handbook DPO recipes (dataset_mixture) and no script that parses
    them, beside a requirements.txt listing transformers without a version: they run through the handbook's
    scripts/dpo.py, whose setup.py keeps huggingface-hub<1.0, so pip installs transformers 4.57, where
    gradient_checkpointing_kwargs is the live field and warmup_ratio breaks only on the upgrade. A script of the
    project's own that parses configs, or a transformers pin, leaves the project's pins alone."""
    real = CORPUS_DIR / "HallerPatrick__linearization"

    def project(folder: Path, script: str | None = None, requirement: str = "") -> Path:
        (folder / ".git").mkdir(parents=True)
        (folder / "requirements.txt").write_text((real / "requirements.txt").read_text() + requirement)
        config = folder / "configs" / "dpo.yaml"
        config.parent.mkdir()
        shutil.copy(real / "configs__dpo.yaml", config)
        if script:
            (folder / "train.py").write_text(script)
        return config

    def kinds(config: Path) -> dict[str, str]:
        return {d.key: d.kind for d in read_plan(config).diagnostics
                if d.key in ("gradient_checkpointing_kwargs", "warmup_ratio")}

    layered = project(tmp_path / "layered")
    plan = read_plan(layered)
    warmup = diagnostic(plan, "warmup_ratio")
    assert "huggingface-hub<1.0" in warmup.message and "breaks on that upgrade" in warmup.message
    assert kinds(layered)["gradient_checkpointing_kwargs"] == "upcoming_deprecation"
    own = project(tmp_path / "own", "from trl import TrlParser, DPOConfig, ModelConfig\n"
                                    "parser = TrlParser((DPOConfig, ModelConfig))\n")
    assert kinds(own)["gradient_checkpointing_kwargs"] == "deprecated_key"
    pinned = project(tmp_path / "pinned", requirement="transformers==5.2.0\n")
    assert "huggingface-hub<1.0" not in diagnostic(read_plan(pinned), "warmup_ratio").message


def test_a_dataset_mixer_recipe_under_a_pre_rewrite_transformers_pin_is_read_by_the_old_handbook(tmp_path):
    """MiuLab/FactAlign's KTO recipe sets dataset_mixer (alignment-handbook's DataArguments before its rewrite onto
    TRL's classes) beside transformers==4.41.1, below the rewrite's transformers>=4.53.3: the handbook that runs it
    is the old one, whose own ModelArguments declare torch_dtype, so TRL's 0.27 removal is no concern of this file.
    Unpinned, pip installs the rewritten handbook, whose TrlParser hands torch_dtype to TRL's ModelConfig."""
    real = CORPUS_DIR / "MiuLab__FactAlign"

    def project(folder: Path, requirements: str) -> Path:
        (folder / ".git").mkdir(parents=True)
        (folder / "requirements.txt").write_text(requirements)
        config = folder / "configs" / "kto.yaml"
        config.parent.mkdir()
        shutil.copy(real / "configs__kto_llama3_deepspeed.yaml", config)
        return config

    old = diagnostic(read_plan(project(tmp_path / "old", (real / "requirements.txt").read_text())), "torch_dtype")
    assert old.kind == "unread_key" and "alignment-handbook's own argument classes" in old.message
    new = diagnostic(read_plan(project(tmp_path / "new", "trl\n")), "torch_dtype")
    assert new.kind in ("deprecated_key", "removed_key", "renamed_key")


def test_an_install_script_one_folder_down_pins_trl_and_a_dropped_dead_key_is_a_note(tmp_path):
    """shangshang-wang/Tina installs with scripts/set/set_env.sh (`pip install trl==0.15.2`) and pins no
    transformers: trl 0.15's TrlParser drops a key no class declares, so overwrite_output_dir (gone from
    transformers 5, never read by the Trainer) has no effect: a note. warmup_ratio, which the Trainer did read,
    stays a warning: dropped, the run loses its warmup. Without the script, trl 1.16 refuses the key."""
    real = CORPUS_DIR / "shangshang-wang__Tina"

    def project(folder: Path, installed: bool) -> tuple[Path, Path]:
        (folder / ".git").mkdir(parents=True)
        script = folder / "scripts" / "set" / "set_env.sh"
        if installed:
            script.parent.mkdir(parents=True)
            shutil.copy(real / "scripts__set__set_env.sh", script)
        config = folder / "recipes" / "grpo" / "train.yaml"
        config.parent.mkdir(parents=True)
        shutil.copy(real / "recipes__DeepSeek-R1-Distill-Qwen-1.5B__grpo__train_model_l1_exact.yaml", config)
        return config, script

    config, script = project(tmp_path / "installed", True)
    assert find_pins(config).describe("trl") == \
        f"trl==0.15.2 (scripts/set/set_env.sh:{_line_of(script, 'trl==0.15.2')})"
    plan = read_plan(config)
    dead = diagnostic(plan, "overwrite_output_dir")
    assert dead.kind == "unread_key" and "at trl 0.15 TrlParser drops" in dead.message
    assert diagnostic(plan, "warmup_ratio").kind in ("renamed_key", "removed_key")
    bare, _ = project(tmp_path / "bare", False)
    assert diagnostic(read_plan(bare), "overwrite_output_dir").kind != "unread_key"


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("pin,dead", [("transformers==4.57.1", "warmup_ratio"), ("transformers==5.10.4", "warmup_steps"),
                                      ("", None)])
def test_warmup_steps_beside_a_ratio_leaves_one_of_them_dead_by_release(tmp_path, pin, dead):
    """transformers 4.x get_warmup_steps takes warmup_steps whenever it is above 0 (__post_init__ says so at info
    level only); 5.0-5.14's __post_init__ copies a warmup_ratio over warmup_steps; a fresh install (5.15 on) has no
    warmup_ratio at all, which the removal findings say, not this one."""
    config = project(tmp_path, {"requirements.txt": f"trl==0.19.1\n{pin}\n"},
                     extra_key="warmup_steps: 100\nwarmup_ratio: 0.1\n")
    found = [d for d in read_plan(config).diagnostics if d.kind == "overridden_setting"]
    assert [d.key for d in found] == ([dead] if dead else [])
    if dead:
        line = next(i for i, text in enumerate(config.read_text().splitlines(), 1) if text.startswith(dead + ":"))
        assert found[0].line == line and f"transformers {pin[-6:-2]}" in found[0].message
    zero = project(tmp_path / "zero", {"requirements.txt": f"trl==0.19.1\n{pin}\n"},
                   extra_key="warmup_steps: 0\nwarmup_ratio: 0.1\n")  # 0 steps: the ratio decides on every release
    assert not [d for d in read_plan(zero).diagnostics if d.kind == "overridden_setting"]


def test_a_readme_with_two_environments_pins_the_one_the_launchers_enter(tmp_path):
    """XuHuang441/SimPO_slurm's README installs `sim` (transformers==4.44.2, trl==0.9.6, in a `pip install \\` whose
    wheel-URL line lost its backslash) for training and `inpo` (transformers<4.54.0) for vLLM decoding; its
    launcher runs `.../envs/sim/bin/accelerate launch`, so the training pins are sim's. Without a launcher that
    enters one of them, the README disagrees with itself and pins no transformers."""
    real = CORPUS_DIR / "XuHuang441__SimPO_slurm"
    readme = (real / "README.md").read_text()
    assert "flash_attn-2.8.0.post2+cu12torch2.7cxx11abiFALSE-cp310-cp310-linux_x86_64.whl  \n" in readme

    def repository(folder: Path, launcher: bool) -> Path:
        (folder / ".git").mkdir(parents=True)
        (folder / "README.md").write_text(readme)
        if launcher:
            shutil.copy(real / "run_sppo.slurm", folder / "run_sppo.slurm")
        config = folder / "training_configs" / "gemma-2-9b-it-sppo-iter1.yaml"
        config.parent.mkdir()
        shutil.copy(real / "training_configs__gemma-2-9b-it-sppo-iter1.yaml", config)
        return config

    pins = find_pins(repository(tmp_path / "launched", True))
    line = next(i for i, text in enumerate(readme.splitlines(), 1) if text.startswith("pip install \\"))
    assert pins.describe("transformers") == f"transformers==4.44.2 (README.md:{line})"
    assert pins.describe("trl") == f"trl==0.9.6 (README.md:{line})"
    assert "envs/sim/bin/accelerate" in (real / "run_sppo.slurm").read_text()
    assert find_pins(repository(tmp_path / "bare", False)).describe("transformers") is None


def test_pins_of_two_environment_files_are_alternative_installs_and_a_cloned_handbook_caps_transformers(tmp_path):
    """thanhdath/mats-sql pins transformers==4.44.0 in its environment.yml and ==4.41.2 in alignment-handbook/'s
    (plus ==4.35.0 and ==4.28.1 elsewhere): no release meets them all, and each is a possible install, so keys are
    judged over their union (4.36-4.46 in the history), where gradient_checkpointing_kwargs is a live field, not
    against the newest release. junkangwu/alpha-DPO's README clones alignment-handbook and `pip install .`s it: the
    layer's huggingface-hub<1.0 keeps transformers below 5.0."""
    from corpus_layout import lay_out

    mats = "thanhdath__mats-sql"
    config = lay_out(tmp_path / "mats", only=mats) / f"{mats}/alignment-handbook__recipes__llama-3b-spider__orpo-" \
                                                      "planner-iter-3.yaml"
    pins = find_pins(config)
    assert {p.specifier for p in pins.of("transformers")} >= {"==4.44.0", "==4.41.2"}
    history = KeyHistory.load()
    allowed = history.allowed("transformers", pins)
    assert allowed and {v.rsplit(".", 1)[0] for v in allowed} >= {"4.41", "4.44"}
    assert all(v.startswith("4.") for v in allowed)
    assert not [d for d in read_plan(config).diagnostics if d.key == "gradient_checkpointing_kwargs"
                and d.kind in ("deprecated_key", "removed_key", "renamed_key")]
    alpha = "junkangwu__alpha-DPO"
    config = lay_out(tmp_path / "alpha", only=alpha) / f"{alpha}/training_configs__mistral-7b-instruct-alpha-dpo.yaml"
    readme = config.parents[1] / "README.md"
    assert "git clone https://github.com/huggingface/alignment-handbook.git" in readme.read_text()
    pins = find_pins(config)
    assert [p.specifier for p in pins.of("huggingface-hub")] == ["<1.0"]
    assert max(history.allowed("transformers", with_companions(pins, history))).startswith("4.")
    removed = next(d for d in read_plan(config).diagnostics if d.key == "evaluation_strategy")
    assert removed.kind in ("removed_key", "renamed_key") and "pip installs transformers 4.57" in removed.message


def test_an_axolotl_nightly_older_than_every_dated_release_is_the_next_release_s_development_build(tmp_path):
    """Souging/G.O.D-test's miner.dockerfile builds FROM winglian/axolotl:main-20241101-...: main a week before 0.5.0
    (2024-11-08, keys/release_dates.json), so 0.5.0.dev0, under which flash_attention and eval_max_new_tokens are
    current fields (notes of a later deprecation), not deprecated as under the newest release assumed unpinned. Its
    `datasets:` is left empty for the project's code to fill: the file is still axolotl's."""
    from corpus_layout import lay_out

    folder = "Souging__G.O.D-test"
    config = lay_out(tmp_path, only=folder) / f"{folder}/core__config__14b.yml"
    dockerfile = config.parents[2] / "dockerfiles" / "miner.dockerfile"
    assert "FROM winglian/axolotl:main-20241101-py3.11-cu124-2.5.0" in dockerfile.read_text()
    pins = find_pins(config)
    assert [p.specifier for p in pins.of("axolotl")] == ["==0.5.0.dev0"]
    assert "a nightly built before 0.5.0" in pins.describe("axolotl")
    plan = read_plan(config)
    assert plan.dialect == "axolotl"
    later = {d.key: d.kind for d in plan.diagnostics if d.key in ("flash_attention", "eval_max_new_tokens")}
    assert later == {"flash_attention": "upcoming_deprecation", "eval_max_new_tokens": "upcoming_deprecation"}
    assert {"early_stopping_threshold", "wandb_run"} <= {d.key for d in plan.diagnostics if d.kind == "unknown_key"}


def test_a_fork_whose_setup_py_reads_its_version_through_a_pathlib_chain_is_pinned_to_it(tmp_path):
    """lilyzhng/axolotl (a 2026 fork) names itself in pyproject.toml with a dynamic version, which its setup.py
    reads from `Path(os.path.dirname(os.path.abspath(__file__))) / "src" / "axolotl" / "__init__.py"`: the checkout
    is axolotl 0.13.0.dev, where flash_attention is a plain field, not the deprecated one of 0.19 (SP402). Without
    the module the version is unknown and the newest release is judged."""
    from corpus_layout import lay_out

    fork = "lilyzhng__axolotl"
    tree = lay_out(tmp_path / "fork", only=fork)
    config = tree / f"{fork}/examples__qwen3-vl__lora-8b.yaml"
    [pin] = find_pins(config).of("axolotl")
    assert pin.specifier == "==0.13.0.dev" and pin.source.startswith("src/axolotl/__init__.py (setup.py's version)")
    assert not [d for d in read_plan(config).diagnostics if d.key == "flash_attention" and d.kind == "renamed_key"]
    bare = lay_out(tmp_path / "bare", only=fork)  # a second copy: pins are read once per path
    (bare / f"{fork}/src__axolotl____init__.py").unlink()
    config = bare / f"{fork}/examples__qwen3-vl__lora-8b.yaml"
    assert not [p for p in find_pins(config).of("axolotl") if p.specifier]
    assert [d.kind for d in read_plan(config).diagnostics if d.key == "flash_attention"] == ["renamed_key"]


def test_a_package_installed_into_the_environment_the_launchers_enter_pins_its_configs(tmp_path):
    """Damin3927/llm2025compet's root pyproject.toml asks for transformers>=4.53.3, but training runs in the
    `openr1` venv: training/create_open-r1_env.sh makes it (`uv venv openr1`) and installs training/open-r1
    editable, whose setup.py pins transformers==4.54.1 and trl==0.19.0, and every launcher in training/commands
    enters it (`source openr1/bin/activate`). At 4.54.1 warmup_ratio still works: an upgrade warning (SP402), not
    SP408. A launcher that enters no such environment leaves the root's pins."""
    from corpus_layout import lay_out

    repo = "Damin3927__llm2025compet"
    tree = lay_out(tmp_path / "venv", only=repo)
    config = tree / f"{repo}/training__configs__Qwen3-14B__DPO__config_dpo.yaml"
    pins = find_pins(config)
    assert pins.describe("transformers").startswith("transformers==4.54.1 (training/open-r1/setup.py:71, installed "
                                                    "by training/create_open-r1_env.sh)")
    assert pins.describe("trl").startswith("trl==0.19.0")
    [ratio] = [d for d in read_plan(config).diagnostics if d.key == "warmup_ratio"]
    assert ratio.kind == "renamed_key" and "after the pinned one" in ratio.message
    bare = lay_out(tmp_path / "bare", only=repo)
    for launcher in (bare.root / repo / "training" / "commands").iterdir():
        launcher.write_text("\n".join(line for line in launcher.read_text().splitlines() if "bin/activate" not in line))
    config = bare / f"{repo}/training__configs__Qwen3-14B__DPO__config_dpo.yaml"
    assert find_pins(config).describe("transformers").startswith("transformers>=4.53.3 (pyproject.toml")


def test_a_misspelled_requirements_file_and_a_readme_docker_line_pin_the_framework(tmp_path):
    """PhiVanDat123/riskKD pins trl==0.12.0 in `requirments.txt` (its README says requirements.txt): pip installs
    that file, so its pins count. jcparrad/llama27b_qlora_axolotl's README runs `docker run ...
    winglian/axolotl:main-py3.10-cu118-2.0.1` outside any code block: an undated main build, a commit seqprof cannot
    place, so flash_attention is not judged against axolotl 0.19's rename."""
    from corpus_layout import lay_out

    risk = "PhiVanDat123__riskKD"
    config = lay_out(tmp_path / "risk", only=risk) / f"{risk}/recipes__llama3.2-1b-deita-dpomix__riskKD.yaml"
    assert find_pins(config).describe("trl").startswith("trl==0.12.0 (requirments.txt:")
    image = "jcparrad__llama27b_qlora_axolotl"
    tree = lay_out(tmp_path / "image", only=image)
    config = tree / f"{image}/llama2_7b_quotes_qlora.yaml"
    [pin] = find_pins(config).pins["axolotl"]
    assert pin.vcs and "main-py3.10-cu118-2.0.1" in pin.source and pin.source.startswith("README.md:5")
    assert not [d for d in read_plan(config).diagnostics if d.key == "flash_attention" and d.kind == "renamed_key"]


def test_extras_written_after_the_version_still_pin_it_and_an_axolotl_checkout_reads_its_own_version(tmp_path):
    """himanshushukla12/grpo_code's README installs `axolotl==0.8.0[vllm,flash-attn]`: pip refuses the extras after
    the version, and whoever mends the line keeps 0.8.0, so flash_attention and dataset_processes are judged at 0.8
    (plain fields there), and vllm.host, which VllmConfig gets only in 0.9, is dropped. obalcells/axolotl is axolotl
    0.11.0.dev itself (setup.py reads src/axolotl/__init__.py): its flash_attention is only a note too; without
    the module the version is unknown and axolotl 0.19's rename is assumed."""
    from corpus_layout import lay_out

    repo = "himanshushukla12__grpo_code"
    config = lay_out(tmp_path / "readme", only=repo) / f"{repo}/single_gpu_config.yaml"
    assert find_pins(config).describe("axolotl").startswith("axolotl==0.8.0 (README.md:29")
    found = {d.key: d for d in read_plan(config).diagnostics}
    assert found["flash_attention"].kind == found["dataset_processes"].kind == "upcoming_deprecation"
    assert found["vllm.host"].kind == "unknown_key" and "(axolotl adds it in 0.9)" in found["vllm.host"].message
    fork = "obalcells__axolotl"
    config = lay_out(tmp_path / "fork", only=fork) / f"{fork}/hooked_lora.yaml"
    assert [d.kind for d in read_plan(config).diagnostics if d.key == "flash_attention"] == ["upcoming_deprecation"]
    bare = lay_out(tmp_path / "bare", only=fork)
    (bare.root / fork / "src/axolotl/__init__.py").unlink()
    [renamed] = [d for d in read_plan(bare / f"{fork}/hooked_lora.yaml").diagnostics if d.key == "flash_attention"]
    assert renamed.kind == "renamed_key" and "assuming axolotl 0.19" in renamed.message


def test_a_git_install_at_a_release_tag_pins_that_release(tmp_path):
    """VietHoang1512/recap's requirements.txt installs `git+https://github.com/huggingface/trl.git@v0.16.0`: the
    tag is trl 0.16.0's release, where torch_dtype is still ModelConfig's own field, so it is a warning for the
    upgrade that breaks it (0.27), not a note about a checkout seqprof cannot place, as a commit stays."""
    from corpus_layout import lay_out

    from seqprof.config.pin_files import requirement

    assert requirement("git+https://github.com/huggingface/trl.git@v0.16.0", "r:1").specifier == "==0.16.0"
    assert requirement("trl @ git+https://github.com/huggingface/trl@0.19.1", "r:1").specifier == "==0.19.1"
    commit = requirement("git+https://github.com/huggingface/trl.git@3b4c1e2", "r:1")
    assert (commit.specifier, commit.vcs, commit.head) == ("", True, False)
    assert requirement("git+https://github.com/huggingface/trl.git@main", "r:1").head
    folder = "VietHoang1512__recap"
    config = lay_out(tmp_path / "tag", only=folder) / f"{folder}/configs__template.yaml"
    plan = read_plan(config)
    assert plan.get("framework_versions")["trl"]["pinned"] == "==0.16.0"
    [dtype] = [d for d in plan.diagnostics if d.key == "torch_dtype"]
    assert dtype.kind == "deprecated_key" and "trl==0.16.0" in dtype.message and "still has it" in dtype.message
    tree = lay_out(tmp_path / "commit", only=folder)
    pins = tree.root / folder / "requirements.txt"
    pins.write_text(pins.read_text().replace("trl.git@v0.16.0", "trl.git@3b4c1e2"))
    assert [d.kind for d in read_plan(tree / f"{folder}/configs__template.yaml").diagnostics
            if d.key == "torch_dtype"] == ["unread_key"]


def test_an_axolotl_checkout_s_development_version_is_older_than_the_next_releases(tmp_path):
    """mussakhojayeva/axolotl_local is axolotl 0.8.0.dev0 (src/axolotl/__init__.py). Its loader passes load_in_4bit
    to from_pretrained for `adapter: lora` (utils/models.py), which transformers 4.50 turns into a 4-bit load, as
    every release before 0.13 did: no SP452. z7ye/axolotl is 0.3.0, older than every schema seqprof holds, and its
    staged trainer_builder.py is no config schema: its utils/config.py reads eval_table_max_new_tokens, so the key
    is a note. NextAI-Inc/axolotl stages its own 0.4 schema, which lacks the key: that stays a warning."""
    from corpus_layout import lay_out

    folder = "mussakhojayeva__axolotl_local"
    config = lay_out(tmp_path / "dev", only=folder) / f"{folder}/examples__gemma3__gemma-3-27b-lora_v1.yml"
    plan = read_plan(config)
    assert plan.get("framework_versions")["axolotl"]["pinned"] == "==0.8.0.dev0"
    assert plan.get("lora_load_in_4bit_ignored") is None
    tree = lay_out(tmp_path / "release", only=folder)
    init = tree.root / folder / "src" / "axolotl" / "__init__.py"
    init.write_text(init.read_text().replace("0.8.0.dev0", "0.13.1"))
    assert read_plan(tree / f"{folder}/examples__gemma3__gemma-3-27b-lora_v1.yml").get("lora_load_in_4bit_ignored")

    old = read_plan(lay_out(tmp_path / "old", only="z7ye__axolotl") / "z7ye__axolotl/examples__mistral__qlora.yml")
    assert [d.kind for d in old.diagnostics if d.key == "eval_table_max_new_tokens"] == ["unread_key"]
    schema = read_plan(lay_out(tmp_path / "schema", only="NextAI-Inc__axolotl")
                       / "NextAI-Inc__axolotl/examples__mistral__lora-mps.yml")
    assert [d.kind for d in schema.diagnostics if d.key == "eval_table_max_new_tokens"] == ["unknown_key"]


def test_the_project_s_python_bounds_the_releases_pip_can_install(tmp_path):
    """ataylor24/llm_algorithmic_reasoning's environment.yml builds python=3.8.13 with transformers==4.37.0, while
    its setup.py asks transformers>=4.39.3: two installs that contradict each other, both under Python 3.8, where
    pip finds no transformers from 4.47 on (Requires-Python >=3.9; keys/companion_requires.json). So its
    evaluation_strategy and warmup_ratio are live fields either way, and only an upgrade breaks them; without the
    interpreter pin, setup.py's open range reaches 5.x, which lacks them."""
    from corpus_layout import lay_out

    from seqprof.config.pin_files import read_environment

    folder = "ataylor24__llm_algorithmic_reasoning"
    name = "recipes__algorithmic_reasoning__sft__config_qlora.yaml"
    tree = lay_out(tmp_path / "py38", only=folder)
    [python] = [p for p in read_environment(tree.root / folder / "environment.yml") if p.package == "python"]
    assert python.specifier == "==3.8.13.*"  # `python=3.8.13=h12debd9_0`: the build string is no version
    plan = read_plan(tree / f"{folder}/{name}")
    assert "transformers 4.47 requires python>=3.9.0" in plan.get("framework_versions")["transformers"]["source"]
    kinds = {d.key: d.kind for d in plan.diagnostics}
    assert kinds["evaluation_strategy"] == "renamed_key" and kinds["warmup_ratio"] == "renamed_key"  # upgrade warnings
    tree = lay_out(tmp_path / "no_python", only=folder)
    env = tree.root / folder / "environment.yml"
    env.write_text("\n".join(line for line in env.read_text().splitlines() if "- python=" not in line) + "\n")
    kinds = {d.key: d.kind for d in read_plan(tree / f"{folder}/{name}").diagnostics}
    assert kinds["evaluation_strategy"] == "removed_key" and kinds["warmup_ratio"] == "removed_key"


def test_a_conda_environment_file_under_another_name_pins_the_framework(tmp_path):
    """riyazahuja/ImProver's conda_env.yml installs axolotl==0.8.0 through its pip list: that release passes
    load_in_4bit to from_pretrained for `adapter: lora`, so SP452 does not apply, as it would at an assumed 0.19.
    A YAML of another name is no environment file."""
    from corpus_layout import lay_out

    from seqprof.config.pin_files import reader_for, read_environment

    assert reader_for("conda_env.yml") is read_environment and reader_for("environment-gpu.yaml") is read_environment
    assert reader_for("sft_config.yaml") is None and reader_for("train_env_config.json") is None
    folder = "riyazahuja__ImProver"
    name = "experiments__final__completion__base_sft_conf.yaml"
    plan = read_plan(lay_out(tmp_path / "conda", only=folder) / f"{folder}/{name}")
    assert plan.get("framework_versions")["axolotl"]["pinned"] == "==0.8.0"
    assert plan.get("lora_load_in_4bit_ignored") is None
    tree = lay_out(tmp_path / "none", only=folder)
    (tree.root / folder / "conda_env.yml").rename(tree.root / folder / "conda_env.txt")
    assert read_plan(tree / f"{folder}/{name}").get("lora_load_in_4bit_ignored")


def test_an_environment_folder_beside_the_config_s_folder_pins_it(tmp_path):
    """Azure/azureml-examples' GRPO lab keeps src/grpo_trainer_config.yaml beside environment/requirements.txt
    (transformers==4.51.3), below the repository root: the lab's own pins, so warmup_ratio is a live field and only an
    upgrade warning, not a removal at an assumed 5.25. Without that folder nothing pins transformers."""
    from corpus_layout import lay_out

    folder = "Azure__azureml-examples"
    name = "sdk__python__jobs__grpo__src__grpo_trainer_config.yaml"
    plan = read_plan(lay_out(tmp_path / "beside", only=folder) / f"{folder}/{name}")
    versions = plan.get("framework_versions")["transformers"]
    assert versions["pinned"] == "==4.51.3" and versions["source"].startswith("sdk/python/jobs/grpo/environment/")
    assert [d.kind for d in plan.diagnostics if d.key == "warmup_ratio"] == ["renamed_key"]
    tree = lay_out(tmp_path / "none", only=folder)
    env = tree.root / folder / "sdk" / "python" / "jobs" / "grpo" / "environment"
    env.rename(env.parent / "notes")
    plan = read_plan(tree / f"{folder}/{name}")
    assert plan.get("framework_versions")["transformers"]["pinned"] is None


# --- stop 44: forks, main branches beside a pin, images that train -----------------------------------------------

def test_a_git_install_of_a_fork_is_a_commit_not_the_main_branch():
    """00drdelius/CustomLOMO's requirements.txt installs git+https://gitee.com/drYuqian/transformers.git: a personal
    fork's head follows no transformers release, so it is a commit seqprof cannot place, not huggingface's main."""
    from seqprof.config.pin_files import requirement

    fork = requirement("git+https://gitee.com/drYuqian/transformers.git", "requirements.txt:5")
    assert fork.vcs and not fork.head and "a fork, drYuqian/transformers" in fork.source
    upstream = requirement("git+https://github.com/huggingface/transformers.git", "requirements.txt:5")
    assert upstream.vcs and upstream.head


def test_a_fork_install_makes_removed_keys_notes(tmp_path):
    from corpus_layout import lay_out

    from seqprof.lint.run import LintOptions, lint_paths

    folder = "00drdelius__CustomLOMO"
    config = lay_out(tmp_path, only=folder) / f"{folder}/config__args_lomo.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert {f.key for f in report.findings if f.code == "SP407"} >= {"evaluation_strategy", "overwrite_output_dir"}
    assert not [f for f in report.findings if f.severity in ("warning", "error")]


def test_a_main_branch_beside_a_pin_it_no_longer_meets_is_an_older_release(tmp_path):
    """ULTA-Web/DeepGrounder's setup.py pins transformers==4.49.0 beside trl @ git+...@main. trl 0.18 on require
    transformers>=4.50, so the main branch it installed with was a 0.17 one: torch_dtype and max_seq_length are
    upgrade warnings, not removals."""
    from corpus_layout import lay_out

    folder = "ULTA-Web__DeepGrounder"
    config = lay_out(tmp_path, only=folder) / f"{folder}/src__open-r1-multimodal__configs__qwen2vl_sft_config.yaml"
    plan = read_plan(config)
    kinds = {d.key: d.kind for d in plan.diagnostics if d.key in ("torch_dtype", "max_seq_length")}
    assert kinds == {"torch_dtype": "deprecated_key", "max_seq_length": "renamed_key"}  # SP403 / SP402 warnings
    assert "trl 0.18 requires transformers>=4.50.0" in plan.get("framework_versions")["trl"]["source"]


def test_the_image_that_trains_decides_when_images_disagree(tmp_path):
    """PhoenixBeaudry/gradients-custom builds its miner from axolotlai/axolotl:main-20241128 (axolotl.cli.train on the
    config) and a validator from winglian/axolotl:main-20250401 that never trains: the miner's image pins 0.5.2."""
    from corpus_layout import lay_out

    folder = "PhoenixBeaudry__gradients-custom"
    config = lay_out(tmp_path / "both", only=folder) / f"{folder}/core__config__base.yml"
    assert [p.specifier for p in find_pins(config).of("axolotl")] == ["==0.5.2"]
    bare = lay_out(tmp_path / "no_train_line", only=folder) / f"{folder}/core__config__base.yml"
    miner = bare.parents[2] / "dockerfiles" / "miner.dockerfile"
    miner.write_text(miner.read_text().replace("axolotl.cli.train", "axolotl.cli.preprocess"))
    assert find_pins(bare).of("axolotl") == ()


def test_an_unversioned_upgrade_in_the_install_script_installs_the_newest_release(tmp_path):
    """Corleno/Med-R1's README runs setup.sh, which installs src/r1-v (setup.py: trl==0.14.0) and then runs `pip
    install --upgrade trl`: the newest trl replaces 0.14.0, so max_length is a field and torch_dtype is refused.
    Where a later line installs trl==0.14.0 again, or the upgrade line is gone, 0.14.0 stands."""
    from corpus_layout import lay_out

    folder = "Corleno__Med-R1"
    name = f"{folder}/src__r1-v__configs__qwen3vl__sft_qwen3vl_2b_omni_med_vqa_sampled_config.yaml"
    newest = KeyHistory.load().newest("trl")
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert [p.specifier for p in find_pins(config).of("trl")] == [f">={newest}"]
    kinds = {d.key: d.kind for d in read_plan(config).diagnostics if d.key in ("max_length", "torch_dtype")}
    assert kinds == {"torch_dtype": "removed_key"}  # SP408

    for case, edit in (("pinned_again", lambda t: t + "\npip install trl==0.14.0\n"),
                       ("no_upgrade", lambda t: t.replace("pip install --upgrade trl\n", ""))):
        config = lay_out(tmp_path / case, only=folder) / name
        script = config.parents[4] / "setup.sh"
        script.write_text(edit(script.read_text()))
        assert {p.specifier for p in find_pins(config).of("trl")} == {"==0.14.0"}
        kinds = {d.key: d.kind for d in read_plan(config).diagnostics if d.key in ("max_length", "torch_dtype")}
        assert kinds["max_length"] == "premature_key" and kinds["torch_dtype"] == "deprecated_key"  # SP430, SP403


def test_a_conda_style_requirement_in_the_readme_pins_that_release(tmp_path):
    """HumainLab/Understand_MarginPO's README lists `trl=0.11.0` under "## Requirements" (conda's spelling: that
    release and its patches), and no file pins trl: its dpo.py imports CPOTrainer, which trl 0.11 exports, so there
    is no SP441. Without the line, a fresh install's trl lacks the export."""
    from corpus_layout import lay_out

    folder = "HumainLab__Understand_MarginPO"
    name = f"{folder}/recipes__dpo_tldr.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert [(p.specifier, p.source) for p in find_pins(config).of("trl")] == [("==0.11.0.*", "README.md:6")]
    assert not [d for d in read_plan(config).diagnostics if d.key == "CPOTrainer"]

    bare = lay_out(tmp_path / "no_requirements", only=folder) / name
    readme = bare.parents[1] / "README.md"
    readme.write_text(readme.read_text().replace("trl=0.11.0\n", ""))
    assert find_pins(bare).of("trl") == ()
    assert [d.kind for d in read_plan(bare).diagnostics if d.key == "CPOTrainer"] == ["unimportable_name_assumed"]


def test_a_training_argument_newer_than_the_pinned_transformers_is_refused(tmp_path):
    """nukkk97/pseudo2real pins transformers==4.37.2 (requirements.txt, environment.yml) and its Whisper config sets
    eval_strategy, which TrainingArguments gained in 4.41 (4.37's is evaluation_strategy); train_afris_custom.py
    reads the file with HfArgumentParser(Seq2SeqTrainingArguments).parse_yaml_file, which refuses it. SP430 names
    the pinned release's spelling; a pin that has the key, or the old spelling, has nothing to report."""
    from corpus_layout import lay_out

    folder = "nukkk97__pseudo2real"
    name = f"{folder}/configs__whisper_small.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    premature = [d for d in read_plan(config).diagnostics if d.kind == "premature_key"]
    assert [(d.key, d.suggestion, d.suggestion_from) for d in premature] == [
        ("eval_strategy", "evaluation_strategy", "transformers 4.41")]
    assert not [d for d in read_plan(config, versions="transformers==4.41.2").diagnostics
                if d.kind == "premature_key"]

    renamed = lay_out(tmp_path / "old_spelling", only=folder) / name
    renamed.write_text(renamed.read_text().replace("eval_strategy:", "evaluation_strategy:"))
    assert not [d for d in read_plan(renamed).diagnostics if d.kind == "premature_key"]


def test_a_metaflow_flow_environment_pins_what_its_steps_install(tmp_path):
    """outerbounds/metaflow-checkpoint-examples' nim_lora flow reads hf_peft_args.json and builds its steps'
    environment with `@pypi_base(packages={"transformers": "4.45.0", "trl": "0.10.1", ...})`; the folder's
    requirements.txt lists only metaflow's extras. So the file's group_by_length is judged at 4.45.0, which still has
    it (an upgrade warning), not at a fresh transformers 5, which folded it into train_sampling_strategy. Two steps
    that ask for different versions of a package say nothing of it."""
    from corpus_layout import lay_out

    folder = "outerbounds__metaflow-checkpoint-examples"
    name = f"{folder}/nim_lora__hf_peft_args.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    flow = config.parent / "finetune_hf_peft.py"
    line = flow.read_text().splitlines().index('        "transformers": "4.45.0",') + 1
    assert [(p.specifier, p.source) for p in find_pins(config).of("transformers")] == [
        ("==4.45.0", f"finetune_hf_peft.py:{line} (a Metaflow flow's environment)")]
    assert [p.specifier for p in find_pins(config).of("trl")] == ["==0.10.1"]
    group = [d for d in read_plan(config).diagnostics if d.key == "group_by_length"]
    assert [d.kind for d in group] == ["renamed_key"] and "4.45.0" in group[0].message \
        and "breaks on that upgrade" in group[0].message

    split = lay_out(tmp_path / "two_steps", only=folder) / name
    flow = split.parent / "finetune_hf_peft.py"
    flow.write_text(flow.read_text() + '\n\n@pypi(packages={"transformers": "4.46.3"})\ndef other_step():\n    pass\n')
    assert find_pins(split).of("transformers") == ()
    assert [p.specifier for p in find_pins(split).of("trl")] == ["==0.10.1"]


def test_a_fork_cloned_and_installed_in_a_dockerfile_is_a_commit(tmp_path):
    """lingjoor-research's Dockerfile.train clones kunato/axolotl (a fork at axolotl 0.4.0) and installs it with
    `pip install -e '.[deepspeed]'`: a commit seqprof cannot place, not axolotl's main branch, so flash_attention
    (deprecated from axolotl 0.17) is a note. The official repository cloned the same way is the main branch."""
    from corpus_layout import lay_out

    folder = "lingjoor-research__llm-efficiency-submission"
    config = lay_out(tmp_path / "fork", only=folder) / f"{folder}/configs__qwen.yaml"
    [pin] = find_pins(config).pins["axolotl"]
    assert pin.vcs and not pin.head and "a fork's checkout" in pin.source
    assert [d.kind for d in read_plan(config).diagnostics if d.key == "flash_attention"] == ["upcoming_deprecation"]

    official = lay_out(tmp_path / "official", only=folder) / f"{folder}/configs__qwen.yaml"
    docker = official.parents[1] / "Dockerfile.train"
    docker.write_text(docker.read_text().replace("github.com/kunato/axolotl", "github.com/axolotl-ai-cloud/axolotl"))
    [pin] = find_pins(official).pins["axolotl"]
    assert pin.vcs and pin.head


def test_a_package_the_install_script_installs_from_its_own_folder_pins_the_run(tmp_path):
    """arugo11's openr1-training/create_open-r1_env.sh makes `uv venv env`, installs `-e "open-r1[dev]"` (its
    sibling folder openr1-training/open-r1, whose setup.py requires transformers>=4.54.1 and huggingface-hub<1.0)
    and the PBS launchers `source env/bin/activate`: the configs run with transformers 4.x, where
    gradient_checkpointing_kwargs is no deprecated alias yet."""
    from corpus_layout import lay_out

    folder = "arugo11__LLM-jp-2025competetion-victory"
    name = f"{folder}/openr1-training__configs__llmjp4-8B__sft__config_v5.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    sources = [p.source for p in find_pins(config).of("transformers")]
    assert sources and all("openr1-training/open-r1/setup.py" in s for s in sources)
    assert [d.kind for d in read_plan(config).diagnostics if d.key == "gradient_checkpointing_kwargs"] == [
        "upcoming_deprecation"]

    moved = lay_out(tmp_path / "elsewhere", only=folder) / name
    script = moved.parents[3] / "create_open-r1_env.sh"
    script.write_text(script.read_text().replace('-e "open-r1[dev]"', '-e "other-r1[dev]"'))
    assert find_pins(moved).of("transformers") == ()
