from .modules import (
    GenerationArguments, 
    DataArguments, 
    RewardArguments, 
    H4ArgumentParser, 
    ModelArguments,
)
from .utils import (
    LLAVA_CHAT_TEMPLATE,
    QWEN_CHAT_TEMPLATE,
    INTERNLM_CHAT_TEMPLATE,
    IdentityDataCollator,
    BTDataset,
    initialize_reward_model_head,
    process_data,
    balance_dataset_by_score,
    load_model_with_index,
    ImageSplittingCollator,
)

__all__ = [
    "GenerationArguments",
    "DataArguments",
    "RewardArguments",
    "H4ArgumentParser",
    "ModelArguments",
    "LLAVA_CHAT_TEMPLATE",
    "QWEN_CHAT_TEMPLATE",
    "INTERNLM_CHAT_TEMPLATE",
    "VLMRewardTrainer",
    "IdentityDataCollator",
    "BTDataset",
    "ImageSplittingCollator",
    "initialize_reward_model_head",
    "process_data",
    "balance_dataset_by_score",
    "load_model_with_index",
]