"""
    FEATURE: Training Script of ChartMoE
    AUTHOR: Brian Qu
    URL: https://arxiv.org/abs/2409.03277
    REFERENCE: https://github.com/InternLM/InternLM-XComposer
"""
import json
import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn as nn
import transformers
from accelerate.utils import DistributedType

from data_mix import Mix_dataset
from mlp_moe import MLPMoE

from deepspeed import zero
from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
from peft import LoraConfig, get_peft_model
from transformers import deepspeed
from chartmoe_trainer import ChartMoETrainer
from transformers.trainer_pt_utils import LabelSmoother

from copy import deepcopy
import os

IGNORE_TOKEN_ID = LabelSmoother.ignore_index # -100

@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default='')
    moe_aligned_pth_path: Optional[str] = field(default='')


@dataclass
class DataArguments:
    data_path: str = field(
        default='data.txt', metadata={'help': 'Path to the training data.'})
    given_num: bool = False
    img_size: int = 490
    hd_num: int = -1


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    cache_dir: Optional[str] = field(default=None)
    optim: str = field(default='adamw_torch')
    max_length: int = field(
        default=4096,
        metadata={
            'help':
            'Maximum sequence length. Sequences will be right padded (and possibly truncated).'
        },
    )
    use_lora: bool = False
    fix_vit: bool = True
    fix_sampler: bool = False
    fix_llm: bool = True
    label_names: List[str] = field(default_factory=lambda: ['samples'])


@dataclass
class LoraArguments:
    lora_r: int = 64
    lora_alpha: int = 64
    lora_dropout: float = 0.05
    lora_target_modules: List[str] = field(default_factory=lambda: [
        'attention.wqkv',
        'attention.wo',
        'feed_forward.w1',
        'feed_forward.w2',
        'feed_forward.w3',
    ])
    lora_weight_path: str = ''
    lora_bias: str = 'none'

def maybe_zero_3(param):
    if hasattr(param, 'ds_id'):
        assert param.ds_status == ZeroParamStatus.NOT_AVAILABLE
        with zero.GatheredParameters([param]):
            param = param.data.detach().cpu().clone()
    else:
        param = param.detach().cpu().clone()
    return param


# Borrowed from peft.utils.get_peft_model_state_dict
def get_peft_state_maybe_zero_3(named_params, bias):
    if bias == 'none':
        to_return = {k: t for k, t in named_params if 'lora_' in k}
    elif bias == 'all':
        to_return = {
            k: t
            for k, t in named_params if 'lora_' in k or 'bias' in k
        }
    elif bias == 'lora_only':
        to_return = {}
        maybe_lora_bias = {}
        lora_bias_names = set()
        for k, t in named_params:
            if 'lora_' in k:
                to_return[k] = t
                bias_name = k.split('lora_')[0] + 'bias'
                lora_bias_names.add(bias_name)
            elif 'bias' in k:
                maybe_lora_bias[k] = t
        for k, t in maybe_lora_bias:
            if bias_name in lora_bias_names:
                to_return[bias_name] = t
    else:
        raise NotImplementedError
    to_return = {k: maybe_zero_3(v) for k, v in to_return.items()}
    return to_return


local_rank = None


def rank0_print(*args):
    if local_rank == 0:
        print(*args)


def safe_save_model_for_hf_trainer(trainer: transformers.Trainer,
                                   output_dir: str,
                                   bias='none'):
    """Collects the state dict and dump to disk."""
    # check if zero3 mode enabled
    if deepspeed.is_deepspeed_zero3_enabled():
        state_dict = trainer.model_wrapped._zero3_consolidated_16bit_state_dict(
        )
    else:
        if trainer.args.use_lora:
            state_dict = get_peft_state_maybe_zero_3(
                trainer.model.named_parameters(), bias)
        else:
            state_dict = trainer.model.state_dict()
    if trainer.args.should_save and trainer.args.local_rank == 0:
        trainer._save(output_dir, state_dict=state_dict)


@dataclass
class DataCollatorForSupervisedDataset:
    """Collate examples for supervised fine-tuning."""

    def __call__(self, instances: Sequence[Dict]) -> Dict[str, torch.Tensor]:
        instances = [instance['samples'] for instance in instances]
        text_input, data_type = tuple(
            [instance[key] for instance in instances]
            for key in ('text_input', 'data_type'))
        if 'image' not in instances[0]:
            text_input = [instance['text_input'][0] for instance in instances]
        batch = dict(
            text_input=text_input,
            data_type=data_type,
        )
        if 'image' in instances[0]:
            images = [instance['image'] for instance in instances]
            batch['image'] = images

        return dict(samples=batch)


def make_supervised_data_module(
    tokenizer: transformers.PreTrainedTokenizer,
    data_args,
) -> Dict:
    """Make dataset and collator for supervised fine-tuning."""

    rank0_print('Loading data...')
    if data_args.data_path.endswith('json'):
        train_json = json.load(open(data_args.data_path))
    elif data_args.data_path.endswith('txt'):
        train_json = {}
        with open(data_args.data_path) as f:
            lines = f.readlines()

        for line in lines:
            line = line.strip()
            line = line.split(' ')
            with open(line[0]) as f:
                temp = json.load(f)
            if data_args.given_num:
                assert len(line) == 2
                if int(line[1]) == -1:
                    print(f"Load total data from {line[0]} ...")
                else:
                    num = int(float(line[1]) * 1000)
                    if len(temp) > num:
                        temp = random.sample(temp, num)
                    else:
                        ex_temp = []
                        for i in range(num - len(temp)):
                            ex_temp.append(random.choice(temp))
                        temp.extend(ex_temp)
            else:
                if len(line) == 2:
                    ratio = float(line[1])
                    new_len = int(len(temp) * ratio)
                    if ratio < 1:
                        temp = random.sample(temp, new_len)
                    elif ratio > 1:
                        ex_temp = []
                        for i in range(new_len - len(temp)):
                            ex_temp.append(random.choice(temp))
                        temp.extend(ex_temp)
            rank0_print(f'Load {len(temp)} samples from {line}')
            train_json[line[0]] = temp
    train_dataset = Mix_dataset(
        train_json,
        img_size=data_args.img_size,
        hd_num=data_args.hd_num,
        local_rank=local_rank)
    rank0_print(str(len(train_dataset)) + ' samples is loaded')
    eval_dataset = None

    data_collator = DataCollatorForSupervisedDataset()
    return dict(
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=data_collator,
    )


