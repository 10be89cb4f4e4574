"""
Fine-tune models using Unsloth with LoRA
Handles ONLY training - creates LoRA adapters
Use build.py to convert to merged/GGUF formats

Configure training parameters in training_params.yaml
Configure model/dataset in .env file
"""

import torch
import os
import json
import argparse
from unsloth import FastLanguageModel, is_bfloat16_supported
from datasets import load_dataset
from trl import SFTTrainer
from transformers import TrainingArguments

# Load configuration
from config_loader import get_config_for_script

# Parse command line arguments
parser = argparse.ArgumentParser(description="Fine-tune models using Unsloth with LoRA")
parser.add_argument(
    "--config",
    type=str,
    default=None,
    help="Path to YAML config file (default: training_params.yaml)"
)
args = parser.parse_args()

# Load configuration from YAML and .env
config, env_config = get_config_for_script(args.config, verbose=True)

def save_tokenizer_with_template(tokenizer, output_dir, token=False):
    """
    Save tokenizer and preserve chat_template in tokenizer_config.json.

    Fixes issue where tokenizer.save_pretrained() doesn't always preserve
    the chat_template attribute in the config file, causing benchmarks to fail.
    """
    # Save tokenizer normally
    tokenizer.save_pretrained(output_dir, token=token)

    # Ensure chat_template is in tokenizer_config.json
    if hasattr(tokenizer, 'chat_template') and tokenizer.chat_template:
        config_path = os.path.join(output_dir, "tokenizer_config.json")

        # Load existing config
        with open(config_path, 'r') as f:
            config = json.load(f)

        # Add chat_template if missing
        if 'chat_template' not in config:
            config['chat_template'] = tokenizer.chat_template

            # Save updated config
            with open(config_path, 'w') as f:
                json.dump(config, f, indent=2)

# Model and dataset from YAML config
LORA_BASE_MODEL = config.model.base_model
INFERENCE_BASE_MODEL_CONFIG = config.model.inference_model
DATASET_NAME = config.dataset.name
DATASET_MAX_SAMPLES = config.dataset.max_samples
OUTPUT_MODEL_NAME = config.model.output_name

# Paths from .env config
OUTPUT_DIR_BASE = env_config['output_dir_base']
PREPROCESSED_DATA_DIR = env_config['preprocessed_data_dir']
CACHE_DIR = env_config['cache_dir']

# Training parameters from YAML config
MAX_SEQ_LENGTH = config.training.data.max_seq_length
LORA_RANK = config.training.lora.rank
LORA_ALPHA = config.training.lora.alpha
LORA_DROPOUT = config.training.lora.dropout
USE_RSLORA = config.training.lora.use_rslora
MAX_STEPS = config.training.epochs.max_steps
BATCH_SIZE = config.training.batch.size
GRADIENT_ACCUMULATION_STEPS = config.training.batch.gradient_accumulation_steps
LEARNING_RATE = config.training.optimization.learning_rate
NUM_TRAIN_EPOCHS = config.training.epochs.num_train_epochs
WARMUP_RATIO = config.training.optimization.warmup_ratio
WARMUP_STEPS = config.training.optimization.warmup_steps
PACKING = config.training.data.packing
MAX_GRAD_NORM = config.training.optimization.max_grad_norm
OPTIM = config.training.optimization.optimizer
LOGGING_STEPS = config.logging.logging_steps
SAVE_STEPS = config.logging.save_steps
SAVE_TOTAL_LIMIT = config.logging.save_total_limit
SAVE_ONLY_FINAL = config.logging.save_only_final
USE_GRADIENT_CHECKPOINTING = config.training.optimization.use_gradient_checkpointing
SEED = config.training.data.seed

# Wandb Configuration
WANDB_ENABLED = env_config['wandb_enabled']
WANDB_PROJECT = env_config['wandb_project']
WANDB_RUN_NAME = env_config['wandb_run_name']

# Generate output model name
dataset_short_name = DATASET_NAME.split("/")[-1].lower().replace("_", "-")
if OUTPUT_MODEL_NAME == "auto" or not OUTPUT_MODEL_NAME:
    # Auto-generate from base model + dataset
    model_base = LORA_BASE_MODEL.split("/")[-1].replace("-unsloth-bnb-4bit", "").replace("-unsloth", "")
    output_model_name = f"{model_base}-{dataset_short_name}"
