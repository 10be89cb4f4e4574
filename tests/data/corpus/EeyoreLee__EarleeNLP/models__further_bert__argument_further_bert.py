# -*- encoding: utf-8 -*-
'''
@create_time: 2022/06/24 10:45:09
@author: lichunyu
'''
from dataclasses import dataclass, field

from .._base.base_argument import BaseModelArgument


@dataclass
class ModelArgument(BaseModelArgument):

    ...

