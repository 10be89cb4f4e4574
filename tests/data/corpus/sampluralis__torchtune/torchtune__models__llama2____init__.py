# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from ._component_builders import (
    llama2,
    llama2_classifier,
    lora_llama2,
    lora_llama2_classifier,
)

from ._model_builders import (  # noqa
    llama2_13b,
    llama2_70b,
    llama2_7b,
    llama2_reward_7b,
    llama2_tokenizer,
    lora_llama2_13b,
    lora_llama2_70b,
    lora_llama2_7b,
    lora_llama2_reward_7b,
    qlora_llama2_13b,
    qlora_llama2_70b,
    qlora_llama2_7b,
    qlora_llama2_reward_7b,
)
from ._prompt_template import Llama2ChatTemplate
from ._tokenizer import Llama2Tokenizer
from .gpt_tokenizer import OPTTokenizer

__all__ = [
    "OPTTokenizer",
    "Llama2Tokenizer",
    "Llama2ChatTemplate",
    "llama2",
    "llama2_classifier",
    "lora_llama2_classifier",
    "llama2_reward_7b",
    "lora_llama2_reward_7b",
    "qlora_llama2_reward_7b",
    "lora_llama2",
    "llama2_13b",
    "llama2_70b",
    "llama2_7b",
    "llama2_tokenizer",
    "lora_llama2",
    "llama2_classifier",
    "lora_llama2_13b",
    "lora_llama2_70b",
    "lora_llama2_7b",
    "qlora_llama2_13b",
    "qlora_llama2_70b",
    "qlora_llama2_7b",
]
