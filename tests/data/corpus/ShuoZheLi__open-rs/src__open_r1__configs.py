# coding=utf-8
# Copyright 2025 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from dataclasses import dataclass, field
from typing import Optional

import trl


# TODO: add the shared options with a mixin to reduce code duplication
@dataclass
class GRPOConfig(trl.GRPOConfig):
    """
    args for callbacks, benchmarks etc
    """

    benchmarks: list[str] = field(
        default_factory=lambda: [], metadata={"help": "The benchmarks to run after training."}
    )
    callbacks: list[str] = field(
        default_factory=lambda: [], metadata={"help": "The callbacks to run during training."}
    )
    chat_template: Optional[str] = field(default=None, metadata={"help": "The chat template to use."})
    system_prompt: Optional[str] = field(
        default=None,
        metadata={"help": "The optional system prompt to use."},
    )
    hub_model_revision: Optional[str] = field(
        default="main", metadata={"help": "The Hub model branch to push the model to."}
    )
    overwrite_hub_revision: bool = field(default=False, metadata={"help": "Whether to overwrite the Hub revision."})
    push_to_hub_revision: bool = field(default=False, metadata={"help": "Whether to push to a Hub revision/branch."})
    wandb_entity: Optional[str] = field(
        default=None,
        metadata={"help": ("The entity to store runs under.")},
    )
    wandb_project: Optional[str] = field(
        default=None,
        metadata={"help": ("The project to store runs under.")},
    )
    vllm_dtype: Optional[str] = field(
        default="auto",
        metadata={
            "help": "Data type to use for vLLM generation. If set to 'auto', the data type will be automatically "
            "determined based on the model configuration. Find the supported values in the vLLM documentation."
        },
    )
    entropy_coeff: float = field(
        default=0.0, 
        metadata={"help": "Coefficient for the entropy bonus to encourage exploration."}
    )
    divergence_type: str = field(
        default="kl",  # Options: "kl", "js", "hellinger"
        metadata={
            "help": "kl, skl_approx, skl"
        },
    )
    skl_alpha: float = field(
        default=0.8,
        metadata={
            "help": "The alpha value for interpolation of pi and pi_ref. This is only used if "
            "`divergence_type` is set to 'skl' or 'skl_approx'."
        },
    )

    mask_truncated_completions: bool = field(
        default=False,
        metadata={
            "help": "Whether to mask truncated completions. If set to True, the model will not consider the "
            "truncated part of the completion when calculating the loss."
        },
    )

    token_entropy_percentile_threshold: float = field(
        default=0.0,
        metadata={
            "help": "The percentile threshold for token entropy. If set to a value greater than 0.0, the model will "
            "only consider tokens with entropy above this threshold when calculating the loss."
        },
    )

    epsilon_low: Optional[float] = field(
        default=None,
        metadata={
            "help": "The lower bound for the epsilon value used in the GRPO algorithm. If not set, it will default to the "
            "value of `epsilon`."
        },
    )

    epsilon_high: Optional[float] = field(
        default=None,
        metadata={
            "help": "The upper bound for the epsilon value used in the GRPO algorithm. If not set, it will default to the "
            "value of `epsilon`."
        },
    )

    eval_num_generations: Optional[int] = field(
        default=None,
        metadata={"help": "# completions per prompt *during evaluation* "
                    "(defaults to num_generations if None)"}
    )


@dataclass
class SFTConfig(trl.SFTConfig):
    """
    args for callbacks, benchmarks etc
    """

    benchmarks: list[str] = field(
        default_factory=lambda: [], metadata={"help": "The benchmarks to run after training."}
    )
    callbacks: list[str] = field(
        default_factory=lambda: [], metadata={"help": "The callbacks to run during training."}
    )
    chat_template: Optional[str] = field(default=None, metadata={"help": "The chat template to use."})
    system_prompt: Optional[str] = field(
        default=None,
        metadata={"help": "The optional system prompt to use for benchmarking."},
    )
    hub_model_revision: Optional[str] = field(
        default="main",
        metadata={"help": "The Hub model branch to push the model to."},
    )
    overwrite_hub_revision: bool = field(default=False, metadata={"help": "Whether to overwrite the Hub revision."})
    push_to_hub_revision: bool = field(default=False, metadata={"help": "Whether to push to a Hub revision/branch."})
    wandb_entity: Optional[str] = field(
        default=None,
        metadata={"help": ("The entity to store runs under.")},
    )
    wandb_project: Optional[str] = field(
        default=None,
        metadata={"help": ("The project to store runs under.")},
    )
