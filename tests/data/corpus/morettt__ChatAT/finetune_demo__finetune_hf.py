#!/usr/bin/env python
# -*- coding: utf-8 -*-


#123456

import dataclasses as dc
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Optional, Union

import jieba
import json
import math
import numpy as np
import ruamel.yaml as yaml
import torch
import time
import typer
from datasets import Dataset, DatasetDict, NamedSplit, Split, load_dataset
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from peft import (
    PeftConfig,
    PeftModelForCausalLM,
    get_peft_config,
    get_peft_model
)
from rouge_chinese import Rouge
from torch import nn
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    EvalPrediction,
    GenerationConfig,
    PreTrainedModel,
    PreTrainedTokenizer,
    PreTrainedTokenizerFast,
    Seq2SeqTrainingArguments, AutoConfig,
)
from transformers import DataCollatorForSeq2Seq as _DataCollatorForSeq2Seq

from transformers import Seq2SeqTrainer as _Seq2SeqTrainer

from transformers import TrainerCallback

ModelType = Union[PreTrainedModel, PeftModelForCausalLM]
TokenizerType = Union[PreTrainedTokenizer, PreTrainedTokenizerFast]
app = typer.Typer(pretty_exceptions_show_locals=False)



class ExtendedSaveStepRecorderCallback(TrainerCallback):
    def __init__(self, script_path: str, base_command: str, cli_demo_path: str):
        super().__init__()
        self.script_path = script_path
        self.base_command = base_command
        self.cli_demo_path = cli_demo_path
        self.last_save_step = None

    def on_save(self, args, state, control, **kwargs):
        self.last_save_step = state.global_step

    def on_train_end(self, args, state, control, **kwargs):
        if self.last_save_step is not None:
            # 更新测试.py文件
            command = self.base_command.format(checkpoint=self.last_save_step)
            with open(self.script_path, 'w', encoding='utf-8') as script_file:
                script_file.write("import subprocess\n\n")
                script_file.write(f'# 运行脚本\n')
                script_file.write(f'subprocess.run({command})\n')
            print(f"Updated {self.script_path} with checkpoint-{self.last_save_step}")
            
            # 生成新的cli_demo.py文件
            model_path = f'/root/ChatAT/finetune_demo/output/checkpoint-{self.last_save_step}'
            demo_file_contents = f"""import os
import platform
from transformers import AutoTokenizer, AutoModelForCausalLM
from typing import Union, Tuple
from pathlib import Path

def load_model_and_tokenizer(model_dir: Union[str, Path], trust_remote_code: bool = True) -> Tuple[AutoModelForCausalLM, AutoTokenizer]:
    model_dir = Path(model_dir)  # 确保model_dir是Path对象
    if (model_dir / 'adapter_config.json').exists():
        from transformers import AutoModelForCausalLM as AutoPeftModelForCausalLM
        model = AutoPeftModelForCausalLM.from_pretrained(
            model_dir, trust_remote_code=trust_remote_code, device_map='auto'
        )
        tokenizer_dir = model.peft_config['default'].base_model_name_or_path
    else:
        model = AutoModelForCausalLM.from_pretrained(
            model_dir, trust_remote_code=trust_remote_code, device_map='auto'
        )
        tokenizer_dir = model_dir
    tokenizer = AutoTokenizer.from_pretrained(
        tokenizer_dir, trust_remote_code=trust_remote_code
    )
    return model, tokenizer

MODEL_PATH = os.environ.get('MODEL_PATH', '""" + model_path + """')
model, tokenizer = load_model_and_tokenizer(MODEL_PATH)

os_name = platform.system()
clear_command = 'cls' if os_name == 'Windows' else 'clear'
stop_stream = False

welcome_prompt = "欢迎使用 ChatGLM3-6B 模型，输入内容即可进行对话，clear 清空对话历史，stop 终止程序"

def build_prompt(history):
    prompt = welcome_prompt
    for query, response in history:
        prompt += f"\\n\\n用户：{query}"
        prompt += f"\\n\\nChatGLM3-6B：{response}"
    return prompt

def main():
    past_key_values, history = None, []
    global stop_stream
    print(welcome_prompt)
    while True:
        query = input("\\n用户：")
        if query.strip() == "stop":
            break
        if query.strip() == "clear":
            past_key_values, history = None, []
            os.system(clear_command)
            print(welcome_prompt)
            continue
        print("\\nChatGLM：", end="")
        current_length = 0
        for response, history, past_key_values in model.stream_chat(tokenizer, query, history=history, top_p=1,
                                                                    temperature=0.01,
                                                                    past_key_values=past_key_values,
                                                                    return_past_key_values=True):
            if stop_stream:
                stop_stream = False
                break
            else:
                print(response[current_length:], end="", flush=True)
                current_length = len(response)
        print("")

if __name__ == "__main__":
    main()
"""
            with open(self.cli_demo_path, 'w', encoding='utf-8') as demo_file:
                demo_file.write(demo_file_contents)
            print(f"Created or updated {self.cli_demo_path} with the latest checkpoint path.")


