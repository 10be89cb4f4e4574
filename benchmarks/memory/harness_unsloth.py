#!/usr/bin/env python3
"""Measure the peak GPU memory of an SFT step through Unsloth, as its notebooks run it, one scenario per process.

Each ISSUE14_UNSLOTH scenario saves a randomly initialised model of a published shape (configs/*.json, Qwen shapes
only: the rows are tokenized by the Qwen3 tokenizer, .bench/qwen-3) and trains it for three optimizer steps on real
text cut to exact token lengths (harness_sft.texts: each batch's longest row at seq_len, the others 16 tokens apart):

    FastLanguageModel.from_pretrained(path, max_seq_length=seq_len, dtype=bfloat16, load_in_4bit=...)
    FastLanguageModel.get_peft_model(model, r, lora_alpha=r, lora_dropout=0, bias="none", target_modules=the seven
                                     projections, use_gradient_checkpointing="unsloth" | True | False)
    trl.SFTTrainer(model, processing_class=tokenizer, train_dataset=texts, args=SFTConfig(bf16=True, ...)).train()

Unsloth needs a CUDA device to import, so there is no CPU dry run. The peak of steps 2-3 is recorded per phase as in
harness_sft.py, next to seqprof's prediction (predicted_at_run).

    export PYTHONPATH=/tmp/site   # unsloth, unsloth_zoo, trl 1.15, datasets 4.x, bitsandbytes and what they import
    python3 benchmarks/memory/harness_unsloth.py run --out $OUT --table measured_h200_issue14_unsloth.json --commit SHA
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402,F401  (sets sys.path, the environment and the light seqprof package, like harness.py)
import trl_harness  # noqa: E402
from harness_sft import lengths, texts  # noqa: E402
from scenarios import ISSUE14_UNSLOTH, Scenario  # noqa: E402
from trl_harness import TOKENIZER, PhasePeaks, saved_model  # noqa: E402

from seqprof.predict.memory.setup import ALL_LINEAR  # noqa: E402

POOL = ISSUE14_UNSLOTH


def tiny(sc: Scenario):
    raise SystemExit("Unsloth imports only with a CUDA device: harness_unsloth.py has no --cpu-tiny run")


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    os.environ.setdefault("UNSLOTH_DISABLE_STATISTICS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import unsloth  # noqa: F401  (first: it patches transformers, peft and trl as they import)
    from unsloth import FastLanguageModel

    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(0)
    cfg, s = sc.config(), sc.setup
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    tmp = saved_model(cfg, torch.bfloat16, tok, "unsloth_")
    rows = s.micro_batch_size * s.gradient_accumulation_steps * trl_harness.STEPS
    docs = texts(tok, s, rows)
    model, tok = FastLanguageModel.from_pretrained(tmp, max_seq_length=s.seq_len, dtype=torch.bfloat16,
                                                   load_in_4bit=s.load_in_4bit, local_files_only=True)
    checkpointing = "unsloth" if s.checkpoint_offload else s.gradient_checkpointing
    model = FastLanguageModel.get_peft_model(model, r=s.lora_r, lora_alpha=s.lora_r, lora_dropout=0, bias="none",
                                             target_modules=list(ALL_LINEAR), use_gradient_checkpointing=checkpointing,
                                             random_state=0)
    args = SFTConfig(output_dir=os.path.join(tmp, "out"), max_length=s.seq_len, dataset_text_field="text",
                     packing=False, per_device_train_batch_size=s.micro_batch_size,
                     gradient_accumulation_steps=s.gradient_accumulation_steps, max_steps=trl_harness.STEPS,
                     learning_rate=1e-6, optim=s.optimizer, bf16=True, report_to="none", save_strategy="no",
                     logging_steps=1, seed=0, dataloader_num_workers=0, train_sampling_strategy="sequential")
    peaks = PhasePeaks(device, None)
    trainer = SFTTrainer(model=model, processing_class=tok, train_dataset=Dataset.from_list([{"text": t} for t in docs]),
                         args=args, callbacks=[peaks.steps_callback()])
    batches: list[dict] = []
    passes: list[dict] = []

    def described(kw, out):
        logits = getattr(out, "logits", None)
        return {"grad": torch.is_grad_enabled(),
                "logits": list(logits.shape) if isinstance(logits, torch.Tensor) else None}
    peaks.watch_batches(trainer.model, batches, passes, described)
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    t0 = time.time()
    trainer.train()
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    dtypes: dict[str, int] = {}
    for p in trainer.model.parameters():
        key = f"{p.dtype}{'/trainable' if p.requires_grad else ''}"
        dtypes[key] = dtypes.get(key, 0) + p.numel()
    from importlib import metadata
    return {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": False, "trainer": "unsloth+trl.SFTTrainer",
            "setup": dataclasses.asdict(s), "row_lengths": lengths(s), "peak_by_phase": peaks.phases,
            "max_allocated": max(peaks.phases.values()), "trainable_params": sum(p.numel() for p in trainable),
            "param_numel_by_dtype": dtypes, "batches": batches, "passes": passes,
            "unsloth": metadata.version("unsloth"), "unsloth_zoo": metadata.version("unsloth_zoo"),
            "wall_seconds": round(time.time() - t0, 1), "gpu": torch.cuda.get_device_name()}


def main() -> int:
    return trl_harness.main("harness_unsloth", "Unsloth + SFTTrainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
