# Copyright 2024 Alibaba Group Holding Limited. All Rights Reserved.
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
# ==============================================================================

import sys
from setuptools import setup, find_packages

if sys.version_info[0] < 3:
  import imp
  VERSION = imp.load_source('chatlearn.version', 'chatlearn/utils/version.py').VERSION
else:
  from importlib.machinery import SourceFileLoader
  VERSION = SourceFileLoader("chatlearn.version", "chatlearn/utils/version.py") \
      .load_module().VERSION

setup(
    name='pai-chatlearn',
    version=VERSION,
    python_requires='>3.6.0',
    packages=find_packages(),
    include_package_data=True,
    install_requires=[],
    long_description="PAI ChatLearn",
    author='Alibaba Group',
    license='Apache 2.0',
)
