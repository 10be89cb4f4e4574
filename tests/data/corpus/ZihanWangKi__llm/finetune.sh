# batch size 4, max length = 2048, using 4 gpus fits in 50G per gpu
# batch size 1, max length = 512, using 8 gpus fits in 24G per gpu

torchrun --nproc_per_node=2 --master_port=20001 train_full.py \
    --model_name_or_path /data/shared/llama-hf/llama-2-7b-hf \
    --data_path "3x+1".json \
    --bf16 True \
    --output_dir test_model_3x1 \
    --num_train_epochs 3 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 1200 \
    --save_total_limit 10 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True