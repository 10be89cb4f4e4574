# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from .attention import CausalSelfAttention  # noqa
from .common_utils import reparametrize_as_dtype_state_dict_post_hook
from .feed_forward import FeedForward  # noqa
from .kv_cache import KVCache  # noqa
from .lr_schedulers import get_cosine_schedule_with_warmup  # noqa
from .position_embeddings import RotaryPositionalEmbeddings  # noqa
from .rms_norm import RMSNorm  # noqa
from .transformer import TransformerDecoder, TransformerDecoderLayer  # noqa

__all__ = [
    "CausalSelfAttention",
    "FeedForward",
    "get_cosine_schedule_with_warmup",
    "KVCache",
    "RotaryPositionalEmbeddings",
    "RMSNorm",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "reparametrize_as_dtype_state_dict_post_hook",
]
