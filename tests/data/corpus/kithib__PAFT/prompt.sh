export CUDA_VISIBLE_DEVICES=3
export WANDB_DISABLED=true
llamafactory-cli train examples/train_lora/prompt.yaml

