__version__ = "0.3.0.dev0"

from .configs import DataArguments, DPOConfig, H4ArgumentParser, ModelArguments, SFTConfig
from .data import split_dataset, maybe_insert_system_message