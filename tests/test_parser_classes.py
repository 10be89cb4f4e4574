"""Keys none of the classes a project's parser call fills declares (seqprof.config.parser_classes, SP438), checked
against the real HfArgumentParser where it can run here (transformers is installed; trl is not)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import transformers

from seqprof.config.read import read_plan

ARGS = '''from dataclasses import dataclass, field


@dataclass
class DataArguments:
    dataset_path: str = field(default="data.jsonl")
    max_seq_len: int = field(default=512)


@dataclass
class LongerDataArguments(DataArguments):
    packing_buffer: int = field(default=4)
'''

TRAIN = '''from transformers import HfArgumentParser, Trainer, TrainingArguments

from args import {cls}


def main():
    parser = HfArgumentParser(({cls}, TrainingArguments))
    data_args, training_args = parser.parse_yaml_file("config.yaml"{extra})
    Trainer(model=None, args=training_args).train()
'''

CONFIG = "output_dir: out\nlearning_rate: 1.0e-5\nper_device_train_batch_size: 4\nnum_train_epochs: 1\n" \
         "dataset_path: train.jsonl\nmax_seq_len: 1024\n"


def _project(root: Path, config: str, cls: str = "DataArguments", extra: str = "") -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "args.py").write_text(ARGS)
    (root / "train.py").write_text(TRAIN.format(cls=cls, extra=extra))
    (root / "requirements.txt").write_text(f"transformers=={transformers.__version__}\n")
    (root / "config.yaml").write_text(config)
    return root / "config.yaml"


def _real_parser_refuses(root: Path, cls: str) -> set[str]:
    """The keys the installed HfArgumentParser refuses, parsing the file into the project's own classes."""
    spec = importlib.util.spec_from_file_location(f"args_{root.name}", root / "args.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    parser = transformers.HfArgumentParser((getattr(module, cls), transformers.TrainingArguments))
    try:
        parser.parse_yaml_file(str(root / "config.yaml"))
    except ValueError as refused:
        return set(eval(str(refused).split(": ", 1)[1]))  # "Some keys are not used by the HfArgumentParser: [...]"
    return set()


def _undeclared(plan) -> dict[str, str]:
    return {d.key: d.message for d in plan.diagnostics if d.kind == "undeclared_key"}


@pytest.mark.parametrize("cls, added, refused", [
    ("DataArguments", "", set()),
    ("DataArguments", "packing_buffer: 8\nlearnig_rate: 0.1\n", {"packing_buffer", "learnig_rate"}),
    ("LongerDataArguments", "packing_buffer: 8\n", set()),  # inherited from the project's DataArguments
])
def test_the_keys_reported_are_the_keys_the_real_parser_refuses(tmp_path, cls, added, refused):
    root = tmp_path / f"p{len(added)}{cls}"
    config = _project(root, CONFIG + added, cls)
    assert _real_parser_refuses(root, cls) == refused
    found = _undeclared(read_plan(config))
    assert set(found) == refused - {"learnig_rate"}  # a near miss of a field stays SP401's did-you-mean
    for key in found:
        assert "train.py:7" in found[key] and "refuses it" in found[key]
    if "learnig_rate" in refused:
        assert [d.kind for d in read_plan(config).diagnostics if d.key == "learnig_rate"] == ["unknown_key"]


def test_a_parser_told_to_allow_extra_keys_drops_them(tmp_path):
    config = _project(tmp_path, CONFIG + "packing_buffer: 8\n", extra=", allow_extra_keys=True")
    assert "drops it without a word" in _undeclared(read_plan(config))["packing_buffer"]


def test_a_key_the_project_reads_by_hand_or_a_class_from_an_installed_package_is_no_finding(tmp_path):
    by_hand = _project(tmp_path / "by_hand", CONFIG + "packing_buffer: 8\n")
    train = by_hand.parent / "train.py"
    train.write_text(train.read_text() + '\n\nBUFFER = yaml.safe_load(open("config.yaml")).get("packing_buffer")\n')
    assert _undeclared(read_plan(by_hand)) == {}
    installed = _project(tmp_path / "installed", CONFIG + "packing_buffer: 8\n")
    train = installed.parent / "train.py"
    train.write_text(train.read_text().replace("from args import DataArguments", "from alignment import DataArguments"))
    (installed.parent / "args.py").unlink()
    plan = read_plan(installed)
    assert _undeclared(plan) == {}  # alignment's DataArguments is not in the checkout: its fields are unknown


def test_a_trl_recipe_matched_to_another_trainer_s_script_is_no_finding(tmp_path):
    """An SFT recipe in a checkout whose only parser script fills GRPOConfig is run by a script seqprof does not
    see (QingyangZhang/EMPO's corpus copy): its SFT keys are not the GRPO script's business."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("trl==0.18.2\ntransformers==4.52.3\n")
    (tmp_path / "grpo.py").write_text(
        "from trl import GRPOConfig, GRPOTrainer, ModelConfig, ScriptArguments, TrlParser\n\n"
        "parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))\n"
        "script_args, training_args, model_args = parser.parse_args_and_config()\n")
    sft = tmp_path / "sft.yaml"
    sft.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\npacking: true\n"
                   "dataset_text_field: text\nlearning_rate: 2.0e-5\n")
    plan = read_plan(sft)
    assert plan.get("trainer") == "sft" and _undeclared(plan) == {}
    grpo = tmp_path / "grpo.yaml"
    grpo.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/DeepMath\nnum_generations: 8\n"
                    "max_completion_length: 512\nlearning_rate: 1.0e-6\npacking: true\n")
    found = _undeclared(read_plan(grpo))
    assert list(found) == ["packing"] and "at trl 0.18 TrlParser drops" in found["packing"]


def _grpo_checkout(root: Path, vendored: bool) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("trl==0.18.2\ntransformers==4.52.3\n")
    (root / "grpo.py").write_text("from trl import GRPOConfig, GRPOTrainer, ModelConfig, ScriptArguments, TrlParser\n\n"
                                  "parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))\n"
                                  "script_args, training_args, model_args = parser.parse_args_and_config()\n")
    if vendored:
        (root / "trl").mkdir()
        (root / "trl" / "__init__.py").write_text("__version__ = '0.18.0'\n")
    recipe = root / "grpo.yaml"
    recipe.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/DeepMath\nnum_generations: 8\n"
                      "max_completion_length: 512\nlearning_rate: 1.0e-6\nhint_template: 'Hint: {hint}'\n")
    return recipe


def test_a_trl_copy_in_the_checkout_leaves_its_classes_unplaced(tmp_path):
    """ColdJeans21/open-r1 carries trl 0.18 under src/open_r1/trl/, first on sys.path when src/open_r1/grpo.py
    runs; its GRPOConfig adds hint_template, which no trl release has."""
    assert list(_undeclared(read_plan(_grpo_checkout(tmp_path / "installed", False)))) == ["hint_template"]
    assert _undeclared(read_plan(_grpo_checkout(tmp_path / "vendored", True))) == {}


def test_a_file_the_trl_cli_runs_is_not_the_script_s(tmp_path):
    """`trl grpo --config grpo.yaml` parses with the CLI's own classes and hands accelerate's keys (num_processes)
    to accelerate launch: the project's script is not what reads the file."""
    recipe = _grpo_checkout(tmp_path, False)
    (tmp_path / "train.sh").write_text("trl grpo --config grpo.yaml --num_processes 8\n")
    assert _undeclared(read_plan(recipe)) == {}



def test_an_upgrade_warning_about_another_trainer_s_field_becomes_sp438(tmp_path):
    """An SFT recipe setting max_prompt_length (liv-daliberti/LLMs-Reproduction's), a DPO/GRPO field SFTConfig never
    had: "trl==0.18.0 still has it" is wrong for a file TrlParser((ScriptArguments, SFTConfig, ModelConfig)) reads;
    torch_dtype, which ModelConfig had until 0.27, keeps its rename advice."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("trl==0.18.2\ntransformers==4.52.3\n")
    (tmp_path / "sft.py").write_text("from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser\n\n"
                                     "parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))\n"
                                     "script_args, training_args, model_args = parser.parse_args_and_config()\n")
    recipe = tmp_path / "sft" / "config.yaml"
    recipe.parent.mkdir()
    recipe.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ntorch_dtype: bfloat16\ndataset_name: trl-lib/Capybara\n"
                      "packing: true\nmax_length: 4096\nmax_prompt_length: 512\nlearning_rate: 2.0e-5\n"
                      "num_train_epochs: 1\nper_device_train_batch_size: 2\n")
    plan = read_plan(recipe)
    assert list(_undeclared(plan)) == ["max_prompt_length"]
    assert [d.kind for d in plan.diagnostics if d.key == "torch_dtype"] == ["deprecated_key"]


def test_an_old_name_with_a_rename_keeps_its_advice_rather_than_sp438(tmp_path):
    """LIU-Hao-2002's DPO recipe sets use_liger, an SFTConfig field to trl 0.17 that DPOConfig never had; the parser's
    classes never declared it, but "use 'use_liger_kernel'" is the fix, and SP438's "remove it" would lose it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "run_dpo.py").write_text(
        "from trl import DPOConfig, DPOTrainer, ModelConfig, ScriptArguments, TrlParser\n\n"
        "parser = TrlParser((ModelConfig, ScriptArguments, DPOConfig))\n"
        "model_args, script_args, training_args = parser.parse_args_and_config()\n"
        "# python run_dpo.py --config dpo.yaml\n")
    recipe = tmp_path / "dpo.yaml"
    recipe.write_text("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/ultrafeedback_binarized\n"
                      "beta: 0.1\nmax_length: 1024\nuse_liger: true\nlearning_rate: 5.0e-7\n")
    plan = read_plan(recipe)
    liger = [d for d in plan.diagnostics if d.key == "use_liger"]
    assert [d.suggestion for d in liger] == ["use_liger_kernel"] and "use_liger" not in _undeclared(plan)


