"""
DPO Training Script for SFM Post-Training

RESEARCH CODE - This script is intended for research purposes.
Do not use fallback behaviors - fail explicitly on errors.
"""

import os
import sys
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import DPOConfig, DPOTrainer


@dataclass
class ScriptArguments:
    model_name: str = field(
        metadata={"help": "Model to fine-tune (required)"},
    )
    dataset_name: str = field(
        metadata={"help": "DPO dataset to use (required)"},
    )
    max_samples: int = field(
        default=0,
        metadata={"help": "Max training samples (0 = use all)"},
    )


def main():
    parser = HfArgumentParser((ScriptArguments, DPOConfig))
    script_args, training_args = parser.parse_args_into_dataclasses()

    # Verify HF token is set - fail explicitly, no fallback
    hf_token = os.environ.get("HF_TOKEN")
    if not hf_token:
        raise RuntimeError(
            "HF_TOKEN environment variable is not set. "
            "This is required for accessing gated models and datasets."
        )

    print(f"Loading model: {script_args.model_name}")
    print(f"Loading dataset: {script_args.dataset_name}")
    print(f"Output directory: {training_args.output_dir}")

    # Load tokenizer - fail if not found, no fallback
    tokenizer = AutoTokenizer.from_pretrained(
        script_args.model_name,
        token=hf_token,
        trust_remote_code=True,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    # Load model for full fine-tuning (DeepSpeed configured via --deepspeed arg)
    model = AutoModelForCausalLM.from_pretrained(
        script_args.model_name,
        token=hf_token,
        torch_dtype=torch.bfloat16,
        trust_remote_code=True,
        attn_implementation="sdpa",  # PyTorch native efficient attention (works on B200)
    )

    # Load dataset - fail if not found, no fallback
    dataset = load_dataset(script_args.dataset_name, token=hf_token)

    # DPO expects 'prompt', 'chosen', 'rejected' columns
    # Check dataset structure
    train_dataset = dataset["train"]

    # Subsample if max_samples is set
    if script_args.max_samples > 0:
        train_dataset = train_dataset.select(range(min(script_args.max_samples, len(train_dataset))))
        print(f"Using {len(train_dataset)} samples (subsampled)")

    # DPO supports two formats:
    # 1. prompt + chosen + rejected (explicit prompt)
    # 2. chosen + rejected only (chat format - TRL extracts prompt from conversation)
    available_columns = set(train_dataset.column_names)

    has_prompt = "prompt" in available_columns
    has_chosen_rejected = {"chosen", "rejected"}.issubset(available_columns)

    if not has_chosen_rejected:
        raise ValueError(
            f"Dataset must have 'chosen' and 'rejected' columns. "
            f"Available columns: {available_columns}."
        )

    if has_prompt:
        print("Dataset format: prompt + chosen/rejected")
    else:
        print("Dataset format: chat-only (chosen/rejected conversations)")

    # Clean and normalize messages to avoid TRL schema errors
    # Some datasets have extra fields (annotations, audio, etc.) that cause issues
    def clean_messages(example):
        """Normalize messages to just role/content and filter None content."""
        def clean_msg_list(messages):
            cleaned = []
            for msg in messages:
                content = msg.get("content")
                if content is None:
                    return None  # Signal to filter this sample
                cleaned.append({"role": msg["role"], "content": content})
            return cleaned

        chosen = clean_msg_list(example["chosen"])
        rejected = clean_msg_list(example["rejected"])

        if chosen is None or rejected is None:
            return {"chosen": [], "rejected": [], "_invalid": True}

        return {"chosen": chosen, "rejected": rejected, "_invalid": False}

    # Apply cleaning
    train_dataset = train_dataset.map(clean_messages, remove_columns=["chosen", "rejected"])

    # Filter out invalid samples
    original_len = len(train_dataset)
    train_dataset = train_dataset.filter(lambda x: not x.get("_invalid", False))
    train_dataset = train_dataset.remove_columns(["_invalid"])
    filtered_count = original_len - len(train_dataset)
    if filtered_count > 0:
        print(f"Filtered {filtered_count} invalid samples ({len(train_dataset)} remaining)")

    # Initialize DPO trainer
    trainer = DPOTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        processing_class=tokenizer,
    )

    # Train
    if training_args.resume_from_checkpoint:
        print(f"Resuming from checkpoint: {training_args.resume_from_checkpoint}")
    print("Starting DPO training...")
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)

    # Save final model - DeepSpeed handles state dict gathering automatically
    print(f"Saving model to {training_args.output_dir}")
    trainer.save_model(training_args.output_dir)
    
    # Only main process saves tokenizer and pushes to hub
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(training_args.output_dir)
        
        # Push to hub if requested
        if training_args.push_to_hub:
            print(f"Pushing model to HuggingFace Hub: {training_args.hub_model_id}")
            trainer.push_to_hub()
    
    # Wait for main process to finish uploading before exiting
    trainer.accelerator.wait_for_everyone()
    
    print("Training complete!")


if __name__ == "__main__":
    main()