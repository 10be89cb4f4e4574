"""Keys a project's own script hands on to transformers / TRL argument classes (seqprof.config.project_calls,
seqprof.config.dialects.forwarded), on ThuanNaN/RLHF-Native-Hugging-Face's real files (Apache-2.0; copied in
tests/data/corpus with their commit).

Its src/sft/train_sft.py loads configs/sft.yaml with yaml.safe_load and builds
`TrainingArguments(warmup_ratio=cfg.get("warmup_ratio", 0.0), ...)`; requirements.txt allows transformers>=4.44,
so a fresh install gets 5.25, whose TrainingArguments has no warmup_ratio (5.15 removed it): a TypeError there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from seqprof.config.read import read_plan
from seqprof.config.key_history import KeyHistory
from seqprof.config.pins import parse_spec
from seqprof.config.versions import pins_beside
from seqprof.lint.run import LintOptions, lint_paths

REPO = Path(__file__).parent / "data" / "corpus" / "ThuanNaN__RLHF-Native-Hugging-Face"
SCRIPT = "src/sft/train_sft.py"


def checkout(root: Path, script: str | None = None, config: str | None = None) -> Path:
    """The repository's layout: .git, requirements.txt, src/sft/train_sft.py, configs/sft.yaml (texts optional)."""
    (root / ".git").mkdir(parents=True)
    (root / "src" / "sft").mkdir(parents=True)
    (root / "configs").mkdir()
    shutil.copy(REPO / "requirements.txt", root / "requirements.txt")
    (root / SCRIPT).write_text(script if script is not None else (REPO / "src__sft__train_sft.py").read_text())
    path = root / "configs" / "sft.yaml"
    path.write_text(config if config is not None else (REPO / "configs__sft.yaml").read_text())
    return path


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _findings(config: Path, key: str) -> list:
    report = lint_paths([config], LintOptions()).files[0]
    return [f for f in report.findings if f.key == key and f.severity in ("warning", "error")]


def test_a_key_the_script_hands_to_training_arguments_is_judged_there(tmp_path):
    config = checkout(tmp_path)
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"  # the script, not HfArgumentParser, reads the file
    script = (tmp_path / SCRIPT).read_text()
    removal = KeyHistory.load().removal("transformers", "warmup_ratio", ["TrainingArguments"], pins_beside(str(config)))
    assert removal is not None and removal.verdict == "error"  # the independent reading of the released wheels
    [found] = _findings(config, "warmup_ratio")
    assert (found.code, found.severity) == ("SP408", "error")
    assert found.line == _line_of(config.read_text(), "warmup_ratio:")
    where = f"{SCRIPT}:{_line_of(script, 'warmup_ratio=')}"
    assert f"hands 'warmup_ratio' to TrainingArguments ({where})" in found.message
    assert found.fix.startswith(f"in the project's code ({where})")


def test_a_key_the_script_reads_under_another_name_is_judged_by_the_keyword(tmp_path):
    script = (REPO / "src__sft__train_sft.py").read_text().replace('cfg.get("warmup_ratio"', 'cfg.get("warmup"')
    config = checkout(tmp_path, script, (REPO / "configs__sft.yaml").read_text().replace("warmup_ratio:", "warmup:"))
    [found] = _findings(config, "warmup")
    assert "hands 'warmup' to TrainingArguments as 'warmup_ratio'" in found.message


def test_a_project_class_of_the_same_name_is_not_transformers(tmp_path):
    script = (REPO / "src__sft__train_sft.py").read_text().replace(
        "from transformers import TrainingArguments, set_seed",
        "from transformers import set_seed\nfrom src.args import TrainingArguments")
    assert _findings(checkout(tmp_path, script), "warmup_ratio") == []


def test_a_pinned_release_that_still_takes_the_keyword_gives_the_upgrade_warning(tmp_path):
    config = checkout(tmp_path)
    plan = read_plan(config, versions="transformers==4.44.2")
    [found] = [d for d in plan.diagnostics if d.key == "warmup_ratio"]
    assert found.kind == "renamed_key"
    assert found.handed_on == f"{SCRIPT}:{_line_of((tmp_path / SCRIPT).read_text(), 'warmup_ratio=')}"
    assert "dropped by a release after the pinned one" in found.message and "transformers 5.15 removes it" in found.message
    assert KeyHistory.load().removal("transformers", "warmup_ratio", ["TrainingArguments"],
                                     parse_spec("transformers==4.44.2")).verdict == "warning"


