"""The project's own scripts that parse a config (seqprof.config.project_scripts): the trainer they build decides
what an HfArgumentParser YAML trains, and a plain HfArgumentParser over transformers' classes is not TRL's."""

from __future__ import annotations

from pathlib import Path

from seqprof.config.project_scripts import parser_scripts, project_trainer
from seqprof.config.read import read_plan

ARGUMENTS = '''from dataclasses import dataclass, field


@dataclass
class ScriptArguments:
    dataset_path: str = field(default="data.jsonl")
    max_seq_len: int = field(default=512)
'''

SFT_SCRIPT = '''from transformers import HfArgumentParser, TrainingArguments
from trl import SFTTrainer

from args import ScriptArguments


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_yaml_file("qlora.yaml")
    trainer = SFTTrainer(model=None, args=training_args)
    trainer.train()
'''

CONFIG = "dataset_path: train.jsonl\nmax_seq_len: 1024\nlearning_rate: 2.0e-4\nnum_train_epochs: 3\n" \
         "per_device_train_batch_size: 4\nlr_scheduler_type: cosine\n"


def _repo(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_trainer_an_hf_yaml_trains_is_the_one_its_parser_script_builds(tmp_path):
    bare = _repo(tmp_path / "bare", {"qlora.yaml": CONFIG, "args.py": ARGUMENTS})
    assert read_plan(bare / "qlora.yaml").get("trainer") is None  # its keys and path name none
    root = _repo(tmp_path / "full", {"qlora.yaml": CONFIG, "args.py": ARGUMENTS, "train.py": SFT_SCRIPT})
    plan = read_plan(root / "qlora.yaml")
    assert plan.dialect == "hf"
    assert plan.get("trainer") == "sft"
    assert "train.py:10" in plan.setting("trainer").source


def test_a_script_that_builds_transformers_trainer_too_names_no_trainer(tmp_path):
    """Firefly's train.py builds DPOTrainer for one train_mode and Trainer for the others: which one runs is the
    config's business, so the script decides nothing."""
    script = SFT_SCRIPT.replace("from trl import SFTTrainer", "from trl import DPOTrainer").replace(
        "    trainer = SFTTrainer(model=None, args=training_args)",
        "    if script_args.mode == 'dpo':\n        trainer = DPOTrainer(model=None, args=training_args)\n"
        "    else:\n        trainer = Trainer(model=None, args=training_args)")
    root = _repo(tmp_path, {"qlora.yaml": CONFIG, "args.py": ARGUMENTS, "train.py": script})
    assert [kind for kind, _ in parser_scripts(root / "qlora.yaml", ["dataset_path"])[0].trainers] == ["dpo", ""]
    assert project_trainer(root / "qlora.yaml", ["dataset_path", "max_seq_len"]) is None


def test_the_scripts_are_those_naming_the_classes_that_declare_most_keys(tmp_path):
    """run_sft.py names only the model arguments both configs share; run_dpo.py the DPO class declaring beta."""
    classes = ARGUMENTS + '''

@dataclass
class PreferenceArguments:
    beta: float = 0.1
    ref_path: str = ""
'''
    dpo = SFT_SCRIPT.replace("SFTTrainer", "DPOTrainer").replace(
        "from args import ScriptArguments", "from args import PreferenceArguments, ScriptArguments").replace(
        "(ScriptArguments, TrainingArguments)", "(ScriptArguments, PreferenceArguments, TrainingArguments)")
    config = CONFIG + "beta: 0.05\nref_path: ref.pt\n"
    root = _repo(tmp_path, {"pref.yaml": config, "args.py": classes, "run_sft.py": SFT_SCRIPT, "run_dpo.py": dpo})
    assert [s.file for s in parser_scripts(root / "pref.yaml", ["dataset_path", "beta", "ref_path"])] == ["run_dpo.py"]
    assert project_trainer(root / "pref.yaml", ["dataset_path", "beta", "ref_path"])[0] == "dpo"


def test_a_kto_recipe_of_a_dpo_loss_is_dpo(tmp_path):
    """loss_type kto_pair is a DPOConfig loss (trl <= 0.11); KTOConfig takes kto / apo_zero_unpaired, so the kto/
    folder of NNHieu's recipe names the loss, not the trainer."""
    folder = tmp_path / "recipes" / "zephyr" / "kto"
    folder.mkdir(parents=True)
    (folder / "config_qlora.yaml").write_text("model_name_or_path: m\nbeta: 0.01\nmax_prompt_length: 512\n"
                                              "max_length: 1024\nloss_type: kto_pair\n")
    (folder / "kto.yaml").write_text("model_name_or_path: m\nbeta: 0.01\nmax_prompt_length: 512\nmax_length: 1024\n")
    assert read_plan(folder / "config_qlora.yaml").get("trainer") == "dpo"
    assert read_plan(folder / "kto.yaml").get("trainer") == "kto"


OPEN_R1_CONFIGS = '''from dataclasses import dataclass, field

import trl


@dataclass
class ScriptArguments(trl.ScriptArguments):
    dataset_mixture: dict = field(default=None)


@dataclass
class GRPOConfig(trl.GRPOConfig):
    system_prompt: str = field(default=None)


@dataclass
class RLOOConfig(trl.RLOOConfig):
    system_prompt: str = field(default=None)


@dataclass
class GRPOScriptArguments(ScriptArguments):
    reward_funcs: list = field(default_factory=list)


@dataclass
class RLOOScriptArguments(ScriptArguments):
    reward_funcs: list = field(default_factory=list)
'''


def _open_r1_script(kind: str, trainer: str) -> str:
    return (f"from trl import ModelConfig, TrlParser, {trainer}\n\nfrom configs import {kind}Config, "
            f"{kind}ScriptArguments\n\n\ndef main(script_args, training_args, model_args):\n"
            f"    trainer = {trainer}(model=None, args=training_args)\n\n\n"
            f"parser = TrlParser(({kind}ScriptArguments, {kind}Config, ModelConfig))\n")


def test_a_key_two_project_classes_declare_counts_for_every_script_that_names_either(tmp_path):
    """alexmaraval/open-r1: its GRPOConfig and RLOOConfig both declare system_prompt, its GRPOScriptArguments and
    RLOOScriptArguments both reward_funcs; rloo.py parses the rloo recipe and builds RLOOTrainer. Counting only the
    first class to declare a key chose grpo.py alone, and the recipe was read as GRPO."""
    recipe = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ndataset_name: open-r1/OpenR1-Math-220k\n" \
             "system_prompt: think first\nreward_funcs:\n- accuracy\nnum_generations: 16\nuse_vllm: true\n" \
             "dataset_mixture: null\n"
    root = _repo(tmp_path, {"recipes/rloo/config.yaml": recipe, "src/configs.py": OPEN_R1_CONFIGS,
                            "src/grpo.py": _open_r1_script("GRPO", "GRPOTrainer"),
                            "src/rloo.py": _open_r1_script("RLOO", "RLOOTrainer")})
    config = root / "recipes/rloo/config.yaml"
    keys = ["system_prompt", "reward_funcs", "dataset_mixture"]
    assert {s.file for s in parser_scripts(config, keys)} == {"src/grpo.py", "src/rloo.py"}
    # dataset_mixture is declared by ScriptArguments, which neither script names: its subclasses inherit it
    assert {s.file for s in parser_scripts(config, ["dataset_mixture"])} == {"src/grpo.py", "src/rloo.py"}
    plan = read_plan(config)
    assert plan.dialect == "trl" and plan.get("trainer") == "rloo"
    assert "reward_funcs" in plan.setting("trainer").source
