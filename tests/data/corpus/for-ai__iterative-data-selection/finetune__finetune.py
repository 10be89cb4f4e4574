#!/usr/bin/env python
# coding=utf-8

import argparse
import logging
import math
import os
import random
import datasets
import torch
from functools import partial
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
import copy
import pickle

import transformers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaTokenizer,
    LlamaTokenizerFast,
    SchedulerType,
    DataCollatorForSeq2Seq,
    get_scheduler,
    GPTNeoXTokenizerFast,
    GPT2Tokenizer,
    OPTForCausalLM,
    BitsAndBytesConfig,
)
from peft import LoraConfig, TaskType, get_peft_model, prepare_model_for_kbit_training
from utils.save import save_with_accelerate
from utils.template import encode_with_prompt_completion_format, encode_with_messages_format
from eval.utils import encode_with_prompt_completion_format_eval, get_next_word_predictions, eval_nli_task, score_completions, score_qa_task

logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune a transformers model on a causal language modeling task")
    # Train arguments
    parser.add_argument(
        "--dataset_name",
        type=str,
        default=None,
        help="The name of the dataset to use (via the datasets library).",
    )
    parser.add_argument(
        "--dataset_config_name",
        type=str,
        default=None,
        help="The configuration name of the dataset to use (via the datasets library).",
    )
    parser.add_argument(
        "--train_file", type=str, default=None, help="A csv or a json file containing the training data."
    )
    parser.add_argument(
        "--tracker_model_name",
        type=str,
        default=None,
        help="The name of the model to use for the trackers.",
        required=False,
    )
    parser.add_argument(
        "--model_name_or_path",
        type=str,
        help="Path to pretrained model or model identifier from huggingface.co/models.",
        required=False,
    )
    parser.add_argument(
        "--config_name",
        type=str,
        default=None,
        help="Pretrained config name or path if not the same as model_name",
    )

    # Selection arguments
    parser.add_argument(
        '--selection_method',
        type=str,
        default=None,
        help='The selection method to use.',
        choices=["random", "uncertainty", "diversity", "uncertainty_diversity", "uncertainty_diversity_random"],
    )
    parser.add_argument(
        '--selection_indices',
        type=str,
        default=None,
        help='The path to the indices of the selected examples.',
    )

    # Evaluation arguments
    parser.add_argument(
        '--do_eval',
        action='store_true',
        help='Run evaluation on the dev set.',
    )
    parser.add_argument(
        "--eval_file", type=str, default=None, help="A csv or a json file containing the evaluation data."
    )
    parser.add_argument(
        '--eval_dataset_name',
        type=str,
        default=None,
        help='The name of the dataset to use (via the datasets library).',
    )
    parser.add_argument(
        '--eval_steps',
        type=str,
        default=None,
        help='Number of steps between evaluations, or "epoch" to evaluate at the end of each epoch.',
    )
    parser.add_argument(
        '--eval_batch_size',
        type=int,
        default=2,
        help='Batch size for evaluation.',
    )
    parser.add_argument(
        '--eval_task',
        type=str,
        default=None,
        help='Task to evaluate on. Currently only supports "nli".',
    )
        
    # LORA arguments
    parser.add_argument(
        "--use_lora",
        action="store_true",
        help="If passed, will use LORA (low-rank parameter-efficient training) to train the model.",
    )
    parser.add_argument(
        "--lora_rank",
        type=int,
        default=64,
        help="The rank of lora.",
    )
    parser.add_argument(
        "--lora_alpha",
        type=float,
        default=16,
        help="The alpha parameter of lora.",
    )
    parser.add_argument(
        "--lora_dropout",
        type=float,
        default=0.1,
        help="The dropout rate of lora modules.",
    )
    parser.add_argument(
        "--use_flash_attn",
        action="store_true",
        help="If passed, will use flash attention to train the model.",
    )

    # Tokenizer and batch arguments
    parser.add_argument(
        "--tokenizer_name",
        type=str,
        default=None,
        help="Pretrained tokenizer name or path if not the same as model_name",
    )
    parser.add_argument(
        "--use_slow_tokenizer",
        action="store_true",
        help="If passed, will use a slow tokenizer (not backed by the 🤗 Tokenizers library).",
    )
    parser.add_argument(
        "--max_seq_length",
        type=int,
        default=512,
        help="The maximum total sequence length (prompt+completion) of each training example.",
    )
    parser.add_argument(
        "--per_device_train_batch_size",
        type=int,
        default=8,
        help="Batch size (per device) for the training dataloader.",
    )

    # Optimizer arguments
    parser.add_argument(
        "--learning_rate",
        type=float,
        default=5e-5,
        help="Initial learning rate (after the potential warmup period) to use.",
    )
    parser.add_argument("--weight_decay", type=float, default=0.0, help="Weight decay to use.")
    parser.add_argument("--num_train_epochs", type=int, default=3, help="Total number of training epochs to perform.")
    parser.add_argument(
        "--max_train_steps",
        type=int,
        default=None,
        help="Total number of training steps to perform. If provided, overrides num_train_epochs.",
    )
    parser.add_argument(
        "--gradient_accumulation_steps",
        type=int,
        default=1,
        help="Number of updates steps to accumulate before performing a backward/update pass.",
    )
    parser.add_argument(
        "--lr_scheduler_type",
        type=SchedulerType,
        default="linear",
        help="The scheduler type to use.",
        choices=["linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup"],
    )
    parser.add_argument(
        "--warmup_ratio", type=float, default=0, help="Ratio of total training steps used for warmup."
    )
    
    # Save and logging arguments
    parser.add_argument("--output_dir", type=str, default=None, help="Where to store the final model.")
    parser.add_argument("--seed", type=int, default=None, help="A seed for reproducible training.")
    parser.add_argument(
        "--preprocessing_num_workers",
        type=int,
        default=None,
        help="The number of processes to use for the preprocessing.",
    )
    parser.add_argument(
        "--overwrite_cache", action="store_true", help="Overwrite the cached training and evaluation sets"
    )
    parser.add_argument(
        "--checkpointing_steps",
        type=str,
        default=None,
        help="Whether the various states should be saved at the end of every n steps, or 'epoch' for each epoch.",
    )
    parser.add_argument(
        "--logging_steps",
        type=int,
        default=None,
        help="Log the training loss and learning rate every logging_steps steps.",
    )
    parser.add_argument(
        "--resume_from_checkpoint",
        type=str,
        default=None,
        help="If the training should continue from a checkpoint folder.",
    )
    parser.add_argument(
        "--with_tracking",
        action="store_true",
        help="Whether to enable experiment trackers for logging.",
    )
    parser.add_argument(
        "--report_to",
        type=str,
        default="all",
        help=(
            'The integration to report the results and logs to. Supported platforms are `"tensorboard"`,'
            ' `"wandb"`, `"comet_ml"` and `"clearml"`. Use `"all"` (default) to report to all integrations.'
            "Only applicable when `--with_tracking` is passed."
        ),
    )

    # Advanced arguments
    parser.add_argument(
        "--low_cpu_mem_usage",
        action="store_true",
        help=(
            "It is an option to create the model as an empty shell, then only materialize its parameters when the pretrained weights are loaded."
            "If passed, LLM loading time and RAM consumption will be benefited."
        ),
    )
    parser.add_argument(
        "--gradient_checkpointing",
        action="store_true",
        help=(
            "Turn on gradient checkpointing. Saves memory but slows training."
        ),
    )
    parser.add_argument(
        "--use_qlora",
        action="store_true",
        help=(
            "Use qLoRA training - main thing is initialising model in quantised form. Not compatible with deepspeed."
        ),
    )
    parser.add_argument(
        '--clip_grad_norm',
        type=float,
        default=-1,
        help='Clip gradient norm. Not compatible with deepspeed (use deepspeed config instead).',
    )
    parser.add_argument(
        '--use_8bit_optimizer',
        action='store_true',
        help='Use 8bit optimizer from bitsandbytes. Not compatible with deepspeed (use deepspeed config instead).',
    )
    args = parser.parse_args()

    # Sanity checks
    if args.dataset_name is None and args.train_file is None:
        raise ValueError("Need either a dataset name or a training file.")
    else:
        if args.train_file is not None:
            extension = args.train_file.split(".")[-1]
            assert extension in ["json", "jsonl"], "`train_file` should be a json/jsonl file."
    return args


