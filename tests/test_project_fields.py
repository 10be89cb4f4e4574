"""Keys a project's own argument dataclasses declare (seqprof.config.project_fields), on SimPO's real files.

SimPO (princeton-nlp/SimPO, MIT; copied in tests/data/corpus with its commit) parses its recipes with
HfArgumentParser into SimPOConfig(TrainingArguments), whose max_prompt_length TRL's DPOConfig dropped in 0.28:
beside those files the key is SimPO's, not a TRL removal.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from seqprof.config.project_fields import dataclass_fields, project_fields, project_root
from seqprof.config.read import read_plan

SIMPO = Path(__file__).parent / "data" / "corpus" / "princeton-nlp__SimPO"
RECIPE = "training_configs__gemma-2-9b-it-simpo.yaml"


def simpo_checkout(root: Path, with_sources: bool = True) -> Path:
    """SimPO's layout: a .git root, its environment.yml pins, scripts/simpo_config.py, training_configs/*.yaml."""
    (root / ".git").mkdir(parents=True)
    (root / "training_configs").mkdir()
    shutil.copy(SIMPO / "environment.yml", root / "environment.yml")
    if with_sources:
        (root / "scripts").mkdir()
        shutil.copy(SIMPO / "scripts__simpo_config.py", root / "scripts" / "simpo_config.py")
    config = root / "training_configs" / "gemma-2-9b-it-simpo.yaml"
    shutil.copy(SIMPO / RECIPE, config)
    return config


def _declared_line(text: str, name: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith(f"{name}:"))


def test_fields_of_the_project_dataclasses_with_their_lines(tmp_path):
    config = simpo_checkout(tmp_path)
    assert project_root(config) == tmp_path.resolve()
    source = (tmp_path / "scripts" / "simpo_config.py").read_text()
    fields = project_fields(config)
    assert fields["max_prompt_length"].owner == "SimPOConfig"
    assert fields["max_prompt_length"].file == "scripts/simpo_config.py"
    assert fields["max_prompt_length"].line == _declared_line(source, "max_prompt_length")
    assert "learning_rate" not in fields  # inherited from TrainingArguments, not declared by SimPO


def test_a_removed_trl_key_the_project_declares_is_a_note_naming_it(tmp_path):
    with_sources = read_plan(simpo_checkout(tmp_path / "a"))
    found = [d for d in with_sources.diagnostics if d.key == "max_prompt_length"]
    assert [d.kind for d in found] == ["unread_key"], found
    assert "SimPOConfig (scripts/simpo_config.py:" in found[0].message
    without = read_plan(simpo_checkout(tmp_path / "b", with_sources=False))  # the same recipe alone: TRL's removal
    assert [d.kind for d in without.diagnostics if d.key == "max_prompt_length"] == ["deprecated_key"]


def test_a_typo_is_still_a_warning_beside_project_sources(tmp_path):
    config = simpo_checkout(tmp_path)
    config.write_text(config.read_text() + "learnig_rate: 1.0e-6\n")
    d = next(d for d in read_plan(config).diagnostics if d.key == "learnig_rate")
    assert d.kind == "unknown_key" and d.suggestion == "learning_rate"


def test_only_dataclasses_count_and_bad_files_are_skipped(tmp_path):
    (tmp_path / "args.py").write_text(
        "import dataclasses\nfrom dataclasses import dataclass\n\n"
        "@dataclasses.dataclass(frozen=True)\nclass A:\n    alpha: int = 1\n\n"
        "class NotData:\n    beta: int = 2\n\n"
        "@dataclass\nclass B:\n    gamma: float = 0.5\n    def f(self):\n        delta: int = 3\n")
    (tmp_path / "broken.py").write_text("@dataclass\nclass (:\n")
    os.mkfifo(tmp_path / "fifo.py")  # never opened: reading a FIFO would wait for a writer forever
    names = {f.name for f in dataclass_fields(tmp_path / "args.py", tmp_path)}
    assert names == {"alpha", "gamma"}
    assert dataclass_fields(tmp_path / "broken.py", tmp_path) == []
    assert dataclass_fields(tmp_path / "fifo.py", tmp_path) == []


LF_CONFIG = ("model_name_or_path: Qwen/Qwen3-8B\nstage: sft\ndo_train: true\nfinetuning_type: lora\ndataset: alpaca_en\n"
             "template: qwen3\ncutoff_len: 2048\nlvm_loss: mse\n")


