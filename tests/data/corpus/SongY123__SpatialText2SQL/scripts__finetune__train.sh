#!/usr/bin/env bash
set -euo pipefail

export NO_PROXY=100.64.0.0/10,100.126.198.114,localhost,127.0.0.1
export no_proxy=100.64.0.0/10,100.126.198.114,localhost,127.0.0.1
export TOKENIZERS_PARALLELISM="${TOKENIZERS_PARALLELISM:-false}"
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"
export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"
cd "${REPO_ROOT}"

DEFAULT_CONFIG="${REPO_ROOT}/config/finetune.yaml"

if [[ $# -ge 1 && ( "${1}" == "--help" || "${1}" == "-h" ) ]]; then
  cat <<EOF
Usage: $(basename "$0") [extra python args...]

Default config: ${DEFAULT_CONFIG}
This script trains directly from the Alpaca-style JSONL file produced during quality control.

Optional environment overrides:
  FINETUNE_CONFIG
  TRL_SPATIAL_TEXT2SQL_CONFIG

Examples:
  $(basename "$0")
  $(basename "$0") --input data/processed/finetune/nl2sql_alpaca.jsonl
  $(basename "$0") --nvidia-gpu-indices 0,1,2,3,4,5,6,7
  $(basename "$0") --model-name-or-path Qwen/Qwen2.5-7B-Instruct --output-dir outputs/finetune/qwen25_7b_full
  FINETUNE_CONFIG=config/finetune_gemma4_full.yaml $(basename "$0")
  scripts/finetune/train_gemma4_qlora.sh
EOF
  exit 0
fi

CONFIG_PATH="${FINETUNE_CONFIG:-${TRL_SPATIAL_TEXT2SQL_CONFIG:-${DEFAULT_CONFIG}}}"

PYTHONPATH="${REPO_ROOT}${PYTHONPATH:+:${PYTHONPATH}}" \
  python -m src.finetune.cli \
    --config "${CONFIG_PATH}" \
    "$@"
