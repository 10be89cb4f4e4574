
set -e

source ~/miniconda3/etc/profile.d/conda.sh
conda activate /home/hubing/.conda/envs/sim
export PYTHONPATH=$(pwd)

NTFY_TOPIC="https://ntfy.sh/m7Q0XXISTPpnpjxM"

function notify() {
    STEP_NAME="$1"
    EXIT_CODE="$2"

    if [ "$EXIT_CODE" -eq 0 ]; then
        # 成功
        TITLE="✅ Success: $STEP_NAME"
        MESSAGE="Step '$STEP_NAME' completed successfully on job $SLURM_JOB_ID."
        PRIORITY="default"
        TAGS="white_check_mark"
    else
        # 失败
        TITLE="❌ Failure: $STEP_NAME"
        MESSAGE="Step '$STEP_NAME' failed with exit code $EXIT_CODE on job $SLURM_JOB_ID. Please check the logs."
        PRIORITY="high"
        TAGS="x"
    fi

    # 发送通知
    curl -s \
      -H "Title: $TITLE" \
      -H "Priority: $PRIORITY" \
      -H "Tags: $TAGS" \
      -d "$MESSAGE" \
      "$NTFY_TOPIC"

    # 如果脚本失败，则立即退出整个任务
    if [ "$EXIT_CODE" -ne 0 ]; then
        echo "Exiting due to failure in step: $STEP_NAME"
        exit "$EXIT_CODE"
    fi
}

curl -s -H "Title: ▶️ Job Started" -d "Slurm Job $SLURM_JOB_ID ($SLURM_JOB_NAME) has started." "$NTFY_TOPIC"

history_paths=()

# ------------------------iter1------------------------
history_args=""

#  precompute # --config_file ./accelerate_configs/zero2.yaml
#/home/hubing/.conda/envs/sim/bin/accelerate launch --num_processes=4 -m inpo_scripts.precompute_simpo_style \
#     --run_name "inpo_iter1_20k" \
#     --train_dir "/home/hubing/SimPO/data/gemma2_ufb_part1_20k/gemma2_ufb_part1_split1.jsonl" \
#     --output_dir "data/inpo_iter1_20k/pref" \
#     --ref_model google/gemma-2-9b-it --last_model google/gemma-2-9b-it \
#     --model_name_or_path google/gemma-2-9b-it \
#     --loss_type inpo --lr_scheduler_type cosine \
#     $history_args \
#     --cache_dir "/home/hubing/SimPO/cache" \
#     --sanity_check False
#
#notify "iter1: precompute complete" $?

# train
#echo "iter1: start training"
#
#ACCELERATE_LOG_LEVEL=info /home/hubing/.conda/envs/sim/bin/accelerate launch \
#    --config_file accelerate_configs/deepspeed_zero3.yaml \
#    -m inpo_scripts.run_inpo \
#    training_configs/gemma-2-9b-it-inpo-20k-iter1.yaml
#
#notify "iter1: train complete" $?

history_paths+=("XuHuang/gemma-2-9b-it_inpo_20k_stage_1-ckpt50")

#echo "Completed iteration 1"

# ------------------------iter2------------------------
echo "Starting iteration 2"

# on policy data gen
#echo "iter2: Starting on policy data gen"
#
#for SEED in 13 21 42 79 100
#  do
#     echo "Running decode with seed $SEED..."
#     stdbuf -oL -eL /home/hubing/.conda/envs/inpo/bin/python -u -m on_policy_data_gen.decode \
#     --data_dir "/home/hubing/SimPO/data/gemma2_ufb_part1_20k/gemma2_ufb_part1_split2.jsonl" \
#     --model "/home/hubing/SimPO/outputs/gemma-2-9b-it_inpo_20k_stage_1/checkpoint-50" \
#     --seed "$SEED" \
#     --output_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_20k" \
#     --batch_size 96 \
#     --cache_dir "/home/hubing/SimPO/cache" \
#     --num_gpu 4 # Tensor Parallelism
#  done
#
#/home/hubing/.conda/envs/inpo/bin/python -m on_policy_data_gen.post_process \
#     --generation_file_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_20k"

#/home/hubing/.conda/envs/sim/bin/python -m on_policy_data_gen.reward_model_annotate \
#     --generation_file "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_20k/all_outputs.json" \
#     --output_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_20k" \
#     --cache_dir "/home/hubing/SimPO/cache"

#/home/hubing/.conda/envs/sim/bin/python -m on_policy_data_gen.reward_model_annotate_skywork \
#     --generation_file "/afs/.ir/users/f/a/fangwu97/.cache/huggingface/hub/models--XuHuang--inpo_iter1/snapshots/616f4bc181dead2cf5cf6bc4bf27e7f48bf067c8/all_outputs.json" \
#     --output_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_skywork" \
#     --cache_dir "/home/hubing/SimPO/cache"
#
#notify "iter2: reward_model_annotate_skywork complete" $?

