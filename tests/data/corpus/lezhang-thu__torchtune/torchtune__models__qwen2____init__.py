# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from ._component_builders import lora_qwen2, qwen2  # noqa
from ._convert_weights import qwen2_hf_to_tune, qwen2_tune_to_hf  # noqa
from ._model_builders import (
    lora_qwen2_0_5b,
    lora_qwen2_1_5b,
    lora_qwen2_7b,
    qwen2_0_5b,
    # debug
    qwen2_x,
    qwen2_1_5b,
    qwen2_7b,
    qwen2_tokenizer,
    x_qwen2_tokenizer,
)
from ._positional_embeddings import Qwen2RotaryPositionalEmbeddings
from ._tokenizer import Qwen2Tokenizer
from ._x_tokenizer import x_Qwen2Tokenizer

__all__ = [
    "qwen2_7b",
    "qwen2_0_5b",
    "qwen2_1_5b",
    "qwen2_tokenizer",
    "x_qwen2_tokenizer",
    "lora_qwen2_7b",
    "lora_qwen2_0_5b",
    "lora_qwen2_1_5b",
    "qwen2",
    "lora_qwen2",
    "qwen2_hf_to_tune",
    "qwen2_tune_to_hf",
    "Qwen2RotaryPositionalEmbeddings",
    "Qwen2Tokenizer",
]