def predict_epoch(sample_size):
    if sample_size <= 100:
        return 15
    elif sample_size > 100 and sample_size <= 500:
        return round(15 - (sample_size - 100) * (5 / 400))
    elif sample_size > 500 and sample_size <= 1000:
        return round(15 - (sample_size - 500) * (5 / 500))
    elif sample_size > 1000 and sample_size <= 10000:
        return round(10 - (sample_size - 1000) * (8 / 9000))
    else:
        return 2
            
            
            
            
def load_dataset_and_predict_epoch(file_path):
    try:
        conversations_count = 0
        with open(file_path, 'r') as file:
            for line in file:
                data = json.loads(line)
                conversations_count += 1
        sample_size_rounded = round(conversations_count, -1)
        epoch = predict_epoch(sample_size_rounded)
        print(f"原始数据集大小: {conversations_count}条, 四舍五入后: {sample_size_rounded}条, 推荐的Epoch数: {epoch}")
        return epoch
    except Exception as e:
        print(f"加载文件或计算过程中发生错误: {e}")
        return None
    
    
file_path = "/root/ChatAT/finetune_demo/data/train.json"
epoch_threshold = load_dataset_and_predict_epoch(file_path)
            
class EarlyStoppingCallback(TrainerCallback):
    def __init__(self, loss_threshold=None, epoch_threshold=None, enable_monitoring=True):
        super().__init__()
        self.loss_threshold = loss_threshold
        self.epoch_threshold = epoch_threshold
        self.should_stop_after_next_eval = False
        self.enable_monitoring = enable_monitoring

    def on_log(self, args, state, control, logs=None, **kwargs):
        # 检查是否启用了基于损失的早停，并且logs中包含了损失信息
        if self.enable_monitoring and logs is not None and 'loss' in logs and self.loss_threshold is not None:
            if logs['loss'] < self.loss_threshold:
                print(f"Loss {logs['loss']} is below threshold {self.loss_threshold}. Preparing to stop after next evaluation.")
                self.should_stop_after_next_eval = True

    def on_evaluate(self, args, state, control, **kwargs):
        # 如果之前的检查触发了早停，设置相应的控制标志
        if self.enable_monitoring and self.should_stop_after_next_eval:
            print("Evaluation completed. Stopping training after next save.")
            self.should_stop_after_next_eval = False
            control.should_save = True
            control.should_training_stop = True

    def on_epoch_end(self, args, state, control, **kwargs):
        # 检查是否启用了基于周期的早停
        if self.enable_monitoring and self.epoch_threshold is not None and state.epoch >= self.epoch_threshold:
            print(f"Reached epoch threshold of {self.epoch_threshold}. Preparing to stop training after next save.")
            control.should_save = True
            control.should_training_stop = True
            

