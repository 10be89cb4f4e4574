#!/usr/bin/env python3
"""Measure the peak GPU memory of TRL's real KTOTrainer (1.16), per phase, one scenario per process.

Each ISSUE14_KTO scenario saves a randomly initialised model of a published shape (configs/*.json) with the Qwen3
tokenizer (.bench/qwen-3, carried) to a temporary directory and hands its path to KTOTrainer, so TRL loads the
policy, and for full fine-tuning the reference copy, as it does in real use. Rows are real text
(seqprof/assets/python_docs_chat.jsonl) cut to exact token lengths: a 64-token prompt and a completion so that
prompt + completion + EOS is seq_len for the first row of each batch and 16 tokens less for each next one, labels
alternating desirable / undesirable. loss_type "kto" estimates the KL term, so TRL adds the KL rows (each prompt with
the previous row's completion) and needs train_sampling_strategy "sequential". Three optimizer steps; the peak of
steps 2-3 is recorded per phase (forward, reference, loss, backward, optimizer) with torch.cuda.max_memory_allocated()
and reset_peak_memory_stats() at forward hooks on the policy and the reference, next to seqprof's prediction
(predicted_at_run), with the batches KTOTrainer built and which forwards ran with and without grad.

    export PYTHONPATH=$PWD/.whl/site   # trl, datasets and their pure-python dependencies, unpacked
    python3 benchmarks/memory/harness_kto.py run --out $OUT --table measured_h200_issue14_kto.json --commit SHA
    /tmp/trlvenv/bin/python benchmarks/memory/harness_kto.py run --out /tmp/k --cpu-tiny   # dry run on CPU
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402  (sets sys.path, the environment and the light seqprof package, like harness.py)
import trl_harness  # noqa: E402
from harness_dpo import _exact  # noqa: E402
from harness_sft import STEP_DOWN, tiny  # noqa: E402, F401
from scenarios import ISSUE14_KTO, Scenario  # noqa: E402
from trl_harness import STEPS, TEXTS, TOKENIZER, PhasePeaks, lora_config, saved_model  # noqa: E402

POOL = ISSUE14_KTO
PROMPT, TINY_PROMPT = 64, 8


def rows(tok, s, prompt_len: int, count: int) -> list[dict]:
    """KTO rows: prompt of `prompt_len` tokens ending in a newline, prompt + completion + EOS of seq_len - 16 i for
    the i-th row of each batch, checked the way KTOTrainer tokenizes them; labels alternate."""
    docs = [json.loads(line)["messages"][-1]["content"] for line in TEXTS.read_text().splitlines()]
    eos = tok.eos_token
    out, i = [], 0
    while len(out) < count:
        total = s.seq_len - STEP_DOWN * (len(out) % s.micro_batch_size)
        prompt, i = _exact(tok, docs, i, prompt_len - 1)
        prompt += "\n"
        completion, i = _exact(tok, docs, i, total - prompt_len, eos)
        p, pc = tok(prompt)["input_ids"], tok(prompt + completion + eos)["input_ids"]
        if len(p) == prompt_len and len(pc) == total and pc[:prompt_len] == p:
            out.append({"prompt": prompt, "completion": completion, "label": len(out) % 2 == 0})
    return out


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import KTOConfig, KTOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    prompt_len = TINY_PROMPT if cpu_tiny else PROMPT
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    tmp = saved_model(cfg, torch.bfloat16, tok, "kto_")
    count = s.micro_batch_size * s.gradient_accumulation_steps * STEPS
    data = Dataset.from_list(rows(tok, s, prompt_len, count))
    args = KTOConfig(
        output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
        gradient_accumulation_steps=s.gradient_accumulation_steps, max_steps=STEPS, learning_rate=1e-6,
        optim=s.optimizer, gradient_checkpointing=s.gradient_checkpointing, bf16=True, max_length=s.seq_len,
        loss_type="kto", precompute_ref_log_probs=s.reference == "precomputed", train_sampling_strategy="sequential",
        model_init_kwargs={"dtype": "bfloat16", "attn_implementation": s.attn_implementation},
        report_to="none", save_strategy="no", logging_steps=1, seed=0, dataloader_num_workers=0,
        use_cpu=device == "cpu", disable_dropout=True)
    peaks = PhasePeaks(device, tracker)
    passes: list[dict] = []
    batches: list[dict] = []

    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = KTOTrainer(model=tmp, args=args, train_dataset=data, processing_class=tok, peft_config=lora_config(s),
                         callbacks=[peaks.steps_callback()])
    peaks.watch(trainer, passes)
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    orig = trainer._compute_loss

    def compute(model, inputs, return_outputs):
        if peaks.measuring:
            batches.append({"input_ids": list(inputs["input_ids"].shape),
                            "padding": int((inputs["attention_mask"] == 0).sum()),
                            "KL_input_ids": list(inputs["KL_input_ids"].shape) if "KL_input_ids" in inputs else None,
                            "precomputed": "ref_logps" in inputs})
        return orig(model, inputs, return_outputs)
    trainer._compute_loss = compute
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    res = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny,
           "setup": dataclasses.asdict(s), "prompt_tokens": prompt_len, "peak_by_phase": peaks.phases,
           "max_allocated": max(peaks.phases.values()), "trainable_params": sum(p.numel() for p in trainable),
           "batches": batches, "passes": passes, "reference_model": trainer.ref_model is not None,
           "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def main() -> int:
    return trl_harness.main("harness_kto", "KTOTrainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