@pytest.mark.parametrize("releases, fate", [
    (["0.8.6", "0.9.6"], "at trl 0.9 TrlParser drops"),  # merge_dataclasses fills declared fields, ignores the rest
    (["0.10.1", "0.12.2"], "TrlParser refuses a key no argument class declares"),  # "not used by the TrlParser"
    (["0.14.0", "0.18.2"], "at trl 0.18 TrlParser drops"),  # set_defaults_with_config's remaining strings dropped
    (["0.9.6", "0.10.1", "0.19.1"], "except before trl 0.10, where it drops"),
    (["0.12.2", "0.13.0", "1.16.0"], "except from trl 0.13 to 0.18, where it drops"),
])
def test_what_trlparser_does_with_an_undeclared_key_by_release(releases, fate):
    from seqprof.config.dialects.trl import unknown_key_fate

    assert fate in unknown_key_fate(releases)


MARGIN_ARGS = '''from dataclasses import dataclass, field

from transformers import TrainingArguments


@dataclass
class MarginConfig(TrainingArguments):
    beta: float = field(default=0.1)
    max_prompt_length: int = field(default=512)
    target_margin: float = field(default=0.35)


@dataclass
class CommonScriptArguments:
    dataset: str = field(default="data.jsonl")


@dataclass
class MarginScriptArguments(CommonScriptArguments):
    pass
'''