class DataCollatorForSeq2Seq(_DataCollatorForSeq2Seq):
    def __call__(self, features, return_tensors=None):
        output_ids = (
            [feature['output_ids'] for feature in features]
            if 'output_ids' in features[0].keys()
            else None
        )
        if output_ids is not None:
            max_output_length = max(len(out) for out in output_ids)
            if self.pad_to_multiple_of is not None:
                max_output_length = (
                        (
                                max_output_length + self.pad_to_multiple_of - 1) //
                        self.pad_to_multiple_of * self.pad_to_multiple_of
                )
            for feature in features:
                remainder = [self.tokenizer.pad_token_id] * (
                        max_output_length - len(feature['output_ids'])
                )
                if isinstance(feature['output_ids'], list):
                    feature['output_ids'] = feature['output_ids'] + remainder
                else:
                    feature['output_ids'] = np.concatenate(
                        [feature['output_ids'], remainder]
                    ).astype(np.int64)
        return super().__call__(features, return_tensors)


class Seq2SeqTrainer(_Seq2SeqTrainer):
    def prediction_step(
            self,
            model: nn.Module,
            inputs: dict[str, Any],
            prediction_loss_only: bool,
            ignore_keys=None,
            **gen_kwargs,
    ) -> tuple[Optional[float], Optional[torch.Tensor], Optional[torch.Tensor]]:

        if self.args.predict_with_generate:
            output_ids = inputs.pop('output_ids')
        input_ids = inputs['input_ids']
        loss, generated_tokens, labels = super().prediction_step(
            model, inputs, prediction_loss_only, ignore_keys, **gen_kwargs
        )
        generated_tokens = generated_tokens[:, input_ids.size()[1]:]
        if self.args.predict_with_generate:
            labels = output_ids
        return loss, generated_tokens, labels


def _resolve_path(path: Union[str, Path]) -> Path:
    return Path(path).expanduser().resolve()


def _sanity_check(
        input_ids: Sequence[int],
        output_ids: Sequence[int],
        tokenizer: PreTrainedTokenizer,
):
    print('--> Sanity check')
    for in_id, out_id in zip(input_ids, output_ids):
        if in_id == 0:
            continue
        if in_id in tokenizer.tokenizer.index_special_tokens:
            in_text = tokenizer.tokenizer.index_special_tokens[in_id]
        else:
            in_text = tokenizer.decode([in_id])
        print(f'{repr(in_text):>20}: {in_id} -> {out_id}')


@functools.cache
def _get_yaml_parser() -> yaml.YAML:
    parser = yaml.YAML(typ='safe', pure=True)
    parser.indent(mapping=2, offset=2, sequence=4)
    parser.default_flow_style = False
    return parser


@dc.dataclass
class DataConfig(object):
    train_file: str
    val_file: Optional[str] = None
    test_file: Optional[str] = None

    num_proc: Optional[int] = None

    @property
    def data_format(self) -> str:
        return Path(self.train_file).suffix

    @property
    def data_files(self) -> dict[NamedSplit, str]:
        return {
            split: data_file
            for split, data_file in zip(
                [Split.TRAIN, Split.VALIDATION, Split.TEST],
                [self.train_file, self.val_file, self.test_file],
            )
            if data_file is not None
        }


import dataclasses as dc
from typing import Optional
# 假设 Seq2SeqTrainingArguments, DataConfig, PeftConfig 已经被正确导入

