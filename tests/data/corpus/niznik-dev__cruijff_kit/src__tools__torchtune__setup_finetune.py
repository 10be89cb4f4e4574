import argparse
import math
import os
import warnings
import yaml
from pathlib import Path

from cruijff_kit.utils import run_names
from cruijff_kit.utils.layout import ARTIFACTS_DIR
from cruijff_kit.tools.torchtune import config_recipe_loader
from cruijff_kit.tools.torchtune.model_configs import MODEL_CONFIGS, configure_tokenizer

# Calculate paths relative to this script
script_dir = Path(__file__).parent

# Skip these when writing the yaml file
SLURM_ONLY = [
    "time",
    "gpus",
    "conda_env",
    "account",
    "partition",
    "constraint",
    "mem",
    "cpus_per_task",
]
# Meta-arguments that are not torchtune config parameters
META_ARGS = []

# Maps torchtune recipe config paths to setup_finetune.py argument names
RECIPE_PARAM_MAPPING = {
    "model.lora_rank": "lora_rank",
    "model.lora_dropout": "lora_dropout",
    "optimizer.lr": "lr",
    "optimizer.weight_decay": "weight_decay",
    "batch_size": "batch_size",
    "epochs": "epochs",
    "gradient_accumulation_steps": "gradient_accumulation_steps",
    "lr_scheduler.num_warmup_steps": "num_warmup_steps",
    "tokenizer.max_seq_len": "max_seq_len",
}


def extract_flat_params(recipe_config: dict, mapping: dict) -> dict:
    """Extract parameters from nested recipe config using mapping.

    Args:
        recipe_config: Nested dictionary from torchtune recipe YAML
        mapping: Dict mapping recipe paths (e.g., 'model.lora_rank') to arg names

    Returns:
        Flat dictionary of {arg_name: value} for parameters found in recipe
    """
    flat = {}
    for recipe_path, arg_name in mapping.items():
        parts = recipe_path.split(".")
        value = recipe_config
        try:
            for part in parts:
                value = value[part]
            flat[arg_name] = value
        except (KeyError, TypeError):
            continue  # Parameter not in recipe
    return flat


def compute_training_steps(
    training_samples, batch_size, gradient_accumulation_steps, epochs
):
    """Compute total training steps and steps per epoch.

    Args:
        training_samples: Number of training samples in the dataset
        batch_size: Per-device batch size
        gradient_accumulation_steps: Number of gradient accumulation steps
        epochs: Number of training epochs

    Returns:
        Dict with 'steps_per_epoch', 'total_steps', and 'effective_batch_size'
    """
    effective_batch_size = batch_size * gradient_accumulation_steps
    steps_per_epoch = math.ceil(training_samples / effective_batch_size)
    total_steps = steps_per_epoch * epochs
    return {
        "steps_per_epoch": steps_per_epoch,
        "total_steps": total_steps,
        "effective_batch_size": effective_batch_size,
    }


def warn_on_low_steps(step_info, num_warmup_steps):
    """Print step summary and emit warnings if training steps are dangerously low.

    Args:
        step_info: Dict from compute_training_steps()
        num_warmup_steps: Number of warmup steps configured for the LR scheduler
    """
    total = step_info["total_steps"]
    print(
        f"Training step summary: {step_info['steps_per_epoch']} steps/epoch, "
        f"{total} total steps (effective batch size: {step_info['effective_batch_size']})"
    )

    if total < num_warmup_steps:
        warnings.warn(
            f"Total training steps ({total}) < warmup steps ({num_warmup_steps}). "
            f"Warmup will never complete — the learning rate will never reach its target value.",
            stacklevel=2,
        )
    min_recommended = 3 * num_warmup_steps
    if total < min_recommended:
        warnings.warn(
            f"Total training steps ({total}) < {min_recommended} "
            f"(3x warmup steps of {num_warmup_steps}). "
            f"The model will spend most of training in warmup with little time at full learning rate. "
            f"Consider reducing batch size or gradient accumulation, or increasing epochs.",
            stacklevel=2,
        )


# Used for boolean arguments to accept flexible input
def parse_bool(value):
    """Parse boolean values from strings or booleans.

    Args:
        value: String or boolean to parse

    Returns:
        Boolean value

    Raises:
        argparse.ArgumentTypeError: If value cannot be parsed as boolean

    Accepts: true/false, True/False, 1/0, yes/no (case-insensitive)
    """
    if isinstance(value, bool):
        return value  # Already a boolean (e.g., from YAML config)

    value_lower = str(value).lower()
    if value_lower in ("true", "1", "yes"):
        return True
    elif value_lower in ("false", "0", "no"):
        return False
    else:
        raise argparse.ArgumentTypeError(
            f"Boolean value expected. Got: '{value}'. "
            "Valid values: true/false, yes/no, 1/0 (case-insensitive)"
        )


