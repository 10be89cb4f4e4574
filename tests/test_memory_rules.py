"""Memory rules SP501-SP505 on real configs: the estimate wired into lint, every figure in a message checked
against independent arithmetic (numpy array sizes, parameter counts, the GPU table), fixes that clear the rule."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.config.plan import Plan, Setting
from seqprof.config.read import read_plan
from seqprof.lint.facts import build_facts, gpu_facts
from seqprof.lint.rules import load_rules
from seqprof.lint.run import lint_plan
from seqprof.predict.architecture import read_architecture
from seqprof.predict.gpus import gpu_memory_bytes
from seqprof.render import charts

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "tests" / "data" / "model_configs"
CONFIGS = REPO / "tests" / "data" / "configs"  # the real configs these tests read, copied exactly (README there)
CORPUS = REPO.parent / "shared" / "configs"  # every shared config: corpus-wide tests skip without it
SPECFORGE = CONFIGS / "specforge" / "examples" / "configs" / "qwen3.6-27b-dflash-online.yaml"
AXOLOTL = CONFIGS / "axolotl" / "examples"
QWEN3_LORA = AXOLOTL / "qwen3" / "8b-lora-fused-attn.yaml"  # LoRA, checkpointing, 1 x 4096, Qwen3-8B
LLAMA_FFT_FSDP = AXOLOTL / "llama-3" / "fft-8b-liger-fsdp.yaml"  # full fine-tune, FSDP, 2 x 4096, Llama 3.1 8B
DPO = AXOLOTL / "qwen2" / "dpo.yaml"  # full-parameter DPO
GIB = 2**30
MEMORY_CODES = ["SP501", "SP502", "SP503", "SP504", "SP505"]


@pytest.fixture(autouse=True)
def no_local_models(tmp_path, monkeypatch):
    """No Hugging Face cache but the one a test builds: 'found locally' must mean what the test put there."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)


