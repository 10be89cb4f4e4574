"""Run time where users read it: `buckets --config --gpu` per strategy, `lint --gpu` in hours (issue 12).

The seconds are checked against the calibration applied by hand to the batches the strategy makes (an
independent route: the shapes are rebuilt here, not read from the simulation), and the run figures against
each other (steps x step time, GPU-hours, cost)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.predict.architecture import read_architecture
from seqprof.predict.memory.setup import TrainingSetup
from seqprof.predict.steptime import calibration_for, model_costs

DATA = Path(__file__).parent / "data"
QWEN3_8B = DATA / "model_configs" / "Qwen3-8B"
STORY = DATA / "configs" / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"
GEMMA = DATA / "model_configs" / "gemma-3-4b-it"
STRATEGIES = ("fixed_padding", "random_shuffle", "sorted_static", "bucketed_shuffle", "packing_bfd")


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """The embedded chat dataset's profile under a real packaged tokenizer."""
    out = tmp_path_factory.mktemp("p") / "profile.json"
    result = CliRunner().invoke(main, ["analyze", "-t", "qwen-2.5", "-o", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    return out


def _config(tmp_path, body: str) -> Path:
    path = tmp_path / "train.yaml"
    path.write_text("base_model: Qwen/Qwen3-8B\nadapter: lora\ngradient_checkpointing: true\nbf16: true\n" + body)
    return path


def _buckets(profile, config, *extra):
    args = ["buckets", str(profile), "--num-buckets", "6", "--config", str(config), "--gpu", "H200",
            "--model-config", str(QWEN3_8B), "--format", "json", *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _by_hand(rows, length, setup):
    """One micro batch's seconds and the optimizer's, from the shipped calibration's figures directly."""
    cal = calibration_for("H200 141GB")
    costs = model_costs(read_architecture(QWEN3_8B), setup)
    units = cal.seconds_per_unit
    host = sum(units[k] * v for k, v in costs.host().items())
    tokens = rows * length
    device = (units["matmul_flops"] * tokens * costs.matmul_per_token
              + units["attention_flops"] * rows * length ** 2 * costs.attention_per_len2
              + units["body_elements"] * tokens * costs.body_per_token
              + units["logits_elements"] * tokens * costs.logits_per_token
              + units["adapter_elements"] * tokens * costs.adapter_per_token)
    return max(host, device), units["optimizer_params"] * costs.trainable_params


def test_every_strategy_gets_its_epoch_time_on_a_named_gpu(profile, tmp_path):
    report = _buckets(profile, _config(tmp_path, "micro_batch_size: 4\nsequence_len: 2048\n"),
                      "--max-seq-length", "2048", "--batch-size", "4")
    strategies = report["strategies"]
    setup = TrainingSetup(adapter="lora", gradient_checkpointing=True)
    micro, opt = _by_hand(4, 2048, setup)
    rows = report["rows"]
    fixed = strategies["fixed_padding"]
    full, last = divmod(rows, 4)
    expected = full * micro + (_by_hand(last, 2048, setup)[0] if last else 0) + math.ceil(rows / 4) * opt
    assert fixed["epoch_seconds"] == pytest.approx(expected, rel=1e-9)
    packs = round(strategies["packing_bfd"]["computed_tokens"] / 2048)
    full, last = divmod(packs, 4)
    expected = full * micro + (_by_hand(last, 2048, setup)[0] if last else 0) + math.ceil(packs / 4) * opt
    assert strategies["packing_bfd"]["epoch_seconds"] == pytest.approx(expected, rel=1e-9)
    for name in STRATEGIES:
        s = strategies[name]
        assert s["epoch_seconds"] > 0
        assert s["tokens_per_second"] == pytest.approx(report["real_tokens"] / s["epoch_seconds"])
        assert s["step_seconds"] == pytest.approx(s["epoch_seconds"] / s["batches"], rel=0.02)
    # padding costs time: batches padded to their longest beat padding every row to 2,048
    assert strategies["sorted_static"]["epoch_seconds"] < strategies["random_shuffle"]["epoch_seconds"] \
        < fixed["epoch_seconds"]
    assert "measured calibration for H200 141GB" in report["timing"]


def test_a_token_budget_puts_budget_over_length_sequences_in_fixed_and_packed_steps(profile, tmp_path):
    report = _buckets(profile, _config(tmp_path, "sequence_len: 1024\n"), "--max-seq-length", "1024",
                      "--token-budget", "8192")
    setup = TrainingSetup(adapter="lora", gradient_checkpointing=True)
    micro, opt = _by_hand(8, 1024, setup)
    rows = report["rows"]
    full, last = divmod(rows, 8)
    expected = full * micro + (_by_hand(last, 1024, setup)[0] if last else 0) + math.ceil(rows / 8) * opt
    assert report["strategies"]["fixed_padding"]["epoch_seconds"] == pytest.approx(expected, rel=1e-9)


def test_the_micro_batch_and_accumulation_come_from_the_config(profile, tmp_path):
    one = _buckets(profile, _config(tmp_path, "micro_batch_size: 2\nsequence_len: 2048\n"))
    assert one["batch_size"] == 2 and one["max_seq_length"] == 2048
    accumulated = _buckets(profile, _config(tmp_path, "micro_batch_size: 2\nsequence_len: 2048\n"
                                                      "gradient_accumulation_steps: 4\n"))
    a, b = one["strategies"]["fixed_padding"], accumulated["strategies"]["fixed_padding"]
    # same micro batches, a quarter of the optimizer steps: each step is four micro batches long
    assert b["epoch_seconds"] < a["epoch_seconds"]
    assert b["step_seconds"] == pytest.approx(4 * a["step_seconds"], rel=0.01)


def test_another_gpu_is_scaled_and_says_so(profile, tmp_path):
    config = _config(tmp_path, "micro_batch_size: 4\nsequence_len: 2048\n")
    h200 = _buckets(profile, config)
    result = CliRunner().invoke(main, ["buckets", str(profile), "-k", "6", "--config", str(config), "--gpu", "A100",
                                       "--model-config", str(QWEN3_8B), "--format", "json"])
    a100 = json.loads(result.stdout)
    assert "analytic" in a100["timing"] and "A100 80GB" in a100["timing"]
    assert a100["strategies"]["fixed_padding"]["epoch_seconds"] > 2 * h200["strategies"]["fixed_padding"]["epoch_seconds"]


def test_timing_needs_both_config_and_gpu(profile, tmp_path):
    result = CliRunner().invoke(main, ["buckets", str(profile), "-k", "6", "--gpu", "H200"])
    assert result.exit_code == 2 and "--config and --gpu" in result.output


def test_lint_reports_the_run_in_hours_and_money(profile, tmp_path):
    config = _config(tmp_path, "micro_batch_size: 2\nsequence_len: 2048\nnum_epochs: 3\n"
                               "gradient_accumulation_steps: 2\nsave_strategy: steps\nsave_steps: 50\n")
    result = CliRunner().invoke(main, ["lint", str(config), "--profile", str(profile), "--gpu", "H200",
                                       "--model-config", str(QWEN3_8B), "--gpu-price", "3.5", "--gpus", "2",
                                       "--format", "json"])
    run = json.loads(result.stdout)["run"]
    assert run["gpu"] == "H200 141GB"
    rows = json.loads(Path(profile).read_text())["sequence"]["count"]
    assert run["steps"] == 3 * math.ceil(math.ceil(rows / (2 * 2)) / 2)
    assert run["total_seconds"] == pytest.approx(run["steps"] * run["step_seconds"])
    assert run["gpu_hours"] == pytest.approx(run["total_seconds"] * 2 / 3600)
    assert run["cost"] == pytest.approx(run["gpu_hours"] * 3.5)
    assert run["first_checkpoint_hours"] == pytest.approx(50 * run["step_seconds"] / 3600)


def test_gpu_price_comes_from_the_project_settings(profile, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.seqprof]\ngpu = \"H200\"\ngpu-price = 2.0\n")
    config = _config(tmp_path, "micro_batch_size: 2\nsequence_len: 2048\nnum_epochs: 1\n")
    result = CliRunner().invoke(main, ["lint", str(config), "--profile", str(profile),
                                       "--model-config", str(QWEN3_8B), "--format", "json"])
    run = json.loads(result.stdout)["run"]
    assert run["price_per_gpu_hour"] == 2.0 and run["cost"] == pytest.approx(2.0 * run["gpu_hours"])
    (tmp_path / "pyproject.toml").write_text("[tool.seqprof]\ngpu-price = -1\n")
    bad = CliRunner().invoke(main, ["lint", str(config)])
    assert bad.exit_code == 2 and "gpu-price must be a positive number" in bad.stderr


@pytest.fixture(scope="module")
def story_profile(tmp_path_factory):
    """12,000 rows shaped like the first story's data (DESIGN.md: mean ~530, max 1,126)."""
    folder = tmp_path_factory.mktemp("story")
    data = folder / "pairs.jsonl"
    with data.open("w") as fh:
        for i in range(12000):
            words = 40 + (i * 7919) % 900
            fh.write(json.dumps({"prompt": "q " * 20, "chosen": "a " * words, "rejected": "b " * words}) + "\n")
    out = folder / "profile.json"
    assert CliRunner().invoke(main, ["analyze", str(data), "-t", "qwen-2.5", "-o", str(out),
                                     "--no-cache"]).exit_code == 0
    return out


def test_the_first_storys_checkpoint_interval_is_caught_in_hours(story_profile):
    args = ["lint", str(STORY), "--profile", str(story_profile), "--model-config", str(GEMMA), "--format", "json",
            "--select", "SP301"]
    in_steps = json.loads(CliRunner().invoke(main, args).stdout)
    assert in_steps["findings"] == []  # 750 steps, a save due at step 500: nothing to see in steps
    in_hours = json.loads(CliRunner().invoke(main, args + ["--gpu", "DGX Spark"]).stdout)
    [finding] = in_hours["findings"]
    run = in_hours["run"]
    assert run["steps"] == 750 and run["gpu"] == "DGX Spark GB10 128GB"
    assert run["first_checkpoint_hours"] == pytest.approx(500 * run["step_seconds"] / 3600)
    assert run["first_checkpoint_hours"] > 4
    assert finding["line"] == STORY.read_text().splitlines().index("finetune_num_epochs: 1") + 1
    assert "first checkpoint at step 500" in finding["message"] and "GPU-hours" in finding["message"]


@pytest.mark.parametrize(("name", "label"), [("DGX Spark", "DGX Spark GB10 128GB"), ("GB10", "DGX Spark GB10 128GB"),
                                              ("GB200", "GB200 186GB"), ("RTX PRO 6000 Blackwell", "RTX PRO 6000 96GB"),
                                              ("L40S", "L40S 48GB"), ("A10G", "A10G 24GB"), ("B200", "B200 180GB")])
def test_current_gpus_are_in_the_table_with_speed_figures(name, label):
    from seqprof.predict.gpus import gpu_memory_bytes
    from seqprof.predict.steptime import GPU_SPEEDS

    assert gpu_memory_bytes(name)[0] == label and label in GPU_SPEEDS