def calculate_lora_alpha(lora_rank):
    """Calculate LoRA alpha from LoRA rank.

    Args:
        lora_rank: The LoRA rank value

    Returns:
        LoRA alpha value (always 2 * rank)
    """
    return lora_rank * 2


def validate_lr_scheduler(scheduler_name):
    """Validate learning rate scheduler name.

    Args:
        scheduler_name: Name of the learning rate scheduler (without prefix)

    Raises:
        ValueError: If scheduler_name is not in the list of valid schedulers
    """
    VALID_LR_SCHEDULERS = [
        "get_cosine_schedule_with_warmup",
        "get_linear_schedule_with_warmup",
        "get_constant_schedule_with_warmup",
        "get_exponential_schedule_with_warmup",
    ]

    if scheduler_name not in VALID_LR_SCHEDULERS:
        raise ValueError(
            f"Invalid lr_scheduler: '{scheduler_name}'. "
            f"Must be one of: {', '.join(VALID_LR_SCHEDULERS)}"
        )


def validate_dataset_type(dataset_type):
    """Validate dataset type.

    Args:
        dataset_type: Name of the dataset type

    Raises:
        ValueError: If dataset_type is not in the list of valid types
    """
    VALID_DATASET_TYPES = [
        "chat_completion",  # Instruct models - uses HF apply_chat_template for train/eval parity
        "text_completion",  # Base models - simple concatenation with HF tokenizer
        "instruct_dataset",
        "chat_dataset",
        "text_completion_dataset",
    ]

    if dataset_type not in VALID_DATASET_TYPES:
        raise ValueError(
            f"Invalid dataset_type: '{dataset_type}'. "
            f"Must be one of: {', '.join(VALID_DATASET_TYPES)}"
        )


def construct_artifacts_dir(project_dir, experiment_name, model_run_name):
    """Construct the full artifacts directory path for a run.

    Builds {project_dir}/{experiment_name}/{model_run_name}/artifacts/. The
    returned path becomes torchtune's `output_dir:` in the generated
    finetune.yaml — that yaml key is torchtune's contract and must NOT be
    renamed, even though our wrapper-side names here use `artifacts`.

    Args:
        project_dir: Project directory (ck-projects/{project}/) holding experiment dirs
        experiment_name: Experiment name used to group outputs (required)
        model_run_name: Name of this specific model run

    Returns:
        Full artifacts directory path with trailing slash

    Raises:
        ValueError: if project_dir or experiment_name is empty
    """
    if not project_dir:
        raise ValueError("project_dir is required")
    if not experiment_name:
        raise ValueError("experiment_name is required")

    if not project_dir.endswith("/"):
        project_dir += "/"

    return project_dir + experiment_name + "/" + model_run_name + f"/{ARTIFACTS_DIR}/"


def configure_dataset_for_format(config, dataset_label, dataset_ext, dataset_type):
    """Configure dataset paths and structure based on file format and type.

    Args:
        config: The configuration dictionary to modify
        dataset_label: Name of the dataset file (without extension) or folder
        dataset_ext: Extension of the dataset file (e.g., '.json')
        dataset_type: Type of dataset ('chat_completion', 'instruct_dataset', etc.)

    Returns:
        Modified configuration dictionary
    """
    config["dataset_label"] = dataset_label

    if dataset_type in ("chat_completion", "text_completion"):
        # Uses data_files directly (already in template)
        # Just need to ensure the path includes the dataset_label
        # Template has: "${input_dir}/${dataset_label}.json"
        # This gets substituted by the config values, so no changes needed here
        pass

    elif dataset_ext == ".json":
        # Change source and rename data_dir to data_files
        config["dataset"]["source"] = "json"
        config["dataset"]["data_files"] = config["dataset"].pop("data_dir")
        if "dataset_val" in config:
            config["dataset_val"]["source"] = "json"
            config["dataset_val"]["data_files"] = config["dataset_val"].pop("data_dir")

        if dataset_type == "instruct_dataset":
            # For instruct, use a single file and change split to field
            config["dataset"]["data_files"] += ".json"
            config["dataset"]["field"] = config["dataset"].pop("split")
            if "dataset_val" in config:
                config["dataset_val"]["data_files"] += ".json"
                config["dataset_val"]["field"] = config["dataset_val"].pop("split")
        else:
            # For chat, remove split and add filenames inside the folder
            config["dataset"]["data_files"] += "/train.json"
            config["dataset"].pop("split")
            if "dataset_val" in config:
                config["dataset_val"]["data_files"] += "/validation.json"
                config["dataset_val"].pop("split")

    return config


