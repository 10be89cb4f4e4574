from dataclasses import dataclass
from datetime import datetime
from distutils.util import strtobool
import logging
import os
import re
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed, BitsAndBytesConfig, Mxfp4Config
from transformers.trainer_utils import get_last_checkpoint
from trl import SFTTrainer, TrlParser, ModelConfig, SFTConfig, get_peft_config
from datasets import load_dataset
from peft import AutoPeftModelForCausalLM
import mlflow
import json


########################
# Custom dataclasses
########################
@dataclass
class ScriptArguments:
    train_dataset_id_or_path:str
    test_dataset_id_or_path: str
    dataset_train_split: str = "train"
    dataset_test_split: str = "test"
    tokenizer_name_or_path: str = None
    max_seq_length: int = 1024
    spectrum_config_path: Optional[str] = None


########################
# Setup logging
########################
logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)
logger.setLevel(logging.INFO)
handler = logging.StreamHandler()
handler.setFormatter(logging.Formatter('%(asctime)s - %(name)s - %(levelname)s - %(message)s'))
logger.addHandler(handler)

########################
# Helper functions
########################

def get_checkpoint(training_args: SFTConfig):
    last_checkpoint = None
    if os.path.isdir(training_args.output_dir):
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
    return last_checkpoint


def setup_model_for_spectrum(model, spectrum_config_path):
    unfrozen_parameters = []
    with open(spectrum_config_path, "r") as fin:
        yaml_parameters = fin.read()

    # get the unfrozen parameters from the yaml file
    for line in yaml_parameters.splitlines():
        if line.startswith("- "):
            unfrozen_parameters.append(line.split("- ")[1])

    # freeze all parameters
    for param in model.parameters():
        param.requires_grad = False
    # unfreeze Spectrum parameters
    for name, param in model.named_parameters():
        if any(
            re.match(unfrozen_param, name)
            for unfrozen_param in unfrozen_parameters
        ):
            param.requires_grad = True

    # COMMENT IN: for sanity check print the trainable parameters
    # for name, param in model.named_parameters():
    #     if param.requires_grad:
    #         print(f"Trainable parameter: {name}")

    return model


###########################################################################################################