def main():
    args = parse_args()

    # Initialize the accelerator. We will let the accelerator handle device placement for us in this example.
    # If we're using tracking, we also need to initialize it here and it will by default pick up all supported trackers
    # in the environment
    accelerator_log_kwargs = {}

    if args.with_tracking:
        accelerator_log_kwargs["log_with"] = args.report_to
        accelerator_log_kwargs["project_dir"] = args.output_dir

    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, **accelerator_log_kwargs)
    if (args.with_tracking) and (args.tracker_model_name is not None):
        accelerator.init_trackers("open_instruct", config={}, init_kwargs={"wandb":{"name": args.tracker_model_name}})

    # Make one log on every process with the configuration for debugging.
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)
    if accelerator.is_local_main_process:
        datasets.utils.logging.set_verbosity_warning()
        transformers.utils.logging.set_verbosity_info()
    else:
        datasets.utils.logging.set_verbosity_error()
        transformers.utils.logging.set_verbosity_error()

    # If passed along, set the training seed now.
    if args.seed is not None:
        set_seed(args.seed)

    if accelerator.is_main_process:
        if args.output_dir is not None:
            os.makedirs(args.output_dir, exist_ok=True)
    
    accelerator.wait_for_everyone()

    if args.dataset_name is not None:
        # Downloading and loading a dataset from the hub.
        raw_datasets = load_dataset(
            args.dataset_name,
            args.dataset_config_name,
        )
        # keep only the first 1000 examples for debugging
    else:
        data_files = {}
        # only pick the top 1000 examples for debugging
        dataset_args = {}
        if args.train_file is not None:
            data_files["train"] = args.train_file               
        raw_datasets = load_dataset(
            "json",
            data_files=data_files,
            **dataset_args,
        )
    if args.selection_indices is not None:
        selection = pickle.load(open(args.selection_indices, "rb"))
        raw_datasets['train'] = raw_datasets['train'].select(selection['indices'])
    # raw_datasets['train'] = raw_datasets['train'].shard(1000, 1)

    eval_data = None
    if args.do_eval:
        if args.eval_file is not None:
            eval_raw_dataset = load_dataset(
                "json",
                data_files={"test": args.eval_file},
            )

    # Load pretrained model and tokenizer
    if args.config_name:
        config = AutoConfig.from_pretrained(args.config_name)
    elif args.model_name_or_path:
        config = AutoConfig.from_pretrained(args.model_name_or_path)
    else:
        raise ValueError(
            "You are instantiating a new config instance from scratch. This is not supported by this script."
        )

    if args.tokenizer_name:
        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer_name, use_fast=not args.use_slow_tokenizer)
    elif args.model_name_or_path:
        tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=not args.use_slow_tokenizer)
    else:
        raise ValueError(
            "You are instantiating a new tokenizer from scratch. This is not supported by this script."
            "You can do it from another script, save it, and load it from here, using --tokenizer_name."
        )

    if args.model_name_or_path:
        if args.use_qlora:
            bnb_config = BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_use_double_quant=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype=torch.bfloat16,
            )
            device_index = accelerator.local_process_index
            device_map = {"": device_index} # force data-parallel training.
            model = AutoModelForCausalLM.from_pretrained(
                args.model_name_or_path,
                from_tf=bool(".ckpt" in args.model_name_or_path),
                config=config,
                load_in_4bit=True,
                quantization_config=bnb_config,
                device_map=device_map,
                torch_dtype=torch.bfloat16,
                use_flash_attention_2=True if args.use_flash_attn else False,
            )
        else:
            model = AutoModelForCausalLM.from_pretrained(
                args.model_name_or_path,
                from_tf=bool(".ckpt" in args.model_name_or_path),
                config=config,
                low_cpu_mem_usage=args.low_cpu_mem_usage,
                use_flash_attention_2=True if args.use_flash_attn else False,
                torch_dtype=torch.bfloat16,
            )
    else:
        logger.info("Training new model from scratch")
        model = AutoModelForCausalLM.from_config(config)


    # no default pad token for llama!
    # here we add all special tokens again, because the default ones are not in the special_tokens_map
    if isinstance(tokenizer, LlamaTokenizer) or isinstance(tokenizer, LlamaTokenizerFast) or 'galactica' in args.model_name_or_path:
        num_added_tokens = tokenizer.add_special_tokens({
            "bos_token": "<s>",
            "eos_token": "</s>",
            "unk_token": "<unk>",
            "pad_token": "<pad>",
        })
        # assert num_added_tokens in [0, 1], "LlamaTokenizer should only add one special token - the pad_token, or no tokens if pad token present."
    elif isinstance(tokenizer, GPTNeoXTokenizerFast):
        num_added_tokens = tokenizer.add_special_tokens({
            "pad_token": "<pad>",
        })
        assert num_added_tokens == 1, "GPTNeoXTokenizer should only add one special token - the pad_token."
    elif isinstance(tokenizer, GPT2Tokenizer) and isinstance(model, OPTForCausalLM):
        num_added_tokens = tokenizer.add_special_tokens({'unk_token': '<unk>'})

    # store the tokenizer
    # if args.output_dir is not None:
    #     if accelerator.is_main_process:
    #         tokenizer.save_pretrained(args.output_dir)
    #     accelerator.wait_for_everyone()

    # We resize the embeddings only when necessary to avoid index errors. If you are creating a model from scratch
    # on a small vocab and want a smaller embedding size, remove this test.
    embedding_size = model.get_input_embeddings().weight.shape[0]
    if len(tokenizer) > embedding_size:
        model.resize_token_embeddings(len(tokenizer))

    if args.use_lora:
        if args.use_qlora:
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=args.gradient_checkpointing)

        logger.info("Initializing LORA model...")
        peft_config = LoraConfig(
            task_type=TaskType.CAUSAL_LM, 
            inference_mode=False, 
            r=args.lora_rank, 
            lora_alpha=args.lora_alpha, 
            lora_dropout=args.lora_dropout,
            target_modules=["q_proj", "o_proj", "v_proj", "k_proj", "gate_proj", "up_proj", "down_proj"]
        )
        if args.resume_from_checkpoint:
            from peft import PeftModel
            logger.info(f"Resuming from checkpoint: {args.resume_from_checkpoint}")
            model = PeftModel.from_pretrained(model, args.resume_from_checkpoint, is_trainable=True)
            # model._mark_only_adapters_as_trainable()
            model.train()
        else:
            model = get_peft_model(model, peft_config)
        model.print_trainable_parameters()

    # Preprocessing the datasets.
    if "input" in raw_datasets["train"].column_names and "output" in raw_datasets["train"].column_names:
        encode_function = partial(
            encode_with_prompt_completion_format,
            tokenizer=tokenizer,
            max_seq_length=args.max_seq_length,
        )
    elif "messages" in raw_datasets["train"].column_names:
        encode_function = partial(
            encode_with_messages_format,
            tokenizer=tokenizer,
            max_seq_length=args.max_seq_length,
        )
    elif "input_ids" in raw_datasets["train"].column_names and "labels" in raw_datasets["train"].column_names:
        # encode function is then an identity function
        encode_function = lambda x: x
    else:
        raise ValueError("You need to have either 'input'&'output' or 'messages' in your column names.")
    
    with accelerator.main_process_first():
        # eval_dataset = None

        if args.do_eval:
            # Specifically for P3 dataset
            if args.dataset_name is not None:
                eval_dataset = raw_datasets['test']
                # Filtering if only want to specific dataset
                eval_dataset = eval_dataset.filter(lambda example: example['dataset'] == "hellaswag")
                if args.eval_dataset_name is not None:
                    eval_dataset = eval_dataset.filter(lambda example: example['dataset'] == args.eval_dataset_name)

        lm_datasets = raw_datasets.map(
            encode_function,
            batched=False,
            num_proc=args.preprocessing_num_workers,
            load_from_cache_file=not args.overwrite_cache,
            remove_columns=[name for name in raw_datasets["train"].column_names if name not in ["input_ids", "labels", "attention_mask"]],
            desc="Tokenizing and reformatting instruction data",
        )
        lm_datasets.set_format(type="pt")
        lm_datasets = lm_datasets.filter(lambda example: (example['labels'] != -100).any())

        if args.do_eval:
            if args.eval_file is not None:
                eval_dataset = eval_raw_dataset.map(
                    encode_function,
                    batched=False,
                    num_proc=args.preprocessing_num_workers,
                    load_from_cache_file=not args.overwrite_cache,
                    remove_columns=[name for name in eval_raw_dataset["test"].column_names if name not in ["input_ids", "labels", "attention_mask"]],
                    desc="Tokenizing and reformatting instruction data",
                )
                eval_dataset.set_format(type="pt")
                eval_dataset = eval_dataset.filter(lambda example: (example['labels'] != -100).any())

    train_dataset = lm_datasets["train"]
    if args.do_eval:
        if eval_dataset is None:
            eval_dataset = lm_datasets["test"]
        else:
            eval_dataset = eval_dataset["test"]

    print(len(train_dataset))
    # Log a few random samples from the training set:
    for index in random.sample(range(len(train_dataset)), 3):
        logger.info(f"Sample {index} of the training set: {train_dataset[index]}.")

    # DataLoaders creation:
    train_dataloader = DataLoader(
        train_dataset, 
        shuffle=True, 
        collate_fn=DataCollatorForSeq2Seq(tokenizer=tokenizer, model=model, padding="longest"),
        batch_size=args.per_device_train_batch_size
    )

    if args.do_eval:
        if args.eval_task and args.eval_task == "nli":
            eval_tokenizer = copy.deepcopy(tokenizer)
            eval_tokenizer.padding_side = "left"

            eval_dataloader = DataLoader(
                eval_dataset,
                shuffle=False,
                batch_size=args.eval_batch_size
            )
        else:
            eval_dataloader = DataLoader(
                eval_dataset,
                shuffle=False,
                collate_fn=DataCollatorForSeq2Seq(tokenizer=tokenizer, model=model, padding="longest"),
                batch_size=args.eval_batch_size
            )
    
    # Optimizer
    # Split weights in two groups, one with weight decay and the other not.
    no_decay = ["bias", "layer_norm.weight"]
    optimizer_grouped_parameters = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    if args.use_qlora:
        from bitsandbytes.optim import AdamW
        optimizer = AdamW(
            optimizer_grouped_parameters,
            lr=args.learning_rate,
            optim_bits=8 if args.use_8bit_optimizer else 32,
            is_paged=True
        )
    else:
        optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=args.learning_rate)

    # Scheduler and math around the number of training steps.
    overrode_max_train_steps = False
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
        overrode_max_train_steps = True

    # Create the learning rate scheduler.
    # Note: the current accelerator.step() calls the .step() of the real scheduler for the `num_processes` times. This is because they assume 
    # the user initialize the scheduler with the entire training set. In the case of data parallel training, each process only
    # sees a subset (1/num_processes) of the training set. So each time the process needs to update the lr multiple times so that the total 
    # number of updates in the end matches the num_training_steps here.
    # Here we need to set the num_training_steps to either using the entire training set (when epochs is specified) or we need to multiply the 
    # num_training_steps by num_processes so that the total number of updates matches the num_training_steps.
    num_training_steps_for_scheduler = args.max_train_steps if overrode_max_train_steps else args.max_train_steps * accelerator.num_processes
    lr_scheduler = get_scheduler(
        name=args.lr_scheduler_type,
        optimizer=optimizer,
        num_training_steps=num_training_steps_for_scheduler,
        num_warmup_steps=int(num_training_steps_for_scheduler * args.warmup_ratio),
    )

    # Prepare everything with `accelerator`.
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )

    if args.do_eval:
        eval_dataloader = accelerator.prepare(eval_dataloader)

    # We need to recalculate our total training steps as the size of the training dataloader may have changed.
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if overrode_max_train_steps:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    # Afterwards we recalculate our number of training epochs
    args.num_train_epochs = math.ceil(args.max_train_steps / num_update_steps_per_epoch)
 
    # Figure out how many steps we should save the Accelerator states
    checkpointing_steps = args.checkpointing_steps
    eval_steps = args.eval_steps
    if checkpointing_steps is not None and checkpointing_steps.isdigit():
        checkpointing_steps = int(checkpointing_steps)
    if eval_steps is not None and eval_steps.isdigit():
        eval_steps = int(eval_steps)

    # We need to initialize the trackers we use, and also store our configuration.
    # The trackers initializes automatically on the main process.
    if args.with_tracking:
        experiment_config = vars(args)
        # TensorBoard cannot log Enums, need the raw value
        experiment_config["lr_scheduler_type"] = experiment_config["lr_scheduler_type"].value
        accelerator.init_trackers("open_instruct", experiment_config)

    # Train!
    total_batch_size = args.per_device_train_batch_size * accelerator.num_processes * args.gradient_accumulation_steps

    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(train_dataset)}")
    logger.info(f"  Num Epochs = {args.num_train_epochs}")
    logger.info(f"  Instantaneous batch size per device = {args.per_device_train_batch_size}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
    logger.info(f"  Gradient Accumulation steps = {args.gradient_accumulation_steps}")
    logger.info(f"  Total optimization steps = {args.max_train_steps}")
    # Only show the progress bar once on each machine.
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    starting_epoch = 0
    resume_step = 0

    # Potentially load in the weights and states from a previous save
    if args.resume_from_checkpoint:
        if args.resume_from_checkpoint is not None or args.resume_from_checkpoint != "":
            checkpoint_path = args.resume_from_checkpoint
            # path = os.path.basename(args.resume_from_checkpoint)
            path = checkpoint_path
        else:
            # Get the most recent checkpoint
            dirs = [f.name for f in os.scandir(os.getcwd()) if f.is_dir()]
            dirs.sort(key=os.path.getctime)
            path = dirs[
                -1
            ]  # Sorts folders by date modified, most recent checkpoint is the last
            checkpoint_path = path
            path = os.path.basename(checkpoint_path)

        accelerator.print(f"Resumed from checkpoint: {checkpoint_path}")
        training_difference = os.path.basename(path)

        if "epoch" in training_difference:
            starting_epoch = int(training_difference.replace("epoch_", "")) + 1
            resume_step = None
            completed_steps = starting_epoch * num_update_steps_per_epoch
        elif "step" in training_difference:
            # need to multiply `gradient_accumulation_steps` to reflect real steps
            resume_step = (
                int(training_difference.replace("step_", ""))
                * args.gradient_accumulation_steps
            )
            # resume_step = int(training_difference.replace("step_", ""))
            starting_epoch = resume_step // len(train_dataloader)
            completed_steps = resume_step // args.gradient_accumulation_steps
            resume_step -= starting_epoch * len(train_dataloader)

        print("starting_epoch", starting_epoch)
        print("completed_steps", completed_steps)

    # update the progress_bar if load from checkpoint
    progress_bar.update(completed_steps)

    # Initial eval
    if args.do_eval:
        model.eval()
        if args.eval_task and args.eval_task == "nli":
            eval_acc = 0
            for step, batch in enumerate(tqdm(eval_dataloader)):
                with torch.no_grad():
                    eval_acc += eval_nli_task(batch, model, eval_tokenizer)

            eval_acc = accelerator.gather(eval_acc).sum().item() / len(eval_dataloader)

            logger.info(f"  Initial Eval Acc: {eval_acc}")
            if args.with_tracking:
                accelerator.log(
                    {
                        "eval_acc": eval_acc,
                    },
                    step=completed_steps,
            )
        elif "output" in raw_datasets["train"].column_names:
            if accelerator.is_main_process:
                eval_acc = score_qa_task(model, tokenizer, eval_dataset, args.eval_batch_size)
                logger.info(f"  Initial Eval Acc: {eval_acc}")
                if args.with_tracking:
                    accelerator.log(
                        {
                            "eval_acc": eval_acc,
                        },
                        step=completed_steps,
                    )
        else:
            # Assume it's calculating the perplexity
            eval_ppl = 0
            for step, batch in enumerate(tqdm(eval_dataloader)):
                with torch.no_grad():
                    loss = model(**batch, use_cache=False).loss
                    eval_ppl += torch.exp(loss)

            eval_ppl = accelerator.gather(eval_ppl).sum().item() / len(eval_dataloader)

            logger.info(f"  Initial Eval PPL: {eval_ppl}")
            if args.with_tracking:
                accelerator.log(
                    {
                        "eval_ppl": eval_ppl,
                    },
                    step=completed_steps,
                )

    for epoch in range(starting_epoch, args.num_train_epochs):
        model.train()
        total_loss = 0
        if (
            args.resume_from_checkpoint
            and epoch == starting_epoch
            and resume_step is not None
        ):
            # We skip the first `n` batches in the dataloader when resuming from a checkpoint
            active_dataloader = accelerator.skip_first_batches(
                train_dataloader, resume_step
            )
        else:
            active_dataloader = train_dataloader

        # Main training loop
        for step, batch in enumerate(active_dataloader):
            try:
                with accelerator.accumulate(model):
                    # remove the labels from the batch
                    outputs = model(**batch, use_cache=False)                
                    loss = outputs.loss
                    # We keep track of the loss at each logged step
                    total_loss += loss.detach().float()
                    accelerator.backward(loss)
                    # clip gradient norm. don't do this with deepspeed
                    if accelerator.sync_gradients and args.clip_grad_norm > 0:
                        accelerator.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
                    optimizer.step()
                    optimizer.zero_grad()
                    lr_scheduler.step()

                # Checks if the accelerator has performed an optimization step behind the scenes
                if accelerator.sync_gradients:
                    progress_bar.update(1)
                    completed_steps += 1
                    if args.logging_steps and completed_steps % args.logging_steps == 0:
                        avg_loss = accelerator.gather(total_loss).mean().item() / args.gradient_accumulation_steps / args.logging_steps
                        logger.info(f"  Step: {completed_steps}, LR: {lr_scheduler.get_last_lr()[0]}, Loss: {avg_loss}")
                        if args.with_tracking:
                            accelerator.log(
                                {
                                    "learning_rate": lr_scheduler.get_last_lr()[0],
                                    "train_loss": avg_loss,
                                },
                                step=completed_steps,
                            )
                        total_loss = 0
                        
                    if isinstance(checkpointing_steps, int):
                        if completed_steps % checkpointing_steps == 0:
                            output_dir = f"step_{completed_steps}"
                            if args.output_dir is not None:
                                output_dir = os.path.join(args.output_dir, output_dir)
                            save_with_accelerate(accelerator, model, tokenizer, output_dir, args)

                    if completed_steps >= args.max_train_steps:
                        break
            # Except any errors
            except Exception as e:
                print(e)
                unwrapped_model = accelerator.unwrap_model(model)
                outputs = unwrapped_model(**batch, use_cache=False)
                loss = outputs.loss
                # output and stop
                print("outputs", outputs)
                print("loss", loss)
                print("Failed to train on step", step)
                import sys
                sys.exit(1)

            # Evaluate the model if needed
            if (accelerator.sync_gradients) and (args.do_eval):
                if isinstance(eval_steps, int) and (completed_steps % eval_steps == 0):
                    model.eval()
                    if args.eval_task and args.eval_task == "nli":
                        eval_acc = 0
                        for step, batch in enumerate(tqdm(eval_dataloader)):
                            with torch.no_grad():
                                eval_acc += eval_nli_task(batch, model, eval_tokenizer)

                        eval_acc = accelerator.gather(eval_acc).sum().item() / len(eval_dataloader)

                        logger.info(f"  Step: {completed_steps}, Eval Acc: {eval_acc}")
                        if args.with_tracking:
                            accelerator.log(
                                {
                                    "eval_acc": eval_acc,
                                    
                                },
                                step=completed_steps,
                            )
                    elif "output" in raw_datasets["train"].column_names:
                        if accelerator.is_main_process:
                            eval_acc = score_qa_task(model, tokenizer, eval_dataset, args.eval_batch_size)
                            logger.info(f"  Step: {completed_steps}, Eval Acc: {eval_acc}")
                            if args.with_tracking:
                                accelerator.log(
                                    {
                                        "eval_acc": eval_acc,
                                    },
                                    step=completed_steps,
                                )
                    else:
                        eval_ppl = 0
                        for step, batch in enumerate(tqdm(eval_dataloader)):
                            with torch.no_grad():
                                loss = model(**batch, use_cache=False).loss
                                eval_ppl += torch.exp(loss)

                        eval_ppl = accelerator.gather(eval_ppl).sum().item() / len(eval_dataloader)

                        logger.info(f"  Step: {completed_steps}, Eval PPL: {eval_ppl}")
                        if args.with_tracking:
                            accelerator.log(
                                {
                                    "eval_ppl": eval_ppl,
                                },
                                step=completed_steps,
                            )
                    model.train()

        if args.checkpointing_steps == "epoch":
            output_dir = f"epoch_{epoch}"
            if args.output_dir is not None:
                output_dir = os.path.join(args.output_dir, output_dir)
            save_with_accelerate(accelerator, model, tokenizer, output_dir, args)

        if args.do_eval:
            if args.eval_steps == "epoch":
                model.eval()
                if args.eval_task and args.eval_task == "nli":
                    eval_acc = 0
                    for step, batch in enumerate(tqdm(eval_dataloader)):
                        with torch.no_grad():
                            eval_acc += eval_nli_task(batch, model, eval_tokenizer)

                    eval_acc = accelerator.gather(eval_acc).sum().item() / len(eval_dataloader)

                    logger.info(f"  Epoch: {epoch}, Eval Acc: {eval_acc}")
                    if args.with_tracking:
                        accelerator.log(
                            {
                                "eval_acc": eval_acc,
                            },
                            step=epoch,
                        )
                else:
                    eval_ppl = 0
                    for step, batch in enumerate(tqdm(eval_dataloader)):
                        with torch.no_grad():
                            loss = model(**batch, use_cache=False).loss
                            eval_ppl += torch.exp(loss)

                    eval_ppl = accelerator.gather(eval_ppl).sum().item() / len(eval_dataloader)

                    logger.info(f"  Epoch: {epoch}, Eval PPL: {eval_ppl}")
                    if args.with_tracking:
                        accelerator.log(
                            {
                                "eval_ppl": eval_ppl,
                            },
                            step=epoch,
                        )
                model.train()
                
    if args.with_tracking:
        accelerator.end_training()

    if args.output_dir is not None:
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            tokenizer.save_pretrained(args.output_dir)
        save_with_accelerate(accelerator, model, tokenizer, args.output_dir, args)


if __name__ == "__main__":
    main()