OWN_PARSER = '''import sys

from transformers import HfArgumentParser


class H4ArgumentParser(HfArgumentParser):
    def parse(self):
        return self.parse_yaml_file(sys.argv[1])
'''


def test_a_project_s_own_config_class_and_parser_subclass_decide_what_is_refused(tmp_path):
    """VikhrModels/effective_llm_alignment's layout: scripts/smpo.py builds its project's own
    H4ArgumentParser(HfArgumentParser) over MarginScriptArguments (a field-less subclass of the project's
    CommonScriptArguments) and MarginConfig(TrainingArguments), whose target_margin the DPO-like recipe sets. A DPOConfig
    field that MarginConfig lacks (generate_during_eval) is refused by that parse: the same keys the real parser
    refuses, not DPOConfig's version history."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("")
    (tmp_path / "src" / "args.py").write_text(MARGIN_ARGS)
    (tmp_path / "src" / "parser.py").write_text(OWN_PARSER)
    (tmp_path / "requirements.txt").write_text(f"trl==0.16.0\ntransformers=={transformers.__version__}\n")
    (tmp_path / "smpo.py").write_text(
        "from trl import DPOTrainer\n\nfrom src.args import MarginConfig, MarginScriptArguments\n"
        "from src.parser import H4ArgumentParser\n\n"
        "parser = H4ArgumentParser((MarginScriptArguments, MarginConfig))\nargs, config = parser.parse()\n")
    recipe = tmp_path / "margin.yaml"
    recipe.write_text("dataset: prefs.jsonl\noutput_dir: out\nbeta: 0.1\nmax_prompt_length: 512\ntarget_margin: 0.3\n"
                      "generate_during_eval: true\nlearning_rate: 5.0e-7\nper_device_train_batch_size: 2\n")
    spec = importlib.util.spec_from_file_location("margin_args", tmp_path / "src" / "args.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    parser = transformers.HfArgumentParser((module.MarginScriptArguments, module.MarginConfig))
    with pytest.raises(ValueError, match="generate_during_eval"):
        parser.parse_yaml_file(str(recipe))
    plan = read_plan(recipe)
    found = _undeclared(plan)
    assert list(found) == ["generate_during_eval"]
    assert "H4ArgumentParser((MarginScriptArguments, MarginConfig)) at smpo.py:6" in found["generate_during_eval"]
    assert "refuses it" in found["generate_during_eval"]
    [kept] = [d for d in plan.diagnostics if d.key == "dataset"]
    assert kept.kind == "unread_key" and "CommonScriptArguments" in kept.message
    from seqprof.config.project_fields import field_owners

    # the field-less subclass has it too: it is what smpo.py names, which picks smpo.py over sibling scripts
    assert field_owners(recipe)["dataset"] == {"CommonScriptArguments", "MarginScriptArguments"}


def test_a_project_s_own_copy_of_trlparser_decides_what_happens_to_an_undeclared_key(tmp_path):
    """muqeeth/Adversarial_goodhart_rlhf (tests/data/corpus) parses its RLOO recipe with src/utils.py's TRLParser, a
    copy of TrlParser that raises on leftover keys; requirements.txt pins trl==0.9.4, whose RLOOConfig has no
    missing_eos_penalty yet (0.11 adds it). trl 0.9's own TrlParser would drop the key; the project's refuses it."""
    import json
    import shutil

    from seqprof.lint.run import LintOptions, lint_paths

    corpus = Path(__file__).parent / "data" / "corpus"
    (tmp_path / ".git").mkdir()
    for name, source in json.loads((corpus / "SOURCES.json").read_text()).items():
        if name.startswith("muqeeth__Adversarial_goodhart_rlhf/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    utils = (tmp_path / "src" / "utils.py").read_text()
    assert "class TRLParser(HfArgumentParser)" in utils and "are not used by the TRLParser" in utils
    config = tmp_path / "configs" / "muqeeth" / "rloo_pythia410m_tldr_rm410mdata.yml"
    [found] = [f for f in lint_paths([config], LintOptions()).files[0].findings if f.key == "missing_eos_penalty"]
    assert found.code == "SP430" and "trl==0.9.4 (requirements.txt:1)" in found.message
    assert found.message.endswith("the project's own parser TRLParser (src/utils.py) refuses a key no argument class "
                                  "declares")


def test_a_dict_of_the_script_s_own_making_reads_no_key_of_the_file(tmp_path):
    """`extra_args.get("packing_buffer")` on a dict the script builds itself reads nothing of the YAML when no code
    of the project loads a YAML file as a mapping: the real parser, told allow_extra_keys=True, drops the key."""
    config = _project(tmp_path, CONFIG + "packing_buffer: 8\n", extra=", allow_extra_keys=True")
    train = tmp_path / "train.py"
    train.write_text(train.read_text() + '\n\nextra_args = {"packing_buffer": 4}\nBUFFER = extra_args.get("packing_buffer")\n')
    spec = importlib.util.spec_from_file_location("args_own_dict", tmp_path / "args.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    parsed = transformers.HfArgumentParser((module.DataArguments, transformers.TrainingArguments)).parse_yaml_file(
        str(config), allow_extra_keys=True)
    assert not any(hasattr(one, "packing_buffer") for one in parsed)
    assert "drops it without a word" in _undeclared(read_plan(config))["packing_buffer"]


def test_rlcausality_s_grpo_recipe_keys_its_grpoconfig_parser_drops(tmp_path):
    """MarkusEnglberger/RLcausality (tests/data/corpus): HfArgumentParser(GRPOConfig).parse_yaml_file(...,
    allow_extra_keys=True) drops every key GRPOConfig lacks: ModelConfig's model_name_or_path, the script's own
    hard-coded use_4bit / dataset_path / max_train_samples, and RLOO's num_sample_generations (GRPOConfig never
    derived from OnPolicyConfig)."""
    import json
    import shutil

    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir()
    for name, source in sources.items():
        if name.startswith("MarkusEnglberger__RLcausality/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    found = _undeclared(read_plan(tmp_path / "configs" / "grpo_config_deepseek.yaml"))
    assert set(found) == {"model_name_or_path", "use_4bit", "dataset_path", "max_train_samples",
                          "num_sample_generations"}
    assert all("scripts/train_grpo_simple.py:103" in m and "drops it without a word" in m for m in found.values())


def test_the_training_parser_of_a_module_with_several_reads_a_training_config(tmp_path):
    """jianzhnie/LLamaTuner copies LLaMA-Factory's layout under its own package: configs/parser.py parses TRAIN_ARGS
    (a module-level list holding Seq2SeqTrainingArguments), INFER_ARGS and EVAL_ARGS, each with HfArgumentParser.
    Its example YAMLs (stage, finetuning_type, template) are read by TRAIN_ARGS, transformers' TrainingArguments
    beside the project's own classes: hf, not LLaMA-Factory, which nothing in the project installs."""
    from corpus_layout import lay_out

    folder = "jianzhnie__LLamaTuner"
    name = f"{folder}/examples__sft_lora_train__qwen_lora_sft.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert read_plan(config).dialect == "hf"

    config = lay_out(tmp_path / "no_training_parser", only=folder) / name
    parser = config.parents[2] / "llamatuner" / "configs" / "parser.py"
    parser.write_text(parser.read_text().replace("HfArgumentParser(TRAIN_ARGS)", "HfArgumentParser(INFER_ARGS)"))
    assert read_plan(config).dialect == "llamafactory"


def test_a_script_that_takes_trlparser_leftovers_back_drops_unknown_keys(tmp_path):
    """HuiResearch/ReasoningIE's sft.py calls parse_args_and_config(return_remaining_strings=True) and throws the
    leftovers away, so TRL 1.16 (scripts/utils.py: the config's remaining strings are returned, not refused) drops
    overwrite_output_dir, a key transformers 5 removed that nothing ever read: a note, not SP403. Where the script
    lets TrlParser refuse leftovers, the removal is the warning it was."""
    from corpus_layout import lay_out

    folder = "HuiResearch__ReasoningIE"
    for case, edit in (("as_published", None),
                       ("refusing", lambda t: t.replace("parse_args_and_config(return_remaining_strings=True)",
                                                        "parse_args_and_config()"))):
        config = lay_out(tmp_path / case, only=folder) / f"{folder}/config__sft__qwen3-8b.yaml"
        if edit is not None:
            script = config.parents[2] / "sft.py"
            script.write_text(edit(script.read_text()))
        found = next(d for d in read_plan(config).diagnostics if d.key == "overwrite_output_dir")
        if edit is None:
            assert found.kind == "unread_key" and "sft.py:186" in found.message
        else:
            assert found.kind == "deprecated_key"
