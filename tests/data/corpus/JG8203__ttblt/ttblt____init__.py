from .bltqwen import (
    qwen2_5_blt,
    blt_tokenizer
)