else:
    output_model_name = OUTPUT_MODEL_NAME

# Set HuggingFace cache to project directory for consistency
# Don't set HF_HOME - it creates a nested cache/ subdirectory
os.environ["TRANSFORMERS_CACHE"] = os.path.join(CACHE_DIR, "transformers")
os.environ["HF_HUB_CACHE"] = os.path.join(CACHE_DIR, "hub")
os.environ["HF_DATASETS_CACHE"] = os.path.join(CACHE_DIR, "datasets")

# Auto-created paths
OUTPUT_DIR = os.path.join(OUTPUT_DIR_BASE, output_model_name)
LORA_DIR = os.path.join(OUTPUT_DIR, "lora")
PREPROCESSED_DATASET_PATH = os.path.join(PREPROCESSED_DATA_DIR, dataset_short_name)

# Create directories
os.makedirs(OUTPUT_DIR, exist_ok=True)
os.makedirs(PREPROCESSED_DATA_DIR, exist_ok=True)
os.makedirs(CACHE_DIR, exist_ok=True)

# Auto-generate wandb run name if needed
if WANDB_RUN_NAME == "auto" or not WANDB_RUN_NAME:
    WANDB_RUN_NAME = f"{output_model_name}-r{LORA_RANK}"

print("\n" + "="*60)
print("🦥 UNSLOTH TRAINING - LoRA Adapter Creation")
print("="*60)

# Automatic backup of existing LoRA adapters
lora_exists = os.path.exists(os.path.join(LORA_DIR, "adapter_config.json"))
if lora_exists:
    print(f"\n📦 Existing LoRA adapters detected at: {LORA_DIR}")
    print("   Creating backup before retraining...")

    # Read existing training metrics for backup naming
    metrics_path = os.path.join(LORA_DIR, "training_metrics.json")
    if os.path.exists(metrics_path):
        try:
            with open(metrics_path, 'r') as f:
                old_metrics = json.load(f)

            # Use trained_date if available, otherwise timestamp
            trained_date = old_metrics.get('trained_date', old_metrics.get('timestamp', ''))
            # Convert timestamp format if needed: "2025-11-23 20:22:55" -> "20251123_202255"
            if ' ' in trained_date:
                trained_date = trained_date.replace(' ', '_').replace(':', '').replace('-', '')[:15]

            # Create descriptive backup folder name
            rank = old_metrics.get('lora_rank', 'unknown')
            lr = old_metrics.get('learning_rate', 'unknown')
            final_loss = old_metrics.get('final_loss', 'unknown')
            if isinstance(final_loss, float):
                final_loss = f"{final_loss:.4f}"

            backup_name = f"{trained_date}_rank{rank}_lr{lr}_loss{final_loss}"
        except Exception as e:
            print(f"   ⚠️  Could not read training metrics: {e}")
            from datetime import datetime
            backup_name = datetime.now().strftime("%Y%m%d_%H%M%S")
    else:
        # No metrics file, use current timestamp
        from datetime import datetime
        backup_name = datetime.now().strftime("%Y%m%d_%H%M%S")

    # Create backup directory
    backup_base = os.path.join(OUTPUT_DIR, "lora_bak")
    os.makedirs(backup_base, exist_ok=True)
    backup_dir = os.path.join(backup_base, backup_name)

    # Check if backup with same name already exists
    if os.path.exists(backup_dir):
        print(f"   ⚠️  Backup already exists: {backup_name}")
        print(f"   Skipping backup (already preserved)")
        print(f"   Removing current lora to proceed with retraining...")
        import shutil
        shutil.rmtree(LORA_DIR)
    else:
        # Move old lora to backup
        import shutil
        shutil.move(LORA_DIR, backup_dir)
        print(f"   ✅ Backed up to: {backup_dir}")
        print(f"   💡 Use scripts/restore_trained_data.py to restore if needed")