@dc.dataclass
class FinetuningConfig(object):
    data_config: DataConfig  

    max_input_length: int
    max_output_length: int

    # 使用 default_factory 来避免可变默认值的问题
    training_args: Seq2SeqTrainingArguments = dc.field(
        default_factory=lambda: Seq2SeqTrainingArguments(output_dir='./output')
    )
    peft_config: Optional[PeftConfig] = None  # 假设这也是你代码中的一个类

    def __post_init__(self):
        if not self.training_args.do_eval or self.data_config.val_file is None:
            # skips the evaluation stage when `do_eval` or `eval_file` is not provided
            self.training_args.do_eval = False
            self.training_args.evaluation_strategy = 'no'
            self.data_config.val_file = None
        else:
            # 逻辑确保评估批处理大小与训练批处理大小一致，如果未指定
            self.training_args.per_device_eval_batch_size = (
                self.training_args.per_device_eval_batch_size
                or self.training_args.per_device_train_batch_size
            )

    @classmethod
    def from_dict(cls, **kwargs) -> 'FinetuningConfig':
        training_args = kwargs.get('training_args', None)
        if training_args is not None and not isinstance(
                training_args, Seq2SeqTrainingArguments
        ):
            gen_config = training_args.get('generation_config')
            # TODO: a bit hacky
            if not isinstance(gen_config, GenerationConfig):
                training_args['generation_config'] = GenerationConfig(
                    **gen_config
                )
            kwargs['training_args'] = Seq2SeqTrainingArguments(**training_args)

        data_config = kwargs.get('data_config')
        if not isinstance(data_config, DataConfig):
            kwargs['data_config'] = DataConfig(**data_config)

        peft_config = kwargs.get('peft_config', None)
        if peft_config is not None and not isinstance(peft_config, PeftConfig):
            kwargs['peft_config'] = get_peft_config(peft_config)
        return cls(**kwargs)

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> 'FinetuningConfig':
        path = _resolve_path(path)
        kwargs = _get_yaml_parser().load(path)
        return cls.from_dict(**kwargs)


def _load_datasets(
        data_dir: Path,
        data_format: str,
        data_files: dict[NamedSplit, str],
        num_proc: Optional[int],
) -> DatasetDict:
    if data_format in ('.csv', '.json', '.jsonl'):
        dataset_dct = load_dataset(
            data_format[1:],
            data_dir=data_dir,
            data_files=data_files,
            num_proc=num_proc,
        )
    else:
        err_msg = f"Cannot load dataset in the '{data_format}' format."
        raise NotImplementedError(err_msg)

    return dataset_dct


class DataManager(object):
    def __init__(self, data_dir: str, data_config: DataConfig):
        self._num_proc = data_config.num_proc

        self._dataset_dct = _load_datasets(
            _resolve_path(data_dir),
            data_config.data_format,
            data_config.data_files,
            self._num_proc,
        )

    def _get_dataset(self, split: NamedSplit) -> Optional[Dataset]:
        return self._dataset_dct.get(split, None)

    def get_dataset(
            self,
            split: NamedSplit,
            process_fn: Callable[[dict[str, Any]], dict[str, Any]],
            batched: bool = True,
            remove_orig_columns: bool = True,
    ) -> Optional[Dataset]:
        orig_dataset = self._get_dataset(split)
        if orig_dataset is None:
            return

        if remove_orig_columns:
            remove_columns = orig_dataset.column_names
        else:
            remove_columns = None
        return orig_dataset.map(
            process_fn,
            batched=batched,
            remove_columns=remove_columns,
            num_proc=self._num_proc,
        )


def print_model_size(model: PreTrainedModel):
    print("--> Model")
    total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"\n--> model has {total_params / 1e6}M params\n")


def process_batch(
        batch: Mapping[str, Sequence],
        tokenizer: PreTrainedTokenizer,
        max_input_length: int,
        max_output_length: int,
) -> dict[str, list]:
    batched_tools = batch.get('tools', None)
    batched_conv = batch['conversations']
    batched_input_ids = []
    batched_labels = []

    if batched_tools is None:
        batched_tools = [None] * len(batched_conv)

    for tools, conv in zip(batched_tools, batched_conv):
        input_ids, loss_masks = [
            tokenizer.get_command('[gMASK]'),
            tokenizer.get_command('sop'),
        ], [False, False]

        if tools is not None:
            raise NotImplementedError()

        for message in conv:
            if message['role'] in ('system', 'user'):
                loss_mask_val = False
            else:
                loss_mask_val = True

            if message['role'] == 'tool':
                raise NotImplementedError()
            else:
                new_input_ids = tokenizer.build_single_message(
                    message['role'], '', message['content']
                )
                new_loss_masks = [loss_mask_val] * len(new_input_ids)

            input_ids += new_input_ids
            loss_masks += new_loss_masks

        input_ids.append(tokenizer.eos_token_id)
        loss_masks = [False, *loss_masks]
        labels = []
        for input_id, mask in zip(input_ids, loss_masks):
            if mask:
                labels.append(input_id)
            else:
                labels.append(-100)
        max_length = max_input_length + max_output_length + 1
        batched_input_ids.append(input_ids[:max_length])
        batched_labels.append(labels[:max_length])
    return {'input_ids': batched_input_ids, 'labels': batched_labels}