def test_a_fork_of_the_framework_without_its_sources_gets_notes_for_its_own_keys(tmp_path):
    """A repository whose setup.py names it llamafactory is LLaMA-Factory itself (a fork): a key no release has may
    be an argument of that copy, so it is a note. With the copy's hparams dataclasses beside the config, those decide,
    and a key they lack stays SP401 (LLaMA-Factory's parser refuses it)."""
    root = tmp_path / "fork"
    root.mkdir()
    (root / "setup.py").write_text("from setuptools import setup\nsetup(\n    name=\"llamafactory\",\n    version='0.9.5')\n")
    config = root / "train.yaml"
    config.write_text(LF_CONFIG)
    d = next(d for d in read_plan(config).diagnostics if d.key == "lvm_loss")
    assert d.kind == "unread_key" and "setup.py:3 names it 'llamafactory'" in d.message
    hparams = root / "src" / "llamafactory" / "hparams"
    hparams.mkdir(parents=True)
    (hparams / "data_args.py").write_text("from dataclasses import dataclass\n\n\n@dataclass\nclass DataArguments:\n"
                                          "    template: str = None\n")
    from seqprof.config import project_fields as module
    module._declarations_under.cache_clear()  # the scan and the walk are cached per root: the sources arrived after
    module._python_files_under.cache_clear()  # the first read
    d = next(d for d in read_plan(config).diagnostics if d.key == "lvm_loss")
    assert d.kind == "unknown_key"


def test_a_project_of_its_own_keeps_sp401(tmp_path):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = \"my-trainer\"\ndependencies = [\"llamafactory==0.9.5\"]\n")
    config = root / "train.yaml"
    config.write_text(LF_CONFIG)
    assert next(d for d in read_plan(config).diagnostics if d.key == "lvm_loss").kind == "unknown_key"


YUMEIO = Path(__file__).parent / "data" / "corpus" / "Yumeio__qwen3-medev-finetune"


def yumeio_checkout(root: Path, reader: str | None = None) -> Path:
    """Yumeio/qwen3-medev-finetune's layout (Apache-2.0, copied in tests/data/corpus): arguments.py's
    `TrainingArguments(HfTrainingArguments)` re-declares warmup_ratio; transformers>=4.48.0 installs 5.25."""
    (root / ".git").mkdir(parents=True)
    for name in ("arguments.py", "requirements.txt"):
        shutil.copy(YUMEIO / name, root / name)
    if reader is not None:
        (root / "train.py").write_text(reader)
    config = root / "configs" / "lora.yaml"
    config.parent.mkdir()
    shutil.copy(YUMEIO / "configs__lora.yaml", config)
    return config


def test_a_dropped_training_argument_a_subclass_re_declares_is_still_lost(tmp_path):
    """The subclass keeps HfArgumentParser from refusing warmup_ratio, but nothing reads it and transformers 5.15+
    does not: the removal stands, and says why. Where the project's own code reads it, it is the project's."""
    source = (YUMEIO / "arguments.py").read_text()
    fields = project_fields(yumeio_checkout(tmp_path / "probe"))
    assert fields["warmup_ratio"].bases == ("transformers.TrainingArguments",)  # through `as HfTrainingArguments`
    assert "from transformers import TrainingArguments as HfTrainingArguments" in source
    assert fields["warmup_ratio"].extends_training_arguments()
    assert not fields["lora_r"].extends_training_arguments()  # LoraArgs is a plain dataclass

    lost = [d for d in read_plan(yumeio_checkout(tmp_path / "a")).diagnostics if d.key == "warmup_ratio"]
    assert [d.kind for d in lost] == ["removed_key"] and "re-declares it on transformers' TrainingArguments" in \
        lost[0].message
    read = read_plan(yumeio_checkout(tmp_path / "b", "def steps(args):\n    return args.warmup_ratio * 100\n"))
    assert [d.kind for d in read.diagnostics if d.key == "warmup_ratio"] == ["unread_key"]


CW_AXOLOTL = Path(__file__).parent / "data" / "corpus" / "tcapelle__cw-axolotl"


def test_keys_a_launcher_reads_from_an_axolotl_config_are_its_own(tmp_path):
    """tcapelle/cw-axolotl's launcher reads image/gpu/cpu/memory and pops them before axolotl (whose pydantic models
    drop extra keys) sees the file. Here its launcher is reduced to three ways of reading a config mapping; `cpu` only
    appears as torch's `.cpu()`, which reads no config, so it stays an unknown key, as does a typo."""
    (tmp_path / ".git").mkdir()
    shutil.copy(CW_AXOLOTL / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "launch.py").write_text(
        "def resources(config):\n"
        "    image = config.pop('image', None)\n"
        "    if 'gpu' in config:\n"
        "        return image, config['gpu'], config.get(\"memory\")\n"
        "def offload(t):\n"
        "    return t.cpu()\n")
    config = tmp_path / "sft.yaml"
    config.write_text((CW_AXOLOTL / "axolotl__sft_config.yaml").read_text().rstrip("\n") + "\nlerning_rate: 0.0001\n")
    kinds = {d.key: (d.kind, d.message) for d in read_plan(config).diagnostics
             if d.key in ("image", "gpu", "memory", "cpu", "lerning_rate")}
    assert {k: kind for k, (kind, _) in kinds.items()} == {
        "image": "unread_key", "gpu": "unread_key", "memory": "unread_key", "cpu": "unknown_key",
        "lerning_rate": "unknown_key"}
    assert "launch.py:2" in kinds["image"][1] and "launch.py:3" in kinds["gpu"][1]


