
import torch
from datasets import load_dataset, DatasetDict
from transformers import AutoModelForCausalLM, AutoTokenizer

from trl import (
    DPOConfig,
    ModelConfig,
    ScriptArguments,
    TrlParser,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
)
from trl.trainer.utils import SIMPLE_CHAT_TEMPLATE

from dpo_trainer import DPOTrainer


if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))
    parser.add_argument(
        "--use_weighting",
        action="store_true",
        help="Enable weighting during training"
    )
    parser.add_argument(
        "--use_entropy_non_linear",
        type=float,
        default=0,
        help="Use entropy non linear value"
    )

    parser.add_argument(
        "--use_entropy_non_linear_coeff",
        type=float,
        default=0,
        help="Use entropy non linear coeff value"
    )

    parser.add_argument(
        "--use_chosen_weight_non_linear",
        type=float,
        default=0,
        help="Use chosen weight non linear value"
    )

    parser.add_argument(
        "--use_chosen_weight_non_linear_coeff",
        type=float,
        default=0,
        help="Use chosen weight non linear coeff value"
    )

    parser.add_argument(
        "--use_rejected_weight_non_linear",
        type=float,
        default=0,
        help="Use rejected weight non linear value"
    )

    parser.add_argument(
        "--use_rejected_weight_non_linear_coeff",
        type=float,
        default=0,
        help="Use rejected weight non linear coeff value"
    )


    parser.add_argument(
        "--data_seed_t",
        type=int,
        default=42,
        help="dataset seed"
    )

    script_args, training_args, model_config, extra_config = parser.parse_args_and_config()
    

    training_args.data_seed=extra_config.data_seed_t#fix the seed

    for attr in dir(extra_config):
        if not attr.startswith("_"):
            setattr(training_args, attr, getattr(extra_config, attr))
    
    ################
    # Model & Tokenizer
    ###################
    torch_dtype = (
        model_config.torch_dtype
        if model_config.torch_dtype in ["auto", None]
        else getattr(torch, model_config.torch_dtype)
    )
    quantization_config = get_quantization_config(model_config)
    model_kwargs = dict(
        revision=model_config.model_revision,
        attn_implementation=model_config.attn_implementation,
        torch_dtype=torch_dtype,
        use_cache=False if training_args.gradient_checkpointing else True,
        # device_map=get_kbit_device_map() if quantization_config is not None else None,
        # device_map="auto",
        quantization_config=quantization_config,
    )
    model = AutoModelForCausalLM.from_pretrained(
        model_config.model_name_or_path, trust_remote_code=model_config.trust_remote_code, **model_kwargs
    )
    peft_config = get_peft_config(model_config)
    if peft_config is None:
        ref_model = AutoModelForCausalLM.from_pretrained(
            model_config.model_name_or_path, trust_remote_code=model_config.trust_remote_code, **model_kwargs
        )
    else:
        ref_model = None
    tokenizer = AutoTokenizer.from_pretrained(
        model_config.model_name_or_path, trust_remote_code=model_config.trust_remote_code
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.chat_template is None:
        tokenizer.chat_template = SIMPLE_CHAT_TEMPLATE
    if script_args.ignore_bias_buffers:
        # torch distributed hack
        model._ddp_params_and_buffers_to_ignore = [
            name for name, buffer in model.named_buffers() if buffer.dtype == torch.bool
        ]
    

    ################
    # Dataset
    ################
    dataset = load_dataset("json", data_files=script_args.dataset_name)

    # Organize the splits into a DatasetDict
    dataset = DatasetDict({
        'train': dataset['train'],
        'test': dataset['train'].select(range(0))  # Creates empty dataset with same schema
    })

    ##########
    # Training
    ################
    trainer = DPOTrainer(
        model,
        ref_model,
        args=training_args,
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=dataset[script_args.dataset_test_split],
        processing_class=tokenizer,
        peft_config=peft_config,
    )

    trainer.train()


    # Save and push to hub
    trainer.save_model(training_args.output_dir)
    if training_args.push_to_hub:
        trainer.push_to_hub(dataset_name=script_args.dataset_name)
