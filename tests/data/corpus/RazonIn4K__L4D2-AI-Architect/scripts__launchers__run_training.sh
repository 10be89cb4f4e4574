#!/usr/bin/env bash

set -euo pipefail

PROJECT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${PROJECT_DIR}"

if [[ -f "./venv/bin/activate" ]]; then
  # shellcheck disable=SC1091
  source "./venv/bin/activate"
fi

echo "Starting Unsloth training..."
python3 scripts/training/train_unsloth.py "$@"