print("\n📋 Configuration:")
print(f"  Model: {LORA_BASE_MODEL}")
print(f"  Dataset: {DATASET_NAME}")
print(f"  LoRA Output: {LORA_DIR}")
print(f"  Preprocessed Data: {PREPROCESSED_DATASET_PATH}")
print(f"\n  Max Seq Length: {MAX_SEQ_LENGTH}")
print(f"  LoRA Rank: {LORA_RANK}, Alpha: {LORA_ALPHA}")
print(f"  Batch Size: {BATCH_SIZE}, Gradient Accumulation: {GRADIENT_ACCUMULATION_STEPS}")
print(f"  Effective Batch Size: {BATCH_SIZE * GRADIENT_ACCUMULATION_STEPS}")
print(f"  Packing: {PACKING}")
print(f"  Learning Rate: {LEARNING_RATE}")

# Show training length
if MAX_STEPS > 0:
    print(f"  ⚡ TEST MODE: Max Steps: {MAX_STEPS}")
elif DATASET_MAX_SAMPLES > 0:
    print(f"  ⚡ TEST MODE: Dataset Samples: {DATASET_MAX_SAMPLES}")
    print(f"  Epochs: {NUM_TRAIN_EPOCHS}")
else:
    print(f"  Epochs: {NUM_TRAIN_EPOCHS}")
print()

print("🦥 Loading model with 4-bit quantization...")
model, tokenizer = FastLanguageModel.from_pretrained(
    model_name=LORA_BASE_MODEL,
    max_seq_length=MAX_SEQ_LENGTH,
    dtype=None,
    load_in_4bit=True,
    trust_remote_code=True,
)

print("🔧 Adding LoRA adapters...")
model = FastLanguageModel.get_peft_model(
    model,
    r=LORA_RANK,
    lora_alpha=LORA_ALPHA,
    target_modules=[
        "q_proj", "k_proj", "v_proj", "o_proj",
        "gate_proj", "up_proj", "down_proj",
    ],
    lora_dropout=LORA_DROPOUT,
    bias="none",
    use_gradient_checkpointing="unsloth" if USE_GRADIENT_CHECKPOINTING else False,
    random_state=SEED,
    use_rslora=USE_RSLORA,
    loftq_config=None,
)

# Load preprocessed dataset
# NOTE: Run 'python scripts/preprocess.py' first to preprocess your dataset
preprocess_exists = os.path.exists(PREPROCESSED_DATASET_PATH)
metadata_path = os.path.join(PREPROCESSED_DATASET_PATH, "preprocessing_metadata.json")

if not preprocess_exists:
    print("\n" + "="*60)
    print("❌ ERROR: Preprocessed dataset not found!")
    print("="*60)
    print(f"\nExpected location: {PREPROCESSED_DATASET_PATH}")
    print(f"\n🔧 REQUIRED: Run preprocessing first:")
    print(f"   python scripts/preprocess.py")
    print(f"\nThis will:")
    print(f"   • Preprocess and analyze your dataset")
    print(f"   • Provide smart configuration recommendations")
    print(f"   • Save preprocessed data for training")
    print(f"\nAfter preprocessing, run 'python scripts/train.py' again")
    print("="*60 + "\n")
    exit(1)

print(f"\n📂 Loading preprocessed dataset from {PREPROCESSED_DATASET_PATH}")
from datasets import load_from_disk
dataset = load_from_disk(PREPROCESSED_DATASET_PATH)

# Load and show metadata
if os.path.exists(metadata_path):
    with open(metadata_path, 'r') as f:
        metadata = json.load(f)
    print(f"✅ Loaded {len(dataset)} samples")
    print(f"   Dataset: {metadata.get('dataset_name', DATASET_NAME)}")
    print(f"   Max length: {metadata.get('max_length', 'unknown')} tokens")
    print(f"   Avg length: {metadata.get('avg_length', 'unknown')} tokens")
    if metadata.get('filtered_count', 0) > 0:
        print(f"   Filtered out: {metadata['filtered_count']} samples (exceeded MAX_SEQ_LENGTH)")
else:
    print(f"✅ Loaded {len(dataset)} samples")
    print(f"   ⚠️  No metadata found - run 'python scripts/preprocess.py' to regenerate with stats")

