# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from ._model_builders import (
    lora_qwen3_0_6b_base,
    lora_qwen3_0_6b_instruct,
    lora_qwen3_14b_base,
    lora_qwen3_14b_instruct,
    lora_qwen3_1_7b_base,
    lora_qwen3_1_7b_instruct,
    lora_qwen3_32b,
    lora_qwen3_4b_base,
    lora_qwen3_4b_instruct,
    lora_qwen3_8b_base,
    lora_qwen3_8b_instruct,
    qwen3_0_6b_base,
    qwen3_0_6b_instruct,
    qwen3_14b_base,
    qwen3_14b_instruct,
    qwen3_1_7b_base,
    qwen3_1_7b_instruct,
    qwen3_32b,
    qwen3_4b_base,
    qwen3_4b_instruct,
    qwen3_8b_base,
    qwen3_8b_instruct,
    qwen3_tokenizer,
)

__all__ = [
    "lora_qwen3_0_6b_base",
    "lora_qwen3_0_6b_instruct",
    "lora_qwen3_1_7b_base",
    "lora_qwen3_1_7b_instruct",
    "lora_qwen3_4b_base",
    "lora_qwen3_4b_instruct",
    "lora_qwen3_8b_base",
    "lora_qwen3_8b_instruct",
    "lora_qwen3_14b_base",
    "lora_qwen3_14b_instruct",
    "lora_qwen3_32b",
    "qwen3_0_6b_base",
    "qwen3_0_6b_instruct",
    "qwen3_1_7b_base",
    "qwen3_1_7b_instruct",
    "qwen3_4b_base",
    "qwen3_4b_instruct",
    "qwen3_8b_base",
    "qwen3_8b_instruct",
    "qwen3_14b_base",
    "qwen3_14b_instruct",
    "qwen3_32b",
    "qwen3_tokenizer",
]