def test_a_second_script_that_does_not_hand_the_key_on_makes_it_unclear(tmp_path):
    """Two scripts read nearly the same keys (an SFT and a DPO one); only one passes warmup_ratio on: which one runs
    this file is unknown, so nothing is said."""
    config = checkout(tmp_path)
    other = (tmp_path / SCRIPT).read_text().replace('        warmup_ratio=cfg.get("warmup_ratio", 0.0),\n', "")
    assert other != (tmp_path / SCRIPT).read_text()
    (tmp_path / "src" / "sft" / "train_other.py").write_text(other)
    assert _findings(config, "warmup_ratio") == []
    assert _findings(config, "evaluation_strategy")  # both hand this one on


def test_a_dict_spread_into_the_class_is_followed(tmp_path):
    script = (REPO / "src__sft__train_sft.py").read_text()
    start = script.index("TrainingArguments(")
    spread = script[:start] + "TrainingArguments(**dict(" + script[start + len("TrainingArguments("):]
    end = spread.index(")\n", spread.index("TrainingArguments(**dict("))
    spread = spread[:end] + "))\n" + spread[end + 2:]
    compile(spread, SCRIPT, "exec")  # still Python
    [found] = _findings(checkout(tmp_path, spread), "warmup_ratio")
    assert found.code == "SP408"


CLMBOT = Path(__file__).parent / "data" / "corpus" / "donaghhorgan__clmbot"


def test_a_section_spread_into_the_class_hands_on_each_of_its_keys(tmp_path):
    """donaghhorgan/clmbot (MIT): clmbot/train/pipeline/pipeline.py builds `TrainingArguments(**config.training_args)`
    from train.yml's `training_args:` section; its Pipfile pins transformers==4.10.0, which still has
    evaluation_strategy (4.51 removes it) and has no eval_strategy yet (4.41 adds it)."""
    (tmp_path / ".git").mkdir()
    for flat in ("Pipfile", "train.yml", "clmbot__train__pipeline__pipeline.py", "clmbot__train__config.py",
                 "clmbot__util__config.py"):
        target = tmp_path / flat.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CLMBOT / flat, target)
    config = tmp_path / "train.yml"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    [found] = [f for f in report.findings if f.key == "training_args.evaluation_strategy"]
    assert found.code == "SP402" and found.severity == "warning"
    assert found.line == _line_of(config.read_text(), "evaluation_strategy:")
    script = (tmp_path / "clmbot/train/pipeline/pipeline.py").read_text()
    assert f"(clmbot/train/pipeline/pipeline.py:{_line_of(script, '**config.training_args')})" in found.message
    assert "transformers==4.10.0 (Pipfile:" in found.message and "rename it on that upgrade, not before" in found.message
    assert not [f for f in report.findings if f.key == "training_args.num_train_epochs"]  # a field in every release


# --- TEN-Sum/TEN (tests/data/corpus/TEN-Sum__TEN, its files at their checkout paths) ---------------------------
# scripts/utils.py read_args_dpo() declares each key as an argparse option (`add_argument('--max_prompt_length')`)
# and copies the yaml.safe_load'ed recipe onto the namespaces with setattr; scripts/run_dpo.py star-imports utils
# (`from utils import *`, where utils imports DPOConfig from trl) and builds DPOConfig(max_prompt_length=...).
TEN = Path(__file__).parent / "data" / "corpus" / "TEN-Sum__TEN"


def ten_checkout(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    for flat in ("scripts__utils.py", "scripts__run_dpo.py", "scripts__run_sft.py", "requirements.txt",
                 "recipes__config_dpo.yaml"):
        target = root / flat.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TEN / flat, target)
    return root / "recipes" / "config_dpo.yaml"


