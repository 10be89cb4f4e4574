"""LoRA SFT warm start (M1). Run: python -m connections_rl.train.sft --config configs/train/sft.yaml

Trains on the chat-formatted train split from `make data`, using TRL's
SFTTrainer with a PEFT LoRA config. Designed to fit a free Colab T4 with the
default Qwen2.5-1.5B config (4-bit base + LoRA).
"""

from __future__ import annotations

import argparse

from connections_rl.train.common import (
    fix_qlora_adapter_dtype_for_pre_ampere,
    load_config,
    read_jsonl,
    set_seed,
)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="configs/train/sft.yaml")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    set_seed(cfg.get("seed", 0))

    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    model_cfg = cfg["model"]
    model_id = model_cfg["hf_id"]
    tokenizer = AutoTokenizer.from_pretrained(model_id)

    quant_kwargs = {}
    model_dtype = "auto"
    if model_cfg.get("load_in_4bit") and torch.cuda.is_available():
        from transformers import BitsAndBytesConfig

        # Pre-Ampere (T4): keep bf16 out of the graph entirely. The fp16
        # GradScaler cannot unscale bf16 grads ("_amp_foreach_non_finite_
        # check_and_unscale_cuda not implemented for BFloat16"), and bf16
        # compute is emulated/slow on T4 anyway.
        half = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
        quant_kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_compute_dtype=half,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
        )
        model_dtype = half
    model = AutoModelForCausalLM.from_pretrained(
        model_id, torch_dtype=model_dtype, device_map="auto", **quant_kwargs
    )

    rows = read_jsonl(cfg["train_data"])
    dataset = Dataset.from_list([{"messages": r["messages"]} for r in rows])

    peft_config = LoraConfig(
        r=cfg["lora"]["r"],
        lora_alpha=cfg["lora"]["alpha"],
        lora_dropout=cfg["lora"].get("dropout", 0.05),
        target_modules=cfg["lora"].get("target_modules", "all-linear"),
        task_type="CAUSAL_LM",
    )
    from connections_rl.train.grpo import compatible_config_kwargs

    sft_config = SFTConfig(
        **compatible_config_kwargs(
            SFTConfig,
            dict(
                output_dir=cfg["output_dir"],
                # Newer TRL defaults to loss_type="chunked_nll", which patches
                # lm_head.forward and crashes on 4-bit models (forward is a
                # functools.partial from accelerate hooks); it's also unsupported
                # with target_modules="all-linear". Plain NLL is what we want.
                loss_type="nll",
                num_train_epochs=cfg.get("epochs", 3),
                per_device_train_batch_size=cfg.get("batch_size", 4),
                gradient_accumulation_steps=cfg.get("grad_accum", 4),
                learning_rate=float(cfg.get("lr", 1e-4)),
                logging_steps=cfg.get("logging_steps", 10),
                save_steps=cfg.get("save_steps", 100),
                bf16=torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8,
                fp16=torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8,
                report_to=["wandb"] if cfg.get("wandb") else [],
                run_name=cfg.get("run_name", "connections-rl-sft"),
                seed=cfg.get("seed", 0),
            ),
        )
    )
    trainer = SFTTrainer(
        model=model,
        args=sft_config,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    fix_qlora_adapter_dtype_for_pre_ampere(trainer.model)
    trainer.train()
    trainer.save_model(cfg["output_dir"])
    if cfg.get("push_to_hub"):
        trainer.push_to_hub(cfg["push_to_hub"])
    print(f"SFT adapter saved to {cfg['output_dir']}")


if __name__ == "__main__":
    main()
