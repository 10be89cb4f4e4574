#!/bin/bash
set -e
python3 /workspace/scripts/text_trainer.py "$@"