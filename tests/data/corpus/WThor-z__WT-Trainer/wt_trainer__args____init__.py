from .data_args import DataArguments
from .finetune_args import FinetuningArguments
from .generation_args import GeneratingArguments
from .model_args import ModelArguments
from .training_args import TrainingArguments

__all__ = [
    "DataArguments",
    "FinetuningArguments",
    "GeneratingArguments",
    "ModelArguments",
    "TrainingArguments",
]
