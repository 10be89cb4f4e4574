__version__ = "0.1.0.dev0"

from .configs import DataArguments, SPINConfig, H4ArgumentParser, ModelArguments, SFTConfig
from .data import apply_chat_template, get_datasets
from .model_utils import get_kbit_device_map, get_peft_config, get_quantization_config, get_tokenizer, is_adapter_model
from .trainer import SPINTrainer
from .new_trainer import NewSPINTrainer
from .sft_trainer import SFTTrainer