# Copyright 2025 the LlamaFactory team.
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

import json
from dataclasses import dataclass, field
from typing import Literal, Optional, Union

from transformers import Seq2SeqTrainingArguments
from transformers.training_args import _convert_str_dict

from ..extras.misc import use_ray
from ..extras.logging import get_logger

from datetime import datetime
import os


logger = get_logger(__name__)


# NOTE: start of customized arguments
@dataclass
class CustomizedArguments:
    auto_output_dir: bool = field(
        default=True,
        metadata={
            "help": "Whether to automatically set the output directory based on the model name."
            " If set to False, the output directory will be set to the value of `output_dir`."
        },
    )
    auto_output_root: str | None = field(
        default=None,
        metadata={
            "help": "The root directory to save the training results to when `auto_output_dir` is True."
            " The final output directory will be `<auto_output_root>/<model_name>`."
        },
    )
    eval_pawa_harness: bool = field(
        default=False,
        metadata={"help": "Whether to evaluate the model on the PAWA harness at each save step."},
    )

    @staticmethod
    def __init_output_base_name():
        now = datetime.now()
        return now.strftime("%Y-%m-%d_%H-%M-%S")

    def __post_init__(self):
        if self.auto_output_dir:
            if not self.auto_output_root:
                raise ValueError("auto_output_root must be specified when auto_output_dir is True.")

            base_name = self.__init_output_base_name()
            output_dir = os.path.join(self.auto_output_root, base_name)

            if self.output_dir:
                logger.warning_rank0(
                    "The `output_dir` argument is set, but `auto_output_dir` is True. "
                    f"The `output_dir` will be overridden from {self.output_dir} to {output_dir}."
                )
            self.output_dir = output_dir

            if self.run_name:
                logger.warning_rank0(
                    "The `run_name` argument is set, but `auto_output_dir` is True. "
                    f"The `run_name` will be overridden to the new output directory name: {output_dir}."
                )
            self.run_name = output_dir
        else:
            if self.auto_output_root:
                raise ValueError(
                    "auto_output_root must not be specified when auto_output_dir is False. "
                    "The `output_dir` will be set to the value of `output_dir`."
                )


# NOTE: end of customized arguments


@dataclass
class RayArguments:
    r"""Arguments pertaining to the Ray training."""

    ray_run_name: Optional[str] = field(
        default=None,
        metadata={"help": "The training results will be saved at `<ray_storage_path>/ray_run_name`."},
    )
    ray_storage_path: str = field(
        default="./saves",
        metadata={"help": "The storage path to save training results to"},
    )
    ray_storage_filesystem: Optional[Literal["s3", "gs", "gcs"]] = field(
        default=None,
        metadata={"help": "The storage filesystem to use. If None specified, local filesystem will be used."},
    )
    ray_num_workers: int = field(
        default=1,
        metadata={"help": "The number of workers for Ray training. Default is 1 worker."},
    )
    resources_per_worker: Union[dict, str] = field(
        default_factory=lambda: {"GPU": 1},
        metadata={"help": "The resources per worker for Ray training. Default is to use 1 GPU per worker."},
    )
    placement_strategy: Literal["SPREAD", "PACK", "STRICT_SPREAD", "STRICT_PACK"] = field(
        default="PACK",
        metadata={"help": "The placement strategy for Ray training. Default is PACK."},
    )
    ray_init_kwargs: Optional[dict] = field(
        default=None,
        metadata={"help": "The arguments to pass to ray.init for Ray training. Default is None."},
    )

    def __post_init__(self):
        self.use_ray = use_ray()
        if isinstance(self.resources_per_worker, str) and self.resources_per_worker.startswith("{"):
            self.resources_per_worker = _convert_str_dict(json.loads(self.resources_per_worker))
        if self.ray_storage_filesystem is not None:
            if self.ray_storage_filesystem not in ["s3", "gs", "gcs"]:
                raise ValueError(
                    f"ray_storage_filesystem must be one of ['s3', 'gs', 'gcs'], got {self.ray_storage_filesystem}"
                )

            import pyarrow.fs as fs

            if self.ray_storage_filesystem == "s3":
                self.ray_storage_filesystem = fs.S3FileSystem()
            elif self.ray_storage_filesystem == "gs" or self.ray_storage_filesystem == "gcs":
                self.ray_storage_filesystem = fs.GcsFileSystem()


@dataclass
class TrainingArguments(RayArguments, Seq2SeqTrainingArguments, CustomizedArguments):
    r"""Arguments pertaining to the trainer."""

    def __post_init__(self):
        Seq2SeqTrainingArguments.__post_init__(self)
        RayArguments.__post_init__(self)
        CustomizedArguments.__post_init__(self)
