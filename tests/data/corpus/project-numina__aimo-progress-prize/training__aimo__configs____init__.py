from .data_config import DataConfig
from .model_config import ModelConfig
from .sft_config import SFTConfig
