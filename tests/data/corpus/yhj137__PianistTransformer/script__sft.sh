export PYTHONPATH=.

python src/train/sft.py
