from datasets import load_dataset, load_from_disk
from transformers import (
    AutoTokenizer,
    AutoConfig,
    AutoModelForCausalLM,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
    EarlyStoppingCallback
)
from itertools import chain
import argparse
import yaml
import os
import json


argument_parser = argparse.ArgumentParser()
argument_parser.add_argument("--dataset-name", type=str, default="english_data")
argument_parser.add_argument("--model-name", type=str, default="gpt2")
argument_parser.add_argument("--config", type=str, default="gpt2")
argument_parser.add_argument("--cache-dir", type=str, default="./cache")
argument_parser.add_argument("--output-dir", type=str)
args = argument_parser.parse_args()

config = yaml.safe_load(open(args.config))

hf_config = AutoConfig.from_pretrained(args.model_name, 
                                       cache_dir= args.cache_dir, 
                                       local_files_only=True,
                                       attn_implementation="sdpa")
model = AutoModelForCausalLM.from_config(hf_config)

model.gradient_checkpointing_enable()
model.config.use_cache = False

# tokenizer = AutoTokenizer.from_pretrained(args.model_name, cache_dir= args.cache_dir, local_files_only=True)
tokenizer = AutoTokenizer.from_pretrained(args.cache_dir + "/tokenizer", local_files_only=True)
tokenizer.pad_token = tokenizer.eos_token

model.resize_token_embeddings(len(tokenizer))

lm_datasets = load_from_disk(args.cache_dir + f"/{args.dataset_name}")

training_args = TrainingArguments(
    output_dir=args.output_dir,
    per_device_train_batch_size=config.get("train_batch_size", 4),
    do_eval = True,
    do_train = True,
    eval_strategy="steps",   
    # evaluate_during_training=True,
    save_strategy="steps",
    lr_scheduler_type="cosine",
    eval_steps=config.get("eval_steps", 500),
    save_steps=config.get("save_steps", 500),
    learning_rate=config.get("learning_rate", 5e-5),#grid
    num_train_epochs=config.get("num_train_epochs", 3),
    weight_decay=config.get("weight_decay", 0.01),#grid
    logging_steps=config.get("logging_steps", 50),
    max_grad_norm=config.get("max_grad_norm", 1),
    dataloader_num_workers=4,
    dataloader_prefetch_factor=2,
    dataloader_pin_memory=True,
    remove_unused_columns=False,
    gradient_accumulation_steps = 2,
    bf16=True, 
    optim="adamw_torch_fused",
    load_best_model_at_end=True,   # IMPORTANT
    metric_for_best_model="eval_loss",
    greater_is_better=False,
    warmup_ratio=config.get("warmup_ratio", 0.1),
)


data_collator = DataCollatorForLanguageModeling(
    tokenizer=tokenizer,
    mlm=False
)

trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=lm_datasets["train"],
    eval_dataset=lm_datasets["validation"],
    callbacks=[EarlyStoppingCallback(early_stopping_patience=3)],
    data_collator = data_collator,
)

trainer.train()

log_history = trainer.state.log_history

train_losses = [x["loss"] for x in log_history if "loss" in x and "eval_loss" not in x]
eval_losses = [x["eval_loss"] for x in log_history if "eval_loss" in x]

metrics = {
    "train_loss": train_losses[-1] if train_losses else None,
    "val_loss": eval_losses[-1] if eval_losses else None,
}

with open(os.path.join(training_args.output_dir, "train_metrics.json"), "w") as f:
    json.dump(metrics, f)