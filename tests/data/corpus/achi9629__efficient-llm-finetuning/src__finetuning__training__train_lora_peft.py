import os
import logging
from datetime import datetime
from peft import LoraConfig, get_peft_model
from transformers import Trainer, TrainingArguments, DataCollatorForSeq2Seq

from .train_lora import prepare_dataset
from .callbacks import GPUMemoryCallback
from ..utils import load_config, load_model_and_tokenizer

def main():
    
    model_config = load_config('configs/model_config.yaml')
    data_config = load_config('configs/data_config.yaml')
    train_lora = load_config('configs/train_lora.yaml')
    
    r = train_lora['lora']['r']
    alpha = train_lora['lora']['lora_alpha']
    lr = train_lora['training']['learning_rate']
    timestamp = datetime.now().strftime("%Y%m%d_%H%M%S")
    tag = f"lora_peft_r{r}_a{alpha}_lr{lr}_{timestamp}"
    
    train_lora['training']['output_dir'] = f'outputs/checkpoints/{tag}'
    train_lora['training']['logging_dir'] = f'outputs/runs/{tag}'
    
    os.makedirs(f'outputs/runs/{tag}', exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s [%(levelname)s] %(name)s: %(message)s",
        handlers=[
            logging.StreamHandler(),                                    # console
            logging.FileHandler(os.path.join(f'outputs/runs/{tag}', "training.log")),      # file
        ]
    )
    
    model, tokenizer = load_model_and_tokenizer(model_config)
    model.train()
    
    # During training, we will pad on the right side to ensure that the loss is correctly 
    # calculated on the target tokens, which are at the end of the sequence.
    tokenizer.padding_side = "right"
    # Set a very large max_length to avoid truncation by the tokenizer, 
    # since we will handle it in our tokenize_fn with separate budgets for prompt and target.
    tokenizer.model_max_length = 100_000 
    
    train_dataset, valid_dataset = prepare_dataset(tokenizer, data_config)
    avg_seq_len = sum(len(x['input_ids']) for x in train_dataset) / len(train_dataset)
    
    # Configure the LoRA parameters and wrap the model with the PEFT framework
    peft_config = LoraConfig(**train_lora['lora'])
    model = get_peft_model(model, peft_config)
    data_collator = DataCollatorForSeq2Seq(tokenizer, padding = True)
    
    # Update the output and logging directories in the training configuration
    training_config = train_lora['training']
    args = TrainingArguments(**training_config)
    
    gpu_cb = GPUMemoryCallback(avg_seq_len = avg_seq_len)
    
    trainer = Trainer(model = model,
                      args = args,              
                      train_dataset = train_dataset,
                      eval_dataset = valid_dataset,
                      data_collator = data_collator,
                      callbacks = [gpu_cb],
                )
    trainer.train()
    
    # Save the fine-tuned model and tokenizer to the specified output directory
    model.save_pretrained(training_config['output_dir'])
    
    # Save training performance report
    run_name = os.path.basename(training_config['output_dir'])
    gpu_cb.save_training_report(training_config['output_dir'], run_name)
    
if __name__ == "__main__":
    main()