# precompute
#echo "iter2: start precompute"
#history_args=""
#if [ ${#history_paths[@]} -gt 0 ]; then
#    history_args="--history_paths ${history_paths[@]}"
#fi
#/home/hubing/.conda/envs/sim/bin/accelerate launch --num_processes=4 -m inpo_scripts.precompute_simpo_style \
#    --run_name "inpo_iter2" \
#    --train_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter2_20k" \
#    --output_dir "/home/hubing/SimPO/data/inpo_iter2_20k/pref" \
#    --ref_model google/gemma-2-9b-it \
#    --model_name_or_path /home/hubing/SimPO/outputs/gemma-2-9b-it_inpo_20k_stage_1/checkpoint-50 \
#    --loss_type inpo --lr_scheduler_type cosine \
#    $history_args \
#    --cache_dir "/home/hubing/SimPO/cache" \
#    --sanity_check False

#/home/hubing/.conda/envs/sim/bin/accelerate launch --num_processes=4 -m inpo_scripts.precompute_simpo_style \
#    --run_name "inpo_iter2" \
#    --train_dir "/home/hubing/SimPO/data/gemma2_ufb_part2_test.jsonl" \
#    --output_dir "/home/hubing/SimPO/data/inpo_iter2/pref_rm/test" \
#    --ref_model google/gemma-2-9b-it \
#    --loss_type inpo --lr_scheduler_type cosine \
#    $history_args \
#    --cache_dir "/home/hubing/SimPO/cache" \
#    --sanity_check False

# train
#echo "iter2: start training"
#
#ACCELERATE_LOG_LEVEL=info /home/hubing/.conda/envs/sim/bin/accelerate launch \
#    --config_file accelerate_configs/deepspeed_zero3.yaml \
#    -m inpo_scripts.run_inpo \
#    training_configs/gemma-2-9b-it-inpo-20k-iter2.yaml
#
#notify "iter2: train complete" $?

#
history_paths+=("/home/hubing/SimPO/outputs/gemma-2-9b-it_inpo_20k_stage_2/")

#echo "Completed iteration 2"

# #------------------------iter3------------------------
# on policy data gen
echo "iter3: Starting on policy data gen"

for SEED in 13 21 42 79 100
  do
     echo "Running decode with seed $SEED..."
     stdbuf -oL -eL /home/hubing/.conda/envs/inpo/bin/python -u -m on_policy_data_gen.decode \
     --data_dir "/home/hubing/SimPO/data/gemma2_ufb_part1_20k/gemma2_ufb_part1_split3.jsonl" \
     --model "/home/hubing/SimPO/outputs/gemma-2-9b-it_inpo_20k_stage_2/" \
     --seed "$SEED" \
     --output_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter3_20k" \
     --batch_size 8192 \
     --cache_dir "/home/hubing/SimPO/cache" \
     --num_gpu 8 # Tensor Parallelism
  done

/home/hubing/.conda/envs/inpo/bin/python -m on_policy_data_gen.post_process \
     --generation_file_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter3_20k"
# dont forget to check empty strings
#/home/hubing/.conda/envs/sim/bin/python -m on_policy_data_gen.reward_model_annotate \
#     --generation_file "/afs/.ir/users/f/a/fangwu97/.cache/huggingface/hub/models--XuHuang--inpo_iter1/snapshots/fc8024b5e4353e5f74954d4133d20813267e77b8/all_outputs.json" \
#     --output_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter3"
#
## precompute
#echo "iter3: start precompute"
#history_args=""
#if [ ${#history_paths[@]} -gt 0 ]; then
#    history_args="--history_paths ${history_paths[@]}"
#fi
#/home/hubing/.conda/envs/sim/bin/accelerate launch --num_processes=4 -m inpo_scripts.precompute_simpo_style \
#    --run_name "inpo_iter3" \
#    --train_dir "/home/hubing/SimPO/datasets/gemma2_ultrafeedback/inpo_iter3" \
#    --output_dir "/home/hubing/SimPO/data/inpo_iter3/pref" \
#    --ref_model google/gemma-2-9b-it \
#    --loss_type inpo --lr_scheduler_type cosine \
#    $history_args \
#    --cache_dir "/home/hubing/SimPO/cache" \
#    --sanity_check False

# train
#echo "iter3: start training"
#ACCELERATE_LOG_LEVEL=info  /home/hubing/.conda/envs/sim/bin/accelerate launch \
#    --config_file accelerate_configs/deepspeed_zero3.yaml \
#    -m inpo_scripts.run_inpo \
#    training_configs/gemma-2-9b-it-inpo-iter3.yaml
#notify "iter3: training complete" $?
#history_paths+=("/home/hubing/SimPO/outputs/gemma-2-9b-it_inpo_stage_3/")
#
#echo "Completed iteration 3"