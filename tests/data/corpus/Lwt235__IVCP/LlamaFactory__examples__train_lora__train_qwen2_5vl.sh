export CUDA_VISIBLE_DEVICES=5
export HF_HUB_OFFLINE=1

llamafactory-cli train examples/train_lora/qwen2_5vl_lora_sft.yaml