from .arguments import MoExLSTMTrainingArguments
from .trainer import MoExLSTMTrainer

__all__ = [
    "MoExLSTMTrainer",
    "MoExLSTMTrainingArguments",
]
