from .rloo_config import RLOOConfig
from .rloo_trainer import RLOOTrainer
from .grpo_trainer import GRPOTrainer

__all__ = ["RLOOConfig", "RLOOTrainer", "GRPOTrainer"]
