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
from trl import ModelConfig , ScriptArguments
import trl

from trl.trainer.grpo_config import GRPOConfig
from transformers import TrainingArguments





@dataclass 
class UniRGRPOModelConfig(ModelConfig):
    ref_name_or_path: str = field(default=None)
    eval_checkpoint: str = field(default=None)
    dataset_index : int = field(default=0)
    use_unir: bool = field(default=True,)

@dataclass
class GRPOScriptArguments(ScriptArguments):
    """
    Script arguments for the GRPO training script.

    Args:
        reward_funcs (`list[str]`):
            List of reward functions. Possible values: 'accuracy', 'format', 'reasoning_steps', 'cosine', 'repetition_penalty', 'length', 'tag_count', 'code', 'code_format'.
        cosine_min_value_wrong (`float`):
            Minimum reward for cosine scaling for wrong answers.
        cosine_max_value_wrong (`float`):
            Maximum reward for cosine scaling for wrong answers.
        cosine_min_value_correct (`float`):
            Minimum reward for cosine scaling for correct answers.
        cosine_max_value_correct (`float`):
            Maximum reward for cosine scaling for correct answers.
        cosine_max_len (`int`):
            Maximum length for cosine scaling.
        code_language (`str`):
            Language for code format reward.
    """

    reward_funcs: list[str] = field(
        default_factory=lambda: ["accuracy", "format", "tag_count"],
        metadata={
            "help": "List of reward functions. Possible values: 'accuracy', 'format', 'reasoning_steps', 'cosine', 'repetition_penalty', 'length', tag_count', 'code', 'code_format'"
        },
    )
    cosine_min_value_wrong: float = field(
        default=0.0,
        metadata={"help": "Minimum reward for wrong answers"},
    )
    cosine_max_value_wrong: float = field(
        default=-0.5,
        metadata={"help": "Maximum reward for wrong answers"},
    )
    cosine_min_value_correct: float = field(
        default=0.5,
        metadata={"help": "Minimum reward for correct answers"},
    )
    cosine_max_value_correct: float = field(
        default=1.0,
        metadata={"help": "Maximum reward for correct answers"},
    )
    cosine_max_len: int = field(
        default=1000,
        metadata={"help": "Maximum length for scaling"},
    )
    repetition_n_grams: int = field(
        default=3,
        metadata={"help": "Number of n-grams for repetition penalty reward"},
    )
    repetition_max_penalty: float = field(
        default=-1.0,
        metadata={"help": "Maximum (negative) penalty for for repetition penalty reward"},
    )
    code_language: str = field(
        default="python",
        metadata={
            "help": "Language for code format reward. Based on E2B supported languages https://e2b.dev/docs/code-interpreting/supported-languages",
            "choices": ["python", "javascript", "r", "java", "bash"],
        },
    )





# TODO: add the shared options with a mixin to reduce code duplication
@dataclass
class UniRGRPOConfig(GRPOConfig):
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
    do_sample: int = field(
        default=True,
        metadata={
            "help": "τ parameter from the TR-DPO paper, which determines how frequently the current policy is "
            "synchronized with the reference policy. To use this parameter, you must set `sync_ref_model=True`."
        },
    )
    # def __post_init__(self):
    #     self.bf16 = not (self.fp16) if self.bf16 is None else self.bf16

    #     super(GRPOConfig, self).__post_init__()

    #     num_processes = self.world_size
    #     # The current default effective batch size
    #     if self.generation_batch_size is None and self.steps_per_generation is None:
    #         self.steps_per_generation = self.gradient_accumulation_steps
    #         self.generation_batch_size = self.per_device_train_batch_size * num_processes * self.steps_per_generation
    #     elif self.generation_batch_size is not None and self.steps_per_generation is None:
    #         # Just ensure the value is divisible by the global batch size
    #         if self.generation_batch_size % (self.per_device_train_batch_size * num_processes) != 0:
    #             raise ValueError(
    #                 f"generation_batch_size ({self.generation_batch_size}) must be divisible by the global batch size "
    #                 f"({self.per_device_train_batch_size * num_processes})."
    #             )
    #         self.steps_per_generation = self.generation_batch_size // (
    #             self.per_device_train_batch_size * num_processes
    #         )
    #     elif self.generation_batch_size is None and self.steps_per_generation is not None:
    #         self.generation_batch_size = self.per_device_train_batch_size * num_processes * self.steps_per_generation
    #     else:
    #         raise ValueError(
    #             "'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time"
    #         )

    #     # The generation batch must contain full prompt groups (no partials), so it must be divisible by
    #     # num_generations.
    #     if self.generation_batch_size % self.num_generations != 0:
    #         raise ValueError(
    #             f"generation_batch_size ({self.generation_batch_size}) must be divisible by num_generations "
    #             f"({self.num_generations})."
    #         )

    #     # for smooth evaluation we deleted num generation condition
    #     # if self.num_generations < 2:
    #     #     raise ValueError(
    #     #         "GRPO requires at least 2 generations per prompt to calculate the advantages. You provided "
    #     #         f"{self.num_generations}, which is less than the minimum required."
    #     #     )

    #     if self.delta is not None and self.use_liger_loss:
    #         raise ValueError("Liger loss does not support two-sided GRPO loss yet.")
    


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
