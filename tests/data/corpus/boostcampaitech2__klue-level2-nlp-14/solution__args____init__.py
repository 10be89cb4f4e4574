from .argparse import HfArgumentParser

from .data_args import DataArguments
from .project_args import ProjectArguments
from .training_args import NewTrainingArguments
from .modeling_args import ModelingArguments
from .hpsearch_args import HPSearchArguments