def train():
    global local_rank

    parser = transformers.HfArgumentParser(
        (ModelArguments, DataArguments, TrainingArguments, LoraArguments))
    (
        model_args,
        data_args,
        training_args,
        lora_args,
    ) = parser.parse_args_into_dataclasses()

    if getattr(training_args, 'deepspeed', None):
        training_args.distributed_state.distributed_type = DistributedType.DEEPSPEED

    local_rank = training_args.local_rank

    device_map = None

    # Set RoPE scaling factor
    config = transformers.AutoConfig.from_pretrained(
        model_args.model_name_or_path,
        cache_dir=training_args.cache_dir,
        trust_remote_code=True,
    )
    config.use_cache = False
    config.max_length = training_args.max_length
    
    if config.attn_implementation == "flash_attention_2":
        rank0_print("Use Flash-Attn!!!")
    else:
        rank0_print("Use Eager Attn!!!")

    # Load model and tokenizer
    rank0_print(f'Load model from: {model_args.model_name_or_path}')
    model = transformers.AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        config=config,
        cache_dir=training_args.cache_dir,
        device_map=device_map,
        trust_remote_code=True,
    )

    if data_args.img_size != 336:
        model.vit.resize_pos()

    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model_args.model_name_or_path,
        cache_dir=training_args.cache_dir,
        padding_side='right',
        use_fast=False,
        trust_remote_code=True,
    )
    model.tokenizer = tokenizer
    
    if model_args.moe_aligned_pth_path:
        rank0_print("Load Multi-Aligned MoE-MLP...")
        mlp_moe_state_dict = torch.load(model_args.moe_aligned_pth_path, map_location="cpu")
        num_experts = mlp_moe_state_dict['gate.weight'].size(0)
        num_selected = mlp_moe_state_dict.pop('num_selected')
        mlp_moe = MLPMoE(num_experts, num_selected, 1024, 4096).to(model.device)
        mlp_moe.load_state_dict(mlp_moe_state_dict)
        model.vision_proj = deepcopy(mlp_moe)
        del mlp_moe
        
        assert not training_args.fix_sampler, \
            "If load aligned moe, set `fix_sampler` to `False`. Because the router must be trained!!!"
            

    if training_args.fix_vit:
        model.vit.requires_grad_(False)
    else:
        assert False, "please fix vit~"
        # model.vit.requires_grad_(True)
        # model.vit.vision_tower.vision_model.post_layernorm = torch.nn.Identity(
        # )

    if training_args.fix_sampler:
        model.vision_proj.requires_grad_(False)
    else:
        model.vision_proj.requires_grad_(True)

    if training_args.use_lora:
        for name, param in model.model.named_parameters():
            param.requires_grad = False
        
        lora_config = LoraConfig(
            r=lora_args.lora_r,
            lora_alpha=lora_args.lora_alpha,
            target_modules=lora_args.lora_target_modules,
            lora_dropout=lora_args.lora_dropout,
            bias=lora_args.lora_bias,
            task_type='CAUSAL_LM',
            modules_to_save=['vision_proj'] if not training_args.fix_sampler else None
        )
        
        model = get_peft_model(model, lora_config)
        model.print_trainable_parameters()

        if training_args.gradient_checkpointing:
            model.enable_input_require_grads()
    else:
        if training_args.fix_llm:
            for name, param in model.model.named_parameters():
                param.requires_grad = False
            for name, param in model.output.named_parameters():
                param.requires_grad = False
        
        total = 0
        training = 0 
        training_name = []
        for name, param in model.named_parameters():
            param_num = param.numel()
            if param.requires_grad:
                training += param_num
                training_name.append(name)
            total += param_num
        
        rank0_print(f"Total Params:\t{total / 1e9:.2f}B")
        rank0_print(f"Training Params:\t{training / 1e6:.2f}M")
        rank0_print(training_name)

    # # Name of Trainable Params
    # trainable_params_names = []
    # for name,param in model.named_parameters():
    #     if param.requires_grad:
    #         trainable_params_names.append(name)
    # print(trainable_params_names)
    
    # Load data
    data_module = make_supervised_data_module(
        tokenizer=tokenizer, data_args=data_args)
    print(f"transformers logging bar enabled status: {transformers.processing_utils.logging.is_progress_bar_enabled()}")
    transformers.processing_utils.logging.enable_progress_bar()

    # whether `tune_mm_mlp` or not
    if training_args.fix_vit and training_args.fix_llm and (not training_args.fix_sampler) and (not training_args.use_lora):
        rank0_print("`tune_mm_mlp` is True!!!")
        training_args.tune_mm_mlp = True
    # Start trainner
    trainer = ChartMoETrainer(
        model=model, tokenizer=tokenizer, args=training_args, **data_module
    )

    trainer.train()
    trainer.save_state()

    safe_save_model_for_hf_trainer(
        trainer=trainer,
        output_dir=training_args.output_dir,
        bias=lora_args.lora_bias)


if __name__ == '__main__':
    train()