# Limit dataset for testing if requested
if DATASET_MAX_SAMPLES > 0 and len(dataset) > DATASET_MAX_SAMPLES:
    print(f"\n⚡ TEST MODE: Limiting dataset to {DATASET_MAX_SAMPLES} samples (from {len(dataset)})")
    dataset = dataset.select(range(DATASET_MAX_SAMPLES))
    print(f"✅ Using {len(dataset)} samples for quick testing")

print("\n🚀 Setting up trainer...")

# Build training arguments based on MAX_STEPS
training_args = {
    "output_dir": OUTPUT_DIR,
    "logging_steps": LOGGING_STEPS,
    "per_device_train_batch_size": BATCH_SIZE,
    "gradient_accumulation_steps": GRADIENT_ACCUMULATION_STEPS,
    "learning_rate": LEARNING_RATE,
    "fp16": not is_bfloat16_supported(),
    "bf16": is_bfloat16_supported(),
    "optim": OPTIM,
    "weight_decay": 0.01,
    "lr_scheduler_type": "linear",
    "max_grad_norm": MAX_GRAD_NORM,
    "gradient_checkpointing": USE_GRADIENT_CHECKPOINTING,
    "report_to": "wandb" if WANDB_ENABLED else "none",
    "run_name": WANDB_RUN_NAME if WANDB_ENABLED else None,
    "seed": SEED,
}

# Add warmup configuration (warmup_steps overrides warmup_ratio if set)
if WARMUP_STEPS > 0:
    training_args["warmup_steps"] = WARMUP_STEPS
else:
    training_args["warmup_ratio"] = WARMUP_RATIO

# Configure checkpoint saving
if SAVE_ONLY_FINAL:
    # Disable intermediate checkpoints - only save final model
    training_args["save_strategy"] = "no"
else:
    # Save intermediate checkpoints
    training_args["save_steps"] = SAVE_STEPS
    training_args["save_total_limit"] = SAVE_TOTAL_LIMIT
    training_args["save_strategy"] = "steps"

# Set either max_steps OR num_train_epochs (not both)
if MAX_STEPS > 0:
    training_args["max_steps"] = MAX_STEPS
else:
    training_args["num_train_epochs"] = NUM_TRAIN_EPOCHS

trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=dataset,
    dataset_text_field="text",
    max_seq_length=MAX_SEQ_LENGTH,
    dataset_num_proc=4,
    packing=PACKING,
    args=TrainingArguments(**training_args),
)

print("\n📊 Model info:")
model.print_trainable_parameters()

print("\n" + "="*60)
print("🚀 STARTING TRAINING")
print("="*60 + "\n")

import time
start_time = time.time()

try:
    trainer_output = trainer.train()
    training_time = time.time() - start_time
except (RuntimeError, ValueError) as e:
    error_msg = str(e).lower()

    # Check for sequence length / token related errors
    if any(keyword in error_msg for keyword in ['length', 'token', 'sequence', 'size', 'exceed', 'overflow']):
        print("\n" + "="*60)
        print("❌ TRAINING FAILED - Sequence Length Error")
        print("="*60)
        print(f"\nError: {e}")
        print("\n💡 SOLUTIONS:")
        print("\n1. Enable length filtering (recommended for first run):")
        print("   • Set CHECK_SEQ_LENGTH=true in .env")
        print("   • Set FORCE_PREPROCESS=true in .env")
        print("   • Re-run: python scripts/train.py")
        print("   • This will filter out samples exceeding max_seq_length")
        print("\n2. Increase context length:")
        print(f"   • Current: max_seq_length={MAX_SEQ_LENGTH}")
        print("   • Increase training.data.max_seq_length in training_params.yaml")
        print("   • Example: max_seq_length: 4096")
        print("   • Note: Higher values require more VRAM")
        print("\n3. Check your dataset:")
        print("   • Some samples may be extremely long")
        print("   • Consider filtering or truncating in your dataset")
        print("\n" + "="*60)
        exit(1)
    else:
        # Re-raise if it's a different error
        raise

print("\n" + "="*60)
print("💾 SAVING MODEL")
print("="*60)

