# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from ._component_builders import (
    lora_mistral,
    lora_mistral_classifier,
    mistral,
    mistral_classifier,
)
from ._model_builders import (
    lora_mistral_7b,
    lora_mistral_nemo_12b,
    lora_mistral_reward_7b,
    mistral_7b,
    mistral_nemo_12b,
    mistral_8b,
    mistral_reward_7b,
    mistral_tokenizer,
    mistral_hf_tokenizer,
    qlora_mistral_7b,
    qlora_mistral_reward_7b,
)
from ._prompt_template import MistralChatTemplate
from ._tokenizer import MistralTokenizer

__all__ = [
    "MistralTokenizer",
    "MistralChatTemplate",
    "lora_mistral",
    "lora_mistral_nemo_12b",
    "lora_mistral_classifier",
    "mistral",
    "mistral_classifier",
    "lora_mistral_7b",
    "lora_mistral_reward_7b",
    "mistral_7b",
    "mistral_nemo_12b",
    "mistral_8b",
    "mistral_reward_7b",
    "mistral_tokenizer",
    "mistral_hf_tokenizer",
    "qlora_mistral_7b",
    "qlora_mistral_reward_7b",
]