def process_batch_eval(
        batch: Mapping[str, Sequence],
        tokenizer: PreTrainedTokenizer,
        max_input_length: int,
        max_output_length: int,
) -> dict[str, list]:
    batched_tools = batch.get('tools', None)
    batched_conv = batch['conversations']
    batched_input_ids = []
    # To avoid computing loss, we do not provide the `labels` field in the input dictionary.
    batched_output_ids = []

    if batched_tools is None:
        batched_tools = [None] * len(batched_conv)

    for tools, conv in zip(batched_tools, batched_conv):
        input_ids = [
            tokenizer.get_command('[gMASK]'),
            tokenizer.get_command('sop'),
        ]

        if tools is not None:
            raise NotImplementedError()

        for message in conv:
            if len(input_ids) >= max_input_length:
                break
            if message['role'] == 'tool':
                raise NotImplementedError()
            else:
                new_input_ids = tokenizer.build_single_message(
                    message['role'], '', message['content']
                )
                if message['role'] == 'assistant':
                    output_prompt, output_ids = (
                        new_input_ids[:1],
                        new_input_ids[1:],
                    )
                    output_ids.append(tokenizer.eos_token_id)
                    batched_input_ids.append(
                        input_ids[:max_input_length] + output_prompt[:1]
                    )
                    batched_output_ids.append(output_ids[:max_output_length])
                input_ids += new_input_ids
    return {'input_ids': batched_input_ids, 'output_ids': batched_output_ids}


# TODO: Not sure if this is necessary, can set it to half
def _prepare_model_for_training(model: nn.Module):
    for param in model.parameters():
        if param.requires_grad:
            param.data = param.data.to(torch.float32)


def load_tokenizer_and_model(
        model_dir: str,
        trust_remote_code: bool = False,
        peft_config: Optional[PeftConfig] = None,
) -> tuple[PreTrainedTokenizer, nn.Module]:
    tokenizer = AutoTokenizer.from_pretrained(
        model_dir, trust_remote_code=trust_remote_code
    )
    if peft_config is not None:
        if peft_config.peft_type.name == "PREFIX_TUNING":
            config = AutoConfig.from_pretrained(
                model_dir,
                trust_remote_code=trust_remote_code,
                empty_init=False
            )
            config.pre_seq_len = peft_config.num_virtual_tokens
            config.use_cache = False
            model = AutoModelForCausalLM.from_pretrained(
                model_dir,
                trust_remote_code=trust_remote_code,
                config=config,
                empty_init=False
            )
        if peft_config.peft_type.name == "LORA":
            model = AutoModelForCausalLM.from_pretrained(
                model_dir,
                trust_remote_code=trust_remote_code,
                empty_init=False
            )
            model = get_peft_model(model, peft_config)
            model.print_trainable_parameters()
    else:
        model = AutoModelForCausalLM.from_pretrained(
            model_dir,
            trust_remote_code=trust_remote_code,
            empty_init=False
        )
    print_model_size(model)

    return tokenizer, model