# Save LoRA adapters (small, for continued training)
print(f"\n💾 Saving LoRA adapters to: {LORA_DIR}")
# Save with token=False to avoid unnecessary network calls
# The base model config is already in local cache
model.save_pretrained(LORA_DIR, token=False)
save_tokenizer_with_template(tokenizer, LORA_DIR, token=False)
print(f"✅ LoRA adapters saved!")
print(f"\n💡 To create merged models and other formats, run: python scripts/build.py")

# Save training metrics for README generation
import json

# Get VRAM usage for metrics
max_vram_bytes = None
try:
    import torch
    if torch.cuda.is_available():
        max_vram_bytes = torch.cuda.max_memory_allocated()
except:
    pass

# Get dataset size
dataset_samples = len(dataset) if 'dataset' in locals() else None
total_steps = trainer_output.global_step if hasattr(trainer_output, 'global_step') else None

# Save loss history as separate CSV file
loss_history_path = os.path.join(LORA_DIR, "loss_history.csv")
if hasattr(trainer.state, 'log_history'):
    import csv
    with open(loss_history_path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['step', 'epoch', 'loss', 'learning_rate', 'grad_norm'])

        last_logged_step = 0
        for entry in trainer.state.log_history:
            if 'loss' in entry:
                writer.writerow([
                    entry.get('step', ''),
                    entry.get('epoch', ''),
                    entry.get('loss', ''),
                    entry.get('learning_rate', ''),
                    entry.get('grad_norm', '')
                ])
                last_logged_step = entry.get('step', 0)

        # Append final step if not already logged (happens when total_steps % logging_steps != 0)
        if total_steps and last_logged_step < total_steps:
            # Find the final training entry in log_history
            final_entry = None
            for entry in reversed(trainer.state.log_history):
                if 'loss' in entry:
                    final_entry = entry
                    break

            if final_entry:
                # Write the final step
                writer.writerow([
                    total_steps,  # Use actual final step
                    final_entry.get('epoch', ''),
                    final_entry.get('loss', ''),
                    final_entry.get('learning_rate', ''),
                    final_entry.get('grad_norm', '')
                ])

metrics_path = os.path.join(LORA_DIR, "training_metrics.json")

# Copy training_params.yaml to lora/ directory for reproducibility
print(f"\n📋 Copying training configuration to LoRA directory...")
try:
    import shutil
    from pathlib import Path

    # Determine which config file was used
    if args.config:
        config_source = Path(args.config)
        if not config_source.is_absolute():
            # Resolve relative path from project root
            project_root = Path(__file__).parent.parent
            config_source = project_root / args.config
    else:
        # Default config
        project_root = Path(__file__).parent.parent
        config_source = project_root / "training_params.yaml"

    # Check if source file exists
    if not config_source.exists():
        print(f"⚠️  Config file not found: {config_source}")
        print(f"   Skipping config copy (this is expected if using config/ directory)")
    else:
        # Copy to lora/ directory
        config_dest = Path(LORA_DIR) / "training_params.yaml"
        shutil.copy2(config_source, config_dest)
        print(f"✅ Copied {config_source.name} to lora/ directory")
        print(f"   This file will be pushed to HuggingFace for reproducibility")
except Exception as e:
    print(f"⚠️  Could not copy training config: {e}")
    print(f"   This is non-critical but means the config won't be in the HuggingFace repo")

# Calculate actual warmup steps used
actual_warmup_steps = None
if WARMUP_STEPS > 0:
    actual_warmup_steps = WARMUP_STEPS
elif total_steps:
    actual_warmup_steps = int(total_steps * WARMUP_RATIO)

# Get final loss from loss_history.csv (more accurate than trainer metrics)
final_loss = None
loss_history_path = os.path.join(LORA_DIR, "loss_history.csv")
if os.path.exists(loss_history_path):
    try:
        import csv
        with open(loss_history_path, 'r') as f:
            # Read all rows and get the last one
            rows = list(csv.DictReader(f))
            if rows:
                final_loss = float(rows[-1]['loss'])
    except Exception as e:
        print(f"⚠️  Could not read final loss from CSV: {e}")
        # Fallback to trainer metrics
        final_loss = trainer_output.metrics.get('train_loss', None) if hasattr(trainer_output, 'metrics') else None
