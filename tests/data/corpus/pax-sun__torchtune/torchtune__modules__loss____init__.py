# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

from .ce_chunked_output_loss import CEWithChunkedOutputLoss

from .cross_entropy_loss import LinearCrossEntropyLoss, LigerLinearCrossEntropyLoss
from .kd_losses import (
    ForwardKLLoss,
    ForwardKLWithChunkedOutputLoss,
    ReverseKLLoss,
    ReverseKLWithChunkedOutputLoss,
    SymmetricKLLoss,
    SymmetricKLWithChunkedOutputLoss,
)
from .loss_types import RLLoss, SFTLoss

__all__ = [
    "CEWithChunkedOutputLoss",
    "ForwardKLLoss",
    "ForwardKLWithChunkedOutputLoss",
    "ReverseKLLoss",
    "ReverseKLWithChunkedOutputLoss",
    "SymmetricKLLoss",
    "SymmetricKLWithChunkedOutputLoss",
    "LinearCrossEntropyLoss",
    "LigerLinearCrossEntropyLoss",
    "SFTLoss",
    "RLLoss",
]
