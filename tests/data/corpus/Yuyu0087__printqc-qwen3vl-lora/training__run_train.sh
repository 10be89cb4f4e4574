#!/usr/bin/env bash
set -euo pipefail

llamafactory-cli train training/qwen3vl_lora_classification.yaml
