CUDA_VISIBLE_DEVICES=0,1,2,3 \
llamafactory-cli train examples/train_full/qwen2_5vl_full_sft_SealTitle_toolcall_CoT.yaml