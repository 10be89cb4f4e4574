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


def test_the_script_a_launch_line_runs_parses_the_config_through_a_shell_variable(tmp_path):
    """liv-daliberti's training-sft.sh: `export CONFIG=recipes/.../sft/config.yaml`, then `accelerate launch ...
    src/open_r1/sft.py --config "$CONFIG"`. Key counts chose grpo.py (its GRPOScriptArguments declare more of the
    recipe's keys); the project says sft.py runs it."""
    recipe = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ndataset_name: open-r1/OpenR1-Math-220k\n" \
             "system_prompt: think first\nreward_funcs:\n- accuracy\nmax_length: 4096\n"
    sft = "from trl import ModelConfig, SFTConfig, SFTTrainer, TrlParser\n\nfrom configs import ScriptArguments\n\n" \
          "parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))\ntrainer = SFTTrainer(model=None)\n"
    launch = "#!/bin/bash\nexport CONFIG=\"recipes/demo/sft/config.yaml\"\nexport CONFIG_FILE=zero3.yaml\n" \
             "accelerate launch --config_file \"${CONFIG_FILE}\" \\\n  src/sft.py \\\n  --config \"$CONFIG\"\n"
    files = {"recipes/demo/sft/config.yaml": recipe, "src/configs.py": OPEN_R1_CONFIGS,
             "src/grpo.py": _open_r1_script("GRPO", "GRPOTrainer"), "src/sft.py": sft}
    bare = _repo(tmp_path / "bare", files)
    keys = ["system_prompt", "reward_funcs"]
    assert [s.file for s in parser_scripts(bare / "recipes/demo/sft/config.yaml", keys)] == ["src/grpo.py"]
    root = _repo(tmp_path / "launched", {**files, "train.sh": launch})
    assert [s.file for s in parser_scripts(root / "recipes/demo/sft/config.yaml", keys)] == ["src/sft.py"]


def test_a_package_the_checkout_holds_only_as_a_build_is_the_project_s(tmp_path):
    """HaoruSung's fork of alignment-handbook commits build/lib/alignment/configs.py and no source of it: its
    ModelArguments.torch_dtype and its own DPOConfig.max_prompt_length are the project's fields, not TRL's
    (whose ModelConfig removed torch_dtype in 0.27)."""
    configs = "from dataclasses import dataclass, field\n\nimport transformers\n\n\n@dataclass\nclass ModelArguments:\n" \
              "    model_name_or_path: str = None\n    torch_dtype: str = None\n\n\n@dataclass\n" \
              "class DPOConfig(transformers.TrainingArguments):\n    beta: float = 0.1\n    max_prompt_length: int = 512\n"
    script = "from alignment import DPOConfig, H4ArgumentParser, ModelArguments\nfrom trl import DPOTrainer\n\n" \
             "parser = H4ArgumentParser((ModelArguments, DPOConfig))\ntrainer = DPOTrainer(model=None)\n"
    recipe = "model_name_or_path: HuggingFaceH4/mistral-7b-sft-beta\ntorch_dtype: bfloat16\nbeta: 0.01\n" \
             "max_prompt_length: 512\nmax_length: 1024\nlearning_rate: 5.0e-7\n"
    files = {"recipes/dpo/config.yaml": recipe, "scripts/run_dpo.py": script}
    bare = read_plan(_repo(tmp_path / "bare", files) / "recipes/dpo/config.yaml")
    assert {d.key for d in bare.diagnostics if d.kind in ("deprecated_key", "removed_key")} >= {"torch_dtype"}
    built = _repo(tmp_path / "built", {**files, "build/lib/alignment/configs.py": configs,
                                       "build/lib/alignment/__init__.py": ""})
    plan = read_plan(built / "recipes/dpo/config.yaml")
    kinds = {d.key: d.kind for d in plan.diagnostics}
    assert kinds.get("torch_dtype") == "unread_key" and kinds.get("max_prompt_length") == "unread_key"
    assert "build/lib/alignment/configs.py" in next(d.message for d in plan.diagnostics if d.key == "torch_dtype")
    # a package the checkout has a source of keeps it: the build copy may be stale
    src = _repo(tmp_path / "src", {**files, "build/lib/alignment/configs.py": configs,
                                   "src/alignment/configs.py": configs.replace("    torch_dtype: str = None\n", "")})
    assert {d.key: d.kind for d in read_plan(src / "recipes/dpo/config.yaml").diagnostics}.get("torch_dtype") \
        != "unread_key"