def test_a_recipe_copied_onto_the_project_s_argparse_options_is_its_own(tmp_path):
    config = ten_checkout(tmp_path)
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"  # no TrlParser reads it: utils.py's own argparse options do
    # model_id and peft's target_modules are names of its own, which TrlParser would refuse
    assert any(note.startswith("model_id, target_modules: the project's own names") for note in report.notes)
    from seqprof.config.dialects.own_schema import read_as_a_dict

    assert "max_prompt_length" in read_as_a_dict(str(config), read_plan(config).raw)  # and utils.py reads it


def test_a_class_imported_through_a_star_import_of_the_project_s_module_is_the_framework_s(tmp_path):
    """run_dpo.py names DPOConfig only through `from utils import *`: the hand-off is still judged (trl==0.11.2
    still has max_prompt_length, trl 0.29 drops it from DPOConfig: a warning naming the call)."""
    config = ten_checkout(tmp_path)
    script = (tmp_path / "scripts" / "run_dpo.py").read_text()
    [found] = _findings(config, "max_prompt_length")
    where = f"scripts/run_dpo.py:{_line_of(script, 'max_prompt_length=')}"
    assert found.severity == "warning" and f"hands 'max_prompt_length' to DPOConfig ({where})" in found.message
    history = KeyHistory.load()  # the independent reading of the wheels: the pinned release has it, the newest not
    having = history.having("trl", "max_prompt_length", ["DPOConfig"])
    assert "0.11.4" in having and history.newest("trl") not in having
    # where the star-imported module takes DPOConfig from elsewhere, it is not trl's class: nothing is claimed
    other = ten_checkout(tmp_path / "b")
    utils = tmp_path / "b" / "scripts" / "utils.py"
    utils.write_text(utils.read_text().replace("from trl import", "from my_trl import"))
    assert not _findings(other, "max_prompt_length")


def test_an_argparse_option_spelt_with_dashes_is_the_same_key(tmp_path):
    """`add_argument('--max-prompt-length')` fills args.max_prompt_length (argparse's dest): the key is declared."""
    from seqprof.config.project_fields import project_reads

    config = ten_checkout(tmp_path)
    utils = tmp_path / "scripts" / "utils.py"
    utils.write_text(utils.read_text().replace("'--max_prompt_length'", "'--max-prompt-length'"))
    where = project_reads(config, ["max_prompt_length"])["max_prompt_length"]
    assert where == f"scripts/utils.py:{_line_of(utils.read_text(), '--max-prompt-length')}"


def test_a_section_spread_through_a_local_name_is_the_config_s_to_fix(tmp_path):
    """morettt/Chatbot-Trainer's finetune.py: `training_args = kwargs.get('training_args')`, then
    `Seq2SeqTrainingArguments(**training_args)`: each key of the YAML's training_args reaches the class under its own
    name, so a renamed one is renamed in the config (no pins: judged at the newest transformers, which lacks
    evaluation_strategy)."""
    source = Path(__file__).parent / "data" / "corpus" / "morettt__Chatbot-Trainer"
    (tmp_path / ".git").mkdir()
    for name in ("finetune.py", "lora.yaml"):
        shutil.copy(source / name, tmp_path / name)
    config = tmp_path / "lora.yaml"
    history = KeyHistory.load()
    assert history.newest("transformers") not in history.having("transformers", "evaluation_strategy",
                                                                  ["TrainingArguments"])
    [found] = _findings(config, "training_args.evaluation_strategy")
    script = (tmp_path / "finetune.py").read_text()
    where = f"finetune.py:{_line_of(script, 'Seq2SeqTrainingArguments(**training_args)')}"
    assert found.code == "SP402" and f"spreads 'training_args' into TrainingArguments ({where})" in found.message
    assert found.line == _line_of(config.read_text(), "evaluation_strategy:")
    assert found.fix == "rename 'training_args.evaluation_strategy' to 'eval_strategy'"



