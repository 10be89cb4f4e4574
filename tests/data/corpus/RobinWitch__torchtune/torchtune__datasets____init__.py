# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from torchtune.datasets import multimodal
from torchtune.datasets._alpaca import alpaca_cleaned_dataset, alpaca_dataset
from torchtune.datasets._chat import chat_dataset
from torchtune.datasets._cnn_dailymail import cnn_dailymail_articles_dataset
from torchtune.datasets._concat import ConcatDataset
from torchtune.datasets._grammar import grammar_dataset
from torchtune.datasets._hh_rlhf_helpful import hh_rlhf_helpful_dataset
from torchtune.datasets._instruct import instruct_dataset
from torchtune.datasets._packed import PackedDataset
from torchtune.datasets._preference import preference_dataset, PreferenceDataset
from torchtune.datasets._samsum import samsum_dataset
from torchtune.datasets._sft import SFTDataset
from torchtune.datasets._slimorca import slimorca_dataset
from torchtune.datasets._stack_exchange_paired import stack_exchange_paired_dataset
from torchtune.datasets._text_completion import (
    text_completion_dataset,
    TextCompletionDataset,
)
from torchtune.datasets._wikitext import wikitext_dataset

from torchtune.datasets._meco import (
    sft_dataset_mhubert_1000,
    ntp_dataset_mhubert_1000,
    icl_dataset_mhubert_1000,
)

__all__ = [
    "alpaca_dataset",
    "alpaca_cleaned_dataset",
    "grammar_dataset",
    "samsum_dataset",
    "stack_exchange_paired_dataset",
    "slimorca_dataset",
    "instruct_dataset",
    "preference_dataset",
    "chat_dataset",
    "text_completion_dataset",
    "TextCompletionDataset",
    "cnn_dailymail_articles_dataset",
    "PackedDataset",
    "ConcatDataset",
    "wikitext_dataset",
    "PreferenceDataset",
    "SFTDataset",
    "hh_rlhf_helpful_dataset",
    "multimodal",
    "sft_dataset_mhubert_1000",
    "ntp_dataset_mhubert_1000",
]
