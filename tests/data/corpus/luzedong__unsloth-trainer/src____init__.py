from src.config import load_config
from src.model import load_model, get_tokenizer
from src.data import load_sft_dataset, load_dpo_dataset
from src.callbacks import ExperimentCallback