else:
    # Fallback to trainer metrics if CSV doesn't exist
    final_loss = trainer_output.metrics.get('train_loss', None) if hasattr(trainer_output, 'metrics') else None

metrics = {
    "training_time_seconds": training_time,
    "training_time_minutes": training_time / 60,
    "final_loss": final_loss,
    "model_name": LORA_BASE_MODEL,
    "dataset_name": DATASET_NAME,
    "dataset_samples": dataset_samples,
    "dataset_max_samples": DATASET_MAX_SAMPLES,
    "total_steps": total_steps,
    "lora_rank": LORA_RANK,
    "lora_alpha": LORA_ALPHA,
    "lora_dropout": LORA_DROPOUT,
    "use_rslora": USE_RSLORA,
    "max_seq_length": MAX_SEQ_LENGTH,
    "batch_size": BATCH_SIZE,
    "gradient_accumulation_steps": GRADIENT_ACCUMULATION_STEPS,
    "effective_batch_size": BATCH_SIZE * GRADIENT_ACCUMULATION_STEPS,
    "learning_rate": LEARNING_RATE,
    "warmup_ratio": WARMUP_RATIO,
    "warmup_steps": WARMUP_STEPS,
    "actual_warmup_steps": actual_warmup_steps,
    "num_train_epochs": NUM_TRAIN_EPOCHS,
    "max_steps": MAX_STEPS,
    "packing": PACKING,
    "max_grad_norm": MAX_GRAD_NORM,
    "optimizer": OPTIM,
    "use_gradient_checkpointing": USE_GRADIENT_CHECKPOINTING,
    "seed": SEED,
    "max_vram_bytes": max_vram_bytes,
    "max_vram_gb": max_vram_bytes / (1024**3) if max_vram_bytes else None,
    "trained_date": time.strftime("%Y%m%d_%H%M%S"),
    "timestamp": time.strftime("%Y-%m-%d %H:%M:%S")
}
with open(metrics_path, "w") as f:
    json.dump(metrics, f, indent=2)

print(f"\n✅ All models saved!")

# Clean up LoRA directory - remove redundant files
print(f"\n🧹 Cleaning up LoRA directory...")
try:
    from cleanup_utils import cleanup_lora_directory
    removed_count, removed_size = cleanup_lora_directory(LORA_DIR, verbose=True)
    if removed_count > 0:
        print(f"✅ Cleaned up {removed_count} redundant file(s) ({removed_size / (1024 * 1024):.1f} MB)")
    else:
        print(f"✅ LoRA directory already clean")
except Exception as e:
    print(f"⚠️  Could not clean up LoRA directory: {e}")

# Generate proper README files with actual configuration from .env
print(f"\n📝 Generating README documentation...")
try:
    import subprocess
    result = subprocess.run(
        ["python", "generate_readme_train.py"],
        capture_output=True,
        text=True,
        timeout=10
    )
    if result.returncode == 0:
        print(f"✅ README files generated")
    else:
        print(f"⚠️  README generation failed (non-critical)")
except Exception as e:
    print(f"⚠️  Could not generate READMEs (non-critical): {e}")

# Clean up intermediate checkpoints to save disk space
checkpoint_dirs = [d for d in os.listdir(OUTPUT_DIR) if d.startswith("checkpoint-")]
if checkpoint_dirs:
    print(f"\n🧹 Cleaning up {len(checkpoint_dirs)} intermediate checkpoints...")
    total_saved = 0
    for checkpoint_dir in checkpoint_dirs:
        checkpoint_path = os.path.join(OUTPUT_DIR, checkpoint_dir)
        import shutil
        # Get size before deletion
        checkpoint_size = sum(
            os.path.getsize(os.path.join(dirpath, filename))
            for dirpath, dirnames, filenames in os.walk(checkpoint_path)
            for filename in filenames
        )
        total_saved += checkpoint_size
        shutil.rmtree(checkpoint_path)

    # Convert bytes to MB
    total_saved_mb = total_saved / (1024 * 1024)
    print(f"✅ Freed {total_saved_mb:.1f} MB of disk space")