def create_parser():
    """Create and return the argument parser."""
    parser = argparse.ArgumentParser()

    # ----- Config File -----
    parser.add_argument(
        "--config_file",
        type=str,
        default="setup_finetune.yaml",
        help="Path to YAML configuration file. Values from this file will be used as defaults, and can be overridden by CLI arguments.",
    )

    # ----- Required YAML Args Reused in Templating -----
    parser.add_argument(
        "--my_wandb_project",
        type=str,
        default="PredictingZygosity",
        help="Project for when results are synced to wandb",
    )
    parser.add_argument(
        "--my_wandb_run_name",
        type=str,
        help="Name for when results are synced to wandb; if not provided, a random name will be generated",
    )
    parser.add_argument(
        "--input_formatting",
        type=str,
        default="raw",
        help="Name of the folder where your input files are stored within input_dir; useful for multiple formatting styles (e.g. difference vs raw values). If same directory, set to empty string.",
    )

    parser.add_argument(
        "--dataset_label",
        type=str,
        default="tune_dataset",
        help="Name of the dataset file (without extension) or folder (either should be in input_dir)",
    )
    parser.add_argument(
        "--dataset_ext",
        type=str,
        default="",
        help="Extension of the dataset file (e.g. .json)",
    )

    parser.add_argument(
        "--experiment_name",
        type=str,
        default="",
        help="Name of the experiment (used to group outputs in ck-projects/{project}/{experiment_name}/).",
    )
    parser.add_argument(
        "--project_dir",
        type=str,
        default=None,
        help="Full path to the project directory (ck-projects/{project}/) under which experiment dirs are created.",
    )
    parser.add_argument(
        "--input_dir_base",
        type=str,
        default=None,
        help="Full path to the input file folders",
    )
    parser.add_argument(
        "--models_dir",
        type=str,
        default=None,
        help="Full path to the model file folders",
    )

    # ----- Optional YAML Args -----
    parser.add_argument(
        "--batch_size", type=int, default=4, help="Batch size for training"
    )
    parser.add_argument(
        "--batch_size_val",
        type=int,
        default=None,
        help="Batch size for validation passes (defaults to training batch_size). "
        "Honored by the _single_device_nightly recipe; ignored by stable recipes.",
    )
    parser.add_argument(
        "--epochs", type=int, default=1, help="Number of epochs to train for"
    )
    parser.add_argument(
        "--save_adapter_weights_only",
        type=parse_bool,
        default=True,
        help="Save only adapter weights, skipping the merged base+LoRA checkpoint (true/false). "
        "Default True saves ~base-model-size disk per epoch; the saved adapter dir is "
        "self-loading because we rewrite adapter_config.json to point at the local base.",
    )
    parser.add_argument(
        "--max_steps_per_epoch",
        type=int,
        help="Maximum steps per epoch (useful for debugging)",
    )
    parser.add_argument(
        "--log_every_n_steps", type=int, default=5, help="How often to log (in steps)"
    )
    parser.add_argument(
        "--run_val_every_n_steps",
        type=int,
        default=0,
        help="How often to run validation (in steps)",
    )
    parser.add_argument(
        "--prompt",
        type=str,
        default="{input}\n",
        help="Prompt template (use {input} placeholder)",
    )
    parser.add_argument(
        "--input_key", type=str, default="input", help="JSON key for input field"
    )
    parser.add_argument(
        "--output_key", type=str, default="output", help="JSON key for output field"
    )
    parser.add_argument(
        "--system_prompt",
        type=str,
        default="",
        help="System prompt (legacy, for instruct_dataset)",
    )
    parser.add_argument(
        "--train_on_input",
        type=parse_bool,
        default=False,
        help="Whether to train on the input data (true/false)",
    )

    # ------ Model/Training Args -----
    parser.add_argument(
        "--lora_rank",
        type=int,
        default=64,
        help="LoRA rank (alpha will be auto-calculated as 2*rank)",
    )
    parser.add_argument(
        "--lr", type=float, default=1e-4, help="Learning rate for optimizer"
    )
    parser.add_argument(
        "--num_warmup_steps",
        type=int,
        default=100,
        help="Number of warmup steps for learning rate scheduler",
    )
    parser.add_argument(
        "--lr_scheduler",
        type=str,
        default="get_cosine_schedule_with_warmup",
        help="Learning rate scheduler function name (without 'torchtune.training.lr_schedulers.' prefix)",
    )
    parser.add_argument(
        "--dataset_type",
        type=str,
        default=None,
        help="Dataset type (REQUIRED): 'chat_completion' (HF chat templates for "
        "train/eval parity) or 'text_completion'. Normally supplied via "
        "setup_finetune.yaml from controls.dataset_type; pass explicitly only for "
        "standalone runs. Absence is a hard error — there is no model-based default.",
    )
    parser.add_argument(
        "--packed",
        type=parse_bool,
        default=False,
        help="Whether to use packed sequences (true/false). Should be False for custom datasets.",
    )
    parser.add_argument(
        "--max_seq_len",
        type=int,
        default=2048,
        help="Maximum sequence length for tokenizer",
    )
    parser.add_argument(
        "--gradient_accumulation_steps",
        type=int,
        default=1,
        help="Gradient accumulation steps (effective batch = batch_size * this)",
    )
    parser.add_argument(
        "--weight_decay", type=float, default=0.01, help="Weight decay for optimizer"
    )
    parser.add_argument(
        "--lora_dropout", type=float, default=0.0, help="Dropout for LoRA layers"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=14,
        help="Random seed for training (passed to torchtune.training.set_seed). Default is 14 — Johan Cruijff's kit number.",
    )

    # ------ Slurm Args -----
    parser.add_argument(
        "--time", type=str, default="00:15:00", help="Time to run the job (HH:MM:SS)"
    )
    parser.add_argument("--gpus", type=int, default=1, help="Number of GPUs to use")
    parser.add_argument(
        "--conda_env",
        type=str,
        default="cruijff",
        help="Name of the conda environment to use",
    )
    parser.add_argument(
        "--venv",
        type=str,
        default="",
        help="Path to the virtual environment to use (if not using conda)",
    )
    parser.add_argument(
        "--modules",
        type=str,
        default="",
        help="Modules to load before running the script, separated by commas (e.g. '2024,Python/3.12.3')",
    )

    parser.add_argument("--account", type=str, help="Slurm account to use")
    parser.add_argument("--partition", type=str, help="Slurm partition to use")
    parser.add_argument(
        "--mem", type=str, help="Slurm memory allocation (e.g., '40G', '16G')"
    )
    parser.add_argument(
        "--cpus_per_task",
        type=int,
        default=None,
        help="Cores requested in the SLURM script (overrides MODEL_CONFIGS).",
    )
    parser.add_argument("--constraint", type=str, help="Slurm constraint to use")

    # ------ Training Step Guard -----
    parser.add_argument(
        "--training_samples",
        type=int,
        default=None,
        help="Cap the number of rows loaded for training (slices dataset[:training_samples]). "
        "When provided, also computes total training steps and warns if dangerously low. "
        "Validation set is unaffected.",
    )

    parser.add_argument(
        "--custom_recipe",
        type=str,
        help="Full name of a custom recipe file in the repo's custom_recipes folder to use for fine-tuning",
    )
    parser.add_argument(
        "--base_recipe",
        type=str,
        default=None,
        help="Torchtune recipe name to use as base config (e.g., 'llama3_2/1B_lora_single_device'). Recipe defaults are used for parameters not explicitly set.",
    )

    # ------ Model Selection -----
    parser.add_argument(
        "--torchtune_model_name",
        type=str,
        default="Llama-3.2-1B-Instruct",
        help="Model name as listed by 'tune ls' (e.g., 'Llama-3.2-1B-Instruct', 'Llama-3.2-3B-Instruct', 'Llama-3.1-8B-Instruct', 'Llama-3.3-70B-Instruct')",
    )
    parser.add_argument(
        "--model_checkpoint",
        type=str,
        default=None,
        help="Model directory name within models_dir (defaults to torchtune_model_name if not provided)",
    )

    return parser


