
# lora finetune
CUDA_VISIBLE_DEVICES=5 llamafactory-cli train lora_sft.yaml



