from .data import get_datasets
from .utils import (
    H4ArgumentParser,
    apply_chat_template,
    check_hub_revision_exists,
    get_checkpoint,
    get_tokenizer,
    hf_login,
    init_wandb_training,
    push_to_hub_revision,
)