def test_a_json_parsed_by_plain_hfargumentparser_over_the_project_s_classes_is_hf_without_any_pin(tmp_path):
    """haroldrubio/autoregkd's cli.py parses cli_files/test_hf.json with HfArgumentParser((ModelArguments,
    DataTrainingArguments, DistilArguments)).parse_json_file and never imports TRL; the project pins nothing. Its
    dataset_name, model_name_or_path and loss_type are TRL-like names, but its own classes declare them: transformers'
    TrainingArguments file, its own keys notes naming their class. Without the script, the keys alone say TRL."""
    real = Path(__file__).parent / "data" / "corpus" / "haroldrubio__autoregkd"

    def project(folder: Path, sources: bool) -> Path:
        (folder / ".git").mkdir(parents=True)
        config = folder / "cli_files" / "test_hf.json"
        config.parent.mkdir()
        shutil.copy(real / "cli_files__test_hf.json", config)
        for flat in ("src__autoregkd__interface__cli.py", "src__autoregkd__utils__custom_args.py") if sources else ():
            target = folder / flat.replace("__", "/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(real / flat, target)
        return config

    assert read_plan(project(tmp_path / "bare", False)).dialect == "trl"
    plan = read_plan(project(tmp_path / "sources", True))
    assert plan.dialect == "hf"
    loss = next(d for d in plan.diagnostics if d.key == "loss_type")
    assert loss.kind == "unread_key" and "ModelArguments (src/autoregkd/utils/custom_args.py:" in loss.message
    assert "not of transformers' classes" in loss.message


def test_a_base_file_key_the_fork_s_loader_pops_by_a_named_constant_is_its_own(tmp_path):
    """wwwbq/LLMfactory (a renamed LLaMA-Factory fork) loads its YAMLs with its own mmengine-style loader:
    extras/config.py sets BASE_KEY = '_base_' and pops it to merge the named base file, where do_train is set.
    So `_base_` is a note naming that line, and the file is not told it trains nothing (the base may set do_train);
    the same file in a project without that loader gets the unknown-key warning LLaMA-Factory's parser earns."""
    real = Path(__file__).parent / "data" / "corpus" / "wwwbq__LLMfactory"

    def project(folder: Path, loader: bool) -> Path:
        (folder / ".git").mkdir(parents=True)
        config = folder / "configs" / "train" / "qwen_lora_sft.yaml"
        config.parent.mkdir(parents=True)
        shutil.copy(real / "configs__train__qwen_lora_sft.yaml", config)
        for flat in [f.name for f in real.glob("src__LLMfactory__*.py")] if loader else ():
            target = folder / flat.replace("__", "/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(real / flat, target)
        return config

    forked = read_plan(project(tmp_path / "fork", True))
    base = next(d for d in forked.diagnostics if d.key == "_base_")
    line = next(i for i, text in enumerate((real / "src__LLMfactory__extras__config.py").read_text().splitlines(), 1)
                if text.startswith("BASE_KEY"))
    assert base.kind == "unread_key" and base.message.endswith(f"(src/LLMfactory/extras/config.py:{line})")
    assert "training_not_requested" not in forked.settings
    bare = read_plan(project(tmp_path / "bare", False))
    assert next(d for d in bare.diagnostics if d.key == "_base_").kind == "unknown_key"


def test_a_preference_recipe_whose_sft_key_is_the_project_s_own_field_is_dpo_and_a_redeclared_field_is_no_break(
        tmp_path):
    """martimfasantos/CustomPOs-for-SLMs parses its recipes with H4ArgumentParser over its CustomPOConfig
    (TrainingArguments subclass, algorithms/custom_po_config.py), which declares beta, reference_free and
    max_seq_length: max_seq_length is no sign of SFTConfig, so beta and reference_free make it a DPO-family recipe.
    CustomPOConfig re-declares warmup_ratio too: the parser takes it on every transformers release, so the upgrade
    that drops it from TrainingArguments loses the setting without breaking the run. As published, though, the
    ratio does nothing already: CustomPOConfig defaults warmup_steps to 150, which transformers 4.38 uses over any
    ratio (SP450), and the upgrade warning is moot; with `warmup_steps: 0` the ratio is live again."""
    from corpus_layout import lay_out

    from seqprof.lint.run import LintOptions, lint_paths

    tree = lay_out(tmp_path, only="martimfasantos__CustomPOs-for-SLMs")
    config = tree / ("martimfasantos__CustomPOs-for-SLMs/"
                     "training_configs__eurollm-1.7b__mt__eurollm-1.7b-it-mt-slic-dpo.yaml")
    assert "max_seq_length" in config.read_text() and "beta" in config.read_text()
    assert read_plan(config).get("trainer") == "dpo"
    [dead] = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "warmup_ratio"]
    assert dead.code == "SP450" and dead.line == 53
    assert "CustomPOConfig (algorithms/custom_po_config.py:54) defaults warmup_steps to 150" in dead.message
    config.write_text(config.read_text().rstrip("\n") + "\nwarmup_steps: 0\n")
    [found] = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "warmup_ratio"]
    assert found.code == "SP402"
    assert "breaks" not in found.message and "the setting is lost on that upgrade" in found.message
    assert "CustomPOConfig (algorithms/custom_po_config.py:56) re-declares it" in found.message


