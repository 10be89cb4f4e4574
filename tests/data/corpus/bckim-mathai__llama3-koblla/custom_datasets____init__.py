from ._text import custom_text_dataset
from ._chat import custom_chat_dataset

__all__ = [
    "custom_text_dataset", "custom_chat_dataset"
]
