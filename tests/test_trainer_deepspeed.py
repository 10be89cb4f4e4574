"""What transformers' Trainer does with the DeepSpeed file a run names (SP457, SP458): from the training config's
`deepspeed:` key, and from the launch lines that pass `--deepspeed` with the Trainer's options.

The DeepSpeed checks mirror HfTrainerDeepSpeedConfig.fill_match and deepspeed_optim_sched; the table of values
they compare is checked against the fill_match calls of the transformers installed here, so a release that
changes them fails this file rather than the users' runs."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from seqprof.config.dialects.trainer_deepspeed import COUNTERPARTS
from seqprof.lint.run import LintOptions, lint_paths


def _findings(path: Path, code: str) -> dict[str, str]:
    report = lint_paths([path], LintOptions()).files[0]
    return {f.key: f.message for f in report.findings if f.code == code}


def _fill_match_calls() -> set[tuple[str, str]]:
    """(DeepSpeed key, TrainingArguments field) of every `self.fill_match("key", args.field, ...)` in the installed
    transformers' trainer_config_process."""
    import transformers.integrations.deepspeed as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    process = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "trainer_config_process")
    pairs = set()
    for call in ast.walk(process):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fill_match" \
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[1], ast.Attribute):
            pairs.add((call.args[0].value, call.args[1].attr))
    return pairs


def test_every_value_compared_is_one_transformers_compares():
    calls = _fill_match_calls()
    assert ("gradient_clipping", "max_grad_norm") in calls  # the walk found the calls at all
    assert {(c.deepspeed_key, c.field) for c in COUNTERPARTS} <= calls


def _hf_project(root: Path, config: dict, deepspeed: dict) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "requirements.txt").write_text("transformers==4.57.1\n")
    (root / "ds.json").write_text(json.dumps(deepspeed, indent=2))
    (root / "train.py").write_text("from transformers import HfArgumentParser, TrainingArguments\n"
                                   "args, = HfArgumentParser(TrainingArguments).parse_yaml_file('train.yaml')\n")
    path = root / "train.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items()) + "deepspeed: ds.json\n")
    return path


ZERO2 = {"zero_optimization": {"stage": 2}}


@pytest.mark.parametrize("deepspeed, key", [
    ({"train_micro_batch_size_per_gpu": 2}, "per_device_train_batch_size"),
    ({"gradient_clipping": 1.0}, "max_grad_norm"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}, "scheduler": {"type": "WarmupDecayLR"}},
     "learning_rate"),
    ({"bf16": {"enabled": False}}, "bf16"),
])
def test_a_deepspeed_value_the_trainer_refuses_is_an_error(tmp_path, deepspeed, key):
    config = {"output_dir": "out", "per_device_train_batch_size": 4, "max_grad_norm": 0.3, "learning_rate": 2e-5,
              "lr_scheduler_type": "linear", "bf16": True}
    found = _findings(_hf_project(tmp_path / "bad", config, ZERO2 | deepspeed), "SP457")
    assert list(found) == [key] and "mismatch TrainingArguments values" in found[key]
    agreeing = {k: ("auto" if not isinstance(v, dict) else v) for k, v in deepspeed.items()}
    if key == "learning_rate":
        agreeing["optimizer"] = {"type": "AdamW", "params": {"lr": "auto"}}
    if key == "bf16":
        agreeing["bf16"] = {"enabled": True}
    assert _findings(_hf_project(tmp_path / "good", config, ZERO2 | agreeing), "SP457") == {}


def test_auto_find_batch_size_lets_the_micro_batch_differ(tmp_path):
    config = {"output_dir": "out", "per_device_train_batch_size": 4, "auto_find_batch_size": True}
    deepspeed = ZERO2 | {"train_micro_batch_size_per_gpu": 2}
    assert _findings(_hf_project(tmp_path, config, deepspeed), "SP457") == {}


