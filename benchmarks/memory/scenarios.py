"""The measured scenarios: one real architecture (configs/*.json, published config values) and one setup each.

Shared by the GPU harness (harness.py), which runs them, and by tests/test_memory.py, which predicts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from seqprof.predict.architecture import Architecture, architecture_from_config
from seqprof.predict.memory import TrainingSetup

CONFIGS = Path(__file__).resolve().parent / "configs"


@dataclass(frozen=True)
class Scenario:
    name: str
    arch: str  # configs/<arch>.json
    setup: TrainingSetup
    why: str = ""
    layers: int | None = None  # the published config with fewer decoder layers (a MoE that fits one GPU)

    def config(self) -> dict:
        """The config.json values the harness builds the model from."""
        cfg = json.loads((CONFIGS / f"{self.arch}.json").read_text())
        if self.layers:
            cfg["num_hidden_layers"] = self.layers
            if isinstance(cfg.get("layer_types"), list):  # a hybrid keeps its pattern: the first `layers` of it
                cfg["layer_types"] = cfg["layer_types"][:self.layers]
        return cfg

    def architecture(self) -> Architecture:
        return architecture_from_config(self.config(), source=str(CONFIGS / f"{self.arch}.json"))


def _s(name: str, arch: str, why: str, layers: int | None = None, **kw) -> Scenario:
    return Scenario(name, arch, TrainingSetup(**kw), why, layers)


ALL = ("all-linear",)
SCENARIOS: tuple[Scenario, ...] = (
    _s("qwen3-0.6b_full_bf16_b4_s1024", "qwen3-0.6b", "full FT bf16, small model: logits-heavy (tied 151k vocab)",
       micro_batch_size=4, seq_len=1024),
    _s("llama3.2-1b_full_bf16_b8_s1024_foreach", "llama3.2-1b", "full FT bf16, foreach AdamW temporaries",
       micro_batch_size=8, seq_len=1024, optimizer="adamw_torch"),
    _s("qwen3-1.7b_full_bf16_gc_b4_s2048", "qwen3-1.7b", "full FT bf16 with gradient checkpointing",
       micro_batch_size=4, seq_len=2048, gradient_checkpointing=True),
    _s("qwen3-4b_full_bf16_gc_b2_s2048_foreach", "qwen3-4b", "full FT 4B: optimizer step is the peak",
       micro_batch_size=2, seq_len=2048, gradient_checkpointing=True, optimizer="adamw_torch"),
    _s("llama3.1-8b_full_bf16_gc_b1_s2048", "llama3.1-8b", "full FT 8B bf16, untied 128k vocab",
       micro_batch_size=1, seq_len=2048, gradient_checkpointing=True),
    _s("qwen3-0.6b_full_fp32_b2_s1024", "qwen3-0.6b", "full FT fp32 (GQA in fp32: sdpa math kernel)",
       micro_batch_size=2, seq_len=1024, precision="fp32"),
    _s("llama3.2-1b_full_fp32_gc_b4_s2048", "llama3.2-1b", "full FT fp32 with checkpointing",
       micro_batch_size=4, seq_len=2048, precision="fp32", gradient_checkpointing=True),
    _s("llama3.2-1b_full_amp_b4_s2048", "llama3.2-1b", "fp32 master weights, bf16 autocast (Trainer bf16=True)",
       micro_batch_size=4, seq_len=2048, master_weights_fp32=True),
    _s("qwen3-8b_lora16_all_b2_s2048", "qwen3-8b", "LoRA r16 all-linear, no checkpointing",
       micro_batch_size=2, seq_len=2048, adapter="lora", lora_r=16, lora_targets=ALL),
    _s("qwen3-8b_lora64_qv_gc_b4_s4096", "qwen3-8b", "LoRA r64 q,v with checkpointing",
       micro_batch_size=4, seq_len=4096, adapter="lora", lora_r=64, lora_targets=("q_proj", "v_proj"),
       gradient_checkpointing=True),
    _s("llama3.2-3b_lora8_attn_drop_b4_s2048", "llama3.2-3b", "LoRA r8 on attention, dropout 0.05",
       micro_batch_size=4, seq_len=2048, adapter="lora", lora_r=8,
       lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"), lora_dropout=0.05),
    _s("llama3.1-8b_lora16_all_gc_b4_s4096", "llama3.1-8b", "LoRA r16 all-linear, checkpointing, 16k tokens",
       micro_batch_size=4, seq_len=4096, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True),
    _s("qwen2.5-7b_lora128_all_gc_b2_s4096", "qwen2.5-7b", "LoRA r128 all-linear, checkpointing (big adapter)",
       micro_batch_size=2, seq_len=4096, adapter="lora", lora_r=128, lora_targets=ALL, gradient_checkpointing=True),
    _s("qwen2.5-0.5b_full_bf16_gc_b1_s32768", "qwen2.5-0.5b", "long sequence, large vocab: logits dominate",
       micro_batch_size=1, seq_len=32768, gradient_checkpointing=True),
    _s("qwen3-0.6b_lora16_all_gc_b2_s16384", "qwen3-0.6b", "LoRA, 32k tokens x 151,936 vocab: logits ~ 80%",
       micro_batch_size=2, seq_len=16384, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True),
    _s("qwen2.5-1.5b_full_bf16_eager_b2_s2048", "qwen2.5-1.5b", "eager attention: s x s scores per layer",
       micro_batch_size=2, seq_len=2048, attn_implementation="eager"),
    _s("qwen2.5-1.5b_full_bf16_b2_s2048", "qwen2.5-1.5b", "the same with sdpa (flash)",
       micro_batch_size=2, seq_len=2048),
    _s("llama3.2-1b_full_bf16_gc_ga2_b4_s2048", "llama3.2-1b", "gradient accumulation 2: grads live in forward",
       micro_batch_size=4, seq_len=2048, gradient_checkpointing=True, gradient_accumulation_steps=2),
    _s("qwen3-1.7b_dpo_full_ref_b2_s1024", "qwen3-1.7b", "DPO full FT with a separate reference model",
       micro_batch_size=2, seq_len=1024, trainer="dpo", reference="model", gradient_checkpointing=True),
    _s("qwen3-4b_dpo_lora16_b2_s2048", "qwen3-4b", "DPO LoRA, reference = base with adapters off",
       micro_batch_size=2, seq_len=2048, trainer="dpo", reference="lora_base", adapter="lora", lora_r=16,
       lora_targets=ALL),
    _s("llama3.2-1b_dpo_full_ref_b4_s2048", "llama3.2-1b", "DPO full FT, reference copy, no checkpointing",
       micro_batch_size=4, seq_len=2048, trainer="dpo", reference="model"),
    _s("qwen2.5-1.5b_full_bf16_chunked_b4_s4096", "qwen2.5-1.5b", "chunked CE (4096-position chunks, recomputed)",
       micro_batch_size=4, seq_len=4096, gradient_checkpointing=True, loss="chunked"),
    _s("qwen3-0.6b_lora16_all_gc_liger_b2_s16384", "qwen3-0.6b", "Liger fused linear CE (carried wheel)",
       micro_batch_size=2, seq_len=16384, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True,
       loss="liger"),
    _s("llama3.1-8b_full_bf16_gc_liger_b2_s4096", "llama3.1-8b", "Liger FLCE with a trainable lm_head",
       micro_batch_size=2, seq_len=4096, gradient_checkpointing=True, loss="liger"),
    _s("llama3.1-8b_qlora16_all_gc_b4_s4096", "llama3.1-8b", "QLoRA NF4 double-quant (carried bitsandbytes)",
       micro_batch_size=4, seq_len=4096, adapter="lora", load_in_4bit=True, lora_r=16, lora_targets=ALL,
       gradient_checkpointing=True),
    _s("qwen3-8b_qlora64_all_b2_s2048", "qwen3-8b", "QLoRA without checkpointing",
       micro_batch_size=2, seq_len=2048, adapter="lora", load_in_4bit=True, lora_r=64, lora_targets=ALL),
    _s("llama3.1-8b_full_fp32_gc_foreach_oom", "llama3.1-8b", "predicted over 141 GB: must OOM on the H200",
       micro_batch_size=1, seq_len=1024, precision="fp32", gradient_checkpointing=True, optimizer="adamw_torch"),
)


def by_name(name: str) -> Scenario:
    for sc in SCENARIOS + HOLDOUT + ISSUE14 + ISSUE14_HOLDOUT + ISSUE14_HYBRID + ISSUE14_HYBRID_HOLDOUT + ISSUE14_GRPO + ISSUE14_CCE + \
            ISSUE14_DPO + ISSUE14_SFT + ISSUE14_KTO + ISSUE14_UNSLOTH + ISSUE14_ORPO:
        if sc.name == name:
            return sc
    raise KeyError(name)


# Run after the model was fitted to SCENARIOS' stage-by-stage measurements: predictions committed first
# (measured_h200_holdout.json records the commit they were made at), then measured once.
HOLDOUT: tuple[Scenario, ...] = (
    _s("holdout_llama3.2-3b_full_bf16_gc_b2_s4096", "llama3.2-3b", "tied 3B full FT, checkpointing",
       micro_batch_size=2, seq_len=4096, gradient_checkpointing=True),
    _s("holdout_qwen2.5-7b_full_bf16_gc_b1_s4096_foreach", "qwen2.5-7b", "7.6B full FT, foreach step",
       micro_batch_size=1, seq_len=4096, gradient_checkpointing=True, optimizer="adamw_torch"),
    _s("holdout_qwen3-8b_full_bf16_gc_b2_s4096", "qwen3-8b", "8.2B full FT, untied 151k vocab",
       micro_batch_size=2, seq_len=4096, gradient_checkpointing=True),
    _s("holdout_qwen3-8b_dpo_lora32_attn_gc_b2_s2048", "qwen3-8b", "DPO LoRA with checkpointing",
       micro_batch_size=2, seq_len=2048, trainer="dpo", reference="lora_base", adapter="lora", lora_r=32,
       lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"), gradient_checkpointing=True),
    _s("holdout_llama3.2-3b_dpo_full_ref_gc_b2_s2048", "llama3.2-3b", "DPO full FT, reference copy, checkpointing",
       micro_batch_size=2, seq_len=2048, trainer="dpo", reference="model", gradient_checkpointing=True),
    _s("holdout_llama3.1-8b_dpo_lora16_qv_b1_s4096", "llama3.1-8b", "DPO LoRA q,v without checkpointing",
       micro_batch_size=1, seq_len=4096, trainer="dpo", reference="lora_base", adapter="lora", lora_r=16,
       lora_targets=("q_proj", "v_proj")),
    _s("holdout_qwen2.5-1.5b_lora16_all_eager_b1_s4096", "qwen2.5-1.5b", "eager attention under LoRA",
       micro_batch_size=1, seq_len=4096, adapter="lora", lora_r=16, lora_targets=ALL, attn_implementation="eager"),
    _s("holdout_qwen3-1.7b_full_fp32_gc_b1_s4096", "qwen3-1.7b", "fp32, math attention, checkpointing",
       micro_batch_size=1, seq_len=4096, precision="fp32", gradient_checkpointing=True),
    _s("holdout_qwen3-4b_full_amp_gc_b2_s2048", "qwen3-4b", "fp32 master weights, autocast, checkpointing",
       micro_batch_size=2, seq_len=2048, master_weights_fp32=True, gradient_checkpointing=True),
    _s("holdout_llama3.2-1b_full_bf16_liger_b4_s4096", "llama3.2-1b", "Liger FLCE, tied lm_head, no checkpointing",
       micro_batch_size=4, seq_len=4096, loss="liger"),
    _s("holdout_qwen2.5-0.5b_qlora8_qv_b4_s4096", "qwen2.5-0.5b", "QLoRA q,v, no checkpointing",
       micro_batch_size=4, seq_len=4096, adapter="lora", load_in_4bit=True, lora_r=8,
       lora_targets=("q_proj", "v_proj")),
    _s("holdout_qwen3-0.6b_full_bf16_ga4_b2_s4096_foreach", "qwen3-0.6b", "gradient accumulation 4, foreach",
       micro_batch_size=2, seq_len=4096, gradient_accumulation_steps=4, optimizer="adamw_torch"),
    _s("holdout_llama3.1-8b_lora16_all_chunked_gc_b4_s4096", "llama3.1-8b", "chunked CE under LoRA",
       micro_batch_size=4, seq_len=4096, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True,
       loss="chunked"),
    _s("holdout_qwen3-1.7b_lora32_all_drop_gc_b8_s2048", "qwen3-1.7b", "LoRA dropout 0.1 with checkpointing",
       micro_batch_size=8, seq_len=2048, adapter="lora", lora_r=32, lora_targets=ALL, lora_dropout=0.1,
       gradient_checkpointing=True),
)


# Issue 14, predicted and committed before the run (measured_h200_issue14.json records the commit): MoE with
# transformers 5's fused experts (grouped_mm), a shared expert, LoRA and QLoRA on a MoE, and QLoRA prepared the
# way peft's prepare_model_for_kbit_training does it (unquantised parameters upcast to fp32).
QL = dict(adapter="lora", load_in_4bit=True, lora_targets=ALL, gradient_checkpointing=True, kbit_upcast=True)
ISSUE14: tuple[Scenario, ...] = (
    _s("moe_qwen3-30b-a3b-8l_full_bf16_b1_s4096", "qwen3-30b-a3b", "Qwen3-30B-A3B layers (128 experts, top-8), "
       "8 of 48, full FT", layers=8, micro_batch_size=1, seq_len=4096),
    _s("moe_qwen3-30b-a3b-8l_full_bf16_gc_b2_s2048", "qwen3-30b-a3b", "the same with checkpointing, 2 x 2K",
       layers=8, micro_batch_size=2, seq_len=2048, gradient_checkpointing=True),
    _s("moe_qwen3-30b-a3b_lora16_all_gc_b1_s4096", "qwen3-30b-a3b", "all 48 layers, LoRA all-linear: peft reaches "
       "attention only (fused experts)", micro_batch_size=1, seq_len=4096, adapter="lora", lora_targets=ALL,
       gradient_checkpointing=True),
    _s("moe_qwen1.5-moe-12l_full_bf16_gc_b2_s2048", "qwen1.5-moe-a2.7b", "60 experts top-4 + a gated shared "
       "expert, 12 of 24 layers, full FT", layers=12, micro_batch_size=2, seq_len=2048, gradient_checkpointing=True),
    _s("moe_qwen3-30b-a3b_qlora16_prep_b1_s2048", "qwen3-30b-a3b", "QLoRA on a MoE: experts stay bf16",
       micro_batch_size=1, seq_len=2048, **QL),
    _s("qlora_prep_llama3.1-8b_r16_all_b1_s4096", "llama3.1-8b", "prepare_model_for_kbit_training, 4,000 tokens",
       micro_batch_size=1, seq_len=4096, **QL),
    _s("qlora_prep_llama3.1-8b_r16_all_b1_s1280", "llama3.1-8b", "the same at 1,280 tokens",
       micro_batch_size=1, seq_len=1280, **QL),
    _s("qlora_prep_qwen3-8b_r16_all_b2_s2048", "qwen3-8b", "prepared QLoRA, qk-norm model, 2 x 2K",
       micro_batch_size=2, seq_len=2048, **QL),
)

# Predicted and committed after the ISSUE14 run had fixed LoRA on fused experts; measured once, never fitted.
ISSUE14_HOLDOUT: tuple[Scenario, ...] = (
    _s("holdout14_qwen1.5-moe_lora16_all_gc_b2_s2048", "qwen1.5-moe-a2.7b", "all 24 layers, LoRA all-linear on "
       "60 fused experts + shared expert", micro_batch_size=2, seq_len=2048, adapter="lora", lora_targets=ALL,
       gradient_checkpointing=True),
    _s("holdout14_qwen3-30b-a3b_lora8_qv_down_b1_s2048", "qwen3-30b-a3b", "LoRA r8 q,v + expert down_proj, no "
       "checkpointing: every layer keeps its merged expert weights", micro_batch_size=1, seq_len=2048,
       adapter="lora", lora_r=8, lora_targets=("q_proj", "v_proj", "down_proj")),
    _s("holdout14_qwen3-30b-a3b-8l_full_bf16_gc_b4_s4096_foreach", "qwen3-30b-a3b", "MoE full FT, 16K tokens, "
       "foreach AdamW", layers=8, micro_batch_size=4, seq_len=4096, gradient_checkpointing=True,
       optimizer="adamw_torch"),
    _s("holdout14_qlora_prep_llama3.2-3b_r32_qv_b4_s2048", "llama3.2-3b", "prepared QLoRA, tied embeddings in "
       "fp32, q,v", micro_batch_size=4, seq_len=2048, adapter="lora", load_in_4bit=True, lora_r=32,
       lora_targets=("q_proj", "v_proj"), gradient_checkpointing=True, kbit_upcast=True),
)

# Issue 14, hybrid layers: Qwen3.5-9B (configs/qwen3.5-9b.json: the text_config of Qwen/Qwen3.5-9B, 24 Gated DeltaNet +
# 8 gated-attention layers, 248,320 vocab; its values are transformers 5.17's Qwen3_5TextConfig defaults and match a
# public fixture of the published config) on transformers' torch path: no flash-linear-attention, no causal-conv1d.
# Predicted and committed before the run.
Q35 = "qwen3.5-9b"
ISSUE14_HYBRID: tuple[Scenario, ...] = (
    _s("hybrid_qwen3.5-9b-24l_full_bf16_b1_s4096", Q35, "Qwen3.5-9B, 24 of 32 layers (18 Gated DeltaNet, 6 "
       "attention), full FT bf16 without checkpointing: every layer's fp32 chunk tensors kept", layers=24,
       micro_batch_size=1, seq_len=4096),
    _s("hybrid_qwen3.5-9b_lora16_all_gc_b1_s8192", Q35, "all 32 layers, LoRA r16 all-linear (in_proj_qkv/z/b/a, "
       "out_proj too) with checkpointing, 8K tokens: a GDN layer's recompute + backward", micro_batch_size=1,
       seq_len=8192, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True),
    _s("hybrid_qwen3.5-9b_full_bf16_gc_b2_s2048", Q35, "all 32 layers, full FT with checkpointing, 2 x 2K: the "
       "peak in the first (Gated DeltaNet) layer's backward", micro_batch_size=2, seq_len=2048,
       gradient_checkpointing=True),
    _s("hybrid_qwen3.5-9b_lora16_all_b1_s4096", Q35, "all 32 layers, LoRA all-linear without checkpointing: 24 "
       "GDN layers' saved tensors under frozen weights", micro_batch_size=1, seq_len=4096, adapter="lora",
       lora_r=16, lora_targets=ALL),
    # the issue's 248k vocabulary at 16K tokens, with and without Liger's fused linear cross-entropy
    _s("hybrid_qwen3.5-9b-8l_lora16_all_gc_b1_s16384", Q35, "8 of 32 layers, LoRA all-linear + checkpointing, "
       "16K tokens x 248,320 vocab through HF's loss: the logits dominate", layers=8, micro_batch_size=1,
       seq_len=16384, adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True),
    _s("hybrid_qwen3.5-9b-8l_lora16_all_gc_liger_b1_s16384", Q35, "the same with Liger's fused linear CE: no "
       "logits kept", layers=8, micro_batch_size=1, seq_len=16384, adapter="lora", lora_r=16, lora_targets=ALL,
       gradient_checkpointing=True, loss="liger"),
    # Gemma 3 (configs/gemma-3-1b.json: google/gemma-3-1b-it's published config.json): 262k vocab, head_dim 256,
    # 5 sliding-window (512) layers to every global one, sandwich norms, GELU-tanh MLP
    _s("gemma3-1b_full_bf16_b2_s4096", "gemma-3-1b", "Gemma 3 1B full FT bf16 2 x 4K: sliding-window masks "
       "through sdpa, 262k tied vocab", micro_batch_size=2, seq_len=4096),
)

# Issue 14, a holdout after the first hybrid run (which found Gemma 3's sandwich norms missing: -12.2%), predicted at
# the commit that fixed them and run once
ISSUE14_HYBRID_HOLDOUT: tuple[Scenario, ...] = (
    _s("holdout_gemma3-1b_lora16_all_gc_b1_s8192", "gemma-3-1b", "Gemma 3 1B LoRA all-linear + checkpointing, "
       "8K tokens: sliding-window layers recomputed", micro_batch_size=1, seq_len=8192, adapter="lora", lora_r=16,
       lora_targets=ALL, gradient_checkpointing=True),
    _s("holdout_gemma3-1b_full_bf16_gc_b4_s2048_foreach", "gemma-3-1b", "Gemma 3 1B full FT + checkpointing, "
       "4 x 2K, foreach AdamW", micro_batch_size=4, seq_len=2048, gradient_checkpointing=True,
       optimizer="adamw_torch"),
    _s("holdout_hybrid_qwen3.5-9b-16l_full_bf16_gc_b1_s16384", Q35, "Qwen3.5-9B 16 of 32 layers, full FT + "
       "checkpointing at 16K tokens: a GDN layer's recompute at 16K", layers=16, micro_batch_size=1,
       seq_len=16384, gradient_checkpointing=True),
)

# Issue 14, GRPO as TRL 1.16's GRPOTrainer runs it without vLLM (benchmarks/memory/harness_grpo.py runs the real
# trainer): seq_len is the longest prompt + max_completion_length, micro_batch_size counts completions; every
# generation batch holds two prompts (padding, so sdpa gets a mask). Predicted before any run.
# GRPOConfig's checkpointing default; TRL's Trainer runs the forward under accelerate's bf16 autocast
G14 = dict(trainer="grpo", num_generations=8, gradient_checkpointing=True, trainer_autocast=True)
ISSUE14_GRPO: tuple[Scenario, ...] = (
    _s("grpo_qwen3-0.6b_full_bf16_gc_b16_p128_c512", "qwen3-0.6b", "GRPO full FT, beta 0 (TRL's default): 16 "
       "completions of 2 prompts, 128 + 512 tokens", micro_batch_size=16, seq_len=128 + 512,
       max_completion_length=512, **G14),
    _s("grpo_qwen3-1.7b_full_bf16_gc_b8_ga2_p128_c1024_beta", "qwen3-1.7b", "GRPO full FT, beta 0.04: a reference "
       "copy and its log-probs, generation batch 8 x 2 accumulation steps, 1,024-token completions",
       micro_batch_size=8, gradient_accumulation_steps=2, seq_len=128 + 1024, max_completion_length=1024,
       beta=0.04, **G14),
    _s("grpo_qwen3-1.7b_lora16_all_gc_b16_p256_c256_beta_mu2", "qwen3-1.7b", "GRPO LoRA all-linear, beta 0.04 "
       "(adapters off for the reference), num_iterations 2 (old log-probs too)", micro_batch_size=16,
       seq_len=256 + 256, max_completion_length=256, adapter="lora", lora_r=16, lora_targets=ALL, beta=0.04,
       num_iterations=2, **G14),
)

# Issue 14, Cut Cross-Entropy (apple/ml-cross-entropy, cut-cross-entropy 25.1.1 carried as a wheel): the harness calls
# linear_cross_entropy(hidden, lm_head.weight, labels, shift=1) as axolotl's cut_cross_entropy plugin does. Predicted
# before the run.
ISSUE14_CCE: tuple[Scenario, ...] = (
    _s("cce_qwen3-0.6b_full_bf16_b4_s4096", "qwen3-0.6b", "CCE, full FT of a tied 151k-vocab model, 16K tokens: "
       "no logits at all", micro_batch_size=4, seq_len=4096, loss="cut_cross_entropy"),
    _s("cce_llama3.2-1b_lora16_all_gc_b2_s8192", "llama3.2-1b", "CCE under LoRA all-linear + checkpointing, "
       "2 x 8K tokens, 128k vocab", micro_batch_size=2, seq_len=8192, adapter="lora", lora_r=16, lora_targets=ALL,
       gradient_checkpointing=True, loss="cut_cross_entropy"),
)

# Issue 14, DPO as TRL 1.16's DPOTrainer runs it (benchmarks/memory/harness_dpo.py runs the real trainer): the fused
# lm_head (no logits), chosen and rejected rows in one batch, each rejected 16 tokens shorter than its chosen so the
# batch is padded and sdpa gets a mask. seq_len is prompt + chosen. Predicted before any run.
ISSUE14_DPO: tuple[Scenario, ...] = (
    _s("dpo_trl_qwen3-1.7b_full_ref_gc_b4_s2048", "qwen3-1.7b", "TRL DPOTrainer, full FT with the reference copy "
       "TRL loads itself (ref_model=None), checkpointing, 8 rows x 2K", micro_batch_size=4, seq_len=2048,
       trainer="dpo", trainer_autocast=True, fused_lm_head=True, reference="model", gradient_checkpointing=True),
    _s("dpo_trl_qwen3-4b_lora16_all_b2_s2048", "qwen3-4b", "TRL DPOTrainer, LoRA all-linear, ref_model=None: the "
       "reference is the policy with its adapters off; no checkpointing", micro_batch_size=2, seq_len=2048,
       trainer="dpo", trainer_autocast=True, fused_lm_head=True, reference="lora_base", adapter="lora", lora_r=16, lora_targets=ALL),
    _s("dpo_trl_qwen3-0.6b_full_precomputed_ipo_gc_b8_s1024", "qwen3-0.6b", "TRL DPOTrainer, loss_type ipo, "
       "precompute_ref_log_probs: no reference copy, no reference forward in the step", micro_batch_size=8,
       seq_len=1024, trainer="ipo", trainer_autocast=True, fused_lm_head=True, reference="precomputed", gradient_checkpointing=True),
    # a holdout after the first run (LoRA without checkpointing +24%: the Trainer's autocast runs the fp32 adapters'
    # matmuls in bf16, so they keep bf16 inputs, not fp32 ones), predicted at the commit that models it, run once
    _s("holdout_dpo_trl_qwen2.5-1.5b_lora32_attn_b4_s1024", "qwen2.5-1.5b", "TRL DPOTrainer, LoRA r32 on q,k,v,o, "
       "adapters off for the reference, no checkpointing, 8 rows x 1K", micro_batch_size=4, seq_len=1024,
       trainer="dpo", trainer_autocast=True, fused_lm_head=True, reference="lora_base", adapter="lora", lora_r=32,
       lora_targets=("q_proj", "k_proj", "v_proj", "o_proj")),
    _s("holdout_dpo_trl_qwen3-1.7b_lora16_all_gc_b2_s2048", "qwen3-1.7b", "TRL DPOTrainer, LoRA all-linear with "
       "checkpointing, 4 rows x 2K", micro_batch_size=2, seq_len=2048, trainer="dpo", trainer_autocast=True, fused_lm_head=True,
       reference="lora_base", adapter="lora", lora_r=16, lora_targets=ALL, gradient_checkpointing=True),
)

# Issue 14, the step as the trainers run it (benchmarks/memory/harness_sft.py runs transformers' Trainer and TRL 1.16's
# SFTTrainer, harness_kto.py TRL 1.16's KTOTrainer): real text rows of differing length (each batch's longest at
# seq_len, the others 16 tokens apart), so the collator pads and sdpa gets the padding mask; the Trainer's bf16
# autocast; bitsandbytes weights loaded by from_pretrained(quantization_config=...) and prepared by peft's
# prepare_model_for_kbit_training as axolotl does. Predicted before any run.
T14 = dict(trainer_autocast=True, hf_trainer=True, padding_mask=True)
ISSUE14_SFT: tuple[Scenario, ...] = (
    _s("sft_trl_qwen3-1.7b_full_gc_b4_s2048", "qwen3-1.7b", "TRL SFTTrainer: fused lm_head, full FT with "
       "checkpointing, 4 padded rows x 2K", micro_batch_size=4, seq_len=2048, gradient_checkpointing=True,
       fused_lm_head=True, **T14),
    _s("sft_trl_qwen3-4b_lora16_all_b2_s2048", "qwen3-4b", "TRL SFTTrainer: fused lm_head, LoRA all-linear, no "
       "checkpointing, 2 padded rows x 2K", micro_batch_size=2, seq_len=2048, adapter="lora", lora_r=16,
       lora_targets=ALL, fused_lm_head=True, **T14),
    _s("sft_hf_qwen3-1.7b_full_b4_s1024", "qwen3-1.7b", "transformers Trainer: materialised logits, full FT without "
       "checkpointing, 4 padded rows x 1K (the padding mask in every layer)", micro_batch_size=4, seq_len=1024,
       **T14),
    _s("sft_hf_qwen3-8b_qlora16_prep_gc_b2_s2048", "qwen3-8b", "transformers Trainer, 4-bit NF4 (double quant) by "
       "from_pretrained, prepare_model_for_kbit_training, LoRA all-linear, autocast", micro_batch_size=2,
       seq_len=2048, adapter="lora", lora_r=16, lora_targets=ALL, load_in_4bit=True, kbit_upcast=True,
       gradient_checkpointing=True, **T14),
    # after the 8B one timed out while saving its random-init model: the same setup on the 4B shape, predicted at the
    # commit that adds it
    _s("sft_hf_qwen3-4b_qlora16_prep_gc_b2_s2048", "qwen3-4b", "transformers Trainer, 4-bit NF4 (double quant) by "
       "from_pretrained, prepare_model_for_kbit_training, LoRA all-linear, autocast", micro_batch_size=2,
       seq_len=2048, adapter="lora", lora_r=16, lora_targets=ALL, load_in_4bit=True, kbit_upcast=True,
       gradient_checkpointing=True, **T14),
    _s("sft_hf_qwen3-4b_lora16_8bit_prep_gc_b2_s2048", "qwen3-4b", "transformers Trainer, 8-bit LLM.int8 weights, "
       "prepare_model_for_kbit_training, LoRA all-linear", micro_batch_size=2, seq_len=2048, adapter="lora",
       lora_r=16, lora_targets=ALL, load_in_8bit=True, kbit_upcast=True, gradient_checkpointing=True, **T14),
    _s("sft_hf_qwen3-1.7b_full_adamw8bit_gc_b4_s2048", "qwen3-1.7b", "transformers Trainer, full FT with "
       "bitsandbytes' 8-bit AdamW (optim adamw_bnb_8bit)", micro_batch_size=4, seq_len=2048,
       optimizer="adamw_bnb_8bit", gradient_checkpointing=True, **T14),
    # after probe_int8.py found bitsandbytes' 8-bit contexts holding their inputs and the prepared fp32 lm_head's
    # bf16 copy under autocast: other shapes, both checkpointing variants and none, predicted at the commit that
    # adds them
    _s("sft_hf_llama3.2-3b_lora16_8bit_prep_gc_b4_s1024", "llama3.2-3b", "transformers Trainer, 8-bit LLM.int8 "
       "weights, prepared, LoRA all-linear, non-reentrant checkpointing (transformers 5's default)",
       micro_batch_size=4, seq_len=1024, adapter="lora", lora_r=16, lora_targets=ALL, load_in_8bit=True,
       kbit_upcast=True, gradient_checkpointing=True, **T14),
    _s("sft_hf_qwen2.5-1.5b_lora16_8bit_prep_gcre_b2_s2048", "qwen2.5-1.5b", "transformers Trainer, 8-bit weights, "
       "prepared, LoRA all-linear, reentrant checkpointing (axolotl's SFT default)", micro_batch_size=2,
       seq_len=2048, adapter="lora", lora_r=16, lora_targets=ALL, load_in_8bit=True, kbit_upcast=True,
       gradient_checkpointing=True, checkpoint_reentrant=True, **T14),
    _s("sft_hf_qwen3-1.7b_lora16_8bit_prep_b2_s1024", "qwen3-1.7b", "transformers Trainer, 8-bit weights, "
       "prepared, LoRA all-linear, no checkpointing", micro_batch_size=2, seq_len=1024, adapter="lora", lora_r=16,
       lora_targets=ALL, load_in_8bit=True, kbit_upcast=True, **T14),
    _s("sft_hf_llama3.2-3b_qlora16_prep_gc_b2_s2048", "llama3.2-3b", "transformers Trainer, 4-bit NF4 prepared, "
       "LoRA all-linear, autocast: the untied fp32 lm_head's bf16 copy", micro_batch_size=2, seq_len=2048,
       adapter="lora", lora_r=16, lora_targets=ALL, load_in_4bit=True, kbit_upcast=True,
       gradient_checkpointing=True, **T14),
)
# Issue 14, Unsloth's own path (benchmarks/memory/harness_unsloth.py: FastLanguageModel.from_pretrained,
# get_peft_model, TRL's SFTTrainer as Unsloth patches it, its defaults otherwise), predicted before the run
U14 = dict(unsloth=True, adapter="lora", lora_r=16, lora_targets=ALL, optimizer="adamw_8bit", trainer_autocast=True,
           hf_trainer=True)
ISSUE14_UNSLOTH: tuple[Scenario, ...] = (
    _s("unsloth_qwen3-1.7b_lora16_ugc_b4_s2048", "qwen3-1.7b", "Unsloth LoRA all-linear on bf16 weights, its "
       "offloaded checkpointing ('unsloth'), 4 rows x 2K", micro_batch_size=4, seq_len=2048,
       gradient_checkpointing=True, checkpoint_offload=True, **U14),
    _s("unsloth_qwen2.5-1.5b_qlora16_ugc_b4_s4096", "qwen2.5-1.5b", "Unsloth QLoRA (NF4, double quant), offloaded "
       "checkpointing, 4 rows x 4K", micro_batch_size=4, seq_len=4096, load_in_4bit=True,
       gradient_checkpointing=True, checkpoint_offload=True, **U14),
    _s("unsloth_qwen3-0.6b_lora16_gc_b4_s2048", "qwen3-0.6b", "Unsloth LoRA with use_gradient_checkpointing=True "
       "(torch's reentrant checkpoint: every layer input on the GPU)", micro_batch_size=4, seq_len=2048,
       gradient_checkpointing=True, **U14),
    _s("unsloth_qwen3-0.6b_lora16_nogc_b2_s1024", "qwen3-0.6b", "Unsloth LoRA without checkpointing: every layer's "
       "saved set", micro_batch_size=2, seq_len=1024, **U14),
    # after the first run (-5.4% to -0.3%, no change made from it): other shapes, predicted at the commit that adds them
    _s("holdout_unsloth_qwen2.5-0.5b_lora32_ugc_b8_s2048", "qwen2.5-0.5b", "Unsloth LoRA r32 on a tied 0.5B, "
       "offloaded checkpointing, 8 rows x 2K", micro_batch_size=8, seq_len=2048, gradient_checkpointing=True,
       checkpoint_offload=True, **(U14 | {"lora_r": 32})),
    _s("holdout_unsloth_qwen3-1.7b_qlora16_gc_b8_s1024", "qwen3-1.7b", "Unsloth QLoRA with torch's reentrant "
       "checkpoint (use_gradient_checkpointing=True), 8 rows x 1K", micro_batch_size=8, seq_len=1024,
       load_in_4bit=True, gradient_checkpointing=True, **U14),
)
# Issue 14, ORPO through TRL 1.16's ORPOTrainer (trl.experimental.orpo, harness_orpo.py): materialised logits, the
# chosen rows' NLL beside the log-odds term, no reference; predicted before the run
O14 = dict(trainer="orpo", reference="none", trainer_autocast=True, hf_trainer=True, padding_mask=True)
ISSUE14_ORPO: tuple[Scenario, ...] = (
    _s("orpo_trl_qwen3-0.6b_full_b4_s1024", "qwen3-0.6b", "TRL ORPOTrainer, full FT, 4 pairs x 1K (8 rows of "
       "materialised 151k-vocab logits)", micro_batch_size=4, seq_len=1024, **O14),
    _s("orpo_trl_qwen3-1.7b_lora16_all_gc_b2_s2048", "qwen3-1.7b", "TRL ORPOTrainer, LoRA all-linear with "
       "checkpointing, 2 pairs x 2K", micro_batch_size=2, seq_len=2048, adapter="lora", lora_r=16, lora_targets=ALL,
       gradient_checkpointing=True, **O14),
)
ISSUE14_KTO: tuple[Scenario, ...] = (
    _s("kto_trl_qwen3-1.7b_full_ref_gc_b4_s2048", "qwen3-1.7b", "TRL KTOTrainer: fused lm_head, full FT with the "
       "reference copy TRL loads, KL rows, checkpointing, 4 rows x 2K", micro_batch_size=4, seq_len=2048,
       trainer="kto", reference="model", gradient_checkpointing=True, fused_lm_head=True, **T14),
    _s("kto_trl_qwen3-4b_lora16_all_b4_s1024", "qwen3-4b", "TRL KTOTrainer: LoRA all-linear, adapters off for the "
       "reference, no checkpointing, 4 rows x 1K", micro_batch_size=4, seq_len=1024, trainer="kto",
       reference="lora_base", adapter="lora", lora_r=16, lora_targets=ALL, fused_lm_head=True, **T14),
)
