python scripts/preprocess_data.py --samples_per_label 0
python scripts/train.py --config configs/train.yaml
