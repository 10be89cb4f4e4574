"""Config-driven Direct Preference Optimization (DPO) with TRL + Transformers."""

import argparse
import multiprocessing
from pathlib import Path
from typing import Dict, Mapping, Sequence

import torch
import yaml
from datasets import IterableDataset, load_dataset
from loguru import logger
from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
from trl import DPOConfig, DPOTrainer


DEFAULT_ATTN_IMPLEMENTATION = "kernels-community/flash-attn2"


def _load_chat_template(config: Dict) -> str:
    """Resolve the chat template from config or the default Jinja file."""
    configured = config.get("chat_template")
    if configured:
        logger.info("Using chat template from config.")
        return configured

    template_path = Path(__file__).with_name("chat_template.jinja")
    try:
        template = template_path.read_text(encoding="utf-8")
    except Exception as exc:
        logger.exception("Failed reading default chat template at: {}", template_path)
        raise RuntimeError(
            f"Failed reading default chat template at {template_path}"
        ) from exc

    if not template.strip():
        raise ValueError(f"Default chat template is empty: {template_path}")

    logger.info("Using default chat template from: {}", template_path)
    return template


def _apply_special_tokens(
    model: AutoModelForCausalLM, tokenizer: AutoTokenizer, config: Dict
) -> None:
    """Add special tokens and resize embeddings when needed."""
    special_tokens_cfg = dict(config.get("special_tokens") or {})
    extra_tokens = list(special_tokens_cfg.get("additional_special_tokens") or [])

    tokens_to_add = sorted(set(extra_tokens))
    if tokens_to_add:
        added = tokenizer.add_special_tokens(
            {"additional_special_tokens": tokens_to_add}
        )
        if added > 0:
            model.resize_token_embeddings(len(tokenizer))
        logger.info("Special tokens ensured: {}", tokens_to_add)

    eos_override = special_tokens_cfg.get("eos_token")
    if eos_override:
        eos_added = tokenizer.add_special_tokens({"eos_token": eos_override})
        if eos_added > 0:
            model.resize_token_embeddings(len(tokenizer))
        logger.info("Overriding eos_token to: {}", eos_override)

    pad_override = special_tokens_cfg.get("pad_token")
    if pad_override:
        pad_added = tokenizer.add_special_tokens({"pad_token": pad_override})
        if pad_added > 0:
            model.resize_token_embeddings(len(tokenizer))
        logger.info("Overriding pad_token to: {}", pad_override)

    if len(tokenizer) % 32 != 0:
        logger.warning(
            "Tokenizer length ({}) is not divisible by 32. "
            "Consider padding special tokens to a multiple of 32.",
            len(tokenizer),
        )


def _resolve_attn_implementation(config: Dict, model_kwargs: Dict) -> None:
    """Ensure attention implementation is set for kernel hub FlashAttention2."""
    configured = model_kwargs.get("attn_implementation") or config.get(
        "attn_implementation"
    )
    attn_impl = configured or DEFAULT_ATTN_IMPLEMENTATION
    model_kwargs["attn_implementation"] = attn_impl
    if attn_impl != DEFAULT_ATTN_IMPLEMENTATION:
        logger.warning(
            "Using attn_implementation={} instead of kernels-community/flash-attn2.",
            attn_impl,
        )
    else:
        logger.info("Using attn_implementation={}.", attn_impl)


def _get_first_example(dataset: object) -> Dict[str, object]:
    """Fetch a single example from a dataset or iterable dataset.

    Args:
        dataset (object): A datasets.Dataset or datasets.IterableDataset.

    Returns:
        Dict[str, object]: The first example from the dataset.

    Raises:
        StopIteration: If the iterable dataset is empty.
        KeyError: If the dataset does not support item access for index 0.
    """
    if isinstance(dataset, IterableDataset):
        return next(iter(dataset))
    return dataset[0]