# --- epmresearch/vlm-safety-reasoning and javierdejesusda/YuhoLens (tests/data/corpus, at their checkout paths) ----
def _laid_out(root: Path, folder: str) -> Path:
    """The corpus folder's files at their repository paths under *root*, with a .git marker."""
    import json

    sources = json.loads((Path(__file__).parent / "data" / "corpus" / "SOURCES.json").read_text())
    (root / ".git").mkdir(parents=True)
    for name, source in sources.items():
        if name.startswith(folder + "/"):
            target = root / source["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(Path(__file__).parent / "data" / "corpus" / name, target)
    return root


def test_a_dict_that_is_not_spread_into_the_class_hands_nothing_on(tmp_path):
    """models/grpo_trainer.py builds `GRPOConfig(**grpo_config_kwargs)` and also writes
    `sft_cfg["max_seq_length"] = cfg["max_seq_length"]` into the model loader's dict: only the first is GRPOConfig's."""
    root = _laid_out(tmp_path, "epmresearch__vlm-safety-reasoning")
    script = (root / "models/grpo_trainer.py").read_text()
    assert 'sft_cfg["max_seq_length"] = cfg["max_seq_length"]' in script and "GRPOConfig(**grpo_config_kwargs)" in script
    config = root / "configs" / "grpo.yaml"
    assert _findings(config, "max_seq_length") == []
    [found] = _findings(config, "max_prompt_length")  # an entry of the dict it does spread
    assert f"hands 'max_prompt_length' to GRPOConfig (models/grpo_trainer.py:{_line_of(script, 'max_prompt_length=')})" \
        in found.message


def test_a_filtered_copy_of_a_dict_is_followed_to_the_dict(tmp_path):
    """src/yuholens/training/sft.py fills `candidate_kwargs`, keeps the keys SFTConfig's signature has in
    `sft_kwargs = {k: v for k, v in candidate_kwargs.items() if k in supported}` and calls SFTConfig(**sft_kwargs)."""
    root = _laid_out(tmp_path, "javierdejesusda__YuhoLens")
    script = (root / "src/yuholens/training/sft.py").read_text()
    line = _line_of(script, '"group_by_length":')
    [found] = _findings(root / "configs" / "sft.yaml", "group_by_length")
    assert f"(src/yuholens/training/sft.py:{line})" in found.message


def test_a_key_of_a_section_the_script_reads_into_a_local_is_handed_on(tmp_path):
    """hangcao87/FractureAgent's train_sft.py binds `t = cfg["train"]` and builds SFTConfig(warmup_ratio=
    t["warmup_ratio"], max_seq_length=t["max_seq_length"]); requirements.txt allows trl>=0.12, so a fresh install
    gets trl 1.16 on transformers 5.25: SFTConfig has no max_seq_length (trl 0.20) and no warmup_ratio (5.15)."""
    root = _laid_out(tmp_path, "hangcao87__FractureAgent")
    script = (root / "fractureagent/train/train_sft.py").read_text()
    assert 't = cfg["train"]' in script
    config = root / "configs" / "sft_qlora.yaml"
    found = {f.key: f for f in lint_paths([config], LintOptions()).files[0].findings}
    for key, keyword in (("train.max_seq_length", "max_seq_length="), ("train.warmup_ratio", "warmup_ratio=")):
        assert found[key].code == "SP408" and found[key].line == _line_of(config.read_text(), key.split(".")[1] + ":")
        assert f"hands '{key}' to SFTConfig (fractureagent/train/train_sft.py:{_line_of(script, keyword)})" \
            in found[key].message


def test_a_section_key_read_out_of_another_section_is_not_handed_on(tmp_path):
    """jdpsc/tech-news-rag: configs.py builds SFTConfig(max_seq_length=training_config["max_seq_length"]) with
    training_config=config["training"]; the file's max_seq_length sits under model:, so that read is not it."""
    root = _laid_out(tmp_path, "jdpsc__tech-news-rag")
    config = root / "training_pipeline" / "configs" / "training_config.yaml"
    assert "  max_seq_length: 1024" in config.read_text()
    keys = {f.key for f in lint_paths([config], LintOptions()).files[0].findings}
    assert "training.evaluation_strategy" in keys and "model.max_seq_length" not in keys


def test_a_project_that_keeps_only_the_class_parameters_loses_a_removed_key_without_an_error(tmp_path):
    """yhj137/PianistTransformer: src/train/sft.py passes its JSON through filter_valid_args(cfg, TrainingArguments),
    which keeps the keys inspect.signature names. On transformers 5 (installed here) that drops logging_dir without a
    word, so the finding says the value is lost, not that the run is refused. overwrite_output_dir, dropped the same
    way, was never read by the Trainer, and nothing in the project reads it: a note that removing it changes
    nothing."""
    import inspect

    from transformers import TrainingArguments

    from seqprof.config.read import read_plan

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("transformers==4.54.0\n")
    (root / "src" / "utils").mkdir(parents=True)
    (root / "src" / "utils" / "func.py").write_text(
        "import inspect\n\ndef filter_valid_args(arg_dict, class_type):\n"
        "    valid_keys = inspect.signature(class_type).parameters.keys()\n"
        "    return {k: v for k, v in arg_dict.items() if k in valid_keys}\n")
    (root / "src" / "train").mkdir()
    (root / "src" / "train" / "sft.py").write_text(
        "import argparse, json\nfrom transformers import TrainingArguments\nfrom src.utils.func import filter_valid_args\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--config', default='configs/sft_config.json')\n"
        "cfg = json.load(open(parser.parse_args().config))\n"
        "args = TrainingArguments(**filter_valid_args(cfg, TrainingArguments))\n")
    (root / "configs").mkdir()
    config = root / "configs" / "sft_config.json"
    config.write_text('{"output_dir": "out", "per_device_train_batch_size": 4, "logging_dir": "logs", '
                      '"overwrite_output_dir": true}\n')
    parameters = inspect.signature(TrainingArguments).parameters
    assert "logging_dir" not in parameters and "overwrite_output_dir" not in parameters  # what the filter drops
    found = {d.key: d for d in read_plan(config).diagnostics}
    assert "dropped without an error (src/train/sft.py:7 keeps only TrainingArguments' parameters)" \
        in found["logging_dir"].message and found["logging_dir"].kind != "unread_key"
    assert found["overwrite_output_dir"].kind == "unread_key"
    assert "removing it changes nothing" in found["overwrite_output_dir"].message
    (root / "src" / "train" / "sft.py").write_text(  # the class built straight from the file: refused, as before
        "import argparse, json\nfrom transformers import TrainingArguments\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--config', default='configs/sft_config.json')\n"
        "args = TrainingArguments(**json.load(open(parser.parse_args().config)))\n")
    found = [d for d in read_plan(config).diagnostics if d.key in ("logging_dir", "overwrite_output_dir")]
    assert len(found) == 2 and not any("without an error" in d.message for d in found)


def test_a_section_unpacked_with_others_and_spread_is_judged_with_its_numbers_as_yaml_loads_them(tmp_path):
    """boostcampaitech3's arguments.py loads configs/training_args.yaml with yaml.load, unpacks
    `training_arguments, model_arguments, data_arguments = configs['TrainingArguments'], ...` and builds
    TrainingArguments(**training_arguments), beside install/install_requirements.sh's transformers==4.5.0. The
    section's `learning_rate: 2e-5` is the text '2e-5' to PyYAML, which the class keeps: an error. Its
    evaluation_strategy, which 4.5.0 still has, is the upgrade warning. Written 2.0e-5, nothing is said of it."""
    real = Path(__file__).parent / "data" / "corpus" / "boostcampaitech3__level2-mrc-level2-nlp-08"

    def project(folder: Path, text: str) -> Path:
        (folder / ".git").mkdir(parents=True)
        (folder / "install").mkdir()
        shutil.copy(real / "install__install_requirements.sh", folder / "install" / "install_requirements.sh")
        shutil.copy(real / "arguments.py", folder / "arguments.py")
        config = folder / "configs" / "training_args.yaml"
        config.parent.mkdir()
        config.write_text(text)
        return config

    written = (real / "configs__training_args.yaml").read_text()
    found = {d.key: d for d in read_plan(project(tmp_path / "as_written", written)).diagnostics}
    text = found["TrainingArguments.learning_rate"]
    assert text.kind == "invalid_value" and "'2e-5'" in text.message and "arguments.py:18" in text.message
    assert text.line == next(i for i, line in enumerate(written.splitlines(), 1) if "learning_rate" in line)
    assert "transformers==4.5.0" in found["TrainingArguments.evaluation_strategy"].message
    fixed = read_plan(project(tmp_path / "fixed", written.replace("2e-5", "2.0e-5"))).diagnostics
    assert not [d for d in fixed if d.key == "TrainingArguments.learning_rate"]


def test_the_names_a_filtered_copy_keeps_are_read_and_handed_on_under_their_own_names(tmp_path):
    """SujitRoy/LFM2.5-350M-Base's scripts/run_sft.py loads configs/sft_config.yaml with yaml.safe_load, keeps
    `{k: v for k, v in cfg.items() if k in supported}` (a set literal of 19 names, warmup_ratio among them) and calls
    SFTConfig(**kwargs), after `kwargs["max_length"] = cfg.get("max_seq_length", 1024)`. The file is the project's
    own (every key is read or kept), warmup_ratio reaches SFTConfig under its own name (transformers>=5.15.0 lacks
    it: an error), and max_seq_length reaches it as max_length (no TRL rename finding)."""
    root = _laid_out(tmp_path, "SujitRoy__LFM2.5-350M-Base")
    script = (root / "scripts/run_sft.py").read_text()
    assert "if k in supported}" in script and 'kwargs["max_length"] = cfg.get("max_seq_length", 1024)' in script
    config = root / "configs" / "sft_config.yaml"
    assert read_plan(config).dialect == "unknown"
    report = lint_paths([config], LintOptions()).files[0]
    assert any("reads 26 of the file's 26 keys" in note for note in report.notes)
    found = {f.key: f for f in report.findings if f.severity in ("warning", "error")}
    assert set(found) == {"warmup_ratio"}
    assert found["warmup_ratio"].code == "SP408" and found["warmup_ratio"].severity == "error"
    # the keyword sits in the `supported` literal, where the code names it
    line = _line_of(script, '"warmup_ratio", ')
    assert f"hands 'warmup_ratio' to SFTConfig (scripts/run_sft.py:{line})" in found["warmup_ratio"].message


def test_a_filter_against_the_class_signature_keeps_no_names_of_its_own(tmp_path):
    """`{k: v for k, v in d.items() if k in supported}` with `supported = set(inspect.signature(SFTConfig)
    .parameters)` (YuhoLens) names no key: the kept names come only from a literal."""
    import ast

    from seqprof.config.project_fields import kept_names

    tree = ast.parse("supported = set(inspect.signature(SFTConfig).parameters)\n"
                     "listed = ('a', 'b')\n"
                     "x = {k: v for k, v in d.items() if k in supported}\n"
                     "y = {k: v for k, v in d.items() if k in listed and v is not None}\n"
                     "z = {k: v for k, v in d.items() if k not in listed}\n")
    comps = [n for n in ast.walk(tree) if isinstance(n, ast.DictComp)]
    assert [[c.value for c in kept_names(comp, tree)] for comp in comps] == [[], ["a", "b"], []]


def test_a_key_the_script_pops_before_the_spread_or_that_unsloth_takes_back_is_no_finding(tmp_path):
    """likebeans/Genesis-LLM spreads `training_args:` into TrainingArguments only after
    `d["eval_strategy"] = d.pop("evaluation_strategy")`: transformers 4.57.3 never gets the removed name. Without
    the pop it is the TypeError. AM-2304/gemma4-npc-it imports unsloth before `from trl import SFTConfig`: unsloth's
    patched SFTConfig takes max_seq_length again and copies it into max_length; imported after trl, it does not."""
    root = _laid_out(tmp_path / "pop", "likebeans__Genesis-LLM")
    config = root / "config" / "self_model_config" / "pretrain.yaml"
    assert not [d for d in read_plan(config).diagnostics if d.key.endswith("evaluation_strategy")]
    bare = _laid_out(tmp_path / "no_pop", "likebeans__Genesis-LLM")
    for script in bare.rglob("*.py"):
        script.write_text(script.read_text().replace('.pop("evaluation_strategy")', '["evaluation_strategy"]'))
    [removed] = [d for d in read_plan(bare / "config" / "self_model_config" / "pretrain.yaml").diagnostics
                 if d.key == "training_args.evaluation_strategy"]
    assert removed.kind == "removed_key" and "spreads 'training_args' into TrainingArguments" in removed.message

    root = _laid_out(tmp_path / "unsloth", "AM-2304__gemma4-npc-it")
    config = root / "configs" / "training_npc_it.yaml"
    assert not [d for d in read_plan(config).diagnostics if d.key == "data.max_seq_length"]
    late = _laid_out(tmp_path / "late", "AM-2304__gemma4-npc-it")
    script = late / "finetuning" / "train.py"
    text = script.read_text()
    assert "    from unsloth import FastModel\n" in text
    script.write_text("from trl import SFTConfig\n" + text)
    [removed] = [d for d in read_plan(late / "configs" / "training_npc_it.yaml").diagnostics
                 if d.key == "data.max_seq_length"]
    assert removed.kind == "removed_key" and "SFTConfig" in removed.message


def test_a_removed_key_set_off_that_the_project_filters_out_changes_nothing(tmp_path):
    """Firefly0237/Anima-Sherlock-agent's dpo.py hands the config's keys to DPOConfig only where
    supported_config_keys(DPOConfig) (getattr(cls, "__dataclass_fields__"), else inspect.signature(cls.__init__))
    has them, and raises only for the keys it lists as critical. generate_during_eval: false, gone from trl 1.8.0
    (its pin), is dropped and loses nothing: a note. max_prompt_length, which it lists as critical, stays an error;
    without the filter, generate_during_eval is the error it would be."""
    from corpus_layout import lay_out

    folder = "Firefly0237__Anima-Sherlock-agent"
    name = f"{folder}/configs__dpo.yaml"
    kinds = {d.key: d.kind for d in read_plan(lay_out(tmp_path / "as_published", only=folder) / name).diagnostics}
    assert kinds["generate_during_eval"] == "unread_key" and kinds["max_prompt_length"] == "removed_key"

    bare = lay_out(tmp_path / "unfiltered", only=folder)
    common = bare.root / folder / "src" / "anima" / "train" / "common.py"
    text = common.read_text()
    start = text.index("def supported_config_keys(")
    end = text.index("\ndef ", start + 1)
    common.write_text(text[:start] + "def supported_config_keys(config_cls):\n    return set()\n" + text[end:])
    kinds = {d.key: d.kind for d in read_plan(bare / name).diagnostics}
    assert kinds["generate_during_eval"] == "removed_key"


def test_peft_s_target_modules_beside_a_model_name_of_its_own_is_the_project_s_schema(tmp_path):
    """alinj4253-droid/qwen-tool-calling-sft's flat train_smoke.yaml names its model model_path and its LoRA
    modules target_modules (peft's LoraConfig name; TRL's ModelConfig and axolotl say lora_target_modules): its own
    script maps the file by hand, so no TRL key check applies (its max_seq_length is the project's). With TRL's
    names for both it reads as the TRL recipe it then looks like."""
    from corpus_layout import lay_out

    folder = "alinj4253-droid__qwen-tool-calling-sft"
    config = lay_out(tmp_path, only=folder) / f"{folder}/configs__train_smoke.yaml"
    report = lint_paths([config], LintOptions()).files[0]
    assert report.dialect == "unknown"
    assert any(note.startswith("model_path, target_modules: the project's own names") for note in report.notes)
    config.write_text(config.read_text().replace("model_path:", "model_name_or_path:")
                      .replace("target_modules:", "lora_target_modules:"))
    assert lint_paths([config], LintOptions()).files[0].dialect == "trl"


def test_a_script_that_builds_the_framework_s_command_line_from_a_third_of_the_keys_reads_the_file(tmp_path):
    """Drip-Data/DataEva's train.py reads 40 of training_config_full.yaml's 82 keys and hands them to
    `llamafactory-cli train` as flags (prepare_llamafactory_args): LLaMA-Factory never reads the file, so its key
    checks do not apply. Where the script passes the config file itself instead of flags, the same 40 reads are not
    enough to claim it."""
    from corpus_layout import lay_out

    folder = "Drip-Data__DataEva"
    name = f"{folder}/finetune__training_config_full.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert read_plan(config).dialect == "unknown"
    bare = lay_out(tmp_path / "no_flags", only=folder)
    script = bare.root / folder / "finetune" / "train.py"
    script.write_text(script.read_text().replace("'--", "'"))  # its options no longer flags
    assert read_plan(bare / name).dialect == "llamafactory"
