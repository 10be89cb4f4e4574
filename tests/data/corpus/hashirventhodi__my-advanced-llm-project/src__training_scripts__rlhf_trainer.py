import torch
# from trl import PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead (if using TRL)
from src.utils.config_utils import parse_config

def train_rlhf(config_path):
    """
    Placeholder script to show how you might integrate PPO with a reward model.
    Usually you'd rely on trl library or a custom PPO implementation.
    """
    config = parse_config(config_path)
    # Example steps (not fully implemented):
    # 1. Load policy model with value head
    # 2. Load reward model
    # 3. Set up PPO trainer
    # 4. Loop through prompts -> generate -> compute reward -> ppo step

    print("[RLHF] Training with config:", config)
    print("[RLHF] This is a placeholder. Use a library like TRL for a real PPO implementation.")

if __name__ == "__main__":
    import sys
    if len(sys.argv) < 2:
        print("Usage: python rlhf_trainer.py <config_path>")
        sys.exit(1)
    train_rlhf(sys.argv[1])
