from .model_arguments import ModelArguments
from .evaluation_arguments import EvaluationArguments
from .data_training_arguments import DataTrainingArguments
__all__ = [
    "ModelArguments",
    "DataTrainingArguments",
    "EvaluationArguments",
]
