llamafactory-cli train examples/train_full/qwen2_5vl_full_sft.yaml
