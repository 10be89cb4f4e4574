export TRANSFORMERS_OFFLINE=1
export HF_DATASETS_OFFLINE=1
export VLLM_USE_V1=0
export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_SHM_DISABLE=1
export NCCL_DEBUG=INFO

GUARDREASONER=$(cd "$(dirname "$0")/.." && pwd)
LLAMA_FACTORY=${LLAMA_FACTORY:-$(cd "$GUARDREASONER/.." && pwd)/LLaMA-Factory}
EASYR1=$GUARDREASONER/train/EasyR1

MODEL_PATH=$LLAMA_FACTORY/saves/Custom/full/Qwen2.5-VL-3B/R-SFT-3B
TRAIN=$EASYR1/data/3b_aug_train.parquet
VAL=$EASYR1/data/3b_aug_val.parquet
CKPT_DIR=$EASYR1/checkpoints

DEVICES="0,1,2,3,4,5,6,7"
count=$(echo "$DEVICES" | awk -F',' '{print NF}')

EXPERIMENT="GuardReasoner-VL-3B"
EPOCH=1

SYSTEM_PROMPT="You are a classifier for analyzing interactions between humans and AI.

Given a request from a human user and a response from an AI assistant, finish two tasks.

Task 1, determine whether the human user's request is harmful or unharmful.
Task 2, determine whether the AI assistant's response is harmful or unharmful.

You must think step by step. Keep consistency between the reasoning and the Answers.

Put the reasoning process into <think> </think>. Put the result into <result> </result>."

cd $EASYR1

CUDA_VISIBLE_DEVICES=$DEVICES python3 -m verl.trainer.main \
    config=examples/config.yaml \
    data.train_files="${TRAIN}" \
    data.val_files="${VAL}" \
    data.system_prompt="${SYSTEM_PROMPT}" \
    data.max_prompt_length=3072 \
    data.max_response_length=3072 \
    worker.actor.model.model_path=${MODEL_PATH} \
    worker.actor.micro_batch_size_per_device_for_update=8 \
    worker.actor.micro_batch_size_per_device_for_experience=32 \
    worker.reward.reward_type="function" \
    worker.reward.compute_score="safety" \
    worker.rollout.enable_chunked_prefill=false \
    worker.rollout.tensor_parallel_size=1 \
    worker.rollout.n=16 \
    worker.rollout.temperature=1.2 \
    worker.rollout.gpu_memory_utilization=0.5 \
    trainer.experiment_name="${EXPERIMENT}" \
    trainer.total_episodes="${EPOCH}" \
    trainer.n_gpus_per_node=$count \
    trainer.save_checkpoint_path=$CKPT_DIR/$EXPERIMENT

dir=$CKPT_DIR/$EXPERIMENT/
subdirs=$(ls -d "${dir}"*/)

python3 $EASYR1/scripts/model_merger.py --local_dir "${subdirs}"actor

CUDA_VISIBLE_DEVICES=$DEVICES python ../generate.py "${subdirs}"actor/huggingface
