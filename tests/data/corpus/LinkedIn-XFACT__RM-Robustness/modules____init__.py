from .modules import (
    GenerationArguments, 
    DataArguments, 
    RewardArguments, 
    H4ArgumentParser, 
    ModelArguments,
    RLOOConfig,
    RewardConfig
)
from .utils import (
    get_batches, 
    print_sample_items, 
    maybe_insert_system_message, 
    is_openai_format, 
    map_chat_template_by_task,
    DEFAULT_CHAT_TEMPLATE, 
    initialize_reward_model_head,
    truncate_text_before_tokens,
)
from .vllm_utils import vllm_single_gpu_patch
from .trainers.reward_trainer import RewardTrainer
from .trainers.async_rloo_trainer import RLOOTrainer

__all__ = [
    "GenerationArguments",
    "DataArguments",
    "RewardArguments",
    "H4ArgumentParser",
    "ModelArguments",
    "get_batches",
    "print_sample_items", 
    "maybe_insert_system_message", 
    "is_openai_format", 
    "map_chat_template_by_task",
    "DEFAULT_CHAT_TEMPLATE", 
    "initialize_reward_model_head",
    "truncate_text_before_tokens",
    "vllm_single_gpu_patch",
    "RLOOConfig",
    "RewardConfig",
    "RewardTrainer",
    "RLOOTrainer",
]