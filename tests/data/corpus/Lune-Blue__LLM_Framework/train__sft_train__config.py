from dataclasses import dataclass, field
from typing import Optional
from transformers import Seq2SeqTrainingArguments

@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="EleutherAI/pythia-12b")
    trust_remote_code: Optional[bool] = field(
        default=False,
        metadata={"help": "Enable unpickling of arbitrary code in AutoModelForCausalLM#from_pretrained."},
    )
    use_auth_token: Optional[bool] = field(
        default=False, metadata={"help": "Enables using Huggingface auth token from Git Credentials."}
    )
    chat_template_path: Optional[str] = field(default=None, metadata={"help": "Path to chat template file."})

@dataclass
class DataArguments:
    eval_dataset_size: int = field(default=1024, metadata={"help": "Size of validation dataset."})
    max_train_samples: Optional[int] = field(
        default=None,
        metadata={
            "help": "For debugging purposes or quicker training, truncate the number of training examples to this "
            "value if set."
        },
    )
    max_eval_samples: Optional[int] = field(
        default=None,
        metadata={
            "help": "For debugging purposes or quicker training, truncate the number of evaluation examples to this "
            "value if set."
        },
    )
    source_max_len: int = field(
        default=1024,
        metadata={"help": "Maximum source sequence length. Sequences will be right padded (and possibly truncated)."},
    )
    target_max_len: int = field(
        default=256,
        metadata={"help": "Maximum target sequence length. Sequences will be right padded (and possibly truncated)."},
    )
    dataset: str = field(
        default="alpaca", metadata={"help": "Which dataset to finetune on. See datamodule for options."}
    )
    dataset_format: Optional[str] = field(
        default=None, metadata={"help": "Which dataset format is used. [alpaca|chip2|self-instruct|hh-rlhf]"}
    )

@dataclass
class TrainingArguments(Seq2SeqTrainingArguments):
    cache_dir: Optional[str] = field(default=None)
    train_on_source: Optional[bool] = field(
        default=False, metadata={"help": "Whether to train on the input in addition to the target text."}
    )
    full_finetune: bool = field(default=False, metadata={"help": "Finetune the entire model without adapters."})
    adam8bit: bool = field(default=False, metadata={"help": "Use 8-bit adam."})
    quantize: bool = field(default=False, metadata={"help": "Quantize the model."})
    double_quant: bool = field(
        default=True, metadata={"help": "Compress the quantization statistics through double quantization."}
    )
    quant_type: str = field(
        default="nf4", metadata={"help": "Quantization data type to use. Should be one of `fp4` or `nf4`."}
    )
    bits: int = field(default=16, metadata={"help": "How many bits to use."})
    lora_r: int = field(default=64, metadata={"help": "Lora R dimension."})
    lora_alpha: float = field(default=16, metadata={"help": " Lora alpha."})
    lora_dropout: float = field(default=0.0, metadata={"help": "Lora dropout."})
    max_memory_MB: int = field(default=24500, metadata={"help": "Free memory per gpu."})
    report_to: str = field(default="none", metadata={"help": "To use wandb or something else for reporting."})
    output_dir: str = field(default="./output", metadata={"help": "The output dir for logs and checkpoints"})
    optim: str = field(default="paged_adamw_32bit", metadata={"help": "The optimizer to be used"})
    per_device_train_batch_size: int = field(
        default=1, metadata={"help": "The training batch size per GPU. Increase for better speed."}
    )
    gradient_accumulation_steps: int = field(
        default=16, metadata={"help": "How many gradients to accumulate before to perform an optimizer step"}
    )
    max_steps: int = field(default=-1, metadata={"help": "How many optimizer update steps to take"})
    weight_decay: float = field(
        default=0.0, metadata={"help": "The L2 weight decay rate of AdamW"}
    )
    learning_rate: float = field(default=0.0002, metadata={"help": "The learnign rate"})
    remove_unused_columns: bool = field(
        default=False, metadata={"help": "Removed unused columns. Needed to make this codebase work."}
    )
    max_grad_norm: float = field(
        default=1.0,
        metadata={"help": "Gradient clipping max norm. This is tuned and works well for all models tested."},
    )
    gradient_checkpointing: bool = field(
        default=True, metadata={"help": "Use gradient checkpointing. You want to use this."}
    )
    do_train: bool = field(default=True, metadata={"help": "To train or not to train, that is the question?"})
    lr_scheduler_type: str = field(
        default="constant",
        metadata={"help": "Learning rate schedule. Constant a bit better than cosine, and has advantage for analysis"},
    )
    warmup_ratio: float = field(default=0.03, metadata={"help": "Fraction of steps to do a warmup for"})
    logging_steps: int = field(
        default=10, metadata={"help": "The frequency of update steps after which to log the loss"}
    )
    group_by_length: bool = field(
        default=True,
        metadata={
            "help": "Group sequences into batches with same length. Saves memory and speeds up training considerably."
        },
    )
    save_strategy: str = field(default="steps", metadata={"help": "When to save checkpoints"})
    save_steps: int = field(default=250, metadata={"help": "How often to save a model"})
    save_total_limit: int = field(
        default=40, metadata={"help": "How many checkpoints to save before the oldest is overwritten"}
    )
    run_name: Optional[str] = field(default="dpo_llama2", metadata={"help": "the run name"})
    report_to: Optional[str] = field(
        default="wandb",
        metadata={
            "help": 'The list of integrations to report the results and logs to. Supported platforms are `"azure_ml"`,'
            '`"comet_ml"`, `"mlflow"`, `"neptune"`, `"tensorboard"`,`"clearml"` and `"wandb"`. '
            'Use `"all"` to report to all integrations installed, `"none"` for no integrations.'
        },
    )

@dataclass
class GenerationArguments:
    # For more hyperparameters check:
    # https://huggingface.co/docs/transformers/main_classes/text_generation#transformers.GenerationConfig
    # Length arguments
    max_new_tokens: Optional[int] = field(
        default=256,
        metadata={
            "help": "Maximum number of new tokens to be generated in evaluation or prediction loops"
            "if predict_with_generate is set."
        },
    )
    min_new_tokens: Optional[int] = field(default=None, metadata={"help": "Minimum number of new tokens to generate."})

    # Generation strategy
    do_sample: Optional[bool] = field(default=False)
    num_beams: Optional[int] = field(default=1)
    num_beam_groups: Optional[int] = field(default=1)
    penalty_alpha: Optional[float] = field(default=None)
    use_cache: Optional[bool] = field(default=True)

    # Hyperparameters for logit manipulation
    temperature: Optional[float] = field(default=1.0)
    top_k: Optional[int] = field(default=50)
    top_p: Optional[float] = field(default=1.0)
    typical_p: Optional[float] = field(default=1.0)
    diversity_penalty: Optional[float] = field(default=0.0)
    repetition_penalty: Optional[float] = field(default=1.0)
    length_penalty: Optional[float] = field(default=1.0)
    no_repeat_ngram_size: Optional[int] = field(default=0)
