#!/usr/bin/env python3
"""Measure the peak GPU memory of TRL's real ORPOTrainer (trl.experimental.orpo, 1.16), per phase, one scenario per
process.

As harness_dpo.py: a randomly initialised model of a published shape saved with the Qwen3 tokenizer, handed to the
trainer by path; real text cut to exact token lengths (a 64-token prompt, prompt + chosen + EOS = seq_len, the
rejected 16 tokens shorter, so every batch is padded). ORPO keeps no reference: one forward of the stacked chosen and
rejected rows on materialised logits, the chosen rows' NLL (nn.CrossEntropyLoss on a contiguous copy of their
logits) and the log-odds term from selective_log_softmax over all rows. Three optimizer steps; the peak of steps 2-3
per phase, next to seqprof's prediction (predicted_at_run).

    export PYTHONPATH=$PWD/.whl/site   # trl 1.16, datasets and their pure-python dependencies (.whl_grpo), unpacked
    python3 benchmarks/memory/harness_orpo.py run --out $OUT --table measured_h200_issue14_orpo.json --commit SHA
    /tmp/trlvenv/bin/python benchmarks/memory/harness_orpo.py run --out /tmp/o --cpu-tiny   # dry run on CPU
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402  (sets sys.path, the environment and the light seqprof package, like harness.py)
import trl_harness  # noqa: E402
from harness_dpo import PROMPT, SHORTER, TINY_PROMPT, TINY_SHORTER, pairs, tiny  # noqa: E402,F401
from scenarios import ISSUE14_ORPO, Scenario  # noqa: E402
from trl_harness import STEPS, TOKENIZER, PhasePeaks, lora_config, saved_model  # noqa: E402

POOL = ISSUE14_ORPO


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl.experimental.orpo import ORPOConfig, ORPOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    prompt_len, shorter = (TINY_PROMPT, TINY_SHORTER) if cpu_tiny else (PROMPT, SHORTER)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    tmp = saved_model(cfg, torch.bfloat16, tok, "orpo_")
    rows = s.micro_batch_size * s.gradient_accumulation_steps * STEPS
    data = Dataset.from_list(pairs(tok, s.seq_len, prompt_len, shorter, rows))
    args = ORPOConfig(
        output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
        gradient_accumulation_steps=s.gradient_accumulation_steps, max_steps=STEPS, learning_rate=1e-6,
        optim=s.optimizer, gradient_checkpointing=s.gradient_checkpointing, bf16=True, max_length=s.seq_len,
        model_init_kwargs={"dtype": "bfloat16", "attn_implementation": s.attn_implementation},
        report_to="none", save_strategy="no", logging_steps=1, seed=0, dataloader_num_workers=0,
        use_cpu=device == "cpu", disable_dropout=True)
    peaks = PhasePeaks(device, tracker)
    passes: list[dict] = []
    batches: list[dict] = []
    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = ORPOTrainer(model=tmp, args=args, train_dataset=data, processing_class=tok,
                          peft_config=lora_config(s), callbacks=[peaks.steps_callback()])
    trainer.ref_model = None  # ORPO has none; PhasePeaks.watch hooks the policy only
    peaks.watch(trainer, passes)
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    orig = trainer.concatenated_forward

    def forward(model, batch):
        if peaks.measuring:
            batches.append({"chosen": list(batch["chosen_input_ids"].shape),
                            "rejected": list(batch["rejected_input_ids"].shape),
                            "padding": int((batch["rejected_attention_mask"] == 0).sum()
                                           + (batch["chosen_attention_mask"] == 0).sum())})
        return orig(model, batch)
    trainer.concatenated_forward = forward
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    res = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny,
           "setup": dataclasses.asdict(s), "prompt_tokens": prompt_len, "rejected_shorter_by": shorter,
           "peak_by_phase": peaks.phases, "max_allocated": max(peaks.phases.values()),
           "trainable_params": sum(p.numel() for p in trainable), "batches": batches, "passes": passes,
           "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def main() -> int:
    return trl_harness.main("harness_orpo", "ORPOTrainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
