# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from ._component_builders import llama3_2, lora_llama3_2

from ._model_builders import (  # noqa
    llama3_2_1b,
    llama3_2_1b_pruned,
    llama3_2_3b,
    lora_llama3_2_1b,
    lora_llama3_2_1b_pruned,
    lora_llama3_2_3b,
    qlora_llama3_2_1b,
    qlora_llama3_2_3b,
)

__all__ = [
    "llama3_2",
    "llama3_2_1b",
    "llama3_2_1b_pruned",
    "llama3_2_3b",
    "lora_llama3_2",
    "lora_llama3_2_1b",
    "lora_llama3_2_1b_pruned",
    "lora_llama3_2_3b",
    "qlora_llama3_2_1b",
    "qlora_llama3_2_3b",
]