def compute_metrics(eval_preds: EvalPrediction, tokenizer: PreTrainedTokenizer):
    batched_pred_ids, batched_label_ids = eval_preds

    metrics_dct = {'rouge-1': [], 'rouge-2': [], 'rouge-l': [], 'bleu-4': []}
    for pred_ids, label_ids in zip(batched_pred_ids, batched_label_ids):
        pred_txt = tokenizer.decode(pred_ids).strip()
        label_txt = tokenizer.decode(label_ids).strip()
        pred_tokens = list(jieba.cut(pred_txt))
        label_tokens = list(jieba.cut(label_txt))
        rouge = Rouge()
        scores = rouge.get_scores(' '.join(pred_tokens), ' '.join(label_tokens))
        for k, v in scores[0].items():
            metrics_dct[k].append(round(v['f'] * 100, 4))
        metrics_dct['bleu-4'].append(
            sentence_bleu(
                [label_tokens],
                pred_tokens,
                smoothing_function=SmoothingFunction().method3,
            )
        )
    return {k: np.mean(v) for k, v in metrics_dct.items()}


@app.command()
def main(
        data_dir: Annotated[str, typer.Argument(help='The directory containing the dataset.')],
        model_dir: Annotated[
            str,
            typer.Argument(
                help='A string that specifies the model id of a pretrained model configuration hosted on huggingface.co, or a path to a directory containing a model configuration file.'
            ),
        ],
        config_file: Annotated[str, typer.Argument(help='The path to the configuration file.')],
):
    # 从配置文件加载微调配置
    ft_config = FinetuningConfig.from_file(config_file)
    
    # 加载模型和分词器
    tokenizer, model = load_tokenizer_and_model(
        model_dir,
        trust_remote_code=True,
        peft_config=ft_config.peft_config,
    )
    
    # 初始化数据管理器
    data_manager = DataManager(data_dir, ft_config.data_config)
    
    # 根据训练数据集大小计算 epoch 阈值
    # 确保这里使用的是正确的数据集文件路径
    train_data_path = Path(data_dir) / "/root/ChatAT/finetune_demo/data/train.json"  # 使用传入的 data_dir 参数
    epoch_threshold = load_dataset_and_predict_epoch(str(train_data_path))

    # 准备数据集
    train_dataset = data_manager.get_dataset(
        Split.TRAIN,
        functools.partial(
            process_batch,
            tokenizer=tokenizer,
            max_input_length=ft_config.max_input_length,
            max_output_length=ft_config.max_output_length,
        ),
        batched=True,
    )

    val_dataset = data_manager.get_dataset(
        Split.VALIDATION,
        functools.partial(
            process_batch_eval,
            tokenizer=tokenizer,
            max_input_length=ft_config.max_input_length,
            max_output_length=ft_config.max_output_length,
        ),
        batched=True,
    )

    test_dataset = data_manager.get_dataset(
        Split.TEST,
        functools.partial(
            process_batch_eval,
            tokenizer=tokenizer,
            max_input_length=ft_config.max_input_length,
            max_output_length=ft_config.max_output_length,
        ),
        batched=True,
    )

    # Prepare the model for training (optional)
    _prepare_model_for_training(model)

    script_path = "/root/ChatAT/finetune_demo/测试.py"
    base_command = '["python", "duolun.py", "output/checkpoint-{checkpoint}"]'

    # 创建 Seq2SeqTrainer 实例
    trainer = Seq2SeqTrainer(
        model=model,
        args=ft_config.training_args,
        data_collator=DataCollatorForSeq2Seq(
            tokenizer=tokenizer,
            padding='longest',
            return_tensors='pt',
        ),
         train_dataset=train_dataset,
        eval_dataset=val_dataset.select(list(range(50))) if val_dataset is not None else None,
        compute_metrics=functools.partial(compute_metrics, tokenizer=tokenizer),
        #用loss早停就epoch_threshold=None ,用epoch早停就(loss_threshold=None
        callbacks=[EarlyStoppingCallback(loss_threshold=None, epoch_threshold=epoch_threshold, enable_monitoring=True),
               ExtendedSaveStepRecorderCallback(script_path, base_command, "/root/ChatAT/finetune_demo/cli_demo.py")]  # 注意这里的修改
    )
    
    
    
    trainer.train()

    # Testing stage (optional)
    if test_dataset is not None:
        trainer.predict(test_dataset)

if __name__ == '__main__':
    app()
