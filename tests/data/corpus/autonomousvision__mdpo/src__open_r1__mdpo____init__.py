from .mdpo_config import MDPOConfig
from .mdpo_trainer import MDPOTrainer