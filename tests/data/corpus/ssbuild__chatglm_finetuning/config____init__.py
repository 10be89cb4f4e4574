# coding=utf8
# @Time    : 2023/5/12 20:05
# @Author  : tk
# @FileName: chatglm_config
import json
import os

# 切换配置
from config.main import *

