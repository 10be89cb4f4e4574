#!/bin/bash
#SBATCH --partition=hhai
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=12
#SBATCH --time=10:00:00
#SBATCH --mem=200G
#SBATCH --job-name=sft_qwen3
#SBATCH --output=sft_%j.out
#SBATCH --error=sft_%j.err

set -euo pipefail
export PYTHONUNBUFFERED=1

# =========================
# Arg parsing
# =========================
BASE_MODEL="/work/HHRI-AI/POC/public/pretraining_weights/Alibaba-Qwen/qwen3/Qwen3-4B-Instruct-2507"
SFT_DATA="/work/HHRI-AI/POC/angela/post-training-framework/data/reduced_data/sft/chunk1-reduced.jsonl"
WORK_DIR="/work/HHRI-AI/POC/angela/post-training-framework"
RUNS_DIR="${WORK_DIR}/runs"
RUN_ID="sft_qwen3_chunk1"
WANDB_PROJECT="hhri-foxbrain"

# Optional knobs
SEQUENCE_LEN="8192"
MICRO_BSZ="2"
GRAD_ACCUM="1"
EPOCHS="1"
LEARNING_RATE="2e-5"

usage() {
  cat <<EOF
Usage (sbatch args after script name):
  SFT_JOB.sh --base_model PATH --dataset PATH --run_id ID
             [--work_dir PATH] [--runs_dir PATH] [--wandb_project NAME]
             [--sequence_len N] [--micro_bsz N] [--grad_accum N] [--epochs N]
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --base_model)    BASE_MODEL="$2"; shift 2;;
    --dataset|--dataset_path) SFT_DATA="$2"; shift 2;;
    --run_id)        RUN_ID="$2"; shift 2;;
    --work_dir)      WORK_DIR="$2"; shift 2;;
    --runs_dir)      RUNS_DIR="$2"; shift 2;;
    --wandb_project) WANDB_PROJECT="$2"; shift 2;;
    --sequence_len)  SEQUENCE_LEN="$2"; shift 2;;
    --micro_bsz)     MICRO_BSZ="$2"; shift 2;;
    --grad_accum)    GRAD_ACCUM="$2"; shift 2;;
    --epochs)        EPOCHS="$2"; shift 2;;
    -h|--help)       usage; exit 0;;
    *) echo "Unknown arg: $1"; usage; exit 1;;
  esac
done

if [[ -z "${BASE_MODEL}" || -z "${SFT_DATA}" || -z "${RUN_ID}" ]]; then
  echo "Missing required arguments."; usage; exit 1
fi

# =========================
# Environment
# =========================
module load cuda/12.2

source /work/HHRI-AI/anaconda/etc/profile.d/conda.sh
conda activate axolotl

export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-12}"

# =========================
# Paths and logging
# =========================
RUN_DIR="${RUNS_DIR}/${RUN_ID}"
MERGED_CFG="${RUN_DIR}/${RUN_ID}.yaml"
mkdir -p "${RUN_DIR}"

RUN_LOG="${RUN_DIR}/run.log"
ERR_LOG="${RUN_DIR}/run.err"
DONE_FLAG="${RUN_DIR}/.done"

exec > >(stdbuf -oL tee -a "${RUN_LOG}") 2> >(stdbuf -oL tee -a "${ERR_LOG}" >&2)
echo "=== SFT job ${SLURM_JOB_ID} starting at $(date) ==="
echo "Node(s): ${SLURM_JOB_NODELIST}"
echo "BASE_MODEL : ${BASE_MODEL}"
echo "DATASET    : ${SFT_DATA}"
echo "RUN_DIR    : ${RUN_DIR}"
echo "W&B        : ${WANDB_PROJECT}"

# =========================
# 1) Emit Axolotl config
# =========================
python "${WORK_DIR}/src/config_builders.py" sft \
  --base_model "${BASE_MODEL}" \
  --dataset_path "${SFT_DATA}" \
  --output_path "${MERGED_CFG}" \
  --adapter full \
  --output_dir "${RUN_DIR}" \
  --sequence_len "${SEQUENCE_LEN}" \
  --micro_batch_size "${MICRO_BSZ}" \
  --gradient_accumulation_steps "${GRAD_ACCUM}" \
  --num_epochs "${EPOCHS}" \
  --learning_rate "${LEARNING_RATE}" \
  --wandb_project "${WANDB_PROJECT}" \
  --wandb_name "sft-${RUN_ID}"

echo "Merged config -> ${MERGED_CFG}"

# =========================
# 2) Launch Axolotl in its own process group
# =========================
echo "Launching Axolotl training..."

# Launch axolotl in a new session (process group) and get its PID
setsid axolotl train "${MERGED_CFG}" &
AXO_PID=$!

echo "Axolotl PID: $AXO_PID"

# =========================
# 3) Log watcher that kills Axolotl immediately on model save
# =========================
echo "Starting watcher"

(
  tail -n +1 -F "${RUN_LOG}" | while IFS= read -r line; do
    [[ "$line" == "[WATCHER]"* ]] && continue
    echo "[WATCHER] $line"
    if [[ "$line" == *"Model successfully saved to"* ]]; then
      echo "[WATCHER] Detected model save"

      # Mark done
      touch "${DONE_FLAG}"

      # Kill the Axolotl process group
      echo "[WATCHER] Killing Axolotl process group (PGID: $AXO_PID)"
      kill -- -"$AXO_PID" 2>/dev/null || true

      # Exit cleanly
      echo "=== Model save detected. SLURM job exiting early with code 0 ==="
      exit 0
    fi
  done
) &

WATCHER_PID=$!

# Wait for Axolotl or watcher to exit — whichever exits first
wait -n "$AXO_PID" "$WATCHER_PID" || true

# If model was saved, exit cleanly
if [[ -f "${DONE_FLAG}" ]]; then
  echo "=== Training completed and model saved. Exiting with code 0 ==="
  exit 0
else
  echo "=== Axolotl training exited without model save. Exiting with code 1 ==="
  exit 1
fi
