"""
PPO RLHF Training Script

Trains policy using PPO with reward model feedback.

Usage:
    python scripts/train_ppo.py --config configs/ppo_config.yaml

    # Ablation: No KL penalty
    python scripts/train_ppo.py --config configs/ppo_config.yaml --beta 0.0

Phase 5 Implementation
"""

import argparse
import yaml

# TODO: Phase 5 Implementation


def load_config(config_path):
    """Load training configuration from YAML file."""
    with open(config_path, 'r') as f:
        return yaml.safe_load(f)


def train_ppo(config):
    """Train policy with PPO."""
    raise NotImplementedError("Phase 5: PPO training")


def main():
    parser = argparse.ArgumentParser(description="Train with PPO")
    parser.add_argument(
        "--config",
        default="configs/ppo_config.yaml",
        help="Path to config file",
    )
    parser.add_argument(
        "--beta",
        type=float,
        default=None,
        help="Override KL penalty coefficient (for ablations)",
    )
    args = parser.parse_args()

    config = load_config(args.config)

    # Allow command-line override for ablations
    if args.beta is not None:
        config['ppo']['beta'] = args.beta

    train_ppo(config)


if __name__ == "__main__":
    main()
