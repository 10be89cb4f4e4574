export PYTHONPATH=.

python src/train/pretrain.py