def train_function(model_args: ModelConfig, script_args: ScriptArguments, training_args: SFTConfig):
    """Main training function."""
    
    logger.info(f'Model parameters {model_args}')
    logger.info(f'Script parameters {script_args}')
    logger.info(f'Training/evaluation parameters {training_args}')
    
    params = json.loads(os.environ["SM_HPS"])
    mlflow_tracking_uri = params.get("mlflow_tracking_uri")
    experiment_name = params.get("experiment_name")
    mlflow.enable_system_metrics_logging()
    mlflow.set_tracking_uri(mlflow_tracking_uri)
    mlflow.set_experiment(experiment_name)

    if script_args.train_dataset_id_or_path.endswith('json'):
        train_dataset = load_dataset(
            'json', data_files=script_args.train_dataset_id_or_path, split='train'
        )
        test_dataset = load_dataset(
            'json', data_files=script_args.test_dataset_id_or_path, split='train'
        )
    else:
        train_dataset = load_dataset(script_args.dataset_id_or_path, split=script_args.dataset_train_split)
        test_dataset = load_dataset(script_args.dataset_id_or_path, split=script_args.dataset_test_split)
        
    
    logger.info(f'Loaded training dataset with {len(train_dataset)} samples and the following features: {train_dataset.features}')
    logger.info(f'Loaded test/eval dataset with {len(test_dataset)} samples and the following features: {test_dataset.features}')

    logger.info(train_dataset[0])
    
    tokenizer = AutoTokenizer.from_pretrained(
        script_args.tokenizer_name_or_path if script_args.tokenizer_name_or_path else model_args.model_name_or_path,
        revision=model_args.model_revision,
        trust_remote_code=model_args.trust_remote_code,
    )
    if tokenizer.pad_token is None: 
        tokenizer.pad_token = tokenizer.eos_token
    
    
    #######################
    # Load pretrained model
    #######################
    
    # define model kwargs
    model_kwargs = dict(
        trust_remote_code=model_args.trust_remote_code, 
        attn_implementation=model_args.attn_implementation, 
        torch_dtype=model_args.torch_dtype if model_args.torch_dtype in ['auto', None] else getattr(torch, model_args.torch_dtype), 
        use_cache=False if training_args.gradient_checkpointing else True, 
        low_cpu_mem_usage=True if not strtobool(os.environ.get("ACCELERATE_USE_DEEPSPEED", "false")) else None,
    )
    
    # Check which training method to use and if 4-bit quantization is needed
    if model_args.load_in_4bit: 
        model_kwargs['quantization_config'] = Mxfp4Config(dequantize=True)
    
    
    # load the model with our kwargs
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs)

    if script_args.spectrum_config_path:
        logger.info('setting up model for spectrum')
        logger.info("\n=======================\nfine-tuning using spectrum\n=======================\n")
        model = setup_model_for_spectrum(
            model, script_args.spectrum_config_path
        )
    else:
        logger.info("\n=======================\nfull fine-tuning\n=======================\n")
        model = model
    training_args.distributed_state.wait_for_everyone()

    ########################
    # Initialize the Trainer
    ########################
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=test_dataset if test_dataset is not None else None,
        processing_class=tokenizer,
    )

    try:
        print(f"Training info:\n{trainer.model.print_trainable_parameters()}")
    except Exception as e:
        print(f"Cant print trainable parameters skipping!")

    ###############
    # Training loop
    ###############
    # Check for last checkpoint
    last_checkpoint = get_checkpoint(training_args)
    logger.info(f"Found checkpoints > {last_checkpoint}")
    if last_checkpoint is not None and training_args.resume_from_checkpoint is None:
        logger.info(f'Checkpoint detected, resuming training at {last_checkpoint}.')

    logger.info(f'*** Starting training {datetime.now().strftime("%Y-%m-%d %H:%M:%S")} for {training_args.num_train_epochs} epochs***')
    train_result = trainer.train(resume_from_checkpoint=last_checkpoint)
    # log metrics
    metrics = train_result.metrics
    metrics['train_samples'] = len(train_dataset)
    trainer.log_metrics('train', metrics)
    trainer.save_metrics('train', metrics)
    trainer.save_state()

    ##################################
    # Save model and create model card
    ##################################
    
    logger.info('*** Save model ***')
    if trainer.is_fsdp_enabled and peft_config:
        trainer.accelerator.state.fsdp_plugin.set_state_dict_type('FULL_STATE_DICT')
    
    # Restore k,v cache for fast inference
    trainer.model.config.use_cache = True
    
    #######################
    # Full model save path
    #######################
    
    logger.info("saving full model")
    # Restore k,v cache for fast inference
    trainer.model.config.use_cache = True
    trainer.save_model(training_args.output_dir)
    logger.info(f'Model saved to {training_args.output_dir}')
    training_args.distributed_state.wait_for_everyone()  # wait for all processes to load

    tokenizer.save_pretrained(training_args.output_dir)
    logger.info(f'Tokenizer saved to {training_args.output_dir}')
    
    # save final model to model output dir
    # model_save_dir = os.path.join(os.environ["SM_MODEL_DIR"], model_args.model_name_or_path) if os.environ["SM_MODEL_DIR"] else os.path.join("/opt/ml/model", model_args.model_name_or_path)
    # logger.info(f'saving final model to {model_save_dir}')

    # trainer.save_model(model_save_dir)
    # logger.info(f'Model saved to {model_save_dir}')
        
    # # wait for all processes to load
    # training_args.distributed_state.wait_for_everyone() 

    # tokenizer.save_pretrained(model_save_dir)
    # logger.info(f'Tokenizer saved to {model_save_dir}')

    logger.info('*** Save model ***')
    if trainer.is_fsdp_enabled and peft_config:
        trainer.accelerator.state.fsdp_plugin.set_state_dict_type(
            'FULL_STATE_DICT'
        )
    
    # Save everything else on main process
    if trainer.accelerator.is_main_process:
        trainer.create_model_card({'tags': ['sagemaker', 'Qwen']})

    logger.info('Training complete!')


def main():
    parser = TrlParser((ModelConfig, ScriptArguments, SFTConfig))
    model_args, script_args, training_args = parser.parse_args_and_config()

    print("model_args", model_args)
    print("script_args", script_args)
    print("training_args", training_args)

    # Set seed for reproducibility
    set_seed(training_args.seed)

    # Run the main training loop
    train_function(model_args, script_args, training_args)


if __name__ == '__main__':
    main()