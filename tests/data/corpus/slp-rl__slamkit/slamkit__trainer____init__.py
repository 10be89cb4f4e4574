from .slam_trainer import SLAMTrainer, SLAMTrainingArguments
from .callbacks import RunTimeStopperCallback, MaxTokensStopperCallback
from .slam_dpo_trainer import SLAMDPOTrainer