export OMP_NUM_THREADS=8
export DECORD_EOF_RETRY_MAX=2048001



# llamafactory-cli train LLaMA-Factory/examples/train_full/onethinker_qwen3_sft.yaml
llamafactory-cli train examples/train_full/camreasoner_sft.yaml