def _validate_message_list(messages: Sequence[Mapping[str, str]], field: str) -> None:
    """Validate that a field is a non-empty list of role/content messages.

    Args:
        messages (Sequence[Mapping[str, str]]): The message list to validate.
        field (str): Field name used in error messages.

    Raises:
        ValueError: If the list is empty or any message is malformed.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise ValueError(f"{field} must be a list of role/content messages.")
    if not messages:
        raise ValueError(f"{field} must contain at least one message.")
    for idx, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise ValueError(f"{field}[{idx}] must be a mapping.")
        if "role" not in msg or "content" not in msg:
            raise ValueError(f"{field}[{idx}] must have 'role' and 'content'.")


def _warn_on_prompt_mismatch(
    chosen: Sequence[Mapping[str, str]],
    rejected: Sequence[Mapping[str, str]],
) -> None:
    """Log a warning if chosen/rejected prompts differ.

    Args:
        chosen (Sequence[Mapping[str, str]]): Chosen conversation messages.
        rejected (Sequence[Mapping[str, str]]): Rejected conversation messages.
    """
    if len(chosen) < 2 or len(rejected) < 2:
        logger.warning("Chosen/rejected too short to validate prompt alignment.")
        return
    if chosen[:-1] != rejected[:-1]:
        logger.warning(
            "Chosen and rejected prompts differ before the final assistant turn. "
            "DPO expects identical prompts for preference pairs."
        )


def _validate_implicit_conversational_example(example: Dict[str, object]) -> None:
    """Validate implicit conversational DPO format.

    The implicit conversational format omits a top-level prompt and stores
    full conversations (user + assistant) in chosen/rejected.

    Args:
        example (Dict[str, object]): A single dataset example.

    Raises:
        ValueError: If required fields are missing or malformed.
    """
    if "prompt" in example:
        logger.warning("Found 'prompt' in dataset example; it will be dropped.")
    if "chosen" not in example or "rejected" not in example:
        raise ValueError("Dataset must contain 'chosen' and 'rejected' fields.")
    chosen = example["chosen"]
    rejected = example["rejected"]
    _validate_message_list(chosen, "chosen")
    _validate_message_list(rejected, "rejected")
    if chosen[-1].get("role") != "assistant":
        raise ValueError("chosen must end with an assistant message.")
    if rejected[-1].get("role") != "assistant":
        raise ValueError("rejected must end with an assistant message.")
    if not any(msg.get("role") == "user" for msg in chosen):
        raise ValueError("chosen must include at least one user message.")
    if not any(msg.get("role") == "user" for msg in rejected):
        raise ValueError("rejected must include at least one user message.")
    _warn_on_prompt_mismatch(chosen, rejected)


if __name__ == "__main__":

    # Parsing arguments (the config path)
    parser = argparse.ArgumentParser(description="Run DPO using a YAML config.")
    parser.add_argument(
        "--config-path", required=True, help="Path to YAML config file."
    )
    args = parser.parse_args()

    # Loading config file
    config_path = Path(args.config_path)
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    logger.info("Using config file at: {}", config_path)

    # Setting up seed
    seed = config.get("seed") or (config.get("trainer") or {}).get("seed")
    if seed is not None:
        set_seed(int(seed))

    # Getting model name and kwargs
    model_name = config.get("model_name")
    tokenizer_name = config.get("tokenizer_name") or model_name
    model_kwargs = dict(config.get("model_kwargs") or {})
    tokenizer_kwargs = dict(config.get("tokenizer_kwargs") or {})
    _resolve_attn_implementation(config, model_kwargs)

    # Loading the model and tokenizer
    logger.info("Loading model from: {}", model_name)
    model = AutoModelForCausalLM.from_pretrained(
        model_name, **model_kwargs, device_map="auto", dtype=torch.bfloat16
    )
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_name, **tokenizer_kwargs)

    tokenizer.chat_template = _load_chat_template(config)

    _apply_special_tokens(model, tokenizer, config)

    # Setting pad token if not set
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.pad_token_id is not None and model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id

    trainer_cfg = dict(config.get("trainer") or {})
    if trainer_cfg.get("gradient_checkpointing"):
        model.gradient_checkpointing_enable()
        model.config.use_cache = False

    # Loading and formatting dataset
    try:
        dataset_cfg = config.get("dataset") or {}
        subset = dataset_cfg.get("subset")
        num_proc = dataset_cfg.get("num_proc")
        if num_proc is None and not dataset_cfg.get("streaming"):
            num_proc = multiprocessing.cpu_count()
        data = load_dataset(
            dataset_cfg.get("name"),
            subset if subset else None,
            split=dataset_cfg.get("split"),
            num_proc=num_proc,
            streaming=dataset_cfg.get("streaming"),
        )
        column_names = getattr(data, "column_names", [])
        if "prompt" in column_names:
            data = data.remove_columns("prompt")
        example = _get_first_example(data)
        _validate_implicit_conversational_example(example)
        logger.info("Loaded dataset: {}", dataset_cfg.get("name"))
        logger.info(
            "Dataset sample: {}",
            {
                "chosen": example["chosen"],
                "rejected": example["rejected"],
            },
        )
    except Exception as exc:
        logger.exception("Failed loading dataset: {}", dataset_cfg.get("name"))
        raise RuntimeError(
            f"Failed loading dataset: {dataset_cfg.get('name')}"
        ) from exc

    # Setting up trainer and training
    if "use_liger_kernel" not in trainer_cfg:
        trainer_cfg["use_liger_kernel"] = True
        logger.info("use_liger_kernel not set; defaulting to True.")
    elif not trainer_cfg.get("use_liger_kernel"):
        logger.warning("use_liger_kernel is disabled; Liger kernels are recommended.")

    adam_epsilon = trainer_cfg.get("adam_epsilon")
    if isinstance(adam_epsilon, str):
        try:
            trainer_cfg["adam_epsilon"] = float(adam_epsilon)
            logger.warning(
                "Coerced adam_epsilon string to float: {}",
                trainer_cfg["adam_epsilon"],
            )
        except ValueError as exc:
            raise ValueError(
                f"trainer.adam_epsilon must be a float, got {adam_epsilon!r}"
            ) from exc

    training_arguments = DPOConfig(**trainer_cfg)
    trainer = DPOTrainer(
        model=model,
        processing_class=tokenizer,
        train_dataset=data,
        args=training_arguments,
    )

    # Check the vocab size of the model and tokenizer
    model_vocab_size = int(getattr(model.config, "vocab_size", 0) or 0)
    embedding_rows = int(model.get_input_embeddings().weight.shape[0])
    tokenizer_size = len(tokenizer)
    logger.info("Model config vocab size: {}", model_vocab_size)
    logger.info("Model embedding rows: {}", embedding_rows)
    logger.info("Tokenizer length: {}", tokenizer_size)
    if model_vocab_size and model_vocab_size != tokenizer_size:
        logger.warning(
            "Tokenizer size ({}) != model config vocab size ({}).",
            tokenizer_size,
            model_vocab_size,
        )
    if embedding_rows != tokenizer_size:
        logger.warning(
            "Tokenizer size ({}) != embedding rows ({}).",
            tokenizer_size,
            embedding_rows,
        )

    trainer.train()
    logger.info("Training done.")