def main():
    """Main function to set up fine-tuning configuration and SLURM script."""
    parser = create_parser()
    args = parser.parse_args()

    RANDOM_MODEL_RUN_NAME = run_names.generate_model_run_name()[0]

    # Load config file if it exists
    config_data = {}
    if args.config_file and os.path.exists(args.config_file):
        with open(args.config_file, "r") as f:
            config_data = yaml.safe_load(f) or {}

        # Warn on keys we don't know what to do with — the merge loop below
        # silently drops anything that isn't an argparse dest, which hides typos.
        unknown = sorted(k for k in config_data.keys() if not hasattr(args, k))
        if unknown:
            warnings.warn(
                f"setup_finetune.yaml has keys not consumed by setup_finetune.py: "
                f"{unknown}. They will not affect the fine-tune. If these should "
                f"propagate, add a matching argparse argument.",
                stacklevel=2,
            )

    # Load torchtune recipe hyperparameter defaults if base_recipe is specified
    recipe_defaults = {}
    recipe_config = None
    base_recipe = args.base_recipe or config_data.get("base_recipe")
    if base_recipe:
        try:
            recipe_config = config_recipe_loader.get_recipe_config(base_recipe)
            recipe_defaults = extract_flat_params(recipe_config, RECIPE_PARAM_MAPPING)
        except config_recipe_loader.RecipeConfigError as e:
            raise SystemExit(f"ERROR: Could not load recipe '{base_recipe}': {e}")

    # Apply default hyperparameters (only if at argparse default AND not overridden in config_file)
    # Precedence: CLI > config_file > recipe > argparse_default
    for key, value in recipe_defaults.items():
        if hasattr(args, key) and key not in config_data:
            default_value = parser.get_default(key)
            current_value = getattr(args, key)
            if current_value == default_value:
                setattr(args, key, value)

    # Build a map of argparse type converters so config-file values get the
    # same parsing that CLI values receive (e.g. parse_bool).
    _type_converters = {}
    for action in parser._actions:
        if action.type is not None and action.dest != "help":
            _type_converters[action.dest] = action.type

    # Apply config file values (higher priority than recipe)
    for key, value in config_data.items():
        # Only use config value if the argument wasn't explicitly provided on CLI
        # We check if it's still at its default value
        if hasattr(args, key):
            default_value = parser.get_default(key)
            current_value = getattr(args, key)
            # If current value equals default, use config file value
            if current_value == default_value:
                # Apply the argparse type converter if the value is a string
                # and a converter exists (e.g. parse_bool)
                if isinstance(value, str) and key in _type_converters:
                    value = _type_converters[key](value)
                setattr(args, key, value)

    # Validate lr_scheduler (after config file has been loaded and merged)
    validate_lr_scheduler(args.lr_scheduler)

    # The training prompt (controls.prompt, a per-run parameters.prompt, or
    # --prompt) must keep the {input} placeholder. str.format silently drops the
    # record when it's missing, so every example would train on the same
    # input-less text — fail loudly at scaffold time instead.
    if "{input}" not in args.prompt:
        raise ValueError(
            f"prompt must contain the '{{input}}' placeholder, got: {args.prompt!r}."
        )

    # Training step guard: compute and warn if --training_samples provided
    if args.training_samples is not None:
        step_info = compute_training_steps(
            training_samples=args.training_samples,
            batch_size=args.batch_size,
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            epochs=args.epochs,
        )
        warn_on_low_steps(step_info, args.num_warmup_steps)

    # Validate required path arguments (no hardcoded defaults — must come from
    # config file, CLI, or scaffold agent via claude.local.md)
    missing = [
        name
        for name in ("project_dir", "input_dir_base", "models_dir")
        if getattr(args, name) is None
    ]
    if missing:
        raise SystemExit(
            f"ERROR: Required path argument(s) not provided: {', '.join('--' + m for m in missing)}\n"
            "Set these in your setup_finetune.yaml or pass them on the command line."
        )

    model_run_name = (
        args.my_wandb_run_name if args.my_wandb_run_name else RANDOM_MODEL_RUN_NAME
    )
    username = os.environ.get("USER")

    # Get model config early (needed for both YAML and SLURM generation)
    if args.torchtune_model_name not in MODEL_CONFIGS:
        raise ValueError(
            f"Unknown model: '{args.torchtune_model_name}'. "
            f"Supported models: {', '.join(MODEL_CONFIGS.keys())}"
        )
    model_config = MODEL_CONFIGS[args.torchtune_model_name]

    # dataset_type is required — it must arrive via controls.dataset_type
    # (written into setup_finetune.yaml by scaffold-torchtune) or an explicit
    # --dataset_type. There is no model-based default: silently guessing chat vs
    # text from the model would break train/eval parity exactly when it matters.
    if args.dataset_type is None:
        raise ValueError(
            "dataset_type is required but was not provided. Set "
            "controls.dataset_type in experiment_summary.yaml (propagated into "
            "setup_finetune.yaml), or pass --dataset_type "
            "{chat_completion|text_completion}."
        )
    validate_dataset_type(args.dataset_type)

    # First edit the yaml template
    with open(f"{script_dir}/templates/finetune_template.yaml", "r") as f:
        config = yaml.safe_load(f)

    # Derive model_dir early (needed for chat_completion's model_path)
    # Extract basename in case model_checkpoint is an absolute path
    raw_checkpoint = args.model_checkpoint or args.torchtune_model_name
    model_dir = os.path.basename(raw_checkpoint.rstrip("/"))

    for key, value in vars(args).items():
        if key in SLURM_ONLY or key in META_ARGS:
            continue
        # Model config - apply torchtune-specific settings
        elif key == "torchtune_model_name":
            # Model directory: use model_checkpoint if provided, otherwise torchtune_model_name
            # Extract basename in case it's an absolute path
            raw_checkpoint = args.model_checkpoint or value
            model_dir = os.path.basename(raw_checkpoint.rstrip("/"))

            # Set model component
            config["model"]["_component_"] = model_config["component"]

            # Set tokenizer path based on model family
            configure_tokenizer(
                config, model_config, model_dir, args.torchtune_model_name
            )

            # Set checkpointer config
            config["checkpointer"]["checkpoint_dir"] = f"${{models_dir}}/{model_dir}/"
            config["checkpointer"]["model_type"] = model_config["model_type"]
            config["checkpointer"]["checkpoint_files"] = model_config[
                "checkpoint_files"
            ]
        elif key == "model_checkpoint":
            continue  # Handled in torchtune_model_name
        # Special cases first
        elif key == "my_wandb_run_name":
            config["my_wandb_run_name"] = model_run_name
        elif key == "input_dir_base":
            config["input_dir"] = (
                value + args.input_formatting + ("/" if args.input_formatting else "")
            )
        elif key == "project_dir":
            full_artifacts_dir = construct_artifacts_dir(
                value, args.experiment_name, model_run_name
            )
            config["output_dir"] = full_artifacts_dir
        elif key == "experiment_name":
            pass  # Handled in project_dir
        elif key == "dataset_label":
            config = configure_dataset_for_format(
                config, value, args.dataset_ext, args.dataset_type
            )
        elif key == "dataset_ext":
            pass  # Handled in dataset_label
        elif key in ("prompt", "input_key", "output_key"):
            pass  # Handled in dataset_type
        elif key == "system_prompt":
            # chat_completion handles system_prompt via apply_chat_template.
            # text_completion / text_completion_dataset have no system-prompt slot
            if value and args.dataset_type in ("instruct_dataset", "chat_dataset"):
                config["dataset"]["new_system_prompt"] = value
                if "dataset_val" in config:
                    config["dataset_val"]["new_system_prompt"] = value
            elif value and args.dataset_type in (
                "text_completion",
                "text_completion_dataset",
            ):
                print(
                    f"[setup_finetune] WARNING: system_prompt is set but "
                    f"dataset_type='{args.dataset_type}' has no system-prompt slot; "
                    f"ignoring."
                )
        elif key == "train_on_input":
            # Handled in dataset_type switch for chat_completion
            pass
        elif key == "lora_rank":
            # Set both rank and alpha (alpha = 2 * rank)
            config["model"]["lora_rank"] = value
            config["model"]["lora_alpha"] = calculate_lora_alpha(value)
        elif key == "lora_dropout":
            config["model"]["lora_dropout"] = value
        elif key == "lr":
            config["optimizer"]["lr"] = value
        elif key == "weight_decay":
            config["optimizer"]["weight_decay"] = value
        elif key == "gradient_accumulation_steps":
            config["gradient_accumulation_steps"] = value
        elif key == "base_recipe":
            pass  # Not a config parameter, used for loading recipe defaults
        elif key == "num_warmup_steps":
            config["lr_scheduler"]["num_warmup_steps"] = value
        elif key == "lr_scheduler":
            # Construct full component path
            config["lr_scheduler"]["_component_"] = (
                f"torchtune.training.lr_schedulers.{value}"
            )
        elif key == "dataset_type":
            if value == "chat_completion":
                # Template already has chat_completion config
                # Just override the user-specified values and set model_path
                config["dataset"]["model_path"] = f"${{models_dir}}/{model_dir}"
                config["dataset"]["prompt"] = args.prompt
                config["dataset"]["system_prompt"] = args.system_prompt
                config["dataset"]["input_key"] = args.input_key
                config["dataset"]["output_key"] = args.output_key
                config["dataset"]["train_on_input"] = args.train_on_input
                if "dataset_val" in config:
                    config["dataset_val"]["model_path"] = f"${{models_dir}}/{model_dir}"
                    config["dataset_val"]["prompt"] = args.prompt
                    config["dataset_val"]["system_prompt"] = args.system_prompt
                    config["dataset_val"]["input_key"] = args.input_key
                    config["dataset_val"]["output_key"] = args.output_key
                    config["dataset_val"]["train_on_input"] = args.train_on_input
            elif value == "text_completion":
                # Base model dataset - simple concatenation, no chat template
                config["dataset"]["_component_"] = (
                    "cruijff_kit.tools.torchtune.datasets.text_completion.text_completion_dataset"
                )
                config["dataset"]["model_path"] = f"${{models_dir}}/{model_dir}"
                config["dataset"]["prompt"] = args.prompt
                config["dataset"]["input_key"] = args.input_key
                config["dataset"]["output_key"] = args.output_key
                config["dataset"]["train_on_input"] = args.train_on_input
                # Remove system_prompt - not used for base models
                config["dataset"].pop("system_prompt", None)
                if "dataset_val" in config:
                    config["dataset_val"]["_component_"] = (
                        "cruijff_kit.tools.torchtune.datasets.text_completion.text_completion_dataset"
                    )
                    config["dataset_val"]["model_path"] = f"${{models_dir}}/{model_dir}"
                    config["dataset_val"]["prompt"] = args.prompt
                    config["dataset_val"]["input_key"] = args.input_key
                    config["dataset_val"]["output_key"] = args.output_key
                    config["dataset_val"]["train_on_input"] = args.train_on_input
                    config["dataset_val"].pop("system_prompt", None)
            else:
                # Legacy dataset types - need to reconfigure from template
                config["dataset"]["_component_"] = f"torchtune.datasets.{value}"
                # Remove chat_completion specific keys
                for key_to_remove in [
                    "prompt",
                    "input_key",
                    "output_key",
                    "model_path",
                    "system_prompt",
                ]:
                    config["dataset"].pop(key_to_remove, None)
                # Add back keys needed for legacy types
                config["dataset"]["data_dir"] = (
                    config["dataset"].pop("data_files").replace(".json", "")
                )
                config["dataset"]["split"] = config["dataset"].pop("field")
                if value == "chat_dataset":
                    config["dataset"]["conversation_column"] = "messages"
                    config["dataset"]["conversation_style"] = "openai"
                if "dataset_val" in config:
                    config["dataset_val"]["_component_"] = f"torchtune.datasets.{value}"
                    for key_to_remove in [
                        "prompt",
                        "input_key",
                        "output_key",
                        "model_path",
                        "system_prompt",
                    ]:
                        config["dataset_val"].pop(key_to_remove, None)
                    config["dataset_val"]["data_dir"] = (
                        config["dataset_val"].pop("data_files").replace(".json", "")
                    )
                    config["dataset_val"]["split"] = config["dataset_val"].pop("field")
                    if value == "chat_dataset":
                        config["dataset_val"]["conversation_column"] = "messages"
                        config["dataset_val"]["conversation_style"] = "openai"
        elif key == "packed":
            # Add packed to dataset config (recipes read this to select collate_fn)
            config["dataset"]["packed"] = value
            if "dataset_val" in config:
                config["dataset_val"]["packed"] = value
        elif key == "max_seq_len":
            # Update tokenizer's max_seq_len
            config["tokenizer"]["max_seq_len"] = value
        elif key == "batch_size_val":
            # Only emit when set; absent key → recipe falls back to cfg.batch_size.
            if value is not None:
                config["batch_size_val"] = value
        elif key == "training_samples":
            # Slice the train dataset only. dataset_val stays full so val
            # accuracy is comparable across consistency-curve runs.
            if value is not None:
                config["dataset"]["max_samples"] = value
        # The rest are straightforward
        else:
            config[key] = value

    if config["run_val_every_n_steps"] == 0:
        # Remove all validation-related keys if not running validation
        config.pop("dataset_val", None)
        config.pop("run_val_every_n_steps", None)

    for key in ["input_dir", "output_dir", "models_dir"]:
        config[key] = config[key].replace("$USER", username)

    with open("finetune.yaml", "w") as f:
        yaml.dump(config, f, sort_keys=False)

    # Now create the slurm script
    with open(f"{script_dir}/templates/finetune_template.slurm", "r") as f:
        slurm_script = f.read()

    slurm_script = slurm_script.replace("<JOBNAME>", model_run_name)
    slurm_script = slurm_script.replace("00:15:00", args.time)
    slurm_script = slurm_script.replace("<NETID>", username)

    # Apply model-aware SLURM resources (RAM=VRAM rule)
    # User-specified mem overrides model defaults (for MIG support)
    slurm_config = model_config.get("slurm", {})
    mem = args.mem if args.mem else slurm_config.get("mem", "32G")
    slurm_script = slurm_script.replace("<MEM>", mem)

    # GPUs: CLI overrides model config default
    # Check if user explicitly set --gpus (compare to parser default of 1)
    model_gpus = slurm_config.get("gpus", 1)
    gpus = args.gpus if args.gpus != 1 else model_gpus

    # Default custom_recipe based on GPU count when not explicitly set.
    # This keeps the GPU-aware recipe choice anchored in code rather than
    # relying on the scaffold-torchtune agent doc to pick the right one;
    # the agent can still override by writing custom_recipe explicitly.
    if args.custom_recipe is None:
        if gpus == 1:
            args.custom_recipe = "cruijff_kit.tools.torchtune.custom_recipes.lora_finetune_single_device_nightly"
        else:
            args.custom_recipe = "cruijff_kit.tools.torchtune.custom_recipes.lora_finetune_distributed_stable"

    # Warn if validation was requested for a multi-GPU run. The distributed
    # recipe has no val loop yet, so val will be silently skipped
    # at training time. The scaffold-torchtune agent is supposed to emit this
    # warning too, but duplicating it here makes the failure loud even when
    # setup_finetune.py is invoked outside the agent path.
    if config.get("run_val_every_n_steps", 0) > 0 and gpus > 1:
        warnings.warn(
            "validation_during_training was requested for a multi-GPU run, but "
            "the distributed recipe does not yet support mid-training validation. "
            "Validation will be SKIPPED. Tracked in "
            "https://github.com/niznik-dev/cruijff_kit/issues/474.",
            stacklevel=2,
        )

    cpus = (
        args.cpus_per_task
        if args.cpus_per_task is not None
        else slurm_config.get("cpus", 1)
    )

    # Multi-GPU setup: update SLURM and use distributed training
    if gpus > 1:
        slurm_script = slurm_script.replace(
            "#SBATCH --gres=gpu:1", "#SBATCH --gres=gpu:" + str(gpus)
        )
        slurm_script = slurm_script.replace(
            "lora_finetune_single_device",
            "--nproc_per_node=" + str(gpus) + " lora_finetune_distributed",
        )
    slurm_script = slurm_script.replace(
        "#SBATCH --cpus-per-task=1", "#SBATCH --cpus-per-task=" + str(cpus)
    )

    if args.account:
        slurm_script = slurm_script.replace(
            "##SBATCH --account=<ACT>", "#SBATCH --account=" + args.account
        )

    # Partition: set by caller (scaffold agent reads claude.local.md)
    # Use 'is not None' check because empty string is valid (MIG support)
    partition = args.partition
    if partition is not None and partition != "":
        slurm_script = slurm_script.replace(
            "##SBATCH --partition=<PART>", "#SBATCH --partition=" + partition
        )

    # Constraint: set by caller (scaffold agent reads claude.local.md)
    constraint = args.constraint
    if constraint:
        slurm_script = slurm_script.replace(
            "##SBATCH --constraint=<CONST>", "#SBATCH --constraint=" + constraint
        )
    if args.custom_recipe:
        custom_recipe = args.custom_recipe
        # Auto-switch between single_device and distributed based on GPU count (patch for custom recipes)
        if gpus > 1 and "single_device" in custom_recipe:
            custom_recipe = custom_recipe.replace("single_device", "distributed")
        elif gpus == 1 and "distributed" in custom_recipe:
            custom_recipe = custom_recipe.replace("distributed", "single_device")

        # Verify the (possibly auto-switched) recipe resolves to a real module on disk.
        # Without this, e.g. a single-device _nightly recipe with gpus>1 silently rewrites to
        # _distributed_nightly, which doesn't exist, and the SLURM job
        # fails late at runtime instead of at scaffold time.
        recipe_module_path = (
            Path(__file__).parent
            / "custom_recipes"
            / f"{custom_recipe.rsplit('.', 1)[-1]}.py"
        )
        if not recipe_module_path.exists():
            raise FileNotFoundError(
                f"Resolved custom_recipe '{custom_recipe}' does not exist at "
                f"{recipe_module_path}. This usually means the auto-switch between "
                f"single_device and distributed produced a recipe variant that hasn't "
                f"been implemented yet. If you requested validation_during_training=true "
                f"on a multi-GPU run, that combination is tracked in "
                f"https://github.com/niznik-dev/cruijff_kit/issues/474."
            )

        if gpus == 1:
            slurm_script = slurm_script.replace(
                "lora_finetune_single_device", custom_recipe + ".__main__"
            )
        else:
            slurm_script = slurm_script.replace(
                "lora_finetune_distributed", custom_recipe + ".__main__"
            )

    slurm_script = slurm_script.replace("<CONDA_ENV>", args.conda_env)
    if args.venv:
        slurm_script = slurm_script.replace(
            f"conda activate {args.conda_env}",
            f"source $PROJECT/venvs/{args.venv}/bin/activate",
        )
    if args.modules:
        slurm_script = "\n".join(
            line for line in slurm_script.splitlines() if "conda" not in line
        )
        module_string = ""
        for m in args.modules.split(","):
            module_string += f"\nmodule load {m.strip()}"
        slurm_script = slurm_script.replace(
            "module purge", "module purge" + module_string
        )

    slurm_script = slurm_script.replace("<OUTPUT_DIR>", full_artifacts_dir)
    slurm_script = slurm_script.replace("$USER", username)

    with open("finetune.slurm", "w") as f:
        f.write(slurm_script)


if __name__ == "__main__":
    main()
