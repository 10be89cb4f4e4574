from datasets import load_dataset, DatasetDict, Dataset
from transformers import AutoTokenizer

from trl import (
    ModelConfig,
    SFTConfig,
    ScriptArguments,
    SFTTrainer,
    TrlParser,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
)

def formatting_prompts_func(examples):
    output_text = []
    for i in range(len(examples["instruction"])):
        instruction = examples["instruction"][i]
        input_text = examples["input"][i]
        response = examples["output"][i]

        if len(input_text) > 0:
            text = f'''
Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request.
            
### Instruction:
{instruction}
            
### Input:
{input_text}
            
### Response:
{response}
'''
        else:
            text = f'''
Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request.
            
### Instruction:
{instruction}
            
### Response:
{response}
'''
        output_text.append(text.strip())

    return output_text


if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_config = parser.parse_args_and_config()

    ################
    # Model init kwargs & Tokenizer
    ################
    quantization_config = get_quantization_config(model_config)
    model_kwargs = dict(
        revision=model_config.model_revision,
        trust_remote_code=model_config.trust_remote_code,
        attn_implementation=model_config.attn_implementation,
        torch_dtype=model_config.torch_dtype,
        use_cache=False if training_args.gradient_checkpointing else True,
        device_map=get_kbit_device_map() if quantization_config is not None else None,
        quantization_config=quantization_config,
    )
    training_args.model_init_kwargs = model_kwargs
    tokenizer = AutoTokenizer.from_pretrained(
        model_config.model_name_or_path, trust_remote_code=model_config.trust_remote_code, use_fast=True
    )
    tokenizer.pad_token = tokenizer.eos_token

    ################
    # Dataset
    ################
    dataset = load_dataset(script_args.dataset_name)
    # dataset = load_dataset("json", name=script_args.dataset_name, data_files="./test/sft/alpaca_gpt4_data_zh.json")

    def print_dataset_example(dataset: DatasetDict | Dataset) -> None:
        print(dataset)
        if isinstance(dataset, DatasetDict):
            tmp_dataset = dataset["train"]
        else:
            tmp_dataset = dataset
        example = next(iter(tmp_dataset))
        print(f"system:\n{example['system']}\n\n")
        print(f"conversations:\n{print_conversational_format(example['conversations'])}\n\n")
        print(f"messages:\n{print_conversational_format(example['messages'])}")

    def print_conversational_format(data: dict[str,str]) -> str:
        con_data: str = ""
        for item in data:
            if 'from' in item and 'value' in item:
                con_data += f"{item['from']}:\n{item['value']}\n\n"
            elif 'role' in item and 'content' in item:
                con_data += f"{item['role']}:\n{item['content']}\n\n"
            else:
                raise ValueError("data format is not right!")
        return con_data

    print_dataset_example(dataset)

    ################
    # Training
    ################
    trainer = SFTTrainer(
        model=model_config.model_name_or_path,
        args=training_args,
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=dataset[script_args.dataset_test_split] if training_args.eval_strategy != "no" else None,
        # formatting_func=formatting_prompts_func,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_config),
    )

    trainer.train()

    # Save and push to hub
    trainer.save_model(training_args.output_dir)
    if training_args.push_to_hub:
        trainer.push_to_hub(dataset_name=script_args.dataset_name)
