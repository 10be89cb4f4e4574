
FORCE_TORCHRUN=1 llamafactory-cli train examples/train_full/qwen_full_sft.yaml

