import os
from typing import Dict, Any, List
from datasets import load_dataset, Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from .rewards.rewards import get_reward_function
from trl.experimental.orpo import ORPOTrainer, ORPOConfig
from trl.experimental.cpo import CPOTrainer, CPOConfig
from trl import DPOTrainer, DPOConfig, GRPOTrainer, GRPOConfig, KTOTrainer, KTOConfig
from .vrpo import VRPOTrainer, VRPOConfig

from trl.trainer import RewardTrainer, RewardConfig
from trl.experimental.ppo import PPOTrainer, PPOConfig

from .rejection_sampling import run_rejection_sampling
from .spin import run_spin_pipeline
from .rlaif import run_rlaif_pipeline
from .iterative_dpo import run_iterative_dpo_iteration

def accuracy_reward(prompts: List[str], completions: List[List[Dict[str, str]]], **kwargs) -> List[float]:
    """
    Reward function that checks if the completion contains a <solution> tag
    and returns a positive reward if found, otherwise negative.
    (Placeholder for a real accuracy reward)
    """
    rewards = []
    # GRPO format has lists of dicts
    for completion in completions:
        text = completion[0]["content"] if isinstance(completion, list) and len(completion) > 0 and isinstance(completion[0], dict) else str(completion)
        if "<solution>" in text:
            rewards.append(1.0)
        else:
            rewards.append(-1.0)
    return rewards

def variance_reward(prompts: List[str], completions: List[List[Dict[str, str]]], **kwargs) -> List[float]:
    """
    Reward function that penalizes loops or low variance responses.
    Checks for repeating n-grams.
    """
    rewards = []
    for completion in completions:
        text = completion[0]["content"] if isinstance(completion, list) and len(completion) > 0 and isinstance(completion[0], dict) else str(completion)
        # Simple loop detection: repeating sequences
        words = text.split()
        if len(words) < 10:
             rewards.append(0.0)
             continue

        # Check for 3-gram repetitions
        ngrams = set()
        has_loop = False
        for i in range(len(words) - 2):
            ngram = tuple(words[i:i+3])
            if ngram in ngrams:
                has_loop = True
                break
            ngrams.add(ngram)

        if has_loop:
            rewards.append(-2.0)
        else:
            rewards.append(0.5)

    return rewards

def format_dpo_dataset(dataset_path: str, split: str = "train") -> Dataset:
    """Loads and formats a DPO dataset expecting 'prompt', 'chosen', and 'rejected' columns."""
    dataset = load_dataset(dataset_path, split=split)
    return dataset


def format_kto_dataset(dataset_path: str, split: str = "train") -> Dataset:
    """Loads and formats a KTO dataset expecting 'prompt', 'completion', and 'label' columns."""
    dataset = load_dataset(dataset_path, split=split)
    return dataset

def format_grpo_dataset(dataset_path: str, split: str = "train") -> Dataset:
    """Loads and formats a GRPO dataset expecting 'prompt' column."""
    dataset = load_dataset(dataset_path, split=split)
    return dataset

