#!/bin/bash
deepspeed train_mem.py \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path lmsys/vicuna-b-v1.5 \
    --version plain \
    --data_path ./mixTraindata/blip_laion_cc_sbu_558k.json \
    --image_folder ./mixTraindata/llava/llava_pretrain/images \
    --vision_tower openai/clip-vit-large-patch14-336 \
    --mm_projector_type cluster \
    --tune_mm_mlp_adapter True \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end False \
    --mm_use_im_patch_token False \
    --bf16 True \
    --output_dir ./checkpoints/projector/sqllva-llava-7b-v1.7-pretrain-vlora-v3-cluster \
    --num_train_epochs 1 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 24000 \
    --save_total_limit 1 \
    --learning_rate 1e-3 \
    --vision_tower_lr 2e-4 \
    --vit_lora_enable \
    --lora_alpha_vit 128 \
    --lora_r_vit 64 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --dataloader_num_workers 8 \
    --lazy_preprocess True \
    --report_to wandb \
    --data_aug False \

# sqllva-llava-7b-v1.7-pretrain-vlora-v3-cluster 64 128
# sqllva-llava-13b-v1.7-pretrain-vlora-cluster 64 128
# sqllva-llava-13b-v1.7-pretrain-cluster