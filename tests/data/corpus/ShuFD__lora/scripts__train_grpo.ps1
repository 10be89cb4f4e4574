python -m src.rl.train_grpo --config configs/grpo.yaml