def run_alignment_pipeline(cfg: Dict[str, Any], dummy_data: bool = False):
    """
    Runs the alignment pipeline (DPO or GRPO) based on the configuration.
    """
    method = cfg.get("method", "dpo").lower()
    model_name = cfg.get("model_name", "sshleifer/tiny-gpt2")

    print(f"Loading model and tokenizer: {model_name}")
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token


    if method == "ppo_reward":
        from transformers import AutoModelForSequenceClassification
        model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=1)
    else:
        model = AutoModelForCausalLM.from_pretrained(model_name)


    output_dir = cfg.get("output_dir", f"./alignment-{method}-output")
    batch_size = cfg.get("batch_size", 4)
    learning_rate = float(cfg.get("learning_rate", 1e-5))
    epochs = cfg.get("epochs", 1)

    if method in ["dpo", "ipo"]:
        print(f"Starting {method.upper()} training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["How to write a function?", "Explain math"] * 10,
                "chosen": ["def func(): pass", "Math is logic"] * 10,
                "rejected": ["func func func func", "math math math"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for DPO")
            dataset = format_dpo_dataset(dataset_path)

        dpo_config = DPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            loss_type=cfg.get("loss_type", "ipo" if method == "ipo" else "sigmoid"),
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True), # to avoid bf16 errors on test instances
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = DPOTrainer(
            model=model,
            ref_model=None, # TRL will create a reference model automatically if None
            args=dpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print(f"{method.upper()} training completed.")

    elif method == "grpo":
        print("Starting GRPO (RLVR) training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["Write a python function that adds two numbers", "Calculate 2 + 2"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for GRPO")
            dataset = format_grpo_dataset(dataset_path)

        reward_funcs_names = cfg.get("reward_funcs", ["accuracy", "variance"])
        reward_funcs = []
        for name in reward_funcs_names:
            if name == "accuracy":
                reward_funcs.append(get_reward_function('accuracy'))
            elif name == "variance":
                print(f"Warning: variance_reward not strictly defined. Falling back to length_penalty")
                reward_funcs.append(get_reward_function('length_penalty'))
            else:
                print(f"Warning: Unknown reward function {name}")

        grpo_config = GRPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_completion_length=cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False),
            num_generations=cfg.get("num_generations", batch_size),
        )

        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward_funcs,
            args=grpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("GRPO training completed.")


    elif method == "vrpo":
        print("Starting VRPO (CJ-GRPO) training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["Write a python function that adds two numbers", "Calculate 2 + 2"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for VRPO")
            dataset = format_grpo_dataset(dataset_path)

        reward_funcs_names = cfg.get("reward_funcs", ["accuracy", "diffusion_trajectory"])
        reward_funcs = []
        for name in reward_funcs_names:
            if name == "accuracy":
                reward_funcs.append(get_reward_function("accuracy"))
            elif name == "format":
                reward_funcs.append(get_reward_function("format"))
            elif name == "length_penalty":
                reward_funcs.append(get_reward_function("length_penalty"))
            elif name == "diffusion_trajectory":
                reward_funcs.append(get_reward_function("diffusion_trajectory"))
            elif name == "model_based":
                reward_funcs.append(get_reward_function("model_based", cfg.get("reward_model_config", {})))
            else:
                print(f"Warning: Unknown reward function {name}")

        vrpo_config = VRPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_completion_length=cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False),
            num_generations=cfg.get("num_generations", batch_size),
            diffusion_steps=cfg.get("diffusion_steps", 20),
            trajectory_alignment=cfg.get("trajectory_alignment", True)
        )

        trainer = VRPOTrainer(
            model=model,
            reward_funcs=reward_funcs,
            args=vrpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("VRPO training completed.")

    elif method == "kto":
        print("Starting KTO training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["Write a function", "Explain math"] * 10,
                "completion": ["def func(): pass", "math math math"] * 10,
                "label": [True, False] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for KTO")
            dataset = format_kto_dataset(dataset_path)

        kto_config = KTOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),

            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = KTOTrainer(
            model=model,
            args=kto_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("KTO training completed.")


    elif method == "orpo":
        print("Starting ORPO training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["How to write a function?", "Explain math"] * 10,
                "chosen": ["def func(): pass", "Math is logic"] * 10,
                "rejected": ["func func func func", "math math math"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for ORPO")
            dataset = format_dpo_dataset(dataset_path)

        orpo_config = ORPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = ORPOTrainer(
            model=model,
            args=orpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("ORPO training completed.")

    elif method == "cpo":
        print("Starting CPO training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["How to write a function?", "Explain math"] * 10,
                "chosen": ["def func(): pass", "Math is logic"] * 10,
                "rejected": ["func func func func", "math math math"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for CPO")
            dataset = format_dpo_dataset(dataset_path)

        cpo_config = CPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = CPOTrainer(
            model=model,
            args=cpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("CPO training completed.")

    elif method == "spin":
        print("Starting SPIN (Self-Play Fine-Tuning) training...")
        if dummy_data:
            spin_dataset_path = run_spin_pipeline(cfg, model, tokenizer, dummy_data=True)
            dataset = load_dataset("json", data_files=spin_dataset_path, split="train")
        else:
            # First generate the rejected responses
            spin_dataset_path = run_spin_pipeline(cfg, model, tokenizer, dummy_data=False)
            dataset = load_dataset("json", data_files=spin_dataset_path, split="train")

        spin_config = DPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            loss_type="sigmoid",
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True), # to avoid bf16 errors on test instances
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = DPOTrainer(
            model=model,
            ref_model=None, # TRL will create a reference model automatically if None
            args=spin_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("SPIN training completed.")


    elif method == "ppo_reward":
        print("Starting PPO Reward Model training...")
        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["How to write a function?", "Explain math"] * 10,
                "chosen": ["def func(): pass", "Math is logic"] * 10,
                "rejected": ["func func func func", "math math math"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for PPO Reward Model")
            dataset = format_dpo_dataset(dataset_path)

        reward_config = RewardConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = RewardTrainer(
            model=model,
            args=reward_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("PPO Reward Model training completed.")

    elif method == "ppo":
        print("Starting PPO (RLHF) training...")

        model_name = cfg.get("model_name", "sshleifer/tiny-gpt2")

        if dummy_data:
            dataset = Dataset.from_dict({
                "prompt": ["Write a python function that adds two numbers", "Calculate 2 + 2"] * 10
            })
        else:
            dataset_path = cfg.get("dataset_path")
            if not dataset_path:
                raise ValueError("dataset_path must be provided in config for PPO")
            dataset = format_grpo_dataset(dataset_path)

        ppo_model = model

        ppo_config = PPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )


        from transformers import AutoModelForSequenceClassification
        import torch

        device_map = "auto" if not cfg.get("use_cpu", True) else None

        # Determine reward model path. It should be provided in config.
        reward_model_path = cfg.get("reward_model_path")
        if not reward_model_path:
            if dummy_data:
                reward_model_path = model_name
                print("Warning: 'reward_model_path' not provided in config, falling back to base model for reward model (randomly initialized head).")
            else:
                raise ValueError("reward_model_path must be provided in config for PPO")

        # Load models with memory management options (quantization, offloading if needed)
        ref_model = AutoModelForCausalLM.from_pretrained(model_name, device_map=device_map)
        reward_model = AutoModelForSequenceClassification.from_pretrained(reward_model_path, num_labels=1, device_map=device_map)
        value_model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=1, device_map=device_map)
        trainer = PPOTrainer(
            args=ppo_config,
            processing_class=tokenizer,
            model=ppo_model,
            ref_model=ref_model,
            reward_model=reward_model,
            value_model=value_model,
            train_dataset=dataset,
        )

        trainer.train()
        print("PPO training completed.")


    elif method == "rlaif":
        print("Starting RLAIF (Constitutional AI) pipeline...")
        rlaif_dataset_path = run_rlaif_pipeline(cfg, model, tokenizer, dummy_data=dummy_data)

        # After generating data, we do DPO by default as per the instructions/standard pipeline
        print("Continuing with DPO on generated RLAIF dataset...")
        dataset = load_dataset("json", data_files=rlaif_dataset_path, split="train")

        dpo_config = DPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
            remove_unused_columns=cfg.get("remove_unused_columns", False),
            use_cpu=cfg.get("use_cpu", True),
            bf16=cfg.get("bf16", False),
            fp16=cfg.get("fp16", False)
        )

        trainer = DPOTrainer(
            model=model,
            ref_model=None,
            args=dpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
        )

        trainer.train()
        print("RLAIF (Constitutional AI) training completed via DPO.")


    elif method == "iterative_dpo":
        print("Starting Iterative DPO pipeline...")
        num_iterations = cfg.get("num_iterations", 2)

        for iteration in range(num_iterations):
            print(f"--- Iteration {iteration + 1}/{num_iterations} ---")
            dataset_path = run_iterative_dpo_iteration(cfg, model, tokenizer, iteration, dummy_data=dummy_data)
            dataset = load_dataset("json", data_files=dataset_path, split="train")

            iter_output_dir = os.path.join(output_dir, f"iter_{iteration}")
            dpo_config = DPOConfig(
                output_dir=iter_output_dir,
                per_device_train_batch_size=batch_size,
                learning_rate=learning_rate,
                num_train_epochs=epochs,
                max_length=cfg.get("max_prompt_length", 512) + cfg.get("max_completion_length", 1024),
                remove_unused_columns=cfg.get("remove_unused_columns", False),
                use_cpu=cfg.get("use_cpu", True),
                bf16=cfg.get("bf16", False),
                fp16=cfg.get("fp16", False)
            )

            trainer = DPOTrainer(
                model=model,
                ref_model=None,
                args=dpo_config,
                train_dataset=dataset,
                processing_class=tokenizer,
            )

            trainer.train()
            print(f"Iteration {iteration + 1} DPO training completed.")

        print("Iterative DPO training completed.")

    elif method in ["rejection_sampling", "rft"]:
        run_rejection_sampling(cfg, dummy_data)
        return
    else:
        raise ValueError(f"Unknown alignment method: {method}. Use 'dpo', 'ipo', 'kto', 'grpo', 'vrpo', 'orpo', 'cpo', 'spin', 'ppo_reward', 'ppo', 'rejection_sampling', 'rft', 'rlaif' or 'iterative_dpo'.")


    if hasattr(trainer, "save_model"):
        trainer.save_model(output_dir)
        print(f"Model saved to {output_dir}")
    else:
        # PPOTrainer in TRL 1.5 doesn't have save_model directly on the trainer object sometimes
        if hasattr(trainer, "model"):
            trainer.model.save_pretrained(output_dir)
        elif hasattr(trainer, "policy"):
            trainer.policy.save_pretrained(output_dir)
        tokenizer.save_pretrained(output_dir)
        print(f"Model saved to {output_dir}")

    push_repo = cfg.get("push_to_hub")
    if push_repo:
        print(f"Pushing model to Hub: {push_repo}...")
        if hasattr(trainer, "model"):
            trainer.model.push_to_hub(push_repo, commit_message=f"Upload Alignment ({method}) model")
        elif hasattr(trainer, "policy"):
            trainer.policy.push_to_hub(push_repo, commit_message=f"Upload Alignment ({method}) model")

        if hasattr(trainer, "processing_class") and trainer.processing_class:
            trainer.processing_class.push_to_hub(push_repo, commit_message=f"Upload Alignment ({method}) model")
        elif hasattr(trainer, "tokenizer") and trainer.tokenizer:
            trainer.tokenizer.push_to_hub(push_repo, commit_message=f"Upload Alignment ({method}) model")
        else:
            tokenizer.push_to_hub(push_repo, commit_message=f"Upload Alignment ({method}) model")