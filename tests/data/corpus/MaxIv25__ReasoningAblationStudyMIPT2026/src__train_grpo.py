"""
GRPO training script for reasoning ablation study.

Supports three loss variants via GRPOConfig.loss_type:
- "grpo"    — Vanilla GRPO (sequence-level normalization)
- "dapo"    — DAPO (token-level normalization + asymmetric clipping)
- "dr_grpo" — Dr. GRPO (constant normalization + no reward std scaling)

Reward functions:
- accuracy_reward: math_verify-based correctness checking (0.0 / 1.0)
- format_reward: checks for <think>...</think> + \\boxed{} format (0.0 / 0.5 / 1.0)

Uses vLLM colocate mode for fast generation on single GPU.
"""

import argparse
import os
import re
import sys
from pathlib import Path

# ── FLA/TileLang workaround for H200 (Hopper) ────────────────
#
# Problem: Qwen3.5 uses GDN (Gated Delta Net) linear attention layers,
# which require flash-linear-attention (FLA) for training.
#
# On Hopper GPUs (H200/H100) + Triton >= 3.4.0:
#   1. TileLang backend CRASHES in backward pass with
#      "Get different layout for b_dq" (tilelang LayoutInference bug)
#   2. Triton fallback is BLOCKED by FLA with RuntimeError because
#      Triton >= 3.4 on Hopper produces slightly incorrect results
#      for gated chunk_bwd_dqkwg (FLA issue #640)
#
# Solution: Disable tilelang (env var), then patch fla.utils to pretend
# we're not on Hopper so the Triton fallback is allowed. The numerical
# differences from #640 are minor and acceptable for RL training with
# bf16 precision.
#
os.environ["FLA_TILELANG"] = "0"

import torch
from datasets import load_from_disk

# Patch FLA: allow Triton fallback on Hopper by disabling the guard.
# The guard is inside chunk_bwd_dqkwg which reads IS_NVIDIA_HOPPER at
# call time from its module globals (imported from fla.utils).
import fla.utils
fla.utils.IS_NVIDIA_HOPPER = False
# Also patch the local reference in chunk_o module
import fla.ops.common.chunk_o as _chunk_o
_chunk_o.IS_NVIDIA_HOPPER = False

from trl import GRPOTrainer, GRPOConfig

sys.path.insert(0, str(Path(__file__).parent.parent))
from src.utils import load_config, setup_logging, get_gpu_memory_info, extract_boxed_answer, verify_answer

logger = setup_logging("train_grpo")


# ──────────────────────────────────────────────────────────────
# Reward functions
# ──────────────────────────────────────────────────────────────

def accuracy_reward(completions, solution, log_metric=None, **kwargs):
    """
    Check if the model's answer matches the ground truth.

    Uses math_verify for robust LaTeX comparison, with string fallback.
    Reward: 1.0 (correct) / 0.0 (incorrect).

    Args:
        completions: list of list of message dicts (conversational format)
        solution: list of ground truth answer strings
    """
    rewards = []
    num_correct = 0

    for completion, sol in zip(completions, solution):
        content = completion[0]["content"] if isinstance(completion, list) else completion
        predicted = extract_boxed_answer(content)

        if predicted is not None and verify_answer(predicted, sol):
            rewards.append(1.0)
            num_correct += 1
        else:
            rewards.append(0.0)

    # Log accuracy as a custom metric
    if log_metric and len(rewards) > 0:
        log_metric("accuracy", num_correct / len(rewards))

    return rewards


def format_reward(completions, log_metric=None, **kwargs):
    """
    Check if the completion follows the expected reasoning format.

    Checks for:
    - </think> closing tag (opening <think> is in prompt prefill)
    - \\boxed{} (final answer)

    Reward: 1.0 (both), 0.5 (one of two), 0.0 (neither).
    """
    rewards = []
    format_ok_count = 0

    for completion in completions:
        content = completion[0]["content"] if isinstance(completion, list) else completion
        score = 0.0

        # Check for </think> closing tag
        # Note: <think> opening tag is in the prompt prefill (assistant message),
        # so the completion only contains the closing </think> tag.
        has_think = "</think>" in content
        has_boxed = "\\boxed{" in content

        if has_think:
            score += 0.5
        if has_boxed:
            score += 0.5

        if score >= 1.0:
            format_ok_count += 1

        rewards.append(score)

    if log_metric and len(rewards) > 0:
        log_metric("format_compliance", format_ok_count / len(rewards))

    return rewards




