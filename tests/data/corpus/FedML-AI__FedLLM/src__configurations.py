from .llm_finetune.src.configurations import *
# -----------------------------------------------------------------
