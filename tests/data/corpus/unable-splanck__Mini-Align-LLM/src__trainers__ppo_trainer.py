from dataclasses import dataclass
from typing import Dict, Any


@dataclass
class PPOTrainerConfig:
    config: Dict[str, Any]


class PPOTrainerScaffold:
    """Scaffold for future PPO implementation."""

    def __init__(self, config: Dict[str, Any]) -> None:
        self.config = PPOTrainerConfig(config=config)

    def summary(self) -> str:
        training = self.config.config.get("training", {})
        return (
            "PPO scaffold ready: "
            f"output_dir={training.get('output_dir')}, "
            f"total_steps={training.get('total_steps')}"
        )

