"""What transformers' Trainer does with the DeepSpeed file a training config names (SP457, SP458), and the other
stop-44 readings of real projects: a save schedule that follows evaluation, a project's own rename map, a project
file that starts with a byte-order mark.

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


def test_load_best_model_at_end_saves_at_each_evaluation(tmp_path):
    """ylsung/Ladder-Side-Tuning's side_transformers.json: save_strategy "no" beside load_best_model_at_end and
    evaluation per epoch. transformers 4.6.0 (its setup.py) saves at every evaluation then (DefaultFlowCallback),
    so the run checkpoints each epoch; without load_best_model_at_end it never would."""
    from corpus_layout import lay_out

    folder = "ylsung__Ladder-Side-Tuning"
    name = f"{folder}/seq2seq__configs__side_transformers.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    data = json.loads(config.read_text())
    assert data["save_strategy"] == "no" and data["load_best_model_at_end"] is True
    assert _findings(config, "SP301") == {}

    edited = lay_out(tmp_path / "no_best_model", only=folder) / name
    edited.write_text(json.dumps({k: v for k, v in data.items() if k != "load_best_model_at_end"}, indent=2))
    assert "save_strategy" in _findings(edited, "SP301")


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


def test_load_best_model_at_end_with_another_save_schedule_is_refused_from_4_9(tmp_path):
    """ylsung/Ladder-Side-Tuning's lora.json evaluates per epoch and saves every 1000 steps with
    load_best_model_at_end. Its transformers==4.6.0 saves at each evaluation instead; 4.11.3's __post_init__ raises
    "--load_best_model_at_end requires the save and eval strategy to match" (training_args.py:737)."""
    from corpus_layout import lay_out

    folder = "ylsung__Ladder-Side-Tuning"
    name = f"{folder}/seq2seq__configs__lora.json"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert _findings(config, "SP459") == {}

    config = lay_out(tmp_path / "upgraded", only=folder) / name
    setup = config.parents[2] / "setup.py"
    setup.write_text(setup.read_text().replace("'transformers==4.6.0'", "'transformers==4.11.3'"))
    found = _findings(config, "SP459")
    assert list(found) == ["evaluation_strategy"] and "save_strategy steps (the default)" in found[
        "evaluation_strategy"]