print("\n" + "="*60)
print("✅ TRAINING COMPLETE")
print("="*60)

# Get VRAM usage if available
max_vram_gb = "N/A"
try:
    import torch
    if torch.cuda.is_available():
        max_vram_bytes = torch.cuda.max_memory_allocated()
        max_vram_gb = f"{max_vram_bytes / (1024**3):.2f} GB"
except:
    pass

# Get dataset info
dataset_samples = len(dataset) if 'dataset' in locals() else 'N/A'
total_steps = trainer_output.global_step if hasattr(trainer_output, 'global_step') else 'N/A'

# Show training summary
print(f"\n📊 Training Summary:")
print(f"\n🔧 Training Configuration:")
print(f"  Base Model: {LORA_BASE_MODEL}")
print(f"  Output Name: {output_model_name}")
print(f"  Dataset: {DATASET_NAME}")
print(f"  Samples Trained: {dataset_samples}")
if MAX_STEPS > 0:
    print(f"  Training Mode: {MAX_STEPS} steps (early stop)")
else:
    print(f"  Training Mode: {NUM_TRAIN_EPOCHS} epoch(s)")
print(f"  Total Steps: {total_steps}")
print(f"  Batch Size: {BATCH_SIZE} × {GRADIENT_ACCUMULATION_STEPS} = {BATCH_SIZE * GRADIENT_ACCUMULATION_STEPS} (effective)")
print(f"  Max Seq Length: {MAX_SEQ_LENGTH}")
print(f"  LoRA: r={LORA_RANK}, alpha={LORA_ALPHA}")

print(f"\n⏱️  Performance:")
print(f"  Training Time: {training_time/60:.1f} minutes ({training_time:.0f} seconds)")
if hasattr(trainer_output, 'metrics'):
    final_loss = trainer_output.metrics.get('train_loss', 'N/A')
    print(f"  Final Loss: {final_loss}")
print(f"  Max VRAM Used: {max_vram_gb}")

print(f"\n💾 Output:")
# Show output info
from pathlib import Path
lora_size = sum(f.stat().st_size for f in Path(LORA_DIR).rglob('*') if f.is_file())
lora_size_mb = lora_size / (1024 * 1024)
print(f"  LoRA Adapters: {lora_size_mb:.1f} MB")
print(f"  Location: {LORA_DIR}")

# Show next steps
print(f"\n💡 Next Steps:")
print(f"  Run: python scripts/build.py")
print(f"\n  This will create:")
print(f"    • merged_16bit/ (merged model + Modelfile)")

# Show what base model will be used for merging
if INFERENCE_BASE_MODEL_CONFIG:
    print(f"      Using inference_model: {INFERENCE_BASE_MODEL_CONFIG}")
    print(f"      Quality: 16-bit (best quality)")
else:
    print(f"      Using base_model: {LORA_BASE_MODEL}")
    print(f"      Quality: Same as training (4-bit)")

# Show additional output formats from config
if config.output.formats:
    format_names = {
        "merged_4bit": "4-bit safetensors",
        "merged_16bit": "16-bit safetensors",
        "gguf_f16": "GGUF 16-bit",
        "gguf_f32": "GGUF 32-bit",
        "gguf_q8_0": "GGUF Q8_0",
        "gguf_q6_k": "GGUF Q6_K",
        "gguf_q5_k_m": "GGUF Q5_K_M",
        "gguf_q4_k_m": "GGUF Q4_K_M",
        "gguf_q3_k_m": "GGUF Q3_K_M",
        "gguf_q2_k": "GGUF Q2_K",
    }

    print(f"\n    • Additional formats:")
    for fmt in config.output.formats:
        friendly_name = format_names.get(fmt, fmt)
        print(f"      - {friendly_name}")

    # Show format count info
    gguf_count = sum(1 for f in config.output.formats if f.startswith("gguf_"))
    if gguf_count > 0:
        print(f"\n  📦 Build will create: 1 merged model + {gguf_count} GGUF quantization(s)")
    else:
        print(f"\n  📦 Build will create: 1 merged model")
else:
    print(f"\n  💡 Tip: Add formats to output.formats in training_params.yaml")

print("\n" + "="*60 + "\n")