def test_a_repository_holding_axolotl_s_own_source_reads_its_own_dataset_fields(tmp_path):
    """selalipop/axolotl is a fork whose stored copy has no setup.py or pyproject.toml, only the package source:
    src/axolotl/utils/schemas/datasets.py declares SFTDataset.train_only_last_turn, which no axolotl release has.
    The repository is axolotl's own copy, so its dataset entries are not judged against 0.19.0; without that
    source beside it the key is one no dataset model has."""
    from corpus_layout import lay_out

    from seqprof.config.project_fields import framework_fork

    fork = "selalipop__axolotl"
    tree = lay_out(tmp_path / "fork", only=fork)
    config = tree / f"{fork}/local-run__26b-a4b-moe-nvfp4-lora.yaml"
    assert "train_only_last_turn" in config.read_text()
    assert framework_fork(config).package == "axolotl"
    assert not [d for d in read_plan(config).diagnostics if d.key.endswith("train_only_last_turn")]
    bare = lay_out(tmp_path / "bare", only=fork)  # a second copy: what a path's project is, is read once
    shutil.rmtree(bare.root / fork / "src")
    config = bare / f"{fork}/local-run__26b-a4b-moe-nvfp4-lora.yaml"
    assert framework_fork(config) is None
    [gone] = [d for d in read_plan(config).diagnostics if d.key.endswith("train_only_last_turn")]
    assert gone.kind == "unknown_key"


# --- stop 44: a project's own rename map, a file that starts with a byte-order mark ----------------------------

def _findings(path, code):
    from seqprof.lint.run import LintOptions, lint_paths

    report = lint_paths([path], LintOptions()).files[0]
    return {f.key: f.message for f in report.findings if f.code == code}


def test_a_project_rename_map_makes_a_moved_key_a_note(tmp_path):
    """SeanYHan888/SimPO's H4ArgumentParser maps evaluation_strategy to eval_strategy before parse_dict, so the
    key transformers 4.57.6 (its uv.lock) no longer has reaches it under its new name."""
    from corpus_layout import lay_out

    folder = "SeanYHan888__SimPO"
    name = f"{folder}/training_configs__mistral-7b-base-simpo.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    notes = _findings(config, "SP407")
    assert "alignment/configs.py:40" in notes["evaluation_strategy"]
    assert "evaluation_strategy" not in _findings(config, "SP408")

    config = lay_out(tmp_path / "no_alias", only=folder) / name
    module = config.parents[1] / "alignment" / "configs.py"
    module.write_text(module.read_text().replace('"evaluation_strategy": "eval_strategy",', ""))
    assert "evaluation_strategy" in _findings(config, "SP408")


def test_a_project_file_that_starts_with_a_byte_order_mark_is_read(tmp_path):
    """itxaiohanglover/qwen_qlora's component/argument.py starts with a UTF-8 byte-order mark; its QLoRAArguments
    declares lora_rank, which the config sets."""
    from corpus_layout import lay_out

    folder = "itxaiohanglover__qwen_qlora"
    config = lay_out(tmp_path, only=folder) / f"{folder}/config__qwen-14b-qlora.json"
    module = config.parents[1] / "component" / "argument.py"
    assert module.read_bytes().startswith(b"\xef\xbb\xbf")
    assert "QLoRAArguments" in _findings(config, "SP407")["lora_rank"]
