#!/bin/bash
echo "=============================================="
echo "Training"
echo "=============================================="
python scripts/train.py --config configs/train.yaml