def test_cott_deepspeed_file_replaces_its_scheduler_and_optimizer(tmp_path):
    """sunyasheng/CoTT's LLaMA-Factory qwen.yaml asks for a cosine schedule and paged_adamw_8bit; the repository's
    own ds_z3_config.json has WarmupLR and AdamW sections, which transformers 4.52.4 (its environment.yml) lets
    DeepSpeed build instead. Without the two sections the config's own settings run."""
    from corpus_layout import lay_out

    folder = "sunyasheng__CoTT"
    config = lay_out(tmp_path / "as_published", only=folder) / f"{folder}/LLaMA-Factory__examples__train_full__qwen.yaml"
    found = _findings(config, "SP458")
    assert set(found) == {"lr_scheduler_type", "optim"}
    assert "WarmupLR" in found["lr_scheduler_type"] and "AdamW" in found["optim"]

    config = lay_out(tmp_path / "sections_removed", only=folder) / \
        f"{folder}/LLaMA-Factory__examples__train_full__qwen.yaml"
    deepspeed = config.parent.parent / "deepspeed" / "ds_z3_config.json"
    data = json.loads(deepspeed.read_text())
    deepspeed.write_text(json.dumps({k: v for k, v in data.items() if k not in ("optimizer", "scheduler")}))
    assert _findings(config, "SP458") == {}


def test_the_same_shape_is_no_replacement(tmp_path):
    config = {"output_dir": "out", "lr_scheduler_type": "linear", "optim": "adamw_torch"}
    deepspeed = ZERO2 | {"optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
                         "scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto"}}}
    assert _findings(_hf_project(tmp_path, config, deepspeed), "SP458") == {}


def test_a_launch_line_s_scheduler_replaced_by_the_deepspeed_file(tmp_path):
    """QwenLM/Qwen-VL's finetune_ds.sh runs finetune.py with `--deepspeed finetune/ds_config_zero3.json` and
    `--lr_scheduler_type "cosine"`; the file's WarmupLR section runs instead (transformers 4.32.0 deepspeed.py
    deepspeed_optim_sched). Without the option on the launch line there is nothing to compare."""
    from corpus_layout import lay_out

    folder = "QwenLM__Qwen-VL"
    name = f"{folder}/finetune__ds_config_zero3.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    found = _findings(config, "SP458")
    assert list(found) == ["scheduler"] and "--lr_scheduler_type cosine (finetune/finetune_ds.sh" in found["scheduler"]

    config = lay_out(tmp_path / "no_option", only=folder) / name
    launcher = config.parent / "finetune_ds.sh"
    launcher.write_text(launcher.read_text().replace('--lr_scheduler_type "cosine"', ""))
    assert _findings(config, "SP458") == {}


def test_a_deepspeed_precision_section_is_on_only_by_enabled(tmp_path):
    """NExT-GPT's stage_1.json writes `"bf16": {"enable": true}`: DeepSpeed reads only `enabled` (0.9.3
    runtime/config.py), so bf16 stays off beside fp16 (SP401 names the misspelt key, SP410 stays silent)."""
    from corpus_layout import lay_out

    folder = "NExT-GPT__NExT-GPT"
    name = f"{folder}/NExT-GPT-Lagacy__code__dsconfig__stage_1.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert _findings(config, "SP410") == {} and "bf16.enable" in _findings(config, "SP401")

    config = lay_out(tmp_path / "enabled", only=folder) / name
    config.write_text(config.read_text().replace('"enable"', '"enabled"'))
    assert _findings(config, "SP410")


def test_an_inline_deepspeed_mapping_is_checked_as_deepspeed_config(tmp_path):
    """dan778912/adppolora's PPO config writes its DeepSpeed config inline, with accelerate's names (zero_stage,
    zero3_init_flag) and ZeRO's offload sections at the top level, where DeepSpeed passes over them: the ZeRO
    settings come only from zero_optimization. Moved under zero_optimization, DeepSpeed reads them."""
    from corpus_layout import lay_out

    folder = "dan778912__adppolora"
    config = lay_out(tmp_path, only=folder) / f"{folder}/examples__train_lora__llama3_lora_ppo.yaml"
    found = _findings(config, "SP401")
    assert set(found) == {"deepspeed.zero_stage", "deepspeed.offload_optimizer", "deepspeed.offload_param",
                          "deepspeed.zero3_init_flag"}
    assert "under zero_optimization" in found["deepspeed.offload_optimizer"]

    text = config.read_text()
    moved = text.replace("  zero_stage: 2\n", "").replace("  zero3_init_flag: false\n", "").replace(
        "  offload_optimizer:\n    device: \"cpu\"\n    pin_memory: true\n  offload_param:\n    device: \"none\"\n",
        "").replace("  zero_optimization:\n", "  zero_optimization:\n    offload_optimizer:\n      device: cpu\n")
    assert moved.count("offload_optimizer") == 1
    config.write_text(moved)
    assert _findings(config, "SP401") == {}