# ──────────────────────────────────────────────────────────────
# Training
# ──────────────────────────────────────────────────────────────

def train(config: dict, data_dir: str = None, output_dir: str = None):
    """
    Run GRPO training.

    Args:
        config: Merged configuration dict (grpo_base.yaml + experiment yaml)
        data_dir: Path to prepared GRPO dataset
        output_dir: Output directory for checkpoints
    """
    model_cfg = config.get("model", {})
    grpo_cfg = config.get("grpo", {})
    train_cfg = config.get("training", {})

    model_name = model_cfg.get("name", "Qwen/Qwen3.5-0.8B-Base")
    run_name = config.get("run_name", "grpo")
    loss_type = grpo_cfg.get("loss_type", "grpo")

    if output_dir is None:
        output_dir = f"./outputs/{run_name}"

    logger.info(f"GRPO variant: {loss_type}")
    logger.info(f"Model: {model_name}")
    logger.info(f"Output: {output_dir}")
    logger.info(f"GPU info: {get_gpu_memory_info()}")

    # TF32 for matmul on Hopper
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    # Enable all SDPA backends — flash and mem_efficient preferred,
    # math as fallback for shapes they can't handle.
    torch.backends.cuda.enable_flash_sdp(True)
    torch.backends.cuda.enable_mem_efficient_sdp(True)
    torch.backends.cuda.enable_math_sdp(True)
    logger.info("SDPA config: flash=True, mem_efficient=True, math=True (fallback)")

    # Load dataset
    if data_dir:
        train_dataset = load_from_disk(data_dir)
        logger.info(f"Loaded dataset: {len(train_dataset)} examples")

        # Optionally truncate dataset (grpo.num_samples)
        num_samples = grpo_cfg.get("num_samples", None)
        if num_samples and num_samples < len(train_dataset):
            train_dataset = train_dataset.select(range(num_samples))
            logger.info(f"Truncated dataset to {num_samples} examples (grpo.num_samples)")
    else:
        raise ValueError("--data-dir is required for GRPO training")

    # ── Build GRPOConfig ──────────────────────────────────────
    # Common parameters
    grpo_args = GRPOConfig(
        output_dir=output_dir,
        run_name=run_name,

        # Loss variant
        loss_type=loss_type,

        # Reward scaling
        # Vanilla GRPO: "group" (default) — normalize by group std
        # Dr. GRPO: "none" — no std scaling to avoid difficulty bias
        scale_rewards=grpo_cfg.get("scale_rewards", "group"),

        # Clipping
        epsilon=grpo_cfg.get("epsilon", 0.2),
        epsilon_high=grpo_cfg.get("epsilon_high", None),

        # KL divergence
        # β=0.0: modern practice for reasoning tasks (no KL penalty)
        beta=grpo_cfg.get("beta", 0.0),

        # Generation
        num_generations=grpo_cfg.get("num_generations", 8),
        max_completion_length=grpo_cfg.get("max_completion_length", 8192),
        temperature=grpo_cfg.get("temperature", 1.0),
        top_p=grpo_cfg.get("top_p", 1.0),
        top_k=grpo_cfg.get("top_k", 0),

        # Mask completions that hit max_completion_length
        # (avoid noisy gradients from truncated reasoning)
        mask_truncated_completions=grpo_cfg.get("mask_truncated_completions", True),

        # Generation batching — larger batch = fewer vLLM calls = better throughput
        generation_batch_size=grpo_cfg.get("generation_batch_size", None),

        # Training
        num_iterations=train_cfg.get("num_iterations", 1),
        num_train_epochs=train_cfg.get("num_train_epochs", 1),
        per_device_train_batch_size=train_cfg.get("per_device_train_batch_size", 1),
        gradient_accumulation_steps=train_cfg.get("gradient_accumulation_steps", 8),
        learning_rate=train_cfg.get("learning_rate", 5e-7),
        lr_scheduler_type=train_cfg.get("lr_scheduler_type", "cosine"),
        warmup_ratio=train_cfg.get("warmup_ratio", 0.05),
        weight_decay=train_cfg.get("weight_decay", 0.01),
        max_grad_norm=train_cfg.get("max_grad_norm", 1.0),

        # Data loading
        dataloader_num_workers=train_cfg.get("dataloader_num_workers", 0),

        # Precision
        bf16=True,
        gradient_checkpointing=True,

        # Saving — save_only_model to avoid ~6GB optimizer state per checkpoint
        save_strategy="steps",
        save_steps=train_cfg.get("save_steps", 100),
        save_total_limit=train_cfg.get("save_total_limit", 3),
        save_only_model=True,

        # Logging
        logging_steps=train_cfg.get("logging_steps", 10),
        report_to="tensorboard",

        # vLLM — mode from config (server or colocate)
        use_vllm=grpo_cfg.get("use_vllm", True),
        vllm_mode=grpo_cfg.get("vllm_mode", "colocate"),
        vllm_enable_sleep_mode=True,  # Release KV cache during training backward
        vllm_importance_sampling_correction=grpo_cfg.get("vllm_importance_sampling_correction", False),
        **(
            {"vllm_gpu_memory_utilization": grpo_cfg.get("vllm_gpu_memory_utilization", 0.3)}
            if grpo_cfg.get("vllm_mode", "colocate") == "colocate"
            else {
                "vllm_server_port": grpo_cfg.get("vllm_server_port", 8000),
                "vllm_group_port": grpo_cfg.get("vllm_group_port", 51216),
            }
        ),

        # Performance
        use_liger_kernel=True,

        # Reward weights: accuracy primary, format secondary but significant
        # 0.5 (not 0.1) to prevent format compliance collapse during RL
        reward_weights=[1.0, 0.5],

        # Model loading kwargs
        model_init_kwargs={
            "torch_dtype": "bfloat16",
            "attn_implementation": "sdpa",
        },
    )

    # Log key config differences between variants
    logger.info(f"  loss_type={grpo_args.loss_type}")
    logger.info(f"  scale_rewards={grpo_args.scale_rewards}")
    logger.info(f"  epsilon={grpo_args.epsilon}, epsilon_high={grpo_args.epsilon_high}")
    logger.info(f"  beta={grpo_args.beta}")
    logger.info(f"  num_generations={grpo_args.num_generations}")
    logger.info(f"  max_completion_length={grpo_args.max_completion_length}")
    logger.info(f"  lr={grpo_args.learning_rate}")
    logger.info(f"  generation_batch_size={grpo_args.generation_batch_size}")
    logger.info(f"  steps_per_generation={grpo_args.steps_per_generation}")
    logger.info(f"  dataloader_num_workers={grpo_args.dataloader_num_workers}")
    logger.info(f"  attn_implementation=sdpa")

    # ── Create trainer ────────────────────────────────────────
    trainer = GRPOTrainer(
        model=model_name,
        args=grpo_args,
        train_dataset=train_dataset,
        reward_funcs=[accuracy_reward, format_reward],
    )

    # ── Train ─────────────────────────────────────────────────
    logger.info("Starting GRPO training...")
    train_result = trainer.train()

    # Save
    logger.info(f"Saving model to {output_dir}")
    trainer.save_model(output_dir)

    # Save metrics
    metrics = train_result.metrics
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)

    logger.info(f"Training complete! Metrics: {metrics}")
    return trainer


# ──────────────────────────────────────────────────────────────
# CLI
# ──────────────────────────────────────────────────────────────

def main():
    parser = argparse.ArgumentParser(description="GRPO Training")
    parser.add_argument(
        "--config", type=str, required=True,
        help="Path to experiment config YAML",
    )
    parser.add_argument(
        "--data-dir", type=str, required=True,
        help="Path to prepared GRPO dataset (from prepare_grpo_data.py)",
    )
    parser.add_argument(
        "--output-dir", type=str, default=None,
        help="Output directory for checkpoints",
    )

    args = parser.parse_args()

    # Load config with grpo_base.yaml inheritance
    project_root = Path(__file__).parent.parent
    base_config_path = project_root / "configs" / "grpo_base.yaml"
    config = load_config(args.config, base_config_path=str(base_config_path))

    train(
        config=config,
        data_dir=args.data_dir,
        output_dir=args.output_dir,
    )


if __name__ == "__main__":
    main()
