# Copyright 2025 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import logging
import os
import sys

import datasets
import transformers
from transformers import set_seed
from transformers.trainer_utils import get_last_checkpoint

from rl.configs import GSPOConfig, GSPOScriptArguments
from rl.rewards import get_reward_funcs
from rl.utils import get_dataset, get_model, get_tokenizer
from rl.utils.callbacks import get_callbacks
from rl.utils.hf_download_utils import resolve_hf_model_to_local_dir
from rl.utils.wandb_logging import init_wandb_training
from trl import ModelConfig, TrlParser, get_peft_config

try:
    from trl import GSPOTrainer
except ImportError as exc:
    GSPOTrainer = None
    GSPO_IMPORT_ERROR = exc
else:
    GSPO_IMPORT_ERROR = None


logger = logging.getLogger(__name__)


def main(script_args, training_args, model_args):
    if GSPOTrainer is None:
        raise ImportError(
            "GSPOTrainer is not available in your installed TRL version. "
            "Please upgrade TRL to a version that includes GSPO, then rerun. "
            f"Original import error: {GSPO_IMPORT_ERROR}"
        )

    # Set seed for reproducibility
    set_seed(training_args.seed)

    ###############
    # Setup logging
    ###############
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
    )
    log_level = training_args.get_process_log_level()
    logger.setLevel(log_level)
    datasets.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.set_verbosity(log_level)
    transformers.utils.logging.enable_default_handler()
    transformers.utils.logging.enable_explicit_format()

    # Log on each process a small summary
    logger.warning(
        f"Process rank: {training_args.local_rank}, device: {training_args.device}, n_gpu: {training_args.n_gpu}"
        + f" distributed training: {bool(training_args.local_rank != -1)}, 16-bits training: {training_args.fp16}"
    )
    logger.info(f"Model parameters {model_args}")
    logger.info(f"Script parameters {script_args}")
    logger.info(f"Training parameters {training_args}")

    # Check for last checkpoint
    last_checkpoint = None
    if os.path.isdir(training_args.output_dir):
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
    if last_checkpoint is not None and training_args.resume_from_checkpoint is None:
        logger.info(f"Checkpoint detected, resuming training at {last_checkpoint=}.")

    if "wandb" in training_args.report_to:
        init_wandb_training(training_args)

    # Load the dataset
    dataset = get_dataset(script_args)

    ################
    # Load tokenizer
    ################
    tokenizer = get_tokenizer(model_args, training_args)

    # Ensure eos_token from ScriptArguments takes effect.
    try:
        desired_eos = getattr(script_args, "eos_token", None)
        if isinstance(desired_eos, str) and desired_eos.strip():
            desired_eos = desired_eos.strip()
            if tokenizer.eos_token != desired_eos:
                if desired_eos not in tokenizer.get_vocab():
                    tokenizer.add_special_tokens({"eos_token": desired_eos})
                else:
                    tokenizer.eos_token = desired_eos
            logger.info(
                "Effective eos_token=%r eos_token_id=%s (requested=%r)",
                tokenizer.eos_token,
                getattr(tokenizer, "eos_token_id", None),
                desired_eos,
            )
    except Exception as e:
        logger.warning("Could not apply eos_token override: %s", e)

    # Log effective chat template for verification.
    try:
        tpl = getattr(tokenizer, "chat_template", None)
        if isinstance(tpl, str) and tpl:
            logger.info("Effective chat_template is set (len=%d).", len(tpl))
        else:
            logger.info("Effective chat_template is NOT set.")
    except Exception:
        pass

    ##############
    # Load model #
    ##############
    logger.info("*** Loading model ***")
    model = get_model(model_args, training_args)
    try:
        # If eos was newly added, resize embeddings now that model is loaded.
        if getattr(script_args, "eos_token", None) and len(tokenizer) > getattr(
            model.get_input_embeddings(), "num_embeddings", len(tokenizer)
        ):
            model.resize_token_embeddings(len(tokenizer))
    except Exception:
        pass

    # Get reward functions from the registry
    reward_funcs = get_reward_funcs(script_args)

    # Format into conversation
    def make_conversation(example, prompt_column: str = script_args.dataset_prompt_column):
        prompt = []

        if training_args.system_prompt is not None:
            prompt.append({"role": "system", "content": training_args.system_prompt})

        if prompt_column not in example:
            raise ValueError(f"Dataset Question Field Error: {prompt_column} is not supported.")

        prompt.append({"role": "user", "content": example[prompt_column]})
        return {"prompt": prompt}

    dataset = dataset.map(make_conversation)

    for split in dataset:
        if "messages" in dataset[split].column_names:
            dataset[split] = dataset[split].remove_columns("messages")

    #############################
    # Initialize the GSPO trainer
    #############################
    trainer = GSPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=(dataset[script_args.dataset_test_split] if training_args.eval_strategy != "no" else None),
        peft_config=get_peft_config(model_args),
        callbacks=get_callbacks(training_args, model_args),
        processing_class=tokenizer,
    )

    ###############
    # Training loop
    ###############
    logger.info("*** Train ***")
    checkpoint = None
    if training_args.resume_from_checkpoint is not None:
        checkpoint = training_args.resume_from_checkpoint
    elif last_checkpoint is not None:
        checkpoint = last_checkpoint
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    metrics = train_result.metrics
    metrics["train_samples"] = len(dataset[script_args.dataset_train_split])
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)
    trainer.save_state()

    ##################################
    # Save model and create model card
    ##################################
    logger.info("*** Save model ***")
    trainer.model.generation_config.eos_token_id = tokenizer.eos_token_id
    trainer.save_model(training_args.output_dir)
    logger.info(f"Model saved to {training_args.output_dir}")

    kwargs = {
        "dataset_name": script_args.dataset_name,
        "tags": ["open-r1", "gspo"],
    }
    if trainer.accelerator.is_main_process:
        trainer.create_model_card(**kwargs)
        # Restore k,v cache for fast inference
        trainer.model.config.use_cache = True
        trainer.model.config.save_pretrained(training_args.output_dir)

    ##########
    # Evaluate
    ##########
    if training_args.do_eval:
        logger.info("*** Evaluate ***")
        metrics = trainer.evaluate()
        metrics["eval_samples"] = len(dataset[script_args.dataset_test_split])
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)

    #############
    # push to hub
    #############
    if training_args.push_to_hub:
        logger.info("Pushing to hub...")
        trainer.push_to_hub(**kwargs)


