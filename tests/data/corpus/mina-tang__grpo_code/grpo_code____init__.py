from .rewards import (
    code_execution_reward_func,
    answer_execution_reward_func,
    soft_format_reward_func,
)
from .transforms import axolotl_acecode_transform

__all__ = [
    "code_execution_reward_func",
    "answer_execution_reward_func",
    "soft_format_reward_func",
    "axolotl_acecode_transform",
]