def lint(*args: object) -> tuple[int, dict]:
    out = CliRunner().invoke(main, ["lint", *map(str, args), "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    return out.exit_code, json.loads(out.stdout)  # stderr carries the 'lint: ... dataset' lines


def memory_json(config: Path, model: str, *args: str) -> dict:
    """`seqprof memory` on the same config: the estimate the lint message must quote."""
    out = CliRunner().invoke(main, ["memory", str(config), "--model-config", str(MODELS / model), "--format",
                                    "json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def copy_config(src: Path, folder: Path, *edits: tuple[str, str], name: str | None = None) -> Path:
    """A real config copied, with exact-text edits (each must apply once)."""
    text = src.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    dest = folder / (name or src.name)
    dest.write_text(text)
    return dest


def line_of(path: Path, start: str) -> int:
    """1-based line whose stripped text starts with `start` (found independently of seqprof's reader)."""
    lines = [i + 1 for i, line in enumerate(path.read_text().splitlines()) if line.strip().startswith(start)]
    assert len(lines) == 1, (start, lines)
    return lines[0]


def findings(data: dict, code: str) -> list[dict]:
    return [f for f in data["findings"] if f["code"] == code]


def gib(nbytes: float) -> str:
    return f"{nbytes / GIB:,.1f} GiB"


def qwen3_params(cfg: dict) -> int:
    """Qwen3 dense parameter count from config.json, counted matrix by matrix (independent of seqprof)."""
    h, f, hd, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["head_dim"], cfg["vocab_size"]
    q, kv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    attention = h * q + 2 * h * kv + q * h
    mlp = 3 * h * f
    norms = 2 * h + 2 * hd  # input/post-attention RMSNorm, q_norm and k_norm over head_dim
    embeddings = V * h * (1 if cfg["tie_word_embeddings"] else 2)
    return cfg["num_hidden_layers"] * (attention + mlp + norms) + embeddings + h


# --- the model configs ---------------------------------------------------------------------------------


def test_model_configs_hold_the_published_shapes():
    qwen36 = json.loads((MODELS / "Qwen3.6-27B" / "config.json").read_text())
    text = qwen36["text_config"]
    # the model card: hidden 5120, 248,320 (padded) vocabulary, 64 layers = 16 x (3 Gated DeltaNet + 1 attention)
    assert (text["hidden_size"], text["vocab_size"], text["num_hidden_layers"]) == (5120, 248320, 64)
    assert text["layer_types"] == ["linear_attention"] * 3 + ["full_attention"] + text["layer_types"][4:]
    assert text["layer_types"].count("full_attention") == 16 and text["layer_types"].count("linear_attention") == 48
    assert (text["num_attention_heads"], text["num_key_value_heads"], text["head_dim"]) == (24, 4, 256)
    assert text["head_dim"] * text["partial_rotary_factor"] == 64  # rotary dimension 64
    arch = read_architecture(MODELS / "Qwen3.6-27B")
    assert arch.vocab_size == 248320 and not arch.tie_word_embeddings

    qwen3 = json.loads((MODELS / "Qwen3-8B" / "config.json").read_text())
    assert read_architecture(MODELS / "Qwen3-8B").param_count() == qwen3_params(qwen3)
    assert round(qwen3_params(qwen3) / 1e9, 1) == 8.2  # the model card's "Number of Parameters: 8.2B"
    llama = read_architecture(MODELS / "Llama-3.1-8B")
    assert (llama.vocab_size, llama.num_layers, llama.num_kv_heads) == (128256, 32, 8)


# --- SP505: DESIGN.md's third story on SpecForge's real Qwen3.6-27B config -----------------------------


@pytest.mark.parametrize("gpu", [("--gpu-memory", "96GB"), ("--gpu", "RTX PRO 6000")])
def test_the_story_drafter_budget_is_flagged_on_its_key_before_any_gpu_run(tmp_path, gpu):
    config = copy_config(SPECFORGE, tmp_path, ("max_length: 4096", "max_length: 65536"))
    code, data = lint(config, *gpu, "--model-config", MODELS / "Qwen3.6-27B")
    assert code == 1
    [f] = findings(data, "SP505")
    assert (f["line"], f["key"], f["severity"]) == (line_of(config, "max_length:"), "data.max_length", "warning")

    tokens, vocab = 65536, 248320
    # b·s·V·bytes two ways: a bf16 array of 64 positions scaled up, and plain multiplication
    logits = np.zeros((1, 64, vocab), dtype=np.float16).nbytes * (tokens // 64)
    assert logits == 1 * 65536 * 248320 * 2 == 32_547_799_040
    capacity = 96 * 10**9 if gpu[0] == "--gpu-memory" else gpu_memory_bytes(gpu[1])[1]
    msg = f["message"]
    assert f"{tokens:,}-token budget (1 x {tokens:,})" in msg
    assert f"{tokens:,} x {vocab:,} x 2 B = {gib(logits)} in bf16" in msg and gib(logits) == "30.3 GiB"
    assert f"{round(100 * logits / capacity)}% of the" in msg and f"{gib(capacity)}" in msg
    assert f"({gib(3 * logits)})" in msg  # with its log-softmax and gradient
    # the fix: logits at 512 anchors x 16 block positions only, or a budget within a quarter of the GPU
    anchors = 512 * 16
    assert f"{anchors:,} positions, {gib(np.zeros((anchors, vocab), np.float16).nbytes)}" in f["fix"]
    limit = int(re.search(r"at most ([\d,]+) tokens", f["fix"]).group(1).replace(",", ""))
    assert limit * vocab * 2 <= capacity / 4 < (limit + 1) * vocab * 2
    assert f["fix"].endswith(f"({tokens:,} now)") and "lower data.max_length" in f["fix"]


def test_the_drafter_budget_counts_batch_times_length(tmp_path):
    """16 x 4,096 is the same 65,536-token step: flagged on the length key, the batch named in the message."""
    config = copy_config(SPECFORGE, tmp_path, ("  batch_size: 1", "  batch_size: 16"))
    _, data = lint(config, "--gpu-memory", "96GB", "--model-config", MODELS / "Qwen3.6-27B")
    [f] = findings(data, "SP505")
    assert f["line"] == line_of(config, "max_length:") and "(16 x 4,096)" in f["message"]


def test_the_published_drafter_budget_passes_and_the_fine_tuning_rules_say_why_they_skip():
    _, data = lint(SPECFORGE, "--gpu", "RTX PRO 6000", "--model-config", MODELS / "Qwen3.6-27B")
    assert findings(data, "SP505") == []  # 4,096 x 248,320 x 2 B = 1.9 GiB, 2% of the card
    skipped = {s["reason"]: s["codes"] for s in data["skipped"]}
    drafter = [reason for reason in skipped if reason.startswith("drafter training")]
    assert len(drafter) == 1 and skipped[drafter[0]] == ["SP501", "SP502", "SP503", "SP504"]


def test_without_a_local_config_json_every_memory_rule_is_skipped_with_the_way_out():
    _, data = lint(SPECFORGE, "--gpu-memory", "96GB")
    reason = "no model config.json found locally for Qwen/Qwen3.6-27B; pass --model-config"
    assert {s["reason"]: s["codes"] for s in data["skipped"]}[reason] == MEMORY_CODES
    text = CliRunner().invoke(main, ["lint", str(SPECFORGE), "--gpu-memory", "96GB"]).output
    assert f"Skipped ({reason}): SP501 memory-over-gpu, SP502 memory-near-gpu" in text


def test_a_config_json_in_the_local_hf_cache_is_found_without_model_config(tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen3.6-27B" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    shutil.copy(MODELS / "Qwen3.6-27B" / "config.json", snapshot / "config.json")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    config = copy_config(SPECFORGE, tmp_path, ("max_length: 4096", "max_length: 65536"))
    _, data = lint(config, "--gpu-memory", "96GB")
    assert [f["code"] for f in data["findings"] if f["code"].startswith("SP5")] == ["SP505"]


def test_drafter_logits_fact_is_b_s_v_bytes(tmp_path):
    """The fact against numpy: a float16 array of (batch, length, vocab/8) scaled by 8."""
    config = copy_config(SPECFORGE, tmp_path, ("max_length: 4096", "max_length: 1000"),
                         ("  batch_size: 1", "  batch_size: 3"))
    facts = build_facts(read_plan(str(config)), gpu=gpu_facts(memory="80GB"), model_config=str(MODELS / "Qwen3.6-27B"))
    d = facts.drafter
    assert d.logits_bytes == np.zeros((3, 1000, 248320 // 8), dtype=np.float16).nbytes * 8
    assert (d.tokens, d.vocab_size, d.dtype_bytes, d.positions) == (3000, 248320, 2, None)  # anchors > tokens
    assert d.share == d.logits_bytes / 80e9 and facts.memory is None and facts.memory_reason.startswith("drafter")


# --- SP501 / SP502: the peak against the GPU ------------------------------------------------------------


def test_full_fine_tune_over_an_h100_is_an_error_with_fixes_that_fit(tmp_path):
    code, data = lint(LLAMA_FFT_FSDP, "--gpu", "H100", "--model-config", MODELS / "Llama-3.1-8B")
    [f] = findings(data, "SP501")
    assert code == 1 and f["severity"] == "error" and f["line"] == line_of(LLAMA_FFT_FSDP, "micro_batch_size:")
    est = memory_json(LLAMA_FFT_FSDP, "Llama-3.1-8B", "--gpu", "H100")
    peak, capacity = est["peak_bytes"], 81559 * 2**20  # nvidia-smi's total for an H100 80GB
    assert est["gpu"]["bytes"] == capacity
    assert f"predicted peak {gib(peak)} is over the H100 80GB's {gib(capacity)} by {gib(peak - capacity)}" \
        in f["message"]
    own = {k: v for k, v in est["components"].items() if k not in ("cuda_context", "allocator_overhead", "workspace")}
    top = sorted(own.items(), key=lambda kv: -kv[1])[:3]
    listed = ", ".join(f"{k.replace('_', ' ')} {gib(v)} ({round(100 * v / peak)}%)" for k, v in top)
    assert f"largest: {listed}" in f["message"]
    assert "pass --gpus N" in f["message"]  # FSDP with no GPU count stated: the estimate is for one GPU
    # the LoRA option's predicted peak is what the memory model says of the config with LoRA written in
    lora_peak = re.search(r"adapter: lora, r=16 on all linear layers: peak ([\d.]+) GiB \(fits\)", f["fix"]).group(1)
    lora = "micro_batch_size: 2\nadapter: lora\nlora_r: 16\nlora_target_linear: true"
    fixed = copy_config(LLAMA_FFT_FSDP, tmp_path, ("micro_batch_size: 2", lora))
    assert gib(memory_json(fixed, "Llama-3.1-8B")["peak_bytes"]) == f"{lora_peak} GiB"
    _, after = lint(fixed, "--gpu", "H100", "--model-config", MODELS / "Llama-3.1-8B")
    assert findings(after, "SP501") == findings(after, "SP502") == []
    _, eight = lint(LLAMA_FFT_FSDP, "--gpu", "H100", "--gpus", "8", "--model-config", MODELS / "Llama-3.1-8B")
    assert findings(eight, "SP501") == []  # FSDP over 8 GPUs shards the fp32 states


def test_within_ten_percent_of_the_gpu_is_a_warning(tmp_path):
    config = copy_config(QWEN3_LORA, tmp_path, ("micro_batch_size: 1", "micro_batch_size: 7"))
    _, data = lint(config, "--gpu", "H100", "--model-config", MODELS / "Qwen3-8B")
    [f] = findings(data, "SP502")
    assert findings(data, "SP501") == [] and f["line"] == line_of(config, "micro_batch_size:")
    peak, capacity = memory_json(config, "Qwen3-8B")["peak_bytes"], gpu_memory_bytes("H100")[1]
    assert 0.9 * capacity < peak <= capacity
    assert f"predicted peak {gib(peak)} leaves {100 * (1 - peak / capacity):.1f}% of the H100 80GB's" in f["message"]
    _, published = lint(QWEN3_LORA, "--gpu", "H100", "--model-config", MODELS / "Qwen3-8B")
    assert not [x for x in published["findings"] if x["code"] in MEMORY_CODES]


def test_the_gpu_can_come_from_tool_seqprof(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.seqprof]\ngpu = "H100"\n')
    config = copy_config(QWEN3_LORA, tmp_path, ("micro_batch_size: 1", "micro_batch_size: 8"))
    _, data = lint(config, "--model-config", MODELS / "Qwen3-8B")
    assert len(findings(data, "SP501")) == 1 and "H100 80GB" in findings(data, "SP501")[0]["message"]


def test_without_a_gpu_only_the_gpu_rules_skip(tmp_path):
    config = copy_config(QWEN3_LORA, tmp_path, ("micro_batch_size: 1", "micro_batch_size: 4"))
    _, data = lint(config, "--model-config", MODELS / "Qwen3-8B")
    skipped = {s["reason"]: s["codes"] for s in data["skipped"]}
    assert skipped["no GPU given: pass --gpu NAME or --gpu-memory 80GB"] == ["SP501", "SP502", "SP505"]
    assert len(findings(data, "SP503")) == 1


# --- SP503: logits dominate ------------------------------------------------------------------------------


def test_logits_dominating_the_peak_suggest_the_dialects_fused_loss(tmp_path):
    config = copy_config(QWEN3_LORA, tmp_path, ("micro_batch_size: 1", "micro_batch_size: 4"))
    _, data = lint(config, "--model-config", MODELS / "Qwen3-8B")
    [f] = findings(data, "SP503")
    assert f["line"] == line_of(config, "sequence_len:") and f["key"] == "sequence_len"
    est = memory_json(config, "Qwen3-8B")
    logits, peak = est["components"]["logits"], est["peak_bytes"]
    assert logits == max(est["components"].values())
    tokens, vocab = 4 * 4096, 151936
    one_copy = np.zeros((4, 4096 // 64, vocab), dtype=np.float16).nbytes * 64  # 16,384 x 151,936 x 2 B
    assert f"hold {gib(logits)} at the predicted peak ({round(100 * logits / peak)}% of {gib(peak)})" in f["message"]
    assert f"{tokens:,} tokens x {vocab:,} vocabulary = {gib(one_copy)} per copy in bf16" in f["message"]
    assert "liger_fused_linear_cross_entropy: true" in f["fix"] and "cut_cross_entropy: true" in f["fix"]
    liger_peak = re.search(r"materialised\): peak ([\d.]+) GiB", f["fix"]).group(1)
    liger = ("micro_batch_size: 4\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
             "liger_fused_linear_cross_entropy: true")
    fixed = copy_config(config, tmp_path, ("micro_batch_size: 4", liger), name="liger.yaml")
    assert gib(memory_json(fixed, "Qwen3-8B")["peak_bytes"]) == f"{liger_peak} GiB"
    _, after = lint(fixed, "--model-config", MODELS / "Qwen3-8B")
    assert findings(after, "SP503") == []


# --- SP504: the DPO reference copy -----------------------------------------------------------------------


def test_full_dpo_reference_copy_is_flagged_on_the_rl_key_and_cleared_by_either_fix(tmp_path):
    config = copy_config(DPO, tmp_path, ("base_model: Qwen/Qwen2.5-0.5B", "base_model: Qwen/Qwen3-8B"))
    _, data = lint(config, "--model-config", MODELS / "Qwen3-8B")
    [f] = findings(data, "SP504")
    assert (f["line"], f["key"]) == (line_of(config, "rl: dpo"), "rl")
    weights = 2 * qwen3_params(json.loads((MODELS / "Qwen3-8B" / "config.json").read_text()))  # bf16 copy
    peak = memory_json(config, "Qwen3-8B")["peak_bytes"]
    assert f"reference: {gib(weights)} of weights, {round(100 * weights / peak)}% of the predicted {gib(peak)}" \
        in f["message"]
    assert "precompute_ref_log_probs: true: peak" in f["fix"] and "adapter: lora (the reference" in f["fix"]
    for edit in ("rl: dpo\nprecompute_ref_log_probs: true", "rl: dpo\nadapter: lora\nlora_target_linear: true"):
        fixed = copy_config(config, tmp_path, ("rl: dpo", edit), name="fixed.yaml")
        _, after = lint(fixed, "--model-config", MODELS / "Qwen3-8B")
        assert findings(after, "SP504") == [], edit


# --- inputs, report, imports --------------------------------------------------------------------------


def test_speculators_token_budget_is_the_key_flagged(tmp_path):
    """speculators' train.py flags as YAML (its documented names): total_seq_len is the step's token budget."""
    config = tmp_path / "speculators.yaml"
    config.write_text("verifier_name_or_path: Qwen/Qwen3.6-27B\nspeculator_type: dflash\ntotal_seq_len: 65536\n"
                      "epochs: 1\n")
    _, data = lint(config, "--dialect", "speculators", "--gpu-memory", "96GB", "--model-config",
                   MODELS / "Qwen3.6-27B")
    [f] = findings(data, "SP505")
    assert (f["line"], f["key"]) == (line_of(config, "total_seq_len:"), "total_seq_len")
    assert "65,536-token budget (total_seq_len)" in f["message"] and "lower total_seq_len" in f["fix"]


def test_a_value_the_estimate_cannot_read_skips_the_memory_rules():
    plan = Plan(path="c.yaml", dialect="hf", settings={
        "model": Setting("Qwen/Qwen3-8B", "model_name_or_path", "c.yaml", 1),
        "max_seq_length": Setting(1024, "max_seq_length", "c.yaml", 2),
        "micro_batch_size": Setting("auto", "per_device_train_batch_size", "c.yaml", 3)})
    facts = build_facts(plan, gpu=gpu_facts("H100"), model_config=str(MODELS / "Qwen3-8B"))
    assert facts.memory is None and facts.memory_reason.startswith("the memory estimate could not read")
    report = lint_plan(plan, facts, [r for r in load_rules() if r.code in ("SP501", "SP503")])
    assert report.findings == () and list(report.skipped.values()) == [("SP501", "SP503")]


def test_an_unreadable_model_config_is_an_input_error(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    out = CliRunner().invoke(main, ["lint", str(QWEN3_LORA), "--model-config", str(bad)])
    assert out.exit_code == 2 and str(bad) in out.output and "Traceback" not in out.output


def test_the_html_report_draws_the_estimate_lint_made(tmp_path):
    config = copy_config(QWEN3_LORA, tmp_path, ("micro_batch_size: 1", "micro_batch_size: 8"))
    html = tmp_path / "r.html"
    out = CliRunner().invoke(main, ["lint", str(config), "--gpu", "H100", "--model-config", str(MODELS / "Qwen3-8B"),
                                    "--html", str(html)])
    assert out.exit_code == 1
    page = html.read_text()
    est = memory_json(config, "Qwen3-8B")
    assert f"peak {charts.fmt_bytes(est['peak_bytes'])}" in page and "out of memory</span>" in page
    assert f">{charts.fmt_bytes(est['components']['logits'])}<" in page and "SP501" in page


def test_lint_with_a_model_config_does_not_import_transformers(tmp_path):
    code = ("import sys\nfrom seqprof.cli import main\n"
            f"try:\n    main(['lint', {str(QWEN3_LORA)!r}, '--gpu', 'H100', '--model-config', "
            f"{str(MODELS / 'Qwen3-8B')!r}])\n"
            "except SystemExit as e:\n    code = e.code\n"
            "print('transformers' in sys.modules, 'torch' in sys.modules, code)\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip().splitlines()[-1] == "False False 1", out.stderr
