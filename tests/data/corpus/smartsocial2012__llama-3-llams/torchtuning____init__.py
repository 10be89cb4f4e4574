from ._text_datasets import koalpaca_dataset, kowiki_dataset, text_completion_dataset
from ._chat_datasets import custom_chat_dataset
from ._inst_datasets import custom_instruction_dataset, custom_instruction_transform

__all__ = [
    'koalpaca_dataset',
    'kowiki_dataset',
    'text_completion_dataset',
    'custom_chat_dataset',
    'custom_instruction_dataset',
    'custom_instruction_transform',
]