def test_a_script_of_the_config_s_own_name_beside_it_runs_it_and_fills_trl_s_class(tmp_path):
    """jianzhnie/Open-R1: examples/grpo_demo.py (TrlParser over trl's GRPOConfig) beside examples/grpo_demo.yaml,
    and openr1/train/grpo/train_grpo.py over the package's own GRPOConfig, which declares max_prompt_length. Both
    name the recipe's classes equally; the demo script runs the demo recipe, so max_prompt_length is judged by TRL's
    GRPOConfig (removed in 0.28), not excused as the project's own field."""
    own = "from dataclasses import dataclass\n\nimport trl\n\n\n@dataclass\nclass ScriptArguments:\n" \
          "    dataset_id_or_path: str = None\n\n\n@dataclass\nclass GRPOConfig(trl.GRPOConfig):\n" \
          "    max_prompt_length: int = 512\n"
    package = "from trl import GRPOTrainer, ModelConfig, TrlParser\n\nfrom openr1.configs import GRPOConfig, " \
              "ScriptArguments\n\nparser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))\n" \
              "trainer = GRPOTrainer(model=None)\n"
    demo = "from dataclasses import dataclass\n\nfrom trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser\n\n\n" \
           "@dataclass\nclass ScriptArguments:\n    dataset_id_or_path: str = None\n\n\n" \
           "parser = TrlParser((ModelConfig, ScriptArguments, GRPOConfig))\ntrainer = GRPOTrainer(model=None)\n"
    recipe = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_id_or_path: d.jsonl\nnum_generations: 8\n" \
             "max_prompt_length: 256\nmax_completion_length: 512\nlearning_rate: 1.0e-6\n"
    root = _repo(tmp_path, {"openr1/__init__.py": "", "openr1/configs.py": own, "openr1/train_grpo.py": package,
                            "examples/grpo_demo.py": demo, "examples/grpo_demo.yaml": recipe})
    config = root / "examples/grpo_demo.yaml"
    assert [s.file for s in parser_scripts(config, ["dataset_id_or_path", "max_prompt_length"])] == \
        ["examples/grpo_demo.py"]
    kinds = {d.key: d.kind for d in read_plan(config).diagnostics}
    assert kinds["max_prompt_length"] in ("deprecated_key", "removed_key")  # TRL's GRPOConfig dropped it in 0.28
    assert kinds["dataset_id_or_path"] == "unread_key"  # the demo script's own ScriptArguments
    (root / "examples/grpo_demo.py").unlink()  # only the package's script: its own GRPOConfig declares the key
    assert {d.key: d.kind for d in read_plan(config).diagnostics}.get("max_prompt_length") == "unread_key"


def test_the_trainer_the_config_s_own_launch_comment_runs_outweighs_its_keys(tmp_path):
    """cuiluyi/open-r1's dpo/config_demo.yaml keeps GRPO keys (num_generations, reward_funcs, use_vllm) but its
    second line says `accelerate launch ... src/open_r1/dpo.py --config recipes/.../dpo/config_demo.yaml`, and
    dpo.py builds DPOTrainer: a DPO recipe whose GRPO keys its TrlParser never reads."""
    recipe = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ndataset_name: d\nbeta: 0.1\nnum_generations: 8\n" \
             "reward_funcs:\n- accuracy\nuse_vllm: true\nlearning_rate: 5.0e-7\n"
    dpo = "from trl import DPOConfig, DPOTrainer, ModelConfig, ScriptArguments, TrlParser\n\n" \
          "parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))\ntrainer = DPOTrainer(model=None)\n"
    files = {"src/open_r1/dpo.py": dpo, "src/open_r1/grpo.py": _open_r1_script("GRPO", "GRPOTrainer"),
             "src/open_r1/configs.py": OPEN_R1_CONFIGS}
    bare = _repo(tmp_path / "bare", {**files, "recipes/m/dpo/config_demo.yaml": recipe})
    assert read_plan(bare / "recipes/m/dpo/config_demo.yaml").get("trainer") == "grpo"  # the keys alone
    comment = "# accelerate launch --num_processes 6 src/open_r1/dpo.py --config recipes/m/dpo/config_demo.yaml\n"
    root = _repo(tmp_path / "launched", {**files, "recipes/m/dpo/config_demo.yaml": comment + recipe})
    plan = read_plan(root / "recipes/m/dpo/config_demo.yaml")
    assert plan.get("trainer") == "dpo" and "src/open_r1/dpo.py" in plan.setting("trainer").source


def test_a_script_s_own_copy_of_a_class_counts_only_for_its_own_fields(tmp_path):
    """Racul/async_rlhf's rloo.py, ppov2.py and online_dpo.py each define a ScriptArguments; only rloo.py's declares
    `bok`, and rloo.py builds its trainer through an alias (`TrainerCls = RLOOTrainer`, then `TrainerCls(...)`). The
    best-of-2 recipe sets bok, so rloo.py parses it and it trains RLOO; the online DPO recipe's own keys still pick
    online_dpo.py."""
    import yaml
    from corpus_layout import lay_out

    folder = "Racul__async_rlhf"
    tree = lay_out(tmp_path, only=folder)
    best_of_two = tree / f"{folder}/configs__bo2_pythia410m_tldr.yml"
    keys = yaml.safe_load(best_of_two.read_text())
    assert [s.file for s in parser_scripts(best_of_two, keys)] == ["rloo.py"]
    line = (best_of_two.parent.parent / "rloo.py").read_text().splitlines().index("    trainer = TrainerCls(") + 1
    assert project_trainer(best_of_two, keys) == (
        "rloo", f"the project's script that parses it builds a rloo trainer (rloo.py:{line})")
    assert read_plan(best_of_two).settings["trainer"].value == "rloo"

    online = tree / f"{folder}/configs__onlinedpo_pythia410m_tldr.yml"
    keys = yaml.safe_load(online.read_text())
    assert [s.file for s in parser_scripts(online, keys)] == ["online_dpo.py"]
