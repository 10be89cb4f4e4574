from .grpo import GRPOTrainer
from .grpo_config import GRPOConfig
from .teacher_rewards import TeacherKLBasedReward
from .teacher_trainers import TeacherGRPOTrainer
from .data_reward_scorer import (
    DataScorerArgs, DataTeacherRewardScorer,
    DataConcatenatorArgs, DataCompletionConcatenator)
