# Copyright 2024 the LlamaFactory team.
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

from llamafactory.train.tuner import run_exp
import os
os.environ["PYTOCH_CUDA_ALLOC_CONF"]="max_split_size_mb:128"

def main():
    run_exp()

def _mp_fn(index):
    # For xla_spawn (TPUs)
    run_exp()

if __name__ == "__main__":
    main()