def _normalize_trl_config_argv() -> None:
    """TrlParser only loads YAML when argv has a separate token ``--config``."""
    new_argv: list[str] = []
    for a in sys.argv:
        if a.startswith("--config=") and len(a) > len("--config="):
            new_argv.append("--config")
            cfg_path = a.split("=", 1)[1].strip()
            if cfg_path:
                new_argv.append(cfg_path)
            else:
                new_argv.append(a)
        else:
            new_argv.append(a)
    if new_argv != list(sys.argv):
        sys.argv[:] = new_argv


if __name__ == "__main__":
    _normalize_trl_config_argv()
    parser = TrlParser((GSPOScriptArguments, GSPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    try:
        resolved = resolve_hf_model_to_local_dir(
            str(model_args.model_name_or_path),
            local_dir=getattr(training_args, "hf_local_dir", None),
            revision=getattr(model_args, "model_revision", None),
            cache_dir=getattr(training_args, "model_cache_dir", None) or getattr(model_args, "cache_dir", None),
        )
        if resolved.local_dir != model_args.model_name_or_path:
            print(f"Downloaded HF model snapshot to: {resolved.local_dir}")
            model_args.model_name_or_path = resolved.local_dir
    except Exception as e:
        print(f"HF local_dir download skipped: {e}")
    main(script_args, training_args, model_args)
